//! Any registry policy on CoflowSim's hooks: how the NC-DRF, Coflex and MCS
//! authors added their schedulers to CoflowSim (a `CoflowSimulator` subclass whose
//! `afterJobAdmission` and `afterJobDeparture` set every flow's `currentBps`).
//!
//! At each hook the policy object of the exact engine is handed a view of
//! CoflowSim's own flows: one flow per (mapper rack, reducer rack) of each admitted
//! job, sizes as CoflowSim rounded them, bytes sent as its counters say (a flow's
//! size minus its bytes left; a coflow's `shuffleBytesCompleted`), on a big
//! switch of `racks` ports of CoflowSim's 2^30 bit/s. Time is CoflowSim's: a second
//! is 1024 units. What the policy answers is held until the next hook: a flow that
//! ends frees its rate to no one, and wake-ups are not honoured (CoflowSim calls
//! its schedulers only at its hooks).
//!
//! * Rates (bytes/s) become `currentBps = 8 · rate`.
//! * Strict-priority classes are served as `CoflowSimulatorDark.updateRates`
//!   serves its queues: class by class, and in a class coflow by coflow (arrival
//!   order), each coflow's flows of that class get `min(send free / its flows at
//!   the mapper, recv free / its flows at the reducer)` of what earlier ones left.
//! * Path rates (path-mode policies) apply to every active flow of the path.

use super::engine::{jmin, step_bytes, Scheduler, Sim};
use super::jobs::{Job, RACK_BITS_PER_SEC, RACK_BYTES_PER_SEC, SECOND_UNITS, ZERO};
use crate::SimError;
use coflowkit_model::{Fabric, Workload};
use coflowkit_policy::view::ViewData;
use coflowkit_policy::{ActiveCoflow, AnyPolicy, Decision, NO_PORT};
use std::collections::BTreeMap;

/// What `--engine coflowsim` runs for a policy name: CoflowSim's own scheduler
/// for the eight it maps, or the registry's policy object at its hooks.
pub enum CsPolicy {
    Builtin(Scheduler),
    Hooked { name: String, policy: AnyPolicy },
}

impl CsPolicy {
    /// Resolves `name` with `params`. A mapped name without parameters runs
    /// CoflowSim's own rule; with parameters (`aalo:variant=coflowsim`, `aalo:queues=4`)
    /// it is the registry's policy object on the hooks, like every other name. `coda`
    /// and policies needing inputs CoflowSim does not model (stages) are refused, and
    /// so is `realloc` (the hooks decide).
    pub fn resolve(name: &str, params: &BTreeMap<String, String>) -> Result<CsPolicy, SimError> {
        let err = |m: String| {
            Err(SimError {
                message: format!("engine coflowsim: {m}"),
            })
        };
        if let Some(kind) = Scheduler::from_policy(name) {
            if params.is_empty() {
                return Ok(CsPolicy::Builtin(kind));
            }
        }
        if name == "coda" {
            return err(
                "coda stays on the exact engine: CODA's paper simulated with a \
                 flow-level simulator and 1 s decision intervals, not CoflowSim"
                    .to_string(),
            );
        }
        if let Some(k) = ["realloc", "decision_s"]
            .into_iter()
            .find(|k| params.contains_key(*k))
        {
            return err(format!(
                "{name}: {k} is an exact-engine parameter; under coflowsim rates change \
                 only at CoflowSim's admission and departure hooks"
            ));
        }
        let spec = coflowkit_policy::find(name).map_err(|e| SimError {
            message: format!("engine coflowsim: {e}"),
        })?;
        if let Some(need) = spec.needs.first() {
            return err(format!(
                "{name} needs {}, which CoflowSim's jobs do not have",
                need.name()
            ));
        }
        let policy = coflowkit_policy::build(name, params).map_err(|e| SimError {
            message: format!("engine coflowsim: {e}"),
        })?;
        Ok(CsPolicy::Hooked {
            name: name.to_string(),
            policy,
        })
    }

    /// CoflowSim's scheduler name, or `hooks` for a policy object on its hooks.
    pub fn scheduler_name(&self) -> &'static str {
        match self {
            CsPolicy::Builtin(k) => k.coflowsim_name(),
            CsPolicy::Hooked { .. } => Scheduler::Hooked.coflowsim_name(),
        }
    }
}

/// A policy object driven by CoflowSim's hooks.
pub struct Hooked {
    pub name: String,
    policy: AnyPolicy,
    fabric: Fabric,
    data: ViewData,
    out: Decision,
    /// Rate of each path for path-mode answers (bytes/s).
    path_rate: Vec<f64>,
    prev_count: Vec<u32>,
    /// The first bad answer, reported when the run ends.
    pub error: Option<String>,
}

