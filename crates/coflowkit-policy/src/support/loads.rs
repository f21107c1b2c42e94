//! Per-coflow sums over the links of its active flows, kept across calls: remaining
//! bytes ([`LoadCache`]) and flow counts ([`LinkCounts`]).

use crate::view::{ClairvoyantView, Common};

/// What a coflow's cached loads were built from: (`coflow_started`, active
/// flows, `coflow_sent` bits).
type Key = (u32, u32, u64);
const STALE: Key = (u32::MAX, u32::MAX, u64::MAX);

/// Per-coflow remaining bytes on each link its active flows cross,
/// `R_k(l) = Σ_{f ∈ k active, l ∈ f} rem_f`, as (link, bytes) pairs in ascending link
/// order, kept across calls. A coflow's entry is recounted when one of its flows
/// may have moved (the policy reports every coflow it gave a positive rate with
/// [`LoadCache::moved`], and a change of `coflow_sent` shows bytes sent anyway, as
/// in a real network), started, or finished; otherwise the cached sums are exactly
/// what a recount would give (same flows, same order, same bytes). Policies
/// that serve few coflows at a time then pay `O(flows of served coflows)` per call
/// instead of `O(active flows)`.
///
/// In *drained* form ([`LoadCache::drained`]) a served coflow is not recounted:
/// the policy says at what rate each of its links' loads falls
/// ([`LoadCache::all_at`], [`LoadCache::add`]), and the next call takes
/// `R_k(l) − ρ_k(l)·Δt` (`O(links)` instead of `O(flows · path length)`). The
/// sums then differ from a recount by float rounding (a few ulps per call), and
/// they are only right if the driver applied the rates the policy gave: each
/// call checks the coflow's remaining bytes predicted the same way against the
/// view's (`coflow_size − coflow_sent`, within [`DRAIN_TOL`] of its size) and
/// recounts when they differ (a real network, where flows do not run at the
/// rates they were given).
#[derive(Default)]
pub struct LoadCache {
    /// Per coflow: (`coflow_started`, active count, `coflow_sent` bits) when built
    /// (the bits are 0 in drained form).
    built: Vec<Key>,
    loads: Vec<Vec<(u32, f64)>>,
    index: LinkIndex,
    /// Drained form: the policy call (counted by [`LoadCache::begin`]), and per
    /// coflow how its loads fall.
    drain: Option<(u64, Vec<Drain>)>,
    /// Drained form: the flows that finished since the previous call, as
    /// (coflow, flow), sorted.
    gone: Vec<(u32, u32)>,
}

/// How a coflow's cached loads fall between calls (drained form).
#[derive(Default, Clone)]
struct Drain {
    /// The call that last read the loads, and its time.
    call: u64,
    at: f64,
    /// Per entry of the loads: bytes per second leaving it from `at` on, and
    /// the active flows crossing its link.
    rho: Vec<f64>,
    live: Vec<u32>,
    /// The coflow's remaining bytes at `at` (the view's), and their rate.
    left: f64,
    left_rate: f64,
}

/// How far (relative to the coflow's size) the drained prediction of a coflow's
/// remaining bytes may be from the view's before the loads are recounted. Float
/// rounding of one call is about 1e-16; a network that did not apply the rates
/// is off by far more.
pub const DRAIN_TOL: f64 = 1e-9;

impl LoadCache {
    /// A cache in drained form (see the type's docs).
    pub fn drained() -> Self {
        LoadCache {
            drain: Some((0, Vec::new())),
            ..LoadCache::default()
        }
    }

    /// Puts the cache in drained form (a no-op if it is). Policies do it under
    /// a driver that takes delta decisions (the engine), which applies the
    /// rates given exactly; under the runtime they recount, so that a decision
    /// depends on the view alone, bit for bit (a master that compacts its
    /// slots starts the policy afresh and must get the same decisions).
    pub fn drain_on(&mut self) {
        if self.drain.is_none() {
            self.drain = Some((0, Vec::new()));
            self.forget();
        }
    }

    /// Every entry is recounted at its next read (a policy that gave rates the
    /// cache was not told of, as when it answered in another form).
    pub fn forget(&mut self) {
        self.built.iter_mut().for_each(|b| *b = STALE);
    }

    /// Once per policy call (the index's sweep, [`Sweep::begin`]).
    pub fn begin(&mut self, c: &Common) {
        self.index.begin(c);
        if let Some((call, _)) = &mut self.drain {
            *call += 1;
            self.gone.clear();
            self.gone
                .extend(c.finished.iter().map(|&f| (c.flow_coflow[f as usize], f)));
            self.gone.sort_unstable();
        }
    }

