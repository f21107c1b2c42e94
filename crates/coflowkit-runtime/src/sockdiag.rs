//! Parser of the kernel's netlink `sock_diag` dump replies (TCP sockets with
//! their `tcp_info`), the agent's hot path.
//!
//! A reply is a sequence of netlink messages (`struct nlmsghdr`, 16 bytes, host
//! byte order): one `SOCK_DIAG_BY_FAMILY` message per socket, holding a
//! `struct inet_diag_msg` (72 bytes) followed by netlink attributes, one of
//! which (`INET_DIAG_INFO`) is the socket's `struct tcp_info`; then
//! `NLMSG_DONE`. Layouts are from the Linux uapi headers `netlink.h`,
//! `inet_diag.h` and `tcp.h`; `python/coflowkit/runtime/sockdiag.py` documents
//! the byte offsets and the kernels' `tcp_info` sizes.
//!
//! Every malformed input is a [`DiagError`] naming the byte offset and the
//! problem; the parser never panics on any input.

use std::fmt;

pub const SOCK_DIAG_BY_FAMILY: u16 = 20;
pub const NLMSG_ERROR: u16 = 2;
pub const NLMSG_DONE: u16 = 3;
pub const NLMSG_OVERRUN: u16 = 4;
pub const INET_DIAG_INFO: u16 = 2;
pub const AF_INET: u8 = 2;
pub const AF_INET6: u8 = 10;

const NLMSGHDR_LEN: usize = 16;
const INET_DIAG_MSG_LEN: usize = 72;
const HEAD_LEN: usize = NLMSGHDR_LEN + INET_DIAG_MSG_LEN; // 88
const NLA_HDRLEN: usize = 4;
const NLA_TYPE_MASK: u16 = 0x3FFF;
/// `tcpi_bytes_acked` and `tcpi_bytes_received` offsets in `struct tcp_info`.
const TCPI_BYTES_ACKED: usize = 120;
const TCPI_BYTES_RECEIVED: usize = 128;
/// The shortest `tcp_info` any kernel sends (before Linux 3.15).
const TCPI_MIN_LEN: usize = 104;

/// One socket of a dump. Addresses are the 16 address bytes of the kernel's
/// `inet_diag_sockid` (an IPv4 address is the first 4); ports in host order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Conn {
    pub family: u8,
    pub state: u8,
    pub src: [u8; 16],
    pub dst: [u8; 16],
    pub sport: u16,
    pub dport: u16,
    pub bytes_acked: u64,
    pub bytes_received: u64,
    pub inode: u32,
}

impl Conn {
    /// The IPv4 source address (meaningful for `AF_INET`).
    pub fn src4(&self) -> [u8; 4] {
        [self.src[0], self.src[1], self.src[2], self.src[3]]
    }
    /// The IPv4 destination address (meaningful for `AF_INET`).
    pub fn dst4(&self) -> [u8; 4] {
        [self.dst[0], self.dst[1], self.dst[2], self.dst[3]]
    }
}

/// A failed or malformed reply. When the kernel reported an error, `errno` is
/// its (positive) number and `message` ends where its text belongs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiagError {
    pub message: String,
    pub errno: Option<i32>,
}

impl DiagError {
    fn new(message: String) -> Self {
        DiagError {
            message,
            errno: None,
        }
    }
}

impl fmt::Display for DiagError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.errno {
            None => f.write_str(&self.message),
            Some(code) => write!(
                f,
                "{}{}",
                self.message,
                std::io::Error::from_raw_os_error(code)
            ),
        }
    }
}

impl std::error::Error for DiagError {}

fn u16_at(d: &[u8], i: usize) -> u16 {
    u16::from_ne_bytes([d[i], d[i + 1]])
}
fn u32_at(d: &[u8], i: usize) -> u32 {
    u32::from_ne_bytes([d[i], d[i + 1], d[i + 2], d[i + 3]])
}
fn u64_at(d: &[u8], i: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&d[i..i + 8]);
    u64::from_ne_bytes(b)
}

/// Parses whole netlink messages back to back, calling `each` for every
/// socket; returns whether `NLMSG_DONE` was seen (parsing stops there). With
/// `seq`, every message must carry that sequence number.
pub fn parse_each(
    data: &[u8],
    seq: Option<u32>,
    each: impl FnMut(&Conn),
) -> Result<bool, DiagError> {
    parse_inner(data, seq, each, |off, errno| {
        Err(DiagError {
            message: format!("sock_diag request failed (NLMSG_ERROR at offset {off}): "),
            errno: Some(errno),
        })
    })
}

