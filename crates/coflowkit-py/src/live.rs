//! `LiveScheduler`: the runtime master's policy driver (coflowkit-runtime's `Live`).

use crate::model_err;
use coflowkit_policy::NO_PORT;
use coflowkit_runtime::{CoflowInfo, Declared, Live, SlotState};
use pyo3::prelude::*;
use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};

/// The policy of a running master: registry policy objects fed observed bytes.
/// A mutex makes it shareable between Python threads (the master uses one).
#[pyclass(module = "coflowkit._core")]
pub struct LiveScheduler {
    inner: Mutex<Live>,
}

fn port(p: Option<u32>) -> u32 {
    p.unwrap_or(NO_PORT)
}

impl LiveScheduler {
    fn live(&self) -> MutexGuard<'_, Live> {
        // A panic inside a policy poisons the lock; the state is still the last
        // consistent one, so keep going.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[pymethods]
impl LiveScheduler {
    /// `policy` with `params` on a big switch of `hosts` ports of `bytes_per_s`.
    #[new]
    #[pyo3(signature = (policy, params, hosts, bytes_per_s))]
    fn new(
        policy: &str,
        params: BTreeMap<String, String>,
        hosts: u32,
        bytes_per_s: f64,
    ) -> PyResult<Self> {
        let inner = Live::new(policy, &params, hosts, bytes_per_s).map_err(model_err)?;
        Ok(LiveScheduler {
            inner: Mutex::new(inner),
        })
    }

    /// `clairvoyant` or `non-clairvoyant`.
    #[getter]
    fn info(&self) -> &'static str {
        self.live().info().name()
    }

    #[getter]
    fn rounds(&self) -> u64 {
        self.live().rounds()
    }

    /// Flow slots held now (finished coflows are compacted away).
    #[getter]
    fn num_flows(&self) -> usize {
        self.live().num_flows()
    }

    /// Bytes sent by every flow ever held, compacted ones included.
    #[getter]
    fn total_sent(&self) -> f64 {
        self.live().total_sent()
    }

    #[getter]
    fn compactions(&self) -> u64 {
        self.live().compactions()
    }

    /// Compact once at least `min_finished` coflows finished (and as many as
    /// are alive), or once their flows are at least `min_flows` (and as many
    /// as the flows alive; 65,536 by default).
    #[pyo3(signature = (min_finished, min_flows = coflowkit_runtime::MIN_COMPACT_FLOWS))]
    fn set_compaction(&self, min_finished: usize, min_flows: usize) {
        self.live().set_compaction(min_finished, min_flows);
    }

    /// Registers coflow `id` with flows `(src, dst, dst_port, size or None,
    /// stage, priority)`, its weight, stage DAG `[(child, parent)]` and
    /// reported demands `[(link, value)]`; returns the first of its contiguous
    /// flow slots (handles, never reused).
    #[pyo3(signature = (id, flows, now, weight = 1.0, parents = Vec::new(), report = Vec::new()))]
    #[allow(clippy::too_many_arguments, clippy::type_complexity)]
    fn register(
        &self,
        id: u64,
        flows: Vec<(u32, u32, Option<u32>, Option<f64>, u32, u32)>,
        now: f64,
        weight: f64,
        parents: Vec<(u32, u32)>,
        report: Vec<(u32, f64)>,
    ) -> PyResult<u64> {
        let d: Vec<Declared> = flows
            .into_iter()
            .map(|(src, dst, p, size, stage, priority)| Declared {
                src,
                dst,
                dst_port: port(p),
                size,
                stage,
                priority,
            })
            .collect();
        let info = CoflowInfo {
            weight,
            parents,
            report,
        };
        self.live()
            .register_with(id, &d, &info, now)
            .map_err(model_err)
    }

    /// A flow of no registered coflow (a coflow of its own, id `id`); its slot.
    fn add_single(
        &self,
        id: u64,
        src: u32,
        dst: u32,
        src_port: u32,
        dst_port: u32,
        now: f64,
    ) -> PyResult<u64> {
        self.live()
            .add_single(id, src, dst, src_port, dst_port, now)
            .map_err(model_err)
    }

    /// Restores registered coflow `id`'s arrival (a restarted master).
    fn set_arrival(&self, id: u64, arrival: f64) -> PyResult<()> {
        self.live().set_arrival(id, arrival).map_err(model_err)
    }

    /// A declared slot was seen on the network.
    fn start(&self, flow: u64, src_port: u32, now: f64) -> PyResult<()> {
        self.live().start(flow, src_port, now).map_err(model_err)
    }

    /// Acknowledged bytes of many flows at once.
    fn update(&self, flows: Vec<u64>, sent: Vec<f64>) -> PyResult<()> {
        for (f, b) in flows.into_iter().zip(sent) {
            self.live().set_sent(f, b).map_err(model_err)?;
        }
        Ok(())
    }

    /// The flow is done; the coflow's CCT if it was its last flow.
    fn finish(&self, flow: u64, now: f64) -> PyResult<Option<f64>> {
        self.live().finish(flow, now).map_err(model_err)
    }

    /// `declared`, `active` or `finished`.
    fn state(&self, flow: u64) -> Option<&'static str> {
        self.live().slot_state(flow).map(|s| match s {
            SlotState::Declared => "declared",
            SlotState::Active => "active",
            SlotState::Finished => "finished",
        })
    }

    /// Bytes flow slot `flow` has sent (as last reported).
    fn sent(&self, flow: u64) -> PyResult<f64> {
        self.live().sent(flow).ok_or_else(|| {
            crate::CoflowkitError::new_err(format!("no flow slot {flow} (or it was compacted)"))
        })
    }

    fn coflow_of(&self, flow: u64) -> Option<u64> {
        self.live().slot_coflow_id(flow)
    }

    /// The labels the policy gave `flows` (slots), for a policy that identifies
    /// coflows itself (`coda`); `None` for any other. -1 for a slot not seen yet.
    fn labels(&self, flows: Vec<u64>) -> Option<Vec<i64>> {
        let l = self.live();
        let mut out = Vec::with_capacity(flows.len());
        for f in flows {
            let x = l.label_of(f)?;
            out.push(if x == u32::MAX { -1 } else { x as i64 });
        }
        Some(out)
    }

    /// `(id, arrival, finish or nan, width, bytes sent)` per coflow held, after
    /// the last 1,000 compacted ones.
    fn coflows(&self) -> Vec<(u64, f64, f64, u32, f64)> {
        self.live().coflows().collect()
    }

    /// `coflows()` without the compacted ones (they change only when
    /// `compactions` does).
    fn held_coflows(&self) -> Vec<(u64, f64, f64, u32, f64)> {
        self.live().held_coflows().collect()
    }

    /// The compacted coflows `coflows()` still lists, oldest first.
    fn compacted_coflows(&self) -> Vec<(u64, f64, f64, u32, f64)> {
        self.live().compacted_coflows().collect()
    }

    /// One round at `now`: `(flows, rates, classes)`, class -1 for rate policies
    /// and 255 for backfilled flows (a clairvoyant policy's flows without a size).
    fn decide(&self, py: Python<'_>, now: f64) -> (Vec<u64>, Vec<f64>, Vec<i32>) {
        let d = py.allow_threads(|| self.live().decide(now));
        let mut flows = Vec::with_capacity(d.len());
        let mut rates = Vec::with_capacity(d.len());
        let mut classes = Vec::with_capacity(d.len());
        for x in d {
            flows.push(x.flow);
            rates.push(x.rate);
            classes.push(x.class.map_or(-1, i32::from));
        }
        (flows, rates, classes)
    }
}
