"""Observe the host's TCP connections through netlink sock_diag (Linux only).

An agent polls this every ~20 ms to learn how many bytes each TCP connection has
had acknowledged (sender side) or has received (receiver side). It speaks the
kernel's ``NETLINK_SOCK_DIAG`` protocol directly with the standard library
(``socket.AF_NETLINK`` + ``struct``): one ``SOCK_DIAG_BY_FAMILY`` dump request
carrying a ``struct inet_diag_req_v2`` that asks for the ``INET_DIAG_INFO``
extension, whose reply gives one ``struct inet_diag_msg`` per socket followed by
netlink attributes, one of which is the socket's ``struct tcp_info``.

Usage::

    with SockDiag() as diag:
        for conn in diag.dump(states_mask(TCP_ESTABLISHED)):
            print(conn.src, conn.sport, conn.dst, conn.dport, conn.bytes_acked)

Address families: the agent observes IPv4 (``AF_INET``, the default). An
``AF_INET6`` dump also works (``family=socket.AF_INET6``); its addresses are then
in IPv6 text form, dual-stack sockets showing IPv4 peers as ``::ffff:a.b.c.d``.
One dump covers one family.

Kernel semantics worth knowing (Linux ``tcp_snd_una_update``/``tcp_rcv_nxt_update``):
``bytes_acked`` counts sequence space acknowledged by the peer, so on the socket
that *initiated* the connection it includes 1 for its SYN (a client that sent
300000 bytes reports 300001 once all is acknowledged), and any acknowledged FIN
adds 1 more; an accepted socket starts at 0. ``bytes_received`` counts payload
bytes only (plus 1 once a FIN has been received). Sockets without a ``tcp_info``
in the reply (``TIME_WAIT`` and ``SYN_RECV`` minisockets) report 0 for both, and
inode 0.

The parser is the agent's hot path and is written in Rust (coflowkit-runtime's
``sockdiag``). The agent does not build a :class:`TcpConn` per socket: it hands
this socket to a :class:`coflowkit._core.FlowTable` (:meth:`SockDiag.poll_into`),
which does the whole round in Rust, system calls included: a dump, or exact
lookups (one request per tracked flow, answered from the kernel's hash table
without walking it), then the filter, the diff and the report's encoding.
:func:`parse_dump` gives the same sockets as Python objects, for tools and
tests; :func:`bench_parse` times it.
"""

from __future__ import annotations

import errno
import os
import socket
import statistics
import struct
import time
from collections.abc import Callable
from dataclasses import dataclass, fields

from coflowkit._core import CoflowkitError, FlowTable, parse_sock_diag

__all__ = [
    "ALL_STATES_MASK",
    "NETLINK_SOCK_DIAG",
    "SOCK_DIAG_BY_FAMILY",
    "INET_DIAG_INFO",
    "TCP_ESTABLISHED",
    "TCP_SYN_SENT",
    "TCP_SYN_RECV",
    "TCP_FIN_WAIT1",
    "TCP_FIN_WAIT2",
    "TCP_TIME_WAIT",
    "TCP_CLOSE",
    "TCP_CLOSE_WAIT",
    "TCP_LAST_ACK",
    "TCP_LISTEN",
    "TCP_CLOSING",
    "SockDiag",
    "SockDiagError",
    "TcpConn",
    "bench_parse",
    "build_request",
    "parse_dump",
    "states_mask",
]

Buffer = bytes | bytearray | memoryview

# --- Protocol constants (include/uapi/linux/{netlink,sock_diag,inet_diag}.h) ---

NETLINK_SOCK_DIAG = 4
SOCK_DIAG_BY_FAMILY = 20

NLMSG_NOOP = 1
NLMSG_ERROR = 2
NLMSG_DONE = 3

NLM_F_REQUEST = 0x01
NLM_F_ROOT = 0x100
NLM_F_MATCH = 0x200
NLM_F_DUMP = NLM_F_ROOT | NLM_F_MATCH

INET_DIAG_INFO = 2

# --- TCP states (include/net/tcp_states.h) ---

TCP_ESTABLISHED = 1
TCP_SYN_SENT = 2
TCP_SYN_RECV = 3
TCP_FIN_WAIT1 = 4
TCP_FIN_WAIT2 = 5
TCP_TIME_WAIT = 6
TCP_CLOSE = 7
TCP_CLOSE_WAIT = 8
TCP_LAST_ACK = 9
TCP_LISTEN = 10
TCP_CLOSING = 11

