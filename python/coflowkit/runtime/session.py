"""One non-blocking TLS connection carrying protocol frames, for the master and
the agent: a handshake with a deadline, a frame reader with a size limit, and a
bounded send queue that never blocks the caller.

A connection never waits on its peer. Bytes to send are queued and written as
the socket accepts them; a queue over ``max_queue`` bytes means the peer does not
keep up, and :meth:`Conn.send` raises :class:`SendQueueFull` (the owner closes
the connection). Reads take what the socket has, at most ``READ_BUDGET`` bytes
per call so one busy peer cannot starve the others; TLS may hold decrypted
bytes that the selector does not see, which :attr:`Conn.readable_now` tells.
"""

from __future__ import annotations

import socket
import ssl
import time
from dataclasses import dataclass, field

from coflowkit.runtime import proto, tls

READ_BUDGET = 1 << 20
# One TLS record: a write either takes it whole or is retried with the same bytes.
WRITE_CHUNK = 16 << 10


class SendQueueFull(ConnectionError):
    """The peer is not reading fast enough."""


class Conn:
    """A TLS connection: ``handshake`` until it returns True, then frames."""

    def __init__(
        self,
        sock: ssl.SSLSocket,
        chan: proto.Channel,
        peer: str,
        max_queue: int,
        deadline: float | None = None,
    ):
        self.sock = sock
        self.chan = chan
        self.peer = peer
        self.max_queue = max_queue
        self.out = bytearray()
        self.open = False  # handshake done
        self.deadline = deadline  # the handshake (and HELLO) must be done by then
        self.frame_since: float | None = None  # a partial frame has been held since
        self.last_heard = time.monotonic()
        self._want_write = False

    def fileno(self) -> int:
        return self.sock.fileno()

    @property
    def wants_write(self) -> bool:
        return bool(self.out) or self._want_write

    @property
    def readable_now(self) -> bool:
        """Decrypted bytes are waiting inside TLS (the selector cannot see them)."""
        try:
            return self.open and self.sock.pending() > 0
        except (OSError, ValueError):
            return False

    def handshake(self) -> bool:
        """One step of the TLS handshake; True once it is complete. Raises
        ``ssl.SSLError`` or ``OSError`` if it failed."""
        try:
            self.sock.do_handshake()
        except ssl.SSLWantReadError:
            self._want_write = False
            return False
        except ssl.SSLWantWriteError:
            self._want_write = True
            return False
        self._want_write = False
        self.open = True
        return True

    def read_frames(self) -> list[tuple[int, bytes]]:
        """The frames the socket's bytes complete (checked). Raises
        ``ConnectionError`` when the peer closed, ``proto.ProtocolError`` on a bad
        frame."""
        frames: list[tuple[int, bytes]] = []
        budget = READ_BUDGET
        while budget > 0:
            try:
                data = self.sock.recv(min(proto.RECV_BYTES, budget))
            except (ssl.SSLWantReadError, BlockingIOError):
                break
            except ssl.SSLWantWriteError:
                self._want_write = True
                break
            except (ssl.SSLEOFError, ssl.SSLZeroReturnError):
                raise ConnectionError("connection closed") from None
            if not data:
                raise ConnectionError("connection closed")
            budget -= len(data)
            frames += self.chan.feed(data)
            self.last_heard = time.monotonic()
        if self.chan.pending:
            if self.frame_since is None:
                self.frame_since = time.monotonic()
        else:
            self.frame_since = None
        return frames

    def send(self, mtype: int, payload: bytes) -> None:
        """Queues one frame and writes what the socket takes now."""
        frame = self.chan.frame(mtype, payload)
        if len(self.out) + len(frame) > self.max_queue:
            raise SendQueueFull(
                f"{len(self.out) + len(frame)} bytes queued for {self.peer} (limit {self.max_queue})"
            )
        self.out += frame
        self.flush()

    def flush(self) -> None:
        """Writes queued bytes until the socket would block. Raises ``OSError``
        when the connection broke."""
        self._want_write = False
        while self.out:
            chunk = bytes(self.out[:WRITE_CHUNK])
            try:
                n = self.sock.send(chunk)
            except (ssl.SSLWantWriteError, BlockingIOError):
                return
            except ssl.SSLWantReadError:
                return
            del self.out[:n]

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass


def wrap_server(ctx: ssl.SSLContext, sock: socket.socket) -> ssl.SSLSocket:
    sock.setblocking(False)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return ctx.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)


@dataclass
class Session:
    """One agent's session as the master sees it: the connection (or the hub's
    session number), who the certificate says it is, its host once it said
    HELLO, and its flows (the agent's flow number -> the master's slot)."""

    conn: Conn | None  # None under --io rust: the hub holds the connection
    ident: tls.Identity | None = None
    host: int | None = None
    addrs: list[str] = field(default_factory=list)
    flows: dict[int, int] = field(default_factory=dict)  # fid -> slot
    last_sent: float = 0.0
    sid: int = -1  # the hub's session number (--io rust)
    peer_name: str = ""

    @property
    def peer(self) -> str:
        return self.conn.peer if self.conn is not None else self.peer_name
