//! [`PathFlows`]: per path, its active flows, kept in step with a delta
//! driver's lists of the flows that started and finished since the last call.

use crate::view::Common;

const NONE: u32 = u32::MAX;

/// Per path its active flows (in no particular order), for a policy whose
/// rates depend on the path and that answers with the flows of the paths whose
/// rate moved. Built from the active flows at the first call, then told only
/// `Common::started` and `Common::finished` (drivers that take delta
/// decisions fill them; see [`crate::decision::Decision::delta_ok`]).
#[derive(Default)]
pub struct PathFlows {
    on_path: Vec<Vec<u32>>,
    /// Per flow (global index): its slot in its path's list, or `NONE`.
    slot: Vec<u32>,
    built: bool,
}

impl PathFlows {
    /// Brings the lists up to date with `c`'s active flows.
    pub fn sync(&mut self, c: &Common) {
        if self.slot.len() < c.flow_path.len() {
            self.slot.resize(c.flow_path.len(), NONE);
        }
        let np = c.fabric.num_paths();
        if self.on_path.len() < np {
            self.on_path.resize_with(np, Vec::new);
        }
        if !self.built {
            self.built = true;
            for &f in c.active {
                self.add(c, f);
            }
            return;
        }
        for &f in c.started {
            self.add(c, f);
        }
        for &f in c.finished {
            self.remove(c, f);
        }
    }

    fn add(&mut self, c: &Common, f: u32) {
        if self.slot[f as usize] != NONE {
            return;
        }
        let list = &mut self.on_path[c.flow_path[f as usize] as usize];
        self.slot[f as usize] = list.len() as u32;
        list.push(f);
    }

    fn remove(&mut self, c: &Common, f: u32) {
        let at = std::mem::replace(&mut self.slot[f as usize], NONE);
        if at == NONE {
            return;
        }
        let list = &mut self.on_path[c.flow_path[f as usize] as usize];
        list.swap_remove(at as usize);
        if let Some(&g) = list.get(at as usize) {
            self.slot[g as usize] = at;
        }
    }

    /// The active flows on path `p`.
    pub fn flows(&self, p: u32) -> &[u32] {
        self.on_path.get(p as usize).map_or(&[], |l| &l[..])
    }

    /// Whether flow `f` is active (tracked).
    pub fn holds(&self, f: u32) -> bool {
        self.slot.get(f as usize).is_some_and(|&s| s != NONE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::Case;

    #[test]
    fn lists_follow_started_and_finished_flows() {
        // 3 ports. Flows 0: 0→1, 1: 0→1, 2: 1→2, 3: 0→1.
        let mut c = Case::new(
            3,
            1.0,
            &[
                (0, 0, 1, 1.0, 0.0),
                (0, 0, 1, 1.0, 0.0),
                (1, 1, 2, 1.0, 0.0),
                (1, 0, 1, 1.0, 0.0),
            ],
        );
        let p01 = c.data.flow_path[0];
        let p12 = c.data.flow_path[2];
        c.set_active(&[0, 1, 2]);
        let mut pf = PathFlows::default();
        pf.sync(&c.common());
        assert_eq!(pf.flows(p01), &[0, 1]);
        assert_eq!(pf.flows(p12), &[2]);
        // Flow 0 finished, flow 3 started.
        c.set_active(&[1, 2, 3]);
        c.data.started = vec![3];
        c.data.finished = vec![0];
        pf.sync(&c.common());
        let mut on = pf.flows(p01).to_vec();
        on.sort_unstable();
        assert_eq!(on, vec![1, 3]);
        assert!(!pf.holds(0) && pf.holds(3));
        // A flow that started and finished between two calls is never listed.
        c.data.started = vec![];
        c.data.finished = vec![2];
        pf.sync(&c.common());
        assert!(pf.flows(p12).is_empty());
    }
}
