//! `coda`: CODA's error-tolerant scheduler (Zhang et al., SIGCOMM'16, §4.2,
//! Algorithm 2) over coflows given by a possibly wrong labelling. See
//! docs/policies/coda.md.
//!
//! ```text
//! labelled coflows   C_L = { f : label(f) = L }              (labels.rs)
//! late binding       C*_L = C_L ∪ { f : d(f, C_L) ≤ d }       (the labeller's `near`)
//!                    an unbound flow is served with the highest-priority C*_L that
//!                    holds it, and bound to it for good once it gets a rate
//!                    (binding=first); binding=round: every flow is served with
//!                    the highest-priority C*_L that holds it at each call
//! inter-coflow       D-CLAS over extended coflows: queue(L) = Aalo's queue of the
//!                    bytes sent by the flows bound to L; order (queue, first seen, L),
//!                    first seen: when the scheduler saw L's first flow
//! intra-coflow       per-flow MLFQ on the flow's bytes sent (pias.rs), max-min
//!                    fair within a flow queue, flow queues in priority order
//! rates              priority max-min over (extended coflow, flow queue) groups
//! ```
//!
//! With `late_binding=false` and `intra=false` this is Aalo on the labelled
//! coflows; on the true labels that is `aalo` itself (tested).

use crate::support::labels::{label_space, LabelSource, Labeller, UNLABELLED};
use crate::policies::pias::FlowQueues;
use crate::support::cuts::{CutBuilder, cut_closed};
use crate::support::priority::CoflowPriority;
use crate::support::thresholds::Thresholds;
use crate::decision::{Decision, Wakeup};
use crate::policy::NonClairvoyantPolicy;
use crate::view::{Common, NonClairvoyantView};
use crate::policy::{AnyPolicy, Info};
use crate::spec::{non_clairvoyant, PolicySpec};
use crate::policies::aalo;
use crate::policies::pias::{flow_thresholds, FLOW_QUEUES};
use crate::support::identify::{Identify, IdentifyConfig, CODA_HADOOP, CODA_SPARK};
use coflowkit_alloc::avail;
use coflowkit_ident::Metric;
use crate::params::{ParamSpec, Params};
use coflowkit_model::ModelError;

/// The parameters of [`Coda`].
pub struct CodaConfig {
    pub labeller: Box<dyn Labeller>,
    /// Late binding on, with diameter `distance_s` (in the labeller's distance).
    pub late_binding: bool,
    pub distance_s: f64,
    /// A flow stays bound to the extended coflow it was first served with (true,
    /// `binding=first`), or is bound anew at every call (`binding=round`).
    pub bind_for_good: bool,
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
            bind_for_good: true,
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
    bind_for_good: bool,
    intra: bool,
    coflow_queues: Thresholds,
    fq: FlowQueues,
    prio: CoflowPriority,
    // Per flow.
    labels: Vec<u32>,
    seen_s: Vec<f64>,
    bound: Vec<u32>,
    /// The label a flow's bytes count for: the one it is bound to; after the
    /// labeller moved a bound flow, its new label until it is bound again.
    acc: Vec<u32>,
    /// Bytes sent by a flow when last counted into `acc`.
    counted: Vec<f64>,
    /// The extended coflow a flow was served with at the last call.
    last_eff: Vec<u32>,
    // Per label.
    first_seen: Vec<f64>,
    /// Bytes sent by the flows bound to the label (finished ones included), as of
    /// this call.
    sent: Vec<f64>,
    rank: Vec<u32>,
    stamp: Vec<u32>,
    epoch: u32,
    /// Bumped whenever a flow joins or leaves the extended coflow (with the member
    /// count, it tells when a cut is stale).
    version: Vec<u32>,
    cuts: Vec<Cut>,
    cut_builder: CutBuilder,
    /// Flows started in all (the sum of `coflow_started`) at the last scan for
    /// newcomers.
    started_at_scan: u64,
    /// Bound flows that had a positive rate at the last call: only their bytes
    /// can have changed since, and only they can have finished.
    moving: Vec<u32>,
    // Scratch.
    new: Vec<u32>,
    changed: Vec<u32>,
    eff: Vec<u32>,
    distinct: Vec<u32>,
    keyed: Vec<((usize, f64, u32), u32)>,
    cand: Vec<u32>,
    order: Vec<usize>,
    /// The members of one extended coflow behind an open last link.
    open: Vec<usize>,
    starts: Vec<usize>,
    next: Vec<usize>,
    rate_of: Vec<f64>,
}

