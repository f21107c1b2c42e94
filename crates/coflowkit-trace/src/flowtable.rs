//! The flow table: one row per flow, in CSV here and in Parquet on the Python side.
//!
//! Required columns: `coflow_id, flow_id, src, dst, bytes, start_s`. Optional:
//! `arrival_s` (the coflow's arrival; default its earliest flow start), `weight`
//! (default 1), `src_port`, `dst_port`, `tenant`, `stage` (the sub-coflow of a
//! multi-stage coflow: a number unique within the coflow), `priority` (a strict-priority class,
//! 0 highest, for `spq`), `depends_on` (flow ids separated by `;`). Other columns are ignored (later features add their own). Within a coflow,
//! flow index = ascending `flow_id`; `arrival_s` and `weight` must agree across the
//! coflow's rows.

use crate::tokens::parse_f64;
use coflowkit_model::{
    CoflowRecord, Fabric, FlowMeta, FlowRecord, ModelError, Workload, WorkloadBuilder,
    GBPS_BYTES_PER_S,
};
use std::collections::BTreeMap;

pub const REQUIRED: [&str; 6] = ["coflow_id", "flow_id", "src", "dst", "bytes", "start_s"];

/// A flow table as columns, shared by the CSV reader and the Parquet path.
/// `rows[i]` is the line (CSV) or row (Parquet) of entry `i`, for messages.
#[derive(Debug, Default, Clone)]
pub struct FlowColumns {
    pub coflow_id: Vec<u64>,
    pub flow_id: Vec<u64>,
    pub src: Vec<i64>,
    pub dst: Vec<i64>,
    pub bytes: Vec<f64>,
    pub start_s: Vec<f64>,
    pub arrival_s: Vec<Option<f64>>,
    pub weight: Vec<Option<f64>>,
    pub src_port: Vec<Option<u32>>,
    pub dst_port: Vec<Option<u32>>,
    pub tenant: Vec<Option<String>>,
    pub stage: Vec<Option<u32>>,
    pub priority: Vec<Option<u32>>,
    pub depends_on: Vec<Vec<u64>>,
    pub rows: Vec<usize>,
    /// Number of ports of the fabric; `None`: max port + 1.
    pub ports: Option<u32>,
    /// Errors name rows (Parquet) rather than lines (CSV).
    pub rows_are_table_rows: bool,
}

impl FlowColumns {
    pub fn len(&self) -> usize {
        self.flow_id.len()
    }

    pub fn is_empty(&self) -> bool {
        self.flow_id.is_empty()
    }

    /// Validates and builds the workload.
    pub fn build(&self, source: &str) -> Result<Workload, ModelError> {
        let mark = |e: ModelError| {
            if self.rows_are_table_rows {
                e.at_row()
            } else {
                e
            }
        };
        self.build_inner(source).map_err(mark)
    }

    /// Checks the columns, declares the coflows (in order of first appearance),
    /// adds the flows (by ascending flow id) and builds on a big switch.
    fn build_inner(&self, source: &str) -> Result<Workload, ModelError> {
        self.check_lengths(source)?;
        let mut b = WorkloadBuilder::new(source);
        for c in self.coflows(source)? {
            b.add_coflow(c)?;
        }
        let mut order: Vec<usize> = (0..self.len()).collect();
        order.sort_by_key(|&i| (self.flow_id[i], i));
        for &i in &order {
            b.add_flow(self.record(i))?;
        }
        let max_port = self
            .src
            .iter()
            .chain(&self.dst)
            .fold(0i64, |m, &p| m.max(p));
        let ports = match self.ports {
            Some(p) => p,
            None => (max_port + 1).clamp(1, u32::MAX as i64 / 2) as u32,
        };
        b.build(Fabric::big_switch(ports, GBPS_BYTES_PER_S)?)
    }

