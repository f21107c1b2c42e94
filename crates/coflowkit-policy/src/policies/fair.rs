//! `fair`: per-flow max-min fairness over all active flows (a model of TCP).
//! Rule: `r = MaxMin(all active flows, C)`. See docs/policies/fair.md.
//!
//! Flows on one path get the same rate, so fair solves over the active paths,
//! weighted by their flow counts, and answers in path mode (the engine serves
//! each path's flows as one group), listing only the paths whose rate moved.
//!
//! It is incremental, in two ways that give the full solution up to the order
//! of floating-point sums:
//!
//! * **The tail.** Progressive filling saturates links in increasing order of
//!   level; a path whose flow count drops has rate `r_p`, and every saturation
//!   below `r_p` involves links and paths it does not touch, so the solution
//!   below `λ* = min r_p` over such paths stands (a path that gains flows sets
//!   `λ* = 0`). Only paths at or above `λ*` can move.
//! * **Where a change reaches** (local solves). Each path of the solution has a
//!   bottleneck, the link whose saturation froze it (`MaxMin::bottleneck`). The
//!   set `S` solved again starts with the changed paths and takes in, for every
//!   link a member of `S` crosses, the paths that link bounds (at or above
//!   `λ*`), and so on. `S` is solved on what the other paths leave. The result
//!   is max-min fair when every path has a bottleneck: a path outside `S` keeps
//!   its own (every path that link bounds is outside `S`, so its load is
//!   unchanged), and a path of `S` has one from the solve unless a path
//!   outside `S` crosses it faster than its new level. That can only happen on
//!   a link that bounded nothing before or whose level fell, so `check` scans
//!   those links' members and brings any such path into `S`, which is solved
//!   again; a path of `S` blocked by a link that paths outside `S` fill (a tie)
//!   brings them in the same way.
//!
//! A local solve does the work where a change reaches, not everything above
//! `λ*`: on `fattree:k=48` a completion re-solves about 200 paths where the
//! tail holds 1,600. Where changes cascade through the whole tail (a loaded
//! `fattree:k=8`), the search and checks cost about 5% more than they save
//! (docs/results/bench/fair-local.md). A local solve whose work passes twice
//! the active paths (`LOCAL_BUDGET`) stops and solves the whole tail.

use crate::decision::Decision;
use crate::policy::{Info, NonClairvoyantPolicy};
use crate::spec::{non_clairvoyant, PolicySpec};
use crate::view::NonClairvoyantView;
use coflowkit_alloc::MaxMin;
use coflowkit_model::{Fabric, PathId};

/// "No link": a path with no bottleneck (not in the solution, or blocked).
const NONE: u32 = u32::MAX;

#[derive(Default)]
pub struct Fair {
    mm: MaxMin,
    /// Per path: the flow count and per-flow rate of the solution in force.
    count: Vec<u32>,
    rate: Vec<f64>,
    /// Per link: `Σ n_p r_p` over the paths of the solution in force.
    used: Vec<f64>,
    /// Per link: the solution's paths crossing it; per hop of every interned
    /// path (`Fabric::path_start`), the path's position in its link's list.
    members: Vec<Vec<PathId>>,
    slot: Vec<u32>,
    /// Per link: the paths it bounds (their bottleneck, where they froze) and
    /// its level (their rate); per path, its bottleneck and position there.
    held: Vec<Vec<PathId>>,
    level: Vec<f64>,
    neck: Vec<u32>,
    neck_slot: Vec<u32>,
    /// This call's set `S` of paths solved again, in order of entry, with each
    /// one's count and rate in force when it entered; per path whether it is in
    /// `S`; how many of `S` have had their use taken from `used`.
    set: Vec<PathId>,
    old_count: Vec<u32>,
    old_rate: Vec<f64>,
    in_set: Vec<bool>,
    taken: usize,
    /// Members scanned by this call's checks.
    scanned: u64,
    /// Per link: the call in which the search went through it, and the check
    /// in which it was looked at; the call and check counters.
    seen: Vec<u32>,
    checked: Vec<u32>,
    stamp: u32,
    check_stamp: u32,
    /// Scratch: the paths solved with their counts and new rates; residuals.
    paths: Vec<PathId>,
    counts: Vec<u32>,
    rates: Vec<f64>,
    residual: Vec<f64>,
    /// Calls answered by a local solve and by the whole tail (for profiles).
    pub local_solves: u64,
    pub tail_solves: u64,
}

