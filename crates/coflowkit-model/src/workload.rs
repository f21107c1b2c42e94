//! Coflows, flows and the validated, ordered workload built from them.

use crate::{Fabric, LinkId, ModelError, PathId};
use std::collections::HashMap;

/// Optional observable metadata of a flow (used by identification and the runtime).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FlowMeta {
    pub src_port: Option<u32>,
    pub dst_port: Option<u32>,
    pub tenant: Option<String>,
    /// Sub-coflow of a multi-stage coflow: a number unique within the coflow (the
    /// stage DAG comes from the flow dependencies between stages).
    pub stage: Option<u32>,
    /// Strict-priority class the workload gives the flow (0 = highest; `spq`).
    pub priority: Option<u32>,
}

#[derive(Debug, Clone)]
pub struct Flow {
    /// External id (from the trace; for generated flows, the global index).
    pub id: u64,
    /// Index of the owning coflow in [`Workload::coflows`].
    pub coflow: u32,
    /// 0-based position inside the coflow.
    pub index: u32,
    pub src: u32,
    pub dst: u32,
    pub size_bytes: f64,
    /// Earliest start; the flow starts at the later of this and its dependencies' finish.
    pub start_s: f64,
    pub path: PathId,
    /// Global indices of the flows this one waits for.
    pub deps: Vec<u32>,
}

#[derive(Debug, Clone)]
pub struct Coflow {
    pub id: u64,
    pub arrival_s: f64,
    pub weight: f64,
    /// Global index of the first flow; the flows are `first_flow..first_flow + width`.
    pub first_flow: u32,
    /// Number of flows.
    pub width: u32,
    /// Largest flow, bytes.
    pub length_bytes: f64,
    /// Sum of flow sizes, bytes.
    pub size_bytes: f64,
}

impl Coflow {
    pub fn flows(&self) -> std::ops::Range<usize> {
        self.first_flow as usize..(self.first_flow + self.width) as usize
    }
}

/// A validated workload: coflows sorted by `(arrival, id)`, flows contiguous per
/// coflow in index order.
#[derive(Debug, Clone)]
pub struct Workload {
    pub fabric: Fabric,
    pub coflows: Vec<Coflow>,
    pub flows: Vec<Flow>,
    /// Per-flow metadata; empty when the source had none.
    pub meta: Vec<FlowMeta>,
    /// Name of the source (file name or generator), used in messages.
    pub source: String,
    /// Strategic reports (Coflex, HUG): empty when every coflow is truthful;
    /// otherwise one entry per coflow, empty for a truthful coflow, else the
    /// demand vector it reports as `(link, value)` sorted by link, scaled so its
    /// largest value is 1 (a correlation vector). Set with [`Workload::with_reports`].
    pub reports: Vec<Vec<(LinkId, f64)>>,
}

impl Workload {
    pub fn num_flows(&self) -> usize {
        self.flows.len()
    }

    /// Re-routes every flow on `fabric` (for example a different capacity).
    pub fn with_fabric(&self, fabric: Fabric) -> Result<Workload, ModelError> {
        let mut fabric = fabric.cleared();
        let mut flows = self.flows.clone();
        for f in flows.iter_mut() {
            f.path = fabric.route(f.src, f.dst, f.id).map_err(|m| {
                ModelError::new(&self.source, 0, "fabric", format!("flow {}: {m}", f.id))
            })?;
        }
        // Reports name links; carry them over by name.
        let mut reports = Vec::with_capacity(self.reports.len());
        for (k, rep) in self.reports.iter().enumerate() {
            let mut out = Vec::with_capacity(rep.len());
            for &(l, x) in rep {
                let name = self.fabric.link_name(l);
                let nl = fabric.link_by_name(&name).ok_or_else(|| {
                    ModelError::new(
                        &self.source,
                        0,
                        "fabric",
                        format!(
                            "coflow {} reports a demand on link {name}, which the new fabric does not have",
                            self.coflows[k].id
                        ),
                    )
                })?;
                out.push((nl, x));
            }
            out.sort_by_key(|e| e.0);
            reports.push(out);
        }
        Ok(Workload {
            fabric,
            coflows: self.coflows.clone(),
            flows,
            meta: self.meta.clone(),
            source: self.source.clone(),
            reports,
        })
    }

