//! Tests of `TailMaxMin` (tail.rs): plain, chained and local solves against
//! fresh strict-priority max-min fillings, by hand.

use super::*;
use coflowkit_model::Pcg32;

/// 8 ports with capacities 1/3, 1/5, ... (sums that round); 80 flows on random
/// paths, of which a random half is active. At each of 200 calls a few flows
/// leave or join, and now and then the residual on a random link moves (as a
/// higher class would move it). Kept and fresh solvers must agree to 1e-12
/// relative on every rate and on every residual (of the link's capacity), and
/// most calls must solve only a tail.
#[test]
fn kept_solutions_equal_fresh_ones_over_random_changes() {
    let mut f = Fabric::big_switch(8, 1.0).unwrap();
    for (l, c) in f.capacities.iter_mut().enumerate() {
        *c = 1.0 / (3.0 + 2.0 * l as f64);
    }
    let mut rng = Pcg32::new(17, 9);
    let all: Vec<PathId> = (0..80)
        .map(|_| f.route(rng.below(8), rng.below(8), 0).unwrap())
        .collect();
    let mut on: Vec<bool> = (0..80).map(|_| rng.below(2) == 0).collect();
    let mut input = f.capacities.clone();
    let mut kept = TailMaxMin::new();
    for step in 0..200 {
        let paths: Vec<PathId> = (0..80).filter(|&i| on[i]).map(|i| all[i]).collect();
        let (mut r1, mut r2) = (vec![0.0; paths.len()], vec![0.0; paths.len()]);
        let (mut res1, mut res2) = (input.clone(), input.clone());
        kept.solve(&f, &mut res1, &paths, &mut r1);
        MaxMin::new().solve(&f, &mut res2, &paths, &mut r2);
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-12 * b.abs().max(1e-12);
        for (a, b) in r1.iter().zip(&r2) {
            assert!(close(*a, *b), "step {step}: rate {a} vs {b}");
        }
        // Residuals to 1e-12 of the link's capacity (a saturated link may
        // keep a rounding hair of either sign's order; both count as zero).
        for ((a, b), c) in res1.iter().zip(&res2).zip(&f.capacities) {
            assert!(
                (a - b).abs() <= 1e-12 * c,
                "step {step}: residual {a} vs {b}"
            );
        }
        // Mostly departures (the fastest active flow, as under max-min the
        // fast ones finish first, or a random one), sometimes an arrival or a
        // moved residual.
        match rng.below(10) {
            0 => on[rng.below(80) as usize] = true,
            1 => {
                let l = rng.below(16) as usize;
                input[l] = f.capacities[l] * (0.5 + 0.5 * (rng.below(100) as f64 / 100.0));
            }
            2..=5 => {
                let i = (0..80).filter(|&i| on[i]).nth(rng.below(4) as usize);
                if let Some(i) = i {
                    on[i] = false;
                }
            }
            _ => {
                let fastest = (0..paths.len()).max_by(|&a, &b| r1[a].total_cmp(&r1[b]));
                if let Some(j) = fastest {
                    let i = (0..80).filter(|&i| on[i]).nth(j).unwrap();
                    on[i] = false;
                }
            }
        }
        if (0..80).filter(|&i| on[i]).count() < 5 {
            on.iter_mut().for_each(|o| *o = rng.below(2) == 0);
        }
    }
    assert!(kept.tail_solves >= 80, "{} tail solves", kept.tail_solves);
    assert!(kept.full_solves >= 10, "{} full solves", kept.full_solves);
    assert_eq!(kept.plain_solves, 0);
}

/// The delta form over the same kind of random changes as above: every
/// path's rate equals a fresh solve's, the residual too, and `changed`
/// lists exactly the paths with flows whose rate moved (bit for bit)
/// against the previous call's, each once.
#[test]
fn delta_form_equals_fresh_solves_and_lists_what_moved() {
    // Mostly departures; then mostly moved residuals (as under a higher
    // strict-priority queue that changes at every call).
    // Arrivals and moved residuals restart from `min(μ_l, x / N_l)` over the
    // links they touch, not from 0: only the first call solves everything.
    // The chained runs answer 5 calls plainly from step 100 on, and then
    // solve from scratch once.
    for chained in [false, true] {
        let c = chained as u64;
        let kept = delta_run(23, 1, false, chained);
        assert_eq!(kept.full_solves, 1 + c);
        assert_eq!(kept.tail_solves, 298 - 6 * c);
        assert_eq!(kept.plain_solves, 5 * c);
        let kept = delta_run(29, 6, false, chained);
        assert_eq!(kept.full_solves, 1 + c);
        // Residuals that close (0) and open again: paths blocked before and
        // after take no part; an opening solves everything.
        let kept = delta_run(31, 6, true, chained);
        // (153 when a blocked path's change restarts the solve.)
        assert!(kept.tail_solves >= 175, "{} tail solves", kept.tail_solves);
    }
}

