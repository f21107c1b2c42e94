//! Cuts: per coflow, the distinct first and last links of its active flows' paths,
//! to skip a coflow none of whose flows can move.

use crate::view::Common;
use coflowkit_alloc::avail;

/// Per-coflow cut of the paths of its active flows: the distinct first links and the
/// distinct last links. Every flow crosses one of each, so when all the first links,
/// or all the last links, of a coflow are saturated, none of its flows can get a
/// positive rate; [`Cuts::blocked`] tells so in `O(first + last links)` instead of
/// `O(flows)` (on the big switch: senders + receivers instead of their product).
/// A cut stays valid while the coflow's active flows only finish; it is rebuilt when
/// `coflow_started` shows new flows.
#[derive(Default)]
pub struct Cuts {
    /// Per coflow: `coflow_started` when its cut was built (`u32::MAX`: never).
    built: Vec<u32>,
    first: Vec<Vec<u32>>,
    last: Vec<Vec<u32>>,
    links: CutBuilder,
}

impl Cuts {
    fn rebuild(&mut self, c: &Common, g: usize) {
        let k = c.groups[g].coflow as usize;
        let (mut first, mut last) = (
            std::mem::take(&mut self.first[k]),
            std::mem::take(&mut self.last[k]),
        );
        self.links.build(
            c,
            c.active[c.groups[g].range()].iter().copied(),
            &mut first,
            &mut last,
        );
        self.first[k] = first;
        self.last[k] = last;
        self.built[k] = c.coflow_started[k];
    }

    /// True when no active flow of group `g` can get a positive rate on `residual`.
    pub fn blocked(&mut self, c: &Common, g: usize, residual: &[f64]) -> bool {
        let k = c.groups[g].coflow as usize;
        if self.built.len() < c.coflow_started.len() {
            self.built.resize(c.coflow_started.len(), u32::MAX);
            self.first.resize(c.coflow_started.len(), Vec::new());
            self.last.resize(c.coflow_started.len(), Vec::new());
        }
        if self.built[k] != c.coflow_started[k] {
            self.rebuild(c, g);
        }
        cut_closed(c, &self.first[k], &self.last[k], residual)
    }
}

/// Builds cuts: the distinct first links and distinct last links of the paths of a
/// set of flows, with a reusable link stamp.
#[derive(Default)]
pub struct CutBuilder {
    stamp: Vec<u32>,
    epoch: u32,
}

impl CutBuilder {
    /// Fills `first` and `last` (cleared) for the flows `flows` (global indices).
    pub fn build(
        &mut self,
        c: &Common,
        flows: impl Iterator<Item = u32> + Clone,
        first: &mut Vec<u32>,
        last: &mut Vec<u32>,
    ) {
        let nl = c.fabric.num_links();
        if self.stamp.len() < nl {
            self.stamp.resize(nl, 0);
        }
        first.clear();
        last.clear();
        for (list, pick_last) in [(first, false), (last, true)] {
            self.epoch = self.epoch.wrapping_add(1);
            if self.epoch == 0 {
                self.stamp.iter_mut().for_each(|s| *s = 0);
                self.epoch = 1;
            }
            for f in flows.clone() {
                let links = c.fabric.path(c.flow_path[f as usize]);
                let l = if pick_last {
                    links.last()
                } else {
                    links.first()
                };
                if let Some(&l) = l {
                    if self.stamp[l as usize] != self.epoch {
                        self.stamp[l as usize] = self.epoch;
                        list.push(l);
                    }
                }
            }
        }
    }
}

/// True when every link of `first`, or every link of `last`, is saturated in
/// `residual`: no flow crossing the cut can get a positive rate. An empty cut (no
/// flows) is closed.
pub fn cut_closed(c: &Common, first: &[u32], last: &[u32], residual: &[f64]) -> bool {
    let caps = &c.fabric.capacities;
    let closed = |l: &u32| avail(residual, caps, *l as usize) <= 0.0;
    first.iter().all(closed) || last.iter().all(closed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::Case;

    #[test]
    fn a_coflow_is_blocked_when_all_its_senders_or_all_its_receivers_are_full() {
        // 3 ports: links up0..up2 = 0..3, down0..down2 = 3..6. Coflow 0: 0→1, 0→2.
        let c = Case::new(3, 10.0, &[(0, 0, 1, 1.0, 0.0), (0, 0, 2, 1.0, 0.0)]);
        let v = c.common();
        let mut cuts = Cuts::default();
        let open = vec![10.0; 6];
        assert!(!cuts.blocked(&v, 0, &open));
        // Its only sender's uplink is full.
        let mut r = open.clone();
        r[0] = 0.0;
        assert!(cuts.blocked(&v, 0, &r));
        // Both receivers' downlinks full (down1, down2); a residue within the
        // capacity tolerance (1e-9 · C) counts as full.
        let mut r = open.clone();
        r[4] = 0.0;
        r[5] = 1e-12;
        assert!(cuts.blocked(&v, 0, &r));
        // One receiver still open: flow 0→2 can move.
        r[5] = 1.0;
        assert!(!cuts.blocked(&v, 0, &r));
        // A link the coflow does not use (up1) and one of its receivers (down1)
        // full: flow 0→2 stays open.
        let mut r = open;
        r[1] = 0.0;
        r[4] = 0.0;
        assert!(!cuts.blocked(&v, 0, &r));
    }

    #[test]
    fn a_cut_is_rebuilt_when_the_coflow_starts_new_flows() {
        // Coflow 0 first has one active flow 0→1; later a flow 2→1 starts.
        let mut c = Case::new(3, 10.0, &[(0, 0, 1, 1.0, 0.0), (0, 2, 1, 1.0, 0.0)]);
        let both = c.active.clone();
        c.active.truncate(1);
        c.groups[0].end = 1;
        c.coflow_started[0] = 1; // started so far, as the engine reports it
        let mut cuts = Cuts::default();
        let mut r = vec![10.0; 6];
        r[0] = 0.0; // up0 full: the coflow's only sender
        assert!(cuts.blocked(&c.common(), 0, &r));
        c.active = both;
        c.groups[0].end = 2;
        c.coflow_started[0] = 2;
        assert!(!cuts.blocked(&c.common(), 0, &r), "up2 is open for 2→1");
    }
}
