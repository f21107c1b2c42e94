//! Tests of `coda` (policies/coda.rs): D-CLAS on labelled coflows, late
//! binding and its readings, intra-coflow prioritisation, by hand.

use super::*;
use crate::testkit::{close, Case};

#[test]
fn runs_are_maximal_and_in_order() {
    let r: Vec<_> = runs(&[3, 3, 1, 1, 1, 3]).collect();
    assert_eq!(r, vec![(0, 2), (2, 3), (5, 1)]);
    assert_eq!(runs(&[]).count(), 0);
    assert_eq!(runs(&[7]).collect::<Vec<_>>(), vec![(0, 1)]);
}

fn coda(source: LabelSource, late: bool, intra: bool) -> Coda {
    Coda::new(CodaConfig {
        late_binding: late,
        intra,
        coflow_queues: Thresholds::new(3, 10.0, 10.0),
        flow_queues: Thresholds::new(3, 4.0, 10.0),
        ..CodaConfig::with_source(source)
    })
}

#[test]
fn on_true_labels_without_extras_it_is_aalo() {
    // C = 10. Coflow 0: 0→2 and 1→2; coflow 1: 1→3. Both in queue 0 (nothing
    // sent); FIFO: coflow 0 takes down2 at 5 + 5, coflow 1 gets what up1 has
    // left: 5.
    let c = Case::new(
        4,
        10.0,
        &[
            (0, 0, 2, 100.0, 0.0),
            (0, 1, 2, 100.0, 0.0),
            (1, 1, 3, 100.0, 0.0),
        ],
    );
    let mut d = Decision::default();
    d.reset(3);
    coda(LabelSource::Truth, false, false).decide(&c.non_clairvoyant(), &mut d);
    close(&d.rates, &[5.0, 5.0, 5.0]);
    // Coflow 0 sends 10 B/s and reaches T0 = 10 B at t = 1; coflow 1 at t = 2.
    assert_eq!(d.wakeups, vec![Wakeup::At(1.0), Wakeup::At(2.0)]);
}

#[test]
fn all_in_one_coflow_without_intra_is_per_flow_fairness() {
    let c = Case::new(
        3,
        12.0,
        &[
            (0, 0, 2, 9.0, 0.0),
            (0, 0, 2, 9.0, 0.0),
            (1, 1, 2, 9.0, 0.0),
        ],
    );
    let mut d = Decision::default();
    d.reset(3);
    coda(LabelSource::One, true, false).decide(&c.non_clairvoyant(), &mut d);
    close(&d.rates, &[4.0, 4.0, 4.0]);
}

#[test]
fn intra_coflow_prioritisation_serves_the_short_flow_first() {
    // One labelled coflow (labels=one) holding x0: 0→2 with 6 B sent (flow
    // queue 1, past T0 = 4) and x1: 1→2 with nothing sent (flow queue 0).
    // Flow queue 0 first: x1 takes down2 whole (10); x0 gets nothing.
    let c = Case::new(3, 10.0, &[(0, 0, 2, 100.0, 6.0), (1, 1, 2, 100.0, 0.0)]);
    let mut d = Decision::default();
    d.reset(2);
    coda(LabelSource::One, true, true).decide(&c.non_clairvoyant(), &mut d);
    close(&d.rates, &[0.0, 10.0]);
    // Label 0 has sent 0 (x0's 6 B were never bound: the first call binds),
    // so its queue crossing of 10 B at 10 B/s is at t = 1; x1 reaches its
    // flow threshold 4 B at t = 0.4.
    assert_eq!(
        d.wakeups,
        vec![
            Wakeup::At(1.0),
            Wakeup::FlowSent {
                flow: 1,
                bytes: 4.0
            }
        ]
    );
}

#[test]
fn fifo_inside_a_queue_follows_when_flows_started_not_the_call() {
    // C = 10, both flows into down2, both coflows in queue 0 (nothing sent).
    // Coflow 0 (x0 0→2) started at 0.7 s, coflow 1 (x1 1→2) at 0.2 s; both
    // are first seen by a call at 1.0 s (a 1 s decision interval).
    let c = Case::new(3, 10.0, &[(0, 0, 2, 100.0, 0.0), (1, 1, 2, 100.0, 0.0)]);
    let decide = |stamps: Vec<f64>| {
        let mut case = c.clone();
        case.data.flow_seen_s = stamps;
        let mut v = case.non_clairvoyant();
        v.common.now_s = 1.0;
        let mut d = Decision::default();
        d.reset(2);
        coda(LabelSource::Truth, false, false).decide(&v, &mut d);
        d.rates
    };
    // With the start stamps coflow 1 arrived first and takes down2 whole.
    close(&decide(vec![0.7, 0.2]), &[0.0, 10.0]);
    // A driver without stamps: both first seen at 1.0, the tie goes to the
    // smaller label, coflow 0.
    close(&decide(vec![]), &[10.0, 0.0]);
}

/// Labels fixed in advance, by global flow index.
struct Fixed(Vec<u32>);

impl Labeller for Fixed {
    fn label(&mut self, _c: &Common, new: &[u32], labels: &mut [u32], _ch: &mut Vec<u32>) {
        for &f in new {
            labels[f as usize] = self.0[f as usize];
        }
    }

    fn near(&mut self, c: &Common, f: u32, _d: f64, labels: &[u32], out: &mut Vec<u32>) {
        // As the injected-error sources: a mislabelled flow is near its coflow.
        if labels[f as usize] != c.flow_coflow[f as usize] {
            out.push(c.flow_coflow[f as usize]);
        }
    }
}

