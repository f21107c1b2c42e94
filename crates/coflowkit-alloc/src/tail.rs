//! [`TailMaxMin`]: max-min fairness for one group of flows, kept across calls and
//! solved again only from the lowest level a change can reach.
//!
//! Progressive filling saturates links in increasing order of level. When a path
//! loses flows (or all of them) and the residual on the group's links is the same,
//! every saturation below that path's old rate `r_p` involves links it does not
//! cross (its flows would have frozen there, below `r_p`), so the solution below
//! `λ* = min r_p` over such paths stands. Only the paths at or above `λ*` (the
//! *tail*) are solved again, on what the paths below leave, and each gets at least
//! `λ*`. A path that gains flows, or a residual that moved on a link that bounded
//! a rate (or fell to what the group takes there, or below), makes the solve start
//! from scratch. This is `fair`'s incremental rule (policies/fair.rs) for any group
//! a driver solves call after call: a strict-priority class, a priority level.
//! The result is the full solution, up to the order of floating-point sums.
//!
//! Two ways in: [`TailMaxMin::solve`] takes this call's flows (one path per flow)
//! and counts them, `O(flows)`; [`TailMaxMin::solve_delta`] takes only the
//! changes of the per-path flow counts since the last call and answers with the
//! paths whose rate changed, so that a call costs what changed and what is
//! re-solved, never the untouched flows; [`TailMaxMin::solve_chained`] is the
//! delta form for groups solved one after another (strict-priority classes),
//! with input and output residuals kept by the caller and the links where they
//! moved passed along, so that a call never walks every link of the group
//! either. One solver uses one form.

use crate::rate_order::RateOrder;
use crate::reach::NONE;
use crate::{MaxMin, Reach};
use coflowkit_model::{Fabric, PathId, CAPACITY_EPS};

/// The paths just solved (by `mm`) join the rate order at their `rate`:
/// blocked ones (0) first, then in the order they froze, which is by rate
/// but for rounding hairs (so the order's merge finds them sorted), or as
/// listed when the freeze order does not name them all.
fn join_order(order: &mut RateOrder, mm: &MaxMin, paths: &[PathId], rate: &[f64]) {
    let zeros = paths.iter().filter(|&&p| rate[p as usize] == 0.0);
    if zeros.clone().count() + mm.frozen_paths().count() == paths.len() {
        for &p in zeros {
            order.insert(p, 0.0);
        }
        for p in mm.frozen_paths() {
            order.insert(p, rate[p as usize]);
        }
    } else {
        for &p in paths {
            order.insert(p, rate[p as usize]);
        }
    }
    order.settle();
}

/// A moved residual on a link that bounded no rate keeps the solution only when
/// above what the group took there by this relative margin (as in a replay of
/// `CoflowPriority`: near equality a fresh solve could saturate it in a tie).
const SLACK_MARGIN: f64 = 1e-9;

/// Max-min for one group of flows, kept across calls (see the module docs).
#[derive(Default)]
pub struct TailMaxMin {
    mm: MaxMin,
    /// Where a change reaches: tails are solved locally (see [`Reach`]).
    reach: Reach,
    valid: bool,
    /// Per path: flows of the solution in force and their per-flow rate.
    count: Vec<u32>,
    rate: Vec<f64>,
    /// The solution's paths by rate (blocked ones, at 0, first; ties in the
    /// order they froze), with a plain list of them ([`RateOrder`]).
    by_rate: RateOrder,
    /// Per link: `Σ n_p r_p` over the solution's paths, the residual it was
    /// solved on, whether it bounded a rate, and whether the solution uses it
    /// (listed in `links`).
    used: Vec<f64>,
    input: Vec<f64>,
    tight: Vec<bool>,
    on: Vec<bool>,
    links: Vec<u32>,
    /// Per call: each path's flows (stamped), the distinct paths, the paths
    /// solved with their counts and rates.
    newc: Vec<u32>,
    stamp: Vec<u32>,
    epoch: u32,
    list: Vec<PathId>,
    solve_paths: Vec<PathId>,
    solve_counts: Vec<u32>,
    solve_rates: Vec<f64>,
    /// The paths that lost flows (from `restart_level`, the plain form).
    losers: Vec<PathId>,
    /// Calls answered by solving only a tail (or nothing), and from scratch.
    pub tail_solves: u64,
    pub full_solves: u64,
    /// Calls answered by a plain [`MaxMin`] solve, with nothing kept.
    pub plain_solves: u64,
    /// Paths handed to the solver, over all calls (for profiles).
    pub paths_solved: u64,
    /// Delta form ([`TailMaxMin::solve_delta`]): `newc` under a stamp that
    /// never moves holds the current counts, `list` the paths with flows (each
    /// one's position in `list_pos`); per call the paths whose count changed
    /// (`pending`, marked by call in `seen`) and the old rates of the paths
    /// solved again (`prev`, marked in `prev_call`).
    delta_mode: bool,
    /// Per link (delta form): the flows of the group crossing it (`Σ` current
    /// counts), and the lowest rate of a solution path crossing it (infinite
    /// when none), for the restart level of a moved residual.
    nsum: Vec<u32>,
    low: Vec<f64>,
    list_pos: Vec<u32>,
    pending: Vec<PathId>,
    seen: Vec<u32>,
    prev: Vec<f64>,
    prev_call: Vec<u32>,
    calls: u32,
    /// The current window of kept calls: how many, and how many were tails.
    window: (u32, u32),
    /// Calls left to answer plainly, and the length of the next plain stretch.
    plain_left: u32,
    plain_next: u32,
    /// Chained form ([`TailMaxMin::solve_chained`]): the links whose input
    /// may have moved since the last call (`hint`, each once), or any
    /// (`hint_all`); per link a stamp of the links already written to the
    /// output in this call; the links of the solution before a full solve;
    /// scratch for plain solves.
    hint: Vec<u32>,
    hint_all: bool,
    mark: Vec<u32>,
    mark_stamp: u32,
    old_links: Vec<u32>,
    scratch: Vec<f64>,
    /// The last call was answered plainly (its output is not followed).
    after_plain: bool,
}

