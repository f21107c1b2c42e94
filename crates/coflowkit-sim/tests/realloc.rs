//! `realloc=coflow`: the policy is not called when a flow ends without completing
//! its coflow, so the others keep their rates. `realloc=interval:Δ`: it is called
//! only at k·Δ. Hand-worked on the big switch with fair sharing; C = 1 Gbps
//! (2^27 B/s), 128 MB = 1 C·s.

use coflowkit_sim::{simulate, Realloc, SimOptions};
use coflowkit_trace::read_benchmark;

fn ccts(text: &str, realloc: Realloc) -> Vec<f64> {
    run("fair", text, realloc).0
}

/// The CCTs and the number of policy calls of `policy` on `text`.
fn run(policy: &str, text: &str, realloc: Realloc) -> (Vec<f64>, u64) {
    let w = read_benchmark("t", text).unwrap();
    let mut p = coflowkit_policy::build(policy, &Default::default()).unwrap();
    let opts = SimOptions {
        realloc,
        check_invariants: true,
        ..Default::default()
    };
    let r = simulate(&w, &mut p, &opts, None).unwrap();
    let ccts = w
        .coflows
        .iter()
        .enumerate()
        .map(|(k, c)| r.coflow_finish_s[k] - c.arrival_s)
        .collect();
    (ccts, r.policy_calls)
}

#[test]
fn interval_decisions_hold_rates_between_decision_times() {
    // Two flows out of port 0 (1 and 3 C·s) from 0 s, decisions every 1.5 s: C/2
    // each at 0; the short one ends at 2 s and frees nothing until the decision at
    // 3 s, when the long one (1.5 C·s sent) gets C: 1.5 s more, 4.5 s. Decisions at
    // 0 and 3 only (at 1.5 s nothing changed; the engine still calls: 3 calls).
    let t = "4 1\n1 0 1 0 2 1:128 2:384\n";
    let (c, calls) = run("fair", t, Realloc::Interval(1.5));
    assert!((c[0] - 4.5).abs() < 1e-9, "{c:?}");
    assert_eq!(calls, 3);
    // Δ = 1: the short flow ends on a decision time (2 s): as per event, 4 s.
    assert!((ccts(t, Realloc::Interval(1.0))[0] - 4.0).abs() < 1e-9);
}

#[test]
fn a_flow_that_starts_between_decisions_waits_for_the_next() {
    // One flow of 1 C·s arriving at 0.5 s on an idle fabric, Δ = 1: it waits for the
    // decision at 1 s and ends at 2 s: CCT 1.5 s, one call (at 2 s it is gone).
    let (c, calls) = run("fair", "4 1\n1 500 1 0 1 1:128\n", Realloc::Interval(1.0));
    assert!((c[0] - 1.5).abs() < 1e-9, "{c:?}");
    assert_eq!(calls, 1);
    // Arriving on a decision time (1 s), it is decided at once: CCT 1 s.
    let c = ccts("4 1\n1 1000 1 0 1 1:128\n", Realloc::Interval(1.0));
    assert!((c[0] - 1.0).abs() < 1e-9, "{c:?}");
    // B arrives at 0.25 s behind A (same ports, 1 C·s each, from 0 s) with Δ = 0.5:
    // A has C alone until 0.5 s (0.5 C·s), then both C/2: A ends at 1.5 s; B has
    // 0.5 C·s at 1.5 s, gets C at the decision at 1.5 s and ends at 2 s (CCT 1.75).
    let t = "4 2\n1 0 1 0 1 1:128\n2 250 1 0 1 1:128\n";
    let c = ccts(t, Realloc::Interval(0.5));
    assert!(
        (c[0] - 1.5).abs() < 1e-9 && (c[1] - 1.75).abs() < 1e-9,
        "{c:?}"
    );
}

#[test]
fn interval_decisions_ignore_the_policys_own_wakeups() {
    // Aalo asks to be woken when a coflow crosses its first queue threshold (10 MiB);
    // under interval decisions only the decision times call it: one flow of 1 C·s
    // from 0 s, Δ = 1: calls at 0 and 1 s (at 1 s it ends: no call), so 1 call,
    // where per event Aalo is also called at the threshold crossing.
    let t = "4 1\n1 0 1 0 1 1:128\n";
    let (c, calls) = run("aalo", t, Realloc::Interval(1.0));
    assert!((c[0] - 1.0).abs() < 1e-9, "{c:?}");
    assert_eq!(calls, 1);
    let (_, per_event) = run("aalo", t, Realloc::Event);
    assert!(per_event > 1, "{per_event}");
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
        .contains("'event', 'coflow' or 'interval'"));
    assert_eq!(Realloc::parse("interval"), Ok(Realloc::Interval(1.0)));
    assert_eq!(
        Realloc::Interval(1.0).with_decision_s("0.5"),
        Ok(Realloc::Interval(0.5))
    );
    for bad in ["0", "-1", "x", "inf", ""] {
        let e = Realloc::Interval(1.0).with_decision_s(bad).unwrap_err();
        assert!(e.contains("from 1e-6 to 1e6"), "{bad}: {e}");
    }
    let e = Realloc::Event.with_decision_s("1").unwrap_err();
    assert!(e.contains("give realloc=interval too"), "{e}");
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
