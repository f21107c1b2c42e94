//! The master-agent protocol (version 2): frames and payloads, decoded with every
//! length and value checked before it is trusted.
//!
//! Sessions run over mutually authenticated TLS (`coflowkit.runtime.tls`): the
//! TLS layer gives each peer its identity, integrity, and freshness across
//! sessions. This module only cuts the byte stream into frames and decodes them.
//! Every integer is little-endian.
//!
//! ```text
//! frame    = len u32 | magic "CK" | version u8 (2) | type u8 | seq u64 | payload
//!            len counts everything after itself: 12 header bytes + the payload,
//!            and is at most the reader's limit (small until the peer's HELLO is
//!            accepted, then up to MAX_FRAME).
//! HELLO    = host u16 | interval_ms u32 | boot_id [16] | n u8 | n x IPv4 [4]
//!            | name_len u8 | name (UTF-8)
//! REPORT   = time f64 | n u32 | n x (fid u32, sport u16, dst [4], dport u16,
//!            first_seen f64, sent u64) | n u32 | n x (fid u32, bytes u64)   (updated)
//!            | n u32 | n x (fid u32, bytes u64)                             (gone)
//! DECISIONS= n u32 | n x (fid u32, kind u8, value f64)
//!            kind 0 = unlimited (value ignored), 1 = rate (goodput bytes/s, finite,
//!            >= 0), 2 = class (an integer 0..=255)
//! ERROR    = UTF-8 reason
//! ```
//!
//! Sequence numbers count 0, 1, 2, ... per direction and session; a gap, a
//! repeat or a reordering is an error. An error of any kind ends the session.

pub use crate::cursor::WireError;
use crate::cursor::{err, Cursor};
use crate::peer;

pub const MAGIC: [u8; 2] = *b"CK";
pub const VERSION: u8 = 2;
/// Bytes of magic, version, type and sequence number.
pub const HEADER: usize = 12;
/// The largest frame an authenticated peer may send (length field).
pub const MAX_FRAME: u32 = 16 << 20;
/// The largest frame before the peer's HELLO is accepted.
pub const MAX_FRAME_BEFORE_HELLO: u32 = 4 << 10;

pub const HELLO: u8 = 2;
pub const REPORT: u8 = 3;
pub const DECISIONS: u8 = 4;
pub const ERROR: u8 = 5;

pub const UNLIMITED: u8 = 0;
pub const RATE: u8 = 1;
pub const CLASS: u8 = 2;

const NEW_LEN: usize = 28;
const PAIR_LEN: usize = 12;
const DEC_LEN: usize = 13;
pub const BOOT_ID_LEN: usize = 16;

pub fn type_name(t: u8) -> String {
    match t {
        HELLO => "HELLO".into(),
        REPORT => "REPORT".into(),
        DECISIONS => "DECISIONS".into(),
        ERROR => "ERROR".into(),
        crate::peer::CLASSES => "CLASSES".into(),
        crate::peer::UNITS => "UNITS".into(),
        other => format!("type {other}"),
    }
}

/// One frame, header included: `len | magic | version | type | seq | payload`.
pub fn encode_frame(mtype: u8, seq: u64, payload: &[u8]) -> Result<Vec<u8>, WireError> {
    let len = HEADER + payload.len();
    if len > MAX_FRAME as usize {
        return err(format!(
            "{}: a frame of {len} bytes is over the {MAX_FRAME}-byte limit",
            type_name(mtype)
        ));
    }
    let mut out = Vec::with_capacity(4 + len);
    out.extend_from_slice(&(len as u32).to_le_bytes());
    out.extend_from_slice(&MAGIC);
    out.push(VERSION);
    out.push(mtype);
    out.extend_from_slice(&seq.to_le_bytes());
    out.extend_from_slice(payload);
    Ok(out)
}

/// Cuts a byte stream into checked frames. It holds at most one partial frame,
/// never more than `limit + 4` bytes, whatever the peer sends. The first frame
/// of a session (the peer's introduction) has a limit of its own: a peer's
/// first frame is checked before anything after it is trusted.
#[derive(Debug, Clone)]
pub struct FrameReader {
    buf: Vec<u8>,
    first_limit: u32,
    limit: u32,
    recv_seq: u64,
    /// Types this side accepts (a bit per type number).
    accept: u32,
}

