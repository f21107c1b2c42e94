//! Rates and completions, kept lazily: an event costs time in the flows (or paths)
//! whose rate changed, never in all the flows that move.
//!
//! A flow in *flow mode* keeps `(base, rate, since)`: it has sent
//! `base + rate·(t − since)` ([`coflowkit_policy::view::Progress`]). Changing its
//! rate settles `base` at the current time and pushes two heap entries:
//!
//! * `exact`: when it would finish at that rate, `since + rem/rate`; the earliest
//!   valid entry is the next completion event;
//! * `due`: the first time it counts as finished, when its remaining bytes are at
//!   most `max(finish_threshold(size), rate·TIME_EPS)` (the engine's tolerance);
//!   at an event every valid entry due by then completes.
//!
//! Entries carry the flow's version; a rate change or a completion bumps it, and
//! stale entries are dropped when they reach the top (the heaps are rebuilt from
//! the valid entries when stale ones outnumber them).
//!
//! In *path mode* every active flow of a path has the path's rate: the path keeps
//! a service counter `(path_base, path_rate, path_since)`; a flow that joined at
//! service `e_f` has sent `service − e_f` and is done when `service` reaches
//! `F_f = e_f + size_f` within `max(thr_f, rate·TIME_EPS)`. Two heaps per path
//! hold `F_f` (within `rate·TIME_EPS`: it would finish within the same event) and
//! `D_f = F_f − thr_f` (within its byte tolerance); the path's `exact` entry is
//! when the service reaches the smallest `F`, its `due` entry the earlier of that
//! less `TIME_EPS` and when it reaches the smallest `D`. A rate change then costs
//! time in the changed paths only.
//!
//! A path may also be served by a *bottleneck group* (a link id: every path a
//! max-min solution froze at that link has the link's level as its rate). The
//! group keeps the counter `(group_base, group_rate, group_since)` and a path
//! its offset `path_off`, its service being `path_off + G(t)`; per group two
//! heaps hold its paths' smallest `F` and `D` in counter units (`F − off`),
//! versioned per path, and the group (not each path) has one `exact` and one
//! `due` entry. A group's level change then costs `O(log)`, whatever its
//! paths; a path that changes group is settled and its keys move.

mod limits;
mod prop;
mod sums;

use coflowkit_model::{finish_threshold, PathId, TIME_EPS};
use coflowkit_policy::view::{ViewData, NO_GROUP};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// f64 with a total order, for heaps.
pub(crate) use coflowkit_model::TotalF64 as Key;

type Heap = BinaryHeap<Reverse<(Key, u32, u32)>>;

/// Drops stale entries from a heap when they outnumber the valid ones.
fn compact(h: &mut Heap, valid: impl Fn(u32, u32) -> bool) {
    let v = std::mem::take(h).into_vec();
    *h = v
        .into_iter()
        .filter(|Reverse((_, i, ver))| valid(*i, *ver))
        .collect();
}

