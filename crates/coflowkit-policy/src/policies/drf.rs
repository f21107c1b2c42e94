//! `drf`: Dominant Resource Fairness between coflows, from remaining bytes, in the
//! coflow form of HUG and NC-DRF. See docs/policies/drf.md.
//!
//! ```text
//! S_k(l) = remaining bytes of coflow k on link l
//! Γ_k    = max_l S_k(l) / C_l;       d_k(l) = S_k(l) / (C_l Γ_k)
//! d'_k   = the demand vector k reports (d_k when truthful)
//! P*     = 1 / max_l Σ_k d'_k(l)
//! a_k(l) = P* d'_k(l)                 k's share of link l
//! T_k    = max_{l: S_k(l) > 0} S_k(l) / (a_k(l) C_l)
//! r_f    = rem_f / T_k                all of k's flows finish together
//! ```
//!
//! When k is truthful, `T_k = Γ_k / P*` and `r_f = P* · rem_f / Γ_k`. A coflow that
//! misreports uses its shares only as far as its true demands allow. Not
//! work-conserving: this is the isolation-optimal reference.
//!
//! [`DrfStage`] is the first stage of `hug`, `coflex` and `naive-tradeoff` too.

use crate::support::loads::{LinkIndex, LoadCache};
use crate::decision::Decision;
use crate::policy::ClairvoyantPolicy;
use crate::view::ClairvoyantView;
use coflowkit_model::CAPACITY_EPS;
use crate::policy::Info;
use crate::spec::{clairvoyant, PolicySpec};

/// The DRF allocation of the active coflows, recomputed from remaining bytes.
#[derive(Default)]
pub(crate) struct DrfStage {
    /// Group `g`'s links are `links[start[g]..start[g + 1]]`: `(link, S_k(l))`,
    /// ascending link.
    pub start: Vec<u32>,
    pub links: Vec<(u32, f64)>,
    /// Γ_k per group (true remaining bytes).
    pub gamma: Vec<f64>,
    /// P* (0 when nothing is active).
    pub p_star: f64,
    /// Remaining bytes of each active flow, by position in `v.active` (read once
    /// per call; the later passes use these).
    pub rem: Vec<f64>,
    /// Σ_k d'_k(l) per link.
    sum: Vec<f64>,
    index: LinkIndex,
    /// [`Self::compute_drained`]'s loads, kept across calls.
    cache: LoadCache,
}

impl DrfStage {
    /// Loads (recounted from every active flow, whose remaining bytes `rem`
    /// keeps), Γ, and P* from the reported (or true) demand vectors.
    pub fn compute(&mut self, v: &ClairvoyantView) {
        self.begin(v);
        self.rem.resize(v.active.len(), 0.0);
        self.index.begin(v);
        for g in 0..v.groups.len() {
            let rem = &mut self.rem;
            let from = self.links.len();
            self.index.sums(v, g, &mut self.links, |i| {
                rem[i] = v.remaining(v.active[i]);
                rem[i]
            });
            self.add_group(v, g, from);
        }
        self.end();
    }

    /// [`Self::compute`] with the loads kept across calls and drained at the
    /// rates the policy gave ([`LoadCache::drained`]; it must tell them with
    /// [`Self::drain`]): `O(links)` per coflow
    /// instead of `O(flows)`. `rem` is left empty. Under a driver that applies
    /// the rates given exactly (the engine) only: the cache recounts a coflow
    /// whose bytes sent are not what those rates say.
    pub fn compute_drained(&mut self, v: &ClairvoyantView) {
        self.begin(v);
        self.cache.drain_on();
        self.cache.begin(v);
        for g in 0..v.groups.len() {
            let from = self.links.len();
            self.links.extend_from_slice(self.cache.get(v, g));
            self.add_group(v, g, from);
        }
        self.end();
    }

