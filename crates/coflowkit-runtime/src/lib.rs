//! The policy driver of the real runtime.
//!
//! [`Live`] runs the same registry policy objects as the simulator, but the bytes
//! each flow has sent come from observations (agent reports) instead of integrated
//! rates, and time is the wall clock the caller passes.
//!
//! The caller names flows by *handle* ("slot" in the master): a registered coflow
//! reserves one contiguous handle per declared flow, and handles are never reused.
//! Inside, flows and coflows have compact indices in the engine's layout (a
//! coflow's flows contiguous, active flows sorted). When finished coflows are as
//! many as the others, or their flows as many as the others' flows (and at least
//! [`Live::set_compaction`]'s minimum of each), the next round first drops them,
//! keeping order, so memory follows the flows alive rather than every flow ever
//! seen: it holds at most as many finished flows as live ones, beyond the
//! minimum. The policy renames its own state ([`coflowkit_policy::Remap`]) or,
//! if it keeps none, is built afresh; either way its decisions are those it
//! would have made without the compaction (`compaction_never_changes_a_decision`). The last [`HISTORY`] compacted coflows
//! stay listed by [`Live::coflows`].
//!
//! The information model is kept: a clairvoyant policy only ever sees flows whose
//! size was registered. Flows without a size under a clairvoyant policy are not
//! hidden from the network: they share what the policy left on their links, max-min
//! (lowest priority, work-conserving).

mod compact;
mod cursor;
pub mod enforce;
pub mod hub;
pub mod nlio;
pub mod observe;
pub mod peer;
pub mod sockdiag;
pub mod swarm;
pub mod wire;

use coflowkit_alloc::MaxMin;
use coflowkit_model::{Fabric, ModelError, PathId};
use coflowkit_policy::drive::{class_rates, group_active};
use coflowkit_policy::view::ViewData;
use coflowkit_policy::{registry, AnyPolicy, Decision, Info, NO_PORT};
use std::collections::{BTreeMap, HashMap, VecDeque};

/// How many compacted (finished) coflows [`Live::coflows`] still lists.
pub const HISTORY: usize = 1000;

/// The default minimum of finished flows for a compaction by flows: 65,536 flow
/// records (about 6 MB) held at most beyond as many as are alive.
pub const MIN_COMPACT_FLOWS: usize = 1 << 16;

/// (coflow id, arrival, finish or NaN, width, bytes sent).
pub type CoflowRow = (u64, f64, f64, u32, f64);

/// A flow slot's life: declared (registered, not seen yet), active, finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlotState {
    Declared,
    Active,
    Finished,
}

/// One registered flow: hosts, destination port, optional size (bytes), its
/// stage in a multi-stage coflow and the priority a job gives it (both 0 when
/// not given).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Declared {
    pub src: u32,
    pub dst: u32,
    pub dst_port: u32,
    pub size: Option<f64>,
    pub stage: u32,
    pub priority: u32,
}

/// What a registration may say about a coflow as a whole.
#[derive(Debug, Clone, PartialEq)]
pub struct CoflowInfo {
    /// Its weight (positive; 1 by default): `sincronia` reads it.
    pub weight: f64,
    /// The stage DAG: `(child stage, parent stage)` where a flow of the parent
    /// stage waits for the child's (`stream`); stages named by its flows.
    pub parents: Vec<(u32, u32)>,
    /// A reported demand vector `(link, value)` (the DRF family: `drf`,
    /// `hug`, `coflex`); empty for a truthful coflow. Links of the big switch:
    /// host h's uplink is h, its downlink hosts + h. Scaled to a maximum of 1.
    pub report: Vec<(u32, f64)>,
}

impl Default for CoflowInfo {
    fn default() -> Self {
        CoflowInfo {
            weight: 1.0,
            parents: Vec::new(),
            report: Vec::new(),
        }
    }
}

