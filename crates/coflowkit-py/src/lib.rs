//! `coflowkit._core`: the thin PyO3 layer. Conversions, GIL release and error
//! mapping only; everything pleasant lives in the Python package.

mod hub;
mod ident;
mod live;
mod observe;
mod stream;
mod wire;

use coflowkit_model::{Fabric, ModelError, Workload as RsWorkload};
use coflowkit_trace::{FlowColumns, Format};
use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::collections::BTreeMap;

create_exception!(
    _core,
    CoflowkitError,
    PyValueError,
    "Bad input: a trace, a parameter or an option."
);
create_exception!(
    _core,
    ProtocolError,
    CoflowkitError,
    "A frame that is malformed, out of sequence, over its size limit or of another version."
);
create_exception!(
    _core,
    SimulationError,
    PyRuntimeError,
    "A simulation that could not complete."
);

fn model_err(e: ModelError) -> PyErr {
    CoflowkitError::new_err(e.to_string())
}

fn format_of(format: Option<&str>) -> PyResult<Option<Format>> {
    format
        .filter(|f| !f.is_empty() && *f != "auto")
        .map(Format::parse)
        .transpose()
        .map_err(model_err)
}

/// A validated workload (coflows sorted by arrival, then id).
#[pyclass(module = "coflowkit._core", frozen)]
struct Workload {
    inner: RsWorkload,
}

#[pymethods]
impl Workload {
    #[getter]
    fn source(&self) -> String {
        self.inner.source.clone()
    }
    #[getter]
    fn num_coflows(&self) -> usize {
        self.inner.coflows.len()
    }
    #[getter]
    fn num_flows(&self) -> usize {
        self.inner.flows.len()
    }
    #[getter]
    fn ports(&self) -> u32 {
        self.inner.fabric.ports()
    }
    #[getter]
    fn fabric(&self) -> String {
        self.inner.fabric.describe()
    }

    /// The same workload on another fabric, e.g. `bigswitch:gbps=10`.
    fn with_fabric(&self, spec: &str) -> PyResult<Workload> {
        let fabric = Fabric::from_spec(spec, self.inner.fabric.ports()).map_err(model_err)?;
        Ok(Workload {
            inner: self.inner.with_fabric(fabric).map_err(model_err)?,
        })
    }

    /// The same workload where coflows misreport their demands (Coflex, HUG):
    /// `{coflow_id: {link_name: value}}`, e.g. `{7: {"up0": 1.0, "down3": 1.0}}`.
    /// Values are scaled so the largest is 1; every link the coflow uses needs a
    /// positive value.
    fn with_reports(&self, reports: BTreeMap<u64, BTreeMap<String, f64>>) -> PyResult<Workload> {
        let fab = &self.inner.fabric;
        let mut given = Vec::with_capacity(reports.len());
        for (id, links) in reports {
            let mut v = Vec::with_capacity(links.len());
            for (name, x) in links {
                let l = fab.link_by_name(&name).ok_or_else(|| {
                    CoflowkitError::new_err(format!(
                        "reports: coflow {id}: '{name}' is not a link of {} (links are up0..up{p1} and down0..down{p1})",
                        fab.describe(),
                        p1 = fab.ports().saturating_sub(1)
                    ))
                })?;
                v.push((l, x));
            }
            given.push((id, v));
        }
        Ok(Workload {
            inner: self.inner.with_reports(&given).map_err(model_err)?,
        })
    }

    /// The first `n` coflows by arrival, with their flows.
    fn head(&self, n: usize) -> PyResult<Workload> {
        if n == 0 {
            return Err(CoflowkitError::new_err("head: n must be at least 1"));
        }
        Ok(Workload {
            inner: self.inner.head(n),
        })
    }

