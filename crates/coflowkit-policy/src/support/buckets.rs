//! Buckets: per coflow, its active flows grouped by the first link and by the last
//! link of their paths, so that a pass that gives flows "what their path leaves"
//! (backfilling) visits only the flows whose first (or last) link is still open.

use crate::support::loads::{mark_finished, refresh, Kept, Sweep, DEAD};
use crate::view::Common;
use coflowkit_alloc::avail;

/// One side of a coflow's buckets: the distinct links, and for bucket `b` the
/// entries (positions in [`Entry::flows`], ascending) of its flows,
/// `items[start[b]..start[b + 1]]`.
#[derive(Default, Clone)]
struct Side {
    links: Vec<u32>,
    start: Vec<u32>,
    items: Vec<u32>,
}

#[derive(Default, Clone)]
struct Entry {
    kept: Kept,
    sides: [Side; 2],
    /// Per entry (position in `kept.flows`): its bucket on each side
    /// (`u32::MAX`: no link).
    bucket: Vec<[u32; 2]>,
    /// Grid form ([`Grid`]), when the entries have it.
    grid: Option<Grid>,
    /// The flows indexed, ascending (`kept.flows` with none marked).
    ids: Vec<u32>,
}

/// Entries that form a grid: runs of `width` consecutive entries share their
/// first-link bucket (a *row*: a sender, on the big switch), and the entry at
/// offset `t` of every run has the same last-link bucket `cols[t]` (a
/// *column*: a receiver). A coflow of the benchmark format, every mapper to
/// every reducer, enumerated mapper-major, is one. A visit then skips a
/// closed row in one step and a closed column in every row at once (a shared
/// next-open-column array), so it costs the rows, the columns and the flows
/// it fills, not every flow behind an open first link.
#[derive(Default, Clone)]
struct Grid {
    width: usize,
    cols: Vec<u32>,
    /// Per last-link bucket: its offsets, `offs[start[b]..start[b + 1]]`.
    start: Vec<u32>,
    offs: Vec<u32>,
}

impl Grid {
    /// The grid form of `bucket` (`n1` last-link buckets), if it has one.
    fn of(bucket: &[[u32; 2]], n1: usize) -> Option<Grid> {
        let n = bucket.len();
        if n < 2 || bucket.iter().any(|b| b[0] == u32::MAX || b[1] == u32::MAX) {
            return None;
        }
        let width = bucket
            .iter()
            .position(|b| b[0] != bucket[0][0])
            .unwrap_or(n);
        if !n.is_multiple_of(width) {
            return None;
        }
        for (j, b) in bucket.iter().enumerate() {
            let (r, t) = (j / width, j % width);
            if b[0] != bucket[r * width][0] || b[1] != bucket[t][1] {
                return None;
            }
        }
        let cols: Vec<u32> = bucket[..width].iter().map(|b| b[1]).collect();
        let mut start = vec![0u32; n1 + 1];
        for &c in &cols {
            start[c as usize + 1] += 1;
        }
        for b in 0..n1 {
            start[b + 1] += start[b];
        }
        let mut fill = start.clone();
        let mut offs = vec![0u32; width];
        for (t, &c) in cols.iter().enumerate() {
            offs[fill[c as usize] as usize] = t as u32;
            fill[c as usize] += 1;
        }
        Some(Grid {
            width,
            cols,
            start,
            offs,
        })
    }
}

impl Grid {
    /// Column bucket `z` closed: its offsets leave every row.
    fn close(&self, next: &mut [u32], z: u32) {
        let z = z as usize;
        for &t in &self.offs[self.start[z] as usize..self.start[z + 1] as usize] {
            next[t as usize] = t + 1;
        }
    }
}

/// The first open offset at or after `t` (`next[t] == t` when `t` is open;
/// path halving keeps the chains short).
fn next_open(next: &mut [u32], mut t: usize) -> usize {
    while next[t] as usize != t {
        let up = next[next[t] as usize];
        next[t] = up;
        t = up as usize;
    }
    t
}

