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

    fn build_inner(&self, source: &str) -> Result<Workload, ModelError> {
        let n = self.len();
        if n == 0 {
            return Err(ModelError::new(source, 0, "", "the flow table has no rows"));
        }
        let opt_len_ok = |l: usize| l == 0 || l == n;
        if ![
            self.coflow_id.len(),
            self.src.len(),
            self.dst.len(),
            self.bytes.len(),
            self.start_s.len(),
            self.rows.len(),
        ]
        .iter()
        .all(|&l| l == n)
            || ![
                self.arrival_s.len(),
                self.weight.len(),
                self.src_port.len(),
                self.dst_port.len(),
                self.tenant.len(),
                self.stage.len(),
                self.priority.len(),
                self.depends_on.len(),
            ]
            .iter()
            .all(|&l| opt_len_ok(l))
        {
            return Err(ModelError::new(
                source,
                0,
                "",
                "flow table columns have different lengths",
            ));
        }
        // Coflows in order of first appearance; arrival and weight must agree.
        let mut coflows: BTreeMap<u64, (Option<f64>, Option<f64>, usize, usize)> = BTreeMap::new();
        let mut first_seen: Vec<u64> = Vec::new();
        for i in 0..n {
            let a = self.arrival_s.get(i).copied().flatten();
            let w = self.weight.get(i).copied().flatten();
            let row = self.rows[i];
            match coflows.get_mut(&self.coflow_id[i]) {
                None => {
                    coflows.insert(self.coflow_id[i], (a, w, row, i));
                    first_seen.push(self.coflow_id[i]);
                }
                Some(e) => {
                    if a != e.0 {
                        return Err(ModelError::new(
                            source,
                            row,
                            "arrival_s",
                            format!(
                                "coflow {} has arrival_s {} here but {} at line {}",
                                self.coflow_id[i],
                                show(a),
                                show(e.0),
                                e.2
                            ),
                        ));
                    }
                    if w != e.1 {
                        return Err(ModelError::new(
                            source,
                            row,
                            "weight",
                            format!(
                                "coflow {} has weight {} here but {} at line {}",
                                self.coflow_id[i],
                                show(w),
                                show(e.1),
                                e.2
                            ),
                        ));
                    }
                }
            }
        }
        let mut b = WorkloadBuilder::new(source);
        for id in &first_seen {
            let (a, w, row, _) = coflows[id];
            b.add_coflow(CoflowRecord {
                id: *id,
                arrival_s: a,
                weight: w.unwrap_or(1.0),
                line: row,
            })?;
        }
        // Flow index = ascending flow_id within the coflow.
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by_key(|&i| (self.flow_id[i], i));
        let mut max_port: i64 = 0;
        for i in 0..n {
            max_port = max_port.max(self.src[i]).max(self.dst[i]);
        }
        for &i in &order {
            b.add_flow(FlowRecord {
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
            })?;
        }
        let ports = match self.ports {
            Some(p) => p,
            None => (max_port + 1).clamp(1, u32::MAX as i64 / 2) as u32,
        };
        b.build(Fabric::big_switch(ports, GBPS_BYTES_PER_S)?)
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
    let col = |name: &str| names.iter().position(|n| n == name);
    for r in REQUIRED {
        if col(r).is_none() {
            return Err(ModelError::new(
                source,
                hline,
                r,
                format!(
                    "missing required column (required: {})",
                    REQUIRED.join(", ")
                ),
            ));
        }
    }
    let idx: Vec<usize> = REQUIRED.iter().map(|r| col(r).unwrap()).collect();
    let opt = |name: &str| col(name);
    let (c_arr, c_w, c_sp, c_dp, c_t, c_dep) = (
        opt("arrival_s"),
        opt("weight"),
        opt("src_port"),
        opt("dst_port"),
        opt("tenant"),
        opt("depends_on"),
    );
    let (c_stage, c_prio) = (opt("stage"), opt("priority"));
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
        let e = |field: &str, msg: String| ModelError::new(source, lineno, field, msg);
        let get = |k: usize| fields[idx[k]].as_str();
        let uint = |k: usize| -> Result<u64, ModelError> {
            let s = get(k);
            if s.is_empty() {
                return Err(e(REQUIRED[k], "missing value".into()));
            }
            s.parse::<u64>().map_err(|_| {
                e(
                    REQUIRED[k],
                    format!("expected a whole number ≥ 0, got '{s}'"),
                )
            })
        };
        let int = |k: usize| -> Result<i64, ModelError> {
            let s = get(k);
            if s.is_empty() {
                return Err(e(REQUIRED[k], "missing value".into()));
            }
            s.parse::<i64>()
                .map_err(|_| e(REQUIRED[k], format!("expected a whole number, got '{s}'")))
        };
        let num = |k: usize| -> Result<f64, ModelError> {
            let s = get(k);
            if s.is_empty() {
                return Err(e(REQUIRED[k], "missing value".into()));
            }
            parse_f64(s).map_err(|m| e(REQUIRED[k], m))
        };
        let opt_num = |c: Option<usize>, name: &str| -> Result<Option<f64>, ModelError> {
            match c.map(|c| fields[c].as_str()) {
                None | Some("") => Ok(None),
                Some(s) => parse_f64(s).map(Some).map_err(|m| e(name, m)),
            }
        };
        let opt_port = |c: Option<usize>, name: &str| -> Result<Option<u32>, ModelError> {
            match c.map(|c| fields[c].as_str()) {
                None | Some("") => Ok(None),
                Some(s) => s
                    .parse::<u32>()
                    .map(Some)
                    .map_err(|_| e(name, format!("expected a whole number ≥ 0, got '{s}'"))),
            }
        };
        cols.coflow_id.push(uint(0)?);
        cols.flow_id.push(uint(1)?);
        cols.src.push(int(2)?);
        cols.dst.push(int(3)?);
        cols.bytes.push(num(4)?);
        cols.start_s.push(num(5)?);
        cols.arrival_s.push(opt_num(c_arr, "arrival_s")?);
        cols.weight.push(opt_num(c_w, "weight")?);
        cols.src_port.push(opt_port(c_sp, "src_port")?);
        cols.dst_port.push(opt_port(c_dp, "dst_port")?);
        cols.tenant
            .push(c_t.map(|c| fields[c].clone()).filter(|s| !s.is_empty()));
        cols.stage.push(opt_port(c_stage, "stage")?);
        cols.priority.push(opt_port(c_prio, "priority")?);
        let deps = match c_dep.map(|c| fields[c].as_str()) {
            None | Some("") => Vec::new(),
            Some(s) => s
                .split(';')
                .map(str::trim)
                .filter(|t| !t.is_empty())
                .map(|t| {
                    t.parse::<u64>()
                        .map_err(|_| e("depends_on", format!("'{t}' is not a flow id")))
                })
                .collect::<Result<Vec<u64>, ModelError>>()?,
        };
        cols.depends_on.push(deps);
        cols.rows.push(lineno);
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
