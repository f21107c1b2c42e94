//! What a policy sees. Per-flow slices are indexed by global flow index, per-coflow
//! slices by coflow index (coflows are sorted by arrival, then id).

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
    /// Bytes sent so far, per flow.
    pub sent: &'a [f64],
    pub coflow_id: &'a [u64],
    pub coflow_arrival_s: &'a [f64],
    pub coflow_weight: &'a [f64],
    /// Number of flows of each coflow (known at registration).
    pub coflow_width: &'a [u32],
    /// Bytes sent so far by each coflow, finished flows included.
    pub coflow_sent: &'a [f64],
    /// Number of flows of each coflow started so far (never decreases): a policy
    /// caching something about a coflow's active flows knows it is stale when this
    /// grows.
    pub coflow_started: &'a [u32],
    /// Sub-coflow (stage) of each flow in a multi-stage coflow, 0 when the workload
    /// gives none ([`coflowkit_model::FlowMeta::stage`]).
    pub flow_stage: &'a [u32],
    /// Strict-priority class the workload gives each flow (0 when none; `spq`).
    pub flow_priority: &'a [u32],
    /// The stage DAG: `(coflow, child stage, parent stage)` for every pair where a
    /// flow of the parent stage waits for a flow of the child stage; sorted.
    pub stage_parents: &'a [(u32, u32, u32)],
    /// Active flows per path (indexed by `PathId`).
    pub path_count: &'a [u32],
    /// The paths with at least one active flow (in no particular, but
    /// deterministic, order).
    pub active_paths: &'a [PathId],
}

/// The view of a policy that knows flow sizes.
#[derive(Clone, Copy)]
pub struct ClairvoyantView<'a> {
    pub common: Common<'a>,
    pub size: &'a [f64],
    pub remaining: &'a [f64],
    /// Global index of the first flow of each coflow (its flows are contiguous).
    pub coflow_first_flow: &'a [u32],
    /// Largest flow of each coflow, bytes.
    pub coflow_length: &'a [f64],
    /// Total bytes of each coflow.
    pub coflow_size: &'a [f64],
    /// Strategic reports: empty when every coflow is truthful, else per coflow the
    /// demand vector it reports, `(link, value)` sorted by link with maximum 1
    /// (empty for a truthful coflow). Only the DRF family reads it.
    pub coflow_report: &'a [Vec<(u32, f64)>],
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
