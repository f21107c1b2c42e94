//! The Coflow-Benchmark format (coflow/coflow-benchmark):
//!
//! ```text
//! <ports> <coflows>
//! <id> <arrival ms> <#mappers> <mapper port>... <#reducers> <reducer port>:<MB>...
//! ```
//!
//! Every mapper sends to every reducer; a reducer's MB (1 MB = 2^20 bytes) are split
//! evenly across the coflow's mappers. Flows are enumerated mapper-major (for each
//! mapper in file order, for each reducer in file order); flow ids count from 0 over
//! the whole file in that order.

use crate::tokens::{parse_f64, Tokens};
use coflowkit_model::{
    CoflowRecord, Fabric, FlowMeta, FlowRecord, ModelError, Workload, WorkloadBuilder,
    GBPS_BYTES_PER_S, MIB,
};

/// Parses `<ports> <coflows>` from the first non-empty line.
pub(crate) fn header(source: &str, text: &str) -> Result<(u32, u64, usize), ModelError> {
    let (i, line) = text
        .lines()
        .enumerate()
        .find(|(_, l)| !l.trim().is_empty())
        .ok_or_else(|| ModelError::new(source, 0, "", "the file is empty"))?;
    let mut t = Tokens::new(source, line);
    let lineno = i + 1;
    let fix = |mut e: ModelError| {
        e.line = lineno;
        e
    };
    let (ports, _) = t.uint("ports").map_err(fix)?;
    let (coflows, _) = t.uint("coflows").map_err(fix)?;
    if !t.done() {
        return Err(ModelError::new(
            source,
            lineno,
            "header",
            "expected exactly '<ports> <coflows>'",
        ));
    }
    if ports == 0 || ports > coflowkit_model::MAX_PORTS as u64 {
        return Err(ModelError::new(
            source,
            lineno,
            "ports",
            format!("invalid port count {ports}"),
        ));
    }
    Ok((ports as u32, coflows, lineno))
}

pub fn read_benchmark(source: &str, text: &str) -> Result<Workload, ModelError> {
    let (ports, n_coflows, header_line) = header(source, text)?;
    let mut b = WorkloadBuilder::new(source);
    let mut next_flow: u64 = 0;
    let mut seen: u64 = 0;
    for (i, line) in text.lines().enumerate().skip(header_line) {
        if line.trim().is_empty() {
            continue;
        }
        seen += 1;
        let c = parse_line(source, line, i + 1, ports)?;
        add_coflow_line(&mut b, &c, &mut next_flow)?;
    }
    check_count(source, header_line, n_coflows, seen)?;
    let fabric = Fabric::big_switch(ports, GBPS_BYTES_PER_S)?;
    b.build(fabric)
        .map_err(|e| rename_fields(e, "mapper or reducer port"))
}

/// One coflow line, parsed and checked: its mappers' ports, and per reducer its
/// port, shuffle size in MB and field name (`reducer K`).
struct CoflowLine {
    id: u64,
    arrival_s: f64,
    line: usize,
    mappers: Vec<i64>,
    reducers: Vec<(i64, f64, String)>,
}

/// Sets an error's line to `line` (the tokenizer does not know it).
fn at(line: usize) -> impl Fn(ModelError) -> ModelError {
    move |mut e| {
        e.line = line;
        e
    }
}

/// `<id> <arrival ms> <M> <mapper>... <R> <reducer port>:<MB>...`
fn parse_line(
    source: &str,
    line: &str,
    lineno: usize,
    ports: u32,
) -> Result<CoflowLine, ModelError> {
    let mut t = Tokens::new(source, line);
    let (id, _) = t.uint("coflow id").map_err(at(lineno))?;
    let (arrival_ms, _) = t.float("arrival").map_err(at(lineno))?;
    if arrival_ms < 0.0 {
        return Err(t.err(
            lineno,
            "arrival",
            format!("arrival must be ≥ 0, got {arrival_ms}"),
        ));
    }
    let mappers = read_mappers(&mut t, lineno, line.len(), ports)?;
    let reducers = read_reducers(&mut t, lineno, line.len(), ports, mappers.len())?;
    if !t.done() {
        return Err(t.err(
            lineno,
            "reducers",
            format!(
                "the line has fields after its {} reducers; do the counts match the fields?",
                reducers.len()
            ),
        ));
    }
    Ok(CoflowLine {
        id,
        arrival_s: arrival_ms / 1000.0,
        line: lineno,
        mappers,
        reducers,
    })
}

