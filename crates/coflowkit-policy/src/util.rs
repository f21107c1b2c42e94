//! Shared building blocks of the policies.

use crate::{ClairvoyantView, Common, Decision};
use coflowkit_alloc::{avail, MaxMin};
use coflowkit_model::PathId;

/// Priority max-min with one group per coflow: coflows in the given order, each gets
/// max-min fair rates among its active flows on what the earlier ones left.
#[derive(Default)]
pub(crate) struct CoflowPriority {
    mm: MaxMin,
    pub residual: Vec<f64>,
    cuts: Cuts,
    paths: Vec<PathId>,
    tmp: Vec<f64>,
}

impl CoflowPriority {
    /// `order` lists indices into `c.groups`, highest priority first. Writes
    /// `out.rates[i]` for every active flow of the listed coflows that can get a
    /// positive rate, as a sparse decision; `out` must be fresh from
    /// [`crate::Decision::reset`], since coflows with no open path are skipped
    /// without being written. `self.residual` holds what is left afterwards.
    pub fn run(&mut self, c: &Common, order: &[usize], out: &mut Decision) {
        out.sparse = true;
        self.residual.clear();
        self.residual.extend_from_slice(&c.fabric.capacities);
        for &g in order {
            if self.cuts.blocked(c, g, &self.residual) {
                continue;
            }
            self.serve(c, c.groups[g].range(), out);
        }
    }

    /// Starts a round: the whole fabric is free again.
    pub fn begin(&mut self, c: &Common, out: &mut Decision) {
        out.sparse = true;
        self.residual.clear();
        self.residual.extend_from_slice(&c.fabric.capacities);
    }

    /// Gives the active flows at `positions` (indices into `c.active`) max-min fair
    /// rates on what is left in `self.residual`, writes them as sparse rates and
    /// takes them from the residual: one priority level of a priority max-min.
    pub fn serve(
        &mut self,
        c: &Common,
        positions: impl Iterator<Item = usize> + Clone,
        out: &mut Decision,
    ) {
        self.paths.clear();
        self.paths
            .extend(positions.clone().map(|i| c.flow_path[c.active[i] as usize]));
        self.tmp.clear();
        self.tmp.resize(self.paths.len(), 0.0);
        self.mm
            .solve(c.fabric, &mut self.residual, &self.paths, &mut self.tmp);
        for (i, &r) in positions.zip(&self.tmp) {
            out.rates[i] = r;
            out.touch(i);
        }
    }
}

/// Exponentially spaced demotion thresholds of a multi-level feedback queue:
/// `T_q = first · multiplier^q` for `q = 0..queues-1`; queue `queues-1` is unbounded.
/// Shared by every least-attained-service policy (aalo's coflow queues, mcs's
/// double thresholds, the per-flow queues of pias and coda).
#[derive(Debug, Clone, PartialEq)]
pub struct Thresholds {
    bounds: Vec<f64>,
}

impl Thresholds {
    pub fn new(queues: usize, first: f64, multiplier: f64) -> Self {
        Thresholds {
            bounds: (0..queues.saturating_sub(1))
                .map(|q| first * multiplier.powi(q as i32))
                .collect(),
        }
    }

    /// The queue of something that has sent `sent` bytes: the first `q` whose
    /// threshold is not yet crossed (within the byte tolerance of [`crossed`]).
    pub fn queue(&self, sent: f64) -> usize {
        self.bounds
            .iter()
            .position(|&t| !crossed(sent, t))
            .unwrap_or(self.bounds.len())
    }

    /// The upper threshold of queue `q`, `None` for the last (unbounded) queue.
    pub fn upper(&self, q: usize) -> Option<f64> {
        self.bounds.get(q).copied()
    }

    /// Number of queues.
    pub fn queues(&self) -> usize {
        self.bounds.len() + 1
    }
}

