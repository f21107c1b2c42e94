//! Tests of `CoflowPriority` (support/priority.rs): replays, tail solves and
//! delta decisions against fresh solves.

use super::*;
use crate::testkit::Case;
use coflowkit_model::{Fabric, Pcg32};

/// One call of `p` on `c` with coflows in `order` (coflow indices): the rates.
fn call(p: &mut CoflowPriority, c: &Case, order: &[u32]) -> Vec<f64> {
    let v = c.common();
    let groups: Vec<usize> = order
        .iter()
        .filter_map(|&k| v.groups.iter().position(|g| g.coflow == k))
        .collect();
    let mut d = Decision::default();
    d.reset(v.active.len());
    p.run(&v, &groups, &mut d);
    d.rates
}

/// A big switch of `ports` ports whose link `l` has capacity `1 / (3 + 2l)`
/// (sums that round), with `flows`.
fn odd_capacities(ports: u32, flows: &[(u32, u32, u32, f64, f64)]) -> Case {
    let mut c = Case::new(ports, 1.0, flows);
    for (l, cap) in c.fabric.capacities.iter_mut().enumerate() {
        *cap = 1.0 / (3.0 + 2.0 * l as f64);
    }
    c
}

/// Every rate of `got` within 1e-12 relative of `want`'s (a solve from a level
/// up sums in another order than a fresh one).
fn assert_close(got: &[f64], want: &[f64], step: usize) {
    assert_eq!(got.len(), want.len(), "step {step}");
    for (g, w) in got.iter().zip(want) {
        assert!(
            (g - w).abs() <= 1e-12 * w.abs().max(1e-300),
            "step {step}: {g} vs {w}"
        );
    }
}

#[test]
fn a_reused_solver_answers_as_a_fresh_one() {
    let tails: u64 = (0..25).map(reused_against_fresh).sum();
    // Flows finishing one at a time make some coflows solved from a level up.
    assert!(tails > 25, "{tails} tail solves");
}

/// Returns how many coflows the reused solver solved from a level up.
fn reused_against_fresh(seed: u64) -> u64 {
    // 6 coflows of up to 6 flows on 5 ports, a third of the flows starting
    // later; at each of 40 calls a random flow may finish or start, the order
    // is reshuffled or kept, and now and then a coflow is left out. The reused solver replays what it remembers (the
    // same residuals, or moved ones on slack links); a fresh one solves
    // everything; a third one answers with delta decisions, applied to the
    // rates in force. The rates must be identical, bit for bit (and some
    // calls must replay).
    let mut rng = Pcg32::new(7 + seed, 3);
    let mut flows = Vec::new();
    for k in 0..6u32 {
        for _ in 0..1 + rng.below(6) {
            let (s, d) = (rng.below(5), rng.below(5));
            flows.push((k, s, d, 1.0, 0.0));
        }
    }
    let mut c = Case::new(5, 10.0, &flows);
    let (mut active, mut pending): (Vec<u32>, Vec<u32>) =
        (0..flows.len() as u32).partition(|_| rng.below(3) != 0);
    for k in c.data.coflow_started.iter_mut() {
        *k = 0;
    }
    for &f in &active {
        c.data.coflow_started[c.data.flow_coflow[f as usize] as usize] += 1;
    }
    c.set_active(&active);
    let mut order: Vec<u32> = (0..6).collect();
    let mut reused = CoflowPriority::default();
    let mut delta = CoflowPriority::default();
    let mut in_force = vec![0.0; flows.len()];
    for call_no in 0..40 {
        if call_no % 3 == 0 {
            rng.shuffle(&mut order);
        }
        // Now and then a coflow is left out (its flows must stop).
        let listed: Vec<u32> = if call_no % 5 == 4 {
            order[1..].to_vec()
        } else {
            order.clone()
        };
        let fresh = call(&mut CoflowPriority::default(), &c, &listed);
        assert_eq!(
            call(&mut reused, &c, &listed),
            fresh,
            "seed {seed}, call {call_no}"
        );
        apply_delta(&mut delta, &c, &listed, &mut in_force);
        let by_delta: Vec<f64> = active.iter().map(|&f| in_force[f as usize]).collect();
        assert_eq!(by_delta, fresh, "delta, seed {seed}, call {call_no}");
        if active.len() > 1 && call_no % 2 == 1 {
            let gone = active.remove(rng.below(active.len() as u32) as usize);
            in_force[gone as usize] = 0.0;
            c.set_active(&active);
        }
        if !pending.is_empty() && call_no % 4 == 2 {
            let f = pending.remove(rng.below(pending.len() as u32) as usize);
            c.data.coflow_started[c.data.flow_coflow[f as usize] as usize] += 1;
            active.push(f);
            active.sort_unstable();
            c.set_active(&active);
        }
    }
    assert!(reused.replays > 20, "{} replays", reused.replays);
    // Left-out coflows are forgotten in delta mode, so it replays a bit less.
    assert!(delta.replays > 15, "{} delta replays", delta.replays);
    reused.tail_solves
}

