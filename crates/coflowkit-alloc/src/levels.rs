//! [`LevelMaxMin`]: max-min fairness over paths, solved at the level of links.
//!
//! In a max-min solution every path's rate is the level at which the first of
//! its links saturates in progressive filling (its *bottleneck*), so the
//! solution is a level per bottleneck link and, per path, which link that is.
//! This solver keeps exactly that across calls:
//!
//! * per path its flow count and its *group* (the link it is assigned to);
//! * per group `b` and per link `l` the flows of `b`'s paths that cross `l`,
//!   `W(b, l)` (a sparse matrix kept by row and by column), and per link the
//!   flows crossing it, `N_l = Σ_b W(b, l)`.
//!
//! A solve is progressive filling over links, not paths. Link `l`'s share is
//! `(c_l − frozen load on l) / (unfrozen flows on l)`; the link with the smallest
//! share saturates at level `λ`; its own group freezes at `λ` by its row
//! (`O(links the group crosses)`, whatever its number of paths), and the paths
//! of any other unfrozen group that cross it move into its group and freeze
//! there one by one (a *switch*: the only per-path work). So a solve costs the
//! matrix's entries plus the switches, and the paths that change rate are the
//! members of the groups whose level moved, named once per group.
//!
//! The assignment never has to be right beforehand: a path's group is one of its
//! own links, and whichever of its links saturates first freezes it (in its
//! group, or by a switch). A new path starts in its link of lowest level from
//! the last solve, which is almost always where it ends.
//!
//! The rates are those of [`crate::MaxMin`] on the same counts up to the order
//! of float sums (the frozen load of a link adds `W(b, l)·λ_b` per group, not
//! per path); ties between links (equal shares) may assign a path to either,
//! at the same rate.

use crate::avail;
use crate::maxmin::{entry, unpack};
use coflowkit_model::{Fabric, LinkId, PathId};
use std::cmp::Reverse;
use std::collections::binary_heap::PeekMut;
use std::collections::{BinaryHeap, HashMap};
use std::hash::{BuildHasherDefault, Hasher};

/// No group (the path has no flows).
const NONE: u32 = u32::MAX;

/// A multiplicative hash for the `(group, link)` keys of the matrix.
#[derive(Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        // The product's low bits depend only on the key's low bits (the
        // link), and the table indexes buckets by the low bits: fold the
        // high half in.
        self.0 ^ (self.0 >> 32)
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

type KeyMap = HashMap<u64, u32, BuildHasherDefault<KeyHasher>>;