/// A window of this many kept calls in which under a quarter were tail solves
/// hands over to plain solves for `PLAIN_FIRST` calls (doubled after each
/// further bad window): keeping costs more than it saves when the input moves
/// at almost every call (`baraat`'s heavy coflows on a big switch, under light
/// coflows that change every event). Chosen from counts, never timings; both
/// forms give the same rates up to float sums.
const WINDOW: u32 = 64;
const PLAIN_FIRST: u32 = 1024;
const PLAIN_MAX: u32 = 1 << 16;

impl TailMaxMin {
    pub fn new() -> Self {
        Self::default()
    }

    /// Like [`MaxMin::solve`]: max-min fair per-flow rates for the flows on
    /// `paths` on the residual capacities, which are reduced accordingly.
    pub fn solve(
        &mut self,
        fabric: &Fabric,
        residual: &mut [f64],
        paths: &[PathId],
        rates: &mut [f64],
    ) {
        debug_assert_eq!(paths.len(), rates.len());
        debug_assert!(!self.delta_mode, "a TailMaxMin takes calls of one form");
        if self.plain_left > 0 {
            self.plain_left -= 1;
            self.plain_solves += 1;
            self.valid = false;
            self.mm.solve(fabric, residual, paths, rates);
            return;
        }
        self.count_paths(fabric, paths);
        let level = if self.valid {
            self.restart_level(fabric, residual)
        } else {
            0.0
        };
        if level == f64::INFINITY {
            self.tail_solves += 1;
            self.take_residual(residual); // nothing changed (no path lost flows)
        } else if level > 0.0 {
            self.tail_solves += 1;
            self.solve_tail(fabric, residual, level, false);
            self.take_residual(residual);
        } else {
            self.full_solves += 1;
            self.solve_full(fabric, residual);
        }
        for (r, &p) in rates.iter_mut().zip(paths) {
            *r = self.rate[p as usize];
        }
        self.choose_form(level > 0.0);
    }

    /// Counts a kept call; after a window with under a quarter of tail solves,
    /// the next stretch of calls is answered plainly.
    fn choose_form(&mut self, tail: bool) {
        self.window.0 += 1;
        self.window.1 += tail as u32;
        if self.window.0 < WINDOW {
            return;
        }
        if 4 * self.window.1 < self.window.0 {
            self.plain_next = (2 * self.plain_next).clamp(PLAIN_FIRST, PLAIN_MAX);
            self.plain_left = self.plain_next;
        }
        self.window = (0, 0);
    }

    /// The links the last call may have written in the residual: every link of
    /// the kept solution; `None` after a plain solve (then any link of its
    /// paths). A driver that reuses one residual array puts these back.
    pub fn written_links(&self) -> Option<&[u32]> {
        self.valid.then_some(&self.links[..])
    }

    /// Forgets the solution in force (the next call solves from scratch).
    pub fn clear(&mut self) {
        self.valid = false;
    }

