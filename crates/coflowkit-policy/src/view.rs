//! What a policy sees, and [`ViewData`], the one place its views are built from:
//! the simulator's engine, the runtime's `Live` and the unit tests' kit all own a
//! `ViewData` and hand policies `ViewData::clairvoyant` or `non_clairvoyant`.
//!
//! Per-flow slices are indexed by global flow index, per-coflow slices by coflow
//! index (coflows are sorted by arrival, then id). Bytes sent are kept lazily
//! ([`Progress`]): reading them costs O(1) per flow, and a driver updates a flow
//! only when its rate changes.

use coflowkit_model::{Fabric, PathId};
use std::ops::Deref;

/// An unknown port in [`Common::flow_src_port`] / [`Common::flow_dst_port`].
pub const NO_PORT: u32 = u32::MAX;

/// The active flows of one coflow: `active[start..end]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ActiveCoflow {
    pub coflow: u32,
    pub start: u32,
    pub end: u32,
}

impl ActiveCoflow {
    pub fn range(&self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }
}

/// How far every flow and coflow has got, kept lazily by the driver.
///
/// A flow `f` in *flow mode* has sent `base[f] + rate[f]·(now − since[f])`. A
/// flow in *path mode* (`rate[f]` is NaN: it is served as part of its path's
/// group, every flow of which has the same rate) has sent
/// `path_base[p] + path_rate[p]·(now − path_since[p]) − base[f]`, with `p` its
/// path. A path may instead be served by a *bottleneck group* (`path_group[p]`,
/// a link id, not [`NO_GROUP`]): its service is then
/// `path_off[p] + group_base[g] + group_rate[g]·(now − group_since[g])`, one
/// counter per group whatever its paths. A finished flow has `base[f]` = its
/// size and rate 0. Coflows in flow mode
/// keep the same triple (`coflow_base`, `coflow_rate`, `coflow_since`); in path
/// mode a coflow's bytes are the sum of its flows'.
///
/// A flow may instead be in its coflow's *proportional group* (rate NaN and
/// `prop_w[f]` not NaN): it has sent `base[f] − prop_w[f]·Φ_k(now)`, where
/// `Φ_k(t) = prop_base[k] − prop_rate[k]·(t − prop_since[k])` is one scalar
/// per coflow that falls linearly to zero, when every member is done; its
/// rate is `prop_w[f]·prop_rate[k]`. So a decision that gives every member
/// `rem_f · x` (the DRF family's `rem_f / T_k`, MADD's `rem_f / Γ'_k`) costs one
/// value per coflow. The coflow's own triple counts its members too.
#[derive(Clone, Copy)]
pub struct Progress<'a> {
    pub base: &'a [f64],
    pub rate: &'a [f64],
    pub since: &'a [f64],
    pub path_base: &'a [f64],
    pub path_rate: &'a [f64],
    pub path_since: &'a [f64],
    pub path_group: &'a [u32],
    pub path_off: &'a [f64],
    pub group_base: &'a [f64],
    pub group_rate: &'a [f64],
    pub group_since: &'a [f64],
    pub coflow_base: &'a [f64],
    pub coflow_rate: &'a [f64],
    pub coflow_since: &'a [f64],
    /// True when the driver serves flows by path groups (see above).
    pub path_mode: bool,
    /// In path mode: true when the driver also keeps each coflow's bytes as
    /// `coflow_base + coflow_rate · (now − coflow_since)`, as in flow mode
    /// (the engine does once a policy asks to be woken at a coflow's bytes);
    /// otherwise a coflow's bytes are the sum of its flows'.
    pub coflow_sums: bool,
    /// Per flow served by a counter (rate NaN): the counter, when it is not
    /// the flow's path (empty: every such flow is on its path's counter). A
    /// driver serving strict-priority classes by group keeps one counter per
    /// (class, path).
    pub ctr: &'a [u32],
    /// Per flow: its weight in its coflow's proportional group, NaN when it is
    /// not in it (empty: no flow is); per coflow, `Φ_k`'s triple (see above).
    pub prop_w: &'a [f64],
    pub prop_base: &'a [f64],
    pub prop_rate: &'a [f64],
    pub prop_since: &'a [f64],
}

