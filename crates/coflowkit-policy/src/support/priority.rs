//! Priority max-min over coflows: coflows in an order, each gets max-min fair rates
//! among its active flows on what the earlier ones left.

use crate::decision::Decision;
use crate::support::cuts::Cuts;
use crate::view::Common;
use coflowkit_alloc::{avail, MaxMin, TailMaxMin};
use coflowkit_model::{PathId, CAPACITY_EPS};

/// Priority max-min with one group per coflow: coflows in the given order, each gets
/// max-min fair rates among its active flows on what the earlier ones left.
///
/// [`CoflowPriority::run`] remembers, per coflow, what it last solved: its active
/// flows, the residual capacity it found on every link of their paths, what it took
/// there, which of those links bounded a rate, and the rates. A coflow's max-min
/// depends on nothing else, so when its flows are the same and every residual is
/// either the same or, on a link that bounded none of its rates, still open and
/// above what it took there ([`coflowkit_alloc::MaxMin::tight`]), the remembered
/// rates *are* its rates: they are replayed in `O(links)` without solving. With a
/// driver that takes delta decisions ([`Decision::delta_ok`]) only the rates that
/// changed are written; otherwise every positive rate is.
#[derive(Default)]
pub struct CoflowPriority {
    mm: MaxMin,
    /// The levels [`CoflowPriority::serve_level`] solves, kept across calls.
    served: Vec<TailMaxMin>,
    /// The groups [`CoflowPriority::serve_keyed`] solves, kept across calls:
    /// per entry the caller's key, the round ([`CoflowPriority::begin`]) that
    /// last used it, and the solver; the least recently used entry goes to a
    /// new key.
    keyed: Vec<(u64, u64, TailMaxMin)>,
    rounds: u64,
    pub residual: Vec<f64>,
    /// The links written in `residual` since it was last all capacities
    /// (repeats allowed), or `dirty_all`: put back at the next start.
    dirty: Vec<u32>,
    dirty_all: bool,
    /// Where the capacities put back last time live. A policy is built per
    /// simulation and per runtime (one fabric); should one be reused on
    /// another fabric, one at another address gets a full copy.
    caps_at: usize,
    cuts: Cuts,
    paths: Vec<PathId>,
    tmp: Vec<f64>,
    /// A coflow's rates before it is solved again, by its current flows.
    old: Vec<f64>,
    /// The new offset of each flow a memo had (`u32::MAX`: finished).
    new_of: Vec<u32>,
    /// Per coflow index: the last solve of [`CoflowPriority::run`].
    memo: Vec<Memo>,
    /// Per coflow index: the last call of [`CoflowPriority::run`] that listed it.
    seen: Vec<u64>,
    calls: u64,
    /// Link stamps, to list a coflow's distinct links.
    stamp: Vec<u32>,
    epoch: u32,
    /// Per link: a bucket counter while a coflow's flows are put by last link.
    bucket: Vec<u32>,
    /// A bitmap of the offsets of a coflow's flows that may get a rate, and
    /// those offsets in order.
    open_bits: Vec<u64>,
    open: Vec<u32>,
    /// Per first link of the coflow being solved: whether it is open.
    first_open: Vec<bool>,
    /// The positive offsets being built by [`CoflowPriority::write_sparse`].
    new_pos: Vec<u32>,
    /// The offsets of a memo's flows that finished (sorted).
    fin: Vec<u32>,
    /// Tail solves: the finished flows of a coflow (path, rate they had), its
    /// old `took` and `tight`, what its kept flows take per memo link, and each
    /// link's position among the memo's links.
    gone: Vec<(PathId, f64)>,
    old_took: Vec<f64>,
    old_tight: Vec<bool>,
    kept: Vec<f64>,
    link_j: Vec<u32>,
    /// Kept max-min solutions of the largest coflows (see [`BIG_COFLOW`]): per
    /// entry the coflow index it serves (`u32::MAX`: none), the call that last
    /// used it, and the solver.
    pool: Vec<(u32, u64, TailMaxMin)>,
    /// The links a coflow must cross to be pooled (0: `POOL_LINKS`; tests on
    /// small fabrics lower it).
    pool_links: usize,
    /// How many coflows were replayed rather than solved (for tests and profiles).
    pub replays: u64,
    /// How many coflows were answered by a kept solution of the pool.
    pub pooled: u64,
    /// How many coflows were solved from a level up rather than whole.
    pub tail_solves: u64,
}

/// One coflow's last solve in [`CoflowPriority::run`].
#[derive(Clone)]
struct Memo {
    /// False until solved, and after the coflow was left out of an order (its
    /// flows were then stopped).
    valid: bool,
    /// Its flows when solved, as (`coflow_started`, active count): flows only
    /// start and finish, so the pair names the set of active flows.
    members: (u32, usize),
    /// Those flows (global indices, sorted).
    flows: Vec<u32>,
    /// The distinct links of their paths; the residual on each before and after,
    /// what the coflow took from it, and whether it bounded one of its rates.
    links: Vec<u32>,
    input: Vec<f64>,
    output: Vec<f64>,
    took: Vec<f64>,
    tight: Vec<bool>,
    /// The rate of each active flow, in `c.active` order, and whether any is
    /// positive.
    rates: Vec<f64>,
    moving: bool,
    /// The pool entry solving the coflow (`NOT_POOLED`: its memo solves it;
    /// then `links`, `input`, `took`, `tight` and the buckets are its own).
    pool: u32,
    /// Its flows by the last link of their path: the distinct last links, and
    /// the flows' offsets in the coflow's range, `by_last[last_start[j]..
    /// last_start[j + 1]]` for `last_links[j]`. Most flows of a coflow that is
    /// solved again end at a full receiver; a solve skips them by the bucket.
    last_links: Vec<u32>,
    last_start: Vec<u32>,
    by_last: Vec<u32>,
    /// The distinct first links of its flows' paths, and per flow (offset) the
    /// position of its first link there: a flow behind a full first link is not
    /// handed to the solver either.
    first_links: Vec<u32>,
    first_j: Vec<u32>,
    /// The offsets of the flows with a positive rate, in order: a solve of the
    /// same flows writes only those and the flows it solves (`rates` is kept in
    /// place), not every flow of the coflow.
    pos: Vec<u32>,
}

