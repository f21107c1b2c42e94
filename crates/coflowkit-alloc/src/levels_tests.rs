use super::*;
use crate::MaxMin;
use coflowkit_model::Pcg32;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

#[test]
fn the_parking_lot_by_hand_with_groups_and_switches() {
    // A 4-port big switch, C = 10 (up l = l, down l = 4 + l), down1 = 12.
    // up0: x0 + x1 ≤ 10; down1: x0 + x2 + x3 ≤ 12; up2: x2 ≤ 10; up3: x3 ≤ 10.
    // down1's share 4 < up0's 5: x0 = x2 = x3 = 4 (group down1), then up0
    // leaves 6: x1 = 6 (group up0).
    let mut f = Fabric::big_switch(4, 10.0).unwrap();
    let dn1 = 4 + 1;
    f.capacities[dn1] = 12.0;
    let p = [
        f.route(0, 1, 0).unwrap(),
        f.route(0, 2, 0).unwrap(),
        f.route(2, 1, 0).unwrap(),
        f.route(3, 1, 0).unwrap(),
    ];
    let mut lm = LevelMaxMin::new();
    for &q in &p {
        lm.set_count(&f, q, 1);
    }
    let res = f.capacities.clone();
    lm.solve(&f, &res);
    let rates: Vec<f64> = p.iter().map(|&q| lm.rate_of(q)).collect();
    assert_eq!(rates, [4.0, 6.0, 4.0, 4.0]);
    let groups: Vec<_> = p.iter().map(|&q| lm.group_of(q)).collect();
    assert_eq!(groups, [Some(5), Some(0), Some(5), Some(5)]);
    // Each new path started in its first link (no levels yet): p0 and p1 on
    // up0, p2 on up2, p3 on up3. down1 saturated first and took p0, p2, p3.
    let mut sw = lm.switched.clone();
    sw.sort_unstable();
    let mut want = vec![p[0], p[2], p[3]];
    want.sort_unstable();
    assert_eq!(sw, want);
    // Two more flows on p2: down1 carries 5 flows, 12 / 5 = 2.4 each; up0
    // leaves 7.6 to x1.
    lm.set_count(&f, p[2], 3);
    lm.solve(&f, &res);
    for (q, want) in p.iter().zip([2.4, 7.6, 2.4, 2.4]) {
        assert!(close(lm.rate_of(*q), want), "{}", lm.rate_of(*q));
    }
    // No path changed group; both groups moved.
    assert!(lm.switched.is_empty());
    let mut cg = lm.changed_groups.clone();
    cg.sort_unstable();
    assert_eq!(cg, [0, 5]);
    // p0 leaves: down1 has 12 for 4 flows (3 on p2, 1 on p3), 3 each; up0
    // now gives p1 its whole 10. Both levels moved again.
    lm.set_count(&f, p[0], 0);
    lm.solve(&f, &res);
    assert_eq!(lm.rate_of(p[0]), 0.0);
    assert_eq!(lm.rate_of(p[1]), 10.0);
    assert_eq!(lm.rate_of(p[2]), 3.0);
    let mut cg = lm.changed_groups.clone();
    cg.sort_unstable();
    assert_eq!(cg, [0, 5]);
    assert_eq!(lm.members(5).len(), 2);
}

#[test]
fn a_saturated_link_in_the_residual_freezes_its_paths_at_zero() {
    let mut f = Fabric::big_switch(3, 10.0).unwrap();
    let a = f.route(0, 1, 0).unwrap();
    let b = f.route(2, 1, 0).unwrap();
    let mut lm = LevelMaxMin::new();
    lm.set_count(&f, a, 2);
    lm.set_count(&f, b, 1);
    let mut res = f.capacities.clone();
    res[0] = 0.0; // up0 is full: a gets nothing, b has down1 alone.
    lm.solve(&f, &res);
    assert_eq!(lm.rate_of(a), 0.0);
    assert_eq!(lm.rate_of(b), 10.0);
    assert_eq!(lm.group_of(a), Some(0));
}

/// The paths with flows (sorted, with their counts), each one's rate in `lm`
/// checked against a fresh `MaxMin::solve_counted` on `res` (to 1e-9).
fn check_rates(
    f: &Fabric,
    res: &[f64],
    count: &[u32],
    lm: &LevelMaxMin,
    at: &str,
) -> Vec<(PathId, u32)> {
    let live: Vec<(PathId, u32)> = (0..f.num_paths() as u32)
        .filter(|&p| count[p as usize] > 0)
        .map(|p| (p, count[p as usize]))
        .collect();
    let paths: Vec<PathId> = live.iter().map(|c| c.0).collect();
    let ns: Vec<u32> = live.iter().map(|c| c.1).collect();
    let mut want = vec![0.0; paths.len()];
    let mut work = res.to_vec();
    MaxMin::new().solve_counted(f, &mut work, &paths, &ns, &mut want);
    for (&p, &w) in paths.iter().zip(&want) {
        let got = lm.rate_of(p);
        assert!(close(got, w), "{at} path {p}: {got} vs {w}");
    }
    live
}

