//! `stream`: decentralized, receiver-driven conditional shortest-job-first over
//! strict-priority switch queues (Stream, equations (2)-(5) and Algorithm 1). See
//! docs/policies/stream.md.
//!
//! The unit of knowledge is a *receiver unit* u = (coflow, stage, receiver host):
//! the flows of one (sub-)coflow that one receiver sees. A receiver knows only
//! what reaches it:
//!
//! ```text
//! X_u      bytes received by u (finished flows included), in units of `unit_mb`
//! n_u      flows of u seen so far;  n_u^fin  of them finished
//! m_u      the internal id of u's sub-coflow (Algorithm 1, from the stage DAG the
//!          flow dependencies define; 1 for single-stage coflows)
//! S_u      relayed bytes: Σ X_v over the units v of the same coflow that share a
//!          sender with u (Information-Relay), plus, for a parent stage, the bytes
//!          of its finished child stages (Child-to-Parent); a child unit counted
//!          by Child-to-Parent is not relayed to that parent as well
//! τ_q      = τ_0 · E^q, the threshold of u's current class q (0 highest)
//! H_u      = τ_q · (n_u^fin / n_u + n_u / (β·S_u + X_u))                      (3)
//! W_u      = α · ln(m_u + 1) if m_u > 1, else 1                              (WP)
//! P_u      = K − ⌈K · min(1, (τ_q + α·H_u) / (W_u · (β·S_u + X_u)))⌉        (5)
//!            (0 while β·S_u + X_u = 0); never decreases: P_u = max(P_u, P'_u)
//! class(f) = P_u − boost_u for every flow f of u (strict priority, max-min inside)
//! ```
//!
//! Information travels with a delay: a class computed at t reaches the senders at
//! t + `delay_s` (the ACK that carries it), and relayed or child bytes enter S only
//! through such a computation. Starvation mitigation: a unit none of whose flows
//! has moved for `starvation_s` is raised one class (boost + 1, reset when it is
//! next demoted). The crossing of the next class boundary is an exact event: the
//! policy solves (5), in the class u is in once this call's change is applied,
//! for the X at which P_u grows and asks for a group wake-up (S held at its
//! value of the call: relayed bytes that grow between events are seen late).

use crate::decision::{Decision, Wakeup};
use crate::params::{ParamSpec, Params};
use crate::policy::{NonClairvoyantPolicy, Remap};
use crate::policy::{AnyPolicy, Info};
use crate::spec::{non_clairvoyant, PolicySpec, MIB};
use crate::view::Input;
use crate::view::NonClairvoyantView;
use coflowkit_model::ModelError;
use coflowkit_model::TIME_EPS;
use std::collections::HashMap;

/// Stream's parameters (docs/policies/stream.md).
#[derive(Debug, Clone)]
pub struct StreamConfig {
    pub queues: u32,
    /// τ_0, in units.
    pub first_threshold: f64,
    pub multiplier: f64,
    pub alpha: f64,
    pub beta: f64,
    /// Bytes per unit of the formula (X, S, τ).
    pub unit_bytes: f64,
    pub delay_s: f64,
    /// 0: off.
    pub starvation_s: f64,
    pub weighted: bool,
    pub relay: bool,
    pub child_to_parent: bool,
    /// A late evaluation settles class by class (each boundary crossed in its
    /// own class's τ) instead of one eq. (5) in the current class's τ.
    pub settle: bool,
    /// 0: off. Else a unit with relayed bytes is evaluated again this often
    /// (its S grows between events; a runtime's rounds see it).
    pub reeval_s: f64,
}

impl Default for StreamConfig {
    fn default() -> Self {
        StreamConfig {
            queues: 8,
            first_threshold: 10.0,
            multiplier: 10.0,
            alpha: 1.0,
            beta: 1.0,
            unit_bytes: 1_048_576.0,
            delay_s: 1e-4,
            starvation_s: 0.0,
            weighted: true,
            relay: true,
            child_to_parent: true,
            settle: false,
            reeval_s: 0.0,
        }
    }
}

struct Unit {
    coflow: u32,
    stage: u32,
    /// Internal id (Algorithm 1).
    m: u32,
    /// X at the last call (for starvation).
    x_seen: f64,
    known: u32,
    finished: u32,
    active: u32,
    /// Class from (5), applied.
    base: u8,
    /// The class (5) gave the unit at its first evaluation (`u8::MAX` before
    /// it), reported by [`NonClairvoyantPolicy::flow_columns`].
    first: u8,
    boost: u8,
    pending: Option<(u8, f64)>,
    last_progress: f64,
    /// Child-to-Parent bytes (units), fixed when the unit appears.
    child: f64,
    /// The child units those bytes came from (ascending); they are not relayed
    /// to this unit as well (audit D3).
    counted: Vec<u32>,
    /// Sender hosts, sorted.
    senders: Vec<u32>,
    /// The class its flows were last given in a class delta decision
    /// (`u8::MAX`: none yet).
    told: u8,
}

