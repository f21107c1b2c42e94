"""Decentralized Stream: one host's receiver and sender roles, with no master.

This module is the state and the rules only (no sockets, no clock): the agent
of :mod:`coflowkit.runtime.peering` feeds it what the host sees and what its
peers send, and carries out what it returns. So the same object is driven by
the tests with hand-made observations.

**Receiver.** A job framework on the host registers its coflows on the agent's
loopback port, with the JSON of the master's API (hosts as IPv4 addresses).
The flows into this host form *receiver units*, one per (coflow, stage), as in
the simulator's Stream (docs/policies/stream.md). Every round a unit's bytes
received ``X`` (``tcpi_bytes_received`` of its connections, finished ones
included), flows seen ``n`` and finished ``n_fin``, its sub-coflow's internal
id ``m`` (Algorithm 1 on the registered DAG) and the bytes learnt from
elsewhere ``S`` give its class by eq. (5) (:class:`coflowkit._core.StreamRule`,
the policy crate's own formula), kept monotone. The class goes to each sender
of the unit (CLASSES), with ``X``.

**Sender.** A sender enforces the classes of its flows (HTB ``prio`` on its
egress device) and relays, to each receiver of a coflow it sends to, the ``X``
of the coflow's units at its other receivers (UNITS, kind RELAY):
Information-Relay. A receiver counts each relayed unit once, whichever senders
relay it.

**Child-to-Parent.** When a unit of a stage that has parents has received all
its registered flows, its receiver sends its final ``X`` to the hosts that
receive the parent stages (UNITS, kind CHILD); a parent unit's ``S`` counts
its child stages' reports, and relayed bytes of units it already counts so are
not added again (audit D3 of the simulator's Stream).

**Trust.** A peer is a host certified by the cluster CA (its certificate lists
its addresses). A CLASSES record is accepted only for a flow from this host to
one of that peer's certified addresses; relays and child reports only for
coflows registered here. Everything a peer can make this host keep is bounded
(``MAX_*`` below).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field

from coflowkit._core import CoflowkitError, StreamRule, stream_internal_id
from coflowkit.runtime import sockdiag
from coflowkit.runtime.registration import Registration

RELAY = 1
CHILD = 2

# A receiving connection has all its bytes once the peer's FIN arrived.
RECEIVING_STATES = (sockdiag.TCP_ESTABLISHED, sockdiag.TCP_FIN_WAIT1, sockdiag.TCP_FIN_WAIT2)
# One still in its handshake (a SYN_RECV minisocket, which reports 0 bytes) has
# not started: seen, neither receiving nor done. On the testbed a dump catches
# more than half the connections so (their final ACK waits behind data queued
# at 10 Mbit/s); marking them done lost every byte they later received.
OPENING_STATES = (sockdiag.TCP_SYN_RECV,)
SENDING_STATES = (
    sockdiag.TCP_ESTABLISHED,
    sockdiag.TCP_CLOSE_WAIT,
    sockdiag.TCP_FIN_WAIT1,
    sockdiag.TCP_LAST_ACK,
)

MAX_COFLOWS = 10_000  # registered coflows held (finished ones are evicted first)
MAX_PENDING_CLASSES = 65_536  # classes for flows this host has not seen yet
MAX_PENDING_CHILD = 65_536  # child reports for coflows not registered yet
FINISHED_KEEP = 1_000
# X goes to senders (for relays) when it grew by an eighth since last told, and
# by at least this many bytes: a few messages per flow rather than one per round.
# X is told again once it grew by this share of what was last told: a unit's
# relayed S then runs up to this share behind its senders' other receivers.
TELL_FRACTION = 0.125
TELL_BYTES = 64 << 10  # finished coflows kept for child reports and the API

Key = tuple[str, int, str, int]  # (src ip, sport, dst ip, dport)


@dataclass
class Unit:
    """A receiver unit: the flows of one (coflow, stage) into this host."""

    coflow: int
    stage: int
    m: int
    expected: int  # registered flows into this host
    conns: dict[Key, int] = field(default_factory=dict)  # bytes received
    done: set[Key] = field(default_factory=set)
    senders: set[str] = field(default_factory=set)
    q: int = 0
    told: dict[Key, tuple[int, int]] = field(default_factory=dict)  # (class, X) sent
    history: list[tuple[float, int, int, int]] = field(default_factory=list)  # (t, class, X, S)
    first_seen: float | None = None
    boost: int = 0  # classes raised by starvation mitigation
    x_seen: int = 0  # X when it last grew, and when
    progress_t: float = 0.0
    boosts: int = 0

    @property
    def cls(self) -> int:
        """The class its flows get: eq. (5)'s, less the starvation boost."""
        return self.q - self.boost

    reported: bool = False  # child report sent

    @property
    def x(self) -> int:
        return sum(self.conns.values())

    @property
    def complete(self) -> bool:
        return len(self.done) >= self.expected


