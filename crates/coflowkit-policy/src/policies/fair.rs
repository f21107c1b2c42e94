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
//! * **Where a change reaches** (local solves, [`coflowkit_alloc::Reach`]): the
//!   set solved again grows from the changed paths through the links that bound
//!   them, and is checked against the paths outside it.
//!
//! A local solve does the work where a change reaches, not everything above
//! `λ*`: on `fattree:k=48` a completion re-solves about 200 paths where the
//! tail holds 1,600. Where changes cascade through the whole tail (a loaded
//! `fattree:k=8`), the search and checks cost about 5% more than they save
//! (docs/results/bench/fair-local.md). A local solve whose work passes twice
//! the active paths (`LOCAL_BUDGET`) stops and solves the whole tail.
//!
//! `solver=levels` (and `solver=auto`, the default, where many paths share
//! each link) keeps the solution as bottleneck groups instead
//! ([`coflowkit_alloc::LevelMaxMin`]: a level per link that froze paths, solved
//! by progressive filling over links) and lists the paths of the groups whose
//! level moved (to the engine: the levels that moved and the paths that
//! changed group, served by group). Its sums follow the history of the
//! groups, so it runs only under a driver that takes delta decisions (the
//! engine); any other driver gets the per-path form.

use crate::decision::Decision;
use crate::policy::{Info, NonClairvoyantPolicy};
use crate::spec::{non_clairvoyant, PolicySpec};
use crate::view::NonClairvoyantView;
use crate::params::{ParamSpec, Params};
use crate::policy::AnyPolicy;
use coflowkit_alloc::{LevelMaxMin, MaxMin, Reach};
use coflowkit_model::{ModelError, PathId};

#[derive(Default)]
pub struct Fair {
    mm: MaxMin,
    reach: Reach,
    /// Per path: the flow count and per-flow rate of the solution in force.
    count: Vec<u32>,
    rate: Vec<f64>,
    /// Per link: `Σ n_p r_p` over the paths of the solution in force.
    used: Vec<f64>,
    /// Calls answered by a local solve and by the whole tail (for profiles).
    pub local_solves: u64,
    pub tail_solves: u64,
    /// The bottleneck groups (under delta decisions only; their counts are
    /// kept in step in either form).
    levels: Option<Box<LevelMaxMin>>,
    moved: Vec<PathId>,
    /// The form asked for (`solver`), the form in force, calls since the
    /// last choice, and whether the per-path form's state is current.
    solver: Solver,
    form: Solver,
    since_choice: u32,
    stale: bool,
    /// The active paths, as changed paths when the per-path form starts afresh.
    all: Vec<PathId>,
    /// Calls answered in the group form (for profiles).
    pub level_solves: u64,
}

/// How `fair` keeps its solution between events.
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
pub enum Solver {
    /// Per path, re-solved where a change reaches (`Reach`).
    #[default]
    Reach,
    /// Per bottleneck link (`LevelMaxMin`), served by group.
    Levels,
    /// Chosen from counts: the group form while the active paths outnumber
    /// the links they cross by `GROUPS_ABOVE` (many paths share each
    /// bottleneck), the per-path form once they fall under `PATHS_BELOW`.
    Auto,
}