#[derive(Default)]
pub(crate) struct Rates {
    /// Per flow: version of its heap entries, and whether it is done.
    ver: Vec<u32>,
    done: Vec<bool>,
    exact: Heap,
    due: Heap,
    /// Flows (flow mode) with a non-zero rate, and each one's position in it.
    pub moving: Vec<u32>,
    pos: Vec<u32>,
    /// Per coflow: its flows with a non-zero rate (the coflow's rate is exactly 0
    /// when none).
    coflow_moving: Vec<u32>,
    /// Per flow (flow mode): its `exact` and `due` times (infinite when not moving),
    /// kept flat so that the heaps can be dropped and rebuilt.
    fexact: Vec<f64>,
    fdue: Vec<f64>,
    /// Whether `exact`/`due` hold every moving flow's entries. After a decision
    /// that changed most of the moving flows ([`Rates::flows_dense`]) they do not,
    /// and the moving flows are scanned instead (what an engine without heaps does),
    /// until a decision that changed few rebuilds them ([`Rates::flows_sparse`]).
    flow_heaps_valid: bool,
    /// Flows at rate 0 that finish at the current instant ([`Rates::due_now`]).
    zero_due: Vec<u32>,
    // Path mode.
    pub path_mode: bool,
    path_ver: Vec<u32>,
    /// Per path (counter): its flows' finish services `F`, and `D = F − thr`,
    /// with the flow's version (a flow that moves to another counter leaves
    /// stale entries).
    path_f: Vec<BinaryHeap<Reverse<(Key, u32, u32)>>>,
    path_d: Vec<BinaryHeap<Reverse<(Key, u32, u32)>>>,
    pexact: Heap,
    pdue: Heap,
    /// Per path: the smallest `F` and `D` of its unfinished flows (infinite when
    /// none), kept flat so that a rate change reads no heap.
    path_ftop: Vec<f64>,
    path_dtop: Vec<f64>,
    /// Per path: its `exact` and `due` times (infinite when it has none).
    path_exact: Vec<f64>,
    path_due: Vec<f64>,
    /// Whether `pexact`/`pdue` hold every path's current entries. After a dense
    /// change ([`Rates::go_dense`]) they do not, and the paths are scanned
    /// instead, until a sparse change rebuilds them ([`Rates::go_sparse`]).
    heaps_valid: bool,
    /// Scratch: paths due at an event.
    due_paths: Vec<PathId>,
    // Bottleneck groups (path mode).
    /// Per path: the version of its keys in its group's heaps.
    pkver: Vec<u32>,
    /// Per group: its paths' smallest `F − off` and `D − off`, with the
    /// path's key version; the valid tops; its entry's version and times.
    gf: Vec<BinaryHeap<Reverse<(Key, u32, u32)>>>,
    gd: Vec<BinaryHeap<Reverse<(Key, u32, u32)>>>,
    gftop: Vec<f64>,
    gdtop: Vec<f64>,
    gver: Vec<u32>,
    /// Per group, its paths: its heaps are compacted past four keys a path
    /// (they were compacted only past four per active path of the whole
    /// fabric, so a busy group's heaps grew to tens of thousands of stale
    /// keys and every pop missed the cache).
    gpaths: Vec<u32>,
    gexact: Heap,
    gdue: Heap,
    /// Scratch: groups due at an event.
    due_groups: Vec<u32>,
    /// Groups whose entries are to be rescheduled (and whose tops re-read,
    /// `DIRTY_TOPS`) once the decision being applied is in
    /// ([`Rates::flush_groups`]): a decision moves a group's level and
    /// several of its paths, and each used to push the group's entries
    /// again. The time they were marked at.
    gdirty: Vec<u8>,
    dirty: Vec<u32>,
    dirty_now: f64,
    /// Scratch: flows due at an event (flow mode, no heaps).
    due_scratch: Vec<u32>,
    /// Proportional groups (flow mode; see the `prop` module).
    prop: prop::Props,
    /// Class limits (classes by group; [`Rates::set_counter_limit`]): per
    /// counter, the bytes sent at which its flows leave it (infinite: never);
    /// whether any is finite; the flows that reached theirs at the last
    /// [`Rates::take_done`], still on their counter, keyless, until the
    /// engine moves them.
    counter_limit: Vec<f64>,
    limits_used: bool,
    pub crossed: Vec<u32>,
    /// Class limits in flow mode ([`Rates::set_flow_limit`]): per flow, the
    /// bytes sent at which it leaves its class (empty until one is set).
    flow_limit: Vec<f64>,
    /// Coflow sums in path mode ([`Rates::start_coflow_sums`]): per counter
    /// and per group, the coflows of the flows it serves with how many; per
    /// coflow, its flows on counters. `coflow_base`/`coflow_rate` are kept as
    /// these move, as flow mode keeps them per flow.
    ctr_cf: Vec<Vec<(u32, u32)>>,
    grp_cf: Vec<Vec<(u32, u32)>>,
    cf_on: Vec<u32>,
    /// Scratch: counter flows done at an event, with what they had sent.
    cf_done: Vec<(u32, f64)>,
}

pub(crate) const NOT_MOVING: u32 = u32::MAX;

/// [`Rates::mark_group`]: the group's entries are to be pushed again, and
/// its tops re-read first.
const DIRTY_SCHED: u8 = 1;
const DIRTY_TOPS: u8 = 2;

impl Rates {
    pub fn new(d: &mut ViewData, n_paths: usize, path_mode: bool) -> Self {
        let n = d.size.len();
        let nc = d.width.len();
        d.base = vec![0.0; n];
        d.rate = vec![0.0; n];
        d.since = vec![0.0; n];
        d.coflow_base = vec![0.0; nc];
        d.coflow_rate = vec![0.0; nc];
        d.coflow_since = vec![0.0; nc];
        d.path_mode = path_mode;
        let np = if path_mode { n_paths } else { 0 };
        d.path_base = vec![0.0; np];
        d.path_rate = vec![0.0; np];
        d.path_since = vec![0.0; np];
        d.path_group = vec![NO_GROUP; np];
        d.path_off = vec![0.0; np];
        Rates {
            ver: vec![0; n],
            done: vec![false; n],
            pos: vec![NOT_MOVING; n],
            coflow_moving: vec![0; nc],
            fexact: vec![f64::INFINITY; n],
            fdue: vec![f64::INFINITY; n],
            flow_heaps_valid: true,
            path_mode,
            path_ver: vec![0; np],
            pkver: vec![0; np],
            path_f: (0..np).map(|_| BinaryHeap::new()).collect(),
            path_d: (0..np).map(|_| BinaryHeap::new()).collect(),
            path_ftop: vec![f64::INFINITY; np],
            path_dtop: vec![f64::INFINITY; np],
            path_exact: vec![f64::INFINITY; np],
            path_due: vec![f64::INFINITY; np],
            heaps_valid: true,
            ..Rates::default()
        }
    }

    /// Makes room for paths interned after the start (none on a fixed fabric),
    /// or for counters `0..np`.
    pub fn grow_paths(&mut self, d: &mut ViewData, np: usize) {
        if self.path_ver.len() < np {
            self.path_ver.resize(np, 0);
            self.path_f.resize_with(np, BinaryHeap::new);
            self.path_d.resize_with(np, BinaryHeap::new);
            self.path_ftop.resize(np, f64::INFINITY);
            self.path_dtop.resize(np, f64::INFINITY);
            self.path_exact.resize(np, f64::INFINITY);
            self.path_due.resize(np, f64::INFINITY);
            d.path_base.resize(np, 0.0);
            d.path_rate.resize(np, 0.0);
            d.path_since.resize(np, 0.0);
        }
        if d.path_group.len() < np {
            d.path_group.resize(np, NO_GROUP);
            d.path_off.resize(np, 0.0);
            self.pkver.resize(np, 0);
        }
    }

