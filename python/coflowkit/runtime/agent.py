"""`coflowkit agent`: observe this host's TCP flows, report them, enforce decisions.

Every interval Δ the agent reads the host's TCP sockets (netlink sock_diag with
tcp_info), keeps the connections this host sends on (local address one of the
host's, at least ``threshold`` bytes acknowledged, still open), and reports to the
master what changed: new flows, flows whose acknowledged bytes grew, flows that
ended. Every ``discover_every``-th round is a dump of all sockets, which finds new
flows; the rounds in between look up only the tracked flows, which spares the
dump's walk over the kernel's whole hash table and the host's other connections
(see :func:`discovery_rounds`). Decisions from the master become HTB classes and
u32 filters on the egress device (:mod:`coflowkit.runtime.tc`), changed
incrementally.

Fail-open: when nothing has come from the master for ``timeout_rounds`` × Δ (or
the connection drops, or the master does not read what the agent sends), the
agent removes everything it installed, so traffic falls back to plain TCP
sharing, and reconnects; on its next session it reports every flow it tracks
again. On exit it removes everything too, and at start it removes any tree a
previous agent process left (one killed with SIGKILL cannot clean up;
``coflowkit agent --cleanup`` is the supervisor's hook for that).

The session is mutual TLS (:mod:`coflowkit.runtime.tls`): the agent presents its
host's certificate and talks only to a peer whose certificate names the master.
Its HELLO carries a boot id, random per agent process, so the master can tell a
reconnection of this process from a restarted agent whose flow ids start over.
"""

from __future__ import annotations

import gc
import logging
import os
import selectors
import signal
import socket
import ssl
import subprocess
import threading
import time
from dataclasses import dataclass

from coflowkit._core import CoflowkitError, FlowTable
from coflowkit.runtime import proto, sockdiag, tls
from coflowkit.runtime.session import Conn, SendQueueFull
from coflowkit.runtime.tc import (
    PAUSED_FLOOR,
    RELEASES,
    TcBatch,
    TcPlan,
    check_paused_floor,
    remove_tree,
)

log = logging.getLogger("coflowkit.agent")

# A flow is open (still sending) in these states; FIN_WAIT2 and later mean our FIN
# was acknowledged, so every byte was.
OPEN_STATES = (
    sockdiag.TCP_ESTABLISHED,
    sockdiag.TCP_CLOSE_WAIT,
    sockdiag.TCP_FIN_WAIT1,
    sockdiag.TCP_LAST_ACK,
)


def device_addrs(dev: str) -> list[str]:
    """IPv4 addresses of ``dev`` (``ip -4 -o addr show dev DEV``)."""
    r = subprocess.run(
        ["ip", "-4", "-o", "addr", "show", "dev", dev], capture_output=True, text=True
    )
    if r.returncode != 0:
        raise CoflowkitError(f"device {dev}: {r.stderr.strip() or 'not found'}")
    addrs = [line.split()[3].split("/")[0] for line in r.stdout.splitlines() if " inet " in line]
    if not addrs:
        raise CoflowkitError(f"device {dev} has no IPv4 address")
    return addrs


# A dump walks the kernel's whole TCP hash table, empty buckets included, and
# returns every open connection of the host. Exact lookups of the tracked flows
# do neither, but find no new flow, so the agent dumps once every
# `discovery_rounds` rounds and looks up in between (costs: docs/runtime.md).
BUCKETS_PER_DUMP_ROUND = 16384
MAX_DISCOVERY_ROUNDS = 10


def ehash_buckets(path: str = "/proc/sys/net/ipv4/tcp_ehash_entries") -> int | None:
    """Buckets of this network namespace's TCP hash table (Linux 6.1+; negative
    there when the namespace shares the machine's table), or None if unknown."""
    try:
        with open(path, encoding="ascii") as fh:
            return abs(int(fh.read().strip()))
    except (OSError, ValueError):
        return None


