//! [`IncFlowQueues`]: per-flow multi-level feedback queues kept across calls, for
//! a driver that takes delta decisions (`pias`'s form in the simulator).
//!
//! The rule is [`crate::policies::pias::FlowQueues`]'s: a flow's queue is the
//! first whose threshold its bytes sent have not crossed, queues are served in
//! strict priority, max-min fair within one. What is kept:
//!
//! * per flow its queue, in a [`KeptClasses`] (the queues are its classes: per
//!   queue a `TailMaxMin` in delta form over the queue's per-path flow counts,
//!   told only the count changes, answering with the paths whose rate moved): a
//!   flow changes queue only when it starts, finishes, or crosses a threshold;
//! * a heap of the times at which moving flows reach their queue's threshold,
//!   pushed when a flow's rate or queue changes.
//!
//! A call costs the flows that started, finished or crossed, the paths solved
//! again and the flows whose rate changed; never a pass over every active flow.
//! It answers with a delta decision by flow ([`Decision::by_flow`]). The rates are
//! those of the full form up to the order of float sums, and the wake-up names
//! the flow the full form names (the first to reach its threshold, the lowest
//! index on a tie), evaluated on the same bytes sent.

use crate::decision::{Decision, Wakeup};
use crate::support::classes::KeptClasses;
use crate::support::thresholds::Thresholds;
use crate::view::Common;
use coflowkit_model::TotalF64 as Key;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Per-flow queues kept across calls (see the module docs).
pub struct IncFlowQueues {
    th: Thresholds,
    /// The tracked flows' queues, and their rates.
    queues: KeptClasses,
    /// Per flow (global index): the rate last decided, a version bumped
    /// whenever its heap entry goes stale, and the version of its valid entry.
    rate: Vec<f64>,
    ver: Vec<u32>,
    entry_ver: Vec<u32>,
    /// `(time the flow reaches its queue's threshold, less the byte tolerance;
    /// flow; version)`. Each tracked flow with a positive rate below the last
    /// queue has one valid entry.
    heap: BinaryHeap<Reverse<(Key, u32, u32)>>,
    moving: usize,
    /// Scratch: the rates the queues named, flows that started or changed
    /// queue, candidates that did not cross, entries popped while naming the
    /// wake-up.
    named: Vec<(u32, f64)>,
    moved: Vec<u32>,
    deferred: Vec<u32>,
    popped: Vec<Reverse<(Key, u32, u32)>>,
}

/// Slack on predicted times (seconds): an entry due within it is checked on the
/// bytes sent. Predictions and the driver's bytes differ by float rounding only.
fn slack(now: f64) -> f64 {
    1e-6 + 1e-9 * now.abs()
}

impl IncFlowQueues {
    pub fn new(th: Thresholds) -> Self {
        IncFlowQueues {
            th,
            queues: KeptClasses::new(),
            rate: Vec::new(),
            ver: Vec::new(),
            entry_ver: Vec::new(),
            heap: BinaryHeap::new(),
            moving: 0,
            named: Vec::new(),
            moved: Vec::new(),
            deferred: Vec::new(),
            popped: Vec::new(),
        }
    }

    /// Decides (delta decision by flow): the view must list the flows that
    /// started and finished since the previous call ([`Common::started`]).
    pub fn decide(&mut self, c: &Common, out: &mut Decision) {
        debug_assert!(out.delta_ok);
        out.by_flow = true;
        self.grow(c);
        self.queues.begin();
        self.deferred.clear();
        for &f in c.started {
            let q = self.th.queue(c.sent(f));
            self.track(c, f, q);
        }
        for &f in c.finished {
            if self.queues.class_of(f).is_some() {
                self.untrack(c, f);
            }
        }
        self.crossings(c);
        let named = &mut self.named;
        named.clear();
        self.queues
            .solve(c.fabric, c.flow_path, |f, r| named.push((f, r)));
        for j in 0..self.named.len() {
            let (f, r) = self.named[j];
            self.set(c, f, r, out);
        }
        self.moved.clear();
        self.moved.extend_from_slice(self.queues.moved());
        for j in 0..self.moved.len() {
            self.ensure_entry(c, self.moved[j]);
        }
        for j in 0..self.deferred.len() {
            self.ensure_entry(c, self.deferred[j]);
        }
        self.compact();
        if let Some(w) = self.first_crossing(c) {
            out.wakeups.push(w);
        }
    }

    fn grow(&mut self, c: &Common) {
        let n = c.flow_path.len();
        if self.rate.len() < n {
            self.rate.resize(n, 0.0);
            self.ver.resize(n, 0);
            self.entry_ver.resize(n, u32::MAX);
        }
        self.queues.grow(n, c.fabric.num_paths());
    }

