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

Fail-open: when nothing authenticated has come from the master for
``timeout_rounds`` × Δ (or the connection drops), the agent removes everything it
installed, so traffic falls back to plain TCP sharing, and reconnects; on its next
session it reports every flow it tracks again. On exit it removes everything too.
"""

from __future__ import annotations

import gc
import logging
import selectors
import signal
import socket
import subprocess
import threading
import time
from dataclasses import dataclass

from coflowkit._core import CoflowkitError, FlowTable
from coflowkit.runtime import proto, sockdiag
from coflowkit.runtime.tc import TcBatch, TcPlan

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


class Agent:
    def __init__(
        self,
        master: tuple[str, int],
        secret: bytes,
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
    ):
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
        self.secret = secret
        self.host = host
        self.dev = dev
        self.interval = interval
        self.timeout = timeout_rounds * interval
        self.addrs = addrs or device_addrs(dev)
        self.name = name or socket.gethostname()
        self.observer = Observer(self.addrs, threshold)
        self.plan = TcPlan(dev, link_bytes_per_s)
        self.enforce = enforce
        self.tc: TcBatch | None = None
        self.tree = False
        self.stop = threading.Event()
        self.sock: socket.socket | None = None
        self.chan: proto.Channel | None = None
        self.session = False
        self.last_heard = 0.0
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
        self._tc(self.plan.apply(decisions, matches))
        self.decisions_applied += len(decisions)
        self.last_change = time.time()

    # -- connection ----------------------------------------------------------
    def _connect(self) -> None:
        s = socket.create_connection(self.master, timeout=2.0)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        s.setblocking(False)
        self.sock, self.chan, self.session = s, proto.Channel(self.secret), False
        self.last_heard = time.monotonic()

    def _drop(self, why: str) -> None:
        if self.sock is not None:
            log.warning("connection to master %s:%d closed: %s", *self.master, why)
            try:
                self.sock.close()
            except OSError:
                pass
        self.sock = self.chan = None
        self.session = False
        self._fail_open(why)

    def _send(self, mtype: int, payload: bytes) -> None:
        assert self.sock is not None and self.chan is not None
        data = self.chan.frame(mtype, payload)
        try:
            sent = self.sock.send(data)  # almost always whole: one system call
        except BlockingIOError:
            sent = 0
        if sent < len(data):  # the master is slow to read: block for the rest
            self.sock.setblocking(True)
            try:
                self.sock.sendall(data[sent:])
            finally:
                self.sock.setblocking(False)

    def _receive(self) -> None:
        assert self.sock is not None and self.chan is not None
        try:
            data = self.sock.recv(proto.RECV_BYTES)
        except BlockingIOError:
            return
        if not data:
            raise ConnectionError("master closed the connection")
        for mtype, payload in self.chan.feed(data):
            self.last_heard = time.monotonic()
            if mtype == proto.CHALLENGE:
                hello = proto.Hello(self.host, int(self.interval * 1000), self.addrs, self.name)
                self._send(proto.HELLO, proto.encode_hello(hello))
                first = self.observer.everything(time.time())
                first.gone, self.unsent_gone = self.unsent_gone, []
                self._send(proto.REPORT, proto.encode_report(first))
                self.session = True
            elif mtype == proto.DECISIONS:
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
        subprocess.run(["tc", "qdisc", "del", "dev", self.dev, "root"], capture_output=True)
        next_round = time.monotonic()
        next_connect = 0.0
        try:
            while not self.stop.is_set() and (end is None or time.monotonic() < end):
                now = time.monotonic()
                if self.sock is None and now >= next_connect:
                    try:
                        self._connect()
                        sel.register(self.sock, selectors.EVENT_READ)
                    except OSError as e:
                        log.info("master %s:%d unreachable: %s", *self.master, e)
                        next_connect = now + min(1.0, 5 * self.interval)
                if now >= next_round:
                    next_round += self.interval
                    if next_round < now:
                        next_round = now + self.interval
                    self._round(diag)
                if self.sock is not None and time.monotonic() - self.last_heard > self.timeout:
                    sel.unregister(self.sock)
                    self._drop(f"silent for {self.timeout:.3f} s")
                    next_connect = time.monotonic() + self.interval
                wait = max(0.0, next_round - time.monotonic())
                for key, _ in sel.select(timeout=wait):
                    try:
                        self._receive()
                    except (OSError, ConnectionError, proto.ProtocolError) as e:
                        sel.unregister(key.fileobj)
                        self._drop(str(e))
                        next_connect = time.monotonic() + self.interval
        finally:
            if self.sock is not None:
                sel.unregister(self.sock)
                self._drop("agent stopping")
            self._fail_open("agent stopping")
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
        if not self.session:
            # Ends seen while disconnected go out with the next session's first report.
            self.unsent_gone += r.gone
            return
        if r.changed or self.rounds % 5 == 0:
            try:
                self._send(proto.REPORT, r.payload)
            except OSError as e:
                self._drop(str(e))

    def close(self) -> None:
        self.stop.set()


def main(args) -> int:
    """Entry point of ``coflowkit agent`` (arguments parsed by the CLI)."""
    host, _, port = args.master.rpartition(":")
    if not host or not port.isdigit():
        raise CoflowkitError(f"--master must be HOST:PORT, got {args.master!r}")
    agent = Agent(
        (host, int(port)),
        proto.read_secret(args.secret_file),
        args.host,
        args.dev,
        args.gbps * 1e9 / 8 / (1514 / 1448) if args.gbps else 10e9 / 8,
        interval=args.interval_ms / 1000,
        threshold=args.threshold,
        timeout_rounds=args.timeout_rounds,
        enforce=not args.observe_only,
        discover_every=args.discover_every,
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
