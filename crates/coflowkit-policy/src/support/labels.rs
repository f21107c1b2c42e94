//! Where a scheduler that is not told which flows form a coflow gets its coflows
//! from: a *labelling* of flows. `coda` schedules the labelled coflows; the
//! labelling may be wrong, and CODA's scheduler is built to suffer little from it.
//!
//! A [`Labeller`] is called by the policy with the flows it sees for the first time
//! and writes one label per flow. Labels are opaque numbers below
//! [`label_space`]; two flows are in the same labelled coflow when their labels are
//! equal. The built-in sources ([`LabelSource`]) are static: a flow's label depends
//! only on the workload's coflow structure and a seed, so the same labelling can be
//! computed outside a simulation ([`static_labels`]) to measure its accuracy. The
//! online identifier (CODA's clustering) implements [`Labeller`] as well, and may
//! revise earlier labels at every round.

use crate::view::Common;
use coflowkit_model::{ModelError, Pcg32};

/// The labels of a flow table: `labels[f]` for global flow index `f`, or
/// [`UNLABELLED`].
pub const UNLABELLED: u32 = u32::MAX;

/// Labels are below `flows + 2·coflows` (room for one label per coflow, one per
/// flow, and the extra parts of split coflows).
pub fn label_space(flows: usize, coflows: usize) -> usize {
    flows + 2 * coflows
}

pub trait Labeller: Send {
    /// Called at every scheduling event. Labels the flows `new` (global indices,
    /// ascending), seen for the first time at `c.now_s`, by writing `labels[f]`.
    /// An online identifier may also change the labels of flows seen before; it
    /// pushes each flow whose label it changed to `changed`.
    fn label(&mut self, c: &Common, new: &[u32], labels: &mut [u32], changed: &mut Vec<u32>);

    /// Late binding: pushes to `out` the labels, other than flow `f`'s own, of the
    /// labelled coflows within distance `d` of `f` (CODA: the smallest distance
    /// between `f` and one of the coflow's flows, in the identifier's attribute
    /// space). `labels` are the current labels.
    fn near(&mut self, c: &Common, f: u32, d: f64, labels: &[u32], out: &mut Vec<u32>);

    /// When the labeller wants to be called again (an online identifier's next
    /// round), if at all.
    fn wakeup(&self) -> Option<f64> {
        None
    }
}

/// What injected errors do. The first three move single flows to a
/// neighbouring coflow; `Move` moves single flows anywhere; `Merge` and `Split`
/// get whole coflows wrong, as an identifier does when coflows arrive together
/// (low precision, CODA Fig. 10b) or a coflow's flows spread out in time (low
/// recall, Fig. 10c).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// A flow goes to the coflow that arrived just before its own (scheduled
    /// earlier under FIFO/D-CLAS): a *pioneer* (CODA §4.1).
    Pioneers,
    /// To the coflow that arrived just after: a *straggler*.
    Stragglers,
    /// To one of the two, with equal probability.
    Random,
    /// A flow goes to a coflow drawn uniformly among all the others.
    Move,
    /// A coflow joins the one that arrived just before it (chains merge into
    /// their first coflow); every flow of a merged coflow is mislabelled.
    Merge,
    /// A coflow is cut in [`SPLIT_PARTS`] parts: each of its flows joins one
    /// drawn uniformly.
    Split,
}

/// The parts a split coflow is cut into: coflow `k` keeps label `k`, part `j ≥ 1`
/// is labelled `j·coflows + k`.
pub const SPLIT_PARTS: u32 = 3;

/// The per-coflow draws of `Merge` and `Split` use streams of their own, apart
/// from the per-flow ones (stream = flow index).
const COFLOW_STREAMS: u64 = 0x9E37_79B9_7F4A_7C15;

/// Whether coflow `k` is hit (merged into its predecessor, or split).
fn coflow_hit(seed: u64, k: u32, rate: f64) -> bool {
    Pcg32::new(seed ^ COFLOW_STREAMS, k as u64).next_f64() < rate
}

/// The built-in labelling sources.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LabelSource {
    /// The true coflows.
    Truth,
    /// The true coflows with errors of `kind`: each flow (or, for `Merge` and
    /// `Split`, each coflow) is hit independently with probability `rate`, drawn
    /// with `seed`.
    Injected {
        kind: ErrorKind,
        rate: f64,
        seed: u64,
    },
    /// No identification: every flow a coflow of its own.
    Alone,
    /// No identification: all flows one coflow.
    One,
}

