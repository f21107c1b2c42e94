//! `ncf`: narrowest-coflow-first. Priority max-min with one group per coflow, ordered
//! by the coflow's width (number of flows, known at registration), then arrival and
//! id. Needs no sizes. See docs/policies/ncf.md.

use crate::util::{order_by_key, CoflowPriority};
use crate::{Decision, NonClairvoyantPolicy, NonClairvoyantView};

#[derive(Default)]
pub struct Ncf {
    prio: CoflowPriority,
    order: Vec<usize>,
}

impl NonClairvoyantPolicy for Ncf {
    fn decide(&mut self, v: &NonClairvoyantView, out: &mut Decision) {
        order_by_key(v, |k| v.coflow_width[k as usize] as f64, &mut self.order);
        self.prio.run(v, &self.order, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::testkit::{close, Case};

    #[test]
    fn narrower_goes_first() {
        // Coflow 0 has 3 flows into down1, coflow 1 one flow into down1: coflow 1 first.
        let c = Case::new(
            4,
            12.0,
            &[
                (0, 1, 1, 4.0, 0.0),
                (0, 2, 1, 4.0, 0.0),
                (0, 3, 1, 4.0, 0.0),
                (1, 0, 1, 9.0, 0.0),
            ],
        );
        let mut d = Decision::default();
        d.reset(4);
        Ncf::default().decide(&c.non_clairvoyant(), &mut d);
        close(&d.rates, &[0.0, 0.0, 0.0, 12.0]);
    }
}
