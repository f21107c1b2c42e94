//! `Live`'s tests (a child module of the crate root, so they see its private
//! fields).

use super::*;

const MB: f64 = 1e6;

fn live(policy: &str, hosts: u32) -> Live {
    Live::new(policy, &BTreeMap::new(), hosts, 100.0 * MB).unwrap()
}

fn decl(src: u32, dst: u32, port: u32, size: Option<f64>) -> Declared {
    Declared {
        src,
        dst,
        dst_port: port,
        size,
        ..Declared::default()
    }
}

fn rate_of(d: &[FlowDecision], f: u64) -> f64 {
    d.iter().find(|x| x.flow == f).unwrap().rate
}

#[test]
fn fair_shares_a_sender_uplink_equally() {
    // Two flows out of host 0 to hosts 1 and 2: each gets half of 100 MB/s.
    let mut l = live("fair", 3);
    let a = l.add_single(1, 0, 1, 40000, 5000, 0.0).unwrap();
    let b = l.add_single(2, 0, 2, 40001, 5001, 0.0).unwrap();
    let d = l.decide(0.1);
    assert_eq!(d.len(), 2);
    assert!((rate_of(&d, a) - 50.0 * MB).abs() < 1.0);
    assert!((rate_of(&d, b) - 50.0 * MB).abs() < 1.0);
    // One finishes: the other gets the whole link.
    assert_eq!(l.finish(a, 0.2).unwrap(), Some(0.2));
    let d = l.decide(0.2);
    assert_eq!(d.len(), 1);
    assert!((rate_of(&d, b) - 100.0 * MB).abs() < 1.0);
}

#[test]
fn coda_identifies_flows_added_one_slot_at_a_time() {
    // Nothing registered: each flow is a slot (and a coflow) of its own, added
    // as the master sees it. Two bursts 5 s apart, three senders each, one
    // receiver per burst: CODA's identifier groups each burst.
    let params: BTreeMap<String, String> = [("labels", "identify"), ("interval_s", "0.1")]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let mut l = Live::new("coda", &params, 6, 100.0 * MB).unwrap();
    assert_eq!(l.label_of(0), Some(u32::MAX)); // a labelling policy, nothing seen
    let mut id = 100;
    let mut burst = |l: &mut Live, t: f64, dst: u32, port: u32| -> Vec<u64> {
        let slots: Vec<u64> = (0..3)
            .map(|i| {
                id += 1;
                let f = l.add_single(id, i, dst, 40000 + i, port + i, t).unwrap();
                l.decide(t); // a round per new flow, as the master may run
                f
            })
            .collect();
        l.decide(t + 0.2); // the identification round is due
        slots
    };
    let a = burst(&mut l, 0.0, 3, 7000);
    let la: Vec<u32> = a.iter().map(|&f| l.label_of(f).unwrap()).collect();
    assert!(
        la[0] != u32::MAX && la.iter().all(|&x| x == la[0]),
        "{la:?}"
    );
    let b = burst(&mut l, 5.0, 4, 8000);
    let lb: Vec<u32> = b.iter().map(|&f| l.label_of(f).unwrap()).collect();
    assert!(
        lb[0] != u32::MAX && lb.iter().all(|&x| x == lb[0]),
        "{lb:?}"
    );
    assert_ne!(la[0], lb[0]);
    // The first burst's labels are kept (the policy did not start afresh
    // when slots were added).
    assert_eq!(
        a.iter()
            .map(|&f| l.label_of(f).unwrap())
            .collect::<Vec<_>>(),
        la
    );
    assert_eq!(live("fair", 2).label_of(0), None);
}

#[test]
fn registered_slots_are_contiguous_and_the_coflow_ends_with_its_last_flow() {
    let mut l = live("fair", 4);
    let flows = [decl(0, 3, 7000, None), decl(1, 3, 7001, None)];
    let first = l.register(42, &flows, 0.0).unwrap();
    assert_eq!(first, 0);
    assert_eq!(l.slot_state(1), Some(SlotState::Declared));
    // Nothing active yet: no decision.
    assert!(l.decide(0.5).is_empty());
    l.start(0, 50000, 1.0).unwrap();
    l.start(1, 50001, 1.5).unwrap();
    // Both into host 3's downlink: half each.
    let d = l.decide(1.5);
    assert!((rate_of(&d, 0) - 50.0 * MB).abs() < 1.0);
    assert_eq!(l.finish(0, 2.0).unwrap(), None);
    // Arrival is the first flow's start (1.0), not the registration (0.0).
    assert_eq!(l.finish(1, 3.0).unwrap(), Some(2.0));
    assert_eq!(l.slot_coflow_id(1), Some(42));
    assert!(l.register(42, &flows, 4.0).is_err());
}

