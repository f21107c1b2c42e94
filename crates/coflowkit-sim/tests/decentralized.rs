//! FatTree fabrics and the decentralized policies (spq, baraat, stream), with CCTs
//! computed by hand. Host links carry 128 MiB/s ("1 Gbps" as CoflowSim counts it),
//! so 1 MiB takes 7.8125 ms on them.

use coflowkit_model::Fabric;
use coflowkit_policy::build;
use coflowkit_sim::{simulate, SimOptions};
use coflowkit_trace::read_text;
use std::collections::BTreeMap;
use std::path::Path;

fn run(trace: &str, fabric: Option<&str>, policy: &str, params: &[(&str, &str)]) -> Vec<f64> {
    let mut w = read_text("hand.csv", trace, None).unwrap();
    if let Some(spec) = fabric {
        w = w
            .with_fabric(Fabric::from_spec(spec, w.fabric.ports()).unwrap())
            .unwrap();
    }
    let params: BTreeMap<String, String> = params
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let mut p = build(policy, &params).unwrap();
    let opts = SimOptions {
        check_invariants: true,
        ..Default::default()
    };
    let r = simulate(&w, &mut p, &opts, None).unwrap();
    w.coflows
        .iter()
        .enumerate()
        .map(|(k, c)| r.coflow_finish_s[k] - c.arrival_s)
        .collect()
}

fn assert_ccts(got: &[f64], want: &[f64]) {
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(want) {
        assert!((g - w).abs() < 1e-9, "got {got:?}, want {want:?}");
    }
}

const MIB: f64 = 1_048_576.0;

/// Two coflows into port 1: coflow 1 sends 8 MiB 0→1 at 0 ms, coflow 2 sends
/// 4 MiB 2→1 at `t2` ms; optional priorities for spq.
fn two(t2_ms: f64, prio: Option<(u32, u32)>) -> String {
    let (head, p1, p2) = match prio {
        Some((a, b)) => (",priority", format!(",{a}"), format!(",{b}")),
        None => ("", String::new(), String::new()),
    };
    format!(
        "coflow_id,flow_id,src,dst,bytes,start_s{head}\n1,1,0,1,{},0{p1}\n2,2,2,1,{},{}{p2}\n",
        8.0 * MIB,
        4.0 * MIB,
        t2_ms / 1000.0
    )
}

#[test]
fn fattree_paths_carry_the_flows() {
    // k = 4 FatTree, 16 ports on 16 hosts (spread: port p on host p), host links
    // 128 MiB/s, switch links 64 MiB/s (fabric_gbps = 0.5). Flow 1: host 0 → host
    // 1 (same edge: two host links) 8 MiB → 62.5 ms. Flow 2: host 2 → host 13 (other
    // pod: crosses four 64 MiB/s switch links) 4 MiB → 62.5 ms. They share no link.
    let t = format!(
        "coflow_id,flow_id,src,dst,bytes,start_s\n1,1,0,1,{},0\n2,2,2,13,{},0\n",
        8.0 * MIB,
        4.0 * MIB
    );
    let f = "fattree:k=4,gbps=1,fabric_gbps=0.5,ports=16,placement=spread";
    assert_ccts(&run(&t, Some(f), "fair", &[]), &[0.0625, 0.0625]);
    // Both into host 1: they share h1.down (128): fair gives 64 each until flow 2
    // (4 MiB, capped at 64 by the switch links anyway) ends at 62.5 ms; flow 1 has
    // 4 MiB left, alone at 128 → 31.25 ms more.
    let t = format!(
        "coflow_id,flow_id,src,dst,bytes,start_s\n1,1,0,1,{},0\n2,2,13,1,{},0\n",
        8.0 * MIB,
        4.0 * MIB
    );
    assert_ccts(&run(&t, Some(f), "fair", &[]), &[0.09375, 0.0625]);
}

