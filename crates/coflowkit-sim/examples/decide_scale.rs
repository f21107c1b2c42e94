//! How long one full allocation takes on a large big switch (the Coflex paper's
//! scalability claim: 26 ms at 10,000 machines).
//!
//! For each port count N, coflows are drawn (seeded) from the FB trace with their
//! own flows (widths and sizes as in the trace); each coflow's ports are mapped to
//! distinct random ports among the N. Calls follow arrivals: call i sees coflows
//! i..i+100 active (100 concurrent, the newest just arrived, the oldest of the
//! previous call gone), so every call reallocates after a coflow arrival and no
//! call is a no-op. Each call is timed alone (the policy's `decide`); the median
//! and 99th percentile of 200 calls are printed.
//!
//! `cargo run --release -p coflowkit-sim --example decide_scale -- TRACE [POLICY[:k=v,..]]... [--ports 1000,10000,40000]`

use coflowkit_model::{Fabric, Pcg32, Workload};
use coflowkit_policy::view::ViewData;
use coflowkit_policy::{ActiveCoflow, AnyPolicy, Decision, NO_PORT};
use std::collections::{BTreeMap, HashMap};
use std::time::Instant;

const CONCURRENT: usize = 100;
const CALLS: usize = 200;
const SEED: u64 = 1;
/// 1 Gbps in bytes/s (coflowkit's big switch).
const LINK: f64 = 1e9 / 8.0;

struct Scaled {
    fabric: Fabric,
    data: ViewData,
    flows: usize,
}

/// `CONCURRENT + CALLS` coflows drawn from `w`, their ports spread over `ports`.
fn build(w: &Workload, ports: u32) -> Scaled {
    let mut fabric = Fabric::big_switch(ports, LINK).unwrap();
    let mut rng = Pcg32::new(SEED, ports as u64);
    let n = CONCURRENT + CALLS;
    let mut d = ViewData::default();
    for k in 0..n {
        let c = &w.coflows[rng.below(w.coflows.len() as u32) as usize];
        let mut map: HashMap<(bool, u32), u32> = HashMap::new();
        let mut used_src: Vec<u32> = Vec::new();
        let mut used_dst: Vec<u32> = Vec::new();
        let pick = |rng: &mut Pcg32, used: &mut Vec<u32>| loop {
            let p = rng.below(ports);
            if !used.contains(&p) {
                used.push(p);
                return p;
            }
        };
        let first = d.flow_coflow.len() as u32;
        let (mut length, mut size) = (0.0f64, 0.0);
        for (i, f) in w.flows[c.flows()].iter().enumerate() {
            let s = *map
                .entry((false, f.src))
                .or_insert_with(|| pick(&mut rng, &mut used_src));
            let t = *map
                .entry((true, f.dst))
                .or_insert_with(|| pick(&mut rng, &mut used_dst));
            d.flow_coflow.push(k as u32);
            d.flow_index.push(i as u32);
            d.flow_path.push(fabric.route(s, t, 0).unwrap());
            d.flow_src.push(s);
            d.flow_dst.push(t);
            d.flow_src_port.push(NO_PORT);
            d.flow_dst_port.push(NO_PORT);
            d.size.push(f.size_bytes);
            length = length.max(f.size_bytes);
            size += f.size_bytes;
        }
        d.coflow_id.push(k as u64 + 1);
        d.arrival.push(k as f64);
        d.weight.push(1.0);
        d.width.push(c.width);
        d.first_flow.push(first);
        d.length.push(length);
        d.csize.push(size);
    }
    let (nf, np) = (d.flow_coflow.len(), fabric.num_paths());
    d.flow_stage = vec![0; nf];
    d.flow_priority = vec![0; nf];
    d.coflow_started = vec![0; n];
    d.path_count = vec![0; np];
    d.base = vec![0.0; nf];
    d.rate = vec![0.0; nf];
    d.since = vec![0.0; nf];
    d.path_base = vec![0.0; np];
    d.path_rate = vec![0.0; np];
    d.path_since = vec![0.0; np];
    d.coflow_base = vec![0.0; n];
    d.coflow_rate = vec![0.0; n];
    d.coflow_since = vec![0.0; n];
    Scaled {
        fabric,
        data: d,
        flows: nf,
    }
}