/// Parses the replies to exact lookups ([`exact_request`]): one message per
/// request, either the socket or `NLMSG_ERROR` with `ENOENT` (no such socket,
/// not an error here: it is gone). Calls `each` for every socket and returns
/// how many requests the messages answered. Any other error, and an
/// `NLMSG_DONE` (which no exact lookup sends), is a [`DiagError`].
pub fn parse_replies(
    data: &[u8],
    seq: Option<u32>,
    mut each: impl FnMut(&Conn),
) -> Result<usize, DiagError> {
    let mut answered = 0usize;
    let mut missing = 0usize;
    let done = parse_inner(
        data,
        seq,
        |c| {
            answered += 1;
            each(c)
        },
        |off, errno| {
            if errno == ENOENT {
                missing += 1;
                Ok(())
            } else {
                Err(DiagError {
                    message: format!("sock_diag lookup failed (NLMSG_ERROR at offset {off}): "),
                    errno: Some(errno),
                })
            }
        },
    )?;
    if done {
        return Err(DiagError::new(
            "NLMSG_DONE in the replies to exact lookups (a dump's end, not a lookup's)".into(),
        ));
    }
    Ok(answered + missing)
}

/// `on_error(offset, errno)` decides what an `NLMSG_ERROR` with a nonzero code
/// means; an acknowledgement (code 0) is skipped. Returns whether the buffer
/// held `NLMSG_DONE`.
fn parse_inner(
    data: &[u8],
    seq: Option<u32>,
    mut each: impl FnMut(&Conn),
    mut on_error: impl FnMut(usize, i32) -> Result<(), DiagError>,
) -> Result<bool, DiagError> {
    let n = data.len();
    let mut off = 0usize;
    while off < n {
        let (mlen, mtype) = message_header(data, off, seq)?;
        match mtype {
            SOCK_DIAG_BY_FAMILY => each(&conn_at(data, off, mlen)?),
            NLMSG_DONE => {
                if mlen >= NLMSGHDR_LEN + 4 {
                    let code = u32_at(data, off + NLMSGHDR_LEN) as i32;
                    if code < 0 {
                        return Err(DiagError {
                            message: format!(
                                "sock_diag dump ended with an error at offset {off}: "
                            ),
                            errno: Some(code.wrapping_neg()),
                        });
                    }
                }
                return Ok(true);
            }
            NLMSG_ERROR => {
                if mlen < NLMSGHDR_LEN + 4 {
                    return Err(DiagError::new(format!(
                        "truncated NLMSG_ERROR at offset {off}: nlmsg_len {mlen}, need {}",
                        NLMSGHDR_LEN + 4
                    )));
                }
                let code = u32_at(data, off + NLMSGHDR_LEN) as i32;
                if code != 0 {
                    // 0 is an acknowledgement, not an error.
                    on_error(off, code.wrapping_neg())?;
                }
            }
            NLMSG_OVERRUN => {
                return Err(DiagError::new(format!(
                    "NLMSG_OVERRUN at offset {off}: the kernel lost data"
                )));
            }
            _ => {} // NLMSG_NOOP and unknown types carry nothing for us
        }
        off = off.saturating_add((mlen + 3) & !3);
    }
    Ok(false)
}

/// The length and type of the netlink message at `off`, checked against the
/// buffer and, when given, the expected sequence number.
fn message_header(data: &[u8], off: usize, seq: Option<u32>) -> Result<(usize, u16), DiagError> {
    let n = data.len();
    if n - off < NLMSGHDR_LEN {
        return Err(DiagError::new(format!(
            "truncated netlink header at offset {off}: {} bytes left, need {NLMSGHDR_LEN}",
            n - off
        )));
    }
    let mlen = u32_at(data, off) as usize;
    let mtype = u16_at(data, off + 4);
    let mseq = u32_at(data, off + 8);
    if mlen < NLMSGHDR_LEN {
        return Err(DiagError::new(format!(
            "malformed netlink message at offset {off}: nlmsg_len {mlen} is shorter than its {NLMSGHDR_LEN}-byte header"
        )));
    }
    if mlen > n - off {
        return Err(DiagError::new(format!(
            "truncated netlink message at offset {off}: nlmsg_len {mlen} exceeds the {} bytes left in the buffer",
            n - off
        )));
    }
    if let Some(want) = seq {
        if mseq != want {
            return Err(DiagError::new(format!(
                "netlink message at offset {off} has sequence number {mseq}, expected {want}"
            )));
        }
    }
    Ok((mlen, mtype))
}