#[test]
fn spq_serves_the_workload_classes_in_strict_priority() {
    // Coflow 2 has priority 0, coflow 1 priority 1: coflow 2 takes down1 (4 MiB →
    // 31.25 ms), then coflow 1 alone: 8 MiB → 62.5 ms more = 93.75 ms.
    assert_ccts(
        &run(&two(0.0, Some((1, 0))), None, "spq", &[]),
        &[0.09375, 0.03125],
    );
    // Same classes: max-min inside the class (= fair): coflow 2 done at 62.5 ms.
    assert_ccts(
        &run(&two(0.0, Some((3, 3))), None, "spq", &[]),
        &[0.09375, 0.0625],
    );
    // Classes ≥ K go to the last queue: K = 2, priorities 5 and 1 are one class.
    assert_ccts(
        &run(&two(0.0, Some((5, 1))), None, "spq", &[("queues", "2")]),
        &[0.09375, 0.0625],
    );
}

#[test]
fn baraat_worked_example() {
    // FIFO (default H = 100 MiB, nobody is heavy): coflow 1 first (62.5 ms), then
    // coflow 2 (31.25 ms more).
    assert_ccts(
        &run(&two(0.0, None), None, "baraat", &[]),
        &[0.0625, 0.09375],
    );
    // H = 5 MiB: coflow 1 turns heavy at 39.0625 ms (5 MiB at 128); coflow 2
    // (4 MiB, never heavy) then runs first and ends at 39.0625 + 31.25 = 70.3125
    // ms; coflow 1's last 3 MiB end at 70.3125 + 23.4375 = 93.75 ms.
    assert_ccts(
        &run(&two(0.0, None), None, "baraat", &[("heavy_mb", "5")]),
        &[0.09375, 0.0703125],
    );
    // H = 1 MiB: both turn heavy (coflow 1 at 7.8125 ms, coflow 2 after its first
    // MiB at 15.625 ms) and share down1 at 64 each: coflow 2's last 3 MiB end at
    // 62.5 ms; coflow 1 (4 MiB sent by then) ends 31.25 ms later.
    assert_ccts(
        &run(&two(0.0, None), None, "baraat", &[("heavy_mb", "1")]),
        &[0.09375, 0.0625],
    );
}

#[test]
fn stream_worked_example() {
    // K = 4, τ_0 = 1 MiB, E = 10, α = β = 1, no delay. Coflow 1 alone at 128 MiB/s
    // crosses X* = (1 + √(1 + 3))/1.5 = 2 MiB at 15.625 ms → class 1. Coflow 2
    // arrives at 16 ms in class 0 and takes down1, crosses 2 MiB at 31.625 ms →
    // class 1: both share 64 each. Coflow 2's last 2 MiB take 31.25 ms: done at
    // 62.875 ms (CCT 46.875 ms). Coflow 1 had 2.048 MiB at 16 ms, 2 MiB more by
    // 62.875 ms, and its last 3.952 MiB alone take 30.875 ms: done at 93.75 ms.
    let p = [
        ("queues", "4"),
        ("first_threshold_mb", "1"),
        ("delay_s", "0"),
    ];
    assert_ccts(
        &run(&two(16.0, None), None, "stream", &p),
        &[0.09375, 0.046875],
    );
    // With a 1 ms delay each class change reaches the senders 1 ms later: coflow 1
    // is demoted at 16.625 ms, after coflow 2 arrived (16 ms), so the two share
    // down1 from 16 to 16.625 ms (class 0 both); coflow 2's own demotion comes at
    // its crossing + 1 ms. Checked against the invariants only (bytes conserved,
    // capacities), and CCTs differ from the no-delay run.
    let mut q = p;
    q[2] = ("delay_s", "0.001");
    let delayed = run(&two(16.0, None), None, "stream", &q);
    assert!((delayed[1] - 0.046875).abs() > 1e-6, "{delayed:?}");
    assert!(
        (delayed[0] - 0.09375).abs() < 1e-9,
        "work-conserving: {delayed:?}"
    );
}

/// [`bursty_baraat_trace`] on its big switch, or on the fabric `spec`.
fn bursty_workload(spec: Option<&str>) -> coflowkit_model::Workload {
    let w = read_text("bursty.csv", &bursty_baraat_trace(), None).unwrap();
    match spec {
        Some(spec) => w
            .with_fabric(Fabric::from_spec(spec, w.fabric.ports()).unwrap())
            .unwrap(),
        None => w,
    }
}