#[test]
fn varys_sees_registered_sizes_and_backfills_flows_without_one() {
    // Varys (clairvoyant): coflow 1 (10 MB) and coflow 2 (40 MB) both leave
    // host 0. Smallest bottleneck first: coflow 1 takes the whole uplink. A
    // third flow without a size, host 1 -> host 2, is hidden from Varys and
    // backfills its own idle links at full rate.
    let mut l = live("varys", 3);
    let a = l
        .register(1, &[decl(0, 1, 9000, Some(10.0 * MB))], 0.0)
        .unwrap();
    let b = l
        .register(2, &[decl(0, 2, 9001, Some(40.0 * MB))], 0.0)
        .unwrap();
    l.start(a, 1, 0.0).unwrap();
    l.start(b, 2, 0.0).unwrap();
    let c = l.add_single(3, 1, 2, 3, 9002, 0.0).unwrap();
    let d = l.decide(0.0);
    assert!((rate_of(&d, a) - 100.0 * MB).abs() < 1.0, "{d:?}");
    assert!(rate_of(&d, b) < 1.0, "{d:?}");
    // c shares host 2's downlink with b (which got nothing): the whole link.
    let dc = d.iter().find(|x| x.flow == c).unwrap();
    assert!(dc.backfill);
    assert!((dc.rate - 100.0 * MB).abs() < 1.0, "{d:?}");
    // Observed progress moves remaining bytes: after 9 MB of a, a still first.
    l.set_sent(a, 9.0 * MB).unwrap();
    assert_eq!(l.sent(a), Some(9.0 * MB));
    let d = l.decide(0.09);
    assert!((rate_of(&d, a) - 100.0 * MB).abs() < 1.0);
}

#[test]
fn aalo_serves_the_newcomer_first() {
    // Aalo: a coflow that has sent 50 MB is in a lower queue than a newcomer
    // sharing the uplink, which takes everything.
    let mut l = live("aalo", 3);
    let a = l.add_single(1, 0, 1, 1, 1, 0.0).unwrap();
    l.set_sent(a, 50.0 * MB).unwrap();
    let b = l.add_single(2, 0, 2, 2, 2, 1.0).unwrap();
    let d = l.decide(1.0);
    assert!((rate_of(&d, b) - 100.0 * MB).abs() < 1.0, "{d:?}");
    assert!(rate_of(&d, a) < 1.0, "{d:?}");
}

#[test]
fn class_policies_get_strict_priority_rates() {
    // spq decides classes (the workload's priority, 0 here for every flow):
    // the driver shares one class max-min, half of the uplink each.
    let mut l = live("spq", 3);
    let a = l.add_single(1, 0, 1, 1, 1, 0.0).unwrap();
    let b = l.add_single(2, 0, 2, 2, 2, 1.0).unwrap();
    let d = l.decide(1.0);
    for f in [a, b] {
        let x = d.iter().find(|x| x.flow == f).unwrap();
        assert_eq!(x.class, Some(0), "{d:?}");
        assert!((x.rate - 50.0 * MB).abs() < 1.0, "{d:?}");
    }
}

#[test]
fn a_restored_arrival_is_kept_when_the_first_flow_starts() {
    // A restarted master registers coflow 5 again and restores its arrival
    // (-3 s: before this process started); its flow's start keeps it.
    let mut l = live("fair", 2);
    let f = l.register(5, &[decl(0, 1, 80, None)], 0.0).unwrap();
    l.set_arrival(5, -3.0).unwrap();
    l.start(f, 1234, 1.0).unwrap();
    assert_eq!(l.finish(f, 2.0).unwrap(), Some(5.0));
    assert!(l.set_arrival(6, 0.0).is_err());
    assert!(l.set_arrival(5, f64::NAN).is_err());
}

