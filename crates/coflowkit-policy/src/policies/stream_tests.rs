//! Tests of `stream` (policies/stream.rs): eq. (5), Algorithm 1, the
//! mechanisms and the delays, by hand.

use super::*;
use crate::testkit::Case;

fn cfg(queues: u32) -> StreamConfig {
    StreamConfig {
        queues,
        first_threshold: 10.0,
        multiplier: 10.0,
        alpha: 1.0,
        beta: 1.0,
        unit_bytes: 1.0,
        delay_s: 0.0,
        starvation_s: 0.0,
        weighted: true,
        relay: true,
        child_to_parent: true,
        settle: false,
        reeval_s: 0.0,
    }
}

/// What a decision says, whatever its form: every active flow's class (a
/// class delta decision's moves applied to `known`, the classes its driver
/// keeps), the `At` wake-ups, and each group wake-up as the flows it names
/// with its bytes (sorted).
#[allow(clippy::type_complexity)]
fn said(
    c: &Case,
    d: &Decision,
    known: &mut std::collections::HashMap<u32, u8>,
) -> (Vec<u8>, Vec<(Vec<u32>, u64)>) {
    let classes = if d.class_delta {
        assert!(d.classes.is_empty());
        for &(f, q) in &d.class_moves {
            known.insert(f, q);
        }
        c.active.iter().map(|f| known[f]).collect()
    } else {
        d.classes.clone()
    };
    let mut wakes = Vec::new();
    for w in &d.wakeups {
        match *w {
            Wakeup::At(t) => wakes.push((Vec::new(), t.to_bits())),
            Wakeup::GroupSent { group, bytes } => {
                let mut flows: Vec<u32> = if d.class_delta {
                    d.wake_flows
                        .iter()
                        .filter(|x| x.0 == group)
                        .map(|x| x.1)
                        .collect()
                } else {
                    c.active
                        .iter()
                        .zip(&d.wake_groups)
                        .filter(|x| *x.1 == group)
                        .map(|x| *x.0)
                        .collect()
                };
                flows.sort_unstable();
                wakes.push((flows, bytes.to_bits()));
            }
            _ => unreachable!("stream asks for no other wake-up"),
        }
    }
    wakes.sort();
    (classes, wakes)
}

#[test]
fn algorithm_one_internal_ids_by_hand() {
    // TPC-DS-like (sub-coflow numbers): scan_a 1, scan_b 2, scan_c 3, join1 4,
    // join2 5, agg 6; join1 ← scan_a, scan_b; join2 ← join1, scan_c; agg ← join2.
    let tpcds = [(0, 1, 4), (0, 2, 4), (0, 3, 5), (0, 4, 5), (0, 5, 6)];
    let ids: Vec<u32> = (1..=6)
        .map(|s| internal_id(&tpcds, s, &mut Vec::new()))
        .collect();
    // agg 1; join2 2; join1 and scan_c 3; scan_a and scan_b 4.
    assert_eq!(ids, vec![4, 4, 3, 3, 2, 1]);
    // Tao-like: db1 1, db2 2, leader 3, follower1 4, follower2 5, web 6;
    // leader ← db1, db2; each follower ← leader; web ← both followers.
    let tao = [
        (0, 1, 3),
        (0, 2, 3),
        (0, 3, 4),
        (0, 3, 5),
        (0, 4, 6),
        (0, 5, 6),
    ];
    let ids: Vec<u32> = (1..=6)
        .map(|s| internal_id(&tao, s, &mut Vec::new()))
        .collect();
    // web 1; followers 2; leader: both propose 3, two parents → 3 + 2 − 1 = 4;
    // databases 5.
    assert_eq!(ids, vec![5, 5, 4, 2, 2, 1]);
    // Different proposals: the largest. Stage 3 ← parents 1 (id 1) and 2 (id 2).
    let mixed = [(0, 2, 1), (0, 3, 1), (0, 3, 2)];
    assert_eq!(internal_id(&mixed, 3, &mut Vec::new()), 3);
}

