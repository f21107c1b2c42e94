//! The event loop. An event costs time in what changed: the flows that start or
//! finish and the flows (or paths) whose rate the policy changes; progress is
//! kept lazily ([`crate::rates`]), so nothing visits the flows that keep moving
//! at the same rate.

use crate::rates::Rates;
use crate::series::{Recorder, Recording, Series, State};
use crate::sorted::{insert_sorted, remove_sorted};
use coflowkit_model::{finish_threshold, FlowMeta, PathId, Workload, TIME_EPS};
use coflowkit_policy::drive::group_active;
use coflowkit_policy::support::classes::KeptClasses;
use coflowkit_policy::support::levelclasses::LevelClasses;
use coflowkit_policy::view::{Input, ViewData};
use coflowkit_policy::{AnyPolicy, Decision, Info, Wakeup, NO_PORT};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fmt;

/// Engine options (kept apart from policy parameters).
#[derive(Debug, Clone)]
pub struct SimOptions {
    /// Check invariants after every policy call (no link above capacity, no negative
    /// or non-finite rate) and at the end (bytes conserved). Always on in debug builds.
    pub check_invariants: bool,
    /// Stop with an error after this many events (0: no limit).
    pub max_events: u64,
    /// Record the instantaneous metrics (progress, isolation, disparity,
    /// utilization); `None` records nothing and costs nothing.
    pub record: Option<Recording>,
    /// Stop (without error) before the first event later than this time: coflows
    /// unfinished by then have a NaN finish time and `SimResult::complete` is
    /// false. Infinite by default. For snapshots of an allocation.
    pub horizon_s: f64,
    /// When the policy is called: at every event (the default), or only when the
    /// set of coflows changes ([`Realloc::Coflow`]).
    pub realloc: Realloc,
    /// Lets policies answer with delta decisions (only the rates that changed;
    /// see `Decision::delta`). On by default; off makes them write every rate,
    /// which must give the same run (a test checks it for every policy).
    pub delta_decisions: bool,
    /// How strict-priority classes (a policy answering classes: `stream`,
    /// `spq`) are kept and served; the same rates up to the order of float
    /// sums. See [`ClassForm`].
    pub class_form: ClassForm,
}

/// How the engine keeps strict-priority classes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClassForm {
    /// Per flow: a `TailMaxMin` per class re-solved where a change reaches,
    /// every flow whose rate moved given its rate
    /// ([`coflowkit_policy::support::classes::KeptClasses`]).
    Flows,
    /// By group: a `LevelMaxMin` per class, the flows of a path in a class on
    /// one counter, served by `(class, link)` bottleneck groups
    /// ([`coflowkit_policy::support::levelclasses::LevelClasses`]). Only with
    /// delta decisions and decisions at events; otherwise `Flows`.
    Groups,
    /// `Groups` while the active paths are many per link they cross (a loaded
    /// big switch or small FatTree, where a change moves many paths' rates and
    /// few levels), `Flows` when they are few (a large FatTree, where a
    /// change reaches few paths and a class solved whole costs its links).
    Auto,
}

impl Default for SimOptions {
    fn default() -> Self {
        SimOptions {
            check_invariants: cfg!(debug_assertions),
            max_events: 0,
            record: None,
            horizon_s: f64::INFINITY,
            realloc: Realloc::Event,
            delta_decisions: true,
            class_form: ClassForm::Auto,
        }
    }
}

/// Progress reports: called with (coflows finished, coflows in all, simulated
/// seconds) now and then.
pub type Progress<'a> = &'a mut dyn FnMut(usize, usize, f64);