    /// The loads of group `g` of `v`.
    pub fn get(&mut self, v: &ClairvoyantView, g: usize) -> &[(u32, f64)] {
        let grp = v.groups[g];
        let k = grp.coflow as usize;
        let nc = v.coflow_started.len();
        if self.built.len() < nc {
            self.built.resize(nc, STALE);
            self.loads.resize(nc, Vec::new());
        }
        let Some((call, drains)) = &mut self.drain else {
            let key = (
                v.coflow_started[k],
                grp.end - grp.start,
                v.coflow_sent(k as u32).to_bits(),
            );
            if self.built[k] != key {
                let out = &mut self.loads[k];
                out.clear();
                self.index.sums(v, g, out, |i| v.remaining(v.active[i]));
                self.built[k] = key;
            }
            return &self.loads[k];
        };
        if drains.len() < nc {
            drains.resize(nc, Drain::default());
        }
        let key = (v.coflow_started[k], grp.end - grp.start, 0);
        let e = &mut drains[k];
        let left = (v.coflow_size[k] - v.coflow_sent(k as u32)).max(0.0);
        let built = self.built[k];
        if built == key && e.call == *call {
            return &self.loads[k];
        }
        // Kept if the same flows are active, or some finished (listed by the
        // driver) and none started; and if the coflow sent what its rates say.
        let lo = self.gone.partition_point(|&(c, _)| (c as usize) < k);
        let hi = lo + self.gone[lo..].partition_point(|&(c, _)| c as usize == k);
        let same = built != STALE && built.0 == key.0 && built.1 == key.1 + (hi - lo) as u32;
        let dt = v.now_s - e.at;
        if same && (e.left - e.left_rate * dt - left).abs() <= DRAIN_TOL * v.coflow_size[k] {
            let loads = &mut self.loads[k];
            for ((_, b), &r) in loads.iter_mut().zip(&e.rho) {
                if r != 0.0 {
                    *b = (*b - r * dt).max(0.0);
                }
            }
            // A finished flow had at most its finish tolerance left, which the
            // driver credited: only the links it leaves empty go.
            let mut emptied = false;
            for &(_, f) in &self.gone[lo..hi] {
                for &l in v.fabric.path(v.flow_path[f as usize]) {
                    if let Ok(j) = loads.binary_search_by_key(&l, |&(x, _)| x) {
                        e.live[j] -= 1;
                        emptied |= e.live[j] == 0;
                    }
                }
            }
            if emptied {
                let mut j = 0;
                loads.retain(|_| {
                    j += 1;
                    e.live[j - 1] > 0
                });
                e.live.retain(|&n| n > 0);
                e.rho.truncate(e.live.len());
            }
            e.rho.iter_mut().for_each(|r| *r = 0.0);
            (e.call, e.at, e.left, e.left_rate) = (*call, v.now_s, left, 0.0);
            self.built[k] = key;
            return &self.loads[k];
        }
        let out = &mut self.loads[k];
        out.clear();
        e.live.clear();
        self.index
            .sums_counted(v, g, out, Some(&mut e.live), |i| v.remaining(v.active[i]));
        self.built[k] = key;
        e.rho.clear();
        e.rho.resize(out.len(), 0.0);
        (e.call, e.at, e.left, e.left_rate) = (*call, v.now_s, left, 0.0);
        &self.loads[k]
    }

    /// Coflow `k` got a positive rate: its remaining bytes will change
    /// (recounted at the next read; in drained form, use [`LoadCache::all_at`]
    /// and [`LoadCache::add`] instead).
    pub fn moved(&mut self, k: u32) {
        if let Some(b) = self.built.get_mut(k as usize) {
            *b = STALE;
        }
    }

    /// Drained form: every active flow of coflow `k` (read this call) was given
    /// `rem_f / gamma`, so each of its loads falls at `R_k(l) / gamma`.
    pub fn all_at(&mut self, k: u32, gamma: f64) {
        let Some((_, drains)) = &mut self.drain else {
            return self.moved(k);
        };
        let e = &mut drains[k as usize];
        for (r, &(_, b)) in e.rho.iter_mut().zip(&self.loads[k as usize]) {
            *r += b / gamma;
        }
        e.left_rate += e.left / gamma;
    }

    /// Drained form: a flow of coflow `k` on `links` got `rate` more.
    pub fn add(&mut self, k: u32, links: &[u32], rate: f64) {
        let Some((_, drains)) = &mut self.drain else {
            return self.moved(k);
        };
        let e = &mut drains[k as usize];
        let loads = &self.loads[k as usize];
        for &l in links {
            if let Ok(j) = loads.binary_search_by_key(&l, |&(x, _)| x) {
                e.rho[j] += rate;
            }
        }
        e.left_rate += rate;
    }
}

