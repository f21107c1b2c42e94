//! `hug`: High Utilization with Guarantees (Chowdhury et al., NSDI'16) between
//! coflows: DRF, then the spare capacity max-min fairly at flow level under the cap
//! that no coflow gets more than P* of any link. See docs/policies/hug.md.
//!
//! ```text
//! stage 1: the `drf` rates (shares a_k(l) = P* d'_k(l)), residual u_l
//! stage 2: x = max-min over the active flows, subject to
//!            Σ_{f ∋ l} x_f ≤ u_l                              every link l
//!            Σ_{f ∈ k, f ∋ l} x_f ≤ P* C_l − Σ_{f ∈ k, f ∋ l} r1_f   every coflow k, link l
//!          r_f = r1_f + x_f
//! ```
//!
//! The cap keeps HUG strategy-proof (Coflex paper, Sec. II-C). A cap below
//! `1e-9 · C_l` counts as zero, as a residual capacity does.

use crate::policies::drf::DrfStage;
use crate::decision::Decision;
use crate::policy::ClairvoyantPolicy;
use crate::view::ClairvoyantView;
use coflowkit_alloc::{avail, Filling};
use crate::policy::Info;
use crate::spec::{clairvoyant, PolicySpec};

#[derive(Default)]
pub struct Hug {
    stage: DrfStage,
    residual: Vec<f64>,
    /// Constraints: links `0..L`, then one per (group, link) entry of `stage`.
    caps: Vec<f64>,
    start: Vec<u32>,
    cons: Vec<u32>,
    extra: Vec<f64>,
    /// Active positions of the items.
    items: Vec<u32>,
    /// Link → constraint id of the current group's cap on it.
    entry_of: Vec<u32>,
    filling: Filling,
}

impl ClairvoyantPolicy for Hug {
    fn decide(&mut self, v: &ClairvoyantView, out: &mut Decision) {
        let fab = v.fabric;
        let c = &fab.capacities;
        let nl = fab.num_links();
        self.stage.compute(v);
        self.residual.clear();
        self.residual.extend_from_slice(c);
        let p_star = self.stage.p_star;
        if p_star <= 0.0 {
            return;
        }
        self.caps.clear();
        self.caps.resize(nl, 0.0);
        for g in 0..v.groups.len() {
            let speed = self
                .stage
                .serve(v, g, 1.0, &mut out.rates, &mut self.residual);
            // k's stage-1 rate on l is S_k(l) / T_k; its cap leaves P* C_l − that.
            self.stage
                .push_cap_room(v, g, p_star, speed, &mut self.caps);
        }
        for l in 0..nl {
            self.caps[l] = avail(&self.residual, c, l);
        }
        // One item per active flow that can still grow (every link and cap on its
        // path open): its links and its coflow's caps on them.
        self.entry_of.resize(nl, u32::MAX);
        self.start.clear();
        self.cons.clear();
        self.items.clear();
        self.start.push(0);
        for g in 0..v.groups.len() {
            let base = self.stage.start[g];
            for (j, &(l, _)) in self.stage.group_links(g).iter().enumerate() {
                self.entry_of[l as usize] = nl as u32 + base + j as u32;
            }
            'flows: for i in v.groups[g].range() {
                let path = fab.path(v.flow_path[v.active[i] as usize]);
                for &l in path {
                    let e = self.entry_of[l as usize];
                    if self.caps[l as usize] <= 0.0 || self.caps[e as usize] <= 0.0 {
                        continue 'flows;
                    }
                }
                for &l in path {
                    self.cons.push(l);
                    self.cons.push(self.entry_of[l as usize]);
                }
                self.start.push(self.cons.len() as u32);
                self.items.push(i as u32);
            }
            for &(l, _) in self.stage.group_links(g) {
                self.entry_of[l as usize] = u32::MAX;
            }
        }
        self.extra.clear();
        self.extra.resize(self.items.len(), 0.0);
        self.filling
            .solve(&mut self.caps, &self.start, &self.cons, &mut self.extra);
        for (&i, x) in self.items.iter().zip(&self.extra) {
            out.rates[i as usize] += x;
        }
    }
}

