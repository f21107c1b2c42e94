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
//! many as the others (and at least [`Live::set_compaction`]'s minimum), the
//! next round first drops them, keeping order, so memory follows the flows alive
//! rather than every flow ever seen. The policy renames its own state
//! ([`coflowkit_policy::Remap`]) or, if it keeps none, is built afresh; either
//! way its decisions are those it would have made without the compaction
//! (`compaction_never_changes_a_decision`). The last [`HISTORY`] compacted coflows
//! stay listed by [`Live::coflows`].
//!
//! The information model is kept: a clairvoyant policy only ever sees flows whose
//! size was registered. Flows without a size under a clairvoyant policy are not
//! hidden from the network: they share what the policy left on their links, max-min
//! (lowest priority, work-conserving).

pub mod enforce;
pub mod hub;
pub mod nlio;
pub mod observe;
pub mod sockdiag;
pub mod swarm;
pub mod wire;

use coflowkit_alloc::MaxMin;
use coflowkit_model::{Fabric, ModelError, PathId};
use coflowkit_policy::drive::{class_rates, group_active};
use coflowkit_policy::view::ViewData;
use coflowkit_policy::{registry, AnyPolicy, Decision, Info, Remap, NO_PORT};
use std::collections::{BTreeMap, HashMap, VecDeque};