#[test]
fn a_wide_coflow_losing_flows_is_solved_from_a_level_up() {
    // 8 ports of capacities 1/3, 1/7, ... (sums that round). Coflow 0: 3 flows
    // served first; coflow 1: 60 random flows, which finish one at a time,
    // each time the one of highest rate (as under max-min the fast ones finish
    // first), then one of the slowest. Rates below the finished flow's stand
    // and the others are solved again: they must equal a fresh solve's to
    // 1e-12 relative, and most calls must be tail solves.
    let mut rng = Pcg32::new(99, 5);
    let mut flows = vec![
        (0, 0, 1, 1.0, 0.0),
        (0, 2, 1, 1.0, 0.0),
        (0, 3, 4, 1.0, 0.0),
    ];
    for _ in 0..60 {
        flows.push((1, rng.below(8), rng.below(8), 1.0, 0.0));
    }
    let mut c = odd_capacities(8, &flows);
    let mut active: Vec<u32> = (0..flows.len() as u32).collect();
    c.set_active(&active);
    let mut reused = CoflowPriority::default();
    for step in 0..50 {
        let got = call(&mut reused, &c, &[0, 1]);
        let want = call(&mut CoflowPriority::default(), &c, &[0, 1]);
        assert_close(&got, &want, step);
        // Coflow 1's flows are at active positions 3.. (coflow 0 comes first).
        let pick = |best: fn(f64, f64) -> bool| {
            let mut at = 3;
            for i in 3..active.len() {
                if got[i] > 0.0 && (got[at] == 0.0 || best(got[i], got[at])) {
                    at = i;
                }
            }
            at
        };
        let i = if step % 2 == 0 {
            pick(|a, b| a > b)
        } else {
            pick(|a, b| a < b)
        };
        active.remove(i);
        c.set_active(&active);
    }
    assert!(
        reused.tail_solves >= 20,
        "{} tail solves",
        reused.tail_solves
    );
}

#[test]
fn a_coflow_whose_flows_changed_is_solved_again() {
    // Coflow 1 (2→3) first takes up2 and down3 (10); coflow 0's flow 0→1
    // gets 10. Then flow 0 finishes as coflow 0's flow 2→1 starts: one
    // active flow as before, but another one, which crosses the full up2.
    let mut c = Case::new(
        4,
        10.0,
        &[
            (0, 0, 1, 1.0, 0.0),
            (0, 2, 1, 1.0, 0.0),
            (1, 2, 3, 1.0, 0.0),
        ],
    );
    c.data.coflow_started[0] = 1;
    c.set_active(&[0, 2]);
    let mut p = CoflowPriority::default();
    assert_eq!(call(&mut p, &c, &[1, 0]), vec![10.0, 10.0]);
    c.data.coflow_started[0] = 2;
    c.set_active(&[1, 2]);
    assert_eq!(call(&mut p, &c, &[1, 0]), vec![0.0, 10.0]);
}

