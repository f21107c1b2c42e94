//! Stream (../shared/papers/004_690cd0cb6f2c8b3e.txt, §III-B/C) worked by hand
//! on a two-stage DAG: eq. (5) with Weighted-Priority (WP), Information-Relay
//! (IR) and Child-to-Parent (CP), every class computed from the paper's formulas
//! before the simulation, then checked against the classes the policy hands the
//! engine and against the flow completion times those classes cause. The audit
//! these tests back is docs/policies/stream-audit.md.
//!
//! Setting of every test: big switch, every link 128 MiB/s (1 MiB = 7.8125 ms on
//! one link), K = 4 queues, τ_0 = 1 MiB, E = 10 (τ_q = 10^q MiB), α = β = 1,
//! quantities in MiB, no delay, no starvation timer. With these:
//!
//! ```text
//! (3)  H = τ_q · (n_fin/n + n/T)                 T = β·S + X (MiB)
//! (5)  P = K − ⌈K · min(1, (τ_q + α·H) / (W·T))⌉  W = α·ln(m+1) if m > 1, else 1
//!      a unit in class q moves down when P > q, i.e. ratio ≤ c = (K − q − 1)/K;
//!      for fixed S, n, n_fin that happens at T* = (A + √(A² + 4·c·W·B)) / (2·c·W),
//!      A = τ_q·(1 + α·n_fin/n), B = α·τ_q·n.
//! ```
//!
//! Crossings used below (n = 1, n_fin = 0):
//!
//! ```text
//! m = 1 (W = 1),      q = 0: c = 3/4: T* = (1 + √4)/1.5                 = 2 MiB
//! m = 1 (W = 1),      q = 1: c = 1/2: T* = 10 + √120                    = 20.954451 MiB
//! m = 1 (W = 1),      q = 2: c = 1/4: T* = 2·(100 + √10100)             = 400.998 MiB
//! m = 2 (W = ln 3),   q = 0: cW = 0.8239592: T* = (1 + √4.2958369)/1.6479184 = 1.8645583 MiB
//! m = 2 (W = ln 3),   q = 1: cW = 0.5493061: T* = (10 + √121.97225)/1.0986123 = 19.155169 MiB
//! ```

use coflowkit_policy::{
    build, AnyPolicy, Decision, NonClairvoyantPolicy, NonClairvoyantView, Stream, StreamConfig,
};
use coflowkit_sim::{simulate, SimOptions};
use coflowkit_trace::read_text;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

const MIB: f64 = 1_048_576.0;

/// (time, global flow index, class) for every active flow at every policy call.
type Log = Arc<Mutex<Vec<(f64, u32, u8)>>>;

/// Stream, unchanged, plus a record of the classes it hands the engine (by
/// change, to the engine: the classes named so far).
struct Observed {
    inner: Stream,
    log: Log,
    known: BTreeMap<u32, u8>,
}

impl NonClairvoyantPolicy for Observed {
    fn decide(&mut self, v: &NonClairvoyantView, out: &mut Decision) {
        self.inner.decide(v, out);
        let mut log = self.log.lock().unwrap();
        if out.class_delta {
            self.known.extend(out.class_moves.iter().copied());
        } else {
            self.known
                .extend(v.active.iter().copied().zip(out.classes.iter().copied()));
        }
        for &f in v.active {
            log.push((v.now_s, f, self.known[&f]));
        }
    }
}

/// The setting of the module doc, with the three mechanisms on.
fn paper() -> StreamConfig {
    StreamConfig {
        queues: 4,
        first_threshold: 1.0,
        multiplier: 10.0,
        alpha: 1.0,
        beta: 1.0,
        unit_bytes: MIB,
        delay_s: 0.0,
        starvation_s: 0.0,
        weighted: true,
        relay: true,
        child_to_parent: true,
        settle: false,
        reeval_s: 0.0,
    }
}

struct Run {
    flow_finish_s: Vec<f64>,
    cct_s: Vec<f64>,
    log: Vec<(f64, u32, u8)>,
}

impl Run {
    /// The classes flow `f` was given, each time it changed: (time, class).
    fn classes(&self, f: u32) -> Vec<(f64, u8)> {
        let mut out: Vec<(f64, u8)> = Vec::new();
        for &(t, g, c) in &self.log {
            if g == f && out.last().is_none_or(|&(_, last)| last != c) {
                out.push((t, c));
            }
        }
        out
    }
}