/// A local solve stops, and the whole tail is solved, once its work (paths
/// solved, summed over its rounds, and a quarter of the members its checks
/// scanned) passes this many times the active paths: past that, solving
/// everything above the restart level costs less. A hand-over chosen per
/// window of calls (`FormChoice`) was measured instead and cost more: on
/// `fattree:k=48` the windows it judged bad were bursts, and each handed
/// calls to whole tails that cost far more per path there (a heap over
/// thousands of links) than a local solve (docs/results/bench/fair-local.md).
const LOCAL_BUDGET: u64 = 2;

impl Fair {
    fn grow(&mut self, v: &NonClairvoyantView) {
        let (np, nl) = (v.fabric.num_paths(), v.fabric.num_links());
        if self.count.len() < np {
            self.count.resize(np, 0);
            self.rate.resize(np, 0.0);
            self.in_set.resize(np, false);
            self.neck.resize(np, NONE);
            self.neck_slot.resize(np, 0);
        }
        if self.used.len() < nl {
            self.used.resize(nl, 0.0);
            self.residual.resize(nl, 0.0);
            self.members.resize_with(nl, Vec::new);
            self.held.resize_with(nl, Vec::new);
            self.level.resize(nl, 0.0);
            self.seen.resize(nl, 0);
            self.checked.resize(nl, 0);
        }
        let slots = v.fabric.path_link_slots();
        if self.slot.len() < slots {
            self.slot.resize(slots, u32::MAX);
        }
    }

    /// The level from which the solution must be redone: the lowest old rate of a
    /// path that lost flows, or 0 when a path gained flows (`None`: nothing changed).
    fn restart_level(&self, v: &NonClairvoyantView) -> Option<f64> {
        let mut level: Option<f64> = None;
        for &p in v.changed_paths {
            let (old, new) = (self.count[p as usize], v.path_count[p as usize]);
            let l = if new > old { 0.0 } else if new < old { self.rate[p as usize] } else { continue };
            level = Some(level.map_or(l, |x: f64| x.min(l)));
        }
        level
    }

    /// Puts path `p` into `S` (once).
    fn enter(&mut self, p: PathId) {
        let i = p as usize;
        if !self.in_set[i] {
            self.in_set[i] = true;
            self.set.push(p);
            self.old_count.push(self.count[i]);
            self.old_rate.push(self.rate[i]);
        }
    }

    /// Grows `S` from its members at `from..`: the paths bounded by a link of
    /// theirs join, when at or above `floor`. A path that only crosses such a
    /// link below its level is bounded elsewhere, where nothing changed;
    /// `check` catches a link whose level falls under it.
    fn search(&mut self, fabric: &Fabric, from: usize, floor: f64) {
        let mut i = from;
        while i < self.set.len() {
            let p = self.set[i];
            i += 1;
            for &l in fabric.path(p) {
                let li = l as usize;
                if self.seen[li] == self.stamp {
                    continue;
                }
                self.seen[li] = self.stamp;
                if self.held[li].is_empty() || self.level[li] < floor {
                    continue;
                }
                for j in 0..self.held[li].len() {
                    let q = self.held[li][j];
                    self.enter(q);
                }
            }
        }
    }

