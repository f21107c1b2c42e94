//! Scheduling policies: the trait, the views matching each information model, and
//! one file per policy (catalogue in [`registry`]).
//!
//! A policy never reads a clock or a global: the driver (the simulator, or later the
//! runtime master) hands it a view at every event and the policy writes a
//! [`Decision`]. What a policy may know is explicit in its type:
//!
//! * [`ClairvoyantPolicy`] gets a [`ClairvoyantView`]: flow sizes and remaining bytes.
//! * [`NonClairvoyantPolicy`] gets a [`NonClairvoyantView`]: each active flow's links
//!   and bytes sent so far, each coflow's known width; no sizes.

pub mod drive;
pub mod identify;
pub mod labels;
mod params;
pub mod registry;
pub(crate) mod util;

mod aalo;
mod baraat;
mod coda;
mod coflex;
mod drf;
mod fair;
mod fifo;
mod hug;
mod mcs;
mod naive_tradeoff;
mod ncdrf;
mod ncf;
mod pfp;
mod pias;
mod psp;
mod scf;
mod sincronia;
mod spq;
mod stream;
mod tcf;
mod varys;

pub use coda::{Coda, CodaConfig};
pub use mcs::{Mcs, McsConfig};
pub use params::{ParamSpec, Params};
pub use registry::{build, find, PolicySpec, REGISTRY};
pub use stream::{Stream, StreamConfig};
pub use util::Thresholds;

/// An unknown port in [`Common::flow_src_port`] / [`Common::flow_dst_port`].
pub const NO_PORT: u32 = u32::MAX;

use coflowkit_model::{Fabric, PathId};
use std::ops::Deref;

/// The information a policy is allowed to see.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Info {
    Clairvoyant,
    NonClairvoyant,
}

impl Info {
    pub fn name(self) -> &'static str {
        match self {
            Info::Clairvoyant => "clairvoyant",
            Info::NonClairvoyant => "non-clairvoyant",
        }
    }
}

/// A request to be called again.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Wakeup {
    /// At an absolute time (seconds).
    At(f64),
    /// When coflow `coflow` (index) has sent `bytes` in all (finished flows included).
    CoflowSent { coflow: u32, bytes: f64 },
    /// When flow `flow` (global index) has sent `bytes`.
    FlowSent { flow: u32, bytes: f64 },
    /// When the active flows whose [`Decision::groups`] entry is `group` have
    /// together sent `bytes` more than now (a policy's own grouping of flows, such
    /// as Stream's sub-coflows at one receiver).
    GroupSent { group: u32, bytes: f64 },
}

/// What a policy returns: one rate (bytes/s) per active flow, or one strict-priority
/// class per active flow (0 = highest; the driver shares max-min within a class), and
/// optional wake-ups.
#[derive(Debug, Default, Clone)]
pub struct Decision {
    /// `rates[i]` for `view.active[i]`; the driver sizes it and zeroes it.
    pub rates: Vec<f64>,
    /// If non-empty, `classes[i]` for `view.active[i]`, and `rates` is ignored.
    pub classes: Vec<u8>,
    pub wakeups: Vec<Wakeup>,
    /// Group of each active flow (`groups[i]` for `view.active[i]`), read only for
    /// [`Wakeup::GroupSent`]; dense small numbers, so the driver can index by them.
    pub groups: Vec<u32>,
    /// Sparse decision: a policy that gives most flows nothing sets `sparse` and
    /// lists in `touched` every position it wrote a non-zero rate to (repeats
    /// allowed); the driver then reads only those, in `O(touched)` instead of
    /// `O(active)`. Positions not listed must be left at zero.
    pub sparse: bool,
    pub touched: Vec<u32>,
    /// Set by the driver when it has put every rate back to zero after reading
    /// them, so the next [`Decision::reset`] need not clear the vector.
    pub all_zero: bool,
}

impl Decision {
    /// Prepares the decision for `n` active flows.
    pub fn reset(&mut self, n: usize) {
        if self.all_zero {
            self.rates.truncate(n);
        } else {
            self.rates.clear();
        }
        self.rates.resize(n, 0.0);
        self.all_zero = false;
        self.classes.clear();
        self.wakeups.clear();
        self.groups.clear();
        self.sparse = false;
        self.touched.clear();
    }

    /// Marks `rates[i]` as written (sparse decisions); a no-op for a zero rate.
    #[inline]
    pub fn touch(&mut self, i: usize) {
        if self.rates[i] != 0.0 {
            self.touched.push(i as u32);
        }
    }
}

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

pub trait ClairvoyantPolicy: Send {
    fn decide(&mut self, view: &ClairvoyantView, out: &mut Decision);
}

pub trait NonClairvoyantPolicy: Send {
    fn decide(&mut self, view: &NonClairvoyantView, out: &mut Decision);

    /// For a policy that schedules coflows it identified itself: the label each
    /// flow had last (by global flow index; `u32::MAX` for a flow never seen).
    fn flow_labels(&self) -> Option<Vec<u32>> {
        None
    }
}

/// A policy of either information model.
pub enum AnyPolicy {
    Clairvoyant(Box<dyn ClairvoyantPolicy>),
    NonClairvoyant(Box<dyn NonClairvoyantPolicy>),
}

impl AnyPolicy {
    /// See [`NonClairvoyantPolicy::flow_labels`].
    pub fn flow_labels(&self) -> Option<Vec<u32>> {
        match self {
            AnyPolicy::Clairvoyant(_) => None,
            AnyPolicy::NonClairvoyant(p) => p.flow_labels(),
        }
    }

    pub fn info(&self) -> Info {
        match self {
            AnyPolicy::Clairvoyant(_) => Info::Clairvoyant,
            AnyPolicy::NonClairvoyant(_) => Info::NonClairvoyant,
        }
    }
}
