//! `varys`: Smallest-Effective-Bottleneck-First with MADD and backfilling
//! (Chowdhury, Zhong, Stoica, SIGCOMM'14). See docs/policies/varys.md.
//!
//! ```text
//! Γ_k  = max_l R_k(l) / C_l          R_k(l): k's remaining bytes on link l
//! order coflows by (Γ_k, arrival, id)
//! MADD, in order, on the residual c: Γ'_k = max_l R_k(l) / c_l;  r_f = rem_f / Γ'_k
//!       (nothing for k if some c_l = 0 on its links)
//! backfill, same order, flows by index: r_f += min_{l ∈ f} c_l
//! ```
//!
//! `ordering=dynamic` (default) recomputes Γ from remaining bytes at every event;
//! `ordering=static` is CoflowSim's choice: Γ from the coflow's full sizes, once.

use crate::policies::drf::SpeedAnswer;
use crate::support::buckets::Buckets;
use crate::support::cuts::Cuts;
use crate::support::loads::LoadCache;
use crate::decision::Decision;
use crate::policy::ClairvoyantPolicy;
use crate::view::ClairvoyantView;
use coflowkit_alloc::{consume, madd_gamma, path_avail};
use coflowkit_model::PathId;
use crate::policy::{AnyPolicy, Info};
use crate::spec::{clairvoyant, PolicySpec};
use crate::params::{ParamSpec, Params};
use coflowkit_model::ModelError;

pub struct Varys {
    static_order: bool,
    gamma_static: Vec<f64>,
    load: Vec<f64>,
    touched: Vec<u32>,
    order: Vec<(f64, u32, usize)>,
    residual: Vec<f64>,
    cuts: Cuts,
    buckets: Buckets,
    cache: LoadCache,
    /// Speed form (under the engine): per group `1 / Γ'` (0 when MADD gave it
    /// nothing), the backfilled flows, and the answer.
    speed: Vec<f64>,
    extras: Vec<(u32, u32)>,
    answer: SpeedAnswer,
}

impl Varys {
    pub fn new(static_order: bool) -> Self {
        Varys {
            static_order,
            gamma_static: Vec::new(),
            load: Vec::new(),
            touched: Vec::new(),
            order: Vec::new(),
            residual: Vec::new(),
            cuts: Cuts::default(),
            buckets: Buckets::default(),
            cache: LoadCache::default(),
            speed: Vec::new(),
            extras: Vec::new(),
            answer: SpeedAnswer::default(),
        }
    }
}

/// `Γ = max_l Σ bytes(f) / C_l` over the given (path, bytes) pairs; `load` is a
/// per-link scratch array left all-zero on return.
fn gamma(
    load: &mut Vec<f64>,
    touched: &mut Vec<u32>,
    v: &ClairvoyantView,
    flows: impl Iterator<Item = (PathId, f64)>,
) -> f64 {
    if load.len() < v.fabric.num_links() {
        load.resize(v.fabric.num_links(), 0.0);
    }
    touched.clear();
    for (p, b) in flows {
        for &l in v.fabric.path(p) {
            if load[l as usize] == 0.0 {
                touched.push(l);
            }
            load[l as usize] += b;
        }
    }
    let mut g: f64 = 0.0;
    for &l in touched.iter() {
        g = g.max(load[l as usize] / v.fabric.capacities[l as usize]);
        load[l as usize] = 0.0;
    }
    g
}

impl Varys {
    /// Γ of group `gi`'s coflow: at its arrival (static order, computed once), or
    /// `max_l R_k(l) / C_l` on its remaining bytes (same sums, in the same order,
    /// as a recount).
    fn gamma_of(&mut self, v: &ClairvoyantView, gi: usize) -> f64 {
        let k = v.groups[gi].coflow as usize;
        if !self.static_order {
            return self
                .cache
                .get(v, gi)
                .iter()
                .map(|&(l, b)| b / v.fabric.capacities[l as usize])
                .fold(0.0, f64::max);
        }
        if self.gamma_static.len() <= k {
            self.gamma_static.resize(v.coflow_width.len(), f64::NAN);
        }
        if self.gamma_static[k].is_nan() {
            let first = v.coflow_first_flow[k] as usize;
            let n = v.coflow_width[k] as usize;
            let flows = (first..first + n).map(|f| (v.flow_path[f], v.size[f]));
            self.gamma_static[k] = gamma(&mut self.load, &mut self.touched, v, flows);
        }
        self.gamma_static[k]
    }

    /// MADD for group `gi` on the residual: every flow gets `rem_f / Γ'`, with
    /// `Γ'` and the residual's share taken per link from the cached loads
    /// (nothing for a coflow with a saturated link, without visiting its flows).
    fn madd_group(&mut self, v: &ClairvoyantView, gi: usize, out: &mut Decision) {
        let loads = self.cache.get(v, gi);
        let Some(gamma) = madd_gamma(v.fabric, &mut self.residual, loads, None) else {
            return;
        };
        self.cache.all_at(v.groups[gi].coflow, gamma);
        if out.speeds_ok {
            self.speed[gi] = 1.0 / gamma;
            return;
        }
        for i in v.groups[gi].range() {
            let rem = v.remaining(v.active[i]);
            out.rates[i] = rem / gamma;
            out.touch(i);
        }
    }