/// [`Solver::Auto`] takes the group form when active paths reach this many
/// times the links with flows, and leaves it when they fall below the second:
/// on the FB trace, 70-75 paths per link on the big switch and a loaded
/// `fattree:k=8` (where a change moves most rates and a group solve is 16-30x
/// cheaper than a per-path one), under 1 on `fattree:k=48` (where a change
/// reaches a few hundred paths and the per-path local solve is cheaper).
/// Checked every `CHOICE_EVERY` calls; a change of form costs a pass over the
/// active paths.
const GROUPS_ABOVE: usize = 2;
const PATHS_BELOW: usize = 1;
const CHOICE_EVERY: u32 = 256;

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
    /// `fair` keeping its solution with `solver`.
    pub fn new(solver: Solver) -> Self {
        Fair {
            solver,
            form: Solver::Auto, // none chosen yet
            ..Fair::default()
        }
    }

    /// The form for this call: the one asked for, or under `Auto` the one the
    /// counts choose (every `CHOICE_EVERY` calls).
    fn choose(&mut self, v: &NonClairvoyantView, links_on: usize) -> Solver {
        if self.solver != Solver::Auto {
            self.form = self.solver;
            return self.solver;
        }
        self.since_choice += 1;
        if self.since_choice >= CHOICE_EVERY || self.form == Solver::Auto {
            self.since_choice = 0;
            let paths = v.active_paths.len();
            self.form = match self.form {
                Solver::Levels if paths < PATHS_BELOW * links_on => Solver::Reach,
                Solver::Levels => Solver::Levels,
                _ if paths >= GROUPS_ABOVE * links_on.max(1) => Solver::Levels,
                _ => Solver::Reach,
            };
        }
        self.form
    }

    /// The group form: one solve over links (the counts are set), and the
    /// levels that moved and where paths went (or, to a driver that does not
    /// serve groups, the rates of the paths whose rate may have moved).
    /// `moved_all` (entering the form): every active path is told its group.
    fn decide_levels(&mut self, v: &NonClairvoyantView, out: &mut Decision, moved_all: bool) {
        let Some(lm) = self.levels.as_deref_mut() else {
            return;
        };
        if v.changed_paths.is_empty() && !moved_all {
            return;
        }
        self.level_solves += 1;
        lm.solve_kept(v.fabric, &v.fabric.capacities);
        let told = if moved_all {
            v.active_paths
        } else {
            v.changed_paths
        };
        if out.groups_ok {
            for &g in &lm.changed_groups {
                out.group_rates.push((g, lm.level_of(g)));
            }
            for &p in lm.switched.iter().chain(told) {
                if let Some(g) = lm.group_of(p) {
                    out.path_groups.push((p, g));
                }
            }
            return;
        }
        lm.moved_paths(&mut self.moved);
        self.moved.extend_from_slice(told);
        for &p in &self.moved {
            out.path_rates.push((p, lm.rate_of(p)));
        }
    }

    /// Forgets the per-path solution (the group form was in force): the next
    /// per-path call solves every active path from scratch.
    fn forget_reach(&mut self) {
        self.reach = Reach::default();
        self.mm = MaxMin::default();
        self.count.iter_mut().for_each(|c| *c = 0);
        self.rate.iter_mut().for_each(|r| *r = 0.0);
        self.used.iter_mut().for_each(|u| *u = 0.0);
    }

    fn grow(&mut self, v: &NonClairvoyantView) {
        let (np, nl) = (v.fabric.num_paths(), v.fabric.num_links());
        if self.count.len() < np {
            self.count.resize(np, 0);
            self.rate.resize(np, 0.0);
        }
        if self.used.len() < nl {
            self.used.resize(nl, 0.0);
        }
        self.reach.grow(v.fabric);
    }

    /// The level from which the solution must be redone: the lowest old rate of a
    /// path that lost flows, or 0 when a path gained flows (`None`: nothing changed).
    fn restart_level(&self, v: &NonClairvoyantView, changed: &[PathId]) -> Option<f64> {
        let mut level: Option<f64> = None;
        for &p in changed {
            let (old, new) = (self.count[p as usize], v.path_count[p as usize]);
            let l = if new > old { 0.0 } else if new < old { self.rate[p as usize] } else { continue };
            level = Some(level.map_or(l, |x: f64| x.min(l)));
        }
        level
    }

    /// Puts the solve into the solution and lists the rates that moved.
    fn commit(&mut self, v: &NonClairvoyantView, out: &mut Decision) {
        let now = |p: PathId| v.path_count[p as usize];
        self.reach.settle(v.fabric, &self.mm, &mut self.used, now);
        let r = &self.reach;
        for (&p, &x) in r.paths.iter().zip(&r.rates) {
            self.rate[p as usize] = x;
        }
        for (j, &p) in r.set.iter().enumerate() {
            let i = p as usize;
            let n = v.path_count[i];
            self.count[i] = n;
            if n == 0 {
                self.rate[i] = 0.0;
                out.path_rates.push((p, 0.0));
            } else if self.rate[i] != r.old_rate[j] {
                out.path_rates.push((p, self.rate[i]));
            }
        }
    }
}

