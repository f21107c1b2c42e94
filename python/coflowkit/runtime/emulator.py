"""An emulated agent: the protocol spoken by hand over mutual TLS, with no
sock_diag and no tc. The tests drive masters with it, and so do the fault
benchmark (benches/runtime_faults.py) and load tests: it reports what it is
told to, and reads the decisions the master sends."""

from __future__ import annotations

import socket
import ssl
import time

from coflowkit.runtime import proto, tls

TIMEOUT_S = 10.0


class EmulatedAgent:
    """One agent session with the certificate of host ``cert_host`` (by default
    it says HELLO as that host, with that host's first address)."""

    def __init__(
        self,
        addr: tuple[str, int],
        tls_dir: str,
        cert_host: int,
        rcvbuf: int | None = None,
        timeout: float = TIMEOUT_S,
    ):
        raw = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if rcvbuf:
            raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        raw.settimeout(timeout)
        try:
            raw.connect(addr)
            self.sock = tls.host_client_context(tls_dir, cert_host).wrap_socket(raw)
        except (OSError, ssl.SSLError):
            raw.close()
            raise
        self.timeout = timeout
        self.chan = proto.agent_channel()
        self.frames: list[tuple[int, bytes]] = []
        self.closed = False

    # -- sending ------------------------------------------------------------------
    def send(self, mtype: int, payload: bytes) -> None:
        self.sock.sendall(self.chan.frame(mtype, payload))

    def hello(self, host: int, addrs: list[str], boot: bytes = b"\1" * 16, interval_ms: int = 10):
        h = proto.Hello(host, interval_ms, addrs, f"emulated-{host}", boot)
        self.send(proto.HELLO, proto.encode_hello(h))

    def report(self, r: proto.Report) -> None:
        self.send(proto.REPORT, proto.encode_report(r))

    # -- receiving ----------------------------------------------------------------
    def read(self, until, timeout: float | None = None):
        """The first frame (received so far or later) for which ``until`` holds;
        None if the master closed the connection first. Raises TimeoutError."""
        end = time.monotonic() + (self.timeout if timeout is None else timeout)
        while True:
            for f in self.frames:
                if until(f):
                    return f
            if self.closed:
                return None
            left = end - time.monotonic()
            if left <= 0:
                raise TimeoutError("no such frame from the master in time")
            self.sock.settimeout(max(0.01, left))
            try:
                data = self.sock.recv(65536)
            except TimeoutError:
                continue
            except (ssl.SSLError, OSError):
                data = b""
            if not data:
                self.closed = True
                continue
            self.frames += self.chan.feed(data)

    def decisions(self, timeout: float | None = None) -> list[tuple[int, int, float]]:
        """The next non-empty DECISIONS (consumed). Raises ConnectionError if the
        master closed the connection first."""
        f = self.read(lambda f: f[0] == proto.DECISIONS and proto.decode_decisions(f[1]), timeout)
        if f is None:
            raise ConnectionError("the master closed the connection")
        self.frames.remove(f)
        return proto.decode_decisions(f[1])

    def error(self, timeout: float | None = None) -> str | None:
        """The master's ERROR reason, or None if it closed without one."""
        f = self.read(lambda f: f[0] == proto.ERROR, timeout)
        return None if f is None else f[1].decode()

    def wait_closed(self, timeout: float | None = None) -> None:
        if not self.closed:
            self.read(lambda f: False, timeout)

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass
