"""`coflowkit agent --decentralized stream`: Stream with no master.

Every agent runs three things (the rules are :mod:`coflowkit.runtime.decentral`):

* **A local registration API** on a loopback port (default 127.0.0.1:7473):
  ``POST /api/coflows`` with the master's registration JSON (hosts as IPv4
  addresses), where a job framework on this host registers the coflows it
  receives; ``GET /api/units`` lists the receiver units and their classes,
  ``GET /api/health`` the peers. Bounded as the master's API is
  (:mod:`coflowkit.runtime.http_api`), and loopback only.
* **Peer sessions**: mutual TLS with host certificates of the cluster CA, on
  ``--peer-port`` (default 7472) of every host's data address, carrying the
  frames of the master's protocol with two message types of their own
  (``CLASSES``, ``UNITS``; coflowkit-runtime's ``peer``). An agent accepts
  sessions from certified hosts only, and opens one to each host it has
  something to tell. A connection that fails is retried after ``RETRY_S``;
  when one opens, everything that peer should know is sent again.
* **Rounds** every Δ: one sock_diag dump of the host's TCP sockets (bytes
  received by the flows it receives, the flows it sends), eq. (5) for its
  receiver units, classes to their senders, relays and child reports to their
  receivers, and HTB ``prio`` classes for the flows it sends
  (:class:`coflowkit.runtime.tc.TcPlan`, the decision kind ``CLASS``).

Switch queues: the paper's switches serve each class in a strict-priority
queue chosen by the packets' DSCP. The sender marks DSCP = class (0..7) with
nf_tables (:mod:`coflowkit.runtime.dscp`; the tc actions that could rewrite it
are missing from many kernels); without the ``nft`` program it says so at start
and the class is enforced at its own egress only.
"""

from __future__ import annotations

import errno
import gc
import logging
import os
import selectors
import signal
import socket
import ssl
import threading
import time

from coflowkit._core import (
    CoflowkitError,
    ProtocolError,
    decode_classes,
    decode_units,
    encode_classes,
    encode_units,
)
from coflowkit.runtime import proto, sockdiag, tls
from coflowkit.runtime.agent import device_addrs
from coflowkit.runtime.decentral import TELL_FRACTION, StreamNode
from coflowkit.runtime.dscp import DscpMarker
from coflowkit.runtime.registration import Registration
from coflowkit.runtime.session import Conn, SendQueueFull
from coflowkit.runtime.tc import TcBatch, TcPlan, remove_tree

log = logging.getLogger("coflowkit.agent.stream")

CLASSES = 6
UNITS = 7
PEER_PORT = 7472
API_PORT = 7473
PEER_FRAME = 1 << 20  # a peer's frame: at most 1 MiB (about 31,000 class records)
PEER_QUEUE = 4 << 20  # bytes queued for one peer before its session is dropped
MAX_PEERS = 4096  # inbound sessions held; the least recently heard goes first
HANDSHAKE_S = 5.0  # connect and TLS handshake with a peer, either direction
RETRY_S = 1.0
FAILURES = (OSError, ConnectionError, ssl.SSLError, ProtocolError, CoflowkitError)


def peer_channel() -> proto.Channel:
    return proto.Channel((CLASSES, UNITS), PEER_FRAME, PEER_FRAME)


class Peer:
    """One session with another host's agent (either direction)."""

    def __init__(self, conn: Conn, outbound: str | None):
        self.conn = conn
        self.outbound = outbound  # the peer address we connected to, or None
        self.addrs: frozenset[str] = frozenset()
        self.host: int | None = None
        self.tried = False  # a handshake step was taken


class LocalApi:
    """The app behind the local registration API (``http_api.ApiServer``)."""

    hosts = 1 << 16

    def __init__(self, agent: StreamAgent):
        self.agent = agent

    def submit(self, reg: Registration):
        try:
            with self.agent.lock:
                return 201, self.agent.node.register(reg)
        except CoflowkitError as e:
            return 409, {"error": str(e)}

    def get(self, path: str):
        with self.agent.lock:
            if path == "/api/units":
                return 200, self.agent.node.status(), "application/json"
            if path == "/api/health":
                return 200, self.agent.health(), "application/json"
        return 404, {"error": f"no such endpoint {path}"}, "application/json"


