//! A workload seen as CoflowSim sees a Coflow-Benchmark trace.
//!
//! CoflowSim (`CoflowBenchmarkTraceProducer`, `Job.arrangeTasks`, `ReduceTask`)
//! reads each reducer's MB, rounds it up to a whole MB, merges the mappers and the
//! reducers of a rack into one, rounds each reducer up again to a multiple of
//! `#mappers` MB, and makes one flow of `bytes / #mappers` (at least 1 MB) from
//! every mapper rack to every reducer rack. From a workload: a coflow's distinct
//! source ports are its mappers, each destination port a reducer that receives
//! the sum of the flows into it. For a trace whose reducers are whole MB (the FB
//! trace) this is exactly CoflowSim's reading; with fractional MB and two reducers
//! in one rack, CoflowSim rounds each reducer before summing and we round the sum.

use super::jrandom::JavaRandom;
use crate::SimError;
use coflowkit_model::{Topology, Workload, GBPS_BYTES_PER_S};
use std::collections::BTreeMap;

/// CoflowSim's constants (`utils/Constants.java`).
pub const MB: f64 = 1_048_576.0;
pub const RACK_BITS_PER_SEC: f64 = 1.0 * 1024.0 * 1_048_576.0;
pub const RACK_BYTES_PER_SEC: f64 = RACK_BITS_PER_SEC / 8.0;
pub const SECOND_UNITS: i64 = 1024;
/// `SIMULATION_QUANTA = 1024 / (RACK_BYTES_PER_SEC / 1 MB)` = 8 units: 1 MB per rack.
pub const QUANTUM: i64 = 8;
pub const END_UNITS: i64 = 86_400 * SECOND_UNITS;
pub const ZERO: f64 = 1e-3;
/// The largest coflow (bytes) whose whole-byte arithmetic stays exact in a double.
pub const MAX_BYTES: f64 = 9_007_199_254_740_992.0;
/// Java's `Double.MIN_VALUE` (the smallest subnormal), where `Utils.max` starts.
pub const JAVA_MIN_VALUE: f64 = 4.9e-324;

/// One coalesced reducer (one per rack of a job).
#[derive(Debug, Clone)]
pub struct JobReducer {
    pub rack: u32,
    /// Rounded to a multiple of `#mappers` MB.
    pub shuffle_bytes: f64,
    /// `shuffleBytesPerRack` at the start: the rack's bytes rounded to whole MB only.
    pub per_rack_bytes: f64,
}

/// One job (coflow) after `arrangeTasks`.
#[derive(Debug, Clone)]
pub struct Job {
    /// Index of the coflow in the workload.
    pub coflow: usize,
    /// Arrival in CoflowSim units (the trace's milliseconds).
    pub arrival: f64,
    /// Mapper racks, ascending.
    pub mappers: Vec<u32>,
    /// Reducers by rack, ascending.
    pub reducers: Vec<JobReducer>,
    /// Bytes of each flow (every mapper sends this much to every reducer of `r`):
    /// `max(shuffle_bytes / #mappers, 1 MB)`.
    pub flow_bytes: Vec<f64>,
    pub max_shuffle: f64,
    /// Static skew (`calcAlphaDeadline`): the largest port's bytes.
    pub alpha: f64,
    /// `alpha / rack rate · multiplier · 1000`, multiplier from `Random(17)`.
    pub deadline: f64,
}

/// `ReduceTask.roundToNearestNMB`: truncate to whole bytes, round up to `n` MB.
pub fn round_up_mb(bytes: f64, n: u64) -> f64 {
    let tmp = bytes as i64;
    let mult = (n * 1_048_576) as i64;
    let mut num = tmp / mult;
    if tmp % mult > 0 {
        num += 1;
    }
    (mult * num) as f64
}

/// Arrival in milliseconds; a value within 1e-6 ms of a whole number is that
/// number (traces hold whole milliseconds; seconds × 1000 may not give them back).
fn arrival_ms(arrival_s: f64) -> f64 {
    let ms = arrival_s * 1000.0;
    let r = ms.round();
    if (ms - r).abs() <= 1e-6 {
        r
    } else {
        ms
    }
}

