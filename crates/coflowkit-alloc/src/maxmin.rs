//! Weighted max-min fairness by progressive filling, with flows aggregated by path.
//!
//! The system solved for one group (notation of the crate docs):
//!
//! ```text
//!   maximise the sorted vector of per-flow rates x_i (lexicographically), subject to
//!   Σ_{i ∋ l} w_i · x_i ≤ c_l   for every link l
//! ```
//!
//! Progressive filling: the fair share of link `l` is `s_l = c'_l / W_l` where `c'_l`
//! is its capacity left by frozen entities and `W_l` the weight of unfrozen entities
//! crossing it. The link with the smallest share saturates first; its entities freeze
//! at that share. Each round costs a scan of the group's live links, so a group
//! costs `O(E·h + L_g²)` for `E` entities with paths of `h` links and `L_g` links
//! touched; only the links the group uses are touched.

use crate::avail;
use coflowkit_model::{Fabric, LinkId, PathId};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// `path_item` marker of a path with a saturated link.
const BLOCKED: u32 = u32::MAX;

/// Max-min solver with scratch space reused across calls (no allocation in steady state).
#[derive(Default)]
pub struct MaxMin {
    epoch: u32,
    path_stamp: Vec<u32>,
    path_item: Vec<u32>,
    item_path: Vec<PathId>,
    item_w: Vec<f64>,
    item_rate: Vec<f64>,
    item_frozen: Vec<bool>,
    /// Per entity: the link whose saturation froze it.
    item_link: Vec<LinkId>,
    link_stamp: Vec<u32>,
    link_rem: Vec<f64>,
    link_w: Vec<f64>,
    link_deg: Vec<u32>,
    link_start: Vec<u32>,
    link_items: Vec<u32>,
    touched: Vec<u32>,
    /// Entities in the order they froze (rates never decrease along it).
    order: Vec<u32>,
    live: Vec<u32>,
    link_pos: Vec<u32>,
    link_ver: Vec<u32>,
    heap: BinaryHeap<Reverse<u128>>,
    /// Per link, for the links the last solve touched: what the group took.
    link_used: Vec<f64>,
    /// Per link: `epoch` when the last solve's filling saturated it (bounded a rate).
    link_tight: Vec<u32>,
    /// The path of the last solve when it took the one-path shortcut, and its rate.
    lone: Option<(PathId, f64, LinkId)>,
}

/// Groups touching more links than this fill with a heap, fewer with a scan (both
/// pick the same link every round, so the rates are identical).
const HEAP_ABOVE_LINKS: usize = 512;

/// A heap entry: a share (bytes/s per unit of weight), a touched position and a
/// version, packed so that integer order is `(share by f64::total_cmp, position,
/// version)` (the share's bits made monotone as `total_cmp` does).
pub(crate) fn entry(share: f64, k: u32, ver: u32) -> u128 {
    let b = share.to_bits();
    let key = if b >> 63 == 1 { !b } else { b | 1 << 63 };
    (key as u128) << 64 | (k as u128) << 32 | ver as u128
}

/// The share, position and version of [`entry`]'s value.
pub(crate) fn unpack(e: u128) -> (f64, u32, u32) {
    let key = (e >> 64) as u64;
    let b = if key >> 63 == 1 {
        key & !(1 << 63)
    } else {
        !key
    };
    (f64::from_bits(b), (e >> 32) as u32, e as u32)
}

impl MaxMin {
    pub fn new() -> Self {
        Self::default()
    }

    fn reserve(&mut self, fabric: &Fabric) {
        let np = fabric.num_paths();
        if self.path_stamp.len() < np {
            self.path_stamp.resize(np, 0);
            self.path_item.resize(np, 0);
        }
        let nl = fabric.num_links();
        if self.link_stamp.len() < nl {
            self.link_stamp.resize(nl, 0);
            self.link_rem.resize(nl, 0.0);
            self.link_w.resize(nl, 0.0);
            self.link_deg.resize(nl, 0);
            self.link_start.resize(nl, 0);
            self.link_pos.resize(nl, 0);
            self.link_ver.resize(nl, 0);
            self.link_used.resize(nl, 0.0);
            self.link_tight.resize(nl, 0);
        }
    }

