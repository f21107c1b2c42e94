//! Speed decisions ([`coflowkit_policy::Decision::by_speed`]) applied to the
//! engine's proportional groups (`crate::rates`, module `prop`).

use super::{changed, finish_threshold, Engine};

impl Engine<'_> {
    /// A speed decision ([`Decision::by_speed`]): flows given their own rate
    /// leave their groups, the listed flows and the new ones join theirs, then
    /// the groups take their speeds.
    pub(super) fn apply_by_speed(&mut self) {
        let now = self.now;
        let call = self.result.policy_calls;
        self.choose_flow_mode(self.decision.flow_rates.len());
        for &(f, r) in &self.decision.flow_rates {
            let fu = f as usize;
            debug_assert!(
                self.result.flow_finish_s[fu].is_nan() && !self.result.flow_start_s[fu].is_nan(),
                "flow {f} is not active"
            );
            self.mark[fu] = call;
            if self.rates.in_group(f) {
                self.rates.prop_leave(&mut self.d, f, now);
            }
            if changed(self.d.rate[fu], r) {
                self.rates.set_rate(&mut self.d, f, r, now);
                self.result.rate_changes += 1;
            }
        }
        for &f in &self.decision.group_joins {
            // A flow that finished since it was given its own rate stays out.
            if !self.rates.in_group(f) && self.result.flow_finish_s[f as usize].is_nan() {
                self.rates.prop_join(&mut self.d, f, now);
                self.result.rate_changes += 1;
            }
        }
        for j in 0..self.d.started.len() {
            let f = self.d.started[j];
            let fu = f as usize;
            // A flow already done, one the decision gave a rate, and one
            // within the finish tolerance from its start (below) stay out.
            if self.mark[fu] == call
                || !self.result.flow_finish_s[fu].is_nan()
                || self.rates.in_group(f)
                || self.d.size[fu] <= finish_threshold(self.d.size[fu])
            {
                continue;
            }
            self.rates.prop_join(&mut self.d, f, now);
        }
        for &(k, x) in &self.decision.coflow_speeds {
            if self.rates.prop_speed(&mut self.d, k as usize, x, now) {
                self.result.rate_changes += 1;
            }
        }
        self.due_tiny_newcomers();
        self.decision.all_zero = true;
    }
}