/// The connection in the `SOCK_DIAG_BY_FAMILY` message at `off` (`mlen` bytes):
/// its `inet_diag_msg` and the byte counters of its `tcp_info`.
fn conn_at(data: &[u8], off: usize, mlen: usize) -> Result<Conn, DiagError> {
    if mlen < HEAD_LEN {
        return Err(DiagError::new(format!(
            "truncated inet_diag_msg at offset {}: {} bytes, need {INET_DIAG_MSG_LEN}",
            off + NLMSGHDR_LEN,
            mlen - NLMSGHDR_LEN
        )));
    }
    let (acked, received) = tcp_info_bytes(data, off + HEAD_LEN, off + mlen)?;
    let m = off + NLMSGHDR_LEN;
    let family = data[m];
    if family != AF_INET && family != AF_INET6 {
        return Err(DiagError::new(format!(
            "inet_diag_msg at offset {m} has address family {family}, expected AF_INET ({AF_INET}) or AF_INET6 ({AF_INET6})"
        )));
    }
    let mut src = [0u8; 16];
    let mut dst = [0u8; 16];
    src.copy_from_slice(&data[m + 8..m + 24]);
    dst.copy_from_slice(&data[m + 24..m + 40]);
    Ok(Conn {
        family,
        state: data[m + 1],
        src,
        dst,
        sport: u16::from_be_bytes([data[m + 4], data[m + 5]]),
        dport: u16::from_be_bytes([data[m + 6], data[m + 7]]),
        bytes_acked: acked,
        bytes_received: received,
        inode: u32_at(data, m + 68),
    })
}

/// `(bytes_acked, bytes_received)` from the attributes in `data[a..end]`:
/// 0 when there is no `INET_DIAG_INFO` (minisockets) or the kernel's
/// `tcp_info` predates the counters (before Linux 4.1).
fn tcp_info_bytes(data: &[u8], mut a: usize, end: usize) -> Result<(u64, u64), DiagError> {
    while a + NLA_HDRLEN <= end {
        let alen = u16_at(data, a) as usize;
        let atype = u16_at(data, a + 2);
        if alen < NLA_HDRLEN || alen > end - a {
            return Err(DiagError::new(format!(
                "malformed netlink attribute at offset {a}: nla_len {alen} (the message has {} bytes left)",
                end - a
            )));
        }
        if atype & NLA_TYPE_MASK == INET_DIAG_INFO {
            let plen = alen - NLA_HDRLEN;
            let base = a + NLA_HDRLEN;
            if plen >= TCPI_BYTES_RECEIVED + 8 {
                return Ok((
                    u64_at(data, base + TCPI_BYTES_ACKED),
                    u64_at(data, base + TCPI_BYTES_RECEIVED),
                ));
            }
            if plen < TCPI_MIN_LEN {
                return Err(DiagError::new(format!(
                    "INET_DIAG_INFO attribute at offset {a} holds {plen} bytes, too short for a tcp_info (at least {TCPI_MIN_LEN})"
                )));
            }
            if plen >= TCPI_BYTES_ACKED + 8 {
                return Ok((u64_at(data, base + TCPI_BYTES_ACKED), 0));
            }
            return Ok((0, 0));
        }
        a = (a + alen + 3) & !3; // NLA_ALIGN
    }
    if a < end {
        return Err(DiagError::new(format!(
            "truncated netlink attribute at offset {a}: {} bytes left in the message, need {NLA_HDRLEN}",
            end - a
        )));
    }
    Ok((0, 0))
}

const NLM_F_REQUEST: u16 = 0x01;
const NLM_F_DUMP: u16 = 0x300; // NLM_F_ROOT | NLM_F_MATCH
const IPPROTO_TCP: u8 = 6;
const ENOENT: i32 = 2;
/// `idiag_ext` asking for `INET_DIAG_INFO` (the `tcp_info`).
const EXT_INFO: u8 = 1 << (INET_DIAG_INFO - 1);
/// Length of a request: `nlmsghdr` and `struct inet_diag_req_v2`.
pub const REQUEST_LEN: usize = NLMSGHDR_LEN + 56;

