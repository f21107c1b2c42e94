//! The `identify` labelling source: CODA's online coflow identification (§3,
//! incremental Rough-DBSCAN from `coflowkit-ident`) inside a simulation, from what
//! the network shows of each flow only.
//!
//! ```text
//! record of flow f   S_time = when the scheduler first saw f; community key of
//!                    (src host, dst host); aggregation (dst host, dst port)
//! communities        spectral bisection of the host graph weighted by flow counts,
//!                    computed once (service groups are stable: CODA §3.1)
//! newcomer           a provisional coflow of its own (it runs without waiting for
//!                    identification, as Aalo's and CODA's new flows do)
//! round, every Δ     at the first event at or after last round + Δ, if flows
//!                    arrived or left since: flows that left are removed; flows
//!                    seen that have sent ≥ min_bytes are added (default 0: see
//!                    below); DBSCAN(leaders, ε, 1); relabel
//! labels             stable across rounds (`Rough`): a new cluster takes the
//!                    provisional label of its oldest leader's first flow
//! late binding       labels of clusters with a flow within d (exact, `Rough::near`)
//! ```
//!
//! A round is due only when flows arrived or left since the last one. For arrivals
//! the source asks to be woken at the round's time; a round due only because flows
//! left (which can only split clusters) runs at the next scheduling event instead,
//! which spares the simulation one event per completion burst. Flows that cross
//! `min_bytes` in an interval with no arrival or departure are added at the next
//! round that runs.
//!
//! `min_bytes` defaults to 0 online. CODA leaves out flows below 100 KB, which
//! offline (`coflowkit identify`) means flows of fewer bytes. Online, a flow the
//! scheduler holds back sends nothing, so a threshold on bytes *sent* would let the
//! schedule decide which flows get identified: new flows would run as coflows of
//! their own until they had sent enough, and be demoted only then. That is what
//! `min_bytes=100000` simulates; it desynchronises the flows of a coflow and makes
//! simulations an order of magnitude slower (measured in docs/identification.md).

use crate::support::labels::Labeller;
use crate::view::Common;
use coflowkit_ident::{agg_key, communities, Metric, Records, Rough};

/// The parameters of [`Identify`].
#[derive(Debug, Clone)]
pub struct IdentifyConfig {
    /// Weights of S_time, D_com and D_prt (packet statistics are not observable
    /// in a flow-level simulation).
    pub metric: Metric,
    pub eps: f64,
    pub tau: f64,
    pub interval_s: f64,
    pub min_bytes: f64,
    /// Communities are split while a cut has conductance below this.
    pub max_conductance: f64,
}

/// Weights of (S_time, D_com, D_prt) learned by CODA on its testbed (§3.2): `As`
/// for Spark, `Ah` for Hadoop.
pub const CODA_SPARK: [f64; 3] = [3.825, 5.431, 0.217];
pub const CODA_HADOOP: [f64; 3] = [3.472, 3.207, 0.0];

impl Default for IdentifyConfig {
    fn default() -> Self {
        IdentifyConfig {
            metric: Metric::new(CODA_SPARK[0], vec![], CODA_SPARK[1], CODA_SPARK[2])
                .expect("valid weights"),
            eps: 0.5,
            tau: 0.05,
            interval_s: 0.1,
            min_bytes: 0.0,
            max_conductance: 0.1,
        }
    }
}

const OUT: u8 = 0;
const PENDING: u8 = 1;
const CLUSTERED: u8 = 2;

pub struct Identify {
    cfg: IdentifyConfig,
    rough: Option<Rough>,
    records: Records,
    state: Vec<u8>,
    pending: Vec<u32>,
    clustered: Vec<u32>,
    /// Flows arrived since the last round: the source asks to be woken for it.
    dirty: bool,
    /// Flows left since the last round: the round runs at the next event.
    left: bool,
    next_round: f64,
    last_active: usize,
    stamp: Vec<u32>,
    epoch: u32,
    added: Vec<u32>,
    rounds: u64,
    /// Late-binding answers of this round (they change only when a round runs):
    /// `near_at[f] == rounds` when `near_arena[near_span[f]]` holds flow f's.
    near_at: Vec<u64>,
    near_span: Vec<(u32, u32)>,
    near_arena: Vec<u32>,
    near_d: f64,
    /// Each host's community, computed at the first round from the flows
    /// known then (all of them in a simulation).
    host_com: Vec<u32>,
}