impl Memo {
    /// True when the memo was solved for coflow `k`'s active flows as they are now.
    fn same_flows(&self, c: &Common, k: usize, count: usize) -> bool {
        self.valid && self.members == (c.coflow_started[k], count)
    }

    /// True when, on `residual`, the memo's flows get the rates it holds: on every
    /// link the same residual, or, on a link that bounded none of the rates (see
    /// [`coflowkit_alloc::MaxMin::tight`]), an open residual above what the
    /// coflow took there.
    fn fits(&self, c: &Common, residual: &[f64]) -> bool {
        self.links.iter().enumerate().all(|(j, &l)| {
            let x = residual[l as usize];
            x.to_bits() == self.input[j].to_bits() || self.slack(c, j, x)
        })
    }

    /// Whether link `links[j]` may take residual `x` instead of `input[j]`.
    fn slack(&self, c: &Common, j: usize, x: f64) -> bool {
        let zero = CAPACITY_EPS * c.fabric.capacities[self.links[j] as usize];
        !self.tight[j]
            && self.input[j] > zero
            && x > zero
            && x > self.took[j] * (1.0 + SLACK_MARGIN)
    }

    /// Replays the memo on `residual` (which it [`Memo::fits`]): takes what the
    /// coflow took, as its solve would have, and remembers the new input.
    fn replay(&mut self, residual: &mut [f64]) {
        for j in 0..self.links.len() {
            let l = self.links[j] as usize;
            let x = residual[l];
            if x.to_bits() != self.input[j].to_bits() {
                self.input[j] = x;
                self.output[j] = (x - self.took[j]).max(0.0);
            }
            residual[l] = self.output[j];
        }
    }
}

const NOT_POOLED: u32 = u32::MAX;

/// How many groups [`CoflowPriority::serve_keyed`] keeps solved at a time.
const KEYED_POOL: usize = 4;

/// The kept solver a level is served by.
#[derive(Clone, Copy)]
enum Solver {
    Level(usize),
    Keyed(usize),
}

impl Default for Memo {
    fn default() -> Self {
        Memo {
            valid: false,
            members: (0, 0),
            flows: Vec::new(),
            links: Vec::new(),
            input: Vec::new(),
            output: Vec::new(),
            took: Vec::new(),
            tight: Vec::new(),
            rates: Vec::new(),
            moving: false,
            pool: NOT_POOLED,
            last_links: Vec::new(),
            last_start: Vec::new(),
            by_last: Vec::new(),
            first_links: Vec::new(),
            first_j: Vec::new(),
            pos: Vec::new(),
        }
    }
}

/// Drops finished flows from `m`'s buckets in place: `new_of[o]` is the new
/// offset of the flow at old offset `o`, `u32::MAX` for a finished one.
fn filter_buckets(m: &mut Memo, new_of: &[u32]) {
    let mut at = 0;
    let mut from = m.last_start[0];
    for j in 0..m.last_links.len() {
        let to = m.last_start[j + 1];
        m.last_start[j] = at;
        for x in from..to {
            let o = new_of[m.by_last[x as usize] as usize];
            if o != u32::MAX {
                m.by_last[at as usize] = o;
                at += 1;
            }
        }
        from = to;
    }
    let n = m.last_links.len();
    m.last_start[n] = at;
    m.by_last.truncate(at as usize);
    let mut kept = 0;
    for (o, &to) in new_of.iter().enumerate().take(m.first_j.len()) {
        if to != u32::MAX {
            debug_assert_eq!(to, kept as u32, "offsets keep their order");
            m.first_j[kept] = m.first_j[o];
            kept += 1;
        }
    }
    m.first_j.truncate(kept);
}

/// A coflow with at least this many active flows (and `POOL_LINKS` links) is
/// solved by a [`TailMaxMin`]
/// kept for it (one of `POOL` kept at a time, the least recently used given to
/// a new one) rather than by its memo: a memo solves again every flow at or
/// above the lowest rate of a finished one (a tail) and walks every link of the
/// coflow, where the kept solution solves again what a completion reaches
/// ([`coflowkit_alloc::Reach`]). A shuffle of thousands of flows on a large
/// FatTree crosses tens of thousands of links.
const BIG_COFLOW: usize = 512;
const POOL: usize = 2;
/// ... and whose flows cross at least this many links (its memo's last list):
/// the memo walks them all at every call, and where that walk is short (a
/// whole `fattree:k=8` has 768 links) the memo, which hands the solver only
/// the flows behind open last links, costs less than a kept solution (on
/// its first 100 FB coflows, pooling every large coflow made `aalo` and
/// `fifo` 1.45-1.55x slower; on `fattree:k=48` a large coflow crosses about
/// 17,000 links and pooling is 2x faster).
const POOL_LINKS: usize = 4096;

/// A slack link is replayed only with a residual above `took · (1 + SLACK_MARGIN)`:
/// near equality a fresh solve could saturate it in a tie, and only re-solving
/// keeps the float sums in the order a solve makes them.
const SLACK_MARGIN: f64 = 1e-9;

