//! `naive-tradeoff`: Algorithm 1 of the Coflex paper (NaiveTradeoff(α)): `alpha`
//! times the DRF shares, then SEBF on the spare capacity with every coflow capped
//! at `α P*` of each link. Strategy-proof, and wasteful: the paper's Theorem 2 shows
//! its utilization can be arbitrarily low. See docs/policies/naive-tradeoff.md.
//!
//! ```text
//! stage 1: r1_f = rem_f / T_k(α)                 (see drf; shares α P* d'_k(l))
//! cap:     h_k(l) = α P* C_l − Σ_{f ∈ k, f ∋ l} r1_f
//! stage 2: coflex's stage 2 (SEBF order, MADD, backfilling) on min(c_l, h_k(l))
//! ```

use crate::policies::coflex::Sebf;
use crate::policies::drf::{DrfStage, SpeedAnswer};
use crate::decision::Decision;
use crate::policy::ClairvoyantPolicy;
use crate::view::ClairvoyantView;
use crate::policy::{AnyPolicy, Info};
use crate::spec::{clairvoyant, PolicySpec};
use crate::params::Params;
use coflowkit_model::ModelError;

pub struct NaiveTradeoff {
    alpha: f64,
    stage: DrfStage,
    sebf: Sebf,
    residual: Vec<f64>,
    room: Vec<f64>,
    /// Per group, for [`Sebf::run`]: stage 1's speed `1 / T_k(α)`.
    speed: Vec<f64>,
    answer: SpeedAnswer,
}

impl NaiveTradeoff {
    pub fn new(alpha: f64) -> Self {
        NaiveTradeoff {
            alpha,
            stage: DrfStage::default(),
            sebf: Sebf::default(),
            residual: Vec::new(),
            room: Vec::new(),
            speed: Vec::new(),
            answer: SpeedAnswer::default(),
        }
    }
}

impl ClairvoyantPolicy for NaiveTradeoff {
    fn decide(&mut self, v: &ClairvoyantView, out: &mut Decision) {
        let c = &v.fabric.capacities;
        if out.speeds_ok {
            self.stage.compute_drained(v);
        } else {
            self.stage.compute(v);
        }
        self.residual.clear();
        self.residual.extend_from_slice(c);
        let cap = self.alpha * self.stage.p_star;
        self.room.clear();
        self.speed.clear();
        self.speed.resize(v.groups.len(), 0.0);
        for g in 0..v.groups.len() {
            let speed = self.stage.take(v, g, self.alpha, &mut self.residual);
            self.stage.push_cap_room(v, g, cap, speed, &mut self.room);
            self.speed[g] = speed;
        }
        // Each flow gets `rem_f` times stage 1's speed plus MADD's.
        let by_speed = out.speeds_ok;
        self.sebf.run(
            v,
            &self.stage,
            &mut self.residual,
            &mut out.rates,
            Some(&mut self.room),
            &mut self.speed,
            by_speed,
        );
        if by_speed {
            let extras = &self.sebf.extras;
            self.stage.drain(v, &self.speed, extras, &out.rates);
            self.answer.answer(v, &self.speed, extras, out);
        }
    }
}

fn build(p: &Params) -> Result<AnyPolicy, ModelError> {
    let alpha = p.f64_in("alpha", 0.0, 1.0)?;
    if alpha == 0.0 {
        return Err(ModelError::param(
            "param",
            "naive-tradeoff: alpha=0 caps every coflow at 0: nothing would ever be sent; use alpha in (0, 1]",
        ));
    }
    clairvoyant(NaiveTradeoff::new(alpha))
}

pub const SPEC: PolicySpec = PolicySpec {
    name: "naive-tradeoff",
    info: Info::Clairvoyant,
    knows: "",
    summary: "alpha x DRF shares, then SEBF capped at alpha P* (Coflex Algorithm 1)",
    rule: "alpha × drf shares, then SEBF capped at alpha·P* per coflow and link",
    paper: "Coflex: Algorithm 1 of ../shared/papers/003_90a1b6450103ec5e.txt",
    params: crate::policies::coflex::PARAMS,
    needs: &[],
    build,
    example_ccts: [0.1955, 0.0625, 0.125],
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policies::drf::tests::coflex_fig2;
    use crate::testkit::{close, Case};

    fn rates(c: &Case, alpha: f64) -> Vec<f64> {
        let mut d = Decision::default();
        d.reset(c.active.len());
        NaiveTradeoff::new(alpha).decide(&c.clairvoyant(), &mut d);
        d.rates
    }

    #[test]
    fn alpha_one_caps_like_hug() {
        // Stage 1 = DRF: A 2/3, 1/3; B 1/9, 2/3; cap P* = 2/3. Every coflow is at
        // its cap on its bottleneck (A: up0 and down2, d = 1; B: up5 and down1), so
        // MADD serves nobody. Backfill: A's 0→2 has no room under its cap; B's 0→4
        // takes the 2/9 of up0 left (room 2/3 − 1/9 on up0 and down4) → 1/3.
        close(
            &rates(&coflex_fig2(1.0), 1.0),
            &[2.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0, 2.0 / 3.0],
        );
    }

    #[test]
    fn alpha_half_keeps_every_coflow_at_alpha_p_star() {
        // Stage 1 = ½ DRF: A 1/3, 1/6; B 1/18, 1/3; cap α P* = 1/3. Room: A up0 0,
        // down2 0, up3 1/6, down1 1/6; B up0 5/18, down4 5/18, up5 0, down1 0.
        // MADD: nobody (room 0 on each coflow's bottleneck). Backfill: A's 3→1
        // takes 1/6 (its caps on up3 and down1) → 1/3; B's 0→4 takes 5/18 → 1/3.
        // Both coflows progress at exactly α P* = 1/3 (Theorem 1); links are idle
        // that Coflex would have used (its A gets 17/18 on 0→2).
        close(&rates(&coflex_fig2(1.0), 0.5), &[1.0 / 3.0; 4]);
    }
}