#[test]
fn equation_five_by_hand() {
    let s = Stream::new(cfg(4));
    // Nothing received yet: highest class.
    assert_eq!(s.class(0, 0.0, 0.0, 1, 0, 1), 0);
    // τ_0 = 10, n = 2, n^fin = 0, X = 40: H = 10·(0 + 2/40) = 0.5;
    // ratio = (10 + 0.5)/40 = 0.2625; P = 4 − ⌈1.05⌉ = 2.
    assert_eq!(s.class(0, 40.0, 0.0, 2, 0, 1), 2);
    // One of the two finished: H = 10·(0.5 + 0.05) = 5.5; ratio 15.5/40 =
    // 0.3875; P = 4 − ⌈1.55⌉ = 2.
    assert_eq!(s.class(0, 40.0, 0.0, 2, 1, 1), 2);
    // X = 12: H = 10·(2/12) = 1.667; ratio = 11.667/12 = 0.972; P = 4 − 4 = 0.
    assert_eq!(s.class(0, 12.0, 0.0, 2, 0, 1), 0);
    // Relay S = 28 with β = 1 makes the total 40: H = 10·(2/40) = 0.5,
    // ratio = 10.5/40 = 0.2625, P = 4 − ⌈1.05⌉ = 2.
    assert_eq!(s.class(0, 12.0, 28.0, 2, 0, 1), 2);
    // Weighted-Priority, stage m = 4: W = ln 5 = 1.609; X = 12:
    // ratio = 11.667/(1.609·12) = 0.604, P = 4 − ⌈2.42⌉ = 1.
    assert_eq!(s.class(0, 12.0, 0.0, 2, 0, 4), 1);
    // Huge X: the last class, never beyond.
    assert_eq!(s.class(0, 1e12, 0.0, 2, 0, 1), 3);
}

#[test]
fn settling_crosses_one_boundary_at_a_time() {
    // K = 4, τ_0 = 10, n = 1, nothing finished, X = 30 (no relay):
    // (5) in τ_0: ratio = 10·(1 + 1/30)/30 = 0.344, P = 4 − ⌈1.38⌉ = 2.
    // Settling: class 0 says 2 > 0, go to 1; in τ_1 = 100 the ratio is
    // 100·(1 + 1/30)/30 = 3.44 → 1, P = 0, not above 1: class 1.
    let s = Stream::new(cfg(4));
    assert_eq!(s.class(0, 30.0, 0.0, 1, 0, 1), 2);
    assert_eq!(s.settle(0, 30.0, 0.0, 1, 0, 1), 1);
    // Below the first boundary (X* = 14.268) it stays; a huge X settles in
    // the last class; a unit already in class 2 never goes back.
    assert_eq!(s.settle(0, 14.0, 0.0, 1, 0, 1), 0);
    assert_eq!(s.settle(0, 1e12, 0.0, 1, 0, 1), 3);
    assert_eq!(s.settle(2, 30.0, 0.0, 1, 0, 1), 2);
}

#[test]
fn reevaluation_wakes_units_with_relayed_bytes() {
    // The relay case below: receiver 2 has S = 30 from receiver 1 (class 2
    // either way). With reeval_s = 0.02 it asks to be looked at again at
    // t + 0.02; receiver 1 (S = 0) does not; off by default.
    let c = Case::new(4, 10.0, &[(0, 0, 1, 1e6, 30.0), (0, 0, 2, 1e6, 0.0)]);
    let mut on = cfg(4);
    on.reeval_s = 0.02;
    for (conf, want) in [(cfg(4), 0), (on, 1)] {
        let mut d = Decision::default();
        d.reset(2);
        Stream::new(conf).decide(&c.non_clairvoyant(), &mut d);
        let at = d.wakeups.iter().filter(|w| matches!(w, Wakeup::At(t) if (t - 0.02).abs() < 1e-12));
        assert_eq!(at.count(), want);
    }
}