    /// The delta form of [`TailMaxMin::solve`]: `deltas` lists `(path, change)`
    /// of the per-path flow counts since the last call (a path may repeat;
    /// counts never go below zero). Solves on `residual`, reduces it by what the
    /// group takes, and lists in `changed` every path with flows whose per-flow
    /// rate is not, bit for bit, the one it had (a path new to the group counts
    /// as having had 0). [`TailMaxMin::rate_of`] reads any path's rate.
    /// `O(links)` per call: a driver that solves groups one after another call
    /// after call uses [`TailMaxMin::solve_chained`], which costs what moved.
    pub fn solve_delta(
        &mut self,
        fabric: &Fabric,
        residual: &mut [f64],
        deltas: &[(PathId, i32)],
        changed: &mut Vec<(PathId, f64)>,
    ) {
        let mut input = residual.to_vec();
        let mut moved = Vec::new();
        self.solve_chained(
            fabric, &mut input, None, deltas, changed, residual, &mut moved,
        );
    }

    /// The delta form with its input and output kept by the caller (groups in a
    /// chain: a strict-priority class takes what the classes before it leave).
    /// `input` is the residual this group solves on, left as it was; `output`
    /// receives `input` less what the group takes. `moved` lists the links
    /// where `input` may differ from the last call's (`None`: any link), and
    /// the call writes `output` only where it may differ from what the last
    /// call wrote there, listing those links in `moved_out` (each once), or
    /// writes every link and returns false (then any link may have moved). So
    /// a call costs what moved and what is solved again, never a pass over the
    /// group's links. `deltas` and `changed` are as in
    /// [`TailMaxMin::solve_delta`]. A group keeps to one form.
    #[allow(clippy::too_many_arguments)]
    pub fn solve_chained(
        &mut self,
        fabric: &Fabric,
        input: &mut [f64],
        moved: Option<&[u32]>,
        deltas: &[(PathId, i32)],
        changed: &mut Vec<(PathId, f64)>,
        output: &mut [f64],
        moved_out: &mut Vec<u32>,
    ) -> bool {
        debug_assert_eq!(input.len(), output.len());
        changed.clear();
        moved_out.clear();
        self.grow(fabric);
        let np = self.count.len();
        if !self.delta_mode {
            debug_assert!(!self.valid, "a TailMaxMin takes calls of one form");
            self.delta_mode = true;
            self.epoch = 1;
            self.stamp.iter_mut().for_each(|s| *s = 1);
            self.newc.iter_mut().for_each(|n| *n = 0);
        }
        if self.list_pos.len() < np {
            self.list_pos.resize(np, u32::MAX);
            self.seen.resize(np, u32::MAX);
            self.prev.resize(np, 0.0);
            self.prev_call.resize(np, u32::MAX);
        }
        self.calls = self.calls.wrapping_add(1);
        self.apply_deltas(fabric, deltas);
        self.set_hint(moved);
        if std::mem::take(&mut self.after_plain) {
            // A plain call took from links the kept solution built again may
            // not cross: every link is written this time.
            self.hint_all = true;
        }
        if self.plain_left > 0 {
            self.plain_left -= 1;
            self.plain_solves += 1;
            self.after_plain = true;
            let mut work = std::mem::take(&mut self.scratch);
            work.clear();
            work.extend_from_slice(input);
            self.solve_plain(fabric, &mut work, changed);
            output.copy_from_slice(&work);
            self.scratch = work;
            return false;
        }
        if self.list.is_empty() && self.by_rate.is_empty() {
            // The group takes nothing: the input passes through. Its links'
            // inputs are not followed while it is empty, so the next solve
            // starts from scratch.
            self.valid = false;
            return self.pass_through(input, output, moved_out);
        }
        let level = if self.valid {
            self.delta_level(fabric, input)
        } else {
            0.0
        };
        if level > 0.0 {
            // Blocked paths of the solution keep their rate 0 with their new
            // flow counts (they take nothing either way).
            for j in 0..self.pending.len() {
                let p = self.pending[j];
                let pi = p as usize;
                if self.count[pi] > 0 && self.stays_blocked(fabric, p, input) {
                    self.count[pi] = self.flows_now(p);
                }
            }
        }
        let unmoved = |p: &PathId| self.count[*p as usize] == self.flows_now(*p);
        let listed = if level == f64::INFINITY && self.pending.iter().all(unmoved) {
            // Nothing to solve again: no count moved but blocked paths', and
            // no residual moved where it matters.
            self.tail_solves += 1;
            self.reach.begin();
            self.take_chained(fabric, input, output, moved_out)
        } else if level > 0.0 {
            self.tail_solves += 1;
            self.solve_tail(fabric, input, level, true);
            let r = &self.reach;
            for (j, &p) in r.set.iter().enumerate() {
                let pi = p as usize;
                if self.count[pi] > 0 && self.rate[pi].to_bits() != r.old_rate[j].to_bits() {
                    changed.push((p, self.rate[pi]));
                }
            }
            self.take_chained(fabric, input, output, moved_out)
        } else {
            for &p in &self.list {
                self.prev[p as usize] = self.rate[p as usize];
                self.prev_call[p as usize] = self.calls;
            }
            self.full_solves += 1;
            let mut old = std::mem::take(&mut self.old_links);
            old.clear();
            old.extend_from_slice(&self.links);
            self.solve_full(fabric, input);
            for &p in &self.solve_paths {
                let pi = p as usize;
                let old = if self.prev_call[pi] == self.calls {
                    self.prev[pi]
                } else {
                    0.0
                };
                if self.rate[pi].to_bits() != old.to_bits() {
                    changed.push((p, self.rate[pi]));
                }
            }
            let listed = self.after_full(input, output, &old, moved_out);
            self.old_links = old;
            listed
        };
        self.choose_form(level > 0.0);
        listed
    }