_FIRST_STATE = TCP_ESTABLISHED
_LAST_STATE = TCP_CLOSING

ALL_STATES_MASK = sum(1 << s for s in range(_FIRST_STATE, _LAST_STATE + 1))  # 0xFFE


def states_mask(*states: int) -> int:
    """The ``idiag_states`` bit mask selecting the given TCP states (1..11).

    >>> hex(states_mask(TCP_ESTABLISHED, TCP_LISTEN))
    '0x402'
    """
    if not states:
        raise ValueError("states_mask needs at least one TCP state")
    mask = 0
    for s in states:
        if not isinstance(s, int) or not _FIRST_STATE <= s <= _LAST_STATE:
            raise ValueError(
                f"not a TCP state number: {s!r} (expected {_FIRST_STATE}..{_LAST_STATE})"
            )
        mask |= 1 << s
    return mask


# --- Binary layouts ---

# struct nlmsghdr: __u32 nlmsg_len, __u16 nlmsg_type, __u16 nlmsg_flags,
# __u32 nlmsg_seq, __u32 nlmsg_pid (host byte order).
_NLMSGHDR = struct.Struct("=IHHII")
NLMSGHDR_LEN = _NLMSGHDR.size  # 16

# struct inet_diag_req_v2: __u8 sdiag_family, sdiag_protocol, idiag_ext, pad;
# __u32 idiag_states; struct inet_diag_sockid id (48 bytes, zeroed = no filter).
_REQ_V2 = struct.Struct("=BBBxI48x")

# struct inet_diag_msg (72 bytes): __u8 family, state, timer, retrans; then
# struct inet_diag_sockid { __be16 sport, dport; __be32 src[4], dst[4];
# __u32 if; __u32 cookie[2] } at offset 4; then __u32 expires, rqueue, wqueue,
# uid, inode (host order) at offsets 52..71.
_U32 = struct.Struct("=I")

# struct nlattr: __u16 nla_len (header included), __u16 nla_type; payload follows,
# the next attribute starting at NLA_ALIGN(nla_len) (multiple of 4).
_NLATTR = struct.Struct("=HH")
NLA_HDRLEN = _NLATTR.size  # 4

# struct tcp_info (include/uapi/linux/tcp.h), byte offsets:
#     0..7    eight __u8: tcpi_state, ca_state, retransmits, probes, backoff,
#             options, snd_wscale:4|rcv_wscale:4, delivery_rate_app_limited:1|
#             fastopen_client_fail:2 (bit-fields packed into one byte each)
#     8..103  twenty-four __u32: rto, ato, snd_mss, rcv_mss, unacked (@24), sacked,
#             lost, retrans, fackets, last_data_sent, last_ack_sent, last_data_recv,
#             last_ack_recv, pmtu, rcv_ssthresh, rtt, rttvar, snd_ssthresh,
#             snd_cwnd, advmss, reordering, rcv_rtt, rcv_space, total_retrans (@100)
#     104     __u64 tcpi_pacing_rate     (8 + 24 * 4 = 104, already 8-aligned: no pad)
#     112     __u64 tcpi_max_pacing_rate
#     120     __u64 tcpi_bytes_acked     <- read
#     128     __u64 tcpi_bytes_received  <- read
#     136     __u32 tcpi_segs_out, ...   (the struct keeps growing: 232 bytes in
#             this machine's uapi header, 280 sent by its 6.18 kernel)
# Checked with offsetof() against the uapi header. The kernel copies
# sizeof(struct tcp_info) of the kernel that runs, so older kernels send less:
# 104 bytes before Linux 3.15 (no pacing rates), 120 bytes in 3.15..4.0 (no byte
# counters; both arrived in 4.1). A field the attribute does not hold entirely
# is reported as 0; an attribute shorter than 104 bytes cannot be a tcp_info of
# any kernel and is rejected as malformed.
# (The parser itself is Rust: crates/coflowkit-runtime/src/sockdiag.rs; these
# numbers serve build_request and the synthetic replies of the benchmark.)
TCPI_BYTES_ACKED_OFFSET = 120
TCPI_BYTES_RECEIVED_OFFSET = 128
_TCPI_BOTH_END = TCPI_BYTES_RECEIVED_OFFSET + 8  # 136
_U64 = struct.Struct("=Q")
_U64X2 = struct.Struct("=QQ")
_S32 = struct.Struct("=i")