    /// Whether counter `p` holds no flow (its heaps are empty: each flow that
    /// left or finished was dropped from their tops, and none is left below).
    pub fn counter_is_idle(&self, p: u32) -> bool {
        let p = p as usize;
        self.path_f.get(p).is_none_or(|h| h.is_empty())
            && self.path_d.get(p).is_none_or(|h| h.is_empty())
    }

    /// Makes room for groups `0..ng` (links).
    fn grow_groups(&mut self, d: &mut ViewData, ng: usize) {
        if self.gver.len() < ng {
            self.gver.resize(ng, 0);
            self.gf.resize_with(ng, BinaryHeap::new);
            self.gd.resize_with(ng, BinaryHeap::new);
            self.gftop.resize(ng, f64::INFINITY);
            self.gdtop.resize(ng, f64::INFINITY);
            self.gdirty.resize(ng, 0);
            self.gpaths.resize(ng, 0);
            d.group_base.resize(ng, 0.0);
            d.group_rate.resize(ng, 0.0);
            d.group_since.resize(ng, 0.0);
        }
    }

    // -- flow mode --------------------------------------------------------------

    /// Gives flow `f` rate `r` from `now` on.
    pub fn set_rate(&mut self, d: &mut ViewData, f: u32, r: f64, now: f64) {
        let fi = f as usize;
        let old = d.rate[fi];
        if old == r {
            return;
        }
        d.base[fi] += old * (now - d.since[fi]);
        d.since[fi] = now;
        d.rate[fi] = r;
        let k = d.flow_coflow[fi] as usize;
        d.coflow_base[k] += d.coflow_rate[k] * (now - d.coflow_since[k]);
        d.coflow_since[k] = now;
        match (old != 0.0, r != 0.0) {
            (false, true) => {
                self.pos[fi] = self.moving.len() as u32;
                self.moving.push(f);
                self.coflow_moving[k] += 1;
            }
            (true, false) => {
                self.unmove(f);
                self.coflow_moving[k] -= 1;
            }
            _ => {}
        }
        d.coflow_rate[k] = if self.coflow_moving[k] == 0 {
            self.group_part(k)
        } else {
            d.coflow_rate[k] - old + r
        };
        self.ver[fi] = self.ver[fi].wrapping_add(1);
        if r > 0.0 {
            self.schedule(d, f, now);
        } else {
            self.fexact[fi] = f64::INFINITY;
            self.fdue[fi] = f64::INFINITY;
        }
    }

    /// Coflow `k`'s proportional group's part of its rate (0 when none).
    #[inline]
    fn group_part(&self, k: usize) -> f64 {
        self.prop.part.get(k).copied().unwrap_or(0.0)
    }

    fn unmove(&mut self, f: u32) {
        let at = self.pos[f as usize] as usize;
        self.moving.swap_remove(at);
        if let Some(&g) = self.moving.get(at) {
            self.pos[g as usize] = at as u32;
        }
        self.pos[f as usize] = NOT_MOVING;
    }

    /// Pushes flow `f`'s `exact` and `due` entries at its current rate.
    fn schedule(&mut self, d: &ViewData, f: u32, now: f64) {
        let fi = f as usize;
        let r = d.rate[fi];
        let (at, tol) = self.flow_target(d, fi);
        let rem = at - d.base[fi];
        let exact = now + rem / r;
        let due = (exact - TIME_EPS).min(now + (rem - tol) / r);
        self.fexact[fi] = exact;
        self.fdue[fi] = due;
        if !self.flow_heaps_valid {
            return;
        }
        let v = self.ver[fi];
        self.exact.push(Reverse((Key(exact), f, v)));
        self.due.push(Reverse((Key(due), f, v)));
        if self.exact.len() > 4 * (self.moving.len() + 1024) {
            let ver = &self.ver;
            let valid = |i: u32, v: u32| ver[i as usize] == v;
            compact(&mut self.exact, valid);
            compact(&mut self.due, valid);
        }
    }

    /// A flow that just started and is already within the finish tolerance: it
    /// finishes at this very time, whatever its rate.
    pub fn due_now(&mut self, f: u32, now: f64) {
        let v = self.ver[f as usize];
        self.fexact[f as usize] = now;
        self.fdue[f as usize] = now;
        self.zero_due.push(f);
        if self.flow_heaps_valid {
            self.exact.push(Reverse((Key(now), f, v)));
            self.due.push(Reverse((Key(now), f, v)));
        }
    }

    /// Drops the flow heaps: the next decision changes most moving flows' rates,
    /// and pushing two entries each would cost more than scanning them.
    pub fn flows_dense(&mut self) {
        self.flow_heaps_valid = false;
        self.exact.clear();
        self.due.clear();
    }