    /// Every required column has one entry per flow, every optional one that or
    /// none.
    fn check_lengths(&self, source: &str) -> Result<(), ModelError> {
        let n = self.len();
        if n == 0 {
            return Err(ModelError::new(source, 0, "", "the flow table has no rows"));
        }
        let required = [
            self.coflow_id.len(),
            self.src.len(),
            self.dst.len(),
            self.bytes.len(),
            self.start_s.len(),
            self.rows.len(),
        ];
        let optional = [
            self.arrival_s.len(),
            self.weight.len(),
            self.src_port.len(),
            self.dst_port.len(),
            self.tenant.len(),
            self.stage.len(),
            self.priority.len(),
            self.depends_on.len(),
        ];
        if !required.iter().all(|&l| l == n) || !optional.iter().all(|&l| l == 0 || l == n) {
            return Err(ModelError::new(
                source,
                0,
                "",
                "flow table columns have different lengths",
            ));
        }
        Ok(())
    }

    /// The coflows in order of first appearance, each with its arrival and weight,
    /// which every row of the coflow must repeat.
    fn coflows(&self, source: &str) -> Result<Vec<CoflowRecord>, ModelError> {
        let mut seen: BTreeMap<u64, usize> = BTreeMap::new();
        let mut out: Vec<CoflowRecord> = Vec::new();
        let mut first_weight: Vec<Option<f64>> = Vec::new();
        for i in 0..self.len() {
            let a = self.arrival_s.get(i).copied().flatten();
            let w = self.weight.get(i).copied().flatten();
            let (id, row) = (self.coflow_id[i], self.rows[i]);
            let Some(&k) = seen.get(&id) else {
                seen.insert(id, out.len());
                first_weight.push(w);
                out.push(CoflowRecord {
                    id,
                    arrival_s: a,
                    weight: w.unwrap_or(1.0),
                    line: row,
                });
                continue;
            };
            let first = &out[k];
            let clash = |field: &str, here: Option<f64>, there: Option<f64>| {
                ModelError::new(
                    source,
                    row,
                    field,
                    format!(
                        "coflow {id} has {field} {} here but {} at line {}",
                        show(here),
                        show(there),
                        first.line
                    ),
                )
            };
            if a != first.arrival_s {
                return Err(clash("arrival_s", a, first.arrival_s));
            }
            if w != first_weight[k] {
                return Err(clash("weight", w, first_weight[k]));
            }
        }
        Ok(out)
    }

    /// Entry `i` as a flow record.
    fn record(&self, i: usize) -> FlowRecord {
        FlowRecord {
            coflow_id: self.coflow_id[i],
            flow_id: self.flow_id[i],
            src: self.src[i],
            dst: self.dst[i],
            size_bytes: self.bytes[i],
            start_s: self.start_s[i],
            depends_on: self.depends_on.get(i).cloned().unwrap_or_default(),
            meta: FlowMeta {
                src_port: self.src_port.get(i).copied().flatten(),
                dst_port: self.dst_port.get(i).copied().flatten(),
                tenant: self.tenant.get(i).cloned().flatten(),
                stage: self.stage.get(i).copied().flatten(),
                priority: self.priority.get(i).copied().flatten(),
            },
            line: self.rows[i],
        }
    }
}

fn show(v: Option<f64>) -> String {
    v.map(|x| x.to_string()).unwrap_or_else(|| "(empty)".into())
}

/// Splits one CSV line into fields (double quotes may enclose a field; `""` inside
/// quotes is a quote).
fn split_csv(line: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = line.chars().peekable();
    let mut quoted = false;
    while let Some(c) = chars.next() {
        if quoted {
            if c == '"' {
                if chars.peek() == Some(&'"') {
                    cur.push('"');
                    chars.next();
                } else {
                    quoted = false;
                }
            } else {
                cur.push(c);
            }
        } else if c == '"' && cur.is_empty() {
            quoted = true;
        } else if c == ',' {
            out.push(std::mem::take(&mut cur));
        } else {
            cur.push(c);
        }
    }
    if quoted {
        return Err("unterminated quoted field".into());
    }
    out.push(cur);
    Ok(out.into_iter().map(|s| s.trim().to_string()).collect())
}