pub struct Stream {
    cfg: StreamConfig,
    unit_of: HashMap<(u32, u32, u32), u32>,
    units: Vec<Unit>,
    /// Per unit, X: bytes received (units), apart from `units` (the per-call
    /// pass over the active flows adds to it).
    ux: Vec<f64>,
    flow_unit: Vec<u32>,
    last_sent: Vec<f64>,
    prev_active: Vec<u32>,
    /// Per flow, the call whose `finished` list last named it (delta drivers).
    gone: Vec<u64>,
    /// Scratch: the flows that started since the last call and are active.
    fresh: Vec<u32>,
    /// Units of each coflow (coflow index → unit ids), in creation order.
    coflow_units: HashMap<u32, Vec<u32>>,
    /// Per unit, the other units of its coflow that share a sender with it (the
    /// units whose bytes it relays), computed when first needed.
    peers: HashMap<u32, Vec<u32>>,
    /// Coflows whose units changed senders since their peers were computed.
    stale: Vec<u32>,
    /// Scratch: active units in order of first appearance, and each one's group.
    order: Vec<u32>,
    group: Vec<u32>,
    /// Per unit: (the call that last gave it a group, that group).
    slot: Vec<(u64, u32)>,
    calls: u64,
    /// Per coflow: *dormant* (every unit with active flows was in the last
    /// class with nothing pending at the end of the last call, under a delta
    /// driver and without starvation). Such a unit's class can no longer
    /// change, and no unit reads its X while the coflow stays dormant, so the
    /// bytes its active flows receive are not added call by call: they are
    /// added when a flow finishes, or all at once when the coflow wakes (a new
    /// unit, or a flow of a unit not in the last class, arrives).
    dormant: Vec<bool>,
    /// Scratch: per coflow, the call that last set `dormant`.
    dormant_at: Vec<u64>,
    /// Scratch (delta form): per unit in `order`, its coflow's range of the
    /// active flows.
    ranges: Vec<(u32, u32)>,
}

impl Stream {
    pub fn new(cfg: StreamConfig) -> Self {
        Stream {
            cfg,
            unit_of: HashMap::new(),
            units: Vec::new(),
            ux: Vec::new(),
            flow_unit: Vec::new(),
            last_sent: Vec::new(),
            prev_active: Vec::new(),
            gone: Vec::new(),
            fresh: Vec::new(),
            coflow_units: HashMap::new(),
            peers: HashMap::new(),
            stale: Vec::new(),
            order: Vec::new(),
            group: Vec::new(),
            slot: Vec::new(),
            calls: 0,
            dormant: Vec::new(),
            dormant_at: Vec::new(),
            ranges: Vec::new(),
        }
    }

    pub fn config(&self) -> &StreamConfig {
        &self.cfg
    }

    fn tau(&self, q: u8) -> f64 {
        self.cfg.first_threshold * self.cfg.multiplier.powi(q as i32)
    }

    fn weight(&self, m: u32) -> f64 {
        if self.cfg.weighted && m > 1 {
            self.cfg.alpha * ((m + 1) as f64).ln()
        } else {
            1.0
        }
    }

    /// Equation (5): the class of a unit with these inputs, in class `q`'s τ.
    /// H's n/ΣX term uses the same total β·S + X as the ratio (with X = 0 and
    /// S > 0, the paper's n/X is undefined).
    pub fn class(&self, q: u8, x: f64, s: f64, known: u32, finished: u32, m: u32) -> u8 {
        let k = self.cfg.queues as f64;
        let total = self.cfg.beta * s + x;
        if total <= 0.0 {
            return 0;
        }
        let tau = self.tau(q);
        let n = known.max(1) as f64;
        let h = tau * (finished as f64 / n + n / total);
        let ratio = ((tau + self.cfg.alpha * h) / (self.weight(m) * total)).min(1.0);
        let p = k - (k * ratio).ceil();
        p.clamp(0.0, k - 1.0) as u8
    }