    fn next_epoch(&mut self) {
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.path_stamp.iter_mut().for_each(|s| *s = 0);
            self.link_stamp.iter_mut().for_each(|s| *s = 0);
            self.link_tight.iter_mut().for_each(|s| *s = 0);
            self.epoch = 1;
        }
    }

    /// The distinct open paths of the last [`MaxMin::solve`] or
    /// [`MaxMin::solve_counted`] in the order they froze, so by non-decreasing
    /// rate (paths crossing a saturated link, rate 0, are not listed; neither is a
    /// lone path, which is not filled).
    pub fn frozen_paths(&self) -> impl Iterator<Item = PathId> + '_ {
        self.order.iter().map(|&i| self.item_path[i as usize])
    }

    /// What the last solve took from link `l` (0 for a link it did not touch): the
    /// solve set `residual[l] = max(residual[l] − took(l), 0)`, bit for bit.
    pub fn took(&self, fabric: &Fabric, l: u32) -> f64 {
        match self.lone {
            Some((p, r, _)) if r > 0.0 && fabric.path(p).contains(&l) => r,
            Some(_) => 0.0,
            None if self.link_stamp.get(l as usize) == Some(&self.epoch) => {
                self.link_used[l as usize]
            }
            None => 0.0,
        }
    }

    /// Whether link `l` bounded a rate in the last solve (it saturated during the
    /// filling, or it is on the path of a one-path solve). A link that did not is
    /// slack: the solve's rates stay the same for any residual on it that is open
    /// and at least [`MaxMin::took`] (up to ties, where only the order of float
    /// sums can change). Each round picks the link of least share; the flows still
    /// unfrozen on a slack link end at or above the current level, so its share
    /// `(c − taken so far) / W ≥ (took − taken so far) / W` never falls below it.
    pub fn tight(&self, fabric: &Fabric, l: u32) -> bool {
        match self.lone {
            Some((p, _, _)) => fabric.path(p).contains(&l),
            None => self.link_tight.get(l as usize) == Some(&self.epoch),
        }
    }

    /// The link that bounded path `p`'s rate in the last solve: the one whose
    /// saturation froze it (for a one-path solve, its first link of least
    /// residual). `None` for a path the solve did not fill (absent, or blocked
    /// by a saturated link).
    pub fn bottleneck(&self, p: PathId) -> Option<LinkId> {
        if let Some((q, _, l)) = self.lone {
            return (q == p).then_some(l);
        }
        let pi = p as usize;
        if self.path_stamp.get(pi) != Some(&self.epoch) {
            return None;
        }
        let it = self.path_item[pi];
        if it == BLOCKED || !self.item_frozen[it as usize] {
            return None;
        }
        Some(self.item_link[it as usize])
    }

    /// Max-min fair per-flow rates for one group of flows (given by their paths) on
    /// the residual capacities, which are reduced accordingly. `rates[i]` is set.
    pub fn solve(
        &mut self,
        fabric: &Fabric,
        residual: &mut [f64],
        paths: &[PathId],
        rates: &mut [f64],
    ) {
        self.solve_inner(fabric, residual, paths, |_| 1.0, rates);
    }

    /// Like [`MaxMin::solve`] for `counts[i]` flows on each (distinct) path
    /// `paths[i]`: `rates[i]` is the per-flow rate of the flows on `paths[i]`.
    /// Costs `O(paths)` however many flows there are.
    pub fn solve_counted(
        &mut self,
        fabric: &Fabric,
        residual: &mut [f64],
        paths: &[PathId],
        counts: &[u32],
        rates: &mut [f64],
    ) {
        debug_assert_eq!(paths.len(), counts.len());
        self.solve_inner(fabric, residual, paths, |i| counts[i] as f64, rates);
    }

    /// Max-min in five steps: aggregate flows by path into entities, find the
    /// links they use, index entities by link, fill, write back.
    fn solve_inner(
        &mut self,
        fabric: &Fabric,
        residual: &mut [f64],
        paths: &[PathId],
        weight: impl Fn(usize) -> f64,
        rates: &mut [f64],
    ) {
        debug_assert_eq!(paths.len(), rates.len());
        self.order.clear();
        self.lone = None;
        self.reserve(fabric);
        self.next_epoch();
        if paths.is_empty() {
            return;
        }
        if paths.len() == 1 && weight(0) == 1.0 {
            let r = crate::path_avail(fabric, residual, paths[0]);
            let links = fabric.path(paths[0]);
            let least = links
                .iter()
                .copied()
                .reduce(|a, b| {
                    let (x, y) = (residual[a as usize], residual[b as usize]);
                    if y < x {
                        b
                    } else {
                        a
                    }
                })
                .unwrap_or(0);
            rates[0] = r;
            crate::consume(fabric, residual, paths[0], r);
            self.lone = Some((paths[0], r, least));
            return;
        }
        let n_items = self.aggregate(fabric, residual, paths, weight);
        if n_items == 0 {
            rates.iter_mut().for_each(|r| *r = 0.0);
            return;
        }
        self.item_rate.clear();
        self.item_rate.resize(n_items, 0.0);
        self.item_frozen.clear();
        self.item_frozen.resize(n_items, false);
        self.item_link.clear();
        self.item_link.resize(n_items, 0);
        self.order.clear();
        self.touch_links(fabric, residual);
        self.index_by_link(fabric);
        // Progressive filling: each round saturates the link with the smallest
        // share (ties: the link touched first, a deterministic order) and freezes
        // its entities.
        if self.touched.len() > HEAP_ABOVE_LINKS {
            self.fill_with_heap(fabric);
        } else {
            self.fill_with_scan(fabric);
        }
        self.write_back(residual, paths, rates);
    }

    /// Step 1: aggregates flows by path into entities (`item_path`, `item_w`) and
    /// returns how many. A path crossing a saturated link gets rate 0 at once and
    /// takes no part in the filling (in priority max-min most flows of
    /// low-priority groups are in this case).
    fn aggregate(
        &mut self,
        fabric: &Fabric,
        residual: &[f64],
        paths: &[PathId],
        weight: impl Fn(usize) -> f64,
    ) -> usize {
        let ep = self.epoch;
        self.item_path.clear();
        self.item_w.clear();
        for (i, &p) in paths.iter().enumerate() {
            let pi = p as usize;
            if self.path_stamp[pi] != ep {
                self.path_stamp[pi] = ep;
                let open = fabric
                    .path(p)
                    .iter()
                    .all(|&l| avail(residual, &fabric.capacities, l as usize) > 0.0);
                if open {
                    self.path_item[pi] = self.item_path.len() as u32;
                    self.item_path.push(p);
                    self.item_w.push(0.0);
                } else {
                    self.path_item[pi] = BLOCKED;
                }
            }
            let it = self.path_item[pi];
            if it != BLOCKED {
                self.item_w[it as usize] += weight(i);
            }
        }
        self.item_path.len()
    }

    /// Step 2: the links the entities use (`touched`, in order of first use), with
    /// their residual, total weight and degree.
    fn touch_links(&mut self, fabric: &Fabric, residual: &[f64]) {
        let ep = self.epoch;
        self.touched.clear();
        for i in 0..self.item_path.len() {
            for &l in fabric.path(self.item_path[i]) {
                let li = l as usize;
                if self.link_stamp[li] != ep {
                    self.link_stamp[li] = ep;
                    self.touched.push(l);
                    self.link_rem[li] = avail(residual, &fabric.capacities, li);
                    self.link_w[li] = 0.0;
                    self.link_deg[li] = 0;
                }
                self.link_w[li] += self.item_w[i];
                self.link_deg[li] += 1;
            }
        }
    }

    /// Step 3: the link → entities adjacency (CSR over the touched links).
    fn index_by_link(&mut self, fabric: &Fabric) {
        let mut acc = 0u32;
        for &l in &self.touched {
            let li = l as usize;
            self.link_start[li] = acc;
            acc += self.link_deg[li];
            self.link_deg[li] = 0;
        }
        self.link_items.clear();
        self.link_items.resize(acc as usize, 0);
        for i in 0..self.item_path.len() {
            for &l in fabric.path(self.item_path[i]) {
                let li = l as usize;
                let at = self.link_start[li] + self.link_deg[li];
                self.link_items[at as usize] = i as u32;
                self.link_deg[li] += 1;
            }
        }
    }

    /// Step 5: each flow's rate (its entity's), and what the entities use of
    /// every touched link, taken from `residual`.
    fn write_back(&mut self, residual: &mut [f64], paths: &[PathId], rates: &mut [f64]) {
        for (r, &p) in rates.iter_mut().zip(paths) {
            let it = self.path_item[p as usize];
            *r = if it == BLOCKED {
                0.0
            } else {
                self.item_rate[it as usize]
            };
        }
        for &l in &self.touched {
            let li = l as usize;
            let (a, b) = (
                self.link_start[li] as usize,
                (self.link_start[li] + self.link_deg[li]) as usize,
            );
            let used: f64 = self.link_items[a..b]
                .iter()
                .map(|&i| self.item_w[i as usize] * self.item_rate[i as usize])
                .sum();
            self.link_used[li] = used;
            residual[li] = (residual[li] - used).max(0.0);
        }
    }

    /// Freezes the unfrozen entities of saturated link `li` at `level`, takes their
    /// rates from the links they cross (bumping those links' versions, which the
    /// heap reads) and returns how many froze.
    fn freeze(&mut self, fabric: &Fabric, li: usize, level: f64) -> usize {
        let (a, b) = (
            self.link_start[li] as usize,
            (self.link_start[li] + self.link_deg[li]) as usize,
        );
        let mut frozen = 0;
        self.link_tight[li] = self.epoch;
        for k in a..b {
            let i = self.link_items[k] as usize;
            if self.item_frozen[i] {
                continue;
            }
            self.item_frozen[i] = true;
            self.item_link[i] = li as LinkId;
            self.order.push(i as u32);
            frozen += 1;
            self.item_rate[i] = level;
            let w = self.item_w[i];
            for &m in fabric.path(self.item_path[i]) {
                let mi = m as usize;
                self.link_rem[mi] -= w * level;
                self.link_w[mi] -= w;
                self.link_ver[mi] = self.link_ver[mi].wrapping_add(1);
            }
        }
        frozen
    }

    /// Progressive filling by a linear scan of the live links per round: cheapest
    /// when a group touches few links (the big switch).
    fn fill_with_scan(&mut self, fabric: &Fabric) {
        self.live.clear();
        self.live.extend_from_slice(&self.touched);
        let mut level: f64 = 0.0;
        while !self.live.is_empty() {
            let mut best = 0;
            let mut best_share = f64::INFINITY;
            for (k, &l) in self.live.iter().enumerate() {
                let li = l as usize;
                let sh = self.link_rem[li] / self.link_w[li];
                if sh < best_share {
                    best_share = sh;
                    best = k;
                }
            }
            let li = self.live[best] as usize;
            level = level.max(best_share);
            self.freeze(fabric, li, level);
            // Drop links with no unfrozen entity left (the saturated one included).
            let (rem_w, live) = (&self.link_w, &mut self.live);
            live.retain(|&l| rem_w[l as usize] > 0.5);
        }
    }

    /// Progressive filling with the shares in a heap keyed by (share, touched
    /// position). A freeze at level ℓ ≤ s_m only raises the share of the other
    /// links m it crosses ((c − w·ℓ)/(W − w) ≥ c/W), so an old entry is a lower
    /// bound: an entry whose link's version changed since it was pushed is put
    /// back with the link's current share when it reaches the top. The first
    /// current entry on top is then the smallest share, ties to the smallest
    /// position: exactly the link the scan picks, at O(log) per round; it pays
    /// off when a group touches thousands of links (large FatTrees).
    fn fill_with_heap(&mut self, fabric: &Fabric) {
        let mut entries = std::mem::take(&mut self.heap).into_vec();
        entries.clear();
        for (k, &l) in self.touched.iter().enumerate() {
            let li = l as usize;
            self.link_pos[li] = k as u32;
            self.link_ver[li] = 0;
            entries.push(Reverse(entry(
                self.link_rem[li] / self.link_w[li],
                k as u32,
                0,
            )));
        }
        self.heap = BinaryHeap::from(entries); // heapify: O(links)
        let mut unfrozen = self.item_frozen.len();
        let mut level: f64 = 0.0;
        while unfrozen > 0 {
            let Some(Reverse(e)) = self.heap.pop() else {
                break;
            };
            let (best_share, k, ver) = unpack(e);
            let li = self.touched[k as usize] as usize;
            if self.link_w[li] <= 0.5 {
                continue;
            }
            if ver != self.link_ver[li] {
                self.heap.push(Reverse(entry(
                    self.link_rem[li] / self.link_w[li],
                    k,
                    self.link_ver[li],
                )));
                continue;
            }
            level = level.max(best_share);
            unfrozen -= self.freeze(fabric, li, level);
        }
    }

    /// Priority max-min: `paths` holds the groups one after another, group `g` ending
    /// at `group_ends[g]` (exclusive). Group 1 gets max-min rates on the residual
    /// capacity, group 2 on what is left, and so on.
    pub fn priority(
        &mut self,
        fabric: &Fabric,
        residual: &mut [f64],
        paths: &[PathId],
        group_ends: &[usize],
        rates: &mut [f64],
    ) {
        let mut start = 0;
        for &end in group_ends {
            self.solve(fabric, residual, &paths[start..end], &mut rates[start..end]);
            start = end;
        }
        debug_assert_eq!(start, paths.len());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bigswitch(ports: u32, cap: f64) -> (Fabric, Vec<f64>) {
        let f = Fabric::big_switch(ports, cap).unwrap();
        let r = f.capacities.clone();
        (f, r)
    }

    fn close(a: &[f64], b: &[f64]) {
        assert_eq!(a.len(), b.len());
        for (x, y) in a.iter().zip(b) {
            assert!((x - y).abs() <= 1e-9 * y.abs().max(1.0), "{a:?} vs {b:?}");
        }
    }

    #[test]
    fn heap_entries_order_as_total_cmp_then_position() {
        let shares = [-1.5, -0.0, 0.0, 1e-300, 0.25, 3.0, f64::INFINITY];
        for (i, &a) in shares.iter().enumerate() {
            assert_eq!(unpack(entry(a, 7, 9)), (a, 7, 9));
            for &b in &shares[i + 1..] {
                assert!(entry(a, 5, 0) < entry(b, 0, 0), "{a} before {b}");
            }
        }
        assert!(entry(0.5, 1, 9) < entry(0.5, 2, 0));
    }

    #[test]
    fn bottlenecks_are_the_links_that_froze_each_path() {
        // C = 10 on a 4-port big switch (up l = l, down l = 4 + l). a: 0→1,
        // b: 2→1, c: 2→3, d: 2→3. up2 carries b, c, d: share 10/3 < down1's
        // 10/2, so b, c, d freeze at up2 (10/3); then a takes down1's rest.
        let (mut f, mut res) = bigswitch(4, 10.0);
        let p = [
            f.route(0, 1, 0).unwrap(),
            f.route(2, 1, 0).unwrap(),
            f.route(2, 3, 0).unwrap(),
        ];
        let mut r = [0.0; 3];
        let mut mm = MaxMin::new();
        mm.solve_counted(&f, &mut res, &p, &[1, 1, 2], &mut r);
        close(&r, &[20.0 / 3.0, 10.0 / 3.0, 10.0 / 3.0]);
        assert_eq!(mm.bottleneck(p[0]), Some(4 + 1));
        assert_eq!(mm.bottleneck(p[1]), Some(2));
        assert_eq!(mm.bottleneck(p[2]), Some(2));
        // A one-path solve: its link of least residual (the first on a tie).
        let mut res = f.capacities.clone();
        res[4 + 3] = 4.0;
        mm.solve(&f, &mut res, &[p[2]], &mut [0.0]);
        assert_eq!(mm.bottleneck(p[2]), Some(4 + 3));
        assert_eq!(mm.bottleneck(p[0]), None);
    }

    #[test]
    fn two_flows_share_one_link_equally() {
        // x0 + x1 ≤ 10 (down1), each alone elsewhere → x0 = x1 = 5.
        let (mut f, mut res) = bigswitch(3, 10.0);
        let p = [f.route(0, 1, 0).unwrap(), f.route(2, 1, 0).unwrap()];
        let mut r = [0.0; 2];
        MaxMin::new().solve(&f, &mut res, &p, &mut r);
        close(&r, &[5.0, 5.0]);
        assert!(res[3 + 1].abs() < 1e-12);
    }

    #[test]
    fn the_classic_parking_lot() {
        // up0: x0 + x1 ≤ 10; down1: x0 + x2 + x3 ≤ 12; up2: x2 ≤ 10; up3: x3 ≤ 10.
        // down1 share 4 < up0 share 5 → x0 = x2 = x3 = 4; then up0 leaves 6 → x1 = 6.
        let (mut f, mut res) = bigswitch(4, 10.0);
        let dn1 = 4 + 1;
        res[dn1] = 12.0;
        f.capacities[dn1] = 12.0;
        let p = [
            f.route(0, 1, 0).unwrap(),
            f.route(0, 2, 0).unwrap(),
            f.route(2, 1, 0).unwrap(),
            f.route(3, 1, 0).unwrap(),
        ];
        let mut r = [0.0; 4];
        let mut mm = MaxMin::new();
        mm.solve(&f, &mut res, &p, &mut r);
        close(&r, &[4.0, 6.0, 4.0, 4.0]);
        close(&[res[0], res[dn1]], &[0.0, 0.0]);
        // down1 and then up0 bounded rates; up2, up3 and down2 did not. Taken:
        // up0 4 + 6, down1 12, up2 4, up3 4, down2 6; nothing on up1.
        let (up, dn) = (|p: u32| p, |p: u32| 4 + p);
        let tight: Vec<bool> = [up(0), dn(1), up(2), up(3), dn(2), up(1)]
            .iter()
            .map(|&l| mm.tight(&f, l))
            .collect();
        assert_eq!(tight, [true, true, false, false, false, false]);
        let took: Vec<f64> = [up(0), dn(1), up(2), up(3), dn(2), up(1)]
            .iter()
            .map(|&l| mm.took(&f, l))
            .collect();
        close(&took, &[10.0, 12.0, 4.0, 4.0, 6.0, 0.0]);
        // A lone flow: every link of its path bounds it, and it takes its rate.
        let mut res = f.capacities.clone();
        let mut r1 = [0.0];
        mm.solve(&f, &mut res, &p[1..2], &mut r1);
        close(&r1, &[10.0]);
        assert!(mm.tight(&f, up(0)) && mm.tight(&f, dn(2)) && !mm.tight(&f, dn(1)));
        close(&[mm.took(&f, up(0)), mm.took(&f, dn(1))], &[10.0, 0.0]);
    }

    #[test]
    fn flows_on_the_same_path_aggregate_with_weights() {
        // Three flows up0→down1 (weight 3) and one up2→down1: 4x ≤ 10 → x = 2.5.
        let (mut f, mut res) = bigswitch(3, 10.0);
        let a = f.route(0, 1, 0).unwrap();
        let b = f.route(2, 1, 0).unwrap();
        let p = [a, b, a, a];
        let mut r = [0.0; 4];
        MaxMin::new().solve(&f, &mut res, &p, &mut r);
        close(&r, &[2.5; 4]);
    }

    #[test]
    fn counted_paths_equal_repeated_paths() {
        // Three flows on up0→down1 and one on up2→down1, given as counts.
        let (mut f, mut res) = bigswitch(3, 10.0);
        let a = f.route(0, 1, 0).unwrap();
        let b = f.route(2, 1, 0).unwrap();
        let mut r = [0.0; 2];
        MaxMin::new().solve_counted(&f, &mut res, &[a, b], &[3, 1], &mut r);
        close(&r, &[2.5, 2.5]);
        assert!(res[4].abs() < 1e-12);
        // One path with 4 flows alone: 10 / 4 each (not the single-flow shortcut).
        let mut res = f.capacities.clone();
        let mut r = [0.0];
        MaxMin::new().solve_counted(&f, &mut res, &[a], &[4], &mut r);
        close(&r, &[2.5]);
    }

    #[test]
    fn priority_groups_fill_in_order() {
        // Group 1: up0→down1. Group 2: up0→down2 and up1→down1 (both blocked by group 1).
        // Group 3: up1→down2 gets the full 10.
        let (mut f, mut res) = bigswitch(3, 10.0);
        let p = [
            f.route(0, 1, 0).unwrap(),
            f.route(0, 2, 0).unwrap(),
            f.route(1, 1, 0).unwrap(),
            f.route(1, 2, 0).unwrap(),
        ];
        let mut r = [0.0; 4];
        MaxMin::new().priority(&f, &mut res, &p, &[1, 3, 4], &mut r);
        close(&r, &[10.0, 0.0, 0.0, 10.0]);
    }

    #[test]
    fn solver_reuse_across_groups_and_fabrics_is_clean() {
        let (mut f, mut res) = bigswitch(3, 10.0);
        let p = [f.route(0, 1, 0).unwrap(), f.route(2, 1, 0).unwrap()];
        let mut mm = MaxMin::new();
        let mut r = [0.0; 2];
        for _ in 0..3 {
            res.copy_from_slice(&f.capacities);
            mm.solve(&f, &mut res, &p, &mut r);
            close(&r, &[5.0, 5.0]);
        }
    }
}

