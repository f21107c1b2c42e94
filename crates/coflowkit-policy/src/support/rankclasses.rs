//! [`RankClasses`]: a priority order of coflows (priority max-min, one level
//! per coflow, max-min inside) told to a driver as strict-priority classes
//! when it takes class decisions, as rates otherwise.
//!
//! A class decision says only which class each flow is in; the driver (the
//! engine's `LevelClasses`) serves the classes in order, max-min inside each,
//! and keeps each class solved as bottleneck groups, answering a level change
//! with one entry whatever its flows. One coflow per class is exactly
//! [`CoflowPriority::run`]'s model, so both forms give the same rates (up to
//! the order of float sums). The class form needs a driver that takes delta
//! decisions ([`Decision::delta_ok`]) and at most [`MAX_RANKED`] ranked
//! coflows (classes are `u8`); otherwise the order is served by rates.
//!
//! Below the ranked coflows a policy may put a *tail*: coflows that share one
//! level, max-min among all their flows (Baraat's heavy coflows).
//!
//! Classes are sticky: only the order of the classes matters, so a ranked
//! coflow keeps the class it was told while it still comes after the one
//! before it, and one that arrived (or now comes before a coflow it did not
//! use to) takes the next class after its predecessor's. A coflow that leaves
//! the order then moves nobody; with ranks as classes, every coflow behind it
//! would move up one, all its flows named. The tail's class lies below the
//! ranked ones and moves further down (a larger number; its flows named) when
//! the ranked coflows fill half of the classes above it; if the classes still
//! run out, the ranked coflows are renumbered by rank (each moved once).
//!
//! A coflow alone in its class that moves to a class free by then is told as
//! a rename of its class ([`Decision::class_renames`]: one entry, and the
//! driver keeps the class's solution and counters under the new number).
//! New flows, and coflows moving out of or into a shared class (the tail),
//! are told flow by flow; so is a coflow whose new class is held by one that
//! moves flow by flow (that class is not free while the renames apply), until
//! no such rename is left.

use crate::decision::Decision;
use crate::support::priority::CoflowPriority;
use crate::view::Common;

/// No class told yet.
const UNTOLD: u8 = u8::MAX;
/// The tail's first class (ranked coflows take the classes above it).
pub const FIRST_TAIL_CLASS: u8 = 4;
/// Most ranked coflows a class decision can order (classes are `u8`, the
/// tail takes one below them and [`UNTOLD`] is reserved): with more, the
/// decision is by rates.
pub const MAX_RANKED: usize = 253;

/// See the module docs.
pub struct RankClasses {
    /// The rate form (and the driver's rates while it is the form in force).
    pub prio: CoflowPriority,
    /// Per coflow the class its flows were last told (`UNTOLD`: none).
    told: Vec<u8>,
    /// The tail's class (below every ranked class; it grows when the ranked
    /// coflows outnumber it).
    tail_class: u8,
    /// Whether the driver holds the classes told (false at the first call
    /// and after a decision by rates).
    held: bool,
    /// Scratch: the class each ranked coflow is to have, in order.
    want: Vec<u8>,
    /// Most ranked coflows a class decision orders ([`MAX_RANKED`]; lower in
    /// tests, to exercise the switch to rates and back).
    limit: usize,
    /// Scratch: `(group, old class, new class, renamed)` per coflow whose
    /// class changes.
    changes: Vec<(usize, u8, u8, bool)>,
}

impl Default for RankClasses {
    fn default() -> Self {
        RankClasses {
            prio: CoflowPriority::default(),
            told: Vec::new(),
            tail_class: FIRST_TAIL_CLASS,
            held: false,
            want: Vec::new(),
            limit: MAX_RANKED,
            changes: Vec::new(),
        }
    }
}

impl RankClasses {
    /// Decides by rates whenever more than `n` coflows are ranked (at most
    /// [`MAX_RANKED`]); for tests of the switch between the forms.
    #[doc(hidden)]
    pub fn with_limit(mut self, n: usize) -> Self {
        self.limit = n.min(MAX_RANKED);
        self
    }

    /// The tail's class (for tests).
    #[doc(hidden)]
    pub fn tail_class(&self) -> u8 {
        self.tail_class
    }

    /// Sets the classes told to the coflows of `groups` (indices into
    /// `c.groups`), as if told, and the tail's class (for tests).
    #[doc(hidden)]
    pub fn pretend_told(&mut self, c: &Common, groups: &[usize], classes: &[u8], tail: u8) {
        for (&gi, &q) in groups.iter().zip(classes) {
            self.told[c.groups[gi].coflow as usize] = q;
        }
        self.tail_class = tail;
    }