impl CoflowPriority {
    /// `order` lists indices into `c.groups`, highest priority first; the listed
    /// coflows get priority max-min rates, the others nothing. `out` must be fresh
    /// from [`crate::decision::Decision::reset`]. As a sparse decision, every
    /// positive rate is written; as a delta decision (when the driver sets
    /// [`Decision::delta_ok`]), only the rates that differ from the last call's.
    /// `self.residual` holds what is left afterwards.
    pub fn run(&mut self, c: &Common, order: &[usize], out: &mut Decision) {
        out.sparse = true;
        out.delta = out.delta_ok;
        self.calls += 1;
        self.fresh_residual(c);
        let nc = c.coflow_started.len();
        if self.memo.len() < nc {
            self.memo.resize(nc, Memo::default());
            self.seen.resize(nc, 0);
        }
        for &g in order {
            self.visit(c, g, out);
        }
        if out.delta {
            self.stop_left_out(c, out);
        }
    }

    /// The rates the last [`CoflowPriority::run`] gave coflow `k` (index), by its
    /// active flows in `c.active` order; `k` must have been in that run's order
    /// (a delta decision does not hold them all).
    pub fn rates_of(&self, k: u32) -> &[f64] {
        let m = &self.memo[k as usize];
        debug_assert!(m.valid && self.seen[k as usize] == self.calls);
        &m.rates
    }

    /// Whether the last [`CoflowPriority::run`] gave any flow of coflow `k`
    /// (index) a positive rate; false for a coflow it did not list.
    pub fn moving(&self, k: u32) -> bool {
        let m = &self.memo[k as usize];
        m.valid && m.moving && self.seen[k as usize] == self.calls
    }

    /// Gives group `g` its rates on `self.residual` (replayed or solved) and
    /// writes them to `out`.
    fn visit(&mut self, c: &Common, g: usize, out: &mut Decision) {
        let range = c.groups[g].range();
        let k = c.groups[g].coflow as usize;
        self.seen[k] = self.calls;
        let need = if self.pool_links == 0 {
            POOL_LINKS
        } else {
            self.pool_links
        };
        let wide = range.len() >= BIG_COFLOW && self.memo[k].links.len() >= need;
        if wide || self.memo[k].pool != NOT_POOLED {
            if let Some(e) = self.pool_entry(k, range.len()) {
                self.visit_pooled(c, g, e, out);
                return;
            }
        }
        let same = self.memo[k].same_flows(c, k, range.len());
        if same && self.memo[k].fits(c, &self.residual) {
            self.replays += 1;
            let m = &mut self.memo[k];
            m.replay(&mut self.residual);
            self.dirty.extend_from_slice(&m.links);
            if !out.delta {
                write_positives(range.start, m, out);
            }
            return;
        }
        let mut m = std::mem::take(&mut self.memo[k]);
        if same {
            // Same flows, a moved input: solved whole, and only the rates that
            // were or become positive are visited.
            self.remember_input(c, k, range.len(), &mut m);
            if self.cuts.blocked(c, g, &self.residual) {
                self.open.clear();
                takes_nothing(&mut m);
            } else {
                self.solve_open(c, range.clone(), &mut m);
            }
            self.leave_output(&mut m);
            self.write_sparse(range.start, &mut m, out);
            self.memo[k] = m;
            return;
        }
        // Flows only finished, on an input the memo fits: its rates below the
        // lowest rate of a finished flow stand (see `solve_tail`).
        let only_finished =
            m.valid && m.members.0 == c.coflow_started[k] && m.fits(c, &self.residual);
        if only_finished && self.visit_tail(c, g, &mut m, out) {
            self.memo[k] = m;
            return;
        }
        // Otherwise (flows started, or a finished one had rate 0, or the input
        // moved) it is solved whole.
        self.carry_over(c, k, range.clone(), &mut m);
        self.remember_input(c, k, range.len(), &mut m);
        if self.cuts.blocked(c, g, &self.residual) {
            // Nothing moves and nothing is taken; the closed cut links are closed
            // in the input, so they are not slack.
            m.rates.clear();
            m.rates.resize(range.len(), 0.0);
            takes_nothing(&mut m);
        } else {
            self.solve_group(c, range.clone(), &mut m);
        }
        self.leave_output(&mut m);
        positives(&m.rates, &mut m.pos);
        m.moving = !m.pos.is_empty();
        write_rates(&self.old, range, &m.rates, out);
        self.memo[k] = m;
    }