/// Per coflow, its active flows bucketed by first link and by last link, kept
/// across calls. Finished flows stay until they are half of the entries
/// (skipped, and marked once found gone); a coflow that starts flows is bucketed
/// afresh. [`Buckets::visit`] gathers the flows of the side whose open
/// buckets hold fewer flows when they are few, and otherwise walks the
/// coflow's flows, by rows and open columns when they form a grid ([`Grid`]). Residuals only fall during a filling pass, so a flow whose first or
/// last link is saturated when its turn comes gets nothing in that pass:
/// skipping it changes no rate.
#[derive(Default)]
pub struct Buckets {
    entries: Vec<Entry>,
    sweep: Sweep,
    /// Per link: bucket index + 1 during a build (0: none yet).
    slot: Vec<u32>,
    count: Vec<u32>,
    out: Vec<u32>,
    /// Per bucket of the group being visited, on each side: is its link open.
    flags: [Vec<bool>; 2],
    /// Per bucket of the group being visited, on each side: its link's
    /// position among the caps' links (capped visits only).
    cap_at: [Vec<u32>; 2],
    /// Grid walks: the next open offset of each column ([`next_open`]), and
    /// per first-link bucket whether it is closed.
    next: Vec<u32>,
    shut: Vec<bool>,
}

/// A group's room under its caps, one value per link, and its links
/// (`(link, bytes)`, ascending by link), for [`Buckets::visit_capped`].
pub type Room<'a> = (&'a mut [f64], &'a [(u32, f64)]);

impl Buckets {
    /// Once per policy call (see [`Sweep::begin`]).
    /// The flows the driver lists as finished since the previous call are
    /// marked [`DEAD`] in their coflow's entry here, each by a binary search,
    /// so a visit need not walk the coflow to find them (it still does when
    /// the driver lists none: then `dead` and `marked` differ).
    pub fn begin(&mut self, c: &Common) {
        let entries = &mut self.entries;
        self.sweep
            .begin(c, |k| entries[k as usize] = Entry::default());
        for &f in c.finished {
            let Some(e) = entries.get_mut(c.flow_coflow[f as usize] as usize) else {
                continue;
            };
            let kept = &mut e.kept;
            if kept.key.is_some() {
                if let Ok(j) = e.ids.binary_search(&f) {
                    if kept.flows[j] != DEAD {
                        kept.flows[j] = DEAD;
                        kept.marked += 1;
                    }
                }
            }
        }
    }

    fn build(&mut self, c: &Common, g: usize) {
        let grp = c.groups[g];
        let k = grp.coflow as usize;
        let nl = c.fabric.num_links();
        if self.slot.len() < nl {
            self.slot.resize(nl, 0);
        }
        let mut e = std::mem::take(&mut self.entries[k]);
        let flows = &c.active[grp.range()];
        e.bucket.clear();
        e.bucket.resize(flows.len(), [u32::MAX; 2]);
        for (s, side) in e.sides.iter_mut().enumerate() {
            side.links.clear();
            self.count.clear();
            let link = |f: u32| {
                let p = c.fabric.path(c.flow_path[f as usize]);
                if s == 0 {
                    p.first().copied()
                } else {
                    p.last().copied()
                }
            };
            for &f in flows {
                if let Some(l) = link(f) {
                    let b = &mut self.slot[l as usize];
                    if *b == 0 {
                        side.links.push(l);
                        self.count.push(0);
                        *b = side.links.len() as u32;
                    }
                    self.count[*b as usize - 1] += 1;
                }
            }
            side.start.clear();
            side.start.push(0);
            for &n in &self.count {
                let last = *side.start.last().unwrap();
                side.start.push(last + n);
            }
            // Fill: `count[b]` becomes bucket b's next free position.
            self.count.copy_from_slice(&side.start[..side.links.len()]);
            side.items.clear();
            side.items.resize(*side.start.last().unwrap() as usize, 0);
            for (j, &f) in flows.iter().enumerate() {
                if let Some(l) = link(f) {
                    let b = self.slot[l as usize] as usize - 1;
                    e.bucket[j][s] = b as u32;
                    side.items[self.count[b] as usize] = j as u32;
                    self.count[b] += 1;
                }
            }
            for &l in &side.links {
                self.slot[l as usize] = 0;
            }
        }
        e.grid = Grid::of(&e.bucket, e.sides[1].links.len());
        e.ids.clear();
        e.ids.extend_from_slice(flows);
        e.kept
            .reset(flows, (c.coflow_started[k], grp.end - grp.start));
        self.entries[k] = e;
    }

