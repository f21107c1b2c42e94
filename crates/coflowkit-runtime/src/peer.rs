//! Agent-to-agent messages of decentralized Stream (`coflowkit agent
//! --decentralized stream`), carried in the frames of [`crate::wire`] over a
//! mutual-TLS session between two hosts' agents.
//!
//! * `CLASSES` (type 6), receiver → sender: the class eq. (5) gave each of the
//!   sender's flows into this receiver, with the flow's sub-coflow (coflow,
//!   stage) and the bytes that receiver unit has received so far (the sender
//!   relays them to its other receivers: Information-Relay).
//! * `UNITS` (type 7): bytes received by receiver units, as records of one of
//!   two kinds. `RELAY`, sender → receiver: units of the same coflow at other
//!   receivers that this sender serves. `CHILD`, receiver → receiver: a child
//!   sub-coflow's unit finished, with its final bytes (Child-to-Parent).
//!
//! Payloads, little-endian:
//!
//! ```text
//! CLASSES  u32 n, then n × 33 B: src ipv4 (4), sport u16, dst ipv4 (4), dport u16,
//!          coflow u64, stage u32, class u8, x u64 (bytes received by the unit)
//! UNITS    u32 n, then n × 25 B: kind u8 (1 RELAY, 2 CHILD), coflow u64, stage u32,
//!          receiver ipv4 (4), x u64
//! ```
//!
//! A record that does not decode exactly (a port 0, a coflow id ≥ 2^62 or a
//! stage ≥ 2^31 as in a registration, a class ≥ 64, an unknown kind) refuses the
//! whole payload with a [`WireError`] naming the record; the session ends.

use crate::cursor::{err, Cursor, WireError};

pub const CLASSES: u8 = 6;
pub const UNITS: u8 = 7;

pub const RELAY: u8 = 1;
pub const CHILD: u8 = 2;

const CLASS_LEN: usize = 33;
const UNIT_LEN: usize = 25;
/// Ids and stages as a registration bounds them.
const COFLOW_LIMIT: u64 = 1 << 62;
const STAGE_LIMIT: u32 = 1 << 31;
/// Stream's `queues` is at most 64.
const CLASS_LIMIT: u8 = 64;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClassRecord {
    pub src: [u8; 4],
    pub sport: u16,
    pub dst: [u8; 4],
    pub dport: u16,
    pub coflow: u64,
    pub stage: u32,
    pub class: u8,
    pub x: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnitRecord {
    pub kind: u8,
    pub coflow: u64,
    pub stage: u32,
    pub receiver: [u8; 4],
    pub x: u64,
}

pub fn encode_classes(items: &[ClassRecord]) -> Vec<u8> {
    let mut out = Vec::with_capacity(4 + CLASS_LEN * items.len());
    out.extend_from_slice(&(items.len() as u32).to_le_bytes());
    for r in items {
        out.extend_from_slice(&r.src);
        out.extend_from_slice(&r.sport.to_le_bytes());
        out.extend_from_slice(&r.dst);
        out.extend_from_slice(&r.dport.to_le_bytes());
        out.extend_from_slice(&r.coflow.to_le_bytes());
        out.extend_from_slice(&r.stage.to_le_bytes());
        out.push(r.class);
        out.extend_from_slice(&r.x.to_le_bytes());
    }
    out
}

fn ids(what: &str, i: usize, coflow: u64, stage: u32) -> Result<(), WireError> {
    if coflow >= COFLOW_LIMIT {
        return err(format!(
            "{what} record {i}: coflow {coflow} is not below 2^62"
        ));
    }
    if stage >= STAGE_LIMIT {
        return err(format!(
            "{what} record {i}: stage {stage} is not below 2^31"
        ));
    }
    Ok(())
}

pub fn decode_classes(p: &[u8]) -> Result<Vec<ClassRecord>, WireError> {
    let mut c = Cursor::new(p, "CLASSES");
    let n = c.count(CLASS_LEN, "records")?;
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let r = ClassRecord {
            src: c.ipv4("records")?,
            sport: c.u16("records")?,
            dst: c.ipv4("records")?,
            dport: c.u16("records")?,
            coflow: c.u64("records")?,
            stage: c.u32("records")?,
            class: c.u8("records")?,
            x: c.u64("records")?,
        };
        if r.sport == 0 || r.dport == 0 {
            return err(format!("CLASSES record {i}: port 0"));
        }
        ids("CLASSES", i, r.coflow, r.stage)?;
        if r.class >= CLASS_LIMIT {
            return err(format!(
                "CLASSES record {i}: class {} is not below 64",
                r.class
            ));
        }
        out.push(r);
    }
    c.end()?;
    Ok(out)
}