#[cfg(test)]
mod property {
    use super::*;
    use coflowkit_model::Pcg32;

    /// For random systems: no link above capacity, and every flow has a bottleneck:
    /// a saturated link on which no flow has a larger rate (the max-min condition).
    #[test]
    fn random_systems_are_feasible_and_max_min_fair() {
        let mut g = Pcg32::new(2024, 1);
        for case in 0..300 {
            let ports = 2 + g.below(6);
            let mut f = Fabric::big_switch(ports, 1.0).unwrap();
            for c in f.capacities.iter_mut() {
                *c = 1.0 + g.below(20) as f64;
            }
            let n = 1 + g.below(25) as usize;
            let paths: Vec<PathId> = (0..n)
                .map(|_| f.route(g.below(ports), g.below(ports), 0).unwrap())
                .collect();
            let mut res = f.capacities.clone();
            let mut r = vec![0.0; n];
            MaxMin::new().solve(&f, &mut res, &paths, &mut r);
            let mut load = vec![0.0; f.num_links()];
            for (i, &p) in paths.iter().enumerate() {
                assert!(r[i] >= 0.0);
                for &l in f.path(p) {
                    load[l as usize] += r[i];
                }
            }
            for l in 0..f.num_links() {
                assert!(
                    load[l] <= f.capacities[l] * (1.0 + 1e-9),
                    "case {case}: link {l} over capacity"
                );
                assert!((res[l] - (f.capacities[l] - load[l]).max(0.0)).abs() < 1e-9);
            }
            for (i, &p) in paths.iter().enumerate() {
                let has_bottleneck = f.path(p).iter().any(|&l| {
                    let l = l as usize;
                    let saturated = load[l] >= f.capacities[l] * (1.0 - 1e-9);
                    let biggest = paths
                        .iter()
                        .enumerate()
                        .filter(|(_, &q)| f.path(q).contains(&(l as u32)))
                        .all(|(j, _)| r[j] <= r[i] * (1.0 + 1e-9) + 1e-12);
                    saturated && biggest
                });
                assert!(
                    has_bottleneck,
                    "case {case}: flow {i} has no bottleneck: {r:?}"
                );
            }
        }
    }
}
