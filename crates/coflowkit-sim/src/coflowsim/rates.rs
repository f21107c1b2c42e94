//! CoflowSim's coflow schedulers, as `CoflowSimulator` and `CoflowSimulatorDark`
//! compute them (loops and floating-point operations in its order).
//!
//! * FIFO, SCF, NCF, LCF, SEBF (`updateRatesDynamicAlpha`): in the coflow order,
//!   each coflow gets MADD rates `bytes·8/α` on the capacity its predecessors left
//!   (α = its slowest port on that capacity); a coflow with a port already full is
//!   skipped, and the skipped ones share what is left flow by flow; then every flow,
//!   in the order of deadlines drawn from `Random(17)`, takes what both its ports
//!   still have (the backfill).
//! * DARK (`CoflowSimulatorDark`): 10 queues with limits 10 MB · 10^q on bytes sent,
//!   FIFO inside a queue; each coflow in turn shares what is left among its flows
//!   port by port.
//!
//! The order of a new coflow among the others is fixed at its admission
//! (`addToSortedJobs`): SCF by its longest reducer / #mappers, NCF by
//! min(#mapper racks, #reducer racks), LCF by bytes left (per-rack counters, so
//! of the other coflows *at that moment*), SEBF by its static α.

use super::engine::{jmin, step_bytes, Scheduler, Sim};
use super::jobs::{JAVA_MIN_VALUE, RACK_BITS_PER_SEC, ZERO};

pub const DARK_QUEUES: usize = 10;
const DARK_FIRST_LIMIT: f64 = 1_048_576.0 * 10.0;
const DARK_MULT: f64 = 10.0;

fn cmp_f(a: f64, b: f64) -> i32 {
    if a == b {
        0
    } else if a < b {
        -1
    } else {
        1
    }
}

/// `Job.calcShuffleBytesLeft` now: the per-rack counters summed in rack order.
fn bytes_left(sim: &mut Sim, j: u32) -> f64 {
    let s = sim.sigma;
    let mut sum = 0.0;
    for r in sim.js[j as usize].reds.clone() {
        sim.sync_red(r, s);
        sum += sim.reds[r as usize].per;
    }
    sum
}

/// `CoflowSimulator.addToSortedJobs`: before the first coflow it compares below.
pub fn add_sorted(sim: &mut Sim, j: u32) {
    if matches!(sim.kind, Scheduler::Fifo | Scheduler::Hooked) {
        sim.sorted.push(j);
        return;
    }
    let key = |sim: &mut Sim, x: u32| -> f64 {
        let job = &sim.jobs[x as usize];
        match sim.kind {
            Scheduler::Scf => job.max_shuffle / job.mappers.len() as f64,
            Scheduler::Ncf => job.mappers.len().min(job.reducers.len()) as f64,
            Scheduler::Sebf => job.alpha,
            _ => bytes_left(sim, x),
        }
    };
    let mine = key(sim, j);
    let mut index = 0;
    for k in 0..sim.sorted.len() {
        let other = sim.sorted[k];
        if cmp_f(mine, key(sim, other)) < 0 {
            break;
        }
        index += 1;
    }
    sim.sorted.insert(index, j);
}

/// `layoutFlowsInJobOrder`: only the unfinished reducers of the coflows in order
/// (or in the queues) move; everything else stops until the next layout.
pub fn layout(sim: &mut Sim) {
    for &j in &sim.live {
        for r in sim.js[j as usize].reds.clone() {
            for &f in &sim.reds[r as usize].flows {
                sim.fl[f as usize].laid = false;
            }
        }
    }
    let order: Vec<u32> = if sim.kind == Scheduler::Dark {
        sim.queues.iter().flatten().copied().collect()
    } else {
        sim.sorted.clone()
    };
    for j in order {
        for r in sim.js[j as usize].reds.clone() {
            if sim.reds[r as usize].completed {
                continue;
            }
            for &f in &sim.reds[r as usize].flows {
                sim.fl[f as usize].laid = true;
            }
        }
    }
}

/// Dense per-rack scratch arrays.
struct Ports {
    send: Vec<f64>,
    recv: Vec<f64>,
}

impl Ports {
    fn new(n: usize, v: f64) -> Self {
        Ports {
            send: vec![v; n],
            recv: vec![v; n],
        }
    }
}