class SockDiagError(CoflowkitError):
    """A sock_diag request failed, or its reply was truncated or malformed."""


@dataclass(slots=True, frozen=True)
class TcpConn:
    """One TCP socket as seen by sock_diag.

    ``src``/``sport`` are the local end, ``dst``/``dport`` the remote one
    (``0.0.0.0``/0 for a listener). ``state`` is the TCP state number
    (:data:`TCP_ESTABLISHED` = 1 ... :data:`TCP_CLOSING` = 11). ``bytes_acked``
    and ``bytes_received`` are ``tcpi_bytes_acked``/``tcpi_bytes_received`` (see
    the module docstring for the SYN/FIN accounting; 0 when the reply has no
    tcp_info or a kernel older than 4.1 sent none). ``inode`` is the socket's
    inode (``os.fstat(sock.fileno()).st_ino``), 0 for sockets with no file.
    """

    src: str
    sport: int
    dst: str
    dport: int
    state: int
    bytes_acked: int
    bytes_received: int
    inode: int


def _fast_constructor() -> Callable[[str, int, str, int, int, int, int, int], TcpConn]:
    """A TcpConn constructor for the hot path, equal in effect to ``TcpConn(...)``.

    A frozen dataclass's ``__init__`` assigns each field through
    ``object.__setattr__`` (about 0.8 µs for eight fields); filling the slots
    through their descriptors does the same at half the cost. TcpConn has no
    defaults and no ``__post_init__``, so nothing else happens in ``__init__``
    (the tests check both constructions give equal objects).
    """
    new = object.__new__
    s0, s1, s2, s3, s4, s5, s6, s7 = (TcpConn.__dict__[f.name].__set__ for f in fields(TcpConn))

    def make(
        src: str,
        sport: int,
        dst: str,
        dport: int,
        state: int,
        bytes_acked: int,
        bytes_received: int,
        inode: int,
    ) -> TcpConn:
        conn = new(TcpConn)
        s0(conn, src)
        s1(conn, sport)
        s2(conn, dst)
        s3(conn, dport)
        s4(conn, state)
        s5(conn, bytes_acked)
        s6(conn, bytes_received)
        s7(conn, inode)
        return conn

    names = [f.name for f in fields(TcpConn)]
    if names != list(make.__code__.co_varnames[: len(names)]):  # pragma: no cover
        raise RuntimeError("TcpConn's fields changed: update _fast_constructor")
    return make


_new_conn = _fast_constructor()


def build_request(
    states_mask: int = ALL_STATES_MASK, family: int = socket.AF_INET, *, seq: int = 0
) -> bytes:
    """The full netlink message asking for a dump of TCP sockets with their tcp_info.

    ``states_mask`` selects TCP states (see :func:`states_mask`), ``family`` is
    ``AF_INET`` or ``AF_INET6``, and ``seq`` the netlink sequence number the
    kernel echoes in every message of its reply.
    """
    if family not in (socket.AF_INET, socket.AF_INET6):
        raise ValueError(f"family must be AF_INET or AF_INET6, not {family!r}")
    if not 0 <= states_mask <= 0xFFFFFFFF:
        raise ValueError(f"states_mask out of the u32 range: {states_mask!r}")
    if not 0 <= seq <= 0xFFFFFFFF:
        raise ValueError(f"seq out of the u32 range: {seq!r}")
    body = _REQ_V2.pack(family, socket.IPPROTO_TCP, 1 << (INET_DIAG_INFO - 1), states_mask)
    header = _NLMSGHDR.pack(
        NLMSGHDR_LEN + len(body), SOCK_DIAG_BY_FAMILY, NLM_F_REQUEST | NLM_F_DUMP, seq, 0
    )
    return header + body


def _errno_text(code: int) -> str:
    name = errno.errorcode.get(code, f"errno {code}")
    return f"{name} ({os.strerror(code)})"