/// Per coflow, the number of its active flows on each link it uses, `(link, n)`
/// in ascending link order, kept across calls and brought up to date only when
/// the coflow started or finished flows (counts change with nothing else): from
/// the flows that started and finished since the previous call (`Common::started`
/// and `finished`, when the driver fills them and they are few) when the counts
/// are those of the previous call, by a recount otherwise.
#[derive(Default)]
pub struct LinkCounts {
    /// Per coflow: (`coflow_started`, active count) when counted.
    built: Vec<(u32, u32)>,
    counts: Vec<Vec<(u32, u32)>>,
    acc: Vec<u32>,
    touched: Vec<u32>,
    /// The flows of one coflow that started (+1) or finished (-1) since the
    /// previous call and were counted (or are to be), with the sign.
    moved: Vec<(u32, i32)>,
    /// How many times a coflow's counts were updated from the lists, and
    /// recounted (for tests and profiles).
    pub updates: u64,
    pub recounts: u64,
    /// Count only each path's first and last links (a coflow's ports: on the
    /// big switch its senders' uplinks and receivers' downlinks).
    ends: bool,
}

/// The links of flow `f`'s path that [`LinkCounts`] counts: all, or the first
/// and the last.
fn counted<'a>(c: &Common<'a>, f: u32, ends: bool) -> impl Iterator<Item = u32> + 'a {
    let path = c.fabric.path(c.flow_path[f as usize]);
    let (first, last) = (path[0], path[path.len() - 1]);
    let all = (!ends).then(|| path.iter().copied());
    let two = ends.then_some([first, last]).into_iter().flatten();
    all.into_iter().flatten().chain(two)
}

/// At most this many flows started and finished since the previous call for
/// the counts to be updated from them (each `get` of a changed coflow scans
/// both lists); more, and a changed coflow is recounted.
const DELTA_FLOWS: usize = 64;

impl LinkCounts {
    /// Counts on each path's first and last links only: per coflow, its ports
    /// and how many of its active flows use each.
    pub fn ends() -> Self {
        LinkCounts {
            ends: true,
            ..LinkCounts::default()
        }
    }

    pub fn get(&mut self, c: &Common, g: usize) -> &[(u32, u32)] {
        let grp = c.groups[g];
        let k = grp.coflow as usize;
        let nc = c.coflow_started.len();
        if self.built.len() < nc {
            self.built.resize(nc, (u32::MAX, u32::MAX));
            self.counts.resize(nc, Vec::new());
        }
        let key = (c.coflow_started[k], grp.end - grp.start);
        if self.built[k] != key && !self.update(c, k, key) {
            self.recounts += 1;
            let nl = c.fabric.num_links();
            if self.acc.len() < nl {
                self.acc.resize(nl, 0);
            }
            self.touched.clear();
            for &f in &c.active[grp.range()] {
                for l in counted(c, f, self.ends) {
                    if self.acc[l as usize] == 0 {
                        self.touched.push(l);
                    }
                    self.acc[l as usize] += 1;
                }
            }
            self.touched.sort_unstable();
            let out = &mut self.counts[k];
            out.clear();
            for &l in &self.touched {
                out.push((l, self.acc[l as usize]));
                self.acc[l as usize] = 0;
            }
            self.built[k] = key;
        }
        &self.counts[k]
    }

    /// Brings coflow `k`'s counts to `key` from the flows that started and
    /// finished since the previous call, when its counts are those of the
    /// previous call: `built[k]` is `key` less those flows (flows only start
    /// and finish, and `coflow_started` never decreases, so the pair then names
    /// the previous call's flows). False, untouched, otherwise.
    fn update(&mut self, c: &Common, k: usize, key: (u32, u32)) -> bool {
        let lists = c.started.len() + c.finished.len();
        if lists == 0 || lists > DELTA_FLOWS || self.built[k].0 == u32::MAX {
            return false;
        }
        let of_k = |f: &&u32| c.flow_coflow[**f as usize] as usize == k;
        let started = c.started.iter().filter(of_k).count() as i64;
        let finished = c.finished.iter().filter(of_k).count() as i64;
        let prev = (key.0 as i64 - started, key.1 as i64 + finished - started);
        if (self.built[k].0 as i64, self.built[k].1 as i64) != prev {
            return false;
        }
        // A flow that started and finished since was never counted.
        self.moved.clear();
        for &f in c.started.iter().filter(of_k) {
            if !c.finished.contains(&f) {
                self.moved.push((f, 1));
            }
        }
        for &f in c.finished.iter().filter(of_k) {
            if !c.started.contains(&f) {
                self.moved.push((f, -1));
            }
        }
        let out = &mut self.counts[k];
        for &(f, d) in &self.moved {
            for l in counted(c, f, self.ends) {
                match out.binary_search_by_key(&l, |e| e.0) {
                    Ok(i) if out[i].1 as i32 + d == 0 => {
                        out.remove(i);
                    }
                    Ok(i) => out[i].1 = (out[i].1 as i32 + d) as u32,
                    Err(i) => {
                        debug_assert_eq!(d, 1, "a finished flow was counted");
                        out.insert(i, (l, 1));
                    }
                }
            }
        }
        self.built[k] = key;
        self.updates += 1;
        true
    }
}