#[test]
fn registrations_give_policies_stages_priorities_parents_weights_and_reports() {
    // Coflow 9: stage 1 (hosts 0, 1 -> 2) feeds stage 2 (host 2 -> 3);
    // priorities 2, 0 and 1; weight 3; a report of demands 2 and 4 on host
    // 0's uplink and host 3's downlink (scaled to 0.5 and 1).
    let mut l = live("spq", 4);
    let mut flows = [
        decl(0, 2, 80, None),
        decl(1, 2, 80, None),
        decl(2, 3, 81, None),
    ];
    for (f, (stage, prio)) in flows.iter_mut().zip([(1, 2), (1, 0), (2, 1)]) {
        f.stage = stage;
        f.priority = prio;
    }
    let info = CoflowInfo {
        weight: 3.0,
        parents: vec![(1, 2)],
        report: vec![(7, 4.0), (0, 2.0)],
    };
    let single = l.add_single(1, 3, 0, 5, 6, 0.0).unwrap();
    let first = l.register_with(9, &flows, &info, 0.0).unwrap();
    assert_eq!(l.d.flow_stage, [0, 1, 1, 2]);
    assert_eq!(l.d.flow_priority, [0, 2, 0, 1]);
    assert_eq!(l.d.stage_parents, [(1, 1, 2)]);
    assert_eq!(l.d.weight, [1.0, 3.0]);
    assert_eq!(l.d.reports, [vec![], vec![(0, 0.5), (7, 1.0)]]);
    // spq's classes are the registered priorities.
    for i in 0..3 {
        l.start(first + i, 40000 + i as u32, 0.1).unwrap();
    }
    let d = l.decide(0.2);
    let class = |h: u64| d.iter().find(|x| x.flow == h).unwrap().class;
    assert_eq!(
        [single, first, first + 1, first + 2].map(class),
        [Some(0), Some(2), Some(0), Some(1)]
    );
    // stream (it needs the stages) runs; a bad DAG or report is named.
    assert!(Live::new("stream", &BTreeMap::new(), 3, 1.0).is_ok());
    let bad = |info: CoflowInfo, want: &str| {
        let e = live("fair", 4)
            .register_with(1, &flows, &info, 0.0)
            .unwrap_err();
        assert!(e.to_string().contains(want), "{e}");
    };
    let with = |parents: Vec<(u32, u32)>, report: Vec<(u32, f64)>| CoflowInfo {
        parents,
        report,
        ..CoflowInfo::default()
    };
    bad(with(vec![(1, 5)], vec![]), "parent stage 5 has no flow");
    bad(with(vec![(2, 2)], vec![]), "stage 2 is its own parent");
    bad(with(vec![], vec![(8, 1.0)]), "link 8 is out of range");
    bad(
        with(vec![], vec![(1, 1.0), (1, 2.0)]),
        "link 1 appears twice",
    );
    bad(with(vec![], vec![(1, 0.0)]), "every reported demand is 0");
    bad(
        with(vec![], vec![(1, f64::NAN)]),
        "a demand must be a number",
    );
    let heavy = CoflowInfo {
        weight: 0.0,
        ..CoflowInfo::default()
    };
    bad(heavy, "weight");
}

#[test]
fn fair_in_path_mode_gives_every_flow_of_a_path_its_rate() {
    // Two flows 0→1 and one 0→2 on a 90 B/s uplink: 30 each.
    let mut l = live("fair", 3);
    let a = l.add_single(1, 0, 1, 1, 80, 0.0).unwrap();
    let b = l.add_single(2, 0, 1, 2, 80, 0.0).unwrap();
    let c = l.add_single(3, 0, 2, 3, 80, 0.0).unwrap();
    let mut l = l;
    l.fabric.capacities.iter_mut().for_each(|x| *x = 90.0);
    let d = l.decide(0.0);
    for f in [a, b, c] {
        assert!((rate_of(&d, f) - 30.0).abs() < 1e-9, "{d:?}");
    }
}

#[test]
fn bad_input_is_named() {
    let mut l = live("fair", 2);
    let e = l.register(1, &[decl(0, 5, 1, None)], 0.0).unwrap_err();
    assert!(e.to_string().contains("host 5 is out of range"), "{e}");
    let e = l.register(1, &[decl(1, 1, 1, None)], 0.0).unwrap_err();
    assert!(e.to_string().contains("both host 1"), "{e}");
    let e = l
        .register(1, &[decl(0, 1, 1, Some(-3.0))], 0.0)
        .unwrap_err();
    assert!(e.to_string().contains("positive"), "{e}");
    assert!(l.finish(9, 0.0).is_err());
    assert!(Live::new("nope", &BTreeMap::new(), 2, 1.0).is_err());
}