#[test]
fn a_residual_that_moved_on_a_slack_link_is_replayed() {
    // C = 10. Coflow 0 (first): 0→3, 1→3, 4→3, 5→3 share down3: 2.5 each,
    // leaving 7.5 on up0 and up1. Coflow 1: 0→2 and 1→2 share down2 (its
    // tight link): 5 each; up0 and up1 are slack (it takes 5 of 7.5).
    let mut c = Case::new(
        6,
        10.0,
        &[
            (0, 0, 3, 1.0, 0.0),
            (0, 1, 3, 1.0, 0.0),
            (0, 4, 3, 1.0, 0.0),
            (0, 5, 3, 1.0, 0.0),
            (1, 0, 2, 1.0, 0.0),
            (1, 1, 2, 1.0, 0.0),
        ],
    );
    let mut p = CoflowPriority::default();
    assert_eq!(call(&mut p, &c, &[0, 1]), [2.5, 2.5, 2.5, 2.5, 5.0, 5.0]);
    // 4→3 finishes: coflow 0 gets 10/3 each and leaves 20/3 > 5 on up0 and
    // up1, so coflow 1 is replayed, not solved.
    c.set_active(&[0, 1, 3, 4, 5]);
    let before = p.replays;
    let third = 10.0 / 3.0;
    assert_eq!(call(&mut p, &c, &[0, 1]), [third, third, third, 5.0, 5.0]);
    assert_eq!(p.replays, before + 1);
    // 5→3 finishes too: 5 each, leaving exactly the 5 coflow 1 takes on up0
    // and up1, no longer above it: solved again (to the same 5 and 5).
    c.set_active(&[0, 1, 4, 5]);
    let before = p.replays;
    assert_eq!(call(&mut p, &c, &[0, 1]), [5.0, 5.0, 5.0, 5.0]);
    assert_eq!(p.replays, before);
    // Coflow 1 first: it now gets up0 and up1 to itself, but down2 still
    // bounds it; coflow 0 is left 5 on up0 and up1 and shares down3.
    assert_eq!(call(&mut p, &c, &[1, 0]), [5.0, 5.0, 5.0, 5.0]);
}

/// A delta decision applied to the rates in force: `rates` maps flows to
/// their rates, and flows that are no longer active are dropped.
fn apply_delta(p: &mut CoflowPriority, c: &Case, order: &[u32], rates: &mut [f64]) {
    let v = c.common();
    let groups: Vec<usize> = order
        .iter()
        .filter_map(|&k| v.groups.iter().position(|g| g.coflow == k))
        .collect();
    let mut d = Decision {
        delta_ok: true,
        ..Decision::default()
    };
    d.reset(v.active.len());
    p.run(&v, &groups, &mut d);
    assert!(d.delta && d.sparse);
    for &i in &d.touched {
        rates[v.active[i as usize] as usize] = d.rates[i as usize];
    }
    // Positions not touched must hold zero (the driver's `all_zero`).
    for (i, &r) in d.rates.iter().enumerate() {
        assert!(r == 0.0 || d.touched.contains(&(i as u32)));
    }
}

#[test]
fn a_changed_residual_is_solved_again() {
    // Coflow 0: 0→1; coflow 1: 0→2 and 3→2 (C = 10). Order 0, 1: coflow 0
    // takes up0, so coflow 1's 0→2 gets 0 and 3→2 all of down2 (10). Order
    // 1, 0: coflow 1 first, 5 and 5; coflow 0 gets the 5 left on up0. The
    // second call's coflow 1 sees another residual on up0 and must not
    // replay its first answer.
    let c = Case::new(
        4,
        10.0,
        &[
            (0, 0, 1, 1.0, 0.0),
            (1, 0, 2, 1.0, 0.0),
            (1, 3, 2, 1.0, 0.0),
        ],
    );
    let mut p = CoflowPriority::default();
    assert_eq!(call(&mut p, &c, &[0, 1]), vec![10.0, 0.0, 10.0]);
    assert_eq!(call(&mut p, &c, &[1, 0]), vec![5.0, 5.0, 5.0]);
    assert_eq!(call(&mut p, &c, &[0, 1]), vec![10.0, 0.0, 10.0]);
}

/// `n` flows of 1 byte for coflow `k` between random distinct hosts of 16.
fn random_flows(rng: &mut Pcg32, k: u32, n: usize, flows: &mut Vec<(u32, u32, u32, f64, f64)>) {
    for _ in 0..n {
        let s = rng.below(16);
        let d = (s + 1 + rng.below(15)) % 16;
        flows.push((k, s, d, 1.0, 0.0));
    }
}