    /// The class a unit in class `q` settles in when (5) is evaluated in each
    /// class's τ in turn, as crossing the boundaries one at a time does: the
    /// first `q' ≥ q` where (5) in τ_q' gives no class above `q'`. What the
    /// decentralized agents compute at each round.
    pub fn settle(&self, q: u8, x: f64, s: f64, known: u32, finished: u32, m: u32) -> u8 {
        let last = self.cfg.queues.saturating_sub(1) as u8;
        let mut q = q.min(last);
        while q < last && self.class(q, x, s, known, finished, m) > q {
            q += 1;
        }
        q
    }

    /// The X (units) at which (5) first gives a class above `q`, for fixed S, n,
    /// n^fin and stage; `None` when `q` is the last class.
    ///
    /// With T = β·S + X, P > q ⇔ ratio ≤ c, c = (K − q − 1)/K; with
    /// a = τ(1 + α·n^fin/n), b = α·τ·n and w = W: a + b/T ≤ c·w·T ⇔
    /// c·w·T² − a·T − b ≥ 0 ⇔ T ≥ (a + √(a² + 4·c·w·b)) / (2·c·w).
    pub fn crossing(&self, q: u8, s: f64, known: u32, finished: u32, m: u32) -> Option<f64> {
        let k = self.cfg.queues as f64;
        let c = (k - q as f64 - 1.0) / k;
        if c <= 0.0 {
            return None;
        }
        let tau = self.tau(q);
        let n = known.max(1) as f64;
        let a = tau * (1.0 + self.cfg.alpha * finished as f64 / n);
        let b = self.cfg.alpha * tau * n;
        let cw = c * self.weight(m);
        let t = (a + (a * a + 4.0 * cw * b).sqrt()) / (2.0 * cw);
        Some(t - self.cfg.beta * s)
    }

    fn unit_for(&mut self, v: &NonClairvoyantView, f: usize) -> u32 {
        let key = (v.flow_coflow[f], v.flow_stage[f], v.flow_dst[f]);
        if let Some(&u) = self.unit_of.get(&key) {
            return u;
        }
        let id = self.units.len() as u32;
        // Child-to-Parent: the finished child stages' bytes, as their receivers
        // report them when they complete (the parent starts only then).
        let (mut child, mut counted) = (0.0, Vec::new());
        if self.cfg.child_to_parent && key.1 != 0 {
            let (c, p) = (key.0, key.1);
            let lo = v.stage_parents.partition_point(|e| e.0 < c);
            for e in v.stage_parents[lo..].iter().take_while(|e| e.0 == c) {
                if e.2 != p {
                    continue;
                }
                if let Some(us) = self.coflow_units.get(&c) {
                    for &w in us {
                        if self.units[w as usize].stage == e.1 {
                            child += self.ux[w as usize];
                            counted.push(w);
                        }
                    }
                }
            }
        }
        counted.sort_unstable();
        let m = if key.1 == 0 {
            1
        } else {
            let lo = v.stage_parents.partition_point(|e| e.0 < key.0);
            let hi = lo + v.stage_parents[lo..].partition_point(|e| e.0 == key.0);
            internal_id(&v.stage_parents[lo..hi], key.1, &mut Vec::new())
        };
        self.ux.push(0.0);
        self.units.push(Unit {
            coflow: key.0,
            stage: key.1,
            m,
            x_seen: 0.0,
            known: 0,
            finished: 0,
            active: 0,
            base: 0,
            first: u8::MAX,
            boost: 0,
            pending: None,
            last_progress: v.now_s,
            child,
            counted,
            senders: Vec::new(),
            told: u8::MAX,
        });
        self.unit_of.insert(key, id);
        self.coflow_units.entry(key.0).or_default().push(id);
        id
    }

    /// Relayed bytes of `u`: Σ X over the units of its coflow that share a sender,
    /// less those whose bytes `u` already has through Child-to-Parent (audit D3).
    fn relayed(&mut self, u: u32) -> f64 {
        let c = self.units[u as usize].coflow;
        let us = &self.coflow_units[&c];
        if us.len() == 1 {
            return 0.0;
        }
        if !self.peers.contains_key(&u) {
            let me = &self.units[u as usize];
            let list: Vec<u32> = us
                .iter()
                .copied()
                .filter(|&w| w != u && shares(&me.senders, &self.units[w as usize].senders))
                .filter(|w| me.counted.binary_search(w).is_err())
                .collect();
            self.peers.insert(u, list);
        }
        self.peers[&u]
            .iter()
            .map(|&w| self.ux[w as usize])
            .sum()
    }
}