type Key = (usize, f64, u32);

/// The distinct first and last links of an extended coflow's flows: when all of
/// either are saturated, none of its flows can get a rate (as `support::cuts::Cuts` for
/// true coflows), which is checked without visiting the flows.
#[derive(Default, Clone)]
struct Cut {
    key: (u32, u32),
    first: Vec<u32>,
    last: Vec<u32>,
}

fn key_cmp(a: &Key, b: &Key) -> std::cmp::Ordering {
    a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)).then(a.2.cmp(&b.2))
}

impl Coda {
    pub fn new(cfg: CodaConfig) -> Self {
        Coda {
            labeller: cfg.labeller,
            late_binding: cfg.late_binding,
            distance_s: cfg.distance_s,
            bind_for_good: cfg.bind_for_good,
            intra: cfg.intra,
            coflow_queues: cfg.coflow_queues,
            fq: FlowQueues::new(cfg.flow_queues),
            prio: CoflowPriority::default(),
            labels: Vec::new(),
            seen_s: Vec::new(),
            bound: Vec::new(),
            acc: Vec::new(),
            counted: Vec::new(),
            last_eff: Vec::new(),
            first_seen: Vec::new(),
            sent: Vec::new(),
            rank: Vec::new(),
            stamp: Vec::new(),
            epoch: 0,
            version: Vec::new(),
            cuts: Vec::new(),
            cut_builder: CutBuilder::default(),
            started_at_scan: 0,
            moving: Vec::new(),
            new: Vec::new(),
            changed: Vec::new(),
            eff: Vec::new(),
            distinct: Vec::new(),
            keyed: Vec::new(),
            cand: Vec::new(),
            order: Vec::new(),
            open: Vec::new(),
            starts: Vec::new(),
            next: Vec::new(),
            rate_of: Vec::new(),
        }
    }

    fn size_for(&mut self, c: &Common) {
        let nf = c.flow_coflow.len();
        if nf < self.labels.len() {
            // Another workload: start afresh.
            for v in [&mut self.labels, &mut self.bound, &mut self.acc, &mut self.last_eff] {
                v.clear();
            }
            self.seen_s.clear();
            self.counted.clear();
            self.started_at_scan = 0;
            self.moving.clear();
            self.version.clear();
            self.cuts.clear();
            self.first_seen.clear();
            self.sent.clear();
            self.rank.clear();
            self.stamp.clear();
            self.rate_of.clear();
        }
        if self.labels.len() < nf {
            // The first call, or a driver that added flows (the runtime's
            // master adds one slot per flow it sees): what is known stays.
            self.labels.resize(nf, UNLABELLED);
            self.seen_s.resize(nf, f64::NAN);
            self.bound.resize(nf, UNLABELLED);
            self.acc.resize(nf, UNLABELLED);
            self.counted.resize(nf, 0.0);
            self.last_eff.resize(nf, UNLABELLED);
            let nl = label_space(nf, c.coflow_id.len());
            if nl > self.sent.len() {
                self.grow(nl as u32 - 1);
            }
        }
    }

    /// Makes room for label `l` (an online identifier's labels may exceed
    /// [`label_space`]).
    fn grow(&mut self, l: u32) {
        let n = l as usize + 1;
        if n > self.sent.len() {
            let n = n.max(self.sent.len() * 2);
            self.version.resize(n, 0);
            self.cuts.resize(n, Cut::default());
            self.first_seen.resize(n, f64::INFINITY);
            self.sent.resize(n, 0.0);
            self.rank.resize(n, 0);
            self.stamp.resize(n, 0);
            self.rate_of.resize(n, 0.0);
        }
    }

    /// Adds to each label the bytes its flows sent since the last call (finished
    /// flows included: `sent` keeps their final count).
    fn count_bytes(&mut self, c: &Common) {
        for &f in &self.moving {
            let fu = f as usize;
            let l = self.acc[fu] as usize;
            self.sent[l] += c.sent(fu as u32) - self.counted[fu];
            self.counted[fu] = c.sent(fu as u32);
        }
    }

