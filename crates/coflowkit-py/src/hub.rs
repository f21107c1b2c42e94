//! The master's session hub (coflowkit-runtime's `hub`) for
//! `coflowkit.runtime.master`: conversions and GIL release only.

use crate::CoflowkitError;
use coflowkit_runtime::hub::{Event, Hub, HubConfig, SendError};
use coflowkit_runtime::wire::{self, Decision};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyTuple};
use pyo3::IntoPyObjectExt;
use std::net::{Ipv4Addr, SocketAddr, ToSocketAddrs};
use std::sync::atomic::Ordering;
use std::sync::RwLock;
use std::time::Duration;

fn ip(a: &[u8; 4]) -> String {
    Ipv4Addr::from(*a).to_string()
}

/// The first address `host:port` resolves to.
fn resolve(host: &str, port: u16) -> PyResult<SocketAddr> {
    (host, port)
        .to_socket_addrs()
        .ok()
        .and_then(|mut a| a.next())
        .ok_or_else(|| CoflowkitError::new_err(format!("cannot resolve {host}:{port}")))
}

fn duration(s: f64, what: &str) -> PyResult<Duration> {
    if s.is_finite() && s > 0.0 {
        Ok(Duration::from_secs_f64(s))
    } else {
        Err(CoflowkitError::new_err(format!(
            "{what} must be positive, got {s}"
        )))
    }
}

/// Agents' sessions on tokio threads: TLS, frames, deadlines, heartbeats.
/// Events come out of `poll`; frames go in with `send_decisions`.
#[pyclass(module = "coflowkit._core")]
pub struct AgentHub {
    inner: RwLock<Option<Hub>>,
    address: (String, u16),
}

impl AgentHub {
    fn with<T>(&self, f: impl FnOnce(&Hub) -> T) -> PyResult<T> {
        let g = self.inner.read().unwrap_or_else(|e| e.into_inner());
        match g.as_ref() {
            Some(h) => Ok(f(h)),
            None => Err(CoflowkitError::new_err("the session hub is stopped")),
        }
    }
}