    /// Whether the last decision was by classes.
    pub fn by_classes(&self) -> bool {
        self.held
    }

    /// Serves `order` (indices into `c.groups`, highest priority first), one
    /// level per coflow, then `tail` in one shared level. The two together
    /// list every active coflow once (a class decision has no level below
    /// the tail's to leave a coflow out). `out` must be fresh from
    /// [`Decision::reset`].
    pub fn serve(&mut self, c: &Common, order: &[usize], tail: &[usize], out: &mut Decision) {
        debug_assert_eq!(
            order.len() + tail.len(),
            c.groups.len(),
            "every active coflow once"
        );
        if out.delta_ok && order.len() <= self.limit {
            self.classes(c, order, tail, out);
        } else if self.held {
            // Back to rates after classes: the driver's rates are not the
            // ones the order last wrote, so this decision is whole (sparse,
            // every positive rate), from a fresh order.
            self.held = false;
            self.prio = CoflowPriority::default();
            let delta_ok = std::mem::replace(&mut out.delta_ok, false);
            self.rates(c, order, tail, out);
            out.delta_ok = delta_ok;
        } else {
            self.rates(c, order, tail, out);
        }
    }

    /// The decision by rates: a priority max-min over `order`, then one
    /// level for `tail`.
    fn rates(&mut self, c: &Common, order: &[usize], tail: &[usize], out: &mut Decision) {
        self.prio.run(c, order, out);
        if !tail.is_empty() {
            let groups = c.groups;
            self.prio
                .serve_level(c, tail.iter().flat_map(|&gi| groups[gi].range()), 0, out);
        }
    }

    /// The decision by classes: the ranked coflows in classes that increase
    /// in order ([`RankClasses::ranked_classes`]), every tail coflow in
    /// `tail_class`. Names the flows that started and those of the coflows
    /// whose class changed; the first call, and the first after a decision
    /// by rates, names every flow (the coflow of rank `i` in class `i`).
    fn classes(&mut self, c: &Common, order: &[usize], tail: &[usize], out: &mut Decision) {
        if order.len() >= self.tail_class as usize {
            // The tail moves below the ranked classes: its flows are named.
            let want = order
                .len()
                .next_power_of_two()
                .max(2 * self.tail_class as usize);
            self.tail_class = want.min(MAX_RANKED) as u8;
            debug_assert!(order.len() <= self.tail_class as usize);
        }
        if self.told.len() < c.coflow_started.len() {
            self.told.resize(c.coflow_started.len(), UNTOLD);
        }
        if !self.held {
            // Every active flow is named, by a dense decision.
            out.classes.clear();
            out.classes.resize(c.active.len(), 0);
            for (r, &gi) in order.iter().enumerate() {
                let g = &c.groups[gi];
                self.told[g.coflow as usize] = r as u8;
                out.classes[g.range()].fill(r as u8);
            }
            for &gi in tail {
                let g = &c.groups[gi];
                self.told[g.coflow as usize] = self.tail_class;
                out.classes[g.range()].fill(self.tail_class);
            }
            self.held = !c.active.is_empty();
            return;
        }
        out.class_delta = true;
        self.ranked_classes(c, order);
        let tail_class = self.tail_class;
        // How many active coflows each class holds before this decision.
        let mut held = [0u32; 256];
        for &gi in order.iter().chain(tail) {
            held[self.told[c.groups[gi].coflow as usize] as usize] += 1;
        }
        held[UNTOLD as usize] = 0;
        let classed = order
            .iter()
            .zip(&self.want)
            .map(|(&gi, &q)| (gi, q))
            .chain(tail.iter().map(|&gi| (gi, tail_class)));
        let mut changes = std::mem::take(&mut self.changes);
        changes.clear();
        // A rename leaves a class the coflow holds alone, into one no other
        // rename takes.
        let (mut source, mut taken) = ([false; 256], [false; 256]);
        for (gi, q) in classed {
            let old = self.told[c.groups[gi].coflow as usize];
            if old != q {
                let alone = old != UNTOLD && held[old as usize] == 1 && !taken[q as usize];
                if alone {
                    source[old as usize] = true;
                    taken[q as usize] = true;
                }
                changes.push((gi, old, q, alone));
            }
        }
        // The class a rename takes must be free while the renames apply:
        // empty, or left by a rename itself.
        loop {
            let mut again = false;
            for ch in changes.iter_mut().filter(|ch| ch.3) {
                let q = ch.2 as usize;
                if held[q] > 0 && !source[q] {
                    ch.3 = false;
                    source[ch.1 as usize] = false;
                    again = true;
                }
            }
            if !again {
                break;
            }
        }
        for &(gi, old, q, renamed) in &changes {
            let g = &c.groups[gi];
            self.told[g.coflow as usize] = q;
            if renamed {
                out.class_renames.push((old, q));
            } else {
                for &f in &c.active[g.range()] {
                    out.class_moves.push((f, q));
                }
            }
        }
        self.changes = changes;
        // Flows that started since the last call (repeats are harmless; one
        // that already finished is ignored by the driver). Every active
        // coflow's class was told above.
        for &f in c.started {
            let q = self.told[c.flow_coflow[f as usize] as usize];
            if q != UNTOLD {
                out.class_moves.push((f, q));
            }
        }
    }