    /// Makes sure the flow heaps hold every moving flow's entries (rebuilt in
    /// linear time after dense decisions).
    pub fn flows_sparse(&mut self) {
        if self.flow_heaps_valid {
            return;
        }
        self.flow_heaps_valid = true;
        let done = &self.done;
        self.zero_due.retain(|&f| !done[f as usize]);
        let flows = self.moving.iter().chain(self.zero_due.iter());
        let ex: Vec<_> = flows
            .clone()
            .map(|&f| Reverse((Key(self.fexact[f as usize]), f, self.ver[f as usize])))
            .collect();
        let du: Vec<_> = flows
            .map(|&f| Reverse((Key(self.fdue[f as usize]), f, self.ver[f as usize])))
            .collect();
        self.exact = BinaryHeap::from(ex);
        self.due = BinaryHeap::from(du);
    }

    // -- path mode --------------------------------------------------------------

    /// Flow `f` joins its path's counter (path mode) at `now`.
    pub fn join_path(&mut self, d: &mut ViewData, f: u32, now: f64, n_paths: usize) {
        let p = d.flow_path[f as usize];
        self.join_counter(d, f, p, 0.0, now, n_paths);
    }

    /// Flow `f`, which has sent `sent`, joins counter `p` at `now` (`n` counters
    /// at least exist). Its rate becomes `NaN`: it is served by the counter.
    pub fn join_counter(
        &mut self,
        d: &mut ViewData,
        f: u32,
        p: PathId,
        sent: f64,
        now: f64,
        n: usize,
    ) {
        self.grow_paths(d, n);
        let fi = f as usize;
        let p = p as usize;
        if !d.flow_ctr.is_empty() {
            d.flow_ctr[fi] = p as u32;
        }
        let service = d.path_service(p, now);
        d.base[fi] = service - sent; // offset: sent = service - base
        d.rate[fi] = f64::NAN;
        // Keyed at its end, or at its counter's limit when that comes first
        // (each within its byte tolerance, as a threshold is crossed).
        let (size, thr) = (d.size[fi], finish_threshold(d.size[fi]));
        let lim = self.counter_limit.get(p).copied().unwrap_or(f64::INFINITY);
        let (at, tol) = if lim < size - thr {
            (lim, finish_threshold(lim))
        } else {
            (size, thr)
        };
        let fin = d.base[fi] + at;
        let v = self.ver[fi];
        self.path_f[p].push(Reverse((Key(fin), f, v)));
        self.path_d[p].push(Reverse((Key(fin - tol), f, v)));
        self.refresh_tops(p);
        self.reschedule_counter(d, p as PathId, now);
        if d.coflow_sums {
            self.cf_count(d, d.flow_coflow[fi], p, 1, now);
        }
    }

    /// Flow `f` leaves its counter at `now`, keeping what it sent: it is in
    /// flow mode at rate 0 afterwards (its counter's entries for it go stale).
    pub fn leave_counter(&mut self, d: &mut ViewData, f: u32, now: f64) {
        let fi = f as usize;
        debug_assert!(d.rate[fi].is_nan(), "flow {f} is on no counter");
        let p = d.counter_of(fi);
        let sent = d.path_service(p, now) - d.base[fi];
        if d.coflow_sums {
            self.cf_count(d, d.flow_coflow[fi], p, -1, now);
        }
        self.ver[fi] = self.ver[fi].wrapping_add(1);
        d.base[fi] = sent;
        d.rate[fi] = 0.0;
        d.since[fi] = now;
        self.refresh_tops(p);
        self.reschedule_counter(d, p as PathId, now);
    }

    /// After counter `p`'s flows changed (its tops re-read): its own entries,
    /// or its keys in its group and the group's entries, at `now`.
    fn reschedule_counter(&mut self, d: &mut ViewData, p: PathId, now: f64) {
        let g = d.path_group[p as usize];
        if g == NO_GROUP {
            self.reschedule_path(d, p, now);
        } else {
            self.requeue(d, p);
            self.mark_group(g, DIRTY_TOPS, now);
        }
    }

    /// Group `g` is to be rescheduled at `now` (its tops re-read first if
    /// `tops` is `DIRTY_TOPS`) by the next [`Rates::flush_groups`].
    fn mark_group(&mut self, g: u32, tops: u8, now: f64) {
        debug_assert!(self.dirty.is_empty() || self.dirty_now == now);
        self.dirty_now = now;
        let m = &mut self.gdirty[g as usize];
        if *m == 0 {
            self.dirty.push(g);
        }
        *m |= DIRTY_SCHED | tops;
    }

    /// Reschedules the groups marked since the last flush, once each, in the
    /// order they were first marked. Call before reading the next
    /// completion (done by [`Rates::take_done`] itself).
    pub fn flush_groups(&mut self, d: &mut ViewData) {
        let now = self.dirty_now;
        let mut dirty = std::mem::take(&mut self.dirty);
        for &g in &dirty {
            let m = std::mem::take(&mut self.gdirty[g as usize]);
            if m & DIRTY_TOPS != 0 {
                self.refresh_group_tops(d, g);
            }
            self.reschedule_group(d, g, now);
        }
        dirty.clear();
        self.dirty = dirty;
    }