    /// Group `g`'s coflow, whose flows only finished since its memo `m` was
    /// solved, on an input `m` fits: when the finished flows had positive
    /// rates, solved from the lowest of them up ([`CoflowPriority::solve_tail`])
    /// in `O(flows)` simple passes (the memo's per-flow vectors lose the
    /// finished flows' entries) plus the positive and re-solved flows, and
    /// only the re-solved flows' rates are written (as a sparse decision,
    /// every positive rate). False, with `m` untouched, when a finished flow
    /// had rate 0 (the coflow is then solved whole).
    fn visit_tail(&mut self, c: &Common, g: usize, m: &mut Memo, out: &mut Decision) -> bool {
        let range = c.groups[g].range();
        let k = c.groups[g].coflow as usize;
        finished_offsets(&m.flows, &c.active[range.clone()], &mut self.fin);
        self.gone.clear();
        for &o in &self.fin {
            let f = m.flows[o as usize] as usize;
            self.gone.push((c.flow_path[f], m.rates[o as usize]));
        }
        let level = self.gone.iter().map(|g| g.1).fold(f64::INFINITY, f64::min);
        if !(level > 0.0 && level.is_finite()) {
            return false;
        }
        // The new offset of each old one (`u32::MAX`: finished).
        self.new_of.clear();
        let mut fin = self.fin.iter().peekable();
        let mut shift = 0;
        for o in 0..m.flows.len() as u32 {
            if fin.peek() == Some(&&o) {
                fin.next();
                shift += 1;
                self.new_of.push(u32::MAX);
            } else {
                self.new_of.push(o - shift);
            }
        }
        filter_buckets(m, &self.new_of);
        remove_offsets(&mut m.flows, &self.fin);
        remove_offsets(&mut m.rates, &self.fin);
        let new_of = &self.new_of;
        m.pos.retain_mut(|o| {
            *o = new_of[*o as usize];
            *o != u32::MAX
        });
        std::mem::swap(&mut self.old_took, &mut m.took);
        std::mem::swap(&mut self.old_tight, &mut m.tight);
        self.remember_input(c, k, range.len(), m);
        if self.cuts.blocked(c, g, &self.residual) {
            // Nothing moves and nothing is taken (as in `visit`).
            self.open.clear();
            takes_nothing(m);
            self.leave_output(m);
            self.write_sparse(range.start, m, out);
            return true;
        }
        self.tail_solves += 1;
        self.solve_tail(c, range.clone(), m, level);
        let mut zero = false;
        for (&o, &r) in self.open.iter().zip(&self.tmp) {
            let old = std::mem::replace(&mut m.rates[o as usize], r);
            zero |= r <= 0.0;
            if out.delta && old.to_bits() != r.to_bits() {
                out.rates[range.start + o as usize] = r;
                out.touched.push((range.start + o as usize) as u32);
            }
        }
        if zero {
            let rates = &m.rates;
            m.pos.retain(|&o| rates[o as usize] > 0.0);
        }
        if !out.delta {
            write_positives(range.start, m, out);
        }
        m.moving = !m.pos.is_empty();
        self.leave_output(m);
        true
    }

    /// After a solve of `m`'s coflow: the residual it leaves on its links is its
    /// output, and those links are written.
    fn leave_output(&mut self, m: &mut Memo) {
        m.output
            .extend(m.links.iter().map(|&l| self.residual[l as usize]));
        self.dirty.extend_from_slice(&m.links);
    }

    /// The pool entry for coflow `k` with `n` active flows: its own, or, for a
    /// coflow of at least [`BIG_COFLOW`] flows, a new one (a free entry or the
    /// least recently used, unless that one served another coflow in this
    /// call). A coflow that drops under [`BIG_COFLOW`] keeps its entry until
    /// another takes it. `None`: its memo solves it.
    fn pool_entry(&mut self, k: usize, n: usize) -> Option<usize> {
        let own = self.memo[k].pool;
        if own != NOT_POOLED {
            self.pool[own as usize].1 = self.calls;
            return Some(own as usize);
        }
        if n < BIG_COFLOW {
            return None;
        }
        if self.pool.len() < POOL {
            self.pool.push((u32::MAX, 0, TailMaxMin::new()));
        }
        let e = (0..self.pool.len()).min_by_key(|&e| self.pool[e].1)?;
        if self.pool[e].1 == self.calls {
            return None;
        }
        let prev = self.pool[e].0;
        if prev != u32::MAX {
            // Back to its memo, which solves it from scratch next time (its
            // links and buckets are built again; its rates stay those in force).
            let m = &mut self.memo[prev as usize];
            m.pool = NOT_POOLED;
            m.members.0 = u32::MAX;
        }
        self.pool[e].0 = k as u32;
        self.pool[e].1 = self.calls;
        self.pool[e].2.clear();
        self.memo[k].pool = e as u32;
        Some(e)
    }

    /// Gives group `g` its rates from pool entry `e` (a [`TailMaxMin`] kept for
    /// its coflow: rates equal to a fresh max-min of its flows on
    /// `self.residual`, up to float sums) and writes those that moved.
    fn visit_pooled(&mut self, c: &Common, g: usize, e: usize, out: &mut Decision) {
        let range = c.groups[g].range();
        let k = c.groups[g].coflow as usize;
        self.pooled += 1;
        let mut m = std::mem::take(&mut self.memo[k]);
        self.old_rates(c, range.clone(), &m);
        m.valid = true;
        m.members = (c.coflow_started[k], range.len());
        m.flows.clear();
        m.flows.extend_from_slice(&c.active[range.clone()]);
        m.rates.clear();
        m.rates.resize(range.len(), 0.0);
        if !self.cuts.blocked(c, g, &self.residual) {
            self.paths.clear();
            let paths = c.active[range.clone()]
                .iter()
                .map(|&f| c.flow_path[f as usize]);
            self.paths.extend(paths);
            let s = &mut self.pool[e].2;
            s.solve(c.fabric, &mut self.residual, &self.paths, &mut m.rates);
            wrote(&mut self.dirty, &mut self.dirty_all, s);
        }
        positives(&m.rates, &mut m.pos);
        m.moving = !m.pos.is_empty();
        write_rates(&self.old, range, &m.rates, out);
        self.memo[k] = m;
    }

    /// Puts in `self.old` the rate in force of each flow at `range` of a
    /// coflow whose last solve is `m` (0 for a flow it did not have, or when
    /// it is not valid: its flows were stopped), and in `self.new_of` the new
    /// offset of each flow `m` had (`u32::MAX`: finished; empty when not valid).
    fn old_rates(&mut self, c: &Common, range: std::ops::Range<usize>, m: &Memo) {
        let flows = &c.active[range];
        self.old.clear();
        self.old.resize(flows.len(), 0.0);
        self.new_of.clear();
        if !m.valid {
            return;
        }
        // Both lists are sorted by flow index.
        self.new_of.resize(m.flows.len(), u32::MAX);
        let mut a = 0;
        for (j, &f) in flows.iter().enumerate() {
            while a < m.flows.len() && m.flows[a] < f {
                a += 1;
            }
            if a < m.flows.len() && m.flows[a] == f {
                self.old[j] = m.rates[a];
                self.new_of[a] = j as u32;
                a += 1;
            }
        }
    }

