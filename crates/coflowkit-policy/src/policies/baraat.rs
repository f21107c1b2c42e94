//! `baraat`: FIFO with limited multiplexing (Dogar et al., SIGCOMM'14), the
//! decentralized baseline of Stream. See docs/policies/baraat.md.
//!
//! ```text
//! light(k) ⇔ sent_k < H                (sent_k: bytes coflow k has sent, finished flows included)
//! order    light coflows by (arrival, id), one strict-priority level each (FIFO);
//!          then every heavy coflow together in one shared level
//! rates    priority max-min; max-min fair inside a level
//! wake-up  when a light coflow reaches H at current rates (it turns heavy)
//! ```
//!
//! A heavy coflow stops blocking the coflows behind it: they run ahead of it, and
//! the heavy ones share what they leave.

use crate::decision::{Decision, Wakeup};
use crate::params::{ParamSpec, Params};
use crate::policy::NonClairvoyantPolicy;
use crate::policy::{AnyPolicy, Info};
use crate::spec::{non_clairvoyant, PolicySpec, MIB};
use crate::support::rankclasses::RankClasses;
use crate::view::NonClairvoyantView;
use coflowkit_model::ModelError;

pub struct Baraat {
    heavy_bytes: f64,
    /// The light coflows in FIFO order, one level each, and the heavy ones in
    /// one shared level below them: by classes when the driver takes them,
    /// by rates otherwise.
    rank: RankClasses,
    /// Scratch: the groups of heavy and of light coflows, in FIFO order.
    heavy: Vec<usize>,
    light: Vec<usize>,
    /// Per coflow: whether it has turned heavy (for good: bytes sent only
    /// grow), so that only light coflows' bytes are read.
    turned: Vec<bool>,
}

impl Baraat {
    pub fn new(heavy_bytes: f64) -> Self {
        Baraat {
            heavy_bytes,
            rank: RankClasses::default(),
            heavy: Vec::new(),
            light: Vec::new(),
            turned: Vec::new(),
        }
    }

    /// Decides by rates whenever more than `n` coflows are light (at most
    /// [`crate::support::rankclasses::MAX_RANKED`]); for tests of the switch between the forms.
    #[doc(hidden)]
    pub fn with_class_limit(mut self, n: usize) -> Self {
        self.rank = self.rank.with_limit(n);
        self
    }

    fn is_heavy(&self, sent: f64) -> bool {
        // Within the engine's byte tolerance of H counts as reached.
        sent >= self.heavy_bytes - coflowkit_model::finish_threshold(self.heavy_bytes)
    }

    /// Splits the active coflows into light (FIFO order, each asking to be
    /// woken at H) and heavy; reads the bytes of coflows not yet heavy only.
    fn split(&mut self, v: &NonClairvoyantView, out: &mut Decision) {
        self.heavy.clear();
        self.light.clear();
        if self.turned.len() < v.coflow_started.len() {
            self.turned.resize(v.coflow_started.len(), false);
        }
        // Groups are in (arrival, id) order: FIFO among the light ones.
        for (gi, g) in v.groups.iter().enumerate() {
            let k = g.coflow as usize;
            if !self.turned[k] && self.is_heavy(v.coflow_sent(g.coflow)) {
                self.turned[k] = true;
            }
            if self.turned[k] {
                self.heavy.push(gi);
                continue;
            }
            self.light.push(gi);
            out.wakeups.push(Wakeup::CoflowSent {
                coflow: g.coflow,
                bytes: self.heavy_bytes,
            });
        }
    }
}

impl NonClairvoyantPolicy for Baraat {
    fn decide(&mut self, v: &NonClairvoyantView, out: &mut Decision) {
        self.split(v, out);
        self.rank.serve(v, &self.light, &self.heavy, out);
    }
}

pub const PARAMS: &[ParamSpec] = &[ParamSpec {
    name: "heavy_mb",
    default: "100",
    help: "H in MiB: a coflow that has sent H stops blocking and joins the shared heavy class",
}];