/// What one round decided for one active flow.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FlowDecision {
    /// The flow's handle.
    pub flow: u64,
    /// Goodput bytes/s (for class policies: the strict-priority max-min rate).
    pub rate: f64,
    /// The policy's class (0 = highest), or `None` for a policy that decides rates.
    pub class: Option<u8>,
    /// Not given to the policy (clairvoyant policy, size unknown): backfilled.
    pub backfill: bool,
}

/// The runtime's policy driver (see the module documentation). Its view data
/// (`coflowkit_policy::view::ViewData`) is the engine's: bytes sent are the
/// agents' observations, held at rate 0 between rounds.
pub struct Live {
    fabric: Fabric,
    policy: AnyPolicy,
    policy_name: String,
    params: BTreeMap<String, String>,
    hosts: u32,
    d: ViewData,
    /// Per slot: a registered size (clairvoyant policies see only those), the
    /// slot's state.
    known: Vec<bool>,
    state: Vec<SlotState>,
    /// Per coflow: flows not finished yet, finish time, arrival known.
    coflow_left: Vec<u32>,
    coflow_finish: Vec<f64>,
    arrived: Vec<bool>,
    by_id: BTreeMap<u64, u32>,
    /// Active flows the policy may not see (clairvoyant policy, no size).
    hidden: Vec<u32>,
    /// Rates of a path-mode policy, by path.
    path_rate: Vec<f64>,
    /// Per slot: the bytes last reported (the view's are capped below a
    /// registered size).
    observed: Vec<f64>,
    decision: Decision,
    mm: MaxMin,
    rounds: u64,
    /// Per flow index: its handle; and back.
    handle: Vec<u64>,
    ext: HashMap<u64, u32>,
    next_handle: u64,
    /// Finished coflows still held, the fewest worth a compaction, and the
    /// compactions so far.
    done: usize,
    min_compact: usize,
    /// Flows of the finished coflows held (not compacted yet), and how many
    /// there must be for a compaction by flows.
    done_flows: usize,
    min_compact_flows: usize,
    compactions: u64,
    history: VecDeque<CoflowRow>,
    /// Bytes sent by the coflows compacted so far.
    compacted_bytes: f64,
}

fn param(name: &str, msg: impl Into<String>) -> ModelError {
    ModelError::param(name, msg)
}

impl Live {
    /// A big switch of `hosts` ports whose links carry `bytes_per_s` (goodput), run
    /// by registry policy `name` with `params`. A policy that needs an input the
    /// runtime does not supply (coflow stages) is refused.
    pub fn new(
        policy: &str,
        params: &BTreeMap<String, String>,
        hosts: u32,
        bytes_per_s: f64,
    ) -> Result<Live, ModelError> {
        let fabric = Fabric::big_switch(hosts, bytes_per_s)?;
        let spec = registry::find(policy)?;
        // Stages and their DAG come with registrations (a coflow registered
        // without them is one stage).
        let d = ViewData {
            supplies: vec![coflowkit_policy::view::Input::Stages],
            ..ViewData::default()
        };
        if let Some(missing) = d.missing(spec.needs) {
            return Err(param(
                "policy",
                format!(
                    "{policy} needs {}, which the runtime does not supply yet",
                    missing.name()
                ),
            ));
        }
        let name = policy.to_string();
        let policy = registry::build(policy, params)?;
        Ok(Live {
            fabric,
            policy,
            policy_name: name,
            params: params.clone(),
            hosts,
            d,
            known: Vec::new(),
            state: Vec::new(),
            coflow_left: Vec::new(),
            coflow_finish: Vec::new(),
            arrived: Vec::new(),
            by_id: BTreeMap::new(),
            hidden: Vec::new(),
            path_rate: Vec::new(),
            observed: Vec::new(),
            decision: Decision::default(),
            mm: MaxMin::new(),
            rounds: 0,
            handle: Vec::new(),
            ext: HashMap::new(),
            next_handle: 0,
            done: 0,
            min_compact: 1024,
            done_flows: 0,
            min_compact_flows: MIN_COMPACT_FLOWS,
            compactions: 0,
            history: VecDeque::new(),
            compacted_bytes: 0.0,
        })
    }