    /// Delta decisions: stops the flows of every active coflow that an earlier
    /// call listed and this one did not.
    fn stop_left_out(&mut self, c: &Common, out: &mut Decision) {
        for grp in c.groups {
            let k = grp.coflow as usize;
            if self.seen[k] != self.calls && self.memo[k].valid {
                self.memo[k].valid = false;
                // Written as zeros, which `out.rates` already holds.
                out.touched.extend(grp.range().map(|i| i as u32));
            }
        }
    }

    /// Max-min rates for the flows at `range` on `self.residual`: the offsets
    /// of the flows handed to the solver into `self.open` (in order), their
    /// rates into `self.tmp`, taken from the residual; what it took from each
    /// of `m.links` and whether that link bounded a rate, into `m.took` and
    /// `m.tight`. Only flows whose first and last links are open are handed to
    /// the solver: the others cross a full link, which gives them 0 in any case.
    fn solve_open(&mut self, c: &Common, range: std::ops::Range<usize>, m: &mut Memo) {
        let n = range.len();
        self.open_bits.clear();
        self.open_bits.resize(n.div_ceil(64), 0);
        let caps = &c.fabric.capacities;
        self.first_open.clear();
        self.first_open.extend(
            m.first_links
                .iter()
                .map(|&l| avail(&self.residual, caps, l as usize) > 0.0),
        );
        for (j, &l) in m.last_links.iter().enumerate() {
            if avail(&self.residual, caps, l as usize) > 0.0 {
                let (a, b) = (m.last_start[j] as usize, m.last_start[j + 1] as usize);
                for &o in &m.by_last[a..b] {
                    if self.first_open[m.first_j[o as usize] as usize] {
                        self.open_bits[o as usize / 64] |= 1 << (o % 64);
                    }
                }
            }
        }
        self.open.clear();
        for (w, &bits) in self.open_bits.iter().enumerate() {
            let mut bits = bits;
            while bits != 0 {
                self.open.push((w * 64) as u32 + bits.trailing_zeros());
                bits &= bits - 1;
            }
        }
        self.paths.clear();
        self.paths.extend(
            self.open
                .iter()
                .map(|&o| c.flow_path[c.active[range.start + o as usize] as usize]),
        );
        self.tmp.clear();
        self.tmp.resize(self.paths.len(), 0.0);
        if self.paths.is_empty() {
            takes_nothing(m);
            return;
        }
        self.mm
            .solve(c.fabric, &mut self.residual, &self.paths, &mut self.tmp);
        let (mm, fabric) = (&self.mm, c.fabric);
        m.took.extend(m.links.iter().map(|&l| mm.took(fabric, l)));
        m.tight.extend(m.links.iter().map(|&l| mm.tight(fabric, l)));
    }

    /// [`CoflowPriority::solve_open`] for a coflow whose flows changed: its
    /// rates, every flow's, into `m.rates` (cleared).
    fn solve_group(&mut self, c: &Common, range: std::ops::Range<usize>, m: &mut Memo) {
        let n = range.len();
        self.solve_open(c, range, m);
        m.rates.clear();
        m.rates.resize(n, 0.0);
        for (&o, &r) in self.open.iter().zip(&self.tmp) {
            m.rates[o as usize] = r;
        }
    }

    /// A coflow with the same flows as its memo `m`, whose rates (`m.rates`, in
    /// place, positive at `m.pos`) become `self.tmp` at the offsets `self.open`
    /// and 0 elsewhere: writes what changed (as a sparse decision, every
    /// positive rate) and brings `m.rates`, `m.pos` and `m.moving` up to date,
    /// in `O(old positive + solved)` instead of `O(flows)`. Positions are
    /// written in increasing order, once each.
    fn write_sparse(&mut self, start: usize, m: &mut Memo, out: &mut Decision) {
        self.new_pos.clear();
        let (mut a, mut b) = (0, 0);
        loop {
            let oa = m.pos.get(a).copied().unwrap_or(u32::MAX);
            let ob = self.open.get(b).copied().unwrap_or(u32::MAX);
            if oa == u32::MAX && ob == u32::MAX {
                break;
            }
            let (o, r) = if oa < ob {
                a += 1;
                (oa, 0.0)
            } else {
                a += usize::from(oa == ob);
                b += 1;
                (ob, self.tmp[b - 1])
            };
            let old = std::mem::replace(&mut m.rates[o as usize], r);
            let write = if out.delta {
                old.to_bits() != r.to_bits()
            } else {
                r != 0.0
            };
            if write {
                out.rates[start + o as usize] = r;
                out.touched.push((start + o as usize) as u32);
            }
            if r > 0.0 {
                self.new_pos.push(o);
            }
        }
        std::mem::swap(&mut m.pos, &mut self.new_pos);
        m.moving = !m.pos.is_empty();
    }

