//! CoflowSim's event loop (`Simulator.simulate`), replayed step-exactly but only
//! at the steps where something happens.
//!
//! CoflowSim admits jobs at the start of each epoch (every job arriving before the
//! next epoch starts, early), then advances every flow every 8-unit step at its
//! current rate. Rates change only at its hooks: admissions, job departures, and
//! (FAIR, PFP) whenever a flow ends. Between those, each remaining-bytes
//! accumulator is a constant chain of subtractions, which [`fpstep`] skips
//! exactly. So the loop visits only *event steps* (a flow or a reducer reaching
//! CoflowSim's `≤ 10⁻³` bytes), executes those literally for the reducers
//! involved, and applies the schedulers' hooks in CoflowSim's order.

use super::fpstep::{self, Dir};
use super::hooked::{self, CsPolicy, Hooked};
use super::iheap::IndexedHeap;
use super::jobs::{build_jobs, Job, END_UNITS, QUANTUM, ZERO};
use super::rates;
use crate::SimError;
use coflowkit_model::Workload;

/// CoflowSim's schedulers (`Constants.SHARING_ALGO`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheduler {
    Fair,
    Pfp,
    Fifo,
    Scf,
    Ncf,
    Lcf,
    Sebf,
    Dark,
    /// A registry policy object called at CoflowSim's hooks ([`super::hooked`]).
    Hooked,
}

impl Scheduler {
    /// coflowkit's policy name → CoflowSim's scheduler.
    pub fn from_policy(name: &str) -> Option<Scheduler> {
        Some(match name {
            "fair" => Scheduler::Fair,
            "pfp" => Scheduler::Pfp,
            "fifo" => Scheduler::Fifo,
            "scf" => Scheduler::Scf,
            "ncf" => Scheduler::Ncf,
            "tcf" => Scheduler::Lcf,
            "varys" => Scheduler::Sebf,
            "aalo" => Scheduler::Dark,
            _ => return None,
        })
    }

    /// The policies the engine maps, in CoflowSim's order.
    pub const POLICIES: [&'static str; 8] =
        ["fair", "pfp", "fifo", "scf", "ncf", "tcf", "varys", "aalo"];

    pub fn coflowsim_name(self) -> &'static str {
        match self {
            Scheduler::Fair => "FAIR",
            Scheduler::Pfp => "PFP",
            Scheduler::Fifo => "FIFO",
            Scheduler::Scf => "SCF",
            Scheduler::Ncf => "NCF",
            Scheduler::Lcf => "LCF",
            Scheduler::Sebf => "SEBF",
            Scheduler::Dark => "DARK",
            Scheduler::Hooked => "hooks",
        }
    }

    /// Keeps each job's `shuffleBytesCompleted` (DARK's queues read it; a hooked
    /// policy sees it as its coflow's bytes sent).
    fn tracks_done(self) -> bool {
        matches!(self, Scheduler::Dark | Scheduler::Hooked)
    }

    fn is_order(self) -> bool {
        !matches!(self, Scheduler::Fair | Scheduler::Pfp | Scheduler::Dark)
    }
}

/// Engine options.
#[derive(Debug, Clone)]
pub struct CsOptions {
    /// Admission epoch in CoflowSim units (1/1024 s; CoflowSim: 10 × 1024).
    pub epoch_units: i64,
}

impl Default for CsOptions {
    fn default() -> Self {
        CsOptions {
            epoch_units: 10 * 1024,
        }
    }
}

/// What a CoflowSim run produced, indexed like the workload's coflows. Times are
/// CoflowSim units (1/1024 s); NaN for a coflow CoflowSim ignores (no flows) or
/// that did not finish within its 86,400-second horizon.
#[derive(Debug, Clone)]
pub struct CsResult {
    pub arrival_units: Vec<f64>,
    /// `simulatedStartTime`: the epoch start that admitted the job.
    pub admitted_units: Vec<f64>,
    /// `simulatedFinishTime`: the end of the step its last reducer finished in.
    pub finish_units: Vec<f64>,
    /// `getSimulatedDuration()` = finish − admitted (the 8th field of `JOB-` lines).
    pub duration_units: Vec<f64>,
    /// Steps CoflowSim executed; event steps this engine executed literally.
    pub steps: u64,
    pub event_steps: u64,
    /// Rate recomputations (admissions and departures under coflow schedulers).
    pub recomputes: u64,
    pub complete: bool,
}