pub const SPEC: PolicySpec = PolicySpec {
    name: "hug",
    info: Info::Clairvoyant,
    knows: "",
    summary: "DRF, then spare max-min per flow under the cap P* per coflow and link (HUG)",
    rule: "drf, then the spare max-min fair among flows, no coflow above P* of any link",
    paper: "HUG: Chowdhury et al., NSDI'16",
    params: &[],
    needs: &[],
    build: |_| clairvoyant(Hug::default()),
    example_ccts: [0.10175, 0.03125, 0.0625],
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policies::drf::tests::coflex_fig2;
    use crate::testkit::{close, ncdrf_fig3, Case};

    fn rates(c: &Case) -> Vec<f64> {
        let mut d = Decision::default();
        d.reset(c.active.len());
        Hug::default().decide(&c.clairvoyant(), &mut d);
        d.rates
    }

    #[test]
    fn coflex_fig_2b_the_spare_goes_to_the_coflow_under_its_cap() {
        // Stage 1 (see drf): A 2/3 on 0→2, 1/3 on 3→1; B 1/9 on 0→4, 2/3 on 5→1;
        // P* = 2/3. Spare: up0 2/9, down2 1/3, up3 2/3, down4 8/9, up5 1/3; down1 is
        // full. A already has 2/3 = P* of up0 and of down2, so its flow 0→2 is at
        // its cap; 3→1 and 5→1 cross the full down1. B has 1/9 of up0 and of down4
        // (cap room 5/9): 0→4 takes all 2/9 of up0 → 1/3.
        // (The paper's text gives the spare of link-1 to A; with the vectors it
        // states, d_A = ⟨1, ½⟩, A is the one at its cap on link-1.)
        close(
            &rates(&coflex_fig2(1.0)),
            &[2.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0, 2.0 / 3.0],
        );
    }

    #[test]
    fn ncdrf_fig_3_is_already_full_after_drf() {
        // DRF gives every flow 1/3; up1 and down1 are full and every flow crosses
        // one of them: stage 2 has nothing to hand out.
        close(&rates(&ncdrf_fig3()), &[1.0 / 3.0; 4]);
    }

    #[test]
    fn caps_bind_per_coflow_and_link_in_the_filling() {
        // 8 ports, C = 1.
        // A (coflow 0): 0→1 2 B, 0→2 1 B, 3→2 1 B: S = up0 3, up3 1, down1 2,
        //   down2 2; Γ = 3; d = ⟨up0 1, up3 1/3, down1 2/3, down2 2/3⟩.
        // B (coflow 1): 0→5 1 B: d = ⟨up0 1, down5 1⟩.
        // C (coflow 2): 3→4 1 B, 6→7 3 B: Γ = 3; d = ⟨up3 1/3, down4 1/3, up6 1,
        //   down7 1⟩.
        // Σ d(up0) = 2 is the largest → P* = ½. Stage 1 (rem · P*/Γ): A 1/3, 1/6,
        // 1/6; B ½; C 1/6, ½. Spare: up0 0, up3 2/3, down2 5/6, down4 5/6.
        // Cap room (½ − stage-1 rate of the coflow on the link): A up3 1/3, A down2
        // ½ − 1/3 = 1/6; C up3 1/3, C down4 1/3; 0 on every coflow's bottleneck.
        // Filling over the two flows that can grow, 3→2 (A) and 3→4 (C), which
        // share up3 (share 1/3): A's down2 cap (1/6) binds first → 3→2 gets 1/6;
        // then C's caps (1/3) bind before up3 (½ left for one flow) → 3→4 gets 1/3.
        let c = Case::new(
            8,
            1.0,
            &[
                (0, 0, 1, 2.0, 0.0),
                (0, 0, 2, 1.0, 0.0),
                (0, 3, 2, 1.0, 0.0),
                (1, 0, 5, 1.0, 0.0),
                (2, 3, 4, 1.0, 0.0),
                (2, 6, 7, 3.0, 0.0),
            ],
        );
        close(
            &rates(&c),
            &[1.0 / 3.0, 1.0 / 6.0, 1.0 / 3.0, 0.5, 0.5, 0.5],
        );
    }
}