    /// Takes this call's `moved` links (each once) as the hint of where the
    /// input moved.
    fn set_hint(&mut self, moved: Option<&[u32]>) {
        self.hint.clear();
        self.hint_all = moved.is_none();
        if let Some(links) = moved {
            self.next_mark();
            for &l in links {
                if self.mark[l as usize] != self.mark_stamp {
                    self.mark[l as usize] = self.mark_stamp;
                    self.hint.push(l);
                }
            }
        }
    }

    /// A fresh stamp for `mark` (the per-call "already written" marks).
    fn next_mark(&mut self) {
        self.mark_stamp = self.mark_stamp.wrapping_add(1);
        if self.mark_stamp == 0 {
            self.mark.iter_mut().for_each(|m| *m = 0);
            self.mark_stamp = 1;
        }
    }

    /// The output is the input where the group takes nothing: on the hint's
    /// links, or on every link.
    fn pass_through(
        &mut self,
        input: &[f64],
        output: &mut [f64],
        moved_out: &mut Vec<u32>,
    ) -> bool {
        if self.hint_all {
            output.copy_from_slice(input);
            return false;
        }
        for &l in &self.hint {
            output[l as usize] = input[l as usize];
        }
        moved_out.extend_from_slice(&self.hint);
        true
    }

    /// Writes one link's output: its input less what the solution takes there
    /// (the input itself off the solution), once per call.
    fn write_out(&mut self, l: u32, input: &[f64], output: &mut [f64], moved_out: &mut Vec<u32>) {
        let li = l as usize;
        if self.mark[li] == self.mark_stamp {
            return;
        }
        self.mark[li] = self.mark_stamp;
        moved_out.push(l);
        output[li] = if self.on[li] {
            self.take_at(li, input[li])
        } else {
            input[li]
        };
    }

    /// [`TailMaxMin::take_residual`] in the chained form: the output moves
    /// where the input moved and where the load moved (the links of the paths
    /// solved again, in `reach.set`); every link once the solution is empty.
    fn take_chained(
        &mut self,
        fabric: &Fabric,
        input: &[f64],
        output: &mut [f64],
        moved_out: &mut Vec<u32>,
    ) -> bool {
        if self.hint_all {
            output.copy_from_slice(input);
            for j in 0..self.links.len() {
                let li = self.links[j] as usize;
                output[li] = self.take_at(li, input[li]);
            }
            return false;
        }
        self.next_mark();
        for j in 0..self.hint.len() {
            self.write_out(self.hint[j], input, output, moved_out);
        }
        for j in 0..self.reach.set.len() {
            let p = self.reach.set[j];
            for &l in fabric.path(p) {
                self.write_out(l, input, output, moved_out);
            }
        }
        if self.by_rate.is_empty() {
            for j in 0..self.links.len() {
                self.write_out(self.links[j], input, output, moved_out);
            }
        }
        true
    }

