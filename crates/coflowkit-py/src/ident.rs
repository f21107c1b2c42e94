//! Bindings of `coflowkit-ident`: offline clustering, host communities, and the
//! incremental Rough-DBSCAN structure (for benchmarks and Table 1 of CODA).

use crate::CoflowkitError;
use coflowkit_ident::{Metric, Records, Rough, NONE};
use pyo3::prelude::*;

fn err(e: String) -> PyErr {
    CoflowkitError::new_err(e)
}

#[allow(clippy::too_many_arguments)]
fn records_and_metric(
    time: Vec<f64>,
    com: Vec<u64>,
    agg: Vec<u64>,
    extra: Vec<Vec<f64>>,
    w_time: f64,
    w_com: f64,
    w_prt: f64,
    w_extra: Vec<f64>,
) -> PyResult<(Records, Metric)> {
    if extra.len() != w_extra.len() {
        return Err(err(format!(
            "{} attribute columns but {} weights for them",
            extra.len(),
            w_extra.len()
        )));
    }
    let r = Records {
        time,
        extra,
        com,
        agg,
    };
    r.validate().map_err(err)?;
    let m = Metric::new(w_time, w_extra, w_com, w_prt).map_err(err)?;
    Ok((r, m))
}

/// Clusters all flows at once: `algorithm` is `dbscan` (exact, `min_pts`) or
/// `rough` (Rough-DBSCAN: leaders within `tau` in time order, then DBSCAN with
/// min-points 1 over leaders). Returns one cluster number per flow, numbered in
/// order of first appearance.
#[pyfunction]
#[pyo3(signature = (time, com, agg, w_time, w_com, w_prt, eps, *, extra=Vec::new(), w_extra=Vec::new(), tau=0.0, min_pts=1, algorithm="dbscan"))]
#[allow(clippy::too_many_arguments)]
pub fn cluster(
    py: Python<'_>,
    time: Vec<f64>,
    com: Vec<u64>,
    agg: Vec<u64>,
    w_time: f64,
    w_com: f64,
    w_prt: f64,
    eps: f64,
    extra: Vec<Vec<f64>>,
    w_extra: Vec<f64>,
    tau: f64,
    min_pts: usize,
    algorithm: &str,
) -> PyResult<Vec<u32>> {
    let (r, m) = records_and_metric(time, com, agg, extra, w_time, w_com, w_prt, w_extra)?;
    if !(eps.is_finite() && eps > 0.0) {
        return Err(err(format!("eps={eps} is not a number > 0")));
    }
    let n = r.len();
    match algorithm {
        "dbscan" => {
            let idx: Vec<u32> = (0..n as u32).collect();
            Ok(py.allow_threads(|| coflowkit_ident::dbscan(&r, &m, eps, min_pts, &idx)))
        }
        "rough" => {
            let mut x = Rough::new(m, eps, tau, 0).map_err(err)?;
            Ok(py.allow_threads(|| {
                let mut ord: Vec<u32> = (0..n as u32).collect();
                ord.sort_by(|&a, &b| {
                    r.time[a as usize]
                        .total_cmp(&r.time[b as usize])
                        .then(a.cmp(&b))
                });
                for &f in &ord {
                    x.insert(&r, f, NONE);
                }
                x.cluster(&r);
                let raw: Vec<u32> = (0..n as u32).map(|f| x.label(f)).collect();
                coflowkit_ident::canonical(&raw)
            }))
        }
        _ => Err(err(format!(
            "algorithm={algorithm} is not one of dbscan, rough"
        ))),
    }
}

/// Communities of hosts `0..hosts` from traffic `src[i]–dst[i]` of weight
/// `weight[i]` (recursive spectral bisection; see coflowkit-ident).
#[pyfunction]
#[pyo3(signature = (hosts, src, dst, weight, max_conductance=0.1))]
pub fn communities(
    py: Python<'_>,
    hosts: usize,
    src: Vec<u32>,
    dst: Vec<u32>,
    weight: Vec<f64>,
    max_conductance: f64,
) -> PyResult<Vec<u32>> {
    if src.len() != dst.len() || src.len() != weight.len() {
        return Err(err("src, dst and weight differ in length".into()));
    }
    if let Some(&h) = src.iter().chain(&dst).find(|&&h| h as usize >= hosts) {
        return Err(err(format!("host {h} is not below hosts={hosts}")));
    }
    if let Some(w) = weight.iter().find(|w| !(w.is_finite() && **w >= 0.0)) {
        return Err(err(format!("weight {w} is not a finite number >= 0")));
    }
    let mut acc = std::collections::BTreeMap::new();
    for i in 0..src.len() {
        let (a, b) = (src[i].min(dst[i]), src[i].max(dst[i]));
        *acc.entry((a, b)).or_insert(0.0) += weight[i];
    }
    let edges: Vec<(u32, u32, f64)> = acc.into_iter().map(|((a, b), w)| (a, b, w)).collect();
    Ok(py.allow_threads(|| coflowkit_ident::communities(hosts, &edges, max_conductance)))
}