/// A bursty workload where the number of light coflows under `baraat` with
/// `heavy_mb = 2` moves between none and several: 60 coflows in bursts of
/// 1-6 every 40 ms, 1-10 flows each of 0.25-6 MiB on 8 ports (LCG, fixed seed).
fn bursty_baraat_trace() -> String {
    let mut seed = 20261206u64;
    let mut next = move |n: u64| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 33) % n
    };
    let mut s = String::from("coflow_id,flow_id,src,dst,bytes,start_s\n");
    let (mut k, mut fid, mut t) = (0, 0, 0.0);
    while k < 60 {
        for _ in 0..1 + next(6) {
            k += 1;
            for _ in 0..1 + next(10) {
                fid += 1;
                let (src, dst) = (next(8), next(8));
                let bytes = (1 + next(24)) as f64 * 0.25 * MIB;
                s.push_str(&format!("{k},{fid},{src},{dst},{bytes},{t}\n"));
            }
        }
        t += 0.04;
    }
    s
}

/// `w` under `p` with the invariants checked (coflow sums included), delta
/// decisions or not, in class form `form`, deciding at `realloc`.
fn checked(
    w: &coflowkit_model::Workload,
    p: &mut coflowkit_policy::policy::AnyPolicy,
    delta: bool,
    form: coflowkit_sim::ClassForm,
    realloc: coflowkit_sim::Realloc,
) -> coflowkit_sim::SimResult {
    let opts = SimOptions {
        check_invariants: true,
        delta_decisions: delta,
        class_form: form,
        realloc,
        ..Default::default()
    };
    simulate(w, p, &opts, None).unwrap()
}

/// Every coflow of run `r` finishes when it does in `rates` (1e-9 relative).
fn same_finish_times(rates: &coflowkit_sim::SimResult, r: &coflowkit_sim::SimResult, ctx: &str) {
    let pairs = rates.coflow_finish_s.iter().zip(&r.coflow_finish_s);
    for (k, (a, b)) in pairs.enumerate() {
        assert!(
            (a - b).abs() <= 1e-9 * a.abs().max(1e-3),
            "{ctx}: coflow {k} finishes at {b}, by rates at {a}"
        );
    }
}

#[test]
fn baraat_by_classes_equals_baraat_by_rates_and_switches_between_them() {
    use coflowkit_policy::policies::baraat::Baraat;
    use coflowkit_policy::policy::AnyPolicy;
    use coflowkit_sim::{ClassForm, Realloc};
    // Under a delta driver `baraat` answers with classes (light coflow of rank
    // i in class i, heavy ones in one class below), served by group or per
    // flow; past its class limit it answers by rates, and back. Every form
    // must give the rates of the plain priority max-min (a driver without
    // delta decisions gets rates only), at every event and under the
    // engine's coarser decision times too.
    for fabric in [None, Some("fattree:k=4")] {
        let w = bursty_workload(fabric);
        for realloc in [Realloc::Event, Realloc::Coflow, Realloc::Interval(0.05)] {
            let sim = |limit: usize, delta: bool, form: ClassForm| {
                let mut p = AnyPolicy::NonClairvoyant(Box::new(
                    Baraat::new(2.0 * MIB).with_class_limit(limit),
                ));
                checked(&w, &mut p, delta, form, realloc)
            };
            let rates = sim(253, false, ClassForm::Auto);
            assert_eq!(rates.class_group_calls, 0);
            for (limit, form) in [
                (253, ClassForm::Groups),
                (253, ClassForm::Flows),
                (1, ClassForm::Groups),
                (1, ClassForm::Flows),
            ] {
                let r = sim(limit, true, form);
                let ctx = format!("{fabric:?}, {realloc:?}, limit {limit}, {form:?}");
                same_finish_times(&rates, &r, &ctx);
                if form == ClassForm::Groups && realloc == Realloc::Event {
                    // Classes served by group at some calls; with limit 1 also
                    // by rates at others (two light coflows at once), and back.
                    assert!(r.class_group_calls > 0, "{ctx}");
                    if limit == 1 {
                        assert!(r.class_group_calls < r.policy_calls, "{ctx}");
                        assert!(r.class_form_switches >= 2, "{ctx}");
                    } else {
                        assert_eq!(r.class_group_calls, r.policy_calls, "{ctx}");
                    }
                }
            }
        }
    }
}