fn request(out: &mut Vec<u8>, flags: u16, seq: u32, states: u32) -> usize {
    out.extend_from_slice(&(REQUEST_LEN as u32).to_ne_bytes());
    out.extend_from_slice(&SOCK_DIAG_BY_FAMILY.to_ne_bytes());
    out.extend_from_slice(&flags.to_ne_bytes());
    out.extend_from_slice(&seq.to_ne_bytes());
    out.extend_from_slice(&0u32.to_ne_bytes()); // nlmsg_pid: the kernel
    out.extend_from_slice(&[AF_INET, IPPROTO_TCP, EXT_INFO, 0]);
    out.extend_from_slice(&states.to_ne_bytes());
    let id = out.len(); // struct inet_diag_sockid, 48 bytes
    out.resize(id + 48, 0);
    id
}

/// Appends the request for a dump of the IPv4 TCP sockets in `states` (bit s
/// for state s), with their `tcp_info`.
pub fn dump_request(out: &mut Vec<u8>, states: u32, seq: u32) {
    request(out, NLM_F_REQUEST | NLM_F_DUMP, seq, states);
}

/// Appends the request for one IPv4 TCP socket, found by its 4-tuple (local
/// address and port, remote address and port) in the kernel's hash table
/// rather than by walking it. The reply is the socket, with its `tcp_info`, or
/// `NLMSG_ERROR` with `ENOENT`; [`parse_replies`] reads either.
pub fn exact_request(out: &mut Vec<u8>, key: ([u8; 4], u16, [u8; 4], u16), seq: u32) {
    let id = request(out, NLM_F_REQUEST, seq, u32::MAX);
    let (src, sport, dst, dport) = key;
    out[id..id + 2].copy_from_slice(&sport.to_be_bytes());
    out[id + 2..id + 4].copy_from_slice(&dport.to_be_bytes());
    out[id + 4..id + 8].copy_from_slice(&src);
    out[id + 20..id + 24].copy_from_slice(&dst);
    // idiag_if 0 (any device); idiag_cookie INET_DIAG_NOCOOKIE (not checked).
    out[id + 40..id + 48].fill(0xFF);
}

