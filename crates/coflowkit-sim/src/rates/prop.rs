//! Proportional groups ([`coflowkit_policy::view::Progress`]): the members of
//! coflow `k`'s group have `w_f · Φ_k(t)` bytes left, and `Φ_k` falls linearly
//! at the rate `σ_k` the last speed decision set, so a member goes at `w_f σ_k`
//! and every member is done when `Φ_k` reaches zero. A decision that gives
//! every flow of `k` the rate `rem_f · x` sets `σ_k = x · Φ_k(now)`: one value
//! per coflow, however many flows it has.
//!
//! Per group: its members (and each one's position among them), `W_k = Σ w_f`
//! (the group's part of the coflow's rate is `W_k σ_k`), `tol_k`, the largest
//! `thr_f / w_f` of its members since it was last empty (its byte tolerance in
//! `Φ` units: a member is done once `w_f Φ_k ≤ thr_f`), and one `exact` and
//! one `due` entry, as a path counter has. At a `due` entry each member is
//! tested as a flow is (`w_f Φ_k ≤ max(thr_f, w_f σ_k · TIME_EPS)`).

use super::{compact, Heap, Key, Rates};
use coflowkit_model::{finish_threshold, TIME_EPS};
use coflowkit_policy::view::ViewData;
use std::cmp::Reverse;

/// No position: the flow is in no group.
const OUT: u32 = u32::MAX;

#[derive(Default)]
pub(crate) struct Props {
    members: Vec<Vec<u32>>,
    /// Per flow: its position in its group's members, or `OUT`.
    pos: Vec<u32>,
    /// Per coflow: `W_k`, `tol_k`, `W_k σ_k`, the entries' version.
    weight: Vec<f64>,
    tol: Vec<f64>,
    pub part: Vec<f64>,
    ver: Vec<u32>,
    exact: Heap,
    due: Heap,
    /// Members in all groups.
    pub count: usize,
    /// Scratch: groups due at an event.
    due_groups: Vec<u32>,
}

impl Rates {
    /// Allocates the groups' state (on the first speed decision).
    fn prop_init(&mut self, d: &mut ViewData) {
        if !d.prop_w.is_empty() {
            return;
        }
        let (n, nc) = (d.size.len(), d.width.len());
        d.prop_w = vec![f64::NAN; n];
        d.prop_base = vec![1.0; nc];
        d.prop_rate = vec![0.0; nc];
        d.prop_since = vec![0.0; nc];
        let p = &mut self.prop;
        p.members = vec![Vec::new(); nc];
        p.pos = vec![OUT; n];
        p.weight = vec![0.0; nc];
        p.tol = vec![0.0; nc];
        p.part = vec![0.0; nc];
        p.ver = vec![0; nc];
    }

    /// Whether flow `f` is in its coflow's group.
    #[inline]
    pub fn in_group(&self, f: u32) -> bool {
        self.prop.pos.get(f as usize).is_some_and(|&p| p != OUT)
    }

    /// Sets coflow `k`'s group part of its rate to `new` at `now` (its bytes
    /// settled first).
    fn set_part(&mut self, d: &mut ViewData, k: usize, new: f64, now: f64) {
        d.coflow_base[k] += d.coflow_rate[k] * (now - d.coflow_since[k]);
        d.coflow_since[k] = now;
        let old = self.prop.part[k];
        self.prop.part[k] = new;
        d.coflow_rate[k] = if self.coflow_moving[k] == 0 {
            new
        } else {
            d.coflow_rate[k] - old + new
        };
    }

