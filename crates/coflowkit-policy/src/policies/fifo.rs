//! `fifo` (Orchestra): priority max-min with one group per coflow, in arrival order
//! (ties by coflow id). See docs/policies/fifo.md.

use crate::support::rankclasses::RankClasses;
use crate::decision::Decision;
use crate::policy::NonClairvoyantPolicy;
use crate::view::NonClairvoyantView;
use crate::policy::Info;
use crate::spec::{non_clairvoyant, PolicySpec};

/// The order is told as classes to a driver that takes them (the engine:
/// one class per coflow, kept as bottleneck groups), as rates otherwise; the
/// rates are the same (`support::rankclasses`).
#[derive(Default)]
pub struct Fifo {
    rank: RankClasses,
    order: Vec<usize>,
}

impl NonClairvoyantPolicy for Fifo {
    fn decide(&mut self, v: &NonClairvoyantView, out: &mut Decision) {
        // Groups are already in (arrival, id) order.
        self.order.clear();
        self.order.extend(0..v.groups.len());
        self.rank.serve(v, &self.order, &[], out);
    }
}

pub const SPEC: PolicySpec = PolicySpec {
    name: "fifo",
    info: Info::NonClairvoyant,
    knows: "arrival order only",
    summary: "coflows in arrival order, max-min inside (Orchestra)",
    rule: "coflows by arrival; each gets max-min fair rates on what earlier coflows left",
    paper: "Orchestra: Chowdhury et al., SIGCOMM'11",
    params: &[],
    needs: &[],
    build: |_| non_clairvoyant(Fifo::default()),
    example_ccts: [0.0625, 0.078125, 0.07775],
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::{close, Case};

    #[test]
    fn earlier_coflow_takes_the_shared_link_first() {
        // C = 10. Coflow 0: 0→1 and 2→1 (share down1: 5 + 5). Coflow 1: 0→2 gets
        // up0's leftover 5; coflow 1's flow 1→1 gets nothing (down1 full).
        let c = Case::new(
            3,
            10.0,
            &[
                (0, 0, 1, 1.0, 0.0),
                (0, 2, 1, 1.0, 0.0),
                (1, 0, 2, 1.0, 0.0),
                (1, 1, 1, 1.0, 0.0),
            ],
        );
        let mut d = Decision::default();
        d.reset(4);
        Fifo::default().decide(&c.non_clairvoyant(), &mut d);
        close(&d.rates, &[5.0, 5.0, 5.0, 0.0]);
    }
}
