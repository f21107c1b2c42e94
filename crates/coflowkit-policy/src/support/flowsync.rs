//! [`FlowSync`]: which flows started and which finished since the last call,
//! learned without visiting the others, for policies that keep per-flow state
//! across calls (under delta decisions).

use crate::decision::Decision;
use crate::view::Common;
use coflowkit_alloc::IncGreedy;

/// Position of flow `f` in `c.active`, if active.
pub fn position(c: &Common, f: u32) -> Option<usize> {
    let k = c.flow_coflow[f as usize];
    let g = c.groups.binary_search_by_key(&k, |g| g.coflow).ok()?;
    let r = c.groups[g].range();
    c.active[r.clone()]
        .binary_search(&f)
        .ok()
        .map(|i| r.start + i)
}

/// The set of flows a policy holds state for, kept equal to the active flows.
/// A flow can finish only if it had a rate (the caller names those), or, rarely,
/// when it starts within the finish tolerance; the second case shows as a coflow
/// whose count of held flows differs from its active count, and only that coflow
/// is scanned.
#[derive(Default)]
pub struct FlowSync {
    member: Vec<bool>,
    /// Per coflow: `coflow_started` when last synced, and how many of its flows
    /// are held.
    started: Vec<u32>,
    count: Vec<u32>,
    /// Coflows with held flows, and the call each was last seen active.
    tracked: Vec<u32>,
    is_tracked: Vec<bool>,
    seen: Vec<u64>,
    calls: u64,
}

impl FlowSync {
    /// True when flow `f` is held.
    pub fn holds(&self, f: u32) -> bool {
        self.member.get(f as usize).copied().unwrap_or(false)
    }

    /// Flows of coflow `k` held.
    pub fn count(&self, k: u32) -> u32 {
        self.count.get(k as usize).copied().unwrap_or(0)
    }

    fn leave(&mut self, c: &Common, f: u32, gone: &mut Vec<u32>) {
        if self.member[f as usize] {
            self.member[f as usize] = false;
            self.count[c.flow_coflow[f as usize] as usize] -= 1;
            gone.push(f);
        }
    }

    /// Every held flow of coflow `k` that is not active leaves.
    fn rescan(&mut self, c: &Common, k: u32, gone: &mut Vec<u32>) {
        let first = c.coflow_first_flow[k as usize];
        for f in first..first + c.coflow_width[k as usize] {
            if self.member[f as usize] && position(c, f).is_none() {
                self.leave(c, f, gone);
            }
        }
    }

    /// Brings the held set to the active flows. `had_rate`: the held flows that
    /// had a rate since the last call (the only ones that can have finished,
    /// apart from the rare case above). Appends the flows that left to `gone` and
    /// those that joined to `joined`, both in ascending flow order within each
    /// step.
    pub fn sync(
        &mut self,
        c: &Common,
        had_rate: &[u32],
        gone: &mut Vec<u32>,
        joined: &mut Vec<u32>,
    ) {
        let (nf, nc) = (c.flow_path.len(), c.coflow_started.len());
        if self.member.len() < nf {
            self.member.resize(nf, false);
        }
        if self.started.len() < nc {
            self.started.resize(nc, 0);
            self.count.resize(nc, 0);
            self.seen.resize(nc, 0);
            self.is_tracked.resize(nc, false);
        }
        self.calls += 1;
        for &f in had_rate {
            if self.member[f as usize] && position(c, f).is_none() {
                self.leave(c, f, gone);
            }
        }
        for grp in c.groups {
            let k = grp.coflow as usize;
            self.seen[k] = self.calls;
            if self.started[k] != c.coflow_started[k] {
                self.started[k] = c.coflow_started[k];
                if !self.is_tracked[k] {
                    self.is_tracked[k] = true;
                    self.tracked.push(grp.coflow);
                }
                for &f in &c.active[grp.range()] {
                    if !self.member[f as usize] {
                        self.member[f as usize] = true;
                        self.count[k] += 1;
                        joined.push(f);
                    }
                }
            }
            if self.count[k] != grp.end - grp.start {
                self.rescan(c, grp.coflow, gone);
            }
        }
        let mut t = std::mem::take(&mut self.tracked);
        t.retain(|&k| {
            if self.seen[k as usize] != self.calls {
                self.rescan(c, k, gone);
            }
            let keep = self.count[k as usize] > 0;
            self.is_tracked[k as usize] = keep;
            keep
        });
        self.tracked = t;
    }
}