/// Algorithm 1 of Stream: the internal id of sub-coflow `stage` in a coflow whose
/// stage DAG is `dag` (`(coflow, child, parent)` entries of that coflow). A stage
/// with no parent (the final stage, invoked by the job's master) gets 1; every
/// parent proposes its own id + 1 to its children; a child whose parents all
/// propose D gets D + |parents| − 1, otherwise the largest proposal. `path`
/// guards against cycles (a cycle's stage is treated as a root).
pub fn internal_id(dag: &[(u32, u32, u32)], stage: u32, path: &mut Vec<u32>) -> u32 {
    if path.contains(&stage) {
        return 1;
    }
    path.push(stage);
    let mut props = Vec::new();
    for e in dag.iter().filter(|e| e.1 == stage) {
        props.push(internal_id(dag, e.2, path) + 1);
    }
    path.pop();
    match (props.iter().min(), props.iter().max()) {
        (None, _) | (_, None) => 1,
        (Some(&lo), Some(&hi)) if lo == hi => hi + props.len() as u32 - 1,
        (_, Some(&hi)) => hi,
    }
}

/// Whether two sorted lists have an element in common.
fn shares(a: &[u32], b: &[u32]) -> bool {
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => return true,
        }
    }
    false
}

impl Stream {
    fn is_dormant(&self, c: u32) -> bool {
        self.dormant.get(c as usize).copied().unwrap_or(false)
    }

    /// Unit `u` is in the last class with nothing pending (starvation off):
    /// eq. (5) can only keep it there.
    fn is_final(&self, u: u32, last: u8) -> bool {
        let un = &self.units[u as usize];
        un.base >= last && un.pending.is_none() && un.boost == 0
    }

    /// Coflow `c` wakes: the bytes its flows received while it was dormant
    /// are added to their units' X (flows not seen yet have no unit).
    fn wake(&mut self, v: &NonClairvoyantView, c: u32) {
        let unit = self.cfg.unit_bytes;
        let first = v.coflow_first_flow[c as usize];
        for f in first..first + v.coflow_width[c as usize] {
            let fu = f as usize;
            let u = self.flow_unit[fu];
            if u == u32::MAX {
                continue;
            }
            let sent = v.sent(f);
            let d = sent - self.last_sent[fu];
            if d > 0.0 {
                self.ux[u as usize] += d / unit;
                self.last_sent[fu] = sent;
            }
        }
        self.dormant[c as usize] = false;
    }

    /// After the units are classified: a coflow is dormant when every unit
    /// with active flows is final (a delta driver, no starvation).
    fn mark_dormant(&mut self, v: &NonClairvoyantView, delta: bool) {
        if !delta || self.cfg.starvation_s > 0.0 {
            return;
        }
        let nc = v.coflow_width.len();
        if self.dormant.len() < nc {
            self.dormant.resize(nc, false);
            self.dormant_at.resize(nc, u64::MAX);
        }
        let last = (self.cfg.queues - 1) as u8;
        for gi in 0..self.order.len() {
            let u = self.order[gi];
            let c = self.units[u as usize].coflow as usize;
            let fin = self.is_final(u, last);
            if self.dormant_at[c] != self.calls {
                self.dormant_at[c] = self.calls;
                self.dormant[c] = fin;
            } else {
                self.dormant[c] &= fin;
            }
        }
    }