def parse_dump(data: Buffer, *, seq: int | None = None) -> tuple[list[TcpConn], bool]:
    """Parse the netlink messages of one or more sock_diag reply datagrams.

    ``data`` holds whole netlink messages back to back (one ``recv`` buffer, or
    several concatenated). Returns the connections and whether ``NLMSG_DONE``
    was seen; parsing stops at ``NLMSG_DONE``. If ``seq`` is given, every message
    must carry that sequence number.

    Raises :class:`SockDiagError` for an ``NLMSG_ERROR`` reply (naming the
    errno), and for truncated or malformed input, naming the byte offset and
    the problem. The parser is the Rust one the agent's flow table uses
    (``coflowkit-runtime``'s ``sockdiag``); this wraps its sockets in
    :class:`TcpConn` objects.
    """
    raw, done, error = parse_sock_diag(bytes(data), seq)
    if error is not None:
        raise _error(error)
    conns = []
    append = conns.append
    ntoa = socket.inet_ntoa
    for family, state, src, sport, dst, dport, acked, received, inode in raw:
        if family == socket.AF_INET:
            src_s, dst_s = ntoa(src[:4]), ntoa(dst[:4])
        else:
            src_s = socket.inet_ntop(socket.AF_INET6, src)
            dst_s = socket.inet_ntop(socket.AF_INET6, dst)
        append(_new_conn(src_s, sport, dst_s, dport, state, acked, received, inode))
    return conns, done


def _error(error: tuple[str, int | None]) -> SockDiagError:
    message, code = error
    return SockDiagError(message + (_errno_text(code) if code is not None else ""))


class SockDiag:
    """A netlink sock_diag socket in the current network namespace.

    :meth:`dump` does one dump request per call and reads its (possibly
    multi-part) reply into a preallocated buffer. Any failure during a dump
    (error reply, malformed data, timeout) drops the netlink socket, and the
    next dump opens a fresh one, so a half-read reply never leaks into it. OS
    errors are raised as :class:`SockDiagError`. ``timeout`` bounds each
    ``recv`` (``None``: block).
    """

    def __init__(self, *, bufsize: int = 1 << 16, timeout: float | None = 2.0) -> None:
        if bufsize < 1 << 16:
            raise ValueError(f"bufsize must be at least 65536 bytes, not {bufsize}")
        self._timeout = timeout
        self._buf = bytearray(bufsize)
        self._view: memoryview | None = memoryview(self._buf)
        self._seq = 0
        self._closed = False
        self._sock: socket.socket | None = self._open()  # fail early, not at the first dump

    def _open(self) -> socket.socket:
        try:
            sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_SOCK_DIAG)
        except (OSError, AttributeError) as exc:
            raise SockDiagError(f"cannot open a NETLINK_SOCK_DIAG socket: {exc}") from exc
        try:
            # The timeout is the kernel's (SO_RCVTIMEO) on a blocking socket, so
            # each recv is one system call (settimeout would add a poll()).
            sock.setblocking(True)
            if self._timeout is not None:
                sec = int(self._timeout)
                usec = max(1 if sec == 0 else 0, int((self._timeout - sec) * 1e6))
                sock.setsockopt(
                    socket.SOL_SOCKET, socket.SO_RCVTIMEO, struct.pack("@ll", sec, usec)
                )
            sock.bind((0, 0))  # the kernel assigns our port id
        except OSError as exc:
            sock.close()
            raise SockDiagError(f"cannot bind the NETLINK_SOCK_DIAG socket: {exc}") from exc
        return sock

    def dump(
        self, states_mask: int = ALL_STATES_MASK, family: int = socket.AF_INET
    ) -> list[TcpConn]:
        """Every TCP socket of ``family`` in the selected states, with its byte counters."""
        conns: list[TcpConn] = []

        def consume(datagram: memoryview, seq: int) -> bool:
            part, done = parse_dump(datagram, seq=seq)
            conns.extend(part)
            return done

        self._exchange(states_mask, family, consume)
        return conns

    def poll_into(self, table: FlowTable, now: float, full: bool) -> tuple[bytes, bool, list]:
        """One whole observation round of an agent's flow table, system calls
        included, in Rust (:meth:`coflowkit._core.FlowTable.poll`): a dump
        (``full``) or exact lookups of the tracked flows. Returns the
        REPORT payload at ``now``, whether anything changed, and the flows gone.
        A failed round raises and leaves the table as it was."""
        if self._closed:
            raise SockDiagError("the SockDiag socket is closed")
        sock = self._sock
        if sock is None:
            sock = self._sock = self._open()
        self._seq = self._seq % 0xFFFFFFFF + 1
        payload, changed, gone, error = table.poll(sock.fileno(), self._seq, full, now)
        if error is None:
            return payload, changed, gone
        # Drop the socket with whatever of the reply is still queued on it.
        sock.close()
        self._sock = None
        message, code = error
        if code in (errno.EAGAIN, errno.EWOULDBLOCK):  # SO_RCVTIMEO expired
            raise SockDiagError(
                f"sock_diag {'dump' if full else 'lookup'} failed: no reply from the kernel "
                f"within {self._timeout} s"
            )
        raise _error(error)

    def _exchange(
        self, states_mask: int, family: int, consume: Callable[[memoryview, int], bool]
    ) -> None:
        """Sends one dump request and hands each reply datagram to ``consume``
        until it reports ``NLMSG_DONE``."""
        view = self._view
        if self._closed or view is None:
            raise SockDiagError("the SockDiag socket is closed")
        sock = self._sock
        if sock is None:
            sock = self._sock = self._open()
        self._seq = self._seq % 0xFFFFFFFF + 1
        seq = self._seq
        request = build_request(states_mask, family, seq=seq)
        try:
            sock.sendto(request, (0, 0))
            while True:
                nbytes, _anc, flags, _addr = sock.recvmsg_into([view])
                if flags & socket.MSG_TRUNC:
                    raise SockDiagError(
                        f"netlink datagram larger than the {len(view)}-byte receive buffer"
                    )
                if nbytes == 0:
                    raise SockDiagError("empty read from the netlink socket before NLMSG_DONE")
                if consume(view[:nbytes], seq):
                    return
        except BaseException as exc:
            # Drop the socket with whatever of the reply is still queued on it.
            sock.close()
            self._sock = None
            if isinstance(exc, BlockingIOError):  # SO_RCVTIMEO expired
                raise SockDiagError(
                    f"sock_diag dump failed: no reply from the kernel within {self._timeout} s"
                ) from exc
            if isinstance(exc, OSError):
                raise SockDiagError(f"sock_diag dump failed: {exc}") from exc
            raise

    def close(self) -> None:
        """Close the netlink socket; further dumps raise :class:`SockDiagError`."""
        self._closed = True
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        if self._view is not None:
            self._view.release()
            self._view = None

    def __enter__(self) -> SockDiag:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