fn run(trace: &str, cfg: StreamConfig) -> Run {
    let w = read_text("worked.csv", trace, None).unwrap();
    let log: Log = Arc::new(Mutex::new(Vec::new()));
    let mut p = AnyPolicy::NonClairvoyant(Box::new(Observed {
        inner: Stream::new(cfg),
        log: log.clone(),
        known: BTreeMap::new(),
    }));
    let opts = SimOptions {
        check_invariants: true,
        ..Default::default()
    };
    let r = simulate(&w, &mut p, &opts, None).unwrap();
    let cct_s = w
        .coflows
        .iter()
        .enumerate()
        .map(|(k, c)| r.coflow_finish_s[k] - c.arrival_s)
        .collect();
    let log = log.lock().unwrap().clone();
    Run {
        flow_finish_s: r.flow_finish_s,
        cct_s,
        log,
    }
}

fn assert_times(got: &[f64], want: &[f64]) {
    assert_eq!(got.len(), want.len(), "got {got:?}, want {want:?}");
    for (g, w) in got.iter().zip(want) {
        assert!((g - w).abs() < 1e-9, "got {got:?}, want {want:?}");
    }
}

fn assert_classes(got: &[(f64, u8)], want: &[(f64, u8)]) {
    assert_eq!(got.len(), want.len(), "got {got:?}, want {want:?}");
    for (g, w) in got.iter().zip(want) {
        assert!(
            g.1 == w.1 && (g.0 - w.0).abs() < 1e-9,
            "got {got:?}, want {want:?}"
        );
    }
}

/// The worked example. Coflow 1 is a two-stage DAG, coflow 2 a probe:
///
/// ```text
/// flow 0 (f1)  coflow 1, stage 2 (child),  host 0 → 1, 4 MiB, starts 0 ms
/// flow 1 (f2)  coflow 1, stage 2 (child),  host 0 → 2, 4 MiB, starts 16 ms
/// flow 2 (f3)  coflow 1, stage 1 (parent), host 3 → 4, 3 MiB, waits for f1 and f2
/// flow 3 (f4)  coflow 2 (one stage),       host 5 → 4, 1 MiB, starts 62.5 ms
/// ```
///
/// Receiver units: u1 = (1, stage 2, host 1), u2 = (1, stage 2, host 2), u3 = (1,
/// stage 1, host 4), u4 = (2, -, host 4). u1 and u2 share sender 0 (IR peers);
/// u3's sender 3 is no child's sender, so u3 gets no relayed bytes. Algorithm 1:
/// stage 1 has no parent, m = 1; stage 2's one parent proposes 1 + 1 = 2, one
/// parent: m = 2 + 1 − 1 = 2, so W(u1) = W(u2) = ln 3 = 1.0986123, W(u3) = 1.
const DAG: &str = "coflow_id,flow_id,src,dst,bytes,start_s,stage,depends_on\n\
                   1,1,0,1,4194304,0,2,\n\
                   1,2,0,2,4194304,0.016,2,\n\
                   1,3,3,4,3145728,0,1,1;2\n\
                   2,4,5,4,1048576,0.0625,,\n";

/// u1 crosses class 0 at T* = 1.8645583 MiB (m = 2), alone on up0 at 128 MiB/s.
const U1_DOWN_S: f64 = 1.864_558_348_258_986_7 / 128.0;