/// The mapper count and the mappers' ports.
fn read_mappers(
    t: &mut Tokens,
    lineno: usize,
    len: usize,
    ports: u32,
) -> Result<Vec<i64>, ModelError> {
    let (m, _) = t.uint("number of mappers").map_err(at(lineno))?;
    if m == 0 {
        return Err(t.err(
            lineno,
            "number of mappers",
            "a coflow needs at least one mapper",
        ));
    }
    // A count is checked against the line's tokens, not trusted for an allocation.
    let mut mappers = Vec::with_capacity((m as usize).min(len));
    for k in 0..m {
        let field = format!("mapper {}", k + 1);
        let (v, _) = t.uint(&field).map_err(|e| {
            let mut e = at(lineno)(e);
            if e.message.starts_with("missing") {
                e.message = format!("missing: the line declares {m} mappers but lists {k}");
            }
            e
        })?;
        if v >= ports as u64 {
            return Err(t.err(lineno, &field, outside(v, ports)));
        }
        mappers.push(v as i64);
    }
    Ok(mappers)
}

/// The reducer count and each reducer's `<port>:<MB>`.
fn read_reducers(
    t: &mut Tokens,
    lineno: usize,
    len: usize,
    ports: u32,
    m: usize,
) -> Result<Vec<(i64, f64, String)>, ModelError> {
    let (r, _) = t.uint("number of reducers").map_err(|e| {
        let mut e = at(lineno)(e);
        if !e.message.starts_with("missing") {
            e.message = format!("{} (is the mapper count {m} right?)", e.message);
        }
        e
    })?;
    if r == 0 {
        return Err(t.err(
            lineno,
            "number of reducers",
            "a coflow needs at least one reducer",
        ));
    }
    let mut reducers = Vec::with_capacity((r as usize).min(len));
    for k in 0..r {
        let field = format!("reducer {}", k + 1);
        let (tok, _) = t.next(&field).map_err(|e| {
            let mut e = at(lineno)(e);
            e.message = format!("missing: the line declares {r} reducers but lists {k}");
            e
        })?;
        let (loc, mb) = tok.split_once(':').ok_or_else(|| {
            t.err(
                lineno,
                &field,
                format!("expected '<port>:<MB>', got '{tok}'"),
            )
        })?;
        let loc: i64 = loc.parse::<u64>().map_err(|_| {
            t.err(
                lineno,
                &field,
                format!("port is not a whole number ≥ 0: '{loc}'"),
            )
        })? as i64;
        if loc >= ports as i64 {
            return Err(t.err(lineno, &field, outside(loc as u64, ports)));
        }
        let mb = parse_f64(mb).map_err(|m| t.err(lineno, &field, m))?;
        if mb <= 0.0 {
            return Err(t.err(
                lineno,
                &field,
                format!("shuffle size must be > 0 MB, got {mb}"),
            ));
        }
        reducers.push((loc, mb, field));
    }
    Ok(reducers)
}