fn build(p: &Params) -> Result<AnyPolicy, ModelError> {
    non_clairvoyant(Baraat::new(p.f64_in("heavy_mb", 1e-6, 1e12)? * MIB))
}

pub const SPEC: PolicySpec = PolicySpec {
    name: "baraat",
    info: Info::NonClairvoyant,
    knows: "",
    summary: "FIFO with limited multiplexing: heavy coflows stop blocking (Baraat)",
    rule:
        "coflows FIFO by arrival; one that has sent H turns heavy and drops to a shared lower class",
    paper: "Baraat (FIFO-LM): Dogar et al., SIGCOMM'14",
    params: PARAMS,
    needs: &[],
    build,
    example_ccts: [0.0625, 0.078125, 0.07775],
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::support::rankclasses::{FIRST_TAIL_CLASS, MAX_RANKED};
    use crate::testkit::{close, Case};

    #[test]
    fn light_coflows_go_first_in_arrival_order_and_heavy_ones_share_the_rest() {
        // C = 10, H = 100. All flows into down1 (one bottleneck).
        // Coflow 0 (earliest) has sent 150 B: heavy. Coflow 1 has sent 0: light,
        // first in FIFO, takes all of down1. Coflows 0 and 2 (heavy, sent 500) share
        // nothing left. With coflow 1 gone, coflows 0 and 2 share down1 max-min: 5 + 5.
        let c = Case::new(
            4,
            10.0,
            &[
                (0, 0, 1, 1e6, 150.0),
                (1, 2, 1, 1e6, 0.0),
                (2, 3, 1, 1e6, 500.0),
            ],
        );
        let mut d = Decision::default();
        d.reset(3);
        Baraat::new(100.0).decide(&c.non_clairvoyant(), &mut d);
        close(&d.rates, &[0.0, 10.0, 0.0]);
        assert_eq!(
            d.wakeups,
            vec![Wakeup::CoflowSent {
                coflow: 1,
                bytes: 100.0
            }]
        );
        let mut c2 = c.clone();
        c2.active = vec![0, 2];
        c2.groups = vec![
            crate::view::ActiveCoflow {
                coflow: 0,
                start: 0,
                end: 1,
            },
            crate::view::ActiveCoflow {
                coflow: 2,
                start: 1,
                end: 2,
            },
        ];
        c2.count_paths();
        let mut d = Decision::default();
        d.reset(2);
        Baraat::new(100.0).decide(&c2.non_clairvoyant(), &mut d);
        close(&d.rates, &[5.0, 5.0]);
        assert!(d.wakeups.is_empty());
    }

    /// `n` light coflows (nothing sent, H = 100 B), coflow `k`'s one flow
    /// from port `k` to port `n + k`, after a first delta-driver call with
    /// `active` active: it names every active flow's class (returned).
    fn first_call(n: u32, active: &[u32]) -> (Case, Baraat, Vec<u8>) {
        let flows: Vec<_> = (0..n).map(|k| (k, k, n + k, 1e6, 0.0)).collect();
        let mut c = Case::new(2 * n, 10.0, &flows);
        c.set_active(active);
        let mut b = Baraat::new(100.0);
        let mut d = Decision::default();
        d.reset(active.len());
        d.delta_ok = true;
        b.decide(&c.non_clairvoyant(), &mut d);
        (c, b, d.classes)
    }

    /// A delta call's class moves (duplicates dropped, sorted) and renames.
    type Told = (Vec<(u32, u8)>, Vec<(u8, u8)>);

    /// The class moves of a delta call (duplicates dropped), sorted, and its
    /// class renames.
    fn moves_and_renames(b: &mut Baraat, c: &Case) -> Told {
        let mut d = Decision::default();
        d.reset(c.active.len());
        d.delta_ok = true;
        b.decide(&c.non_clairvoyant(), &mut d);
        assert!(d.class_delta, "a call after the first is a class delta");
        let mut m = d.class_moves.clone();
        m.sort_unstable();
        m.dedup();
        (m, d.class_renames)
    }

    /// The class moves of a delta call that renames no class.
    fn moves(b: &mut Baraat, c: &Case) -> Vec<(u32, u8)> {
        let (m, r) = moves_and_renames(b, c);
        assert!(r.is_empty(), "renames {r:?}");
        m
    }

    #[test]
    fn light_coflows_keep_their_classes_when_one_ahead_leaves() {
        // Nine light coflows, one flow each on its own ports. The first call
        // names classes by FIFO rank: 0, 1, 2.
        let (mut c, mut b, classes) = first_call(9, &[0, 1, 2]);
        assert_eq!(classes, vec![0, 1, 2]);
        assert_eq!(b.rank.tail_class(), FIRST_TAIL_CLASS);
        // Coflow 0 finishes: 1 and 2 keep classes 1 and 2 (only the order of
        // classes matters); nothing moves.
        c.set_active(&[1, 2]);
        assert_eq!(moves(&mut b, &c), vec![]);
        // Coflow 3 arrives, last in FIFO order: the class after 2.
        c.set_active(&[1, 2, 3]);
        c.started = vec![3];
        assert_eq!(moves(&mut b, &c), vec![(3, 3)]);
        // Coflow 4 makes four light coflows, as many as the heavy class
        // number (4): the heavy class moves down to 8 (a power of two, at
        // least twice the old), and coflow 4 takes class 4.
        c.set_active(&[1, 2, 3, 4]);
        c.started = vec![4];
        assert_eq!(moves(&mut b, &c), vec![(4, 4)]);
        assert_eq!(b.rank.tail_class(), 8);
        // 1-3 finish, 5-7 arrive and take 5, 6, 7. Coflow 8 would need class
        // 8, the heavy one: five light coflows fill half of 0..8, so the
        // heavy class moves down to max(2 · 8, 4 · 5) = 20 and 8 takes 8.
        c.set_active(&[4, 5, 6, 7]);
        c.started = vec![5, 6, 7];
        assert_eq!(moves(&mut b, &c), vec![(5, 5), (6, 6), (7, 7)]);
        c.set_active(&[4, 5, 6, 7, 8]);
        c.started = vec![8];
        assert_eq!(moves(&mut b, &c), vec![(8, 8)]);
        assert_eq!(b.rank.tail_class(), 20);
    }

    #[test]
    fn light_classes_are_renumbered_by_rank_when_they_run_out() {
        // As above, but the three light coflows were told the last light
        // classes (250, 251, 252) under the largest heavy class (253): coflow
        // 4 finds no class left and the heavy class cannot move, so every
        // light coflow is renumbered by its FIFO rank: coflows 1-3, each alone
        // in its class, by renames into classes that are free; coflow 4, new,
        // by its flow.
        let (mut c, mut b, _) = first_call(5, &[1, 2, 3]);
        {
            let v = c.non_clairvoyant();
            b.rank
                .pretend_told(&v, &[0, 1, 2], &[250, 251, 252], MAX_RANKED as u8);
        }
        c.set_active(&[1, 2, 3, 4]);
        c.started = vec![4];
        assert_eq!(
            moves_and_renames(&mut b, &c),
            (vec![(4, 3)], vec![(250, 0), (251, 1), (252, 2)])
        );
    }

    #[test]
    fn fifo_among_light_coflows_blocks_later_ones() {
        // Two light coflows on the same down1: the earlier one takes it all.
        let c = Case::new(3, 10.0, &[(0, 0, 1, 1e6, 0.0), (1, 2, 1, 1e6, 0.0)]);
        let mut d = Decision::default();
        d.reset(2);
        Baraat::new(100.0).decide(&c.non_clairvoyant(), &mut d);
        close(&d.rates, &[10.0, 0.0]);
    }
}