/// A small deterministic generator (xorshift64*), so the test needs no crate.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn both(a: &mut Live, b: &mut Live, f: &mut dyn FnMut(&mut Live)) {
    f(a);
    f(b);
}

/// Drives `a` (compacting whenever finished coflows are at least as many as
/// the others) and `b` (never compacting) through the same random workload:
/// registrations declared ahead, flows of their own, byte reports, flow ends
/// and rounds. Returns the number of rounds whose decisions differ.
fn differing_rounds(a: &mut Live, b: &mut Live, seed: u64) -> usize {
    let mut rng = Rng(seed);
    let hosts = a.hosts();
    let (mut declared, mut active): (Vec<u64>, Vec<u64>) = (Vec::new(), Vec::new());
    let mut sent: BTreeMap<u64, f64> = BTreeMap::new();
    let (mut next_id, mut differ) = (seed << 32, 0usize);
    for step in 0..600 {
        let now = step as f64 * 0.01;
        match rng.below(14) {
            0 if declared.len() < 8 => {
                let n = 1 + rng.below(4) as u32;
                let flows: Vec<Declared> = (0..n)
                    .map(|_| {
                        let src = rng.below(hosts as u64) as u32;
                        let dst = (src + 1 + rng.below(hosts as u64 - 1) as u32) % hosts;
                        let size = (rng.below(3) > 0).then(|| 1e5 * (1 + rng.below(50)) as f64);
                        let mut f = decl(src, dst, 7000 + rng.below(3) as u32, size);
                        f.stage = rng.below(3) as u32; // 0: single-stage
                        f.priority = rng.below(3) as u32;
                        f
                    })
                    .collect();
                let has = |st: u32| flows.iter().any(|f| f.stage == st);
                let info = CoflowInfo {
                    weight: 1.0 + rng.below(3) as f64,
                    parents: if has(1) && has(2) {
                        vec![(1, 2)]
                    } else {
                        vec![]
                    },
                    report: if rng.below(4) == 0 {
                        vec![(flows[0].src, 1.0), (hosts + flows[0].dst, 0.5)]
                    } else {
                        vec![]
                    },
                };
                let id = next_id;
                next_id += 1;
                let mut first = 0;
                both(a, b, &mut |l| {
                    first = l.register_with(id, &flows, &info, now).unwrap()
                });
                declared.extend((0..n as u64).map(|i| first + i));
            }
            1 if active.len() < 12 => {
                let src = rng.below(hosts as u64) as u32;
                let dst = (src + 1) % hosts;
                let id = (1 << 31) + next_id;
                next_id += 1;
                let mut h = 0;
                both(a, b, &mut |l| {
                    h = l.add_single(id, src, dst, 1, 2, now).unwrap()
                });
                active.push(h);
            }
            2..=4 if !declared.is_empty() => {
                let h = declared.swap_remove(rng.below(declared.len() as u64) as usize);
                both(a, b, &mut |l| l.start(h, 40000, now).unwrap());
                active.push(h);
            }
            5 | 6 if !active.is_empty() => {
                for _ in 0..3 {
                    let h = active[rng.below(active.len() as u64) as usize];
                    let x = sent.entry(h).or_insert(0.0);
                    *x += 1e4 * (rng.below(200) * (1 + rng.below(2) * 999)) as f64;
                    let bytes = *x;
                    both(a, b, &mut |l| l.set_sent(h, bytes).unwrap());
                }
            }
            7..=9 if !active.is_empty() => {
                let h = active.swap_remove(rng.below(active.len() as u64) as usize);
                let (ra, rb) = (a.finish(h, now).unwrap(), b.finish(h, now).unwrap());
                assert_eq!(ra, rb);
            }
            _ => {
                let (da, db) = (a.decide(now), b.decide(now));
                let same = da.len() == db.len()
                    && da.iter().zip(&db).all(|(x, y)| {
                        x.flow == y.flow
                            && x.class == y.class
                            && x.backfill == y.backfill
                            && (x.rate - y.rate).abs() <= 1e-9 * x.rate.abs().max(1.0)
                    });
                differ += usize::from(!same);
            }
        }
    }
    differ
}