    /// The same workload where the given coflows report the given demand vectors
    /// (`(coflow id, [(link, value)])`) instead of their true ones. Values are
    /// scaled so the largest is 1. Every link the coflow's flows use must get a
    /// positive value (a coflow that reports no demand on a link it needs would
    /// never finish under DRF); extra links are allowed (inflated demands).
    pub fn with_reports(
        &self,
        given: &[(u64, Vec<(LinkId, f64)>)],
    ) -> Result<Workload, ModelError> {
        let bad = |msg: String| ModelError::param("reports", msg);
        let pos: HashMap<u64, usize> = self
            .coflows
            .iter()
            .enumerate()
            .map(|(k, c)| (c.id, k))
            .collect();
        let mut reports = if self.reports.is_empty() {
            vec![Vec::new(); self.coflows.len()]
        } else {
            self.reports.clone()
        };
        for (id, vec) in given {
            let k = *pos
                .get(id)
                .ok_or_else(|| bad(format!("coflow {id} is not in the workload")))?;
            let mut rep = vec.clone();
            rep.sort_by_key(|e| e.0);
            for w in rep.windows(2) {
                if w[0].0 == w[1].0 {
                    return Err(bad(format!(
                        "coflow {id} reports link {} twice",
                        self.fabric.link_name(w[0].0)
                    )));
                }
            }
            for &(l, x) in &rep {
                if l as usize >= self.fabric.num_links() {
                    return Err(bad(format!("coflow {id}: link {l} is not in the fabric")));
                }
                if !(x.is_finite() && x >= 0.0) {
                    return Err(bad(format!(
                        "coflow {id}: the demand on {} must be a number >= 0, got {x}",
                        self.fabric.link_name(l)
                    )));
                }
            }
            for (l, _) in self.coflow_link_bytes(k) {
                let v = rep
                    .binary_search_by_key(&l, |e| e.0)
                    .map(|i| rep[i].1)
                    .unwrap_or(0.0);
                if v <= 0.0 {
                    return Err(bad(format!(
                        "coflow {id} uses link {} but reports no demand on it",
                        self.fabric.link_name(l)
                    )));
                }
            }
            let top = rep.iter().map(|e| e.1).fold(0.0, f64::max);
            rep.retain(|e| e.1 > 0.0);
            for e in rep.iter_mut() {
                e.1 /= top;
            }
            reports[k] = rep;
        }
        let mut w = self.clone();
        w.reports = reports;
        Ok(w)
    }

    /// The first `n` coflows (in arrival order) and their flows. Dependencies on
    /// flows of later coflows are dropped (those flows are not in the result).
    pub fn head(&self, n: usize) -> Workload {
        if n >= self.coflows.len() {
            return self.clone();
        }
        let cut = self.coflows[n].first_flow;
        let mut flows = self.flows[..cut as usize].to_vec();
        for f in flows.iter_mut() {
            f.deps.retain(|&d| d < cut);
        }
        let meta = if self.meta.is_empty() {
            Vec::new()
        } else {
            self.meta[..cut as usize].to_vec()
        };
        Workload {
            fabric: self.fabric.clone(),
            coflows: self.coflows[..n].to_vec(),
            flows,
            meta,
            source: format!("{}[first {n} coflows]", self.source),
            reports: self.reports.get(..n).map(<[_]>::to_vec).unwrap_or_default(),
        }
    }

    /// Bytes of a coflow on every link it uses, as `(link, bytes)` sorted by link.
    pub fn coflow_link_bytes(&self, c: usize) -> Vec<(u32, f64)> {
        let mut acc: Vec<(u32, f64)> = Vec::new();
        for f in &self.flows[self.coflows[c].flows()] {
            for &l in self.fabric.path(f.path) {
                acc.push((l, f.size_bytes));
            }
        }
        acc.sort_by_key(|&(l, _)| l);
        let mut out: Vec<(u32, f64)> = Vec::new();
        for (l, b) in acc {
            match out.last_mut() {
                Some((ll, bb)) if *ll == l => *bb += b,
                _ => out.push((l, b)),
            }
        }
        out
    }

