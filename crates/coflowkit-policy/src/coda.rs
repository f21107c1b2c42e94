//! `coda`: CODA's error-tolerant scheduler (Zhang et al., SIGCOMM'16, §4.2,
//! Algorithm 2) over coflows given by a possibly wrong labelling. See
//! docs/policies/coda.md.
//!
//! ```text
//! labelled coflows   C_L = { f : label(f) = L }              (labels.rs)
//! distance           d(f, C_L) = min_{g ∈ C_L} |t_f − t_g|    t: when a flow was first seen
//! late binding       C*_L = C_L ∪ { f : d(f, C_L) ≤ d }
//!                    an unbound flow is served with the highest-priority C*_L that
//!                    holds it, and bound to it for good once it gets a rate
//! inter-coflow       D-CLAS over extended coflows: queue(L) = Aalo's queue of the
//!                    bytes sent by the flows bound to L; order (queue, first seen, L)
//! intra-coflow       per-flow MLFQ on the flow's bytes sent (pias.rs), max-min
//!                    fair within a flow queue, flow queues in priority order
//! rates              priority max-min over (extended coflow, flow queue) groups
//! ```
//!
//! With `late_binding=false` and `intra=false` this is Aalo on the labelled
//! coflows; on the true labels that is `aalo` itself (tested).

use crate::labels::{label_space, LabelSource, Labeller, UNLABELLED};
use crate::pias::FlowQueues;
use crate::util::{CoflowPriority, Thresholds};
use crate::{Common, Decision, NonClairvoyantPolicy, NonClairvoyantView, Wakeup};
use std::collections::HashMap;

/// The parameters of [`Coda`].
pub struct CodaConfig {
    pub labeller: Box<dyn Labeller>,
    /// Late binding on, with diameter `distance_s` (seconds of first-seen time).
    pub late_binding: bool,
    pub distance_s: f64,
    /// Intra-coflow prioritisation on.
    pub intra: bool,
    /// D-CLAS coflow queues (Aalo's).
    pub coflow_queues: Thresholds,
    /// Per-flow queues of the intra-coflow MLFQ.
    pub flow_queues: Thresholds,
}

impl CodaConfig {
    /// The configuration with a built-in labelling source.
    pub fn with_source(source: LabelSource) -> Self {
        CodaConfig {
            labeller: Box::new(source),
            late_binding: true,
            distance_s: 0.1,
            intra: true,
            coflow_queues: Thresholds::new(10, 10.0 * 1048576.0, 10.0),
            flow_queues: Thresholds::new(8, 1048576.0, 4.0),
        }
    }
}

pub struct Coda {
    labeller: Box<dyn Labeller>,
    late_binding: bool,
    distance_s: f64,
    intra: bool,
    coflow_queues: Thresholds,
    fq: FlowQueues,
    prio: CoflowPriority,
    // Per flow.
    labels: Vec<u32>,
    seen_s: Vec<f64>,
    bound: Vec<u32>,
    // Per label.
    first_seen: Vec<f64>,
    sent_done: Vec<f64>,
    sent_now: Vec<f64>,
    rank: Vec<u32>,
    /// Label runs in first-seen order: (first time, last time, label); consecutive
    /// flows of one label make one run. The distance queries of late binding.
    runs: Vec<(f64, f64, u32)>,
    /// Labels within `distance_s` of flows first seen at a time, with a label, once
    /// no later flow can come within the window: (time bits, label) → labels.
    cand_cache: HashMap<(u64, u32), Vec<u32>>,
    prev_active: Vec<u32>,
    // Scratch.
    new: Vec<u32>,
    eff: Vec<u32>,
    distinct: Vec<u32>,
    cand: Vec<u32>,
    order: Vec<usize>,
    starts: Vec<usize>,
}