class StreamAgent:
    """A host's decentralized Stream agent (module doc)."""

    def __init__(
        self,
        host: int,
        server_ctx: ssl.SSLContext,
        client_ctx: ssl.SSLContext,
        dev: str,
        link_bytes_per_s: float,
        params: dict | None = None,
        interval: float = 0.02,
        addrs: list[str] | None = None,
        peer_port: int = PEER_PORT,
        api: tuple[str, int] | None = ("127.0.0.1", API_PORT),
        enforce: bool = True,
        tell_fraction: float = TELL_FRACTION,
    ):
        if interval <= 0:
            raise CoflowkitError(f"interval must be positive, got {interval}")
        self.host = host
        self.server_ctx = server_ctx
        self.client_ctx = client_ctx
        self.dev = dev
        self.interval = interval
        self.addrs = addrs or device_addrs(dev)
        self.node = StreamNode(self.addrs, params, tell_fraction)
        self.peer_port = peer_port
        self.plan = TcPlan(dev, link_bytes_per_s)
        self.enforce = enforce
        self.tc: TcBatch | None = None
        self.tree = False
        self.dscp = DscpMarker() if enforce else None
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.sel = selectors.DefaultSelector()
        self.peers: dict[int, Peer] = {}  # by fd
        self.outbound: dict[str, Peer] = {}  # by peer address
        self.retry_at: dict[str, float] = {}
        self.rounds = 0
        self.sent = {CLASSES: 0, UNITS: 0}
        self.received = {CLASSES: 0, UNITS: 0}
        self.dropped_peers = 0
        self.spent = {"observe": 0.0, "decide": 0.0, "enforce": 0.0, "send": 0.0, "receive": 0.0}
        self.listener = self._listen()
        self.api = None
        if api is not None:
            from coflowkit.runtime.http_api import ApiServer

            if api[0] not in ("127.0.0.1", "::1", "localhost"):
                raise CoflowkitError(
                    f"the local registration API must be on loopback, got {api[0]}"
                )
            self.api = ApiServer(api, LocalApi(self), max_inflight=16)
            self.api_thread = threading.Thread(
                target=self.api.serve_forever, name="coflowkit-local-api", daemon=True
            )

    def _listen(self) -> socket.socket:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((self.addrs[0], self.peer_port))
        except OSError as e:
            s.close()
            raise CoflowkitError(f"peer port {self.addrs[0]}:{self.peer_port}: {e}") from None
        s.listen(256)
        s.setblocking(False)
        self.sel.register(s, selectors.EVENT_READ, "listen")
        return s

    def health(self) -> dict:
        return {
            "host": self.host, "addrs": self.addrs, "rounds": self.rounds,
            "peers": sorted(str(p.host) for p in self.peers.values() if p.conn.open),
            "sent": {"classes": self.sent[CLASSES], "units": self.sent[UNITS]},
            "received": {"classes": self.received[CLASSES], "units": self.received[UNITS]},
            "refused_records": self.node.refused, "dropped_peers": self.dropped_peers,
            "enforced_flows": len(self.plan.installed),
            "max_class": self.node.max_class,
            "cpu_s": {k: round(v, 3) for k, v in self.spent.items()},
            "cpu_total_s": round(time.process_time(), 3),
        }  # fmt: skip

    # -- sessions -------------------------------------------------------------------
    def _accept(self) -> None:
        for _ in range(64):
            try:
                raw, addr = self.listener.accept()
            except BlockingIOError:
                return
            except OSError as e:
                if e.errno in (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM):
                    log.warning("peer accept: %s", e)
                    return
                raise
            if len(self.peers) >= MAX_PEERS:
                self._evict_one()
            raw.setblocking(False)
            sock = self.server_ctx.wrap_socket(raw, server_side=True, do_handshake_on_connect=False)
            conn = Conn(sock, peer_channel(), f"{addr[0]}:{addr[1]}", PEER_QUEUE,
                        deadline=time.monotonic() + HANDSHAKE_S)  # fmt: skip
            self._add(Peer(conn, None))

    def _evict_one(self) -> None:
        inbound = [p for p in self.peers.values() if p.outbound is None]
        if inbound:
            self._drop(min(inbound, key=lambda p: p.conn.last_heard), "too many peers")

    def _add(self, p: Peer) -> None:
        self.peers[p.conn.fileno()] = p
        self.sel.register(p.conn.sock, selectors.EVENT_READ | selectors.EVENT_WRITE, p)

    def _connect(self, addr: str) -> Peer | None:
        if addr in self.outbound:
            return self.outbound[addr]
        if time.monotonic() < self.retry_at.get(addr, 0.0):
            return None
        # A non-blocking connect: the TLS handshake waits for it (its first write
        # would block), and the session's deadline bounds both.
        raw = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        raw.setblocking(False)
        raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock = self.client_ctx.wrap_socket(raw, server_side=False, do_handshake_on_connect=False)
        rc = sock.connect_ex((addr, self.peer_port))
        if rc not in (0, errno.EINPROGRESS):
            sock.close()
            log.info("peer %s:%d unreachable: %s", addr, self.peer_port, os.strerror(rc))
            self.retry_at[addr] = time.monotonic() + RETRY_S
            return None
        conn = Conn(sock, peer_channel(), f"{addr}:{self.peer_port}", PEER_QUEUE,
                    deadline=time.monotonic() + HANDSHAKE_S)  # fmt: skip
        p = Peer(conn, addr)
        self.outbound[addr] = p
        self._add(p)
        return p

    def _opened(self, p: Peer) -> None:
        ident = tls.identity(p.conn.sock.getpeercert())
        if ident.role != "host":
            raise CoflowkitError(f"{p.conn.peer} is {ident}, not a host")
        if p.outbound is not None and p.outbound not in ident.ips:
            raise CoflowkitError(f"{p.conn.peer}: host {ident.host}'s certificate does not list it")
        p.addrs, p.host = ident.ips, ident.host
        if p.outbound is not None:
            with self.lock:
                self.node.forget_peer(p.outbound)  # it gets everything again

    def _drop(self, p: Peer, why: str) -> None:
        log.info("peer session %s closed: %s", p.conn.peer, why)
        fd = p.conn.fileno()
        try:
            self.sel.unregister(p.conn.sock)
        except (KeyError, ValueError):
            pass
        self.peers.pop(fd, None)
        if p.outbound is not None and self.outbound.get(p.outbound) is p:
            del self.outbound[p.outbound]
            self.retry_at[p.outbound] = time.monotonic() + RETRY_S
        p.conn.close()
        self.dropped_peers += 1

    def _service(self, p: Peer, events: int) -> None:
        c = p.conn
        p.tried = True
        if not c.open:
            if not c.handshake():
                return
            self._opened(p)
        c.flush()
        for mtype, payload in c.read_frames():
            self.received[mtype] += 1
            with self.lock:
                if mtype == CLASSES:
                    self.node.on_classes(p.addrs, decode_classes(payload), time.monotonic())
                else:
                    self.node.on_units(p.addrs, decode_units(payload))

    def _send(self, addr: str, mtype: int, payload: bytes) -> None:
        p = self._connect(addr)
        if p is None or not p.conn.open:
            # Not connected yet: the peer is sent everything when its session opens.
            with self.lock:
                self.node.forget_peer(addr)
            return
        try:
            p.conn.send(mtype, payload)
            self.sent[mtype] += 1
        except (OSError, ssl.SSLError, SendQueueFull) as e:
            self._drop(p, str(e))

    # -- rounds -------------------------------------------------------------------------
    def _tc(self, lines: list[str]) -> None:
        if not lines or not self.enforce:
            return
        if self.tc is None:
            self.tc = TcBatch()
        self.tc.run(lines)
        for e in self.tc.take_errors():
            log.warning("%s", e)

    def _round(self, diag: sockdiag.SockDiag) -> None:
        self.rounds += 1
        t0 = time.thread_time()
        try:
            conns = diag.dump()
        except sockdiag.SockDiagError as e:
            log.warning("observation round %d skipped: %s", self.rounds, e)
            return
        now = time.monotonic()
        t1 = time.thread_time()
        with self.lock:
            wall = time.time()
            self.node.observe(conns, wall)
            self.node.expire_pending(now)
            classes = self.node.classes(wall)
            units = self.node.child_reports()
            for addr, recs in self.node.relays().items():
                units.setdefault(addr, []).extend(recs)
            gone = self.node.gone
            decisions = self.node.decisions()
        t2 = time.thread_time()
        for fid in gone:
            self._tc(self.plan.forget(fid))
        if self.dscp is not None:
            self.dscp.apply({k: c for _, c, k in decisions})
        if decisions:
            if not self.tree:
                self._tc(self.plan.setup())
                self.tree = True
            self._tc(self.plan.apply([(f, proto.CLASS, float(c)) for f, c, _ in decisions],
                                     {f: k for f, _, k in decisions}))  # fmt: skip
        t3 = time.thread_time()
        for addr, recs in sorted(classes.items()):
            self._send(addr, CLASSES, encode_classes(recs))
        for addr, recs in sorted(units.items()):
            self._send(addr, UNITS, encode_units(recs))
        t4 = time.thread_time()
        for k, a, b in (
            ("observe", t0, t1),
            ("decide", t1, t2),
            ("enforce", t2, t3),
            ("send", t3, t4),
        ):
            self.spent[k] += b - a

    def run(self, duration: float | None = None) -> None:
        end = None if duration is None else time.monotonic() + duration
        diag = sockdiag.SockDiag()
        if self.api is not None:
            self.api_thread.start()
        if self.enforce and remove_tree(self.dev):
            log.warning("removed the tree a previous agent left on %s", self.dev)
        if self.dscp is not None and not self.dscp.setup():
            log.warning(
                "DSCP marking unavailable (%s): classes are enforced at this host's egress only",
                "no nft program (package nftables)" if not self.dscp.available else "nft failed",
            )
        next_round = time.monotonic()
        try:
            while not self.stop.is_set() and (end is None or time.monotonic() < end):
                now = time.monotonic()
                if now >= next_round:
                    next_round = max(next_round + self.interval, now)
                    self._round(diag)
                for p in list(self.peers.values()):
                    c = p.conn
                    if not c.open and c.deadline is not None and now > c.deadline:
                        self._drop(p, "no connection and TLS handshake in time")
                    elif c.open or p.tried:
                        # Before the first step a new session waits for writability
                        # (an outbound connect completing); then only for what TLS wants.
                        want = selectors.EVENT_READ | (
                            selectors.EVENT_WRITE if c.wants_write else 0
                        )
                        if self.sel.get_key(c.sock).events != want:
                            self.sel.modify(c.sock, want, p)
                ready = any(p.conn.readable_now for p in self.peers.values())
                wait = 0.0 if ready else max(0.0, next_round - time.monotonic())
                for key, events in self.sel.select(timeout=wait):
                    if key.data == "listen":
                        self._accept()
                        continue
                    p = key.data
                    t0 = time.thread_time()
                    try:
                        self._service(p, events)
                    except FAILURES as e:
                        self._drop(p, str(e))
                    self.spent["receive"] += time.thread_time() - t0
                for p in [p for p in self.peers.values() if p.conn.readable_now]:
                    try:
                        self._service(p, 0)
                    except FAILURES as e:
                        self._drop(p, str(e))
        finally:
            for p in list(self.peers.values()):
                self._drop(p, "agent stopping")
            self.sel.close()
            self.listener.close()
            if self.api is not None:
                self.api.shutdown()
                self.api.server_close()
            if self.dscp is not None:
                self.dscp.teardown()
            if self.tree:
                self._tc(self.plan.teardown())
                self.tree = False
            if self.tc is not None:
                self.tc.close()
            diag.close()

    def close(self) -> None:
        self.stop.set()


