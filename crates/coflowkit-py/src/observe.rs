//! The agent's hot path: `parse_sock_diag` and `FlowTable` (coflowkit-runtime's
//! `sockdiag` and `observe`). Kernel errors come back as `(message, errno)` for
//! Python to word (it knows errno names); the caller raises `SockDiagError`.

use coflowkit_runtime::nlio::Poller;
use coflowkit_runtime::observe::{FlowTable as Table, Key, NewFlow};
use coflowkit_runtime::sockdiag::{self, DiagError};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::net::Ipv4Addr;
use std::sync::Mutex;

type DiagErr = Option<(String, Option<i32>)>;

fn err(e: DiagError) -> DiagErr {
    Some((e.message, e.errno))
}

/// (family, state, src (16 bytes), sport, dst (16 bytes), dport, acked, received, inode)
type ConnTuple = (u8, u8, Vec<u8>, u16, Vec<u8>, u16, u64, u64, u32);

/// Parses a sock_diag reply: `(sockets, saw NLMSG_DONE, error or None)`.
#[pyfunction]
#[pyo3(signature = (data, seq=None))]
pub fn parse_sock_diag(data: &[u8], seq: Option<u32>) -> (Vec<ConnTuple>, bool, DiagErr) {
    let mut out = Vec::new();
    let r = sockdiag::parse_each(data, seq, |c| {
        out.push((
            c.family,
            c.state,
            c.src.to_vec(),
            c.sport,
            c.dst.to_vec(),
            c.dport,
            c.bytes_acked,
            c.bytes_received,
            c.inode,
        ))
    });
    match r {
        Ok(done) => (out, done, None),
        Err(e) => (out, false, err(e)),
    }
}

type Match = (String, u16, String, u16);

fn tuple(k: &Key) -> Match {
    (
        Ipv4Addr::from(k.0).to_string(),
        k.1,
        Ipv4Addr::from(k.2).to_string(),
        k.3,
    )
}

/// (fid, sport, dst, dport, first_seen, sent)
type NewTuple = (u64, u16, String, u16, f64, u64);

fn new_tuple(f: &NewFlow) -> NewTuple {
    (
        f.fid,
        f.key.1,
        Ipv4Addr::from(f.key.2).to_string(),
        f.key.3,
        f.first_seen,
        f.sent,
    )
}

/// One host's TCP flows, diffed dump by dump (see coflowkit-runtime `observe`).
#[pyclass(module = "coflowkit._core")]
pub struct FlowTable {
    inner: Mutex<Table>,
    poller: Mutex<Poller>,
}

impl FlowTable {
    fn table(&self) -> std::sync::MutexGuard<'_, Table> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// What [`FlowTable::poll`] returns: the REPORT payload, whether anything
/// changed, the flows gone `(fid, bytes)`, and the error if the round failed.
type Polled = (Py<PyBytes>, bool, Vec<(u64, u64)>, DiagErr);

#[pymethods]
impl FlowTable {
    /// `addrs`: the host's IPv4 addresses; `threshold`: bytes acknowledged before a
    /// connection is a flow; `states`: the TCP states (1..11) that count as open.
    #[new]
    fn new(addrs: Vec<String>, threshold: u64, states: Vec<u8>) -> PyResult<Self> {
        let mut a = Vec::new();
        for s in &addrs {
            let ip: Ipv4Addr = s
                .parse()
                .map_err(|_| PyValueError::new_err(format!("not an IPv4 address: {s:?}")))?;
            a.push(ip.octets());
        }
        let mut mask = 0u32;
        for &s in &states {
            if !(1..=11).contains(&s) {
                return Err(PyValueError::new_err(format!(
                    "not a TCP state number: {s} (expected 1..11)"
                )));
            }
            mask |= 1 << s;
        }
        Ok(FlowTable {
            inner: Mutex::new(Table::new(a, threshold, mask)),
            poller: Mutex::new(Poller::new()),
        })
    }

    fn __len__(&self) -> usize {
        self.table().len()
    }

    /// Starts a round (dropping what an unfinished one fed).
    fn begin(&self) {
        self.table().begin()
    }

    /// One reply datagram: `(saw NLMSG_DONE, error or None)`.
    #[pyo3(signature = (data, seq=None))]
    fn feed(&self, data: &[u8], seq: Option<u32>) -> (bool, DiagErr) {
        match self.table().feed(data, seq) {
            Ok(done) => (done, None),
            Err(e) => (false, err(e)),
        }
    }

    /// Applies the round: `(new, updated, gone)`; new flows are
    /// `(fid, sport, dst, dport, first_seen, sent)`, the others `(fid, bytes)`.
    #[allow(clippy::type_complexity)]
    fn end(&self, now: f64) -> (Vec<NewTuple>, Vec<(u64, u64)>, Vec<(u64, u64)>) {
        let c = self.table().end(now);
        (c.new.iter().map(new_tuple).collect(), c.updated, c.gone)
    }

    /// One whole observation round on the bound `NETLINK_SOCK_DIAG` socket
    /// `fd`, with netlink sequence number `seq`: a dump (`full`) or exact
    /// lookups of the tracked flows (which find no new flow). Returns the round's REPORT
    /// payload at time `now`, whether anything changed, and the gone flows; a
    /// failed round changes nothing and returns its error (the socket must
    /// then be closed: part of a reply may still be queued on it).
    fn poll(&self, py: Python<'_>, fd: i32, seq: u32, full: bool, now: f64) -> Polled {
        let r = py.allow_threads(|| {
            let mut table = self.table();
            let mut poller = self.poller.lock().unwrap_or_else(|e| e.into_inner());
            let io = if full {
                table.begin();
                poller.dump(fd, &mut table, seq)
            } else {
                table.begin_lookups();
                poller.lookup(fd, &mut table, seq)
            };
            io.map(|()| table.end(now))
        });
        match r {
            Ok(c) => (
                PyBytes::new(py, &c.encode(now)).unbind(),
                !c.is_empty(),
                c.gone,
                None,
            ),
            Err(e) => (PyBytes::new(py, b"").unbind(), false, Vec::new(), err(e)),
        }
    }

    /// Every tracked flow as new (a session's first report), in id order.
    fn everything(&self) -> Vec<NewTuple> {
        self.table().everything().iter().map(new_tuple).collect()
    }

    /// `(src, sport, dst, dport)` of flow `fid`, or None if it is not tracked.
    fn match_of(&self, fid: u64) -> Option<Match> {
        self.table().key_of(fid).as_ref().map(tuple)
    }

    /// `{fid: (src, sport, dst, dport)}` of every tracked flow.
    fn matches(&self) -> std::collections::BTreeMap<u64, Match> {
        self.table()
            .matches()
            .iter()
            .map(|(f, k)| (*f, tuple(k)))
            .collect()
    }
}