    /// Compact once at least `min_coflows` coflows have finished (and as many
    /// as are still alive; 1,024 by default), or once the flows of the finished
    /// coflows are at least `min_flows` (and as many as the other flows;
    /// [`MIN_COMPACT_FLOWS`] by default). `usize::MAX` for both: never.
    pub fn set_compaction(&mut self, min_coflows: usize, min_flows: usize) {
        self.min_compact = min_coflows.max(1);
        self.min_compact_flows = min_flows.max(1);
    }

    pub fn compactions(&self) -> u64 {
        self.compactions
    }

    pub fn info(&self) -> Info {
        self.policy.info()
    }

    pub fn hosts(&self) -> u32 {
        self.hosts
    }

    /// Flow slots held now (compaction drops those of finished coflows).
    pub fn num_flows(&self) -> usize {
        self.state.len()
    }

    pub fn num_coflows(&self) -> usize {
        self.d.coflow_id.len()
    }

    pub fn rounds(&self) -> u64 {
        self.rounds
    }

    fn check_host(&self, what: &str, h: u32) -> Result<(), ModelError> {
        if h >= self.hosts {
            return Err(param(
                what,
                format!(
                    "host {h} is out of range (the fabric has {} hosts)",
                    self.hosts
                ),
            ));
        }
        Ok(())
    }

    /// Reserves one slot per declared flow for coflow `id` (unique); returns the
    /// first slot's handle (the others follow it). Sizes must be positive when
    /// given.
    pub fn register(&mut self, id: u64, flows: &[Declared], now: f64) -> Result<u64, ModelError> {
        self.register_with(id, flows, &CoflowInfo::default(), now)
    }

    /// [`Live::register`] with what the registration says of the coflow as a
    /// whole (weight, stage DAG, reported demands).
    pub fn register_with(
        &mut self,
        id: u64,
        flows: &[Declared],
        info: &CoflowInfo,
        now: f64,
    ) -> Result<u64, ModelError> {
        if self.by_id.contains_key(&id) {
            return Err(param(
                "coflow",
                format!("coflow {id} is already registered"),
            ));
        }
        if flows.is_empty() {
            return Err(param("flows", format!("coflow {id} declares no flow")));
        }
        for (i, f) in flows.iter().enumerate() {
            self.check_host(&format!("flows[{i}].src"), f.src)?;
            self.check_host(&format!("flows[{i}].dst"), f.dst)?;
            if f.src == f.dst {
                return Err(param(
                    &format!("flows[{i}]"),
                    format!("source and destination are both host {}", f.src),
                ));
            }
            if let Some(s) = f.size {
                if !(s.is_finite() && s > 0.0) {
                    return Err(param(
                        &format!("flows[{i}].size"),
                        format!("a size must be a positive number of bytes, got {s}"),
                    ));
                }
            }
        }
        let report = self.check_info(flows, info)?;
        let first = self.add_coflow(id, flows, now);
        let k = self.d.coflow_id.len() as u32 - 1;
        self.d.weight[k as usize] = info.weight;
        let mut dag: Vec<(u32, u32, u32)> = info.parents.iter().map(|&(c, p)| (k, c, p)).collect();
        dag.sort_unstable();
        dag.dedup();
        self.d.stage_parents.extend(dag);
        if !report.is_empty() || !self.d.reports.is_empty() {
            self.d.reports.resize(k as usize, Vec::new());
            self.d.reports.push(report);
        }
        Ok(first)
    }