impl Progress<'_> {
    /// The counter serving flow `f` (rate NaN): its path's, or `ctr[f]`.
    #[inline]
    fn counter(&self, flow_path: &[PathId], f: usize) -> usize {
        match self.ctr.get(f) {
            Some(&c) => c as usize,
            None => flow_path[f] as usize,
        }
    }
}

/// A path served on its own counter, in no bottleneck group.
pub const NO_GROUP: u32 = u32::MAX;

/// Path `q`'s service (bytes per flow since its counter started) at `now`:
/// its group's counter plus its offset, or its own counter.
#[allow(clippy::too_many_arguments)]
#[inline]
fn service(
    path_group: &[u32],
    path_off: &[f64],
    group: [&[f64]; 3],
    own: [&[f64]; 3],
    q: usize,
    now: f64,
) -> f64 {
    match path_group.get(q) {
        Some(&g) if g != NO_GROUP => {
            let g = g as usize;
            path_off[q] + group[0][g] + group[1][g] * (now - group[2][g])
        }
        _ => own[0][q] + own[1][q] * (now - own[2][q]),
    }
}

/// What every policy may see. Per-flow slices are indexed by global flow index,
/// per-coflow slices by coflow index (coflows are sorted by arrival, then id).
#[derive(Clone, Copy)]
pub struct Common<'a> {
    pub now_s: f64,
    pub fabric: &'a Fabric,
    /// Active (started, unfinished) flows by global index, ascending, i.e. in
    /// tie-break order (coflow arrival, coflow id, flow index).
    pub active: &'a [u32],
    /// Active coflows, ascending coflow index, each a contiguous range of `active`.
    pub groups: &'a [ActiveCoflow],
    pub flow_coflow: &'a [u32],
    pub flow_index: &'a [u32],
    pub flow_path: &'a [PathId],
    /// What the network shows of each flow (its 5-tuple, for identification):
    /// source and destination hosts, and ports ([`NO_PORT`] when unknown).
    pub flow_src: &'a [u32],
    pub flow_dst: &'a [u32],
    pub flow_src_port: &'a [u32],
    pub flow_dst_port: &'a [u32],
    /// Bytes sent, per flow and per coflow: read with [`Common::sent`] and
    /// [`Common::coflow_sent`].
    pub progress: Progress<'a>,
    pub coflow_id: &'a [u64],
    pub coflow_arrival_s: &'a [f64],
    pub coflow_weight: &'a [f64],
    /// Number of flows of each coflow (known at registration).
    pub coflow_width: &'a [u32],
    /// Global index of the first flow of each coflow (its flows are contiguous).
    pub coflow_first_flow: &'a [u32],
    /// Number of flows of each coflow started so far (never decreases): a policy
    /// caching something about a coflow's active flows knows it is stale when this
    /// grows.
    pub coflow_started: &'a [u32],
    /// Sub-coflow (stage) of each flow in a multi-stage coflow, 0 when the workload
    /// gives none ([`coflowkit_model::FlowMeta::stage`]).
    pub flow_stage: &'a [u32],
    /// Strict-priority class the workload gives each flow (0 when none; `spq`).
    pub flow_priority: &'a [u32],
    /// Per flow: when the driver first saw it active (NaN before; may be empty,
    /// see [`Common::seen_s`]).
    pub flow_seen_s: &'a [f64],
    /// The stage DAG: `(coflow, child stage, parent stage)` for every pair where a
    /// flow of the parent stage waits for a flow of the child stage; sorted.
    pub stage_parents: &'a [(u32, u32, u32)],
    /// Active flows per path (indexed by `PathId`).
    pub path_count: &'a [u32],
    /// The paths with at least one active flow (in no particular, but
    /// deterministic, order).
    pub active_paths: &'a [PathId],
    /// The paths whose active count changed since the previous call (flows
    /// started or finished on them), each once, in no particular order.
    pub changed_paths: &'a [PathId],
    /// The flows that started, and those that finished, since the previous call
    /// (global indices; a flow may be in both). Filled by the drivers that take
    /// delta decisions ([`crate::decision::Decision::delta_ok`]); empty otherwise.
    pub started: &'a [u32],
    pub finished: &'a [u32],
}