    /// Isolated CCT: the time the coflow's bottleneck link needs alone in the fabric,
    /// `max_l bytes_l / capacity_l`.
    pub fn isolated_cct(&self, c: usize) -> f64 {
        self.coflow_link_bytes(c)
            .into_iter()
            .map(|(l, b)| b / self.fabric.capacities[l as usize])
            .fold(0.0, f64::max)
    }
}

/// One flow as read from a source, before validation.
#[derive(Debug, Clone)]
pub struct FlowRecord {
    pub coflow_id: u64,
    pub flow_id: u64,
    pub src: i64,
    pub dst: i64,
    pub size_bytes: f64,
    pub start_s: f64,
    pub depends_on: Vec<u64>,
    pub meta: FlowMeta,
    /// Line or row of the source, for messages (0 when none).
    pub line: usize,
}

/// One coflow as read from a source, before validation.
#[derive(Debug, Clone)]
pub struct CoflowRecord {
    pub id: u64,
    /// `None`: the earliest start of its flows.
    pub arrival_s: Option<f64>,
    pub weight: f64,
    pub line: usize,
}

/// Collects records from any reader, validates them and builds a [`Workload`].
///
/// Flows keep the order in which they are added inside their coflow; readers add
/// them in the order that defines the flow index of their format.
pub struct WorkloadBuilder {
    source: String,
    coflows: Vec<CoflowRecord>,
    coflow_pos: HashMap<u64, usize>,
    flows: Vec<FlowRecord>,
    has_meta: bool,
}

impl WorkloadBuilder {
    pub fn new(source: impl Into<String>) -> Self {
        WorkloadBuilder {
            source: source.into(),
            coflows: Vec::new(),
            coflow_pos: HashMap::new(),
            flows: Vec::new(),
            has_meta: false,
        }
    }

    fn err(&self, line: usize, field: &str, msg: impl Into<String>) -> ModelError {
        ModelError::new(&self.source, line, field, msg)
    }

    /// Declares a coflow. A duplicate id is an error.
    pub fn add_coflow(&mut self, c: CoflowRecord) -> Result<(), ModelError> {
        if let Some(&p) = self.coflow_pos.get(&c.id) {
            let first = self.coflows[p].line;
            let at = if first > 0 {
                format!(" (first at line {first})")
            } else {
                String::new()
            };
            return Err(self.err(
                c.line,
                "coflow_id",
                format!("duplicate coflow id {}{at}", c.id),
            ));
        }
        if let Some(a) = c.arrival_s {
            if !(a.is_finite() && a >= 0.0) {
                return Err(self.err(c.line, "arrival", format!("arrival must be ≥ 0, got {a}")));
            }
        }
        if !(c.weight.is_finite() && c.weight > 0.0) {
            return Err(self.err(
                c.line,
                "weight",
                format!("weight must be > 0, got {}", c.weight),
            ));
        }
        self.coflow_pos.insert(c.id, self.coflows.len());
        self.coflows.push(c);
        Ok(())
    }

    /// Whether a coflow id has been declared.
    pub fn has_coflow(&self, id: u64) -> bool {
        self.coflow_pos.contains_key(&id)
    }