    /// Checks a coflow's weight, DAG and report; the report scaled to a
    /// maximum of 1, sorted by link.
    fn check_info(
        &self,
        flows: &[Declared],
        info: &CoflowInfo,
    ) -> Result<Vec<(u32, f64)>, ModelError> {
        if !(info.weight.is_finite() && info.weight > 0.0) {
            return Err(param(
                "weight",
                format!("must be a positive number, got {}", info.weight),
            ));
        }
        for (i, &(c, p)) in info.parents.iter().enumerate() {
            for (what, st) in [("child", c), ("parent", p)] {
                if !flows.iter().any(|f| f.stage == st) {
                    return Err(param(
                        &format!("parents[{i}]"),
                        format!("{what} stage {st} has no flow in this coflow"),
                    ));
                }
            }
            if c == p {
                return Err(param(
                    &format!("parents[{i}]"),
                    format!("stage {c} is its own parent"),
                ));
            }
        }
        let links = 2 * self.hosts;
        let mut report = info.report.clone();
        report.sort_by_key(|e| e.0);
        for (i, w) in report.windows(2).enumerate() {
            if w[0].0 == w[1].0 {
                return Err(param(
                    &format!("report[{}]", i + 1),
                    format!("link {} appears twice", w[0].0),
                ));
            }
        }
        let mut top = 0.0f64;
        for &(l, v) in &report {
            if l >= links {
                return Err(param(
                    "report",
                    format!("link {l} is out of range (the fabric has {links} links)"),
                ));
            }
            if !(v.is_finite() && v >= 0.0) {
                return Err(param(
                    "report",
                    format!("link {l}: a demand must be a number >= 0, got {v}"),
                ));
            }
            top = top.max(v);
        }
        if !report.is_empty() && top <= 0.0 {
            return Err(param("report", "every reported demand is 0"));
        }
        for e in report.iter_mut() {
            e.1 /= top;
        }
        Ok(report)
    }

    fn add_coflow(&mut self, id: u64, flows: &[Declared], now: f64) -> u64 {
        let k = self.d.coflow_id.len() as u32;
        let first = self.state.len() as u32;
        let first_handle = self.next_handle;
        for i in 0..flows.len() {
            self.handle.push(first_handle + i as u64);
            self.ext.insert(first_handle + i as u64, first + i as u32);
        }
        self.next_handle += flows.len() as u64;
        let mut per_port: BTreeMap<u32, f64> = BTreeMap::new();
        let mut total = 0.0;
        for (i, f) in flows.iter().enumerate() {
            let path = self
                .fabric
                .route(f.src, f.dst, 0)
                .expect("hosts were checked against the fabric");
            let d = &mut self.d;
            d.flow_coflow.push(k);
            d.flow_index.push(i as u32);
            d.flow_path.push(path);
            d.flow_src.push(f.src);
            d.flow_dst.push(f.dst);
            d.flow_src_port.push(NO_PORT);
            d.flow_dst_port.push(f.dst_port);
            d.flow_stage.push(f.stage);
            d.flow_priority.push(f.priority);
            d.flow_seen_s.push(f64::NAN);
            let s = f.size.unwrap_or(0.0);
            d.size.push(s);
            d.base.push(0.0);
            d.rate.push(0.0);
            d.since.push(now);
            self.known.push(f.size.is_some());
            self.state.push(SlotState::Declared);
            self.observed.push(0.0);
            *per_port.entry(f.src).or_default() += s;
            *per_port.entry(self.hosts + f.dst).or_default() += s;
            total += s;
        }
        let d = &mut self.d;
        d.coflow_id.push(id);
        d.arrival.push(now);
        d.weight.push(1.0);
        d.width.push(flows.len() as u32);
        d.first_flow.push(first);
        d.length
            .push(per_port.values().cloned().fold(0.0, f64::max));
        d.csize.push(total);
        d.coflow_base.push(0.0);
        d.coflow_rate.push(0.0);
        d.coflow_since.push(now);
        d.coflow_started.push(0);
        self.coflow_left.push(flows.len() as u32);
        self.coflow_finish.push(f64::NAN);
        self.arrived.push(false);
        self.by_id.insert(id, k);
        self.grow_paths();
        first_handle
    }