#[test]
fn compaction_never_changes_a_decision() {
    // Every policy the runtime runs: the same workload with and without
    // compaction gets the same decisions, round by round (handles are never
    // reused, so both name every flow alike).
    let hosts = 6;
    let (mut wrong, mut never) = (Vec::new(), Vec::new());
    for spec in coflowkit_policy::REGISTRY {
        let params = BTreeMap::new();
        let Ok(mut a) = Live::new(spec.name, &params, hosts, 100.0 * MB) else {
            continue; // needs an input the runtime does not supply (stages)
        };
        if !a.policy.compactable() {
            never.push(spec.name);
            continue;
        }
        let mut b = Live::new(spec.name, &params, hosts, 100.0 * MB).unwrap();
        a.set_compaction(1, usize::MAX);
        b.set_compaction(usize::MAX, usize::MAX);
        for seed in 1..=6 {
            let differ = differing_rounds(&mut a, &mut b, seed * 7919 + 13);
            if differ > 0 {
                wrong.push(format!("{} (seed {seed}: {differ} rounds)", spec.name));
            }
        }
        assert!(a.compactions() > 10, "{}: {}", spec.name, a.compactions());
        assert!(a.num_flows() < b.num_flows() / 2, "{}", spec.name);
        // Only the paths of the flows held stay interned.
        let mut held: Vec<u32> = a.d.flow_path.clone();
        held.sort_unstable();
        held.dedup();
        assert_eq!(held, (0..a.fabric.num_paths() as u32).collect::<Vec<_>>());
        assert!(a.fabric.num_paths() < b.fabric.num_paths(), "{}", spec.name);
        assert_eq!(b.compactions(), 0);
        // Both list the same coflows (b has all; a the last HISTORY dropped).
        let (ra, rb): (Vec<_>, Vec<_>) = (a.coflows().collect(), b.coflows().collect());
        assert!(ra.len() <= rb.len());
    }
    assert!(
        wrong.is_empty(),
        "decisions changed by compaction: {wrong:?}"
    );
    // CODA's identifier is not compacted yet (see its `compactable`).
    assert_eq!(never, ["coda"]);
}

#[test]
fn wide_coflows_are_compacted_by_their_flows() {
    // Three coflows of 10 flows each, a minimum of 10 finished flows and no
    // minimum reachable by coflow count: a compaction is due once the finished
    // coflows' flows are at least as many as the others' (10 < 20, then 20 >= 10).
    let mut l = live("fair", 12);
    l.set_compaction(usize::MAX, 10);
    let mut firsts = Vec::new();
    for c in 0..3u32 {
        let flows: Vec<Declared> = (0..10).map(|i| decl(i, 10 + c % 2, 7000, None)).collect();
        let first = l.register(c as u64, &flows, 0.0).unwrap();
        for h in first..first + 10 {
            l.start(h, 40000 + h as u32, 0.0).unwrap();
        }
        firsts.push(first);
    }
    l.decide(0.1);
    let finish_all = |l: &mut Live, first: u64, t: f64| {
        for h in first..first + 10 {
            l.finish(h, t).unwrap();
        }
    };
    finish_all(&mut l, firsts[0], 1.0);
    l.decide(1.0);
    assert_eq!((l.compactions(), l.num_flows()), (0, 30));
    finish_all(&mut l, firsts[1], 2.0);
    l.decide(2.0);
    assert_eq!((l.compactions(), l.num_flows()), (1, 10));
    // Both finished coflows are still listed; the live one's flows still run.
    assert_eq!(l.coflows().filter(|r| r.2.is_finite()).count(), 2);
    assert_eq!(l.decide(2.1).len(), 10);
    // The default minimum (65,536 flows) keeps a small master from compacting.
    let mut m = live("fair", 12);
    let flows: Vec<Declared> = (0..10).map(|i| decl(i, 10, 7000, None)).collect();
    for c in 0..3u64 {
        let first = m.register(c, &flows, 0.0).unwrap();
        for h in first..first + 10 {
            m.start(h, 40000 + h as u32, 0.0).unwrap();
        }
        if c < 2 {
            finish_all(&mut m, first, 1.0);
        }
    }
    m.decide(1.0);
    assert_eq!((m.compactions(), m.num_flows()), (0, 30));
}