fn fixed(late: bool) -> Coda {
    Coda::new(CodaConfig {
        late_binding: late,
        ..fixed_config()
    })
}

#[test]
fn binding_round_serves_a_flow_with_its_best_extended_coflow_at_every_call() {
    // C = 10, all flows into down3. Coflow 0: x0 0→3, x1 1→3; coflow 1: x2 2→3.
    // x1 is labelled 1 (a pioneer of its true coflow 0, which it is near).
    // t = 0: only x1 is active; label 0 has no flow yet (first seen never), so
    // x1 is served with its own label 1 and bound there.
    let flows = [
        (0, 0, 3, 100.0, 0.0),
        (0, 1, 3, 100.0, 0.0),
        (1, 2, 3, 100.0, 0.0),
    ];
    let run = |bind_for_good: bool| {
        let mut p = Coda::new(CodaConfig {
            bind_for_good,
            ..fixed_config()
        });
        let mut first = Case::new(4, 10.0, &flows);
        first.set_active(&[1]);
        first.data.coflow_started = vec![1, 0];
        let mut d = Decision::default();
        d.reset(1);
        p.decide(&first.non_clairvoyant(), &mut d);
        close(&d.rates, &[10.0]);
        assert_eq!(p.bound[1], 1);
        // t = 5: x1 has sent 50 B (label 1: queue 1); x0 and x2 start. Label 0
        // (x0, 0 B) is in queue 0 and first; label 1 is queue 1.
        let mut second = Case::new(4, 10.0, &flows);
        second.set_sent(1, 50.0);
        second.data.coflow_started = vec![2, 1];
        let mut v = second.non_clairvoyant();
        v.common.now_s = 5.0;
        let mut d = Decision::default();
        d.reset(3);
        p.decide(&v, &mut d);
        (d.rates.clone(), p.bound.clone(), p.sent[0], p.sent[1])
    };
    // binding=first: x1 stays with label 1 (queue 1); x0 alone in label 0 takes
    // down3 whole.
    let (rates, bound, s0, s1) = run(true);
    close(&rates, &[10.0, 0.0, 0.0]);
    assert_eq!((bound[1], s0, s1), (1, 0.0, 50.0));
    // binding=round: x1 is near label 0, which now ranks first: it is served with
    // label 0 (x0 and x1 share down3) and its 50 B move to label 0.
    let (rates, bound, s0, s1) = run(false);
    close(&rates, &[5.0, 5.0, 0.0]);
    assert_eq!((bound[1], s0, s1), (0, 50.0, 0.0));
}

fn fixed_config() -> CodaConfig {
    CodaConfig {
        labeller: Box::new(Fixed(vec![0, 1, 1])),
        late_binding: true,
        intra: false,
        coflow_queues: Thresholds::new(3, 10.0, 10.0),
        ..CodaConfig::with_source(LabelSource::Truth)
    }
}

#[test]
fn late_binding_serves_a_straggler_with_its_parent_then_keeps_it_there() {
    // C = 10, all flows into down3. Coflow 0: x0 0→3, x1 1→3, seen at t = 0;
    // coflow 1: x2 2→3, seen at t = 5. The labelling puts x1 with coflow 1
    // (label 1): a straggler. Coflow thresholds 10, 100; d = 0.1 s.
    let flows = [
        (0, 0, 3, 100.0, 0.0),
        (0, 1, 3, 100.0, 0.0),
        (1, 2, 3, 100.0, 0.0),
    ];
    let mut first = Case::new(4, 10.0, &flows);
    first.active = vec![0, 1];
    first.groups.truncate(1);
    // x2 has not started yet (as a driver counts it).
    first.coflow_started[1] = 0;
    first.count_paths();

    // Without late binding, t = 0: labels 0 and 1 are both first seen at 0,
    // label 0 goes first (id) and x0 takes down3: the straggler waits.
    let mut d = Decision::default();
    d.reset(2);
    fixed(false).decide(&first.non_clairvoyant(), &mut d);
    close(&d.rates, &[10.0, 0.0]);

    // With late binding, x1 (mislabelled) is also near label 0, its own
    // coflow: it is served with label 0, the higher priority, and bound to it.
    let mut p = fixed(true);
    let mut d = Decision::default();
    d.reset(2);
    p.decide(&first.non_clairvoyant(), &mut d);
    close(&d.rates, &[5.0, 5.0]);
    assert_eq!(p.bound, vec![0, 0, UNLABELLED]);

    // t = 5: x0 and x1 sent 25 B each, all bound to label 0 → 50 B → coflow
    // queue 1. x2 arrives, label 1 (correct: near no other label): label 1
    // has sent nothing (x1 is bound to 0) → queue 0, first.
    let mut second = Case::new(
        4,
        10.0,
        &[
            (0, 0, 3, 100.0, 25.0),
            (0, 1, 3, 100.0, 25.0),
            (1, 2, 3, 100.0, 0.0),
        ],
    );
    second.count_paths();
    let mut v = second.non_clairvoyant();
    v.common.now_s = 5.0;
    let mut d = Decision::default();
    d.reset(3);
    p.decide(&v, &mut d);
    close(&d.rates, &[0.0, 0.0, 10.0]);
    // Label 1 reaches 10 B at 10 B/s one second later; label 0 does not move.
    assert_eq!(d.wakeups, vec![Wakeup::At(6.0)]);
    assert_eq!(p.bound, vec![0, 0, 1]);
    // What a driver reads at the end: x1 labelled 1, bound to 0.
    assert_eq!(p.flow_labels(), Some(vec![0, 1, 1]));
    assert_eq!(p.flow_bindings(), Some(vec![0, 0, 1]));
}