/// Reads a flow table in CSV (header line, then one row per flow).
pub fn read_flow_csv(source: &str, text: &str) -> Result<Workload, ModelError> {
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    let (hline, header) = lines
        .next()
        .ok_or_else(|| ModelError::new(source, 0, "", "the file is empty"))?;
    let hline = hline + 1;
    let names = split_csv(header.trim_start_matches('\u{feff}'))
        .map_err(|m| ModelError::new(source, hline, "header", m))?;
    let h = Header::new(source, hline, &names)?;
    let mut cols = FlowColumns::default();
    for (i, line) in lines {
        let lineno = i + 1;
        let fields = split_csv(line).map_err(|m| ModelError::new(source, lineno, "", m))?;
        if fields.len() != names.len() {
            return Err(ModelError::new(
                source,
                lineno,
                "",
                format!(
                    "expected {} fields (as in the header), got {}",
                    names.len(),
                    fields.len()
                ),
            ));
        }
        Row {
            source,
            lineno,
            h: &h,
            fields: &fields,
        }
        .push_to(&mut cols)?;
    }
    if cols.is_empty() {
        return Err(ModelError::new(
            source,
            hline,
            "",
            "the flow table has a header but no rows",
        ));
    }
    cols.build(source)
}

/// Where each column is: the required ones (in [`REQUIRED`] order) and the
/// optional ones, if present.
struct Header {
    required: Vec<usize>,
    arrival_s: Option<usize>,
    weight: Option<usize>,
    src_port: Option<usize>,
    dst_port: Option<usize>,
    tenant: Option<usize>,
    depends_on: Option<usize>,
    stage: Option<usize>,
    priority: Option<usize>,
}

impl Header {
    fn new(source: &str, hline: usize, names: &[String]) -> Result<Self, ModelError> {
        let col = |name: &str| names.iter().position(|n| n == name);
        let mut required = Vec::with_capacity(REQUIRED.len());
        for r in REQUIRED {
            required.push(col(r).ok_or_else(|| {
                ModelError::new(
                    source,
                    hline,
                    r,
                    format!(
                        "missing required column (required: {})",
                        REQUIRED.join(", ")
                    ),
                )
            })?);
        }
        Ok(Header {
            required,
            arrival_s: col("arrival_s"),
            weight: col("weight"),
            src_port: col("src_port"),
            dst_port: col("dst_port"),
            tenant: col("tenant"),
            depends_on: col("depends_on"),
            stage: col("stage"),
            priority: col("priority"),
        })
    }
}

/// One data row, read field by field; every error names the row's line and the
/// column.
struct Row<'a> {
    source: &'a str,
    lineno: usize,
    h: &'a Header,
    fields: &'a [String],
}