/// The chained form after a plain call: a path that leaves at the next
/// call hands its links back in the output, though the kept solution
/// built again does not cross them and no input moved there.
#[test]
fn chained_form_after_a_plain_call_writes_what_it_took() {
    let mut f = Fabric::big_switch(4, 10.0).unwrap();
    let (a, b) = (f.route(0, 1, 0).unwrap(), f.route(2, 3, 0).unwrap());
    let mut kept = TailMaxMin::new();
    let mut input = f.capacities.clone();
    let mut out = vec![f64::NAN; input.len()];
    let (mut changed, mut moved) = (Vec::new(), Vec::new());
    let deltas: [&[(PathId, i32)]; 3] = [&[(a, 1), (b, 1)], &[], &[(b, -1)]];
    for (call, d) in deltas.iter().enumerate() {
        if call == 1 {
            kept.plain_left = 1;
        }
        let hint: Option<&[u32]> = if call == 0 { None } else { Some(&[]) };
        kept.solve_chained(&f, &mut input, hint, d, &mut changed, &mut out, &mut moved);
    }
    assert_eq!(kept.plain_solves, 1);
    // a alone: 10 on up0 and down1; b's links are free again.
    let mut want = f.capacities.clone();
    MaxMin::new().solve(&f, &mut want, &[a], &mut [0.0]);
    assert_eq!(out, want);
}

/// A path interned after the first call (fabrics route lazily) counts its
/// flows like any other.
#[test]
fn delta_form_takes_paths_interned_later() {
    let mut f = Fabric::big_switch(4, 10.0).unwrap();
    let a = f.route(0, 1, 0).unwrap();
    let mut kept = TailMaxMin::new();
    let mut changed = Vec::new();
    let mut res = f.capacities.clone();
    kept.solve_delta(&f, &mut res, &[(a, 1)], &mut changed);
    assert_eq!(changed, vec![(a, 10.0)]);
    let b = f.route(2, 1, 0).unwrap(); // shares down1 with a
    assert!(b as usize >= 1 && f.num_paths() > a as usize + 1);
    let mut res = f.capacities.clone();
    kept.solve_delta(&f, &mut res, &[(b, 2)], &mut changed);
    // down1 (10) over 3 flows: 10/3 each.
    changed.sort_by_key(|x| x.0);
    assert_eq!(changed.len(), 2);
    assert!((kept.rate_of(a) - 10.0 / 3.0).abs() < 1e-12);
    assert!((kept.rate_of(b) - 10.0 / 3.0).abs() < 1e-12);
}

