//! `coflex`: the fairness knob of Coflex (Algorithm 2 of the Coflex paper): every
//! coflow first gets `alpha` times its DRF share, then Varys (SEBF order, MADD,
//! backfilling) runs on the capacity left, with no cap. See docs/policies/coflex.md.
//!
//! ```text
//! stage 1: r1_f = rem_f / T_k(α)         shares a_k(l) = α P* d'_k(l)  (see drf)
//! stage 2: coflows by (Γ_k, arrival, id); on the residual c:
//!          MADD   Γ'_k = max_l S_k(l) / c_l,  r_f += rem_f / Γ'_k  (nothing if some c_l = 0)
//!          backfill, same order, flows by index: r_f += min_{l ∈ f} c_l
//! ```
//!
//! `alpha = 0` is `varys`; `alpha = 1` is DRF followed by SEBF. [`Sebf`] is also
//! stage 2 of `naive-tradeoff`, with per-coflow caps.

use crate::policies::drf::{DrfStage, SpeedAnswer};
use crate::support::buckets::Buckets;
use crate::support::cuts::Cuts;
use crate::decision::Decision;
use crate::policy::ClairvoyantPolicy;
use crate::view::ClairvoyantView;
use coflowkit_alloc::{consume, madd_gamma, path_avail};
use crate::policy::{AnyPolicy, Info};
use crate::spec::{clairvoyant, PolicySpec};
use crate::params::{ParamSpec, Params};
use coflowkit_model::ModelError;

/// Stage 2 of the Coflex family: SEBF + MADD + backfilling on a residual, adding to
/// the rates, optionally under per-(coflow, link) caps.
#[derive(Default)]
pub(crate) struct Sebf {
    order: Vec<usize>,
    cuts: Cuts,
    buckets: Buckets,
    /// Speed form: `(group, active position)` of every flow backfilling gave
    /// an extra, in the order given (see [`crate::policies::drf::SpeedAnswer`]).
    pub extras: Vec<(u32, u32)>,
}

impl Sebf {
    /// `caps`, when given, holds the room left under each coflow's cap, one value
    /// per entry of `stage.links` (consumed as rates are handed out). `speed[g]`
    /// is a rate per remaining byte group `g` already has and that `rates` does not
    /// hold yet (stage 1's, or 0); MADD adds `1 / Γ'_k` to it, and every flow then
    /// gets `rem_f · speed[g]` added to its rate, before backfilling. Steps:
    /// SEBF order, MADD per coflow, MADD rates, backfilling per coflow.
    ///
    /// With `by_speed`, the groups' rates are not written: `rates` gets only
    /// the extras, and [`Sebf::extras`] lists who got one.
    #[allow(clippy::too_many_arguments)]
    pub fn run(
        &mut self,
        v: &ClairvoyantView,
        stage: &DrfStage,
        residual: &mut [f64],
        rates: &mut [f64],
        mut caps: Option<&mut [f64]>,
        speed: &mut [f64],
        by_speed: bool,
    ) {
        self.extras.clear();
        self.order.clear();
        self.order.extend(0..v.groups.len());
        self.order.sort_by(|&a, &b| {
            stage.gamma[a]
                .total_cmp(&stage.gamma[b])
                .then(v.groups[a].coflow.cmp(&v.groups[b].coflow))
        });
        for &g in &self.order {
            madd(v, stage, g, residual, caps.as_deref_mut(), speed);
        }
        for (g, &x) in speed.iter().enumerate() {
            if x > 0.0 && !by_speed {
                for i in v.groups[g].range() {
                    rates[i] += stage.rem[i] * x;
                }
            }
        }
        // Backfilling: flows in order take what their path (and cap) allows;
        // a flow behind a saturated first or last link is not visited.
        self.buckets.begin(v);
        for &g in &self.order {
            if self.cuts.blocked(v, g, residual) {
                continue;
            }
            let links = stage.group_links(g);
            let room = caps.as_deref_mut().map(|h| {
                let base = stage.start[g] as usize;
                (&mut h[base..base + links.len()], links)
            });
            let extras = &mut self.extras;
            self.buckets
                .visit_capped(v, g, residual, room, |i, residual, room| {
                    if backfill(v, links, i, residual, rates, room) && by_speed {
                        extras.push((g as u32, i as u32));
                    }
                });
        }
    }
}