impl Row<'_> {
    fn err(&self, field: &str, msg: String) -> ModelError {
        ModelError::new(self.source, self.lineno, field, msg)
    }

    /// The `k`-th required column's text; an empty one is an error.
    fn required(&self, k: usize) -> Result<&str, ModelError> {
        let s = self.fields[self.h.required[k]].as_str();
        if s.is_empty() {
            return Err(self.err(REQUIRED[k], "missing value".into()));
        }
        Ok(s)
    }

    fn uint(&self, k: usize) -> Result<u64, ModelError> {
        let s = self.required(k)?;
        s.parse::<u64>().map_err(|_| {
            self.err(
                REQUIRED[k],
                format!("expected a whole number ≥ 0, got '{s}'"),
            )
        })
    }

    fn int(&self, k: usize) -> Result<i64, ModelError> {
        let s = self.required(k)?;
        s.parse::<i64>()
            .map_err(|_| self.err(REQUIRED[k], format!("expected a whole number, got '{s}'")))
    }

    fn num(&self, k: usize) -> Result<f64, ModelError> {
        let s = self.required(k)?;
        parse_f64(s).map_err(|m| self.err(REQUIRED[k], m))
    }

    /// An optional column's text: None when the column is absent or empty.
    fn optional(&self, c: Option<usize>) -> Option<&str> {
        c.map(|c| self.fields[c].as_str()).filter(|s| !s.is_empty())
    }

    fn opt_num(&self, c: Option<usize>, name: &str) -> Result<Option<f64>, ModelError> {
        self.optional(c)
            .map(|s| parse_f64(s).map_err(|m| self.err(name, m)))
            .transpose()
    }

    fn opt_uint(&self, c: Option<usize>, name: &str) -> Result<Option<u32>, ModelError> {
        self.optional(c)
            .map(|s| {
                s.parse::<u32>()
                    .map_err(|_| self.err(name, format!("expected a whole number ≥ 0, got '{s}'")))
            })
            .transpose()
    }

    /// `depends_on`: flow ids separated by `;`.
    fn deps(&self) -> Result<Vec<u64>, ModelError> {
        let Some(s) = self.optional(self.h.depends_on) else {
            return Ok(Vec::new());
        };
        s.split(';')
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(|t| {
                t.parse::<u64>()
                    .map_err(|_| self.err("depends_on", format!("'{t}' is not a flow id")))
            })
            .collect()
    }

    fn push_to(&self, cols: &mut FlowColumns) -> Result<(), ModelError> {
        let h = self.h;
        cols.coflow_id.push(self.uint(0)?);
        cols.flow_id.push(self.uint(1)?);
        cols.src.push(self.int(2)?);
        cols.dst.push(self.int(3)?);
        cols.bytes.push(self.num(4)?);
        cols.start_s.push(self.num(5)?);
        cols.arrival_s.push(self.opt_num(h.arrival_s, "arrival_s")?);
        cols.weight.push(self.opt_num(h.weight, "weight")?);
        cols.src_port.push(self.opt_uint(h.src_port, "src_port")?);
        cols.dst_port.push(self.opt_uint(h.dst_port, "dst_port")?);
        cols.tenant
            .push(self.optional(h.tenant).map(str::to_string));
        cols.stage.push(self.opt_uint(h.stage, "stage")?);
        cols.priority.push(self.opt_uint(h.priority, "priority")?);
        cols.depends_on.push(self.deps()?);
        cols.rows.push(self.lineno);
        Ok(())
    }
}