    /// Max-min rates for the flows at `range` when flows only finished since `m`
    /// was solved and the input fits it (`m.rates` holds the old rates of the
    /// flows left, by their offsets now, and `m.pos` those that are positive;
    /// `self.gone` the finished ones, `self.old_took` and `self.old_tight` what
    /// the old solve took and which links bounded it). The flows solved again
    /// go to `self.open` (offsets, in order) and their rates to `self.tmp`;
    /// `m.rates` is left for the caller.
    /// `level` is the lowest rate a finished flow had. Progressive filling below
    /// it is unchanged: a link that saturated below `level` carried no finished
    /// flow (that flow would have frozen there), so its load, and every
    /// saturation below `level`, is the same; `fair` restarts the same way
    /// (docs/architecture.md, "Cost per event"). The flows with an old rate of at
    /// least `level` are solved again on what the others take, which is what the
    /// coflow took less the finished and re-solved flows' old rates, and every
    /// re-solved rate is at least `level`. A link that bounded a rate before
    /// stays marked tight (kept rates may rest on it); that only makes replays
    /// rarer. Costs `O(re-solved flows + links)` instead of `O(flows)`.
    fn solve_tail(&mut self, c: &Common, range: std::ops::Range<usize>, m: &mut Memo, level: f64) {
        let fab = c.fabric;
        if self.link_j.len() < fab.num_links() {
            self.link_j.resize(fab.num_links(), 0);
        }
        for (j, &l) in m.links.iter().enumerate() {
            self.link_j[l as usize] = j as u32;
        }
        self.kept.clear();
        self.kept.extend_from_slice(&self.old_took);
        for &(p, r) in &self.gone {
            for &l in fab.path(p) {
                self.kept[self.link_j[l as usize] as usize] -= r;
            }
        }
        self.open.clear();
        self.paths.clear();
        for &o in &m.pos {
            let (o, r) = (o as usize, m.rates[o as usize]);
            if r >= level {
                let p = c.flow_path[c.active[range.start + o] as usize];
                for &l in fab.path(p) {
                    self.kept[self.link_j[l as usize] as usize] -= r;
                }
                self.open.push(o as u32);
                self.paths.push(p);
            }
        }
        for (j, &l) in m.links.iter().enumerate() {
            let kept = self.kept[j].max(0.0);
            self.kept[j] = kept;
            let x = &mut self.residual[l as usize];
            *x = (*x - kept).max(0.0);
        }
        self.tmp.clear();
        self.tmp.resize(self.paths.len(), 0.0);
        self.mm
            .solve(fab, &mut self.residual, &self.paths, &mut self.tmp);
        let mm = &self.mm;
        m.took.extend(
            m.links
                .iter()
                .zip(&self.kept)
                .map(|(&l, &x)| x + mm.took(fab, l)),
        );
        m.tight.extend(
            m.links
                .iter()
                .zip(&self.old_tight)
                .map(|(&l, &t)| t || mm.tight(fab, l)),
        );
    }

    /// Coflow `k`'s flows changed since `m` was solved: puts in `self.old` the
    /// rate in force of each flow at `range` (the memo's for a flow it had, 0
    /// for a new one or when the memo is not valid, whose flows were stopped),
    /// and brings `m`'s flows, links and buckets up to date. When flows only
    /// finished, the links are kept (a superset, whose extra links are slack)
    /// and the buckets are filtered; otherwise both are built again.
    fn carry_over(&mut self, c: &Common, k: usize, range: std::ops::Range<usize>, m: &mut Memo) {
        let flows = &c.active[range.clone()];
        self.old_rates(c, range.clone(), m);
        if m.valid && m.members.0 == c.coflow_started[k] {
            filter_buckets(m, &self.new_of);
        } else {
            self.list_links(c, range.clone(), &mut m.links);
            self.bucket_by_last(c, range, m);
        }
        m.flows.clear();
        m.flows.extend_from_slice(flows);
    }

    /// Prepares `m` for a solve of coflow `k`'s `count` active flows: the
    /// residual on its links; what the solve produces is cleared.
    fn remember_input(&mut self, c: &Common, k: usize, count: usize, m: &mut Memo) {
        m.valid = true;
        m.members = (c.coflow_started[k], count);
        m.input.clear();
        m.input
            .extend(m.links.iter().map(|&l| self.residual[l as usize]));
        m.output.clear();
        m.took.clear();
        m.tight.clear();
    }

    /// Puts the flows at `range` in buckets by the last link of their path
    /// (`m.last_links`, `m.last_start`, `m.by_last`), in their order within each,
    /// and lists their distinct first links with each flow's position there
    /// (`m.first_links`, `m.first_j`).
    fn bucket_by_last(&mut self, c: &Common, range: std::ops::Range<usize>, m: &mut Memo) {
        let nl = c.fabric.num_links();
        if self.bucket.len() < nl {
            self.bucket.resize(nl, 0);
        }
        let last = |f: u32| {
            *c.fabric
                .path(c.flow_path[f as usize])
                .last()
                .expect("a path has links")
        };
        m.last_links.clear();
        for &f in &c.active[range.clone()] {
            let l = last(f) as usize;
            if self.bucket[l] == 0 {
                m.last_links.push(l as u32);
            }
            self.bucket[l] += 1;
        }
        m.last_start.clear();
        let mut at = 0;
        for &l in &m.last_links {
            m.last_start.push(at);
            let n = self.bucket[l as usize];
            self.bucket[l as usize] = at; // now the next free slot of the bucket
            at += n;
        }
        m.last_start.push(at);
        m.by_last.clear();
        m.by_last.resize(at as usize, 0);
        for (o, &f) in c.active[range.clone()].iter().enumerate() {
            let l = last(f) as usize;
            m.by_last[self.bucket[l] as usize] = o as u32;
            self.bucket[l] += 1;
        }
        for &l in &m.last_links {
            self.bucket[l as usize] = 0;
        }
        // First links: `bucket` holds a link's position + 1 while listed.
        m.first_links.clear();
        m.first_j.clear();
        for &f in &c.active[range] {
            let l = c.fabric.path(c.flow_path[f as usize])[0] as usize;
            if self.bucket[l] == 0 {
                m.first_links.push(l as u32);
                self.bucket[l] = m.first_links.len() as u32;
            }
            m.first_j.push(self.bucket[l] - 1);
        }
        for &l in &m.first_links {
            self.bucket[l as usize] = 0;
        }
    }

