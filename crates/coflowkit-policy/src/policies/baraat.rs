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
use crate::support::priority::CoflowPriority;
use crate::view::NonClairvoyantView;
use coflowkit_model::ModelError;

pub struct Baraat {
    heavy_bytes: f64,
    prio: CoflowPriority,
    /// Scratch: the groups of heavy and of light coflows, in FIFO order.
    heavy: Vec<usize>,
    light: Vec<usize>,
    /// Per coflow: whether it has turned heavy (for good: bytes sent only
    /// grow), so that only light coflows' bytes are read.
    turned: Vec<bool>,
    /// Class decisions (drivers that take delta decisions): per coflow the
    /// class its flows were last told (`UNTOLD`: none), the class of the heavy
    /// level (above every light rank; it grows when the light coflows
    /// outnumber it), and whether the driver holds the classes told (false
    /// at the first call and after a decision by rates).
    told: Vec<u8>,
    heavy_class: u8,
    classes_held: bool,
    /// Scratch: the class each light coflow is to have, in FIFO order.
    want: Vec<u8>,
    /// Most light coflows a class decision orders ([`MAX_LIGHT_CLASSES`];
    /// lower in tests, to exercise the switch to rates and back).
    max_light_classes: usize,
}

/// No class told yet.
const UNTOLD: u8 = u8::MAX;
/// The heavy level's first class (light coflows take ranks below it).
const FIRST_HEAVY_CLASS: u8 = 4;
/// Most light coflows a class decision can order (classes are `u8`, the
/// heavy level takes one above them and `UNTOLD` is reserved): with more,
/// the decision is by rates.
const MAX_LIGHT_CLASSES: usize = 253;

impl Baraat {
    pub fn new(heavy_bytes: f64) -> Self {
        Baraat {
            heavy_bytes,
            prio: CoflowPriority::default(),
            heavy: Vec::new(),
            light: Vec::new(),
            turned: Vec::new(),
            told: Vec::new(),
            heavy_class: FIRST_HEAVY_CLASS,
            classes_held: false,
            want: Vec::new(),
            max_light_classes: MAX_LIGHT_CLASSES,
        }
    }

