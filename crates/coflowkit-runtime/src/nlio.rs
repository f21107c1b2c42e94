//! The agent's netlink I/O: one observation round ([`Poller::dump`] or
//! [`Poller::lookup`]) in one call, on a `NETLINK_SOCK_DIAG` socket the caller
//! opened, bound and owns (the Python agent: it sets `SO_RCVTIMEO`, so a
//! kernel that does not answer ends the round with `EAGAIN`).
//!
//! A dump reads datagrams until `NLMSG_DONE`. Lookups go out in chunks of
//! [`LOOKUP_CHUNK`] requests, one `sendto` each; their replies, one datagram
//! per request, come back with `recvmmsg`, many per system call. Either way the
//! table sees the round only if it completes (the caller then calls
//! [`FlowTable::end`]); an error leaves whatever was read on the socket, so the
//! caller must close it.
//!
//! This module is the crate's only `unsafe` code: four system calls on a file
//! descriptor and buffers that outlive them.
#![allow(unsafe_code)]

use crate::observe::FlowTable;
use crate::sockdiag::{dump_request, exact_request, DiagError, REQUEST_LEN};

/// Requests per `sendto` in a lookup round. Their replies (about 420 bytes
/// each with a 280-byte `tcp_info`) must fit the socket's receive buffer
/// (208 KiB by default) while they wait to be read.
pub const LOOKUP_CHUNK: usize = 64;
/// Room for one lookup reply; a reply that does not fit is an error.
const SLOT: usize = 4096;
/// Room for one dump datagram (the kernel sends at most 32 KiB).
const DUMP_BUF: usize = 1 << 16;

fn os_error(what: &str) -> DiagError {
    DiagError {
        message: format!("sock_diag {what} failed: "),
        errno: std::io::Error::last_os_error().raw_os_error(),
    }
}

fn send(fd: i32, data: &[u8]) -> Result<(), DiagError> {
    // SAFETY: `sockaddr_nl` is plain data, zeroed then filled; `data` and
    // `addr` are live for the call, and their lengths are the ones passed.
    let n = unsafe {
        let mut addr: libc::sockaddr_nl = std::mem::zeroed();
        addr.nl_family = libc::AF_NETLINK as libc::sa_family_t;
        libc::sendto(
            fd,
            data.as_ptr().cast(),
            data.len(),
            0,
            (&addr as *const libc::sockaddr_nl).cast(),
            std::mem::size_of::<libc::sockaddr_nl>() as libc::socklen_t,
        )
    };
    if n < 0 {
        return Err(os_error("request"));
    }
    if n as usize != data.len() {
        return Err(DiagError {
            message: format!("sock_diag request: sent {n} of {} bytes", data.len()),
            errno: None,
        });
    }
    Ok(())
}

fn recv(fd: i32, buf: &mut [u8]) -> Result<usize, DiagError> {
    // SAFETY: `buf` is valid for writes of `buf.len()` bytes for the call.
    let n = unsafe { libc::recv(fd, buf.as_mut_ptr().cast(), buf.len(), libc::MSG_TRUNC) };
    if n < 0 {
        return Err(os_error("reply"));
    }
    let n = n as usize;
    if n > buf.len() {
        return Err(DiagError {
            message: format!(
                "netlink datagram of {n} bytes larger than the {}-byte receive buffer",
                buf.len()
            ),
            errno: None,
        });
    }
    if n == 0 {
        return Err(DiagError {
            message: "empty read from the netlink socket before the reply ended".into(),
            errno: None,
        });
    }
    Ok(n)
}

