use crate::series::{Recorder, Recording, Series, State};
use coflowkit_alloc::MaxMin;
use coflowkit_model::{finish_threshold, FlowMeta, PathId, Workload, TIME_EPS};
use coflowkit_policy::drive::{class_rates, group_active};
use coflowkit_policy::{
    ActiveCoflow, AnyPolicy, ClairvoyantView, Common, Decision, NonClairvoyantView, Wakeup, NO_PORT,
};
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
}

impl Default for SimOptions {
    fn default() -> Self {
        SimOptions {
            check_invariants: cfg!(debug_assertions),
            max_events: 0,
            record: None,
            horizon_s: f64::INFINITY,
        }
    }
}

/// Progress reports: called with (coflows finished, coflows in all) now and then.
pub type Progress<'a> = &'a mut dyn FnMut(usize, usize);

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
    /// Active flows summed over the policy calls (the work a policy that visits
    /// every active flow does): divided by `policy_calls`, the mean active flows.
    pub active_flow_calls: u64,
    /// Number of invariant checks performed (0 when checks are off).
    pub checks: u64,
    /// The instantaneous metrics, when [`SimOptions::record`] asked for them.
    pub series: Option<Series>,
    /// False when the run stopped at [`SimOptions::horizon_s`] with work left.
    pub complete: bool,
    /// The labels a policy that schedules identified coflows gave each flow
    /// (the last label of every flow; `coda`), for measuring identification.
    pub flow_labels: Option<Vec<u32>>,
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

fn fail(message: String) -> SimError {
    SimError { message }
}

/// Runs `policy` on `w` until every flow has finished.
pub fn simulate(
    w: &Workload,
    policy: &mut AnyPolicy,
    opts: &SimOptions,
    progress: Option<Progress>,
) -> Result<SimResult, SimError> {
    let mut r = Engine::new(w, opts.check_invariants || cfg!(debug_assertions))
        .run(policy, opts, progress)?;
    r.flow_labels = policy.flow_labels();
    Ok(r)
}

/// One port per flow from the workload's metadata ([`NO_PORT`] when unknown).
fn port(w: &Workload, get: impl Fn(&FlowMeta) -> Option<u32>) -> Vec<u32> {
    if w.meta.is_empty() {
        return vec![NO_PORT; w.flows.len()];
    }
    w.meta.iter().map(|m| get(m).unwrap_or(NO_PORT)).collect()
}

/// One value per flow from the workload's metadata, 0 when unknown.
fn meta_or_zero(w: &Workload, get: impl Fn(&FlowMeta) -> Option<u32>) -> Vec<u32> {
    if w.meta.is_empty() {
        return vec![0; w.flows.len()];
    }
    w.meta.iter().map(|m| get(m).unwrap_or(0)).collect()
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

struct Engine<'w> {
    w: &'w Workload,
    check: bool,
    now: f64,
    // Static per-flow and per-coflow arrays (views borrow them).
    flow_coflow: Vec<u32>,
    flow_index: Vec<u32>,
    flow_path: Vec<PathId>,
    flow_src: Vec<u32>,
    flow_dst: Vec<u32>,
    flow_src_port: Vec<u32>,
    flow_dst_port: Vec<u32>,
    flow_stage: Vec<u32>,
    flow_priority: Vec<u32>,
    stage_parents: Vec<(u32, u32, u32)>,
    size: Vec<f64>,
    coflow_id: Vec<u64>,
    arrival: Vec<f64>,
    weight: Vec<f64>,
    width: Vec<u32>,
    first_flow: Vec<u32>,
    length: Vec<f64>,
    csize: Vec<f64>,
    // Dynamic state.
    sent: Vec<f64>,
    remaining: Vec<f64>,
    rate: Vec<f64>,
    coflow_sent: Vec<f64>,
    coflow_started: Vec<u32>,
    coflow_left: Vec<u32>,
    deps_left: Vec<u32>,
    children: Vec<Vec<u32>>,
    active: Vec<u32>,
    /// The active flows that can change state before the next policy call: rate > 0,
    /// or remaining bytes already within the finish tolerance. Advancing time and
    /// detecting completions only look at these.
    moving: Vec<u32>,
    /// Earliest projected completion of a moving flow (absolute time).
    next_done: f64,
    groups: Vec<ActiveCoflow>,
    /// Flows without dependencies, by (start, index), consumed from `cursor`.
    ready: Vec<u32>,
    cursor: usize,
    /// Flows released by their dependencies: (start time, index).
    released: BinaryHeap<Reverse<(TimeKey, u32)>>,
    timers: Vec<f64>,
    result: SimResult,
    finished_coflows: usize,
    /// Active flows per path, and the paths with at least one (`path_pos[p]` is
    /// p's position in `active_paths`, or `u32::MAX`).
    path_count: Vec<u32>,
    active_paths: Vec<PathId>,
    path_pos: Vec<u32>,
    // Scratch.
    newcomers: Vec<u32>,
    merged: Vec<u32>,
    decision: Decision,
    mm: MaxMin,
}