impl Hooked {
    pub fn new(
        name: &str,
        policy: AnyPolicy,
        w: &Workload,
        racks: usize,
        jobs: &[Job],
    ) -> Result<Hooked, SimError> {
        let err = |m: String| SimError { message: m };
        let mut fabric = Fabric::big_switch(racks as u32, RACK_BYTES_PER_SEC)
            .map_err(|e| err(format!("engine coflowsim: {e}")))?;
        let mut d = ViewData::default();
        for (k, job) in jobs.iter().enumerate() {
            let first = d.flow_coflow.len() as u32;
            let (mut length, mut size) = (0.0f64, 0.0);
            let mut idx = 0u32;
            for (r, red) in job.reducers.iter().enumerate() {
                let bytes = job.flow_bytes[r];
                for &src in &job.mappers {
                    let path = fabric
                        .route(src, red.rack, 0)
                        .map_err(|e| err(format!("engine coflowsim: {e}")))?;
                    d.flow_coflow.push(k as u32);
                    d.flow_index.push(idx);
                    d.flow_path.push(path);
                    d.flow_src.push(src);
                    d.flow_dst.push(red.rack);
                    d.flow_src_port.push(NO_PORT);
                    d.flow_dst_port.push(NO_PORT);
                    d.size.push(bytes);
                    length = length.max(bytes);
                    size += bytes;
                    idx += 1;
                }
            }
            let c = &w.coflows[job.coflow];
            d.coflow_id.push(c.id);
            d.arrival.push(job.arrival / SECOND_UNITS as f64);
            d.weight.push(c.weight);
            d.width.push(idx);
            d.first_flow.push(first);
            d.length.push(length);
            d.csize.push(size);
        }
        let (n, nc, np) = (d.flow_coflow.len(), jobs.len(), fabric.num_paths());
        d.flow_stage = vec![0; n];
        d.flow_priority = vec![0; n];
        d.reports = Vec::new();
        d.coflow_started = vec![0; nc];
        d.path_count = vec![0; np];
        d.base = vec![0.0; n];
        d.rate = vec![0.0; n];
        d.since = vec![0.0; n];
        d.path_base = vec![0.0; np];
        d.path_rate = vec![0.0; np];
        d.path_since = vec![0.0; np];
        d.coflow_base = vec![0.0; nc];
        d.coflow_rate = vec![0.0; nc];
        d.coflow_since = vec![0.0; nc];
        Ok(Hooked {
            name: name.to_string(),
            policy,
            fabric,
            data: d,
            out: Decision::default(),
            path_rate: vec![0.0; np],
            prev_count: vec![0; np],
            error: None,
        })
    }
}

/// Asks the policy at time `now` (units) and sets the rates of every active flow.
/// The live jobs must be synced to the current step; the caller rebuilds them.
pub fn decide(sim: &mut Sim, now: i64) {
    let Some(mut h) = sim.hooked.take() else {
        return;
    };
    let now_s = now as f64 / SECOND_UNITS as f64;
    fill_view(sim, &mut h, now_s);
    let Hooked {
        policy,
        fabric,
        data,
        out,
        ..
    } = &mut *h;
    out.reset(data.active.len());
    match policy {
        AnyPolicy::Clairvoyant(p) => p.decide(&data.clairvoyant(fabric, now_s), out),
        AnyPolicy::NonClairvoyant(p) => p.decide(&data.non_clairvoyant(fabric, now_s), out),
    }
    apply(sim, &mut h, now_s);
    sim.hooked = Some(h);
}

/// The active set and progress of CoflowSim's flows now.
fn fill_view(sim: &Sim, h: &mut Hooked, now_s: f64) {
    let d = &mut h.data;
    d.active.clear();
    d.groups.clear();
    let mut live: Vec<u32> = sim
        .live
        .iter()
        .copied()
        .filter(|&j| sim.js[j as usize].active)
        .collect();
    live.sort_unstable();
    for &j in &live {
        let st = &sim.js[j as usize];
        d.coflow_started[j as usize] = d.width[j as usize];
        let start = d.active.len() as u32;
        let first = d.first_flow[j as usize] as usize;
        let mut f = first;
        for r in st.reds.clone() {
            let red = &sim.reds[r as usize];
            let per = sim.jobs[j as usize].mappers.len();
            // A reducer's flows are contiguous; `red.flows` keeps the unfinished ones.
            for g in f..f + per {
                let x = &sim.fl[g];
                let sent = d.size[g] - x.rem.max(0.0);
                d.base[g] = sent;
                d.since[g] = now_s;
            }
            if !red.completed {
                for &g in &red.flows {
                    if !sim.fl[g as usize].done {
                        d.active.push(g);
                    }
                }
            }
            f += per;
        }
        // CoflowSim's own counter (`shuffleBytesCompleted`), as DARK reads it
        d.coflow_base[j as usize] = st.done;
        d.coflow_since[j as usize] = now_s;
        let end = d.active.len() as u32;
        if end > start {
            d.groups.push(ActiveCoflow {
                coflow: j,
                start,
                end,
            });
        }
    }
    // Per-path counts, and the paths whose count changed since the last call.
    for &p in &d.active_paths {
        d.path_count[p as usize] = 0;
    }
    d.active_paths.clear();
    for &f in &d.active {
        let p = d.flow_path[f as usize];
        if d.path_count[p as usize] == 0 {
            d.active_paths.push(p);
        }
        d.path_count[p as usize] += 1;
    }
    d.changed_paths.clear();
    for p in 0..d.path_count.len() {
        if d.path_count[p] != h.prev_count[p] {
            d.changed_paths.push(p as u32);
            h.prev_count[p] = d.path_count[p];
        }
    }
}

