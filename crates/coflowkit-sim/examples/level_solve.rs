//! Max-min solvers side by side on one loaded instance: the path-level
//! `TailMaxMin` (what `fair` and the engine's strict-priority classes keep today)
//! against the link-level `LevelMaxMin` (bottleneck groups), under the same
//! churn of flow completions and arrivals. A measurement for the design of
//! rates by bottleneck group (docs/architecture.md), not a timed test.
//!
//! `cargo run --release -p coflowkit-sim --example level_solve -- TRACE`
//! with `FABRIC=fattree:k=8` (default), `FLOWS=N` (the instance: every flow of
//! the first coflows of the trace until N flows, default 60,000), `STEPS=N`
//! (churn steps, default 2,000; each removes one flow from a random path with
//! flows and, every other step, adds one on a random path of the instance),
//! `SEED=N`.
//!
//! Prints, per solver, the time per step and what it names per step (paths
//! whose rate moved; for the level solver also groups whose level moved and
//! paths that changed group), and the largest relative difference of any
//! path's rate from a fresh `MaxMin` solve, checked every 100 steps and at the
//! end.

use coflowkit_alloc::{LevelMaxMin, MaxMin, TailMaxMin};
use coflowkit_model::{Fabric, PathId, Pcg32};
use std::time::Instant;

fn env_parse<T: std::str::FromStr>(name: &str) -> Option<T> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