    /// The distinct links of the paths of the active flows at `range`, into `links`.
    fn list_links(&mut self, c: &Common, range: std::ops::Range<usize>, links: &mut Vec<u32>) {
        if self.stamp.len() < c.fabric.num_links() {
            self.stamp.resize(c.fabric.num_links(), 0);
        }
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.stamp.iter_mut().for_each(|s| *s = 0);
            self.epoch = 1;
        }
        links.clear();
        for &f in &c.active[range] {
            for &l in c.fabric.path(c.flow_path[f as usize]) {
                if self.stamp[l as usize] != self.epoch {
                    self.stamp[l as usize] = self.epoch;
                    links.push(l);
                }
            }
        }
    }

    /// Starts a round: the whole fabric is free again.
    pub fn begin(&mut self, c: &Common, out: &mut Decision) {
        out.sparse = true;
        self.rounds += 1;
        self.fresh_residual(c);
    }

    /// Makes `residual` all capacities again: the links written since, or a
    /// copy of every capacity (the first time, or after a write not listed).
    fn fresh_residual(&mut self, c: &Common) {
        let caps = &c.fabric.capacities;
        let at = caps.as_ptr() as usize;
        if self.dirty_all || self.residual.len() != caps.len() || self.caps_at != at {
            self.caps_at = at;
            self.residual.clear();
            self.residual.extend_from_slice(caps);
        } else {
            for &l in &self.dirty {
                self.residual[l as usize] = caps[l as usize];
            }
        }
        self.dirty.clear();
        self.dirty_all = false;
    }

    /// Gives the active flows at `positions` (indices into `c.active`) max-min fair
    /// rates on what is left in `self.residual`, writes them and takes them from
    /// the residual: one priority level of a priority max-min. As a sparse
    /// decision the positive rates are listed; after a [`CoflowPriority::run`]
    /// that made the decision a delta one, every position is (its flows' old
    /// rates are not known here).
    pub fn serve(
        &mut self,
        c: &Common,
        positions: impl Iterator<Item = usize> + Clone,
        out: &mut Decision,
    ) {
        self.serve_with(c, positions, None, out);
    }

    /// [`CoflowPriority::serve`] for a level that a policy serves call after
    /// call (`level` names it: baraat's heavy coflows, a queue of `pias`): its
    /// max-min is a [`TailMaxMin`] kept across calls, solved again only from the
    /// lowest level a departure reaches. The same rates, up to float sums.
    pub fn serve_level(
        &mut self,
        c: &Common,
        positions: impl Iterator<Item = usize> + Clone,
        level: usize,
        out: &mut Decision,
    ) {
        if self.served.len() <= level {
            self.served.resize_with(level + 1, TailMaxMin::new);
        }
        self.serve_with(c, positions, Some(Solver::Level(level)), out);
    }

    /// [`CoflowPriority::serve`] for a group that a policy may serve again at
    /// later calls under the same `key` (coda's large levels: one flow queue of
    /// one extended coflow): its max-min is a [`TailMaxMin`] kept across calls
    /// in a pool of [`KEYED_POOL`] (the least recently used given to a new
    /// key, unless it served this round). The same rates, up to float sums.
    pub fn serve_keyed(
        &mut self,
        c: &Common,
        positions: impl Iterator<Item = usize> + Clone,
        key: u64,
        out: &mut Decision,
    ) {
        let found = self.keyed.iter().position(|e| e.0 == key);
        let at = match found {
            Some(e) => Some(e),
            None if self.keyed.len() < KEYED_POOL => {
                self.keyed.push((key, 0, TailMaxMin::new()));
                Some(self.keyed.len() - 1)
            }
            None => {
                let e = (0..self.keyed.len())
                    .min_by_key(|&e| self.keyed[e].1)
                    .unwrap_or(0);
                (self.keyed[e].1 != self.rounds).then(|| {
                    self.keyed[e].0 = key;
                    self.keyed[e].2.clear();
                    e
                })
            }
        };
        let Some(e) = at else {
            self.serve_with(c, positions, None, out);
            return;
        };
        self.keyed[e].1 = self.rounds;
        self.serve_with(c, positions, Some(Solver::Keyed(e)), out);
    }

    fn serve_with(
        &mut self,
        c: &Common,
        positions: impl Iterator<Item = usize> + Clone,
        level: Option<Solver>,
        out: &mut Decision,
    ) {
        self.paths.clear();
        self.paths
            .extend(positions.clone().map(|i| c.flow_path[c.active[i] as usize]));
        self.tmp.clear();
        self.tmp.resize(self.paths.len(), 0.0);
        let (fab, res) = (c.fabric, &mut self.residual);
        match level {
            Some(x) => {
                let s = match x {
                    Solver::Level(x) => &mut self.served[x],
                    Solver::Keyed(e) => &mut self.keyed[e].2,
                };
                s.solve(fab, res, &self.paths, &mut self.tmp);
                wrote(&mut self.dirty, &mut self.dirty_all, s);
            }
            None => {
                self.mm.solve(fab, res, &self.paths, &mut self.tmp);
                self.dirty_all = true;
            }
        }
        for (i, &r) in positions.zip(&self.tmp) {
            out.rates[i] = r;
            if out.delta {
                out.touched.push(i as u32);
            } else {
                out.touch(i);
            }
        }
    }
}