    /// Moves the bytes of flow `f` counted so far (for label `acc[f]`) to `l`.
    fn recount(&mut self, f: usize, l: u32) {
        let old = self.acc[f] as usize;
        self.sent[old] -= self.counted[f];
        self.sent[l as usize] += self.counted[f];
        self.acc[f] = l;
    }

    /// A label's first-seen time: the earliest first sighting of a flow that had
    /// the label.
    fn see(&mut self, f: u32) {
        let l = self.labels[f as usize] as usize;
        self.first_seen[l] = self.first_seen[l].min(self.seen_s[f as usize]);
    }

    fn key(&self, l: u32) -> Key {
        (
            self.coflow_queues.queue(self.sent[l as usize]),
            self.first_seen[l as usize],
            l,
        )
    }

    /// The extended coflow an unbound flow is served with: the highest-priority
    /// labelled coflow among its own and, with late binding, those within d.
    fn extended(&mut self, c: &Common, f: usize) -> u32 {
        let own = self.labels[f];
        if !self.late_binding {
            return own;
        }
        self.cand.clear();
        self.labeller
            .near(c, f as u32, self.distance_s, &self.labels, &mut self.cand);
        let mut best = own;
        let mut best_key = self.key(own);
        for i in 0..self.cand.len() {
            let l = self.cand[i];
            let k = self.key(l);
            if key_cmp(&k, &best_key).is_lt() {
                best = l;
                best_key = k;
            }
        }
        best
    }
}

impl Coda {
    /// True when no flow of the `r`-th extended coflow can get a rate on what is
    /// left: all its first links, or all its last links, are saturated.
    fn blocked(&mut self, c: &Common, r: usize) -> bool {
        let l = self.keyed[r].1 as usize;
        let members = &self.order[self.starts[r]..self.starts[r + 1]];
        let key = (self.version[l], members.len() as u32);
        if self.cuts[l].key != key || self.cuts[l].first.is_empty() {
            let cut = &mut self.cuts[l];
            let flows = members.iter().map(|&i| c.active[i]);
            self.cut_builder
                .build(c, flows, &mut cut.first, &mut cut.last);
            cut.key = key;
        }
        let residual = if self.intra {
            &self.fq.prio.residual
        } else {
            &self.prio.residual
        };
        let cut = &self.cuts[l];
        !members.is_empty() && cut_closed(c, &cut.first, &cut.last, residual)
    }
}

/// The steps of one call, in order.
impl Coda {
    /// Label the newcomers; the labeller may move flows seen before: a moved flow is unbound (CODA
    /// binds a flow when it is first scheduled in its identified coflow) and its bytes go with it.
    fn label_newcomers(&mut self, c: &Common) {
        self.new.clear();
        // Flows become active only by starting: when no flow started since the
        // last scan, every active flow was seen then, and the scan is skipped.
        let started: u64 = c.coflow_started.iter().map(|&n| n as u64).sum();
        if started != self.started_at_scan {
            self.started_at_scan = started;
            for &f in c.active {
                if self.seen_s[f as usize].is_nan() {
                    self.new.push(f);
                }
            }
        }
        let new = std::mem::take(&mut self.new);
        let mut changed = std::mem::take(&mut self.changed);
        changed.clear();
        self.labeller.label(c, &new, &mut self.labels, &mut changed);
        for &f in &new {
            // When the flow started (the driver's first sighting), not this
            // call's time: under decision intervals the call is up to an
            // interval later, and every coflow that arrived in one interval
            // would tie in D-CLAS's FIFO order.
            self.seen_s[f as usize] = c.seen_s(f);
            self.grow(self.labels[f as usize]);
            self.see(f);
        }
        for &f in &changed {
            let (fu, l) = (f as usize, self.labels[f as usize]);
            self.grow(l);
            if self.acc[fu] != UNLABELLED {
                self.recount(fu, l);
            }
            self.bound[fu] = UNLABELLED;
            self.see(f);
        }
        self.new = new;
        self.changed = changed;
    }