/// Link `l`'s bit in a path's signature (one of 64, spread by a
/// multiplicative hash so that a path's neighbouring link ids differ).
fn link_bit(l: LinkId) -> u64 {
    1 << ((l as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 58)
}

/// One non-zero `W(b, l)`: its group, weight and positions in `row[b]` and
/// `col[l]`.
#[derive(Clone, Copy)]
struct Entry {
    group: u32,
    w: u32,
    rpos: u32,
    cpos: u32,
}

/// Max-min over paths kept as bottleneck groups (see the module docs).
#[derive(Default)]
pub struct LevelMaxMin {
    // Per path.
    count: Vec<u32>,
    group: Vec<u32>,
    gpos: Vec<u32>,
    // Per group (a link id).
    members: Vec<Vec<PathId>>,
    /// Per group, beside `members`, each member's link signature
    /// ([`link_bit`] of each of its links): the scan for the members that
    /// cross a saturated link reads the path only where its bit is set.
    sigs: Vec<Vec<u64>>,
    /// Per group its entries `(link, W(b, l))`, inline for the freeze's
    /// sequential read (each entry's index in `ents` is in `row_ent`).
    row: Vec<Vec<(u32, u32)>>,
    row_ent: Vec<Vec<u32>>,
    level: Vec<f64>,
    // Per link.
    col: Vec<Vec<u32>>,
    ncross: Vec<u32>,
    /// Flows over every path.
    total: u64,
    /// The links with flows (each one's position in `on_pos`).
    on: Vec<u32>,
    on_pos: Vec<u32>,
    // The matrix.
    ents: Vec<Entry>,
    free: Vec<u32>,
    at: KeyMap,
    // Scratch of a solve.
    fl: Vec<f64>,
    uw: Vec<f64>,
    frozen: Vec<u32>,
    stamp: u32,
    heap: BinaryHeap<Reverse<u128>>,
    switching: Vec<u32>,
    moving: Vec<PathId>,
    /// The groups whose level moved in the last solve, and the paths that
    /// changed group in it.
    pub changed_groups: Vec<u32>,
    pub switched: Vec<PathId>,
    /// Heap entries popped stale, over all solves (for profiles).
    pub stale_pops: u64,
    // Restarts ([`LevelMaxMin::solve_kept`]).
    /// The groups of the last solve in the order they froze (so by level).
    order: Vec<u32>,
    /// The last solve's `fl` (less what left since) and `uw` are current.
    kept: bool,
    /// A path gained flows since the last solve (a whole solve is needed).
    gained: bool,
    /// The lowest level of a group that lost flows since the last solve.
    restart_at: f64,
    /// Restarts since the last whole solve (bounds the drift of `fl`).
    restarts: u32,
    /// Scratch: links touched by a restart.
    touched: Vec<u32>,
    /// Per link, `cstamp` when it is a candidate of the current restart.
    cand: Vec<u32>,
    cstamp: u32,
    over: Vec<u32>,
    snap: Vec<(f64, f64)>,
    /// Restarts solved again because a filling over the candidates
    /// overloaded another link (for profiles).
    pub fallbacks: u64,
    /// Solves that restarted and that were whole (for profiles).
    pub restarted: u64,
    pub whole: u64,
}

/// A whole solve after this many restarts: each restart takes the tail's
/// contributions off the kept per-link loads, which drift by float rounding.
const RESTARTS_MAX: u32 = 256;

impl LevelMaxMin {
    pub fn new() -> Self {
        Self::default()
    }

    fn grow(&mut self, fabric: &Fabric) {
        let np = fabric.num_paths();
        if self.count.len() < np {
            self.count.resize(np, 0);
            self.group.resize(np, NONE);
            self.gpos.resize(np, 0);
        }
        let nl = fabric.num_links();
        if self.col.len() < nl {
            self.members.resize_with(nl, Vec::new);
            self.sigs.resize_with(nl, Vec::new);
            self.row.resize_with(nl, Vec::new);
            self.row_ent.resize_with(nl, Vec::new);
            self.level.resize(nl, f64::INFINITY);
            self.col.resize_with(nl, Vec::new);
            self.ncross.resize(nl, 0);
            self.on_pos.resize(nl, u32::MAX);
            self.fl.resize(nl, 0.0);
            self.uw.resize(nl, 0.0);
            self.frozen.resize(nl, 0);
            self.cand.resize(nl, 0);
        }
    }

    /// The non-zero entries of the group × link matrix, and the links with
    /// flows (for profiles).
    pub fn size(&self) -> (usize, usize) {
        (self.ents.len() - self.free.len(), self.on.len())
    }

    /// Flows over every path.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Path `p`'s flow count.
    pub fn count(&self, p: PathId) -> u32 {
        self.count.get(p as usize).copied().unwrap_or(0)
    }

    /// Path `p`'s per-flow rate in the last solve (0 without flows).
    pub fn rate_of(&self, p: PathId) -> f64 {
        match self.group.get(p as usize) {
            Some(&g) if g != NONE => self.level[g as usize],
            _ => 0.0,
        }
    }

    /// Path `p`'s group (the link that froze it in the last solve), if it has
    /// flows.
    pub fn group_of(&self, p: PathId) -> Option<LinkId> {
        self.group.get(p as usize).copied().filter(|&g| g != NONE)
    }

    /// The level of group (link) `g` in the last solve.
    pub fn level_of(&self, g: LinkId) -> f64 {
        self.level[g as usize]
    }

    /// The paths of group `g`.
    pub fn members(&self, g: LinkId) -> &[PathId] {
        &self.members[g as usize]
    }

    /// Whether link `l` bounded a rate in the last solve: some path froze
    /// there (its group has members). A link with flows that bounded none is
    /// slack: the levels stand for any residual on it above its load
    /// ([`LevelMaxMin::loads`]), as [`crate::MaxMin::tight`] says of a solve.
    pub fn bounds(&self, l: LinkId) -> bool {
        self.members.get(l as usize).is_some_and(|m| !m.is_empty())
    }

    /// The flows crossing link `l` (over every path).
    pub fn flows_on(&self, l: LinkId) -> u32 {
        self.ncross.get(l as usize).copied().unwrap_or(0)
    }

    /// The links with flows, and per link the load the last solve froze on
    /// it (`Σ_b W(b, l)·λ_b`; read only at the links with flows). A class
    /// solved on a residual leaves `residual − load` to the classes below.
    pub fn loads(&self) -> (&[LinkId], &[f64]) {
        (&self.on, &self.fl)
    }

    /// Adds `dw` (may be negative) to `W(g, l)`, creating or dropping the entry.
    fn add_w(&mut self, g: u32, l: u32, dw: i64) {
        let key = (g as u64) << 32 | l as u64;
        match self.at.get(&key).copied() {
            Some(e) => {
                let w = self.ents[e as usize].w as i64 + dw;
                debug_assert!(w >= 0);
                let rpos = self.ents[e as usize].rpos as usize;
                if w > 0 {
                    self.ents[e as usize].w = w as u32;
                    self.row[g as usize][rpos].1 = w as u32;
                    return;
                }
                self.at.remove(&key);
                let cpos = self.ents[e as usize].cpos;
                self.row[g as usize].swap_remove(rpos);
                let re = &mut self.row_ent[g as usize];
                re.swap_remove(rpos);
                if let Some(&o) = re.get(rpos) {
                    self.ents[o as usize].rpos = rpos as u32;
                }
                let col = &mut self.col[l as usize];
                col.swap_remove(cpos as usize);
                if let Some(&o) = col.get(cpos as usize) {
                    self.ents[o as usize].cpos = cpos;
                }
                self.free.push(e);
            }
            None => {
                debug_assert!(dw > 0);
                let ent = Entry {
                    group: g,
                    w: dw as u32,
                    rpos: self.row[g as usize].len() as u32,
                    cpos: self.col[l as usize].len() as u32,
                };
                let e = match self.free.pop() {
                    Some(e) => {
                        self.ents[e as usize] = ent;
                        e
                    }
                    None => {
                        self.ents.push(ent);
                        (self.ents.len() - 1) as u32
                    }
                };
                self.row[g as usize].push((l, dw as u32));
                self.row_ent[g as usize].push(e);
                self.col[l as usize].push(e);
                self.at.insert(key, e);
            }
        }
    }

    fn join(&mut self, fabric: &Fabric, g: u32, p: PathId) {
        self.group[p as usize] = g;
        self.gpos[p as usize] = self.members[g as usize].len() as u32;
        self.members[g as usize].push(p);
        let sig = fabric.path(p).iter().fold(0, |s, &l| s | link_bit(l));
        self.sigs[g as usize].push(sig);
    }

    fn leave(&mut self, p: PathId) {
        let g = self.group[p as usize];
        let at = self.gpos[p as usize];
        self.sigs[g as usize].swap_remove(at as usize);
        let m = &mut self.members[g as usize];
        m.swap_remove(at as usize);
        if let Some(&o) = m.get(at as usize) {
            self.gpos[o as usize] = at;
        }
        self.group[p as usize] = NONE;
    }

    /// Sets path `p`'s flow count to `n`.
    pub fn set_count(&mut self, fabric: &Fabric, p: PathId, n: u32) {
        self.grow(fabric);
        let pi = p as usize;
        let old = self.count[pi];
        if old == n {
            return;
        }
        self.count[pi] = n;
        let links = fabric.path(p);
        if n > old {
            self.gained = true;
        } else if self.kept {
            // Its group's level is a floor for every change; its flows that
            // left no longer load its links.
            let lg = self.level[self.group[pi] as usize];
            self.restart_at = self.restart_at.min(lg);
            for &l in links {
                self.fl[l as usize] -= (old - n) as f64 * lg;
            }
        }
        if old == 0 {
            // Its link of lowest level in the last solve (the first on ties).
            let lev = &self.level;
            let g = links
                .iter()
                .copied()
                .reduce(|a, b| {
                    if lev[b as usize] < lev[a as usize] {
                        b
                    } else {
                        a
                    }
                })
                .expect("a path crosses at least one link");
            self.join(fabric, g, p);
        }
        let g = self.group[pi];
        let dw = n as i64 - old as i64;
        self.total = (self.total as i64 + dw) as u64;
        for &l in links {
            self.add_w(g, l, dw);
            let c = &mut self.ncross[l as usize];
            let was = *c;
            *c = (*c as i64 + dw) as u32;
            if was == 0 {
                self.on_pos[l as usize] = self.on.len() as u32;
                self.on.push(l);
            } else if *c == 0 {
                let at = self.on_pos[l as usize] as usize;
                self.on.swap_remove(at);
                if let Some(&o) = self.on.get(at) {
                    self.on_pos[o as usize] = at as u32;
                }
                self.on_pos[l as usize] = u32::MAX;
            }
        }
        if n == 0 {
            self.leave(p);
        }
    }

    /// Moves path `p` (with flows) from its group to group `g`.
    fn switch(&mut self, fabric: &Fabric, p: PathId, g: u32) {
        let old = self.group[p as usize];
        let n = self.count[p as usize] as i64;
        for &l in fabric.path(p) {
            self.add_w(old, l, -n);
            self.add_w(g, l, n);
        }
        self.leave(p);
        self.join(fabric, g, p);
    }

    /// Takes `w` flows at `level` off link `l`'s unfrozen weight.
    fn freeze_on(&mut self, l: u32, w: f64, level: f64) {
        let li = l as usize;
        self.fl[li] += w * level;
        self.uw[li] -= w;
    }

    /// Max-min on `residual` (not changed), solved whole: every group with
    /// paths gets its level. Lists the groups whose level moved (bit for bit)
    /// in `changed_groups` and the paths that changed group in `switched`.
    pub fn solve(&mut self, fabric: &Fabric, residual: &[f64]) {
        self.grow(fabric);
        self.changed_groups.clear();
        self.switched.clear();
        self.whole += 1;
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            self.frozen.iter_mut().for_each(|s| *s = 0);
            self.stamp = 1;
        }
        let mut entries = std::mem::take(&mut self.heap).into_vec();
        entries.clear();
        for &l in &self.on {
            let li = l as usize;
            self.fl[li] = 0.0;
            self.uw[li] = self.ncross[li] as f64;
            let c = avail(residual, &fabric.capacities, li);
            entries.push(Reverse(entry(c / self.uw[li], l, 0)));
        }
        self.heap = BinaryHeap::from(entries);
        self.order.clear();
        self.fill(fabric, residual, self.total, 0.0);
        self.restarts = 0;
    }

    /// [`LevelMaxMin::solve`] on the same `residual` as the last solve, from
    /// the lowest level a change can reach: a path that lost flows cannot move
    /// a level below its group's (none of its links saturates below it, and
    /// losing flows only raises their shares), so the groups frozen below the
    /// lowest such level stand with their loads, and the filling resumes
    /// there on the links of the groups above it. A path that gained flows,
    /// or `RESTARTS_MAX` restarts in a row, solve whole. The levels are those
    /// of a whole solve up to the order of float sums.
    ///
    /// The filling resumes with only the tail's own group links in its heap
    /// (on a loaded FatTree most links of the tail never saturate: their
    /// flows freeze at other links first), and is checked afterwards: a link
    /// left out that it overloaded would have saturated in the filling over
    /// every link, so the tail is solved again with it (see the body). On a
    /// tie between links a path may keep another bottleneck than a whole
    /// solve would give it, at the same rate.
    pub fn solve_kept(&mut self, fabric: &Fabric, residual: &[f64]) {
        self.grow(fabric);
        if !self.kept || self.gained || self.restarts >= RESTARTS_MAX {
            return self.solve(fabric, residual);
        }
        self.changed_groups.clear();
        self.switched.clear();
        let lam = self.restart_at;
        if lam == f64::INFINITY {
            return; // nothing changed
        }
        self.restarts += 1;
        self.restarted += 1;
        let level = &self.level;
        let k = self.order.partition_point(|&g| level[g as usize] < lam);
        let start = if k > 0 {
            self.level[self.order[k - 1] as usize]
        } else {
            0.0
        };
        // The tail's groups thaw: their loads come off their links. They are
        // the candidates: the links that can saturate if the tail's groups
        // stay what they were.
        self.cstamp = self.cstamp.wrapping_add(1);
        if self.cstamp == 0 {
            self.cand.iter_mut().for_each(|s| *s = 0);
            self.cstamp = 1;
        }
        for &b in &self.order[k..] {
            self.cand[b as usize] = self.cstamp;
        }
        let unfrozen = self.thaw(k);
        // What the tail's links hold thawed, to go back to if the filling
        // must be done again.
        self.snap.clear();
        for &l in &self.touched {
            self.snap.push((self.fl[l as usize], self.uw[l as usize]));
        }
        self.heap_candidates(fabric, residual);
        self.fill(fabric, residual, unfrozen, start);
        // A link outside the candidates that this filling overloaded would
        // have saturated first in a filling over every link (its flows rose
        // past its share): the tail thaws again and is solved with those
        // links among the candidates, then, if that overloads yet another,
        // over every link. A filling that overloads none gives the levels of
        // the filling over every link: a link that saturates there does so
        // with flows still rising through it, which here would have
        // overloaded it. Only ties differ: a left-out link that saturates at
        // exactly a candidate's level keeps no paths here, where the filling
        // over every link may have frozen them at it (the lower id first),
        // at the same level.
        let mut tries = 0;
        loop {
            // Links outside the candidates that the filling overloaded.
            self.over.clear();
            for &l in &self.touched {
                let li = l as usize;
                if self.cand[li] != self.cstamp
                    && self.fl[li] > avail(residual, &fabric.capacities, li)
                {
                    self.over.push(l);
                }
            }
            if self.over.is_empty() {
                break;
            }
            tries += 1;
            self.fallbacks += 1;
            // Back to the thawed state: the tail's groups unfrozen (switches
            // moved flows only between them, so each link's thawed flows are
            // the same) and its links' loads as they were.
            for j in k..self.order.len() {
                self.frozen[self.order[j] as usize] = self.stamp.wrapping_sub(1);
            }
            self.order.truncate(k);
            for (&l, &(fl, uw)) in self.touched.iter().zip(&self.snap) {
                self.fl[l as usize] = fl;
                self.uw[l as usize] = uw;
            }
            let every = tries >= 2;
            let (cand, cs) = (&mut self.cand, self.cstamp);
            let more = if every { &self.touched } else { &self.over };
            for &l in more {
                cand[l as usize] = cs;
            }
            self.heap_candidates(fabric, residual);
            self.fill(fabric, residual, unfrozen, start);
        }
        if tries == 0 {
            return;
        }
        // Both fillings' changes, once each.
        self.changed_groups.sort_unstable();
        self.changed_groups.dedup();
        self.switched.sort_unstable();
        self.switched.dedup();
    }

    /// The heap holds the touched links that are candidates, at their
    /// shares (its buffer kept).
    fn heap_candidates(&mut self, fabric: &Fabric, residual: &[f64]) {
        let mut entries = std::mem::take(&mut self.heap).into_vec();
        entries.clear();
        for &l in &self.touched {
            let li = l as usize;
            if self.cand[li] == self.cstamp {
                entries.push(Reverse(entry(self.share(fabric, residual, li), l, 0)));
            }
        }
        self.heap = BinaryHeap::from(entries);
    }

    /// Thaws the groups of `order[k..]` (their loads come off their links),
    /// truncates the order there and lists in `touched` the links that had
    /// no unfrozen flow; returns the flows thawed.
    fn thaw(&mut self, k: usize) -> u64 {
        let mut unfrozen = 0u64;
        self.touched.clear();
        for j in k..self.order.len() {
            let b = self.order[j];
            let bi = b as usize;
            self.frozen[bi] = self.stamp.wrapping_sub(1);
            let lb = self.level[bi];
            for &(l, w) in &self.row[bi] {
                let li = l as usize;
                if self.uw[li] <= 0.5 {
                    self.touched.push(l);
                }
                self.fl[li] -= w as f64 * lb;
                self.uw[li] += w as f64;
                if l == b {
                    unfrozen += w as u64;
                }
            }
        }
        self.order.truncate(k);
        unfrozen
    }

    /// Link `li`'s share: what is left of it over its unfrozen flows.
    #[inline]
    fn share(&self, fabric: &Fabric, residual: &[f64], li: usize) -> f64 {
        let c = avail(residual, &fabric.capacities, li);
        (c - self.fl[li]).max(0.0) / self.uw[li]
    }

    /// Progressive filling over the links in the heap, from `level`, until the
    /// `unfrozen` flows froze.
    fn fill(&mut self, fabric: &Fabric, residual: &[f64], mut unfrozen: u64, mut level: f64) {
        let st = self.stamp;
        while unfrozen > 0 {
            let Some(mut top) = self.heap.peek_mut() else {
                break;
            };
            let (share, l, _) = unpack(top.0);
            let li = l as usize;
            if self.uw[li] <= 0.5 {
                PeekMut::pop(top);
                continue;
            }
            // Freezes only raise a link's share, and each link has one entry:
            // an entry whose share is no longer the link's is keyed again in
            // place at its share now (one sift; no version to keep per write).
            let c = avail(residual, &fabric.capacities, li);
            let s = (c - self.fl[li]).max(0.0) / self.uw[li];
            if s.to_bits() != share.to_bits() {
                top.0 = entry(s, l, 0);
                self.stale_pops += 1;
                continue;
            }
            PeekMut::pop(top);
            level = level.max(share);
            // Its own group freezes by its row.
            if !self.members[li].is_empty() && self.frozen[li] != st {
                self.frozen[li] = st;
                self.order.push(l);
                if self.level[li].to_bits() != level.to_bits() {
                    self.changed_groups.push(l);
                }
                self.level[li] = level;
                let row = &self.row[li];
                for &(link, w) in row {
                    let mi = link as usize;
                    self.fl[mi] += w as f64 * level;
                    self.uw[mi] -= w as f64;
                    if link == l {
                        unfrozen -= w as u64;
                    }
                }
            }
            if self.uw[li] <= 0.5 {
                continue;
            }
            // Paths of other unfrozen groups cross it: they move into its
            // group and freeze at this level.
            self.switching.clear();
            for &e in &self.col[li] {
                let Entry { group, .. } = self.ents[e as usize];
                if group != l && self.frozen[group as usize] != st {
                    self.switching.push(group);
                }
            }
            if self.frozen[li] != st {
                // The link bounded no path of its own: it gets a level now.
                self.frozen[li] = st;
                self.order.push(l);
                if self.level[li].to_bits() != level.to_bits() {
                    self.changed_groups.push(l);
                }
                self.level[li] = level;
            }
            for j in 0..self.switching.len() {
                let b = self.switching[j];
                self.moving.clear();
                let bit = link_bit(l);
                let bi = b as usize;
                for (&p, &sig) in self.members[bi].iter().zip(&self.sigs[bi]) {
                    if sig & bit != 0 && fabric.path(p).contains(&l) {
                        self.moving.push(p);
                    }
                }
                for k in 0..self.moving.len() {
                    let p = self.moving[k];
                    let n = self.count[p as usize];
                    self.switch(fabric, p, l);
                    self.switched.push(p);
                    for &m in fabric.path(p) {
                        self.freeze_on(m, n as f64, level);
                    }
                    unfrozen -= n as u64;
                }
            }
        }
        // Groups left with no paths keep no level.
        let (members, level) = (&self.members, &mut self.level);
        for &g in &self.changed_groups {
            if members[g as usize].is_empty() {
                level[g as usize] = f64::INFINITY;
            }
        }
        self.changed_groups
            .retain(|&g| !members[g as usize].is_empty());
        self.order.retain(|&g| !members[g as usize].is_empty());
        self.kept = true;
        self.gained = false;
        self.restart_at = f64::INFINITY;
    }

    /// The paths whose rate may have moved in the last solve: the members of
    /// the groups whose level moved, and the paths that switched.
    pub fn moved_paths(&self, out: &mut Vec<PathId>) {
        out.clear();
        for &g in &self.changed_groups {
            out.extend_from_slice(&self.members[g as usize]);
        }
        out.extend_from_slice(&self.switched);
    }
}

#[cfg(test)]
#[path = "levels_tests.rs"]
mod tests;