    /// The class of each ranked coflow (`want`, in order) under a class
    /// decision after the first (see the module docs).
    fn ranked_classes(&mut self, c: &Common, order: &[usize]) {
        if !self.keep_classes(c, order) {
            if 2 * order.len() >= self.tail_class as usize
                && (self.tail_class as usize) < MAX_RANKED
            {
                let want = (2 * self.tail_class as usize).max(4 * order.len());
                self.tail_class = want.min(MAX_RANKED) as u8;
            }
            if !self.keep_classes(c, order) {
                self.want.clear();
                self.want.extend((0..order.len()).map(|r| r as u8));
            }
        }
    }

    /// The sticky assignment of [`RankClasses::ranked_classes`] into `want`;
    /// false when it runs out of classes above the tail's.
    fn keep_classes(&mut self, c: &Common, order: &[usize]) -> bool {
        self.want.clear();
        let tail = self.tail_class as i32;
        let mut prev = -1;
        for &gi in order {
            let told = self.told[c.groups[gi].coflow as usize] as i32;
            let q = if told > prev && told < tail {
                told
            } else {
                prev + 1
            };
            if q >= tail {
                return false;
            }
            self.want.push(q as u8);
            prev = q;
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::{close, Case};

    /// `n` coflows, coflow `k`'s one flow from port `k` to port `n` (one
    /// shared receiver, C = 10), all active.
    fn case(n: u32) -> Case {
        let flows: Vec<_> = (0..n).map(|k| (k, k, n, 1e6, 0.0)).collect();
        Case::new(n + 1, 10.0, &flows)
    }

    /// One decision on `order` (group indices), by a driver that takes
    /// delta decisions when `delta`.
    fn decide(r: &mut RankClasses, c: &Case, order: &[usize], delta: bool) -> Decision {
        let mut d = Decision::default();
        d.reset(c.active.len());
        d.delta_ok = delta;
        r.serve(&c.non_clairvoyant(), order, &[], &mut d);
        d
    }

    #[test]
    fn a_coflow_put_ahead_moves_only_itself_and_those_it_passes() {
        // First call: classes by rank. Order 0, 2 (groups 0 and 2).
        let mut c = case(4);
        c.set_active(&[0, 2]);
        let mut r = RankClasses::default();
        let d = decide(&mut r, &c, &[0, 1], true);
        assert!(!d.class_delta);
        assert_eq!(d.classes, vec![0, 1]);
        // Coflows 1 and 3 arrive; the order is 0, 1, 2, 3 (coflow 1 goes
        // between 0 and 2, as scf puts a shorter coflow). 0 keeps class 0; 1
        // takes 1; 2 (told 1, not above 1, alone there) moves to class 2,
        // free: a rename; 3 takes 3.
        c.set_active(&[0, 1, 2, 3]);
        c.started = vec![1, 3];
        let d = decide(&mut r, &c, &[0, 1, 2, 3], true);
        assert!(d.class_delta);
        let mut m = d.class_moves.clone();
        m.sort_unstable();
        m.dedup();
        assert_eq!(m, vec![(1, 1), (3, 3)]);
        assert_eq!(d.class_renames, vec![(1, 2)]);
        // Coflow 1 leaves: nobody moves.
        c.set_active(&[0, 2, 3]);
        c.started = vec![];
        let d = decide(&mut r, &c, &[0, 1, 2], true);
        assert!(d.class_moves.is_empty() && d.class_renames.is_empty());
        // Coflow 0 drops to the end (order: groups 1, 2, 0 = coflows 2, 3,
        // 0, told 2, 3, 0): 2 and 3 keep their classes, 0 takes 4, free and
        // above the tail's class (8 since four coflows were ranked): one
        // rename, no flow named.
        let d = decide(&mut r, &c, &[1, 2, 0], true);
        assert_eq!(r.tail_class(), 8);
        assert!(d.class_moves.is_empty());
        assert_eq!(d.class_renames, vec![(0, 4)]);
    }

    /// One class decision on `order` then `tail` (group indices).
    fn decide_tail(r: &mut RankClasses, c: &Case, order: &[usize], tail: &[usize]) -> Decision {
        let mut d = Decision::default();
        d.reset(c.active.len());
        d.delta_ok = true;
        r.serve(&c.non_clairvoyant(), order, tail, &mut d);
        d
    }

    #[test]
    fn renames_take_only_classes_free_while_they_apply() {
        // Four coflows, one flow each (flow k of coflow k). First call:
        // coflows 0, 1, 2 ranked, 3 in the tail (class 4).
        let mut c = case(4);
        c.set_active(&[0, 1, 2, 3]);
        let mut r = RankClasses::default();
        let d = decide_tail(&mut r, &c, &[0, 1, 2], &[3]);
        assert_eq!(d.classes, vec![0, 1, 2, 4]);
        // Ranked 2, 1; tail 3, 0. Coflow 2 keeps 2; coflow 1 (told 1, not
        // above 2) takes 3, free: a rename. Coflow 0 is alone in class 0,
        // but the tail's class 4 holds coflow 3, which stays: flow by flow.
        let d = decide_tail(&mut r, &c, &[2, 1], &[3, 0]);
        assert_eq!(d.class_renames, vec![(1, 3)]);
        assert_eq!(d.class_moves, vec![(0, 4)]);
        // Coflow 1 finishes (groups: coflows 0, 2, 3). Ranked 3, 2; tail 0.
        // Coflow 3 (told 4, not below the tail) takes 0, but it shares class
        // 4 with coflow 0: flow by flow. Coflow 2 keeps 2, coflow 0 stays in
        // the tail.
        c.set_active(&[0, 2, 3]);
        let d = decide_tail(&mut r, &c, &[2, 1], &[0]);
        assert!(d.class_renames.is_empty());
        assert_eq!(d.class_moves, vec![(3, 0)]);
        // Ranked 2, 0; tail 3. Coflow 2 keeps 2; coflow 0 (told 4, now alone
        // there) takes 3, free; coflow 3 (alone in class 0) takes the tail's
        // class 4, which coflow 0 leaves by a rename: two renames, no flow
        // named.
        let d = decide_tail(&mut r, &c, &[1, 0], &[2]);
        assert!(d.class_moves.is_empty());
        assert_eq!(d.class_renames, vec![(4, 3), (0, 4)]);
    }

    #[test]
    fn more_coflows_than_classes_are_served_by_rates_then_classes_again() {
        // Limit 2, one receiver (C = 10). Two coflows: classes by rank.
        let mut c = case(3);
        c.set_active(&[0, 1]);
        let mut r = RankClasses::default().with_limit(2);
        let d = decide(&mut r, &c, &[1, 0], true);
        assert_eq!(d.classes, vec![1, 0]);
        assert!(r.by_classes());
        // Three: by rates, a whole decision, the first in the order taking
        // the receiver.
        c.set_active(&[0, 1, 2]);
        c.started = vec![2];
        let d = decide(&mut r, &c, &[2, 0, 1], true);
        assert!(d.classes.is_empty() && !r.by_classes());
        close(&d.rates, &[0.0, 0.0, 10.0]);
        // Two again: the classes are named whole (dense), by rank.
        c.set_active(&[1, 2]);
        c.started = vec![];
        let d = decide(&mut r, &c, &[1, 0], true);
        assert!(!d.class_delta && r.by_classes());
        assert_eq!(d.classes, vec![1, 0]);
        // A driver without delta decisions always gets rates.
        let mut r = RankClasses::default();
        c.set_active(&[0, 1, 2]);
        let d = decide(&mut r, &c, &[1, 0, 2], false);
        assert!(d.classes.is_empty());
        close(&d.rates, &[0.0, 10.0, 0.0]);
    }
}
