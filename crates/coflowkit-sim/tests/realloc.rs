//! `realloc=coflow`: the policy is not called when a flow ends without completing
//! its coflow, so the others keep their rates. Hand-worked on the big switch with
//! fair sharing; C = 1 Gbps (2^27 B/s), 128 MB = 1 C·s.

use coflowkit_sim::{simulate, Realloc, SimOptions};
use coflowkit_trace::read_benchmark;

fn ccts(text: &str, realloc: Realloc) -> Vec<f64> {
    let w = read_benchmark("t", text).unwrap();
    let mut p = coflowkit_policy::build("fair", &Default::default()).unwrap();
    let opts = SimOptions {
        realloc,
        check_invariants: true,
        ..Default::default()
    };
    let r = simulate(&w, &mut p, &opts, None).unwrap();
    w.coflows
        .iter()
        .enumerate()
        .map(|(k, c)| r.coflow_finish_s[k] - c.arrival_s)
        .collect()
}

#[test]
fn a_flow_that_ends_inside_its_coflow_frees_nothing() {
    // One coflow, two flows out of port 0: 1 C·s and 3 C·s, each at C/2.
    // Per event: the short one ends at 2 s, the long one then runs at C: 2 + 2 = 4 s.
    // realloc=coflow: the long one keeps C/2: 2 C·s more take 4 s, so 6 s.
    let t = "4 1\n1 0 1 0 2 1:128 2:384\n";
    let e = ccts(t, Realloc::Event);
    let c = ccts(t, Realloc::Coflow);
    assert!((e[0] - 4.0).abs() < 1e-9, "{e:?}");
    assert!((c[0] - 6.0).abs() < 1e-9, "{c:?}");
}

#[test]
fn arrivals_and_coflow_completions_still_reallocate() {
    // As above, and coflow B (port 0 → 3, 1 C·s) arrives at 3 s. realloc=coflow:
    // at 3 s the long flow has 1.5 C·s left; B's start calls the policy: C/2 each;
    // B completes at 5 s, which calls it again: the long flow gets C for its last
    // 0.5 C·s and ends at 5.5 s. Per event: the long flow runs at C from 2 s (1 C·s
    // left at 3 s), then C/2 with B: both end at 5 s.
    let t = "4 2\n1 0 1 0 2 1:128 2:384\n2 3000 1 0 1 3:128\n";
    let e = ccts(t, Realloc::Event);
    let c = ccts(t, Realloc::Coflow);
    assert!(
        (e[0] - 5.0).abs() < 1e-9 && (e[1] - 2.0).abs() < 1e-9,
        "{e:?}"
    );
    assert!(
        (c[0] - 5.5).abs() < 1e-9 && (c[1] - 2.0).abs() < 1e-9,
        "{c:?}"
    );
}

#[test]
fn realloc_values_are_checked() {
    assert_eq!(Realloc::parse("coflow"), Ok(Realloc::Coflow));
    assert!(Realloc::parse("sometimes")
        .unwrap_err()
        .contains("'event' or 'coflow'"));
}

#[test]
fn a_policy_that_leaves_flows_waiting_is_asked_again_instead_of_stalling() {
    // Sincronia orders coflows strictly: a flow behind a finished one waits at rate 0
    // until the policy is called; with nothing else pending the engine calls it.
    let t = "4 2\n1 0 2 0 1 1 2:256\n2 0 1 0 1 3:128\n";
    let w = read_benchmark("t", t).unwrap();
    for name in ["sincronia", "varys", "fifo"] {
        let mut p = coflowkit_policy::build(name, &Default::default()).unwrap();
        let opts = SimOptions {
            realloc: Realloc::Coflow,
            check_invariants: true,
            ..Default::default()
        };
        let r = simulate(&w, &mut p, &opts, None).unwrap();
        assert!(
            r.complete && r.coflow_finish_s.iter().all(|x| x.is_finite()),
            "{name}"
        );
    }
}