/// The coflow and its M × R flows (each reducer's shuffle split evenly among the
/// mappers), numbered from `next_flow`; a port error names the mapper or reducer.
fn add_coflow_line(
    b: &mut WorkloadBuilder,
    c: &CoflowLine,
    next_flow: &mut u64,
) -> Result<(), ModelError> {
    b.add_coflow(CoflowRecord {
        id: c.id,
        arrival_s: Some(c.arrival_s),
        weight: 1.0,
        line: c.line,
    })?;
    let m = c.mappers.len() as f64;
    for (mk, &src) in c.mappers.iter().enumerate() {
        for (dst, mb, field) in &c.reducers {
            b.add_flow(FlowRecord {
                coflow_id: c.id,
                flow_id: *next_flow,
                src,
                dst: *dst,
                size_bytes: mb * MIB / m,
                start_s: c.arrival_s,
                depends_on: Vec::new(),
                meta: FlowMeta::default(),
                line: c.line,
            })
            .map_err(|mut e| {
                if e.field == "src" {
                    e.field = format!("mapper {}", mk + 1);
                } else if e.field == "dst" {
                    e.field = field.clone();
                }
                e
            })?;
            *next_flow += 1;
        }
    }
    Ok(())
}

/// The header's coflow count against the coflows the file lists.
pub(crate) fn check_count(
    source: &str,
    header_line: usize,
    declared: u64,
    seen: u64,
) -> Result<(), ModelError> {
    if seen != declared {
        return Err(ModelError::new(
            source,
            header_line,
            "coflows",
            format!("the header says {declared} coflows but the file has {seen}"),
        ));
    }
    Ok(())
}

pub(crate) fn outside(port: u64, ports: u32) -> String {
    format!("port {port} is outside the fabric (ports 0..{})", ports - 1)
}

fn rename_fields(mut e: ModelError, port_field: &str) -> ModelError {
    if e.field == "src" || e.field == "dst" {
        e.field = port_field.to_string();
    }
    e
}