/// 300 calls of the delta form against fresh solves; at each, a residual
/// moves with probability `moves`/10 (to 0 one time in three when
/// `closes`), else flows come and go. With `chained`, the chained form
/// told exactly which link's input moved: its input array must be left as
/// it was, and its output, kept across calls, must equal the fresh
/// residual on every link and have moved only on the links it lists.
fn delta_run(seed: u64, moves: u32, closes: bool, chained: bool) -> TailMaxMin {
    let mut f = Fabric::big_switch(8, 1.0).unwrap();
    for (l, c) in f.capacities.iter_mut().enumerate() {
        *c = 1.0 / (3.0 + 2.0 * l as f64);
    }
    let mut rng = Pcg32::new(seed, 5);
    let all: Vec<PathId> = (0..80)
        .map(|_| f.route(rng.below(8), rng.below(8), 0).unwrap())
        .collect();
    let mut on = vec![false; 80];
    let mut was = vec![false; 80];
    let mut input = f.capacities.clone();
    let mut kept = TailMaxMin::new();
    let mut last: std::collections::BTreeMap<PathId, f64> = Default::default();
    let mut changed = Vec::new();
    let (mut inp, mut out) = (input.clone(), vec![f64::NAN; input.len()]);
    let mut moved: Option<Vec<u32>> = None; // the first call: any link
    let mut listed = Vec::new();
    for step in 0..300 {
        let deltas: Vec<(PathId, i32)> = (0..80)
            .filter(|&i| on[i] != was[i])
            .map(|i| (all[i], if on[i] { 1 } else { -1 }))
            .collect();
        was.clone_from(&on);
        let paths: Vec<PathId> = (0..80).filter(|&i| on[i]).map(|i| all[i]).collect();
        let mut want = vec![0.0; paths.len()];
        let (mut res1, mut res2) = (input.clone(), input.clone());
        if chained && step == 100 {
            kept.plain_left = 5; // as after a window of full solves
        }
        if chained {
            for &l in moved.iter().flatten() {
                inp[l as usize] = input[l as usize];
            }
            let before = out.clone();
            let precise = kept.solve_chained(
                &f,
                &mut inp,
                moved.as_deref(),
                &deltas,
                &mut changed,
                &mut out,
                &mut listed,
            );
            assert_eq!(inp, input, "step {step}: the input was changed");
            if precise {
                let mut l2 = listed.clone();
                l2.sort_unstable();
                l2.dedup();
                assert_eq!(l2.len(), listed.len(), "step {step}: a link listed twice");
                for (l, (a, b)) in out.iter().zip(&before).enumerate() {
                    if a.to_bits() != b.to_bits() {
                        assert!(
                            listed.contains(&(l as u32)),
                            "step {step}: link {l} moved unlisted"
                        );
                    }
                }
            }
            res1.copy_from_slice(&out);
            moved = Some(Vec::new());
        } else {
            kept.solve_delta(&f, &mut res1, &deltas, &mut changed);
        }
        MaxMin::new().solve(&f, &mut res2, &paths, &mut want);
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-12 * b.abs().max(1e-12);
        for (&p, &w) in paths.iter().zip(&want) {
            let got = kept.rate_of(p);
            assert!(close(got, w), "step {step}: path {p} rate {got} vs {w}");
        }
        for ((a, b), c) in res1.iter().zip(&res2).zip(&f.capacities) {
            assert!(
                (a - b).abs() <= 1e-12 * c,
                "step {step}: residual {a} vs {b}"
            );
        }
        let mut expect: Vec<(PathId, f64)> = Vec::new();
        let mut live: Vec<PathId> = paths.clone();
        live.sort_unstable();
        live.dedup();
        for &p in &live {
            let r = kept.rate_of(p);
            if last.get(&p).copied().unwrap_or(0.0).to_bits() != r.to_bits() {
                expect.push((p, r));
            }
        }
        let mut got = changed.clone();
        got.sort_by_key(|x| x.0);
        assert_eq!(got, expect, "step {step}");
        last = live.iter().map(|&p| (p, kept.rate_of(p))).collect();
        let x = rng.below(10);
        if x < moves {
            let l = rng.below(16) as usize;
            input[l] = f.capacities[l] * (0.5 + 0.5 * (rng.below(100) as f64 / 100.0));
            if closes && rng.below(3) == 0 {
                input[l] = 0.0;
            }
            if let Some(m) = moved.as_mut() {
                m.push(l as u32);
            }
            continue;
        }
        match x - moves {
            0 | 1 => on[rng.below(80) as usize] = true,
            _ => {
                let i = (0..80).filter(|&i| on[i]).nth(rng.below(6) as usize);
                if let Some(i) = i {
                    on[i] = false;
                }
            }
        }
        if (0..80).filter(|&i| on[i]).count() < 5 {
            on.iter_mut().for_each(|o| *o = rng.below(2) == 0);
        }
    }
    kept
}

/// A group whose input moves on a tight link at every call is solved from
/// scratch each time; after a window of such calls the solver answers
/// plainly for a stretch, then keeps again (and the rates stay right).
#[test]
fn a_group_that_never_tail_solves_hands_over_to_plain_solves() {
    let mut f = Fabric::big_switch(4, 10.0).unwrap();
    let paths = [
        f.route(0, 1, 0).unwrap(),
        f.route(2, 1, 0).unwrap(),
        f.route(0, 3, 0).unwrap(),
    ];
    let mut kept = TailMaxMin::new();
    let calls = WINDOW + PLAIN_FIRST + WINDOW;
    for call in 0..calls {
        // up0 (link 0) shrinks a little at every call: tight for paths 0 and 2.
        let mut res = f.capacities.clone();
        res[0] = 10.0 - (call % 7) as f64 * 0.5;
        let mut want_res = res.clone();
        let (mut got, mut want) = ([0.0; 3], [0.0; 3]);
        kept.solve(&f, &mut res, &paths, &mut got);
        MaxMin::new().solve(&f, &mut want_res, &paths, &mut want);
        for (g, w) in got.iter().zip(&want) {
            assert!(
                (g - w).abs() <= 1e-12 * w,
                "call {call}: {got:?} vs {want:?}"
            );
        }
    }
    assert_eq!(kept.plain_solves, PLAIN_FIRST as u64);
    assert_eq!(kept.full_solves + kept.tail_solves, 2 * WINDOW as u64);
}