impl NonClairvoyantPolicy for Fair {
    /// Max-min fair rates, in the form `solver` asks for (the group form only
    /// under delta decisions; see the module docs). The per-path form solves
    /// again only where a change can reach: the paths that changed, then every path at or above the
    /// restart level bounded by a link they cross, and so on; a path outside
    /// that set stands when the links it shares with the set still let it keep
    /// its rate (`check`). Otherwise, or when the local solve cannot stand on
    /// its own, the whole tail is solved.
    fn decide(&mut self, v: &NonClairvoyantView, out: &mut Decision) {
        if self.solver != Solver::Reach && out.delta_ok {
            let lm = self.levels.get_or_insert_with(Box::default);
            for &p in v.changed_paths {
                lm.set_count(v.fabric, p, v.path_count[p as usize]);
            }
            let was = self.form;
            let links_on = lm.size().1;
            match self.choose(v, links_on) {
                Solver::Levels => {
                    let entering = was != Solver::Levels;
                    self.stale = true;
                    return self.decide_levels(v, out, entering);
                }
                _ if self.stale => {
                    // Back to the per-path form: every active path afresh.
                    self.stale = false;
                    self.forget_reach();
                    let mut all = std::mem::take(&mut self.all);
                    all.clear();
                    all.extend_from_slice(v.active_paths);
                    self.decide_reach(v, out, &all);
                    self.all = all;
                    return;
                }
                _ => {}
            }
        }
        self.decide_reach(v, out, v.changed_paths);
    }

    fn path_mode(&self) -> bool {
        true
    }
}

impl Fair {
    /// The per-path form, told the paths whose counts changed.
    fn decide_reach(&mut self, v: &NonClairvoyantView, out: &mut Decision, changed: &[PathId]) {
        self.grow(v);
        let Some(floor) = self.restart_level(v, changed) else {
            return;
        };
        let r = &mut self.reach;
        r.begin();
        for &p in changed {
            r.enter(p, &self.count, &self.rate);
        }
        let budget = LOCAL_BUDGET * v.active_paths.len() as u64 + 64;
        let caps = &v.fabric.capacities;
        let now = |p: PathId| v.path_count[p as usize];
        let (count, rate) = (&self.count, &self.rate);
        let local = r.solve_local(v.fabric, &mut self.mm, caps, &mut self.used, count, rate, now, floor, budget);
        if local {
            self.local_solves += 1;
        } else {
            let tail = v
                .active_paths
                .iter()
                .copied()
                .filter(|&p| count[p as usize] > 0 && rate[p as usize] >= floor);
            r.solve_tail(v.fabric, &mut self.mm, caps, &mut self.used, count, rate, now, tail);
            self.tail_solves += 1;
        }
        self.commit(v, out);
    }
}

pub const PARAMS: &[ParamSpec] = &[ParamSpec {
    name: "solver",
    default: "auto",
    help: "how max-min is kept between events, same rates up to float sums: reach (per path, re-solved where a change reaches), levels (per bottleneck link, served by group; under the engine), auto (levels while the active paths are at least 2x the links with flows, reach below 1x)",
}];

fn build(p: &Params) -> Result<AnyPolicy, ModelError> {
    let solver = match p.choice("solver", &["reach", "levels", "auto"])? {
        "reach" => Solver::Reach,
        "levels" => Solver::Levels,
        _ => Solver::Auto,
    };
    non_clairvoyant(Fair::new(solver))
}

pub const SPEC: PolicySpec = PolicySpec {
    name: "fair",
    info: Info::NonClairvoyant,
    knows: "",
    summary: "per-flow max-min fairness (TCP-like)",
    rule: "max-min fair rates over all active flows, coflows ignored (TCP-like)",
    paper: "per-flow fairness baseline of the coflow papers, e.g. Chowdhury, Zhong, Stoica, SIGCOMM'14 (Varys)",
    params: PARAMS,
    needs: &[],
    build,
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
    fn a_link_left_by_every_path_carries_exactly_nothing() {
        // Capacities 1/3, 1/5, ... make the sums round. Flows leave one at a
        // time (each departure re-solves and adds or takes rates that do not
        // cancel exactly); once all have left, every link's sum is 0, not a
        // rounding residue (which a runtime's solution, kept for weeks, would
        // carry along).
        let flows: Vec<(u32, u32, u32, f64, f64)> =
            (0..12).map(|i| (i, i % 5, (i * 3 + 1) % 6, 9.0, 0.0)).collect();
        let mut c = Case::new(6, 1.0, &flows);
        for (l, cap) in c.fabric.capacities.iter_mut().enumerate() {
            *cap = 1.0 / (3.0 + 2.0 * l as f64);
        }
        let mut f = Fair::default();
        let mut in_force = vec![];
        let mut active: Vec<u32> = (0..12).collect();
        c.set_active(&[]);
        c.set_active(&active);
        decide(&mut f, &c, &mut in_force);
        assert!(f.used.iter().any(|&u| u > 0.0));
        while !active.is_empty() {
            active.remove((active.len() * 7 / 11).min(active.len() - 1));
            c.set_active(&active);
            decide(&mut f, &c, &mut in_force);
        }
        assert!(f.used.iter().all(|&u| u == 0.0), "{:?}", f.used);
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