/// Every socket of `data`, and whether `NLMSG_DONE` was seen.
pub fn parse_dump(data: &[u8], seq: Option<u32>) -> Result<(Vec<Conn>, bool), DiagError> {
    let mut out = Vec::new();
    let done = parse_each(data, seq, |c| out.push(*c))?;
    Ok((out, done))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub fn nlmsg(mtype: u16, seq: u32, body: &[u8]) -> Vec<u8> {
        let mut v = Vec::new();
        v.extend_from_slice(&((16 + body.len()) as u32).to_ne_bytes());
        v.extend_from_slice(&mtype.to_ne_bytes());
        v.extend_from_slice(&2u16.to_ne_bytes());
        v.extend_from_slice(&seq.to_ne_bytes());
        v.extend_from_slice(&0u32.to_ne_bytes());
        v.extend_from_slice(body);
        while v.len() % 4 != 0 {
            v.push(0);
        }
        v
    }

    /// One socket's message: IPv4 addresses, state, ports, counters, inode;
    /// `info_len` is the tcp_info length (280 on Linux 6.18).
    #[allow(clippy::too_many_arguments)]
    pub fn socket_msg(
        seq: u32,
        src: [u8; 4],
        sport: u16,
        dst: [u8; 4],
        dport: u16,
        state: u8,
        acked: u64,
        received: u64,
        info_len: usize,
    ) -> Vec<u8> {
        let mut m = vec![AF_INET, state, 0, 0];
        m.extend_from_slice(&sport.to_be_bytes());
        m.extend_from_slice(&dport.to_be_bytes());
        m.extend_from_slice(&src);
        m.extend_from_slice(&[0; 12]);
        m.extend_from_slice(&dst);
        m.extend_from_slice(&[0; 12]);
        m.extend_from_slice(&[0; 12]); // if, cookie
        m.extend_from_slice(&[0; 16]); // expires, rqueue, wqueue, uid
        m.extend_from_slice(&4242u32.to_ne_bytes()); // inode
        assert_eq!(m.len(), 72);
        // A mark attribute first, so the walk has to skip one.
        m.extend_from_slice(&8u16.to_ne_bytes());
        m.extend_from_slice(&15u16.to_ne_bytes());
        m.extend_from_slice(&7u32.to_ne_bytes());
        let mut info = vec![0u8; info_len];
        if info_len >= 128 {
            info[120..128].copy_from_slice(&acked.to_ne_bytes());
        }
        if info_len >= 136 {
            info[128..136].copy_from_slice(&received.to_ne_bytes());
        }
        m.extend_from_slice(&((4 + info_len) as u16).to_ne_bytes());
        m.extend_from_slice(&INET_DIAG_INFO.to_ne_bytes());
        m.extend_from_slice(&info);
        nlmsg(SOCK_DIAG_BY_FAMILY, seq, &m)
    }

    pub fn done(seq: u32) -> Vec<u8> {
        nlmsg(NLMSG_DONE, seq, &0i32.to_ne_bytes())
    }

    #[test]
    fn sockets_and_done_are_read_with_their_counters() {
        let mut d = socket_msg(
            9,
            [10, 0, 0, 1],
            40000,
            [10, 0, 0, 2],
            5001,
            1,
            300_001,
            0,
            280,
        );
        d.extend(socket_msg(
            9,
            [10, 0, 0, 2],
            5001,
            [10, 0, 0, 1],
            40000,
            1,
            0,
            300_000,
            280,
        ));
        d.extend(done(9));
        let (conns, done) = parse_dump(&d, Some(9)).unwrap();
        assert!(done);
        assert_eq!(conns.len(), 2);
        assert_eq!(conns[0].src4(), [10, 0, 0, 1]);
        assert_eq!((conns[0].sport, conns[0].dport), (40000, 5001));
        assert_eq!(
            (conns[0].bytes_acked, conns[0].bytes_received),
            (300_001, 0)
        );
        assert_eq!(
            (conns[1].bytes_acked, conns[1].bytes_received),
            (0, 300_000)
        );
        assert_eq!(conns[1].inode, 4242);
    }

    #[test]
    fn old_kernels_tcp_info_sizes() {
        // 120 bytes (3.15..4.0): no counters; 128: acked only; 100: not a tcp_info.
        let (c, _) = parse_dump(&socket_msg(1, [1; 4], 1, [2; 4], 2, 1, 5, 6, 120), None).unwrap();
        assert_eq!((c[0].bytes_acked, c[0].bytes_received), (0, 0));
        let (c, _) = parse_dump(&socket_msg(1, [1; 4], 1, [2; 4], 2, 1, 5, 6, 128), None).unwrap();
        assert_eq!((c[0].bytes_acked, c[0].bytes_received), (5, 0));
        let e = parse_dump(&socket_msg(1, [1; 4], 1, [2; 4], 2, 1, 5, 6, 100), None).unwrap_err();
        assert!(e.message.contains("too short for a tcp_info"), "{e}");
    }

    #[test]
    fn every_cut_is_either_a_message_boundary_or_an_error() {
        let mut d = socket_msg(3, [1; 4], 1, [2; 4], 2, 1, 5, 6, 280);
        let first = d.len();
        d.extend(socket_msg(3, [1; 4], 3, [2; 4], 4, 1, 7, 8, 280));
        let second = d.len();
        d.extend(done(3));
        for cut in 0..d.len() {
            let r = parse_dump(&d[..cut], Some(3));
            if cut == 0 || cut == first || cut == second {
                let (conns, done) = r.unwrap();
                assert!(!done);
                assert_eq!(
                    conns.len(),
                    [0, first, second].iter().position(|&x| x == cut).unwrap()
                );
            } else {
                assert!(r.is_err(), "cut at {cut} parsed");
            }
        }
    }

    #[test]
    fn errors_name_offset_and_errno() {
        let e = parse_dump(&nlmsg(NLMSG_ERROR, 1, &(-22i32).to_ne_bytes()), None).unwrap_err();
        assert_eq!(e.errno, Some(22));
        assert_eq!(
            e.message,
            "sock_diag request failed (NLMSG_ERROR at offset 0): "
        );
        assert!(e.to_string().contains("Invalid argument"), "{e}");
        let e = parse_dump(&nlmsg(NLMSG_DONE, 1, &(-4i32).to_ne_bytes()), None).unwrap_err();
        assert_eq!(e.errno, Some(4));
        let e = parse_dump(&done(2), Some(1)).unwrap_err();
        assert_eq!(
            e.message,
            "netlink message at offset 0 has sequence number 2, expected 1"
        );
        let mut bad = done(1);
        bad[0] = 12;
        let e = parse_dump(&bad, None).unwrap_err();
        assert!(e.message.contains("nlmsg_len 12 is shorter"), "{e}");
        // An acknowledgement (error 0) is not an error.
        assert_eq!(
            parse_dump(&nlmsg(NLMSG_ERROR, 1, &0i32.to_ne_bytes()), None).unwrap(),
            (vec![], false)
        );
    }

    #[test]
    fn requests_follow_the_uapi_layout() {
        let mut d = Vec::new();
        dump_request(&mut d, 0b10, 7);
        assert_eq!(d.len(), REQUEST_LEN);
        assert_eq!(u32_at(&d, 0), 72);
        assert_eq!(u16_at(&d, 4), SOCK_DIAG_BY_FAMILY);
        assert_eq!(u16_at(&d, 6), 0x301); // NLM_F_REQUEST | NLM_F_DUMP
        assert_eq!(u32_at(&d, 8), 7);
        // family, protocol, idiag_ext (1 << (INET_DIAG_INFO - 1)), pad, states
        assert_eq!(&d[16..20], &[2, 6, 2, 0]);
        assert_eq!(u32_at(&d, 20), 0b10);
        assert!(d[24..].iter().all(|&b| b == 0));
        let mut e = Vec::new();
        exact_request(&mut e, ([10, 0, 0, 1], 40000, [10, 0, 0, 2], 5001), 9);
        assert_eq!(e.len(), REQUEST_LEN);
        assert_eq!(u16_at(&e, 6), 0x1); // NLM_F_REQUEST only: not a dump
        assert_eq!(u32_at(&e, 20), u32::MAX);
        let id = &e[24..];
        assert_eq!(&id[0..4], &[0x9c, 0x40, 0x13, 0x89]); // ports, big-endian
        assert_eq!(
            &id[4..20],
            &[10, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
        );
        assert_eq!(
            &id[20..36],
            &[10, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
        );
        assert_eq!(&id[36..40], &[0; 4]); // any interface
        assert_eq!(&id[40..48], &[0xFF; 8]); // INET_DIAG_NOCOOKIE
    }

    #[test]
    fn lookup_replies_count_found_and_missing_sockets() {
        let mut d = socket_msg(4, [1; 4], 1, [2; 4], 2, 1, 5, 6, 280);
        d.extend(nlmsg(NLMSG_ERROR, 4, &(-2i32).to_ne_bytes())); // ENOENT: gone
        d.extend(socket_msg(4, [1; 4], 3, [2; 4], 4, 1, 7, 8, 280));
        let mut seen = Vec::new();
        assert_eq!(parse_replies(&d, Some(4), |c| seen.push(c.sport)), Ok(3));
        assert_eq!(seen, vec![1, 3]);
        // Any other error fails the round, naming it.
        let e = parse_replies(&nlmsg(NLMSG_ERROR, 4, &(-1i32).to_ne_bytes()), None, |_| {})
            .unwrap_err();
        assert_eq!(e.errno, Some(1));
        assert!(e
            .message
            .starts_with("sock_diag lookup failed (NLMSG_ERROR at offset 0)"));
        // A dump's end is not a lookup's reply.
        let e = parse_replies(&done(4), None, |_| {}).unwrap_err();
        assert!(e.message.contains("NLMSG_DONE"), "{e}");
    }

    #[test]
    fn garbage_never_panics() {
        // Deterministic pseudo-random bytes, and mutations of a good reply.
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let good = [socket_msg(1, [1; 4], 1, [2; 4], 2, 1, 5, 6, 280), done(1)].concat();
        for _ in 0..20_000 {
            let mut d = good.clone();
            for _ in 0..(next() % 4 + 1) {
                let i = (next() as usize) % d.len();
                d[i] = next() as u8;
            }
            let cut = (next() as usize) % (d.len() + 1);
            let _ = parse_dump(&d[..cut], None);
        }
    }
}