def main(args) -> int:
    """``coflowkit agent --decentralized stream`` (arguments parsed by the CLI)."""
    if args.decentralized != "stream":
        raise CoflowkitError(
            f"--decentralized: only stream is decentralized, got {args.decentralized}"
        )
    for flag, value in (("--host", args.host), ("--tls-dir", args.tls_dir)):
        if value is None:
            raise CoflowkitError(f"agent --decentralized: {flag} is required")
    if args.master is not None:
        raise CoflowkitError("agent --decentralized runs with no master: drop --master")
    params = {}
    for kv in args.param or []:
        k, sep, v = kv.partition("=")
        if not sep:
            raise CoflowkitError(f"--param must be KEY=VALUE, got {kv!r}")
        params[k] = v
    host, _, port = args.registration.rpartition(":")
    if not port.isdigit():
        raise CoflowkitError(f"--registration must be HOST:PORT, got {args.registration!r}")
    agent = StreamAgent(
        args.host,
        tls.host_server_context(args.tls_dir, args.host),
        tls.host_client_context(args.tls_dir, args.host),
        args.dev,
        args.gbps * 1e9 / 8 / (1514 / 1448) if args.gbps else 10e9 / 8,
        params,
        interval=args.interval_ms / 1000,
        peer_port=args.peer_port,
        api=(host, int(port)),
        enforce=not args.observe_only,
        tell_fraction=args.tell_fraction,
    )

    def stop(*_):
        agent.close()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    log.info(
        "decentralized stream agent %d on %s (%s): peers on port %d, registrations on %s",
        args.host, args.dev, ", ".join(agent.addrs), args.peer_port, args.registration,
    )  # fmt: skip
    gc.freeze()
    agent.run()
    return 0


