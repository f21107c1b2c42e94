//! `fair`: per-flow max-min fairness over all active flows (a model of TCP).
//! Rule: `r = MaxMin(all active flows, C)`. See docs/policies/fair.md.

use crate::decision::Decision;
use crate::policy::NonClairvoyantPolicy;
use crate::view::NonClairvoyantView;
use coflowkit_alloc::MaxMin;
use crate::policy::Info;
use crate::spec::{non_clairvoyant, PolicySpec};

#[derive(Default)]
pub struct Fair {
    mm: MaxMin,
    residual: Vec<f64>,
    counts: Vec<u32>,
    per_path: Vec<f64>,
    rate_of: Vec<f64>,
}

impl NonClairvoyantPolicy for Fair {
    fn decide(&mut self, v: &NonClairvoyantView, out: &mut Decision) {
        // Flows on the same path get the same rate: solve over the active paths
        // with their flow counts, then hand each flow its path's rate.
        self.residual.clear();
        self.residual.extend_from_slice(&v.fabric.capacities);
        self.counts.clear();
        self.counts
            .extend(v.active_paths.iter().map(|&p| v.path_count[p as usize]));
        self.per_path.clear();
        self.per_path.resize(v.active_paths.len(), 0.0);
        self.mm.solve_counted(
            v.fabric,
            &mut self.residual,
            v.active_paths,
            &self.counts,
            &mut self.per_path,
        );
        self.rate_of.resize(v.fabric.num_paths(), 0.0);
        for (&p, &r) in v.active_paths.iter().zip(&self.per_path) {
            self.rate_of[p as usize] = r;
        }
        for (r, &f) in out.rates.iter_mut().zip(v.active) {
            *r = self.rate_of[v.flow_path[f as usize] as usize];
        }
    }
}

pub const SPEC: PolicySpec = PolicySpec {
    name: "fair",
    info: Info::NonClairvoyant,
    knows: "",
    summary: "per-flow max-min fairness (TCP-like)",
    rule: "max-min fair rates over all active flows, coflows ignored (TCP-like)",
    paper: "per-flow fairness baseline of the coflow papers, e.g. Chowdhury, Zhong, Stoica, SIGCOMM'14 (Varys)",
    params: &[],
    build: |_| non_clairvoyant(Fair::default()),
    example_ccts: [0.10175, 0.03125, 0.0625],
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::{close, Case};

    #[test]
    fn shares_each_bottleneck_per_flow_not_per_coflow() {
        // C = 12. Coflow 0: two flows 0→2 (x0, x1); coflow 1: one flow 1→2 (x2).
        // down2: x0 + x1 + x2 ≤ 12 → 4 each (per flow, so coflow 0 gets 8).
        let c = Case::new(
            3,
            12.0,
            &[
                (0, 0, 2, 9.0, 0.0),
                (0, 0, 2, 9.0, 0.0),
                (1, 1, 2, 9.0, 0.0),
            ],
        );
        let mut d = Decision::default();
        d.reset(3);
        Fair::default().decide(&c.non_clairvoyant(), &mut d);
        close(&d.rates, &[4.0, 4.0, 4.0]);
    }
}