    /// The decision for a driver that takes delta decisions, as a class delta
    /// decision: the same steps as the full form over the flows of the coflows
    /// that are not dormant (and the flows that finished), classes named for
    /// the flows that started and the units whose class changed, and group
    /// wake-ups naming their flows. Costs what is not dormant.
    fn decide_delta(&mut self, v: &NonClairvoyantView, out: &mut Decision) {
        let unit = self.cfg.unit_bytes;
        let stamp = self.calls + 1;
        // Step 1: finished flows (all their bytes) and the active flows of
        // coflows that are not dormant (their bytes since the last call).
        for &f in v.finished {
            let fu = f as usize;
            self.gone[fu] = stamp;
            let u = self.flow_unit[fu];
            if u == u32::MAX {
                continue; // started and finished between two calls: unseen
            }
            let sent = v.sent(f);
            let d = sent - self.last_sent[fu];
            if d > 0.0 {
                self.ux[u as usize] += d / unit;
                self.last_sent[fu] = sent;
            }
            let un = &mut self.units[u as usize];
            un.finished += 1;
            un.active -= 1;
        }
        for g in v.groups {
            if self.is_dormant(g.coflow) {
                continue;
            }
            for &f in &v.active[g.start as usize..g.end as usize] {
                let fu = f as usize;
                let u = self.flow_unit[fu];
                if u == u32::MAX {
                    continue; // new: admitted below
                }
                let sent = v.sent(f);
                let d = sent - self.last_sent[fu];
                if d > 0.0 {
                    self.ux[u as usize] += d / unit;
                    self.last_sent[fu] = sent;
                }
            }
        }
        // Step 2: newcomers (a coflow woken here had its bytes added).
        self.admit(v, true);
        // Step 3: the units of the coflows not dormant, in order of first
        // appearance among the active flows, with their coflow's range.
        self.order.clear();
        self.calls += 1;
        self.slot.resize(self.units.len(), (0, 0));
        let mut ranges = std::mem::take(&mut self.ranges);
        ranges.clear();
        for g in v.groups {
            if self.is_dormant(g.coflow) {
                continue;
            }
            for &f in &v.active[g.start as usize..g.end as usize] {
                let u = self.flow_unit[f as usize];
                let slot = &mut self.slot[u as usize];
                if slot.0 != self.calls {
                    *slot = (self.calls, self.order.len() as u32);
                    self.order.push(u);
                    ranges.push((g.start, g.end));
                }
            }
        }
        // Step 4: classes; the flows of a unit whose class changed, and of a
        // unit a group wake-up names, are listed.
        out.class_delta = true;
        for (gi, &(a, b)) in ranges.iter().enumerate() {
            let woken = out.wakeups.len();
            let c = self.classify(gi, v.now_s, out);
            let u = self.order[gi];
            let asks = out.wakeups[woken..]
                .iter()
                .any(|w| matches!(w, Wakeup::GroupSent { .. }));
            let changed = self.units[u as usize].told != c;
            self.units[u as usize].told = c;
            if changed || asks {
                for &f in &v.active[a as usize..b as usize] {
                    if self.flow_unit[f as usize] == u {
                        if changed {
                            out.class_moves.push((f, c));
                        }
                        if asks {
                            out.wake_flows.push((gi as u32, f));
                        }
                    }
                }
            }
        }
        // Every newcomer is named (a unit of a dormant coflow keeps the class
        // it was told).
        for &f in &self.fresh {
            let u = self.flow_unit[f as usize] as usize;
            let un = &self.units[u];
            let c = if un.told == u8::MAX {
                un.base.min((self.cfg.queues - 1) as u8) - un.boost
            } else {
                un.told
            };
            out.class_moves.push((f, c));
        }
        self.ranges = ranges;
        self.mark_dormant(v, true);
    }

    /// Step 1: the bytes each unit received since the last call, and the flows
    /// that finished (in `prev`, not in `active`; both ascending). A driver
    /// that lists the flows that finished (`delta`) spares the merge of the
    /// two lists: a flow of `prev` is gone exactly when it finished since.
    fn receive(&mut self, v: &NonClairvoyantView, prev: &[u32], delta: bool) {
        let unit = self.cfg.unit_bytes;
        let stamp = self.calls + 1;
        if delta {
            for &f in v.finished {
                self.gone[f as usize] = stamp;
            }
        }
        let mut j = 0;
        for &f in prev {
            let fu = f as usize;
            let u = self.flow_unit[fu] as usize;
            let finished = if delta {
                self.gone[fu] == stamp
            } else {
                while j < v.active.len() && v.active[j] < f {
                    j += 1;
                }
                j >= v.active.len() || v.active[j] != f
            };
            if !finished && self.is_dormant(v.flow_coflow[fu]) {
                continue; // its bytes wait (see `dormant`)
            }
            let sent = v.sent(f);
            let d = sent - self.last_sent[fu];
            if d > 0.0 {
                self.ux[u] += d / unit;
                self.last_sent[fu] = sent;
            }
            if finished {
                self.units[u].finished += 1;
                self.units[u].active -= 1;
            }
        }
    }