#[test]
fn crossing_solves_equation_five() {
    let s = Stream::new(cfg(4));
    for &(q, sr, n, fin, m) in &[
        (0u8, 0.0, 2u32, 0u32, 1u32),
        (1, 5.0, 7, 3, 1),
        (0, 0.0, 150, 20, 4),
    ] {
        let x = s.crossing(q, sr, n, fin, m).unwrap();
        assert!(s.class(q, x * (1.0 + 1e-9), sr, n, fin, m) > q, "{q} {x}");
        assert!(s.class(q, x * (1.0 - 1e-6), sr, n, fin, m) <= q, "{q} {x}");
    }
    // n = 1, no relay, class 0 of 4: c = 3/4, a = 10, b = 10:
    // 0.75·X² − 10·X − 10 ≥ 0 → X = (10 + √(100 + 30))/1.5 = 14.268.
    let x = s.crossing(0, 0.0, 1, 0, 1).unwrap();
    assert!((x - (10.0 + 130f64.sqrt()) / 1.5).abs() < 1e-9, "{x}");
    assert_eq!(s.crossing(3, 0.0, 1, 0, 1), None);
}

#[test]
fn receivers_decide_per_unit_and_priorities_only_move_down() {
    // Coflow 0: two flows into receiver 1 (one unit), 30 B received in all.
    // Coflow 1: one flow into receiver 2, nothing yet. K = 4, τ_0 = 10 B.
    let mut c = Case::new(
        4,
        10.0,
        &[
            (0, 0, 1, 1e6, 20.0),
            (0, 3, 1, 1e6, 10.0),
            (1, 0, 2, 1e6, 0.0),
        ],
    );
    let mut p = Stream::new(cfg(4));
    let mut d = Decision::default();
    d.reset(3);
    p.decide(&c.non_clairvoyant(), &mut d);
    // Unit (0, 1): X = 30, n = 2: H = 10·(2/30) = 0.667, ratio = 10.667/30 =
    // 0.356, P = 4 − ⌈1.42⌉ = 2. Unit (1, 2): 0 → class 0.
    assert_eq!(d.classes, vec![2, 2, 0]);
    assert_eq!(d.wake_groups, vec![0, 0, 1]);
    // Unit (1, 2) asks to be woken at its crossing: n = 1, X* = 14.268.
    assert!(d.wakeups.iter().any(
        |w| matches!(w, Wakeup::GroupSent { group: 1, bytes } if (bytes - 14.268).abs() < 1e-3)
    ));
    // Flow 1 finishes; the class stays 2 (never moves up).
    c.active = vec![0, 2];
    c.groups = vec![
        crate::view::ActiveCoflow {
            coflow: 0,
            start: 0,
            end: 1,
        },
        crate::view::ActiveCoflow {
            coflow: 1,
            start: 1,
            end: 2,
        },
    ];
    c.count_paths();
    c.set_sent(1, 10.0);
    d.reset(2);
    p.decide(&c.non_clairvoyant(), &mut d);
    assert_eq!(d.classes, vec![2, 0]);
}

#[test]
fn delta_drivers_get_the_same_decisions_from_the_started_and_finished_lists() {
    // The flows of the test above, decided by two Streams: one told only
    // the active flows, one (a delta driver) also the flows that started
    // and finished. Flow 3 (coflow 1, receiver 2) starts and finishes
    // between two calls: neither may count it.
    let mut c = Case::new(
        4,
        10.0,
        &[
            (0, 0, 1, 1e6, 20.0),
            (0, 3, 1, 1e6, 10.0),
            (1, 0, 2, 1e6, 0.0),
            (1, 3, 2, 5.0, 5.0),
        ],
    );
    let (mut full, mut delta) = (Stream::new(cfg(4)), Stream::new(cfg(4)));
    let (mut known_full, mut known_delta) = Default::default();
    let mut both = |c: &Case| {
        let mut out = Vec::new();
        for (p, delta_ok, known) in [
            (&mut full, false, &mut known_full),
            (&mut delta, true, &mut known_delta),
        ] {
            let mut d = Decision {
                delta_ok,
                ..Decision::default()
            };
            d.reset(c.active.len());
            p.decide(&c.non_clairvoyant(), &mut d);
            assert_eq!(d.class_delta, delta_ok);
            out.push(said(c, &d, known));
        }
        assert_eq!(out[0], out[1]);
        out.pop().unwrap()
    };
    let group = |coflow, start, end| crate::view::ActiveCoflow { coflow, start, end };
    c.active = vec![0, 1, 2];
    c.groups = vec![group(0, 0, 2), group(1, 2, 3)];
    c.count_paths();
    c.started = vec![2, 0, 1];
    // Unit (0, 1): X = 30, n = 2 → class 2 (the test above); unit (1, 2): 0.
    assert_eq!(both(&c).0, vec![2, 2, 0]);
    // Flow 1 finishes; flow 3 starts and finishes unseen; unit (1, 2)
    // received 12 B by flow 2: n = 1, H = 10·(0 + 1/12), ratio =
    // 10.833/12 = 0.903 → P = 4 − ⌈3.61⌉ = 0.
    c.active = vec![0, 2];
    c.groups = vec![group(0, 0, 1), group(1, 1, 2)];
    c.count_paths();
    c.set_sent(1, 10.0);
    c.set_sent(2, 12.0);
    c.started = vec![3];
    c.finished = vec![3, 1];
    assert_eq!(both(&c).0, vec![2, 0]);
    // Flow 2 reaches 20 B: ratio = 10.5/20 = 0.525 → P = 4 − ⌈2.1⌉ = 1.
    c.set_sent(2, 20.0);
    c.started.clear();
    c.finished.clear();
    assert_eq!(both(&c).0, vec![2, 1]);
}