/// f64 with a total order, for heaps.
#[derive(Debug, Clone, Copy, PartialEq)]
struct TimeKey(f64);
impl Eq for TimeKey {}
impl PartialOrd for TimeKey {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for TimeKey {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&o.0)
    }
}

impl<'w> Engine<'w> {
    fn new(w: &'w Workload, check: bool) -> Self {
        let n = w.flows.len();
        let nc = w.coflows.len();
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
        Engine {
            w,
            check,
            now: 0.0,
            flow_coflow: w.flows.iter().map(|f| f.coflow).collect(),
            flow_index: w.flows.iter().map(|f| f.index).collect(),
            flow_path: w.flows.iter().map(|f| f.path).collect(),
            flow_src: w.flows.iter().map(|f| f.src).collect(),
            flow_dst: w.flows.iter().map(|f| f.dst).collect(),
            flow_src_port: port(w, |m| m.src_port),
            flow_dst_port: port(w, |m| m.dst_port),
            flow_stage: meta_or_zero(w, |m| m.stage),
            flow_priority: meta_or_zero(w, |m| m.priority),
            stage_parents: stage_parents(w),
            size: w.flows.iter().map(|f| f.size_bytes).collect(),
            coflow_id: w.coflows.iter().map(|c| c.id).collect(),
            arrival: w.coflows.iter().map(|c| c.arrival_s).collect(),
            weight: w.coflows.iter().map(|c| c.weight).collect(),
            width: w.coflows.iter().map(|c| c.width).collect(),
            first_flow: w.coflows.iter().map(|c| c.first_flow).collect(),
            length: w.coflows.iter().map(|c| c.length_bytes).collect(),
            csize: w.coflows.iter().map(|c| c.size_bytes).collect(),
            sent: vec![0.0; n],
            remaining: w.flows.iter().map(|f| f.size_bytes).collect(),
            rate: vec![0.0; n],
            coflow_sent: vec![0.0; nc],
            coflow_started: vec![0; nc],
            coflow_left: w.coflows.iter().map(|c| c.width).collect(),
            deps_left,
            children,
            active: Vec::new(),
            moving: Vec::new(),
            next_done: f64::INFINITY,
            groups: Vec::new(),
            ready,
            cursor: 0,
            released: BinaryHeap::new(),
            timers: Vec::new(),
            result: SimResult {
                coflow_finish_s: vec![f64::NAN; nc],
                flow_start_s: vec![f64::NAN; n],
                flow_finish_s: vec![f64::NAN; n],
                events: 0,
                policy_calls: 0,
                active_flow_calls: 0,
                checks: 0,
                series: None,
                complete: true,
                flow_labels: None,
            },
            finished_coflows: 0,
            path_count: vec![0; w.fabric.num_paths()],
            active_paths: Vec::new(),
            path_pos: vec![u32::MAX; w.fabric.num_paths()],
            newcomers: Vec::new(),
            merged: Vec::new(),
            decision: Decision::default(),
            mm: MaxMin::new(),
        }
    }