impl Common<'_> {
    /// When the driver first saw flow `f` active, or `now_s` when it does not
    /// say (an empty or NaN entry). Under a decision interval a policy is called
    /// after flows start; this is when they started, which an identifier that
    /// timestamps flows needs (CODA's agents see a flow's first packet).
    #[inline]
    pub fn seen_s(&self, f: u32) -> f64 {
        match self.flow_seen_s.get(f as usize) {
            Some(&t) if t.is_finite() => t,
            _ => self.now_s,
        }
    }

    /// Bytes flow `f` has sent so far.
    #[inline]
    pub fn sent(&self, f: u32) -> f64 {
        let p = &self.progress;
        let f = f as usize;
        let r = p.rate[f];
        if r.is_nan() {
            if let Some(&w) = p.prop_w.get(f).filter(|w| !w.is_nan()) {
                let k = self.flow_coflow[f] as usize;
                let phi = p.prop_base[k] - p.prop_rate[k] * (self.now_s - p.prop_since[k]);
                return p.base[f] - w * phi;
            }
            let q = p.counter(self.flow_path, f);
            let group = [p.group_base, p.group_rate, p.group_since];
            let own = [p.path_base, p.path_rate, p.path_since];
            service(p.path_group, p.path_off, group, own, q, self.now_s) - p.base[f]
        } else {
            p.base[f] + r * (self.now_s - p.since[f])
        }
    }

    /// Bytes coflow `k` has sent so far, finished flows included.
    pub fn coflow_sent(&self, k: u32) -> f64 {
        let p = &self.progress;
        let k = k as usize;
        if p.path_mode && !p.coflow_sums {
            let first = self.coflow_first_flow[k];
            (first..first + self.coflow_width[k])
                .map(|f| self.sent(f))
                .sum()
        } else {
            p.coflow_base[k] + p.coflow_rate[k] * (self.now_s - p.coflow_since[k])
        }
    }
}

/// The view of a policy that knows flow sizes.
#[derive(Clone, Copy)]
pub struct ClairvoyantView<'a> {
    pub common: Common<'a>,
    pub size: &'a [f64],
    /// Largest flow of each coflow, bytes.
    pub coflow_length: &'a [f64],
    /// Total bytes of each coflow.
    pub coflow_size: &'a [f64],
    /// Strategic reports: empty when every coflow is truthful, else per coflow the
    /// demand vector it reports, `(link, value)` sorted by link with maximum 1
    /// (empty for a truthful coflow). Only the DRF family reads it.
    pub coflow_report: &'a [Vec<(u32, f64)>],
}

impl ClairvoyantView<'_> {
    /// Bytes flow `f` has left to send (never below zero).
    #[inline]
    pub fn remaining(&self, f: u32) -> f64 {
        (self.size[f as usize] - self.common.sent(f)).max(0.0)
    }
}

impl<'a> Deref for ClairvoyantView<'a> {
    type Target = Common<'a>;
    fn deref(&self) -> &Common<'a> {
        &self.common
    }
}

/// The view of a policy that does not know flow sizes.
#[derive(Clone, Copy)]
pub struct NonClairvoyantView<'a> {
    pub common: Common<'a>,
}

impl<'a> Deref for NonClairvoyantView<'a> {
    type Target = Common<'a>;
    fn deref(&self) -> &Common<'a> {
        &self.common
    }
}

