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

use crate::{Decision, NonClairvoyantPolicy, NonClairvoyantView};

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
        out.classes.clear();
        out.classes.extend(
            v.active
                .iter()
                .map(|&f| v.flow_priority[f as usize].min(top) as u8),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::testkit::Case;

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
        c.priority = vec![0, 5, 2];
        let mut d = Decision::default();
        d.reset(3);
        Spq::new(4).decide(&c.non_clairvoyant(), &mut d);
        assert_eq!(d.classes, vec![0, 3, 2]);
    }
}