#[test]
fn coflow_orders_by_classes_equal_their_rates() {
    use coflowkit_sim::{ClassForm, Realloc};
    // Under a delta driver `fifo`, `scf`, `ncf`, `tcf`, `lcof` and
    // `aalo` (its default `form=auto`, and `form=classes`) tell their order
    // as one class per coflow
    // (`RankClasses`; coflows that move alone as class renames), served by
    // group or per flow; `aalo` also asks to be woken at its coflows' thresholds, so the
    // engine keeps coflow sums in the group form (checked against the flows'
    // sums at every call by `check_invariants`). Every form must give the
    // finish times of the plain priority max-min (no delta decisions: rates).
    let aalo = [
        ("queues", "4"),
        ("first_threshold_bytes", "1048576"),
        ("multiplier", "2"),
        ("form", "classes"),
    ];
    let cases: [(&str, &[(&str, &str)]); 7] = [
        ("fifo", &[]),
        ("scf", &[]),
        ("ncf", &[]),
        ("tcf", &[]),
        ("lcof", &[]),
        ("aalo", &aalo),
        ("aalo", &aalo[..3]),
    ];
    for fabric in [None, Some("fattree:k=4")] {
        let w = bursty_workload(fabric);
        for realloc in [Realloc::Event, Realloc::Interval(0.05)] {
            for (name, params) in cases {
                let params: BTreeMap<String, String> = params
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect();
                let sim = |delta: bool, form: ClassForm| {
                    let mut p = build(name, &params).unwrap();
                    checked(&w, &mut p, delta, form, realloc)
                };
                let rates = sim(false, ClassForm::Auto);
                assert_eq!(rates.class_group_calls, 0);
                for form in [ClassForm::Groups, ClassForm::Flows] {
                    let r = sim(true, form);
                    let ctx = format!("{name} {params:?}, {fabric:?}, {realloc:?}, {form:?}");
                    same_finish_times(&rates, &r, &ctx);
                    if form == ClassForm::Groups && realloc == Realloc::Event {
                        assert_eq!(r.class_group_calls, r.policy_calls, "{ctx}");
                    }
                }
            }
            // `aalo:form=rates` stays by rates under a delta driver (at
            // events, where the default above is served by class groups).
            if realloc != Realloc::Event {
                continue;
            }
            let params: BTreeMap<String, String> = aalo[..3]
                .iter()
                .chain(&[("form", "rates")])
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            let mut p = build("aalo", &params).unwrap();
            let r = checked(&w, &mut p, true, ClassForm::Groups, realloc);
            assert_eq!(
                r.class_group_calls, 0,
                "aalo:form=rates, {fabric:?}, {realloc:?}"
            );
        }
    }
}

#[test]
fn coflow_sums_hold_on_the_fb_trace_on_a_small_fattree() {
    // The first 8 FB coflows on `fattree:k=4` (with waves of their flows on
    // the same class paths, and counters that join groups before any flow):
    // `baraat` asks to be woken at its coflows' bytes, so the engine keeps
    // coflow sums in the group form; `check_invariants` compares them with
    // the flows' sums at every call. A counter moved between groups while it
    // had no flows used to index its old group's list, which need not exist
    // (a panic found by `reproduce stream`'s tests).
    let trace =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces/FB2010-1Hr-150-0.txt");
    let fb = coflowkit_trace::read_path(&trace.to_string_lossy(), None)
        .unwrap_or_else(|e| panic!("the FB trace from ../shared is needed: {e}"));
    let w = fb.head(8);
    let f = Fabric::from_spec("fattree:k=4", w.fabric.ports()).unwrap();
    let w = w.with_fabric(f).unwrap();
    for (name, params) in [
        ("baraat", vec![]),
        ("baraat", vec![("heavy_mb", "10")]),
        ("aalo", vec![("queues", "4"), ("form", "classes")]),
    ] {
        let params: BTreeMap<String, String> = params
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let sim = |delta: bool| {
            let mut p = build(name, &params).unwrap();
            let form = coflowkit_sim::ClassForm::Auto;
            checked(&w, &mut p, delta, form, coflowkit_sim::Realloc::Event)
        };
        let (rates, classes) = (sim(false), sim(true));
        assert!(classes.class_group_calls > 0, "{name} {params:?}");
        same_finish_times(&rates, &classes, &format!("{name} {params:?}"));
    }
}
