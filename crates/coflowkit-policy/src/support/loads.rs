//! Per-coflow sums over the links of its active flows, kept across calls: remaining
//! bytes ([`LoadCache`]) and flow counts ([`LinkCounts`]).

use crate::view::{ClairvoyantView, Common};

/// What a coflow's cached loads were built from: (`coflow_started`, active
/// flows, `coflow_sent` bits).
type Key = (u32, u32, u64);
const STALE: Key = (u32::MAX, u32::MAX, u64::MAX);

/// Per-coflow remaining bytes on each link its active flows cross,
/// `R_k(l) = Σ_{f ∈ k active, l ∈ f} rem_f`, as (link, bytes) pairs in ascending link
/// order, kept across calls. A coflow's entry is recounted when one of its flows
/// may have moved (the policy reports every coflow it gave a positive rate with
/// [`LoadCache::moved`], and a change of `coflow_sent` shows bytes sent anyway, as
/// in a real network), started, or finished; otherwise the cached sums are exactly
/// what a recount would give (same flows, same order, same bytes). Policies
/// that serve few coflows at a time then pay `O(flows of served coflows)` per call
/// instead of `O(active flows)`.
#[derive(Default)]
pub struct LoadCache {
    /// Per coflow: (`coflow_started`, active count, `coflow_sent` bits) when built.
    built: Vec<Key>,
    loads: Vec<Vec<(u32, f64)>>,
    acc: Vec<f64>,
    mark: Vec<bool>,
    touched: Vec<u32>,
}

impl LoadCache {
    /// The loads of group `g` of `v`.
    pub fn get(&mut self, v: &ClairvoyantView, g: usize) -> &[(u32, f64)] {
        let grp = v.groups[g];
        let k = grp.coflow as usize;
        let nc = v.coflow_started.len();
        if self.built.len() < nc {
            self.built.resize(nc, STALE);
            self.loads.resize(nc, Vec::new());
        }
        let key = (
            v.coflow_started[k],
            grp.end - grp.start,
            v.coflow_sent(k as u32).to_bits(),
        );
        if self.built[k] != key {
            let nl = v.fabric.num_links();
            if self.acc.len() < nl {
                self.acc.resize(nl, 0.0);
                self.mark.resize(nl, false);
            }
            self.touched.clear();
            for &f in &v.active[grp.range()] {
                let rem = v.remaining(f);
                for &l in v.fabric.path(v.flow_path[f as usize]) {
                    let li = l as usize;
                    if !self.mark[li] {
                        self.mark[li] = true;
                        self.touched.push(l);
                    }
                    self.acc[li] += rem;
                }
            }
            self.touched.sort_unstable();
            let out = &mut self.loads[k];
            out.clear();
            for &l in &self.touched {
                let li = l as usize;
                out.push((l, self.acc[li]));
                self.acc[li] = 0.0;
                self.mark[li] = false;
            }
            self.built[k] = key;
        }
        &self.loads[k]
    }

    /// Coflow `k` got a positive rate: its remaining bytes will change.
    pub fn moved(&mut self, k: u32) {
        if let Some(b) = self.built.get_mut(k as usize) {
            *b = STALE;
        }
    }
}

/// Per coflow, the number of its active flows on each link it uses, `(link, n)`
/// in ascending link order, kept across calls and recounted only when the coflow
/// started or finished flows (counts change with nothing else).
#[derive(Default)]
pub struct LinkCounts {
    /// Per coflow: (`coflow_started`, active count) when counted.
    built: Vec<(u32, u32)>,
    counts: Vec<Vec<(u32, u32)>>,
    acc: Vec<u32>,
    touched: Vec<u32>,
}

impl LinkCounts {
    pub fn get(&mut self, c: &Common, g: usize) -> &[(u32, u32)] {
        let grp = c.groups[g];
        let k = grp.coflow as usize;
        let nc = c.coflow_started.len();
        if self.built.len() < nc {
            self.built.resize(nc, (u32::MAX, u32::MAX));
            self.counts.resize(nc, Vec::new());
        }
        let key = (c.coflow_started[k], grp.end - grp.start);
        if self.built[k] != key {
            let nl = c.fabric.num_links();
            if self.acc.len() < nl {
                self.acc.resize(nl, 0);
            }
            self.touched.clear();
            for &f in &c.active[grp.range()] {
                for &l in c.fabric.path(c.flow_path[f as usize]) {
                    if self.acc[l as usize] == 0 {
                        self.touched.push(l);
                    }
                    self.acc[l as usize] += 1;
                }
            }
            self.touched.sort_unstable();
            let out = &mut self.counts[k];
            out.clear();
            for &l in &self.touched {
                out.push((l, self.acc[l as usize]));
                self.acc[l as usize] = 0;
            }
            self.built[k] = key;
        }
        &self.counts[k]
    }
}