    fn track(&mut self, c: &Common, f: u32, q: usize) {
        let fi = f as usize;
        self.rate[fi] = 0.0;
        self.ver[fi] = self.ver[fi].wrapping_add(1);
        self.queues.assign(f, c.flow_path[fi], q);
    }

    fn untrack(&mut self, c: &Common, f: u32) {
        let fi = f as usize;
        self.queues.remove(f, c.flow_path[fi]);
        if self.rate[fi] > 0.0 {
            self.moving -= 1;
        }
        self.rate[fi] = 0.0;
        self.ver[fi] = self.ver[fi].wrapping_add(1);
    }

    /// Moves every flow whose bytes sent crossed its queue's threshold; the
    /// candidates that did not are kept for a new entry.
    fn crossings(&mut self, c: &Common) {
        let horizon = c.now_s + slack(c.now_s);
        while let Some(&Reverse((Key(t), f, v))) = self.heap.peek() {
            if t > horizon {
                break;
            }
            self.heap.pop();
            let fi = f as usize;
            let Some(old) = self.queues.class_of(f) else {
                continue;
            };
            if self.ver[fi] != v {
                continue;
            }
            self.ver[fi] = self.ver[fi].wrapping_add(1); // its entry is gone
            let q = self.th.queue(c.sent(f));
            if q == old {
                self.deferred.push(f);
                continue;
            }
            self.queues.assign(f, c.flow_path[fi], q);
        }
    }

    /// Flow `f` takes rate `r` (listed in the decision when it changes).
    fn set(&mut self, c: &Common, f: u32, r: f64, out: &mut Decision) {
        let fi = f as usize;
        let old = self.rate[fi];
        if old.to_bits() == r.to_bits() {
            return;
        }
        self.moving += (r > 0.0) as usize;
        self.moving -= (old > 0.0) as usize;
        self.rate[fi] = r;
        self.ver[fi] = self.ver[fi].wrapping_add(1);
        out.flow_rates.push((f, r));
        self.ensure_entry(c, f);
    }

    /// Pushes flow `f`'s entry unless it has a valid one (or needs none).
    fn ensure_entry(&mut self, c: &Common, f: u32) {
        let fi = f as usize;
        let Some(q) = self.queues.class_of(f) else {
            return;
        };
        if self.entry_ver[fi] == self.ver[fi] {
            return;
        }
        let r = self.rate[fi];
        let Some(t) = self.th.upper(q) else {
            return;
        };
        if r <= 0.0 {
            return;
        }
        let at = t - coflowkit_model::finish_threshold(t);
        let when = c.now_s + (at - c.sent(f)) / r;
        self.entry_ver[fi] = self.ver[fi];
        self.heap.push(Reverse((Key(when), f, self.ver[fi])));
    }

    /// Drops stale entries when they outnumber the valid ones.
    fn compact(&mut self) {
        if self.heap.len() <= 4 * (self.moving + 1024) {
            return;
        }
        let ver = &self.ver;
        let v = std::mem::take(&mut self.heap).into_vec();
        self.heap = v
            .into_iter()
            .filter(|Reverse((_, f, v))| ver[*f as usize] == *v)
            .collect();
    }

    /// The full form's wake-up: among moving flows, the one that reaches its
    /// queue's threshold first at the bytes sent now (the lowest index on a
    /// tie). Entries are popped in order of predicted time until none can beat
    /// the best found (an entry's key is at most its exact time plus rounding).
    fn first_crossing(&mut self, c: &Common) -> Option<Wakeup> {
        let now = c.now_s;
        let mut best: Option<(f64, u32, f64)> = None;
        self.popped.clear();
        while let Some(&e) = self.heap.peek() {
            let Reverse((Key(t), f, v)) = e;
            let fi = f as usize;
            if self.ver[fi] != v {
                self.heap.pop();
                continue;
            }
            if let Some((dt, _, _)) = best {
                if t > now + dt + slack(now + dt) {
                    break;
                }
            }
            self.heap.pop();
            self.popped.push(e);
            let q = self.queues.class_of(f).expect("an entry's flow is tracked");
            let bytes = self.th.upper(q).expect("an entry has a threshold");
            let dt = (bytes - c.sent(f)) / self.rate[fi];
            if best.is_none_or(|b| dt < b.0 || (dt == b.0 && f < b.1)) {
                best = Some((dt, f, bytes));
            }
        }
        self.heap.extend(self.popped.drain(..));
        best.map(|(_, flow, bytes)| Wakeup::FlowSent { flow, bytes })
    }
}
