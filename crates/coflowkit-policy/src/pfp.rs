//! `pfp`: per-flow shortest-remaining-first (pFabric-like). Priority max-min with one
//! group per flow, ordered by remaining bytes rounded to whole bytes, then coflow
//! arrival, coflow id, flow index; with one flow per group this is greedy:
//! `r_f = min_{l ∈ f} c_l` in that order. See docs/policies/pfp.md.

use crate::{ClairvoyantPolicy, ClairvoyantView, Decision};
use coflowkit_alloc::{consume, path_avail};

#[derive(Default)]
pub struct Pfp {
    order: Vec<(u64, u32, u32)>,
    residual: Vec<f64>,
}

impl ClairvoyantPolicy for Pfp {
    fn decide(&mut self, v: &ClairvoyantView, out: &mut Decision) {
        self.order.clear();
        for (i, &f) in v.active.iter().enumerate() {
            let key = v.remaining[f as usize].round().max(0.0) as u64;
            self.order.push((key, f, i as u32));
        }
        self.order.sort_unstable();
        self.residual.clear();
        self.residual.extend_from_slice(&v.fabric.capacities);
        for &(_, f, i) in &self.order {
            let p = v.flow_path[f as usize];
            let r = path_avail(v.fabric, &self.residual, p);
            out.rates[i as usize] = r;
            consume(v.fabric, &mut self.residual, p, r);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::testkit::{close, Case};

    #[test]
    fn smallest_remaining_flow_first_across_coflows() {
        // C = 10. Flows into down1: coflow 0 has 8 B left, coflow 1 has 3 B left.
        // The 3-byte flow goes first and takes down1; the 8-byte flow waits.
        // Coflow 0's second flow 0→2 (5 B) shares up0 with the waiting flow: gets 10.
        let c = Case::new(
            3,
            10.0,
            &[
                (0, 0, 1, 8.0, 0.0),
                (0, 0, 2, 5.0, 0.0),
                (1, 2, 1, 3.0, 0.0),
            ],
        );
        let mut d = Decision::default();
        d.reset(3);
        Pfp::default().decide(&c.clairvoyant(), &mut d);
        close(&d.rates, &[0.0, 10.0, 10.0]);
    }

    #[test]
    fn ties_on_rounded_bytes_fall_back_to_coflow_order() {
        // 5.2 B and 4.9 B both round to 5: coflow 0 goes first.
        let c = Case::new(2, 10.0, &[(0, 0, 1, 5.2, 0.0), (1, 1, 1, 4.9, 0.0)]);
        let mut d = Decision::default();
        d.reset(2);
        Pfp::default().decide(&c.clairvoyant(), &mut d);
        close(&d.rates, &[10.0, 0.0]);
    }
}
