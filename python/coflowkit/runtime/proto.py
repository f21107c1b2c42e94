"""The master-agent protocol: length-prefixed, versioned, authenticated frames.

Wire format of one frame (all integers little-endian)::

    u32   length of what follows (header + payload + tag), at most MAX_FRAME
    2 B   magic b"CK"
    u8    protocol version (VERSION)
    u8    message type
    u64   sequence number (0, 1, 2, ... per connection and direction)
    ...   payload (per type, below)
    32 B  HMAC-SHA256(secret, nonce || magic .. end of payload)

A session starts with the master's CHALLENGE, whose payload is a fresh 16-byte
nonce and whose tag is computed with that nonce (so the agent knows the master
holds the secret); every later frame in either direction is tagged with the same
nonce, so frames cannot be replayed into another session, and the sequence number
forbids replays, drops and reordering inside one. Anything that does not verify
is a :class:`ProtocolError` naming what was wrong; the caller closes that
connection (and only that one). docs/runtime.md has the payload tables.
"""

from __future__ import annotations

import hmac
import itertools
import os
import socket
import struct
from dataclasses import dataclass, field

from coflowkit._core import CoflowkitError

MAGIC = b"CK"
VERSION = 1
TAG_LEN = 32
# Bytes asked of the kernel per recv on a session. More than 128 KiB would make
# Python allocate (mmap) and free (munmap, with a TLB shootdown on every core) a
# buffer per call; a frame may span several reads.
RECV_BYTES = 1 << 16
NONCE_LEN = 16
MAX_FRAME = 16 << 20

CHALLENGE = 1
HELLO = 2
REPORT = 3
DECISIONS = 4
ERROR = 5
TYPE_NAMES = {
    CHALLENGE: "CHALLENGE",
    HELLO: "HELLO",
    REPORT: "REPORT",
    DECISIONS: "DECISIONS",
    ERROR: "ERROR",
}

_LEN = struct.Struct("<I")
_HEAD = struct.Struct("<2sBBQ")
_HELLO = struct.Struct("<HIB")
_REPORT_HEAD = struct.Struct("<dI")
_NEW = struct.Struct("<IH4sHdQ")
_UPD = struct.Struct("<IQ")
_COUNT = struct.Struct("<I")
_DEC = struct.Struct("<IBd")

# Decision kinds.
UNLIMITED = 0
RATE = 1
CLASS = 2


class ProtocolError(CoflowkitError):
    """A frame that is malformed, unauthenticated, out of sequence or of another version."""


def read_secret(path: str) -> bytes:
    """The shared secret in file ``path`` (surrounding whitespace ignored), at least 16 bytes."""
    try:
        with open(path, "rb") as fh:
            data = fh.read().strip()
    except OSError as e:
        raise CoflowkitError(f"secret file {path}: {e.strerror}") from None
    if len(data) < 16:
        raise CoflowkitError(
            f"secret file {path}: the secret must be at least 16 bytes, got {len(data)}"
        )
    return data


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


def encode_hello(h: Hello) -> bytes:
    if not 0 <= h.host < 65536:
        raise ProtocolError(f"HELLO: host {h.host} out of range 0..65535")
    if len(h.addrs) > 255:
        raise ProtocolError("HELLO: more than 255 addresses")
    name = h.name.encode()[:255]
    return (
        _HELLO.pack(h.host, h.interval_ms, len(h.addrs))
        + b"".join(socket.inet_aton(a) for a in h.addrs)
        + bytes([len(name)])
        + name
    )


def decode_hello(p: bytes) -> Hello:
    _need(p, _HELLO.size, "HELLO")
    host, interval, n = _HELLO.unpack_from(p)
    end = _HELLO.size + 4 * n
    _need(p, end + 1, "HELLO addresses")
    addrs = [socket.inet_ntoa(p[_HELLO.size + 4 * i : _HELLO.size + 4 * i + 4]) for i in range(n)]
    ln = p[end]
    _need(p, end + 1 + ln, "HELLO name")
    if len(p) != end + 1 + ln:
        raise ProtocolError(f"HELLO: {len(p) - end - 1 - ln} trailing bytes")
    try:
        name = p[end + 1 : end + 1 + ln].decode()
    except UnicodeDecodeError:
        raise ProtocolError("HELLO: the name is not UTF-8") from None
    return Hello(host, interval, addrs, name)


def encode_report(r: Report) -> bytes:
    parts = [_REPORT_HEAD.pack(r.time, len(r.new))]
    parts += [
        _NEW.pack(f.fid, f.sport, socket.inet_aton(f.dst), f.dport, f.first_seen, f.sent)
        for f in r.new
    ]
    for pairs in (r.updated, r.gone):
        # One pack call for the whole list (an agent sends ~100 every Δ).
        parts.append(
            struct.pack(f"<I{'IQ' * len(pairs)}", len(pairs), *itertools.chain.from_iterable(pairs))
        )
    return b"".join(parts)


def _need(p: bytes, n: int, what: str) -> None:
    if len(p) < n:
        raise ProtocolError(f"{what}: truncated ({len(p)} bytes, need {n})")