    /// The extended coflow of every active flow, and the distinct ones.
    fn extend(&mut self, c: &Common) {
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.stamp.iter_mut().for_each(|s| *s = 0);
            self.epoch = 1;
        }
        self.eff.clear();
        self.distinct.clear();
        for i in 0..c.active.len() {
            let f = c.active[i] as usize;
            let e = if self.bound[f] != UNLABELLED && self.bind_for_good {
                self.bound[f]
            } else {
                self.extended(c, f)
            };
            if self.stamp[e as usize] != self.epoch {
                self.stamp[e as usize] = self.epoch;
                self.distinct.push(e);
            }
            let last = self.last_eff[f];
            if last != e {
                if last != UNLABELLED {
                    self.version[last as usize] = self.version[last as usize].wrapping_add(1);
                }
                self.version[e as usize] = self.version[e as usize].wrapping_add(1);
                self.last_eff[f] = e;
            }
            self.eff.push(e);
        }
    }

    /// Order the extended coflows by (queue, first seen, label), then group the active positions by
    /// rank (a counting sort keeps index order).
    fn rank(&mut self) {
        self.keyed.clear();
        for i in 0..self.distinct.len() {
            let l = self.distinct[i];
            self.keyed.push((self.key(l), l));
        }
        self.keyed.sort_by(|a, b| key_cmp(&a.0, &b.0));
        for (r, &(_, l)) in self.keyed.iter().enumerate() {
            self.rank[l as usize] = r as u32;
        }
        let nk = self.keyed.len();
        self.starts.clear();
        self.starts.resize(nk + 1, 0);
        // Active flows come coflow after coflow, so `eff` is mostly long runs of
        // one extended coflow: counted and placed a run at a time.
        for (at, len) in runs(&self.eff) {
            self.starts[self.rank[self.eff[at] as usize] as usize + 1] += len;
        }
        for r in 0..nk {
            self.starts[r + 1] += self.starts[r];
        }
        self.next.clear();
        self.next.extend_from_slice(&self.starts[..nk]);
        self.order.clear();
        self.order.resize(self.eff.len(), 0);
        for (at, len) in runs(&self.eff) {
            let r = self.rank[self.eff[at] as usize] as usize;
            let to = self.next[r];
            for (k, o) in self.order[to..to + len].iter_mut().enumerate() {
                *o = at + k;
            }
            self.next[r] += len;
        }
    }

    /// Serve: extended coflows in order; inside, flow queues (or max-min).
    fn serve(&mut self, c: &Common, out: &mut Decision) {
        if self.intra {
            self.fq.prio.begin(c, out);
        } else {
            self.prio.begin(c, out);
        }
        let nk = self.keyed.len();
        let caps = &c.fabric.capacities;
        for r in 0..nk {
            if self.blocked(c, r) {
                continue;
            }
            // Only the flows whose last link is still open: the others cross a
            // full link and get 0 in any case (as CoflowPriority's solves). A
            // flow with no link at all is served as before.
            let residual = if self.intra {
                &self.fq.prio.residual
            } else {
                &self.prio.residual
            };
            self.open.clear();
            for &i in &self.order[self.starts[r]..self.starts[r + 1]] {
                let path = c.fabric.path(c.flow_path[c.active[i] as usize]);
                if path
                    .last()
                    .is_none_or(|&l| avail(residual, caps, l as usize) > 0.0)
                {
                    self.open.push(i);
                }
            }
            if self.open.is_empty() {
                continue;
            }
            if self.intra {
                let l = self.keyed[r].1;
                self.fq.serve_group(c, self.open.iter().copied(), l, out);
            } else {
                self.prio.serve(c, self.open.iter().copied(), out);
            }
        }
    }

    /// Bind the flows that got a rate, remember them as moving, and sum the rates per extended
    /// coflow (the sparse decision lists every position with a positive rate, once).
    fn bind(&mut self, c: &Common, out: &Decision) {
        self.moving.clear();
        for t in 0..out.touched.len() {
            let i = out.touched[t] as usize;
            let f = c.active[i] as usize;
            let e = self.eff[i];
            if self.bound[f] == UNLABELLED || (!self.bind_for_good && self.bound[f] != e) {
                self.bound[f] = e;
                if self.acc[f] == UNLABELLED {
                    self.counted[f] = c.sent(f as u32);
                    self.sent[e as usize] += c.sent(f as u32);
                    self.acc[f] = e;
                } else {
                    self.recount(f, e);
                }
            }
            self.moving.push(f as u32);
            self.rate_of[e as usize] += out.rates[i];
        }
    }

    /// Wake-ups: each moving extended coflow when it reaches its queue's threshold; with intra, the
    /// first flow to reach its flow threshold.
    fn wakeups(&mut self, c: &Common, out: &mut Decision) {
        for &(key, l) in &self.keyed {
            let rate = std::mem::take(&mut self.rate_of[l as usize]);
            if rate > 0.0 {
                if let Some(t) = self.coflow_queues.upper(key.0) {
                    let s = self.sent[l as usize];
                    out.wakeups
                        .push(Wakeup::At(c.now_s + (t - s).max(0.0) / rate));
                }
            }
        }
        if self.intra {
            let touched = std::mem::take(&mut out.touched);
            self.fq.wakeup(c, touched.iter().map(|&i| i as usize), out);
            out.touched = touched;
        }
        if let Some(t) = self.labeller.wakeup() {
            if t > c.now_s {
                out.wakeups.push(Wakeup::At(t));
            }
        }
    }
}

