//! [`IncFlowQueues`]: per-flow multi-level feedback queues kept across calls, for
//! a driver that takes delta decisions (`pias`'s form in the simulator).
//!
//! The rule is [`crate::policies::pias::FlowQueues`]'s: a flow's queue is the
//! first whose threshold its bytes sent have not crossed, queues are served in
//! strict priority, max-min fair within one. What is kept:
//!
//! * per flow its queue, and per path the flows on it: a flow changes queue only
//!   when it starts, finishes, or crosses a threshold;
//! * per queue a [`TailMaxMin`] in delta form over the per-path flow counts of the
//!   queue (flows of one path in one queue get one rate), told only the count
//!   changes, answering with the paths whose rate moved;
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
use crate::support::thresholds::Thresholds;
use crate::view::Common;
use coflowkit_alloc::TailMaxMin;
use coflowkit_model::{PathId, TotalF64 as Key};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Not tracked (not active, or not seen yet).
const NONE: u8 = u8::MAX;

/// Per-flow queues kept across calls (see the module docs).
pub struct IncFlowQueues {
    th: Thresholds,
    levels: Vec<TailMaxMin>,
    /// Per queue: this call's `(path, ±1)` count changes.
    deltas: Vec<Vec<(PathId, i32)>>,
    changed: Vec<(PathId, f64)>,
    /// Per flow (global index): its queue, the rate last decided, a version
    /// bumped whenever its heap entry goes stale, the version of its valid
    /// entry, and its slot in `on_path`.
    queue: Vec<u8>,
    rate: Vec<f64>,
    ver: Vec<u32>,
    entry_ver: Vec<u32>,
    slot: Vec<u32>,
    /// Per path: its tracked flows, whatever their queue.
    on_path: Vec<Vec<u32>>,
    /// `(time the flow reaches its queue's threshold, less the byte tolerance;
    /// flow; version)`. Each tracked flow with a positive rate below the last
    /// queue has one valid entry.
    heap: BinaryHeap<Reverse<(Key, u32, u32)>>,
    moving: usize,
    residual: Vec<f64>,
    /// Scratch: flows that started or changed queue, candidates that did not
    /// cross, entries popped while naming the wake-up.
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
        let k = th.queues();
        IncFlowQueues {
            th,
            levels: (0..k).map(|_| TailMaxMin::new()).collect(),
            deltas: vec![Vec::new(); k],
            changed: Vec::new(),
            queue: Vec::new(),
            rate: Vec::new(),
            ver: Vec::new(),
            entry_ver: Vec::new(),
            slot: Vec::new(),
            on_path: Vec::new(),
            heap: BinaryHeap::new(),
            moving: 0,
            residual: Vec::new(),
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
        for d in &mut self.deltas {
            d.clear();
        }
        self.moved.clear();
        self.deferred.clear();
        for &f in c.started {
            let q = self.th.queue(c.sent(f));
            self.track(c, f, q);
            self.moved.push(f);
        }
        for &f in c.finished {
            if self.queue[f as usize] != NONE {
                self.untrack(c, f);
            }
        }
        self.crossings(c);
        self.residual.clear();
        self.residual.extend_from_slice(&c.fabric.capacities);
        for q in 0..self.levels.len() {
            self.levels[q].solve_delta(
                c.fabric,
                &mut self.residual,
                &self.deltas[q],
                &mut self.changed,
            );
            for j in 0..self.changed.len() {
                let (p, r) = self.changed[j];
                for k in 0..self.on_path[p as usize].len() {
                    let f = self.on_path[p as usize][k];
                    if self.queue[f as usize] as usize == q {
                        self.set(c, f, r, out);
                    }
                }
            }
        }
        for j in 0..self.moved.len() {
            let f = self.moved[j];
            let q = self.queue[f as usize];
            if q != NONE {
                let r = self.levels[q as usize].rate_of(c.flow_path[f as usize]);
                self.set(c, f, r, out);
            }
        }
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
        if self.queue.len() < n {
            self.queue.resize(n, NONE);
            self.rate.resize(n, 0.0);
            self.ver.resize(n, 0);
            self.entry_ver.resize(n, u32::MAX);
            self.slot.resize(n, 0);
        }
        let np = c.fabric.num_paths();
        if self.on_path.len() < np {
            self.on_path.resize_with(np, Vec::new);
        }
    }

    fn track(&mut self, c: &Common, f: u32, q: usize) {
        let (fi, p) = (f as usize, c.flow_path[f as usize]);
        self.queue[fi] = q as u8;
        self.rate[fi] = 0.0;
        self.ver[fi] = self.ver[fi].wrapping_add(1);
        self.slot[fi] = self.on_path[p as usize].len() as u32;
        self.on_path[p as usize].push(f);
        self.deltas[q].push((p, 1));
    }

    fn untrack(&mut self, c: &Common, f: u32) {
        let (fi, p) = (f as usize, c.flow_path[f as usize]);
        let q = self.queue[fi] as usize;
        self.deltas[q].push((p, -1));
        let list = &mut self.on_path[p as usize];
        let at = self.slot[fi] as usize;
        list.swap_remove(at);
        if let Some(&g) = list.get(at) {
            self.slot[g as usize] = at as u32;
        }
        if self.rate[fi] > 0.0 {
            self.moving -= 1;
        }
        self.rate[fi] = 0.0;
        self.queue[fi] = NONE;
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
            if self.ver[fi] != v || self.queue[fi] == NONE {
                continue;
            }
            self.ver[fi] = self.ver[fi].wrapping_add(1); // its entry is gone
            let q = self.th.queue(c.sent(f));
            let old = self.queue[fi] as usize;
            if q == old {
                self.deferred.push(f);
                continue;
            }
            let p = c.flow_path[fi];
            self.deltas[old].push((p, -1));
            self.deltas[q].push((p, 1));
            self.queue[fi] = q as u8;
            self.moved.push(f);
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
        if self.queue[fi] == NONE || self.entry_ver[fi] == self.ver[fi] {
            return;
        }
        let r = self.rate[fi];
        let Some(t) = self.th.upper(self.queue[fi] as usize) else {
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
            let bytes = self
                .th
                .upper(self.queue[fi] as usize)
                .expect("an entry has a threshold");
            let dt = (bytes - c.sent(f)) / self.rate[fi];
            if best.is_none_or(|b| dt < b.0 || (dt == b.0 && f < b.1)) {
                best = Some((dt, f, bytes));
            }
        }
        self.heap.extend(self.popped.drain(..));
        best.map(|(_, flow, bytes)| Wakeup::FlowSent { flow, bytes })
    }
}