    /// Flow `f` (in flow mode, not done) joins its coflow's group at `now`
    /// with what it has left; it goes at the group's speed from then on.
    pub fn prop_join(&mut self, d: &mut ViewData, f: u32, now: f64) {
        self.prop_init(d);
        let fi = f as usize;
        debug_assert!(!d.rate[fi].is_nan() && !self.done[fi]);
        self.set_rate(d, f, 0.0, now);
        let k = d.flow_coflow[fi] as usize;
        if self.prop.members[k].is_empty() {
            // A fresh scalar; the group gets a speed from a decision.
            d.prop_base[k] = 1.0;
            d.prop_since[k] = now;
            d.prop_rate[k] = 0.0;
            self.prop.weight[k] = 0.0;
            self.prop.tol[k] = 0.0;
        }
        let phi = d.prop_phi(k, now);
        debug_assert!(phi > 0.0, "coflow {k}'s group is spent but has members");
        let sent = d.base[fi];
        let rem = (d.size[fi] - sent).max(0.0);
        let w = rem / phi;
        d.base[fi] = sent + w * phi;
        d.rate[fi] = f64::NAN;
        d.since[fi] = now;
        d.prop_w[fi] = w;
        self.ver[fi] = self.ver[fi].wrapping_add(1);
        let p = &mut self.prop;
        p.pos[fi] = p.members[k].len() as u32;
        p.members[k].push(f);
        p.count += 1;
        p.weight[k] += w;
        let tol = if w > 0.0 {
            finish_threshold(d.size[fi]) / w
        } else {
            f64::INFINITY
        };
        p.tol[k] = p.tol[k].max(tol);
        let part = p.weight[k] * d.prop_rate[k];
        self.set_part(d, k, part, now);
        self.prop_schedule(d, k, now);
    }

    /// Takes member `f` out of its group's lists (its bookkeeping is the
    /// caller's); the group's scalar starts afresh when it empties.
    fn prop_remove(&mut self, d: &mut ViewData, f: u32, w: f64) -> usize {
        let fi = f as usize;
        let k = d.flow_coflow[fi] as usize;
        let p = &mut self.prop;
        let at = p.pos[fi] as usize;
        p.members[k].swap_remove(at);
        if let Some(&g) = p.members[k].get(at) {
            p.pos[g as usize] = at as u32;
        }
        p.pos[fi] = OUT;
        p.count -= 1;
        d.prop_w[fi] = f64::NAN;
        if p.members[k].is_empty() {
            p.weight[k] = 0.0;
            p.tol[k] = 0.0;
        } else {
            p.weight[k] = (p.weight[k] - w).max(0.0);
        }
        k
    }

    /// Member `f` leaves its group at `now`, keeping its rate (it is in flow
    /// mode afterwards).
    pub fn prop_leave(&mut self, d: &mut ViewData, f: u32, now: f64) {
        let fi = f as usize;
        let w = d.prop_w[fi];
        let k = d.flow_coflow[fi] as usize;
        let phi = d.prop_phi(k, now);
        let rate = w * d.prop_rate[k];
        let sent = d.base[fi] - w * phi;
        self.prop_remove(d, f, w);
        d.base[fi] = sent;
        d.rate[fi] = 0.0;
        d.since[fi] = now;
        self.ver[fi] = self.ver[fi].wrapping_add(1);
        let part = self.prop.weight[k] * d.prop_rate[k];
        self.set_part(d, k, part, now);
        self.prop_schedule(d, k, now);
        self.set_rate(d, f, rate, now);
    }

    /// Every member of every group leaves it, keeping its rate (before a
    /// decision of another form), in the order of `active`.
    pub fn prop_leave_all(&mut self, d: &mut ViewData, now: f64) {
        if self.prop.count == 0 {
            return;
        }
        for i in 0..d.active.len() {
            let f = d.active[i];
            if self.in_group(f) {
                self.prop_leave(d, f, now);
            }
        }
    }

    /// Every member of coflow `k`'s group goes at `rem_f · x` from `now`;
    /// whether the group's rate changed.
    pub fn prop_speed(&mut self, d: &mut ViewData, k: usize, x: f64, now: f64) -> bool {
        self.prop_init(d);
        let phi = d.prop_phi(k, now).max(0.0);
        d.prop_base[k] = phi;
        d.prop_since[k] = now;
        let sigma = x * phi;
        if sigma == d.prop_rate[k] {
            return false;
        }
        d.prop_rate[k] = sigma;
        let part = self.prop.weight[k] * sigma;
        self.set_part(d, k, part, now);
        self.prop_schedule(d, k, now);
        true
    }