    /// Pushes path `p`'s smallest `F` and `D` into its group's heaps, in the
    /// group's counter units (its older keys become stale).
    fn requeue(&mut self, d: &ViewData, p: PathId) {
        let pi = p as usize;
        let g = d.path_group[pi] as usize;
        self.pkver[pi] = self.pkver[pi].wrapping_add(1);
        let v = self.pkver[pi];
        let off = d.path_off[pi];
        if self.path_ftop[pi] < f64::INFINITY {
            self.gf[g].push(Reverse((Key(self.path_ftop[pi] - off), p, v)));
        }
        if self.path_dtop[pi] < f64::INFINITY {
            self.gd[g].push(Reverse((Key(self.path_dtop[pi] - off), p, v)));
        }
    }

    /// Drops stale keys from the top of group `g`'s heaps and reads its tops.
    fn refresh_group_tops(&mut self, d: &ViewData, g: u32) {
        let gi = g as usize;
        let gpaths = self.gpaths[gi];
        let (pkver, pg) = (&self.pkver, &d.path_group);
        let valid = |p: u32, v: u32| pkver[p as usize] == v && pg[p as usize] == g;
        for (heap, top) in [
            (&mut self.gf[gi], &mut self.gftop[gi]),
            (&mut self.gd[gi], &mut self.gdtop[gi]),
        ] {
            *top = f64::INFINITY;
            while let Some(&Reverse((Key(x), p, v))) = heap.peek() {
                if valid(p, v) {
                    *top = x;
                    break;
                }
                heap.pop();
            }
            if heap.len() > 64 && heap.len() > 4 * gpaths as usize {
                let h = std::mem::take(heap).into_vec();
                *heap = h
                    .into_iter()
                    .filter(|Reverse((_, p, v))| valid(*p, *v))
                    .collect();
            }
        }
    }

    /// Settles group `g`'s counter at `now` and pushes its entries from its
    /// heaps' tops.
    fn reschedule_group(&mut self, d: &mut ViewData, g: u32, now: f64) {
        let gi = g as usize;
        d.group_base[gi] += d.group_rate[gi] * (now - d.group_since[gi]);
        d.group_since[gi] = now;
        self.gver[gi] = self.gver[gi].wrapping_add(1);
        let (exact, due) = Self::entry_times(
            d.group_rate[gi],
            d.group_base[gi],
            self.gftop[gi],
            self.gdtop[gi],
            now,
        );
        if exact == f64::INFINITY {
            return;
        }
        let v = self.gver[gi];
        self.gexact.push(Reverse((Key(exact), g, v)));
        self.gdue.push(Reverse((Key(due), g, v)));
        if self.gexact.len() > 4 * (self.gver.len() + 1024) {
            let ver = &self.gver;
            compact(&mut self.gexact, |i, v| ver[i as usize] == v);
            compact(&mut self.gdue, |i, v| ver[i as usize] == v);
        }
    }

    /// Puts path `p` into group `g` (or on its own counter, `NO_GROUP`, at
    /// rate 0) at `now`, keeping its service.
    pub fn set_path_group(&mut self, d: &mut ViewData, p: PathId, g: u32, now: f64, ng: usize) {
        let pi = p as usize;
        self.grow_groups(d, ng);
        let old = d.path_group[pi];
        if old == g {
            return;
        }
        let s = d.path_service(pi, now);
        let rate_before = Self::counter_rate(d, pi);
        if old == NO_GROUP {
            // Its own entries go stale.
            self.path_ver[pi] = self.path_ver[pi].wrapping_add(1);
            self.path_exact[pi] = f64::INFINITY;
            self.path_due[pi] = f64::INFINITY;
        }
        d.path_group[pi] = g;
        if old != NO_GROUP {
            self.gpaths[old as usize] -= 1;
        }
        if g != NO_GROUP {
            self.gpaths[g as usize] += 1;
        }
        self.pkver[pi] = self.pkver[pi].wrapping_add(1);
        if old != NO_GROUP {
            self.mark_group(old, DIRTY_TOPS, now);
        }
        if g == NO_GROUP {
            d.path_base[pi] = s;
            d.path_since[pi] = now;
            d.path_rate[pi] = 0.0;
            self.reschedule_path(d, p, now);
        } else {
            let gi = g as usize;
            let counter = d.group_base[gi] + d.group_rate[gi] * (now - d.group_since[gi]);
            d.path_off[pi] = s - counter;
            self.requeue(d, p);
            self.mark_group(g, DIRTY_TOPS, now);
        }
        if d.coflow_sums {
            self.cf_move(d, pi, old, rate_before, now);
        }
    }

    /// Gives group `g`'s paths per-flow rate `r` from `now` on.
    pub fn set_group_rate(&mut self, d: &mut ViewData, g: u32, r: f64, now: f64, ng: usize) {
        self.grow_groups(d, ng);
        let gi = g as usize;
        if d.group_rate[gi] == r {
            return;
        }
        d.group_base[gi] += d.group_rate[gi] * (now - d.group_since[gi]);
        d.group_since[gi] = now;
        let old = std::mem::replace(&mut d.group_rate[gi], r);
        self.mark_group(g, 0, now);
        if d.coflow_sums {
            self.cf_group_rate(d, gi, r - old, now);
        }
    }

