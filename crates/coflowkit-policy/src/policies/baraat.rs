//! `baraat`: FIFO with limited multiplexing (Dogar et al., SIGCOMM'14), the
//! decentralized baseline of Stream. See docs/policies/baraat.md.
//!
//! ```text
//! light(k) ⇔ sent_k < H                (sent_k: bytes coflow k has sent, finished flows included)
//! order    light coflows by (arrival, id), one strict-priority level each (FIFO);
//!          then every heavy coflow together in one shared level
//! rates    priority max-min; max-min fair inside a level
//! wake-up  when a light coflow reaches H at current rates (it turns heavy)
//! ```
//!
//! A heavy coflow stops blocking the coflows behind it: they run ahead of it, and
//! the heavy ones share what they leave.

use crate::decision::{Decision, Wakeup};
use crate::params::{ParamSpec, Params};
use crate::policy::NonClairvoyantPolicy;
use crate::policy::{AnyPolicy, Info};
use crate::spec::{non_clairvoyant, PolicySpec, MIB};
use crate::support::priority::CoflowPriority;
use crate::view::NonClairvoyantView;
use coflowkit_model::ModelError;

pub struct Baraat {
    heavy_bytes: f64,
    prio: CoflowPriority,
    /// Scratch: the groups of heavy and of light coflows, in FIFO order.
    heavy: Vec<usize>,
    light: Vec<usize>,
}

impl Baraat {
    pub fn new(heavy_bytes: f64) -> Self {
        Baraat {
            heavy_bytes,
            prio: CoflowPriority::default(),
            heavy: Vec::new(),
            light: Vec::new(),
        }
    }

    fn is_heavy(&self, sent: f64) -> bool {
        // Within the engine's byte tolerance of H counts as reached.
        sent >= self.heavy_bytes - coflowkit_model::finish_threshold(self.heavy_bytes)
    }
}

impl NonClairvoyantPolicy for Baraat {
    fn decide(&mut self, v: &NonClairvoyantView, out: &mut Decision) {
        self.heavy.clear();
        self.light.clear();
        // Groups are in (arrival, id) order: FIFO among the light ones.
        for (gi, g) in v.groups.iter().enumerate() {
            let sent = v.coflow_sent(g.coflow);
            if self.is_heavy(sent) {
                self.heavy.push(gi);
                continue;
            }
            self.light.push(gi);
            out.wakeups.push(Wakeup::CoflowSent {
                coflow: g.coflow,
                bytes: self.heavy_bytes,
            });
        }
        self.prio.run(v, &self.light, out);
        if !self.heavy.is_empty() {
            let groups = v.groups;
            let heavy = std::mem::take(&mut self.heavy);
            self.prio
                .serve_level(v, heavy.iter().flat_map(|&gi| groups[gi].range()), 0, out);
            self.heavy = heavy;
        }
    }
}

pub const PARAMS: &[ParamSpec] = &[ParamSpec {
    name: "heavy_mb",
    default: "100",
    help: "H in MiB: a coflow that has sent H stops blocking and joins the shared heavy class",
}];

fn build(p: &Params) -> Result<AnyPolicy, ModelError> {
    non_clairvoyant(Baraat::new(p.f64_in("heavy_mb", 1e-6, 1e12)? * MIB))
}

pub const SPEC: PolicySpec = PolicySpec {
    name: "baraat",
    info: Info::NonClairvoyant,
    knows: "",
    summary: "FIFO with limited multiplexing: heavy coflows stop blocking (Baraat)",
    rule:
        "coflows FIFO by arrival; one that has sent H turns heavy and drops to a shared lower class",
    paper: "Baraat (FIFO-LM): Dogar et al., SIGCOMM'14",
    params: PARAMS,
    needs: &[],
    build,
    example_ccts: [0.0625, 0.078125, 0.07775],
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::{close, Case};

    #[test]
    fn light_coflows_go_first_in_arrival_order_and_heavy_ones_share_the_rest() {
        // C = 10, H = 100. All flows into down1 (one bottleneck).
        // Coflow 0 (earliest) has sent 150 B: heavy. Coflow 1 has sent 0: light,
        // first in FIFO, takes all of down1. Coflows 0 and 2 (heavy, sent 500) share
        // nothing left. With coflow 1 gone, coflows 0 and 2 share down1 max-min: 5 + 5.
        let c = Case::new(
            4,
            10.0,
            &[
                (0, 0, 1, 1e6, 150.0),
                (1, 2, 1, 1e6, 0.0),
                (2, 3, 1, 1e6, 500.0),
            ],
        );
        let mut d = Decision::default();
        d.reset(3);
        Baraat::new(100.0).decide(&c.non_clairvoyant(), &mut d);
        close(&d.rates, &[0.0, 10.0, 0.0]);
        assert_eq!(
            d.wakeups,
            vec![Wakeup::CoflowSent {
                coflow: 1,
                bytes: 100.0
            }]
        );
        let mut c2 = c.clone();
        c2.active = vec![0, 2];
        c2.groups = vec![
            crate::view::ActiveCoflow {
                coflow: 0,
                start: 0,
                end: 1,
            },
            crate::view::ActiveCoflow {
                coflow: 2,
                start: 1,
                end: 2,
            },
        ];
        c2.count_paths();
        let mut d = Decision::default();
        d.reset(2);
        Baraat::new(100.0).decide(&c2.non_clairvoyant(), &mut d);
        close(&d.rates, &[5.0, 5.0]);
        assert!(d.wakeups.is_empty());
    }

    #[test]
    fn fifo_among_light_coflows_blocks_later_ones() {
        // Two light coflows on the same down1: the earlier one takes it all.
        let c = Case::new(3, 10.0, &[(0, 0, 1, 1e6, 0.0), (1, 2, 1, 1e6, 0.0)]);
        let mut d = Decision::default();
        d.reset(2);
        Baraat::new(100.0).decide(&c.non_clairvoyant(), &mut d);
        close(&d.rates, &[10.0, 0.0]);
    }
}