/// The maximal runs of equal values of `v`, as `(start, length)`, in order.
fn runs(v: &[u32]) -> impl Iterator<Item = (usize, usize)> + '_ {
    let mut at = 0;
    std::iter::from_fn(move || {
        let first = *v.get(at)?;
        let len = v[at..].iter().take_while(|&&x| x == first).count();
        at += len;
        Some((at - len, len))
    })
}

impl NonClairvoyantPolicy for Coda {
    /// Not yet: the labeller's clusters and the per-label state are kept by
    /// flow index, and a fresh identifier would re-cluster from nothing.
    fn compactable(&self) -> bool {
        false
    }

    fn flow_labels(&self) -> Option<Vec<u32>> {
        Some(self.labels.clone())
    }

    fn flow_bindings(&self) -> Option<Vec<u32>> {
        Some(self.bound.clone())
    }

    fn flow_label(&self, f: u32) -> Option<u32> {
        Some(self.labels.get(f as usize).copied().unwrap_or(UNLABELLED))
    }

    fn decide(&mut self, v: &NonClairvoyantView, out: &mut Decision) {
        let c: &Common = v;
        self.size_for(c);
        self.count_bytes(c);
        self.label_newcomers(c);
        self.extend(c);
        self.rank();
        self.serve(c, out);
        self.bind(c, out);
        self.wakeups(c, out);
    }
}

pub const PARAMS: &[ParamSpec] = &[
    ParamSpec { name: "labels", default: "truth", help: "where coflows come from: identify (CODA's online identification), truth, pioneers, stragglers, random, move (flows moved), merge, split (whole coflows wrong), alone, one (no identification)" },
    ParamSpec { name: "error_rate", default: "0.05", help: "injected errors: probability that a flow (pioneers, stragglers, random, move) or a coflow (merge, split) is hit" },
    ParamSpec { name: "seed", default: "1", help: "seed of the injected errors" },
    ParamSpec { name: "late_binding", default: "true", help: "extend each labelled coflow with the flows within distance_s (CODA §4.2)" },
    ParamSpec { name: "binding", default: "first", help: "late binding's binding: first (a flow stays with the extended coflow it was first served with, Algorithm 2 line 20) or round (each call serves every flow with the highest-priority extended coflow that holds it)" },
    ParamSpec { name: "distance_s", default: "0.1", help: "late-binding diameter d, in the identifier's distance (labels=identify; the injected-error sources put a mislabelled flow at distance 0 of its coflow)" },
    ParamSpec { name: "intra", default: "true", help: "intra-coflow prioritisation: per-flow queues inside each coflow" },
    ParamSpec { name: "weights", default: "spark", help: "labels=identify: weights of S_time, D_com, D_prt: spark or hadoop (CODA's As, Ah), equal, or three numbers a_t,a_com,a_prt" },
    ParamSpec { name: "eps", default: "0.5", help: "labels=identify: DBSCAN radius ε over leaders" },
    ParamSpec { name: "tau", default: "0.05", help: "labels=identify: leader range τ of Rough-DBSCAN" },
    ParamSpec { name: "interval_s", default: "0.1", help: "labels=identify: identification interval Δ, seconds" },
    ParamSpec { name: "min_bytes", default: "0", help: "labels=identify: flows are identified once they have sent this many bytes (CODA: 100000; see docs/identification.md)" },
    ParamSpec { name: "max_conductance", default: "0.1", help: "labels=identify: host communities are split while a cut has conductance below this" },
    aalo::PARAMS[0], aalo::PARAMS[1], aalo::PARAMS[2],
    FLOW_QUEUES[0], FLOW_QUEUES[1], FLOW_QUEUES[2],
];

