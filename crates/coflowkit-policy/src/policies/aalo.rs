//! `aalo`: Discretized Coflow-Aware Least-Attained Service (Chowdhury and Stoica,
//! SIGCOMM'15). See docs/policies/aalo.md.
//!
//! ```text
//! thresholds  T_q = T0 · E^q,  q = 0..K-2  (queue K-1 unbounded)
//! queue(k)    = min { q : sent_k < T_q }   (sent_k counts finished flows too)
//! order       (queue, arrival, id); strict priority across and FIFO within queues
//! rates       priority max-min, one group per coflow (max-min fair inside a coflow)
//! wake-up     when sent_k reaches T_queue(k) at current rates (an exact event)
//! ```

use crate::support::priority::CoflowPriority;
use crate::support::thresholds::Thresholds;
use crate::decision::{Decision, Wakeup};
use crate::policy::NonClairvoyantPolicy;
use crate::view::NonClairvoyantView;
use crate::policy::{AnyPolicy, Info};
use crate::spec::{non_clairvoyant, PolicySpec};
use crate::params::{ParamSpec, Params};
use coflowkit_model::ModelError;

pub struct Aalo {
    thresholds: Thresholds,
    prio: CoflowPriority,
    keyed: Vec<(usize, u32, usize)>,
    order: Vec<usize>,
}

impl Aalo {
    pub fn new(queues: usize, first_threshold_bytes: f64, multiplier: f64) -> Self {
        Aalo {
            thresholds: Thresholds::new(queues, first_threshold_bytes, multiplier),
            prio: CoflowPriority::default(),
            keyed: Vec::new(),
            order: Vec::new(),
        }
    }

    /// The queue of a coflow that has sent `sent` bytes.
    pub fn queue(&self, sent: f64) -> usize {
        self.thresholds.queue(sent)
    }
}

impl NonClairvoyantPolicy for Aalo {
    fn decide(&mut self, v: &NonClairvoyantView, out: &mut Decision) {
        self.keyed.clear();
        for (gi, g) in v.groups.iter().enumerate() {
            let q = self.queue(v.coflow_sent(g.coflow));
            self.keyed.push((q, g.coflow, gi));
        }
        self.keyed.sort_unstable();
        self.order.clear();
        self.order.extend(self.keyed.iter().map(|x| x.2));
        self.prio.run(v, &self.order, out);
        for &(q, k, _) in &self.keyed {
            if let Some(bytes) = self.thresholds.upper(q) {
                out.wakeups.push(Wakeup::CoflowSent { coflow: k, bytes });
            }
        }
    }
}

pub const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "queues",
        default: "10",
        help: "number of queues K",
    },
    ParamSpec {
        name: "first_threshold_bytes",
        default: "10485760",
        help: "upper bound of queue 0 (10 MiB)",
    },
    ParamSpec {
        name: "multiplier",
        default: "10",
        help: "threshold growth factor E between queues",
    },
];

fn build(p: &Params) -> Result<AnyPolicy, ModelError> {
    let k = p.usize_in("queues", 1, 64)?;
    let t0 = p.f64_in("first_threshold_bytes", 1.0, 1e18)?;
    let e = p.f64_in("multiplier", 1.0 + 1e-9, 1e6)?;
    non_clairvoyant(Aalo::new(k, t0, e))
}

pub const SPEC: PolicySpec = PolicySpec {
    name: "aalo",
    info: Info::NonClairvoyant,
    knows: "",
    summary: "D-CLAS: queues by bytes sent, FIFO within (Aalo)",
    rule: "queues by bytes sent (exponential thresholds); strict priority across queues, FIFO inside a queue, max-min inside a coflow",
    paper: "Aalo (D-CLAS): Chowdhury, Stoica, SIGCOMM'15",
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
    fn queues_follow_bytes_sent() {
        let a = Aalo::new(3, 10.0, 10.0);
        // Thresholds 10, 100; queue 2 unbounded.
        assert_eq!(a.queue(0.0), 0);
        assert_eq!(a.queue(9.9), 0);
        assert_eq!(a.queue(10.0), 1);
        assert_eq!(a.queue(10.0 - 1e-7), 1); // within the byte tolerance
        assert_eq!(a.queue(99.0), 1);
        assert_eq!(a.queue(1e9), 2);
    }

    #[test]
    fn less_attained_service_goes_first_and_asks_for_its_crossing() {
        // C = 10, T0 = 10 B, E = 10, K = 3. Coflow 0 (earlier) has sent 50 B → queue 1;
        // coflow 1 has sent 2 B → queue 0 and goes first through the shared down1.
        let c = Case::new(3, 10.0, &[(0, 0, 1, 100.0, 50.0), (1, 2, 1, 100.0, 2.0)]);
        let mut d = Decision::default();
        d.reset(2);
        Aalo::new(3, 10.0, 10.0).decide(&c.non_clairvoyant(), &mut d);
        close(&d.rates, &[0.0, 10.0]);
        assert_eq!(
            d.wakeups,
            vec![
                Wakeup::CoflowSent {
                    coflow: 1,
                    bytes: 10.0
                },
                Wakeup::CoflowSent {
                    coflow: 0,
                    bytes: 100.0
                }
            ]
        );
    }
}
