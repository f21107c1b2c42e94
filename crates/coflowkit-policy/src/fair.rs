//! `fair`: per-flow max-min fairness over all active flows (a model of TCP).
//! Rule: `r = MaxMin(all active flows, C)`. See docs/policies/fair.md.

use crate::{Decision, NonClairvoyantPolicy, NonClairvoyantView};
use coflowkit_alloc::MaxMin;
use coflowkit_model::PathId;

#[derive(Default)]
pub struct Fair {
    mm: MaxMin,
    residual: Vec<f64>,
    paths: Vec<PathId>,
}

impl NonClairvoyantPolicy for Fair {
    fn decide(&mut self, v: &NonClairvoyantView, out: &mut Decision) {
        self.residual.clear();
        self.residual.extend_from_slice(&v.fabric.capacities);
        self.paths.clear();
        self.paths
            .extend(v.active.iter().map(|&f| v.flow_path[f as usize]));
        self.mm
            .solve(v.fabric, &mut self.residual, &self.paths, &mut out.rates);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::testkit::{close, Case};

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