impl LabelSource {
    pub const NAMES: &'static [&'static str] = &[
        "truth",
        "pioneers",
        "stragglers",
        "random",
        "move",
        "merge",
        "split",
        "alone",
        "one",
    ];

    /// The source called `name` (one of [`LabelSource::NAMES`]).
    pub fn parse(name: &str, rate: f64, seed: u64) -> Result<LabelSource, ModelError> {
        let kind = match name {
            "truth" => return Ok(LabelSource::Truth),
            "alone" => return Ok(LabelSource::Alone),
            "one" => return Ok(LabelSource::One),
            "pioneers" => ErrorKind::Pioneers,
            "stragglers" => ErrorKind::Stragglers,
            "random" => ErrorKind::Random,
            "move" => ErrorKind::Move,
            "merge" => ErrorKind::Merge,
            "split" => ErrorKind::Split,
            _ => {
                return Err(ModelError::param(
                    "param",
                    format!(
                        "labels={name} is not one of {}",
                        LabelSource::NAMES.join(", ")
                    ),
                ))
            }
        };
        Ok(LabelSource::Injected { kind, rate, seed })
    }

    /// The label of flow `f` (global index) of coflow `k` (index in arrival order)
    /// among `coflows` coflows.
    pub fn label_of(&self, f: u32, k: u32, coflows: u32) -> u32 {
        match *self {
            LabelSource::Truth => k,
            LabelSource::Alone => coflows + f,
            LabelSource::One => 0,
            LabelSource::Injected { kind, rate, seed } => injected(kind, rate, seed, f, k, coflows),
        }
    }
}

/// The label an injected error of `kind` gives flow `f` of coflow `k`. One
/// independent stream per flow (and per coflow): a flow's fate does not depend on
/// which other flows exist or in which order they are labelled.
fn injected(kind: ErrorKind, rate: f64, seed: u64, f: u32, k: u32, coflows: u32) -> u32 {
    match kind {
        ErrorKind::Merge => {
            // The first coflow of k's chain of merges.
            let mut j = k;
            while j > 0 && coflow_hit(seed, j, rate) {
                j -= 1;
            }
            j
        }
        ErrorKind::Split => {
            let u = Pcg32::new(seed, f as u64).next_f64();
            let part = ((u * SPLIT_PARTS as f64) as u32).min(SPLIT_PARTS - 1);
            if part > 0 && coflow_hit(seed, k, rate) {
                part * coflows + k
            } else {
                k
            }
        }
        _ => {
            let mut g = Pcg32::new(seed, f as u64);
            if g.next_f64() >= rate {
                return k;
            }
            let earlier = match kind {
                ErrorKind::Pioneers => true,
                ErrorKind::Stragglers => false,
                ErrorKind::Random => g.next_u32() & 1 == 0,
                ErrorKind::Move => {
                    // Uniform over the other coflows.
                    if coflows < 2 {
                        return k;
                    }
                    let u = ((g.next_f64() * (coflows - 1) as f64) as u32).min(coflows - 2);
                    return if u >= k { u + 1 } else { u };
                }
                ErrorKind::Merge | ErrorKind::Split => unreachable!("handled above"),
            };
            if earlier && k > 0 {
                k - 1
            } else if !earlier && k + 1 < coflows {
                k + 1
            } else {
                k
            }
        }
    }
}

/// The labels a static source gives every flow of a workload whose flow `f`
/// belongs to coflow `flow_coflow[f]` (coflow indices in arrival order).
pub fn static_labels(source: &LabelSource, flow_coflow: &[u32], coflows: u32) -> Vec<u32> {
    flow_coflow
        .iter()
        .enumerate()
        .map(|(f, &k)| source.label_of(f as u32, k, coflows))
        .collect()
}

impl Labeller for LabelSource {
    fn label(&mut self, c: &Common, new: &[u32], labels: &mut [u32], _changed: &mut Vec<u32>) {
        let n = c.coflow_id.len() as u32;
        for &f in new {
            labels[f as usize] = self.label_of(f, c.flow_coflow[f as usize], n);
        }
    }

