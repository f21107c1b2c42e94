//! Speed decisions (`Decision::by_speed`): every flow of a coflow goes at
//! `rem_f · x_k` (the engine keeps one proportional group per coflow), a few
//! flows at their own rate. They must give the run that the same rates given
//! per flow give. C = 1 Gbps (2^27 B/s) on the big switch; 128 MB = 1 C·s.

mod common;

use coflowkit_policy::decision::{Decision, Wakeup};
use coflowkit_policy::policy::{AnyPolicy, ClairvoyantPolicy};
use coflowkit_policy::view::ClairvoyantView;
use coflowkit_sim::{simulate, Realloc, SimOptions, SimResult};
use coflowkit_trace::read_benchmark;
use std::collections::BTreeMap;

#[derive(Clone, Copy, PartialEq, Debug)]
enum Form {
    /// One rate per active flow.
    Rates,
    /// Speeds, the extras' flows on their own.
    Speeds,
    /// Rates at odd calls, speeds at even ones (every member leaves its group
    /// at a rate call, so the next speed call lists every flow to join).
    Alternate,
}

/// `r_f = rem_f · x_k + e_f`, from what the view says the flows and coflows
/// have sent (so a driver that keeps those wrong gives other rates):
/// `x_k = 1 / (0.5 + 0.01 (k mod 7) + sent_k / 2^30)`, and an extra of
/// `2^20 (1 + f mod 3)` B/s for even flows that have sent under half their
/// bytes. Not capacity-feasible; the engine does not need it to be.
struct Scaled {
    form: Form,
    calls: u64,
    solo: Vec<u32>,
    after_rates: bool,
}

impl Scaled {
    fn new(form: Form) -> Self {
        Scaled {
            form,
            calls: 0,
            solo: Vec::new(),
            after_rates: false,
        }
    }
}

impl ClairvoyantPolicy for Scaled {
    fn decide(&mut self, v: &ClairvoyantView, out: &mut Decision) {
        self.calls += 1;
        let speeds = match self.form {
            Form::Rates => false,
            Form::Speeds => true,
            Form::Alternate => self.calls.is_multiple_of(2),
        };
        assert!(out.speeds_ok || !speeds, "the engine keeps groups");
        let mut solo = Vec::new();
        for g in v.groups {
            let k = g.coflow;
            let x = 1.0 / (0.5 + 0.01 * (k % 7) as f64 + v.coflow_sent(k) / 1073741824.0);
            if speeds {
                out.coflow_speeds.push((k, x));
            }
            for i in g.range() {
                let f = v.active[i];
                let rem = v.remaining(f);
                let extra = if f.is_multiple_of(2) && v.sent(f) < 0.5 * v.size[f as usize] {
                    1048576.0 * (1 + f % 3) as f64
                } else {
                    0.0
                };
                if !speeds {
                    out.rates[i] = rem * x + extra;
                } else if extra > 0.0 {
                    out.flow_rates.push((f, rem * x + extra));
                    solo.push(f);
                } else if self.after_rates || self.solo.contains(&f) {
                    out.group_joins.push(f);
                }
            }
            // A wake-up at the coflow's next 8 MB reads its rate as the
            // engine keeps it (its group's part included).
            out.wakeups.push(Wakeup::CoflowSent {
                coflow: k,
                bytes: v.coflow_sent(k) + 8.0 * 1048576.0,
            });
        }
        out.by_speed = speeds;
        self.after_rates = !speeds;
        self.solo = solo;
    }
}

fn run(text: &str, form: Form, realloc: Realloc) -> SimResult {
    let w = read_benchmark("t", text).unwrap();
    let mut p = AnyPolicy::Clairvoyant(Box::new(Scaled::new(form)));
    let opts = SimOptions {
        realloc,
        ..Default::default()
    };
    let r = simulate(&w, &mut p, &opts, None).unwrap();
    // Conservation: every flow sent its bytes, every coflow the sum.
    assert!(r.complete);
    r
}

#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "`Scaled` overloads links on purpose, and debug builds always check capacities; run with --release"
)]
fn speeds_give_the_run_that_the_same_rates_per_flow_give() {
    for seed in [1, 2, 3] {
        let text = common::random_trace(seed);
        for realloc in [Realloc::Event, Realloc::Coflow, Realloc::Interval(0.05)] {
            let want = run(&text, Form::Rates, realloc);
            for form in [Form::Speeds, Form::Alternate] {
                let got = run(&text, form, realloc);
                for (f, (a, b)) in want
                    .flow_finish_s
                    .iter()
                    .zip(&got.flow_finish_s)
                    .enumerate()
                {
                    assert!(
                        (a - b).abs() <= 1e-9 * a.abs().max(1.0),
                        "seed {seed} {realloc:?} {form:?}: flow {f} ends at {a} per flow, {b} by speed"
                    );
                }
                assert_eq!(
                    want.policy_calls, got.policy_calls,
                    "seed {seed} {realloc:?} {form:?}"
                );
            }
            // The speed form changes far fewer rates (one per coflow a call).
            let got = run(&text, Form::Speeds, realloc);
            assert!(got.rate_changes < want.rate_changes, "{realloc:?}");
        }
    }
}

#[test]
fn drf_by_speed_ends_a_coflow_alone_when_its_busiest_link_is_done() {
    // Coflow 1 alone: port 0 sends 1 C·s to port 1 and 3 C·s to port 2. DRF
    // gives both flows rem / T with T = 4 s (the uplink's 4 C·s): both end at
    // 4 s together, by speed as per flow. Coflow 2 arrives at 1 s on ports 3
    // and 4, disjoint: P* stays 1, it ends at 1 + 2 = 3 s.
    let text = "6 2\n1 0 1 0 2 1:128 2:384\n2 1000 1 3 1 4:256\n";
    let w = read_benchmark("t", text).unwrap();
    for delta in [false, true] {
        let mut p = coflowkit_policy::build("drf", &BTreeMap::new()).unwrap();
        let opts = SimOptions {
            delta_decisions: delta,
            check_invariants: true,
            ..Default::default()
        };
        let r = simulate(&w, &mut p, &opts, None).unwrap();
        let c = &r.coflow_finish_s;
        assert!(
            (c[0] - 4.0).abs() < 1e-9 && (c[1] - 3.0).abs() < 1e-9,
            "delta {delta}: {c:?}"
        );
        let f = &r.flow_finish_s;
        assert!(
            (f[0] - 4.0).abs() < 1e-9 && (f[1] - 4.0).abs() < 1e-9,
            "{f:?}"
        );
    }
}
