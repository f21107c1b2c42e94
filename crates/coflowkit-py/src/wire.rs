//! The protocol's frames and payloads (coflowkit-runtime's `wire`), for
//! `coflowkit.runtime.proto`: conversions only.

use crate::ProtocolError;
use coflowkit_runtime::peer;
use coflowkit_runtime::wire::{self, Decision, Hello, NewFlow, Report, WireError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::net::Ipv4Addr;
use std::sync::Mutex;

fn perr(e: WireError) -> PyErr {
    ProtocolError::new_err(e.0)
}

fn ip(a: &[u8; 4]) -> String {
    Ipv4Addr::from(*a).to_string()
}

fn parse_ip(s: &str) -> PyResult<[u8; 4]> {
    s.parse::<Ipv4Addr>()
        .map(|a| a.octets())
        .map_err(|_| ProtocolError::new_err(format!("not an IPv4 address: {s:?}")))
}

/// Cuts a byte stream into checked frames (see the module doc of
/// `coflowkit-runtime/src/wire.rs`). Holds at most one partial frame.
#[pyclass(module = "coflowkit._core")]
pub struct FrameReader {
    inner: Mutex<wire::FrameReader>,
}

impl FrameReader {
    fn r(&self) -> std::sync::MutexGuard<'_, wire::FrameReader> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[pymethods]
impl FrameReader {
    /// Frames of at most `limit` bytes (`first_limit` for the first one), of
    /// the types in `accept`.
    #[new]
    fn new(first_limit: u32, limit: u32, accept: Vec<u8>) -> Self {
        FrameReader {
            inner: Mutex::new(wire::FrameReader::with_first(first_limit, limit, &accept)),
        }
    }

    /// The frames `data` completes, `[(type, payload)]`; raises ProtocolError
    /// on the first bad one (the session must then end).
    fn feed(&self, py: Python<'_>, data: &[u8]) -> PyResult<Vec<(u8, Py<PyBytes>)>> {
        let frames = self.r().feed(data).map_err(perr)?;
        Ok(frames
            .into_iter()
            .map(|(t, p)| (t, PyBytes::new(py, &p).unbind()))
            .collect())
    }

    #[getter]
    fn limit(&self) -> u32 {
        self.r().limit()
    }

    /// Bytes held of an incomplete frame.
    #[getter]
    fn pending(&self) -> usize {
        self.r().pending()
    }

    #[getter]
    fn received(&self) -> u64 {
        self.r().received()
    }
}

#[pyfunction]
pub fn encode_frame(py: Python<'_>, mtype: u8, seq: u64, payload: &[u8]) -> PyResult<Py<PyBytes>> {
    let f = wire::encode_frame(mtype, seq, payload).map_err(perr)?;
    Ok(PyBytes::new(py, &f).unbind())
}

type HelloTuple = (u16, u32, Py<PyBytes>, Vec<String>, String);

#[pyfunction]
pub fn decode_hello(py: Python<'_>, p: &[u8]) -> PyResult<HelloTuple> {
    let h = Hello::decode(p).map_err(perr)?;
    Ok((
        h.host,
        h.interval_ms,
        PyBytes::new(py, &h.boot_id).unbind(),
        h.addrs.iter().map(ip).collect(),
        h.name,
    ))
}

#[pyfunction]
pub fn encode_hello(
    py: Python<'_>,
    host: u16,
    interval_ms: u32,
    boot_id: &[u8],
    addrs: Vec<String>,
    name: &str,
) -> PyResult<Py<PyBytes>> {
    let boot_id: [u8; 16] = boot_id
        .try_into()
        .map_err(|_| ProtocolError::new_err("HELLO: a boot id is 16 bytes"))?;
    let addrs = addrs
        .iter()
        .map(|a| parse_ip(a))
        .collect::<PyResult<Vec<_>>>()?;
    let h = Hello {
        host,
        interval_ms,
        boot_id,
        addrs,
        name: name.to_string(),
    };
    Ok(PyBytes::new(py, &h.encode().map_err(perr)?).unbind())
}

type NewTuple = (u32, u16, String, u16, f64, u64);
type ReportTuple = (f64, Vec<NewTuple>, Vec<(u32, u64)>, Vec<(u32, u64)>);

#[pyfunction]
pub fn decode_report(py: Python<'_>, p: &[u8]) -> PyResult<ReportTuple> {
    let r = py.allow_threads(|| Report::decode(p)).map_err(perr)?;
    let new = r
        .new
        .iter()
        .map(|f| (f.fid, f.sport, ip(&f.dst), f.dport, f.first_seen, f.sent))
        .collect();
    Ok((r.time, new, r.updated, r.gone))
}

#[pyfunction]
pub fn encode_report(
    py: Python<'_>,
    time: f64,
    new: Vec<NewTuple>,
    updated: Vec<(u32, u64)>,
    gone: Vec<(u32, u64)>,
) -> PyResult<Py<PyBytes>> {
    let new = new
        .into_iter()
        .map(|(fid, sport, dst, dport, first_seen, sent)| {
            Ok(NewFlow {
                fid,
                sport,
                dst: parse_ip(&dst)?,
                dport,
                first_seen,
                sent,
            })
        })
        .collect::<PyResult<Vec<_>>>()?;
    let r = Report {
        time,
        new,
        updated,
        gone,
    };
    Ok(PyBytes::new(py, &r.encode()).unbind())
}

#[pyfunction]
pub fn decode_decisions(p: &[u8]) -> PyResult<Vec<(u32, u8, f64)>> {
    let d = wire::decode_decisions(p).map_err(perr)?;
    Ok(d.into_iter().map(|d| (d.fid, d.kind, d.value)).collect())
}

#[pyfunction]
pub fn encode_decisions(py: Python<'_>, items: Vec<(u32, u8, f64)>) -> Py<PyBytes> {
    let d: Vec<Decision> = items
        .into_iter()
        .map(|(fid, kind, value)| Decision { fid, kind, value })
        .collect();
    PyBytes::new(py, &wire::encode_decisions(&d)).unbind()
}

/// A CLASSES record: (src, sport, dst, dport, coflow, stage, class, x).
type ClassTuple = (String, u16, String, u16, u64, u32, u8, u64);
/// A UNITS record: (kind, coflow, stage, receiver, x).
type UnitTuple = (u8, u64, u32, String, u64);

/// CLASSES payload (coflowkit-runtime's `peer`) from `(src, sport, dst, dport,
/// coflow, stage, class, x)` tuples.
#[pyfunction]
pub fn encode_classes(py: Python<'_>, items: Vec<ClassTuple>) -> PyResult<Py<PyBytes>> {
    let mut recs = Vec::with_capacity(items.len());
    for (src, sport, dst, dport, coflow, stage, class, x) in items {
        recs.push(peer::ClassRecord {
            src: parse_ip(&src)?,
            sport,
            dst: parse_ip(&dst)?,
            dport,
            coflow,
            stage,
            class,
            x,
        });
    }
    Ok(PyBytes::new(py, &peer::encode_classes(&recs)).unbind())
}

#[pyfunction]
pub fn decode_classes(p: &[u8]) -> PyResult<Vec<ClassTuple>> {
    let r = peer::decode_classes(p).map_err(perr)?;
    Ok(r.into_iter()
        .map(|r| {
            (
                ip(&r.src),
                r.sport,
                ip(&r.dst),
                r.dport,
                r.coflow,
                r.stage,
                r.class,
                r.x,
            )
        })
        .collect())
}

/// UNITS payload from `(kind, coflow, stage, receiver, x)` tuples.
#[pyfunction]
pub fn encode_units(
    py: Python<'_>,
    items: Vec<(u8, u64, u32, String, u64)>,
) -> PyResult<Py<PyBytes>> {
    let mut recs = Vec::with_capacity(items.len());
    for (kind, coflow, stage, receiver, x) in items {
        recs.push(peer::UnitRecord {
            kind,
            coflow,
            stage,
            receiver: parse_ip(&receiver)?,
            x,
        });
    }
    Ok(PyBytes::new(py, &peer::encode_units(&recs)).unbind())
}

#[pyfunction]
pub fn decode_units(p: &[u8]) -> PyResult<Vec<UnitTuple>> {
    let r = peer::decode_units(p).map_err(perr)?;
    Ok(r.into_iter()
        .map(|r| (r.kind, r.coflow, r.stage, ip(&r.receiver), r.x))
        .collect())
}