#[test]
fn large_coflows_answer_from_kept_solutions_as_fresh_solves_do() {
    // A FatTree of k = 4 (16 hosts; fabric links 0.6 of the host links, so
    // both bound rates). Coflow 0: 3 flows; coflows 1-3: BIG_COFLOW + 200
    // random flows each, more large coflows than the pool keeps, so entries
    // pass from one to another. At each of 30 calls the order is reshuffled,
    // now and then a coflow is left out, and 6 random flows finish (the large
    // coflows stay large). A reused solver (and one answering in delta form,
    // applied to the rates in force) must give what a fresh one gives, to
    // 1e-9 relative.
    let mut rng = Pcg32::new(4242, 11);
    let f = Fabric::fat_tree(4, 16, 1.0, 0.6, coflowkit_model::Placement::Spread, 1).unwrap();
    let mut flows = vec![
        (0, 0, 1, 1.0, 0.0),
        (0, 2, 5, 1.0, 0.0),
        (0, 3, 9, 1.0, 0.0),
    ];
    for k in 1..4u32 {
        random_flows(&mut rng, k, BIG_COFLOW + 200, &mut flows);
    }
    let mut c = Case::on(f, &flows);
    let mut active: Vec<u32> = (0..flows.len() as u32).collect();
    c.set_active(&active);
    let mut order: Vec<u32> = (0..4).collect();
    let (mut reused, mut delta) = (CoflowPriority::default(), CoflowPriority::default());
    // This fabric has 48 links: every large coflow may take a kept solution.
    reused.pool_links = 1;
    delta.pool_links = 1;
    let mut in_force = vec![0.0; flows.len()];
    for call_no in 0..30 {
        rng.shuffle(&mut order);
        let listed: Vec<u32> = if call_no % 7 == 3 {
            order[1..].to_vec()
        } else {
            order.clone()
        };
        let want = call(&mut CoflowPriority::default(), &c, &listed);
        let got = call(&mut reused, &c, &listed);
        apply_delta(&mut delta, &c, &listed, &mut in_force);
        let by_delta: Vec<f64> = active.iter().map(|&f| in_force[f as usize]).collect();
        for (i, &w) in want.iter().enumerate() {
            for (what, g) in [("reused", got[i]), ("delta", by_delta[i])] {
                assert!(
                    (g - w).abs() <= 1e-9 * w.abs().max(1e-12),
                    "{what}, call {call_no}, position {i}: {g} vs {w}"
                );
            }
        }
        for _ in 0..6 {
            let gone = active.remove(rng.below(active.len() as u32) as usize);
            in_force[gone as usize] = 0.0;
        }
        c.set_active(&active);
    }
    // Two of the three large coflows are served from the pool at each call.
    assert!(reused.pooled >= 40, "{} pooled answers", reused.pooled);
    assert!(delta.pooled >= 40, "{} pooled delta answers", delta.pooled);
}

#[test]
fn finished_offsets_are_the_entries_missing_from_the_new_list() {
    let mut fin = Vec::new();
    finished_offsets(&[2, 5, 7, 9, 11], &[5, 9], &mut fin);
    assert_eq!(fin, [0, 2, 4]);
    finished_offsets(&[2, 5, 7], &[2, 5, 7], &mut fin);
    assert!(fin.is_empty());
    finished_offsets(&[2, 5, 7], &[2, 5], &mut fin);
    assert_eq!(fin, [2]);
    finished_offsets(&[2, 5, 7], &[], &mut fin);
    assert_eq!(fin, [0, 1, 2]);
    let mut v = vec![10, 11, 12, 13, 14, 15];
    remove_offsets(&mut v, &[0, 2, 3, 5]);
    assert_eq!(v, [11, 14]);
    remove_offsets(&mut v, &[]);
    assert_eq!(v, [11, 14]);
}