    /// Per-coflow static columns: id, arrival_s, weight, width, length_bytes,
    /// size_bytes, isolated_s.
    fn coflow_columns<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let w = &self.inner;
        let d = PyDict::new(py);
        d.set_item(
            "coflow_id",
            w.coflows.iter().map(|c| c.id).collect::<Vec<_>>(),
        )?;
        d.set_item(
            "arrival_s",
            w.coflows.iter().map(|c| c.arrival_s).collect::<Vec<_>>(),
        )?;
        d.set_item(
            "weight",
            w.coflows.iter().map(|c| c.weight).collect::<Vec<_>>(),
        )?;
        d.set_item(
            "width",
            w.coflows.iter().map(|c| c.width).collect::<Vec<_>>(),
        )?;
        d.set_item(
            "length_bytes",
            w.coflows.iter().map(|c| c.length_bytes).collect::<Vec<_>>(),
        )?;
        d.set_item(
            "size_bytes",
            w.coflows.iter().map(|c| c.size_bytes).collect::<Vec<_>>(),
        )?;
        let iso: Vec<f64> =
            py.allow_threads(|| (0..w.coflows.len()).map(|k| w.isolated_cct(k)).collect());
        d.set_item("isolated_s", iso)?;
        Ok(d)
    }

    /// Per-flow columns in global order: coflow_id, flow_id, index, src, dst, bytes,
    /// start_s, arrival_s and weight (of the flow's coflow), src_port, dst_port and
    /// tenant, stage and priority (None where absent), depends_on (the flow ids each flow waits for): all
    /// that `workload_from_columns` needs to rebuild the workload.
    fn flow_columns<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let w = &self.inner;
        let d = PyDict::new(py);
        d.set_item(
            "coflow_id",
            w.flows
                .iter()
                .map(|f| w.coflows[f.coflow as usize].id)
                .collect::<Vec<_>>(),
        )?;
        d.set_item("flow_id", w.flows.iter().map(|f| f.id).collect::<Vec<_>>())?;
        d.set_item("index", w.flows.iter().map(|f| f.index).collect::<Vec<_>>())?;
        d.set_item("src", w.flows.iter().map(|f| f.src).collect::<Vec<_>>())?;
        d.set_item("dst", w.flows.iter().map(|f| f.dst).collect::<Vec<_>>())?;
        d.set_item(
            "bytes",
            w.flows.iter().map(|f| f.size_bytes).collect::<Vec<_>>(),
        )?;
        d.set_item(
            "start_s",
            w.flows.iter().map(|f| f.start_s).collect::<Vec<_>>(),
        )?;
        let meta = |f: &dyn Fn(&coflowkit_model::FlowMeta) -> Option<u32>| -> Vec<Option<u32>> {
            if w.meta.is_empty() {
                vec![None; w.flows.len()]
            } else {
                w.meta.iter().map(f).collect()
            }
        };
        d.set_item(
            "arrival_s",
            w.flows
                .iter()
                .map(|f| w.coflows[f.coflow as usize].arrival_s)
                .collect::<Vec<_>>(),
        )?;
        d.set_item(
            "weight",
            w.flows
                .iter()
                .map(|f| w.coflows[f.coflow as usize].weight)
                .collect::<Vec<_>>(),
        )?;
        d.set_item("src_port", meta(&|m| m.src_port))?;
        d.set_item("dst_port", meta(&|m| m.dst_port))?;
        let tenant: Vec<Option<String>> = if w.meta.is_empty() {
            vec![None; w.flows.len()]
        } else {
            w.meta.iter().map(|m| m.tenant.clone()).collect()
        };
        d.set_item("tenant", tenant)?;
        d.set_item("stage", meta(&|m| m.stage))?;
        d.set_item("priority", meta(&|m| m.priority))?;
        d.set_item(
            "depends_on",
            w.flows
                .iter()
                .map(|f| {
                    f.deps
                        .iter()
                        .map(|&g| w.flows[g as usize].id)
                        .collect::<Vec<u64>>()
                })
                .collect::<Vec<_>>(),
        )?;
        Ok(d)
    }

    /// The workload as text in `format` (benchmark, sincronia or flows).
    fn to_text(&self, format: &str) -> PyResult<String> {
        let f = Format::parse(format).map_err(model_err)?;
        coflowkit_trace::write_text(&self.inner, f).map_err(model_err)
    }

    fn __repr__(&self) -> String {
        format!(
            "Workload({} coflows, {} flows, {}, source={:?})",
            self.inner.coflows.len(),
            self.inner.flows.len(),
            self.inner.fabric.describe(),
            self.inner.source
        )
    }
}

/// Reads a text trace (benchmark, sincronia or CSV flow table).
#[pyfunction]
#[pyo3(signature = (path, format=None))]
fn read_trace(py: Python<'_>, path: &str, format: Option<&str>) -> PyResult<Workload> {
    let f = format_of(format)?;
    let w = py
        .allow_threads(|| coflowkit_trace::read_path(path, f))
        .map_err(model_err)?;
    Ok(Workload { inner: w })
}

