//! The engine's strict-priority classes (a policy answering classes: `stream`,
//! `spq`): kept per flow (`KeptClasses`, rates by flow) or by group
//! (`LevelClasses`, one counter per class path), chosen by [`ClassForm`], with
//! the switches between the two forms; dense and delta class decisions.

use super::{ClassForm, Engine};
use coflowkit_model::PathId;
use coflowkit_policy::support::classes::KeptClasses;
use coflowkit_policy::support::levelclasses::LevelClasses;

/// [`ClassForm::Auto`]: checked every this many class decisions; groups from
/// this many active paths per link they cross, flows below the other.
const CLASS_CHECK_EVERY: u64 = 256;
const GROUPS_ABOVE: f64 = 2.0;
const FLOWS_BELOW: f64 = 1.0;

impl Engine<'_> {
    /// Strict priority across classes, max-min fair within a class, kept
    /// across calls: the classes are told the flows that finished, started or
    /// changed class, and the flows whose rate may have moved are listed in the
    /// decision's `flow_rates` (applied as a delta decision by flow).
    pub(super) fn classes_to_rates(&mut self) {
        let kc = &mut self.classes;
        let path = &self.d.flow_path;
        kc.grow(path.len(), self.w.fabric.num_paths());
        kc.begin();
        for &f in &self.d.finished {
            kc.remove(f, path[f as usize]);
        }
        for &f in &self.rates.crossed {
            if let Some(q) = kc.class_of(f).filter(|&q| q < u8::MAX as usize) {
                kc.assign(f, path[f as usize], q + 1);
            }
        }
        self.rates.crossed.clear();
        for &(f, c) in &self.carried {
            kc.assign(f, path[f as usize], c as usize);
        }
        self.carried.clear();
        if self.decision.class_delta {
            // Per flow: each flow of a renamed class moves.
            if let Err(e) = kc.rename(path, &self.decision.class_renames) {
                self.bad_rename = Some(e);
            }
            let done = &self.result.flow_finish_s;
            for &(f, c) in &self.decision.class_moves {
                // A flow that started and finished since the last call may be
                // named: only active flows are tracked.
                if done[f as usize].is_nan() {
                    kc.assign(f, path[f as usize], c as usize);
                }
            }
            if let Some(&f) = self.newcomers.iter().find(|&&f| kc.class_of(f).is_none()) {
                self.unclassified = Some(f);
            }
        } else {
            for (&f, &c) in self.d.active.iter().zip(&self.decision.classes) {
                kc.assign(f, path[f as usize], c as usize);
            }
        }
        let out = &mut self.decision.flow_rates;
        out.clear();
        kc.solve(&self.w.fabric, path, |f, r| out.push((f, r)));
        // Each flow that joined or changed class takes its class's limit
        // before its new rate is applied.
        let limits = &self.decision.class_limits;
        if !limits.is_empty() || self.rates.has_flow_limits() {
            let now = self.now;
            for &f in self.classes.moved() {
                let q = self.classes.class_of(f).expect("a moved flow is tracked");
                let lim = limits.get(q).copied().unwrap_or(f64::INFINITY);
                self.rates.set_flow_limit(&mut self.d, f, lim, now);
            }
        }
    }

    /// Whether this class decision is served by group, switching forms when
    /// [`ClassForm::Auto`] says so (checked every `CLASS_CHECK_EVERY` class
    /// decisions): by group while the active paths are at least
    /// `GROUPS_ABOVE` times the links they cross, per flow below
    /// `FLOWS_BELOW` times (as `fair`'s `solver=auto`). A decision of another
    /// form with active flows leaves the group form.
    pub(super) fn serve_classes_by_group(&mut self) -> bool {
        if !self.decision.has_classes() {
            return self.class_groups && self.d.active.is_empty();
        }
        if !self.groups_for_classes {
            return false;
        }
        let want = match self.class_form {
            ClassForm::Groups => true,
            ClassForm::Flows => false,
            ClassForm::Auto => {
                let due = self.class_calls.is_multiple_of(CLASS_CHECK_EVERY);
                self.class_calls += 1;
                if due {
                    let ratio = self.paths_per_link();
                    if self.class_groups {
                        ratio >= FLOWS_BELOW
                    } else {
                        ratio >= GROUPS_ABOVE
                    }
                } else {
                    self.class_groups
                }
            }
        };
        if want && !self.class_groups {
            self.enter_class_groups();
        }
        if want {
            self.result.class_group_calls += 1;
        }
        want
    }

    /// Active paths per link they cross (a pass over the active paths).
    fn paths_per_link(&mut self) -> f64 {
        let nl = self.w.fabric.num_links();
        if self.link_mark.len() < nl {
            self.link_mark.resize(nl, 0);
        }
        self.link_stamp = self.link_stamp.wrapping_add(1);
        if self.link_stamp == 0 {
            self.link_mark.iter_mut().for_each(|m| *m = 0);
            self.link_stamp = 1;
        }
        let mut links = 0usize;
        for &p in &self.d.active_paths {
            for &l in self.w.fabric.path(p) {
                let m = &mut self.link_mark[l as usize];
                if *m != self.link_stamp {
                    *m = self.link_stamp;
                    links += 1;
                }
            }
        }
        self.d.active_paths.len() as f64 / links.max(1) as f64
    }

    /// Enters the group form: every moving flow stops (keeping what it sent,
    /// in flow mode at rate 0) and the per-flow classes are forgotten; this
    /// call's class decision then tells every active flow, which joins its
    /// class path's counter.
    fn enter_class_groups(&mut self) {
        let now = self.now;
        self.carried.clear();
        for i in 0..self.d.active.len() {
            let f = self.d.active[i];
            if self.d.rate[f as usize] != 0.0 {
                self.rates.set_rate(&mut self.d, f, 0.0, now);
                self.result.rate_changes += 1;
            }
            // A class delta decision names only what changed: the classes
            // known so far carry over.
            if let Some(q) = self.classes.class_of(f) {
                self.carried.push((f, q as u8));
            }
        }
        self.classes = KeptClasses::new();
        self.class_groups = true;
        self.result.class_form_switches += 1;
        // Coflows' bytes are their flows' (no coflow counters), and each flow
        // on a counter says which.
        self.d.path_mode = true;
        if self.d.flow_ctr.is_empty() {
            self.d.flow_ctr = vec![u32::MAX; self.d.size.len()];
        }
    }

    /// Strict priority across classes, max-min within a class, by group: the
    /// classes are told the flows that finished, started or changed class; the
    /// class paths that changed group and the levels that moved are applied;
    /// the flows that joined or changed class move to their class path's
    /// counter with what they sent.
    pub(super) fn classes_to_groups(&mut self) {
        let now = self.now;
        let fabric = &self.w.fabric;
        let lc = &mut self.level_classes;
        let path = &self.d.flow_path;
        lc.begin();
        // Class paths left with no flows gave their ids back: their counters
        // hold no flow (each left or finished, and was taken off its heaps).
        debug_assert!(lc.released().iter().all(|&c| self.rates.counter_is_idle(c)));
        for &f in &self.d.finished {
            lc.remove(fabric, f, path[f as usize]);
        }
        for &(f, c) in &self.carried {
            lc.assign(fabric, f, path[f as usize], c as usize);
        }
        self.carried.clear();
        // After the carried classes: a flow that crossed in the per-flow form
        // just before this call entered the group form moves down from them.
        Self::demote(lc, fabric, path, &mut self.rates.crossed);
        if self.decision.class_delta {
            // No flow moves: the renamed classes keep their slots' counters.
            if let Err(e) = lc.rename(fabric, &self.decision.class_renames) {
                self.bad_rename = Some(e);
            }
            let done = &self.result.flow_finish_s;
            for &(f, c) in &self.decision.class_moves {
                if done[f as usize].is_nan() {
                    lc.assign(fabric, f, path[f as usize], c as usize);
                }
            }
            if let Some(&f) = self.newcomers.iter().find(|&&f| lc.class_of(f).is_none()) {
                self.unclassified = Some(f);
            }
        } else {
            for (&f, &c) in self.d.active.iter().zip(&self.decision.classes) {
                lc.assign(fabric, f, path[f as usize], c as usize);
            }
        }
        let (groups, levels) = (
            &mut self.decision.path_groups,
            &mut self.decision.group_rates,
        );
        groups.clear();
        levels.clear();
        lc.solve(fabric, groups, levels);
        let (nc, ng) = (lc.num_ids(), lc.num_groups());
        self.rates.grow_paths(&mut self.d, nc);
        for &(c, g) in &self.decision.path_groups {
            self.rates.set_path_group(&mut self.d, c, g, now, ng);
        }
        for &(g, r) in &self.decision.group_rates {
            self.rates.set_group_rate(&mut self.d, g, r, now, ng);
        }
        let mut moved = std::mem::take(&mut self.class_moved);
        moved.clear();
        moved.extend_from_slice(self.level_classes.moved());
        for &f in &moved {
            let fi = f as usize;
            let q = self
                .level_classes
                .class_of(f)
                .expect("a moved flow is tracked");
            let c = self.level_classes.id(q, self.d.flow_path[fi]);
            let lim = self.decision.class_limits.get(q).copied();
            self.rates
                .set_counter_limit(c as usize, lim.unwrap_or(f64::INFINITY));
            if self.d.rate[fi].is_nan() {
                self.rates.leave_counter(&mut self.d, f, now);
            }
            // In flow mode at rate 0: `base` is what it sent.
            debug_assert_eq!(self.d.rate[fi], 0.0);
            let sent = self.d.base[fi];
            self.rates.join_counter(&mut self.d, f, c, sent, now, nc);
        }
        self.result.rate_changes += (self.decision.path_groups.len()
            + self.decision.group_rates.len()
            + moved.len()) as u64;
        self.class_moved = moved;
    }

    /// The flows that crossed their class's limit since the last call
    /// ([`coflowkit_policy::decision::Decision::class_limits`]) move one
    /// class down (a class decision of this call may still name another).
    fn demote(
        lc: &mut LevelClasses,
        fabric: &coflowkit_model::Fabric,
        path: &[PathId],
        crossed: &mut Vec<u32>,
    ) {
        for &f in crossed.iter() {
            if let Some(q) = lc.class_of(f).filter(|&q| q < u8::MAX as usize) {
                lc.assign(fabric, f, path[f as usize], q + 1);
            }
        }
        crossed.clear();
    }

    /// Leaves the group form (a decision of another form, or
    /// [`ClassForm::Auto`]): every flow leaves its counter (at rate 0, keeping
    /// what it sent) and the classes by group (their solutions and counters
    /// stay, with no flows), and the coflows' counters are set from their
    /// flows, as per-flow rates need.
    pub(super) fn leave_class_groups(&mut self) {
        let now = self.now;
        let fabric = &self.w.fabric;
        for &f in &self.d.finished {
            self.level_classes
                .remove(fabric, f, self.d.flow_path[f as usize]);
        }
        let lc = &mut self.level_classes;
        Self::demote(lc, fabric, &self.d.flow_path, &mut self.rates.crossed);
        self.carried.clear();
        let carry = self.decision.has_classes();
        for i in 0..self.d.active.len() {
            let f = self.d.active[i];
            match self.level_classes.class_of(f) {
                Some(q) if carry => self.carried.push((f, q as u8)),
                _ => {}
            }
            self.level_classes
                .remove(fabric, f, self.d.flow_path[f as usize]);
            if self.d.rate[f as usize].is_nan() {
                self.rates.leave_counter(&mut self.d, f, now);
            }
        }
        self.rates.stop_coflow_sums(&mut self.d);
        for k in 0..self.d.width.len() {
            let first = self.d.first_flow[k] as usize;
            let sent: f64 = (first..first + self.d.width[k] as usize)
                .map(|f| self.d.sent_at(f, now))
                .sum();
            self.d.coflow_base[k] = sent;
            self.d.coflow_rate[k] = 0.0;
            self.d.coflow_since[k] = now;
        }
        self.class_groups = false;
        self.d.path_mode = false;
        self.result.class_form_switches += 1;
    }
}