/// Java's `Math.min` for doubles (NaN and −0.0 as the JDK treats them).
#[inline]
pub(super) fn jmin(a: f64, b: f64) -> f64 {
    if a.is_nan() {
        return a;
    }
    if a == 0.0 && b == 0.0 && b.is_sign_negative() {
        return b;
    }
    if a <= b {
        a
    } else {
        b
    }
}

/// Bytes a flow moves in one step at `bps`: `(bps / 8) · (8 / 1024)`.
#[inline]
pub(super) fn step_bytes(bps: f64) -> f64 {
    (bps / 8.0) * (1.0 * QUANTUM as f64 / 1024.0)
}

/// One flow: `rem` is its remaining bytes before step `at`; it moves `b` per
/// executed step while `laid` (in CoflowSim's `flowsInRacks`).
#[derive(Debug, Clone)]
pub(super) struct Fl {
    pub red: u32,
    pub src: u32,
    pub rem: f64,
    pub at: u64,
    pub b: f64,
    pub bps: f64,
    pub laid: bool,
    pub done: bool,
    /// A step no later than its end at the current rate.
    pub lb: u64,
}

/// One reducer (rack of a job): `left` (`shuffleBytesLeft`) and `per`
/// (`shuffleBytesPerRack`, clamped at 0) before step `at`, moved each step by
/// `pat` (its laid flows' `b`, in order).
#[derive(Debug, Clone)]
pub(super) struct Red {
    pub job: u32,
    pub rack: u32,
    pub flows: Vec<u32>,
    pub left: f64,
    pub per: f64,
    pub at: u64,
    pub pat: Vec<f64>,
    pub completed: bool,
    pub ver: u32,
    /// This step's log of bytes moved by its flows, `[start, end)` in `Sim::log`.
    pub log: (u32, u32),
}

#[derive(Debug, Clone)]
pub(super) struct JobSt {
    pub reds: std::ops::Range<u32>,
    pub admitted: bool,
    pub active: bool,
    pub start: f64,
    pub finish: f64,
    pub tasks_left: u32,
    /// `shuffleBytesCompleted` before step `done_at`, moved by `done_pat` (DARK).
    pub done: f64,
    pub done_at: u64,
    pub done_pat: Vec<f64>,
    pub queue: i64,
}

pub(super) struct Sim<'a> {
    pub kind: Scheduler,
    pub racks: usize,
    pub jobs: &'a [Job],
    pub js: Vec<JobSt>,
    pub reds: Vec<Red>,
    pub fl: Vec<Fl>,
    /// Executed steps so far (the time base of every lazy value).
    pub sigma: u64,
    heap: IndexedHeap<(u64, u8)>,
    pub active_jobs: usize,
    active_tasks: u64,
    /// Jobs admitted whose flows may still move (pruned lazily).
    pub live: Vec<u32>,
    /// Coflow order (FIFO/SCF/NCF/LCF/SEBF) or DARK's queues.
    pub sorted: Vec<u32>,
    pub queues: Vec<Vec<u32>>,
    /// FAIR: laid flows per reducer rack and per mapper rack.
    pub(super) cnt_dst: Vec<u32>,
    pub(super) cnt_src: Vec<u32>,
    pub(super) by_dst: Vec<Vec<u32>>,
    pub(super) by_src: Vec<Vec<u32>>,
    /// PFP: `flowsInRacks`, and the flow each rack serves.
    pub(super) plist: Vec<Vec<u32>>,
    /// Visit marks (per flow, per reducer) for one FAIR update.
    pub(super) stamp: Vec<u32>,
    pub(super) red_stamp: Vec<u32>,
    pub(super) gen: u32,
    pub(super) served: Vec<u32>,
    /// The policy object of a [`Scheduler::Hooked`] run.
    pub(super) hooked: Option<Box<Hooked>>,
    log: Vec<f64>,
    pub recomputes: u64,
    event_steps: u64,
}