    /// Gives every flow of path `p` rate `r` from `now` on.
    pub fn set_path_rate(&mut self, d: &mut ViewData, p: PathId, r: f64, now: f64) {
        let pi = p as usize;
        if d.path_group.get(pi).is_some_and(|&g| g != NO_GROUP) {
            let ng = self.gver.len();
            self.set_path_group(d, p, NO_GROUP, now, ng);
        }
        if d.path_rate[pi] == r {
            return;
        }
        d.path_base[pi] += d.path_rate[pi] * (now - d.path_since[pi]);
        d.path_since[pi] = now;
        let old = std::mem::replace(&mut d.path_rate[pi], r);
        self.reschedule_path(d, p, now);
        if d.coflow_sums {
            self.cf_counter_rate(d, pi, old, r, now);
        }
    }

    /// Drops done and moved flows from the top of a path heap; its top key
    /// after that.
    fn top(
        heap: &mut BinaryHeap<Reverse<(Key, u32, u32)>>,
        done: &[bool],
        ver: &[u32],
    ) -> Option<f64> {
        while let Some(&Reverse((Key(x), f, v))) = heap.peek() {
            if !done[f as usize] && ver[f as usize] == v {
                return Some(x);
            }
            heap.pop();
        }
        None
    }

    /// Re-reads path `p`'s heap tops (after its heaps changed).
    fn refresh_tops(&mut self, p: usize) {
        let (done, ver) = (&self.done, &self.ver);
        self.path_ftop[p] = Self::top(&mut self.path_f[p], done, ver).unwrap_or(f64::INFINITY);
        self.path_dtop[p] = Self::top(&mut self.path_d[p], done, ver).unwrap_or(f64::INFINITY);
    }

    /// The `exact` and `due` times of a counter at `s` (settled at `now`) that
    /// moves at `r`, for the smallest `F` and `D` of what it serves.
    fn entry_times(r: f64, s: f64, f_top: f64, d_top: f64, now: f64) -> (f64, f64) {
        if f_top == f64::INFINITY {
            (f64::INFINITY, f64::INFINITY) // no flows
        } else if d_top <= s {
            (now, now) // a flow is within its tolerance already: done at this event
        } else if r > 0.0 {
            let exact = now + (f_top - s) / r;
            let due = (exact - TIME_EPS).min(now + (d_top - s) / r);
            (exact, if due > now { due } else { exact })
        } else {
            (f64::INFINITY, f64::INFINITY) // paused
        }
    }

    /// Settles path `p` at `now` and pushes its entries from its heaps' tops.
    fn reschedule_path(&mut self, d: &mut ViewData, p: PathId, now: f64) {
        let pi = p as usize;
        d.path_base[pi] += d.path_rate[pi] * (now - d.path_since[pi]);
        d.path_since[pi] = now;
        self.path_ver[pi] = self.path_ver[pi].wrapping_add(1);
        let (exact, due) = Self::entry_times(
            d.path_rate[pi],
            d.path_base[pi],
            self.path_ftop[pi],
            self.path_dtop[pi],
            now,
        );
        self.path_exact[pi] = exact;
        self.path_due[pi] = due;
        if !self.heaps_valid || exact == f64::INFINITY {
            return;
        }
        let v = self.path_ver[pi];
        self.pexact.push(Reverse((Key(exact), p, v)));
        self.pdue.push(Reverse((Key(due), p, v)));
        if self.pexact.len() > 4 * (self.path_f.len() + 1024) {
            let ver = &self.path_ver;
            compact(&mut self.pexact, |i, v| ver[i as usize] == v);
            compact(&mut self.pdue, |i, v| ver[i as usize] == v);
        }
    }

    /// Before many path rate changes at once (a good part of the active paths):
    /// the heaps are dropped and the active paths scanned at each event, which
    /// costs `O(active paths)` in flat arrays instead of `O(log)` per change plus
    /// a stale entry to pop per change.
    pub fn go_dense(&mut self) {
        self.heaps_valid = false;
        self.pexact.clear();
        self.pdue.clear();
    }

    /// Before few path rate changes: the heaps are rebuilt if a dense change
    /// dropped them (every path with an entry is in `active_paths`).
    pub fn go_sparse(&mut self, active_paths: &[PathId]) {
        if self.heaps_valid {
            return;
        }
        self.heaps_valid = true;
        let mut ex = std::mem::take(&mut self.pexact).into_vec();
        let mut du = std::mem::take(&mut self.pdue).into_vec();
        for &p in active_paths {
            let pi = p as usize;
            if self.path_exact[pi] < f64::INFINITY {
                let v = self.path_ver[pi];
                ex.push(Reverse((Key(self.path_exact[pi]), p, v)));
                du.push(Reverse((Key(self.path_due[pi]), p, v)));
            }
        }
        self.pexact = BinaryHeap::from(ex);
        self.pdue = BinaryHeap::from(du);
    }

    // -- both -------------------------------------------------------------------