    /// Adds a flow of an already declared coflow. Values are checked here; links and
    /// cross-references are checked in [`WorkloadBuilder::build`].
    pub fn add_flow(&mut self, f: FlowRecord) -> Result<(), ModelError> {
        if !self.coflow_pos.contains_key(&f.coflow_id) {
            return Err(self.err(
                f.line,
                "coflow_id",
                format!("unknown coflow {}", f.coflow_id),
            ));
        }
        if !(f.size_bytes.is_finite() && f.size_bytes > 0.0) {
            return Err(self.err(
                f.line,
                "bytes",
                format!("flow size must be > 0, got {}", f.size_bytes),
            ));
        }
        if !(f.start_s.is_finite() && f.start_s >= 0.0) {
            return Err(self.err(
                f.line,
                "start_s",
                format!("start must be ≥ 0, got {}", f.start_s),
            ));
        }
        if f.src < 0 {
            return Err(self.err(f.line, "src", format!("port must be ≥ 0, got {}", f.src)));
        }
        if f.dst < 0 {
            return Err(self.err(f.line, "dst", format!("port must be ≥ 0, got {}", f.dst)));
        }
        if f.meta != FlowMeta::default() {
            self.has_meta = true;
        }
        self.flows.push(f);
        Ok(())
    }

    /// Validates everything and builds the workload on `fabric`, in four steps:
    /// group the records by coflow, find arrivals, number the flows in (arrival,
    /// id) order of their coflows, and route and link them; then check that
    /// dependencies have no cycle.
    pub fn build(self, mut fabric: Fabric) -> Result<Workload, ModelError> {
        if self.coflows.is_empty() {
            return Err(self.err(0, "", "the trace has no coflows"));
        }
        let (per, flow_pos) = self.group()?;
        let arrivals = self.arrivals(&per)?;
        let (order, global) = self.numbering(&per, &arrivals);
        let mut coflows = Vec::with_capacity(order.len());
        let mut flows: Vec<Flow> = Vec::with_capacity(self.flows.len());
        let mut meta = Vec::new();
        for (new_k, &k) in order.iter().enumerate() {
            let first = flows.len() as u32;
            for (idx, &i) in per[k].iter().enumerate() {
                let r = &self.flows[i];
                let path = self.route(&mut fabric, r)?;
                let deps = self.deps(r, &flow_pos, &global)?;
                flows.push(Flow {
                    id: r.flow_id,
                    coflow: new_k as u32,
                    index: idx as u32,
                    src: r.src as u32,
                    dst: r.dst as u32,
                    size_bytes: r.size_bytes,
                    start_s: r.start_s,
                    path,
                    deps,
                });
                if self.has_meta {
                    meta.push(r.meta.clone());
                }
            }
            let c = &self.coflows[k];
            let sizes = per[k].iter().map(|&i| self.flows[i].size_bytes);
            coflows.push(Coflow {
                id: c.id,
                arrival_s: arrivals[k],
                weight: c.weight,
                first_flow: first,
                width: per[k].len() as u32,
                length_bytes: sizes.clone().fold(0.0, f64::max),
                size_bytes: sizes.sum(),
            });
        }
        // Records in global order, to name lines in cycle errors.
        let mut line_of = vec![0usize; flows.len()];
        for (i, f) in self.flows.iter().enumerate() {
            line_of[global[i] as usize] = f.line;
        }
        check_acyclic(&flows, &line_of, &self.source)?;
        Ok(Workload {
            fabric,
            coflows,
            flows,
            meta,
            source: self.source,
            reports: Vec::new(),
        })
    }

    /// The records of each coflow (in insertion order) and each flow id's record;
    /// refuses a duplicate flow id and a coflow without flows.
    #[allow(clippy::type_complexity)]
    fn group(&self) -> Result<(Vec<Vec<usize>>, HashMap<u64, usize>), ModelError> {
        let mut per: Vec<Vec<usize>> = vec![Vec::new(); self.coflows.len()];
        let mut flow_pos: HashMap<u64, usize> = HashMap::with_capacity(self.flows.len());
        for (i, f) in self.flows.iter().enumerate() {
            if let Some(&j) = flow_pos.get(&f.flow_id) {
                let first = self.flows[j].line;
                let at = if first > 0 {
                    format!(" (first at line {first})")
                } else {
                    String::new()
                };
                return Err(self.err(
                    f.line,
                    "flow_id",
                    format!("duplicate flow id {}{at}", f.flow_id),
                ));
            }
            flow_pos.insert(f.flow_id, i);
            per[self.coflow_pos[&f.coflow_id]].push(i);
        }
        for (k, c) in self.coflows.iter().enumerate() {
            if per[k].is_empty() {
                return Err(self.err(c.line, "coflow_id", format!("coflow {} has no flows", c.id)));
            }
        }
        Ok((per, flow_pos))
    }

