//! `ncdrf`: Non-Clairvoyant DRF (Algorithm 1 of the NC-DRF paper): DRF on per-link
//! flow counts instead of bytes, then backfilling. See docs/policies/ncdrf.md.
//!
//! ```text
//! n_k(l)  = active flows of coflow k on link l;   ν_k(l) = n_k(l) / C_l
//! m_k     = max_l ν_k(l);                         ĉ_k(l) = ν_k(l) / m_k
//! P̂*      = 1 / max_l Σ_k ĉ_k(l)
//! r_f     = P̂* / m_k                              every flow of k (equal speed)
//! backfill (repeated `backfill_rounds` times, from the spare u_l left so far):
//!   r_f  += min_{l ∈ f} u_l / N_l                 N_l = Σ_k n_k(l)
//! ```
//!
//! With equal capacities `C`, `ĉ` and `P̂*` are the paper's and `r_f = P̂* C / n̄_k`.

use crate::util::accumulate_links;
use crate::{Decision, NonClairvoyantPolicy, NonClairvoyantView};
use coflowkit_alloc::avail;

pub struct NcDrf {
    backfill_rounds: usize,
    count: Vec<f64>,
    touched: Vec<u32>,
    /// Σ_k ĉ_k(l), then the spare capacity u_l.
    sum: Vec<f64>,
    /// N_l: active flows on link l.
    flows_on: Vec<f64>,
    /// Per group: m_k.
    peak: Vec<f64>,
    extra: Vec<f64>,
}

impl NcDrf {
    pub fn new(backfill_rounds: usize) -> Self {
        NcDrf {
            backfill_rounds,
            count: Vec::new(),
            touched: Vec::new(),
            sum: Vec::new(),
            flows_on: Vec::new(),
            peak: Vec::new(),
            extra: Vec::new(),
        }
    }
}