/// Largest relative difference between `rate(p)` and a fresh solve, over every
/// path with flows.
fn check(f: &Fabric, count: &[u32], rate: impl Fn(PathId) -> f64) -> f64 {
    let paths: Vec<PathId> = (0..count.len() as u32)
        .filter(|&p| count[p as usize] > 0)
        .collect();
    let ns: Vec<u32> = paths.iter().map(|&p| count[p as usize]).collect();
    let mut r = vec![0.0; paths.len()];
    let mut res = f.capacities.clone();
    MaxMin::new().solve_counted(f, &mut res, &paths, &ns, &mut r);
    paths
        .iter()
        .zip(&r)
        .map(|(&p, &want)| (rate(p) - want).abs() / want.abs().max(1.0))
        .fold(0.0, f64::max)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let trace = args.get(1).expect("usage: level_solve TRACE");
    let spec = std::env::var("FABRIC").unwrap_or_else(|_| "fattree:k=8".into());
    let target: usize = env_parse("FLOWS").unwrap_or(60_000);
    let steps: usize = env_parse("STEPS").unwrap_or(2_000);
    let seed: u64 = env_parse("SEED").unwrap_or(1);
    let w = coflowkit_trace::read_path(trace, None).expect("cannot read the trace");
    let fab = Fabric::from_spec(&spec, w.fabric.ports()).expect("bad FABRIC");
    let w = w.with_fabric(fab).expect("cannot route the trace");
    let f = &w.fabric;
    let mut count = vec![0u32; f.num_paths()];
    let mut pool = Vec::new();
    let mut coflows = 0;
    for c in &w.coflows {
        if pool.len() >= target {
            break;
        }
        coflows += 1;
        for i in c.flows() {
            let p = w.flows[i].path;
            count[p as usize] += 1;
            pool.push(p);
        }
    }
    let mut live: Vec<PathId> = (0..f.num_paths() as u32)
        .filter(|&p| count[p as usize] > 0)
        .collect();
    live.sort_unstable();
    println!(
        "instance: {spec}, first {coflows} coflows of {trace}: {} flows on {} paths, {} links",
        pool.len(),
        live.len(),
        f.num_links()
    );
    // The churn, drawn once: (path, ±1) per step.
    let mut g = Pcg32::new(seed, 11);
    let mut churn: Vec<Vec<(PathId, i32)>> = Vec::with_capacity(steps);
    let mut c2 = count.clone();
    let mut with_flows = live.clone();
    for s in 0..steps {
        let mut d = Vec::new();
        loop {
            let i = g.below(with_flows.len() as u32) as usize;
            let p = with_flows[i];
            if c2[p as usize] == 0 {
                with_flows.swap_remove(i);
                continue;
            }
            c2[p as usize] -= 1;
            d.push((p, -1));
            break;
        }
        if s % 2 == 1 {
            let p = pool[g.below(pool.len() as u32) as usize];
            if c2[p as usize] == 0 {
                with_flows.push(p);
            }
            c2[p as usize] += 1;
            d.push((p, 1));
        }
        churn.push(d);
    }

    // Fresh solves of the whole instance.
    let ns: Vec<u32> = live.iter().map(|&p| count[p as usize]).collect();
    let mut r = vec![0.0; live.len()];
    let t = Instant::now();
    let mut res = f.capacities.clone();
    MaxMin::new().solve_counted(f, &mut res, &live, &ns, &mut r);
    let t_full = t.elapsed().as_secs_f64();
    let mut lm = LevelMaxMin::new();
    for &p in &live {
        lm.set_count(f, p, count[p as usize]);
    }
    let t = Instant::now();
    lm.solve(f, &f.capacities);
    let t_cold = t.elapsed().as_secs_f64();
    let cold_switches = lm.switched.len();
    let t = Instant::now();
    lm.solve(f, &f.capacities);
    let t_warm = t.elapsed().as_secs_f64();
    let (nnz, on) = lm.size();
    println!("groups x links matrix: {nnz} entries over {on} links with flows");
    println!(
        "fresh solve of every path: MaxMin {:.2} ms; LevelMaxMin {:.2} ms cold ({} paths placed by a switch), {:.2} ms again with nothing changed ({} groups moved)",
        t_full * 1e3,
        t_cold * 1e3,
        cold_switches,
        t_warm * 1e3,
        lm.changed_groups.len()
    );

    // TailMaxMin, chained delta form (what KeptClasses runs per class).
    let mut tm = TailMaxMin::new();
    let mut input = f.capacities.clone();
    let mut output = vec![0.0; f.num_links()];
    let (mut changed, mut moved_out) = (Vec::new(), Vec::new());
    let first: Vec<(PathId, i32)> = live
        .iter()
        .map(|&p| (p, count[p as usize] as i32))
        .collect();
    tm.solve_chained(
        f,
        &mut input,
        None,
        &first,
        &mut changed,
        &mut output,
        &mut moved_out,
    );
    let mut cnt = count.clone();
    let mut named_tail = 0usize;
    let mut worst_tail: f64 = 0.0;
    let mut t_tail = 0.0;
    for (s, d) in churn.iter().enumerate() {
        for &(p, x) in d {
            cnt[p as usize] = (cnt[p as usize] as i32 + x) as u32;
        }
        let t = Instant::now();
        tm.solve_chained(
            f,
            &mut input,
            Some(&[]),
            d,
            &mut changed,
            &mut output,
            &mut moved_out,
        );
        t_tail += t.elapsed().as_secs_f64();
        named_tail += changed.len();
        if (s + 1) % 100 == 0 || s + 1 == steps {
            worst_tail = worst_tail.max(check(f, &cnt, |p| tm.rate_of(p)));
        }
    }

    // LevelMaxMin: counts set, solved, the moved paths listed.
    let mut cnt = count.clone();
    let (mut groups, mut switched, mut named_level) = (0usize, 0usize, 0usize);
    let mut worst_level: f64 = 0.0;
    let mut t_level = 0.0;
    let mut moved = Vec::new();
    lm.stale_pops = 0;
    for (s, d) in churn.iter().enumerate() {
        let t = Instant::now();
        for &(p, x) in d {
            cnt[p as usize] = (cnt[p as usize] as i32 + x) as u32;
            lm.set_count(f, p, cnt[p as usize]);
        }
        lm.solve(f, &f.capacities);
        lm.moved_paths(&mut moved);
        t_level += t.elapsed().as_secs_f64();
        groups += lm.changed_groups.len();
        switched += lm.switched.len();
        named_level += moved.len();
        if (s + 1) % 100 == 0 || s + 1 == steps {
            worst_level = worst_level.max(check(f, &cnt, |p| lm.rate_of(p)));
        }
    }
    let per = |x: f64| x / steps as f64 * 1e3;
    let avg = |x: usize| x as f64 / steps as f64;
    println!("churn of {steps} steps (seed {seed}):");
    println!(
        "  TailMaxMin (chained delta form): {:.3} ms per step, {:.0} paths named per step, largest difference from a fresh solve {:.1e}",
        per(t_tail),
        avg(named_tail),
        worst_tail
    );
    println!(
        "  LevelMaxMin (solve + moved paths): {:.3} ms per step, {:.1} groups moved and {:.1} paths switched per step ({:.0} paths named), largest difference from a fresh solve {:.1e}",
        per(t_level),
        avg(groups),
        avg(switched),
        avg(named_level),
        worst_level
    );
    println!(
        "  stale heap pops per step {:.0}",
        avg(lm.stale_pops as usize)
    );
    println!(
        "  ratio (TailMaxMin / LevelMaxMin time): {:.2}",
        t_tail / t_level
    );
}