impl FrameReader {
    /// A reader of frames of at most `limit` bytes, of the types in `accept`.
    pub fn new(limit: u32, accept: &[u8]) -> Self {
        Self::with_first(limit, limit, accept)
    }

    /// As [`FrameReader::new`], with a smaller limit on the first frame.
    pub fn with_first(first_limit: u32, limit: u32, accept: &[u8]) -> Self {
        let mut mask = 0u32;
        for &t in accept {
            if t < 32 {
                mask |= 1 << t;
            }
        }
        FrameReader {
            buf: Vec::new(),
            first_limit: first_limit.min(limit).min(MAX_FRAME),
            limit: limit.min(MAX_FRAME),
            recv_seq: 0,
            accept: mask,
        }
    }

    /// The limit on the next frame.
    pub fn limit(&self) -> u32 {
        if self.recv_seq == 0 {
            self.first_limit
        } else {
            self.limit
        }
    }

    /// Bytes held of a frame not complete yet (0 between frames).
    pub fn pending(&self) -> usize {
        self.buf.len()
    }

    /// Frames received so far.
    pub fn received(&self) -> u64 {
        self.recv_seq
    }

    /// Feeds `data`; returns the frames it completed, `(type, payload)`, or the
    /// first error (the reader is then unusable: the session must end).
    pub fn feed(&mut self, mut data: &[u8]) -> Result<Vec<(u8, Vec<u8>)>, WireError> {
        let mut out = Vec::new();
        // Whole frames straight from `data` when nothing is buffered; the rest
        // (a partial frame) is copied once.
        loop {
            if self.buf.is_empty() {
                match self.frame_len(data)? {
                    Some(n) if data.len() >= 4 + n => {
                        out.push(self.check(&data[4..4 + n])?);
                        data = &data[4 + n..];
                        continue;
                    }
                    _ => {
                        self.buf.extend_from_slice(data);
                        break;
                    }
                }
            }
            // Top up the buffered frame: the length first, then its body.
            if self.buf.len() < 4 {
                let take = (4 - self.buf.len()).min(data.len());
                self.buf.extend_from_slice(&data[..take]);
                data = &data[take..];
                if self.buf.len() < 4 {
                    break;
                }
            }
            let n = self.frame_len(&self.buf)?.expect("four bytes are buffered");
            let take = (4 + n - self.buf.len()).min(data.len());
            self.buf.extend_from_slice(&data[..take]);
            data = &data[take..];
            if self.buf.len() < 4 + n {
                break;
            }
            let frame = std::mem::take(&mut self.buf);
            out.push(self.check(&frame[4..])?);
        }
        Ok(out)
    }

    /// The length field at the start of `data`, checked against the limit.
    fn frame_len(&self, data: &[u8]) -> Result<Option<usize>, WireError> {
        if data.len() < 4 {
            return Ok(None);
        }
        let n = u32::from_le_bytes([data[0], data[1], data[2], data[3]]);
        let limit = self.limit();
        if (n as usize) < HEADER || n > limit {
            return err(format!("frame length {n} outside {HEADER}..{limit} bytes"));
        }
        Ok(Some(n as usize))
    }

    fn check(&mut self, frame: &[u8]) -> Result<(u8, Vec<u8>), WireError> {
        if frame[0..2] != MAGIC {
            return err(format!(
                "bad magic {:?} (not a coflowkit peer?)",
                String::from_utf8_lossy(&frame[0..2])
            ));
        }
        let version = frame[2];
        if version != VERSION {
            return err(format!(
                "protocol version {version} is not supported (this side speaks {VERSION})"
            ));
        }
        let mtype = frame[3];
        let seq = u64::from_le_bytes(frame[4..12].try_into().expect("eight bytes"));
        if mtype >= 32 || self.accept & (1 << mtype) == 0 {
            return err(format!("unexpected message {}", type_name(mtype)));
        }
        if seq != self.recv_seq {
            return err(format!(
                "{}: sequence {seq}, expected {}",
                type_name(mtype),
                self.recv_seq
            ));
        }
        self.recv_seq += 1;
        Ok((mtype, frame[HEADER..].to_vec()))
    }
}