/// How often (in calls of [`Sweep::begin`]) per-coflow caches drop the entries
/// of coflows that are no longer active.
pub(crate) const SWEEP_EVERY: u32 = 64;

/// Which coflows a per-coflow cache holds entries for, and the periodic sweep
/// that drops those no longer active, so the cache's memory follows the active
/// flows rather than every flow ever seen.
#[derive(Default)]
pub struct Sweep {
    live: Vec<u32>,
    calls: u32,
    seen: Vec<bool>,
}

impl Sweep {
    /// Coflow `k` now has an entry.
    pub fn track(&mut self, k: u32) {
        self.live.push(k);
    }

    /// Once per policy call: every [`SWEEP_EVERY`] calls, `drop(k)` for each
    /// tracked coflow `k` that is not among `c.groups`.
    pub fn begin(&mut self, c: &Common, mut drop: impl FnMut(u32)) {
        self.calls = self.calls.wrapping_add(1);
        if !self.calls.is_multiple_of(SWEEP_EVERY) || self.live.is_empty() {
            return;
        }
        let n = self.live.iter().copied().max().unwrap_or(0) as usize + 1;
        self.seen.clear();
        self.seen.resize(n, false);
        for g in c.groups {
            if let Some(s) = self.seen.get_mut(g.coflow as usize) {
                *s = true;
            }
        }
        let seen = &self.seen;
        self.live.retain(|&k| {
            let keep = seen[k as usize];
            if !keep {
                drop(k);
            }
            keep
        });
    }

    #[cfg(test)]
    pub fn tracked(&self) -> &[u32] {
        &self.live
    }
}

/// A finished flow's mark in a per-coflow index kept with finished flows in it.
pub(crate) const DEAD: u32 = u32::MAX;

/// What a per-coflow index of active flows ([`LinkIndex`], `Buckets`) keeps to
/// know whether it still describes the coflow: the flows it indexed and how many
/// of them have finished since.
#[derive(Default, Clone)]
pub(crate) struct Kept {
    /// (`coflow_started`, active count) when last seen; `None`: not built.
    pub key: Option<(u32, u32)>,
    /// The flows indexed (global indices, ascending; [`DEAD`] once found gone).
    pub flows: Vec<u32>,
    /// Indexed flows that finished (found or not), and those marked.
    pub dead: u32,
    pub marked: u32,
}

impl Kept {
    /// Indexed afresh: `flows` are the coflow's active flows, `key` their key.
    pub fn reset(&mut self, flows: &[u32], key: (u32, u32)) {
        self.flows.clear();
        self.flows.extend_from_slice(flows);
        self.dead = 0;
        self.marked = 0;
        self.key = Some(key);
    }
}

/// Brings the entry of group `g`'s coflow up to date, growing `entries` as
/// needed; true when it must be built afresh. Nothing changed: kept. Only
/// flows finished: kept with them in it (`dead` counts them; a walk marks them
/// [`DEAD`] with [`mark_finished`]) unless they would be more than half of it.
/// A flow started, or a new entry (tracked by `sweep`): rebuilt.
pub(crate) fn refresh<E: Default + Clone>(
    entries: &mut Vec<E>,
    sweep: &mut Sweep,
    c: &Common,
    g: usize,
    kept: impl Fn(&mut E) -> &mut Kept,
) -> bool {
    let grp = c.groups[g];
    let k = grp.coflow as usize;
    if entries.len() <= k {
        entries.resize(c.coflow_started.len().max(k + 1), E::default());
    }
    let now = (c.coflow_started[k], grp.end - grp.start);
    let e = kept(&mut entries[k]);
    match e.key {
        Some(key) if key == now => false,
        Some((started, n)) if started == now.0 && now.1 < n => {
            let dead = e.dead + (n - now.1);
            if 2 * dead as usize > e.flows.len() {
                return true;
            }
            e.dead = dead;
            e.key = Some(now);
            false
        }
        Some(_) => true,
        None => {
            sweep.track(k as u32);
            true
        }
    }
}

/// Marks [`DEAD`] the entries of `flows` (a coflow's indexed flows, ascending,
/// some already marked) that are not in `active` (its active flows, a subset),
/// counting them in `marked` and calling `gone(j)` for each entry `j` marked.
pub(crate) fn mark_finished(
    flows: &mut [u32],
    active: &[u32],
    marked: &mut u32,
    mut gone: impl FnMut(usize),
) {
    let mut i = 0;
    for (j, f) in flows.iter_mut().enumerate() {
        if *f == DEAD {
            continue;
        }
        if i < active.len() && active[i] == *f {
            i += 1;
        } else {
            *f = DEAD;
            *marked += 1;
            gone(j);
        }
    }
}