/// Up to `lens.len()` datagrams, the first waited for, into consecutive
/// `SLOT`-byte slots of `slots`; their lengths go to `lens`. Returns how many.
fn recv_many(fd: i32, slots: &mut [u8], lens: &mut [usize]) -> Result<usize, DiagError> {
    let want = lens.len().min(slots.len() / SLOT);
    let base = slots.as_mut_ptr();
    let mut iovs: Vec<libc::iovec> = (0..want)
        .map(|i| libc::iovec {
            // SAFETY (of the pointer arithmetic): i * SLOT + SLOT <= slots.len().
            iov_base: unsafe { base.add(i * SLOT) }.cast(),
            iov_len: SLOT,
        })
        .collect();
    // SAFETY: `mmsghdr` is plain data; zeroed, then each points at its own iovec.
    let mut msgs: Vec<libc::mmsghdr> = (0..want)
        .map(|_| unsafe { std::mem::zeroed::<libc::mmsghdr>() })
        .collect();
    for (m, iov) in msgs.iter_mut().zip(iovs.iter_mut()) {
        m.msg_hdr.msg_iov = iov;
        m.msg_hdr.msg_iovlen = 1;
    }
    // SAFETY: `msgs` holds `want` headers whose iovecs point into `slots`;
    // all outlive the call. MSG_WAITFORONE blocks (up to SO_RCVTIMEO) for the
    // first datagram only.
    let n = unsafe {
        libc::recvmmsg(
            fd,
            msgs.as_mut_ptr(),
            want as libc::c_uint,
            libc::MSG_WAITFORONE,
            std::ptr::null_mut(),
        )
    };
    if n < 0 {
        return Err(os_error("reply"));
    }
    let n = n as usize;
    for (i, m) in msgs[..n].iter().enumerate() {
        if m.msg_hdr.msg_flags & libc::MSG_TRUNC != 0 {
            return Err(DiagError {
                message: format!("a sock_diag lookup reply larger than {SLOT} bytes"),
                errno: None,
            });
        }
        lens[i] = m.msg_len as usize;
    }
    Ok(n)
}

/// Buffers reused round after round.
pub struct Poller {
    request: Vec<u8>,
    buf: Vec<u8>,
    slots: Vec<u8>,
    lens: Vec<usize>,
}

impl Default for Poller {
    fn default() -> Self {
        Self::new()
    }
}

impl Poller {
    pub fn new() -> Self {
        Poller {
            request: Vec::with_capacity(REQUEST_LEN * LOOKUP_CHUNK),
            buf: vec![0; DUMP_BUF],
            slots: vec![0; SLOT * LOOKUP_CHUNK],
            lens: vec![0; LOOKUP_CHUNK],
        }
    }

    /// One dump of the table's states fed to `table` (between its `begin`
    /// and `end`).
    pub fn dump(&mut self, fd: i32, table: &mut FlowTable, seq: u32) -> Result<(), DiagError> {
        self.request.clear();
        dump_request(&mut self.request, table.states(), seq);
        send(fd, &self.request)?;
        loop {
            let n = recv(fd, &mut self.buf)?;
            if table.feed(&self.buf[..n], Some(seq))? {
                return Ok(());
            }
        }
    }

    /// Exact lookups of every socket the table knows, fed to `table`
    /// (between its `begin` and `end`).
    pub fn lookup(&mut self, fd: i32, table: &mut FlowTable, seq: u32) -> Result<(), DiagError> {
        let keys = table.lookup_keys();
        for chunk in keys.chunks(LOOKUP_CHUNK) {
            self.request.clear();
            for &k in chunk {
                exact_request(&mut self.request, k, seq);
            }
            send(fd, &self.request)?;
            let mut answered = 0;
            while answered < chunk.len() {
                let room = (chunk.len() - answered).min(LOOKUP_CHUNK);
                let got = recv_many(fd, &mut self.slots, &mut self.lens[..room])?;
                for i in 0..got {
                    let data = &self.slots[i * SLOT..i * SLOT + self.lens[i]];
                    answered += table.feed_lookups(data, Some(seq))?;
                }
            }
            if answered != chunk.len() {
                return Err(DiagError {
                    message: format!("{answered} replies to {} sock_diag lookups", chunk.len()),
                    errno: None,
                });
            }
        }
        Ok(())
    }
}
