//! The instantaneous metrics (progress, isolation guarantee, disparity,
//! utilization), computed by hand on small traces. Capacity is 128 MiB/s.

use coflowkit_policy::build;
use coflowkit_sim::{simulate, Recording, Series, SimOptions};
use coflowkit_trace::read_text;

fn series(trace: &str, policy: &str, interval_s: f64, per_coflow: bool) -> Series {
    let w = read_text("t", trace, None).unwrap();
    let mut p = build(policy, &Default::default()).unwrap();
    let opts = SimOptions {
        check_invariants: true,
        record: Some(Recording {
            interval_s,
            per_coflow,
        }),
        ..Default::default()
    };
    simulate(&w, &mut p, &opts, None).unwrap().series.unwrap()
}

fn close(a: &[f64], b: &[f64]) {
    assert_eq!(a.len(), b.len(), "{a:?} vs {b:?}");
    for (x, y) in a.iter().zip(b) {
        let same = (x.is_nan() && y.is_nan()) || x == y || (x - y).abs() < 1e-9;
        assert!(same, "{a:?} vs {b:?}");
    }
}

/// The foundation's worked example (2 ports): C1 8 MiB 0→1 and C2 2 MiB 1→1 at 0,
/// C3 4 MiB 0→0 at 16 ms.
const EXAMPLE: &str = "2 3\n1 0 1 1 1\n0 1 8\n2 0 1 1 1\n1 1 2\n3 16 1 1 1\n0 0 4\n";

#[test]
fn drf_keeps_every_coflow_at_the_same_progress() {
    // Every event: t=0 (C1, C2 at 64 on down1), 0.016 (C3 joins, all at 64),
    // 0.03125 (C2 done), 0.0785 (C3 done: C1 alone at 128), 0.10175 (all done).
    // Each coflow is one flow (d = 1 on its links), so P_k = rate / 128: ½ while
    // shared, 1 alone. Utilization = Σ rate · 2 links / (4 · 128).
    let s = series(EXAMPLE, "drf", 0.0, true);
    close(&s.time_s, &[0.0, 0.016, 0.03125, 0.0785, 0.10175]);
    assert_eq!(s.active_coflows, vec![2, 3, 2, 1, 0]);
    close(&s.min_progress, &[0.5, 0.5, 0.5, 1.0, f64::NAN]);
    close(&s.max_progress, &[0.5, 0.5, 0.5, 1.0, f64::NAN]);
    close(&s.disparity, &[1.0, 1.0, 1.0, 1.0, f64::NAN]);
    close(&s.utilization, &[0.5, 0.75, 0.5, 0.5, 0.0]);
    // Per-coflow rows: (sample, coflow index, progress).
    assert_eq!(s.row_sample, vec![0, 0, 1, 1, 1, 2, 2, 3]);
    assert_eq!(s.row_coflow, vec![0, 1, 0, 1, 2, 0, 2, 0]);
    close(&s.row_progress, &[0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 1.0]);
}

#[test]
fn a_starved_coflow_has_zero_progress_and_infinite_disparity() {
    // fifo at t=0: C1 takes down1 at 128 (P = 1), C2 waits (P = 0).
    let s = series(EXAMPLE, "fifo", 0.0, false);
    assert_eq!(s.min_progress[0], 0.0);
    assert_eq!(s.max_progress[0], 1.0);
    assert_eq!(s.mean_progress[0], 0.5);
    assert_eq!(s.disparity[0], f64::INFINITY);
    assert!(s.row_sample.is_empty());
}

#[test]
fn grid_samples_interpolate_remaining_bytes_between_events() {
    // One coflow, fair sharing: 2 MiB 0→1 and 1 MiB 0→2 share up0 at 64 each.
    // t=0: S = up0 3, down1 2, down2 1 (MiB), Γ = 3/128; min_l R/S = 64/2 (down1);
    //   P = 3/128 · 32 = 0.75.
    // t=1/128 (no event: interpolated): each flow sent ½ MiB: S = 2, 1.5, 0.5;
    //   Γ = 2/128; min R/S = 64/1.5 → P = 2/3.
    // t=1/64: the 1 MiB flow ends (an event); the other runs alone at 128: P = 1.
    // The next grid point, 3/128, is when it ends: nothing left to sample.
    // Utilization = 2 flows · 64 · 2 links / (6 · 128) = ⅓ throughout.
    let t = "coflow_id,flow_id,src,dst,bytes,start_s\n1,1,0,1,2097152,0\n1,2,0,2,1048576,0\n";
    let s = series(t, "fair", 1.0 / 128.0, false);
    close(&s.time_s, &[0.0, 1.0 / 128.0, 1.0 / 64.0]);
    close(&s.min_progress, &[0.75, 2.0 / 3.0, 1.0]);
    close(&s.utilization, &[1.0 / 3.0; 3]);
}

#[test]
fn recording_changes_nothing_else() {
    let w = read_text("t", EXAMPLE, None).unwrap();
    let run = |record| {
        let mut p = build("coflex", &Default::default()).unwrap();
        let opts = SimOptions {
            check_invariants: true,
            record,
            ..Default::default()
        };
        simulate(&w, &mut p, &opts, None).unwrap()
    };
    let a = run(None);
    let b = run(Some(Recording {
        interval_s: 0.001,
        per_coflow: true,
    }));
    assert_eq!(a.coflow_finish_s, b.coflow_finish_s);
    assert_eq!(a.events, b.events);
    assert!(a.series.is_none());
    assert_eq!(b.series.unwrap().time_s.len(), 106);
}

#[test]
fn a_horizon_stops_early_and_says_so() {
    // drf on the example up to 0.02 s: events at 0 and 0.016, then C2 would end at
    // 0.03125 > 0.02: the run stops with nothing finished.
    let w = read_text("t", EXAMPLE, None).unwrap();
    let mut p = build("drf", &Default::default()).unwrap();
    let opts = SimOptions {
        check_invariants: true,
        record: Some(Recording {
            interval_s: 0.0,
            per_coflow: false,
        }),
        horizon_s: 0.02,
        ..Default::default()
    };
    let r = simulate(&w, &mut p, &opts, None).unwrap();
    assert!(!r.complete);
    assert!(r.coflow_finish_s.iter().all(|x| x.is_nan()));
    close(&r.series.unwrap().time_s, &[0.0, 0.016]);
}