    /// Step 2: newcomers join (or open) their unit; a unit that gains a sender
    /// makes its coflow's relay peers stale. Newcomers are the active flows
    /// not seen before, in index order; a `delta` driver lists them among the
    /// flows that started (less those that finished since, which `receive`
    /// marked), so the active flows need not be scanned.
    fn admit(&mut self, v: &NonClairvoyantView, delta: bool) {
        let mut fresh = std::mem::take(&mut self.fresh);
        fresh.clear();
        if delta {
            let stamp = self.calls + 1;
            fresh.extend(v.started.iter().copied().filter(|&f| {
                self.gone[f as usize] != stamp && self.flow_unit[f as usize] == u32::MAX
            }));
            fresh.sort_unstable();
        } else {
            fresh.extend(
                v.active
                    .iter()
                    .copied()
                    .filter(|&f| self.flow_unit[f as usize] == u32::MAX),
            );
        }
        let unit = self.cfg.unit_bytes;
        for &f in &fresh {
            let fu = f as usize;
            let c = v.flow_coflow[fu];
            if self.is_dormant(c) {
                let key = (c, v.flow_stage[fu], v.flow_dst[fu]);
                let last = (self.cfg.queues - 1) as u8;
                let stays = self
                    .unit_of
                    .get(&key)
                    .is_some_and(|&u| self.is_final(u, last));
                if !stays {
                    self.wake(v, c);
                }
            }
            let u = self.unit_for(v, fu);
            self.flow_unit[fu] = u;
            self.last_sent[fu] = v.sent(fu as u32);
            self.ux[u as usize] += v.sent(fu as u32) / unit;
            let un = &mut self.units[u as usize];
            un.known += 1;
            un.active += 1;
            let s = v.flow_src[fu];
            if let Err(at) = un.senders.binary_search(&s) {
                un.senders.insert(at, s);
                self.stale.push(un.coflow);
            }
        }
        self.fresh = fresh;
        if !self.stale.is_empty() {
            self.stale.sort_unstable();
            self.stale.dedup();
            for c in std::mem::take(&mut self.stale) {
                for &w in &self.coflow_units[&c] {
                    self.peers.remove(&w);
                }
            }
        }
    }

    /// Step 3: the active units in order of first appearance among the active
    /// flows (`order`), and each active flow's position in it (`group`).
    fn group_units(&mut self, v: &NonClairvoyantView) {
        self.order.clear();
        self.group.clear();
        self.calls += 1;
        self.slot.resize(self.units.len(), (0, 0));
        for &f in v.active {
            let u = self.flow_unit[f as usize];
            let slot = &mut self.slot[u as usize];
            if slot.0 != self.calls {
                *slot = (self.calls, self.order.len() as u32);
                self.order.push(u);
            }
            self.group.push(slot.1);
        }
    }

    /// Step 4, for the `gi`-th active unit: its class from eq. (5) (a promotion
    /// takes effect `delay_s` later; starvation boosts it), and the wake-up at its
    /// next class boundary, its pending change or its starvation deadline.
    fn classify(&mut self, gi: usize, now: f64, out: &mut Decision) -> u8 {
        let unit = self.cfg.unit_bytes;
        let k_last = (self.cfg.queues - 1) as u8;
        let u = self.order[gi];
        if self.is_dormant(self.units[u as usize].coflow) {
            // In the last class with nothing pending: what the evaluation
            // below gives it, with no wake-up (no starvation when dormant).
            let un = &self.units[u as usize];
            return un.base.min(k_last) - un.boost;
        }
        let s_relay = if self.cfg.relay { self.relayed(u) } else { 0.0 };
        let un = &self.units[u as usize];
        let s = s_relay + un.child;
        let ux = self.ux[u as usize];
        // Evaluate at X plus the engine's byte tolerance, so a wake-up at the
        // crossing sees the crossing.
        let x = ux + (1e-9 * ux).max(1e-6 / unit);
        let (base, known, fin, stage) = (un.base, un.known, un.finished, un.m);
        let p = if self.cfg.settle {
            self.settle(base, x, s, known, fin, stage)
        } else {
            self.class(base, x, s, known, fin, stage).max(base)
        };
        let starve = self.cfg.starvation_s;
        let un = &mut self.units[u as usize];
        if un.first == u8::MAX {
            un.first = p;
        }
        if ux > un.x_seen {
            un.last_progress = now;
            un.x_seen = ux;
        }
        if p > un.base {
            match un.pending {
                Some((c, _)) if c >= p => {}
                _ => un.pending = Some((p, now + self.cfg.delay_s)),
            }
        }
        if let Some((c, at)) = un.pending {
            if now + TIME_EPS >= at {
                un.base = c;
                un.boost = 0;
                un.pending = None;
            }
        }
        if starve > 0.0 && now - un.last_progress + TIME_EPS >= starve && un.boost < un.base {
            un.boost += 1;
            un.last_progress = now;
        }
        // The next boundary, from the class the unit is in once the change due
        // now has been applied (before it, the unit is past it: audit D1).
        let after = un.base;
        let crossing = self.crossing(after, s, known, fin, stage);
        let un = &self.units[u as usize];
        match un.pending {
            Some((_, at)) => out.wakeups.push(Wakeup::At(at)),
            None => {
                if let Some(xc) = crossing {
                    let more = (xc - ux) * unit;
                    if more > 0.0 {
                        out.wakeups.push(Wakeup::GroupSent {
                            group: gi as u32,
                            bytes: more * (1.0 + 1e-12),
                        });
                    }
                }
            }
        }
        if starve > 0.0 && un.boost < un.base {
            out.wakeups.push(Wakeup::At(un.last_progress + starve));
        }
        // Relayed bytes grow between events, unseen by the crossing above (S
        // held): look again after `reeval_s`, as a runtime's next round would.
        if self.cfg.reeval_s > 0.0 && s_relay > 0.0 && un.base < k_last {
            out.wakeups.push(Wakeup::At(now + self.cfg.reeval_s));
        }
        un.base.min(k_last) - un.boost
    }
}