    /// Pushes coflow `k`'s group entries at its current speed.
    fn prop_schedule(&mut self, d: &mut ViewData, k: usize, now: f64) {
        let p = &mut self.prop;
        p.ver[k] = p.ver[k].wrapping_add(1);
        if p.members[k].is_empty() {
            return;
        }
        let phi = d.prop_phi(k, now);
        let (exact, due) = Self::entry_times(d.prop_rate[k], 0.0, phi, phi - p.tol[k], now);
        self.prop_push(k, exact, due);
    }

    fn prop_push(&mut self, k: usize, exact: f64, due: f64) {
        if exact == f64::INFINITY {
            return;
        }
        let p = &mut self.prop;
        let v = p.ver[k];
        p.exact.push(Reverse((Key(exact), k as u32, v)));
        p.due.push(Reverse((Key(due), k as u32, v)));
        if p.exact.len() > 4 * (p.ver.len() + 1024) {
            let ver = &p.ver;
            compact(&mut p.exact, |i, v| ver[i as usize] == v);
            compact(&mut p.due, |i, v| ver[i as usize] == v);
        }
    }

    /// The earliest projected end of a group, or infinity.
    pub fn prop_next(&mut self) -> f64 {
        let p = &mut self.prop;
        while let Some(&Reverse((_, k, v))) = p.exact.peek() {
            if p.ver[k as usize] == v {
                return (p.exact.peek().unwrap().0).0 .0;
            }
            p.exact.pop();
        }
        f64::INFINITY
    }

    /// The members done at `now` of every group due by then, appended to `out`
    /// (their remainders credited, as a flow's).
    pub fn prop_take_done(&mut self, d: &mut ViewData, now: f64, out: &mut Vec<u32>) {
        let mut due = std::mem::take(&mut self.prop.due_groups);
        due.clear();
        while let Some(&Reverse((Key(t), k, v))) = self.prop.due.peek() {
            if t > now {
                break;
            }
            self.prop.due.pop();
            if self.prop.ver[k as usize] == v {
                due.push(k);
            }
        }
        for &k in &due {
            let k = k as usize;
            let phi = d.prop_phi(k, now);
            let sigma = d.prop_rate[k];
            let mut i = 0;
            let mut tol: f64 = 0.0;
            let before = out.len();
            while i < self.prop.members[k].len() {
                let f = self.prop.members[k][i];
                let fi = f as usize;
                let w = d.prop_w[fi];
                let thr = finish_threshold(d.size[fi]);
                if w * phi > thr.max(w * sigma * TIME_EPS) {
                    tol = tol.max(if w > 0.0 { thr / w } else { f64::INFINITY });
                    i += 1;
                    continue;
                }
                // Done: the remainder is credited to the flow and its coflow.
                let rem = d.size[fi] - (d.base[fi] - w * phi);
                self.prop_remove(d, f, w); // moves another member into i
                d.coflow_base[k] += rem;
                d.base[fi] = d.size[fi];
                d.rate[fi] = 0.0;
                d.since[fi] = now;
                self.ver[fi] = self.ver[fi].wrapping_add(1);
                self.done[fi] = true;
                out.push(f);
            }
            let part = self.prop.weight[k] * sigma;
            self.set_part(d, k, part, now);
            if self.prop.members[k].is_empty() {
                self.prop.ver[k] = self.prop.ver[k].wrapping_add(1);
                continue;
            }
            self.prop.tol[k] = tol;
            d.prop_base[k] = phi;
            d.prop_since[k] = now;
            if out.len() == before {
                // A rounding hair short: done for sure when `Φ` reaches zero.
                self.prop.ver[k] = self.prop.ver[k].wrapping_add(1);
                let at = if sigma > 0.0 {
                    now + phi / sigma
                } else {
                    f64::INFINITY
                };
                self.prop_push(k, at, at);
            } else {
                self.prop_schedule(d, k, now);
            }
        }
        self.prop.due_groups = due;
    }
}