    /// The earliest projected completion (absolute time), or infinity.
    pub fn next_completion(&mut self, active_paths: &[PathId]) -> f64 {
        debug_assert!(self.dirty.is_empty(), "groups marked and not flushed");
        while let Some(&Reverse((_, f, v))) = self.exact.peek() {
            if self.ver[f as usize] == v {
                break;
            }
            self.exact.pop();
        }
        while let Some(&Reverse((_, p, v))) = self.pexact.peek() {
            if self.path_ver[p as usize] == v {
                break;
            }
            self.pexact.pop();
        }
        let a = if self.flow_heaps_valid {
            self.exact.peek().map_or(f64::INFINITY, |e| (e.0).0 .0)
        } else {
            let (ex, done) = (&self.fexact, &self.done);
            let m = self
                .moving
                .iter()
                .fold(f64::INFINITY, |m, &f| m.min(ex[f as usize]));
            self.zero_due
                .iter()
                .filter(|&&f| !done[f as usize])
                .fold(m, |m, &f| m.min(ex[f as usize]))
        };
        let b = if self.heaps_valid {
            self.pexact.peek().map_or(f64::INFINITY, |e| (e.0).0 .0)
        } else {
            let ex = &self.path_exact;
            active_paths
                .iter()
                .fold(f64::INFINITY, |m, &p| m.min(ex[p as usize]))
        };
        while let Some(&Reverse((_, g, v))) = self.gexact.peek() {
            if self.gver[g as usize] == v {
                break;
            }
            self.gexact.pop();
        }
        let c = self.gexact.peek().map_or(f64::INFINITY, |e| (e.0).0 .0);
        a.min(b).min(c).min(self.prop_next())
    }

    /// Every flow that counts as finished at `now`, in no particular order
    /// (the caller sorts); each is removed from the rate bookkeeping, with the
    /// bytes it had left credited to it (conservation).
    pub fn take_done(&mut self, d: &mut ViewData, now: f64, out: &mut Vec<u32>) {
        out.clear();
        self.flush_groups(d);
        if self.prop.count > 0 {
            self.prop_take_done(d, now, out);
        }
        if !self.flow_heaps_valid {
            self.take_done_scan(d, now, out);
            self.take_done_paths(d, now, out);
            return;
        }
        while let Some(&Reverse((Key(t), f, v))) = self.due.peek() {
            if t > now {
                break;
            }
            self.due.pop();
            let fi = f as usize;
            if self.ver[fi] != v {
                continue;
            }
            let r = d.rate[fi];
            let rem = d.size[fi] - d.base[fi] - r * (now - d.since[fi]);
            if rem > finish_threshold(d.size[fi]).max(r * TIME_EPS) {
                if self.limits_used && self.reached_limit(d, fi, r, now) {
                    self.cross(f);
                    continue;
                }
                // A rounding hair short: done for sure when it would get there.
                let at = d.since[fi] + (self.flow_target(d, fi).0 - d.base[fi]) / r;
                self.fdue[fi] = at;
                self.due.push(Reverse((Key(at), f, v)));
                continue;
            }
            self.finish(d, f, now);
            out.push(f);
        }
        if !self.zero_due.is_empty() {
            let done = &self.done;
            self.zero_due.retain(|&f| !done[f as usize]);
        }
        self.take_done_paths(d, now, out);
    }

    /// `take_done` without heaps: the same test on every moving flow's `fdue`.
    fn take_done_scan(&mut self, d: &mut ViewData, now: f64, out: &mut Vec<u32>) {
        let mut cand = std::mem::take(&mut self.due_scratch);
        cand.clear();
        let (due, done) = (&self.fdue, &self.done);
        cand.extend(
            self.moving
                .iter()
                .copied()
                .filter(|&f| due[f as usize] <= now),
        );
        self.zero_due.retain(|&f| !done[f as usize]);
        cand.extend(
            self.zero_due
                .iter()
                .copied()
                .filter(|&f| due[f as usize] <= now),
        );
        cand.sort_unstable();
        cand.dedup();
        for &f in &cand {
            let fi = f as usize;
            let r = d.rate[fi];
            let rem = d.size[fi] - d.base[fi] - r * (now - d.since[fi]);
            if rem > finish_threshold(d.size[fi]).max(r * TIME_EPS) {
                if self.limits_used && self.reached_limit(d, fi, r, now) {
                    self.cross(f);
                    continue;
                }
                self.fdue[fi] = d.since[fi] + (self.flow_target(d, fi).0 - d.base[fi]) / r;
                continue;
            }
            self.finish(d, f, now);
            out.push(f);
        }
        self.due_scratch = cand;
    }

    fn take_done_paths(&mut self, d: &mut ViewData, now: f64, out: &mut Vec<u32>) {
        let mut due = std::mem::take(&mut self.due_paths);
        due.clear();
        if self.heaps_valid {
            while let Some(&Reverse((Key(t), p, v))) = self.pdue.peek() {
                if t > now {
                    break;
                }
                self.pdue.pop();
                if self.path_ver[p as usize] == v {
                    due.push(p);
                }
            }
        } else {
            let pd = &self.path_due;
            due.extend(
                d.active_paths
                    .iter()
                    .copied()
                    .filter(|&p| pd[p as usize] <= now),
            );
        }
        for &p in &due {
            let pi = p as usize;
            let s = d.path_base[pi] + d.path_rate[pi] * (now - d.path_since[pi]);
            self.pop_done_flows(d, pi, s, d.path_rate[pi] * TIME_EPS, now, out);
            self.refresh_tops(pi);
            self.reschedule_path(d, p, now);
        }
        self.due_paths = due;
        self.take_done_groups(d, now, out);
    }