impl Identify {
    pub fn new(cfg: IdentifyConfig) -> Result<Identify, String> {
        if !(cfg.interval_s.is_finite() && cfg.interval_s > 0.0) {
            return Err(format!("interval_s={} is not a number > 0", cfg.interval_s));
        }
        // Validates eps and tau.
        Rough::new(cfg.metric.clone(), cfg.eps, cfg.tau, 0)?;
        Ok(Identify {
            cfg,
            rough: None,
            records: Records::default(),
            state: Vec::new(),
            pending: Vec::new(),
            clustered: Vec::new(),
            dirty: false,
            left: false,
            next_round: f64::NEG_INFINITY,
            last_active: 0,
            stamp: Vec::new(),
            epoch: 0,
            added: Vec::new(),
            rounds: 0,
            near_at: Vec::new(),
            near_span: Vec::new(),
            near_arena: Vec::new(),
            near_d: f64::NAN,
            host_com: Vec::new(),
        })
    }

    /// Identification rounds run so far.
    pub fn rounds(&self) -> u64 {
        self.rounds
    }

    fn init(&mut self, c: &Common) {
        let n = c.flow_src.len();
        let hosts = c.fabric.ports() as usize;
        let mut count = std::collections::BTreeMap::new();
        for f in 0..n {
            let (a, b) = (c.flow_src[f], c.flow_dst[f]);
            *count.entry((a.min(b), a.max(b))).or_insert(0.0) += 1.0;
        }
        let edges: Vec<(u32, u32, f64)> = count.into_iter().map(|((a, b), w)| (a, b, w)).collect();
        // Communities need a traffic graph: a simulation knows every flow of the
        // workload (the history CODA learns them from); a runtime driver knows
        // only the few flows seen so far, too few to tell communities apart, and
        // puts every host in one (as CODA found the FB trace to be).
        let com = if self.cfg.metric.com > 0.0 && n >= hosts {
            communities(hosts, &edges, self.cfg.max_conductance)
        } else {
            vec![0; hosts]
        };
        self.host_com = com;
        self.records = Records::zeros(0, 0);
        self.grow(c);
        // Provisional labels are fresh labels too: one per flow at most, then
        // the clusters that need new ones.
        self.rough = Some(
            Rough::new(self.cfg.metric.clone(), self.cfg.eps, self.cfg.tau, 0)
                .expect("validated in new"),
        );
    }

    fn round(&mut self, c: &Common, labels: &mut [u32], changed: &mut Vec<u32>) {
        self.rounds += 1;
        self.near_arena.clear();
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.stamp.iter_mut().for_each(|s| *s = 0);
            self.epoch = 1;
        }
        for &f in c.active {
            self.stamp[f as usize] = self.epoch;
        }
        let rough = self.rough.as_mut().expect("initialised");
        let mut touched = false;
        // Departures.
        let epoch = self.epoch;
        let (stamp, state) = (&self.stamp, &mut self.state);
        self.clustered.retain(|&f| {
            if stamp[f as usize] == epoch {
                true
            } else {
                rough.remove(f);
                state[f as usize] = OUT;
                touched = true;
                false
            }
        });
        // Flows that have sent enough join.
        self.added.clear();
        let (min_bytes, records, added) = (self.cfg.min_bytes, &self.records, &mut self.added);
        let clustered = &mut self.clustered;
        self.pending.retain(|&f| {
            let fu = f as usize;
            if stamp[fu] != epoch {
                state[fu] = OUT;
                false
            } else if c.sent(fu as u32) >= min_bytes {
                rough.insert(records, f, labels[fu]);
                state[fu] = CLUSTERED;
                clustered.push(f);
                added.push(f);
                touched = true;
                false
            } else {
                true
            }
        });
        if touched {
            self.added.extend_from_slice(rough.cluster(&self.records));
            for &f in &self.added {
                let l = rough.label(f);
                if labels[f as usize] != l {
                    labels[f as usize] = l;
                    changed.push(f);
                }
            }
        }
        self.dirty = false;
        self.left = false;
        self.next_round = c.now_s + self.cfg.interval_s;
    }
}

