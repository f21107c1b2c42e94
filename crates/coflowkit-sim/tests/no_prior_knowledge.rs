//! The policies that schedule without sizes or without coflows (mcs, pias, coda):
//! CCTs computed by hand on small traces, and the equivalences their definitions
//! imply, run through the engine on a Facebook-like workload.

use coflowkit_model::Workload;
use coflowkit_policy::build;
use coflowkit_sim::{simulate, SimOptions};
use coflowkit_trace::read_text;
use std::collections::BTreeMap;

fn ccts_of(w: &Workload, policy: &str, params: &[(&str, &str)]) -> Vec<f64> {
    let params: BTreeMap<String, String> = params
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let mut p = build(policy, &params).unwrap();
    let opts = SimOptions {
        check_invariants: true,
        ..Default::default()
    };
    let r = simulate(w, &mut p, &opts, None).unwrap();
    w.coflows
        .iter()
        .enumerate()
        .map(|(k, c)| r.coflow_finish_s[k] - c.arrival_s)
        .collect()
}

fn assert_close(got: &[f64], want: &[f64], rel: f64) {
    assert_eq!(got.len(), want.len());
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= rel * w.abs().max(1e-3),
            "coflow {i}: got {g}, want {w}"
        );
    }
}

/// Sincronia format, 4 ports, 1 MB = 1 MiB, C = 128 MiB/s. Coflow 1 at 0 ms:
/// three flows of 8 MiB, 0→3, 1→3, 2→3 (wide). Coflow 2 at 0 ms: one flow of
/// 2 MiB, 3→3 (narrow). All of them need down3.
const BATCH: &str = "4 2\n1 0 3 3 1\n0 3 8 1 3 8 2 3 8\n2 0 1 1 1\n3 3 2\n";

#[test]
fn mcs_lets_the_narrow_newcomer_of_a_batch_go_first() {
    let w = read_text("batch", BATCH, None).unwrap();
    // aalo: both in queue 0, FIFO serves coflow 1 (smaller id): down3 shared by its
    // three flows. At 10/128 s = 0.078125 it has sent 10 MiB and drops to queue 1;
    // coflow 2 takes down3 and its 2 MiB end at 0.078125 + 2/128 = 0.09375. Coflow
    // 1's last 14 MiB take 14/128 = 0.109375 s: done at 0.203125.
    assert_close(&ccts_of(&w, "aalo", &[]), &[0.203125, 0.09375], 1e-9);
    // mcs with deltas=2, priorities=1,2, queues=2, Δ_w = 2: coflow 1 (width 3) is
    // in class 1 and starts in queue 2 (1-based); coflow 2 (width 1) in queue 1.
    // Coflow 2 first: 2/128 = 0.015625. Then coflow 1's 24 MiB: 0.1875 s more.
    let p = [
        ("deltas", "2"),
        ("priorities", "1,2"),
        ("queues", "2"),
        ("narrow_width", "2"),
    ];
    assert_close(&ccts_of(&w, "mcs", &p), &[0.203125, 0.015625], 1e-9);
    // Width unknown for every coflow: both start in queue 1, FIFO, and coflow 1 is
    // demoted when its length sent crosses θ^w_1 = 1 MiB: each of its three flows
    // has sent 1 MiB at 3/128 s = 0.0234375 (128/3 MiB/s each). Coflow 2 then runs:
    // done at 0.0234375 + 0.015625 = 0.0390625; coflow 1's 21 MiB left end at
    // 0.0390625 + 21/128 = 0.203125.
    let p = [
        ("deltas", "2"),
        ("priorities", "1,2"),
        ("queues", "2"),
        ("narrow_width", "2"),
        ("width_unknown", "1"),
    ];
    assert_close(&ccts_of(&w, "mcs", &p), &[0.203125, 0.0390625], 1e-9);
}

/// The first coflows of the synthetic Facebook-like workload: enough overlap for
/// queues, crossings and completions to interleave.
fn fb_head(n: usize) -> Workload {
    coflowkit_trace::synthetic::synthetic_fb(3).unwrap().head(n)
}

#[test]
fn coda_without_extras_on_true_labels_is_aalo() {
    let w = fb_head(40);
    let aalo = ccts_of(&w, "aalo", &[]);
    let coda = ccts_of(&w, "coda", &[("late_binding", "false"), ("intra", "false")]);
    // Same rule; labelled coflows cross their thresholds through At wake-ups
    // computed from bound flows, aalo's through the engine's coflow byte count:
    // equal up to rounding.
    assert_close(&coda, &aalo, 1e-6);
    // With late binding, coflows first seen within d of each other may be served
    // together; every CCT is still at least the coflow's isolated CCT (and the
    // engine checks capacities and bytes throughout).
    let lb = ccts_of(&w, "coda", &[("intra", "false")]);
    for (k, c) in w.coflows.iter().enumerate() {
        assert!(lb[k] >= w.isolated_cct(k) * (1.0 - 1e-9), "coflow {}", c.id);
    }
}

#[test]
fn coda_with_no_identification_is_fair_or_pias() {
    let w = fb_head(40);
    let fair = ccts_of(&w, "fair", &[]);
    let one = ccts_of(&w, "coda", &[("labels", "one"), ("intra", "false")]);
    assert_close(&one, &fair, 1e-6);
    let pias = ccts_of(&w, "pias", &[]);
    let one_intra = ccts_of(&w, "coda", &[("labels", "one")]);
    assert_close(&one_intra, &pias, 1e-6);
    // And pias with a single queue is fair.
    let pias1 = ccts_of(&w, "pias", &[("flow_queues", "1")]);
    assert_close(&pias1, &fair, 1e-9);
}

#[test]
fn injected_errors_hurt_and_cost_nothing_at_rate_zero() {
    let w = fb_head(20);
    let truth = ccts_of(&w, "coda", &[]);
    let zero = ccts_of(&w, "coda", &[("labels", "random"), ("error_rate", "0")]);
    assert_close(&zero, &truth, 1e-12);
    let mean = |x: &[f64]| x.iter().sum::<f64>() / x.len() as f64;
    let wrong = ccts_of(
        &w,
        "coda",
        &[
            ("labels", "stragglers"),
            ("error_rate", "0.3"),
            ("late_binding", "false"),
            ("intra", "false"),
        ],
    );
    // 30% stragglers without remedies: strictly worse on average than the truth
    // under the same scheduler.
    let base = ccts_of(&w, "coda", &[("late_binding", "false"), ("intra", "false")]);
    assert!(
        mean(&wrong) > mean(&base),
        "{} vs {}",
        mean(&wrong),
        mean(&base)
    );
}