/// Per coflow, the links its active flows cross (ascending) and, per flow, the
/// positions of its links in that list; kept across calls. Flows that finish
/// stay in the index, marked [`DEAD`] when a walk finds them gone, until they
/// are half of it; a coflow that starts flows is indexed afresh. Summing a value
/// per link over a coflow's flows then costs no path look-up, no list of
/// touched links and no sort per call ([`LinkIndex::sums`]).
#[derive(Default)]
pub struct LinkIndex {
    entries: Vec<Indexed>,
    sweep: Sweep,
    /// Per link: position + 1 in the coflow being built (0: not yet).
    slot: Vec<u32>,
    acc: Vec<f64>,
}

#[derive(Default, Clone)]
struct Indexed {
    kept: Kept,
    links: Vec<u32>,
    /// Per link: the indexed flows not found gone that cross it.
    live: Vec<u32>,
    /// Flow `j`'s links are `local[start[j]..start[j + 1]]`, positions in `links`.
    start: Vec<u32>,
    local: Vec<u32>,
}

impl LinkIndex {
    /// Once per policy call (see [`Sweep::begin`]).
    pub fn begin(&mut self, c: &Common) {
        let entries = &mut self.entries;
        self.sweep
            .begin(c, |k| entries[k as usize] = Indexed::default());
    }

    /// Indexes group `g`'s active flows afresh.
    fn build(&mut self, c: &Common, g: usize) {
        let grp = c.groups[g];
        let k = grp.coflow as usize;
        let nl = c.fabric.num_links();
        if self.slot.len() < nl {
            self.slot.resize(nl, 0);
        }
        let e = &mut self.entries[k];
        e.links.clear();
        let flows = &c.active[grp.range()];
        for &f in flows {
            for &l in c.fabric.path(c.flow_path[f as usize]) {
                if self.slot[l as usize] == 0 {
                    self.slot[l as usize] = 1;
                    e.links.push(l);
                }
            }
        }
        e.links.sort_unstable();
        for (j, &l) in e.links.iter().enumerate() {
            self.slot[l as usize] = j as u32 + 1;
        }
        e.live.clear();
        e.live.resize(e.links.len(), 0);
        e.start.clear();
        e.local.clear();
        e.start.push(0);
        for &f in flows {
            for &l in c.fabric.path(c.flow_path[f as usize]) {
                let li = self.slot[l as usize] - 1;
                e.local.push(li);
                e.live[li as usize] += 1;
            }
            e.start.push(e.local.len() as u32);
        }
        for &l in &e.links {
            self.slot[l as usize] = 0;
        }
        e.kept
            .reset(flows, (c.coflow_started[k], grp.end - grp.start));
    }

    /// `out` gets appended, for each link group `g`'s active flows cross in
    /// ascending order, `(link, Σ value(i))` over its flows `i` (positions in
    /// `c.active`), added in flow order, as a pass over the flows would.
    pub fn sums(
        &mut self,
        c: &Common,
        g: usize,
        out: &mut Vec<(u32, f64)>,
        value: impl FnMut(usize) -> f64,
    ) {
        self.sums_counted(c, g, out, None, value);
    }