/// `calcAlphaOnline`: the coflow's slowest port on the free capacity, or −1 when
/// one of its ports with bytes left has none.
fn alpha_online(
    sim: &Sim,
    j: u32,
    free: &Ports,
    bytes: &mut Ports,
    touched: &mut Vec<usize>,
) -> f64 {
    touched.clear();
    for r in sim.js[j as usize].reds.clone() {
        let red = &sim.reds[r as usize];
        let d = red.rack as usize;
        bytes.recv[d] = red.left;
        touched.push(d);
        for &f in &red.flows {
            let x = &sim.fl[f as usize];
            bytes.send[x.src as usize] += x.rem;
            touched.push(x.src as usize);
        }
    }
    touched.sort_unstable();
    touched.dedup();
    let mut unknown = false;
    let (mut ms, mut mr) = (JAVA_MIN_VALUE, JAVA_MIN_VALUE);
    for &i in touched.iter() {
        if (bytes.send[i] > 0.0 && free.send[i] <= ZERO)
            || (bytes.recv[i] > 0.0 && free.recv[i] <= ZERO)
        {
            unknown = true;
        }
        let s = bytes.send[i] * 8.0 / free.send[i];
        let r = bytes.recv[i] * 8.0 / free.recv[i];
        if s > ms {
            ms = s;
        }
        if r > mr {
            mr = r;
        }
        bytes.send[i] = 0.0;
        bytes.recv[i] = 0.0;
    }
    if unknown {
        -1.0
    } else {
        ms.max(mr)
    }
}

/// `updateRatesDynamicAlpha(curTime, false)` without deadlines.
pub fn madd_with_backfill(sim: &mut Sim, now: i64) {
    let n = sim.racks;
    let mut free = Ports::new(n, RACK_BITS_PER_SEC);
    let mut bytes = Ports::new(n, 0.0);
    let mut used = Ports::new(n, 0.0);
    let mut touched = Vec::new();
    let mut skipped = Vec::new();
    let order = sim.sorted.clone();
    for &j in &order {
        for r in sim.js[j as usize].reds.clone() {
            for &f in &sim.reds[r as usize].flows {
                sim.fl[f as usize].bps = 0.0;
            }
        }
        let alpha = alpha_online(sim, j, &free, &mut bytes, &mut touched);
        if alpha == -1.0 {
            skipped.push(j);
            continue;
        }
        let mut used_at: Vec<usize> = Vec::new();
        for r in sim.js[j as usize].reds.clone() {
            let dst = sim.reds[r as usize].rack as usize;
            if free.recv[dst] <= ZERO {
                continue;
            }
            for k in 0..sim.reds[r as usize].flows.len() {
                let f = sim.reds[r as usize].flows[k] as usize;
                let src = sim.fl[f].src as usize;
                let mut cur = sim.fl[f].rem * 8.0 / alpha;
                if cur > free.send[src] || cur > free.recv[dst] {
                    cur = jmin(free.send[src], free.recv[dst]);
                }
                used.send[src] += cur;
                used.recv[dst] += cur;
                used_at.push(src);
                used_at.push(dst);
                sim.fl[f].bps = cur;
            }
        }
        subtract(&mut free, &mut used, &mut used_at);
    }
    fair_share(sim, &skipped, &mut free, &mut used);
    // Backfill in deadline order (stable: ties keep the coflow order).
    let mut edf = order.clone();
    let key = |j: u32| -> i32 {
        let job = &sim.jobs[j as usize];
        (sim.js[j as usize].start + job.deadline - now as f64) as i32
    };
    edf.sort_by(|&a, &b| key(a).wrapping_sub(key(b)).cmp(&0));
    for j in edf {
        for r in sim.js[j as usize].reds.clone() {
            let dst = sim.reds[r as usize].rack as usize;
            if free.recv[dst] <= ZERO {
                continue;
            }
            for k in 0..sim.reds[r as usize].flows.len() {
                let f = sim.reds[r as usize].flows[k] as usize;
                let src = sim.fl[f].src as usize;
                let mut m = jmin(free.send[src], free.recv[dst]);
                if m <= ZERO {
                    m = 0.0;
                }
                sim.fl[f].bps += m;
                free.send[src] -= m;
                free.recv[dst] -= m;
            }
        }
    }
    set_steps(sim, &order);
}

/// `free -= used` on the racks used, then `used` back to zero (Java subtracts on
/// every rack; the others subtract 0, which changes nothing).
fn subtract(free: &mut Ports, used: &mut Ports, at: &mut Vec<usize>) {
    at.sort_unstable();
    at.dedup();
    for &i in at.iter() {
        free.send[i] -= used.send[i];
        free.recv[i] -= used.recv[i];
        used.send[i] = 0.0;
        used.recv[i] = 0.0;
    }
    at.clear();
}

/// `updateRatesFairShare` over the skipped coflows: each flow gets
/// `min(send free / flows at its mapper, recv free / flows at its reducer)`.
fn fair_share(sim: &mut Sim, jobs: &[u32], free: &mut Ports, used: &mut Ports) {
    if jobs.is_empty() {
        return;
    }
    let n = sim.racks;
    let mut nmap = vec![0u32; n];
    let mut nred = vec![0u32; n];
    for &j in jobs {
        for r in sim.js[j as usize].reds.clone() {
            let dst = sim.reds[r as usize].rack as usize;
            if free.recv[dst] <= ZERO {
                continue;
            }
            for &f in &sim.reds[r as usize].flows {
                let src = sim.fl[f as usize].src as usize;
                if free.send[src] <= ZERO {
                    continue;
                }
                nmap[src] += 1;
                nred[dst] += 1;
            }
        }
    }
    share_by_counts(sim, jobs, free, used, &nmap, &nred);
}

