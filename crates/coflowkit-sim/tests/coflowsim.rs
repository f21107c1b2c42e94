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
    run_with(text, policy, &[])
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

/// (admitted, finish, duration) per coflow id for a registry policy on CoflowSim's
/// hooks (or one of its own schedulers), with parameters.
fn run_with(text: &str, policy: &str, params: &[(&str, &str)]) -> Jobs {
    use coflowkit_sim::coflowsim::{simulate_coflowsim_with, CsPolicy};
    let w = read_benchmark("t", text).unwrap();
    let p: BTreeMap<String, String> = params
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let cs = CsPolicy::resolve(policy, &p).unwrap();
    let r = simulate_coflowsim_with(&w, cs, &CsOptions::default()).unwrap();
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
fn a_hooked_policy_keeps_its_rates_until_a_coflow_departs() {
    // One coflow, mapper rack 0, reducers rack 1 (1 MB) and rack 2 (3 MB): flows
    // 0→1 of 1 MB and 0→2 of 3 MB. NC-DRF: two flows on rack 0's uplink, ½ each
    // (½ MB per 8-unit step). 0→1 ends after 2 steps (16 units), but only a coflow
    // departure calls the policy again, so 0→2 keeps ½ MB/step: its 2 MB left take
    // 4 more steps, 48 units in all. (Re-rated at the flow's end it would be 32.)
    let got = run_with("3 1\n1 0 1 0 2 1:1.0 2:3.0\n", "ncdrf", &[]);
    assert_eq!(got[&1], (0.0, 48.0, 48.0));
}

#[test]
fn a_departure_calls_the_hooked_policy_again() {
    // Coflow 1: rack 0 → rack 1, 2 MB; coflow 2: rack 2 → rack 1, 1 MB; both at 0.
    // DRF: both dominant on rack 1's downlink, ½ MB/step each. Coflow 2 ends after
    // 2 steps (16); its departure re-rates coflow 1 to the whole link, and its 1 MB
    // left takes one step (24).
    let got = run_with("3 2\n1 0 1 0 1 1:2.0\n2 0 1 2 1 1:1.0\n", "drf", &[]);
    assert_eq!(got[&1], (0.0, 24.0, 24.0));
    assert_eq!(got[&2], (0.0, 16.0, 16.0));
}

#[test]
fn classes_are_served_as_coflowsims_dark_serves_its_queues() {
    // spq with no workload priorities: every flow in class 0, so coflows are served
    // in arrival order, each taking what its ports have left. Coflow 1 (rack 0 →
    // rack 1, 2 MB) gets all of rack 1's downlink: done after 2 steps (16). Coflow 2
    // (rack 2 → rack 1, 1 MB) finds rack 1 full and waits; on coflow 1's departure
    // it gets the link: one step, 24. (Max-min inside the class would share.)
    let got = run_with("3 2\n1 0 1 0 1 1:2.0\n2 0 1 2 1 1:1.0\n", "spq", &[]);
    assert_eq!(got[&1], (0.0, 16.0, 16.0));
    assert_eq!(got[&2], (0.0, 24.0, 24.0));
}

#[test]
fn hooked_parameters_reach_the_policy() {
    // PS-P on one 4 MB flow rack 0 → rack 1, with a 2 MB flow rack 2 → rack 1 of
    // another coflow: each coflow gets ½ of rack 1 (its per-link share). With
    // any spare rule nothing is spare, so all agree: coflow 2 ends at
    // 32 (2 MB at ½ MB/step); coflow 1 has 2 MB left, 2 steps at full rate: 48.
    let text = "3 2\n1 0 1 0 1 1:4.0\n2 0 1 2 1 1:2.0\n";
    for spare in ["none", "onepass", "maxmin"] {
        let got = run_with(text, "psp", &[("spare", spare)]);
        assert_eq!(got[&1], (0.0, 48.0, 48.0), "spare={spare}");
        assert_eq!(got[&2], (0.0, 32.0, 32.0), "spare={spare}");
    }
}

#[test]
fn policies_the_engine_cannot_run_are_refused_with_the_reason() {
    use coflowkit_sim::coflowsim::CsPolicy;
    let none = BTreeMap::new();
    let msg = |name: &str, p: &BTreeMap<String, String>| match CsPolicy::resolve(name, p) {
        Ok(_) => panic!("{name} was accepted"),
        Err(e) => e.message,
    };
    assert!(msg("coda", &none).contains("exact engine"));
    assert!(msg("stream", &none).contains("stages"));
    assert!(msg("nosuch", &none).contains("unknown policy"));
    let q: BTreeMap<String, String> = [("queues".to_string(), "0".to_string())].into();
    assert!(msg("aalo", &q).contains("queues"));
    let r: BTreeMap<String, String> = [("realloc".to_string(), "coflow".to_string())].into();
    assert!(msg("ncdrf", &r).contains("hooks"));
    let d: BTreeMap<String, String> = [("decision_s".to_string(), "1".to_string())].into();
    assert!(msg("fair", &d).contains("decision_s is an exact-engine parameter"));
    let bad: BTreeMap<String, String> = [("spare".to_string(), "maybe".to_string())].into();
    assert!(msg("psp", &bad).contains("spare"));
}

#[test]
fn aalos_coflowsim_variant_on_the_hooks_is_coflowsims_dark() {
    // The policy object `aalo:variant=coflowsim`, called at CoflowSim's hooks on a
    // view of its flows, gives CoflowSim's own DARK output coflow by coflow.
    let csv = std::fs::read_to_string(fixtures().join("coflowsim.csv")).unwrap();
    let mut want: BTreeMap<String, Jobs> = BTreeMap::new();
    for line in csv.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        if f[1] != "aalo" {
            continue;
        }
        let v = |i: usize| f[i].parse::<f64>().unwrap();
        want.entry(f[0].to_string())
            .or_default()
            .insert(f[2].parse().unwrap(), (v(3), v(4), v(5)));
    }
    assert_eq!(want.len(), 12);
    for (trace, jobs) in &want {
        let text = std::fs::read_to_string(fixtures().join(trace)).unwrap();
        let got = run_with(&text, "aalo", &[("variant", "coflowsim")]);
        assert_eq!(&got, jobs, "{trace}");
    }
}