    /// The built-in sources have no attribute space; they model what an
    /// identifier's boundary looks like: a mislabelled flow straddles the
    /// boundary between the coflow it was put in and its own (distance 0 to
    /// both), and every other flow is far from every other label. So late
    /// binding adds a mislabelled flow to its true coflow's extended coflow, for
    /// any `d`, and does nothing else (CODA §4.2: late binding is restricted to
    /// flows that straddle classification boundaries). Whole-coflow errors
    /// (`merge`, `split`) leave no flow on a boundary: late binding cannot undo
    /// them.
    fn near(&mut self, c: &Common, f: u32, _d: f64, labels: &[u32], out: &mut Vec<u32>) {
        if let LabelSource::Injected { kind, .. } = self {
            if matches!(kind, ErrorKind::Merge | ErrorKind::Split) {
                return;
            }
            let k = c.flow_coflow[f as usize];
            if labels[f as usize] != k {
                out.push(k);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truth_alone_and_one() {
        let fc = [0, 0, 1, 2];
        assert_eq!(static_labels(&LabelSource::Truth, &fc, 3), vec![0, 0, 1, 2]);
        assert_eq!(static_labels(&LabelSource::Alone, &fc, 3), vec![3, 4, 5, 6]);
        assert_eq!(static_labels(&LabelSource::One, &fc, 3), vec![0, 0, 0, 0]);
    }

    #[test]
    fn injected_errors_move_the_expected_share_to_the_expected_neighbour() {
        // 10 coflows of 1000 flows; 20% of flows mislabelled.
        let fc: Vec<u32> = (0..10_000).map(|f| f / 1000).collect();
        for (name, dir) in [("pioneers", -1i64), ("stragglers", 1)] {
            let s = LabelSource::parse(name, 0.2, 7).unwrap();
            let l = static_labels(&s, &fc, 10);
            let mut moved = 0;
            for (f, (&k, &x)) in fc.iter().zip(&l).enumerate() {
                if x != k {
                    moved += 1;
                    assert_eq!(x as i64 - k as i64, dir, "flow {f}");
                }
            }
            // Coflow 0 has no earlier neighbour (pioneers), coflow 9 no later one
            // (stragglers): 9 of 10 coflows can lose flows → about 1800 moved.
            assert!((1650..1950).contains(&moved), "{name}: {moved}");
        }
        let s = LabelSource::parse("random", 0.2, 7).unwrap();
        let l = static_labels(&s, &fc, 10);
        let (mut up, mut down) = (0, 0);
        for (&k, &x) in fc.iter().zip(&l) {
            match x as i64 - k as i64 {
                1 => up += 1,
                -1 => down += 1,
                0 => {}
                d => panic!("moved by {d}"),
            }
        }
        assert!(up > 800 && down > 800, "{up} {down}");
        // Seeded: the same seed gives the same labels, another seed others.
        assert_eq!(l, static_labels(&s, &fc, 10));
        let other = LabelSource::parse("random", 0.2, 8).unwrap();
        assert_ne!(l, static_labels(&other, &fc, 10));
        // Rate 0 is the truth.
        let none = LabelSource::parse("random", 0.0, 7).unwrap();
        assert_eq!(static_labels(&none, &fc, 10), fc);
    }

    #[test]
    fn merges_join_whole_coflows_to_the_first_of_their_chain() {
        // 1000 coflows of 3 flows; each coflow but the first joins its predecessor
        // with probability 0.2.
        let fc: Vec<u32> = (0..3000).map(|f| f / 3).collect();
        let s = LabelSource::parse("merge", 0.2, 7).unwrap();
        let l = static_labels(&s, &fc, 1000);
        let mut joined = 0;
        for k in 0..1000usize {
            let x = l[3 * k];
            // Recall 1: a coflow's flows share one label.
            assert!(l[3 * k + 1] == x && l[3 * k + 2] == x, "coflow {k}");
            // The label is a coflow at or before k: k itself, or its predecessor's.
            if x != k as u32 {
                assert!(k > 0 && x == l[3 * (k - 1)], "coflow {k} -> {x}");
                joined += 1;
            }
        }
        // About 0.2 · 999 coflows joined (binomial: sd 12.6).
        assert!((150..250).contains(&joined), "{joined}");
        // Rate 0 is the truth, rate 1 one coflow.
        let none = LabelSource::parse("merge", 0.0, 7).unwrap();
        assert_eq!(static_labels(&none, &fc, 1000), fc);
        let all = LabelSource::parse("merge", 1.0, 7).unwrap();
        assert!(static_labels(&all, &fc, 1000).iter().all(|&x| x == 0));
    }

    #[test]
    fn splits_cut_a_coflow_in_three_and_never_mix_coflows() {
        // 100 coflows of 300 flows, each split with probability 0.5.
        let fc: Vec<u32> = (0..30_000).map(|f| f / 300).collect();
        let s = LabelSource::parse("split", 0.5, 3).unwrap();
        let l = static_labels(&s, &fc, 100);
        let mut split = 0;
        for k in 0..100u32 {
            let part = &l[300 * k as usize..300 * (k as usize + 1)];
            // Precision 1: only k and its parts 100 + k and 200 + k.
            let count = |x: u32| part.iter().filter(|&&y| y == x).count();
            let (a, b, c) = (count(k), count(100 + k), count(200 + k));
            assert_eq!(a + b + c, 300, "coflow {k}");
            if b + c > 0 {
                split += 1;
                // Each flow of a split coflow is in each part with probability
                // 1/3 (binomial(300, 1/3): sd 8.2).
                for n in [a, b, c] {
                    assert!((65..135).contains(&n), "coflow {k}: {a} {b} {c}");
                }
            }
        }
        assert!((35..65).contains(&split), "{split}");
        let all = LabelSource::parse("split", 1.0, 3).unwrap();
        let l = static_labels(&all, &fc, 100);
        assert!((0..100u32).all(|k| l[300 * k as usize..][..300].contains(&(200 + k))));
        // Every label fits the label space.
        assert!(l.iter().all(|&x| (x as usize) < label_space(30_000, 100)));
    }

    #[test]
    fn moves_go_to_any_other_coflow() {
        // 10 coflows of 1000 flows, 20% of flows moved.
        let fc: Vec<u32> = (0..10_000).map(|f| f / 1000).collect();
        let s = LabelSource::parse("move", 0.2, 5).unwrap();
        let l = static_labels(&s, &fc, 10);
        let mut moved = 0;
        let mut from_first = std::collections::BTreeSet::new();
        for (&k, &x) in fc.iter().zip(&l) {
            assert!(x < 10);
            if x != k {
                moved += 1;
                if k == 0 {
                    from_first.insert(x);
                }
            }
        }
        assert!((1850..2150).contains(&moved), "{moved}");
        // Coflow 0's ~200 moved flows reach every one of the 9 others (each with
        // probability 1/9: missing one has probability about 9 · (8/9)^200).
        assert_eq!(from_first.len(), 9, "{from_first:?}");
    }

    #[test]
    fn only_a_mislabelled_flow_is_near_another_coflow() {
        use crate::testkit::Case;
        // Flows 0, 1 of coflow 0; flow 2 of coflow 1. Flow 1 is labelled 1.
        let c = Case::new(
            3,
            1.0,
            &[
                (0, 0, 1, 1.0, 0.0),
                (0, 1, 2, 1.0, 0.0),
                (1, 2, 0, 1.0, 0.0),
            ],
        );
        let labels = [0, 1, 1];
        let mut s = LabelSource::parse("random", 0.5, 1).unwrap();
        let mut out = Vec::new();
        for (f, want) in [(0u32, vec![]), (1, vec![0u32]), (2, vec![])] {
            out.clear();
            s.near(&c.common(), f, 0.0, &labels, &mut out);
            assert_eq!(out, want, "flow {f}");
        }
        // A flow moved anywhere is near its coflow too; whole-coflow errors leave
        // no flow on a boundary.
        for (name, want) in [("move", vec![0u32]), ("merge", vec![]), ("split", vec![])] {
            let mut s = LabelSource::parse(name, 0.5, 1).unwrap();
            out.clear();
            s.near(&c.common(), 1, 0.0, &labels, &mut out);
            assert_eq!(out, want, "{name}");
        }
        // The truth and no identification extend nothing.
        for mut src in [LabelSource::Truth, LabelSource::Alone, LabelSource::One] {
            out.clear();
            src.near(&c.common(), 1, 1e9, &labels, &mut out);
            assert!(out.is_empty());
        }
    }

    #[test]
    fn unknown_source_is_a_clear_error() {
        let e = LabelSource::parse("dbscan", 0.1, 1)
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "param: labels=dbscan is not one of truth, pioneers, stragglers, random, move, merge, split, alone, one"
        );
    }
}