/// Everything a view borrows, owned by a driver: static facts of the flows and
/// coflows, the active set, and the lazy progress. A driver fills what it knows;
/// an input it leaves empty is reported by [`ViewData::missing`] so that a policy
/// needing it can be refused instead of being fed zeros.
#[derive(Debug, Clone, Default)]
pub struct ViewData {
    // Per flow, fixed.
    pub flow_coflow: Vec<u32>,
    pub flow_index: Vec<u32>,
    pub flow_path: Vec<PathId>,
    pub flow_src: Vec<u32>,
    pub flow_dst: Vec<u32>,
    pub flow_src_port: Vec<u32>,
    pub flow_dst_port: Vec<u32>,
    pub flow_stage: Vec<u32>,
    pub flow_priority: Vec<u32>,
    pub size: Vec<f64>,
    /// Per flow: when the driver first saw it active (the engine: its start; the
    /// runtime: the report that started it); NaN before. A driver that leaves it
    /// empty makes it NaN for every flow (see [`Common::seen_s`]).
    pub flow_seen_s: Vec<f64>,
    // Per coflow, fixed.
    pub coflow_id: Vec<u64>,
    pub arrival: Vec<f64>,
    pub weight: Vec<f64>,
    pub width: Vec<u32>,
    pub first_flow: Vec<u32>,
    pub length: Vec<f64>,
    pub csize: Vec<f64>,
    pub stage_parents: Vec<(u32, u32, u32)>,
    pub reports: Vec<Vec<(u32, f64)>>,
    // The active set.
    pub active: Vec<u32>,
    pub groups: Vec<ActiveCoflow>,
    pub coflow_started: Vec<u32>,
    pub path_count: Vec<u32>,
    pub active_paths: Vec<PathId>,
    pub changed_paths: Vec<PathId>,
    pub started: Vec<u32>,
    pub finished: Vec<u32>,
    // Progress (see [`Progress`]).
    pub base: Vec<f64>,
    pub rate: Vec<f64>,
    pub since: Vec<f64>,
    pub path_base: Vec<f64>,
    pub path_rate: Vec<f64>,
    pub path_since: Vec<f64>,
    pub path_group: Vec<u32>,
    pub path_off: Vec<f64>,
    pub group_base: Vec<f64>,
    pub group_rate: Vec<f64>,
    pub group_since: Vec<f64>,
    pub coflow_base: Vec<f64>,
    pub coflow_rate: Vec<f64>,
    pub coflow_since: Vec<f64>,
    pub path_mode: bool,
    /// See [`Progress::coflow_sums`].
    pub coflow_sums: bool,
    /// See [`Progress::ctr`].
    pub flow_ctr: Vec<u32>,
    /// See [`Progress::prop_w`].
    pub prop_w: Vec<f64>,
    pub prop_base: Vec<f64>,
    pub prop_rate: Vec<f64>,
    pub prop_since: Vec<f64>,
    /// Which optional inputs the driver supplies (see [`Input`]).
    pub supplies: Vec<Input>,
}

/// Inputs only some workloads and drivers have. A policy lists those it needs in
/// its spec; a driver that cannot supply one refuses the policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Input {
    /// Stages of multi-stage coflows and their DAG (`flow_stage`, `stage_parents`).
    Stages,
}

impl Input {
    pub fn name(self) -> &'static str {
        match self {
            Input::Stages => "coflow stages (flow_stage, stage_parents)",
        }
    }
}

impl ViewData {
    /// Path `q`'s service at `now` (see [`Progress`]).
    #[inline]
    pub fn path_service(&self, q: usize, now: f64) -> f64 {
        let group = [&self.group_base[..], &self.group_rate, &self.group_since];
        let own = [&self.path_base[..], &self.path_rate, &self.path_since];
        service(&self.path_group, &self.path_off, group, own, q, now)
    }