/// Parses a text trace held in memory.
#[pyfunction]
#[pyo3(signature = (source, text, format=None))]
fn parse_trace(
    py: Python<'_>,
    source: &str,
    text: &str,
    format: Option<&str>,
) -> PyResult<Workload> {
    let f = format_of(format)?;
    let w = py
        .allow_threads(|| coflowkit_trace::read_text(source, text, f))
        .map_err(model_err)?;
    Ok(Workload { inner: w })
}

/// Builds a workload from flow-table columns (the Parquet path). Optional columns
/// may be `None`; `rows` are the 1-based row numbers used in messages.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
#[pyo3(signature = (source, coflow_id, flow_id, src, dst, bytes, start_s, arrival_s=None, weight=None, src_port=None, dst_port=None, tenant=None, depends_on=None, stage=None, priority=None))]
fn workload_from_columns(
    py: Python<'_>,
    source: &str,
    coflow_id: Vec<u64>,
    flow_id: Vec<u64>,
    src: Vec<i64>,
    dst: Vec<i64>,
    bytes: Vec<f64>,
    start_s: Vec<f64>,
    arrival_s: Option<Vec<Option<f64>>>,
    weight: Option<Vec<Option<f64>>>,
    src_port: Option<Vec<Option<u32>>>,
    dst_port: Option<Vec<Option<u32>>>,
    tenant: Option<Vec<Option<String>>>,
    depends_on: Option<Vec<Vec<u64>>>,
    stage: Option<Vec<Option<u32>>>,
    priority: Option<Vec<Option<u32>>>,
) -> PyResult<Workload> {
    let n = flow_id.len();
    let cols = FlowColumns {
        coflow_id,
        flow_id,
        src,
        dst,
        bytes,
        start_s,
        arrival_s: arrival_s.unwrap_or_default(),
        weight: weight.unwrap_or_default(),
        src_port: src_port.unwrap_or_default(),
        dst_port: dst_port.unwrap_or_default(),
        tenant: tenant.unwrap_or_default(),
        stage: stage.unwrap_or_default(),
        priority: priority.unwrap_or_default(),
        depends_on: depends_on.unwrap_or_default(),
        rows: (1..=n).collect(),
        ports: None,
        rows_are_table_rows: true,
    };
    let w = py.allow_threads(|| cols.build(source)).map_err(model_err)?;
    Ok(Workload { inner: w })
}

/// The synthetic Facebook-like workload (`--synthetic fb`).
#[pyfunction]
#[pyo3(signature = (seed=0))]
fn synthetic_fb(py: Python<'_>, seed: u64) -> PyResult<Workload> {
    let w = py
        .allow_threads(|| coflowkit_trace::synthetic::synthetic_fb(seed))
        .map_err(model_err)?;
    Ok(Workload { inner: w })
}

/// The policy catalogue, one dict per policy in catalogue order: name, info,
/// knows, summary, rule, paper, params [(name, default, help)], example_ccts.
#[pyfunction]
fn policies(py: Python<'_>) -> PyResult<Vec<Bound<'_, PyDict>>> {
    coflowkit_policy::REGISTRY
        .iter()
        .map(|s| {
            let d = PyDict::new(py);
            d.set_item("name", s.name)?;
            d.set_item("info", s.info.name())?;
            d.set_item("knows", s.knows)?;
            d.set_item("summary", s.summary)?;
            d.set_item("rule", s.rule)?;
            d.set_item("paper", s.paper)?;
            let params: Vec<(&str, &str, &str)> = s
                .params
                .iter()
                .map(|p| (p.name, p.default, p.help))
                .collect();
            d.set_item("params", params)?;
            d.set_item("example_ccts", s.example_ccts.to_vec())?;
            Ok(d)
        })
        .collect()
}

/// Takes the engine's own parameters `realloc` and `decision_s` (accepted with
/// every policy) out of a policy's parameters.
fn split_realloc(
    mut params: BTreeMap<String, String>,
) -> PyResult<(BTreeMap<String, String>, coflowkit_sim::Realloc)> {
    let realloc = match params.remove("realloc") {
        None => coflowkit_sim::Realloc::Event,
        Some(v) => coflowkit_sim::Realloc::parse(&v).map_err(CoflowkitError::new_err)?,
    };
    let realloc = match params.remove("decision_s") {
        None => realloc,
        Some(v) => realloc
            .with_decision_s(&v)
            .map_err(CoflowkitError::new_err)?,
    };
    Ok((params, realloc))
}

/// Checks a policy name and its parameters without running anything.
#[pyfunction]
fn check_policy(policy: &str, params: BTreeMap<String, String>) -> PyResult<()> {
    let (params, _) = split_realloc(params)?;
    coflowkit_policy::build(policy, &params)
        .map(|_| ())
        .map_err(model_err)
}

/// The policies `--engine coflowsim` runs as CoflowSim's own schedulers (every
/// other registry policy but `coda` runs on its hooks).
#[pyfunction]
fn coflowsim_policies() -> Vec<&'static str> {
    coflowkit_sim::coflowsim::Scheduler::POLICIES.to_vec()
}