def decode_report(p: bytes) -> Report:
    _need(p, _REPORT_HEAD.size, "REPORT")
    t, n_new = _REPORT_HEAD.unpack_from(p)
    off = _REPORT_HEAD.size
    end = off + n_new * _NEW.size
    _need(p, end + 4, "REPORT new flows")
    new = [
        NewFlow(fid, sport, socket.inet_ntoa(dst), dport, first, sent)
        for fid, sport, dst, dport, first, sent in _NEW.iter_unpack(p[off:end])
    ]
    lists = []
    off = end
    for what in ("updated", "gone"):
        _need(p, off + 4, f"REPORT {what} count")
        (n,) = _COUNT.unpack_from(p, off)
        off += 4
        end = off + n * _UPD.size
        _need(p, end, f"REPORT {what} flows")
        lists.append(list(_UPD.iter_unpack(p[off:end])))
        off = end
    if off != len(p):
        raise ProtocolError(f"REPORT: {len(p) - off} trailing bytes")
    return Report(t, new, lists[0], lists[1])


def encode_decisions(items: list[tuple[int, int, float]]) -> bytes:
    """``(fid, kind, value)``: kind UNLIMITED, RATE (goodput bytes/s) or CLASS."""
    return _COUNT.pack(len(items)) + b"".join(_DEC.pack(f, k, v) for f, k, v in items)


def decode_decisions(p: bytes) -> list[tuple[int, int, float]]:
    _need(p, 4, "DECISIONS")
    (n,) = _COUNT.unpack_from(p)
    if len(p) != 4 + n * _DEC.size:
        raise ProtocolError(f"DECISIONS: {n} records need {4 + n * _DEC.size} bytes, got {len(p)}")
    out = list(_DEC.iter_unpack(p[4:]))
    for f, k, v in out:
        if k not in (UNLIMITED, RATE, CLASS):
            raise ProtocolError(f"DECISIONS: flow {f}: unknown kind {k}")
        if k == RATE and not (v >= 0.0 and v < float("inf")):
            raise ProtocolError(f"DECISIONS: flow {f}: bad rate {v}")
    return out


class Channel:
    """One side of an authenticated session: builds outgoing frames and checks
    incoming ones (sequence numbers per direction)."""

    def __init__(self, secret: bytes, nonce: bytes | None = None):
        self.secret = secret
        self.nonce = nonce
        self.send_seq = 0
        self.recv_seq = 0
        self._buf = bytearray()

    @staticmethod
    def new_nonce() -> bytes:
        return os.urandom(NONCE_LEN)

    def _tag(self, nonce: bytes, body: bytes) -> bytes:
        return hmac.digest(self.secret, nonce + body, "sha256")  # one-shot: OpenSSL's HMAC

    def frame(self, mtype: int, payload: bytes) -> bytes:
        """One outgoing frame (CHALLENGE sets this side's nonce)."""
        if mtype == CHALLENGE:
            self.nonce = payload
        if self.nonce is None:
            raise ProtocolError("no session nonce yet: the master's CHALLENGE comes first")
        body = _HEAD.pack(MAGIC, VERSION, mtype, self.send_seq) + payload
        self.send_seq += 1
        if len(body) + TAG_LEN > MAX_FRAME:
            raise ProtocolError(
                f"{TYPE_NAMES.get(mtype, mtype)}: frame of {len(body)} bytes is too large"
            )
        return _LEN.pack(len(body) + TAG_LEN) + body + self._tag(self.nonce, body)

    def feed(self, data: bytes) -> list[tuple[int, bytes]]:
        """Frames completed by ``data``: ``(type, payload)``, verified. Raises
        :class:`ProtocolError` on the first bad frame (the session is then dead)."""
        self._buf += data
        out = []
        while len(self._buf) >= 4:
            (n,) = _LEN.unpack_from(self._buf)
            if n < _HEAD.size + TAG_LEN or n > MAX_FRAME:
                raise ProtocolError(f"frame length {n} outside {_HEAD.size + TAG_LEN}..{MAX_FRAME}")
            if len(self._buf) < 4 + n:
                break
            frame = bytes(self._buf[4 : 4 + n])
            del self._buf[: 4 + n]
            out.append(self._check(frame))
        return out

    def _check(self, frame: bytes) -> tuple[int, bytes]:
        body, tag = frame[:-TAG_LEN], frame[-TAG_LEN:]
        magic, version, mtype, seq = _HEAD.unpack_from(body)
        if magic != MAGIC:
            raise ProtocolError(f"bad magic {magic!r} (not a coflowkit peer?)")
        if version != VERSION:
            raise ProtocolError(
                f"protocol version {version} is not supported (this side speaks {VERSION})"
            )
        payload = body[_HEAD.size :]
        nonce = self.nonce
        if nonce is None:
            if mtype != CHALLENGE or len(payload) != NONCE_LEN:
                raise ProtocolError(
                    f"expected a CHALLENGE first, got {TYPE_NAMES.get(mtype, mtype)}"
                )
            nonce = payload
        if not hmac.compare_digest(tag, self._tag(nonce, body)):
            raise ProtocolError(
                f"{TYPE_NAMES.get(mtype, mtype)} #{seq}: authentication failed (wrong secret?)"
            )
        if seq != self.recv_seq:
            raise ProtocolError(
                f"{TYPE_NAMES.get(mtype, mtype)}: sequence {seq}, expected {self.recv_seq}"
            )
        if mtype not in TYPE_NAMES:
            raise ProtocolError(f"unknown message type {mtype}")
        self.recv_seq += 1
        self.nonce = nonce
        return mtype, payload