/// Writes the workload in the Coflow-Benchmark format. Fails when a coflow is not a
/// mappers × reducers product with even splits and all flows starting at arrival.
pub fn write_benchmark(w: &Workload) -> Result<String, ModelError> {
    use std::fmt::Write;
    let mut out = String::new();
    let ports = w.fabric.ports();
    writeln!(out, "{} {}", ports, w.coflows.len()).unwrap();
    for c in &w.coflows {
        let flows = &w.flows[c.flows()];
        let cannot = |why: &str| {
            ModelError::new(
                &w.source,
                0,
                "format",
                format!(
                    "coflow {} cannot be written in the benchmark format: {why}",
                    c.id
                ),
            )
        };
        // Reducers: the dsts of the first mapper's run; mappers: every r-th src.
        let first_src = flows[0].src;
        let r = flows.iter().take_while(|f| f.src == first_src).count();
        if !flows.len().is_multiple_of(r) {
            return Err(cannot("its flows are not mappers × reducers"));
        }
        let m = flows.len() / r;
        let reducers: Vec<u32> = flows[..r].iter().map(|f| f.dst).collect();
        let mut mappers = Vec::with_capacity(m);
        for (k, chunk) in flows.chunks(r).enumerate() {
            let s = chunk[0].src;
            for (j, f) in chunk.iter().enumerate() {
                if f.src != s || f.dst != reducers[j] {
                    return Err(cannot(
                        "its flows are not mappers × reducers in mapper-major order",
                    ));
                }
                if (f.size_bytes - flows[j].size_bytes).abs() > 1e-9 * f.size_bytes {
                    return Err(cannot(
                        "a reducer's bytes are not split evenly across mappers",
                    ));
                }
                if (f.start_s - c.arrival_s).abs() > 1e-12 || !f.deps.is_empty() {
                    return Err(cannot("a flow starts after the coflow's arrival"));
                }
            }
            let _ = k;
            mappers.push(s);
        }
        write!(out, "{} {} {}", c.id, c.arrival_s * 1000.0, m).unwrap();
        for s in &mappers {
            write!(out, " {s}").unwrap();
        }
        write!(out, " {r}").unwrap();
        for (j, d) in reducers.iter().enumerate() {
            write!(out, " {}:{}", d, flows[j].size_bytes * m as f64 / MIB).unwrap();
        }
        out.push('\n');
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_ports_from_the_file_are_not_trusted_for_allocations() {
        // Found by the fuzzer (docs/results/runtime/fuzz.md): a mapper count of
        // 1.8e9 was handed to Vec::with_capacity and aborted the process.
        let e = read_benchmark("t", "150 1\n108 0 0001784019211 22 1:6 1\n").unwrap_err();
        assert!(e.to_string().contains("mapper"), "{e}");
        let e = read_benchmark("t", "2000000 1\n1 0 1 0 1 1:1\n").unwrap_err();
        assert!(e.to_string().contains("invalid port count 2000000"), "{e}");
    }

    #[test]
    fn reads_mapper_major_with_even_split() {
        // Coflow 7: mappers 0 and 2, reducers 1 (3 MB) and 2 (1 MB).
        let w = read_benchmark("t", "3 1\n7 1500 2 0 2 2 1:3.0 2:1\n").unwrap();
        assert_eq!(w.flows.len(), 4);
        let pairs: Vec<(u32, u32, f64)> = w
            .flows
            .iter()
            .map(|f| (f.src, f.dst, f.size_bytes / MIB))
            .collect();
        assert_eq!(
            pairs,
            vec![(0, 1, 1.5), (0, 2, 0.5), (2, 1, 1.5), (2, 2, 0.5)]
        );
        assert_eq!(w.coflows[0].arrival_s, 1.5);
        assert_eq!(w.flows[3].index, 3);
        // Round trip.
        let text = write_benchmark(&w).unwrap();
        assert_eq!(text, "3 1\n7 1500 2 0 2 2 1:3 2:1\n");
    }

    #[test]
    fn errors_name_line_and_field() {
        let e = |s: &str| read_benchmark("t.txt", s).unwrap_err().to_string();
        assert_eq!(e(""), "t.txt: the file is empty");
        assert_eq!(
            e("3 2\n1 0 1 0 1 1:1\n"),
            "t.txt:1: coflows: the header says 2 coflows but the file has 1"
        );
        assert_eq!(
            e("3 1\n1 0 2 0 1 1:1\n"),
            "t.txt:2: number of reducers: expected a whole number ≥ 0, got '1:1' (is the mapper count 2 right?)"
        );
        assert_eq!(
            e("3 1\n1 0 1 0 1 1:0\n"),
            "t.txt:2: reducer 1: shuffle size must be > 0 MB, got 0"
        );
        assert_eq!(
            e("3 1\n1 0 1 0 1 1:-2\n"),
            "t.txt:2: reducer 1: shuffle size must be > 0 MB, got -2"
        );
        assert_eq!(
            e("3 1\n1 0 1 0 2 1:1\n"),
            "t.txt:2: reducer 2: missing: the line declares 2 reducers but lists 1"
        );
        assert_eq!(
            e("3 1\n1 x 1 0 1 1:1\n"),
            "t.txt:2: arrival: expected a number, got 'x'"
        );
        assert_eq!(
            e("3 1\n1 0 1 5 1 1:1\n"),
            "t.txt:2: mapper 1: port 5 is outside the fabric (ports 0..2)"
        );
        assert_eq!(
            e("3 1\n1 0 1 0 1 9:1\n"),
            "t.txt:2: reducer 1: port 9 is outside the fabric (ports 0..2)"
        );
        assert_eq!(
            e("3 2\n1 0 1 0 1 1:1\n1 5 1 0 1 1:1\n"),
            "t.txt:3: coflow_id: duplicate coflow id 1 (first at line 2)"
        );
        assert_eq!(
            e("3 1\n1 0 1 0 1 1:1 5\n"),
            "t.txt:2: reducers: the line has fields after its 1 reducers; do the counts match the fields?"
        );
        assert_eq!(
            e("3 1 4\n"),
            "t.txt:1: header: expected exactly '<ports> <coflows>'"
        );
    }
}
