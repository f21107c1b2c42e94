//! The per-flow format of the Sincronia simulator:
//!
//! ```text
//! <ports> <coflows>
//! <id> <arrival ms> <#flows> <#senders> <#receivers>
//! <src> <dst> <MB>          (one triple per flow; triples may share lines)
//! ```
//!
//! `#senders` and `#receivers` must equal the numbers of distinct sources and
//! destinations among the coflow's flows. Flow index = file order; flow ids count
//! from 0 over the whole file.

use crate::benchmark::{check_count, header, outside};
use crate::tokens::Tokens;
use coflowkit_model::{
    CoflowRecord, Fabric, FlowMeta, FlowRecord, ModelError, Workload, WorkloadBuilder,
    GBPS_BYTES_PER_S, MIB,
};
use std::collections::BTreeSet;

pub fn read_sincronia(source: &str, text: &str) -> Result<Workload, ModelError> {
    let (ports, n_coflows, header_line) = header(source, text)?;
    let mut t = Tokens::new(source, text);
    t.next("ports")?;
    t.next("coflows")?;
    let mut b = WorkloadBuilder::new(source);
    let mut next_flow = 0u64;
    let mut seen = 0u64;
    while !t.done() {
        seen += 1;
        read_coflow(&mut t, &mut b, ports, &mut next_flow)?;
    }
    check_count(source, header_line, n_coflows, seen)?;
    b.build(Fabric::big_switch(ports, GBPS_BYTES_PER_S)?)
}

/// One coflow: `<id> <arrival ms> <flows> <senders> <receivers>` then its flows
/// as `<src> <dst> <MB>`; the declared sender and receiver counts must match the
/// flows'.
fn read_coflow(
    t: &mut Tokens,
    b: &mut WorkloadBuilder,
    ports: u32,
    next_flow: &mut u64,
) -> Result<(), ModelError> {
    let (id, line) = t.uint("coflow id")?;
    let (arrival_ms, aline) = t.float("arrival")?;
    if arrival_ms < 0.0 {
        return Err(t.err(
            aline,
            "arrival",
            format!("arrival must be ≥ 0, got {arrival_ms}"),
        ));
    }
    let (n, nline) = t.uint("number of flows")?;
    if n == 0 {
        return Err(t.err(
            nline,
            "number of flows",
            format!("coflow {id} has no flows"),
        ));
    }
    let (senders, sline) = t.uint("number of senders")?;
    let (receivers, rline) = t.uint("number of receivers")?;
    let arrival_s = arrival_ms / 1000.0;
    b.add_coflow(CoflowRecord {
        id,
        arrival_s: Some(arrival_s),
        weight: 1.0,
        line,
    })?;
    let mut srcs = BTreeSet::new();
    let mut dsts = BTreeSet::new();
    for k in 0..n {
        let (src, dst) = read_flow(t, b, ports, (id, n, k), arrival_s, *next_flow)?;
        srcs.insert(src);
        dsts.insert(dst);
        *next_flow += 1;
    }
    for (field, declared, got, what) in [
        ("number of senders", senders, srcs.len(), (sline, "senders")),
        (
            "number of receivers",
            receivers,
            dsts.len(),
            (rline, "receivers"),
        ),
    ] {
        if got as u64 != declared {
            return Err(t.err(
                what.0,
                field,
                format!(
                    "coflow {id} declares {declared} {} but its flows have {got}",
                    what.1
                ),
            ));
        }
    }
    Ok(())
}