/// What a run produced, indexed like the workload.
#[derive(Debug, Clone)]
pub struct SimResult {
    pub coflow_finish_s: Vec<f64>,
    pub flow_start_s: Vec<f64>,
    pub flow_finish_s: Vec<f64>,
    /// Distinct event times processed.
    pub events: u64,
    /// Number of policy calls.
    pub policy_calls: u64,
    /// Active flows summed over the policy calls: divided by `policy_calls`, the
    /// mean active flows.
    pub active_flow_calls: u64,
    /// Rate changes applied (flows in flow mode, paths in path mode): the work an
    /// event costs the engine beyond the policy itself.
    pub rate_changes: u64,
    /// Number of invariant checks performed (0 when checks are off).
    pub checks: u64,
    /// Class decisions served by group ([`ClassForm`]), and switches between
    /// the per-flow and the group form.
    pub class_group_calls: u64,
    pub class_form_switches: u64,
    /// The instantaneous metrics, when [`SimOptions::record`] asked for them.
    pub series: Option<Series>,
    /// False when the run stopped at [`SimOptions::horizon_s`] with work left.
    pub complete: bool,
    /// The labels a policy that schedules identified coflows gave each flow
    /// (the last label of every flow; `coda`), for measuring identification.
    pub flow_labels: Option<Vec<u32>>,
    /// For such a policy that binds flows (`coda`'s late binding): the labelled
    /// coflow each flow was last bound to (`u32::MAX`: never served).
    pub flow_bindings: Option<Vec<u32>>,
    /// The policy's own per-flow columns ([`AnyPolicy::flow_columns`]).
    pub flow_columns: Vec<(&'static str, Vec<f64>)>,
}

/// A simulation that could not complete.
#[derive(Debug, Clone, PartialEq)]
pub struct SimError {
    pub message: String,
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for SimError {}

mod checks;
mod classes;
mod positions;
mod realloc;
mod speeds;
use positions::sort_positions;
use realloc::next_decision;
pub use realloc::Realloc;

fn fail(message: String) -> SimError {
    SimError { message }
}

/// Rates closer than this (relative) are the same rate: a policy that recomputes
/// a rate that did not change (MADD's `rem/Γ` stays constant while a coflow is
/// served alone) gets the last bits of the division wrong, and the engine would
/// otherwise reschedule the flow for nothing.
pub const RATE_REL_EPS: f64 = 1e-12;

#[inline]
fn changed(old: f64, new: f64) -> bool {
    (old - new).abs() > RATE_REL_EPS * old.abs().max(new.abs())
}

/// Runs `policy` on `w` until every flow has finished.
pub fn simulate(
    w: &Workload,
    policy: &mut AnyPolicy,
    opts: &SimOptions,
    progress: Option<Progress>,
) -> Result<SimResult, SimError> {
    // Per-path rates give a flow that joins a path the path's rate at once, which
    // interval decisions forbid (it waits for the next decision): the engine keeps
    // per-flow rates and gives each flow its path's rate at each decision.
    let interval = opts.realloc.interval_s();
    let path_mode = policy.path_mode() && interval.is_none();
    let mut e = Engine::new(
        w,
        path_mode,
        opts.check_invariants || cfg!(debug_assertions),
    );
    e.decision.delta_ok = opts.delta_decisions;
    e.decision.groups_ok = path_mode && opts.delta_decisions;
    e.decision.speeds_ok = !path_mode && opts.delta_decisions;
    e.interval_s = interval;
    e.paths_by_flow = policy.path_mode() && !path_mode;
    e.groups_for_classes =
        opts.class_form != ClassForm::Flows && opts.delta_decisions && interval.is_none();
    e.class_form = opts.class_form;
    // Class limits move flows at the instant they cross, which decisions at
    // intervals forbid; either class form takes them.
    e.decision.limits_ok = opts.delta_decisions && interval.is_none();
    let mut r = e.run(policy, opts, progress)?;
    r.flow_labels = policy.flow_labels();
    r.flow_bindings = policy.flow_bindings();
    r.flow_columns = policy.flow_columns();
    Ok(r)
}

/// One value per flow from the workload's metadata, `none` when unknown.
fn meta(w: &Workload, none: u32, get: impl Fn(&FlowMeta) -> Option<u32>) -> Vec<u32> {
    if w.meta.is_empty() {
        return vec![none; w.flows.len()];
    }
    w.meta.iter().map(|m| get(m).unwrap_or(none)).collect()
}

/// `(coflow, child stage, parent stage)` for every dependency between flows of two
/// different stages of one coflow, sorted and without repeats.
fn stage_parents(w: &Workload) -> Vec<(u32, u32, u32)> {
    let mut out = Vec::new();
    if w.meta.is_empty() {
        return out;
    }
    for (i, f) in w.flows.iter().enumerate() {
        let Some(p) = w.meta[i].stage else { continue };
        for &d in &f.deps {
            let d = d as usize;
            if let Some(c) = w.meta[d].stage {
                if c != p && w.flows[d].coflow == f.coflow {
                    out.push((f.coflow, c, p));
                }
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// The view's data of a workload: its fixed facts, nothing active yet.
fn view_data(w: &Workload) -> ViewData {
    let nc = w.coflows.len();
    ViewData {
        flow_coflow: w.flows.iter().map(|f| f.coflow).collect(),
        flow_index: w.flows.iter().map(|f| f.index).collect(),
        flow_path: w.flows.iter().map(|f| f.path).collect(),
        flow_src: w.flows.iter().map(|f| f.src).collect(),
        flow_dst: w.flows.iter().map(|f| f.dst).collect(),
        flow_src_port: meta(w, NO_PORT, |m| m.src_port),
        flow_dst_port: meta(w, NO_PORT, |m| m.dst_port),
        flow_stage: meta(w, 0, |m| m.stage),
        flow_priority: meta(w, 0, |m| m.priority),
        size: w.flows.iter().map(|f| f.size_bytes).collect(),
        flow_seen_s: vec![f64::NAN; w.flows.len()],
        coflow_id: w.coflows.iter().map(|c| c.id).collect(),
        arrival: w.coflows.iter().map(|c| c.arrival_s).collect(),
        weight: w.coflows.iter().map(|c| c.weight).collect(),
        width: w.coflows.iter().map(|c| c.width).collect(),
        first_flow: w.coflows.iter().map(|c| c.first_flow).collect(),
        length: w.coflows.iter().map(|c| c.length_bytes).collect(),
        csize: w.coflows.iter().map(|c| c.size_bytes).collect(),
        stage_parents: stage_parents(w),
        reports: w.reports.clone(),
        coflow_started: vec![0; nc],
        path_count: vec![0; w.fabric.num_paths()],
        supplies: vec![Input::Stages],
        ..ViewData::default()
    }
}

struct Engine<'w> {
    w: &'w Workload,
    check: bool,
    now: f64,
    d: ViewData,
    rates: Rates,
    coflow_left: Vec<u32>,
    deps_left: Vec<u32>,
    children: Vec<Vec<u32>>,
    /// Flows without dependencies, by (start, index), consumed from `cursor`.
    ready: Vec<u32>,
    cursor: usize,
    /// Flows released by their dependencies: (start time, index).
    released: BinaryHeap<Reverse<(crate::rates::Key, u32)>>,
    timers: Vec<f64>,
    result: SimResult,
    finished_coflows: usize,
    /// A coflow completed in the current event (for `Realloc::Coflow`).
    coflow_completed: bool,
    /// A policy call was skipped since the last one (`Realloc::Coflow`).
    skipped_call: bool,
    /// `Realloc::Interval`'s Δ: the policy is called at k·Δ only.
    interval_s: Option<f64>,
    /// A policy deciding rates by path, run with per-flow rates (interval
    /// decisions): the last rate it gave each path.
    paths_by_flow: bool,
    path_rate_kept: Vec<f64>,
    /// `path_pos[p]`: p's position in `active_paths`, or `u32::MAX`.
    path_pos: Vec<u32>,
    /// Per path: the call whose `changed_paths` lists it.
    path_changed: Vec<u64>,
    // Scratch.
    newcomers: Vec<u32>,
    done: Vec<u32>,
    mark: Vec<u64>,
    /// Scratch: one bit per active position ([`sort_positions`]).
    bits: Vec<u64>,
    /// Scratch: the positions whose rate a dense decision changes.
    moved: Vec<u32>,
    decision: Decision,
    /// Strict-priority classes kept across calls (class decisions).
    classes: KeptClasses,
    /// Classes by group ([`ClassForm`]): allowed, the form asked for, class
    /// decisions so far (for `Auto`'s checks), engaged (the active flows are
    /// served by class path counters), the classes, and scratch.
    groups_for_classes: bool,
    class_form: ClassForm,
    class_calls: u64,
    class_groups: bool,
    link_mark: Vec<u32>,
    link_stamp: u32,
    level_classes: LevelClasses,
    class_moved: Vec<u32>,
    /// Classes carried from one form to the other (told before this call's).
    carried: Vec<(u32, u8)>,
    /// A new flow a class delta decision left without a class (an error).
    unclassified: Option<u32>,
    /// Why the last class decision's renames were refused.
    bad_rename: Option<String>,
}

impl<'w> Engine<'w> {
    fn new(w: &'w Workload, path_mode: bool, check: bool) -> Self {
        let n = w.flows.len();
        let mut children: Vec<Vec<u32>> = Vec::new();
        let mut deps_left = vec![0u32; n];
        if w.flows.iter().any(|f| !f.deps.is_empty()) {
            children = vec![Vec::new(); n];
            for (i, f) in w.flows.iter().enumerate() {
                deps_left[i] = f.deps.len() as u32;
                for &d in &f.deps {
                    children[d as usize].push(i as u32);
                }
            }
        }
        let mut ready: Vec<u32> = (0..n as u32)
            .filter(|&i| deps_left[i as usize] == 0)
            .collect();
        ready.sort_by(|&a, &b| {
            w.flows[a as usize]
                .start_s
                .total_cmp(&w.flows[b as usize].start_s)
                .then(a.cmp(&b))
        });
        let np = w.fabric.num_paths();
        let mut d = view_data(w);
        let rates = Rates::new(&mut d, np, path_mode);
        Engine {
            w,
            check,
            now: 0.0,
            d,
            rates,
            coflow_left: w.coflows.iter().map(|c| c.width).collect(),
            deps_left,
            children,
            ready,
            cursor: 0,
            released: BinaryHeap::new(),
            timers: Vec::new(),
            result: SimResult {
                coflow_finish_s: vec![f64::NAN; w.coflows.len()],
                flow_start_s: vec![f64::NAN; n],
                flow_finish_s: vec![f64::NAN; n],
                events: 0,
                policy_calls: 0,
                active_flow_calls: 0,
                rate_changes: 0,
                checks: 0,
                class_group_calls: 0,
                class_form_switches: 0,
                series: None,
                complete: true,
                flow_labels: None,
                flow_bindings: None,
                flow_columns: Vec::new(),
            },
            finished_coflows: 0,
            coflow_completed: false,
            skipped_call: false,
            interval_s: None,
            paths_by_flow: false,
            path_rate_kept: Vec::new(),
            path_pos: vec![u32::MAX; np],
            path_changed: vec![u64::MAX; np],
            newcomers: Vec::new(),
            done: Vec::new(),
            mark: vec![0; n],
            bits: Vec::new(),
            moved: Vec::new(),
            decision: Decision::default(),
            classes: KeptClasses::new(),
            groups_for_classes: false,
            class_form: ClassForm::Auto,
            class_calls: 0,
            class_groups: false,
            link_mark: Vec::new(),
            link_stamp: 0,
            level_classes: LevelClasses::new(),
            class_moved: Vec::new(),
            carried: Vec::new(),
            unclassified: None,
            bad_rename: None,
        }
    }

    /// What a metrics sample reads.
    fn state(&self) -> State<'_> {
        State {
            fabric: &self.w.fabric,
            d: &self.d,
            now: self.now,
        }
    }

    fn next_start(&self) -> f64 {
        let a = self
            .ready
            .get(self.cursor)
            .map(|&i| self.w.flows[i as usize].start_s)
            .unwrap_or(f64::INFINITY);
        let b = self
            .released
            .peek()
            .map(|Reverse((t, _))| t.0)
            .unwrap_or(f64::INFINITY);
        a.min(b)
    }

    /// Path `p` gained or lost an active flow: it goes in `changed_paths` once.
    fn path_changed(&mut self, p: usize) {
        let call = self.result.policy_calls;
        if self.path_changed[p] != call {
            self.path_changed[p] = call;
            self.d.changed_paths.push(p as PathId);
        }
    }

    /// Completes every active flow that is done (or within one event of done).
    fn completions(&mut self) -> bool {
        let mut done = std::mem::take(&mut self.done);
        self.rates.take_done(&mut self.d, self.now, &mut done);
        if done.is_empty() {
            self.done = done;
            return false;
        }
        done.sort_unstable();
        for &f in &done {
            self.finish(f as usize);
        }
        remove_sorted(&mut self.d.active, &done);
        self.done = done;
        true
    }

    /// The bookkeeping of flow `f`'s end (its bytes are already settled).
    fn finish(&mut self, f: usize) {
        self.result.flow_finish_s[f] = self.now;
        self.d.finished.push(f as u32);
        let p = self.d.flow_path[f] as usize;
        self.d.path_count[p] -= 1;
        self.path_changed(p);
        if self.d.path_count[p] == 0 {
            let at = self.path_pos[p] as usize;
            self.d.active_paths.swap_remove(at);
            if let Some(&q) = self.d.active_paths.get(at) {
                self.path_pos[q as usize] = at as u32;
            }
            self.path_pos[p] = u32::MAX;
        }
        let k = self.d.flow_coflow[f] as usize;
        self.coflow_left[k] -= 1;
        if self.coflow_left[k] == 0 {
            self.result.coflow_finish_s[k] = self.now;
            self.finished_coflows += 1;
            self.coflow_completed = true;
        }
        if !self.children.is_empty() {
            for j in 0..self.children[f].len() {
                let c = self.children[f][j] as usize;
                self.deps_left[c] -= 1;
                if self.deps_left[c] == 0 {
                    let t = self.w.flows[c].start_s.max(self.now);
                    self.released
                        .push(Reverse((crate::rates::Key(t), c as u32)));
                }
            }
        }
    }

    /// Starts every pending flow whose start is within the current event.
    fn starts(&mut self) -> bool {
        let horizon = self.now + TIME_EPS;
        self.newcomers.clear();
        while let Some(&i) = self.ready.get(self.cursor) {
            if self.w.flows[i as usize].start_s > horizon {
                break;
            }
            self.newcomers.push(i);
            self.cursor += 1;
        }
        while let Some(Reverse((t, i))) = self.released.peek().copied() {
            if t.0 > horizon {
                break;
            }
            self.released.pop();
            self.newcomers.push(i);
        }
        if self.newcomers.is_empty() {
            return false;
        }
        self.newcomers.sort_unstable();
        let np = self.w.fabric.num_paths();
        for j in 0..self.newcomers.len() {
            let i = self.newcomers[j];
            self.start(i as usize, np);
        }
        self.merge_newcomers();
        true
    }

    fn start(&mut self, i: usize, np: usize) {
        self.result.flow_start_s[i] = self.now;
        self.d.flow_seen_s[i] = self.now;
        self.d.started.push(i as u32);
        self.d.since[i] = self.now;
        self.d.coflow_started[self.d.flow_coflow[i] as usize] += 1;
        let p = self.d.flow_path[i] as usize;
        self.d.path_count[p] += 1;
        self.path_changed(p);
        if self.d.path_count[p] == 1 {
            self.path_pos[p] = self.d.active_paths.len() as u32;
            self.d.active_paths.push(p as PathId);
        }
        if self.rates.path_mode {
            self.rates.join_path(&mut self.d, i as u32, self.now, np);
        }
    }

    /// Merges the sorted newcomers into the sorted active list.
    fn merge_newcomers(&mut self) {
        insert_sorted(&mut self.d.active, &self.newcomers);
    }

    fn rebuild_groups(&mut self) {
        let d = &mut self.d;
        group_active(
            &d.active,
            &d.flow_coflow,
            &d.first_flow,
            &d.width,
            &mut d.groups,
        );
    }

    fn call_policy(&mut self, policy: &mut AnyPolicy) {
        // Path mode reads only `path_rates`: no per-flow rates to clear.
        let n = if self.rates.path_mode {
            0
        } else {
            self.d.active.len()
        };
        self.decision.reset(n);
        let fabric = &self.w.fabric;
        match policy {
            AnyPolicy::Clairvoyant(p) => {
                p.decide(&self.d.clairvoyant(fabric, self.now), &mut self.decision)
            }
            AnyPolicy::NonClairvoyant(p) => p.decide(
                &self.d.non_clairvoyant(fabric, self.now),
                &mut self.decision,
            ),
        }
        self.result.policy_calls += 1;
        self.result.active_flow_calls += self.d.active.len() as u64;
        self.d.changed_paths.clear();
        if !self.decision.has_classes() && !self.classes.is_empty() {
            self.classes = KeptClasses::new(); // a decision of another form
        }
        if !self.decision.by_speed {
            // A decision of another form: members keep their rates, per flow.
            self.rates.prop_leave_all(&mut self.d, self.now);
        }
        if self.rates.path_mode {
            self.apply_path_rates();
        } else if self.decision.by_speed {
            if self.class_groups {
                self.leave_class_groups();
            }
            self.apply_by_speed();
        } else if self.paths_by_flow {
            self.apply_path_rates_by_flow();
        } else if self.decision.by_flow {
            self.apply_by_flow();
        } else if self.serve_classes_by_group() {
            self.classes_to_groups();
            // A class decision leaves the per-flow rates at zero (as
            // `apply_by_flow` assumes for the per-flow form): no need to zero
            // them for the next call.
            debug_assert!(self.decision.rates.iter().all(|&r| r == 0.0));
            self.decision.all_zero = true;
        } else {
            if self.class_groups {
                self.leave_class_groups();
            }
            if self.decision.has_classes() {
                self.classes_to_rates();
                self.apply_by_flow();
            } else if self.decision.delta {
                self.apply_delta();
            } else if self.decision.sparse {
                self.apply_sparse();
            } else {
                self.apply_dense();
            }
            self.due_tiny_newcomers();
        }
        self.newcomers.clear();
        self.d.started.clear();
        self.d.finished.clear();
    }

    fn apply_path_rates(&mut self) {
        let now = self.now;
        let n = self.decision.path_rates.len();
        if n >= 64 && 8 * n >= self.d.active_paths.len() {
            self.rates.go_dense();
        } else {
            self.rates.go_sparse(&self.d.active_paths);
        }
        for &(p, r) in &self.decision.path_rates {
            self.rates.set_path_rate(&mut self.d, p, r, now);
        }
        let ng = self.w.fabric.num_links();
        for &(p, g) in &self.decision.path_groups {
            self.rates.set_path_group(&mut self.d, p, g, now, ng);
        }
        for &(g, r) in &self.decision.group_rates {
            self.rates.set_group_rate(&mut self.d, g, r, now, ng);
        }
        self.result.rate_changes += (self.decision.path_rates.len()
            + self.decision.path_groups.len()
            + self.decision.group_rates.len()) as u64;
    }

    /// A decision by path under per-flow rates: every active flow takes the last
    /// rate its path was given (a path the decision does not list keeps its rate).
    fn apply_path_rates_by_flow(&mut self) {
        let now = self.now;
        let np = self.w.fabric.num_paths();
        if self.path_rate_kept.len() < np {
            self.path_rate_kept.resize(np, 0.0);
        }
        for &(p, r) in &self.decision.path_rates {
            self.path_rate_kept[p as usize] = r;
        }
        self.choose_flow_mode(self.d.active.len());
        for i in 0..self.d.active.len() {
            let f = self.d.active[i];
            let r = self.path_rate_kept[self.d.flow_path[f as usize] as usize];
            if changed(self.d.rate[f as usize], r) {
                self.rates.set_rate(&mut self.d, f, r, now);
                self.result.rate_changes += 1;
            }
        }
        self.decision.all_zero = true;
    }

    /// A delta decision by flow: the listed flows take their rates.
    fn apply_by_flow(&mut self) {
        let now = self.now;
        self.choose_flow_mode(self.decision.flow_rates.len());
        for &(f, r) in &self.decision.flow_rates {
            debug_assert!(
                self.result.flow_finish_s[f as usize].is_nan()
                    && !self.result.flow_start_s[f as usize].is_nan(),
                "flow {f} is not active"
            );
            if changed(self.d.rate[f as usize], r) {
                self.rates.set_rate(&mut self.d, f, r, now);
                self.result.rate_changes += 1;
            }
        }
        // The per-flow rates were not written: they are still all zero.
        self.decision.all_zero = true;
    }

    /// A newcomer already within the finish tolerance (a barrier of the
    /// `waves` transform, say) finishes at this instant whatever its rate, so
    /// a policy that starves it cannot delay the flows waiting for it.
    pub(super) fn due_tiny_newcomers(&mut self) {
        for &f in &self.newcomers {
            let fu = f as usize;
            if self.d.size[fu] <= finish_threshold(self.d.size[fu]) {
                self.rates.due_now(f, self.now);
            }
        }
    }

    /// Heaps of finish times when a decision changes few of the moving flows'
    /// rates, a scan of the moving flows when it changes more than one in
    /// sixteen (the mode changes the cost, never the result). Two heap pushes
    /// per change cost more than a share of the scan: `psp` on the FB big
    /// switch changes about one moving flow in six per decision, and its
    /// first 30,000 events took 39.0-42.4 s from one in sixteen against
    /// 43.4-45.4 s from one in four (alternating runs, 2026-12-07); `scf`,
    /// `aalo`, `mcs` and `pfp` were within noise.
    fn choose_flow_mode(&mut self, changes: usize) {
        if changes >= 64 && 16 * changes >= self.rates.moving.len() {
            self.rates.flows_dense();
        } else {
            self.rates.flows_sparse();
        }
    }

    /// One rate per active flow: one pass finds the positions whose rate
    /// changes, and only those are applied.
    fn apply_dense(&mut self) {
        let now = self.now;
        let mut moved = std::mem::take(&mut self.moved);
        moved.clear();
        let (rate, rates) = (&self.d.rate, &self.decision.rates);
        for (i, (&f, &r)) in self.d.active.iter().zip(rates.iter()).enumerate() {
            if changed(rate[f as usize], r) {
                moved.push(i as u32);
            }
        }
        self.choose_flow_mode(moved.len());
        for &i in &moved {
            let f = self.d.active[i as usize];
            let r = self.decision.rates[i as usize];
            self.rates.set_rate(&mut self.d, f, r, now);
        }
        self.result.rate_changes += moved.len() as u64;
        self.moved = moved;
    }

    /// Only the listed positions move: the flows moving before and not listed
    /// stop, the listed ones take their rates, and the decision's rates go back
    /// to zero for the next call.
    fn apply_sparse(&mut self) {
        let now = self.now;
        let call = self.result.policy_calls;
        // A position may be listed more than once.
        sort_positions(
            &mut self.decision.touched,
            self.d.active.len(),
            &mut self.bits,
        );
        let mut still = 0;
        for &i in &self.decision.touched {
            let f = self.d.active[i as usize];
            self.mark[f as usize] = call;
            still += (self.d.rate[f as usize] != 0.0) as usize;
        }
        self.choose_flow_mode(self.decision.touched.len() + self.rates.moving.len() - still);
        let mut k = 0;
        while k < self.rates.moving.len() {
            let f = self.rates.moving[k];
            if self.mark[f as usize] == call {
                k += 1;
            } else {
                self.rates.set_rate(&mut self.d, f, 0.0, now); // moves another flow into k
                self.result.rate_changes += 1;
            }
        }
        self.take_touched(now);
    }

    /// Only the listed positions change: they take their rates, every other flow
    /// keeps its own, and the decision's rates go back to zero for the next call.
    fn apply_delta(&mut self) {
        let d = &mut self.decision;
        sort_positions(&mut d.touched, self.d.active.len(), &mut self.bits);
        let n = d.touched.len();
        self.choose_flow_mode(n);
        self.take_touched(self.now);
    }

    /// The listed positions (sorted, distinct) take the decision's rates, which
    /// go back to zero for the next call.
    fn take_touched(&mut self, now: f64) {
        let d = &mut self.decision;
        for &i in &d.touched {
            let f = self.d.active[i as usize];
            let r = d.rates[i as usize];
            d.rates[i as usize] = 0.0;
            if changed(self.d.rate[f as usize], r) {
                self.rates.set_rate(&mut self.d, f, r, now);
                self.result.rate_changes += 1;
            }
        }
        d.all_zero = true;
    }

    /// The rate of coflow `k` now (the sum of its flows').
    fn coflow_rate(&self, k: u32) -> f64 {
        if !self.d.path_mode || self.d.coflow_sums {
            return self.d.coflow_rate[k as usize];
        }
        // Finished and unstarted flows have rate 0.
        let first = self.d.first_flow[k as usize] as usize;
        (first..first + self.d.width[k as usize] as usize)
            .map(|f| Rates::rate_of(&self.d, f))
            .sum()
    }

    /// Converts the decision's wake-ups into absolute times at current rates.
    fn set_timers(&mut self) {
        self.timers.clear();
        if let Some(dt) = self.interval_s {
            // Interval decisions: the next decision time, and nothing else.
            self.timers.push(next_decision(self.now, dt, false));
            return;
        }
        if self.decision.wakeups.is_empty() {
            return;
        }
        if self.d.path_mode && !self.d.coflow_sums {
            // A policy woken at a coflow's bytes reads them at every call:
            // kept from now on rather than summed over its flows each time.
            let by_coflow = |w: &Wakeup| matches!(w, Wakeup::CoflowSent { .. });
            if self.decision.wakeups.iter().any(by_coflow) {
                self.rates.start_coflow_sums(&mut self.d, self.now);
            }
        }
        let group_rate = self.group_rates();
        let common = self.d.common(&self.w.fabric, self.now);
        for w in &self.decision.wakeups {
            let (rate, need) = match *w {
                Wakeup::At(t) => {
                    if t > self.now && t.is_finite() {
                        self.timers.push(t);
                    }
                    continue;
                }
                Wakeup::GroupSent { group, bytes } => (
                    group_rate.get(group as usize).copied().unwrap_or(0.0),
                    bytes,
                ),
                Wakeup::CoflowSent { coflow, bytes } => {
                    (self.coflow_rate(coflow), bytes - common.coflow_sent(coflow))
                }
                Wakeup::FlowSent { flow, bytes } => (
                    Rates::rate_of(&self.d, flow as usize),
                    bytes - common.sent(flow),
                ),
            };
            if rate > 0.0 && need > 0.0 {
                let t = self.now + need / rate;
                if t > self.now && t.is_finite() {
                    self.timers.push(t);
                }
            }
        }
    }

    /// Per wake-up group, the rate of its active flows (only when a policy asked
    /// for a group wake-up).
    fn group_rates(&self) -> Vec<f64> {
        let d = &self.decision;
        if !d
            .wakeups
            .iter()
            .any(|w| matches!(w, Wakeup::GroupSent { .. }))
        {
            return Vec::new();
        }
        // Only the groups a wake-up names are summed (a flow's rate may cost
        // a counter's lookup); each in the order of the active flows.
        let mut top = 0;
        for w in &d.wakeups {
            if let Wakeup::GroupSent { group, .. } = *w {
                top = top.max(group as usize + 1);
            }
        }
        let mut asked = vec![false; top];
        for w in &d.wakeups {
            if let Wakeup::GroupSent { group, .. } = *w {
                asked[group as usize] = true;
            }
        }
        let mut rate = vec![0.0; top];
        if d.class_delta {
            for &(k, f) in &d.wake_flows {
                if asked.get(k as usize) == Some(&true) {
                    rate[k as usize] += Rates::rate_of(&self.d, f as usize);
                }
            }
            return rate;
        }
        for (&f, &k) in self.d.active.iter().zip(&d.wake_groups) {
            if asked.get(k as usize) == Some(&true) {
                rate[k as usize] += Rates::rate_of(&self.d, f as usize);
            }
        }
        rate
    }

    /// The event loop: find the next event, sample the grid up to it, handle it,
    /// report progress; ends when nothing is left to happen (or at the horizon).
    fn run(
        mut self,
        policy: &mut AnyPolicy,
        opts: &SimOptions,
        mut progress: Option<Progress>,
    ) -> Result<SimResult, SimError> {
        let policy_name = match policy.info() {
            Info::Clairvoyant => "the clairvoyant policy",
            Info::NonClairvoyant => "the non-clairvoyant policy",
        };
        let total = self.w.coflows.len();
        let report_every = (total / 100).max(1);
        let mut last_report = 0;
        let mut idle_events = 0u32;
        let mut recorder = opts.record.map(|r| Recorder::new(r, &self.w.fabric));
        // Interval mode: the grid t0 + i·Δ, t0 the first event.
        let mut grid = (f64::NAN, 0u64);
        loop {
            let t_start = self.next_start();
            self.rates.flush_groups(&mut self.d);
            let t_done = self.rates.next_completion(&self.d.active_paths);
            let t_timer = self.timers.iter().copied().fold(f64::INFINITY, f64::min);
            let t = t_start.min(t_done).min(t_timer);
            if !t.is_finite() {
                if self.skipped_call && !self.d.active.is_empty() {
                    // realloc=coflow: nothing moves until the policy is asked again.
                    self.ask(policy, policy_name)?;
                    continue;
                }
                break;
            }
            let t = t.max(self.now);
            if t > opts.horizon_s {
                self.result.complete = false;
                break;
            }
            if let Some(rc) = recorder.as_mut() {
                self.sample_grid(rc, &mut grid, t);
            }
            self.now = t;
            self.result.events += 1;
            if opts.max_events > 0 && self.result.events > opts.max_events {
                return Err(fail(format!(
                    "stopped after {} events (max_events)",
                    opts.max_events
                )));
            }
            let moved = self.event(policy, opts, t_timer <= t, policy_name)?;
            // A timer event where nothing completes or starts: count runs of them, so
            // a policy that keeps asking for wake-ups cannot loop forever.
            if !moved && t_timer <= t_start.min(t_done) {
                idle_events += 1;
                if idle_events > 1_000_000 {
                    return Err(fail(format!(
                        "{policy_name} keeps asking for wake-ups without progress at t={} s",
                        self.now
                    )));
                }
            } else {
                idle_events = 0;
            }
            if let Some(rc) = recorder.as_mut() {
                if rc.rec.interval_s == 0.0 {
                    rc.sample(&self.state(), self.now, 0.0);
                } else if grid.0.is_nan() {
                    grid.0 = self.now;
                }
            }
            if let Some(p) = progress.as_mut() {
                if self.finished_coflows >= last_report + report_every {
                    last_report = self.finished_coflows;
                    p(self.finished_coflows, total, self.now);
                }
            }
        }
        self.finish_run(policy_name, progress, recorder)
    }

    /// Samples the recorder's grid points `t0 + i·Δ` before `t` (interval mode),
    /// at the current rates.
    fn sample_grid(&self, rc: &mut Recorder, grid: &mut (f64, u64), t: f64) {
        let dt = rc.rec.interval_s;
        while dt > 0.0 && grid.0.is_finite() {
            let ts = grid.0 + grid.1 as f64 * dt;
            if ts >= t {
                break;
            }
            rc.sample(&self.state(), self.now, (ts - self.now).max(0.0));
            grid.1 += 1;
        }
    }

    /// Handles the event at `self.now`: completions, starts, then the policy call
    /// (under `realloc=coflow` only on coflow events and wake-ups). Returns
    /// whether a flow completed or started.
    fn event(
        &mut self,
        policy: &mut AnyPolicy,
        opts: &SimOptions,
        woken: bool,
        policy_name: &str,
    ) -> Result<bool, SimError> {
        self.coflow_completed = false;
        let completed = self.completions();
        let started = self.starts();
        if completed || started {
            self.rebuild_groups();
        }
        let mut call = match opts.realloc {
            Realloc::Event => true,
            // A flow that crossed its class's limit moves at this call.
            Realloc::Coflow => {
                started || woken || self.coflow_completed || !self.rates.crossed.is_empty()
            }
            Realloc::Interval(_) => woken,
        };
        if let (Some(dt), false) = (self.interval_s, self.d.active.is_empty()) {
            if self.timers.is_empty() && !call {
                // Flows started on an idle fabric: the first decision time from
                // now (now itself when it is one).
                let t = next_decision(self.now, dt, true);
                if t <= self.now {
                    call = true;
                } else {
                    self.timers.push(t);
                }
            }
        }
        self.skipped_call |= !call;
        if self.d.active.is_empty() {
            // No call while idle; `changed_paths` (like `started` and `finished`)
            // keeps what changed for the next one, which incremental policies
            // (fair) need to forget the paths that emptied.
            self.timers.clear();
        } else if call {
            self.ask(policy, policy_name)?;
        }
        Ok(completed || started)
    }

    /// Calls the policy, checks its rates (when checking) and sets its timers.
    fn ask(&mut self, policy: &mut AnyPolicy, policy_name: &str) -> Result<(), SimError> {
        self.skipped_call = false;
        self.call_policy(policy);
        if !self.decision.class_limits.is_empty() && !self.decision.limits_ok {
            return Err(fail(format!(
                "{policy_name} answered class limits, which this run does not take \
                 (they need delta decisions and decisions at events, not at intervals)"
            )));
        }
        if !self.decision.class_renames.is_empty() && !self.decision.class_limits.is_empty() {
            return Err(fail(format!(
                "{policy_name} answered class renames with class limits: a renamed class would keep \
                 its old limit"
            )));
        }
        if let Some(e) = self.bad_rename.take() {
            return Err(fail(format!(
                "{policy_name} answered a bad class rename: {e}"
            )));
        }
        if let Some(f) = self.unclassified.take() {
            return Err(fail(format!(
                "{policy_name} answered classes by change without a class for flow {} (started at t={} s): \
                 a class delta decision lists every flow that started",
                self.w.flows[f as usize].id, self.now
            )));
        }
        if self.check {
            self.check_rates(policy_name)?;
        }
        self.set_timers();
        Ok(())
    }

    fn finish_run(
        mut self,
        policy_name: &str,
        mut progress: Option<Progress>,
        recorder: Option<Recorder>,
    ) -> Result<SimResult, SimError> {
        let total = self.w.coflows.len();
        if self.finished_coflows < total && self.result.complete {
            let stuck = self.d.active.first().map(|&f| self.w.flows[f as usize].id);
            return Err(fail(format!(
                "the simulation stalled at t={} s with {} of {} coflows unfinished: {policy_name} gives every active flow a zero rate{}",
                self.now,
                total - self.finished_coflows,
                total,
                stuck.map(|s| format!(" (for example flow {s})")).unwrap_or_default()
            )));
        }
        if self.check && self.result.complete {
            self.check_end()?;
        }
        if let Some(p) = progress.as_mut() {
            p(self.finished_coflows, total, self.now);
        }
        self.result.series = recorder.map(|r| r.series);
        Ok(self.result)
    }
}