def _local(api: str, path: str, body: bytes | None, wait_s: float):
    """A request to this host's agent API, retried until it answers or
    ``wait_s`` passes (the agent may still be starting)."""
    import json
    import urllib.error
    import urllib.request

    end = time.monotonic() + wait_s
    while True:
        req = urllib.request.Request(f"http://{api}{path}", data=body,
                                     method="POST" if body is not None else "GET")  # fmt: skip
        try:
            with urllib.request.urlopen(req, timeout=5) as r:
                return json.loads(r.read())
        except urllib.error.HTTPError as e:
            raise CoflowkitError(
                f"{api}{path}: {e.code} {e.read().decode(errors='replace')}"
            ) from None
        except OSError:
            if time.monotonic() > end:
                raise CoflowkitError(
                    f"the agent's API at {api} did not answer in {wait_s} s"
                ) from None
            time.sleep(0.1)


def local_main(argv: list[str] | None = None) -> int:
    """``python -m coflowkit.runtime.peering register FILE | health``, run on a
        host (inside its namespace on the testbed): what a job framework does on
        the host. ``register`` posts each registration of the JSON list in FILE to
        the agent's loopback API; ``health`` and ``units`` print the agent's
    /api/health and /api/units."""
    import argparse
    import json

    ap = argparse.ArgumentParser(prog="python -m coflowkit.runtime.peering")
    ap.add_argument("action", choices=["register", "health", "units"])
    ap.add_argument("file", nargs="?")
    ap.add_argument("--api", default=f"127.0.0.1:{API_PORT}")
    ap.add_argument("--wait-s", type=float, default=30.0)
    a = ap.parse_args(argv)
    if a.action in ("health", "units"):
        print(json.dumps(_local(a.api, f"/api/{a.action}", None, a.wait_s)))
        return 0
    if a.file is None:
        raise CoflowkitError("register: give the registrations' JSON file")
    with open(a.file, encoding="utf-8") as fh:
        regs = json.load(fh)
    for r in regs:
        _local(a.api, "/api/coflows", json.dumps(r).encode(), a.wait_s)
    print(json.dumps({"registered": len(regs)}))
    return 0


if __name__ == "__main__":
    import sys

    try:
        sys.exit(local_main())
    except CoflowkitError as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(2)