pub(super) const NONE: u32 = u32::MAX;
/// A reducer's next event step: the earliest of its laid flows' ends and of its
/// bytes left reaching CoflowSim's zero. Pushed as a lower bound (one division per
/// flow), made exact only when it reaches the top of the heap: most are superseded
/// by a re-rating first, and the exact search is the expensive part.
const EV_EXACT: u8 = 0;
const EV_BOUND: u8 = 1;

impl<'a> Sim<'a> {
    fn new(kind: Scheduler, racks: usize, jobs: &'a [Job]) -> Self {
        let mut js = Vec::with_capacity(jobs.len());
        let mut reds = Vec::new();
        let mut fl = Vec::new();
        for (ji, j) in jobs.iter().enumerate() {
            let r0 = reds.len() as u32;
            for (k, r) in j.reducers.iter().enumerate() {
                let ri = reds.len() as u32;
                let flows: Vec<u32> = (0..j.mappers.len() as u32)
                    .map(|m| fl.len() as u32 + m)
                    .collect();
                for &src in &j.mappers {
                    fl.push(Fl {
                        red: ri,
                        src,
                        rem: j.flow_bytes[k],
                        at: 0,
                        b: 0.0,
                        bps: 0.0,
                        laid: false,
                        done: false,
                        lb: u64::MAX,
                    });
                }
                reds.push(Red {
                    job: ji as u32,
                    rack: r.rack,
                    flows,
                    left: r.shuffle_bytes,
                    per: r.per_rack_bytes,
                    at: 0,
                    pat: Vec::new(),
                    completed: false,
                    ver: 0,
                    log: (0, 0),
                });
            }
            js.push(JobSt {
                reds: r0..reds.len() as u32,
                admitted: false,
                active: false,
                start: f64::NAN,
                finish: f64::NAN,
                tasks_left: 0,
                done: 0.0,
                done_at: 0,
                done_pat: Vec::new(),
                queue: 0,
            });
        }
        let (n_fl, n_reds) = (fl.len(), reds.len());
        Sim {
            kind,
            racks,
            jobs,
            js,
            reds,
            fl,
            sigma: 0,
            heap: IndexedHeap::new(n_reds),
            active_jobs: 0,
            active_tasks: 0,
            live: Vec::new(),
            sorted: Vec::new(),
            queues: vec![Vec::new(); rates::DARK_QUEUES],
            cnt_dst: vec![0; racks],
            cnt_src: vec![0; racks],
            by_dst: vec![Vec::new(); racks],
            by_src: vec![Vec::new(); racks],
            plist: vec![Vec::new(); racks],
            stamp: vec![0; n_fl],
            red_stamp: vec![0; n_reds],
            gen: 0,
            served: vec![NONE; racks],
            hooked: None,
            log: Vec::new(),
            recomputes: 0,
            event_steps: 0,
        }
    }

    // ---- lazy values -------------------------------------------------------

    /// A flow's remaining bytes before step `s`.
    #[inline]
    pub fn rem_at(&self, f: u32, s: u64) -> f64 {
        let x = &self.fl[f as usize];
        if !x.laid || x.b == 0.0 || x.done {
            return x.rem;
        }
        fpstep::advance(x.rem, &[x.b], Dir::Sub, s - x.at)
    }

    pub fn sync_flow(&mut self, f: u32, s: u64) {
        let v = self.rem_at(f, s);
        let x = &mut self.fl[f as usize];
        x.rem = v;
        x.at = s;
    }

    pub fn sync_red(&mut self, r: u32, s: u64) {
        let x = &mut self.reds[r as usize];
        if x.at != s {
            let k = s - x.at;
            x.left = fpstep::advance(x.left, &x.pat, Dir::Sub, k);
            if self.kind == Scheduler::Lcf {
                // `shuffleBytesPerRack` is read only by LCF's order
                x.per = fpstep::advance(x.per, &x.pat, Dir::SubClamp, k);
            }
            x.at = s;
        }
    }

    pub fn sync_job_done(&mut self, j: u32, s: u64) {
        let x = &mut self.js[j as usize];
        if x.done_at != s {
            x.done = fpstep::advance(x.done, &x.done_pat, Dir::Add, s - x.done_at);
            x.done_at = s;
        }
    }