#[test]
fn information_relay_shares_bytes_between_receivers_of_one_sender() {
    // Coflow 0: sender 0 sends to receivers 1 and 2 (two units sharing it);
    // 30 B reached receiver 1, none receiver 2. With relay, receiver 2 sees
    // S = 30: H = 10·(1/30), ratio = 10.333/30 = 0.344 → P = 4 − ⌈1.38⌉ = 2.
    let c = Case::new(4, 10.0, &[(0, 0, 1, 1e6, 30.0), (0, 0, 2, 1e6, 0.0)]);
    let mut d = Decision::default();
    d.reset(2);
    Stream::new(cfg(4)).decide(&c.non_clairvoyant(), &mut d);
    assert_eq!(d.classes[1], 2);
    let mut off = cfg(4);
    off.relay = false;
    d.reset(2);
    Stream::new(off).decide(&c.non_clairvoyant(), &mut d);
    assert_eq!(d.classes[1], 0);
}

#[test]
fn child_to_parent_and_delay() {
    // Coflow 0: stage 2 (child, receiver 1, already finished with 50 B) and
    // stage 1 (parent, receiver 2, just started). The parent's unit gets the
    // child's 50 B as S: H = 10·(1/50) = 0.2, ratio = 10.2/50 = 0.204 →
    // P = 4 − ⌈0.816⌉ = 3, but with a
    // delay of 1 ms the class applies only at t = 1 ms.
    let mut c = Case::new(4, 10.0, &[(0, 0, 1, 50.0, 50.0), (0, 3, 2, 1e6, 0.0)]);
    c.flow_stage = vec![2, 1];
    c.stage_parents = vec![(0, 2, 1)];
    let mut conf = cfg(4);
    conf.delay_s = 1e-3;
    let mut p = Stream::new(conf);
    let mut d = Decision::default();
    // First call: only the child is active; it records its 50 B.
    let mut first = c.clone();
    first.active = vec![0];
    first.groups = vec![crate::view::ActiveCoflow {
        coflow: 0,
        start: 0,
        end: 1,
    }];
    first.count_paths();
    d.reset(1);
    p.decide(&first.non_clairvoyant(), &mut d);
    // Then the child is done and the parent starts.
    c.active = vec![1];
    c.groups = vec![crate::view::ActiveCoflow {
        coflow: 0,
        start: 0,
        end: 1,
    }];
    c.count_paths();
    d.reset(1);
    p.decide(&c.non_clairvoyant(), &mut d);
    assert_eq!(d.classes, vec![0]);
    assert_eq!(d.wakeups, vec![Wakeup::At(1e-3)]);
    d.reset(1);
    let mut view = c.non_clairvoyant();
    view.common.now_s = 1e-3;
    p.decide(&view, &mut d);
    assert_eq!(d.classes, vec![3]);
    // What the run reports per flow: (5) gave the child's unit (m = 2,
    // W = ln 3) class 3 at once (10.2 / (1.0986 · 50) = 0.186 → 4 − ⌈0.74⌉),
    // but it finished before the delay was over, so it ended in class 0; the
    // parent's unit (m = 1) was given 3 by its first evaluation, taken after
    // the delay, and holds the child's 50 B (unit 1 B) as S.
    let cols: HashMap<&str, Vec<f64>> = p.flow_columns().into_iter().collect();
    assert_eq!(cols["stream_first_class"], vec![3.0, 3.0]);
    assert_eq!(cols["stream_last_class"], vec![0.0, 3.0]);
    assert_eq!(cols["stream_child_mib"], vec![0.0, 50.0 / MIB]);
    assert_eq!(cols["stream_internal_id"], vec![2.0, 1.0]);
}