#[test]
fn flows_finishing_several_at_a_time_are_solved_from_a_level_up_as_fresh() {
    // Coflow 0 (one flow 0→1) ahead of coflow 1: 24 flows on 6 ports with
    // capacities that make sums round. At each call 1 to 3 of coflow 1's
    // flows finish (the fastest, then the last positions, then a middle
    // one), so the memo loses entries before, inside and at the end of its
    // per-flow vectors; rates must equal a fresh solve's to 1e-12 relative
    // (a tail sums in another order), the delta answers the full one's bit
    // for bit, and the calls must be tail solves.
    let mut rng = Pcg32::new(5, 11);
    let mut flows = vec![(0, 0, 1, 1.0, 0.0)];
    for _ in 0..24 {
        flows.push((1, rng.below(6), rng.below(6), 1.0, 0.0));
    }
    let mut c = odd_capacities(6, &flows);
    let mut active: Vec<u32> = (0..flows.len() as u32).collect();
    c.set_active(&active);
    let (mut reused, mut delta) = (CoflowPriority::default(), CoflowPriority::default());
    let mut in_force = vec![0.0; flows.len()];
    let mut step = 0;
    while active.len() > 4 {
        let fresh = call(&mut CoflowPriority::default(), &c, &[0, 1]);
        let got = call(&mut reused, &c, &[0, 1]);
        assert_close(&got, &fresh, step);
        apply_delta(&mut delta, &c, &[0, 1], &mut in_force);
        let by_delta: Vec<f64> = active.iter().map(|&f| in_force[f as usize]).collect();
        assert_eq!(by_delta, got, "delta, step {step}");
        let fastest = (1..active.len())
            .max_by(|&a, &b| fresh[a].total_cmp(&fresh[b]))
            .unwrap();
        let mut gone = vec![fastest];
        match step % 3 {
            1 => gone.push(active.len() - 1),
            2 => gone.extend([1 + (active.len() - 1) / 2, active.len() - 1]),
            _ => {}
        }
        gone.sort_unstable();
        gone.dedup();
        for &i in gone.iter().rev() {
            in_force[active[i] as usize] = 0.0;
            active.remove(i);
        }
        c.set_active(&active);
        step += 1;
    }
    assert!(step >= 8, "{step} steps");
    assert!(
        reused.tail_solves >= 4,
        "{} tail solves",
        reused.tail_solves
    );
    assert!(
        delta.tail_solves >= 4,
        "{} delta tail solves",
        delta.tail_solves
    );
}

#[test]
fn keyed_groups_answer_as_fresh_solves_do() {
    // A FatTree of k = 4 (fabric links 0.6 of the host links). Six groups of
    // 150 random flows each, more than the KEYED_POOL kept solvers, served one
    // after another in a reshuffled order at each of 30 rounds, now and then
    // one left out; between rounds 5 random flows finish. Served by key (kept
    // solvers, entries passing from one key to another) or afresh, each
    // round's rates must agree to 1e-9 relative.
    let mut rng = Pcg32::new(99, 5);
    let f = Fabric::fat_tree(4, 16, 1.0, 0.6, coflowkit_model::Placement::Spread, 1).unwrap();
    let mut flows = Vec::new();
    for k in 0..6u32 {
        random_flows(&mut rng, k, 150, &mut flows);
    }
    let mut c = Case::on(f, &flows);
    let mut active: Vec<u32> = (0..flows.len() as u32).collect();
    c.set_active(&active);
    let mut order: Vec<u32> = (0..6).collect();
    let mut kept = CoflowPriority::default();
    for round in 0..30 {
        rng.shuffle(&mut order);
        let listed = if round % 5 == 2 {
            &order[1..]
        } else {
            &order[..]
        };
        let v = c.common();
        let positions = |k: u32| -> Vec<usize> {
            (0..v.active.len())
                .filter(|&i| v.flow_coflow[v.active[i] as usize] == k)
                .collect()
        };
        let (mut want, mut got) = (Decision::default(), Decision::default());
        want.reset(v.active.len());
        got.reset(v.active.len());
        let mut fresh = CoflowPriority::default();
        fresh.begin(&v, &mut want);
        kept.begin(&v, &mut got);
        for &k in listed {
            let at = positions(k);
            fresh.serve(&v, at.iter().copied(), &mut want);
            kept.serve_keyed(&v, at.iter().copied(), 1000 + k as u64, &mut got);
        }
        assert_close(&got.rates, &want.rates, round);
        assert!(want.rates.iter().any(|&r| r > 0.0));
        for _ in 0..5 {
            active.remove(rng.below(active.len() as u32) as usize);
        }
        c.set_active(&active);
    }
    assert_eq!(kept.keyed.len(), KEYED_POOL);
    let tails: u64 = kept.keyed.iter().map(|e| e.2.tail_solves).sum();
    assert!(tails > 0, "some rounds are answered from a level up");
}