    fn grow_paths(&mut self) {
        let np = self.fabric.num_paths();
        if self.d.path_count.len() < np {
            self.d.path_count.resize(np, 0);
            self.path_rate.resize(np, 0.0);
        }
    }

    /// Restores the arrival of registered coflow `id` (a restarted master
    /// reloading its registrations): its flows starting later keep it.
    pub fn set_arrival(&mut self, id: u64, arrival: f64) -> Result<(), ModelError> {
        let k = *self
            .by_id
            .get(&id)
            .ok_or_else(|| param("coflow", format!("coflow {id} is not registered")))?
            as usize;
        if !arrival.is_finite() {
            return Err(param(
                "arrival",
                format!("coflow {id}: bad arrival {arrival}"),
            ));
        }
        self.d.arrival[k] = arrival;
        self.arrived[k] = true;
        Ok(())
    }

    /// The slot of registered coflow `id`, if any.
    pub fn coflow_index(&self, id: u64) -> Option<u32> {
        self.by_id.get(&id).copied()
    }

    /// A flow that belongs to no registered coflow: a coflow of its own (id
    /// `id`), started now. Returns its slot.
    pub fn add_single(
        &mut self,
        id: u64,
        src: u32,
        dst: u32,
        src_port: u32,
        dst_port: u32,
        now: f64,
    ) -> Result<u64, ModelError> {
        let d = Declared {
            src,
            dst,
            dst_port,
            ..Declared::default()
        };
        let f = self.register(id, &[d], now)?;
        self.start(f, src_port, now)?;
        Ok(f)
    }

    /// The index of handle `h`, if it is held.
    fn index(&self, h: u64) -> Option<usize> {
        self.ext.get(&h).map(|&i| i as usize)
    }

    fn check_slot(&self, h: u64) -> Result<usize, ModelError> {
        self.index(h).ok_or_else(|| {
            let why = if h < self.next_handle {
                "its coflow finished and was compacted"
            } else {
                "never given out"
            };
            param("flow", format!("no flow slot {h} ({why})"))
        })
    }

    fn visible(&self, i: usize) -> bool {
        self.info() == Info::NonClairvoyant || self.known[i]
    }

    /// A declared flow was seen on the network (its source port now known).
    pub fn start(&mut self, h: u64, src_port: u32, now: f64) -> Result<(), ModelError> {
        let i = self.check_slot(h)?;
        let f = i as u32;
        if self.state[i] != SlotState::Declared {
            return Err(param("flow", format!("flow slot {h} already started")));
        }
        self.state[i] = SlotState::Active;
        self.d.flow_seen_s[i] = now;
        self.d.flow_src_port[i] = src_port;
        let k = self.d.flow_coflow[i] as usize;
        if !self.arrived[k] {
            // A coflow's arrival is when its first flow shows up, not when it was
            // registered (a job may register its shuffle long before it runs).
            self.d.arrival[k] = now;
            self.arrived[k] = true;
        }
        self.d.coflow_started[k] += 1;
        let p = self.d.flow_path[i] as usize;
        self.d.path_count[p] += 1;
        self.d.changed_paths.push(p as PathId);
        if self.d.path_count[p] == 1 {
            self.d.active_paths.push(self.d.flow_path[i]);
        }
        let list = if self.visible(i) {
            &mut self.d.active
        } else {
            &mut self.hidden
        };
        let pos = list.partition_point(|&g| g < f);
        list.insert(pos, f);
        Ok(())
    }

