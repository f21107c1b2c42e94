//! The policy driver of the real runtime.
//!
//! [`Live`] runs the same registry policy objects as the simulator, but the bytes
//! each flow has sent come from observations (agent reports) instead of integrated
//! rates, and time is the wall clock the caller passes. Flows get append-only global
//! indices ("slots"): a registered coflow reserves one contiguous slot per declared
//! flow, so a policy sees the same layout as in the engine (a coflow's flows
//! contiguous, active flows sorted), and state a policy keeps by flow or coflow index
//! stays valid across rounds.
//!
//! The information model is kept: a clairvoyant policy only ever sees flows whose
//! size was registered. Flows without a size under a clairvoyant policy are not
//! hidden from the network: they share what the policy left on their links, max-min
//! (lowest priority, work-conserving).

pub mod nlio;
pub mod observe;
pub mod sockdiag;
pub mod wire;

use coflowkit_alloc::MaxMin;
use coflowkit_model::{Fabric, ModelError, PathId};
use coflowkit_policy::drive::{class_rates, group_active};
use coflowkit_policy::{
    registry, ActiveCoflow, AnyPolicy, ClairvoyantView, Common, Decision, Info, NonClairvoyantView,
    NO_PORT,
};
use std::collections::BTreeMap;

/// A flow slot's life: declared (registered, not seen yet), active, finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlotState {
    Declared,
    Active,
    Finished,
}

/// One registered flow: hosts, destination port and optional size (bytes).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Declared {
    pub src: u32,
    pub dst: u32,
    pub dst_port: u32,
    pub size: Option<f64>,
}

/// What one round decided for one active flow.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FlowDecision {
    pub flow: u32,
    /// Goodput bytes/s (for class policies: the strict-priority max-min rate).
    pub rate: f64,
    /// The policy's class (0 = highest), or `None` for a policy that decides rates.
    pub class: Option<u8>,
    /// Not given to the policy (clairvoyant policy, size unknown): backfilled.
    pub backfill: bool,
}

/// The runtime's policy driver (see the module documentation).
pub struct Live {
    fabric: Fabric,
    policy: AnyPolicy,
    hosts: u32,
    // Per flow slot.
    flow_coflow: Vec<u32>,
    flow_index: Vec<u32>,
    flow_path: Vec<PathId>,
    flow_src: Vec<u32>,
    flow_dst: Vec<u32>,
    flow_src_port: Vec<u32>,
    flow_dst_port: Vec<u32>,
    flow_zero: Vec<u32>,
    size: Vec<f64>,
    known: Vec<bool>,
    sent: Vec<f64>,
    remaining: Vec<f64>,
    state: Vec<SlotState>,
    // Per coflow.
    coflow_id: Vec<u64>,
    arrival: Vec<f64>,
    weight: Vec<f64>,
    width: Vec<u32>,
    first_flow: Vec<u32>,
    length: Vec<f64>,
    csize: Vec<f64>,
    coflow_sent: Vec<f64>,
    coflow_started: Vec<u32>,
    coflow_left: Vec<u32>,
    coflow_finish: Vec<f64>,
    /// The coflow's arrival is known (its first flow started, or it was restored).
    arrived: Vec<bool>,
    by_id: BTreeMap<u64, u32>,
    // Active flows (sorted slots), split by what the policy may see.
    active: Vec<u32>,
    hidden: Vec<u32>,
    groups: Vec<ActiveCoflow>,
    path_count: Vec<u32>,
    active_paths: Vec<PathId>,
    decision: Decision,
    mm: MaxMin,
    rounds: u64,
}

fn param(name: &str, msg: impl Into<String>) -> ModelError {
    ModelError::param(name, msg)
}