/// Fails unless `policy` with `params` runs under `--engine coflowsim`.
#[pyfunction]
#[pyo3(signature = (policy, params=BTreeMap::new()))]
fn check_coflowsim_policy(policy: &str, params: BTreeMap<String, String>) -> PyResult<()> {
    coflowkit_sim::coflowsim::CsPolicy::resolve(policy, &params)
        .map(|_| ())
        .map_err(|e| CoflowkitError::new_err(e.message))
}

/// Replays `workload` as CoflowSim would (`--engine coflowsim`); times in
/// CoflowSim units (1/1024 s). A policy CoflowSim has runs as its scheduler (no
/// parameters); any other runs on its admission and departure hooks.
#[pyfunction]
#[pyo3(signature = (workload, policy, params=BTreeMap::new(), epoch_units=10240))]
fn simulate_coflowsim<'py>(
    py: Python<'py>,
    workload: &Workload,
    policy: &str,
    params: BTreeMap<String, String>,
    epoch_units: i64,
) -> PyResult<Bound<'py, PyDict>> {
    use coflowkit_sim::coflowsim::{simulate_coflowsim_with as run, CsOptions, CsPolicy};
    let cs = CsPolicy::resolve(policy, &params).map_err(|e| CoflowkitError::new_err(e.message))?;
    let scheduler = cs.scheduler_name();
    let w = &workload.inner;
    let r = py
        .allow_threads(move || run(w, cs, &CsOptions { epoch_units }))
        .map_err(|e| SimulationError::new_err(format!("{policy}: {e}")))?;
    let d = PyDict::new(py);
    d.set_item("scheduler", scheduler)?;
    d.set_item("admitted_units", r.admitted_units)?;
    d.set_item("finish_units", r.finish_units)?;
    d.set_item("duration_units", r.duration_units)?;
    d.set_item("steps", r.steps)?;
    d.set_item("event_steps", r.event_steps)?;
    d.set_item("recomputes", r.recomputes)?;
    d.set_item("complete", r.complete)?;
    Ok(d)
}

/// Runs one simulation with the GIL released. Returns a dict with per-coflow
/// `finish_s`, per-flow `flow_start_s`/`flow_finish_s`, and counters.
/// `record_interval_s` (None: nothing, 0: every event) records the instantaneous
/// metrics, returned as `series` (and `progress` rows with `record_coflows`);
/// `horizon_s` stops the run early (unfinished coflows get NaN).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
#[pyo3(signature = (workload, policy, params, check_invariants=false, progress=None, record_interval_s=None, record_coflows=false, horizon_s=None))]
fn simulate<'py>(
    py: Python<'py>,
    workload: &Workload,
    policy: &str,
    params: BTreeMap<String, String>,
    check_invariants: bool,
    progress: Option<PyObject>,
    record_interval_s: Option<f64>,
    record_coflows: bool,
    horizon_s: Option<f64>,
) -> PyResult<Bound<'py, PyDict>> {
    let (params, realloc) = split_realloc(params)?;
    let mut p = coflowkit_policy::build(policy, &params).map_err(model_err)?;
    let opts = sim_options(
        check_invariants,
        record_interval_s,
        record_coflows,
        horizon_s,
        realloc,
    )?;
    let w = &workload.inner;
    let r = py
        .allow_threads(|| match progress {
            Some(cb) => {
                let mut f = |done: usize, total: usize, now: f64| {
                    Python::with_gil(|py| {
                        let _ = cb.call1(py, (done, total, now));
                    })
                };
                coflowkit_sim::simulate(w, &mut p, &opts, Some(&mut f))
            }
            None => coflowkit_sim::simulate(w, &mut p, &opts, None),
        })
        .map_err(|e| SimulationError::new_err(format!("{policy}: {e}")))?;
    result_dict(py, w, r, record_coflows)
}

