//! Coflow sums in path mode: each coflow's bytes kept as `coflow_base +
//! coflow_rate · (now − coflow_since)` while its flows are served by counters
//! (paths, or class paths in groups), as flow mode keeps them per flow. Off
//! until a decision asks to be woken at a coflow's bytes
//! ([`Rates::start_coflow_sums`]); a policy that reads every coflow's bytes
//! at each call (`aalo`) then pays O(1) per coflow instead of a sum over its
//! flows' counters. Per counter and per group the coflows served are listed
//! with their flow counts, so a rate change costs the coflows it serves.

use super::{Rates, NO_GROUP};
use coflowkit_policy::view::ViewData;

impl Rates {
    /// Starts keeping each coflow's bytes in path mode (`coflow_base`,
    /// `coflow_rate`, `coflow_since`, read by [`coflowkit_policy::view::Common::coflow_sent`]
    /// in O(1) instead of a sum over the coflow's flows): from every flow's
    /// bytes now and the rates of the counters serving the active ones. Kept
    /// from then on where a counter's flows or rate change (joins, leaves,
    /// completions, path and group rates, path moves between groups), until
    /// [`Rates::stop_coflow_sums`]. Costs per rate change the coflows the
    /// counter or group serves (one under one coflow per class).
    pub fn start_coflow_sums(&mut self, d: &mut ViewData, now: f64) {
        let nc = d.width.len();
        for k in 0..nc {
            let first = d.first_flow[k] as usize;
            d.coflow_base[k] = (first..first + d.width[k] as usize)
                .map(|f| d.sent_at(f, now))
                .sum();
            d.coflow_rate[k] = 0.0;
            d.coflow_since[k] = now;
        }
        self.cf_on.clear();
        self.cf_on.resize(nc, 0);
        self.ctr_cf.iter_mut().for_each(Vec::clear);
        self.grp_cf.iter_mut().for_each(Vec::clear);
        d.coflow_sums = true;
        for i in 0..d.active.len() {
            let f = d.active[i] as usize;
            if d.rate[f].is_nan() && d.prop_weight(f).is_none() {
                let p = d.counter_of(f);
                self.cf_count(d, d.flow_coflow[f], p, 1, now);
            }
        }
    }

    /// Stops keeping coflow sums (the caller sets the coflows' counters).
    pub fn stop_coflow_sums(&mut self, d: &mut ViewData) {
        d.coflow_sums = false;
        self.ctr_cf.iter_mut().for_each(Vec::clear);
        self.grp_cf.iter_mut().for_each(Vec::clear);
    }

    /// The per-flow rate of counter `p`'s flows.
    #[inline]
    pub(super) fn counter_rate(d: &ViewData, p: usize) -> f64 {
        match d.path_group.get(p) {
            Some(&g) if g != NO_GROUP => d.group_rate[g as usize],
            _ => d.path_rate[p],
        }
    }

    /// Coflow `k`'s bytes settled at `now`, and `dr` added to its rate (exactly
    /// 0 when none of its flows is on a counter).
    #[inline]
    fn cf_rate(d: &mut ViewData, on: u32, k: usize, dr: f64, now: f64) {
        d.coflow_base[k] += d.coflow_rate[k] * (now - d.coflow_since[k]);
        d.coflow_since[k] = now;
        d.coflow_rate[k] = if on == 0 { 0.0 } else { d.coflow_rate[k] + dr };
    }