    /// Backfilling for group `gi`: its flows in order take what their path
    /// leaves (a flow behind a saturated first or last link is not visited).
    fn backfill_group(&mut self, v: &ClairvoyantView, gi: usize, out: &mut Decision) {
        if self.cuts.blocked(v, gi, &self.residual) {
            return;
        }
        let coflow = v.groups[gi].coflow;
        let cache = &mut self.cache;
        let extras = &mut self.extras;
        self.buckets.visit(v, gi, &mut self.residual, |i, residual| {
            let p = v.flow_path[v.active[i] as usize];
            let extra = path_avail(v.fabric, residual, p);
            if extra > 0.0 {
                out.rates[i] += extra;
                if out.speeds_ok {
                    extras.push((gi as u32, i as u32));
                } else {
                    out.touch(i);
                }
                consume(v.fabric, residual, p, extra);
                cache.add(coflow, v.fabric.path(p), extra);
            }
        });
    }
}

impl ClairvoyantPolicy for Varys {
    /// SEBF order by Γ, then MADD per coflow, then backfilling per coflow.
    fn decide(&mut self, v: &ClairvoyantView, out: &mut Decision) {
        out.sparse = true;
        // Drained loads under the engine only (a driver that takes delta
        // decisions applies the rates given exactly); elsewhere recounted, so
        // that a decision depends on the view alone, bit for bit.
        if out.delta_ok {
            self.cache.drain_on();
        }
        self.cache.begin(v);
        self.order.clear();
        for (gi, g) in v.groups.iter().enumerate() {
            let gamma = self.gamma_of(v, gi);
            self.order.push((gamma, g.coflow, gi));
        }
        self.order
            .sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        self.residual.clear();
        self.residual.extend_from_slice(&v.fabric.capacities);
        self.speed.clear();
        self.speed.resize(v.groups.len(), 0.0);
        self.extras.clear();
        for j in 0..self.order.len() {
            self.madd_group(v, self.order[j].2, out);
        }
        self.buckets.begin(v);
        for j in 0..self.order.len() {
            self.backfill_group(v, self.order[j].2, out);
        }
        if out.speeds_ok {
            out.sparse = false;
            self.answer.answer(v, &self.speed, &self.extras, out);
        }
    }
}

pub const PARAMS: &[ParamSpec] = &[ParamSpec {
    name: "ordering",
    default: "dynamic",
    help: "dynamic: Γ from remaining bytes at every event; static: from full sizes at arrival (CoflowSim)",
}];

fn build(p: &Params) -> Result<AnyPolicy, ModelError> {
    clairvoyant(Varys::new(
        p.choice("ordering", &["dynamic", "static"])? == "static",
    ))
}

pub const SPEC: PolicySpec = PolicySpec {
    name: "varys",
    info: Info::Clairvoyant,
    knows: "",
    summary: "SEBF order + MADD rates + backfilling (Varys)",
    rule: "SEBF order by effective bottleneck Γ, MADD rates, then backfilling",
    paper: "Varys: Chowdhury, Zhong, Stoica, SIGCOMM'14",
    params: PARAMS,
    needs: &[],
    build,
    example_ccts: [0.109375, 0.015625, 0.03125],
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::{close, Case};

    #[test]
    fn sebf_then_madd_then_backfill() {
        // C = 10. Coflow 0: 0→1 with 40 B (Γ = 4). Coflow 1: 1→1 with 10 B and 2→2
        // with 5 B (Γ = 1) goes first: MADD Γ' = max(10/10, 10/10, 5/10) = 1 →
        // rates 10 and 5. Coflow 0: down1 is full → nothing. Backfill: coflow 1's
        // 2→2 gets +5 (up2, down2 have 5 left); coflow 0 still blocked by down1.
        let c = Case::new(
            3,
            10.0,
            &[
                (0, 0, 1, 40.0, 0.0),
                (1, 1, 1, 10.0, 0.0),
                (1, 2, 2, 5.0, 0.0),
            ],
        );
        let mut d = Decision::default();
        d.reset(3);
        Varys::new(false).decide(&c.clairvoyant(), &mut d);
        close(&d.rates, &[0.0, 10.0, 10.0]);
    }

    #[test]
    fn static_ordering_uses_full_sizes() {
        // Coflow 0 has 1 B left of 100 B (static Γ = 10), coflow 1 has 20 B of 20 B
        // (Γ = 2). Dynamic puts coflow 0 first (Γ = 0.1); static puts coflow 1 first.
        let c = Case::new(2, 10.0, &[(0, 0, 1, 100.0, 99.0), (1, 1, 1, 20.0, 0.0)]);
        let mut d = Decision::default();
        d.reset(2);
        Varys::new(false).decide(&c.clairvoyant(), &mut d);
        close(&d.rates, &[10.0, 0.0]);
        d.reset(2);
        Varys::new(true).decide(&c.clairvoyant(), &mut d);
        close(&d.rates, &[0.0, 10.0]);
    }
}