/// An agent's introduction: which host it is (checked by the master against the
/// host its certificate names), its interval, the id of this agent process
/// (a restarted agent has a new one), its addresses and a name.
#[derive(Debug, Clone, PartialEq)]
pub struct Hello {
    pub host: u16,
    pub interval_ms: u32,
    pub boot_id: [u8; BOOT_ID_LEN],
    pub addrs: Vec<[u8; 4]>,
    pub name: String,
}

impl Hello {
    pub fn encode(&self) -> Result<Vec<u8>, WireError> {
        if self.addrs.len() > 255 {
            return err("HELLO: more than 255 addresses");
        }
        if self.name.len() > 255 {
            return err("HELLO: a name of more than 255 bytes");
        }
        let mut out = Vec::with_capacity(24 + 4 * self.addrs.len() + self.name.len());
        out.extend_from_slice(&self.host.to_le_bytes());
        out.extend_from_slice(&self.interval_ms.to_le_bytes());
        out.extend_from_slice(&self.boot_id);
        out.push(self.addrs.len() as u8);
        for a in &self.addrs {
            out.extend_from_slice(a);
        }
        out.push(self.name.len() as u8);
        out.extend_from_slice(self.name.as_bytes());
        Ok(out)
    }

    pub fn decode(p: &[u8]) -> Result<Hello, WireError> {
        let mut c = Cursor::new(p, "HELLO");
        let host = c.u16("host")?;
        let interval_ms = c.u32("interval")?;
        if interval_ms == 0 {
            return err("HELLO interval: 0 ms");
        }
        let boot_id: [u8; BOOT_ID_LEN] = c.take(BOOT_ID_LEN, "boot id")?.try_into().unwrap();
        let n = c.u8("address count")? as usize;
        let mut addrs = Vec::with_capacity(n);
        for _ in 0..n {
            addrs.push(c.ipv4("addresses")?);
        }
        let len = c.u8("name length")? as usize;
        let name = std::str::from_utf8(c.take(len, "name")?)
            .map_err(|_| WireError("HELLO: the name is not UTF-8".into()))?
            .to_string();
        c.end()?;
        Ok(Hello {
            host,
            interval_ms,
            boot_id,
            addrs,
            name,
        })
    }
}

/// A flow an agent reports for the first time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NewFlow {
    pub fid: u32,
    pub sport: u16,
    pub dst: [u8; 4],
    pub dport: u16,
    pub first_seen: f64,
    pub sent: u64,
}

/// One REPORT: new flows, flows whose acknowledged bytes grew, flows that ended.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Report {
    pub time: f64,
    pub new: Vec<NewFlow>,
    pub updated: Vec<(u32, u64)>,
    pub gone: Vec<(u32, u64)>,
}

/// Appends the head of a REPORT (its time and the number of new flows).
pub fn put_report_head(out: &mut Vec<u8>, time: f64, n_new: usize) {
    out.extend_from_slice(&time.to_le_bytes());
    out.extend_from_slice(&(n_new as u32).to_le_bytes());
}

/// Appends one new flow of a REPORT.
pub fn put_new(out: &mut Vec<u8>, f: &NewFlow) {
    out.extend_from_slice(&f.fid.to_le_bytes());
    out.extend_from_slice(&f.sport.to_le_bytes());
    out.extend_from_slice(&f.dst);
    out.extend_from_slice(&f.dport.to_le_bytes());
    out.extend_from_slice(&f.first_seen.to_le_bytes());
    out.extend_from_slice(&f.sent.to_le_bytes());
}

/// Appends a list of `(fid, bytes)` of a REPORT (updated or gone flows).
pub fn put_pairs(out: &mut Vec<u8>, pairs: impl ExactSizeIterator<Item = (u32, u64)>) {
    out.extend_from_slice(&(pairs.len() as u32).to_le_bytes());
    for (fid, bytes) in pairs {
        out.extend_from_slice(&fid.to_le_bytes());
        out.extend_from_slice(&bytes.to_le_bytes());
    }
}

fn finite_time(t: f64, what: &str) -> Result<f64, WireError> {
    if t.is_finite() && t >= 0.0 {
        Ok(t)
    } else {
        err(format!("{what}: bad time {t}"))
    }
}