def discovery_rounds(buckets: int | None) -> int:
    """Rounds per full dump: every round up to 16,384 buckets, then one more
    round per 16,384 buckets, at most 10 (262,144 buckets: every 10th round).
    Unknown size: every round."""
    if buckets is None:
        return 1
    return max(1, min(MAX_DISCOVERY_ROUNDS, -(-buckets // BUCKETS_PER_DUMP_ROUND)))


@dataclass(slots=True)
class Round:
    """One observation round: the REPORT payload (encoded in Rust), whether
    anything changed, and the flows gone ``(fid, bytes)``."""

    payload: bytes
    changed: bool
    gone: list[tuple[int, int]]

    def report(self) -> proto.Report:
        return proto.decode_report(self.payload)


class Observer:
    """The flow table of one host, diffed round by round.

    The table, the diff and the round's system calls live in Rust
    (:class:`coflowkit._core.FlowTable`, coflowkit-runtime's ``observe`` and
    ``nlio``): no Python object is built for a socket, and the report comes
    back encoded.
    """

    def __init__(self, addrs: list[str], threshold: int):
        self.addrs = list(addrs)
        self.table = FlowTable(self.addrs, threshold, list(OPEN_STATES))

    def round(self, diag: sockdiag.SockDiag, now: float, full: bool = True) -> Round:
        """One round folded into the table: a dump (``full``), which also finds
        new flows, or exact lookups of the tracked ones. Returns what changed.

        A failed round raises :class:`~coflowkit.runtime.sockdiag.SockDiagError`
        and changes nothing."""
        return Round(*diag.poll_into(self.table, now, full))

    def everything(self, now: float) -> proto.Report:
        """Every tracked flow as new (the first report of a session)."""
        return proto.Report(now, [proto.NewFlow(*f) for f in self.table.everything()])

    def matches(self, fids=None) -> dict[int, tuple[str, int, str, int]]:
        """``{fid: (src, sport, dst, dport)}`` of the tracked flows among ``fids``
        (all of them if None)."""
        if fids is None:
            return self.table.matches()
        match_of = self.table.match_of
        return {fid: m for fid in fids if (m := match_of(fid)) is not None}

    def __len__(self) -> int:
        return len(self.table)


# Bytes the agent queues for a master that does not read before it gives up on it.
SEND_QUEUE = 8 << 20


class Agent:
    def __init__(
        self,
        master: tuple[str, int],
        tls_context: ssl.SSLContext,
        host: int,
        dev: str,
        link_bytes_per_s: float,
        interval: float = 0.02,
        threshold: int = 100_000,
        timeout_rounds: int = 10,
        addrs: list[str] | None = None,
        enforce: bool = True,
        name: str | None = None,
        discover_every: int | None = None,
        release: str = "change",
        paused_floor: float = PAUSED_FLOOR,
    ):
        check_paused_floor(paused_floor, "agent: --paused-floor")
        if release not in RELEASES:
            raise CoflowkitError(
                f"agent: --release must be one of {', '.join(RELEASES)}, got {release!r}"
            )
        if interval <= 0:
            raise CoflowkitError(f"interval must be positive, got {interval}")
        if discover_every is None:
            discover_every = discovery_rounds(ehash_buckets())
        if discover_every < 1:
            raise CoflowkitError(f"discover-every must be at least 1 round, got {discover_every}")
        self.discover_every = discover_every
        if timeout_rounds < 1:
            raise CoflowkitError(f"timeout must be at least one interval, got {timeout_rounds}")
        self.master = master
        self.ctx = tls_context
        self.host = host
        self.boot_id = os.urandom(proto.BOOT_ID_LEN)
        self.dev = dev
        self.interval = interval
        self.timeout = timeout_rounds * interval
        self.addrs = addrs or device_addrs(dev)
        self.name = name or socket.gethostname()
        self.observer = Observer(self.addrs, threshold)
        self.plan = TcPlan(dev, link_bytes_per_s, min_fraction=paused_floor)
        self.plan.release = release
        self.enforce = enforce
        self.tc: TcBatch | None = None
        self.tree = False
        self.stop = threading.Event()
        self.conn: Conn | None = None
        self.session = False
        self.rounds = 0
        self.decisions_applied = 0
        self.fail_opens = 0
        self.last_change: float | None = None
        self.unsent_gone: list[tuple[int, int]] = []

    # -- enforcement ---------------------------------------------------------
    def _tc(self, lines: list[str]) -> None:
        if not lines or not self.enforce:
            return
        if self.tc is None:
            self.tc = TcBatch()
        self.tc.run(lines)
        for e in self.tc.take_errors():
            log.warning("%s", e)

    def _fail_open(self, why: str) -> None:
        if self.tree:
            log.warning("failing open (%s): removing every limit on %s", why, self.dev)
            self._tc(self.plan.teardown())
            self.tree = False
            self.fail_opens += 1

    def _apply(self, decisions: list[tuple[int, int, float]]) -> None:
        if not self.tree and any(k != proto.UNLIMITED for _, k, _ in decisions):
            self._tc(self.plan.setup())
            self.tree = True
        matches = self.observer.matches(fid for fid, _, _ in decisions)
        self._tc(self.plan.apply(decisions, matches, time.monotonic()))
        self.decisions_applied += len(decisions)
        self.last_change = time.time()

    # -- connection ----------------------------------------------------------
    def _connect(self) -> None:
        """TCP and TLS to the master (blocking, bounded by 2 s), then HELLO and
        every tracked flow."""
        raw = socket.create_connection(self.master, timeout=2.0)
        try:
            raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock = self.ctx.wrap_socket(raw, server_side=False)
        except (OSError, ssl.SSLError):
            raw.close()
            raise
        try:
            peer = tls.identity(sock.getpeercert())
            if peer.role != tls.MASTER:
                raise CoflowkitError(
                    f"the peer at {self.master[0]}:{self.master[1]} is {peer}, not the master"
                )
        except CoflowkitError:
            sock.close()
            raise
        sock.setblocking(False)
        conn = Conn(sock, proto.agent_channel(), f"{self.master[0]}:{self.master[1]}", SEND_QUEUE)
        conn.open = True
        self.conn = conn
        hello = proto.Hello(
            self.host, max(1, int(self.interval * 1000)), self.addrs, self.name, self.boot_id
        )
        conn.send(proto.HELLO, proto.encode_hello(hello))
        first = self.observer.everything(time.time())
        first.gone, self.unsent_gone = self.unsent_gone, []
        conn.send(proto.REPORT, proto.encode_report(first))
        self.session = True

    def _drop(self, why: str) -> None:
        if self.conn is not None:
            log.warning("connection to master %s:%d closed: %s", *self.master, why)
            self.conn.close()
        self.conn = None
        self.session = False
        self._fail_open(why)

    def _send(self, mtype: int, payload: bytes) -> None:
        assert self.conn is not None
        self.conn.send(mtype, payload)

    def _receive(self) -> None:
        assert self.conn is not None
        self.conn.flush()
        for mtype, payload in self.conn.read_frames():
            if mtype == proto.DECISIONS:
                decisions = proto.decode_decisions(payload)
                if decisions:  # an empty one is the master's heartbeat
                    self._apply(decisions)
            elif mtype == proto.ERROR:
                raise ConnectionError(f"master refused: {payload.decode(errors='replace')}")

    def run(self, duration: float | None = None) -> None:
        """Runs until :meth:`close` is called (or ``duration`` seconds)."""
        end = None if duration is None else time.monotonic() + duration
        sel = selectors.DefaultSelector()
        diag = sockdiag.SockDiag()
        if self.enforce and remove_tree(self.dev):
            log.warning("removed the tree a previous agent left on %s", self.dev)
        next_round = time.monotonic()
        next_connect = 0.0
        failures = (OSError, ConnectionError, ssl.SSLError, proto.ProtocolError, CoflowkitError)
        try:
            while not self.stop.is_set() and (end is None or time.monotonic() < end):
                now = time.monotonic()
                if self.conn is None and now >= next_connect:
                    try:
                        self._connect()
                        sel.register(self.conn.sock, selectors.EVENT_READ)
                    except failures as e:
                        log.info("master %s:%d unreachable: %s", *self.master, e)
                        if self.conn is not None:
                            self._drop(str(e))
                        next_connect = now + min(1.0, 5 * self.interval)
                if now >= next_round:
                    next_round += self.interval
                    if next_round < now:
                        next_round = now + self.interval
                    self._round(diag)
                c = self.conn
                if c is not None and time.monotonic() - c.last_heard > self.timeout:
                    sel.unregister(c.sock)
                    self._drop(f"silent for {self.timeout:.3f} s")
                    next_connect = time.monotonic() + self.interval
                c = self.conn
                if c is not None:
                    want = selectors.EVENT_READ | (selectors.EVENT_WRITE if c.wants_write else 0)
                    if sel.get_key(c.sock).events != want:
                        sel.modify(c.sock, want)
                wait = (
                    0.0
                    if c is not None and c.readable_now
                    else max(0.0, next_round - time.monotonic())
                )
                for key, _ in sel.select(timeout=wait):
                    try:
                        self._receive()
                    except failures as e:
                        sel.unregister(key.fileobj)
                        self._drop(str(e))
                        next_connect = time.monotonic() + self.interval
        finally:
            if self.conn is not None:
                sel.unregister(self.conn.sock)
                self._drop("agent stopping")
            self._fail_open("agent stopping")
            if self.plan.releases:
                log.info(
                    "paused flows given a rate: %s (--release %s)",
                    ", ".join(f"{n} by {how}" for how, n in sorted(self.plan.releases.items())),
                    self.plan.release,
                )
            if self.tc is not None:
                self.tc.close()
            diag.close()
            sel.close()

    def _round(self, diag: sockdiag.SockDiag) -> None:
        self.rounds += 1
        full = (self.rounds - 1) % self.discover_every == 0
        try:
            r = self.observer.round(diag, time.time(), full)
        except sockdiag.SockDiagError as e:
            log.warning("observation round %d skipped: %s", self.rounds, e)
            return
        for fid, _ in r.gone:
            self._tc(self.plan.forget(fid))
        if self.plan.draining:
            self._tc(self.plan.reap(time.monotonic()))
        if not self.session:
            # Ends seen while disconnected go out with the next session's first report.
            self.unsent_gone += r.gone
            return
        if r.changed or self.rounds % 5 == 0:
            try:
                self._send(proto.REPORT, r.payload)
            except (OSError, ssl.SSLError, SendQueueFull) as e:
                self._drop(str(e))

    def close(self) -> None:
        self.stop.set()


def main(args) -> int:
    """Entry point of ``coflowkit agent`` (arguments parsed by the CLI)."""
    if args.cleanup:
        removed = remove_tree(args.dev)
        log.info(
            "cleanup: %s",
            f"removed the agent's tree from {args.dev}" if removed else "nothing to remove",
        )
        return 0
    for flag, value in (
        ("--master", args.master),
        ("--host", args.host),
        ("--tls-dir", args.tls_dir),
    ):
        if value is None:
            raise CoflowkitError(f"agent: {flag} is required (unless --cleanup)")
    host, _, port = args.master.rpartition(":")
    if not host or not port.isdigit():
        raise CoflowkitError(f"--master must be HOST:PORT, got {args.master!r}")
    agent = Agent(
        (host, int(port)),
        tls.host_client_context(args.tls_dir, args.host),
        args.host,
        args.dev,
        args.gbps * 1e9 / 8 / (1514 / 1448) if args.gbps else 10e9 / 8,
        interval=args.interval_ms / 1000,
        threshold=args.threshold,
        timeout_rounds=args.timeout_rounds,
        enforce=not args.observe_only,
        discover_every=args.discover_every,
        release=args.release,
        paused_floor=args.paused_floor,
    )

    def stop(*_):
        agent.close()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    log.info(
        "agent %d on %s (%s) -> master %s; a full dump every %d round(s)",
        args.host, args.dev, ", ".join(agent.addrs), args.master, agent.discover_every,
    )  # fmt: skip
    gc.freeze()  # as the master does: long-lived objects out of the collector's passes
    agent.run()
    return 0
