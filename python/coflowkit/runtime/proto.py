"""The master-agent protocol (version 2): length-prefixed, versioned frames over
mutually authenticated TLS.

Wire format of one frame (all integers little-endian)::

    u32   length of what follows (header + payload)
    2 B   magic b"CK"
    u8    protocol version (VERSION)
    u8    message type
    u64   sequence number (0, 1, 2, ... per session and direction)
    ...   payload (per type; docs/runtime.md has the tables)

TLS (:mod:`coflowkit.runtime.tls`) authenticates both ends with certificates of
one cluster CA, and keeps every session's bytes apart from every other's: a
recorded frame cannot be replayed into another session in either direction. The
frames and payloads are cut and decoded in Rust (``coflowkit-runtime/src/wire.rs``,
fuzzed: docs/results/runtime/fuzz.md); anything that does not decode exactly is a
:class:`ProtocolError` naming what was wrong, and the caller ends that session
only. A peer's first frame is capped at ``MAX_FRAME_BEFORE_HELLO`` bytes (its
HELLO, then at ``MAX_FRAME``.
"""

from __future__ import annotations

import socket
from dataclasses import dataclass, field

from coflowkit import _core
from coflowkit._core import ProtocolError

__all__ = ["ProtocolError"]

MAGIC = b"CK"
VERSION = 2
# Bytes asked of the kernel per recv on a session. More than 128 KiB would make
# Python allocate (mmap) and free (munmap, with a TLB shootdown on every core) a
# buffer per call; a frame may span several reads.
RECV_BYTES = 1 << 16
MAX_FRAME = 16 << 20
MAX_FRAME_BEFORE_HELLO = 4 << 10
BOOT_ID_LEN = 16

HELLO = 2
REPORT = 3
DECISIONS = 4
ERROR = 5
TYPE_NAMES = {HELLO: "HELLO", REPORT: "REPORT", DECISIONS: "DECISIONS", ERROR: "ERROR"}

# Decision kinds.
UNLIMITED = 0
RATE = 1
CLASS = 2


@dataclass(slots=True)
class NewFlow:
    fid: int
    sport: int
    dst: str
    dport: int
    first_seen: float
    sent: int


@dataclass(slots=True)
class Report:
    time: float
    new: list[NewFlow] = field(default_factory=list)
    updated: list[tuple[int, int]] = field(default_factory=list)
    gone: list[tuple[int, int]] = field(default_factory=list)


@dataclass(slots=True)
class Hello:
    host: int
    interval_ms: int
    addrs: list[str]
    name: str
    boot_id: bytes = b"\0" * BOOT_ID_LEN


def encode_hello(h: Hello) -> bytes:
    if not 0 <= h.host < 65536:
        raise ProtocolError(f"HELLO: host {h.host} out of range 0..65535")
    name = h.name.encode()[:255].decode(errors="ignore")
    return _core.encode_hello(h.host, h.interval_ms, h.boot_id, list(h.addrs), name)


def decode_hello(p: bytes) -> Hello:
    host, interval, boot_id, addrs, name = _core.decode_hello(p)
    return Hello(host, interval, addrs, name, boot_id)


def encode_report(r: Report) -> bytes:
    new = [(f.fid, f.sport, f.dst, f.dport, f.first_seen, f.sent) for f in r.new]
    return _core.encode_report(r.time, new, list(r.updated), list(r.gone))


def decode_report(p: bytes) -> Report:
    t, new, updated, gone = _core.decode_report(p)
    return Report(t, [NewFlow(*f) for f in new], updated, gone)


def encode_decisions(items: list[tuple[int, int, float]]) -> bytes:
    """``(fid, kind, value)``: kind UNLIMITED, RATE (goodput bytes/s) or CLASS."""
    return _core.encode_decisions(items)


def decode_decisions(p: bytes) -> list[tuple[int, int, float]]:
    return _core.decode_decisions(p)


class Channel:
    """One side of a session: numbers outgoing frames and checks incoming ones
    (sequence, type, size limits). ``accept`` lists the types this side may
    receive; a frame may be ``limit`` bytes, the first one ``first_limit``."""

    def __init__(self, accept: tuple[int, ...], first_limit: int, limit: int = MAX_FRAME):
        self.send_seq = 0
        self._reader = _core.FrameReader(first_limit, limit, list(accept))

    def frame(self, mtype: int, payload: bytes) -> bytes:
        out = _core.encode_frame(mtype, self.send_seq, payload)
        self.send_seq += 1
        return out

    def feed(self, data: bytes) -> list[tuple[int, bytes]]:
        """Frames completed by ``data``: ``(type, payload)``, checked. Raises
        :class:`ProtocolError` on the first bad frame (the session is then dead)."""
        return self._reader.feed(data)

    @property
    def pending(self) -> int:
        """Bytes held of a frame not complete yet."""
        return self._reader.pending


def agent_channel() -> Channel:
    """The agent's side: it receives DECISIONS and ERROR from an authenticated
    master, so the full frame size applies from the start."""
    return Channel((DECISIONS, ERROR), MAX_FRAME)


def master_channel() -> Channel:
    """The master's side of one agent's session: a HELLO first, of at most
    ``MAX_FRAME_BEFORE_HELLO`` bytes (nothing after it is decoded unless the
    master accepts it), then REPORTs."""
    return Channel((HELLO, REPORT), MAX_FRAME_BEFORE_HELLO)


def ipv4(text: str) -> bool:
    try:
        socket.inet_aton(text)
    except OSError:
        return False
    return text.count(".") == 3