impl Live {
    /// A big switch of `hosts` ports whose links carry `bytes_per_s` (goodput), run
    /// by registry policy `name` with `params`.
    pub fn new(
        policy: &str,
        params: &BTreeMap<String, String>,
        hosts: u32,
        bytes_per_s: f64,
    ) -> Result<Live, ModelError> {
        let fabric = Fabric::big_switch(hosts, bytes_per_s)?;
        let policy = registry::build(policy, params)?;
        Ok(Live {
            fabric,
            policy,
            hosts,
            flow_coflow: Vec::new(),
            flow_index: Vec::new(),
            flow_path: Vec::new(),
            flow_src: Vec::new(),
            flow_dst: Vec::new(),
            flow_src_port: Vec::new(),
            flow_dst_port: Vec::new(),
            flow_zero: Vec::new(),
            size: Vec::new(),
            known: Vec::new(),
            sent: Vec::new(),
            remaining: Vec::new(),
            state: Vec::new(),
            coflow_id: Vec::new(),
            arrival: Vec::new(),
            weight: Vec::new(),
            width: Vec::new(),
            first_flow: Vec::new(),
            length: Vec::new(),
            csize: Vec::new(),
            coflow_sent: Vec::new(),
            coflow_started: Vec::new(),
            coflow_left: Vec::new(),
            coflow_finish: Vec::new(),
            arrived: Vec::new(),
            by_id: BTreeMap::new(),
            active: Vec::new(),
            hidden: Vec::new(),
            groups: Vec::new(),
            path_count: Vec::new(),
            active_paths: Vec::new(),
            decision: Decision::default(),
            mm: MaxMin::new(),
            rounds: 0,
        })
    }

    pub fn info(&self) -> Info {
        self.policy.info()
    }

    pub fn hosts(&self) -> u32 {
        self.hosts
    }

    pub fn num_flows(&self) -> usize {
        self.state.len()
    }