    /// Decides by rates whenever more than `n` coflows are light (at most
    /// [`MAX_LIGHT_CLASSES`]); for tests of the switch between the forms.
    #[doc(hidden)]
    pub fn with_class_limit(mut self, n: usize) -> Self {
        self.max_light_classes = n.min(MAX_LIGHT_CLASSES);
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

    /// The decision by rates: a priority max-min over the light coflows in
    /// FIFO order, then one level for the heavy ones.
    fn by_rates(&mut self, v: &NonClairvoyantView, out: &mut Decision) {
        self.prio.run(v, &self.light, out);
        if !self.heavy.is_empty() {
            let groups = v.groups;
            let heavy = std::mem::take(&mut self.heavy);
            self.prio
                .serve_level(v, heavy.iter().flat_map(|&gi| groups[gi].range()), 0, out);
            self.heavy = heavy;
        }
    }

    /// The class of each light coflow (`want`, in FIFO order) under a class
    /// decision after the first: only the order of the classes matters, so a
    /// light coflow keeps the class it was told while it still comes after
    /// the one before it, and one that arrived (or comes before a coflow it
    /// did not use to) takes the next class after its predecessor's. A
    /// coflow leaving the light ones (it finished or turned heavy) then
    /// moves nobody; with ranks as classes, every light coflow behind it
    /// moved up one, all its flows named, and with every coflow of the trace
    /// light at once (bursty arrivals) that was most of each call's work.
    /// When the next class would reach the heavy class, the heavy class first
    /// moves further down (a larger number; its flows are then named) if the
    /// light coflows fill half of the classes above it, and if the classes
    /// still run out, the light coflows are renumbered by rank (each moved
    /// once).
    fn light_classes(&mut self, v: &NonClairvoyantView) {
        if !self.keep_light_classes(v) {
            if 2 * self.light.len() >= self.heavy_class as usize
                && (self.heavy_class as usize) < MAX_LIGHT_CLASSES
            {
                let want = (2 * self.heavy_class as usize).max(4 * self.light.len());
                self.heavy_class = want.min(MAX_LIGHT_CLASSES) as u8;
            }
            if !self.keep_light_classes(v) {
                self.want.clear();
                self.want.extend((0..self.light.len()).map(|r| r as u8));
            }
        }
    }

    /// The sticky assignment of [`Baraat::light_classes`] into `want`; false
    /// when it runs out of classes below the heavy one.
    fn keep_light_classes(&mut self, v: &NonClairvoyantView) -> bool {
        self.want.clear();
        let heavy = self.heavy_class as i32;
        let mut prev = -1;
        for &gi in &self.light {
            let told = self.told[v.groups[gi].coflow as usize] as i32;
            let c = if told > prev && told < heavy {
                told
            } else {
                prev + 1
            };
            if c >= heavy {
                return false;
            }
            self.want.push(c as u8);
            prev = c;
        }
        true
    }

    /// The decision by classes, for a driver that takes delta decisions and
    /// runs the priority max-min itself: the light coflows in classes that
    /// increase in FIFO order ([`Baraat::light_classes`]), every heavy one in
    /// `heavy_class`. Names the flows that started and those of the coflows
    /// whose class changed; the first call, and the first after a decision
    /// by rates, names every flow (light coflow of FIFO rank `i` in class
    /// `i`).
    fn by_classes(&mut self, v: &NonClairvoyantView, out: &mut Decision) {
        if self.light.len() >= self.heavy_class as usize {
            // The heavy level moves below the light ranks: its flows are named.
            let want = self.light.len().next_power_of_two().max(2 * self.heavy_class as usize);
            self.heavy_class = want.min(MAX_LIGHT_CLASSES) as u8;
            debug_assert!(self.light.len() <= self.heavy_class as usize);
        }
        if self.told.len() < v.coflow_started.len() {
            self.told.resize(v.coflow_started.len(), UNTOLD);
        }
        if !self.classes_held {
            // Every active flow is named, by a dense decision.
            out.classes.clear();
            out.classes.resize(v.active.len(), 0);
            for (r, &gi) in self.light.iter().enumerate() {
                let g = &v.groups[gi];
                self.told[g.coflow as usize] = r as u8;
                out.classes[g.range()].fill(r as u8);
            }
            for &gi in &self.heavy {
                let g = &v.groups[gi];
                self.told[g.coflow as usize] = self.heavy_class;
                out.classes[g.range()].fill(self.heavy_class);
            }
            self.classes_held = !v.active.is_empty();
            return;
        }
        out.class_delta = true;
        self.light_classes(v);
        let heavy_class = self.heavy_class;
        let classed = self
            .light
            .iter()
            .zip(&self.want)
            .map(|(&gi, &c)| (gi, c))
            .chain(self.heavy.iter().map(|&gi| (gi, heavy_class)));
        for (gi, c) in classed {
            let g = &v.groups[gi];
            let told = &mut self.told[g.coflow as usize];
            if *told != c {
                *told = c;
                for &f in &v.active[g.range()] {
                    out.class_moves.push((f, c));
                }
            }
        }
        // Flows that started since the last call (repeats are harmless; one
        // that already finished is ignored by the driver). Every active
        // coflow's class was told above.
        for &f in v.started {
            let c = self.told[v.flow_coflow[f as usize] as usize];
            if c != UNTOLD {
                out.class_moves.push((f, c));
            }
        }
    }
}

impl NonClairvoyantPolicy for Baraat {
    fn decide(&mut self, v: &NonClairvoyantView, out: &mut Decision) {
        self.split(v, out);
        if out.delta_ok && self.light.len() <= self.max_light_classes {
            self.by_classes(v, out);
        } else if self.classes_held {
            // Back to rates after classes: the driver's rates are not the
            // ones the order last wrote, so this decision is whole (sparse,
            // every positive rate), from a fresh order.
            self.classes_held = false;
            self.prio = CoflowPriority::default();
            let delta_ok = std::mem::replace(&mut out.delta_ok, false);
            self.by_rates(v, out);
            out.delta_ok = delta_ok;
        } else {
            self.by_rates(v, out);
        }
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

    /// The class moves of a delta call (duplicates dropped), sorted.
    fn moves(b: &mut Baraat, c: &Case) -> Vec<(u32, u8)> {
        let mut d = Decision::default();
        d.reset(c.active.len());
        d.delta_ok = true;
        b.decide(&c.non_clairvoyant(), &mut d);
        assert!(d.class_delta, "a call after the first is a class delta");
        let mut m = d.class_moves.clone();
        m.sort_unstable();
        m.dedup();
        m
    }

    #[test]
    fn light_coflows_keep_their_classes_when_one_ahead_leaves() {
        // Nine light coflows, one flow each on its own ports. The first call
        // names classes by FIFO rank: 0, 1, 2.
        let (mut c, mut b, classes) = first_call(9, &[0, 1, 2]);
        assert_eq!(classes, vec![0, 1, 2]);
        assert_eq!(b.heavy_class, FIRST_HEAVY_CLASS);
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
        assert_eq!(b.heavy_class, 8);
        // 1-3 finish, 5-7 arrive and take 5, 6, 7. Coflow 8 would need class
        // 8, the heavy one: five light coflows fill half of 0..8, so the
        // heavy class moves down to max(2 · 8, 4 · 5) = 20 and 8 takes 8.
        c.set_active(&[4, 5, 6, 7]);
        c.started = vec![5, 6, 7];
        assert_eq!(moves(&mut b, &c), vec![(5, 5), (6, 6), (7, 7)]);
        c.set_active(&[4, 5, 6, 7, 8]);
        c.started = vec![8];
        assert_eq!(moves(&mut b, &c), vec![(8, 8)]);
        assert_eq!(b.heavy_class, 20);
    }

    #[test]
    fn light_classes_are_renumbered_by_rank_when_they_run_out() {
        // As above, but the three light coflows were told the last light
        // classes (250, 251, 252) under the largest heavy class (253): coflow
        // 4 finds no class left and the heavy class cannot move, so every
        // light coflow is renumbered by its FIFO rank.
        let (mut c, mut b, _) = first_call(5, &[1, 2, 3]);
        b.heavy_class = MAX_LIGHT_CLASSES as u8;
        b.told[1..4].copy_from_slice(&[250, 251, 252]);
        c.set_active(&[1, 2, 3, 4]);
        c.started = vec![4];
        assert_eq!(moves(&mut b, &c), vec![(1, 0), (2, 1), (3, 2), (4, 3)]);
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