    /// What a metrics sample reads.
    fn state(&self) -> State<'_> {
        State {
            fabric: &self.w.fabric,
            active: &self.active,
            groups: &self.groups,
            flow_path: &self.flow_path,
            size: &self.size,
            remaining: &self.remaining,
            rate: &self.rate,
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

    /// The earliest projected completion at current rates (computed when the rates
    /// were set, in the same pass).
    fn next_completion(&self) -> f64 {
        self.next_done
    }

    fn advance(&mut self, t: f64) {
        let dt = t - self.now;
        if dt > 0.0 {
            // `moving` is in flow order, so a coflow's flows are consecutive: sum its
            // bytes in a register and add them once (one store per coflow, not a
            // chain of dependent stores to the same slot).
            let mut cur = u32::MAX;
            let mut acc = 0.0;
            for &f in &self.moving {
                let f = f as usize;
                let b = self.rate[f] * dt;
                if b > 0.0 {
                    let b = b.min(self.remaining[f]);
                    self.sent[f] += b;
                    self.remaining[f] -= b;
                    let k = self.flow_coflow[f];
                    if k != cur {
                        if cur != u32::MAX {
                            self.coflow_sent[cur as usize] += acc;
                        }
                        cur = k;
                        acc = 0.0;
                    }
                    acc += b;
                }
            }
            if cur != u32::MAX {
                self.coflow_sent[cur as usize] += acc;
            }
        }
        self.now = t;
    }

    /// Completes every active flow that is done (or within one event of done).
    fn completions(&mut self) -> bool {
        let mut any = false;
        // One pass: finished flows leave `moving` as they are found.
        let mut kept = 0;
        for i in 0..self.moving.len() {
            let f = self.moving[i] as usize;
            let rem = self.remaining[f];
            let done = rem <= finish_threshold(self.size[f]) || rem <= self.rate[f] * TIME_EPS;
            if !done {
                self.moving[kept] = f as u32;
                kept += 1;
            } else {
                any = true;
                self.sent[f] += rem;
                self.coflow_sent[self.flow_coflow[f] as usize] += rem;
                self.remaining[f] = 0.0;
                self.rate[f] = 0.0;
                self.result.flow_finish_s[f] = self.now;
                let p = self.flow_path[f] as usize;
                self.path_count[p] -= 1;
                if self.path_count[p] == 0 {
                    let at = self.path_pos[p] as usize;
                    self.active_paths.swap_remove(at);
                    if let Some(&q) = self.active_paths.get(at) {
                        self.path_pos[q as usize] = at as u32;
                    }
                    self.path_pos[p] = u32::MAX;
                }
                let k = self.flow_coflow[f] as usize;
                self.coflow_left[k] -= 1;
                if self.coflow_left[k] == 0 {
                    self.result.coflow_finish_s[k] = self.now;
                    self.finished_coflows += 1;
                }
                if !self.children.is_empty() {
                    for j in 0..self.children[f].len() {
                        let c = self.children[f][j] as usize;
                        self.deps_left[c] -= 1;
                        if self.deps_left[c] == 0 {
                            let t = self.w.flows[c].start_s.max(self.now);
                            self.released.push(Reverse((TimeKey(t), c as u32)));
                        }
                    }
                }
            }
        }
        self.moving.truncate(kept);
        if any {
            let rem = &self.remaining;
            self.active.retain(|&f| rem[f as usize] > 0.0);
        }
        any
    }

    /// Starts every pending flow whose start is within the current event.
    fn starts(&mut self) -> bool {
        let horizon = self.now + TIME_EPS;
        self.newcomers.clear();
        while let Some(&i) = self.ready.get(self.cursor) {
            if self.w.flows[i as usize].start_s <= horizon {
                self.newcomers.push(i);
                self.cursor += 1;
            } else {
                break;
            }
        }
        while let Some(Reverse((t, i))) = self.released.peek().copied() {
            if t.0 <= horizon {
                self.released.pop();
                self.newcomers.push(i);
            } else {
                break;
            }
        }
        if self.newcomers.is_empty() {
            return false;
        }
        for &i in &self.newcomers {
            self.result.flow_start_s[i as usize] = self.now;
            self.coflow_started[self.flow_coflow[i as usize] as usize] += 1;
            let p = self.flow_path[i as usize] as usize;
            self.path_count[p] += 1;
            if self.path_count[p] == 1 {
                self.path_pos[p] = self.active_paths.len() as u32;
                self.active_paths.push(p as PathId);
            }
        }
        self.newcomers.sort_unstable();
        // Merge the sorted newcomers into the sorted active list.
        self.merged.clear();
        self.merged
            .reserve(self.active.len() + self.newcomers.len());
        let (mut a, mut b) = (0, 0);
        while a < self.active.len() && b < self.newcomers.len() {
            if self.active[a] < self.newcomers[b] {
                self.merged.push(self.active[a]);
                a += 1;
            } else {
                self.merged.push(self.newcomers[b]);
                b += 1;
            }
        }
        self.merged.extend_from_slice(&self.active[a..]);
        self.merged.extend_from_slice(&self.newcomers[b..]);
        std::mem::swap(&mut self.active, &mut self.merged);
        true
    }

    /// Cuts `active` into per-coflow ranges. A coflow's flows are contiguous in the
    /// global numbering, so each range ends at the first active flow past the
    /// coflow's last flow: a binary search, `O(groups · log active)`.
    fn rebuild_groups(&mut self) {
        group_active(
            &self.active,
            &self.flow_coflow,
            &self.first_flow,
            &self.width,
            &mut self.groups,
        );
    }

    fn call_policy(&mut self, policy: &mut AnyPolicy) {
        self.decision.reset(self.active.len());
        let common = Common {
            now_s: self.now,
            fabric: &self.w.fabric,
            active: &self.active,
            groups: &self.groups,
            flow_coflow: &self.flow_coflow,
            flow_index: &self.flow_index,
            flow_path: &self.flow_path,
            flow_src: &self.flow_src,
            flow_dst: &self.flow_dst,
            flow_src_port: &self.flow_src_port,
            flow_dst_port: &self.flow_dst_port,
            flow_stage: &self.flow_stage,
            flow_priority: &self.flow_priority,
            stage_parents: &self.stage_parents,
            sent: &self.sent,
            coflow_id: &self.coflow_id,
            coflow_arrival_s: &self.arrival,
            coflow_weight: &self.weight,
            coflow_width: &self.width,
            coflow_sent: &self.coflow_sent,
            coflow_started: &self.coflow_started,
            path_count: &self.path_count,
            active_paths: &self.active_paths,
        };
        match policy {
            AnyPolicy::Clairvoyant(p) => {
                let v = ClairvoyantView {
                    common,
                    size: &self.size,
                    remaining: &self.remaining,
                    coflow_first_flow: &self.first_flow,
                    coflow_length: &self.length,
                    coflow_size: &self.csize,
                    coflow_report: &self.w.reports,
                };
                p.decide(&v, &mut self.decision);
            }
            AnyPolicy::NonClairvoyant(p) => {
                p.decide(&NonClairvoyantView { common }, &mut self.decision);
            }
        }
        self.result.policy_calls += 1;
        self.result.active_flow_calls += self.active.len() as u64;
        if !self.decision.classes.is_empty() {
            self.classes_to_rates();
        }
        // A flow at rate zero can still be due to finish (remaining bytes within
        // the tolerance): not one that was moving (`completions` just finished
        // those within the tolerance), only a newcomer smaller than the tolerance.
        let mut t = f64::INFINITY;
        // A sparse decision that touched many flows is read densely: one pass in
        // flow order costs less than sorting the positions (policies with
        // per-flow queues list them in priority order, not flow order).
        let sparse_is_cheaper = self.decision.touched.len() * 8 < self.active.len();
        if self.decision.sparse && sparse_is_cheaper && self.decision.classes.is_empty() {
            // Only the listed positions can move: zero the flows that moved before,
            // read the listed rates (in flow order) and put them back to zero.
            for &f in &self.moving {
                self.rate[f as usize] = 0.0;
            }
            self.moving.clear();
            let d = &mut self.decision;
            d.touched.sort_unstable();
            d.touched.dedup();
            for &i in &d.touched {
                let f = self.active[i as usize];
                let r = d.rates[i as usize];
                d.rates[i as usize] = 0.0;
                admit(
                    &mut self.rate,
                    &mut self.moving,
                    &self.remaining,
                    f,
                    r,
                    &mut t,
                );
            }
            d.all_zero = true;
        } else {
            // One pass in ascending flow order (cache-friendly writes).
            self.moving.clear();
            for (i, &f) in self.active.iter().enumerate() {
                let r = self.decision.rates[i];
                admit(
                    &mut self.rate,
                    &mut self.moving,
                    &self.remaining,
                    f,
                    r,
                    &mut t,
                );
            }
        }
        self.next_done = self.now + t;
        let before = self.moving.len();
        for &f in &self.newcomers {
            let fu = f as usize;
            if self.remaining[fu] > 0.0 && self.remaining[fu] <= finish_threshold(self.size[fu]) {
                // Already done (a barrier of the `waves` transform, say): it finishes
                // at this instant whatever rate the policy gave it, so a policy that
                // starves it cannot delay the flows that wait for it.
                self.next_done = self.now;
                if self.rate[fu] == 0.0 {
                    self.moving.push(f);
                }
            }
        }
        if self.moving.len() > before {
            self.moving.sort_unstable();
            self.moving.dedup();
        }
    }

    /// Strict priority across classes, max-min fair within a class.
    fn classes_to_rates(&mut self) {
        let paths: Vec<PathId> = self
            .active
            .iter()
            .map(|&f| self.flow_path[f as usize])
            .collect();
        let mut residual = self.w.fabric.capacities.clone();
        let d = &mut self.decision;
        class_rates(
            &mut self.mm,
            &self.w.fabric,
            &mut residual,
            &paths,
            &d.classes,
            &mut d.rates,
        );
    }

    fn check_rates(&mut self, policy_name: &str) -> Result<(), SimError> {
        self.result.checks += 1;
        let caps = &self.w.fabric.capacities;
        let mut load = vec![0.0; caps.len()];
        for &f in &self.active {
            let r = self.rate[f as usize];
            if !(r.is_finite() && r >= 0.0) {
                return Err(fail(format!(
                    "invariant violated at t={}: {policy_name} gave flow {} the rate {r}",
                    self.now, self.w.flows[f as usize].id
                )));
            }
            for &l in self.w.fabric.path(self.flow_path[f as usize]) {
                load[l as usize] += r;
            }
        }
        for (l, (&x, &c)) in load.iter().zip(caps).enumerate() {
            if x > c * (1.0 + 1e-9) {
                return Err(fail(format!(
                    "invariant violated at t={}: link {} carries {x} B/s over its capacity {c} B/s",
                    self.now,
                    self.w.fabric.link_name(l as u32)
                )));
            }
        }
        Ok(())
    }

    fn check_end(&mut self) -> Result<(), SimError> {
        self.result.checks += 1;
        for (f, flow) in self.w.flows.iter().enumerate() {
            if (self.sent[f] - flow.size_bytes).abs() > finish_threshold(flow.size_bytes) {
                return Err(fail(format!(
                    "invariant violated: flow {} sent {} of {} bytes",
                    flow.id, self.sent[f], flow.size_bytes
                )));
            }
        }
        for (k, c) in self.w.coflows.iter().enumerate() {
            if (self.coflow_sent[k] - c.size_bytes).abs() > 1e-6 * c.size_bytes.max(1.0) {
                return Err(fail(format!(
                    "invariant violated: coflow {} sent {} of {} bytes",
                    c.id, self.coflow_sent[k], c.size_bytes
                )));
            }
        }
        Ok(())
    }

    /// Converts the decision's wake-ups into absolute times at current rates.
    fn set_timers(&mut self) {
        self.timers.clear();
        if self.decision.wakeups.is_empty() {
            return;
        }
        // Coflow rates from the moving flows (the others are at rate zero).
        let mut coflow_rate: Vec<(u32, f64)> = self
            .moving
            .iter()
            .map(|&f| (self.flow_coflow[f as usize], self.rate[f as usize]))
            .collect();
        coflow_rate.sort_by_key(|x| x.0);
        coflow_rate.dedup_by(|b, a| {
            if a.0 == b.0 {
                a.1 += b.1;
                true
            } else {
                false
            }
        });
        // Group rates, only when a policy asked for a group wake-up.
        let mut group_rate: Vec<f64> = Vec::new();
        if self
            .decision
            .wakeups
            .iter()
            .any(|w| matches!(w, Wakeup::GroupSent { .. }))
        {
            let g = &self.decision.wake_groups;
            let top = g.iter().copied().max().map_or(0, |m| m as usize + 1);
            group_rate = vec![0.0; top];
            for (i, &f) in self.active.iter().enumerate() {
                if let Some(&k) = g.get(i) {
                    group_rate[k as usize] += self.rate[f as usize];
                }
            }
        }
        for w in &self.decision.wakeups {
            let t = match *w {
                Wakeup::GroupSent { group, bytes } => {
                    let r = group_rate.get(group as usize).copied().unwrap_or(0.0);
                    if r <= 0.0 || bytes <= 0.0 {
                        continue;
                    }
                    self.now + bytes / r
                }
                Wakeup::At(t) => t,
                Wakeup::CoflowSent { coflow, bytes } => {
                    let r = coflow_rate
                        .binary_search_by_key(&coflow, |x| x.0)
                        .map(|i| coflow_rate[i].1)
                        .unwrap_or(0.0);
                    let need = bytes - self.coflow_sent[coflow as usize];
                    if r <= 0.0 || need <= 0.0 {
                        continue;
                    }
                    self.now + need / r
                }
                Wakeup::FlowSent { flow, bytes } => {
                    let r = self.rate[flow as usize];
                    let need = bytes - self.sent[flow as usize];
                    if r <= 0.0 || need <= 0.0 {
                        continue;
                    }
                    self.now + need / r
                }
            };
            if t > self.now && t.is_finite() {
                self.timers.push(t);
            }
        }
    }

    fn run(
        mut self,
        policy: &mut AnyPolicy,
        opts: &SimOptions,
        mut progress: Option<Progress>,
    ) -> Result<SimResult, SimError> {
        let policy_name = match policy.info() {
            coflowkit_policy::Info::Clairvoyant => "the clairvoyant policy",
            coflowkit_policy::Info::NonClairvoyant => "the non-clairvoyant policy",
        };
        let total = self.w.coflows.len();
        let report_every = (total / 100).max(1);
        let mut last_report = 0;
        let mut idle_events = 0u32;
        let mut recorder = opts.record.map(|r| Recorder::new(r, &self.w.fabric));
        // Interval mode: the grid t0 + i·Δ, t0 the first event.
        let (mut grid_t0, mut grid_i) = (f64::NAN, 0u64);
        loop {
            let t_start = self.next_start();
            let t_done = self.next_completion();
            let t_timer = self.timers.iter().copied().fold(f64::INFINITY, f64::min);
            let t = t_start.min(t_done).min(t_timer);
            if !t.is_finite() {
                break;
            }
            let t = t.max(self.now);
            if t > opts.horizon_s {
                self.result.complete = false;
                break;
            }
            if let Some(rc) = recorder.as_mut() {
                let dt = rc.rec.interval_s;
                while dt > 0.0 && grid_t0.is_finite() {
                    let ts = grid_t0 + grid_i as f64 * dt;
                    if ts >= t {
                        break;
                    }
                    rc.sample(&self.state(), self.now, (ts - self.now).max(0.0));
                    grid_i += 1;
                }
            }
            self.advance(t);
            self.result.events += 1;
            if opts.max_events > 0 && self.result.events > opts.max_events {
                return Err(fail(format!(
                    "stopped after {} events (max_events)",
                    opts.max_events
                )));
            }
            let completed = self.completions();
            let started = self.starts();
            // A timer event where nothing completes or starts: count runs of them, so
            // a policy that keeps asking for wake-ups cannot loop forever.
            if !completed && !started && t_timer <= t_start.min(t_done) {
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
            if completed || started {
                self.rebuild_groups();
            }
            if self.active.is_empty() {
                self.moving.clear();
                self.next_done = f64::INFINITY;
                self.timers.clear();
            } else {
                self.call_policy(policy);
                if self.check {
                    self.check_rates(policy_name)?;
                }
                self.set_timers();
            }
            if let Some(rc) = recorder.as_mut() {
                if rc.rec.interval_s == 0.0 {
                    rc.sample(&self.state(), self.now, 0.0);
                } else if grid_t0.is_nan() {
                    grid_t0 = self.now;
                }
            }
            if let Some(p) = progress.as_mut() {
                if self.finished_coflows >= last_report + report_every {
                    last_report = self.finished_coflows;
                    p(self.finished_coflows, total);
                }
            }
        }
        if self.finished_coflows < total && self.result.complete {
            let stuck = self.active.first().map(|&f| self.w.flows[f as usize].id);
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
            p(self.finished_coflows, total);
        }
        self.result.series = recorder.map(|r| r.series);
        Ok(self.result)
    }
}

/// Gives flow `f` rate `r`, lists it as moving when `r != 0`, and lowers `t` to its
/// finish time `rem / r` when that is sooner (dividing only then).
#[inline(always)]
fn admit(rate: &mut [f64], moving: &mut Vec<u32>, remaining: &[f64], f: u32, r: f64, t: &mut f64) {
    rate[f as usize] = r;
    if r != 0.0 {
        moving.push(f);
        let rem = remaining[f as usize];
        if r > 0.0 && rem < *t * r {
            *t = rem / r;
        }
    }
}