impl Coda {
    pub fn new(cfg: CodaConfig) -> Self {
        Coda {
            labeller: cfg.labeller,
            late_binding: cfg.late_binding,
            distance_s: cfg.distance_s,
            intra: cfg.intra,
            coflow_queues: cfg.coflow_queues,
            fq: FlowQueues::new(cfg.flow_queues),
            prio: CoflowPriority::default(),
            labels: Vec::new(),
            seen_s: Vec::new(),
            bound: Vec::new(),
            first_seen: Vec::new(),
            sent_done: Vec::new(),
            sent_now: Vec::new(),
            rank: Vec::new(),
            runs: Vec::new(),
            cand_cache: HashMap::new(),
            prev_active: Vec::new(),
            new: Vec::new(),
            eff: Vec::new(),
            distinct: Vec::new(),
            cand: Vec::new(),
            order: Vec::new(),
            starts: Vec::new(),
        }
    }

    fn size_for(&mut self, c: &Common) {
        let nf = c.flow_coflow.len();
        if self.labels.len() != nf {
            let nl = label_space(nf, c.coflow_id.len());
            self.labels = vec![UNLABELLED; nf];
            self.seen_s = vec![f64::NAN; nf];
            self.bound = vec![UNLABELLED; nf];
            self.first_seen = vec![f64::INFINITY; nl];
            self.sent_done = vec![0.0; nl];
            self.sent_now = vec![0.0; nl];
            self.rank = vec![0; nl];
        }
    }

    /// Flows seen for the first time go to `self.new`; flows gone since the last
    /// call add their final bytes to the label they were bound to.
    fn diff_active(&mut self, c: &Common) {
        self.new.clear();
        let (prev, cur) = (&self.prev_active, c.active);
        let (mut i, mut j) = (0, 0);
        while i < prev.len() || j < cur.len() {
            if j < cur.len() && (i == prev.len() || cur[j] < prev[i]) {
                if self.seen_s[cur[j] as usize].is_nan() {
                    self.new.push(cur[j]);
                }
                j += 1;
            } else if j < cur.len() && cur[j] == prev[i] {
                i += 1;
                j += 1;
            } else {
                let f = prev[i] as usize;
                if self.bound[f] != UNLABELLED {
                    self.sent_done[self.bound[f] as usize] += c.sent[f];
                }
                i += 1;
            }
        }
        self.prev_active.clear();
        self.prev_active.extend_from_slice(c.active);
    }

    fn add_to_runs(&mut self, t: f64, l: u32) {
        match self.runs.last_mut() {
            Some(r) if r.2 == l => r.1 = t,
            _ => self.runs.push((t, t, l)),
        }
        self.first_seen[l as usize] = self.first_seen[l as usize].min(t);
    }

    /// After an online identifier changed labels: runs and first-seen times anew.
    fn rebuild_runs(&mut self) {
        let mut seen: Vec<(f64, u32)> = (0..self.labels.len() as u32)
            .filter(|&f| !self.seen_s[f as usize].is_nan())
            .map(|f| (self.seen_s[f as usize], f))
            .collect();
        seen.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        self.runs.clear();
        self.first_seen.iter_mut().for_each(|x| *x = f64::INFINITY);
        for (t, f) in seen {
            let l = self.labels[f as usize];
            self.add_to_runs(t, l);
        }
        self.cand_cache.clear();
    }

    /// Labels other than `own` with a flow first seen within `distance_s` of `t`.
    fn candidates(&mut self, t: f64, own: u32, now: f64) -> &[u32] {
        let d = self.distance_s;
        let key = (t.to_bits(), own);
        if self.cand_cache.contains_key(&key) {
            return &self.cand_cache[&key];
        }
        let lo = self.runs.partition_point(|r| r.1 < t - d);
        self.cand.clear();
        for r in &self.runs[lo..] {
            if r.0 > t + d {
                break;
            }
            if r.2 != own && !self.cand.contains(&r.2) {
                self.cand.push(r.2);
            }
        }
        if now > t + d {
            self.cand_cache.insert(key, self.cand.clone());
            return &self.cand_cache[&key];
        }
        &self.cand
    }