#[pymethods]
impl AgentHub {
    #[new]
    #[pyo3(signature = (host, port, tls_dir, hosts, max_agents, handshake_timeout, read_timeout, send_queue, heartbeat, workers = 1, reuse_port = false))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        host: &str,
        port: u16,
        tls_dir: &str,
        hosts: u32,
        max_agents: usize,
        handshake_timeout: f64,
        read_timeout: f64,
        send_queue: usize,
        heartbeat: f64,
        workers: usize,
        reuse_port: bool,
    ) -> PyResult<Self> {
        let listen = resolve(host, port)?;
        let cfg = HubConfig {
            listen,
            tls_dir: tls_dir.into(),
            hosts,
            max_agents,
            handshake_timeout: duration(handshake_timeout, "handshake timeout")?,
            read_timeout: duration(read_timeout, "read timeout")?,
            send_queue,
            heartbeat: duration(heartbeat, "heartbeat")?,
            workers,
            reuse_port,
        };
        let hub = py
            .allow_threads(|| Hub::start(cfg))
            .map_err(CoflowkitError::new_err)?;
        let a = hub.local_addr();
        Ok(AgentHub {
            inner: RwLock::new(Some(hub)),
            address: (a.ip().to_string(), a.port()),
        })
    }

    /// `(host, port)` it listens on.
    #[getter]
    fn address(&self) -> (String, u16) {
        self.address.clone()
    }

    /// Events, waiting at most `timeout` seconds for the first:
    /// `("hello", sid, peer, host, addrs, name, boot_id, interval_ms, cert_ips)`,
    /// `("report", sid, time, new, updated, gone)` (new: `(fid, sport, dst,
    /// dport, first_seen, sent)`), `("updates", [sid], [fid], [bytes])` (byte
    /// counts of running flows, merged), `("closed", sid, peer, why, rejected)`.
    #[pyo3(signature = (timeout, max = 4096))]
    fn poll<'py>(
        &self,
        py: Python<'py>,
        timeout: f64,
        max: usize,
    ) -> PyResult<Vec<Bound<'py, PyTuple>>> {
        let wait = Duration::from_secs_f64(if timeout.is_finite() {
            timeout.clamp(0.0, 3600.0)
        } else {
            0.0
        });
        let events = py.allow_threads(|| self.with(|h| h.poll(wait, max.max(1))))?;
        events.into_iter().map(|e| event_tuple(py, e)).collect()
    }

    /// Queues a DECISIONS frame of `(fid, kind, value)` for session `sid`:
    /// 0 if queued, -1 if the session is gone, else the bytes that would be
    /// queued (over the limit: the agent does not keep up).
    fn send_decisions(&self, sid: u64, items: Vec<(u32, u8, f64)>) -> PyResult<i64> {
        let d: Vec<Decision> = items
            .into_iter()
            .map(|(fid, kind, value)| Decision { fid, kind, value })
            .collect();
        let payload = wire::encode_decisions(&d);
        // A lock and a channel send: cheaper than giving up the GIL.
        self.with(|h| match h.send(sid, wire::DECISIONS, payload) {
            Ok(()) => 0,
            Err(SendError::Gone) => -1,
            Err(SendError::Full(n)) => i64::try_from(n).unwrap_or(i64::MAX),
        })
    }

    /// Ends session `sid`, telling its agent `why` in an ERROR frame if `tell`.
    fn close(&self, py: Python<'_>, sid: u64, why: &str, tell: bool) -> PyResult<()> {
        py.allow_threads(|| self.with(|h| h.close(sid, why, tell)))
    }

    /// Tells every agent `why` and stops; waits at most `grace` seconds.
    #[pyo3(signature = (why = "master stopping", grace = 1.0))]
    fn stop(&self, py: Python<'_>, why: &str, grace: f64) {
        let hub = self.inner.write().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(mut h) = hub {
            let grace = Duration::from_secs_f64(grace.clamp(0.0, 60.0));
            py.allow_threads(move || h.stop(why, grace));
        }
    }

    /// Sessions open, handshaking ones included.
    #[getter]
    fn open_sessions(&self) -> PyResult<usize> {
        self.with(|h| h.open_sessions())
    }

    /// Counters since it started, and the gauges `events_pending` and
    /// `event_items_pending` (received, not yet polled).
    fn metrics<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        self.with(|h| {
            let m = h.metrics();
            let get = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed);
            for (k, v) in [
                ("accepted_connections", get(&m.accepted)),
                ("refused_connections", get(&m.refused)),
                ("accept_errors", get(&m.accept_errors)),
                ("rejected_sessions", get(&m.rejected)),
                ("reports", get(&m.reports)),
                ("empty_reports", get(&m.empty_reports)),
                ("heartbeats_sent", get(&m.heartbeats_sent)),
            ] {
                d.set_item(k, v)?;
            }
            let (events, items) = h.pending();
            d.set_item("events_pending", events)?;
            d.set_item("event_items_pending", items)?;
            Ok::<_, PyErr>(())
        })??;
        Ok(d)
    }
}