/// Adds `value(i)` over the active flows of group `g` (`i` their positions in
/// `c.active`) to `acc[l]` for every link `l` they cross, listing each link the
/// first time in `touched` (cleared first). `value` must be positive (a zero
/// `acc[l]` marks an untouched link); the caller reads the sums and resets them to
/// zero.
pub fn accumulate_links(
    c: &Common,
    g: usize,
    acc: &mut [f64],
    touched: &mut Vec<u32>,
    mut value: impl FnMut(usize) -> f64,
) {
    touched.clear();
    for i in c.groups[g].range() {
        let f = c.active[i] as usize;
        let x = value(i);
        for &l in c.fabric.path(c.flow_path[f]) {
            let li = l as usize;
            if acc[li] == 0.0 {
                touched.push(l);
            }
            acc[li] += x;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::Case;

    #[test]
    fn link_sums_add_every_flow_on_each_link_once_listed() {
        // 4 ports (up 0..4, down 4..8). Coflow 0: 0→1 (1), 0→2 (2), 0→2 (4), 3→2
        // (8), 1→1 (16).
        // up0 = 7, up3 = 8, up1 = 16, down5 = 1 + 16 = 17, down6 = 14.
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
        let v = c.clairvoyant();
        let (mut acc, mut touched) = (vec![0.0; 8], Vec::new());
        accumulate_links(&v, 0, &mut acc, &mut touched, |i| v.remaining(v.active[i]));
        assert_eq!(acc, vec![7.0, 16.0, 0.0, 8.0, 0.0, 17.0, 14.0, 0.0]);
        touched.sort_unstable();
        assert_eq!(touched, vec![0, 1, 3, 5, 6]);
    }

    #[test]
    fn link_counts_are_recounted_when_flows_start_or_finish() {
        // 3 ports (up 0..3, down 3..6). Coflow 0: 0→1, 0→2, 2→1.
        let mut c = Case::new(
            3,
            1.0,
            &[
                (0, 0, 1, 1.0, 0.0),
                (0, 0, 2, 1.0, 0.0),
                (0, 2, 1, 1.0, 0.0),
            ],
        );
        let mut lc = LinkCounts::default();
        assert_eq!(lc.get(&c.common(), 0), &[(0, 2), (2, 1), (4, 2), (5, 1)]);
        // Flow 0→2 finished: the active count changed.
        c.active = vec![0, 2];
        c.groups[0].end = 2;
        assert_eq!(lc.get(&c.common(), 0), &[(0, 1), (2, 1), (4, 2)]);
    }

    #[test]
    fn loads_are_recounted_when_the_coflow_moved_sent_or_changed_flows() {
        // 3 ports (up 0..3, down 3..6). Coflow 0: 0→1 with 4 B left, 0→2 with 2 B.
        // R(up0) = 6, R(down1) = 4, R(down2) = 2.
        let mut c = Case::new(3, 10.0, &[(0, 0, 1, 4.0, 0.0), (0, 0, 2, 2.0, 0.0)]);
        let mut cache = LoadCache::default();
        assert_eq!(
            cache.get(&c.clairvoyant(), 0),
            &[(0, 6.0), (4, 4.0), (5, 2.0)]
        );
        // The policy served it: 1 B of flow 0 went out.
        c.set_remaining(0, 3.0);
        cache.moved(0);
        assert_eq!(
            cache.get(&c.clairvoyant(), 0),
            &[(0, 5.0), (4, 3.0), (5, 2.0)]
        );
        // Bytes sent without the policy's say (a real network): coflow_sent changed.
        c.set_remaining(1, 1.0);
        c.add_coflow_sent(0, 1.0);
        assert_eq!(
            cache.get(&c.clairvoyant(), 0),
            &[(0, 4.0), (4, 3.0), (5, 1.0)]
        );
        // Flow 1 finished: one active flow left.
        c.active.truncate(1);
        c.groups[0].end = 1;
        assert_eq!(cache.get(&c.clairvoyant(), 0), &[(0, 3.0), (4, 3.0)]);
    }
}