/// MADD for group `g` on what it may still take on each of its links (the
/// residual, and its caps when given): adds `1 / Γ'_g` to `speed[g]` and takes
/// `S_g(l) / Γ'_g` from each link (and cap). Each flow gets rem_f / Γ'; on
/// link l that sums to S_k(l) / Γ'.
fn madd(
    v: &ClairvoyantView,
    stage: &DrfStage,
    g: usize,
    residual: &mut [f64],
    caps: Option<&mut [f64]>,
    speed: &mut [f64],
) {
    let links = stage.group_links(g);
    let base = stage.start[g] as usize;
    let caps = caps.map(|h| &mut h[base..base + links.len()]);
    if let Some(gamma) = madd_gamma(v.fabric, residual, links, caps) {
        speed[g] += 1.0 / gamma;
    }
}

/// Backfilling of flow `i` (active position) of a group with links `entries`:
/// it takes what its path (and the group's caps, one per entry, when given)
/// still allows. Returns whether it took something.
fn backfill(
    v: &ClairvoyantView,
    entries: &[(u32, f64)],
    i: usize,
    residual: &mut [f64],
    rates: &mut [f64],
    caps: Option<&mut [f64]>,
) -> bool {
    let fab = v.fabric;
    let p = v.flow_path[v.active[i] as usize];
    let mut extra = path_avail(fab, residual, p);
    if extra <= 0.0 {
        return false;
    }
    if let Some(h) = caps.as_deref() {
        for &l in fab.path(p) {
            extra = extra.min(h[entry(entries, l)]);
        }
    }
    if extra > 0.0 {
        rates[i] += extra;
        consume(fab, residual, p, extra);
        if let Some(h) = caps {
            for &l in fab.path(p) {
                let x = &mut h[entry(entries, l)];
                *x = (*x - extra).max(0.0);
            }
        }
        return true;
    }
    false
}

/// Position of link `l` among a group's `(link, bytes)` entries.
pub(crate) fn entry(entries: &[(u32, f64)], l: u32) -> usize {
    entries
        .binary_search_by_key(&l, |e| e.0)
        .expect("a flow's link is one of its coflow's links")
}

pub struct Coflex {
    alpha: f64,
    stage: DrfStage,
    sebf: Sebf,
    residual: Vec<f64>,
    /// Per group: rate per remaining byte (stage 1, then MADD).
    speed: Vec<f64>,
    answer: SpeedAnswer,
}

impl Coflex {
    pub fn new(alpha: f64) -> Self {
        Coflex {
            alpha,
            stage: DrfStage::default(),
            sebf: Sebf::default(),
            residual: Vec::new(),
            speed: Vec::new(),
            answer: SpeedAnswer::default(),
        }
    }
}

