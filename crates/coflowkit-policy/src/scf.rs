//! `scf`: smallest-coflow-first by length. Priority max-min with one group per
//! coflow, ordered by the coflow's length (its largest flow, bytes; static), then
//! arrival and id. See docs/policies/scf.md.

use crate::util::{order_by_key, CoflowPriority};
use crate::{ClairvoyantPolicy, ClairvoyantView, Decision};

#[derive(Default)]
pub struct Scf {
    prio: CoflowPriority,
    order: Vec<usize>,
}

impl ClairvoyantPolicy for Scf {
    fn decide(&mut self, v: &ClairvoyantView, out: &mut Decision) {
        order_by_key(v, |k| v.coflow_length[k as usize], &mut self.order);
        self.prio.run(v, &self.order, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::testkit::{close, Case};

    #[test]
    fn shorter_longest_flow_goes_first() {
        // Coflow 0: one 9-byte flow 0→1. Coflow 1: three 4-byte flows into down1
        // (length 4 < 9, total 12 > 9): coflow 1 first, its flows share down1.
        let c = Case::new(
            4,
            12.0,
            &[
                (0, 0, 1, 9.0, 0.0),
                (1, 1, 1, 4.0, 0.0),
                (1, 2, 1, 4.0, 0.0),
                (1, 3, 1, 4.0, 0.0),
            ],
        );
        let mut d = Decision::default();
        d.reset(4);
        Scf::default().decide(&c.clairvoyant(), &mut d);
        close(&d.rates, &[0.0, 4.0, 4.0, 4.0]);
    }
}