impl Identify {
    /// Makes room for flows the driver added since the last call (the
    /// runtime's master adds a flow slot per flow it sees): their community
    /// key from the hosts' communities, their destination key.
    fn grow(&mut self, c: &Common) {
        let (from, n) = (self.state.len(), c.flow_src.len());
        if n <= from {
            return;
        }
        let r = &mut self.records;
        r.time.resize(n, 0.0);
        r.com.resize(n, 0);
        r.agg.resize(n, 0);
        for x in &mut r.extra {
            x.resize(n, 0.0);
        }
        let com = |h: u32| self.host_com.get(h as usize).copied().unwrap_or(h) as u64;
        for f in from..n {
            r.com[f] = (com(c.flow_src[f]) << 32) | com(c.flow_dst[f]);
            r.agg[f] = agg_key(c.flow_dst[f], c.flow_dst_port[f]);
        }
        self.state.resize(n, OUT);
        self.stamp.resize(n, 0);
        self.near_at.resize(n, u64::MAX);
        self.near_span.resize(n, (0, 0));
    }
}

impl Labeller for Identify {
    fn label(&mut self, c: &Common, new: &[u32], labels: &mut [u32], changed: &mut Vec<u32>) {
        if self.rough.is_none() {
            self.init(c);
        }
        self.grow(c);
        let rough = self.rough.as_mut().expect("initialised");
        for &f in new {
            let fu = f as usize;
            self.records.time[fu] = c.seen_s(f);
            labels[fu] = rough.fresh();
            self.state[fu] = PENDING;
            self.pending.push(f);
        }
        if !new.is_empty() {
            self.dirty = true;
        }
        // Something left when fewer flows are active than before plus newcomers.
        if c.active.len() < self.last_active + new.len() {
            self.left = true;
        }
        self.last_active = c.active.len();
        let due = self.dirty || self.left || !self.pending.is_empty();
        if c.now_s >= self.next_round - 1e-12 && due {
            self.round(c, labels, changed);
        }
    }

    fn near(&mut self, _c: &Common, f: u32, d: f64, labels: &[u32], out: &mut Vec<u32>) {
        if self.state.get(f as usize) != Some(&CLUSTERED) {
            return;
        }
        let fu = f as usize;
        if d != self.near_d {
            // Answers were for another diameter.
            self.near_d = d;
            self.near_at.iter_mut().for_each(|x| *x = u64::MAX);
            self.near_arena.clear();
        }
        if self.near_at[fu] != self.rounds {
            let start = self.near_arena.len();
            let rough = self.rough.as_ref().expect("initialised");
            rough.near(&self.records, f, d, labels[fu], &mut self.near_arena);
            self.near_at[fu] = self.rounds;
            self.near_span[fu] = (start as u32, self.near_arena.len() as u32);
        }
        let (a, b) = self.near_span[fu];
        out.extend_from_slice(&self.near_arena[a as usize..b as usize]);
    }