impl ClairvoyantPolicy for Coflex {
    fn decide(&mut self, v: &ClairvoyantView, out: &mut Decision) {
        if out.speeds_ok {
            self.stage.compute_drained(v);
        } else {
            self.stage.compute(v);
        }
        self.residual.clear();
        self.residual.extend_from_slice(&v.fabric.capacities);
        self.speed.clear();
        self.speed.resize(v.groups.len(), 0.0);
        if self.alpha > 0.0 {
            for g in 0..v.groups.len() {
                self.speed[g] = self.stage.take(v, g, self.alpha, &mut self.residual);
            }
        }
        let by_speed = out.speeds_ok;
        self.sebf.run(
            v,
            &self.stage,
            &mut self.residual,
            &mut out.rates,
            None,
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

pub const PARAMS: &[ParamSpec] = &[ParamSpec {
    name: "alpha",
    default: "0.5",
    help: "fairness knob in [0, 1]: the fraction of its DRF share every coflow is guaranteed",
}];

fn build(p: &Params) -> Result<AnyPolicy, ModelError> {
    clairvoyant(Coflex::new(p.f64_in("alpha", 0.0, 1.0)?))
}

pub const SPEC: PolicySpec = PolicySpec {
    name: "coflex",
    info: Info::Clairvoyant,
    knows: "",
    summary: "alpha x DRF shares, then Varys on the spare, no cap (Coflex)",
    rule: "alpha × drf shares, then varys on the spare, no cap",
    paper: "Coflex: Algorithm 2 of ../shared/papers/003_90a1b6450103ec5e.txt",
    params: PARAMS,
    needs: &[],
    build,
    example_ccts: [0.10575, 2.0 / 96.0, 4.0 / 96.0],
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policies::drf::tests::{coflex_fig2, lying_b};
    use crate::testkit::{close, Case};
    use crate::policies::varys::Varys;

    fn rates(c: &Case, alpha: f64) -> Vec<f64> {
        let mut d = Decision::default();
        d.reset(c.active.len());
        Coflex::new(alpha).decide(&c.clairvoyant(), &mut d);
        d.rates
    }

    #[test]
    fn alpha_one_is_drf_then_sebf() {
        // Stage 1 = DRF (see drf): A 2/3, 1/3; B 1/9, 2/3. Spare: up0 2/9,
        // down2 1/3, up3 2/3, down4 8/9, up5 1/3; down1 full. Γ_A = Γ_B = 1: A first
        // (arrival, id). MADD: both cross the full down1 → nothing. Backfill: A's
        // 0→2 takes min(up0 2/9, down2 1/3) = 2/9 → 8/9; the rest is blocked (up0 or
        // down1 full). No cap, unlike HUG, where B took the 2/9.
        close(
            &rates(&coflex_fig2(1.0), 1.0),
            &[8.0 / 9.0, 1.0 / 3.0, 1.0 / 9.0, 2.0 / 3.0],
        );
    }

    #[test]
    fn alpha_half_guarantees_half_the_drf_progress_and_serves_sebf_first() {
        // Stage 1 = ½ DRF: A 1/3, 1/6; B 1/18, 1/3. Spare: up0 11/18, down2 2/3,
        // up3 5/6, down1 ½, down4 17/18, up5 2/3. A first: MADD Γ' = max(1/(11/18),
        // 1/(2/3), ½/(5/6), ½/½) = 18/11 → +11/18 on 0→2, +11/36 on 3→1; up0 is
        // full. B: blocked at up0. Backfill: A's 3→1 takes min(up3 19/36, down1
        // 7/36) = 7/36 → 2/3. B keeps its ½ DRF share: progress 1/3 = α P*.
        close(
            &rates(&coflex_fig2(1.0), 0.5),
            &[17.0 / 18.0, 2.0 / 3.0, 1.0 / 18.0, 1.0 / 3.0],
        );
    }

    #[test]
    fn coflex_fig_3_a_lie_pays_off_without_a_cap() {
        // A's bytes doubled (Γ_A = 2 > Γ_B = 1, so B comes first in SEBF; d_A is
        // unchanged). B reports ⟨1, 1⟩: stage 1 as in drf's test, P* = ½: A ½, ¼;
        // B 1/12, ½. Spare: up0 5/12, down2 ½, up3 ¾, down1 ¼, down4 11/12, up5 ½.
        // B's MADD: Γ' = max(1/6 / 5/12, 1/6 / 11/12, 1/½, 1/¼) = 4 → +1/24 on 0→4,
        // +¼ on 5→1 (down1 full). A blocked by down1. Backfill: B's 0→4 takes the
        // 3/8 of up0 left → ½. B's true progress: ¾ (5→1 at ¾ of its 1 B);
        // A's: ½. The paper's Fig. 3b: B ¾, isolation guarantee ½.
        let mut c = coflex_fig2(2.0);
        lying_b(&mut c);
        close(&rates(&c, 1.0), &[0.5, 0.25, 0.5, 0.75]);
    }

    #[test]
    fn alpha_zero_is_varys() {
        let c = Case::new(
            4,
            10.0,
            &[
                (0, 0, 1, 40.0, 0.0),
                (0, 2, 1, 10.0, 5.0),
                (1, 1, 1, 10.0, 0.0),
                (1, 2, 3, 5.0, 0.0),
                (2, 3, 2, 7.0, 0.0),
            ],
        );
        let mut d = Decision::default();
        d.reset(c.active.len());
        Varys::new(false).decide(&c.clairvoyant(), &mut d);
        close(&rates(&c, 0.0), &d.rates);
    }
}