impl NonClairvoyantPolicy for NcDrf {
    fn decide(&mut self, v: &NonClairvoyantView, out: &mut Decision) {
        let fab = v.fabric;
        let caps = &fab.capacities;
        let nl = fab.num_links();
        self.count.clear();
        self.count.resize(nl, 0.0);
        self.sum.clear();
        self.sum.resize(nl, 0.0);
        self.flows_on.clear();
        self.flows_on.resize(nl, 0.0);
        self.peak.clear();
        // Stage 1: per-coflow flow counts → correlation vectors → Σ_k ĉ_k(l).
        for g in 0..v.groups.len() {
            accumulate_links(v, g, &mut self.count, &mut self.touched, |_| 1.0);
            let m = self
                .touched
                .iter()
                .map(|&l| self.count[l as usize] / caps[l as usize])
                .fold(0.0, f64::max);
            for &l in &self.touched {
                let li = l as usize;
                self.sum[li] += self.count[li] / caps[li] / m;
                self.flows_on[li] += self.count[li];
                self.count[li] = 0.0;
            }
            self.peak.push(m);
        }
        let busiest = self.sum.iter().copied().fold(0.0, f64::max);
        if busiest <= 0.0 {
            return;
        }
        let p_star = 1.0 / busiest;
        // Every flow of k at P̂*/m_k; the spare u_l replaces Σ_k ĉ_k(l) in `sum`.
        self.sum.copy_from_slice(caps);
        for (gi, g) in v.groups.iter().enumerate() {
            let r = p_star / self.peak[gi];
            for i in g.range() {
                out.rates[i] = r;
                for &l in fab.path(v.flow_path[v.active[i] as usize]) {
                    self.sum[l as usize] -= r;
                }
            }
        }
        // Backfilling: each flow gets min over its links of u_l / N_l, all flows
        // computed from the same u, then u is reduced; repeated as asked.
        for _ in 0..self.backfill_rounds {
            self.extra.clear();
            let mut any = false;
            for &f in v.active {
                let mut w = f64::INFINITY;
                for &l in fab.path(v.flow_path[f as usize]) {
                    let li = l as usize;
                    w = w.min(avail(&self.sum, caps, li) / self.flows_on[li]);
                }
                let w = if w.is_finite() { w } else { 0.0 };
                any |= w > 0.0;
                self.extra.push(w);
            }
            if !any {
                break;
            }
            for (i, &f) in v.active.iter().enumerate() {
                let w = self.extra[i];
                if w > 0.0 {
                    out.rates[i] += w;
                    for &l in fab.path(v.flow_path[f as usize]) {
                        let u = &mut self.sum[l as usize];
                        *u = (*u - w).max(0.0);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::testkit::{close, ncdrf_fig3, Case};

    fn rates(c: &Case, rounds: usize) -> Vec<f64> {
        let mut d = Decision::default();
        d.reset(c.active.len());
        NcDrf::new(rounds).decide(&c.non_clairvoyant(), &mut d);
        d.rates
    }

    #[test]
    fn the_two_coflows_of_fig_3_get_the_drf_allocation() {
        // NC-DRF paper, Fig. 3/4: four links of capacity 1 (link-1..4 = up0, up1,
        // down0, down1). A: up0→down1, up1→down1 (counts ⟨1,1,0,2⟩, n̄ = 2,
        // ĉ = ⟨½,½,0,1⟩). B: up1→down0, up1→down1 (⟨0,2,1,1⟩, ĉ = ⟨0,1,½,½⟩).
        // Σ ĉ = ⟨½, 3/2, ½, 3/2⟩ → P̂* = 2/3; every flow gets P̂*/2 = 1/3, as DRF
        // does here (the paper: "the same scheduling behavior as DRF"). up1 and
        // down1 are full (3 × 1/3), and every flow crosses one: nothing to backfill.
        let c = ncdrf_fig3();
        let third = 1.0 / 3.0;
        close(&rates(&c, 1), &[third; 4]);
        close(&rates(&c, 0), &[third; 4]);
    }

    #[test]
    fn backfilling_splits_spare_capacity_by_flow_counts() {
        // 4 ports, C = 1. A: 0→1, 0→2 (up0: 2 flows → n̄ = 2, ĉ(down1) = ĉ(down2) = ½).
        // B: 3→1 (n̄ = 1). Σ ĉ(down1) = ½ + 1 = 3/2 → P̂* = 2/3: A's flows 1/3, B's 2/3.
        // Spare u: up0 1/3, down1 0, down2 2/3, up3 1/3; N: up0 2, down1 2, down2 1.
        // Round 1: 0→1 min(1/6, 0) = 0; 0→2 min(1/6, 2/3) = 1/6; 3→1 0.
        // Round 2: up0 has 1/6 left → 0→2 gets min(1/12, 1/2) = 1/12 more.
        let c = Case::new(
            4,
            1.0,
            &[
                (0, 0, 1, 1.0, 0.0),
                (0, 0, 2, 1.0, 0.0),
                (1, 3, 1, 1.0, 0.0),
            ],
        );
        close(&rates(&c, 0), &[1.0 / 3.0, 1.0 / 3.0, 2.0 / 3.0]);
        close(&rates(&c, 1), &[1.0 / 3.0, 0.5, 2.0 / 3.0]);
        close(&rates(&c, 2), &[1.0 / 3.0, 7.0 / 12.0, 2.0 / 3.0]);
    }

    #[test]
    fn unequal_capacities_keep_every_link_within_capacity() {
        // 2 ports; capacities up0 = 4, up1 = 1, down0 = 1, down1 = 2. One coflow
        // 0→1, 1→1: ν(up0) = 1/4, ν(up1) = 1, ν(down1) = 2/2 = 1 → m = 1, P̂* = 1
        // (Σ ĉ peaks at 1 on up1 and down1): each flow gets 1. down1 carries 2 = C.
        let mut c = Case::new(2, 1.0, &[(0, 0, 1, 1.0, 0.0), (0, 1, 1, 1.0, 0.0)]);
        c.fabric.capacities = vec![4.0, 1.0, 1.0, 2.0];
        close(&rates(&c, 1), &[1.0, 1.0]);
    }
}
