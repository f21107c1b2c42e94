//! `tcf`: smallest-total-first. Priority max-min with one group per coflow, ordered
//! by the coflow's total bytes (static), then arrival and id. See docs/policies/tcf.md.

use crate::util::{order_by_key, CoflowPriority};
use crate::{ClairvoyantPolicy, ClairvoyantView, Decision};

#[derive(Default)]
pub struct Tcf {
    prio: CoflowPriority,
    order: Vec<usize>,
}

impl ClairvoyantPolicy for Tcf {
    fn decide(&mut self, v: &ClairvoyantView, out: &mut Decision) {
        order_by_key(v, |k| v.coflow_size[k as usize], &mut self.order);
        self.prio.run(v, &self.order, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::testkit::{close, Case};

    #[test]
    fn smaller_total_goes_first() {
        // Same coflows as the scf test: totals 9 < 12, so coflow 0 goes first and
        // takes down1 whole; coflow 1 gets nothing there.
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
        Tcf::default().decide(&c.clairvoyant(), &mut d);
        close(&d.rates, &[12.0, 0.0, 0.0, 0.0]);
    }
}