/// The engine's options from `simulate`'s arguments, checked.
fn sim_options(
    check_invariants: bool,
    record_interval_s: Option<f64>,
    record_coflows: bool,
    horizon_s: Option<f64>,
    realloc: coflowkit_sim::Realloc,
) -> PyResult<coflowkit_sim::SimOptions> {
    if let Some(x) = record_interval_s {
        if !(x.is_finite() && x >= 0.0) {
            return Err(CoflowkitError::new_err(format!(
                "record interval must be a number of seconds >= 0 (0: every event), got {x}"
            )));
        }
    }
    if let Some(h) = horizon_s {
        if h.is_nan() || h < 0.0 {
            return Err(CoflowkitError::new_err(format!(
                "horizon must be a time >= 0, got {h}"
            )));
        }
    }
    Ok(coflowkit_sim::SimOptions {
        check_invariants,
        record: record_interval_s.map(|interval_s| coflowkit_sim::Recording {
            interval_s,
            per_coflow: record_coflows,
        }),
        horizon_s: horizon_s.unwrap_or(f64::INFINITY),
        realloc,
        ..Default::default()
    })
}

/// `simulate`'s result as a dict (see its docs).
fn result_dict<'py>(
    py: Python<'py>,
    w: &coflowkit_model::Workload,
    r: coflowkit_sim::SimResult,
    record_coflows: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("finish_s", r.coflow_finish_s)?;
    d.set_item("flow_start_s", r.flow_start_s)?;
    d.set_item("flow_finish_s", r.flow_finish_s)?;
    d.set_item("events", r.events)?;
    d.set_item("policy_calls", r.policy_calls)?;
    d.set_item("checks", r.checks)?;
    d.set_item("active_flow_calls", r.active_flow_calls)?;
    d.set_item("rate_changes", r.rate_changes)?;
    d.set_item("complete", r.complete)?;
    // Labels and bindings by flow; -1 for a flow never seen (never served).
    let signed = |v: Vec<u32>| -> Vec<i64> {
        v.into_iter()
            .map(|x| if x == u32::MAX { -1 } else { x as i64 })
            .collect()
    };
    if let Some(l) = r.flow_labels {
        d.set_item("flow_labels", signed(l))?;
    }
    if let Some(b) = r.flow_bindings {
        d.set_item("flow_bindings", signed(b))?;
    }
    if !r.flow_columns.is_empty() {
        let cols = PyDict::new(py);
        for (name, v) in r.flow_columns {
            cols.set_item(name, v)?;
        }
        d.set_item("flow_columns", cols)?;
    }
    if let Some(s) = r.series {
        let t = PyDict::new(py);
        t.set_item("time_s", s.time_s)?;
        t.set_item("active_coflows", s.active_coflows)?;
        t.set_item("min_progress", s.min_progress)?;
        t.set_item("mean_progress", s.mean_progress)?;
        t.set_item("max_progress", s.max_progress)?;
        t.set_item("disparity", s.disparity)?;
        t.set_item("utilization", s.utilization)?;
        d.set_item("series", t)?;
        if record_coflows {
            let ids: Vec<u64> = s
                .row_coflow
                .iter()
                .map(|&k| w.coflows[k as usize].id)
                .collect();
            let rows = PyDict::new(py);
            rows.set_item("sample", s.row_sample)?;
            rows.set_item("coflow_id", ids)?;
            rows.set_item("progress", s.row_progress)?;
            d.set_item("progress", rows)?;
        }
    }
    Ok(d)
}