    /// Rebuilds a reducer's step pattern from its flows and schedules its crossing.
    pub fn rebuild_red(&mut self, r: u32) {
        let mut pat = std::mem::take(&mut self.reds[r as usize].pat);
        pat.clear();
        let mut first = u64::MAX;
        for &f in &self.reds[r as usize].flows {
            let x = &self.fl[f as usize];
            if x.laid && x.b > 0.0 {
                pat.push(x.b);
                first = first.min(x.lb);
            }
        }
        let red = &mut self.reds[r as usize];
        red.pat = pat;
        red.ver = red.ver.wrapping_add(1);
        if red.pat.is_empty() {
            self.heap.remove(r);
            return;
        }
        if !red.completed {
            first = first.min(red.at + fpstep::lower_bound(red.left, &red.pat, ZERO) - 1);
        }
        self.heap.set(r, (first, EV_BOUND));
    }

    pub fn rebuild_job_done(&mut self, j: u32) {
        if !self.kind.tracks_done() {
            return;
        }
        let mut pat = std::mem::take(&mut self.js[j as usize].done_pat);
        pat.clear();
        for r in self.js[j as usize].reds.clone() {
            for &f in &self.reds[r as usize].flows {
                let x = &self.fl[f as usize];
                if x.laid && x.b > 0.0 {
                    pat.push(x.b);
                }
            }
        }
        self.js[j as usize].done_pat = pat;
    }

    /// Sets a flow's per-step bytes and laid state at step `s` (the flow, its
    /// reducer and job must already be synced to `s`; the caller rebuilds the
    /// reducer, which schedules the flow's end).
    pub fn set_flow(&mut self, f: u32, b: f64, laid: bool, s: u64) {
        let x = &mut self.fl[f as usize];
        debug_assert_eq!(x.at, s);
        x.b = b;
        x.laid = laid;
        // A lower bound of its end stays one while its rate does not change.
        x.lb = if laid && b > 0.0 && !x.done {
            s + fpstep::lower_bound(x.rem, &[b], ZERO) - 1
        } else {
            u64::MAX
        };
    }

    /// Syncs every live job (flows, reducers, bytes done) to step `s`.
    pub fn sync_live(&mut self, s: u64) {
        let live = std::mem::take(&mut self.live);
        for &j in &live {
            for r in self.js[j as usize].reds.clone() {
                self.sync_red(r, s);
                for i in 0..self.reds[r as usize].flows.len() {
                    let f = self.reds[r as usize].flows[i];
                    self.sync_flow(f, s);
                }
            }
            self.sync_job_done(j, s);
        }
        self.live = live;
    }

    /// After changing flows of the live jobs at `s`: every pattern and event anew.
    pub fn rebuild_live(&mut self, s: u64) {
        // Every pending event belongs to a live job (a laid flow, an unfinished
        // reducer), and all of them are scheduled anew below.
        self.heap.clear();
        let live = std::mem::take(&mut self.live);
        let mut keep = Vec::with_capacity(live.len());
        for &j in &live {
            let mut moving = self.js[j as usize].active;
            for r in self.js[j as usize].reds.clone() {
                for i in 0..self.reds[r as usize].flows.len() {
                    let f = self.reds[r as usize].flows[i];
                    let (b, laid) = (self.fl[f as usize].b, self.fl[f as usize].laid);
                    self.set_flow(f, b, laid, s);
                    moving |= laid;
                }
                self.rebuild_red(r);
            }
            self.rebuild_job_done(j);
            if moving {
                keep.push(j);
            }
        }
        self.live = keep;
    }

    // ---- admission -----------------------------------------------------------

    fn admit(&mut self, j: u32, now: i64) {
        let s = self.sigma;
        let st = &mut self.js[j as usize];
        st.admitted = true;
        st.active = true;
        st.start = now as f64;
        st.tasks_left = st.reds.len() as u32;
        st.done_at = s;
        self.active_jobs += 1;
        self.active_tasks += st.reds.len() as u64;
        for r in st.reds.clone() {
            self.reds[r as usize].at = s;
            for &f in &self.reds[r as usize].flows {
                self.fl[f as usize].at = s;
            }
        }
        self.live.push(j);
        match self.kind {
            Scheduler::Fair => self.fair_admit(j),
            Scheduler::Pfp => self.pfp_admit(j),
            Scheduler::Dark => {
                self.queues[0].push(j);
                self.js[j as usize].queue = 0;
            }
            _ => rates::add_sorted(self, j),
        }
    }