    fn wakeup(&self) -> Option<f64> {
        if self.dirty {
            Some(self.next_round)
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::Case;

    fn source(min_bytes: f64) -> Identify {
        Identify::new(IdentifyConfig {
            // Time only: d = |Δt|.
            metric: Metric::new(1.0, vec![], 0.0, 0.0).unwrap(),
            eps: 0.5,
            tau: 0.01,
            interval_s: 0.1,
            min_bytes,
            max_conductance: 0.1,
        })
        .unwrap()
    }

    /// Calls `label` at time `t` with the active flows `active` (all of them in
    /// the case) and newcomers `new`; returns the changed flows.
    fn call(
        s: &mut Identify,
        case: &mut Case,
        t: f64,
        active: &[u32],
        new: &[u32],
        labels: &mut [u32],
    ) -> Vec<u32> {
        case.active = active.to_vec();
        let mut c = case.common();
        c.now_s = t;
        let mut changed = Vec::new();
        s.label(&c, new, labels, &mut changed);
        changed
    }

    #[test]
    fn rounds_cluster_by_first_seen_time_and_keep_labels() {
        // Coflow A: flows 0, 1; coflow B: flows 2, 3 (the source never reads it).
        let mut case = Case::new(
            4,
            1.0,
            &[
                (0, 0, 2, 9.0, 0.0),
                (0, 1, 2, 9.0, 0.0),
                (1, 0, 3, 9.0, 0.0),
                (1, 1, 3, 9.0, 0.0),
            ],
        );
        let mut s = source(0.0);
        let mut labels = vec![u32::MAX; 4];
        // t = 0: flow 0 arrives; a round runs at once (none ran before).
        assert!(call(&mut s, &mut case, 0.0, &[0], &[0], &mut labels).is_empty());
        let a = labels[0];
        assert_eq!(s.rounds(), 1);
        // t = 0.05: flow 1 arrives: provisional label, round due at 0.1.
        assert!(call(&mut s, &mut case, 0.05, &[0, 1], &[1], &mut labels).is_empty());
        assert_ne!(labels[1], a);
        assert_eq!(s.wakeup(), Some(0.1));
        // t = 0.1: the round puts flow 1 with flow 0 (0.05 apart ≤ ε).
        assert_eq!(
            call(&mut s, &mut case, 0.1, &[0, 1], &[], &mut labels),
            vec![1]
        );
        assert_eq!(labels[..2], [a, a]);
        assert_eq!(s.wakeup(), None);
        // t = 5: B's flows arrive; one round, B is a coflow of its own, labelled
        // with the provisional label of its first flow.
        let ch = call(&mut s, &mut case, 5.0, &[0, 1, 2, 3], &[2, 3], &mut labels);
        assert_eq!(ch, vec![3]);
        assert_eq!(labels[3], labels[2]);
        assert_ne!(labels[2], a);
        // Late binding: A is 5 s from flow 2.
        let c = case.common();
        let mut out = Vec::new();
        s.near(&c, 2, 4.9, &labels, &mut out);
        assert!(out.is_empty());
        s.near(&c, 2, 5.0, &labels, &mut out);
        assert_eq!(out, vec![a]);
        // t = 6: A's flows have left; nothing changes for B and no wake-up.
        assert!(call(&mut s, &mut case, 6.0, &[2, 3], &[], &mut labels).is_empty());
        assert_eq!(s.rounds(), 4);
        assert_eq!(s.wakeup(), None);
    }

    #[test]
    fn flows_below_min_bytes_stay_provisional() {
        let mut case = Case::new(4, 1.0, &[(0, 0, 2, 9.0, 0.0), (0, 1, 2, 9.0, 0.0)]);
        let mut s = source(4.0);
        let mut labels = vec![u32::MAX; 2];
        call(&mut s, &mut case, 0.0, &[0, 1], &[0, 1], &mut labels);
        assert_ne!(labels[0], labels[1]);
        // Flow 1 sends 5 B: it joins at the next round, as a cluster of its own
        // (flow 0 is still below the threshold).
        case.set_sent(1, 5.0);
        let before = labels[1];
        assert!(call(&mut s, &mut case, 0.2, &[0, 1], &[], &mut labels).is_empty());
        assert_eq!(labels[1], before);
        case.set_sent(0, 4.0);
        // Flow 0 (first seen with flow 1) follows flow 1's leader.
        assert_eq!(
            call(&mut s, &mut case, 0.3, &[0, 1], &[], &mut labels),
            vec![0]
        );
        assert_eq!(labels[0], before);
    }

    #[test]
    fn flows_are_timestamped_when_the_driver_saw_them_start() {
        // Decisions every second: flow 0 starts at 0.95 and is labelled at the
        // call of t = 1, flow 1 starts at 1.05 and is labelled at t = 2. By
        // their starts they are 0.1 s apart (≤ ε = 0.5): one coflow. Stamped at
        // the calls (1 s apart) they would be two.
        let flows = [(0, 0, 2, 9.0, 0.0), (0, 1, 2, 9.0, 0.0)];
        let mut case = Case::new(4, 1.0, &flows);
        case.flow_seen_s = vec![0.95, 1.05];
        let mut s = source(0.0);
        let mut labels = vec![u32::MAX; 2];
        call(&mut s, &mut case, 1.0, &[0], &[0], &mut labels);
        let ch = call(&mut s, &mut case, 2.0, &[0, 1], &[1], &mut labels);
        assert_eq!(labels[1], labels[0]);
        assert_eq!(ch, vec![1]);
        // Without start times (a driver that does not say) the call's time is
        // the stamp, and the two are 1 s apart.
        let mut case = Case::new(4, 1.0, &flows);
        let mut s = source(0.0);
        let mut labels = vec![u32::MAX; 2];
        call(&mut s, &mut case, 1.0, &[0], &[0], &mut labels);
        call(&mut s, &mut case, 2.0, &[0, 1], &[1], &mut labels);
        assert_ne!(labels[1], labels[0]);
    }
}
