//! `drf`: Dominant Resource Fairness between coflows, from remaining bytes, in the
//! coflow form of HUG and NC-DRF. See docs/policies/drf.md.
//!
//! ```text
//! S_k(l) = remaining bytes of coflow k on link l
//! Γ_k    = max_l S_k(l) / C_l;       d_k(l) = S_k(l) / (C_l Γ_k)
//! P*     = 1 / max_l Σ_k d_k(l)
//! r_f    = P* · rem_f / Γ_k           (k's share of l is a_k(l) = P* d_k(l); all
//!                                      of k's flows finish together)
//! ```
//!
//! Not work-conserving: this is the isolation-optimal reference.

use crate::util::accumulate_links;
use crate::{ClairvoyantPolicy, ClairvoyantView, Decision};

#[derive(Default)]
pub struct Drf {
    load: Vec<f64>,
    touched: Vec<u32>,
    sum: Vec<f64>,
    gamma: Vec<f64>,
}

impl ClairvoyantPolicy for Drf {
    fn decide(&mut self, v: &ClairvoyantView, out: &mut Decision) {
        let fab = v.fabric;
        let caps = &fab.capacities;
        let nl = fab.num_links();
        self.load.clear();
        self.load.resize(nl, 0.0);
        self.sum.clear();
        self.sum.resize(nl, 0.0);
        self.gamma.clear();
        for g in 0..v.groups.len() {
            accumulate_links(v, g, &mut self.load, &mut self.touched, |f| v.remaining[f]);
            let gamma = self
                .touched
                .iter()
                .map(|&l| self.load[l as usize] / caps[l as usize])
                .fold(0.0, f64::max);
            for &l in &self.touched {
                let li = l as usize;
                if gamma > 0.0 {
                    self.sum[li] += self.load[li] / caps[li] / gamma;
                }
                self.load[li] = 0.0;
            }
            self.gamma.push(gamma);
        }
        let busiest = self.sum.iter().copied().fold(0.0, f64::max);
        if busiest <= 0.0 {
            return;
        }
        let p_star = 1.0 / busiest;
        for (gi, g) in v.groups.iter().enumerate() {
            let gamma = self.gamma[gi];
            if gamma <= 0.0 {
                continue;
            }
            for i in g.range() {
                out.rates[i] = p_star * v.remaining[v.active[i] as usize] / gamma;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::testkit::{close, ncdrf_fig3, Case};

    fn rates(c: &Case) -> Vec<f64> {
        let mut d = Decision::default();
        d.reset(c.active.len());
        Drf::default().decide(&c.clairvoyant(), &mut d);
        d.rates
    }

    #[test]
    fn the_two_coflows_of_fig_3_get_fig_4b() {
        // NC-DRF paper, Fig. 3/4b: link-1..4 = up0, up1, down0, down1, capacity 1.
        // d_A = ⟨100, 100, 0, 200⟩ → Γ_A = 200, d = ⟨½, ½, 0, 1⟩; d_B = ⟨0, 200, 100,
        // 100⟩ → ⟨0, 1, ½, ½⟩. Σ = ⟨½, 3/2, ½, 3/2⟩ → P* = 2/3. Every flow has 100
        // left: r = P* · 100 / 200 = 1/3. up1 and down1 are full.
        close(&rates(&ncdrf_fig3()), &[1.0 / 3.0; 4]);
    }

    #[test]
    fn flows_of_a_coflow_get_rates_proportional_to_remaining_bytes() {
        // 3 ports, C = 1. Coflow 0: 0→1 with 4 B left, 0→2 with 2 B: S(up0) = 6,
        // S(down1) = 4, S(down2) = 2, Γ = 6, d = ⟨up0 1, down1 ⅔, down2 ⅓⟩. Coflow 1:
        // 1→1 with 3 B (of 5; 2 sent): Γ = 3, d = ⟨up1 1, down1 1⟩. Σ(down1) = 5/3 is
        // the largest → P* = 3/5. Rates: 0.6·4/6 = 0.4, 0.6·2/6 = 0.2, 0.6·3/3 = 0.6;
        // down1 carries 1.0, and coflow 0's flows both finish in 10 s.
        let c = Case::new(
            3,
            1.0,
            &[
                (0, 0, 1, 4.0, 0.0),
                (0, 0, 2, 2.0, 0.0),
                (1, 1, 1, 5.0, 2.0),
            ],
        );
        close(&rates(&c), &[0.4, 0.2, 0.6]);
    }
}