pub fn encode_units(items: &[UnitRecord]) -> Vec<u8> {
    let mut out = Vec::with_capacity(4 + UNIT_LEN * items.len());
    out.extend_from_slice(&(items.len() as u32).to_le_bytes());
    for r in items {
        out.push(r.kind);
        out.extend_from_slice(&r.coflow.to_le_bytes());
        out.extend_from_slice(&r.stage.to_le_bytes());
        out.extend_from_slice(&r.receiver);
        out.extend_from_slice(&r.x.to_le_bytes());
    }
    out
}

pub fn decode_units(p: &[u8]) -> Result<Vec<UnitRecord>, WireError> {
    let mut c = Cursor::new(p, "UNITS");
    let n = c.count(UNIT_LEN, "records")?;
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let r = UnitRecord {
            kind: c.u8("records")?,
            coflow: c.u64("records")?,
            stage: c.u32("records")?,
            receiver: c.ipv4("records")?,
            x: c.u64("records")?,
        };
        if r.kind != RELAY && r.kind != CHILD {
            return err(format!("UNITS record {i}: unknown kind {}", r.kind));
        }
        ids("UNITS", i, r.coflow, r.stage)?;
        out.push(r);
    }
    c.end()?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class() -> ClassRecord {
        ClassRecord {
            src: [10, 77, 0, 1],
            sport: 40000,
            dst: [10, 77, 0, 2],
            dport: 20000,
            coflow: 7,
            stage: 1,
            class: 2,
            x: 3 << 20,
        }
    }

    fn unit() -> UnitRecord {
        UnitRecord {
            kind: RELAY,
            coflow: 7,
            stage: 0,
            receiver: [10, 77, 0, 3],
            x: 1 << 20,
        }
    }

    #[test]
    fn records_round_trip_with_the_documented_layout() {
        let p = encode_classes(&[class()]);
        assert_eq!(p.len(), 4 + 33);
        assert_eq!(&p[..4], &1u32.to_le_bytes());
        assert_eq!(&p[4..8], &[10, 77, 0, 1]);
        assert_eq!(&p[8..10], &40000u16.to_le_bytes());
        assert_eq!(p[4 + 24], 2, "class byte after coflow and stage");
        assert_eq!(decode_classes(&p).unwrap(), vec![class()]);
        let q = encode_units(&[
            unit(),
            UnitRecord {
                kind: CHILD,
                ..unit()
            },
        ]);
        assert_eq!(q.len(), 4 + 2 * 25);
        assert_eq!(q[4], RELAY);
        assert_eq!(q[4 + 25], CHILD);
        assert_eq!(decode_units(&q).unwrap().len(), 2);
    }

    #[test]
    fn bad_records_name_what_is_wrong() {
        let bad = |r: ClassRecord| {
            decode_classes(&encode_classes(&[class(), r]))
                .unwrap_err()
                .0
        };
        assert_eq!(
            bad(ClassRecord {
                sport: 0,
                ..class()
            }),
            "CLASSES record 1: port 0"
        );
        assert!(bad(ClassRecord {
            class: 64,
            ..class()
        })
        .contains("class 64"));
        assert!(bad(ClassRecord {
            coflow: 1 << 62,
            ..class()
        })
        .contains("2^62"));
        assert!(bad(ClassRecord {
            stage: 1 << 31,
            ..class()
        })
        .contains("2^31"));
        let e = decode_units(&encode_units(&[UnitRecord { kind: 3, ..unit() }])).unwrap_err();
        assert_eq!(e.0, "UNITS record 0: unknown kind 3");
        // A count larger than the bytes that follow is refused before allocating.
        let mut p = encode_classes(&[class()]);
        p[..4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(decode_classes(&p).unwrap_err().0.contains("records need"));
        let mut p = encode_units(&[unit()]);
        p.push(0);
        assert!(decode_units(&p).unwrap_err().0.contains("trailing"));
    }
}