/// The labels a built-in labelling source of `coda` gives every flow of
/// `workload`, in global flow order (`labels`: truth, pioneers, stragglers, random,
/// alone, one).
#[pyfunction]
#[pyo3(signature = (workload, labels, error_rate=0.05, seed=1))]
fn coda_labels(
    workload: &Workload,
    labels: &str,
    error_rate: f64,
    seed: u64,
) -> PyResult<Vec<u32>> {
    if !(0.0..=1.0).contains(&error_rate) {
        return Err(CoflowkitError::new_err(format!(
            "error_rate={error_rate} is not a number in [0, 1]"
        )));
    }
    let source = coflowkit_policy::labels::LabelSource::parse(labels, error_rate, seed)
        .map_err(model_err)?;
    let w = &workload.inner;
    let fc: Vec<u32> = w.flows.iter().map(|f| f.coflow).collect();
    Ok(coflowkit_policy::labels::static_labels(
        &source,
        &fc,
        w.coflows.len() as u32,
    ))
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Workload>()?;
    m.add_function(wrap_pyfunction!(read_trace, m)?)?;
    m.add_function(wrap_pyfunction!(parse_trace, m)?)?;
    m.add_function(wrap_pyfunction!(workload_from_columns, m)?)?;
    m.add_function(wrap_pyfunction!(synthetic_fb, m)?)?;
    m.add_function(wrap_pyfunction!(policies, m)?)?;
    m.add_function(wrap_pyfunction!(check_policy, m)?)?;
    m.add_function(wrap_pyfunction!(simulate, m)?)?;
    m.add_function(wrap_pyfunction!(simulate_coflowsim, m)?)?;
    m.add_function(wrap_pyfunction!(coflowsim_policies, m)?)?;
    m.add_function(wrap_pyfunction!(check_coflowsim_policy, m)?)?;
    m.add_function(wrap_pyfunction!(coda_labels, m)?)?;
    m.add_function(wrap_pyfunction!(ident::cluster, m)?)?;
    m.add_function(wrap_pyfunction!(ident::communities, m)?)?;
    m.add_class::<ident::RoughIdentifier>()?;
    m.add_class::<live::LiveScheduler>()?;
    m.add_class::<observe::FlowTable>()?;
    m.add_function(wrap_pyfunction!(observe::parse_sock_diag, m)?)?;
    m.add_class::<wire::FrameReader>()?;
    m.add_class::<hub::AgentHub>()?;
    m.add_class::<hub::Enforcer>()?;
    m.add_class::<hub::AgentSwarm>()?;
    m.add_function(wrap_pyfunction!(wire::encode_frame, m)?)?;
    m.add_function(wrap_pyfunction!(wire::encode_hello, m)?)?;
    m.add_function(wrap_pyfunction!(wire::decode_hello, m)?)?;
    m.add_function(wrap_pyfunction!(wire::encode_report, m)?)?;
    m.add_function(wrap_pyfunction!(wire::decode_report, m)?)?;
    m.add_function(wrap_pyfunction!(wire::encode_decisions, m)?)?;
    m.add_function(wrap_pyfunction!(wire::decode_decisions, m)?)?;
    m.add_function(wrap_pyfunction!(wire::encode_classes, m)?)?;
    m.add_function(wrap_pyfunction!(wire::decode_classes, m)?)?;
    m.add_function(wrap_pyfunction!(wire::encode_units, m)?)?;
    m.add_function(wrap_pyfunction!(wire::decode_units, m)?)?;
    m.add_class::<stream::StreamRule>()?;
    m.add_function(wrap_pyfunction!(stream::stream_internal_id, m)?)?;
    m.add("CoflowkitError", m.py().get_type::<CoflowkitError>())?;
    m.add("ProtocolError", m.py().get_type::<ProtocolError>())?;
    m.add("SimulationError", m.py().get_type::<SimulationError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // Units and tolerances, so Python uses the engine's values, never copies.
    m.add("MIB", coflowkit_model::MIB)?;
    m.add("GBPS_BYTES_PER_S", coflowkit_model::GBPS_BYTES_PER_S)?;
    m.add("TIME_EPS", coflowkit_model::TIME_EPS)?;
    m.add("CAPACITY_EPS", coflowkit_model::CAPACITY_EPS)?;
    m.add("FINISH_BYTES", coflowkit_model::FINISH_BYTES)?;
    m.add("FINISH_REL", coflowkit_model::FINISH_REL)?;
    // The parts `coda`'s `labels=split` cuts a coflow into.
    m.add("SPLIT_PARTS", coflowkit_policy::labels::SPLIT_PARTS)?;
    Ok(())
}