    /// Calls `fill(i, residual)`, in order, for each flow of group `g` (active
    /// position `i`) whose first and last links are open on `residual` when its
    /// turn comes; `fill` may take capacity from `residual`. A bucket's flag is
    /// refreshed after each of its flows, so once a link saturates its remaining
    /// flows cost one check each. When the open buckets of one side hold few
    /// flows they are gathered and sorted instead of walking the group.
    pub fn visit(
        &mut self,
        c: &Common,
        g: usize,
        residual: &mut [f64],
        mut fill: impl FnMut(usize, &mut [f64]),
    ) {
        self.visit_capped(c, g, residual, None, |i, r, _| fill(i, r));
    }

    /// [`Buckets::visit`] under per-link caps of the group as well: `room` is
    /// the room the group has left on each of its links (`links`, ascending, as
    /// [`crate::policies::drf::DrfStage::group_links`]), handed to `fill`,
    /// which may only lower it. A bucket is open when its link has residual
    /// *and* room under the cap: a flow with no room on its first or last link
    /// gets nothing, so skipping it changes no rate (`naive-tradeoff`'s
    /// backfilling, where caps close far more flows than residuals do).
    pub fn visit_capped(
        &mut self,
        c: &Common,
        g: usize,
        residual: &mut [f64],
        room: Option<Room<'_>>,
        mut fill: impl FnMut(usize, &mut [f64], Option<&mut [f64]>),
    ) {
        let grp = c.groups[g];
        let k = grp.coflow as usize;
        if refresh(&mut self.entries, &mut self.sweep, c, g, |e| &mut e.kept) {
            self.build(c, g);
        }
        let caps = &c.fabric.capacities;
        let Buckets {
            entries,
            out,
            flags,
            cap_at,
            next,
            shut,
            ..
        } = self;
        let (mut room, links) = match room {
            Some((h, links)) => (Some(h), links),
            None => (None, &[][..]),
        };
        let Entry {
            sides,
            bucket,
            grid,
            kept:
                Kept {
                    flows,
                    dead,
                    marked,
                    ..
                },
            ..
        } = &mut entries[k];
        let mut counts = [0usize; 2];
        for (s, side) in sides.iter().enumerate() {
            flags[s].clear();
            cap_at[s].clear();
            for (b, &l) in side.links.iter().enumerate() {
                let mut open = avail(residual, caps, l as usize) > 0.0;
                if let Some(h) = room.as_deref() {
                    // A kept bucket may hold only finished flows, on a link
                    // the group no longer crosses: closed.
                    match links.binary_search_by_key(&l, |e| e.0) {
                        Ok(j) => {
                            cap_at[s].push(j as u32);
                            open = open && h[j] > 0.0;
                        }
                        Err(_) => {
                            cap_at[s].push(u32::MAX);
                            open = false;
                        }
                    }
                }
                flags[s].push(open);
                if open {
                    counts[s] += (side.start[b + 1] - side.start[b]) as usize;
                }
            }
        }
        let s = if counts[0] <= counts[1] { 0 } else { 1 };
        let m = counts[s];
        if m == 0 {
            return;
        }
        let gather = m * (1 + m.ilog2() as usize) <= flows.len();
        if gather {
            out.clear();
            let side = &sides[s];
            let mut buckets = 0;
            for (b, _) in flags[s].iter().enumerate().filter(|x| *x.1) {
                let r = side.start[b] as usize..side.start[b + 1] as usize;
                out.extend_from_slice(&side.items[r]);
                buckets += 1;
            }
            if buckets > 1 {
                out.sort_unstable();
            }
        }
        // Entry j, of the flow at active position i.
        // Grid walks: the columns closed before any fill.
        let grid = grid.as_ref().filter(|_| !gather);
        if let Some(gr) = grid {
            next.clear();
            next.extend(0..=gr.width as u32);
            for (z, &open) in flags[1].iter().enumerate() {
                if !open {
                    gr.close(next, z as u32);
                }
            }
            shut.clear();
            shut.extend(flags[0].iter().map(|&open| !open));
        }
        // Entry j, of the flow at active position i; whether its first and
        // last links are open afterwards.
        let mut step = |j: usize, i: usize, residual: &mut [f64]| {
            let [a, z] = bucket[j];
            let open = |f: &[bool], b: u32| f.get(b as usize).copied().unwrap_or(false);
            if open(&flags[0], a) && open(&flags[1], z) {
                fill(grp.start as usize + i, residual, room.as_deref_mut());
                for (side, b) in [(0, a), (1, z)] {
                    let l = sides[side].links[b as usize] as usize;
                    let left = room
                        .as_deref()
                        .is_none_or(|h| h[cap_at[side][b as usize] as usize] > 0.0);
                    flags[side][b as usize] = left && avail(residual, caps, l) > 0.0;
                }
            }
            [open(&flags[0], a), open(&flags[1], z)]
        };
        if *dead != *marked {
            mark_finished(flows, &c.active[grp.range()], marked, |_| {});
        }
        if gather {
            let act = &c.active[grp.range()];
            // Entries come in order, so their active positions do too: each is
            // searched from the last one on, by doubling steps.
            let mut lo = 0;
            for &j in out.iter() {
                let j = j as usize;
                if *dead == 0 {
                    step(j, j, residual);
                } else if flows[j] != DEAD {
                    let i = gallop(act, lo, flows[j]).expect("an unmarked entry is active");
                    step(j, i, residual);
                    lo = i + 1;
                }
            }
        } else if let Some(gr) = grid {
            // Rows in order, each row's open columns in order: the entries a
            // walk would find open, in the same order. A row or a column
            // leaves the walk when its bucket closes (a bucket may be the
            // first link of several rows).
            let w = gr.width;
            let act = &c.active[grp.range()];
            let mut lo = 0;
            for row in 0..flows.len() / w {
                let a = bucket[row * w][0];
                if shut[a as usize] {
                    continue;
                }
                let mut t = next_open(next, 0);
                while t < w {
                    let j = row * w + t;
                    if flows[j] != DEAD {
                        let i = if *dead == 0 {
                            j
                        } else {
                            let i = gallop(act, lo, flows[j]).expect("an unmarked entry is active");
                            lo = i + 1;
                            i
                        };
                        let [row_open, col_open] = step(j, i, residual);
                        if !col_open {
                            gr.close(next, gr.cols[t]);
                        }
                        if !row_open {
                            shut[a as usize] = true;
                            break;
                        }
                    }
                    t = next_open(next, t + 1);
                }
            }
        } else {
            // Every finished flow is marked: the others are the active ones, in order.
            let mut i = 0;
            for (j, &f) in flows.iter().enumerate() {
                if f != DEAD {
                    step(j, i, residual);
                    i += 1;
                }
            }
        }
    }
}

