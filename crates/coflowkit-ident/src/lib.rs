//! Coflow identification with no help from applications (CODA, Zhang et al.,
//! SIGCOMM'16, §3): flow records, the learned distance between flows, and the
//! clustering that turns flows into identified coflows.
//!
//! * [`Records`] / [`Metric`]: what can be observed about a flow (start time,
//!   optional packet statistics, the community of its hosts, its destination
//!   aggregation) and the weighted distance
//!   `d(i,j)² = a_t·Δt² + Σ_k a_k·Δx_k² + a_com·[com_i ≠ com_j] + a_prt·[agg_i ≠ agg_j]`.
//! * [`dbscan`]: exact DBSCAN; for min-points 1 with time as the only numeric
//!   attribute it runs in `O(n log n)` (chains of time-sorted points per
//!   categorical level).
//! * [`Rough`]: (incremental) Rough-DBSCAN, Algorithm 1 of CODA: a persistent
//!   leader-follower structure (leaders within range τ), DBSCAN with min-points 1
//!   over the leaders, and labels that stay stable from one round to the next.
//! * [`communities`]: host communities by recursive spectral bisection of the host
//!   traffic graph (the `D_com` attribute).
//!
//! See docs/identification.md.

mod community;
mod dbscan;
mod metric;
mod rough;
mod unionfind;

pub use community::communities;
pub use dbscan::{canonical, dbscan};
pub use metric::{agg_key, Metric, Records, NO_PORT};
pub use rough::Rough;

/// "No label" / "no leader".
pub const NONE: u32 = u32::MAX;
