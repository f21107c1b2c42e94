//! The engine's invariant checks (`SimOptions::check`): after every policy call,
//! finite non-negative rates within every link's capacity; at the end, every
//! flow and coflow sent exactly its bytes.

use super::{fail, finish_threshold, Engine, Rates, SimError};

impl Engine<'_> {
    pub(super) fn check_rates(&mut self, policy_name: &str) -> Result<(), SimError> {
        self.result.checks += 1;
        let caps = &self.w.fabric.capacities;
        let mut load = vec![0.0; caps.len()];
        for &f in &self.d.active {
            let r = Rates::rate_of(&self.d, f as usize);
            if !(r.is_finite() && r >= 0.0) {
                return Err(fail(format!(
                    "invariant violated at t={}: {policy_name} gave flow {} the rate {r}",
                    self.now, self.w.flows[f as usize].id
                )));
            }
            for &l in self.w.fabric.path(self.d.flow_path[f as usize]) {
                load[l as usize] += r;
            }
        }
        if self.d.coflow_sums {
            // Coflow sums kept in path mode equal their flows' sums.
            for g in &self.d.groups {
                let k = g.coflow as usize;
                let first = self.d.first_flow[k] as usize;
                let flows = first..first + self.d.width[k] as usize;
                let sent: f64 = flows.clone().map(|f| self.d.sent_at(f, self.now)).sum();
                let rate: f64 = flows.map(|f| Rates::rate_of(&self.d, f)).sum();
                let kept = self.d.coflow_base[k]
                    + self.d.coflow_rate[k] * (self.now - self.d.coflow_since[k]);
                let size = self.w.coflows[k].size_bytes.max(1.0);
                let cap = caps.iter().copied().fold(0.0, f64::max);
                if (kept - sent).abs() > 1e-9 * size
                    || (self.d.coflow_rate[k] - rate).abs() > 1e-9 * cap
                {
                    return Err(fail(format!(
                        "invariant violated at t={}: coflow {} keeps {kept} B at {} B/s, its flows {sent} B at {rate} B/s",
                        self.now, self.w.coflows[k].id, self.d.coflow_rate[k]
                    )));
                }
            }
        }
        for (l, (&x, &c)) in load.iter().zip(caps).enumerate() {
            if x > c * (1.0 + 1e-9) {
                return Err(fail(format!(
                    "invariant violated at t={}: link {} carries {x} B/s over its capacity {c} B/s",
                    self.now,
                    self.w.fabric.link_name(l as u32)
                )));
            }
        }
        Ok(())
    }

    pub(super) fn check_end(&mut self) -> Result<(), SimError> {
        self.result.checks += 1;
        for (f, flow) in self.w.flows.iter().enumerate() {
            let sent = self.d.sent_at(f, self.now);
            if (sent - flow.size_bytes).abs() > finish_threshold(flow.size_bytes) {
                return Err(fail(format!(
                    "invariant violated: flow {} sent {sent} of {} bytes",
                    flow.id, flow.size_bytes
                )));
            }
        }
        let common = self.d.common(&self.w.fabric, self.now);
        for (k, c) in self.w.coflows.iter().enumerate() {
            let sent = common.coflow_sent(k as u32);
            if (sent - c.size_bytes).abs() > 1e-6 * c.size_bytes.max(1.0) {
                return Err(fail(format!(
                    "invariant violated: coflow {} sent {sent} of {} bytes",
                    c.id, c.size_bytes
                )));
            }
        }
        Ok(())
    }
}
