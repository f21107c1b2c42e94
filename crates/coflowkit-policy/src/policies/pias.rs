//! `pias`: per-flow multi-level feedback queues with no coflow information
//! (PIAS, Bai et al., NSDI'15). See docs/policies/pias.md.
//!
//! ```text
//! thresholds  T_q = T0 · E^q,  q = 0..K-2  (queue K-1 unbounded)
//! queue(f)    = min { q : sent_f < T_q }
//! rates       strict priority across queues, max-min fair among the flows of a queue
//! wake-up     when the first moving flow reaches the threshold of its queue (exact)
//! ```
//!
//! The flow-level model of PIAS: switches with K strict-priority queues, hosts
//! tagging each packet with the queue its flow's bytes sent so far put it in, and
//! TCP sharing within a queue. Coflows play no part; this is the baseline for the
//! case where nothing at all is known about coflows.

use crate::decision::{Decision, Wakeup};
use crate::params::{ParamSpec, Params};
use crate::policy::NonClairvoyantPolicy;
use crate::policy::{AnyPolicy, Info};
use crate::spec::{non_clairvoyant, PolicySpec};
use crate::support::mlfq::IncFlowQueues;
use crate::support::priority::CoflowPriority;
use crate::support::thresholds::Thresholds;
use crate::view::{Common, NonClairvoyantView};
use coflowkit_model::ModelError;

pub struct Pias {
    queues: FlowQueues,
    /// The same rule kept across calls, for drivers that take delta decisions.
    inc: IncFlowQueues,
}

impl Pias {
    pub fn new(thresholds: Thresholds) -> Self {
        let inc = IncFlowQueues::new(thresholds.clone());
        let mut queues = FlowQueues::new(thresholds);
        queues.kept = true;
        Pias { queues, inc }
    }
}

impl NonClairvoyantPolicy for Pias {
    fn decide(&mut self, v: &NonClairvoyantView, out: &mut Decision) {
        if out.limits_ok {
            // The driver serves the queues as classes and moves each flow a
            // queue down as it crosses the threshold: a flow is named once,
            // when it starts.
            let th = &self.queues.thresholds;
            out.class_delta = true;
            out.class_moves
                .extend(v.started.iter().map(|&f| (f, th.queue(v.sent(f)) as u8)));
            out.class_limits
                .extend((0..th.queues() - 1).filter_map(|q| th.upper(q)));
            return;
        }
        if out.delta_ok {
            self.inc.decide(v, out);
            return;
        }
        self.queues.prio.begin(v, out);
        let n = v.active.len();
        self.queues.serve(v, 0..n, out);
        self.queues.wakeup(v, 0..n, out);
    }
}

/// Per-flow multi-level feedback queues over a set of active flows: strict
/// priority between queues, max-min within one. Shared by `pias` (all active
/// flows) and `coda` (the flows of one extended coflow at a time).
pub(crate) struct FlowQueues {
    pub thresholds: Thresholds,
    pub prio: CoflowPriority,
    /// Scratch: positions bucketed by queue.
    buckets: Vec<Vec<usize>>,
    /// Whether queue q is the same group of flows call after call (`pias`: all
    /// active flows), so that its max-min is kept across calls
    /// ([`CoflowPriority::serve_level`]); `coda` serves one extended coflow at a
    /// time and solves afresh.
    pub kept: bool,
}

impl FlowQueues {
    pub fn new(thresholds: Thresholds) -> Self {
        let k = thresholds.queues();
        FlowQueues {
            thresholds,
            prio: CoflowPriority::default(),
            buckets: vec![Vec::new(); k],
            kept: false,
        }
    }

    /// Puts the flows at `positions` in `self.buckets` by queue.
    fn bucket(&mut self, c: &Common, positions: impl Iterator<Item = usize>) {
        for b in &mut self.buckets {
            b.clear();
        }
        for i in positions {
            let q = self.thresholds.queue(c.sent(c.active[i]));
            self.buckets[q].push(i);
        }
    }