/// How many compacted (finished) coflows [`Live::coflows`] still lists.
pub const HISTORY: usize = 1000;

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
            compactions: 0,
            history: VecDeque::new(),
            compacted_bytes: 0.0,
        })
    }

    /// Compact once at least `min_finished` coflows have finished (and as many
    /// as are still alive); 1,024 by default.
    pub fn set_compaction(&mut self, min_finished: usize) {
        self.min_compact = min_finished.max(1);
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
        self.history
            .iter()
            .copied()
            .chain((0..self.d.coflow_id.len()).map(|k| self.row(k)))
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

    /// Drops the finished coflows now if they are due (see the module
    /// documentation); true if it did.
    pub fn compact_if_due(&mut self) -> bool {
        let alive = self.d.coflow_id.len() - self.done;
        if self.done < self.min_compact.max(alive) || !self.policy.compactable() {
            return false;
        }
        self.compact();
        true
    }

    /// Drops every finished coflow and its flows, keeping order.
    pub fn compact(&mut self) {
        let nc = self.d.coflow_id.len();
        let mut m = Remap {
            flows: vec![Remap::DROPPED; self.state.len()],
            coflows: vec![Remap::DROPPED; nc],
            paths: Vec::new(),
        };
        let mut kept = 0u32;
        for k in 0..nc {
            if self.coflow_left[k] > 0 {
                m.coflows[k] = kept;
                kept += 1;
            } else {
                self.compacted_bytes += self.d.coflow_base[k];
                if self.history.len() == HISTORY {
                    self.history.pop_front();
                }
                self.history.push_back(self.row(k));
            }
        }
        let mut kept = 0u32;
        for (i, &k) in self.d.flow_coflow.iter().enumerate() {
            if m.coflows[k as usize] != Remap::DROPPED {
                m.flows[i] = kept;
                kept += 1;
            }
        }
        self.apply(&m);
        m.paths = self.compact_paths();
        self.done = 0;
        self.compactions += 1;
        if !self.policy.remap(&m) {
            self.policy = registry::build(&self.policy_name, &self.params)
                .expect("the policy was built with these parameters before");
            // A fresh policy has no per-path state: every path is news to it.
            self.d.changed_paths = self.d.active_paths.clone();
        }
    }

    /// A fresh fabric with only the paths of the flows held, numbered in the
    /// order of their old ids (a big switch interns a path per host pair ever
    /// used: 10,000 hosts have 10^8 of them); returns old path -> new.
    fn compact_paths(&mut self) -> Vec<u32> {
        let old = self.fabric.num_paths();
        let mut ends: Vec<Option<(u32, u32)>> = vec![None; old];
        for (i, &p) in self.d.flow_path.iter().enumerate() {
            ends[p as usize] = Some((self.d.flow_src[i], self.d.flow_dst[i]));
        }
        let mut fabric = self.fabric.cleared();
        let map: Vec<u32> = ends
            .iter()
            .map(|e| match *e {
                Some((s, d)) => fabric
                    .route(s, d, 0)
                    .expect("these hosts were routed on this fabric before"),
                None => Remap::DROPPED,
            })
            .collect();
        self.fabric = fabric;
        let d = &mut self.d;
        for p in d.flow_path.iter_mut() {
            *p = map[*p as usize];
        }
        for list in [&mut d.active_paths, &mut d.changed_paths] {
            list.retain_mut(|p| match Remap::get(&map, *p) {
                Some(q) => {
                    *p = q;
                    true
                }
                None => false,
            });
        }
        for v in [
            &mut d.path_base,
            &mut d.path_rate,
            &mut d.path_since,
            &mut self.path_rate,
        ] {
            Remap::compact(&map, v);
        }
        Remap::compact(&map, &mut d.path_count);
        let np = self.fabric.num_paths();
        d.path_count.resize(np, 0);
        self.path_rate.resize(np, 0.0);
        map
    }

    fn apply(&mut self, m: &Remap) {
        let (fm, cm) = (&m.flows[..], &m.coflows[..]);
        let d = &mut self.d;
        macro_rules! per_flow {
            ($($v:expr),*) => { $( Remap::compact(fm, &mut $v); )* };
        }
        macro_rules! per_coflow {
            ($($v:expr),*) => { $( Remap::compact(cm, &mut $v); )* };
        }
        per_flow!(
            d.flow_coflow,
            d.flow_index,
            d.flow_path,
            d.flow_src,
            d.flow_dst,
            d.flow_src_port,
            d.flow_dst_port,
            d.flow_stage,
            d.flow_priority,
            d.size,
            d.base,
            d.rate,
            d.since,
            self.known,
            self.state,
            self.observed,
            self.handle
        );
        per_coflow!(
            d.coflow_id,
            d.arrival,
            d.weight,
            d.width,
            d.first_flow,
            d.length,
            d.csize,
            d.coflow_base,
            d.coflow_rate,
            d.coflow_since,
            d.coflow_started,
            d.reports,
            self.coflow_left,
            self.coflow_finish,
            self.arrived
        );
        for k in d.flow_coflow.iter_mut() {
            *k = cm[*k as usize];
        }
        for f in d.first_flow.iter_mut() {
            *f = fm[*f as usize];
        }
        d.stage_parents
            .retain(|p| cm.get(p.0 as usize).is_some_and(|&k| k != Remap::DROPPED));
        for p in d.stage_parents.iter_mut() {
            p.0 = cm[p.0 as usize];
        }
        for list in [
            &mut d.active,
            &mut self.hidden,
            &mut d.started,
            &mut d.finished,
        ] {
            list.retain_mut(|f| match Remap::get(fm, *f) {
                Some(g) => {
                    *f = g;
                    true
                }
                None => false,
            });
        }
        d.groups.clear();
        self.by_id = d
            .coflow_id
            .iter()
            .enumerate()
            .map(|(k, &id)| (id, k as u32))
            .collect();
        self.ext = self
            .handle
            .iter()
            .enumerate()
            .map(|(i, &h)| (h, i as u32))
            .collect();
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
mod tests {
    use super::*;

    const MB: f64 = 1e6;

    fn live(policy: &str, hosts: u32) -> Live {
        Live::new(policy, &BTreeMap::new(), hosts, 100.0 * MB).unwrap()
    }

    fn decl(src: u32, dst: u32, port: u32, size: Option<f64>) -> Declared {
        Declared {
            src,
            dst,
            dst_port: port,
            size,
            ..Declared::default()
        }
    }

    fn rate_of(d: &[FlowDecision], f: u64) -> f64 {
        d.iter().find(|x| x.flow == f).unwrap().rate
    }

    #[test]
    fn fair_shares_a_sender_uplink_equally() {
        // Two flows out of host 0 to hosts 1 and 2: each gets half of 100 MB/s.
        let mut l = live("fair", 3);
        let a = l.add_single(1, 0, 1, 40000, 5000, 0.0).unwrap();
        let b = l.add_single(2, 0, 2, 40001, 5001, 0.0).unwrap();
        let d = l.decide(0.1);
        assert_eq!(d.len(), 2);
        assert!((rate_of(&d, a) - 50.0 * MB).abs() < 1.0);
        assert!((rate_of(&d, b) - 50.0 * MB).abs() < 1.0);
        // One finishes: the other gets the whole link.
        assert_eq!(l.finish(a, 0.2).unwrap(), Some(0.2));
        let d = l.decide(0.2);
        assert_eq!(d.len(), 1);
        assert!((rate_of(&d, b) - 100.0 * MB).abs() < 1.0);
    }

    #[test]
    fn coda_identifies_flows_added_one_slot_at_a_time() {
        // Nothing registered: each flow is a slot (and a coflow) of its own, added
        // as the master sees it. Two bursts 5 s apart, three senders each, one
        // receiver per burst: CODA's identifier groups each burst.
        let params: BTreeMap<String, String> = [("labels", "identify"), ("interval_s", "0.1")]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let mut l = Live::new("coda", &params, 6, 100.0 * MB).unwrap();
        assert_eq!(l.label_of(0), Some(u32::MAX)); // a labelling policy, nothing seen
        let mut id = 100;
        let mut burst = |l: &mut Live, t: f64, dst: u32, port: u32| -> Vec<u64> {
            let slots: Vec<u64> = (0..3)
                .map(|i| {
                    id += 1;
                    let f = l.add_single(id, i, dst, 40000 + i, port + i, t).unwrap();
                    l.decide(t); // a round per new flow, as the master may run
                    f
                })
                .collect();
            l.decide(t + 0.2); // the identification round is due
            slots
        };
        let a = burst(&mut l, 0.0, 3, 7000);
        let la: Vec<u32> = a.iter().map(|&f| l.label_of(f).unwrap()).collect();
        assert!(
            la[0] != u32::MAX && la.iter().all(|&x| x == la[0]),
            "{la:?}"
        );
        let b = burst(&mut l, 5.0, 4, 8000);
        let lb: Vec<u32> = b.iter().map(|&f| l.label_of(f).unwrap()).collect();
        assert!(
            lb[0] != u32::MAX && lb.iter().all(|&x| x == lb[0]),
            "{lb:?}"
        );
        assert_ne!(la[0], lb[0]);
        // The first burst's labels are kept (the policy did not start afresh
        // when slots were added).
        assert_eq!(
            a.iter()
                .map(|&f| l.label_of(f).unwrap())
                .collect::<Vec<_>>(),
            la
        );
        assert_eq!(live("fair", 2).label_of(0), None);
    }

    #[test]
    fn registered_slots_are_contiguous_and_the_coflow_ends_with_its_last_flow() {
        let mut l = live("fair", 4);
        let flows = [decl(0, 3, 7000, None), decl(1, 3, 7001, None)];
        let first = l.register(42, &flows, 0.0).unwrap();
        assert_eq!(first, 0);
        assert_eq!(l.slot_state(1), Some(SlotState::Declared));
        // Nothing active yet: no decision.
        assert!(l.decide(0.5).is_empty());
        l.start(0, 50000, 1.0).unwrap();
        l.start(1, 50001, 1.5).unwrap();
        // Both into host 3's downlink: half each.
        let d = l.decide(1.5);
        assert!((rate_of(&d, 0) - 50.0 * MB).abs() < 1.0);
        assert_eq!(l.finish(0, 2.0).unwrap(), None);
        // Arrival is the first flow's start (1.0), not the registration (0.0).
        assert_eq!(l.finish(1, 3.0).unwrap(), Some(2.0));
        assert_eq!(l.slot_coflow_id(1), Some(42));
        assert!(l.register(42, &flows, 4.0).is_err());
    }

    #[test]
    fn varys_sees_registered_sizes_and_backfills_flows_without_one() {
        // Varys (clairvoyant): coflow 1 (10 MB) and coflow 2 (40 MB) both leave
        // host 0. Smallest bottleneck first: coflow 1 takes the whole uplink. A
        // third flow without a size, host 1 -> host 2, is hidden from Varys and
        // backfills its own idle links at full rate.
        let mut l = live("varys", 3);
        let a = l
            .register(1, &[decl(0, 1, 9000, Some(10.0 * MB))], 0.0)
            .unwrap();
        let b = l
            .register(2, &[decl(0, 2, 9001, Some(40.0 * MB))], 0.0)
            .unwrap();
        l.start(a, 1, 0.0).unwrap();
        l.start(b, 2, 0.0).unwrap();
        let c = l.add_single(3, 1, 2, 3, 9002, 0.0).unwrap();
        let d = l.decide(0.0);
        assert!((rate_of(&d, a) - 100.0 * MB).abs() < 1.0, "{d:?}");
        assert!(rate_of(&d, b) < 1.0, "{d:?}");
        // c shares host 2's downlink with b (which got nothing): the whole link.
        let dc = d.iter().find(|x| x.flow == c).unwrap();
        assert!(dc.backfill);
        assert!((dc.rate - 100.0 * MB).abs() < 1.0, "{d:?}");
        // Observed progress moves remaining bytes: after 9 MB of a, a still first.
        l.set_sent(a, 9.0 * MB).unwrap();
        assert_eq!(l.sent(a), Some(9.0 * MB));
        let d = l.decide(0.09);
        assert!((rate_of(&d, a) - 100.0 * MB).abs() < 1.0);
    }

    #[test]
    fn aalo_serves_the_newcomer_first() {
        // Aalo: a coflow that has sent 50 MB is in a lower queue than a newcomer
        // sharing the uplink, which takes everything.
        let mut l = live("aalo", 3);
        let a = l.add_single(1, 0, 1, 1, 1, 0.0).unwrap();
        l.set_sent(a, 50.0 * MB).unwrap();
        let b = l.add_single(2, 0, 2, 2, 2, 1.0).unwrap();
        let d = l.decide(1.0);
        assert!((rate_of(&d, b) - 100.0 * MB).abs() < 1.0, "{d:?}");
        assert!(rate_of(&d, a) < 1.0, "{d:?}");
    }

    #[test]
    fn class_policies_get_strict_priority_rates() {
        // spq decides classes (the workload's priority, 0 here for every flow):
        // the driver shares one class max-min, half of the uplink each.
        let mut l = live("spq", 3);
        let a = l.add_single(1, 0, 1, 1, 1, 0.0).unwrap();
        let b = l.add_single(2, 0, 2, 2, 2, 1.0).unwrap();
        let d = l.decide(1.0);
        for f in [a, b] {
            let x = d.iter().find(|x| x.flow == f).unwrap();
            assert_eq!(x.class, Some(0), "{d:?}");
            assert!((x.rate - 50.0 * MB).abs() < 1.0, "{d:?}");
        }
    }

    #[test]
    fn a_restored_arrival_is_kept_when_the_first_flow_starts() {
        // A restarted master registers coflow 5 again and restores its arrival
        // (-3 s: before this process started); its flow's start keeps it.
        let mut l = live("fair", 2);
        let f = l.register(5, &[decl(0, 1, 80, None)], 0.0).unwrap();
        l.set_arrival(5, -3.0).unwrap();
        l.start(f, 1234, 1.0).unwrap();
        assert_eq!(l.finish(f, 2.0).unwrap(), Some(5.0));
        assert!(l.set_arrival(6, 0.0).is_err());
        assert!(l.set_arrival(5, f64::NAN).is_err());
    }

    #[test]
    fn registrations_give_policies_stages_priorities_parents_weights_and_reports() {
        // Coflow 9: stage 1 (hosts 0, 1 -> 2) feeds stage 2 (host 2 -> 3);
        // priorities 2, 0 and 1; weight 3; a report of demands 2 and 4 on host
        // 0's uplink and host 3's downlink (scaled to 0.5 and 1).
        let mut l = live("spq", 4);
        let mut flows = [
            decl(0, 2, 80, None),
            decl(1, 2, 80, None),
            decl(2, 3, 81, None),
        ];
        for (f, (stage, prio)) in flows.iter_mut().zip([(1, 2), (1, 0), (2, 1)]) {
            f.stage = stage;
            f.priority = prio;
        }
        let info = CoflowInfo {
            weight: 3.0,
            parents: vec![(1, 2)],
            report: vec![(7, 4.0), (0, 2.0)],
        };
        let single = l.add_single(1, 3, 0, 5, 6, 0.0).unwrap();
        let first = l.register_with(9, &flows, &info, 0.0).unwrap();
        assert_eq!(l.d.flow_stage, [0, 1, 1, 2]);
        assert_eq!(l.d.flow_priority, [0, 2, 0, 1]);
        assert_eq!(l.d.stage_parents, [(1, 1, 2)]);
        assert_eq!(l.d.weight, [1.0, 3.0]);
        assert_eq!(l.d.reports, [vec![], vec![(0, 0.5), (7, 1.0)]]);
        // spq's classes are the registered priorities.
        for i in 0..3 {
            l.start(first + i, 40000 + i as u32, 0.1).unwrap();
        }
        let d = l.decide(0.2);
        let class = |h: u64| d.iter().find(|x| x.flow == h).unwrap().class;
        assert_eq!(
            [single, first, first + 1, first + 2].map(class),
            [Some(0), Some(2), Some(0), Some(1)]
        );
        // stream (it needs the stages) runs; a bad DAG or report is named.
        assert!(Live::new("stream", &BTreeMap::new(), 3, 1.0).is_ok());
        let bad = |info: CoflowInfo, want: &str| {
            let e = live("fair", 4)
                .register_with(1, &flows, &info, 0.0)
                .unwrap_err();
            assert!(e.to_string().contains(want), "{e}");
        };
        let with = |parents: Vec<(u32, u32)>, report: Vec<(u32, f64)>| CoflowInfo {
            parents,
            report,
            ..CoflowInfo::default()
        };
        bad(with(vec![(1, 5)], vec![]), "parent stage 5 has no flow");
        bad(with(vec![(2, 2)], vec![]), "stage 2 is its own parent");
        bad(with(vec![], vec![(8, 1.0)]), "link 8 is out of range");
        bad(
            with(vec![], vec![(1, 1.0), (1, 2.0)]),
            "link 1 appears twice",
        );
        bad(with(vec![], vec![(1, 0.0)]), "every reported demand is 0");
        bad(
            with(vec![], vec![(1, f64::NAN)]),
            "a demand must be a number",
        );
        let heavy = CoflowInfo {
            weight: 0.0,
            ..CoflowInfo::default()
        };
        bad(heavy, "weight");
    }

    #[test]
    fn fair_in_path_mode_gives_every_flow_of_a_path_its_rate() {
        // Two flows 0→1 and one 0→2 on a 90 B/s uplink: 30 each.
        let mut l = live("fair", 3);
        let a = l.add_single(1, 0, 1, 1, 80, 0.0).unwrap();
        let b = l.add_single(2, 0, 1, 2, 80, 0.0).unwrap();
        let c = l.add_single(3, 0, 2, 3, 80, 0.0).unwrap();
        let mut l = l;
        l.fabric.capacities.iter_mut().for_each(|x| *x = 90.0);
        let d = l.decide(0.0);
        for f in [a, b, c] {
            assert!((rate_of(&d, f) - 30.0).abs() < 1e-9, "{d:?}");
        }
    }

    #[test]
    fn bad_input_is_named() {
        let mut l = live("fair", 2);
        let e = l.register(1, &[decl(0, 5, 1, None)], 0.0).unwrap_err();
        assert!(e.to_string().contains("host 5 is out of range"), "{e}");
        let e = l.register(1, &[decl(1, 1, 1, None)], 0.0).unwrap_err();
        assert!(e.to_string().contains("both host 1"), "{e}");
        let e = l
            .register(1, &[decl(0, 1, 1, Some(-3.0))], 0.0)
            .unwrap_err();
        assert!(e.to_string().contains("positive"), "{e}");
        assert!(l.finish(9, 0.0).is_err());
        assert!(Live::new("nope", &BTreeMap::new(), 2, 1.0).is_err());
    }

    /// A small deterministic generator (xorshift64*), so the test needs no crate.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    fn both(a: &mut Live, b: &mut Live, f: &mut dyn FnMut(&mut Live)) {
        f(a);
        f(b);
    }

    /// Drives `a` (compacting whenever finished coflows are at least as many as
    /// the others) and `b` (never compacting) through the same random workload:
    /// registrations declared ahead, flows of their own, byte reports, flow ends
    /// and rounds. Returns the number of rounds whose decisions differ.
    fn differing_rounds(a: &mut Live, b: &mut Live, seed: u64) -> usize {
        let mut rng = Rng(seed);
        let hosts = a.hosts();
        let (mut declared, mut active): (Vec<u64>, Vec<u64>) = (Vec::new(), Vec::new());
        let mut sent: BTreeMap<u64, f64> = BTreeMap::new();
        let (mut next_id, mut differ) = (seed << 32, 0usize);
        for step in 0..600 {
            let now = step as f64 * 0.01;
            match rng.below(14) {
                0 if declared.len() < 8 => {
                    let n = 1 + rng.below(4) as u32;
                    let flows: Vec<Declared> = (0..n)
                        .map(|_| {
                            let src = rng.below(hosts as u64) as u32;
                            let dst = (src + 1 + rng.below(hosts as u64 - 1) as u32) % hosts;
                            let size = (rng.below(3) > 0).then(|| 1e5 * (1 + rng.below(50)) as f64);
                            let mut f = decl(src, dst, 7000 + rng.below(3) as u32, size);
                            f.stage = rng.below(3) as u32; // 0: single-stage
                            f.priority = rng.below(3) as u32;
                            f
                        })
                        .collect();
                    let has = |st: u32| flows.iter().any(|f| f.stage == st);
                    let info = CoflowInfo {
                        weight: 1.0 + rng.below(3) as f64,
                        parents: if has(1) && has(2) {
                            vec![(1, 2)]
                        } else {
                            vec![]
                        },
                        report: if rng.below(4) == 0 {
                            vec![(flows[0].src, 1.0), (hosts + flows[0].dst, 0.5)]
                        } else {
                            vec![]
                        },
                    };
                    let id = next_id;
                    next_id += 1;
                    let mut first = 0;
                    both(a, b, &mut |l| {
                        first = l.register_with(id, &flows, &info, now).unwrap()
                    });
                    declared.extend((0..n as u64).map(|i| first + i));
                }
                1 if active.len() < 12 => {
                    let src = rng.below(hosts as u64) as u32;
                    let dst = (src + 1) % hosts;
                    let id = (1 << 31) + next_id;
                    next_id += 1;
                    let mut h = 0;
                    both(a, b, &mut |l| {
                        h = l.add_single(id, src, dst, 1, 2, now).unwrap()
                    });
                    active.push(h);
                }
                2..=4 if !declared.is_empty() => {
                    let h = declared.swap_remove(rng.below(declared.len() as u64) as usize);
                    both(a, b, &mut |l| l.start(h, 40000, now).unwrap());
                    active.push(h);
                }
                5 | 6 if !active.is_empty() => {
                    for _ in 0..3 {
                        let h = active[rng.below(active.len() as u64) as usize];
                        let x = sent.entry(h).or_insert(0.0);
                        *x += 1e4 * (rng.below(200) * (1 + rng.below(2) * 999)) as f64;
                        let bytes = *x;
                        both(a, b, &mut |l| l.set_sent(h, bytes).unwrap());
                    }
                }
                7..=9 if !active.is_empty() => {
                    let h = active.swap_remove(rng.below(active.len() as u64) as usize);
                    let (ra, rb) = (a.finish(h, now).unwrap(), b.finish(h, now).unwrap());
                    assert_eq!(ra, rb);
                }
                _ => {
                    let (da, db) = (a.decide(now), b.decide(now));
                    let same = da.len() == db.len()
                        && da.iter().zip(&db).all(|(x, y)| {
                            x.flow == y.flow
                                && x.class == y.class
                                && x.backfill == y.backfill
                                && (x.rate - y.rate).abs() <= 1e-9 * x.rate.abs().max(1.0)
                        });
                    differ += usize::from(!same);
                }
            }
        }
        differ
    }

    #[test]
    fn compaction_never_changes_a_decision() {
        // Every policy the runtime runs: the same workload with and without
        // compaction gets the same decisions, round by round (handles are never
        // reused, so both name every flow alike).
        let hosts = 6;
        let (mut wrong, mut never) = (Vec::new(), Vec::new());
        for spec in coflowkit_policy::REGISTRY {
            let params = BTreeMap::new();
            let Ok(mut a) = Live::new(spec.name, &params, hosts, 100.0 * MB) else {
                continue; // needs an input the runtime does not supply (stages)
            };
            if !a.policy.compactable() {
                never.push(spec.name);
                continue;
            }
            let mut b = Live::new(spec.name, &params, hosts, 100.0 * MB).unwrap();
            a.set_compaction(1);
            b.set_compaction(usize::MAX);
            for seed in 1..=6 {
                let differ = differing_rounds(&mut a, &mut b, seed * 7919 + 13);
                if differ > 0 {
                    wrong.push(format!("{} (seed {seed}: {differ} rounds)", spec.name));
                }
            }
            assert!(a.compactions() > 10, "{}: {}", spec.name, a.compactions());
            assert!(a.num_flows() < b.num_flows() / 2, "{}", spec.name);
            // Only the paths of the flows held stay interned.
            let mut held: Vec<u32> = a.d.flow_path.clone();
            held.sort_unstable();
            held.dedup();
            assert_eq!(held, (0..a.fabric.num_paths() as u32).collect::<Vec<_>>());
            assert!(a.fabric.num_paths() < b.fabric.num_paths(), "{}", spec.name);
            assert_eq!(b.compactions(), 0);
            // Both list the same coflows (b has all; a the last HISTORY dropped).
            let (ra, rb): (Vec<_>, Vec<_>) = (a.coflows().collect(), b.coflows().collect());
            assert!(ra.len() <= rb.len());
        }
        assert!(
            wrong.is_empty(),
            "decisions changed by compaction: {wrong:?}"
        );
        // CODA's identifier is not compacted yet (see its `compactable`).
        assert_eq!(never, ["coda"]);
    }
}
