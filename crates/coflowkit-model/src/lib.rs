//! The coflowkit data model: fabrics, coflows, flows and units.
//!
//! Everything inside coflowkit is in bytes, seconds and bytes per second; unit
//! conversions happen only at the edges (trace readers, CLI, reports).
//!
//! Storage order is part of the model: coflows are sorted by `(arrival, id)` and the
//! flows of a coflow are stored contiguously in index order, so the global flow index
//! order is the tie-break order `(coflow arrival, coflow id, flow index)`.

mod error;
mod fabric;
pub mod fattree;
mod order;
mod rng;
mod workload;

pub use error::ModelError;
pub use fabric::{Fabric, Topology, MAX_FATTREE_K, MAX_PORTS};
pub use fattree::{FatTree, Placement};
pub use order::TotalF64;
pub use rng::Pcg32;
pub use workload::{Coflow, CoflowRecord, Flow, FlowMeta, FlowRecord, Workload, WorkloadBuilder};

/// Bytes in one mebibyte, the "MB" of the Coflow-Benchmark traces.
pub const MIB: f64 = 1_048_576.0;
/// "1 Gbps" as CoflowSim counts it: 1024³ bit/s = 128 MiB/s.
pub const GBPS_BYTES_PER_S: f64 = 1024.0 * 1024.0 * 1024.0 / 8.0;
/// Events closer than this (seconds) are one event.
pub const TIME_EPS: f64 = 1e-9;
/// A residual capacity at most this fraction of the capacity counts as zero.
pub const CAPACITY_EPS: f64 = 1e-9;

/// The smallest finish tolerance (bytes): a flow this small is finished at the
/// instant it starts (the `waves` transform's barrier flows are this size).
pub const FINISH_BYTES: f64 = 1e-6;
/// The finish tolerance relative to a flow's size.
pub const FINISH_REL: f64 = 1e-9;

/// Remaining bytes below which a flow of `size` bytes is finished:
/// `max(FINISH_BYTES, FINISH_REL · size)`.
#[inline]
pub fn finish_threshold(size_bytes: f64) -> f64 {
    (FINISH_REL * size_bytes).max(FINISH_BYTES)
}

/// Index of a link in a fabric.
pub type LinkId = u32;
/// Index of an interned path (an ordered list of links).
pub type PathId = u32;