    /// Each coflow's arrival: declared, or its earliest flow start. No flow may
    /// start before its coflow arrives.
    fn arrivals(&self, per: &[Vec<usize>]) -> Result<Vec<f64>, ModelError> {
        let arrivals: Vec<f64> = self
            .coflows
            .iter()
            .enumerate()
            .map(|(k, c)| {
                let earliest = per[k]
                    .iter()
                    .map(|&i| self.flows[i].start_s)
                    .fold(f64::INFINITY, f64::min);
                c.arrival_s.unwrap_or(earliest)
            })
            .collect();
        for (k, c) in self.coflows.iter().enumerate() {
            for &i in &per[k] {
                let f = &self.flows[i];
                if f.start_s + crate::TIME_EPS < arrivals[k] {
                    return Err(self.err(
                        f.line,
                        "start_s",
                        format!(
                            "flow {} starts at {} s, before its coflow {} arrives at {} s",
                            f.flow_id, f.start_s, c.id, arrivals[k]
                        ),
                    ));
                }
            }
        }
        Ok(arrivals)
    }

    /// The coflows in (arrival, id) order, and every record's global flow index
    /// (coflow by coflow in that order, records in insertion order).
    fn numbering(&self, per: &[Vec<usize>], arrivals: &[f64]) -> (Vec<usize>, Vec<u32>) {
        let mut order: Vec<usize> = (0..self.coflows.len()).collect();
        order.sort_by(|&a, &b| {
            arrivals[a]
                .total_cmp(&arrivals[b])
                .then(self.coflows[a].id.cmp(&self.coflows[b].id))
        });
        let mut global = vec![0u32; self.flows.len()];
        let mut next = 0u32;
        for &k in &order {
            for &i in &per[k] {
                global[i] = next;
                next += 1;
            }
        }
        (order, global)
    }

    /// A record's path on `fabric`; an unknown port is named as `src` or `dst`.
    fn route(&self, fabric: &mut Fabric, r: &FlowRecord) -> Result<PathId, ModelError> {
        fabric
            .route(r.src as u32, r.dst as u32, r.flow_id)
            .map_err(|m| {
                let field = if r.src as u64 >= fabric.ports() as u64 {
                    "src"
                } else {
                    "dst"
                };
                self.err(r.line, field, m)
            })
    }

    /// A record's dependencies as global flow indices, sorted and unique.
    fn deps(
        &self,
        r: &FlowRecord,
        flow_pos: &HashMap<u64, usize>,
        global: &[u32],
    ) -> Result<Vec<u32>, ModelError> {
        let mut deps = Vec::with_capacity(r.depends_on.len());
        for d in &r.depends_on {
            match flow_pos.get(d) {
                Some(&j) => deps.push(global[j]),
                None => {
                    return Err(self.err(
                        r.line,
                        "depends_on",
                        format!("flow {} depends on unknown flow {d}", r.flow_id),
                    ))
                }
            }
        }
        deps.sort_unstable();
        deps.dedup();
        Ok(deps)
    }
}