    /// After a full solve in the chained form (which took its share from
    /// `input` in place on the solution's links): that share goes to `output`
    /// and `input` is put back; the links of the solution before (`old`) and of
    /// the hint pass their input through.
    fn after_full(
        &mut self,
        input: &mut [f64],
        output: &mut [f64],
        old: &[u32],
        moved_out: &mut Vec<u32>,
    ) -> bool {
        if self.hint_all {
            let mut took = std::mem::take(&mut self.scratch);
            took.clear();
            for &l in &self.links {
                let li = l as usize;
                took.push(input[li]);
                input[li] = self.input[li];
            }
            output.copy_from_slice(input);
            for (&l, &x) in self.links.iter().zip(&took) {
                output[l as usize] = x;
            }
            self.scratch = took;
            return false;
        }
        self.next_mark();
        for j in 0..self.links.len() {
            let li = self.links[j] as usize;
            self.mark[li] = self.mark_stamp;
            moved_out.push(li as u32);
            output[li] = input[li];
            input[li] = self.input[li];
        }
        for &l in old.iter().chain(&self.hint) {
            let li = l as usize;
            if self.mark[li] != self.mark_stamp {
                self.mark[li] = self.mark_stamp;
                moved_out.push(l);
                output[li] = input[li];
            }
        }
        true
    }

    /// The delta form answered plainly (see [`TailMaxMin::choose_form`]): one
    /// counted solve of every path with flows, its rates compared with those in
    /// force; nothing is kept for tails.
    fn solve_plain(
        &mut self,
        fabric: &Fabric,
        residual: &mut [f64],
        changed: &mut Vec<(PathId, f64)>,
    ) {
        if self.valid {
            // Leave the kept form; `rate` stays: it holds the rates in force.
            for &p in self.by_rate.paths() {
                self.count[p as usize] = 0;
                self.reach.forget(fabric, p);
            }
            self.by_rate.clear();
            self.forget_links();
            self.valid = false;
        }
        for &p in &self.pending {
            if self.newc[p as usize] == 0 {
                self.rate[p as usize] = 0.0;
            }
        }
        self.solve_paths.clear();
        self.solve_paths.extend_from_slice(&self.list);
        self.solve_counted(fabric, residual);
        for (&p, &r) in self.solve_paths.iter().zip(&self.solve_rates) {
            if self.rate[p as usize].to_bits() != r.to_bits() {
                self.rate[p as usize] = r;
                changed.push((p, r));
            }
        }
    }

    /// Whether the group holds no flows (delta form: after its last call, a
    /// group told no count since then takes nothing, so a chain may pass its
    /// input through without calling it; see [`TailMaxMin::solve_chained`]).
    pub fn holds_nothing(&self) -> bool {
        self.list.is_empty() && self.by_rate.is_empty()
    }

    /// The per-flow rate of path `p` in the solution in force (0 when it has
    /// no flows in the group).
    pub fn rate_of(&self, p: PathId) -> f64 {
        self.rate.get(p as usize).copied().unwrap_or(0.0)
    }

    /// Applies count changes (delta form): `newc` and `list` are brought up to
    /// date, and the paths whose count moved are listed in `pending`.
    fn apply_deltas(&mut self, fabric: &Fabric, deltas: &[(PathId, i32)]) {
        self.pending.clear();
        for &(p, d) in deltas {
            let pi = p as usize;
            for &l in fabric.path(p) {
                let n = &mut self.nsum[l as usize];
                *n = (*n as i64 + d as i64).max(0) as u32;
            }
            if self.seen[pi] != self.calls {
                self.seen[pi] = self.calls;
                self.pending.push(p);
            }
            let n = self.newc[pi] as i64 + d as i64;
            debug_assert!(n >= 0, "path {p}: the flow count would go below zero");
            self.newc[pi] = n.max(0) as u32;
        }
        for &p in &self.pending {
            let pi = p as usize;
            let listed = self.list_pos[pi] != u32::MAX;
            if self.newc[pi] > 0 && !listed {
                self.list_pos[pi] = self.list.len() as u32;
                self.list.push(p);
            } else if self.newc[pi] == 0 && listed {
                let at = self.list_pos[pi] as usize;
                self.list.swap_remove(at);
                if let Some(&q) = self.list.get(at) {
                    self.list_pos[q as usize] = at as u32;
                }
                self.list_pos[pi] = u32::MAX;
            }
        }
    }