    /// Adds `n` (±1) flows of coflow `k` to counter `p` (and its group).
    pub(super) fn cf_count(&mut self, d: &mut ViewData, k: u32, p: usize, n: i32, now: f64) {
        fn bump(v: &mut Vec<(u32, u32)>, k: u32, n: i32) {
            match v.iter().position(|e| e.0 == k) {
                Some(i) => {
                    let c = (v[i].1 as i64 + n as i64) as u32;
                    if c == 0 {
                        v.swap_remove(i);
                    } else {
                        v[i].1 = c;
                    }
                }
                None => {
                    debug_assert!(n > 0, "coflow {k} leaves a counter it is not on");
                    v.push((k, n as u32));
                }
            }
        }
        if self.ctr_cf.len() <= p {
            self.ctr_cf.resize_with(p + 1, Vec::new);
        }
        bump(&mut self.ctr_cf[p], k, n);
        let g = d.path_group.get(p).copied().unwrap_or(NO_GROUP);
        if g != NO_GROUP {
            let gi = g as usize;
            if self.grp_cf.len() <= gi {
                self.grp_cf.resize_with(gi + 1, Vec::new);
            }
            bump(&mut self.grp_cf[gi], k, n);
        }
        let ki = k as usize;
        self.cf_on[ki] = (self.cf_on[ki] as i64 + n as i64) as u32;
        let r = Self::counter_rate(d, p);
        Self::cf_rate(d, self.cf_on[ki], ki, n as f64 * r, now);
    }

    /// Counter `p`'s per-flow rate went from `old` to `new` at `now`.
    pub(super) fn cf_counter_rate(
        &mut self,
        d: &mut ViewData,
        p: usize,
        old: f64,
        new: f64,
        now: f64,
    ) {
        if let Some(cf) = self.ctr_cf.get(p) {
            for &(k, n) in cf {
                let ki = k as usize;
                Self::cf_rate(d, self.cf_on[ki], ki, n as f64 * (new - old), now);
            }
        }
    }

    /// Counter `p` moved from group `old` (`NO_GROUP`: its own counter) to
    /// the one it is in now, its per-flow rate from `rate_before`: its
    /// coflows move between the groups' lists and their rates follow.
    pub(super) fn cf_move(
        &mut self,
        d: &mut ViewData,
        p: usize,
        old: u32,
        rate_before: f64,
        now: f64,
    ) {
        let g = d.path_group[p];
        // A counter with no flows moves no coflow (and its old group may
        // have no list).
        if let Some(cf) = self.ctr_cf.get(p).filter(|cf| !cf.is_empty()) {
            if old != NO_GROUP {
                let list = &mut self.grp_cf[old as usize];
                for &(k, n) in cf {
                    let i = list.iter().position(|e| e.0 == k).expect("listed");
                    list[i].1 -= n;
                    if list[i].1 == 0 {
                        list.swap_remove(i);
                    }
                }
            }
            if g != NO_GROUP {
                let gi = g as usize;
                if self.grp_cf.len() <= gi {
                    self.grp_cf.resize_with(gi + 1, Vec::new);
                }
                let list = &mut self.grp_cf[gi];
                for &(k, n) in cf {
                    match list.iter().position(|e| e.0 == k) {
                        Some(i) => list[i].1 += n,
                        None => list.push((k, n)),
                    }
                }
            }
        }
        let rate_after = Self::counter_rate(d, p);
        self.cf_counter_rate(d, p, rate_before, rate_after, now);
    }

    /// Group `g`'s per-flow rate moved by `dr` at `now`.
    pub(super) fn cf_group_rate(&mut self, d: &mut ViewData, g: usize, dr: f64, now: f64) {
        if let Some(cf) = self.grp_cf.get(g) {
            for &(k, m) in cf {
                let ki = k as usize;
                Self::cf_rate(d, self.cf_on[ki], ki, m as f64 * dr, now);
            }
        }
    }

    /// The flows of counter `p` done at this event (`cf_done`, with what they
    /// had sent) leave it, each one's remainder credited to its coflow.
    pub(super) fn cf_take_done(&mut self, d: &mut ViewData, p: usize, now: f64) {
        let done = std::mem::take(&mut self.cf_done);
        for &(f, sent) in &done {
            let fi = f as usize;
            let k = d.flow_coflow[fi];
            self.cf_count(d, k, p, -1, now);
            d.coflow_base[k as usize] += d.size[fi] - sent;
        }
        self.cf_done = done;
    }
}