    /// Drained form: every flow of group `g` was given `rem_f · speed[g]`,
    /// and the flow at each `(g, i)` of `extras` `extra[i]` more.
    pub fn drain(
        &mut self,
        v: &ClairvoyantView,
        speed: &[f64],
        extras: &[(u32, u32)],
        extra: &[f64],
    ) {
        for (g, &x) in speed.iter().enumerate() {
            if x > 0.0 {
                self.cache.all_at(v.groups[g].coflow, 1.0 / x);
            }
        }
        for &(g, i) in extras {
            let p = v.flow_path[v.active[i as usize] as usize];
            let k = v.groups[g as usize].coflow;
            self.cache.add(k, v.fabric.path(p), extra[i as usize]);
        }
    }

    fn begin(&mut self, v: &ClairvoyantView) {
        self.sum.clear();
        self.sum.resize(v.fabric.num_links(), 0.0);
        self.gamma.clear();
        self.links.clear();
        self.start.clear();
        self.start.push(0);
        self.rem.clear();
    }

    /// Γ of group `g`, whose loads are `links[from..]`, and its demand vector
    /// added to Σ.
    fn add_group(&mut self, v: &ClairvoyantView, g: usize, from: usize) {
        let caps = &v.fabric.capacities;
        let mut gamma: f64 = 0.0;
        for &(l, s) in &self.links[from..] {
            gamma = gamma.max(s / caps[l as usize]);
        }
        self.start.push(self.links.len() as u32);
        self.gamma.push(gamma);
        let k = v.groups[g].coflow as usize;
        match v.coflow_report.get(k).filter(|r| !r.is_empty()) {
            Some(rep) => {
                for &(l, x) in rep {
                    self.sum[l as usize] += x;
                }
            }
            None if gamma > 0.0 => {
                for &(l, s) in &self.links[from..] {
                    let li = l as usize;
                    self.sum[li] += s / caps[li] / gamma;
                }
            }
            None => {}
        }
    }

    fn end(&mut self) {
        let busiest = self.sum.iter().copied().fold(0.0, f64::max);
        self.p_star = if busiest > 0.0 { 1.0 / busiest } else { 0.0 };
    }

    pub fn group_links(&self, g: usize) -> &[(u32, f64)] {
        &self.links[self.start[g] as usize..self.start[g + 1] as usize]
    }

    /// The time group `g` needs to finish on the shares `scale · P* · d'_k`
    /// (infinite when it gets nothing).
    pub fn finish_time(&self, v: &ClairvoyantView, g: usize, scale: f64) -> f64 {
        let share = scale * self.p_star;
        let gamma = self.gamma[g];
        if share <= 0.0 || gamma <= 0.0 {
            return f64::INFINITY;
        }
        let k = v.groups[g].coflow as usize;
        match v.coflow_report.get(k).filter(|r| !r.is_empty()) {
            None => gamma / share,
            Some(rep) => {
                let caps = &v.fabric.capacities;
                let mut t: f64 = 0.0;
                for &(l, s) in self.group_links(g) {
                    let d = rep
                        .binary_search_by_key(&l, |e| e.0)
                        .map(|i| rep[i].1)
                        .unwrap_or(0.0);
                    if d <= 0.0 {
                        return f64::INFINITY;
                    }
                    t = t.max(s / (share * d * caps[l as usize]));
                }
                t
            }
        }
    }

    /// Stage 1 of the DRF family for group `g`, on the shares `scale · P* · d'_k`:
    /// takes `S_k(l) / T_k` from `residual` on each of k's links and returns the
    /// speed `1 / T_k` (0 when the group gets nothing): every flow of k is to get
    /// `rem_f / T_k`, so that all of them finish together. When k is truthful,
    /// `1 / T_k = scale · P* / Γ_k`.
    pub fn take(&self, v: &ClairvoyantView, g: usize, scale: f64, residual: &mut [f64]) -> f64 {
        let t = self.finish_time(v, g, scale);
        if !t.is_finite() {
            return 0.0;
        }
        let k = v.groups[g].coflow as usize;
        let truthful = v.coflow_report.get(k).is_none_or(|r| r.is_empty());
        let speed = if truthful {
            scale * self.p_star / self.gamma[g]
        } else {
            1.0 / t
        };
        for &(l, s) in self.group_links(g) {
            let r = &mut residual[l as usize];
            *r = (*r - s * speed).max(0.0);
        }
        speed
    }

