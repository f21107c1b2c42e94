//! `fair`: per-flow max-min fairness over all active flows (a model of TCP).
//! Rule: `r = MaxMin(all active flows, C)`. See docs/policies/fair.md.
//!
//! Flows on one path get the same rate, so fair solves over the active paths,
//! weighted by their flow counts, and answers in path mode (the engine serves
//! each path's flows as one group). It is incremental: progressive filling
//! saturates links in increasing order of level, and a path whose flow count
//! drops has rate `r_p`; every saturation below `r_p` involves links and paths it
//! does not touch, so the solution below `λ* = min r_p` over such paths is kept
//! and only the paths at or above `λ*` (the *tail*) are solved again, on what the
//! paths below leave (`C_l − Σ_{p ∋ l, r_p < λ*} n_p r_p`). A path that gains
//! flows can make a link saturate earlier: then everything is solved again. The
//! result is the full solution, up to the order of floating-point sums.

use crate::decision::Decision;
use crate::policy::{Info, NonClairvoyantPolicy};
use crate::spec::{non_clairvoyant, PolicySpec};
use crate::view::NonClairvoyantView;
use coflowkit_alloc::MaxMin;
use coflowkit_model::PathId;

#[derive(Default)]
pub struct Fair {
    mm: MaxMin,
    /// Per path: the flow count and per-flow rate of the solution in force.
    count: Vec<u32>,
    rate: Vec<f64>,
    /// Per link: `Σ n_p r_p` over the paths of the solution in force.
    used: Vec<f64>,
    /// The solution's paths (count > 0) with their rates, by non-decreasing rate
    /// (the solver's freeze order, so no sorting is needed).
    by_rate: Vec<(f64, PathId)>,
    /// Scratch: the tail's paths and their old rates; the paths solved, their
    /// counts and new rates; the residual capacities.
    tail: Vec<PathId>,
    before: Vec<f64>,
    paths: Vec<PathId>,
    counts: Vec<u32>,
    rates: Vec<f64>,
    residual: Vec<f64>,
    /// Per path: whether it is in `tail` (cleared after each call).
    in_tail: Vec<bool>,
}

impl Fair {
    fn grow(&mut self, v: &NonClairvoyantView) {
        let (np, nl) = (v.fabric.num_paths(), v.fabric.num_links());
        if self.count.len() < np {
            self.count.resize(np, 0);
            self.rate.resize(np, 0.0);
            self.in_tail.resize(np, false);
        }
        if self.used.len() < nl {
            self.used.resize(nl, 0.0);
            self.residual.resize(nl, 0.0);
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

    /// Takes the paths at or above `level` out of the solution (they are solved
    /// again) and lists the tail in `self.tail`, each with its old rate in
    /// `self.before`: those in the solution, then the paths new to it.
    fn take_tail(&mut self, v: &NonClairvoyantView, level: f64) {
        self.tail.clear();
        self.before.clear();
        let keep = self.by_rate.partition_point(|&(r, _)| r < level);
        for &(r, p) in &self.by_rate[keep..] {
            let n = self.count[p as usize] as f64;
            for &l in v.fabric.path(p) {
                self.used[l as usize] -= n * r;
            }
            self.count[p as usize] = 0;
            self.rate[p as usize] = 0.0;
            self.in_tail[p as usize] = true;
            self.tail.push(p);
            self.before.push(r);
        }
        self.by_rate.truncate(keep);
        if self.by_rate.is_empty() {
            // Nothing is kept: start the link sums afresh (no rounding drift).
            self.used.iter_mut().for_each(|u| *u = 0.0);
        }
        // Paths new to the solution (they gained flows, so the level is 0 and
        // every old path is in the tail already).
        for &p in v.changed_paths {
            let i = p as usize;
            if self.count[i] == 0 && v.path_count[i] > 0 && !self.in_tail[i] {
                self.in_tail[i] = true;
                self.tail.push(p);
                self.before.push(0.0);
            }
        }
    }

    /// Solves the tail's paths that have flows on what the kept paths leave, and
    /// puts them into the solution.
    fn solve_tail(&mut self, v: &NonClairvoyantView) {
        self.paths.clear();
        self.counts.clear();
        for &p in &self.tail {
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
        for ((&p, &n), &r) in self.paths.iter().zip(&self.counts).zip(&self.rates) {
            self.count[p as usize] = n;
            self.rate[p as usize] = r;
            for &l in v.fabric.path(p) {
                self.used[l as usize] += n as f64 * r;
            }
        }
        // Append the tail by rate: the paths the solver left at 0 (blocked), then
        // those it froze, in order. Every tail rate is at least the restart level
        // (see the module docs), so the whole list stays sorted; a rounding hair
        // below it, or a solve with no filling (one path), sorts the list instead.
        let start = self.by_rate.len();
        let rate = &self.rate;
        self.by_rate.extend(self.paths.iter().filter(|&&p| rate[p as usize] == 0.0).map(|&p| (0.0, p)));
        self.by_rate.extend(self.mm.frozen_paths().map(|p| (rate[p as usize], p)));
        let sorted = self.by_rate.len() - start == self.paths.len()
            && self.by_rate.windows(2).skip(start.saturating_sub(1)).all(|w| w[0].0 <= w[1].0);
        if !sorted {
            self.by_rate.truncate(start);
            self.by_rate.extend(self.paths.iter().map(|&p| (rate[p as usize], p)));
            self.by_rate.sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        }
    }
}

impl NonClairvoyantPolicy for Fair {
    fn decide(&mut self, v: &NonClairvoyantView, out: &mut Decision) {
        self.grow(v);
        let Some(level) = self.restart_level(v) else {
            return;
        };
        self.take_tail(v, level);
        self.solve_tail(v);
        // Report the tail paths whose rate changed, and those left empty.
        for (&p, &old) in self.tail.iter().zip(&self.before) {
            self.in_tail[p as usize] = false;
            let new = self.rate[p as usize];
            if new != old || v.path_count[p as usize] == 0 {
                out.path_rates.push((p, new));
            }
        }
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
    fn incremental_solutions_equal_fresh_ones_over_random_changes() {
        // 40 flows on 6 ports of mixed capacity 1; 300 random steps, each adding or
        // removing a few flows. A kept policy must give what a fresh one does.
        let n = 40u32;
        let mut seed = 12345u64;
        let mut next = move || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) as u32
        };
        let flows: Vec<(u32, u32, u32, f64, f64)> = (0..n)
            .map(|i| {
                let s = next() % 6;
                let d = (s + 1 + next() % 5) % 6;
                (i, s, d, 9.0, 0.0)
            })
            .collect();
        let mut c = Case::new(6, 1.0, &flows);
        let mut on: Vec<bool> = (0..n).map(|_| next() % 2 == 0).collect();
        let mut kept = Fair::default();
        let mut in_force = vec![];
        decide(&mut kept, &c, &mut in_force);
        for step in 0..300 {
            for _ in 0..1 + next() % 3 {
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
                assert!((g - w).abs() <= 1e-12, "step {step}: {got:?} vs {want:?}");
            }
        }
    }
}