#[test]
fn relay_and_child_to_parent_each_set_a_class_of_the_dag() {
    // 0 ms: f1 alone, u1 in class 0 (T = 0), 128 MiB/s on up0/down1.
    // 14.5669 ms: u1 reaches T* = 1.8645583 MiB → class 1.
    // 16 ms: f2 starts; u1 has X1 = 0.016·128 = 2.048 MiB.
    //   u2 (IR on): X = 0, n = 1, S = X1 = 2.048, T = 2.048:
    //     H = 1·(0/1 + 1/2.048) = 0.48828;
    //     ratio = (1 + 0.48828)/(ln 3 · 2.048) = 1.48828/2.24996 = 0.66147;
    //     4·0.66147 = 2.6459 → ⌈⌉ = 3 → P = 4 − 3 = 1: u2 starts in CLASS 1.
    //   u1 stays in class 1 (with τ_1 = 10 its ratio exceeds 1: P = 0, max(0, 1)).
    //   f1 and f2 share up0 in class 1: 64 MiB/s each. f1's 1.952 MiB left take
    //   30.5 ms: f1 done at 46.5 ms; f2 then alone has 4 − 1.952 = 2.048 MiB
    //   left, 16 ms: done at 62.5 ms. (Class 2 needs T ≥ 19.155 MiB; the stage
    //   has 8 MiB in all.)
    // 62.5 ms: f3 released, f4 starts; both end at host 4.
    //   u3 (CP on): X = 0, n = 1, m = 1, S = X1 + X2 = 8 MiB, T = 8:
    //     H = 1·(0 + 1/8) = 0.125; ratio = 1.125/8 = 0.140625;
    //     4·0.140625 = 0.5625 → ⌈⌉ = 1 → P = 3: u3 starts in CLASS 3 (the last).
    //   u4: T = 0 → class 0. Strict priority on down4: f4 at 128 MiB/s, 1 MiB
    //   (below its 2 MiB crossing) → done 70.3125 ms (CCT 7.8125 ms); f3 then
    //   alone: 3 MiB → 23.4375 ms → done 93.75 ms.
    let r = run(DAG, paper());
    assert_classes(&r.classes(0), &[(0.0, 0), (U1_DOWN_S, 1)]);
    assert_classes(&r.classes(1), &[(0.016, 1)]);
    assert_classes(&r.classes(2), &[(0.0625, 3)]);
    assert_classes(&r.classes(3), &[(0.0625, 0)]);
    assert_times(&r.flow_finish_s, &[0.0465, 0.0625, 0.09375, 0.0703125]);
    assert_times(&r.cct_s, &[0.09375, 0.0078125]);

    // The registry's `stream` with the same parameters (τ_0 given in MiB, unit
    // 1 MiB) is the same policy: same completion times.
    let params: BTreeMap<String, String> = [
        ("queues", "4"),
        ("first_threshold_mb", "1"),
        ("delay_s", "0"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let w = read_text("worked.csv", DAG, None).unwrap();
    let mut p = build("stream", &params).unwrap();
    let reg = simulate(&w, &mut p, &SimOptions::default(), None).unwrap();
    assert_times(&reg.flow_finish_s, &r.flow_finish_s);
}

#[test]
fn without_information_relay_the_second_child_starts_in_class_0() {
    // relay = false: at 16 ms u2 has S = 0, T = 0 → class 0, above u1 (class 1):
    // f2 takes up0 at 128, f1 waits. u2 crosses at its own T* = 1.8645583 MiB
    // (m = 2), 14.5669 ms later: 30.5669 ms → class 1; both at 64. f1's 1.952 MiB
    // take 30.5 ms: done at 61.0669 ms (46.5 ms with relay). f2 had 1.8646 MiB
    // at 30.5669 ms, 1.952 more by 61.0669, 0.18344 left alone at 128: 62.5 ms.
    // The parent is unchanged: CP still gives u3 S = 8 → class 3.
    let r = run(
        DAG,
        StreamConfig {
            relay: false,
            ..paper()
        },
    );
    assert_classes(&r.classes(0), &[(0.0, 0), (U1_DOWN_S, 1)]);
    assert_classes(&r.classes(1), &[(0.016, 0), (0.016 + U1_DOWN_S, 1)]);
    assert_classes(&r.classes(2), &[(0.0625, 3)]);
    assert_times(
        &r.flow_finish_s,
        &[0.016 + U1_DOWN_S + 0.0305, 0.0625, 0.09375, 0.0703125],
    );
}

#[test]
fn without_child_to_parent_the_parent_starts_in_class_0() {
    // child_to_parent = false: at 62.5 ms u3 has S = 0 (no IR peer: sender 3 is
    // nobody else's), T = 0 → class 0, the same as u4: f3 and f4 share down4 at
    // 64 each. f4's 1 MiB takes 15.625 ms: done 78.125 ms (CCT 15.625 ms, twice
    // the 7.8125 ms it gets with CP). f3 has 1 MiB then, alone at 128; u3 crosses
    // T* = 2 MiB (m = 1) at 85.9375 ms → class 1 (nobody to yield to); its last
    // MiB ends at 93.75 ms. The children are unchanged.
    let r = run(
        DAG,
        StreamConfig {
            child_to_parent: false,
            ..paper()
        },
    );
    assert_classes(&r.classes(1), &[(0.016, 1)]);
    assert_classes(&r.classes(2), &[(0.0625, 0), (0.0859375, 1)]);
    assert_classes(&r.classes(3), &[(0.0625, 0)]);
    assert_times(&r.flow_finish_s, &[0.0465, 0.0625, 0.09375, 0.078125]);
    assert_times(&r.cct_s, &[0.09375, 0.015625]);
}

#[test]
fn without_weighted_priority_the_child_crosses_at_two_mib() {
    // weighted = false: W = 1 for stage 2 too, so u1 crosses at T* = 2 MiB,
    // 15.625 ms (14.5669 ms with W = ln 3). At 16 ms u2: ratio = 1.48828/2.048 =
    // 0.72670 ≤ 3/4 → class 1 as before, so the completion times do not change.
    let r = run(
        DAG,
        StreamConfig {
            weighted: false,
            ..paper()
        },
    );
    assert_classes(&r.classes(0), &[(0.0, 0), (0.015625, 1)]);
    assert_classes(&r.classes(1), &[(0.016, 1)]);
    assert_times(&r.flow_finish_s, &[0.0465, 0.0625, 0.09375, 0.0703125]);
}

#[test]
fn child_to_parent_alone_gives_the_parent_its_children_bytes_once() {
    // Coflow 1: child stage 2, f1 0 → 1, 2.5 MiB; parent stage 1, f2 0 → 4, 3 MiB,
    // waits for f1. The parent's sender is the child's (host 0). f1 ends at
    // 2.5/128 = 19.53125 ms (u1, m = 2, class 1 from 14.5669 ms).
    // relay = false, CP on: u2 at 19.53125 ms: X = 0, S = 2.5, n = 1, m = 1:
    //   H = 1/2.5 = 0.4; ratio = 1.4/2.5 = 0.56; 4·0.56 = 2.24 → ⌈⌉ = 3 → P = 1.
    let r = run(
        DOUBLE,
        StreamConfig {
            relay: false,
            ..paper()
        },
    );
    assert_classes(&r.classes(0), &[(0.0, 0), (U1_DOWN_S, 1)]);
    assert_classes(&r.classes(1), &[(0.01953125, 1)]);
}

/// A child and its parent sent from the same host (see the test above).
const DOUBLE: &str = "coflow_id,flow_id,src,dst,bytes,start_s,stage,depends_on\n\
                      1,1,0,1,2621440,0,2,\n\
                      1,2,0,4,3145728,0,1,1\n";

#[test]
fn a_finished_child_is_not_counted_twice() {
    // Both mechanisms on. CP gives the parent S = 2.5 MiB (its one child). IR
    // relays bytes between receivers a sender serves at the same time; u1 is
    // finished when u2 starts, and its bytes are already in S through CP. So S
    // stays 2.5 and u2 starts in class 1 (hand computation of the test above).
    // (Audit D3, fixed: stream.rs used to add u1's X again as relayed bytes, u1
    // sharing sender 0 with u2: S = 5, H = 0.2, ratio = 1.2/5 = 0.24, 4·0.24 =
    // 0.96 → ⌈⌉ = 1 → class 3. A unit's relay peers now leave out the units
    // its Child-to-Parent sum counted.)
    let r = run(DOUBLE, paper());
    assert_classes(&r.classes(1), &[(0.01953125, 1)]);
}

#[test]
fn every_class_boundary_is_crossed_when_it_is_reached() {
    // Single-stage coflows (m = 1, W = 1) into host 1.
    //   coflow 1: host 0 → 1, 60 MiB, from 0 ms;  coflow 2: host 2 → 1, 40 MiB,
    //   from 170 ms.
    // Coflow 1 alone at 128: class 1 at 2 MiB (15.625 ms), class 2 at 20.954451
    // MiB (163.70665 ms); class 3 needs 401 MiB. At 170 ms coflow 2 arrives in
    // class 0 and takes down1; class 1 at 2 MiB (185.625 ms), class 2 at 20.954451
    // MiB (170 + 163.70665 = 333.70665 ms). Then both are in class 2 at 64 each:
    // coflow 2's 19.045549 MiB left take 297.58670 ms → done 631.29335 ms, CCT
    // 461.29335 ms; coflow 1 ends when down1 has carried 100 MiB: 781.25 ms.
    // (Audit D1, fixed: stream.rs used to ask no wake-up for the next boundary
    // after a demotion, so coflow 2 stayed in class 1, kept down1 and ended at
    // 482.5 ms, CCT 312.5 ms; coflow 1 reached class 2 only at the next event,
    // 170 ms. The crossing is now solved from the class after the demotion.)
    let t = "coflow_id,flow_id,src,dst,bytes,start_s\n\
             1,1,0,1,62914560,0\n\
             2,2,2,1,41943040,0.17\n";
    let r = run(t, paper());
    let second = 20.954_451_150_103_32 / 128.0;
    assert_classes(&r.classes(0), &[(0.0, 0), (0.015625, 1), (second, 2)]);
    assert_classes(
        &r.classes(1),
        &[(0.17, 0), (0.185625, 1), (0.17 + second, 2)],
    );
    let left = 40.0 - 20.954_451_150_103_32;
    assert_times(&r.cct_s, &[0.78125, second + left / 64.0]);
}

#[test]
fn a_delayed_demotion_schedules_the_next_boundary() {
    // delay_s = 1 ms; one coflow, host 0 → 1, 100 MiB (m = 1, W = 1), alone at
    // 128 MiB/s, so it ends at 781.25 ms whatever its class.
    //   15.625 ms: X = 2 MiB = T* of class 0 → class 1 decided, applied at
    //   16.625 ms. In that call the next boundary is class 1's, T* = 20.954451
    //   MiB (163.70665 ms) → class 2 decided there, applied at 164.70665 ms.
    //   Class 3 needs 401 MiB: never.
    // (Audit D1, fixed: the call that applied the delayed class solved the
    // crossing of class 0, already passed, so no wake-up was asked and, with no
    // other event, class 2 never came.)
    let t = "coflow_id,flow_id,src,dst,bytes,start_s\n\
             1,1,0,1,104857600,0\n";
    let r = run(
        t,
        StreamConfig {
            delay_s: 1e-3,
            ..paper()
        },
    );
    let second = 20.954_451_150_103_32 / 128.0;
    assert_classes(
        &r.classes(0),
        &[(0.0, 0), (0.016625, 1), (second + 1e-3, 2)],
    );
    assert_times(&r.cct_s, &[0.78125]);
}

#[test]
#[ignore = "stream.rs freezes relayed bytes between events when it solves for the next crossing: docs/policies/stream-audit.md, D2"]
fn relayed_bytes_count_as_they_arrive() {
    // One coflow (m = 1), two receivers of one sender: f1 0 → 1 and f2 0 → 2,
    // 4 MiB each, from 0 ms; they share up0 at 64 MiB/s. Each unit has X = x and,
    // relayed by sender 0, S = x: T = 2x. Class 1 at T* = 2 MiB, i.e. x = 1 MiB:
    // 15.625 ms, for both. In class 1 the next boundary is T = 20.954 MiB > 8 MiB,
    // so both stay in class 1 to the end (62.5 ms).
    // (stream.rs solves for X with S frozen at its value of the last event, S =
    // 0, so it wakes up at X = 2 MiB, 31.25 ms, where T = 4 and eq. (5) with τ_0
    // gives ratio = (1 + 1/4)/4 = 0.3125 → P = 4 − ⌈1.25⌉ = 2: class 2, never 1.)
    let t = "coflow_id,flow_id,src,dst,bytes,start_s\n\
             1,1,0,1,4194304,0\n\
             1,2,0,2,4194304,0\n";
    let r = run(t, paper());
    assert_classes(&r.classes(0), &[(0.0, 0), (0.015625, 1)]);
    assert_classes(&r.classes(1), &[(0.0, 0), (0.015625, 1)]);
}