    /// [`Self::take`], then every flow of group `g` gets `rem_f · speed`, written
    /// to `rates` (by active position). Returns the speed.
    pub fn serve(
        &self,
        v: &ClairvoyantView,
        g: usize,
        scale: f64,
        rates: &mut [f64],
        residual: &mut [f64],
    ) -> f64 {
        let speed = self.take(v, g, scale, residual);
        if speed > 0.0 {
            for i in v.groups[g].range() {
                rates[i] = self.rem[i] * speed;
            }
        }
        speed
    }

    /// The room group `g` has left under a cap of `cap · C_l` on each of its links
    /// once stage 1 served it at `speed = 1 / T_k` (its rate on `l` is
    /// `S_k(l) · speed`), appended to `out` in the order of [`Self::group_links`].
    /// A room below `1e-9 · C_l` counts as zero, as a residual capacity does.
    pub fn push_cap_room(
        &self,
        v: &ClairvoyantView,
        g: usize,
        cap: f64,
        speed: f64,
        out: &mut Vec<f64>,
    ) {
        let c = &v.fabric.capacities;
        for &(l, s) in self.group_links(g) {
            let cl = c[l as usize];
            let h = cap * cl - s * speed;
            out.push(if h <= CAPACITY_EPS * cl { 0.0 } else { h });
        }
    }
}

/// The DRF family's answer in speed form ([`Decision::by_speed`], under a
/// driver that keeps proportional groups): every flow of group `g` is to get
/// `rem_f · speed[g]`, and the flows listed in `extras` (`(group, active
/// position)`, their extra written in `out.rates`) that plus their extra. Each
/// coflow's speed is listed, those flows get their own rate, and the flows
/// that had their own rate at the last call and have no extra now go back to
/// their groups. The driver then costs one value per coflow, not one per flow.
#[derive(Default)]
pub(crate) struct SpeedAnswer {
    /// Flows given their own rate at the last call; per flow (global index)
    /// the call that last did.
    solo: Vec<u32>,
    stamp: Vec<u32>,
    call: u32,
}

impl SpeedAnswer {
    /// Writes the answer (see above); `out.rates` is left at zero.
    pub fn answer(
        &mut self,
        v: &ClairvoyantView,
        speed: &[f64],
        extras: &[(u32, u32)],
        out: &mut Decision,
    ) {
        out.by_speed = true;
        let rates = &mut out.rates;
        self.call = self.call.wrapping_add(1).max(1);
        if self.stamp.len() < v.flow_coflow.len() {
            self.stamp.resize(v.flow_coflow.len(), 0);
        }
        for (g, &x) in speed.iter().enumerate() {
            out.coflow_speeds.push((v.groups[g].coflow, x));
        }
        for &(g, i) in extras {
            let (g, i) = (g as usize, i as usize);
            let f = v.active[i];
            // As the rate form sums it: the group's rate, then the extra.
            let r = v.remaining(f) * speed[g] + rates[i];
            rates[i] = 0.0;
            out.flow_rates.push((f, r));
            self.stamp[f as usize] = self.call;
        }
        for &f in &self.solo {
            if self.stamp[f as usize] != self.call {
                out.group_joins.push(f);
            }
        }
        self.solo.clear();
        self.solo.extend(out.flow_rates.iter().map(|e| e.0));
    }
}

#[derive(Default)]
pub struct Drf {
    stage: DrfStage,
    residual: Vec<f64>,
    speed: Vec<f64>,
    answer: SpeedAnswer,
}