    /// Serves the flows at `positions` (indices into `c.active`), queue by queue,
    /// on what `self.prio.residual` has left.
    pub fn serve(
        &mut self,
        c: &Common,
        positions: impl Iterator<Item = usize>,
        out: &mut Decision,
    ) {
        self.bucket(c, positions);
        for q in 0..self.buckets.len() {
            if self.buckets[q].is_empty() {
                continue;
            }
            let b = std::mem::take(&mut self.buckets[q]);
            if self.kept {
                self.prio.serve_level(c, b.iter().copied(), q, out);
            } else {
                self.prio.serve(c, b.iter().copied(), out);
            }
            self.buckets[q] = b;
        }
    }

    /// [`FlowQueues::serve`] for the flows of one group that is served again
    /// at later calls under `key` (coda: one extended coflow): the queues of at
    /// least [`KEPT_QUEUE`] flows are solved by a kept max-min
    /// ([`CoflowPriority::serve_keyed`]), the same rates up to float sums.
    pub fn serve_group(
        &mut self,
        c: &Common,
        positions: impl Iterator<Item = usize>,
        key: u32,
        out: &mut Decision,
    ) {
        self.bucket(c, positions);
        let nq = self.buckets.len();
        for q in 0..nq {
            if self.buckets[q].is_empty() {
                continue;
            }
            let b = std::mem::take(&mut self.buckets[q]);
            if b.len() >= KEPT_QUEUE {
                let k = key as u64 * nq as u64 + q as u64;
                self.prio.serve_keyed(c, b.iter().copied(), k, out);
            } else {
                self.prio.serve(c, b.iter().copied(), out);
            }
            self.buckets[q] = b;
        }
    }

    /// Asks to be called when the first of the flows at `positions` that moves
    /// reaches the upper threshold of its queue.
    pub fn wakeup(&self, c: &Common, positions: impl Iterator<Item = usize>, out: &mut Decision) {
        if let Some(w) = first_crossing(
            c,
            positions,
            |i| out.rates[i],
            |sent| self.thresholds.upper(self.thresholds.queue(sent)),
        ) {
            out.wakeups.push(w);
        }
    }
}

/// A queue of one group with at least this many flows is kept solved across
/// calls by [`FlowQueues::serve_group`] (as `CoflowPriority`'s pool of large
/// coflows).
const KEPT_QUEUE: usize = 512;

/// Among the flows at `positions` with a positive rate (`rate(i)`, the rate
/// the decision gives position `i`), the one that reaches `next(sent)` first at
/// those rates, as a [`Wakeup::FlowSent`]. One wake-up is enough: every event
/// calls the policy again, which asks anew.
pub(crate) fn first_crossing(
    c: &Common,
    positions: impl Iterator<Item = usize>,
    rate: impl Fn(usize) -> f64,
    next: impl Fn(f64) -> Option<f64>,
) -> Option<Wakeup> {
    let mut best: Option<(f64, u32, f64)> = None;
    for i in positions {
        let r = rate(i);
        if r <= 0.0 {
            continue;
        }
        let f = c.active[i];
        let sent = c.sent(f);
        if let Some(t) = next(sent) {
            let dt = (t - sent) / r;
            if best.is_none_or(|b| dt < b.0) {
                best = Some((dt, f, t));
            }
        }
    }
    best.map(|(_, flow, bytes)| Wakeup::FlowSent { flow, bytes })
}

pub const FLOW_QUEUES: [ParamSpec; 3] = [
    ParamSpec {
        name: "flow_queues",
        default: "8",
        help: "per-flow queues (8: a commodity switch's priority queues)",
    },
    ParamSpec {
        name: "flow_first_threshold_bytes",
        default: "1048576",
        help: "upper bound of the first flow queue (1 MiB)",
    },
    ParamSpec {
        name: "flow_multiplier",
        default: "4",
        help: "growth factor between flow-queue thresholds",
    },
];

pub const PARAMS: &[ParamSpec] = &FLOW_QUEUES;