@dataclass
class Coflow:
    id: int
    flows: dict[tuple[str, str, int], int]  # (src, dst, dport) into this host -> stage
    parents: tuple[tuple[int, int], ...]
    parent_hosts: dict[int, set[str]]  # child stage -> hosts receiving its parents
    units: dict[int, Unit]  # stage -> unit
    relayed: dict[str, dict[tuple[int, str], int]] = field(default_factory=dict)
    children: dict[tuple[int, str], int] = field(default_factory=dict)  # (stage, host) -> X

    @property
    def finished(self) -> bool:
        return all(u.complete for u in self.units.values())


@dataclass
class Out:
    """A flow this host sends, as a receiver classed it."""

    coflow: int
    stage: int
    dst: str
    cls: int
    fid: int


class StreamNode:
    """One host's decentralized Stream (module doc)."""

    def __init__(
        self, addrs: list[str], params: dict | None = None, tell_fraction: float = TELL_FRACTION
    ):
        if not addrs:
            raise CoflowkitError("decentralized stream: the host has no address")
        if not 0.0 < tell_fraction <= 1.0:
            raise CoflowkitError(f"tell fraction must be in (0, 1], got {tell_fraction!r}")
        self.tell_fraction = tell_fraction
        self.addrs = frozenset(addrs)
        self.rule = StreamRule({k: str(v) for k, v in (params or {}).items()})
        self.coflows: OrderedDict[int, Coflow] = OrderedDict()
        self.by_key: dict[tuple[str, str, int], int] = {}  # (src, dst, dport) -> coflow
        # Sender side.
        self.out: dict[Key, Out] = {}
        self.pending: OrderedDict[Key, tuple[Out, float]] = OrderedDict()
        self.served: dict[int, dict[tuple[int, str], int]] = {}  # coflow -> (stage, rcv) -> X
        self.relay_sent: dict[tuple[str, int], tuple] = {}
        self.pending_child: OrderedDict[tuple[int, int, str], int] = OrderedDict()
        self.next_fid = 1
        self.refused = 0
        self.max_class = 0  # the highest class this host's units reached

    # -- registration ------------------------------------------------------------
    def register(self, reg: Registration) -> dict:
        """A coflow from the local API; its flows into this host become units."""
        flows: dict[tuple[str, str, int], int] = {}
        stage_hosts: dict[int, set[str]] = {}
        for i, (src, dst, port, _) in enumerate(reg.flows):
            for what, h in (("src", src), ("dst", dst)):
                if not isinstance(h, str):
                    raise CoflowkitError(
                        f"flows[{i}].{what}: a decentralized agent knows hosts by IPv4 "
                        f"address, not index ({h})"
                    )
            stage = reg.stages[i] if reg.stages else 0
            stage_hosts.setdefault(stage, set()).add(dst)
            if dst in self.addrs:
                held = self.by_key.get((src, dst, port))
                if held is not None and held != reg.id and not self.coflows[held].finished:
                    raise CoflowkitError(
                        f"flows[{i}]: {src} -> {dst}:{port} belongs to coflow {held}, "
                        "which is still receiving"
                    )
                flows[(src, dst, port)] = stage
        if reg.id in self.coflows:
            raise CoflowkitError(f"coflow {reg.id} is already registered")
        self._evict()
        parent_hosts: dict[int, set[str]] = {}
        for child, parent in reg.parents:
            parent_hosts.setdefault(child, set()).update(stage_hosts.get(parent, ()))
        units: dict[int, Unit] = {}
        for stage in sorted(set(flows.values())):
            n = sum(1 for s in flows.values() if s == stage)
            m = stream_internal_id(list(reg.parents), stage) if reg.parents else 1
            units[stage] = Unit(reg.id, stage, m, n)
        c = Coflow(reg.id, flows, reg.parents, parent_hosts, units)
        self.coflows[reg.id] = c
        for k in flows:
            self.by_key[k] = reg.id
        for (cid, stage, host), x in list(self.pending_child.items()):
            if cid == reg.id:
                del self.pending_child[(cid, stage, host)]
                c.children[(stage, host)] = x
        return {"id": reg.id, "units": len(units), "flows_here": len(flows)}

    def _evict(self) -> None:
        if len(self.coflows) < MAX_COFLOWS:
            return
        done = [cid for cid, c in self.coflows.items() if c.finished]
        if not done:
            raise CoflowkitError(f"{MAX_COFLOWS} coflows are receiving here; none can be dropped")
        for cid in done[: max(1, len(done) - FINISHED_KEEP)]:
            self._drop(cid)

    def _drop(self, cid: int) -> None:
        c = self.coflows.pop(cid)
        for k in c.flows:
            if self.by_key.get(k) == cid:
                del self.by_key[k]

    # -- observation -------------------------------------------------------------
    def observe(self, conns: list[sockdiag.TcpConn], now: float = 0.0) -> None:
        """One round of this host's sockets (a sock_diag dump) at time ``now``."""
        sending: set[Key] = set()
        present: set[Key] = set()  # receiving connections, named as their sender does
        for c in conns:
            if c.src not in self.addrs:
                continue
            # Receiving: the remote end is the registered source, we are dst:port.
            cid = self.by_key.get((c.dst, c.src, c.sport))
            if cid is not None:
                co = self.coflows[cid]
                u = co.units[co.flows[(c.dst, c.src, c.sport)]]
                key = (c.dst, c.dport, c.src, c.sport)
                present.add(key)
                if key not in u.done:
                    u.conns[key] = max(u.conns.get(key, 0), c.bytes_received)
                    u.senders.add(c.dst)
                    if u.first_seen is None:
                        u.first_seen = now
                    if c.state not in RECEIVING_STATES and c.state not in OPENING_STATES:
                        u.done.add(key)
                continue
            if c.state in SENDING_STATES:
                sending.add((c.src, c.sport, c.dst, c.dport))
        # Receiving connections gone from the dump have finished.
        for co in self.coflows.values():
            for u in co.units.values():
                if len(u.done) < len(u.conns):
                    u.done.update(k for k in u.conns if k not in present)
        self._sent_flows(sending)

    def _sent_flows(self, seen: set[Key]) -> None:
        """Outgoing flows: classes waiting for a flow start, gone flows dropped."""
        self.gone: list[int] = []
        for key in [k for k in self.out if k not in seen]:
            o = self.out.pop(key)
            self.gone.append(o.fid)
        for key in [k for k in self.pending if k in seen]:
            self.out[key] = self.pending.pop(key)[0]
        live = {o.coflow for o in self.out.values()}
        for cid in [c for c in self.served if c not in live]:
            del self.served[cid]

    # -- receiver: classes -------------------------------------------------------
    def _s(self, co: Coflow, u: Unit) -> int:
        """Relayed and child bytes of unit ``u`` (module doc)."""
        children = (
            {c for c, p in co.parents if p == u.stage} if self.rule.child_to_parent else set()
        )
        s = sum(x for (st, _), x in co.children.items() if st in children)
        if not self.rule.relay:
            return s
        peers: dict[tuple[int, str], int] = {}
        for sender in u.senders:
            for (st, host), x in co.relayed.get(sender, {}).items():
                # This host's own units are counted below, from what it received.
                if st not in children and host not in self.addrs:
                    peers[(st, host)] = max(peers.get((st, host), 0), x)
        for v in co.units.values():  # this host's other units that share a sender
            if v is not u and v.stage not in children and v.senders & u.senders:
                peers[(v.stage, "")] = v.x
        return s + sum(peers.values())

    def classes(self, now: float = 0.0) -> dict[str, list[tuple]]:
        """Eq. (5) for every unit still receiving; the CLASSES records to send,
        by sender address (only units whose class or X moved)."""
        out: dict[str, list[tuple]] = {}
        for co in self.coflows.values():
            for u in co.units.values():
                if len(u.done) == len(u.conns):
                    continue
                x = u.x
                p = self.rule.classify(
                    u.q, float(x), float(self._s(co, u)), len(u.conns), len(u.done), u.m
                )
                if p > u.q:
                    u.q = p
                    u.boost = 0  # a demotion clears the starvation boost
                    self.max_class = max(self.max_class, p)
                    # At most one entry per class: bounded by the number of queues.
                    u.history.append((now, p, x, self._s(co, u)))
                self._starvation(u, x, now)
                cls = u.cls
                for key in u.conns:
                    if key in u.done:
                        continue
                    told = u.told.get(key)
                    # A class is told at once; X (for the senders' relays) when it
                    # grew by `tell_fraction` (an eighth), and at least TELL_BYTES,
                    # since last told.
                    if (
                        told is None
                        or told[0] != cls
                        or x - told[1] >= max(TELL_BYTES, told[1] * self.tell_fraction)
                    ):
                        u.told[key] = (cls, x)
                        out.setdefault(key[0], []).append((*key, co.id, u.stage, cls, x))
        return out

    def _starvation(self, u: Unit, x: int, now: float) -> None:
        """Starvation mitigation (the paper's §III-D, the simulator's
        ``starvation_s``): a unit whose bytes have not grown for
        ``starvation_s`` is raised one class, at most back to class 0; a
        demotion by eq. (5) clears the boost. Off when ``starvation_s`` is 0."""
        if x > u.x_seen or u.progress_t == 0.0:
            u.x_seen, u.progress_t = x, now
            return
        starve = self.rule.starvation_s
        if starve > 0.0 and u.boost < u.q and now - u.progress_t >= starve:
            u.boost += 1
            u.boosts += 1
            u.progress_t = now

    def child_reports(self) -> dict[str, list[tuple]]:
        """UNITS records of kind CHILD for units that just completed."""
        out: dict[str, list[tuple]] = {}
        if not self.rule.child_to_parent:
            return out
        me = min(self.addrs)
        for co in self.coflows.values():
            for u in co.units.values():
                if u.reported or not u.complete or u.stage not in co.parent_hosts:
                    continue
                u.reported = True
                for host in sorted(co.parent_hosts[u.stage]):
                    rec = (CHILD, co.id, u.stage, me, u.x)
                    if host in self.addrs:
                        co.children[(u.stage, me)] = u.x
                    else:
                        out.setdefault(host, []).append(rec)
        return out

    # -- sender: enforcement and relay ---------------------------------------------
    def on_classes(self, peer_addrs: frozenset[str], records: list[tuple], now: float) -> None:
        """CLASSES from a receiver certified for ``peer_addrs``."""
        for src, sport, dst, dport, cid, stage, cls, x in records:
            if src not in self.addrs or dst not in peer_addrs:
                self.refused += 1
                continue
            key = (src, sport, dst, dport)
            o = self.out.get(key) or (self.pending.get(key) or (None,))[0]
            if o is None:
                o = Out(cid, stage, dst, cls, self.next_fid)
                self.next_fid += 1
                self.pending[key] = (o, now)
                while len(self.pending) > MAX_PENDING_CLASSES:
                    self.pending.popitem(last=False)
            # The receiver owns the class: monotone by eq. (5), lowered only by
            # its starvation boost.
            o.coflow, o.stage, o.cls = cid, stage, cls
            self.served.setdefault(cid, {})[(stage, dst)] = x

    def expire_pending(self, now: float, ttl: float = 5.0) -> None:
        while self.pending:
            key, (_, t) = next(iter(self.pending.items()))
            if now - t < ttl:
                break
            del self.pending[key]

    def decisions(self) -> list[tuple[int, int, float, Key]]:
        """``(fid, class, key)`` of every flow this host sends that has a class."""
        return [(o.fid, o.cls, k) for k, o in self.out.items()]

    def relays(self) -> dict[str, list[tuple]]:
        """UNITS records of kind RELAY, by receiver: for each coflow it sends to
        that receiver, the X of the coflow's units at its other receivers (sent
        when it changed)."""
        out: dict[str, list[tuple]] = {}
        if not self.rule.relay:
            return out
        receivers: dict[str, set[int]] = {}
        for o in self.out.values():
            receivers.setdefault(o.dst, set()).add(o.coflow)
        for rcv, cids in sorted(receivers.items()):
            for cid in sorted(cids):
                recs = tuple(
                    (RELAY, cid, st, host, x)
                    for (st, host), x in sorted(self.served.get(cid, {}).items())
                    if host != rcv
                )
                if recs and self.relay_sent.get((rcv, cid)) != recs:
                    self.relay_sent[(rcv, cid)] = recs
                    out.setdefault(rcv, []).extend(recs)
        for k in [k for k in self.relay_sent if k[1] not in self.served]:
            del self.relay_sent[k]
        return out

    # -- receiver: relayed and child bytes -----------------------------------------
    def on_units(self, peer_addrs: frozenset[str], records: list[tuple]) -> None:
        """UNITS from a peer certified for ``peer_addrs``."""
        for kind, cid, stage, host, x in records:
            co = self.coflows.get(cid)
            if kind == RELAY:
                # Kept under the peer's addresses that send to a unit of the coflow
                # here: a unit counts the relays of its own senders only.
                senders = set().union(*(u.senders for u in co.units.values())) if co else set()
                mine = [a for a in peer_addrs if a in senders]
                if not mine:
                    self.refused += 1
                    continue
                for a in mine:
                    rel = co.relayed.setdefault(a, {})
                    if (stage, host) in rel or len(rel) < 4 * len(co.flows) + 64:
                        rel[(stage, host)] = x
            else:
                if host not in peer_addrs:
                    self.refused += 1
                    continue
                if co is None:
                    self.pending_child[(cid, stage, host)] = x
                    while len(self.pending_child) > MAX_PENDING_CHILD:
                        self.pending_child.popitem(last=False)
                elif any(c == stage for c, _ in co.parents):
                    co.children[(stage, host)] = x
                else:
                    self.refused += 1

    def forget_peer(self, addr: str) -> None:
        """``addr`` missed what was sent (its session was not open): the next
        rounds send it everything again (classes, relays, child reports)."""
        for co in self.coflows.values():
            for u in co.units.values():
                if u.told:
                    for k in [k for k in u.told if k[0] == addr]:
                        del u.told[k]
                if u.reported and addr in co.parent_hosts.get(u.stage, ()):
                    u.reported = False
        for k in [k for k in self.relay_sent if k[0] == addr]:
            del self.relay_sent[k]

    # -- status ------------------------------------------------------------------------
    def status(self) -> list[dict]:
        rows = []
        for co in self.coflows.values():
            for u in co.units.values():
                rows.append(
                    {
                        "coflow": co.id, "stage": u.stage, "m": u.m, "class": u.cls, "class_eq5": u.q,
                        "bytes_received": u.x, "flows_seen": len(u.conns),
                        "flows_finished": len(u.done), "flows_registered": u.expected,
                        "boost": u.boost, "starvation_boosts": u.boosts,
                        "s": self._s(co, u), "senders": sorted(u.senders),
                        "first_seen": u.first_seen,
                        "demotions": [list(h) for h in u.history],
                    }
                )  # fmt: skip
        return rows