/// Per-coflow cut of the paths of its active flows: the distinct first links and the
/// distinct last links. Every flow crosses one of each, so when all the first links,
/// or all the last links, of a coflow are saturated, none of its flows can get a
/// positive rate; [`Cuts::blocked`] tells so in `O(first + last links)` instead of
/// `O(flows)` (on the big switch: senders + receivers instead of their product).
/// A cut stays valid while the coflow's active flows only finish; it is rebuilt when
/// `coflow_started` shows new flows.
#[derive(Default)]
pub(crate) struct Cuts {
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
pub(crate) struct CutBuilder {
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
pub(crate) fn cut_closed(c: &Common, first: &[u32], last: &[u32], residual: &[f64]) -> bool {
    let caps = &c.fabric.capacities;
    let closed = |l: &u32| avail(residual, caps, *l as usize) <= 0.0;
    first.iter().all(closed) || last.iter().all(closed)
}

/// Per-coflow remaining bytes on each link its active flows cross,
/// `R_k(l) = Σ_{f ∈ k active, l ∈ f} rem_f`, as (link, bytes) pairs in ascending link
/// order, kept across calls. A coflow's entry is recounted when one of its flows
/// may have moved (the policy reports every coflow it gave a positive rate with
/// [`LoadCache::moved`], and a change of `coflow_sent` shows bytes sent anyway, as
/// in a real network), started, or finished; otherwise the cached sums are exactly
/// what a recount would give (same flows, same order, same bytes). Policies
/// that serve few coflows at a time then pay `O(flows of served coflows)` per call
/// instead of `O(active flows)`.
type Key = (u32, u32, u64);
const STALE: Key = (u32::MAX, u32::MAX, u64::MAX);

#[derive(Default)]
pub(crate) struct LoadCache {
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
            v.coflow_sent[k].to_bits(),
        );
        if self.built[k] != key {
            let nl = v.fabric.num_links();
            if self.acc.len() < nl {
                self.acc.resize(nl, 0.0);
                self.mark.resize(nl, false);
            }
            self.touched.clear();
            for &f in &v.active[grp.range()] {
                let f = f as usize;
                for &l in v.fabric.path(v.flow_path[f]) {
                    let li = l as usize;
                    if !self.mark[li] {
                        self.mark[li] = true;
                        self.touched.push(l);
                    }
                    self.acc[li] += v.remaining[f];
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
pub(crate) struct LinkCounts {
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

/// Adds `value(f)` over the active flows `f` of group `g` to `acc[l]` for every link
/// `l` they cross, listing each link the first time in `touched` (cleared first).
/// `value` must be positive (a zero `acc[l]` marks an untouched link); the caller
/// reads the sums and resets them to zero.
pub(crate) fn accumulate_links(
    c: &Common,
    g: usize,
    acc: &mut [f64],
    touched: &mut Vec<u32>,
    value: impl Fn(usize) -> f64,
) {
    touched.clear();
    for &f in &c.active[c.groups[g].range()] {
        let f = f as usize;
        let x = value(f);
        for &l in c.fabric.path(c.flow_path[f]) {
            let li = l as usize;
            if acc[li] == 0.0 {
                touched.push(l);
            }
            acc[li] += x;
        }
    }
}

/// Sorts group indices by `(key, coflow index)`; the coflow index encodes
/// (arrival, id), the tie-break of every policy.
pub(crate) fn order_by_key(c: &Common, key: impl Fn(u32) -> f64, out: &mut Vec<usize>) {
    out.clear();
    out.extend(0..c.groups.len());
    out.sort_by(|&a, &b| {
        let (ca, cb) = (c.groups[a].coflow, c.groups[b].coflow);
        key(ca).total_cmp(&key(cb)).then(ca.cmp(&cb))
    });
}

/// Bytes tolerance when comparing bytes sent with a threshold: the engine's finish
/// tolerance, `max(1e-6, 1e-9 · threshold)`.
#[inline]
pub(crate) fn crossed(sent: f64, threshold: f64) -> bool {
    sent >= threshold - coflowkit_model::finish_threshold(threshold)
}

#[cfg(test)]
pub(crate) mod testkit {
    //! A tiny hand-built view for policy unit tests.
    use crate::{ActiveCoflow, ClairvoyantView, Common, NonClairvoyantView};
    use coflowkit_model::{Fabric, PathId};

    /// Flows given as (coflow, src, dst, size, sent); coflows numbered 0.. in order.
    #[derive(Clone)]
    pub struct Case {
        pub fabric: Fabric,
        pub active: Vec<u32>,
        pub groups: Vec<ActiveCoflow>,
        pub flow_coflow: Vec<u32>,
        pub flow_index: Vec<u32>,
        pub flow_path: Vec<PathId>,
        pub sent: Vec<f64>,
        pub size: Vec<f64>,
        pub remaining: Vec<f64>,
        pub coflow_id: Vec<u64>,
        pub arrival: Vec<f64>,
        pub weight: Vec<f64>,
        pub width: Vec<u32>,
        pub coflow_sent: Vec<f64>,
        pub first: Vec<u32>,
        pub length: Vec<f64>,
        pub csize: Vec<f64>,
        pub reports: Vec<Vec<(u32, f64)>>,
        pub path_count: Vec<u32>,
        pub active_paths: Vec<PathId>,
        pub src: Vec<u32>,
        pub dst: Vec<u32>,
        /// Ports of each flow (NO_PORT unless a test sets them).
        pub src_port: Vec<u32>,
        pub dst_port: Vec<u32>,
        /// Stage and priority of each flow (0 unless a test sets them).
        pub stage: Vec<u32>,
        pub priority: Vec<u32>,
        pub stage_parents: Vec<(u32, u32, u32)>,
    }

    impl Case {
        pub fn new(ports: u32, cap: f64, flows: &[(u32, u32, u32, f64, f64)]) -> Case {
            let mut fabric = Fabric::big_switch(ports, cap).unwrap();
            let n_cf = flows.iter().map(|f| f.0).max().unwrap() as usize + 1;
            let mut c = Case {
                fabric: fabric.clone(),
                active: vec![],
                groups: vec![],
                flow_coflow: vec![],
                flow_index: vec![],
                flow_path: vec![],
                sent: vec![],
                size: vec![],
                remaining: vec![],
                coflow_id: (1..=n_cf as u64).collect(),
                arrival: vec![0.0; n_cf],
                weight: vec![1.0; n_cf],
                width: vec![0; n_cf],
                coflow_sent: vec![0.0; n_cf],
                first: vec![0; n_cf],
                length: vec![0.0; n_cf],
                csize: vec![0.0; n_cf],
                reports: Vec::new(),
                path_count: Vec::new(),
                active_paths: Vec::new(),
                src: Vec::new(),
                dst: Vec::new(),
                src_port: Vec::new(),
                dst_port: Vec::new(),
                stage: vec![0; flows.len()],
                priority: vec![0; flows.len()],
                stage_parents: Vec::new(),
            };
            for (i, &(k, s, d, size, sent)) in flows.iter().enumerate() {
                let k = k as usize;
                if c.width[k] == 0 {
                    c.first[k] = i as u32;
                }
                c.flow_coflow.push(k as u32);
                c.flow_index.push(c.width[k]);
                c.width[k] += 1;
                c.flow_path.push(fabric.route(s, d, 0).unwrap());
                c.src.push(s);
                c.dst.push(d);
                c.src_port.push(crate::NO_PORT);
                c.dst_port.push(crate::NO_PORT);
                c.sent.push(sent);
                c.size.push(size);
                c.remaining.push(size - sent);
                c.coflow_sent[k] += sent;
                c.length[k] = c.length[k].max(size);
                c.csize[k] += size;
                c.active.push(i as u32);
                match c.groups.last_mut() {
                    Some(g) if g.coflow == k as u32 => g.end += 1,
                    _ => c.groups.push(ActiveCoflow {
                        coflow: k as u32,
                        start: i as u32,
                        end: i as u32 + 1,
                    }),
                }
            }
            c.fabric = fabric;
            c.count_paths();
            c
        }

        /// Recomputes the per-path counts from `active` (after a test edits it).
        pub fn count_paths(&mut self) {
            self.path_count = vec![0; self.fabric.num_paths()];
            self.active_paths.clear();
            for &f in &self.active {
                let p = self.flow_path[f as usize];
                if self.path_count[p as usize] == 0 {
                    self.active_paths.push(p);
                }
                self.path_count[p as usize] += 1;
            }
        }

        pub fn common(&self) -> Common<'_> {
            Common {
                now_s: 0.0,
                fabric: &self.fabric,
                active: &self.active,
                groups: &self.groups,
                flow_coflow: &self.flow_coflow,
                flow_index: &self.flow_index,
                flow_path: &self.flow_path,
                flow_src: &self.src,
                flow_dst: &self.dst,
                flow_src_port: &self.src_port,
                flow_dst_port: &self.dst_port,
                flow_stage: &self.stage,
                flow_priority: &self.priority,
                stage_parents: &self.stage_parents,
                sent: &self.sent,
                coflow_id: &self.coflow_id,
                coflow_arrival_s: &self.arrival,
                coflow_weight: &self.weight,
                coflow_width: &self.width,
                coflow_sent: &self.coflow_sent,
                coflow_started: &self.width,
                path_count: &self.path_count,
                active_paths: &self.active_paths,
            }
        }

        pub fn clairvoyant(&self) -> ClairvoyantView<'_> {
            ClairvoyantView {
                common: self.common(),
                size: &self.size,
                remaining: &self.remaining,
                coflow_first_flow: &self.first,
                coflow_length: &self.length,
                coflow_size: &self.csize,
                coflow_report: &self.reports,
            }
        }

        pub fn non_clairvoyant(&self) -> NonClairvoyantView<'_> {
            NonClairvoyantView {
                common: self.common(),
            }
        }
    }

    /// The two coflows of the NC-DRF paper's Fig. 3 on four links of capacity 1
    /// (link-1..4 = up0, up1, down0, down1): A sends 100 on up0→down1 and
    /// up1→down1, B on up1→down0 and up1→down1.
    pub fn ncdrf_fig3() -> Case {
        Case::new(
            2,
            1.0,
            &[
                (0, 0, 1, 100.0, 0.0),
                (0, 1, 1, 100.0, 0.0),
                (1, 1, 0, 100.0, 0.0),
                (1, 1, 1, 100.0, 0.0),
            ],
        )
    }

    pub fn close(a: &[f64], b: &[f64]) {
        assert_eq!(a.len(), b.len(), "{a:?} vs {b:?}");
        for (x, y) in a.iter().zip(b) {
            assert!((x - y).abs() <= 1e-9 * y.abs().max(1.0), "{a:?} vs {b:?}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::testkit::Case;
    use super::*;

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
        c.width[0] = 1; // started so far, as the engine reports it
        let mut cuts = Cuts::default();
        let mut r = vec![10.0; 6];
        r[0] = 0.0; // up0 full: the coflow's only sender
        assert!(cuts.blocked(&c.common(), 0, &r));
        c.active = both;
        c.groups[0].end = 2;
        c.width[0] = 2;
        assert!(!cuts.blocked(&c.common(), 0, &r), "up2 is open for 2→1");
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
        c.remaining[0] = 3.0;
        cache.moved(0);
        assert_eq!(
            cache.get(&c.clairvoyant(), 0),
            &[(0, 5.0), (4, 3.0), (5, 2.0)]
        );
        // Bytes sent without the policy's say (a real network): coflow_sent changed.
        c.remaining[1] = 1.0;
        c.coflow_sent[0] += 1.0;
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