impl Report {
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(
            20 + NEW_LEN * self.new.len() + PAIR_LEN * (self.updated.len() + self.gone.len()),
        );
        put_report_head(&mut out, self.time, self.new.len());
        for f in &self.new {
            put_new(&mut out, f);
        }
        put_pairs(&mut out, self.updated.iter().copied());
        put_pairs(&mut out, self.gone.iter().copied());
        out
    }

    pub fn decode(p: &[u8]) -> Result<Report, WireError> {
        let mut c = Cursor::new(p, "REPORT");
        let time = finite_time(c.f64("time")?, "REPORT")?;
        let n = c.count(NEW_LEN, "new flows")?;
        let mut new = Vec::with_capacity(n);
        for _ in 0..n {
            let f = NewFlow {
                fid: c.u32("new flows")?,
                sport: c.u16("new flows")?,
                dst: c.ipv4("new flows")?,
                dport: c.u16("new flows")?,
                first_seen: c.f64("new flows")?,
                sent: c.u64("new flows")?,
            };
            finite_time(f.first_seen, &format!("REPORT new flow {}", f.fid))?;
            new.push(f);
        }
        let mut lists = [Vec::new(), Vec::new()];
        for (list, what) in lists.iter_mut().zip(["updated flows", "gone flows"]) {
            let n = c.count(PAIR_LEN, what)?;
            list.reserve_exact(n);
            for _ in 0..n {
                list.push((c.u32(what)?, c.u64(what)?));
            }
        }
        c.end()?;
        let [updated, gone] = lists;
        Ok(Report {
            time,
            new,
            updated,
            gone,
        })
    }
}

/// One decision for one of an agent's flows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Decision {
    pub fid: u32,
    pub kind: u8,
    pub value: f64,
}

pub fn encode_decisions(items: &[Decision]) -> Vec<u8> {
    let mut out = Vec::with_capacity(4 + DEC_LEN * items.len());
    out.extend_from_slice(&(items.len() as u32).to_le_bytes());
    for d in items {
        out.extend_from_slice(&d.fid.to_le_bytes());
        out.push(d.kind);
        out.extend_from_slice(&d.value.to_le_bytes());
    }
    out
}

pub fn decode_decisions(p: &[u8]) -> Result<Vec<Decision>, WireError> {
    let mut c = Cursor::new(p, "DECISIONS");
    let n = c.count(DEC_LEN, "records")?;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let d = Decision {
            fid: c.u32("records")?,
            kind: c.u8("records")?,
            value: c.f64("records")?,
        };
        match d.kind {
            UNLIMITED => {}
            RATE if d.value.is_finite() && d.value >= 0.0 => {}
            RATE => return err(format!("DECISIONS: flow {}: bad rate {}", d.fid, d.value)),
            CLASS if d.value.fract() == 0.0 && (0.0..=255.0).contains(&d.value) => {}
            CLASS => return err(format!("DECISIONS: flow {}: bad class {}", d.fid, d.value)),
            k => return err(format!("DECISIONS: flow {}: unknown kind {k}", d.fid)),
        }
        out.push(d);
    }
    c.end()?;
    Ok(out)
}

/// An ERROR's reason (invalid UTF-8 is replaced, never refused).
pub fn decode_error(p: &[u8]) -> String {
    String::from_utf8_lossy(&p[..p.len().min(1024)]).into_owned()
}

/// Feeds arbitrary bytes through everything a peer's bytes reach: a frame
/// reader (cut into chunks chosen by the first byte), then each frame's payload
/// decoder, and each decoder on the raw bytes too. Panics only if a decoded
/// payload does not encode back to the very same bytes. The fuzz targets
/// (`fuzz/`) and the mutation test below call it.
pub fn exercise(data: &[u8]) {
    let (chunk, rest) = match data.split_first() {
        Some((&c, rest)) => (1 + c as usize * 16, rest),
        None => (1, data),
    };
    let mut reader = FrameReader::with_first(
        MAX_FRAME_BEFORE_HELLO,
        MAX_FRAME,
        &[HELLO, REPORT, DECISIONS, ERROR, peer::CLASSES, peer::UNITS],
    );
    for part in rest.chunks(chunk) {
        match reader.feed(part) {
            Ok(frames) => {
                for (t, p) in frames {
                    decode_any(t, &p);
                }
            }
            Err(_) => break,
        }
    }
    for t in [HELLO, REPORT, DECISIONS, ERROR, peer::CLASSES, peer::UNITS] {
        decode_any(t, rest);
    }
}