/// The position of `x` in the ascending `a`, searched from `lo` on (every
/// element before `lo` is smaller): doubling steps, then a binary search in the
/// last one. `O(log d)` for a distance `d` from `lo`.
fn gallop(a: &[u32], lo: usize, x: u32) -> Option<usize> {
    // Everything before `from` is smaller than `x`; `hi` is the next probe.
    let (mut from, mut hi, mut step) = (lo, lo, 1);
    while hi < a.len() && a[hi] < x {
        from = hi + 1;
        hi = lo + step;
        step *= 2;
    }
    let to = (hi + 1).min(a.len());
    if from >= to {
        return None;
    }
    a[from..to].binary_search(&x).ok().map(|i| from + i)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::Case;

    #[test]
    fn gallop_finds_what_binary_search_finds_from_any_start_before_it() {
        let a: Vec<u32> = (0..200).map(|i| 3 * i + 1).collect();
        for (i, &x) in a.iter().enumerate() {
            for lo in 0..=i {
                assert_eq!(gallop(&a, lo, x), Some(i), "x {x} from {lo}");
            }
            assert_eq!(gallop(&a, 0, x + 1), None);
        }
        assert_eq!(gallop(&a, 0, 10_000), None);
        assert_eq!(gallop(&[], 0, 5), None);
    }

    /// Offsets (within group `g`) visited on `r`; `close_up` makes each visit
    /// saturate the flow's first link (its sender's uplink on the big switch).
    fn visited(b: &mut Buckets, c: &Common, g: usize, r: &[f64], close_up: bool) -> Vec<usize> {
        let mut r = r.to_vec();
        let mut seen = Vec::new();
        let start = c.groups[g].start as usize;
        b.visit(c, g, &mut r, |i, res| {
            seen.push(i - start);
            if close_up {
                let l = c.fabric.path(c.flow_path[c.active[i] as usize])[0];
                res[l as usize] = 0.0;
            }
        });
        seen
    }

    #[test]
    fn grid_walks_visit_what_a_plain_walk_visits() {
        // 6 ports, C = 10: up0..up5 = links 0..6, down0..down5 = 6..12. Coflow
        // 0 is every mapper (0, 1, 0, 2: port 0 twice) to every reducer (3, 4,
        // 5, 3), mapper-major: a grid of 4 rows whose first row's bucket is its
        // third's too, and whose first column's bucket is its last's too. Each
        // visit closes its flow's uplink, downlink or both (by the flow's
        // offset); the order visited must be a plain walk's, from any start.
        let (mappers, reducers) = ([0u32, 1, 0, 2], [3u32, 4, 5, 3]);
        let mut flows = Vec::new();
        for &m in &mappers {
            for &r in &reducers {
                flows.push((0, m, r, 1.0, 0.0));
            }
        }
        let c = Case::new(6, 10.0, &flows);
        let v = c.common();
        let mut rng = coflowkit_model::Pcg32::new(7, 1);
        let close = |off: usize, i: usize, res: &mut [f64]| {
            let p = v.fabric.path(v.flow_path[v.active[i] as usize]);
            match off % 3 {
                0 => res[p[0] as usize] = 0.0,
                1 => res[p[p.len() - 1] as usize] = 0.0,
                _ => p.iter().for_each(|&l| res[l as usize] = 0.0),
            }
        };
        for _ in 0..200 {
            let r: Vec<f64> = (0..12)
                .map(|_| if rng.below(4) == 0 { 0.0 } else { 10.0 })
                .collect();
            let mut want = Vec::new();
            let mut res = r.clone();
            for (off, &f) in v.active.iter().enumerate() {
                let p = v.fabric.path(v.flow_path[f as usize]);
                if res[p[0] as usize] > 0.0 && res[p[p.len() - 1] as usize] > 0.0 {
                    want.push(off);
                    close(off, off, &mut res);
                }
            }
            let mut b = Buckets::default();
            let mut got = Vec::new();
            let mut res = r.clone();
            b.visit(&v, 0, &mut res, |i, res| {
                got.push(i);
                close(i, i, res);
            });
            assert!(b.entries[0].grid.as_ref().is_some_and(|g| g.width == 4));
            assert_eq!(got, want, "residuals {r:?}");
        }
    }

    #[test]
    fn only_flows_whose_first_and_last_links_are_open_are_visited_in_order() {
        // 3 ports: up0..up2 = links 0..3, down0..down2 = 3..6. Coflow 0's flows
        // (offsets): 0: 0→1, 1: 1→2, 2: 0→2, 3: 2→1, 4: 1→1.
        let c = Case::new(
            3,
            10.0,
            &[
                (0, 0, 1, 1.0, 0.0),
                (0, 1, 2, 1.0, 0.0),
                (0, 0, 2, 1.0, 0.0),
                (0, 2, 1, 1.0, 0.0),
                (0, 1, 1, 1.0, 0.0),
            ],
        );
        let v = c.common();
        let mut b = Buckets::default();
        let mut r = vec![10.0; 6];
        assert_eq!(visited(&mut b, &v, 0, &r, false), vec![0, 1, 2, 3, 4]);
        // up1 full: flows 1 and 4 are behind it.
        r[1] = 0.0;
        assert_eq!(visited(&mut b, &v, 0, &r, false), vec![0, 2, 3]);
        // Also down1 full (within the 1e-9·C tolerance): only 0→2 is left.
        r[4] = 1e-12;
        assert_eq!(visited(&mut b, &v, 0, &r, false), vec![2]);
        // Every sender full: nothing is visited.
        r[0] = 0.0;
        r[2] = 0.0;
        assert!(visited(&mut b, &v, 0, &r, false).is_empty());
    }

    #[test]
    fn a_link_saturated_by_a_visit_stops_the_flows_behind_it() {
        // Coflow 0: 0: 0→1, 1: 0→2, 2: 1→2, 3: 0→0. Each visit fills the
        // sender's uplink: 0→1 closes up0, so 0→2 and 0→0 are skipped.
        let c = Case::new(
            3,
            10.0,
            &[
                (0, 0, 1, 1.0, 0.0),
                (0, 0, 2, 1.0, 0.0),
                (0, 1, 2, 1.0, 0.0),
                (0, 0, 0, 1.0, 0.0),
            ],
        );
        let mut b = Buckets::default();
        let r = vec![10.0; 6];
        assert_eq!(visited(&mut b, &c.common(), 0, &r, true), vec![0, 2]);
    }

    #[test]
    fn few_open_flows_are_gathered_in_order() {
        // 20 ports; coflow 0 has 20 senders × 2 receivers, sender-major (offset
        // 2s + d). Only up3 and up17 open: 4 flows of 40 by the first side, so
        // they are gathered from two buckets and sorted.
        let mut flows = Vec::new();
        for s in 0..20 {
            for d in 0..2 {
                flows.push((0, s, d, 1.0, 0.0));
            }
        }
        let c = Case::new(20, 10.0, &flows);
        let mut r = vec![10.0; 40];
        for (l, x) in r.iter_mut().enumerate().take(20) {
            if l != 3 && l != 17 {
                *x = 0.0;
            }
        }
        let mut b = Buckets::default();
        assert_eq!(
            visited(&mut b, &c.common(), 0, &r, false),
            vec![6, 7, 34, 35]
        );
        // Filling up17 on the first visit behind it skips its second flow.
        assert_eq!(visited(&mut b, &c.common(), 0, &r, true), vec![6, 34]);
    }

    #[test]
    fn buckets_follow_the_flow_set_and_finished_coflows_are_dropped() {
        // Coflow 0: 0→1, 2→1; coflow 1: 1→2. At first only 0→1 of coflow 0.
        let mut c = Case::new(
            3,
            10.0,
            &[
                (0, 0, 1, 1.0, 0.0),
                (0, 2, 1, 1.0, 0.0),
                (1, 1, 2, 1.0, 0.0),
            ],
        );
        let full = (c.active.clone(), c.groups.clone());
        c.active = vec![0, 2];
        c.groups[0].end = 1;
        c.groups[1].start = 1;
        c.groups[1].end = 2;
        c.coflow_started[0] = 1;
        let mut b = Buckets::default();
        let mut r = vec![10.0; 6];
        r[0] = 0.0; // up0 full
        assert!(visited(&mut b, &c.common(), 0, &r, false).is_empty());
        // 2→1 starts (offset 1): rebuilt, and it is open through up2.
        (c.active, c.groups) = full;
        c.coflow_started[0] = 2;
        assert_eq!(visited(&mut b, &c.common(), 0, &r, false), vec![1]);
        assert_eq!(b.sweep.tracked(), &[0]);
        assert_eq!(visited(&mut b, &c.common(), 1, &r, false), vec![0]);
        assert_eq!(b.sweep.tracked(), &[0, 1]);
        // Coflow 0 finishes; the sweep after SWEEP_EVERY calls drops it only.
        c.active = vec![2];
        c.groups = vec![crate::view::ActiveCoflow {
            coflow: 1,
            start: 0,
            end: 1,
        }];
        for _ in 0..crate::support::loads::SWEEP_EVERY {
            b.begin(&c.common());
        }
        assert_eq!(b.sweep.tracked(), &[1]);
        assert!(b.entries[0].kept.key.is_none() && b.entries[0].bucket.is_empty());
        assert!(b.entries[1].kept.key.is_some());
    }

    #[test]
    fn finished_flows_are_skipped_until_half_are_gone_then_rebucketed() {
        // The flows of the first test; up1 full. Then 0→2 (offset 2) finishes:
        // 2→1 moves to offset 2, 1→1 to offset 3.
        let mut c = Case::new(
            3,
            10.0,
            &[
                (0, 0, 1, 1.0, 0.0),
                (0, 1, 2, 1.0, 0.0),
                (0, 0, 2, 1.0, 0.0),
                (0, 2, 1, 1.0, 0.0),
                (0, 1, 1, 1.0, 0.0),
            ],
        );
        let mut b = Buckets::default();
        let mut r = vec![10.0; 6];
        r[1] = 0.0;
        assert_eq!(visited(&mut b, &c.common(), 0, &r, false), vec![0, 2, 3]);
        c.active = vec![0, 1, 3, 4];
        c.groups[0].end = 4;
        assert_eq!(visited(&mut b, &c.common(), 0, &r, false), vec![0, 2]);
        // It stays in the buckets, marked once found gone.
        assert_eq!(b.entries[0].kept.flows, vec![0, 1, DEAD, 3, 4]);
        assert_eq!(b.entries[0].kept.dead, 1);
        // 0→1 and 2→1 finish too: 3 of 5 entries would be gone, so the
        // coflow is bucketed afresh; 1→2 and 1→1 sit behind the full up1.
        c.active = vec![1, 4];
        c.groups[0].end = 2;
        assert!(visited(&mut b, &c.common(), 0, &r, false).is_empty());
        assert_eq!(b.entries[0].kept.flows, vec![1, 4]);
        assert_eq!(b.entries[0].kept.dead, 0);
    }

    #[test]
    fn kept_buckets_visit_as_fresh_ones_do_as_flows_finish() {
        // A coflow of 60 random flows on 8 ports loses random flows call after
        // call; residuals are random with some links full. The kept buckets
        // (updated as flows finish) visit exactly what buckets built afresh
        // visit, with and without visits filling uplinks.
        let mut rng = coflowkit_model::Pcg32::new(7, 1);
        let flows: Vec<(u32, u32, u32, f64, f64)> = (0..60)
            .map(|_| (0, rng.below(8), rng.below(8), 1.0, 0.0))
            .collect();
        let mut c = Case::new(8, 10.0, &flows);
        let mut kept = Buckets::default();
        // The same, told each finished flow at the next call's `begin` (as
        // the engine lists them), which marks it without a walk.
        let mut told = Buckets::default();
        while !c.active.is_empty() {
            let r: Vec<f64> = (0..16)
                .map(|_| if rng.below(3) == 0 { 0.0 } else { 10.0 })
                .collect();
            for close in [false, true] {
                let mut fresh = Buckets::default();
                let want = visited(&mut fresh, &c.common(), 0, &r, close);
                assert_eq!(visited(&mut kept, &c.common(), 0, &r, close), want);
                assert_eq!(visited(&mut told, &c.common(), 0, &r, close), want);
            }
            let gone = rng.below(c.active.len() as u32) as usize;
            let f = c.active.remove(gone);
            c.groups[0].end -= 1;
            if c.active.is_empty() {
                break;
            }
            c.finished = vec![f];
            told.begin(&c.common());
            c.finished.clear();
            let k = &told.entries[0].kept;
            let dead = k.flows.iter().filter(|&&x| x == DEAD).count() as u32;
            assert!(!k.flows.contains(&f) && dead == k.marked, "flow {f}");
        }
    }

    /// Offsets visited under caps: `room` per link of the group (its distinct
    /// links, ascending); each visit takes `take` from its path's residual and
    /// room (floored at 0).
    fn visited_capped(
        b: &mut Buckets,
        c: &Common,
        g: usize,
        r: &[f64],
        room: &[f64],
        take: f64,
    ) -> Vec<usize> {
        let start = c.groups[g].start as usize;
        let mut links: Vec<(u32, f64)> = c.active[c.groups[g].range()]
            .iter()
            .flat_map(|&f| c.fabric.path(c.flow_path[f as usize]).to_vec())
            .map(|l| (l, 0.0))
            .collect();
        links.sort_by_key(|e| e.0);
        links.dedup_by_key(|e| e.0);
        assert_eq!(links.len(), room.len());
        let (mut r, mut room) = (r.to_vec(), room.to_vec());
        let mut seen = Vec::new();
        b.visit_capped(c, g, &mut r, Some((&mut room, &links)), |i, res, h| {
            seen.push(i - start);
            let h = h.unwrap();
            for &l in c.fabric.path(c.flow_path[c.active[i] as usize]) {
                res[l as usize] = (res[l as usize] - take).max(0.0);
                let j = links.binary_search_by_key(&l, |e| e.0).unwrap();
                h[j] = (h[j] - take).max(0.0);
            }
        });
        seen
    }

    #[test]
    fn caps_close_buckets_as_residuals_do() {
        // 3 ports; coflow 0: 0: 0→1, 1: 1→2, 2: 0→2, 3: 2→1. Its links,
        // ascending: up0 (0), up1 (1), up2 (2), down1 (4), down2 (5).
        let c = Case::new(
            3,
            10.0,
            &[
                (0, 0, 1, 1.0, 0.0),
                (0, 1, 2, 1.0, 0.0),
                (0, 0, 2, 1.0, 0.0),
                (0, 2, 1, 1.0, 0.0),
            ],
        );
        let v = c.common();
        let r = vec![10.0; 6];
        let mut b = Buckets::default();
        // Every link has residual; no room on down2: 1→2 and 0→2 are skipped.
        let room = [5.0, 5.0, 5.0, 5.0, 0.0];
        assert_eq!(visited_capped(&mut b, &v, 0, &r, &room, 1.0), vec![0, 3]);
        // Room 1 on up0: 0→1 takes it all, so 0→2 behind up0 is skipped too.
        let room = [1.0, 5.0, 5.0, 5.0, 5.0];
        assert_eq!(visited_capped(&mut b, &v, 0, &r, &room, 1.0), vec![0, 1, 3]);
        // Without the take, 0→2 keeps its turn.
        assert_eq!(
            visited_capped(&mut b, &v, 0, &r, &room, 0.0),
            vec![0, 1, 2, 3]
        );
    }

    #[test]
    fn capped_visits_are_the_flows_open_at_their_turn() {
        // Random coflows on 6 ports, random residuals and rooms (some zero),
        // visits that take a random share: the capped visit calls `fill` for
        // exactly the flows, in order, whose first and last links have
        // residual and room when their turn comes (a plain pass over all).
        let mut rng = coflowkit_model::Pcg32::new(11, 3);
        for _ in 0..200 {
            let n = 1 + rng.below(30) as usize;
            let flows: Vec<(u32, u32, u32, f64, f64)> = (0..n)
                .map(|_| (0, rng.below(6), rng.below(6), 1.0, 0.0))
                .collect();
            let c = Case::new(6, 10.0, &flows);
            let v = c.common();
            let mut links: Vec<u32> = c
                .active
                .iter()
                .flat_map(|&f| v.fabric.path(v.flow_path[f as usize]).to_vec())
                .collect();
            links.sort();
            links.dedup();
            let pick = |rng: &mut coflowkit_model::Pcg32| match rng.below(4) {
                0 => 0.0,
                _ => 1.0 + rng.below(4) as f64,
            };
            let r: Vec<f64> = (0..12).map(|_| pick(&mut rng)).collect();
            let room: Vec<f64> = links.iter().map(|_| pick(&mut rng)).collect();
            let take = rng.below(3) as f64;
            // The plain pass.
            let (mut rr, mut hh, mut want) = (r.clone(), room.clone(), Vec::new());
            for i in 0..n {
                let p = v.fabric.path(v.flow_path[c.active[i] as usize]);
                let j = |l: u32| links.binary_search(&l).unwrap();
                let ends = [p[0], *p.last().unwrap()];
                if ends.iter().all(|&l| rr[l as usize] > 0.0 && hh[j(l)] > 0.0) {
                    want.push(i);
                    for &l in p {
                        rr[l as usize] = (rr[l as usize] - take).max(0.0);
                        hh[j(l)] = (hh[j(l)] - take).max(0.0);
                    }
                }
            }
            let mut b = Buckets::default();
            assert_eq!(visited_capped(&mut b, &v, 0, &r, &room, take), want);
        }
    }
}