fn coda_err(e: impl std::fmt::Display) -> ModelError {
    ModelError::param(
        "param",
        format!("coda: {}", e.to_string().trim_start_matches("param: ")),
    )
}

/// The `identify` labelling source's configuration from `coda`'s parameters.
fn identify_config(p: &Params) -> Result<IdentifyConfig, ModelError> {
    let w = match p.text("weights") {
        "spark" => CODA_SPARK.to_vec(),
        "hadoop" => CODA_HADOOP.to_vec(),
        "equal" => vec![1.0; 3],
        _ => {
            let w = p.f64_list("weights", 0.0, 1e12)?;
            if w.len() != 3 {
                return Err(coda_err(format!(
                    "weights={} is not spark, hadoop, equal or three numbers a_t,a_com,a_prt",
                    p.text("weights")
                )));
            }
            w
        }
    };
    Ok(IdentifyConfig {
        metric: Metric::new(w[0], vec![], w[1], w[2]).map_err(coda_err)?,
        eps: p.f64_in("eps", 1e-12, 1e12)?,
        tau: p.f64_in("tau", 0.0, 1e12)?,
        interval_s: p.f64_in("interval_s", 1e-9, 1e9)?,
        min_bytes: p.f64_in("min_bytes", 0.0, 1e18)?,
        max_conductance: p.f64_in("max_conductance", 0.0, 1.0)?,
    })
}

fn build(p: &Params) -> Result<AnyPolicy, ModelError> {
    let name = p.text("labels");
    if name != "identify" && !LabelSource::NAMES.contains(&name) {
        return Err(coda_err(format!(
            "labels={name} is not one of identify, {}",
            LabelSource::NAMES.join(", ")
        )));
    }
    let labeller: Box<dyn Labeller> = if name == "identify" {
        Box::new(Identify::new(identify_config(p)?).map_err(coda_err)?)
    } else {
        Box::new(
            LabelSource::parse(
                p.text("labels"),
                p.f64_in("error_rate", 0.0, 1.0)?,
                p.usize_in("seed", 0, u32::MAX as usize)? as u64,
            )
            .map_err(coda_err)?,
        )
    };
    non_clairvoyant(Coda::new(CodaConfig {
        late_binding: p.bool("late_binding")?,
        distance_s: p.f64_in("distance_s", 0.0, 1e9)?,
        bind_for_good: match p.text("binding") {
            "first" => true,
            "round" => false,
            other => {
                return Err(coda_err(format!(
                    "binding={other} is not first or round"
                )))
            }
        },
        intra: p.bool("intra")?,
        coflow_queues: Thresholds::new(
            p.usize_in("queues", 1, 64)?,
            p.f64_in("first_threshold_bytes", 1.0, 1e18)?,
            p.f64_in("multiplier", 1.0 + 1e-9, 1e6)?,
        ),
        flow_queues: flow_thresholds(p)?,
        labeller,
    }))
}

pub const SPEC: PolicySpec = PolicySpec {
    name: "coda",
    info: Info::NonClairvoyant,
    knows: "dark: labelled coflows",
    summary: "D-CLAS over labelled coflows, late binding, per-flow queues inside (CODA)",
    rule: "D-CLAS over labelled coflows extended by late binding; per-flow queues inside each",
    paper: "CODA: Algorithm 2 of ../shared/papers/000_b0cc221885eae45d.txt",
    params: PARAMS,
    needs: &[],
    build,
    example_ccts: [0.0625, 0.078125, 0.07775],
};

#[cfg(test)]
#[path = "coda_tests.rs"]
mod tests;