/// The jobs of `w` in CoflowSim's admission order (arrival, then workload order,
/// which is CoflowSim's file order when coflow ids grow along the file), with
/// `None` for a coflow without flows (CoflowSim ignores a job without mappers).
/// `deadline_factor` is CoflowSim's `deadlineMultRandomFactor` (1; 0 under DARK).
pub fn build_jobs(w: &Workload, deadline_factor: f64) -> Result<(u32, Vec<Option<Job>>), SimError> {
    let ports = match &w.fabric.topology {
        Topology::BigSwitch { ports } => *ports,
        Topology::FatTree(_) => {
            return Err(SimError {
                message: format!(
                    "engine coflowsim: {} has a FatTree fabric; CoflowSim models a big switch of racks \
                     (use the exact engine for FatTrees)",
                    w.source
                ),
            })
        }
    };
    if let Some(c) = w.fabric.capacities.iter().find(|&&c| c != GBPS_BYTES_PER_S) {
        return Err(SimError {
            message: format!(
                "engine coflowsim: a link of {} has {:.6} Gbps; CoflowSim's racks are fixed at 1 Gbps \
                 (2^30 bit/s), so the engine runs only on a 1 Gbps big switch",
                w.source,
                c * 8.0 / 1e9 * (1e9 / (1u64 << 30) as f64)
            ),
        });
    }
    for (ci, c) in w.coflows.iter().enumerate() {
        if c.size_bytes > MAX_BYTES {
            return Err(SimError {
                message: format!(
                    "engine coflowsim: coflow {} (index {ci}) has {:.3e} bytes; CoflowSim counts \
                     bytes in whole numbers, exact up to 2^53 (9 PB) per coflow",
                    c.id, c.size_bytes
                ),
            });
        }
        for f in c.flows() {
            let fl = &w.flows[f];
            if !fl.deps.is_empty() || fl.start_s > c.arrival_s {
                return Err(SimError {
                    message: format!(
                        "engine coflowsim: flow {} of coflow {} (index {ci}) starts after its coflow's \
                         arrival or waits for other flows; CoflowSim starts every flow of a job at its \
                         admission, so it cannot replay staged or delayed flows",
                        fl.id, c.id
                    ),
                });
            }
        }
    }
    let mut order: Vec<usize> = (0..w.coflows.len()).collect();
    order.sort_by(|&a, &b| {
        arrival_ms(w.coflows[a].arrival_s).total_cmp(&arrival_ms(w.coflows[b].arrival_s))
    });
    let mut rng = JavaRandom::new(17);
    let mut jobs = Vec::with_capacity(order.len());
    for ci in order {
        let c = &w.coflows[ci];
        if c.width == 0 {
            jobs.push(None);
            continue;
        }
        let mult = 1.0 + rng.next_double() * deadline_factor;
        jobs.push(Some(one_job(w, ci, mult)));
    }
    Ok((ports, jobs))
}

fn one_job(w: &Workload, ci: usize, deadline_mult: f64) -> Job {
    let c = &w.coflows[ci];
    let mut mappers: Vec<u32> = c.flows().map(|f| w.flows[f].src).collect();
    mappers.sort_unstable();
    mappers.dedup();
    let mut into: BTreeMap<u32, f64> = BTreeMap::new();
    for f in c.flows() {
        *into.entry(w.flows[f].dst).or_insert(0.0) += w.flows[f].size_bytes;
    }
    let m = mappers.len() as u64;
    let mut reducers = Vec::with_capacity(into.len());
    let mut flow_bytes = Vec::with_capacity(into.len());
    let (mut total, mut max) = (0.0f64, 0.0f64);
    for (&rack, &bytes) in &into {
        let whole = round_up_mb(bytes, 1);
        let shuffle = round_up_mb(whole, m);
        total += shuffle;
        max = max.max(shuffle);
        flow_bytes.push((shuffle / m as f64).max(MB));
        reducers.push(JobReducer {
            rack,
            shuffle_bytes: shuffle,
            per_rack_bytes: whole,
        });
    }
    // calcAlphaDeadline: each mapper rack sends total / #mappers.
    let per_mapper = total / m as f64;
    let mut alpha = JAVA_MIN_VALUE;
    if per_mapper > alpha {
        alpha = per_mapper;
    }
    for r in &reducers {
        if r.shuffle_bytes > alpha {
            alpha = r.shuffle_bytes;
        }
    }
    let deadline = alpha / RACK_BYTES_PER_SEC * deadline_mult * 1000.0;
    Job {
        coflow: ci,
        arrival: arrival_ms(c.arrival_s),
        mappers,
        reducers,
        flow_bytes,
        max_shuffle: max,
        alpha,
        deadline,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_follows_reducetask() {
        assert_eq!(round_up_mb(1.0, 1), MB);
        assert_eq!(round_up_mb(MB, 1), MB);
        assert_eq!(round_up_mb(MB + 0.9, 1), MB); // truncated to whole bytes first
        assert_eq!(round_up_mb(MB + 1.0, 1), 2.0 * MB);
        assert_eq!(round_up_mb(3.0 * MB - 1e-7, 1), 3.0 * MB);
        // 5 MB over 3 mappers → 6 MB, 2 MB per flow
        assert_eq!(round_up_mb(5.0 * MB, 3), 6.0 * MB);
    }

    #[test]
    fn arrival_snaps_to_whole_milliseconds() {
        assert_eq!(arrival_ms(10.833), 10833.0);
        assert_eq!(arrival_ms(0.0012345), 1.2345);
    }
}