    // ---- per-scheduler rate rules between hooks ------------------------------

    // ---- the event step --------------------------------------------------------

    /// Executes step `sigma` (time `now`) literally for the reducers whose flows or
    /// bytes-left reach CoflowSim's zero in it. Returns whether a job departed.
    fn event_step(&mut self, now: i64) -> bool {
        let s = self.sigma;
        self.event_steps += 1;
        let reds = self.due_reducers(s);
        let mut jobs: Vec<u32> = reds.iter().map(|&r| self.reds[r as usize].job).collect();
        jobs.sort_unstable();
        jobs.dedup();
        if self.kind.tracks_done() {
            for &j in &jobs {
                self.sync_job_done(j, s);
            }
        }
        self.log.clear();
        let mut finished: Vec<u32> = Vec::new();
        let mut departed = false;
        for &r in &reds {
            self.sync_red(r, s);
            let start = self.log.len() as u32;
            let flows = self.reds[r as usize].flows.clone();
            for f in flows {
                if !self.fl[f as usize].laid {
                    continue;
                }
                let before = self.rem_at(f, s);
                let bt = jmin(self.fl[f as usize].b, before);
                let after = before - bt;
                {
                    let x = &mut self.fl[f as usize];
                    x.rem = after;
                    x.at = s + 1;
                }
                self.log.push(bt);
                if after <= ZERO {
                    let x = &mut self.fl[f as usize];
                    x.done = true;
                    x.laid = false;
                    self.reds[r as usize].flows.retain(|&g| g != f);
                    finished.push(f);
                }
                let red = &mut self.reds[r as usize];
                red.left -= bt;
                red.per -= bt;
                if red.per < 0.0 {
                    red.per = 0.0;
                }
                if (red.left <= ZERO || red.flows.is_empty()) && !red.completed {
                    departed |= self.cleanup(r, now + QUANTUM);
                }
            }
            let red = &mut self.reds[r as usize];
            red.at = s + 1;
            red.log = (start, self.log.len() as u32);
        }
        if self.kind.tracks_done() {
            for &j in &jobs {
                self.step_job_done(j, &reds);
            }
        }
        self.sigma = s + 1;
        let s1 = self.sigma;
        for &r in &reds {
            self.rebuild_red(r);
        }
        for &j in &jobs {
            self.rebuild_job_done(j);
        }
        self.after_finishes(&finished, s1);
        departed
    }

    /// The reducers whose event falls on step `s` (bounds there made exact).
    fn due_reducers(&mut self, s: u64) -> Vec<u32> {
        let mut reds: Vec<u32> = Vec::new();
        while let Some(((when, kind), id)) = self.heap.peek() {
            if when != s {
                debug_assert!(when > s, "event {when} left behind at step {s}");
                break;
            }
            if kind == EV_BOUND {
                match self.exact(id) {
                    Some(at) if at > s => {
                        self.heap.set(id, (at, EV_EXACT));
                        continue;
                    }
                    Some(at) => debug_assert_eq!(at, s),
                    None => {
                        self.heap.remove(id);
                        continue;
                    }
                }
            }
            self.heap.remove(id);
            reds.push(id);
        }
        reds.sort_unstable();
        reds.dedup();
        reds
    }

    /// DARK's `shuffleBytesCompleted` through an event step: the logged bytes of
    /// the reducers executed literally, the pattern of the others, in rack order.
    fn step_job_done(&mut self, j: u32, literal: &[u32]) {
        let mut x = self.js[j as usize].done;
        for r in self.js[j as usize].reds.clone() {
            if literal.binary_search(&r).is_ok() {
                let (a, b) = self.reds[r as usize].log;
                for &bt in &self.log[a as usize..b as usize] {
                    x += bt;
                }
            } else {
                for &f in &self.reds[r as usize].flows {
                    let y = &self.fl[f as usize];
                    if y.laid && y.b > 0.0 {
                        x += y.b;
                    }
                }
            }
        }
        let st = &mut self.js[j as usize];
        st.done = x;
        st.done_at = self.sigma + 1;
    }

