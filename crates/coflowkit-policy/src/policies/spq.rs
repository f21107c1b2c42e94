//! `spq`: strict-priority switch queues with classes given by the workload. See
//! docs/policies/spq.md.
//!
//! ```text
//! class(f) = min(priority_f, K − 1)     (priority_f from the workload, 0 highest)
//! rates    strict priority across classes at every link, max-min fair within a
//!          class (the driver's flow-level model of SPQ switches with TCP)
//! ```
//!
//! The building block of the decentralized policies (`stream`, `baraat`): they
//! compute a class per flow and the fabric enforces it the same way.

use crate::decision::Decision;
use crate::policy::NonClairvoyantPolicy;
use crate::view::NonClairvoyantView;
use crate::policy::{AnyPolicy, Info};
use crate::spec::{non_clairvoyant, PolicySpec};
use crate::params::{ParamSpec, Params};
use coflowkit_model::ModelError;

pub struct Spq {
    queues: u32,
}

impl Spq {
    pub fn new(queues: u32) -> Self {
        Spq { queues }
    }
}

impl NonClairvoyantPolicy for Spq {
    fn decide(&mut self, v: &NonClairvoyantView, out: &mut Decision) {
        let top = self.queues - 1;
        if out.delta_ok {
            // A flow's class never changes: a delta driver is told each new
            // flow's, once.
            out.class_delta = true;
            out.class_moves.extend(
                v.started
                    .iter()
                    .map(|&f| (f, v.flow_priority[f as usize].min(top) as u8)),
            );
            return;
        }
        out.classes.clear();
        out.classes.extend(
            v.active
                .iter()
                .map(|&f| v.flow_priority[f as usize].min(top) as u8),
        );
    }
}

pub const PARAMS: &[ParamSpec] = &[ParamSpec {
    name: "queues",
    default: "8",
    help:
        "number of strict-priority queues K (commodity switches: 8); priorities ≥ K go to the last",
}];

fn build(p: &Params) -> Result<AnyPolicy, ModelError> {
    non_clairvoyant(Spq::new(p.usize_in("queues", 1, 64)? as u32))
}

pub const SPEC: PolicySpec = PolicySpec {
    name: "spq",
    info: Info::NonClairvoyant,
    knows: "workload classes",
    summary: "strict-priority switch queues, classes from the workload, max-min inside a class",
    rule: "strict-priority queues at every link, classes from the workload, max-min inside a class",
    paper: "commodity switch SPQ, as used by Stream and PIAS",
    params: PARAMS,
    needs: &[],
    build,
    example_ccts: [0.10175, 0.03125, 0.0625],
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::Case;

    #[test]
    fn classes_come_from_the_workload_capped_at_the_last_queue() {
        // Three flows with priorities 0, 5 and 2 on K = 4 queues: classes 0, 3, 2.
        let mut c = Case::new(
            2,
            10.0,
            &[
                (0, 0, 1, 9.0, 0.0),
                (1, 0, 1, 9.0, 0.0),
                (2, 1, 0, 9.0, 0.0),
            ],
        );
        c.flow_priority = vec![0, 5, 2];
        let mut d = Decision::default();
        d.reset(3);
        Spq::new(4).decide(&c.non_clairvoyant(), &mut d);
        assert_eq!(d.classes, vec![0, 3, 2]);
        // A delta driver is told the new flows' classes only.
        let mut d = Decision {
            delta_ok: true,
            ..Decision::default()
        };
        d.reset(3);
        c.started = vec![2, 0];
        Spq::new(4).decide(&c.non_clairvoyant(), &mut d);
        assert!(d.class_delta && d.classes.is_empty());
        assert_eq!(d.class_moves, vec![(2, 2), (0, 0)]);
    }
}
