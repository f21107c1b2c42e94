//! `--engine coflowsim` against CoflowSim's own outputs (fixtures/coflowsim, made by
//! running CoflowSim itself; no Java needed here) and against hand-worked cases.

use coflowkit_sim::coflowsim::{simulate_coflowsim, CsOptions, Scheduler};
use coflowkit_trace::read_benchmark;
use std::collections::BTreeMap;
use std::path::PathBuf;

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/coflowsim")
}

/// (admitted, finish, duration) per coflow id, in CoflowSim units.
type Jobs = BTreeMap<u64, (f64, f64, f64)>;

fn run(text: &str, policy: &str) -> Jobs {
    let w = read_benchmark("t", text).unwrap();
    let kind = Scheduler::from_policy(policy).unwrap();
    let r = simulate_coflowsim(&w, kind, &CsOptions::default()).unwrap();
    assert!(r.complete);
    w.coflows
        .iter()
        .enumerate()
        .map(|(c, co)| {
            (
                co.id,
                (r.admitted_units[c], r.finish_units[c], r.duration_units[c]),
            )
        })
        .collect()
}

#[test]
fn every_coflow_equals_coflowsims_own_output() {
    let csv = std::fs::read_to_string(fixtures().join("coflowsim.csv")).unwrap();
    let mut want: BTreeMap<(String, String), Jobs> = BTreeMap::new();
    for line in csv.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        let v = |i: usize| f[i].parse::<f64>().unwrap();
        want.entry((f[0].to_string(), f[1].to_string()))
            .or_default()
            .insert(f[2].parse().unwrap(), (v(3), v(4), v(5)));
    }
    assert_eq!(want.len(), 12 * 8, "12 traces × 8 schedulers");
    for ((trace, policy), jobs) in &want {
        let text = std::fs::read_to_string(fixtures().join(trace)).unwrap();
        let got = run(&text, policy);
        assert_eq!(&got, jobs, "{trace} under {policy}");
    }
}

#[test]
fn fair_shares_a_reducer_rack_then_gives_the_survivor_all_of_it() {
    // Coflow 1: rack 0 → rack 1, 2 MB; coflow 2: rack 2 → rack 1, 1 MB; both at 0.
    // Rack 1 has two flows: ½ MB each per 8-unit step. Coflow 2 ends after 2 steps
    // (16 units); coflow 1 has 1 MB left and moves it in one more step (24).
    let got = run("3 2\n1 0 1 0 1 1:2.0\n2 0 1 2 1 1:1.0\n", "fair");
    assert_eq!(got[&1], (0.0, 24.0, 24.0));
    assert_eq!(got[&2], (0.0, 16.0, 16.0));
}

#[test]
fn admission_is_early_and_by_epoch() {
    // Arrivals 5000 and 10240 are admitted at 0 (the first epoch admits every job
    // arriving up to 0 + 10240); 10241 waits for the epoch at 10240. Each moves
    // 1 MB alone: one step, 8 units, from its admission.
    let got = run(
        "4 3\n1 5000 1 0 1 1:1.0\n2 10240 1 2 1 3:1.0\n3 10241 1 0 1 1:1.0\n",
        "fifo",
    );
    assert_eq!(got[&1], (0.0, 8.0, 8.0));
    assert_eq!(got[&2], (0.0, 8.0, 8.0));
    assert_eq!(got[&3], (10240.0, 10248.0, 8.0));
}

#[test]
fn reducers_round_up_to_whole_mb_per_mapper() {
    // 2 mappers, a 3 MB reducer: rounded to 4 MB, 2 MB per flow. Under PFP the
    // reducer rack serves one flow at a time, 1 MB per step: 4 steps = 32 units.
    let got = run("3 1\n1 0 2 0 2 1 1:3.0\n", "pfp");
    assert_eq!(got[&1], (0.0, 32.0, 32.0));
}

#[test]
fn a_fat_tree_or_a_faster_switch_is_refused_with_the_reason() {
    let text = "3 1\n1 0 1 0 1 1:1.0\n";
    let w = read_benchmark("t", text).unwrap();
    let fast = w
        .with_fabric(coflowkit_model::Fabric::from_spec("bigswitch:gbps=10", 3).unwrap())
        .unwrap();
    let e = simulate_coflowsim(&fast, Scheduler::Fair, &CsOptions::default()).unwrap_err();
    assert!(e.message.contains("1 Gbps"), "{}", e.message);
    let e = simulate_coflowsim(&w, Scheduler::Fair, &CsOptions { epoch_units: 12 }).unwrap_err();
    assert!(e.message.contains("multiple of 8"), "{}", e.message);
    let e = simulate_coflowsim(
        &w,
        Scheduler::Fair,
        &CsOptions {
            epoch_units: 1 << 40,
        },
    )
    .unwrap_err();
    assert!(e.message.contains("horizon"), "{}", e.message);
    let huge = read_benchmark("t", "3 1\n1 0 1 0 1 1:1e13\n").unwrap();
    let e = simulate_coflowsim(&huge, Scheduler::Sebf, &CsOptions::default());
    let e = e.unwrap_err();
    assert!(e.message.contains("2^53"), "{}", e.message);
}