    fn progress(&self) -> Progress<'_> {
        Progress {
            base: &self.base,
            rate: &self.rate,
            since: &self.since,
            path_base: &self.path_base,
            path_rate: &self.path_rate,
            path_since: &self.path_since,
            path_group: &self.path_group,
            path_off: &self.path_off,
            group_base: &self.group_base,
            group_rate: &self.group_rate,
            group_since: &self.group_since,
            coflow_base: &self.coflow_base,
            coflow_rate: &self.coflow_rate,
            coflow_since: &self.coflow_since,
            path_mode: self.path_mode,
            coflow_sums: self.coflow_sums,
            ctr: &self.flow_ctr,
            prop_w: &self.prop_w,
            prop_base: &self.prop_base,
            prop_rate: &self.prop_rate,
            prop_since: &self.prop_since,
        }
    }

    /// The counter serving flow `f` (rate NaN; see [`Progress::ctr`]).
    #[inline]
    pub fn counter_of(&self, f: usize) -> usize {
        match self.flow_ctr.get(f) {
            Some(&c) => c as usize,
            None => self.flow_path[f] as usize,
        }
    }

    /// The view every policy sees, at time `now`.
    pub fn common<'a>(&'a self, fabric: &'a Fabric, now: f64) -> Common<'a> {
        Common {
            now_s: now,
            fabric,
            active: &self.active,
            groups: &self.groups,
            flow_coflow: &self.flow_coflow,
            flow_index: &self.flow_index,
            flow_path: &self.flow_path,
            flow_src: &self.flow_src,
            flow_dst: &self.flow_dst,
            flow_src_port: &self.flow_src_port,
            flow_dst_port: &self.flow_dst_port,
            progress: self.progress(),
            coflow_id: &self.coflow_id,
            coflow_arrival_s: &self.arrival,
            coflow_weight: &self.weight,
            coflow_width: &self.width,
            coflow_first_flow: &self.first_flow,
            coflow_started: &self.coflow_started,
            flow_stage: &self.flow_stage,
            flow_priority: &self.flow_priority,
            flow_seen_s: &self.flow_seen_s,
            stage_parents: &self.stage_parents,
            path_count: &self.path_count,
            active_paths: &self.active_paths,
            changed_paths: &self.changed_paths,
            started: &self.started,
            finished: &self.finished,
        }
    }

    pub fn clairvoyant<'a>(&'a self, fabric: &'a Fabric, now: f64) -> ClairvoyantView<'a> {
        ClairvoyantView {
            common: self.common(fabric, now),
            size: &self.size,
            coflow_length: &self.length,
            coflow_size: &self.csize,
            coflow_report: &self.reports,
        }
    }

    pub fn non_clairvoyant<'a>(&'a self, fabric: &'a Fabric, now: f64) -> NonClairvoyantView<'a> {
        NonClairvoyantView {
            common: self.common(fabric, now),
        }
    }

    /// Coflow `k`'s proportional-group scalar `Φ_k` at `now` (see [`Progress`]).
    #[inline]
    pub fn prop_phi(&self, k: usize, now: f64) -> f64 {
        self.prop_base[k] - self.prop_rate[k] * (now - self.prop_since[k])
    }

    /// Flow `f`'s weight in its coflow's proportional group, if it is in it.
    #[inline]
    pub fn prop_weight(&self, f: usize) -> Option<f64> {
        self.prop_w.get(f).copied().filter(|w| !w.is_nan())
    }

    /// Bytes flow `f` has sent at `now` (as [`Common::sent`]).
    #[inline]
    pub fn sent_at(&self, f: usize, now: f64) -> f64 {
        let r = self.rate[f];
        if r.is_nan() {
            if let Some(w) = self.prop_weight(f) {
                let k = self.flow_coflow[f] as usize;
                return self.base[f] - w * self.prop_phi(k, now);
            }
            self.path_service(self.counter_of(f), now) - self.base[f]
        } else {
            self.base[f] + r * (now - self.since[f])
        }
    }

    /// The first of `needs` this driver does not supply, if any.
    pub fn missing(&self, needs: &[Input]) -> Option<Input> {
        needs.iter().copied().find(|n| !self.supplies.contains(n))
    }
}