fn event_tuple(py: Python<'_>, e: Event) -> PyResult<Bound<'_, PyTuple>> {
    match e {
        Event::Hello {
            sid,
            peer,
            hello,
            cert_ips,
        } => {
            let addrs: Vec<String> = hello.addrs.iter().map(ip).collect();
            let ips: Vec<String> = cert_ips.iter().map(ip).collect();
            PyTuple::new(
                py,
                [
                    "hello".into_bound_py_any(py)?,
                    sid.into_bound_py_any(py)?,
                    peer.into_bound_py_any(py)?,
                    hello.host.into_bound_py_any(py)?,
                    addrs.into_bound_py_any(py)?,
                    hello.name.into_bound_py_any(py)?,
                    PyBytes::new(py, &hello.boot_id).into_any(),
                    hello.interval_ms.into_bound_py_any(py)?,
                    ips.into_bound_py_any(py)?,
                ],
            )
        }
        Event::Report { sid, report } => {
            let new: Vec<(u32, u16, String, u16, f64, u64)> = report
                .new
                .iter()
                .map(|f| (f.fid, f.sport, ip(&f.dst), f.dport, f.first_seen, f.sent))
                .collect();
            PyTuple::new(
                py,
                [
                    "report".into_bound_py_any(py)?,
                    sid.into_bound_py_any(py)?,
                    report.time.into_bound_py_any(py)?,
                    new.into_bound_py_any(py)?,
                    report.updated.into_bound_py_any(py)?,
                    report.gone.into_bound_py_any(py)?,
                ],
            )
        }
        Event::Updates { items } => {
            let sids: Vec<u64> = items.iter().map(|x| x.0).collect();
            let fids: Vec<u32> = items.iter().map(|x| x.1).collect();
            let bytes: Vec<u64> = items.iter().map(|x| x.2).collect();
            PyTuple::new(
                py,
                [
                    "updates".into_bound_py_any(py)?,
                    sids.into_bound_py_any(py)?,
                    fids.into_bound_py_any(py)?,
                    bytes.into_bound_py_any(py)?,
                ],
            )
        }
        Event::Closed {
            sid,
            peer,
            why,
            rejected,
        } => PyTuple::new(
            py,
            [
                "closed".into_bound_py_any(py)?,
                sid.into_bound_py_any(py)?,
                peer.into_bound_py_any(py)?,
                why.into_bound_py_any(py)?,
                rejected.into_bound_py_any(py)?,
            ],
        ),
    }
}

/// One host's decisions: `(host, [(fid, kind, value)])`.
type HostDecisions = (u32, Vec<(u32, u8, f64)>);

/// The master's record of what agents were told, and the per-flow half of a
/// round (coflowkit-runtime's `enforce`): room for paused flows' trickles,
/// classes, hysteresis, decisions grouped by host.
#[pyclass(module = "coflowkit._core")]
pub struct Enforcer {
    inner: std::sync::Mutex<coflowkit_runtime::enforce::Enforcer>,
}

impl Enforcer {
    fn e(&self) -> std::sync::MutexGuard<'_, coflowkit_runtime::enforce::Enforcer> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[pymethods]
impl Enforcer {
    #[new]
    fn new(hosts: u32, capacity: f64, hysteresis: f64, classes: bool, paused_floor: f64) -> Self {
        Enforcer {
            inner: std::sync::Mutex::new(coflowkit_runtime::enforce::Enforcer::new(
                hosts,
                capacity,
                hysteresis,
                classes,
                paused_floor,
            )),
        }
    }

    /// Slot `slot` is flow `fid` of host `host`'s agent, from `src` to `dst`.
    fn own(&self, slot: u64, host: u32, fid: u32, src: u32, dst: u32) {
        self.e().own(slot, host, fid, src, dst);
    }

    fn release(&self, slot: u64) {
        self.e().release(slot);
    }

    fn unpush(&self, slots: Vec<u64>) {
        self.e().unpush(&slots);
    }

    fn set_up(&self, host: u32, up: bool) {
        self.e().set_up(host, up);
    }

    fn enforced(&self, slot: u64) -> bool {
        self.e().enforced(slot)
    }

    /// `[(host, [(fid, kind, value)])]`: what to send after this decision.
    fn round(
        &self,
        py: Python<'_>,
        flows: Vec<u64>,
        rates: Vec<f64>,
        classes: Vec<i32>,
        trickles: bool,
    ) -> PyResult<Vec<HostDecisions>> {
        if rates.len() != flows.len() || classes.len() != flows.len() {
            return Err(CoflowkitError::new_err(
                "round: flows, rates and classes differ in length",
            ));
        }
        let out = py.allow_threads(|| self.e().round(&flows, &rates, &classes, trickles));
        Ok(out
            .into_iter()
            .map(|(h, d)| (h, d.into_iter().map(|d| (d.fid, d.kind, d.value)).collect()))
            .collect())
    }

    /// The last round's flows: `([slot], [rate], [class], [enforced])`.
    #[allow(clippy::type_complexity)]
    fn last(&self) -> (Vec<u64>, Vec<f64>, Vec<i32>, Vec<bool>) {
        let e = self.e();
        let last = e.last();
        (
            last.iter().map(|x| x.0).collect(),
            last.iter().map(|x| x.1).collect(),
            last.iter().map(|x| x.2).collect(),
            last.iter().map(|x| e.enforced(x.0)).collect(),
        )
    }

    #[getter]
    fn owned(&self) -> usize {
        self.e().owned()
    }
}

/// Emulated agents (coflowkit-runtime's `swarm`) for `coflowkit testbed
/// emulate`: real TLS sessions reporting every Δ, bytes moving at the master's
/// rates; the caller gives them flows and learns which coflows ended.
#[pyclass(module = "coflowkit._core")]
pub struct AgentSwarm {
    inner: std::sync::Mutex<coflowkit_runtime::swarm::Swarm>,
}

#[pymethods]
impl AgentSwarm {
    /// `hosts[i]` binds and announces `addrs[i]`; certificates in `tls_dir`.
    #[new]
    #[pyo3(signature = (master_host, master_port, tls_dir, hosts, addrs, interval_s, workers = 1, connecting = 256))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        master_host: &str,
        master_port: u16,
        tls_dir: &str,
        hosts: Vec<u32>,
        addrs: Vec<String>,
        interval_s: f64,
        workers: usize,
        connecting: usize,
    ) -> PyResult<Self> {
        let master = resolve(master_host, master_port)?;
        if hosts.len() != addrs.len() {
            return Err(CoflowkitError::new_err("swarm: one address per host"));
        }
        let hosts = hosts
            .into_iter()
            .zip(addrs)
            .map(|(h, a)| {
                a.parse::<Ipv4Addr>()
                    .map(|a| (h, a.octets()))
                    .map_err(|_| CoflowkitError::new_err(format!("not an IPv4 address: {a:?}")))
            })
            .collect::<PyResult<Vec<_>>>()?;
        let cfg = coflowkit_runtime::swarm::SwarmConfig {
            master,
            tls_dir: tls_dir.into(),
            hosts,
            interval: duration(interval_s, "interval")?,
            workers,
            connecting,
        };
        let s = py
            .allow_threads(|| coflowkit_runtime::swarm::Swarm::start(cfg))
            .map_err(CoflowkitError::new_err)?;
        Ok(AgentSwarm {
            inner: std::sync::Mutex::new(s),
        })
    }

    /// Host `host` starts flows `(fid, sport, dst, dport, size, sent, coflow)`.
    fn start_flows(
        &self,
        host: u32,
        flows: Vec<(u32, u16, String, u16, f64, f64, u64)>,
    ) -> PyResult<()> {
        let flows = flows
            .into_iter()
            .map(|(fid, sport, dst, dport, size, sent, coflow)| {
                let dst = dst
                    .parse::<Ipv4Addr>()
                    .map_err(|_| CoflowkitError::new_err(format!("not an IPv4 address: {dst:?}")))?
                    .octets();
                Ok(coflowkit_runtime::swarm::EmuFlow {
                    fid,
                    sport,
                    dst,
                    dport,
                    size,
                    sent,
                    coflow,
                })
            })
            .collect::<PyResult<Vec<_>>>()?;
        let s = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        s.start_flows(host, flows).map_err(CoflowkitError::new_err)
    }

    /// Coflows whose every flow ended since the last call.
    fn finished(&self) -> Vec<u64> {
        self.inner
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .finished()
    }

    /// Counters: connected, failed, disconnected, reports, decisions,
    /// active_flows, flows_done and bytes_done (ends reported), churned and
    /// reconnected sessions.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let s = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let st = s.stats();
        let d = PyDict::new(py);
        d.set_item("connected", st.connected.load(Ordering::Relaxed))?;
        d.set_item("failed", st.failed.load(Ordering::Relaxed))?;
        d.set_item("disconnected", st.disconnected.load(Ordering::Relaxed))?;
        d.set_item("reports", st.reports.load(Ordering::Relaxed))?;
        d.set_item("decisions", st.decisions.load(Ordering::Relaxed))?;
        d.set_item("active_flows", st.active_flows.load(Ordering::Relaxed))?;
        d.set_item("flows_done", st.flows_done.load(Ordering::Relaxed))?;
        d.set_item("bytes_done", st.bytes_done.load(Ordering::Relaxed))?;
        d.set_item("churned", st.churned.load(Ordering::Relaxed))?;
        d.set_item("reconnected", st.reconnected.load(Ordering::Relaxed))?;
        d.set_item("first_error", s.first_error())?;
        Ok(d)
    }

    /// `hosts` leave at their next Δ and reconnect `away_s` seconds later.
    fn churn(&self, hosts: Vec<u32>, away_s: f64) -> PyResult<()> {
        let away = duration(away_s, "away_s")?;
        self.inner
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .churn(&hosts, away)
            .map_err(CoflowkitError::new_err)
    }

    /// Stops (True) or resumes every agent's reports.
    fn pause(&self, paused: bool) {
        self.inner
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pause(paused);
    }

    fn stop(&self, py: Python<'_>) {
        py.allow_threads(|| self.inner.lock().unwrap_or_else(|e| e.into_inner()).stop());
    }
}
