//! Small traces with CCTs computed by hand, event by event, for every policy.
//! Capacity is 128 MiB/s everywhere, so 1 MiB takes 1/128 s = 7.8125 ms.

use coflowkit_policy::build;
use coflowkit_sim::{simulate, SimOptions};
use coflowkit_trace::read_text;
use std::collections::BTreeMap;

fn ccts(trace: &str, policy: &str, params: &[(&str, &str)]) -> Vec<f64> {
    let w = read_text("hand", trace, None).unwrap();
    let params: BTreeMap<String, String> = params
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let mut p = build(policy, &params).unwrap();
    let opts = SimOptions {
        check_invariants: true,
        record: None,
        ..Default::default()
    };
    let r = simulate(&w, &mut p, &opts, None).unwrap();
    assert!(r.checks > 0);
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

/// The worked example of the foundation issue (Sincronia format: 2 ports).
/// Coflow 1 at 0 ms: 8 MiB 0→1 (up0, down1). Coflow 2 at 0 ms: 2 MiB 1→1 (up1,
/// down1). Coflow 3 at 16 ms: 4 MiB 0→0 (up0, down0).
const EXAMPLE: &str = "2 3\n1 0 1 1 1\n0 1 8\n2 0 1 1 1\n1 1 2\n3 16 1 1 1\n0 0 4\n";

#[test]
fn fair_worked_example() {
    // t=0: down1 shared by C1 and C2 → 64 MiB/s each.
    // t=0.016: C3 arrives; up0 shared by C1 and C3 → C1 64 (down1 too), C3 64.
    // t=0.03125: C2 done (2 MiB at 64) → CCT 0.03125. C1 sent 2 MiB, C3 0.976 MiB.
    // C1 and C3 share up0 at 64: C3's 3.024 MiB take 0.04725 s → done at 0.0785,
    // CCT 0.0625. C1 sent 3.024 more, 2.976 left alone at 128 → done 0.10175.
    assert_ccts(&ccts(EXAMPLE, "fair", &[]), &[0.10175, 0.03125, 0.0625]);
    // The same rates kept per path and by bottleneck group (served by group:
    // f1 and f2 in down1's group at 64 until 31.25 ms, then f1 moves to up0's
    // group with f3, then runs alone at 128).
    for solver in ["reach", "levels"] {
        let got = ccts(EXAMPLE, "fair", &[("solver", solver)]);
        assert_ccts(&got, &[0.10175, 0.03125, 0.0625]);
    }
    // ncdrf: every coflow has one flow per link, so ĉ = 1 on its links; Σ ĉ is 2 on
    // the shared link (down1, then up0, then up0 again), P̂* = 1/2: 64 each, and
    // backfilling finds nothing (each flow crosses the full shared link). Alone,
    // f1 gets P̂* = 1: 128. Event by event the same rates as fair.
    assert_ccts(&ccts(EXAMPLE, "ncdrf", &[]), &[0.10175, 0.03125, 0.0625]);
    // psp: the shared link gives each coflow half (64), a coflow's one flow takes
    // it all; the spare sits on links whose flows are held by the shared one.
    // Again fair's rates at every event.
    assert_ccts(&ccts(EXAMPLE, "psp", &[]), &[0.10175, 0.03125, 0.0625]);
    // drf: each coflow is one flow, so d = 1 on its two links; Σ d = 2 on the shared
    // link → P* = 1/2 and r = P* · C = 64 for everyone, 128 alone. Fair's rates.
    assert_ccts(&ccts(EXAMPLE, "drf", &[]), &[0.10175, 0.03125, 0.0625]);
}

#[test]
fn the_drf_family_on_the_worked_example() {
    // hug: each coflow is one flow, so d = 1 on both of its links and stage 1
    // (drf) leaves it no room under its cap P*: drf's rates, fair's CCTs.
    assert_ccts(&ccts(EXAMPLE, "hug", &[]), &[0.10175, 0.03125, 0.0625]);
    // coflex, alpha = ½: stage 1 gives each coflow ½ · P* · 128.
    // t=0: C1, C2 share down1: P* = ½ → 32 each; SEBF: C2 (2 MiB) first, MADD on
    //   the 64 left of down1 → C2 at 96; C1 blocked (down1 full) → 32.
    // t=0.016: C3 (up0, down0) arrives; P* = ½ → 32 each. Spare: up0 64, down1 64,
    //   up1 96, down0 96. SEBF: C2 (0.464 MiB left) +64 → 96; C3 +64 → 96 (up0 full);
    //   C1 blocked. C2 ends at 2/96 = 1/48 (CCT 0.0208333).
    // t=1/48: C1, C3 share up0 → 32 each, C3 +64 → 96: ends at 5.536/96, CCT 4/96.
    // C1 has sent 32 · 5.536/96 = 1.845333 MiB; alone at 64 + 64 = 128 → done at
    //   5.536/96 + 6.154667/128 = 0.10575.
    assert_ccts(
        &ccts(EXAMPLE, "coflex", &[("alpha", "0.5")]),
        &[0.10575, 2.0 / 96.0, 4.0 / 96.0],
    );
    // alpha = 0 is varys.
    assert_ccts(
        &ccts(EXAMPLE, "coflex", &[("alpha", "0")]),
        &[0.109375, 0.015625, 0.03125],
    );
    // naive-tradeoff, alpha = ½: every coflow is capped at α P* C = its stage-1
    // rate on both of its links, so it only ever gets half its DRF rate: 32 when
    // sharing, 64 alone. C2 ends at 0.016 + 1.488/32 = 0.0625; C3 sent 1.488 by
    // then and ends at 0.0625 + 2.512/32 = 0.141 (CCT 0.125); C1 sent 4.512 at
    // 32 and ends alone at 0.141 + 3.488/64 = 0.1955.
    assert_ccts(
        &ccts(EXAMPLE, "naive-tradeoff", &[("alpha", "0.5")]),
        &[0.1955, 0.0625, 0.125],
    );
}

#[test]
fn fifo_worked_example_and_its_non_clairvoyant_twins() {
    // C1 takes up0+down1 at 128 → done 0.0625. C2 waits for down1, then 2 MiB at 128
    // → done 0.078125. C3 waits for up0 until 0.0625, 4 MiB at 128 → 0.09375,
    // CCT 0.07775. ncf: all widths are 1, so ties fall back to arrival order; aalo:
    // nobody reaches 10 MiB, so every coflow stays in queue 0 (FIFO).
    let want = [0.0625, 0.078125, 0.07775];
    assert_ccts(&ccts(EXAMPLE, "fifo", &[]), &want);
    assert_ccts(&ccts(EXAMPLE, "ncf", &[]), &want);
    assert_ccts(&ccts(EXAMPLE, "aalo", &[]), &want);
}

#[test]
fn clairvoyant_policies_worked_example() {
    // C2 (2 MiB) beats C1 (8 MiB) on down1: done 0.015625. C1 then runs alone.
    // t=0.016: C3 (4 MiB) beats C1 (7.952 MiB left) on up0: done 0.04725, CCT
    // 0.03125. C1 resumes: 7.952 MiB at 128 → done 0.109375.
    let want = [0.109375, 0.015625, 0.03125];
    for p in ["varys", "sincronia", "scf", "tcf", "pfp"] {
        assert_ccts(&ccts(EXAMPLE, p, &[]), &want);
    }
    assert_ccts(&ccts(EXAMPLE, "varys", &[("ordering", "static")]), &want);
}

#[test]
fn aalo_threshold_crossings_are_exact_events() {
    // K = 2, T0 = 1 MiB. C1: 4 MiB 0→1, C2: 4 MiB 2→1, both at 0, both in queue 0.
    // FIFO: C1 at 128 until it crosses 1 MiB at 0.0078125 → queue 1. C2 (queue 0)
    // now goes first, crosses 1 MiB at 0.015625 → queue 1. Both in queue 1, FIFO:
    // C1's 3 MiB take 0.0234375 → done 0.0390625; then C2's 3 MiB → done 0.0625.
    let t = "3 2\n1 0 1 0 1 1:4\n2 0 1 2 1 1:4\n";
    let p = [("queues", "2"), ("first_threshold_bytes", "1048576")];
    assert_ccts(&ccts(t, "aalo", &p), &[0.0390625, 0.0625]);
    // With the default 10 MiB threshold nobody crosses: plain FIFO.
    assert_ccts(&ccts(t, "aalo", &[]), &[0.03125, 0.0625]);
}

#[test]
fn aalo_within_fair_shares_a_queue_where_fifo_serves_one_coflow() {
    // K = 2, T0 = 1 MiB, C = 128 MiB/s. C1: 4 MiB 0→1 at 0; C2: 4 MiB 2→1 at
    // 4 ms; both into down1. Alone until 4 ms, C1 sends 0.512 MiB. Both in queue 0:
    // 64 each; C1 crosses 1 MiB after 0.488/64 s = 7.625 ms, at 11.625 ms, and
    // drops to queue 1. C2 (0.488 MiB sent) takes down1 at 128 and crosses after
    // 0.512/128 s = 4 ms, at 15.625 ms. Both in queue 1 with 3 MiB left each:
    // within=fair shares at 64 each, both done after 3/64 s = 46.875 ms, at
    // 62.5 ms (CCTs 0.0625 and 0.0585); FIFO serves C1's 3 MiB first, done at
    // 15.625 + 23.4375 = 39.0625 ms, then C2's by 62.5 ms.
    let t = "3 2\n1 0 1 0 1 1:4\n2 4 1 2 1 1:4\n";
    let p = [("queues", "2"), ("first_threshold_bytes", "1048576")];
    assert_ccts(&ccts(t, "aalo", &p), &[0.0390625, 0.0585]);
    let fair = [("within", "fair"), p[0], p[1]];
    assert_ccts(&ccts(t, "aalo", &fair), &[0.0625, 0.0585]);
    // The same under rate decisions (the engine's classes told in full each call).
    let w = read_text("hand", t, None).unwrap();
    let params: BTreeMap<String, String> = fair
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let mut pol = build("aalo", &params).unwrap();
    let opts = SimOptions {
        check_invariants: true,
        delta_decisions: false,
        ..Default::default()
    };
    let r = simulate(&w, &mut pol, &opts, None).unwrap();
    let got: Vec<f64> = (0..2)
        .map(|k| r.coflow_finish_s[k] - w.coflows[k].arrival_s)
        .collect();
    assert_ccts(&got, &[0.0625, 0.0585]);
    // One queue: every flow shares max-min, which is `fair`.
    let one = [("within", "fair"), ("queues", "1")];
    assert_ccts(&ccts(t, "aalo", &one), &ccts(t, "fair", &[]));
}

#[test]
fn dependencies_delay_starts_and_count_in_the_cct() {
    // Flow 2 waits for flow 1 (same link): 1 MiB, then 1 MiB → CCT 2/128 = 0.015625.
    // Coflow 2's flow 3 waits for flow 2 and starts at 0.015625 although its own
    // start is 0.01: it runs alone on 1→1, 1 MiB → done 0.0234375; CCT from 0.01.
    let t = "coflow_id,flow_id,src,dst,bytes,start_s,depends_on\n\
             1,1,0,1,1048576,0,\n\
             1,2,0,1,1048576,0,1\n\
             2,3,1,0,1048576,0.01,2\n";
    assert_ccts(&ccts(t, "fair", &[]), &[0.015625, 0.0234375 - 0.01]);
}

#[test]
fn a_flow_within_the_finish_tolerance_finishes_at_its_start_even_at_rate_zero() {
    // C1: 100 MiB 0→1 from 0 (FIFO serves it first: up0 and down1 are full until
    // 100/128 = 0.78125). C2 from 0.001: a = 1 MiB 1→0 (free links: done 0.0088125);
    // b = 1e-6 B 0→1 waits for a (a barrier within the finish tolerance, on C1's
    // saturated path: rate 0 under FIFO); c = 1 MiB 1→0 waits for b. b finishes at
    // its start, so c runs 0.0088125 → 0.0166250: CCT 0.015625. (Before, b waited for
    // the next event, C1's end, and c ended at 0.7890625.)
    let t = "coflow_id,flow_id,src,dst,bytes,start_s,arrival_s,depends_on\n\
             1,1,0,1,104857600,0,0,\n\
             2,2,1,0,1048576,0.001,0.001,\n\
             2,3,0,1,0.000001,0.001,0.001,2\n\
             2,4,1,0,1048576,0.001,0.001,3\n";
    for policy in ["fifo", "aalo", "fair", "varys"] {
        assert_ccts(&ccts(t, policy, &[]), &[0.78125, 0.015625]);
    }
}

#[test]
fn a_mapper_reducer_shuffle_under_fair_sharing() {
    // Benchmark format: 2 mappers (0, 1) × 2 reducers (2: 4 MiB, 3: 2 MiB), so flows
    // 0→2 and 1→2 carry 2 MiB, 0→3 and 1→3 carry 1 MiB. Each uplink carries one
    // 2 MiB and one 1 MiB flow; down2 two 2 MiB flows; down3 two 1 MiB flows.
    // Max-min: all four at 64 MiB/s (every link has two flows). The 1 MiB flows end
    // at 1/64; then the 2 MiB flows (1 MiB left) get 128 each (alone on their uplink,
    // sharing down2 → 64). So they stay at 64: done at 2/64 = 0.03125.
    let t = "4 1\n1 0 2 0 1 2 2:4 3:2\n";
    assert_ccts(&ccts(t, "fair", &[]), &[0.03125]);
}

#[test]
fn a_blocked_coflow_wakes_up_when_a_new_flow_of_it_starts_on_a_free_path() {
    // 3 ports, FIFO. C1: 4 MiB 0→1 from 0. C2: b = 1 MiB 0→2 from 0, c = 4 MiB 2→0
    // from 0.01. Until 0.01 C2 is blocked (its only sender's uplink up0 is C1's).
    // At 0.01 c starts on up2/down0, both free: 128 MiB/s → done 0.01 + 4/128 =
    // 0.04125. C1 ends at 4/128 = 0.03125; b then runs alone → 0.0390625.
    // (A scheduler that kept treating C2 as blocked would start c at 0.03125 and end
    // C2 at 0.0625.)
    let t = "coflow_id,flow_id,src,dst,bytes,start_s\n\
             1,1,0,1,4194304,0\n\
             2,2,0,2,1048576,0\n\
             2,3,2,0,4194304,0.01\n";
    assert_ccts(&ccts(t, "fifo", &[]), &[0.03125, 0.04125]);
    // Sincronia: on up0 (the most loaded port) C1 has 4 MiB and C2 1 MiB, so C1 goes
    // last: b runs first → 1/128 = 0.0078125; C1 then 4 MiB → 0.0390625; c alone
    // from 0.01 → 0.04125.
    assert_ccts(&ccts(t, "sincronia", &[]), &[0.0390625, 0.04125]);
}

#[test]
fn every_registered_policy_gives_the_example_ccts_of_its_spec() {
    // Each policy's spec carries its hand-computed CCTs of EXAMPLE (the tests
    // above and the policy's docs page derive them): the registry is the list.
    for spec in coflowkit_policy::REGISTRY {
        let got = ccts(EXAMPLE, spec.name, &[]);
        for (g, w) in got.iter().zip(spec.example_ccts) {
            assert!(
                (g - w).abs() < 1e-9,
                "{}: got {got:?}, its spec says {:?}",
                spec.name,
                spec.example_ccts
            );
        }
    }
}