    /// Bytes flow `f` has sent so far (acknowledged bytes; never decreases).
    pub fn set_sent(&mut self, h: u64, bytes: f64) -> Result<(), ModelError> {
        let i = self.check_slot(h)?;
        if !bytes.is_finite() || bytes < 0.0 {
            return Err(param(
                "bytes",
                format!("flow slot {h}: bad byte count {bytes}"),
            ));
        }
        let grown = bytes - self.observed[i];
        if grown <= 0.0 {
            return Ok(());
        }
        // A registered size can be a little short: the view never shows a flow
        // done while it is active (remaining at least 1 byte).
        self.d.base[i] = if self.known[i] {
            bytes.min(self.d.size[i] - 1.0).max(self.d.base[i])
        } else {
            bytes
        };
        self.observed[i] = bytes;
        self.d.coflow_base[self.d.flow_coflow[i] as usize] += grown;
        Ok(())
    }

    /// Flow `f` is done; returns the coflow's completion time if this was its
    /// last flow.
    pub fn finish(&mut self, h: u64, now: f64) -> Result<Option<f64>, ModelError> {
        let i = self.check_slot(h)?;
        let f = i as u32;
        if self.state[i] != SlotState::Active {
            return Err(param("flow", format!("flow slot {h} is not active")));
        }
        self.state[i] = SlotState::Finished;
        for list in [&mut self.d.active, &mut self.hidden] {
            if let Ok(pos) = list.binary_search(&f) {
                list.remove(pos);
            }
        }
        let p = self.d.flow_path[i];
        self.d.path_count[p as usize] -= 1;
        self.d.changed_paths.push(p);
        if self.d.path_count[p as usize] == 0 {
            if let Some(pos) = self.d.active_paths.iter().position(|&q| q == p) {
                self.d.active_paths.swap_remove(pos);
            }
        }
        let k = self.d.flow_coflow[i] as usize;
        self.coflow_left[k] -= 1;
        if self.coflow_left[k] == 0 {
            self.coflow_finish[k] = now;
            self.done += 1;
            self.done_flows += self.d.width[k] as usize;
            return Ok(Some(now - self.d.arrival[k]));
        }
        Ok(None)
    }

    /// A held slot's state (`None` once its coflow was compacted).
    pub fn slot_state(&self, h: u64) -> Option<SlotState> {
        self.index(h).map(|i| self.state[i])
    }

    pub fn slot_coflow_id(&self, h: u64) -> Option<u64> {
        self.index(h)
            .map(|i| self.d.coflow_id[self.d.flow_coflow[i] as usize])
    }

    /// Bytes slot `h` has sent, as last reported (`None` once compacted).
    pub fn sent(&self, h: u64) -> Option<f64> {
        self.index(h).map(|i| self.observed[i])
    }

    fn row(&self, k: usize) -> CoflowRow {
        (
            self.d.coflow_id[k],
            self.d.arrival[k],
            self.coflow_finish[k],
            self.d.width[k],
            self.d.coflow_base[k],
        )
    }