/// Incremental Rough-DBSCAN over a fixed table of flow records: flows enter and
/// leave by index; `cluster()` re-clusters the leaders.
#[pyclass(module = "coflowkit._core")]
pub struct RoughIdentifier {
    records: Records,
    rough: Rough,
}

impl RoughIdentifier {
    fn check(&self, flows: &[u32]) -> PyResult<()> {
        let n = self.records.len();
        match flows.iter().find(|&&f| f as usize >= n) {
            Some(f) => Err(err(format!("flow {f} is not below {n}"))),
            None => Ok(()),
        }
    }
}

#[pymethods]
impl RoughIdentifier {
    #[new]
    #[pyo3(signature = (time, com, agg, w_time, w_com, w_prt, eps, tau, *, extra=Vec::new(), w_extra=Vec::new()))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        time: Vec<f64>,
        com: Vec<u64>,
        agg: Vec<u64>,
        w_time: f64,
        w_com: f64,
        w_prt: f64,
        eps: f64,
        tau: f64,
        extra: Vec<Vec<f64>>,
        w_extra: Vec<f64>,
    ) -> PyResult<Self> {
        let (records, m) =
            records_and_metric(time, com, agg, extra, w_time, w_com, w_prt, w_extra)?;
        let rough = Rough::new(m, eps, tau, 0).map_err(err)?;
        Ok(RoughIdentifier { records, rough })
    }

    /// Adds flows (in the order given).
    fn insert(&mut self, py: Python<'_>, flows: Vec<u32>) -> PyResult<()> {
        self.check(&flows)?;
        let (r, x) = (&self.records, &mut self.rough);
        py.allow_threads(|| flows.iter().for_each(|&f| x.insert(r, f, NONE)));
        Ok(())
    }

    fn remove(&mut self, py: Python<'_>, flows: Vec<u32>) -> PyResult<()> {
        self.check(&flows)?;
        let x = &mut self.rough;
        py.allow_threads(|| flows.iter().for_each(|&f| x.remove(f)));
        Ok(())
    }

    /// Re-clusters; returns how many flows changed label.
    fn cluster(&mut self, py: Python<'_>) -> usize {
        let (r, x) = (&self.records, &mut self.rough);
        py.allow_threads(|| x.cluster(r).len())
    }

    /// Labels of `flows` (-1 for a flow not in the structure).
    fn labels(&self, flows: Vec<u32>) -> PyResult<Vec<i64>> {
        self.check(&flows)?;
        Ok(flows
            .iter()
            .map(|&f| match self.rough.label(f) {
                NONE => -1,
                l => l as i64,
            })
            .collect())
    }

    /// Late binding: for each flow of `flows`, the labels other than its own of
    /// the clusters with a flow within distance `d` of it (CODA §4.2).
    fn near(&self, py: Python<'_>, flows: Vec<u32>, d: f64) -> PyResult<Vec<Vec<u32>>> {
        self.check(&flows)?;
        if !(d.is_finite() && d >= 0.0) {
            return Err(err(format!("d={d} is not a number >= 0")));
        }
        let (r, x) = (&self.records, &self.rough);
        Ok(py.allow_threads(|| {
            flows
                .iter()
                .map(|&f| {
                    let mut out = Vec::new();
                    x.near(r, f, d, x.label(f), &mut out);
                    out.sort_unstable();
                    out
                })
                .collect()
        }))
    }

    #[getter]
    fn leaders(&self) -> usize {
        self.rough.leaders()
    }

    fn __len__(&self) -> usize {
        self.rough.len()
    }
}
