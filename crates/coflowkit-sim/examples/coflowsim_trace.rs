//! Replays a Coflow-Benchmark trace under `--engine coflowsim` and prints one line
//! per coflow as CoflowSim does (`JOB-<id> <admitted> <finish> ... <duration>`,
//! only the fields compared), for diffing against CoflowSim's own output.
//! `cargo run --release -p coflowkit-sim --example coflowsim_trace -- TRACE POLICY[:k=v,...]`
//! (a policy CoflowSim does not have runs on its hooks).
use coflowkit_sim::coflowsim::{simulate_coflowsim_with, CsOptions, CsPolicy};
use std::collections::BTreeMap;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: coflowsim_trace TRACE POLICY");
        std::process::exit(2);
    }
    let text = std::fs::read_to_string(&args[1]).expect("read trace");
    let w = coflowkit_trace::read_benchmark(&args[1], &text).expect("parse trace");
    let (name, rest) = args[2].split_once(':').unwrap_or((&args[2], ""));
    let params: BTreeMap<String, String> = rest
        .split(',')
        .filter(|kv| !kv.is_empty())
        .map(|kv| {
            let (k, v) = kv.split_once('=').expect("parameters are k=v");
            (k.to_string(), v.to_string())
        })
        .collect();
    let policy = CsPolicy::resolve(name, &params).unwrap_or_else(|e| panic!("{}", e.message));
    let t = Instant::now();
    let r = simulate_coflowsim_with(&w, policy, &CsOptions::default()).expect("simulate");
    let wall = t.elapsed().as_secs_f64();
    let mut sum = 0.0;
    for (c, co) in w.coflows.iter().enumerate() {
        println!(
            "JOB-{} {} {} {}",
            co.id, r.admitted_units[c], r.finish_units[c], r.duration_units[c]
        );
        sum += r.duration_units[c];
    }
    println!("{sum}");
    eprintln!(
        "{} coflows, {} steps, {} event steps, {} recomputes, {:.3} s wall",
        w.coflows.len(),
        r.steps,
        r.event_steps,
        r.recomputes,
        wall
    );
}