/// Writes the workload as a CSV flow table (exact: floats print in shortest
/// round-trip form).
pub fn write_flow_csv(w: &Workload) -> String {
    use std::fmt::Write;
    let has_meta = !w.meta.is_empty();
    let has_stage = w
        .meta
        .iter()
        .any(|m| m.stage.is_some() || m.priority.is_some());
    let has_deps = w.flows.iter().any(|f| !f.deps.is_empty());
    let mut out = String::from("coflow_id,flow_id,src,dst,bytes,start_s,arrival_s,weight");
    if has_meta {
        out.push_str(",src_port,dst_port,tenant");
    }
    if has_stage {
        out.push_str(",stage,priority");
    }
    if has_deps {
        out.push_str(",depends_on");
    }
    out.push('\n');
    let opt = |v: Option<u32>| v.map(|x| x.to_string()).unwrap_or_default();
    for (i, f) in w.flows.iter().enumerate() {
        let c = &w.coflows[f.coflow as usize];
        write!(
            out,
            "{},{},{},{},{},{},{},{}",
            c.id, f.id, f.src, f.dst, f.size_bytes, f.start_s, c.arrival_s, c.weight
        )
        .unwrap();
        if has_meta {
            let m = &w.meta[i];
            let t = m.tenant.clone().unwrap_or_default();
            let t = if t.contains(',') || t.contains('"') {
                format!("\"{}\"", t.replace('"', "\"\""))
            } else {
                t
            };
            write!(out, ",{},{},{}", opt(m.src_port), opt(m.dst_port), t).unwrap();
        }
        if has_stage {
            let m = &w.meta[i];
            write!(out, ",{},{}", opt(m.stage), opt(m.priority)).unwrap();
        }
        if has_deps {
            let d: Vec<String> = f
                .deps
                .iter()
                .map(|&d| w.flows[d as usize].id.to_string())
                .collect();
            write!(out, ",{}", d.join(";")).unwrap();
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: &str = "coflow_id,flow_id,src,dst,bytes,start_s,depends_on,extra\n\
                     1,11,0,1,100,0.5,,x\n\
                     1,10,1,0,50,0.25,,y\n\
                     2,12,2,2,10,1,10;11,z\n";

    #[test]
    fn a_port_beyond_the_limit_is_an_error_not_an_allocation() {
        // Found by the fuzzer: dst 20001000 made a 20-million-port fabric whose
        // path table asked for petabytes.
        let t = "coflow_id,flow_id,src,dst,bytes,start_s\n1,1,0,20001000,5,0\n";
        let e = read_flow_csv("f.csv", t).unwrap_err();
        assert!(e.to_string().contains("at most 1048576"), "{e}");
        // A large but allowed port costs only the pairs used.
        let t = "coflow_id,flow_id,src,dst,bytes,start_s\n1,1,0,50000,5,0\n";
        assert_eq!(read_flow_csv("f.csv", t).unwrap().fabric.ports(), 50_001);
    }

    #[test]
    fn reads_orders_by_flow_id_and_resolves_dependencies() {
        let w = read_flow_csv("f.csv", T).unwrap();
        assert_eq!(w.fabric.ports(), 3);
        assert_eq!(w.coflows[0].arrival_s, 0.25);
        let ids: Vec<u64> = w.flows.iter().map(|f| f.id).collect();
        assert_eq!(ids, vec![10, 11, 12]);
        assert_eq!(w.flows[2].deps, vec![0, 1]);
        // Round trip keeps every value.
        let text = write_flow_csv(&w);
        let v = read_flow_csv("g.csv", &text).unwrap();
        assert_eq!(write_flow_csv(&v), text);
        assert!(text.contains("2,12,2,2,10,1,1,1,10;11"));
    }

    #[test]
    fn errors_name_line_and_column() {
        let e = |s: &str| read_flow_csv("f.csv", s).unwrap_err().to_string();
        assert_eq!(e(""), "f.csv: the file is empty");
        assert_eq!(
            e("coflow_id,flow_id,src,dst,start_s\n"),
            "f.csv:1: bytes: missing required column (required: coflow_id, flow_id, src, dst, bytes, start_s)"
        );
        let h = "coflow_id,flow_id,src,dst,bytes,start_s\n";
        assert_eq!(e(h), "f.csv:1: the flow table has a header but no rows");
        assert_eq!(
            e(&format!("{h}1,1,0,1,abc,0\n")),
            "f.csv:2: bytes: expected a number, got 'abc'"
        );
        assert_eq!(
            e(&format!("{h}1,1,0,1,,0\n")),
            "f.csv:2: bytes: missing value"
        );
        assert_eq!(
            e(&format!("{h}1,1,0,1,-5,0\n")),
            "f.csv:2: bytes: flow size must be > 0, got -5"
        );
        assert_eq!(
            e(&format!("{h}1,1,0,1,5\n")),
            "f.csv:2: expected 6 fields (as in the header), got 5"
        );
        assert_eq!(
            e(&format!("{h}1,1,-1,1,5,0\n")),
            "f.csv:2: src: port must be ≥ 0, got -1"
        );
        assert_eq!(
            e(&format!("{h}1,1,0,1,5,0\n2,1,0,1,5,0\n")),
            "f.csv:3: flow_id: duplicate flow id 1 (first at line 2)"
        );
        let d = "coflow_id,flow_id,src,dst,bytes,start_s,depends_on\n";
        assert_eq!(
            e(&format!("{d}1,1,0,1,5,0,2\n1,2,0,1,5,0,1\n")),
            "f.csv:2: depends_on: dependency cycle through flow 1"
        );
        assert_eq!(
            e(&format!("{d}1,1,0,1,5,0,9\n")),
            "f.csv:2: depends_on: flow 1 depends on unknown flow 9"
        );
        let a = "coflow_id,flow_id,src,dst,bytes,start_s,arrival_s\n";
        assert_eq!(
            e(&format!("{a}1,1,0,1,5,0,0\n1,2,0,1,5,0,1\n")),
            "f.csv:3: arrival_s: coflow 1 has arrival_s 1 here but 0 at line 2"
        );
    }
}