/// Sets `bps` and the per-step bytes of every active flow from the decision.
fn apply(sim: &mut Sim, h: &mut Hooked, now_s: f64) {
    let d = &h.data;
    let out = &h.out;
    let n = d.active.len();
    let mut bytes_per_s = vec![0.0f64; n];
    if !out.classes.is_empty() {
        class_rates(sim, d, &out.classes, &mut bytes_per_s);
    } else if !out.path_rates.is_empty() || h.policy.path_mode() {
        for &(p, r) in &out.path_rates {
            h.path_rate[p as usize] = r;
        }
        for (i, &f) in d.active.iter().enumerate() {
            bytes_per_s[i] = h.path_rate[d.flow_path[f as usize] as usize];
        }
    } else {
        bytes_per_s.copy_from_slice(&out.rates[..n]);
    }
    for (i, &f) in d.active.iter().enumerate() {
        let r = bytes_per_s[i];
        if !(r.is_finite() && r >= 0.0) {
            if h.error.is_none() {
                h.error = Some(format!(
                    "policy {} gave flow {} of coflow {} the rate {r} at {now_s:.6} s \
                     (CoflowSim time); rates must be finite and non-negative",
                    h.name,
                    d.flow_index[f as usize],
                    d.coflow_id[d.flow_coflow[f as usize] as usize]
                ));
            }
            continue;
        }
        // `bytes_per_s` here are CoflowSim's doubles at the rack rate; bps = 8 · rate
        let x = &mut sim.fl[f as usize];
        x.bps = r * 8.0;
        x.b = step_bytes(x.bps);
    }
}

/// `CoflowSimulatorDark.updateRates` over (class, coflow) groups: strict priority
/// by class, coflows in arrival order inside a class, each group's flows sharing
/// what is left port by port by their counts.
fn class_rates(sim: &Sim, d: &ViewData, classes: &[u8], out: &mut [f64]) {
    let n = sim.racks;
    let mut groups: Vec<(u8, u32, usize)> = d
        .active
        .iter()
        .enumerate()
        .map(|(i, &f)| (classes[i], d.flow_coflow[f as usize], i))
        .collect();
    groups.sort_unstable();
    let mut send_free = vec![RACK_BITS_PER_SEC; n];
    let mut recv_free = vec![RACK_BITS_PER_SEC; n];
    let mut nmap = vec![0u32; n];
    let mut nred = vec![0u32; n];
    let mut send_used = vec![0.0f64; n];
    let mut recv_used = vec![0.0f64; n];
    let mut counted: Vec<usize> = Vec::new();
    let mut a = 0;
    while a < groups.len() {
        let mut b = a;
        while b < groups.len() && groups[b].0 == groups[a].0 && groups[b].1 == groups[a].1 {
            b += 1;
        }
        let members = &groups[a..b];
        counted.clear();
        for &(_, _, i) in members {
            let f = d.active[i] as usize;
            let (src, dst) = (d.flow_src[f] as usize, d.flow_dst[f] as usize);
            if recv_free[dst] <= ZERO || send_free[src] <= ZERO {
                continue;
            }
            nmap[src] += 1;
            nred[dst] += 1;
            counted.push(i);
        }
        for &i in &counted {
            let f = d.active[i] as usize;
            let (src, dst) = (d.flow_src[f] as usize, d.flow_dst[f] as usize);
            let mut m = jmin(
                send_free[src] / nmap[src] as f64,
                recv_free[dst] / nred[dst] as f64,
            );
            if m <= ZERO {
                m = 0.0;
            }
            out[i] = m / 8.0;
            send_used[src] += m;
            recv_used[dst] += m;
        }
        for &i in &counted {
            let f = d.active[i] as usize;
            let (src, dst) = (d.flow_src[f] as usize, d.flow_dst[f] as usize);
            send_free[src] -= std::mem::take(&mut send_used[src]);
            recv_free[dst] -= std::mem::take(&mut recv_used[dst]);
            nmap[src] = 0;
            nred[dst] = 0;
        }
        a = b;
    }
}