impl ClairvoyantPolicy for Drf {
    fn decide(&mut self, v: &ClairvoyantView, out: &mut Decision) {
        self.residual.clear();
        self.residual.extend_from_slice(&v.fabric.capacities);
        if out.speeds_ok {
            self.stage.compute_drained(v);
            self.speed.clear();
            for g in 0..v.groups.len() {
                let x = self.stage.take(v, g, 1.0, &mut self.residual);
                self.speed.push(x);
            }
            self.stage.drain(v, &self.speed, &[], &out.rates);
            self.answer.answer(v, &self.speed, &[], out);
            return;
        }
        self.stage.compute(v);
        for g in 0..v.groups.len() {
            self.stage
                .serve(v, g, 1.0, &mut out.rates, &mut self.residual);
        }
    }
}

pub const SPEC: PolicySpec = PolicySpec {
    name: "drf",
    info: Info::Clairvoyant,
    knows: "",
    summary: "DRF between coflows on remaining bytes, flows finish together (not work-conserving)",
    rule: "same progress P* for every coflow on its bottleneck (DRF on remaining bytes); flows of a coflow finish together; not work-conserving",
    paper: "DRF: Ghodsi et al., NSDI'11; coflow form of HUG, NSDI'16",
    params: &[],
    needs: &[],
    build: |_| clairvoyant(Drf::default()),
    example_ccts: [0.10175, 0.03125, 0.0625],
};

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::testkit::{close, ncdrf_fig3, Case};

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

    /// The two coflows of the Coflex paper's Fig. 2, embedded in a 6-port big switch
    /// with C = 1 so that link-1 = up0 and link-2 = down1 are the shared links:
    /// A (coflow 0) sends 1 on 0→2 and ½ on 3→1: d_A = ⟨up0 1, down2 1, up3 ½,
    /// down1 ½⟩ (Γ_A = 1). B (coflow 1) sends 1/6 on 0→4 and 1 on 5→1: d_B = ⟨up0
    /// 1/6, down4 1/6, up5 1, down1 1⟩ (Γ_B = 1). `scale_a` multiplies A's bytes
    /// (its Γ) without changing d_A.
    pub(crate) fn coflex_fig2(scale_a: f64) -> Case {
        Case::new(
            6,
            1.0,
            &[
                (0, 0, 2, scale_a, 0.0),
                (0, 3, 1, 0.5 * scale_a, 0.0),
                (1, 0, 4, 1.0 / 6.0, 0.0),
                (1, 5, 1, 1.0, 0.0),
            ],
        )
    }

    /// Fig. 3: B reports d'_B = ⟨1, 1⟩ on the shared links (and 1 on its own up5
    /// and down4, so the report covers every link it uses).
    pub(crate) fn lying_b(c: &mut Case) {
        c.reports = vec![vec![], vec![(0, 1.0), (5, 1.0), (7, 1.0), (10, 1.0)]];
    }

    #[test]
    fn coflex_fig_2a_drf_stage() {
        // Σ d = up0 7/6, down1 3/2 (the largest), down2 1, up3 ½, down4 1/6, up5 1
        // → P* = 2/3 (the paper's optimal isolation guarantee). A: 2/3 on 0→2 (up0)
        // and 1/3 on 3→1 (down1); B: 1/9 on 0→4 and 2/3 on 5→1. down1 is full.
        close(
            &rates(&coflex_fig2(1.0)),
            &[2.0 / 3.0, 1.0 / 3.0, 1.0 / 9.0, 2.0 / 3.0],
        );
    }

    #[test]
    fn a_lying_coflow_gets_the_shares_of_its_report_but_progresses_at_its_true_demand() {
        // Coflex Fig. 3a: B reports ⟨1, 1⟩. Σ d' = up0 1 + 1 = 2, down1 ½ + 1 = 3/2
        // → P* = ½. A (truthful): ½ on 0→2, ¼ on 3→1. B is given ½ of up0, down4,
        // up5 and down1; its true bytes are 1/6 (up0, down4) and 1 (up5, down1), so
        // T_B = max(1/6 / ½, 1 / ½) = 2: 0→4 at 1/12, 5→1 at ½. Both progress at ½.
        let mut c = coflex_fig2(1.0);
        lying_b(&mut c);
        close(&rates(&c), &[0.5, 0.25, 1.0 / 12.0, 0.5]);
    }
}
