//! [`LoadTree`]: per coflow, its remaining bytes on each link it uses,
//! `R_k(l) = Σ_{f ∈ k active, l ∈ f} rem_f`, kept up to date flow by flow.
//!
//! Each (coflow, link) pair has a sum tree over the coflow's flows on that link (a
//! complete binary tree, each node the sum of its two children, absent and
//! finished flows 0). Setting one flow's remaining bytes recomputes its leaf's
//! ancestors, `O(log n)` per link, so a call pays for the flows that moved, not for
//! every flow of the coflows that moved (what [`super::loads::LoadCache`] recounts).
//! A root is a function of the current leaves only (no running sums, so no drift):
//! the same flows with the same bytes always give the same sum. It is not the
//! left-to-right sum a recount gives, so sums may differ from a recount's in the
//! last bits.

use crate::view::Common;

/// One (coflow, link) tree: `leaves` leaf slots (a power of two) at
/// `nodes[at + leaves .. at + 2·leaves]`, the root at `nodes[at + 1]`.
#[derive(Clone, Copy)]
struct Tree {
    link: u32,
    at: usize,
    leaves: usize,
}

#[derive(Default)]
struct Coflow {
    /// Sorted by link.
    trees: Vec<Tree>,
    nodes: Vec<f64>,
    /// Per flow of the coflow (by index within it), per link of its path, the
    /// tree (index in `trees`) and leaf slot, flattened; `slot_at[i]..slot_at[i+1]`.
    slots: Vec<(u32, u32)>,
    slot_at: Vec<u32>,
}

/// Per-coflow link loads kept by sum trees (see the module docs).
#[derive(Default)]
pub struct LoadTree {
    coflows: Vec<Option<Coflow>>,
}

impl LoadTree {
    fn build(c: &Common, k: usize) -> Coflow {
        let first = c.coflow_first_flow[k];
        let width = c.coflow_width[k];
        // Count the flows per link, then number each flow's slot on each link.
        let mut links: Vec<u32> = Vec::new();
        for f in first..first + width {
            links.extend_from_slice(c.fabric.path(c.flow_path[f as usize]));
        }
        links.sort_unstable();
        links.dedup();
        let mut fill = vec![0u32; links.len()];
        let mut slots = Vec::new();
        let mut slot_at = vec![0u32];
        for f in first..first + width {
            for &l in c.fabric.path(c.flow_path[f as usize]) {
                let t = links.binary_search(&l).expect("a link of the coflow");
                slots.push((t as u32, fill[t]));
                fill[t] += 1;
            }
            slot_at.push(slots.len() as u32);
        }
        let mut trees = Vec::with_capacity(links.len());
        let mut at = 0;
        for (&link, &n) in links.iter().zip(&fill) {
            let leaves = (n as usize).next_power_of_two();
            trees.push(Tree { link, at, leaves });
            at += 2 * leaves;
        }
        Coflow {
            trees,
            nodes: vec![0.0; at],
            slots,
            slot_at,
        }
    }

    /// Sets flow `f`'s remaining bytes (0 for a flow not active).
    pub fn set(&mut self, c: &Common, f: u32, rem: f64) {
        let k = c.flow_coflow[f as usize] as usize;
        if self.coflows.len() <= k {
            self.coflows
                .resize_with(c.coflow_width.len().max(k + 1), || None);
        }
        let co = self.coflows[k].get_or_insert_with(|| Self::build(c, k));
        let i = (f - c.coflow_first_flow[k]) as usize;
        let (a, b) = (co.slot_at[i] as usize, co.slot_at[i + 1] as usize);
        for &(t, s) in &co.slots[a..b] {
            let tr = co.trees[t as usize];
            let n = &mut co.nodes[tr.at..tr.at + 2 * tr.leaves];
            let mut j = tr.leaves + s as usize;
            n[j] = rem;
            while j > 1 {
                j /= 2;
                n[j] = n[2 * j] + n[2 * j + 1];
            }
        }
    }

    /// Coflow `k`'s (link, remaining bytes) over the links its flows use, by link
    /// (links with no active flow give 0).
    pub fn loads(&self, k: u32) -> impl Iterator<Item = (u32, f64)> + '_ {
        self.coflows
            .get(k as usize)
            .and_then(|c| c.as_ref())
            .into_iter()
            .flat_map(|c| c.trees.iter().map(|t| (t.link, c.nodes[t.at + 1])))
    }

    /// Forgets coflow `k` (it has no active flow left).
    pub fn drop_coflow(&mut self, k: u32) {
        if let Some(c) = self.coflows.get_mut(k as usize) {
            *c = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::Case;

    #[test]
    fn roots_are_the_sums_of_the_flows_on_each_link() {
        // 4 ports (up 0..4, down 4..8). Coflow 0: 0→1 (1), 0→2 (2), 0→2 (4),
        // 3→2 (8), 1→1 (16). up0 = 7, up1 = 16, up3 = 8, down5 = 17, down6 = 14.
        let c = Case::new(
            4,
            1.0,
            &[
                (0, 0, 1, 1.0, 0.0),
                (0, 0, 2, 2.0, 0.0),
                (0, 0, 2, 4.0, 0.0),
                (0, 3, 2, 8.0, 0.0),
                (0, 1, 1, 16.0, 0.0),
            ],
        );
        let v = c.common();
        let mut t = LoadTree::default();
        for (f, x) in [(0, 1.0), (1, 2.0), (2, 4.0), (3, 8.0), (4, 16.0)] {
            t.set(&v, f, x);
        }
        let got: Vec<(u32, f64)> = t.loads(0).collect();
        assert_eq!(
            got,
            vec![(0, 7.0), (1, 16.0), (3, 8.0), (5, 17.0), (6, 14.0)]
        );
        // Flow 2 sent 3 B, flow 3 finished.
        t.set(&v, 2, 1.0);
        t.set(&v, 3, 0.0);
        let got: Vec<(u32, f64)> = t.loads(0).collect();
        assert_eq!(
            got,
            vec![(0, 4.0), (1, 16.0), (3, 0.0), (5, 17.0), (6, 3.0)]
        );
        t.drop_coflow(0);
        assert_eq!(t.loads(0).count(), 0);
    }

    #[test]
    fn a_root_depends_on_the_leaves_only() {
        // Two orders of updates reaching the same bytes give bitwise the same sums.
        let c = Case::new(
            2,
            1.0,
            &[
                (0, 0, 1, 0.1, 0.0),
                (0, 0, 1, 0.2, 0.0),
                (0, 0, 1, 0.3, 0.0),
            ],
        );
        let v = c.common();
        let (mut a, mut b) = (LoadTree::default(), LoadTree::default());
        for f in [0, 1, 2] {
            a.set(&v, f, 0.7);
        }
        for f in [2, 1, 0] {
            b.set(&v, f, 0.3);
            b.set(&v, f, 0.7);
        }
        let (x, y): (Vec<_>, Vec<_>) = (a.loads(0).collect(), b.loads(0).collect());
        assert_eq!(x.len(), 2);
        for (p, q) in x.iter().zip(&y) {
            assert_eq!(p.1.to_bits(), q.1.to_bits());
        }
    }
}