pub fn flow_thresholds(p: &Params) -> Result<Thresholds, ModelError> {
    Ok(Thresholds::new(
        p.usize_in("flow_queues", 1, 64)?,
        p.f64_in("flow_first_threshold_bytes", 1.0, 1e18)?,
        p.f64_in("flow_multiplier", 1.0 + 1e-9, 1e6)?,
    ))
}

fn build(p: &Params) -> Result<AnyPolicy, ModelError> {
    non_clairvoyant(Pias::new(flow_thresholds(p)?))
}

pub const SPEC: PolicySpec = PolicySpec {
    name: "pias",
    info: Info::NonClairvoyant,
    knows: "coflow-blind",
    summary: "per-flow multi-level feedback queues, no coflows (PIAS)",
    rule: "per-flow queues by bytes sent (exponential thresholds), strict priority across, max-min within",
    paper: "PIAS: Bai et al., NSDI'15",
    params: PARAMS,
    needs: &[],
    build,
    example_ccts: [0.10175, 0.023625, 0.0545],
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::{close, Case};

    #[test]
    fn short_flows_go_first_whatever_their_coflow() {
        // C = 10, T0 = 10 B, E = 10, K = 3 (thresholds 10, 100).
        // x0: coflow 0, 0→2, sent 50 → queue 1.  x1: coflow 0, 1→2, sent 0 → queue 0.
        // x2: coflow 1, 0→3, sent 0 → queue 0.
        // Queue 0 first: x1 and x2 share no link → 10 each (up0 and up1, down2, down3).
        // Queue 1: x0 needs up0 (taken by x2) → 0.
        let c = Case::new(
            4,
            10.0,
            &[
                (0, 0, 2, 100.0, 50.0),
                (0, 1, 2, 100.0, 0.0),
                (1, 0, 3, 100.0, 0.0),
            ],
        );
        let mut d = Decision::default();
        d.reset(3);
        Pias::new(Thresholds::new(3, 10.0, 10.0)).decide(&c.non_clairvoyant(), &mut d);
        close(&d.rates, &[0.0, 10.0, 10.0]);
        // Both moving flows reach 10 B after 1 s; the earlier index wins the tie.
        assert_eq!(
            d.wakeups,
            vec![Wakeup::FlowSent {
                flow: 1,
                bytes: 10.0
            }]
        );
    }

    #[test]
    fn max_min_inside_a_queue_then_the_spare_to_the_next() {
        // C = 12; thresholds 10, 100. x0, x1: 0→2 and 1→2, sent 0 (queue 0);
        // x2: 1→3, sent 20 (queue 1). Queue 0: down2 shared → 6 each; up1 has 6
        // left → x2 gets 6. x2 reaches 100 after 80/6 s; x0 reaches 10 after 10/6 s.
        let c = Case::new(
            4,
            12.0,
            &[
                (0, 0, 2, 100.0, 0.0),
                (1, 1, 2, 100.0, 0.0),
                (1, 1, 3, 100.0, 20.0),
            ],
        );
        let mut d = Decision::default();
        d.reset(3);
        Pias::new(Thresholds::new(3, 10.0, 10.0)).decide(&c.non_clairvoyant(), &mut d);
        close(&d.rates, &[6.0, 6.0, 6.0]);
        assert_eq!(
            d.wakeups,
            vec![Wakeup::FlowSent {
                flow: 0,
                bytes: 10.0
            }]
        );
    }

    #[test]
    fn one_queue_is_per_flow_fairness() {
        // K = 1: no thresholds, every flow in one queue, exactly max-min (fair).
        let c = Case::new(
            3,
            12.0,
            &[
                (0, 0, 2, 9.0, 0.0),
                (0, 0, 2, 9.0, 5.0),
                (1, 1, 2, 9.0, 1.0),
            ],
        );
        let mut d = Decision::default();
        d.reset(3);
        Pias::new(Thresholds::new(1, 10.0, 10.0)).decide(&c.non_clairvoyant(), &mut d);
        close(&d.rates, &[4.0, 4.0, 4.0]);
        assert!(d.wakeups.is_empty());
    }
}
