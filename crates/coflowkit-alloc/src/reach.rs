//! [`Reach`]: where a change to a max-min solution can reach, so that only
//! that part is solved again (local solves).
//!
//! A max-min solution kept across calls (per path: a flow count `n_p` and a
//! per-flow rate `r_p`; per link: the load `used_l = Σ n_p r_p` of the paths
//! crossing it, on an input residual `c_l`) changes when paths gain or lose
//! flows, or when the input moves. Each path of the solution has a
//! bottleneck, the link whose saturation froze it ([`MaxMin::bottleneck`]);
//! the paths a link bounds all have its *level* as their rate.
//!
//! * The set `S` solved again starts with the changed paths and takes in, for
//!   every link a member of `S` crosses, the paths that link bounds (at or above
//!   the restart level `λ*`: below it the filling is unchanged, see
//!   [`crate::TailMaxMin`]), and so on ([`Reach::search`]).
//! * `S` is solved on what the other paths leave. The result is max-min fair
//!   when every path has a bottleneck: a path outside `S` keeps its own (every
//!   path that link bounds is outside `S`, so its load and input are
//!   unchanged), and a path of `S` has one from the solve unless a path outside
//!   `S` crosses it faster than its new level. That can only happen on a link
//!   that bounded nothing before or whose level fell, so [`Reach::check`] scans
//!   those links' members and brings any such path into `S`, which is solved
//!   again; a path of `S` blocked by a link that paths outside `S` fill (a tie)
//!   brings them in the same way ([`Reach::unblock`]). A path blocked by a link
//!   closed in the input (rate 0, no bottleneck) needs nothing.
//!
//! Used by `fair` (one solution over every active path, on the capacities) and
//! by [`crate::TailMaxMin`] (one group kept across calls, on a residual that
//! higher groups may move). The rates equal a fresh solve's up to the order of
//! floating-point sums (docs/results/bench/fair-local.md).

use crate::MaxMin;
use coflowkit_model::{Fabric, LinkId, PathId, CAPACITY_EPS};

/// "No link": a path with no bottleneck (not in the solution, or blocked).
pub const NONE: u32 = u32::MAX;

/// The links and paths a local solve works on, kept across calls: per link its
/// member paths and the paths it bounds, with its level; per call the set `S`.
#[derive(Default)]
pub struct Reach {
    /// Per link: the solution's paths crossing it; per hop of every interned
    /// path (`Fabric::path_start`), the path's position in its link's list.
    members: Vec<Vec<PathId>>,
    slot: Vec<u32>,
    /// Per link: the paths it bounds and its level (their rate); per path, its
    /// bottleneck and position there.
    held: Vec<Vec<PathId>>,
    level: Vec<f64>,
    neck: Vec<u32>,
    neck_slot: Vec<u32>,
    /// This call's set `S`, in order of entry, with each one's count and rate
    /// in force when it entered; per path whether it is in `S`; how many of `S`
    /// have had their load taken from `used`.
    pub set: Vec<PathId>,
    pub old_count: Vec<u32>,
    pub old_rate: Vec<f64>,
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
    pub paths: Vec<PathId>,
    pub counts: Vec<u32>,
    pub rates: Vec<f64>,
    residual: Vec<f64>,
}

impl Reach {
    /// Sizes the per-path and per-link tables for `fabric`.
    pub fn grow(&mut self, fabric: &Fabric) {
        let (np, nl) = (fabric.num_paths(), fabric.num_links());
        if self.in_set.len() < np {
            self.in_set.resize(np, false);
            self.neck.resize(np, NONE);
            self.neck_slot.resize(np, 0);
        }
        if self.members.len() < nl {
            self.residual.resize(nl, 0.0);
            self.members.resize_with(nl, Vec::new);
            self.held.resize_with(nl, Vec::new);
            self.level.resize(nl, 0.0);
            self.seen.resize(nl, 0);
            self.checked.resize(nl, 0);
        }
        let slots = fabric.path_link_slots();
        if self.slot.len() < slots {
            self.slot.resize(slots, u32::MAX);
        }
    }