impl NonClairvoyantPolicy for Stream {
    /// Per flow, its receiver unit's class at first evaluation and at the end,
    /// its Child-to-Parent bytes (MiB) and internal id (NaN: a flow never seen).
    fn flow_columns(&self) -> Vec<(&'static str, Vec<f64>)> {
        let col = |get: &dyn Fn(&Unit) -> f64| -> Vec<f64> {
            self.flow_unit
                .iter()
                .map(|&u| match self.units.get(u as usize) {
                    Some(un) => get(un),
                    None => f64::NAN,
                })
                .collect()
        };
        let unit = self.cfg.unit_bytes / MIB;
        vec![
            ("stream_first_class", col(&|un| un.first as f64)),
            ("stream_last_class", col(&|un| un.base as f64)),
            ("stream_child_mib", col(&|un| un.child * unit)),
            ("stream_internal_id", col(&|un| un.m as f64)),
        ]
    }

    /// Units of dropped coflows go (a unit's relay peers and finished child
    /// stages are of its own coflow); the others are renumbered in order.
    fn remap(&mut self, m: &Remap) -> bool {
        let mut unit_map = vec![Remap::DROPPED; self.units.len()];
        let mut kept = 0u32;
        for (u, un) in self.units.iter_mut().enumerate() {
            if let Some(c) = Remap::get(&m.coflows, un.coflow) {
                un.coflow = c;
                unit_map[u] = kept;
                kept += 1;
            }
        }
        Remap::compact(&unit_map, &mut self.units);
        Remap::compact(&unit_map, &mut self.ux);
        Remap::compact(&unit_map, &mut self.slot);
        let unit = |u: u32| Remap::get(&unit_map, u);
        for un in self.units.iter_mut() {
            un.counted = un.counted.iter().filter_map(|&w| unit(w)).collect();
        }
        self.unit_of = std::mem::take(&mut self.unit_of)
            .into_iter()
            .filter_map(|((c, st, d), u)| Some(((Remap::get(&m.coflows, c)?, st, d), unit(u)?)))
            .collect();
        self.coflow_units = std::mem::take(&mut self.coflow_units)
            .into_iter()
            .filter_map(|(c, us)| {
                let us: Vec<u32> = us.into_iter().filter_map(unit).collect();
                Some((Remap::get(&m.coflows, c)?, us))
            })
            .collect();
        self.peers = std::mem::take(&mut self.peers)
            .into_iter()
            .filter_map(|(u, ws)| Some((unit(u)?, ws.into_iter().filter_map(unit).collect())))
            .collect();
        self.stale = self
            .stale
            .iter()
            .filter_map(|&c| Remap::get(&m.coflows, c))
            .collect();
        Remap::compact(&m.flows, &mut self.flow_unit);
        Remap::compact(&m.flows, &mut self.last_sent);
        Remap::compact(&m.flows, &mut self.gone);
        for u in self.flow_unit.iter_mut().filter(|u| **u != u32::MAX) {
            *u = unit_map[*u as usize];
        }
        self.prev_active = self
            .prev_active
            .iter()
            .filter_map(|&f| Remap::get(&m.flows, f))
            .collect();
        true
    }

    fn decide(&mut self, v: &NonClairvoyantView, out: &mut Decision) {
        if self.flow_unit.len() < v.flow_coflow.len() {
            self.flow_unit.resize(v.flow_coflow.len(), u32::MAX);
            self.last_sent.resize(v.flow_coflow.len(), 0.0);
            self.gone.resize(v.flow_coflow.len(), 0);
        }
        // The view lists the flows that started and finished only for a
        // driver that takes delta decisions.
        let delta = out.delta_ok;
        if delta {
            return self.decide_delta(v, out);
        }
        let mut prev = std::mem::take(&mut self.prev_active);
        self.receive(v, &prev, delta);
        self.admit(v, delta);
        self.group_units(v);
        let class_of: Vec<u8> = (0..self.order.len())
            .map(|gi| self.classify(gi, v.now_s, out))
            .collect();
        out.classes.clear();
        out.classes
            .extend(self.group.iter().map(|&g| class_of[g as usize]));
        out.wake_groups.clear();
        out.wake_groups.extend_from_slice(&self.group);
        self.mark_dormant(v, delta);
        prev.clear();
        prev.extend_from_slice(v.active);
        self.prev_active = prev;
    }
}