/// The `k`-th of the `n` flows of coflow `id` (`coflow = (id, n, k)`); returns
/// its ports.
fn read_flow(
    t: &mut Tokens,
    b: &mut WorkloadBuilder,
    ports: u32,
    coflow: (u64, u64, u64),
    arrival_s: f64,
    flow_id: u64,
) -> Result<(u64, u64), ModelError> {
    let (id, n, k) = coflow;
    let missing = |mut e: ModelError| {
        if e.message.starts_with("missing") {
            e.message = format!("missing: coflow {id} declares {n} flows but lists {k}");
        }
        e
    };
    let (src, l1) = t.uint("src").map_err(missing)?;
    let (dst, l2) = t.uint("dst").map_err(missing)?;
    let (mb, l3) = t.float("MB").map_err(missing)?;
    if src >= ports as u64 {
        return Err(t.err(l1, "src", outside(src, ports)));
    }
    if dst >= ports as u64 {
        return Err(t.err(l2, "dst", outside(dst, ports)));
    }
    if mb <= 0.0 {
        return Err(t.err(l3, "MB", format!("flow size must be > 0 MB, got {mb}")));
    }
    b.add_flow(FlowRecord {
        coflow_id: id,
        flow_id,
        src: src as i64,
        dst: dst as i64,
        size_bytes: mb * MIB,
        start_s: arrival_s,
        depends_on: Vec::new(),
        meta: FlowMeta::default(),
        line: l1,
    })?;
    Ok((src, dst))
}

/// Writes the workload in the Sincronia format (flow starts other than the coflow's
/// arrival and dependencies are not representable and are dropped by the format).
pub fn write_sincronia(w: &Workload) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    writeln!(out, "{} {}", w.fabric.ports(), w.coflows.len()).unwrap();
    for c in &w.coflows {
        let flows = &w.flows[c.flows()];
        let s: BTreeSet<u32> = flows.iter().map(|f| f.src).collect();
        let d: BTreeSet<u32> = flows.iter().map(|f| f.dst).collect();
        writeln!(
            out,
            "{} {} {} {} {}",
            c.id,
            c.arrival_s * 1000.0,
            flows.len(),
            s.len(),
            d.len()
        )
        .unwrap();
        for f in flows {
            writeln!(out, "{} {} {}", f.src, f.dst, f.size_bytes / MIB).unwrap();
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_triples_in_file_order_on_any_line_layout() {
        let a = read_sincronia("t", "4 1\n3 20 2 2 1\n0 3 1.5\n2 3 0.5\n").unwrap();
        let b = read_sincronia("t", "4 1\n3 20 2 2 1 0 3 1.5 2 3 0.5\n").unwrap();
        for w in [&a, &b] {
            assert_eq!(w.coflows[0].arrival_s, 0.02);
            let f: Vec<(u32, u32, f64)> = w
                .flows
                .iter()
                .map(|f| (f.src, f.dst, f.size_bytes / MIB))
                .collect();
            assert_eq!(f, vec![(0, 3, 1.5), (2, 3, 0.5)]);
        }
        let text = write_sincronia(&a);
        assert_eq!(text, "4 1\n3 20 2 2 1\n0 3 1.5\n2 3 0.5\n");
        let c = read_sincronia("t", &text).unwrap();
        assert_eq!(c.flows[1].size_bytes, a.flows[1].size_bytes);
    }

    #[test]
    fn errors_name_line_and_field() {
        let e = |s: &str| read_sincronia("s.txt", s).unwrap_err().to_string();
        assert_eq!(
            e("4 1\n3 20 2 2 1\n0 3 1.5\n"),
            "s.txt:3: src: missing: coflow 3 declares 2 flows but lists 1"
        );
        assert_eq!(
            e("4 1\n3 20 1 2 1\n0 3 1.5\n"),
            "s.txt:2: number of senders: coflow 3 declares 2 senders but its flows have 1"
        );
        assert_eq!(
            e("4 1\n3 20 1 1 1\n0 3 0\n"),
            "s.txt:3: MB: flow size must be > 0 MB, got 0"
        );
        assert_eq!(
            e("4 1\n3 20 1 1 1\n0 4 1\n"),
            "s.txt:3: dst: port 4 is outside the fabric (ports 0..3)"
        );
        assert_eq!(
            e("4 1\n3 20 0 0 0\n"),
            "s.txt:2: number of flows: coflow 3 has no flows"
        );
        assert_eq!(
            e("4 2\n3 20 1 1 1\n0 3 1\n"),
            "s.txt:1: coflows: the header says 2 coflows but the file has 1"
        );
    }
}