/// A random fabric (a big switch when `big`, else `fattree:k=4`) and `n`
/// routed paths on it.
fn random_paths(g: &mut Pcg32, big: bool, n: usize, salt: u64) -> (Fabric, Vec<PathId>) {
    let (mut f, ports) = if big {
        let ports = 3 + g.below(6);
        (Fabric::big_switch(ports, 10.0).unwrap(), ports)
    } else {
        (Fabric::from_spec("fattree:k=4", 16).unwrap(), 16)
    };
    let paths = (0..n)
        .map(|i| {
            f.route(g.below(ports), g.below(ports), i as u64 * salt)
                .unwrap()
        })
        .collect();
    (f, paths)
}

/// On random FatTrees and big switches, under random count changes and
/// residuals, every path's rate equals a fresh `MaxMin` solve (to 1e-9), every
/// path's group is one of its links and among that group's members, and every
/// path whose rate moved (and whose count the caller did not set) is named, as
/// a member of a group whose level moved or as a path that changed group.
#[test]
fn random_changes_give_the_rates_of_a_fresh_solve() {
    let mut g = Pcg32::new(77, 3);
    for case in 0..60 {
        let (f, paths) = random_paths(&mut g, case % 3 == 0, 30, 7919);
        let mut count = vec![0u32; f.num_paths()];
        let mut lm = LevelMaxMin::new();
        let mut prev: Vec<f64> = vec![0.0; f.num_paths()];
        for step in 0..25 {
            let mut told = Vec::new();
            for _ in 0..1 + g.below(4) {
                let p = paths[g.below(paths.len() as u32) as usize];
                told.push(p);
                let n = if g.below(3) == 0 { 0 } else { g.below(5) };
                count[p as usize] = n;
                lm.set_count(&f, p, n);
            }
            let mut res = f.capacities.clone();
            for r in res.iter_mut() {
                match g.below(8) {
                    0 => *r = 0.0,
                    1 => *r *= 0.3,
                    _ => {}
                }
            }
            lm.solve(&f, &res);
            let live = check_rates(&f, &res, &count, &lm, &format!("case {case} step {step}"));
            for &(p, _) in &live {
                let grp = lm.group_of(p).unwrap();
                assert!(f.path(p).contains(&grp));
                assert!(lm.members(grp).contains(&p));
            }
            // The moved groups' members and the switched paths cover every
            // path whose rate moved (but those whose count the caller set).
            let mut moved = Vec::new();
            lm.moved_paths(&mut moved);
            for &(p, _) in &live {
                let r = lm.rate_of(p);
                if r.to_bits() != prev[p as usize].to_bits() && !told.contains(&p) {
                    assert!(
                        moved.contains(&p),
                        "case {case} step {step}: {p} moved unnamed"
                    );
                }
            }
            for p in 0..f.num_paths() {
                prev[p] = if count[p] > 0 {
                    lm.rate_of(p as PathId)
                } else {
                    0.0
                };
            }
        }
    }
}

/// `solve_kept` (restarts from the lowest level a departure reaches) gives the
/// rates of a fresh solve under runs of departures with an arrival now and
/// then, on the fabric's capacities, and restarts more often than not.
#[test]
fn restarts_give_the_rates_of_a_fresh_solve() {
    let mut g = Pcg32::new(91, 5);
    let (mut restarted, mut whole, mut fallbacks) = (0, 0, 0);
    for case in 0..40 {
        let (f, paths) = random_paths(&mut g, case % 4 == 0, 40, 104_729);
        let mut count = vec![0u32; f.num_paths()];
        let mut lm = LevelMaxMin::new();
        for &p in &paths {
            count[p as usize] += 1 + g.below(4);
            lm.set_count(&f, p, count[p as usize]);
        }
        let caps = f.capacities.clone();
        for step in 0..40 {
            for _ in 0..1 + g.below(3) {
                let p = paths[g.below(paths.len() as u32) as usize];
                let n = &mut count[p as usize];
                if g.below(8) == 0 {
                    *n += 1; // an arrival now and then
                } else if *n > 0 {
                    *n -= 1;
                }
                lm.set_count(&f, p, *n);
            }
            lm.solve_kept(&f, &caps);
            check_rates(&f, &caps, &count, &lm, &format!("case {case} step {step}"));
        }
        restarted += lm.restarted;
        whole += lm.whole;
        fallbacks += lm.fallbacks;
    }
    assert!(restarted > whole, "restarted {restarted}, whole {whole}");
    // Both ends of a restart ran: fillings over the candidates that stood,
    // and ones that overloaded a link left out and were solved again.
    assert!(
        fallbacks > 0 && fallbacks < restarted,
        "restarted {restarted}, solved again {fallbacks}"
    );
}