/// Writes the rates of the flows at `range`: as a sparse decision the positive
/// ones, as a delta decision those that differ from `old` (bit for bit).
fn write_rates(old: &[f64], range: std::ops::Range<usize>, rates: &[f64], out: &mut Decision) {
    for (i, (&r, j)) in range.zip(rates.iter().zip(0..)) {
        let write = if !out.delta {
            r != 0.0
        } else {
            old[j].to_bits() != r.to_bits()
        };
        if write {
            out.rates[i] = r;
            out.touched.push(i as u32);
        }
    }
}

/// The offsets in `old` (sorted) of the entries missing from `new`, a sorted
/// subset of it, into `fin` (in order).
fn finished_offsets(old: &[u32], new: &[u32], fin: &mut Vec<u32>) {
    fin.clear();
    let mut a = 0;
    while a < old.len() {
        let b = a - fin.len();
        match old[a..].iter().zip(&new[b..]).position(|(x, y)| x != y) {
            Some(p) => {
                fin.push((a + p) as u32);
                a += p + 1;
            }
            None => {
                fin.extend((a + new.len() - b) as u32..old.len() as u32);
                break;
            }
        }
    }
}

/// Removes the entries at `at` (sorted offsets) from `v`, keeping the order.
fn remove_offsets<T: Copy>(v: &mut Vec<T>, at: &[u32]) {
    let Some(&first) = at.first() else {
        return;
    };
    let mut w = first as usize;
    for (i, &o) in at.iter().enumerate() {
        let end = at.get(i + 1).map_or(v.len(), |&x| x as usize);
        v.copy_within(o as usize + 1..end, w);
        w += end - o as usize - 1;
    }
    v.truncate(w);
}

/// A blocked coflow's memo `m`: it took nothing and no link bounded a rate.
fn takes_nothing(m: &mut Memo) {
    m.took.resize(m.links.len(), 0.0);
    m.tight.resize(m.links.len(), false);
}

/// Writes every positive rate of `m` (a sparse, not delta, decision), its
/// flows starting at position `start`.
fn write_positives(start: usize, m: &Memo, out: &mut Decision) {
    for &o in &m.pos {
        out.rates[start + o as usize] = m.rates[o as usize];
        out.touched.push((start + o as usize) as u32);
    }
}

/// The offsets of the positive entries of `rates`, in order, into `pos`.
fn positives(rates: &[f64], pos: &mut Vec<u32>) {
    pos.clear();
    pos.extend((0..rates.len() as u32).filter(|&o| rates[o as usize] > 0.0));
}

/// Lists in `dirty` what kept solver `s` wrote in a residual: its links, or
/// every link (`all`) after a plain solve.
fn wrote(dirty: &mut Vec<u32>, all: &mut bool, s: &TailMaxMin) {
    match s.written_links() {
        Some(links) => dirty.extend_from_slice(links),
        None => *all = true,
    }
}

/// Sorts group indices by `(key, coflow index)`; the coflow index encodes
/// (arrival, id), the tie-break of every policy.
pub fn order_by_key(c: &Common, key: impl Fn(u32) -> f64, out: &mut Vec<usize>) {
    out.clear();
    out.extend(0..c.groups.len());
    out.sort_by(|&a, &b| {
        let (ca, cb) = (c.groups[a].coflow, c.groups[b].coflow);
        key(ca).total_cmp(&key(cb)).then(ca.cmp(&cb))
    });
}

/// CoflowSim's per-coflow share (`CoflowSimulatorDark.updateRates`): coflows in
/// order, each on what earlier ones left; a coflow's flows whose links all have
/// more than CoflowSim's zero left are counted per link, and each gets
/// `min_{l ∈ f} left(l) / count(l)` in one pass (0 if that is not above zero).
/// Not max-min: a flow limited elsewhere still takes its count share of a link.
#[derive(Default)]
pub struct CountShare {
    pub residual: Vec<f64>,
    count: Vec<u32>,
    used: Vec<f64>,
    links: Vec<u32>,
    counted: Vec<usize>,
}

/// CoflowSim's zero (`Constants.ZERO`, 10⁻³ bit/s) in bytes/s.
pub const COFLOWSIM_ZERO: f64 = 1e-3 / 8.0;

impl CountShare {
    /// Starts a round: the whole fabric is free again.
    pub fn begin(&mut self, c: &Common) {
        let nl = c.fabric.num_links();
        self.residual.clear();
        self.residual.extend_from_slice(&c.fabric.capacities);
        self.count.resize(nl, 0);
        self.used.resize(nl, 0.0);
    }

    /// Serves one coflow: its active flows at `range` (positions in `c.active`).
    pub fn serve(&mut self, c: &Common, range: std::ops::Range<usize>, out: &mut Decision) {
        self.counted.clear();
        for i in range {
            let path = c.fabric.path(c.flow_path[c.active[i] as usize]);
            if path
                .iter()
                .any(|&l| self.residual[l as usize] <= COFLOWSIM_ZERO)
            {
                continue;
            }
            for &l in path {
                if self.count[l as usize] == 0 {
                    self.links.push(l);
                }
                self.count[l as usize] += 1;
            }
            self.counted.push(i);
        }
        for &i in &self.counted {
            let path = c.fabric.path(c.flow_path[c.active[i] as usize]);
            let mut m = f64::INFINITY;
            for &l in path {
                m = m.min(self.residual[l as usize] / self.count[l as usize] as f64);
            }
            if m <= COFLOWSIM_ZERO {
                m = 0.0;
            }
            out.rates[i] = m;
            for &l in path {
                self.used[l as usize] += m;
            }
        }
        for &l in &self.links {
            self.residual[l as usize] -= self.used[l as usize];
            self.used[l as usize] = 0.0;
            self.count[l as usize] = 0;
        }
        self.links.clear();
    }
}

#[cfg(test)]
#[path = "priority_tests.rs"]
mod tests;