    /// `ReduceTask.cleanupTask` and, for the job's last reducer, `removeDeadJob`.
    fn cleanup(&mut self, r: u32, at: i64) -> bool {
        let red = &mut self.reds[r as usize];
        red.completed = true;
        red.left = 0.0;
        self.active_tasks -= 1;
        let j = red.job;
        let st = &mut self.js[j as usize];
        if st.finish.is_nan() || st.finish < at as f64 {
            st.finish = at as f64;
        }
        st.tasks_left -= 1;
        if st.tasks_left > 0 {
            return false;
        }
        st.active = false;
        self.active_jobs -= 1;
        match self.kind {
            Scheduler::Dark => {
                for q in &mut self.queues {
                    if let Some(p) = q.iter().position(|&x| x == j) {
                        q.remove(p);
                        break;
                    }
                }
            }
            k if k.is_order() => self.sorted.retain(|&x| x != j),
            _ => {}
        }
        true
    }

    /// The exact step of a reducer's next event from its current lazy state.
    fn exact(&self, r: u32) -> Option<u64> {
        let red = &self.reds[r as usize];
        let mut first = None::<u64>;
        let mut take = |at: Option<u64>| {
            if let Some(a) = at {
                first = Some(first.map_or(a, |b| b.min(a)));
            }
        };
        for &f in &red.flows {
            let x = &self.fl[f as usize];
            if x.laid && x.b > 0.0 {
                take(fpstep::first_at_most(x.rem, &[x.b], ZERO).map(|k| x.at + k - 1));
            }
        }
        if !red.completed {
            take(fpstep::first_at_most(red.left, &red.pat, ZERO).map(|k| red.at + k - 1));
        }
        first
    }

    /// The earliest pending event step, with stale entries dropped and lower
    /// bounds at the top made exact.
    fn next_event(&mut self) -> Option<u64> {
        while let Some(((when, kind), id)) = self.heap.peek() {
            if kind == EV_EXACT {
                return Some(when);
            }
            match self.exact(id) {
                Some(at) => {
                    debug_assert!(at >= when, "lower bound {when} above the exact step {at}");
                    self.heap.set(id, (at, EV_EXACT));
                }
                None => self.heap.remove(id),
            }
        }
        None
    }

    /// The hooks CoflowSim calls after admissions (`afterJobAdmission`) and
    /// departures (`afterJobDeparture`) at time `now`.
    fn hook(&mut self, now: i64, admission: bool) {
        let s = self.sigma;
        match self.kind {
            Scheduler::Fair => {
                if admission {
                    let all: Vec<u32> = (0..self.racks as u32).collect();
                    self.fair_update(&all, &all, s);
                }
            }
            Scheduler::Pfp => {
                if admission {
                    self.pfp_update(s);
                }
            }
            Scheduler::Hooked => {
                // `CoflowSimulator`'s hooks: a layout at admissions, then rates
                self.recomputes += 1;
                self.sync_live(s);
                if admission {
                    rates::layout(self);
                }
                hooked::decide(self, now);
                self.rebuild_live(s);
            }
            Scheduler::Dark => {
                self.recomputes += 1;
                self.sync_live(s);
                rates::dark_order(self);
                rates::layout(self);
                rates::dark_rates(self);
                self.rebuild_live(s);
            }
            _ => {
                self.recomputes += 1;
                self.sync_live(s);
                if admission {
                    rates::layout(self);
                }
                rates::madd_with_backfill(self, now);
                self.rebuild_live(s);
            }
        }
    }
}

/// Replays `w` as CoflowSim would under `kind`.
pub fn simulate_coflowsim(
    w: &Workload,
    kind: Scheduler,
    opts: &CsOptions,
) -> Result<CsResult, SimError> {
    simulate_coflowsim_with(w, CsPolicy::Builtin(kind), opts)
}