#[test]
fn a_dormant_coflow_wakes_with_every_byte_it_received() {
    // K = 4, τ_0 = 10, β = 0.1. Coflow 0: sender 0 → receiver 1 (flow 0),
    // later sender 0 → receiver 2 (flow 1, a new unit relaying flow 0's
    // bytes). Two Streams decide each call: one told only the active flows
    // (never dormant), one a delta driver (dormant once receiver 1's unit is
    // in the last class).
    let mut c = Case::new(4, 10.0, &[(0, 0, 1, 1e6, 100.0), (0, 0, 2, 1e6, 0.0)]);
    let mut s = cfg(4);
    s.beta = 0.1;
    let (mut full, mut delta) = (Stream::new(s.clone()), Stream::new(s));
    let mut known = Default::default();
    let mut both = |full: &mut Stream, delta: &mut Stream, c: &Case| {
        let mut out = Vec::new();
        for (p, delta_ok) in [(full, false), (delta, true)] {
            let mut d = Decision {
                delta_ok,
                ..Decision::default()
            };
            d.reset(c.active.len());
            p.decide(&c.non_clairvoyant(), &mut d);
            out.push(said(c, &d, &mut known));
        }
        assert_eq!(out[0], out[1]);
        out.pop().unwrap().0
    };
    let group = |coflow, start, end| crate::view::ActiveCoflow { coflow, start, end };
    // Receiver 1: X = 100, n = 1: H = 10·(1/100), ratio = 10.1/100 → P =
    // 4 − ⌈0.404⌉ = 3, the last class: the coflow is dormant afterwards.
    c.active = vec![0];
    c.groups = vec![group(0, 0, 1)];
    c.count_paths();
    c.started = vec![0];
    assert_eq!(both(&mut full, &mut delta, &c), vec![3]);
    assert!(delta.is_dormant(0) && !full.is_dormant(0));
    // 900 B more reach receiver 1; the dormant Stream does not add them yet.
    c.set_sent(0, 1000.0);
    c.started.clear();
    assert_eq!(both(&mut full, &mut delta, &c), vec![3]);
    assert_eq!(delta.ux[0], 100.0);
    assert_eq!(full.ux[0], 1000.0);
    // Receiver 2's unit appears: the coflow wakes and relays all 1000 B.
    // β·S = 100: H = 10·(1/100), ratio = 10.1/100 → P = 3. Had it relayed
    // the 100 B seen before, β·S = 10: ratio = (10 + 10·0.1)/10 > 1 → P = 0.
    c.active = vec![0, 1];
    c.groups = vec![group(0, 0, 2)];
    c.count_paths();
    c.started = vec![1];
    assert_eq!(both(&mut full, &mut delta, &c), vec![3, 3]);
    assert_eq!(delta.ux[0], 1000.0);
    // Flow 0 finishes at 1e6 B while the coflow is dormant again: its bytes
    // are added at its finish.
    c.set_sent(0, 1e6);
    c.active = vec![1];
    c.groups = vec![group(0, 0, 1)];
    c.count_paths();
    c.started.clear();
    c.finished = vec![0];
    assert_eq!(both(&mut full, &mut delta, &c), vec![3]);
    assert_eq!(delta.ux[0], 1e6);
}