    /// Starts a call: `S` is empty.
    pub fn begin(&mut self) {
        self.set.clear();
        self.old_count.clear();
        self.old_rate.clear();
        self.taken = 0;
        self.scanned = 0;
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            self.seen.iter_mut().for_each(|s| *s = 0);
            self.stamp = 1;
        }
    }

    /// Puts path `p` into `S` (once), remembering its count and rate in force.
    pub fn enter(&mut self, p: PathId, count: &[u32], rate: &[f64]) {
        let i = p as usize;
        if !self.in_set[i] {
            self.in_set[i] = true;
            self.set.push(p);
            self.old_count.push(count[i]);
            self.old_rate.push(rate[i]);
        }
    }

    /// Puts into `S` every member of link `l` with a rate of at least `floor`
    /// (its input moved where the solution cannot take it).
    pub fn enter_members(&mut self, l: LinkId, floor: f64, count: &[u32], rate: &[f64]) {
        for k in 0..self.members[l as usize].len() {
            let q = self.members[l as usize][k];
            if rate[q as usize] >= floor {
                self.enter(q, count, rate);
            }
        }
    }

    /// Whether path `p` is in `S`.
    pub fn in_set(&self, p: PathId) -> bool {
        self.in_set[p as usize]
    }

    /// The paths crossing link `l` in the solution.
    pub fn members(&self, l: LinkId) -> &[PathId] {
        &self.members[l as usize]
    }

    /// Grows `S` from its members at `from..`: the paths bounded by a link of
    /// theirs join, when at or above `floor`. A path that only crosses such a
    /// link below its level is bounded elsewhere, where nothing changed;
    /// `check` catches a link whose level falls under it.
    fn search(&mut self, fabric: &Fabric, from: usize, floor: f64, count: &[u32], rate: &[f64]) {
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
                    self.enter(q, count, rate);
                }
            }
        }
    }

    /// Takes the load of the members of `S` not yet taken out of `used`.
    fn take(&mut self, fabric: &Fabric, used: &mut [f64]) {
        for j in self.taken..self.set.len() {
            let u = self.old_count[j] as f64 * self.old_rate[j];
            for &l in fabric.path(self.set[j]) {
                used[l as usize] -= u;
            }
        }
        self.taken = self.set.len();
    }

    /// Solves the members of `S` that have flows (`now`) on what the other
    /// paths leave of `input`, into `paths`, `counts` and `rates`.
    fn solve_set(
        &mut self,
        fabric: &Fabric,
        mm: &mut MaxMin,
        input: &[f64],
        used: &[f64],
        now: &impl Fn(PathId) -> u32,
    ) {
        self.paths.clear();
        self.counts.clear();
        for &p in &self.set {
            let n = now(p);
            if n > 0 {
                self.paths.push(p);
                self.counts.push(n);
                for &l in fabric.path(p) {
                    let li = l as usize;
                    self.residual[li] = (input[li] - used[li]).max(0.0);
                }
            }
        }
        self.rates.clear();
        self.rates.resize(self.paths.len(), 0.0);
        mm.solve_counted(
            fabric,
            &mut self.residual,
            &self.paths,
            &self.counts,
            &mut self.rates,
        );
    }

    /// Checks the solve of `S` against the paths outside it: a link that now
    /// bounds paths of `S` at level `λ` may carry a path outside `S` faster than
    /// `λ`, which then must join `S` (returns whether any did). Only a link that
    /// bounded nothing before, or whose level fell, can: every path crossing a
    /// bounding link is at most its level. Returns `None` when the local solve
    /// cannot stand on its own: a path of `S` was blocked by paths outside it
    /// that cannot be brought in, or got less than `floor`.
    #[allow(clippy::too_many_arguments)]
    fn check(
        &mut self,
        fabric: &Fabric,
        mm: &MaxMin,
        floor: f64,
        input: &[f64],
        used: &[f64],
        count: &[u32],
        rate: &[f64],
    ) -> Option<bool> {
        self.check_stamp = self.check_stamp.wrapping_add(1);
        if self.check_stamp == 0 {
            self.checked.iter_mut().for_each(|s| *s = 0);
            self.check_stamp = 1;
        }
        let before = self.set.len();
        for j in 0..self.paths.len() {
            let (p, r) = (self.paths[j], self.rates[j]);
            if r <= 0.0 {
                if closed(fabric, input, p) {
                    continue; // blocked by the input: rate 0 whatever the others do
                }
                // Blocked by a link the paths outside `S` fill (bounded
                // elsewhere, in a tie): they join.
                if !self.unblock(fabric, p, input, used, count, rate) {
                    return None;
                }
                continue;
            }
            if r < floor {
                return None;
            }
            let l = mm.bottleneck(p)?;
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
                if !self.in_set[q as usize] && rate[q as usize] > r {
                    self.enter(q, count, rate);
                }
            }
        }
        Some(self.set.len() > before)
    }

    /// For a path of `S` the solve blocked: the paths outside `S` on each link
    /// of it they fill join `S`. False when there are none (then the local
    /// solve cannot stand).
    fn unblock(
        &mut self,
        fabric: &Fabric,
        p: PathId,
        input: &[f64],
        used: &[f64],
        count: &[u32],
        rate: &[f64],
    ) -> bool {
        let before = self.set.len();
        for &l in fabric.path(p) {
            let li = l as usize;
            if input[li] - used[li] > CAPACITY_EPS * fabric.capacities[li] {
                continue;
            }
            for k in 0..self.members[li].len() {
                let q = self.members[li][k];
                self.enter(q, count, rate);
            }
        }
        self.set.len() > before
    }

    /// Grows `S` from the paths entered so far and solves it until no path
    /// outside it is hurt (`check`); `count`, `rate` and `used` describe the
    /// solution in force (`used` loses the load of `S`), `now` gives each
    /// path's flows now and `input` the residual solved on. False when the
    /// local solve cannot stand on its own or its work (paths solved, summed
    /// over its rounds, and a quarter of the members its checks scanned) passes
    /// `budget`: then the caller solves the whole tail
    /// ([`Reach::solve_tail`]). `paths`, `counts` and `rates` hold the solve.
    #[allow(clippy::too_many_arguments)]
    pub fn solve_local(
        &mut self,
        fabric: &Fabric,
        mm: &mut MaxMin,
        input: &[f64],
        used: &mut [f64],
        count: &[u32],
        rate: &[f64],
        now: impl Fn(PathId) -> u32,
        floor: f64,
        budget: u64,
    ) -> bool {
        let mut from = 0;
        let mut work = 0u64;
        loop {
            self.search(fabric, from, floor, count, rate);
            from = self.set.len();
            if work + self.set.len() as u64 > budget {
                return false;
            }
            self.take(fabric, used);
            self.solve_set(fabric, mm, input, used, &now);
            work += self.paths.len() as u64;
            match self.check(fabric, mm, floor, input, used, count, rate) {
                Some(false) => return true,
                Some(true) if work + self.scanned / 4 <= budget => {}
                _ => return false,
            }
        }
    }

    /// After a failed [`Reach::solve_local`]: `tail` (every path of the
    /// solution at or above the restart level) joins `S`, which is solved.
    #[allow(clippy::too_many_arguments)]
    pub fn solve_tail(
        &mut self,
        fabric: &Fabric,
        mm: &mut MaxMin,
        input: &[f64],
        used: &mut [f64],
        count: &[u32],
        rate: &[f64],
        now: impl Fn(PathId) -> u32,
        tail: impl Iterator<Item = PathId>,
    ) {
        for p in tail {
            self.enter(p, count, rate);
        }
        self.take(fabric, used);
        self.solve_set(fabric, mm, input, used, &now);
    }

    /// Puts the solve of `S` into the kept structure: each solved path's load
    /// into `used`, its bottleneck (from `mm`) and that link's level; each path
    /// of `S` joins or leaves its links' member lists as it gains its first
    /// flows or loses its last (`now`), and leaves `S`. The caller updates its
    /// own counts and rates from `paths`, `counts`, `rates` and `set`.
    pub fn settle(
        &mut self,
        fabric: &Fabric,
        mm: &MaxMin,
        used: &mut [f64],
        now: impl Fn(PathId) -> u32,
    ) {
        for j in 0..self.paths.len() {
            let (p, r, n) = (self.paths[j], self.rates[j], self.counts[j]);
            for &l in fabric.path(p) {
                used[l as usize] += n as f64 * r;
            }
            let l = mm.bottleneck(p).unwrap_or(NONE);
            self.set_neck(p, l);
            if l != NONE {
                self.level[l as usize] = r;
            }
        }
        for j in 0..self.set.len() {
            let p = self.set[j];
            self.in_set[p as usize] = false;
            let (was, n) = (self.old_count[j], now(p));
            if n == 0 {
                if was > 0 {
                    self.remove_member(fabric, p);
                }
                self.set_neck(p, NONE);
            } else if was == 0 {
                self.add_member(fabric, p);
            }
        }
        // A link with no path left carries nothing: no rounding residue
        // either (a solution kept for weeks, as the runtime's, would
        // otherwise carry it). Checked once every path has joined or left.
        for j in 0..self.set.len() {
            let p = self.set[j];
            if self.old_count[j] > 0 && now(p) == 0 {
                for &l in fabric.path(p) {
                    if self.members[l as usize].is_empty() {
                        used[l as usize] = 0.0;
                    }
                }
            }
        }
    }

    /// Forgets path `p` (it leaves the solution with `count > 0` flows).
    pub fn forget(&mut self, fabric: &Fabric, p: PathId) {
        self.remove_member(fabric, p);
        self.set_neck(p, NONE);
    }

    /// Registers path `p`, solved outside a local solve (from scratch) with
    /// bottleneck `l` (`NONE`: none) at rate `r`, as a member of its links.
    pub fn place(&mut self, fabric: &Fabric, p: PathId, l: u32, r: f64) {
        self.add_member(fabric, p);
        self.set_neck(p, l);
        if l != NONE {
            self.level[l as usize] = r;
        }
    }

    /// The link bounding path `p` in the kept structure (`NONE`: none).
    pub fn neck(&self, p: PathId) -> u32 {
        self.neck[p as usize]
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
                let h2 = fabric
                    .path(q)
                    .iter()
                    .position(|&x| x == l)
                    .expect("a member crosses its link");
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
}

/// Whether path `p` crosses a link closed in `input` (no residual to speak of).
fn closed(fabric: &Fabric, input: &[f64], p: PathId) -> bool {
    fabric
        .path(p)
        .iter()
        .any(|&l| input[l as usize] <= CAPACITY_EPS * fabric.capacities[l as usize])
}