/// Kahn's algorithm over flow dependencies; names one flow on a cycle.
fn check_acyclic(flows: &[Flow], line_of: &[usize], source: &str) -> Result<(), ModelError> {
    if flows.iter().all(|f| f.deps.is_empty()) {
        return Ok(());
    }
    let n = flows.len();
    let mut indeg = vec![0u32; n];
    let mut children: Vec<Vec<u32>> = vec![Vec::new(); n];
    for (i, f) in flows.iter().enumerate() {
        for &d in &f.deps {
            if d as usize == i {
                return Err(ModelError::new(
                    source,
                    line_of[i],
                    "depends_on",
                    format!("flow {} depends on itself", f.id),
                ));
            }
            indeg[i] += 1;
            children[d as usize].push(i as u32);
        }
    }
    let mut stack: Vec<u32> = (0..n as u32).filter(|&i| indeg[i as usize] == 0).collect();
    let mut seen = 0;
    while let Some(i) = stack.pop() {
        seen += 1;
        for &c in &children[i as usize] {
            indeg[c as usize] -= 1;
            if indeg[c as usize] == 0 {
                stack.push(c);
            }
        }
    }
    if seen < n {
        let i = (0..n).find(|&i| indeg[i] > 0).unwrap_or(0);
        return Err(ModelError::new(
            source,
            line_of[i],
            "depends_on",
            format!("dependency cycle through flow {}", flows[i].id),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flow(c: u64, id: u64, src: i64, dst: i64, mb: f64, deps: Vec<u64>) -> FlowRecord {
        FlowRecord {
            coflow_id: c,
            flow_id: id,
            src,
            dst,
            size_bytes: mb * crate::MIB,
            start_s: 0.0,
            depends_on: deps,
            meta: FlowMeta::default(),
            line: id as usize + 1,
        }
    }

    fn coflow(id: u64, arrival: f64) -> CoflowRecord {
        CoflowRecord {
            id,
            arrival_s: Some(arrival),
            weight: 1.0,
            line: id as usize,
        }
    }

    #[test]
    fn orders_coflows_by_arrival_then_id_and_keeps_flow_order() {
        let mut b = WorkloadBuilder::new("t");
        b.add_coflow(coflow(9, 1.0)).unwrap();
        b.add_coflow(coflow(5, 1.0)).unwrap();
        b.add_coflow(coflow(7, 0.5)).unwrap();
        for (c, id) in [(9, 1), (9, 0), (5, 2), (7, 3)] {
            let mut f = flow(c, id, 0, 1, 1.0, vec![]);
            f.start_s = 1.0;
            if c == 7 {
                f.start_s = 0.5;
            }
            b.add_flow(f).unwrap();
        }
        let w = b.build(Fabric::big_switch(2, 1.0).unwrap()).unwrap();
        let ids: Vec<u64> = w.coflows.iter().map(|c| c.id).collect();
        assert_eq!(ids, vec![7, 5, 9]);
        // Coflow 9 keeps insertion order: flow 1 then flow 0.
        let f9: Vec<u64> = w.flows[w.coflows[2].flows()].iter().map(|f| f.id).collect();
        assert_eq!(f9, vec![1, 0]);
        assert_eq!(w.flows[4 - 1].index, 1);
    }

    #[test]
    fn rejects_bad_inputs_with_line_and_field() {
        let fab = || Fabric::big_switch(2, 1.0).unwrap();
        // Coflow with no flows.
        let mut b = WorkloadBuilder::new("t");
        b.add_coflow(coflow(1, 0.0)).unwrap();
        let e = b.build(fab()).unwrap_err();
        assert_eq!(e.to_string(), "t:1: coflow_id: coflow 1 has no flows");
        // Port outside the fabric.
        let mut b = WorkloadBuilder::new("t");
        b.add_coflow(coflow(1, 0.0)).unwrap();
        b.add_flow(flow(1, 4, 0, 2, 1.0, vec![])).unwrap();
        let e = b.build(fab()).unwrap_err();
        assert_eq!(e.field, "dst");
        assert_eq!(e.line, 5);
        // Unknown dependency and cycle.
        let mut b = WorkloadBuilder::new("t");
        b.add_coflow(coflow(1, 0.0)).unwrap();
        b.add_flow(flow(1, 0, 0, 1, 1.0, vec![7])).unwrap();
        assert!(b
            .build(fab())
            .unwrap_err()
            .message
            .contains("unknown flow 7"));
        let mut b = WorkloadBuilder::new("t");
        b.add_coflow(coflow(1, 0.0)).unwrap();
        b.add_flow(flow(1, 0, 0, 1, 1.0, vec![1])).unwrap();
        b.add_flow(flow(1, 1, 0, 1, 1.0, vec![0])).unwrap();
        assert!(b
            .build(fab())
            .unwrap_err()
            .message
            .contains("dependency cycle"));
        // Duplicate ids and bad sizes.
        let mut b = WorkloadBuilder::new("t");
        b.add_coflow(coflow(1, 0.0)).unwrap();
        assert!(b
            .add_coflow(coflow(1, 0.0))
            .unwrap_err()
            .message
            .contains("duplicate coflow id 1"));
        assert_eq!(
            b.add_flow(flow(1, 0, 0, 1, 0.0, vec![])).unwrap_err().field,
            "bytes"
        );
        assert_eq!(
            b.add_flow(flow(1, 0, 0, 1, -1.0, vec![]))
                .unwrap_err()
                .field,
            "bytes"
        );
        b.add_flow(flow(1, 0, 0, 1, 1.0, vec![])).unwrap();
        b.add_flow(flow(1, 0, 1, 1, 1.0, vec![])).unwrap();
        assert!(b
            .build(fab())
            .unwrap_err()
            .message
            .contains("duplicate flow id 0"));
    }

    #[test]
    fn isolated_cct_is_the_bottleneck_link_time() {
        // Two flows into port 1 (4 MiB and 2 MiB): down(1) carries 6 MiB.
        let mut b = WorkloadBuilder::new("t");
        b.add_coflow(coflow(1, 0.0)).unwrap();
        b.add_flow(flow(1, 0, 0, 1, 4.0, vec![])).unwrap();
        b.add_flow(flow(1, 1, 1, 1, 2.0, vec![])).unwrap();
        let w = b.build(Fabric::big_switch(2, crate::MIB).unwrap()).unwrap();
        assert!((w.isolated_cct(0) - 6.0).abs() < 1e-12);
        assert_eq!(w.coflows[0].width, 2);
        assert_eq!(w.coflows[0].length_bytes, 4.0 * crate::MIB);
    }

    #[test]
    fn reports_are_validated_scaled_and_follow_the_fabric() {
        // Coflow 1 sends 0→1 and 1→1 on 2 ports: it uses up0, up1 (links 0, 1) and
        // down1 (link 3).
        let mut b = WorkloadBuilder::new("t");
        b.add_coflow(coflow(1, 0.0)).unwrap();
        b.add_flow(flow(1, 0, 0, 1, 4.0, vec![])).unwrap();
        b.add_flow(flow(1, 1, 1, 1, 2.0, vec![])).unwrap();
        let w = b.build(Fabric::big_switch(2, crate::MIB).unwrap()).unwrap();
        assert!(w.reports.is_empty());
        // Inflated demand, also on down0 which it does not use; scaled to max 1.
        let r = w
            .with_reports(&[(1, vec![(3, 4.0), (0, 2.0), (1, 2.0), (2, 1.0)])])
            .unwrap();
        assert_eq!(
            r.reports,
            vec![vec![(0, 0.5), (1, 0.5), (2, 0.25), (3, 1.0)]]
        );
        let err = |g: &[(u64, Vec<(u32, f64)>)]| w.with_reports(g).unwrap_err().to_string();
        assert_eq!(
            err(&[(1, vec![(0, 1.0), (3, 1.0)])]),
            "reports: coflow 1 uses link up1 but reports no demand on it"
        );
        assert_eq!(
            err(&[(9, vec![])]),
            "reports: coflow 9 is not in the workload"
        );
        assert!(err(&[(1, vec![(0, 1.0), (0, 2.0)])]).contains("reports link up0 twice"));
        assert!(err(&[(1, vec![(0, f64::NAN)])]).contains("must be a number >= 0"));
        assert!(err(&[(1, vec![(7, 1.0)])]).contains("link 7 is not in the fabric"));
        // On a bigger fabric the same link names get other ids: down1 is link 4.
        let bigger = r
            .with_fabric(Fabric::from_spec("bigswitch:ports=3", 2).unwrap())
            .unwrap();
        assert_eq!(
            bigger.reports,
            vec![vec![(0, 0.5), (1, 0.5), (3, 0.25), (4, 1.0)]]
        );
        assert_eq!(r.head(1).reports.len(), 1);
    }
}