/// The second half of `updateRatesFairShare` and of DARK's per-coflow rule: each
/// counted flow gets `min(send free / nmap, recv free / nred)` (0 below CoflowSim's
/// zero), and the capacity used is taken from `free`.
fn share_by_counts(
    sim: &mut Sim,
    jobs: &[u32],
    free: &mut Ports,
    used: &mut Ports,
    nmap: &[u32],
    nred: &[u32],
) {
    let mut at = Vec::new();
    for &j in jobs {
        for r in sim.js[j as usize].reds.clone() {
            let dst = sim.reds[r as usize].rack as usize;
            if free.recv[dst] <= ZERO || nred[dst] == 0 {
                continue;
            }
            for k in 0..sim.reds[r as usize].flows.len() {
                let f = sim.reds[r as usize].flows[k] as usize;
                let src = sim.fl[f].src as usize;
                if free.send[src] <= ZERO || nmap[src] == 0 {
                    continue;
                }
                let mut m = jmin(
                    free.send[src] / nmap[src] as f64,
                    free.recv[dst] / nred[dst] as f64,
                );
                if m <= ZERO {
                    m = 0.0;
                }
                sim.fl[f].bps = m;
                used.send[src] += m;
                used.recv[dst] += m;
                at.push(src);
                at.push(dst);
            }
        }
    }
    subtract(free, used, &mut at);
}

/// Per-step bytes from the new rates, for every flow of the given coflows.
fn set_steps(sim: &mut Sim, jobs: &[u32]) {
    for &j in jobs {
        for r in sim.js[j as usize].reds.clone() {
            for &f in &sim.reds[r as usize].flows {
                let x = &mut sim.fl[f as usize];
                x.b = step_bytes(x.bps);
            }
        }
    }
}

/// `CoflowSimulatorDark.updateJobOrder`: a coflow moves down one queue per pass
/// when its bytes sent passed the queue's limit (and may move again in the next
/// queue's pass).
pub fn dark_order(sim: &mut Sim) {
    let s = sim.sigma;
    for i in 0..DARK_QUEUES {
        let mut to_move = Vec::new();
        for k in 0..sim.queues[i].len() {
            let j = sim.queues[i][k];
            sim.sync_job_done(j, s);
            let size = sim.js[j as usize].done;
            let mut cur_q: i64 = 0;
            let mut lim = DARK_FIRST_LIMIT;
            while lim < size {
                cur_q += 1;
                lim *= DARK_MULT;
            }
            if sim.js[j as usize].queue < cur_q {
                sim.js[j as usize].queue += 1;
                to_move.push(j);
            }
        }
        if i + 1 < DARK_QUEUES && !to_move.is_empty() {
            sim.queues[i].retain(|x| !to_move.contains(x));
            sim.queues[i + 1].extend_from_slice(&to_move);
        }
    }
}

/// `CoflowSimulatorDark.updateRates`: queue by queue, coflow by coflow, each flow
/// gets `min(send free / its coflow's flows at the mapper, recv free / … at the
/// reducer)` of what the coflows before left.
pub fn dark_rates(sim: &mut Sim) {
    let n = sim.racks;
    let mut free = Ports::new(n, RACK_BITS_PER_SEC);
    let mut used = Ports::new(n, 0.0);
    let mut nmap = vec![0u32; n];
    let mut nred = vec![0u32; n];
    let order: Vec<u32> = sim.queues.iter().flatten().copied().collect();
    for &j in &order {
        let mut counted: Vec<usize> = Vec::new();
        for r in sim.js[j as usize].reds.clone() {
            let dst = sim.reds[r as usize].rack as usize;
            if free.recv[dst] <= ZERO {
                for &f in &sim.reds[r as usize].flows {
                    sim.fl[f as usize].bps = 0.0;
                }
                continue;
            }
            for &f in &sim.reds[r as usize].flows {
                let src = sim.fl[f as usize].src as usize;
                if free.send[src] <= ZERO {
                    sim.fl[f as usize].bps = 0.0;
                    continue;
                }
                nmap[src] += 1;
                nred[dst] += 1;
                counted.push(src);
                counted.push(dst);
            }
        }
        share_by_counts(sim, &[j], &mut free, &mut used, &nmap, &nred);
        for i in counted {
            nmap[i] = 0;
            nred[i] = 0;
        }
    }
    set_steps(sim, &order);
}