/// An [`IncGreedy`] over the active flows (items are flows), kept in step with
/// them by a [`FlowSync`]: the part `pfp` and `sincronia` share.
pub struct KeptGreedy {
    pub greedy: IncGreedy,
    pub sync: FlowSync,
    /// After [`KeptGreedy::sync`]: the flows that had a grant (ascending), those
    /// that left (already out of the greedy), and those that joined (not in it yet).
    pub moving: Vec<u32>,
    pub gone: Vec<u32>,
    pub joined: Vec<u32>,
    changed: Vec<(u32, f64)>,
    /// True until the first answer, which is given in full (the rates in force
    /// may be another form's).
    pub building: bool,
}

impl KeptGreedy {
    pub fn new(c: &Common) -> Self {
        KeptGreedy {
            greedy: IncGreedy::new(&c.fabric.capacities),
            sync: FlowSync::default(),
            moving: Vec::new(),
            gone: Vec::new(),
            joined: Vec::new(),
            changed: Vec::new(),
            building: true,
        }
    }

    /// Brings the held flows to the active ones; the flows that left are taken out
    /// of the greedy. The caller then (re-)keys `moving` and `joined`.
    pub fn sync(&mut self, c: &Common) {
        self.moving.clear();
        self.moving.extend_from_slice(self.greedy.moving());
        self.moving.sort_unstable();
        self.gone.clear();
        self.joined.clear();
        self.sync
            .sync(c, &self.moving, &mut self.gone, &mut self.joined);
        for &f in &self.gone {
            self.greedy.remove(c.fabric, f);
        }
    }

    /// Runs the greedy and answers with the grants that changed (a delta; in full,
    /// as a sparse decision, the first time).
    pub fn answer(&mut self, c: &Common, out: &mut Decision) {
        self.greedy.run(c.fabric, &mut self.changed);
        out.sparse = true;
        out.delta = !std::mem::take(&mut self.building);
        for &(f, r) in &self.changed {
            let i = position(c, f).expect("a changed flow is active");
            out.rates[i] = r;
            out.touched.push(i as u32);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::Case;
    use crate::view::ActiveCoflow;

    #[test]
    fn flows_join_and_leave_as_the_active_set_changes() {
        // Coflow 0: flows 0, 1; coflow 1: flows 2, 3.
        let mut c = Case::new(
            3,
            1.0,
            &[
                (0, 0, 1, 1.0, 0.0),
                (0, 0, 2, 1.0, 0.0),
                (1, 1, 2, 1.0, 0.0),
                (1, 2, 1, 1.0, 0.0),
            ],
        );
        let mut s = FlowSync::default();
        let (mut gone, mut joined) = (Vec::new(), Vec::new());
        s.sync(&c.common(), &[], &mut gone, &mut joined);
        assert_eq!((gone.clone(), joined.clone()), (vec![], vec![0, 1, 2, 3]));
        // Flow 1 (had a rate) finished; flow 2 finished without one (found by the
        // count of coflow 1); coflow 0's flows are named by `had_rate`.
        c.active = vec![0, 3];
        c.groups = vec![
            ActiveCoflow {
                coflow: 0,
                start: 0,
                end: 1,
            },
            ActiveCoflow {
                coflow: 1,
                start: 1,
                end: 2,
            },
        ];
        gone.clear();
        joined.clear();
        s.sync(&c.common(), &[0, 1], &mut gone, &mut joined);
        assert_eq!((gone.clone(), joined.clone()), (vec![1, 2], vec![]));
        assert_eq!((s.count(0), s.count(1)), (1, 1));
        // Coflow 0 gone altogether, without any flow named.
        c.active = vec![3];
        c.groups = vec![ActiveCoflow {
            coflow: 1,
            start: 0,
            end: 1,
        }];
        gone.clear();
        s.sync(&c.common(), &[], &mut gone, &mut joined);
        assert_eq!(gone, vec![0]);
        assert!(!s.holds(0) && s.holds(3));
    }
}