    /// Counts this call's flows per path (`newc`, valid where stamped) and lists
    /// the distinct paths in order of first appearance.
    fn count_paths(&mut self, fabric: &Fabric, paths: &[PathId]) {
        self.grow(fabric);
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.stamp.iter_mut().for_each(|s| *s = 0);
            self.epoch = 1;
        }
        self.list.clear();
        for &p in paths {
            let pi = p as usize;
            if self.stamp[pi] != self.epoch {
                self.stamp[pi] = self.epoch;
                self.newc[pi] = 0;
                self.list.push(p);
            }
            self.newc[pi] += 1;
        }
    }

    /// Sizes the per-path and per-link arrays for `fabric`.
    fn grow(&mut self, fabric: &Fabric) {
        self.reach.grow(fabric);
        let (np, nl) = (fabric.num_paths(), fabric.num_links());
        if self.count.len() < np {
            self.by_rate.grow(np);
            self.count.resize(np, 0);
            self.rate.resize(np, 0.0);
            self.newc.resize(np, 0);
            // The delta form's stamp never moves (every count is current).
            let stamp = if self.delta_mode { self.epoch } else { 0 };
            self.stamp.resize(np, stamp);
        }
        if self.used.len() < nl {
            self.used.resize(nl, 0.0);
            self.input.resize(nl, 0.0);
            self.tight.resize(nl, false);
            self.on.resize(nl, false);
            self.nsum.resize(nl, 0);
            self.low.resize(nl, f64::INFINITY);
            self.mark.resize(nl, 0);
        }
    }

    fn flows_now(&self, p: PathId) -> u32 {
        if self.stamp[p as usize] == self.epoch {
            self.newc[p as usize]
        } else {
            0
        }
    }

    /// The lowest old rate of a path that lost flows; 0 when a path gained flows
    /// or a residual moved where it matters; infinite when nothing changed.
    /// The paths that lost flows are listed in `losers`.
    fn restart_level(&mut self, fabric: &Fabric, residual: &[f64]) -> f64 {
        self.losers.clear();
        if self.gained(&self.list) || self.residual_moved(fabric, residual) {
            return 0.0;
        }
        let mut level = f64::INFINITY;
        for &p in self.by_rate.paths() {
            if self.flows_now(p) < self.count[p as usize] {
                level = level.min(self.rate[p as usize]);
                self.losers.push(p);
            }
        }
        level
    }

    /// Whether one of `paths` has more flows now than in the solution.
    fn gained(&self, paths: &[PathId]) -> bool {
        paths
            .iter()
            .any(|&p| self.flows_now(p) > self.count[p as usize])
    }

    /// Whether the residual moved on one of the solution's links where the
    /// solution cannot take it as it is.
    fn residual_moved(&self, fabric: &Fabric, residual: &[f64]) -> bool {
        self.links.iter().any(|&l| {
            let li = l as usize;
            let x = residual[li];
            x.to_bits() != self.input[li].to_bits() && !self.slack(fabric, li, x)
        })
    }

    /// The level from which the solution must be solved again (delta form):
    /// infinite when nothing changed where it matters.
    ///
    /// Below the lowest rate `μ_l` of the solution's paths crossing link `l`,
    /// every flow crossing `l` is still rising, so `l` carries `λ·N_l` at level
    /// `λ` (`N_l` its flows now) and, on a residual `x`, saturates at `x / N_l`;
    /// nothing else about `l` matters below `μ_l`. So for a link whose residual
    /// moved, or that a path gaining flows crosses, filling is unchanged below
    /// `min(μ_l, x / N_l)`; for a path that lost flows, below its old rate (see
    /// the module docs). The solution below the lowest of these stands: a link
    /// that bounded a kept rate `r` has `μ_l ≤ r`, and a path that gained
    /// flows has a rate of at least `μ_l` on each of its links. Paths blocked
    /// by a closed link (rate 0) carry nothing: they count in no `μ_l`, and a
    /// change of their flows matters only when their link opens.
    fn delta_level(&self, fabric: &Fabric, residual: &[f64]) -> f64 {
        let caps = &fabric.capacities;
        let at = |l: usize| {
            let x = residual[l];
            let n = self.nsum[l];
            let sat = if x <= CAPACITY_EPS * caps[l] {
                0.0
            } else if n == 0 {
                f64::INFINITY
            } else {
                x / n as f64
            };
            sat.min(self.low[l])
        };
        let mut level = f64::INFINITY;
        let hit = self.moved_here(fabric, residual);
        for &l in &hit {
            let li = l as usize;
            if self.input[li] <= CAPACITY_EPS * caps[li] {
                return 0.0; // it opens: the flows it blocked rise from 0
            }
            level = level.min(at(li));
        }
        for &p in &self.pending {
            let (now, was) = (self.flows_now(p), self.count[p as usize]);
            if now == was || self.stays_blocked(fabric, p, residual) {
                continue;
            }
            if now < was {
                level = level.min(self.rate[p as usize]);
            } else {
                for &l in fabric.path(p) {
                    level = level.min(at(l as usize));
                }
            }
        }
        level
    }

    /// The solution's links whose residual moved where it matters, among
    /// those the hint names (every link of the solution without one).
    fn moved_here(&self, fabric: &Fabric, residual: &[f64]) -> Vec<u32> {
        let links = if self.hint_all {
            &self.links
        } else {
            &self.hint
        };
        links
            .iter()
            .copied()
            .filter(|&l| {
                let li = l as usize;
                self.on[li] && self.moved_where_it_matters(fabric, li, residual)
            })
            .collect()
    }

    /// Whether the residual on the solution's link `l` moved since it was
    /// solved, and the solution cannot take the new one as it is (the link
    /// was slack, or closed before and after).
    fn moved_where_it_matters(&self, fabric: &Fabric, l: usize, residual: &[f64]) -> bool {
        let x = residual[l];
        x.to_bits() != self.input[l].to_bits()
            && !self.slack(fabric, l, x)
            && !self.closed(fabric, l, residual)
    }

    /// Whether link `l` was closed (no residual to speak of) when last solved,
    /// and still is.
    fn closed(&self, fabric: &Fabric, l: usize, residual: &[f64]) -> bool {
        let zero = CAPACITY_EPS * fabric.capacities[l];
        self.on[l] && self.input[l] <= zero && residual[l] <= zero
    }

    /// Whether path `p` has flows and crosses a link that was closed and still
    /// is: its flows get 0 however many they are, and take nothing.
    fn stays_blocked(&self, fabric: &Fabric, p: PathId, residual: &[f64]) -> bool {
        self.flows_now(p) > 0
            && fabric
                .path(p)
                .iter()
                .any(|&l| self.closed(fabric, l as usize, residual))
    }

    /// Whether link `l`, solved on `input[l]`, may take residual `x` instead: it
    /// bounded no rate, and both are open and above what the group took there.
    fn slack(&self, fabric: &Fabric, l: usize, x: f64) -> bool {
        let zero = CAPACITY_EPS * fabric.capacities[l];
        !self.tight[l]
            && self.input[l] > zero
            && x > zero
            && x > self.used[l] * (1.0 + SLACK_MARGIN)
    }

    /// Forgets what the solution knew of its links (sums, tight marks, lowest
    /// rates) and the list of them.
    fn forget_links(&mut self) {
        for &l in &self.links {
            let li = l as usize;
            self.used[li] = 0.0;
            self.tight[li] = false;
            self.on[li] = false;
            self.low[li] = f64::INFINITY;
        }
        self.links.clear();
    }

    /// Solves every path from scratch.
    fn solve_full(&mut self, fabric: &Fabric, residual: &mut [f64]) {
        for &p in self.by_rate.paths() {
            self.count[p as usize] = 0;
            self.rate[p as usize] = 0.0;
            self.reach.forget(fabric, p);
        }
        self.by_rate.clear();
        self.forget_links();
        for &p in &self.list {
            for &l in fabric.path(p) {
                let li = l as usize;
                if !self.on[li] {
                    self.on[li] = true;
                    self.links.push(l);
                    self.input[li] = residual[li];
                }
            }
        }
        // By link number: the per-call walks over them then read the residual
        // and the per-link tables in memory order.
        self.links.sort_unstable();
        self.solve_paths.clear();
        self.solve_paths.extend_from_slice(&self.list);
        self.solve_and_keep(fabric, residual);
        self.valid = true;
    }

    /// Solves again what the changes since the last call reach, from `level`
    /// up (see [`Reach`]): the paths whose flows changed (in the delta form,
    /// `pending`, new paths included, with `fresh`; otherwise the paths that
    /// lost flows) and, on a link whose residual moved where it matters, every
    /// path at or above `level`; then the paths their links bound, and so on. A
    /// local solve that cannot stand on its own, or costs more than twice the
    /// solution's paths, solves every path at or above `level` instead (the
    /// tail). Kept rates below `level` stand (module docs).
    fn solve_tail(&mut self, fabric: &Fabric, residual: &mut [f64], level: f64, fresh: bool) {
        self.reach.begin();
        let (count, rate) = (&self.count, &self.rate);
        if fresh {
            for &p in &self.pending {
                if self.count[p as usize] == self.flows_now(p) {
                    continue; // unchanged, or blocked with its new count
                }
                self.reach.enter(p, count, rate);
                if self.count[p as usize] == 0 {
                    for &l in fabric.path(p) {
                        let li = l as usize;
                        if !self.on[li] {
                            self.on[li] = true;
                            self.links.push(l);
                            self.input[li] = residual[li];
                        }
                    }
                }
            }
            // A residual moved where it matters (only the delta form gets
            // here with one: the plain form solves from scratch).
            let hit = self.moved_here(fabric, residual);
            for &l in &hit {
                self.reach.enter_members(l, level, count, rate);
            }
        } else {
            for &p in &self.losers {
                self.reach.enter(p, count, rate);
            }
        }
        let (stamp, newc, epoch) = (&self.stamp, &self.newc, self.epoch);
        let now = |p: PathId| {
            if stamp[p as usize] == epoch {
                newc[p as usize]
            } else {
                0
            }
        };
        let budget = 2 * self.by_rate.len() as u64 + 64;
        let local = self.reach.solve_local(
            fabric,
            &mut self.mm,
            residual,
            &mut self.used,
            count,
            rate,
            now,
            level,
            budget,
        );
        if !local {
            let tail = self.by_rate.at_least(level);
            self.reach.solve_tail(
                fabric,
                &mut self.mm,
                residual,
                &mut self.used,
                count,
                rate,
                now,
                tail,
            );
        }
        self.paths_solved += self.reach.paths.len() as u64;
        let r = &self.reach;
        for &p in &r.set {
            self.rate[p as usize] = 0.0;
            self.count[p as usize] = now(p);
        }
        for (&p, &x) in r.paths.iter().zip(&r.rates) {
            self.rate[p as usize] = x;
        }
        // The paths of `S` leave the rate order (a path new to the solution
        // is not in it), and the solved ones join it with their new rates.
        for (&p, &n) in r.set.iter().zip(&r.old_count) {
            let was = self.by_rate.remove(p);
            debug_assert_eq!(was, n > 0, "path {p}: in the order iff it had flows");
        }
        join_order(&mut self.by_rate, &self.mm, &r.paths, &self.rate);
        self.reach.settle(fabric, &self.mm, &mut self.used, now);
        let r = &self.reach;
        for (&p, &x) in r.paths.iter().zip(&r.rates) {
            if x > 0.0 {
                for &l in fabric.path(p) {
                    let low = &mut self.low[l as usize];
                    *low = low.min(x); // a bound from below: see `low`
                }
            }
            let neck = r.neck(p);
            if neck != NONE {
                self.tight[neck as usize] = true;
            }
        }
    }

    /// The solution in force takes its share of `residual` on its links, which
    /// becomes their input.
    fn take_residual(&mut self, residual: &mut [f64]) {
        for j in 0..self.links.len() {
            let li = self.links[j] as usize;
            residual[li] = self.take_at(li, residual[li]);
        }
    }

    /// The solution's link `li` takes its load from input `x`, which it
    /// remembers; returns what is left.
    fn take_at(&mut self, li: usize, x: f64) -> f64 {
        self.input[li] = x;
        if self.by_rate.is_empty() {
            self.used[li] = 0.0; // nothing kept: no rounding drift
        }
        (x - self.used[li].max(0.0)).max(0.0)
    }

    /// One counted max-min of `solve_paths` with the current counts, on
    /// `residual`: `solve_counts` and `solve_rates` hold them afterwards.
    fn solve_counted(&mut self, fabric: &Fabric, residual: &mut [f64]) {
        self.paths_solved += self.solve_paths.len() as u64;
        self.solve_counts.clear();
        let newc = &self.newc;
        self.solve_counts
            .extend(self.solve_paths.iter().map(|&p| newc[p as usize]));
        self.solve_rates.clear();
        self.solve_rates.resize(self.solve_paths.len(), 0.0);
        self.mm.solve_counted(
            fabric,
            residual,
            &self.solve_paths,
            &self.solve_counts,
            &mut self.solve_rates,
        );
    }

    /// Solves `solve_paths` (with this call's counts) on `residual` and puts them
    /// into the solution: rates, link sums, tight links, and the rate order.
    fn solve_and_keep(&mut self, fabric: &Fabric, residual: &mut [f64]) {
        self.solve_counted(fabric, residual);
        for (i, &p) in self.solve_paths.iter().enumerate() {
            let (n, r) = (self.solve_counts[i], self.solve_rates[i]);
            self.count[p as usize] = n;
            self.rate[p as usize] = r;
            let neck = self.mm.bottleneck(p).unwrap_or(NONE);
            self.reach.place(fabric, p, neck, r);
            for &l in fabric.path(p) {
                let li = l as usize;
                self.used[li] += n as f64 * r;
                if r > 0.0 {
                    self.low[li] = self.low[li].min(r);
                }
            }
        }
        for &l in &self.links {
            if self.mm.tight(fabric, l) {
                self.tight[l as usize] = true;
            }
        }
        join_order(&mut self.by_rate, &self.mm, &self.solve_paths, &self.rate);
    }
}

#[cfg(test)]
#[path = "tail_tests.rs"]
mod tests;