/// Replays `w` as CoflowSim would under `policy`: check the epoch, build the
/// jobs, run the epochs, read the results.
pub fn simulate_coflowsim_with(
    w: &Workload,
    policy: CsPolicy,
    opts: &CsOptions,
) -> Result<CsResult, SimError> {
    let (kind, hooked) =
        match policy {
            CsPolicy::Builtin(Scheduler::Hooked) => return Err(SimError {
                message:
                    "engine coflowsim: Scheduler::Hooked needs a policy object (CsPolicy::Hooked)"
                        .to_string(),
            }),
            CsPolicy::Builtin(k) => (k, None),
            CsPolicy::Hooked { name, policy } => (Scheduler::Hooked, Some((name, policy))),
        };
    let e = opts.epoch_units;
    if !(QUANTUM..=END_UNITS).contains(&e) || e % QUANTUM != 0 {
        return Err(SimError {
            message: format!(
                "engine coflowsim: epoch must be a positive multiple of {QUANTUM} units \
                 ({} s) up to CoflowSim's horizon ({END_UNITS} units), got {e} units",
                QUANTUM as f64 / 1000.0
            ),
        });
    }
    let factor = if kind == Scheduler::Dark { 0.0 } else { 1.0 };
    let (racks, order) = build_jobs(w, factor)?;
    let jobs: Vec<Job> = order.iter().flatten().cloned().collect();
    let mut sim = Sim::new(kind, racks as usize, &jobs);
    if let Some((name, policy)) = hooked {
        sim.hooked = Some(Box::new(Hooked::new(
            &name,
            policy,
            w,
            racks as usize,
            &jobs,
        )?));
    }
    let steps = run_epochs(&mut sim, &jobs, e);
    if let Some(e) = sim.hooked.as_mut().and_then(|h| h.error.take()) {
        return Err(SimError {
            message: format!("engine coflowsim: {e}"),
        });
    }
    Ok(results(w, &sim, &jobs, steps))
}

/// CoflowSim's main loop: per epoch of `e` units, admit the jobs arriving by its
/// end, then step through the epoch, skipping the quanta in which nothing
/// happens. Returns the quanta stepped.
fn run_epochs(sim: &mut Sim, jobs: &[Job], e: i64) -> u64 {
    let total = jobs.len();
    let mut cur = 0usize;
    let mut ct: i64 = 0;
    let mut steps: u64 = 0;
    while ct < END_UNITS && (cur < total || sim.active_tasks > 0) {
        let mut added = 0;
        // `!(a > b)` as CoflowSim's `if (a > b) break` (arrivals are never NaN)
        while cur < total && jobs[cur].arrival <= (ct + e) as f64 {
            sim.admit(cur as u32, ct);
            added += 1;
            cur += 1;
        }
        if added > 0 {
            sim.hook(ct, true);
        }
        let mut i: i64 = 0;
        while i < e && sim.active_jobs > 0 {
            let left = ((e - i) / QUANTUM) as u64;
            let next = sim.next_event().unwrap_or(u64::MAX);
            if next >= sim.sigma + left {
                sim.sigma += left;
                steps += left;
                break;
            }
            let adv = next - sim.sigma;
            sim.sigma = next;
            steps += adv + 1;
            i += adv as i64 * QUANTUM;
            let now = ct + i;
            if sim.event_step(now) {
                sim.hook(now, false);
            }
            i += QUANTUM;
        }
        ct += e;
    }
    steps
}

/// Each coflow's arrival, admission, finish and duration (in CoflowSim's
/// millisecond units); a coflow that did not finish makes the result incomplete.
fn results(w: &Workload, sim: &Sim, jobs: &[Job], steps: u64) -> CsResult {
    let n = w.coflows.len();
    let mut res = CsResult {
        arrival_units: vec![f64::NAN; n],
        admitted_units: vec![f64::NAN; n],
        finish_units: vec![f64::NAN; n],
        duration_units: vec![f64::NAN; n],
        steps,
        event_steps: sim.event_steps,
        recomputes: sim.recomputes,
        complete: true,
    };
    for c in 0..n {
        res.arrival_units[c] = w.coflows[c].arrival_s * 1000.0;
    }
    for (j, job) in jobs.iter().enumerate() {
        let st = &sim.js[j];
        res.admitted_units[job.coflow] = st.start;
        if st.finish.is_finite() && st.tasks_left == 0 {
            res.finish_units[job.coflow] = st.finish;
            res.duration_units[job.coflow] = st.finish - st.start;
        } else {
            res.complete = false;
        }
    }
    res
}