pub const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "queues",
        default: "8",
        help: "K strict-priority queues (the paper's evaluation: 4)",
    },
    ParamSpec {
        name: "first_threshold_mb",
        default: "10",
        help: "τ_0 in MiB (threshold of the highest class)",
    },
    ParamSpec {
        name: "multiplier",
        default: "10",
        help: "E: τ_q = τ_0 · E^q (exponentially spaced, as in Aalo)",
    },
    ParamSpec {
        name: "alpha",
        default: "1",
        help: "α: weight of the coflow condition H (eq. 2) and of Weighted-Priority W = α ln(m+1)",
    },
    ParamSpec {
        name: "beta",
        default: "1",
        help: "β: weight of relayed bytes S (Information-Relay, eq. 5)",
    },
    ParamSpec {
        name: "unit_mb",
        default: "1",
        help: "unit of X, S and τ inside eqs. (2)-(5), MiB (sets the scale of H's n/X term)",
    },
    ParamSpec {
        name: "delay_s",
        default: "0.0001",
        help: "delay before a class decided by a receiver reaches its senders (one RTT-like step)",
    },
    ParamSpec {
        name: "starvation_s",
        default: "0",
        help: "raise a unit one class when none of its flows moved for this long (0: off)",
    },
    ParamSpec {
        name: "weighted",
        default: "true",
        help: "Weighted-Priority (W from the stage's internal id)",
    },
    ParamSpec {
        name: "relay",
        default: "true",
        help: "Information-Relay (bytes of receivers that share a sender)",
    },
    ParamSpec {
        name: "child_to_parent",
        default: "true",
        help: "Child-to-Parent (finished child stages report their bytes)",
    },
    ParamSpec {
        name: "settle",
        default: "false",
        help: "a late evaluation crosses class boundaries one at a time, as the agents do (false: one eq. (5) in the current class's τ)",
    },
    ParamSpec {
        name: "reeval_s",
        default: "0",
        help: "evaluate units with relayed bytes again this often, seeing S grow between events (0: only at events and crossings)",
    },
];

fn build(p: &Params) -> Result<AnyPolicy, ModelError> {
    non_clairvoyant(Stream::new(config(p)?))
}

/// Stream's parameters, checked (the policy's and the decentralized agents'
/// `coflowkit agent --decentralized stream`, which share eq. (5) through
/// [`Stream::class`]).
pub fn config(p: &Params) -> Result<StreamConfig, ModelError> {
    Ok(StreamConfig {
        queues: p.usize_in("queues", 1, 64)? as u32,
        first_threshold: p.f64_in("first_threshold_mb", 1e-9, 1e12)?
            / p.f64_in("unit_mb", 1e-9, 1e12)?,
        multiplier: p.f64_in("multiplier", 1.0 + 1e-9, 1e6)?,
        alpha: p.f64_in("alpha", 0.0, 1e6)?,
        beta: p.f64_in("beta", 0.0, 1e6)?,
        unit_bytes: p.f64_in("unit_mb", 1e-9, 1e12)? * MIB,
        delay_s: p.f64_in("delay_s", 0.0, 1e6)?,
        starvation_s: p.f64_in("starvation_s", 0.0, 1e9)?,
        weighted: p.bool("weighted")?,
        relay: p.bool("relay")?,
        child_to_parent: p.bool("child_to_parent")?,
        settle: p.bool("settle")?,
        reeval_s: p.f64_in("reeval_s", 0.0, 1e6)?,
    })
}

pub const SPEC: PolicySpec = PolicySpec {
    name: "stream",
    info: Info::NonClairvoyant,
    knows: "decentralized",
    summary: "receiver-driven C-SJF over strict-priority queues, WP/IR/CP (Stream)",
    rule: "receivers pick classes by eq. (5) from bytes received, flows finished, relayed and child bytes; strict-priority switches enforce them",
    paper: "Stream: ../shared/papers/004_690cd0cb6f2c8b3e.txt",
    params: PARAMS,
    needs: &[Input::Stages],
    build,
    example_ccts: [0.10175, 0.03125, 0.0625],
};

#[cfg(test)]
#[path = "stream_tests.rs"]
mod tests;
