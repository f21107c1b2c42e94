//! Class limits (`Decision::class_limits`): the engine moves a flow one class
//! down at the instant it crosses its class's limit, so `pias` names each
//! flow's queue once. Hand-worked on the big switch; C = 1 Gbps (2^27 B/s),
//! 128 MB = 1 C·s, so the first threshold of 2^27 B is 1 C·s.

use coflowkit_policy::decision::Decision;
use coflowkit_policy::policy::{AnyPolicy, NonClairvoyantPolicy};
use coflowkit_policy::view::NonClairvoyantView;
use coflowkit_sim::{simulate, ClassForm, Realloc, SimOptions, SimResult};
use coflowkit_trace::read_benchmark;
use std::collections::BTreeMap;

/// Flow 0: 0→1, 10 C·s, at 0 s. Flow 1: 2→1, 2 C·s, at 3 s. Both need down1.
const TRACE: &str = "4 2\n1 0 1 0 1 1:1280\n2 3000 1 2 1 1:256\n";

fn pias(queues: &str, multiplier: &str) -> AnyPolicy {
    let p: BTreeMap<String, String> = [
        ("flow_queues", queues),
        ("flow_first_threshold_bytes", "134217728"),
        ("flow_multiplier", multiplier),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    coflowkit_policy::build("pias", &p).unwrap()
}

fn run(p: &mut AnyPolicy, form: ClassForm, delta: bool, realloc: Realloc) -> SimResult {
    let w = read_benchmark("t", TRACE).unwrap();
    let opts = SimOptions {
        check_invariants: true,
        class_form: form,
        delta_decisions: delta,
        realloc,
        ..Default::default()
    };
    simulate(&w, p, &opts, None).unwrap()
}

/// Every way of running it: the engine's demotions (delta decisions at
/// events, classes by group or per flow) and the policy's own per-flow queues
/// (without delta decisions).
fn every_driver(queues: &str, multiplier: &str, want: [f64; 2]) {
    for realloc in [Realloc::Event, Realloc::Coflow] {
        for form in [ClassForm::Groups, ClassForm::Auto, ClassForm::Flows] {
            for delta in [true, false] {
                let r = run(&mut pias(queues, multiplier), form, delta, realloc);
                let got = &r.flow_finish_s;
                assert!(
                    (got[0] - want[0]).abs() < 1e-9 && (got[1] - want[1]).abs() < 1e-9,
                    "{realloc:?} {form:?} delta={delta}: {got:?}, want {want:?}"
                );
                // Classes by group only where asked for or chosen.
                let by_group = delta && form == ClassForm::Groups;
                assert_eq!(r.class_group_calls > 0, by_group, "{form:?} delta={delta}");
            }
        }
    }
}

#[test]
fn a_flow_moves_down_as_it_crosses_its_queues_threshold() {
    // Two queues, threshold 1 C·s. Flow 0 alone in queue 0 at C crosses 1 C·s
    // at 1 s and goes on alone in queue 1. At 3 s (3 C·s sent) flow 1 starts
    // in queue 0 and takes down1 whole; flow 0 stops. At 4 s flow 1 crosses
    // into queue 1: both share down1 at C/2, so flow 1's last C·s ends at 6 s;
    // flow 0 has sent 4 C·s then and its last 6 take until 12 s. (Per-flow
    // fairness would end flow 1 at 7 s.)
    every_driver("2", "4", [12.0, 6.0]);
}

#[test]
fn a_flow_that_ends_at_its_threshold_finishes_there() {
    // Three queues, thresholds 1 and 2 C·s. Flow 0 is in queue 2 from 2 s.
    // Flow 1 (2 C·s) crosses 1 C·s at 4 s into queue 1, still above flow 0,
    // and ends at 5 s exactly at the second threshold (a finish, not a
    // crossing). Flow 0, 3 C·s sent at 3 s, resumes at 5 s: done at 12 s.
    every_driver("3", "2", [12.0, 5.0]);
}

/// Answers class 0 for every new flow with a limit, whatever the driver says.
struct LimitsAnyway;

impl NonClairvoyantPolicy for LimitsAnyway {
    fn decide(&mut self, v: &NonClairvoyantView, out: &mut Decision) {
        out.class_delta = true;
        out.class_moves.extend(v.started.iter().map(|&f| (f, 0)));
        out.class_limits.push(1e6);
    }
}

#[test]
fn class_limits_where_the_driver_cannot_take_them_are_an_error() {
    let w = read_benchmark("t", TRACE).unwrap();
    for opts in [
        SimOptions {
            delta_decisions: false,
            ..Default::default()
        },
        SimOptions {
            realloc: Realloc::Interval(0.5),
            ..Default::default()
        },
    ] {
        let mut p = AnyPolicy::NonClairvoyant(Box::new(LimitsAnyway));
        let e = simulate(&w, &mut p, &opts, None).unwrap_err().to_string();
        assert!(e.contains("class limits"), "{e}");
    }
    // Otherwise (either class form) the same policy runs. Class 1 has no limit. Flow 0
    // crosses 1e6 B (x = 1e6 / 2^27 s) into class 1. Flow 1 starts at 3 s in
    // class 0, has down1 alone for x, then shares it at C/2 for its other
    // 2 − x C·s: done at 3 + x + 2(2 − x) = 7 − x. Flow 0 has sent 3 + (2 − x)
    // by then, and its last 5 + x C·s take until 12 s.
    for form in [ClassForm::Groups, ClassForm::Flows] {
        let opts = SimOptions {
            class_form: form,
            check_invariants: true,
            ..Default::default()
        };
        let mut p = AnyPolicy::NonClairvoyant(Box::new(LimitsAnyway));
        let r = simulate(&w, &mut p, &opts, None).unwrap();
        let x = 1e6 / 134217728.0;
        let got = &r.flow_finish_s;
        assert!(
            (got[0] - 12.0).abs() < 1e-9 && (got[1] - (7.0 - x)).abs() < 1e-9,
            "{form:?}: {got:?}"
        );
    }
}