    fn key(&self, l: u32) -> (usize, f64, u32) {
        let s = self.sent_done[l as usize] + self.sent_now[l as usize];
        (self.coflow_queues.queue(s), self.first_seen[l as usize], l)
    }

    fn better(a: (usize, f64, u32), b: (usize, f64, u32)) -> bool {
        a.0.cmp(&b.0)
            .then(a.1.total_cmp(&b.1))
            .then(a.2.cmp(&b.2))
            .is_lt()
    }
}

impl NonClairvoyantPolicy for Coda {
    fn decide(&mut self, v: &NonClairvoyantView, out: &mut Decision) {
        let c: &Common = v;
        self.size_for(c);
        self.diff_active(c);

        // 1. Label the newcomers.
        if !self.new.is_empty() {
            let new = std::mem::take(&mut self.new);
            let changed = self.labeller.label(c, &new, &mut self.labels);
            for &f in &new {
                self.seen_s[f as usize] = c.now_s;
            }
            if changed {
                self.rebuild_runs();
            } else {
                for &f in &new {
                    let l = self.labels[f as usize];
                    self.add_to_runs(c.now_s, l);
                }
            }
            self.new = new;
        }

        // 2. Bytes sent per label: finished bound flows plus active bound flows.
        self.distinct.clear();
        for &f in c.active {
            let b = self.bound[f as usize];
            if b != UNLABELLED {
                if self.sent_now[b as usize] == 0.0 {
                    self.distinct.push(b);
                }
                self.sent_now[b as usize] += c.sent[f as usize];
            }
        }

        // 3. The extended coflow each active flow is served with.
        self.eff.clear();
        for &f in c.active {
            let fu = f as usize;
            let e = if self.bound[fu] != UNLABELLED {
                self.bound[fu]
            } else if self.late_binding {
                let own = self.labels[fu];
                let mut best = own;
                let mut best_key = self.key(own);
                let cands = std::mem::take(&mut self.cand);
                let list: Vec<u32> = self.candidates(self.seen_s[fu], own, c.now_s).to_vec();
                self.cand = cands;
                for l in list {
                    let k = self.key(l);
                    if Self::better(k, best_key) {
                        best = l;
                        best_key = k;
                    }
                }
                best
            } else {
                self.labels[fu]
            };
            self.eff.push(e);
        }

        // 4. Order the extended coflows, then group the active positions by rank
        //    (a counting sort: positions stay in index order within a coflow).
        let mut labels_here: Vec<u32> = self.eff.clone();
        labels_here.sort_unstable();
        labels_here.dedup();
        let mut keyed: Vec<((usize, f64, u32), u32)> =
            labels_here.iter().map(|&l| (self.key(l), l)).collect();
        keyed.sort_by(|a, b| {
            a.0 .0
                .cmp(&b.0 .0)
                .then(a.0 .1.total_cmp(&b.0 .1))
                .then(a.0 .2.cmp(&b.0 .2))
        });
        for (r, &(_, l)) in keyed.iter().enumerate() {
            self.rank[l as usize] = r as u32;
        }
        self.starts.clear();
        self.starts.resize(keyed.len() + 1, 0);
        for &e in &self.eff {
            self.starts[self.rank[e as usize] as usize + 1] += 1;
        }
        for r in 0..keyed.len() {
            self.starts[r + 1] += self.starts[r];
        }
        self.order.clear();
        self.order.resize(self.eff.len(), 0);
        {
            let mut next = self.starts.clone();
            for (i, &e) in self.eff.iter().enumerate() {
                let r = self.rank[e as usize] as usize;
                self.order[next[r]] = i;
                next[r] += 1;
            }
        }

        // 5. Serve: extended coflows in order; inside, flow queues (or max-min).
        let prio = if self.intra {
            &mut self.fq.prio
        } else {
            &mut self.prio
        };
        prio.begin(c, out);
        for r in 0..keyed.len() {
            let members = &self.order[self.starts[r]..self.starts[r + 1]];
            if self.intra {
                self.fq.serve(c, members.iter().copied(), out);
            } else {
                self.prio.serve(c, members.iter().copied(), out);
            }
        }

        // 6. Bind the flows that got a rate; ask for the next crossings.
        for (i, &f) in c.active.iter().enumerate() {
            if out.rates[i] > 0.0 && self.bound[f as usize] == UNLABELLED {
                self.bound[f as usize] = self.eff[i];
            }
        }
        for (r, &(key, l)) in keyed.iter().enumerate() {
            let Some(t) = self.coflow_queues.upper(key.0) else {
                continue;
            };
            let members = &self.order[self.starts[r]..self.starts[r + 1]];
            let rate: f64 = members.iter().map(|&i| out.rates[i]).sum();
            if rate > 0.0 {
                let s = self.sent_done[l as usize] + self.sent_now[l as usize];
                out.wakeups.push(Wakeup::At(c.now_s + (t - s).max(0.0) / rate));
            }
        }
        if self.intra {
            self.fq.wakeup(c, 0..c.active.len(), out);
        }
        for &l in &self.distinct {
            self.sent_now[l as usize] = 0.0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::testkit::{close, Case};

    fn coda(source: LabelSource, late: bool, intra: bool) -> Coda {
        Coda::new(CodaConfig {
            late_binding: late,
            intra,
            coflow_queues: Thresholds::new(3, 10.0, 10.0),
            flow_queues: Thresholds::new(3, 4.0, 10.0),
            ..CodaConfig::with_source(source)
        })
    }

    #[test]
    fn on_true_labels_without_extras_it_is_aalo() {
        // C = 10. Coflow 0: 0→2 and 1→2; coflow 1: 1→3. Both in queue 0 (nothing
        // sent); FIFO: coflow 0 takes down2 at 5 + 5, coflow 1 gets what up1 has
        // left: 5.
        let c = Case::new(
            4,
            10.0,
            &[
                (0, 0, 2, 100.0, 0.0),
                (0, 1, 2, 100.0, 0.0),
                (1, 1, 3, 100.0, 0.0),
            ],
        );
        let mut d = Decision::default();
        d.reset(3);
        coda(LabelSource::Truth, false, false).decide(&c.non_clairvoyant(), &mut d);
        close(&d.rates, &[5.0, 5.0, 5.0]);
        // Coflow 0 sends 10 B/s and reaches T0 = 10 B at t = 1; coflow 1 at t = 2.
        assert_eq!(d.wakeups, vec![Wakeup::At(1.0), Wakeup::At(2.0)]);
    }

    #[test]
    fn all_in_one_coflow_without_intra_is_per_flow_fairness() {
        let c = Case::new(
            3,
            12.0,
            &[
                (0, 0, 2, 9.0, 0.0),
                (0, 0, 2, 9.0, 0.0),
                (1, 1, 2, 9.0, 0.0),
            ],
        );
        let mut d = Decision::default();
        d.reset(3);
        coda(LabelSource::One, true, false).decide(&c.non_clairvoyant(), &mut d);
        close(&d.rates, &[4.0, 4.0, 4.0]);
    }

    #[test]
    fn intra_coflow_prioritisation_serves_the_short_flow_first() {
        // One labelled coflow (labels=one) holding x0: 0→2 with 6 B sent (flow
        // queue 1, past T0 = 4) and x1: 1→2 with nothing sent (flow queue 0).
        // Flow queue 0 first: x1 takes down2 whole (10); x0 gets nothing.
        let c = Case::new(3, 10.0, &[(0, 0, 2, 100.0, 6.0), (1, 1, 2, 100.0, 0.0)]);
        let mut d = Decision::default();
        d.reset(2);
        coda(LabelSource::One, true, true).decide(&c.non_clairvoyant(), &mut d);
        close(&d.rates, &[0.0, 10.0]);
        // Label 0 has sent 0 (x0's 6 B were never bound: the first call binds),
        // so its queue crossing of 10 B at 10 B/s is at t = 1; x1 reaches its
        // flow threshold 4 B at t = 0.4.
        assert_eq!(
            d.wakeups,
            vec![
                Wakeup::At(1.0),
                Wakeup::FlowSent {
                    flow: 1,
                    bytes: 4.0
                }
            ]
        );
    }

    /// Labels fixed in advance, by global flow index.
    struct Fixed(Vec<u32>);

    impl Labeller for Fixed {
        fn label(&mut self, _c: &Common, new: &[u32], labels: &mut [u32]) -> bool {
            for &f in new {
                labels[f as usize] = self.0[f as usize];
            }
            false
        }
    }

    fn fixed(late: bool) -> Coda {
        Coda::new(CodaConfig {
            labeller: Box::new(Fixed(vec![0, 1, 1])),
            late_binding: late,
            intra: false,
            coflow_queues: Thresholds::new(3, 10.0, 10.0),
            ..CodaConfig::with_source(LabelSource::Truth)
        })
    }

    #[test]
    fn late_binding_serves_a_straggler_with_its_parent_then_keeps_it_there() {
        // C = 10, all flows into down3. Coflow 0: x0 0→3, x1 1→3, seen at t = 0;
        // coflow 1: x2 2→3, seen at t = 5. The labelling puts x1 with coflow 1
        // (label 1): a straggler. Coflow thresholds 10, 100; d = 0.1 s.
        let flows = [
            (0, 0, 3, 100.0, 0.0),
            (0, 1, 3, 100.0, 0.0),
            (1, 2, 3, 100.0, 0.0),
        ];
        let mut first = Case::new(4, 10.0, &flows);
        first.active = vec![0, 1];
        first.groups.truncate(1);
        first.count_paths();

        // Without late binding, t = 0: labels 0 and 1 are both first seen at 0,
        // label 0 goes first (id) and x0 takes down3: the straggler waits.
        let mut d = Decision::default();
        d.reset(2);
        fixed(false).decide(&first.non_clairvoyant(), &mut d);
        close(&d.rates, &[10.0, 0.0]);

        // With late binding, x1 is within d of label 0 (x0, seen at the same
        // time): it is served with label 0, the higher priority, and bound to it.
        let mut p = fixed(true);
        let mut d = Decision::default();
        d.reset(2);
        p.decide(&first.non_clairvoyant(), &mut d);
        close(&d.rates, &[5.0, 5.0]);
        assert_eq!(p.bound, vec![0, 0, UNLABELLED]);

        // t = 5: x0 and x1 sent 25 B each, all bound to label 0 → 50 B → coflow
        // queue 1. x2 arrives, label 1, nothing within d of t = 5 but its own
        // label: label 1 has sent nothing (x1 is bound to 0) → queue 0, first.
        let mut second = Case::new(
            4,
            10.0,
            &[
                (0, 0, 3, 100.0, 25.0),
                (0, 1, 3, 100.0, 25.0),
                (1, 2, 3, 100.0, 0.0),
            ],
        );
        second.count_paths();
        let mut v = second.non_clairvoyant();
        v.common.now_s = 5.0;
        let mut d = Decision::default();
        d.reset(3);
        p.decide(&v, &mut d);
        close(&d.rates, &[0.0, 0.0, 10.0]);
        // Label 1 reaches 10 B at 10 B/s one second later; label 0 does not move.
        assert_eq!(d.wakeups, vec![Wakeup::At(6.0)]);
        assert_eq!(p.bound, vec![0, 0, 1]);
    }
}