    /// Path `pi`'s flows done at service `s`: within their byte tolerance
    /// (`D ≤ s`), or finishing within `TIME_EPS` (`F − s ≤ eps_bytes`).
    fn pop_done_flows(
        &mut self,
        d: &mut ViewData,
        pi: usize,
        s: f64,
        eps_bytes: f64,
        now: f64,
        out: &mut Vec<u32>,
    ) {
        self.cf_done.clear();
        for (heap, slack) in [
            (&mut self.path_d[pi], 0.0),
            (&mut self.path_f[pi], eps_bytes),
        ] {
            while let Some(&Reverse((Key(x), f, v))) = heap.peek() {
                if x - s > slack {
                    break;
                }
                heap.pop();
                let fi = f as usize;
                if !self.done[fi] && self.ver[fi] == v {
                    if self.limits_used {
                        // Keyed at its counter's limit: it crossed it, and its
                        // other key goes stale.
                        let rem = d.size[fi] - (s - d.base[fi]);
                        if rem > finish_threshold(d.size[fi]).max(eps_bytes) {
                            self.ver[fi] = self.ver[fi].wrapping_add(1);
                            self.crossed.push(f);
                            continue;
                        }
                    }
                    self.done[fi] = true;
                    if d.coflow_sums {
                        self.cf_done.push((f, s - d.base[fi]));
                    }
                    d.base[fi] = d.size[fi]; // the remainder is credited: sent = size
                    d.rate[fi] = 0.0;
                    d.since[fi] = now;
                    out.push(f);
                }
            }
        }
        if d.coflow_sums {
            self.cf_take_done(d, pi, now);
        }
    }

    /// The groups due at `now`: in each, the paths with a flow done (the same
    /// tests as a path's, on `off + G`), their flows taken, their keys pushed
    /// again.
    fn take_done_groups(&mut self, d: &mut ViewData, now: f64, out: &mut Vec<u32>) {
        let mut due = std::mem::take(&mut self.due_groups);
        due.clear();
        while let Some(&Reverse((Key(t), g, v))) = self.gdue.peek() {
            if t > now {
                break;
            }
            self.gdue.pop();
            if self.gver[g as usize] == v {
                due.push(g);
            }
        }
        let mut paths = std::mem::take(&mut self.due_paths);
        for &g in &due {
            let gi = g as usize;
            let counter = d.group_base[gi] + d.group_rate[gi] * (now - d.group_since[gi]);
            let eps_bytes = d.group_rate[gi] * TIME_EPS;
            paths.clear();
            let (pkver, pg) = (&self.pkver, &d.path_group);
            for (heap, slack) in [(&mut self.gd[gi], 0.0), (&mut self.gf[gi], eps_bytes)] {
                while let Some(&Reverse((Key(x), p, v))) = heap.peek() {
                    if x - counter > slack {
                        break;
                    }
                    heap.pop();
                    if pkver[p as usize] == v && pg[p as usize] == g {
                        paths.push(p);
                    }
                }
            }
            paths.sort_unstable();
            paths.dedup();
            for &p in &paths {
                let pi = p as usize;
                let s = d.path_off[pi] + counter;
                self.pop_done_flows(d, pi, s, eps_bytes, now, out);
                self.refresh_tops(pi);
                self.requeue(d, p);
            }
            self.refresh_group_tops(d, g);
            self.reschedule_group(d, g, now);
        }
        self.due_paths = paths;
        self.due_groups = due;
    }

    /// Flow `f` (flow mode) is done at `now`: its rate goes, its bytes are all sent.
    fn finish(&mut self, d: &mut ViewData, f: u32, now: f64) {
        let fi = f as usize;
        let k = d.flow_coflow[fi] as usize;
        let r = d.rate[fi];
        let sent = d.base[fi] + r * (now - d.since[fi]);
        d.coflow_base[k] += d.coflow_rate[k] * (now - d.coflow_since[k]) + (d.size[fi] - sent);
        d.coflow_since[k] = now;
        if r != 0.0 {
            self.unmove(f);
            self.coflow_moving[k] -= 1;
            d.coflow_rate[k] = if self.coflow_moving[k] == 0 {
                self.group_part(k)
            } else {
                d.coflow_rate[k] - r
            };
        }
        d.base[fi] = d.size[fi];
        d.rate[fi] = 0.0;
        d.since[fi] = now;
        self.ver[fi] = self.ver[fi].wrapping_add(1);
        self.done[fi] = true;
        self.fexact[fi] = f64::INFINITY;
        self.fdue[fi] = f64::INFINITY;
    }

    /// A flow's current rate, whichever the mode.
    pub fn rate_of(d: &ViewData, f: usize) -> f64 {
        let r = d.rate[f];
        if r.is_nan() {
            if let Some(w) = d.prop_weight(f) {
                return w * d.prop_rate[d.flow_coflow[f] as usize];
            }
            let p = d.counter_of(f);
            match d.path_group.get(p) {
                Some(&g) if g != NO_GROUP => d.group_rate[g as usize],
                _ => d.path_rate[p],
            }
        } else {
            r
        }
    }
}