    /// Takes the use of the members of `S` not yet taken out of `used`.
    fn take(&mut self, fabric: &Fabric) {
        for j in self.taken..self.set.len() {
            let u = self.old_count[j] as f64 * self.old_rate[j];
            for &l in fabric.path(self.set[j]) {
                self.used[l as usize] -= u;
            }
        }
        self.taken = self.set.len();
    }

    /// Solves the members of `S` that have flows on what the other paths leave.
    fn solve_set(&mut self, v: &NonClairvoyantView) {
        self.paths.clear();
        self.counts.clear();
        for &p in &self.set {
            let n = v.path_count[p as usize];
            if n > 0 {
                self.paths.push(p);
                self.counts.push(n);
                for &l in v.fabric.path(p) {
                    let li = l as usize;
                    self.residual[li] = (v.fabric.capacities[li] - self.used[li]).max(0.0);
                }
            }
        }
        self.rates.clear();
        self.rates.resize(self.paths.len(), 0.0);
        self.mm.solve_counted(v.fabric, &mut self.residual, &self.paths, &self.counts, &mut self.rates);
    }

    /// Checks the solve of `S` against the paths outside it: a link that now
    /// bounds paths of `S` at level `λ` may carry a path outside `S` faster than
    /// `λ`, which then must join `S` (returns whether any did). Only a link that
    /// bounded nothing before, or whose level fell, can: every path crossing a
    /// bounding link is at most its level. Returns `None` when the local solve
    /// cannot stand on its own: a path of `S` was blocked, or got less than
    /// `floor` (then the whole tail is solved).
    fn check(&mut self, fabric: &Fabric, floor: f64) -> Option<bool> {
        self.check_stamp = self.check_stamp.wrapping_add(1);
        if self.check_stamp == 0 {
            self.checked.iter_mut().for_each(|s| *s = 0);
            self.check_stamp = 1;
        }
        let before = self.set.len();
        for j in 0..self.paths.len() {
            let (p, r) = (self.paths[j], self.rates[j]);
            if r <= 0.0 {
                // Blocked by a link the paths outside `S` fill (bounded
                // elsewhere, in a tie): they join.
                if !self.unblock(fabric, p) {
                    return None;
                }
                continue;
            }
            if r < floor {
                return None;
            }
            let l = self.mm.bottleneck(p)?;
            let li = l as usize;
            if self.checked[li] == self.check_stamp {
                continue;
            }
            self.checked[li] = self.check_stamp;
            if !self.held[li].is_empty() && r >= self.level[li] {
                continue;
            }
            self.scanned += self.members[li].len() as u64;
            for k in 0..self.members[li].len() {
                let q = self.members[li][k];
                if !self.in_set[q as usize] && self.rate[q as usize] > r {
                    self.enter(q);
                }
            }
        }
        Some(self.set.len() > before)
    }

    /// For a path of `S` the solve blocked: the paths outside `S` on each link
    /// of it they fill join `S`. False when there are none (then the local
    /// solve cannot stand).
    fn unblock(&mut self, fabric: &Fabric, p: PathId) -> bool {
        let before = self.set.len();
        for &l in fabric.path(p) {
            let li = l as usize;
            let cap = fabric.capacities[li];
            if cap - self.used[li] > coflowkit_model::CAPACITY_EPS * cap {
                continue;
            }
            for k in 0..self.members[li].len() {
                let q = self.members[li][k];
                self.enter(q);
            }
        }
        self.set.len() > before
    }