    /// Every coflow held (registered, active or finished but not compacted
    /// yet), then the last [`HISTORY`] compacted ones, oldest first.
    pub fn coflows(&self) -> impl Iterator<Item = CoflowRow> + '_ {
        self.history.iter().copied().chain(self.held_coflows())
    }

    /// The coflows held (registered, active or finished but not compacted yet):
    /// [`Live::coflows`] without the compacted ones, which change only when
    /// [`Live::compactions`] does.
    pub fn held_coflows(&self) -> impl Iterator<Item = CoflowRow> + '_ {
        (0..self.d.coflow_id.len()).map(|k| self.row(k))
    }

    /// The last [`HISTORY`] compacted coflows, oldest first.
    pub fn compacted_coflows(&self) -> impl Iterator<Item = CoflowRow> + '_ {
        self.history.iter().copied()
    }

    /// Bytes sent by every flow ever held, compacted ones included.
    pub fn total_sent(&self) -> f64 {
        self.compacted_bytes + self.d.coflow_base.iter().sum::<f64>()
    }

    /// The label the policy gave flow slot `h`, for a policy that identifies
    /// coflows itself (`coda`): `None` for any other policy, `Some(u32::MAX)`
    /// for a slot it has not seen yet (or one compacted).
    pub fn label_of(&self, h: u64) -> Option<u32> {
        match self.index(h) {
            Some(i) => self.policy.flow_label(i as u32),
            None => self.policy.flow_label(u32::MAX).map(|_| u32::MAX),
        }
    }

    /// One round: the policy's decision for every active flow at time `now`.
    pub fn decide(&mut self, now: f64) -> Vec<FlowDecision> {
        self.compact_if_due();
        self.rounds += 1;
        let d = &mut self.d;
        group_active(
            &d.active,
            &d.flow_coflow,
            &d.first_flow,
            &d.width,
            &mut d.groups,
        );
        d.path_mode = false; // bytes are observed: every flow is held at rate 0
        self.decision.reset(d.active.len());
        match &mut self.policy {
            AnyPolicy::Clairvoyant(p) => {
                p.decide(&d.clairvoyant(&self.fabric, now), &mut self.decision)
            }
            AnyPolicy::NonClairvoyant(p) => {
                p.decide(&d.non_clairvoyant(&self.fabric, now), &mut self.decision)
            }
        }
        d.changed_paths.clear();
        let mut residual = self.fabric.capacities.clone();
        let mut rates = self.policy_rates(&mut residual);
        let classes = !self.decision.classes.is_empty();
        let mut out: Vec<FlowDecision> = self
            .d
            .active
            .iter()
            .enumerate()
            .map(|(i, &f)| FlowDecision {
                flow: self.handle[f as usize],
                rate: std::mem::take(&mut rates[i]),
                class: classes.then(|| self.decision.classes[i]),
                backfill: false,
            })
            .collect();
        self.backfill_hidden(&mut residual, classes, &mut out);
        out
    }

    /// The policy's rate for every visible active flow, taken from `residual`.
    fn policy_rates(&mut self, residual: &mut [f64]) -> Vec<f64> {
        let d = &self.d;
        let mut rates = vec![0.0; d.active.len()];
        if !self.decision.classes.is_empty() {
            // Strict priority across classes, max-min within one (as the engine).
            let paths: Vec<PathId> = d.active.iter().map(|&f| d.flow_path[f as usize]).collect();
            class_rates(
                &mut self.mm,
                &self.fabric,
                residual,
                &paths,
                &self.decision.classes,
                &mut rates,
            );
            return rates;
        }
        for &(p, r) in &self.decision.path_rates {
            self.path_rate[p as usize] = r;
        }
        let path_mode = self.policy.path_mode();
        for (i, &f) in d.active.iter().enumerate() {
            let p = d.flow_path[f as usize];
            let r = if path_mode {
                self.path_rate[p as usize]
            } else {
                self.decision.rates[i]
            }
            .max(0.0);
            rates[i] = r;
            for &l in self.fabric.path(p) {
                residual[l as usize] = (residual[l as usize] - r).max(0.0);
            }
        }
        rates
    }

    /// Flows hidden from a clairvoyant policy share what it left, max-min.
    fn backfill_hidden(
        &mut self,
        residual: &mut [f64],
        classes: bool,
        out: &mut Vec<FlowDecision>,
    ) {
        if self.hidden.is_empty() {
            return;
        }
        let paths: Vec<PathId> = self
            .hidden
            .iter()
            .map(|&f| self.d.flow_path[f as usize])
            .collect();
        let mut r = vec![0.0; paths.len()];
        self.mm
            .priority(&self.fabric, residual, &paths, &[paths.len()], &mut r);
        let handle = &self.handle;
        out.extend(self.hidden.iter().zip(r).map(|(&f, rate)| FlowDecision {
            flow: handle[f as usize],
            rate,
            class: classes.then_some(u8::MAX),
            backfill: true,
        }));
    }
}

#[cfg(test)]
#[path = "live_tests.rs"]
mod tests;