    pub fn num_coflows(&self) -> usize {
        self.coflow_id.len()
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
    /// first slot. Sizes must be positive when given.
    pub fn register(&mut self, id: u64, flows: &[Declared], now: f64) -> Result<u32, ModelError> {
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
        Ok(self.add_coflow(id, flows, now))
    }

    fn add_coflow(&mut self, id: u64, flows: &[Declared], now: f64) -> u32 {
        let k = self.coflow_id.len() as u32;
        let first = self.state.len() as u32;
        let mut per_port: BTreeMap<u32, f64> = BTreeMap::new();
        let mut total = 0.0;
        for (i, f) in flows.iter().enumerate() {
            let path = self
                .fabric
                .route(f.src, f.dst, 0)
                .expect("hosts were checked against the fabric");
            self.flow_coflow.push(k);
            self.flow_index.push(i as u32);
            self.flow_path.push(path);
            self.flow_src.push(f.src);
            self.flow_dst.push(f.dst);
            self.flow_src_port.push(NO_PORT);
            self.flow_dst_port.push(f.dst_port);
            self.flow_zero.push(0);
            let s = f.size.unwrap_or(0.0);
            self.size.push(s);
            self.known.push(f.size.is_some());
            self.sent.push(0.0);
            self.remaining.push(s);
            self.state.push(SlotState::Declared);
            *per_port.entry(f.src).or_default() += s;
            *per_port.entry(self.hosts + f.dst).or_default() += s;
            total += s;
        }
        self.coflow_id.push(id);
        self.arrival.push(now);
        self.weight.push(1.0);
        self.width.push(flows.len() as u32);
        self.first_flow.push(first);
        self.length
            .push(per_port.values().cloned().fold(0.0, f64::max));
        self.csize.push(total);
        self.coflow_sent.push(0.0);
        self.coflow_started.push(0);
        self.coflow_left.push(flows.len() as u32);
        self.coflow_finish.push(f64::NAN);
        self.arrived.push(false);
        self.by_id.insert(id, k);
        self.grow_paths();
        first
    }

    fn grow_paths(&mut self) {
        let np = self.fabric.num_paths();
        if self.path_count.len() < np {
            self.path_count.resize(np, 0);
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
        self.arrival[k] = arrival;
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
    ) -> Result<u32, ModelError> {
        let d = Declared {
            src,
            dst,
            dst_port,
            size: None,
        };
        let f = self.register(id, &[d], now)?;
        self.start(f, src_port, now)?;
        Ok(f)
    }

    fn check_slot(&self, f: u32) -> Result<usize, ModelError> {
        if (f as usize) < self.state.len() {
            Ok(f as usize)
        } else {
            Err(param("flow", format!("no flow slot {f}")))
        }
    }

    /// A declared flow was seen on the network (its source port now known).
    pub fn start(&mut self, f: u32, src_port: u32, now: f64) -> Result<(), ModelError> {
        let i = self.check_slot(f)?;
        if self.state[i] != SlotState::Declared {
            return Err(param("flow", format!("flow slot {f} already started")));
        }
        self.state[i] = SlotState::Active;
        self.flow_src_port[i] = src_port;
        let k = self.flow_coflow[i] as usize;
        if !self.arrived[k] {
            // A coflow's arrival is when its first flow shows up, not when it was
            // registered (a job may register its shuffle long before it runs).
            self.arrival[k] = now;
            self.arrived[k] = true;
        }
        self.coflow_started[k] += 1;
        let p = self.flow_path[i] as usize;
        self.path_count[p] += 1;
        if self.path_count[p] == 1 {
            self.active_paths.push(self.flow_path[i]);
        }
        let visible = self.info() == Info::NonClairvoyant || self.known[i];
        let list = if visible {
            &mut self.active
        } else {
            &mut self.hidden
        };
        let pos = list.partition_point(|&g| g < f);
        list.insert(pos, f);
        Ok(())
    }

    /// Bytes flow `f` has sent so far (acknowledged bytes; never decreases).
    pub fn set_sent(&mut self, f: u32, bytes: f64) -> Result<(), ModelError> {
        let i = self.check_slot(f)?;
        if !bytes.is_finite() || bytes < 0.0 {
            return Err(param(
                "bytes",
                format!("flow slot {f}: bad byte count {bytes}"),
            ));
        }
        let grown = bytes - self.sent[i];
        if grown <= 0.0 {
            return Ok(());
        }
        self.sent[i] = bytes;
        if self.known[i] {
            // Never zero while active: a registered size can be a little short.
            self.remaining[i] = (self.size[i] - bytes).max(1.0);
        }
        self.coflow_sent[self.flow_coflow[i] as usize] += grown;
        Ok(())
    }

    /// Flow `f` is done; returns the coflow's completion time if this was its
    /// last flow.
    pub fn finish(&mut self, f: u32, now: f64) -> Result<Option<f64>, ModelError> {
        let i = self.check_slot(f)?;
        if self.state[i] != SlotState::Active {
            return Err(param("flow", format!("flow slot {f} is not active")));
        }
        self.state[i] = SlotState::Finished;
        self.remaining[i] = 0.0;
        for list in [&mut self.active, &mut self.hidden] {
            if let Ok(pos) = list.binary_search(&f) {
                list.remove(pos);
            }
        }
        let p = self.flow_path[i];
        self.path_count[p as usize] -= 1;
        if self.path_count[p as usize] == 0 {
            if let Some(pos) = self.active_paths.iter().position(|&q| q == p) {
                self.active_paths.swap_remove(pos);
            }
        }
        let k = self.flow_coflow[i] as usize;
        self.coflow_left[k] -= 1;
        if self.coflow_left[k] == 0 {
            self.coflow_finish[k] = now;
            return Ok(Some(now - self.arrival[k]));
        }
        Ok(None)
    }

    pub fn slot_state(&self, f: u32) -> Option<SlotState> {
        self.state.get(f as usize).copied()
    }

    pub fn slot_coflow_id(&self, f: u32) -> Option<u64> {
        self.flow_coflow
            .get(f as usize)
            .map(|&k| self.coflow_id[k as usize])
    }

    pub fn sent(&self, f: u32) -> f64 {
        self.sent[f as usize]
    }

    /// (coflow id, arrival, finish or NaN, width, bytes sent) of every coflow.
    pub fn coflows(&self) -> impl Iterator<Item = (u64, f64, f64, u32, f64)> + '_ {
        (0..self.coflow_id.len()).map(|k| {
            (
                self.coflow_id[k],
                self.arrival[k],
                self.coflow_finish[k],
                self.width[k],
                self.coflow_sent[k],
            )
        })
    }

    /// One round: the policy's decision for every active flow at time `now`.
    pub fn decide(&mut self, now: f64) -> Vec<FlowDecision> {
        self.rounds += 1;
        group_active(
            &self.active,
            &self.flow_coflow,
            &self.first_flow,
            &self.width,
            &mut self.groups,
        );
        self.decision.reset(self.active.len());
        let common = Common {
            now_s: now,
            fabric: &self.fabric,
            active: &self.active,
            groups: &self.groups,
            flow_coflow: &self.flow_coflow,
            flow_index: &self.flow_index,
            flow_path: &self.flow_path,
            flow_src: &self.flow_src,
            flow_dst: &self.flow_dst,
            flow_src_port: &self.flow_src_port,
            flow_dst_port: &self.flow_dst_port,
            flow_stage: &self.flow_zero,
            flow_priority: &self.flow_zero,
            stage_parents: &[],
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
        match &mut self.policy {
            AnyPolicy::Clairvoyant(p) => {
                let v = ClairvoyantView {
                    common,
                    size: &self.size,
                    remaining: &self.remaining,
                    coflow_first_flow: &self.first_flow,
                    coflow_length: &self.length,
                    coflow_size: &self.csize,
                    coflow_report: &[],
                };
                p.decide(&v, &mut self.decision);
            }
            AnyPolicy::NonClairvoyant(p) => {
                p.decide(&NonClairvoyantView { common }, &mut self.decision);
            }
        }
        let classes = !self.decision.classes.is_empty();
        let mut residual = self.fabric.capacities.clone();
        let mut rates = vec![0.0; self.active.len()];
        if classes {
            // Strict priority across classes, max-min within one (as the engine).
            let paths: Vec<PathId> = self
                .active
                .iter()
                .map(|&f| self.flow_path[f as usize])
                .collect();
            class_rates(
                &mut self.mm,
                &self.fabric,
                &mut residual,
                &paths,
                &self.decision.classes,
                &mut rates,
            );
        } else {
            for (i, &f) in self.active.iter().enumerate() {
                let r = self.decision.rates[i].max(0.0);
                rates[i] = r;
                for &l in self.fabric.path(self.flow_path[f as usize]) {
                    residual[l as usize] = (residual[l as usize] - r).max(0.0);
                }
            }
        }
        let mut out: Vec<FlowDecision> = self
            .active
            .iter()
            .enumerate()
            .map(|(i, &f)| FlowDecision {
                flow: f,
                rate: rates[i],
                class: classes.then(|| self.decision.classes[i]),
                backfill: false,
            })
            .collect();
        if !self.hidden.is_empty() {
            let paths: Vec<PathId> = self
                .hidden
                .iter()
                .map(|&f| self.flow_path[f as usize])
                .collect();
            let mut r = vec![0.0; paths.len()];
            self.mm
                .priority(&self.fabric, &mut residual, &paths, &[paths.len()], &mut r);
            out.extend(self.hidden.iter().zip(r).map(|(&f, rate)| FlowDecision {
                flow: f,
                rate,
                class: classes.then_some(u8::MAX),
                backfill: true,
            }));
        }
        out
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
        }
    }

    fn rate_of(d: &[FlowDecision], f: u32) -> f64 {
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
        assert_eq!(l.sent(a), 9.0 * MB);
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
}