# --- Micro-benchmark ---


def _synthetic_reply(n_sockets: int, seq: int = 1) -> bytes:
    """A reply shaped like Linux 6.18's: per socket, the attributes a root dump carries."""
    tcp_info_len = 280
    parts = []
    for i in range(n_sockets):
        attrs = b"".join(
            (
                _NLATTR.pack(5, 8) + b"\x00\x00\x00\x00",  # INET_DIAG_SHUTDOWN (u8, padded)
                _NLATTR.pack(8, 15) + _U32.pack(0),  # INET_DIAG_MARK
                _NLATTR.pack(12, 21) + _U64.pack(1234),  # INET_DIAG_CGROUP_ID
                _NLATTR.pack(6, 22) + b"\x00\x00\x00\x00",  # INET_DIAG_SOCKOPT (u16, padded)
                _NLATTR.pack(NLA_HDRLEN + tcp_info_len, INET_DIAG_INFO)
                + bytes(TCPI_BYTES_ACKED_OFFSET)
                + _U64X2.pack(1000 * i, 2000 * i)
                + bytes(tcp_info_len - _TCPI_BOTH_END),
            )
        )
        msg = struct.pack(
            "!BBBBHH4s12x4s12x",
            socket.AF_INET,
            TCP_ESTABLISHED,
            0,
            0,
            10000 + i,
            20000,
            bytes((10, 0, i >> 8 & 0xFF, i & 0xFF)),
            bytes((10, 0, 0, 1)),
        ) + struct.pack("=12xIIIII", 0, 0, 0, 0, 100000 + i)
        body = msg + attrs
        parts.append(
            _NLMSGHDR.pack(NLMSGHDR_LEN + len(body), SOCK_DIAG_BY_FAMILY, 0x2, seq, 0) + body
        )
    parts.append(_NLMSGHDR.pack(NLMSGHDR_LEN + 4, NLMSG_DONE, 0x2, seq, 0) + _S32.pack(0))
    return b"".join(parts)


def bench_parse(n_sockets: int = 200, repeat: int = 200) -> float:
    """Median wall time, in µs, of :func:`parse_dump` on a synthetic ``n_sockets`` reply."""
    data = _synthetic_reply(n_sockets)
    conns, done = parse_dump(data, seq=1)
    if len(conns) != n_sockets or not done:  # pragma: no cover - self-check
        raise AssertionError("synthetic reply did not parse back")
    times = []
    clock = time.perf_counter
    for _ in range(repeat):
        t0 = clock()
        parse_dump(data, seq=1)
        times.append(clock() - t0)
    return statistics.median(times) * 1e6
