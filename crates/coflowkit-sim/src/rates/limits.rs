//! Class limits ([`coflowkit_policy::decision::Decision::class_limits`]): a
//! flow of a strict-priority class leaves it at the event where it has sent
//! its class's limit (within the tolerance of a threshold), into
//! [`Rates::crossed`], keyless, until the engine gives it its next class.
//!
//! A flow is keyed at `min(limit, size)` instead of its end: on its class
//! path's counter (classes by group, [`Rates::join_counter`]) or by its own
//! `exact`/`due` entries (per-flow classes), so a crossing is found as a
//! completion is, at no cost per event. A popped key whose flow is short of
//! its end is a crossing.

use super::Rates;
use coflowkit_model::{finish_threshold, TIME_EPS};
use coflowkit_policy::view::ViewData;

impl Rates {
    /// Where flow `f` (flow mode) is next keyed, in bytes sent, with that
    /// point's byte tolerance: its end, or its class limit when that comes
    /// first (as a counter keys its flows, [`Rates::join_counter`]).
    #[inline]
    pub(super) fn flow_target(&self, d: &ViewData, fi: usize) -> (f64, f64) {
        let (size, thr) = (d.size[fi], finish_threshold(d.size[fi]));
        match self.flow_limit.get(fi) {
            Some(&lim) if lim < size - thr => (lim, finish_threshold(lim)),
            _ => (size, thr),
        }
    }

    /// Flow `f`'s class limit (flow mode): from `now` it is keyed at `lim`
    /// bytes sent as well as at its end, and at the event where it reaches
    /// `lim` (within the tolerance of a threshold) it goes into
    /// [`Rates::crossed`], keyless, still at its rate, until the engine gives
    /// it a class and a limit again. Infinite: none.
    pub fn set_flow_limit(&mut self, d: &mut ViewData, f: u32, lim: f64, now: f64) {
        let fi = f as usize;
        if self.flow_limit.len() <= fi {
            if lim == f64::INFINITY {
                return; // no limit was ever set: nothing to undo
            }
            self.flow_limit
                .resize(d.size.len().max(fi + 1), f64::INFINITY);
        }
        let changed = self.flow_limit[fi].to_bits() != lim.to_bits();
        self.flow_limit[fi] = lim;
        self.limits_used |= lim < f64::INFINITY;
        let r = d.rate[fi];
        // A moving flow is keyed again (a crossed one has no key at all).
        if r > 0.0 && (changed || self.fexact[fi] == f64::INFINITY) {
            d.base[fi] += r * (now - d.since[fi]);
            d.since[fi] = now;
            self.ver[fi] = self.ver[fi].wrapping_add(1);
            self.schedule(d, f, now);
        }
    }

    /// Whether a flow-mode class limit was ever set.
    pub fn has_flow_limits(&self) -> bool {
        !self.flow_limit.is_empty()
    }

    /// Flow `f` (flow mode, moving) reached its limit at `now`: its keys go
    /// stale and it waits in [`Rates::crossed`].
    pub(super) fn cross(&mut self, f: u32) {
        let fi = f as usize;
        self.ver[fi] = self.ver[fi].wrapping_add(1);
        self.fexact[fi] = f64::INFINITY;
        self.fdue[fi] = f64::INFINITY;
        self.crossed.push(f);
    }

    /// Whether flow `fi` (flow mode, at rate `r`) has reached its class
    /// limit at `now`, within the tolerance of a threshold or of one event.
    pub(super) fn reached_limit(&self, d: &ViewData, fi: usize, r: f64, now: f64) -> bool {
        let lim = match self.flow_limit.get(fi) {
            Some(&lim) if lim < f64::INFINITY => lim,
            _ => return false,
        };
        let sent = d.base[fi] + r * (now - d.since[fi]);
        sent >= lim - finish_threshold(lim).max(r * TIME_EPS)
    }

    /// Counter `p`'s limit: a flow that joins it from now on leaves it (into
    /// [`Rates::crossed`], at the event where it has sent `lim` bytes within
    /// their tolerance) unless it finishes first. Flows already on it keep
    /// the limit they joined with.
    pub fn set_counter_limit(&mut self, p: usize, lim: f64) {
        if self.counter_limit.len() <= p {
            if lim == f64::INFINITY {
                return;
            }
            self.counter_limit.resize(p + 1, f64::INFINITY);
        }
        self.counter_limit[p] = lim;
        self.limits_used |= lim < f64::INFINITY;
    }
}