    /// A new stamp for the search's `seen` (one per call).
    fn stamp_next(&mut self) {
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            self.seen.iter_mut().for_each(|s| *s = 0);
            self.stamp = 1;
        }
    }

    /// Every path of the solution at or above `floor` joins `S` (the tail).
    fn take_whole_tail(&mut self, v: &NonClairvoyantView, floor: f64) {
        for &p in v.active_paths {
            if self.count[p as usize] > 0 && self.rate[p as usize] >= floor {
                self.enter(p);
            }
        }
    }

    fn add_member(&mut self, fabric: &Fabric, p: PathId) {
        let s0 = fabric.path_start(p);
        for (h, &l) in fabric.path(p).iter().enumerate() {
            let m = &mut self.members[l as usize];
            self.slot[s0 + h] = m.len() as u32;
            m.push(p);
        }
    }

    fn remove_member(&mut self, fabric: &Fabric, p: PathId) {
        let s0 = fabric.path_start(p);
        for (h, &l) in fabric.path(p).iter().enumerate() {
            let at = self.slot[s0 + h] as usize;
            let m = &mut self.members[l as usize];
            m.swap_remove(at);
            if let Some(&q) = m.get(at) {
                let h2 = fabric.path(q).iter().position(|&x| x == l).expect("a member crosses its link");
                self.slot[fabric.path_start(q) + h2] = at as u32;
            }
        }
    }

    /// Makes `l` path `p`'s bottleneck (`NONE`: none).
    fn set_neck(&mut self, p: PathId, l: u32) {
        let i = p as usize;
        let old = self.neck[i];
        if old == l {
            return;
        }
        if old != NONE {
            let at = self.neck_slot[i] as usize;
            let h = &mut self.held[old as usize];
            h.swap_remove(at);
            if let Some(&q) = h.get(at) {
                self.neck_slot[q as usize] = at as u32;
            }
        }
        if l != NONE {
            let h = &mut self.held[l as usize];
            self.neck_slot[i] = h.len() as u32;
            h.push(p);
        }
        self.neck[i] = l;
    }

    /// Grows `S` and solves it until no path outside it is hurt (`check`).
    /// False when the local solve cannot stand on its own or passes its budget
    /// (then the whole tail must be solved).
    fn solve_locally(&mut self, v: &NonClairvoyantView, floor: f64) -> bool {
        let budget = LOCAL_BUDGET * v.active_paths.len() as u64 + 64;
        let mut from = 0;
        let mut work = 0u64;
        self.scanned = 0;
        loop {
            self.search(v.fabric, from, floor);
            from = self.set.len();
            if work + self.set.len() as u64 > budget {
                return false;
            }
            self.take(v.fabric);
            self.solve_set(v);
            work += self.paths.len() as u64;
            match self.check(v.fabric, floor) {
                Some(false) => return true,
                Some(true) if work + self.scanned / 4 <= budget => {}
                _ => return false,
            }
        }
    }

    /// Puts the solve of `S` into the solution and lists the rates that moved.
    fn commit(&mut self, v: &NonClairvoyantView, out: &mut Decision) {
        let fabric = v.fabric;
        for j in 0..self.paths.len() {
            let (p, r, n) = (self.paths[j], self.rates[j], self.counts[j]);
            for &l in fabric.path(p) {
                self.used[l as usize] += n as f64 * r;
            }
            let l = self.mm.bottleneck(p).unwrap_or(NONE);
            self.set_neck(p, l);
            if l != NONE {
                self.level[l as usize] = r;
            }
        }
        for j in 0..self.set.len() {
            let p = self.set[j];
            let i = p as usize;
            let n = v.path_count[i];
            let was = self.old_count[j];
            self.in_set[i] = false;
            if n == 0 {
                self.rate[i] = 0.0;
                if was > 0 {
                    self.remove_member(fabric, p);
                }
                self.set_neck(p, NONE);
                self.count[i] = 0;
                out.path_rates.push((p, 0.0));
                continue;
            }
            if was == 0 {
                self.add_member(fabric, p);
            }
            self.count[i] = n;
        }
        for (&p, &r) in self.paths.iter().zip(&self.rates) {
            self.rate[p as usize] = r;
        }
        for j in 0..self.set.len() {
            let p = self.set[j];
            let (n, r) = (v.path_count[p as usize], self.rate[p as usize]);
            if n > 0 && r != self.old_rate[j] {
                out.path_rates.push((p, r));
            }
        }
    }
}