    /// [`LinkIndex::sums`], with `counts` (if given) appended, for each link
    /// listed, the number of active flows crossing it.
    pub fn sums_counted(
        &mut self,
        c: &Common,
        g: usize,
        out: &mut Vec<(u32, f64)>,
        mut counts: Option<&mut Vec<u32>>,
        mut value: impl FnMut(usize) -> f64,
    ) {
        let grp = c.groups[g];
        let k = grp.coflow as usize;
        if refresh(&mut self.entries, &mut self.sweep, c, g, |e| &mut e.kept) {
            self.build(c, g);
        }
        let e = &mut self.entries[k];
        self.acc.clear();
        self.acc.resize(e.links.len(), 0.0);
        if e.kept.dead != e.kept.marked {
            let kept = &mut e.kept;
            mark_finished(
                &mut kept.flows,
                &c.active[grp.range()],
                &mut kept.marked,
                |j| {
                    for &t in &e.local[e.start[j] as usize..e.start[j + 1] as usize] {
                        e.live[t as usize] -= 1;
                    }
                },
            );
        }
        // Every finished flow is marked: the others are the active ones, in order.
        let mut i = 0;
        for j in 0..e.kept.flows.len() {
            if e.kept.flows[j] == DEAD {
                continue;
            }
            let x = value(grp.start as usize + i);
            i += 1;
            for &t in &e.local[e.start[j] as usize..e.start[j + 1] as usize] {
                self.acc[t as usize] += x;
            }
        }
        debug_assert_eq!(
            i,
            grp.end as usize - grp.start as usize,
            "every active flow is indexed"
        );
        for (li, &l) in e.links.iter().enumerate() {
            if e.live[li] > 0 {
                out.push((l, self.acc[li]));
                if let Some(n) = counts.as_deref_mut() {
                    n.push(e.live[li]);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::Case;

    #[test]
    fn link_sums_add_every_flow_on_each_link_once_listed() {
        // 4 ports (up 0..4, down 4..8). Coflow 0: 0→1 (1), 0→2 (2), 0→2 (4), 3→2
        // (8), 1→1 (16).
        // up0 = 7, up1 = 16, up3 = 8, down5 = 1 + 16 = 17, down6 = 14.
        let mut c = Case::new(
            4,
            1.0,
            &[
                (0, 0, 1, 1.0, 0.0),
                (0, 0, 2, 2.0, 0.0),
                (0, 0, 2, 4.0, 0.0),
                (0, 3, 2, 8.0, 0.0),
                (0, 1, 1, 16.0, 0.0),
            ],
        );
        let mut index = LinkIndex::default();
        let mut out = vec![(99, 1.0)];
        let v = c.clairvoyant();
        index.sums(&v, 0, &mut out, |i| v.remaining(v.active[i]));
        let want = [(0, 7.0), (1, 16.0), (3, 8.0), (5, 17.0), (6, 14.0)];
        assert_eq!(out[0], (99, 1.0), "appended after what out held");
        assert_eq!(&out[1..], &want);
        // Same flows, new bytes: the index is kept, the sums follow the values.
        c.set_remaining(4, 6.0);
        let v = c.clairvoyant();
        out.clear();
        index.sums(&v, 0, &mut out, |i| v.remaining(v.active[i]));
        assert_eq!(out, vec![(0, 7.0), (1, 6.0), (3, 8.0), (5, 7.0), (6, 14.0)]);
        // 3→2 finished: it stays in the index, found gone; up3 is dropped.
        c.active = vec![0, 1, 2, 4];
        c.groups[0].end = 4;
        let v = c.clairvoyant();
        out.clear();
        index.sums(&v, 0, &mut out, |i| v.remaining(v.active[i]));
        assert_eq!(out, vec![(0, 7.0), (1, 6.0), (5, 7.0), (6, 6.0)]);
        assert_eq!(index.sweep.tracked(), &[0]);
        // Once no longer active, it is dropped by the sweep.
        c.active.clear();
        c.groups.clear();
        for _ in 0..crate::support::loads::SWEEP_EVERY {
            index.begin(&c.common());
        }
        assert!(index.sweep.tracked().is_empty() && index.entries[0].kept.key.is_none());
    }

    #[test]
    fn kept_link_sums_equal_fresh_ones_as_flows_finish() {
        // 50 random flows on 6 ports with random sizes lose random flows one at
        // a time: the kept index gives, bit for bit, the sums of a fresh one.
        let mut rng = coflowkit_model::Pcg32::new(3, 2);
        let flows: Vec<(u32, u32, u32, f64, f64)> = (0..50)
            .map(|_| {
                (
                    0,
                    rng.below(6),
                    rng.below(6),
                    1.0 + rng.below(1000) as f64 / 7.0,
                    0.0,
                )
            })
            .collect();
        let mut c = Case::new(6, 10.0, &flows);
        let mut kept = LinkIndex::default();
        while !c.active.is_empty() {
            let v = c.clairvoyant();
            let (mut a, mut b) = (Vec::new(), Vec::new());
            kept.sums(&v, 0, &mut a, |i| v.remaining(v.active[i]));
            LinkIndex::default().sums(&v, 0, &mut b, |i| v.remaining(v.active[i]));
            assert_eq!(a, b);
            assert!(a.iter().all(|&(_, x)| x > 0.0), "no link without a flow");
            let gone = rng.below(c.active.len() as u32) as usize;
            c.active.remove(gone);
            c.groups[0].end -= 1;
        }
    }

    #[test]
    fn link_counts_are_recounted_when_flows_start_or_finish() {
        // 3 ports (up 0..3, down 3..6). Coflow 0: 0→1, 0→2, 2→1.
        let mut c = Case::new(
            3,
            1.0,
            &[
                (0, 0, 1, 1.0, 0.0),
                (0, 0, 2, 1.0, 0.0),
                (0, 2, 1, 1.0, 0.0),
            ],
        );
        let mut lc = LinkCounts::default();
        assert_eq!(lc.get(&c.common(), 0), &[(0, 2), (2, 1), (4, 2), (5, 1)]);
        // Flow 0→2 finished: the active count changed.
        c.active = vec![0, 2];
        c.groups[0].end = 2;
        assert_eq!(lc.get(&c.common(), 0), &[(0, 1), (2, 1), (4, 2)]);
    }

    #[test]
    fn link_counts_follow_started_and_finished_flows_as_a_recount_does() {
        // 3 coflows of 12 flows on 5 ports, half started. At each of 60 calls
        // 0 to 3 flows start and 0 to 3 finish (now and then one starts and
        // finishes between two calls, and one call passes no lists, as a
        // driver without them); the kept counts must equal a fresh recount's,
        // and most changed coflows must be updated from the lists.
        let mut rng = coflowkit_model::Pcg32::new(17, 3);
        let mut flows = Vec::new();
        for k in 0..3u32 {
            for _ in 0..12 {
                flows.push((k, rng.below(5), rng.below(5), 1.0, 0.0));
            }
        }
        let mut c = Case::new(5, 1.0, &flows);
        let n = flows.len() as u32;
        let (mut active, mut pending): (Vec<u32>, Vec<u32>) = (0..n).partition(|f| f % 2 == 0);
        c.data.coflow_started = vec![0; 3];
        for &f in &active {
            c.data.coflow_started[(f / 12) as usize] += 1;
        }
        c.set_active(&active);
        let mut kept = LinkCounts::default();
        for call in 0..60 {
            let check = |kept: &mut LinkCounts, c: &Case| {
                let v = c.common();
                for g in 0..v.groups.len() {
                    let want = LinkCounts::default().get(&v, g).to_vec();
                    assert_eq!(kept.get(&v, g), want, "call {call}, group {g}");
                }
            };
            check(&mut kept, &c);
            c.data.started.clear();
            c.data.finished.clear();
            for _ in 0..rng.below(4) {
                if !pending.is_empty() {
                    let f = pending.remove(rng.below(pending.len() as u32) as usize);
                    c.data.coflow_started[(f / 12) as usize] += 1;
                    c.data.started.push(f);
                    if call % 7 == 3 {
                        c.data.finished.push(f); // started and finished between calls
                    } else {
                        active.push(f);
                    }
                }
            }
            for _ in 0..rng.below(4) {
                if active.len() > 1 {
                    let f = active.remove(rng.below(active.len() as u32) as usize);
                    c.data.finished.push(f);
                }
            }
            if call % 10 == 8 {
                c.data.started.clear();
                c.data.finished.clear();
            }
            active.sort_unstable();
            c.set_active(&active);
        }
        // The first count of each coflow, and after each call without lists,
        // are recounts.
        let (u, r) = (kept.updates, kept.recounts);
        assert!(u >= 20 && r * 3 < u, "{u} updates, {r} recounts");
    }

    /// Gives flow `f` of `c` rate `r` from `t` on, as a driver settles it.
    fn run_at(c: &mut Case, f: usize, r: f64, t: f64) {
        let k = c.data.flow_coflow[f] as usize;
        let d = &mut c.data;
        d.base[f] += d.rate[f] * (t - d.since[f]);
        d.since[f] = t;
        d.coflow_base[k] += d.coflow_rate[k] * (t - d.coflow_since[k]);
        d.coflow_since[k] = t;
        d.coflow_rate[k] += r - d.rate[f];
        d.rate[f] = r;
    }

    #[test]
    fn drained_loads_follow_the_rates_given_and_recount_when_not_applied() {
        // 3 ports (up 0..3, down 3..6). Coflow 0: 0→1 (8 B), 0→2 (4 B), 2→2 (6 B).
        // R(up0) = 12, R(up2) = 6, R(down4) = 8, R(down5) = 10.
        let mut c = Case::new(
            3,
            10.0,
            &[
                (0, 0, 1, 8.0, 0.0),
                (0, 0, 2, 4.0, 0.0),
                (0, 2, 2, 6.0, 0.0),
            ],
        );
        let fresh = |c: &Case, t: f64| {
            let v = c.data.clairvoyant(&c.fabric, t);
            let mut out = Vec::new();
            LinkIndex::default().sums(&v, 0, &mut out, |i| v.remaining(v.active[i]));
            out
        };
        let mut cache = LoadCache::drained();
        cache.begin(&c.common());
        let want = [(0, 12.0), (2, 6.0), (4, 8.0), (5, 10.0)];
        assert_eq!(cache.get(&c.clairvoyant(), 0), &want);
        // MADD with Γ' = 2: every flow at rem/2 (4, 2, 3); then 1 B/s more for
        // 2→2 (up2, down5).
        cache.all_at(0, 2.0);
        let path = c.fabric.path(c.data.flow_path[2]).to_vec();
        cache.add(0, &path, 1.0);
        for (f, r) in [(0, 4.0), (1, 2.0), (2, 4.0)] {
            run_at(&mut c, f, r, 0.0);
        }
        // At t = 0.5: up0 12 − 6·0.5 = 9, up2 6 − 4·0.5 = 4, down4 8 − 2 = 6,
        // down5 10 − 6·0.5 = 7: what a recount gives.
        let v = c.data.clairvoyant(&c.fabric, 0.5);
        cache.begin(&v);
        let got = cache.get(&v, 0).to_vec();
        assert_eq!(got, [(0, 9.0), (2, 4.0), (4, 6.0), (5, 7.0)]);
        assert_eq!(got, fresh(&c, 0.5));
        // Read again in the same call: the same, nothing drained twice.
        assert_eq!(cache.get(&v, 0), &got[..]);
        // This call gives nothing: at t = 1 nothing moved since 0.5 in the
        // cache's account, but the driver kept the old rates (a real network):
        // the coflow sent 6 B more than predicted, so the loads are recounted.
        let v = c.data.clairvoyant(&c.fabric, 1.0);
        cache.begin(&v);
        assert_eq!(cache.get(&v, 0), &fresh(&c, 1.0)[..]);
        assert_eq!(cache.get(&v, 0), &[(0, 6.0), (2, 2.0), (4, 4.0), (5, 4.0)]);
        // Now every flow at rem/2 (2, 1, 1) from t = 1, and flow 1 (0→2) 1 B/s
        // more. At t = 2 it has finished (the driver lists it): down5 keeps
        // flow 2's 1 B, up0 flow 0's 2 B, and no link is dropped; drained, not
        // recounted.
        cache.all_at(0, 2.0);
        let path = c.fabric.path(c.data.flow_path[1]).to_vec();
        cache.add(0, &path, 1.0);
        for (f, r) in [(0, 2.0), (1, 2.0), (2, 1.0)] {
            run_at(&mut c, f, r, 1.0);
        }
        run_at(&mut c, 1, 0.0, 2.0);
        c.set_active(&[0, 2]);
        c.data.finished = vec![1];
        let v = c.data.clairvoyant(&c.fabric, 2.0);
        cache.begin(&v);
        let got = cache.get(&v, 0).to_vec();
        assert_eq!(got, [(0, 2.0), (2, 1.0), (4, 2.0), (5, 1.0)]);
        assert_eq!(got, fresh(&c, 2.0));
        // Flow 2 (2→2) finished too, at t = 3 with rates (1, 0.5 + 0.5) since
        // t = 2: up2 and down5 have no flow left and go.
        cache.all_at(0, 2.0);
        let path = c.fabric.path(c.data.flow_path[2]).to_vec();
        cache.add(0, &path, 0.5);
        for (f, r) in [(0, 1.0), (2, 1.0)] {
            run_at(&mut c, f, r, 2.0);
        }
        run_at(&mut c, 2, 0.0, 3.0);
        c.set_active(&[0]);
        c.data.finished = vec![2];
        let v = c.data.clairvoyant(&c.fabric, 3.0);
        cache.begin(&v);
        assert_eq!(cache.get(&v, 0), &[(0, 1.0), (4, 1.0)]);
        assert_eq!(cache.get(&v, 0), &fresh(&c, 3.0)[..]);
    }

    #[test]
    fn loads_are_recounted_when_the_coflow_moved_sent_or_changed_flows() {
        // 3 ports (up 0..3, down 3..6). Coflow 0: 0→1 with 4 B left, 0→2 with 2 B.
        // R(up0) = 6, R(down1) = 4, R(down2) = 2.
        let mut c = Case::new(3, 10.0, &[(0, 0, 1, 4.0, 0.0), (0, 0, 2, 2.0, 0.0)]);
        let mut cache = LoadCache::default();
        assert_eq!(
            cache.get(&c.clairvoyant(), 0),
            &[(0, 6.0), (4, 4.0), (5, 2.0)]
        );
        // The policy served it: 1 B of flow 0 went out.
        c.set_remaining(0, 3.0);
        cache.moved(0);
        assert_eq!(
            cache.get(&c.clairvoyant(), 0),
            &[(0, 5.0), (4, 3.0), (5, 2.0)]
        );
        // Bytes sent without the policy's say (a real network): coflow_sent changed.
        c.set_remaining(1, 1.0);
        c.add_coflow_sent(0, 1.0);
        assert_eq!(
            cache.get(&c.clairvoyant(), 0),
            &[(0, 4.0), (4, 3.0), (5, 1.0)]
        );
        // Flow 1 finished: one active flow left.
        c.active.truncate(1);
        c.groups[0].end = 1;
        assert_eq!(cache.get(&c.clairvoyant(), 0), &[(0, 3.0), (4, 3.0)]);
    }
}
