//! Delta decisions (a policy lists only the rates that changed) must give the
//! same run as full ones, for every registered policy: a policy that reads back
//! rates it did not write this call, or forgets to stop flows it no longer
//! serves, shows up here as a different CCT.

mod common;

use coflowkit_sim::{simulate, SimOptions};
use coflowkit_trace::read_benchmark;
use std::collections::BTreeMap;

#[test]
fn delta_and_full_decisions_give_the_same_run_for_every_policy() {
    for seed in [1, 2] {
        let w = read_benchmark("t", &common::random_trace(seed)).unwrap();
        for spec in coflowkit_policy::REGISTRY {
            let run = |delta: bool| {
                let mut p = coflowkit_policy::build(spec.name, &BTreeMap::new()).unwrap();
                let opts = SimOptions {
                    delta_decisions: delta,
                    check_invariants: true,
                    ..Default::default()
                };
                simulate(&w, &mut p, &opts, None).unwrap()
            };
            let (full, delta) = (run(false), run(true));
            for (k, (a, b)) in full
                .coflow_finish_s
                .iter()
                .zip(&delta.coflow_finish_s)
                .enumerate()
            {
                assert!(
                    (a - b).abs() <= 1e-12 * a.abs().max(1.0),
                    "{} seed {seed}: coflow {k} ends at {a} with full decisions, {b} with delta ones",
                    spec.name
                );
            }
            assert_eq!(full.policy_calls, delta.policy_calls, "{}", spec.name);
        }
    }
}