impl NonClairvoyantPolicy for Fair {
    /// Max-min fair rates, solved again only where a change can reach (see the
    /// module docs): the paths that changed, then every path at or above the
    /// restart level bounded by a link they cross, and so on; a path outside
    /// that set stands when the links it shares with the set still let it keep
    /// its rate (`check`). Otherwise, or when the local solve cannot stand on
    /// its own, the whole tail is solved.
    fn decide(&mut self, v: &NonClairvoyantView, out: &mut Decision) {
        self.grow(v);
        let Some(floor) = self.restart_level(v) else {
            return;
        };
        self.set.clear();
        self.old_count.clear();
        self.old_rate.clear();
        self.taken = 0;
        self.stamp_next();
        for &p in v.changed_paths {
            self.enter(p);
        }
        let whole = !self.solve_locally(v, floor);
        if whole {
            self.take_whole_tail(v, floor);
            self.take(v.fabric);
            self.solve_set(v);
            self.tail_solves += 1;
        } else {
            self.local_solves += 1;
        }
        self.commit(v, out);
    }

    fn path_mode(&self) -> bool {
        true
    }
}

pub const SPEC: PolicySpec = PolicySpec {
    name: "fair",
    info: Info::NonClairvoyant,
    knows: "",
    summary: "per-flow max-min fairness (TCP-like)",
    rule: "max-min fair rates over all active flows, coflows ignored (TCP-like)",
    paper: "per-flow fairness baseline of the coflow papers, e.g. Chowdhury, Zhong, Stoica, SIGCOMM'14 (Varys)",
    params: &[],
    needs: &[],
    build: |_| non_clairvoyant(Fair::default()),
    example_ccts: [0.10175, 0.03125, 0.0625],
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::{close, Case};

    fn decide(f: &mut Fair, c: &Case, in_force: &mut Vec<f64>) -> Vec<f64> {
        let mut d = Decision::default();
        d.reset(c.flow_path.len());
        f.decide(&c.non_clairvoyant(), &mut d);
        c.flow_rates(&d, in_force)
    }

    #[test]
    fn shares_each_bottleneck_per_flow_not_per_coflow() {
        // C = 12. Coflow 0: two flows 0→2 (x0, x1); coflow 1: one flow 1→2 (x2).
        // down2: x0 + x1 + x2 ≤ 12 → 4 each (per flow, so coflow 0 gets 8).
        let c = Case::new(
            3,
            12.0,
            &[
                (0, 0, 2, 9.0, 0.0),
                (0, 0, 2, 9.0, 0.0),
                (1, 1, 2, 9.0, 0.0),
            ],
        );
        close(&decide(&mut Fair::default(), &c, &mut vec![]), &[4.0, 4.0, 4.0]);
    }

    #[test]
    fn a_departure_below_the_lowest_level_keeps_the_paths_under_it() {
        // C = 1. a: 0→2, b: 1→2, c: 1→3, d: 1→3. Filling: up1 (b, c, d) saturates
        // at 1/3, then down2 gives a 2/3. When d leaves, up1 (b, c) saturates at
        // 1/2 and down2 gives a 1/2: a's rate falls though no flow joined it.
        let mut c = Case::new(
            4,
            1.0,
            &[
                (0, 0, 2, 9.0, 0.0),
                (1, 1, 2, 9.0, 0.0),
                (2, 1, 3, 9.0, 0.0),
                (3, 1, 3, 9.0, 0.0),
            ],
        );
        let mut f = Fair::default();
        let mut in_force = vec![];
        let third = 1.0 / 3.0;
        close(&decide(&mut f, &c, &mut in_force), &[2.0 * third, third, third, third]);
        c.set_active(&[0, 1, 2]);
        close(&decide(&mut f, &c, &mut in_force), &[0.5, 0.5, 0.5, 0.0]);
    }

    #[test]
    fn a_newcomer_shares_a_link_filled_by_a_path_bound_elsewhere() {
        // C = 1. x: 0→1 alone gets 1 and fills both up0 and down1; its
        // bottleneck is up0 (the first of the tie), so down1 bounds nothing.
        // y: 2→1 arrives: solved alone it is blocked at down1, so x (which
        // fills down1) joins the local solve: x = y = 1/2 on down1.
        let mut c = Case::new(3, 1.0, &[(0, 0, 1, 9.0, 0.0), (1, 2, 1, 9.0, 0.0)]);
        let mut f = Fair::default();
        let mut in_force = vec![];
        c.set_active(&[]);
        c.set_active(&[0]);
        close(&decide(&mut f, &c, &mut in_force), &[1.0, 0.0]);
        c.set_active(&[0, 1]);
        close(&decide(&mut f, &c, &mut in_force), &[0.5, 0.5]);
        assert_eq!((f.local_solves, f.tail_solves), (2, 0));
    }

    #[test]
    fn incremental_solutions_equal_fresh_ones_over_random_changes() {
        // 40 flows on a 6-port big switch of capacity 1; 300 random steps, each
        // adding or removing a few flows (sometimes 8).
        for seed in [12345u64, 7, 99] {
            kept_equals_fresh(coflowkit_model::Fabric::big_switch(6, 1.0).unwrap(), 40, 300, seed);
        }
    }

    /// Random flows on `fabric` toggled at random, a few at a time: the kept
    /// policy must give, at every step, what a fresh one gives.
    fn kept_equals_fresh(fabric: coflowkit_model::Fabric, n: u32, steps: usize, seed: u64) {
        let ports = fabric.ports();
        let mut seed = seed;
        let mut next = move || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) as u32
        };
        let flows: Vec<(u32, u32, u32, f64, f64)> = (0..n)
            .map(|i| {
                let s = next() % ports;
                let d = (s + 1 + next() % (ports - 1)) % ports;
                (i, s, d, 9.0, 0.0)
            })
            .collect();
        let mut c = Case::on(fabric, &flows);
        let mut on: Vec<bool> = (0..n).map(|_| next() % 2 == 0).collect();
        let mut kept = Fair::default();
        let mut in_force = vec![];
        decide(&mut kept, &c, &mut in_force);
        for step in 0..steps {
            let burst = if next() % 10 == 0 { 8 } else { 1 + next() % 3 };
            for _ in 0..burst {
                let f = (next() % n) as usize;
                on[f] = !on[f];
            }
            let active: Vec<u32> = (0..n).filter(|&f| on[f as usize]).collect();
            c.set_active(&active);
            let got = decide(&mut kept, &c, &mut in_force);
            let mut fresh_case = c.clone();
            fresh_case.changed_paths = fresh_case.active_paths.clone();
            let want = decide(&mut Fair::default(), &fresh_case, &mut vec![]);
            for (g, w) in got.iter().zip(&want) {
                assert!((g - w).abs() <= 1e-9 * w.abs().max(1.0), "step {step}: {got:?} vs {want:?}");
            }
        }
        assert!(
            kept.tail_solves * 20 <= kept.local_solves,
            "local solves fell back {} times in {}",
            kept.tail_solves,
            kept.local_solves
        );
    }

    #[test]
    fn incremental_solutions_equal_fresh_ones_on_fat_trees() {
        // k = 4 (16 hosts): host links 1, fabric links 0.6 (so the fabric also
        // bounds rates) and 1 (non-blocking), several seeds.
        for (fabric_cap, seed) in [(0.6, 1u64), (0.6, 2), (1.0, 3), (1.0, 4), (0.3, 5)] {
            let f = coflowkit_model::Fabric::fat_tree(4, 16, 1.0, fabric_cap, coflowkit_model::Placement::Spread, 1).unwrap();
            kept_equals_fresh(f, 80, 400, seed);
        }
    }
}