/// Makes coflows `lo..lo + CONCURRENT` the active ones, as a driver would after
/// the arrival of coflow `lo + CONCURRENT - 1`.
fn activate(s: &mut Scaled, lo: usize) {
    let d = &mut s.data;
    let old = std::mem::take(&mut d.path_count);
    d.path_count = vec![0; old.len()];
    d.active.clear();
    d.groups.clear();
    d.active_paths.clear();
    for k in lo..lo + CONCURRENT {
        d.coflow_started[k] = d.width[k];
        let start = d.active.len() as u32;
        let f0 = d.first_flow[k];
        for f in f0..f0 + d.width[k] {
            d.active.push(f);
            let p = d.flow_path[f as usize] as usize;
            if d.path_count[p] == 0 {
                d.active_paths.push(p as u32);
            }
            d.path_count[p] += 1;
        }
        d.groups.push(ActiveCoflow {
            coflow: k as u32,
            start,
            end: d.active.len() as u32,
        });
    }
    d.changed_paths = (0..old.len() as u32)
        .filter(|&p| old[p as usize] != d.path_count[p as usize])
        .collect();
}

fn decide(p: &mut AnyPolicy, s: &Scaled, out: &mut Decision, now: f64) {
    out.reset(s.data.active.len());
    match p {
        AnyPolicy::Clairvoyant(x) => x.decide(&s.data.clairvoyant(&s.fabric, now), out),
        AnyPolicy::NonClairvoyant(x) => x.decide(&s.data.non_clairvoyant(&s.fabric, now), out),
    }
}

fn percentile(sorted: &[f64], q: f64) -> f64 {
    let i = ((sorted.len() - 1) as f64 * q).round() as usize;
    sorted[i]
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let trace = args
        .first()
        .expect("usage: decide_scale TRACE [POLICY]... [--ports N,..]");
    let mut ports: Vec<u32> = vec![1000, 10_000, 40_000];
    let mut policies: Vec<String> = Vec::new();
    let mut i = 1;
    while i < args.len() {
        if args[i] == "--ports" {
            ports = args[i + 1].split(',').map(|x| x.parse().unwrap()).collect();
            i += 2;
        } else {
            policies.push(args[i].clone());
            i += 1;
        }
    }
    if policies.is_empty() {
        policies.push("coflex:alpha=0.5".to_string());
    }
    let text = std::fs::read_to_string(trace).expect("read trace");
    let w = coflowkit_trace::read_benchmark(trace, &text).expect("parse trace");
    println!("| ports | policy | active flows (mean) | median (ms) | p99 (ms) | max (ms) |");
    println!("|---:|---|---:|---:|---:|---:|");
    for &n in &ports {
        let mut s = build(&w, n);
        for spec in &policies {
            let (name, rest) = spec.split_once(':').unwrap_or((spec, ""));
            let params: BTreeMap<String, String> = rest
                .split(',')
                .filter(|kv| !kv.is_empty())
                .map(|kv| {
                    let (k, v) = kv.split_once('=').expect("k=v");
                    (k.to_string(), v.to_string())
                })
                .collect();
            let mut p = coflowkit_policy::build(name, &params).expect("policy");
            let mut out = Decision::default();
            let mut times = Vec::with_capacity(CALLS);
            let mut active = 0usize;
            for call in 0..CALLS {
                activate(&mut s, call);
                active += s.data.active.len();
                let t = Instant::now();
                decide(&mut p, &s, &mut out, call as f64);
                times.push(t.elapsed().as_secs_f64() * 1e3);
                assert!(
                    out.rates.iter().all(|r| r.is_finite()),
                    "a rate is not finite"
                );
            }
            times.sort_by(f64::total_cmp);
            println!(
                "| {n} | {spec} | {} | {:.3} | {:.3} | {:.3} |",
                active / CALLS,
                percentile(&times, 0.5),
                percentile(&times, 0.99),
                times[CALLS - 1]
            );
        }
        eprintln!("{n} ports: {} flows built", s.flows);
    }
}