fn decode_any(t: u8, p: &[u8]) {
    match t {
        HELLO => {
            if let Ok(h) = Hello::decode(p) {
                assert_eq!(h.encode().expect("a decoded HELLO encodes"), p);
            }
        }
        REPORT => {
            if let Ok(r) = Report::decode(p) {
                assert_eq!(r.encode(), p);
            }
        }
        DECISIONS => {
            if let Ok(d) = decode_decisions(p) {
                assert_eq!(encode_decisions(&d), p);
            }
        }
        peer::CLASSES => {
            if let Ok(r) = peer::decode_classes(p) {
                assert_eq!(peer::encode_classes(&r), p);
            }
        }
        peer::UNITS => {
            if let Ok(r) = peer::decode_units(p) {
                assert_eq!(peer::encode_units(&r), p);
            }
        }
        _ => {
            decode_error(p);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report() -> Report {
        Report {
            time: 12.5,
            new: vec![NewFlow {
                fid: 7,
                sport: 40001,
                dst: [10, 77, 0, 2],
                dport: 20005,
                first_seen: 11.25,
                sent: 300_000,
            }],
            updated: vec![(5, 1 << 40), (6, 123)],
            gone: vec![(2, 999)],
        }
    }

    fn hello() -> Hello {
        Hello {
            host: 3,
            interval_ms: 20,
            boot_id: [9; 16],
            addrs: vec![[10, 77, 0, 4], [192, 168, 1, 9]],
            name: "host-3".into(),
        }
    }

    #[test]
    fn payloads_round_trip_and_match_the_documented_layout() {
        let r = report();
        let p = r.encode();
        // time 8 + n 4 + one new flow 28 + updated 4 + 2 x 12 + gone 4 + 12.
        assert_eq!(p.len(), 8 + 4 + 28 + 4 + 24 + 4 + 12);
        assert_eq!(&p[..8], &12.5f64.to_le_bytes());
        assert_eq!(&p[12..16], &7u32.to_le_bytes());
        assert_eq!(&p[18..22], &[10, 77, 0, 2]);
        assert_eq!(Report::decode(&p).unwrap(), r);
        let h = hello();
        let p = h.encode().unwrap();
        assert_eq!(p.len(), 2 + 4 + 16 + 1 + 8 + 1 + 6);
        assert_eq!(Hello::decode(&p).unwrap(), h);
        let d = vec![
            Decision {
                fid: 7,
                kind: RATE,
                value: 1.25e6,
            },
            Decision {
                fid: 5,
                kind: CLASS,
                value: 3.0,
            },
            Decision {
                fid: 6,
                kind: UNLIMITED,
                value: 0.0,
            },
        ];
        assert_eq!(decode_decisions(&encode_decisions(&d)).unwrap(), d);
    }

    #[test]
    fn frames_split_anywhere_are_reassembled_in_order() {
        let a = encode_frame(HELLO, 0, &hello().encode().unwrap()).unwrap();
        let b = encode_frame(REPORT, 1, &report().encode()).unwrap();
        let stream = [a, b].concat();
        for cut1 in 0..stream.len() {
            let cut2 = (cut1 + 7).min(stream.len());
            let mut r = FrameReader::new(MAX_FRAME, &[HELLO, REPORT]);
            let mut got = r.feed(&stream[..cut1]).unwrap();
            got.extend(r.feed(&stream[cut1..cut2]).unwrap());
            got.extend(r.feed(&stream[cut2..]).unwrap());
            assert_eq!(got.len(), 2, "cut at {cut1}");
            assert_eq!(got[0].0, HELLO);
            assert_eq!(Report::decode(&got[1].1).unwrap(), report());
            assert_eq!(r.pending(), 0);
        }
    }

    fn one(reader: &mut FrameReader, bytes: &[u8]) -> String {
        reader.feed(bytes).unwrap_err().0
    }

    #[test]
    fn bad_frames_name_what_is_wrong() {
        let mut r = FrameReader::new(MAX_FRAME_BEFORE_HELLO, &[HELLO]);
        // A length over the limit is refused before anything is buffered.
        let e = one(&mut r, &(1u32 << 20).to_le_bytes());
        assert!(e.contains("frame length 1048576 outside 12..4096"), "{e}");
        let mut f = encode_frame(HELLO, 0, b"").unwrap();
        f[4] = b'X';
        let e = one(&mut FrameReader::new(MAX_FRAME, &[HELLO]), &f);
        assert!(e.contains("bad magic"), "{e}");
        let mut f = encode_frame(HELLO, 0, b"").unwrap();
        f[6] = 9;
        let e = one(&mut FrameReader::new(MAX_FRAME, &[HELLO]), &f);
        assert!(e.contains("version 9 is not supported"), "{e}");
        let f = encode_frame(DECISIONS, 0, b"").unwrap();
        let e = one(&mut FrameReader::new(MAX_FRAME, &[HELLO]), &f);
        assert!(e.contains("unexpected message DECISIONS"), "{e}");
        let f = encode_frame(77, 0, b"").unwrap();
        let e = one(&mut FrameReader::new(MAX_FRAME, &[HELLO]), &f);
        assert!(e.contains("unexpected message type 77"), "{e}");
        // Replayed, skipped and reordered frames.
        let f0 = encode_frame(REPORT, 0, b"").unwrap();
        let f1 = encode_frame(REPORT, 1, b"").unwrap();
        let mut r = FrameReader::new(MAX_FRAME, &[REPORT]);
        assert!(one(&mut r, &f1).contains("sequence 1, expected 0"));
        let mut r = FrameReader::new(MAX_FRAME, &[REPORT]);
        r.feed(&f0).unwrap();
        assert!(one(&mut r, &f0).contains("sequence 0, expected 1"));
        let e = one(&mut FrameReader::new(MAX_FRAME, &[REPORT]), &[11, 0, 0, 0]);
        assert!(e.contains("frame length 11 outside"), "{e}");
    }

    #[test]
    fn the_first_frame_has_its_own_limit() {
        // A HELLO then a 6 kB REPORT in one read: the REPORT is over the first
        // frame's 4 KiB, but it is not the first frame.
        let big = Report {
            time: 1.0,
            updated: (0..500).map(|i| (i, 7)).collect(),
            ..Report::default()
        };
        let stream = [
            encode_frame(HELLO, 0, &hello().encode().unwrap()).unwrap(),
            encode_frame(REPORT, 1, &big.encode()).unwrap(),
        ]
        .concat();
        let mut r = FrameReader::with_first(MAX_FRAME_BEFORE_HELLO, MAX_FRAME, &[HELLO, REPORT]);
        assert_eq!(r.limit(), 4096);
        assert_eq!(r.feed(&stream).unwrap().len(), 2);
        assert_eq!(r.limit(), MAX_FRAME);
        // The same REPORT first is refused.
        let mut r = FrameReader::with_first(MAX_FRAME_BEFORE_HELLO, MAX_FRAME, &[HELLO, REPORT]);
        let e = r
            .feed(&encode_frame(REPORT, 0, &big.encode()).unwrap())
            .unwrap_err();
        assert!(e.0.contains("outside 12..4096"), "{e}");
    }

    #[test]
    fn a_partial_frame_is_held_within_the_limit() {
        let f = encode_frame(REPORT, 0, &report().encode()).unwrap();
        let mut r = FrameReader::new(MAX_FRAME_BEFORE_HELLO, &[REPORT]);
        assert!(r.feed(&f[..f.len() - 1]).unwrap().is_empty());
        assert_eq!(r.pending(), f.len() - 1);
        assert_eq!(r.feed(&f[f.len() - 1..]).unwrap().len(), 1);
        // A limit is never above MAX_FRAME.
        assert_eq!(FrameReader::new(u32::MAX, &[]).limit(), MAX_FRAME);
    }

    #[test]
    fn bad_payloads_name_the_field() {
        let good = report().encode();
        for cut in [3, 10, 20, good.len() - 1] {
            let e = Report::decode(&good[..cut]).unwrap_err().0;
            assert!(e.starts_with("REPORT"), "{e}");
        }
        let e = Report::decode(&[good.clone(), vec![0]].concat())
            .unwrap_err()
            .0;
        assert!(e.contains("1 trailing bytes"), "{e}");
        // A count that claims more records than there are bytes allocates nothing.
        let mut huge = 1.0f64.to_le_bytes().to_vec();
        huge.extend_from_slice(&u32::MAX.to_le_bytes());
        let e = Report::decode(&huge).unwrap_err().0;
        assert!(e.contains("4294967295 records need"), "{e}");
        let mut nan = report();
        nan.time = f64::NAN;
        assert!(Report::decode(&nan.encode())
            .unwrap_err()
            .0
            .contains("bad time"));
        let mut neg = report();
        neg.new[0].first_seen = -1.0;
        let e = Report::decode(&neg.encode()).unwrap_err().0;
        assert!(e.contains("new flow 7: bad time -1"), "{e}");
        let dec = |kind: u8, v: f64| {
            decode_decisions(&encode_decisions(&[Decision {
                fid: 4,
                kind,
                value: v,
            }]))
        };
        assert!(dec(9, 0.0).unwrap_err().0.contains("unknown kind 9"));
        assert!(dec(RATE, f64::NAN).unwrap_err().0.contains("bad rate"));
        assert!(dec(RATE, -1.0).unwrap_err().0.contains("bad rate"));
        assert!(dec(CLASS, 2.5).unwrap_err().0.contains("bad class"));
        assert!(dec(CLASS, 256.0).unwrap_err().0.contains("bad class"));
        let mut h = hello().encode().unwrap();
        let n = h.len();
        h[n - 6] = 0xff; // the name's first byte: not UTF-8
        assert!(Hello::decode(&h).unwrap_err().0.contains("not UTF-8"));
        assert!(Hello::decode(&[1]).unwrap_err().0.contains("HELLO host"));
        let mut z = hello();
        z.interval_ms = 0;
        assert!(Hello::decode(&z.encode().unwrap())
            .unwrap_err()
            .0
            .contains("interval"));
        assert_eq!(decode_error(b"bad \xff"), "bad \u{fffd}");
    }

    #[test]
    fn mutated_streams_never_panic_and_decoded_payloads_round_trip() {
        // Valid frames of every type, then 200,000 mutations of them (bit
        // flips, cut, spliced, lengths rewritten), each through `exercise`. The
        // recorded cargo-fuzz run (docs/results/runtime/fuzz.md) goes further.
        use coflowkit_model::Pcg32 as Rng;
        let seeds: Vec<Vec<u8>> = vec![
            [
                encode_frame(HELLO, 0, &hello().encode().unwrap()).unwrap(),
                encode_frame(REPORT, 1, &report().encode()).unwrap(),
            ]
            .concat(),
            encode_frame(
                DECISIONS,
                0,
                &encode_decisions(&[Decision {
                    fid: 1,
                    kind: RATE,
                    value: 2.0,
                }]),
            )
            .unwrap(),
            encode_frame(ERROR, 0, b"no").unwrap(),
        ];
        let mut rng = Rng::new(7, 3);
        let mut decoded = 0;
        for i in 0..200_000u32 {
            let mut d = vec![rng.below(4) as u8];
            d.extend_from_slice(&seeds[(i % 3) as usize]);
            for _ in 0..1 + rng.below(4) {
                let at = rng.below(d.len() as u32) as usize;
                match rng.below(5) {
                    0 => d[at] ^= 1 << rng.below(8),
                    1 => d[at] = rng.next_u32() as u8,
                    2 => d.truncate(at.max(1)),
                    3 => {
                        let v = d[at..].to_vec();
                        d.extend_from_slice(&v);
                    }
                    _ => {
                        if at + 4 <= d.len() {
                            d[at..at + 4].copy_from_slice(&rng.below(64).to_le_bytes());
                        }
                    }
                }
            }
            exercise(&d);
            let mut r = FrameReader::new(MAX_FRAME, &[HELLO, REPORT, DECISIONS, ERROR]);
            decoded += r.feed(&d[1..]).map(|f| f.len()).unwrap_or(0);
        }
        // The mutations reach the decoders: many still frame correctly.
        assert!(
            decoded > 10_000,
            "only {decoded} frames survived the mutations"
        );
    }
}
