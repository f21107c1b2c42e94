"""`coflowkit master`: the global view, the policy, and what each agent enforces.

One thread owns everything that changes: the agents' sessions (mutual TLS,
:mod:`coflowkit.runtime.session`), the :class:`coflowkit._core.LiveScheduler`
running the registry policy, and the durable state
(:mod:`coflowkit.runtime.state`). It wakes on agent frames and every interval Δ
for a round: apply registrations, decide, queue to each agent only the decisions
that changed. Nothing in the thread blocks: sends go to bounded per-agent queues,
and an agent that does not keep up is disconnected. The HTTP API
(:mod:`coflowkit.runtime.http_api`) runs in other threads and talks to the round
thread through a queue (registrations) and a snapshot published after every
round (reads).

Membership: a flow whose (source host, destination host, destination port) was
registered joins that coflow's next free slot; any other flow is a coflow of its
own (``membership=none`` ignores registrations). Identification by clustering
(CODA) runs inside the ``coda`` policy, which sees every flow as its own coflow
and groups them itself.

Trust: an agent is the host its certificate names, and may claim only the
addresses its certificate lists. A new session for a host replaces the old one.
A HELLO with a new boot id (the agent process restarted) ends the flows the old
process reported; a host disconnected for ``lost_after`` seconds has its flows
ended too. docs/runtime.md states every promise and its limits.
"""

from __future__ import annotations

import collections
import errno
import gc
import logging
import queue
import selectors
import socket
import ssl
import threading
import time
from dataclasses import dataclass

from coflowkit import _core
from coflowkit._core import CoflowkitError, LiveScheduler
from coflowkit.runtime import dashboard, proto, tls
from coflowkit.runtime.http_api import ApiServer
from coflowkit.runtime.hubloop import HubLoop
from coflowkit.runtime.registered import Registered
from coflowkit.runtime.registration import Registration
from coflowkit.runtime.resources import (
    LogLimiter,
    ReserveFd,
    descriptor_room,
    ensure_descriptors,
)
from coflowkit.runtime.session import Conn, SendQueueFull, Session, wrap_server
from coflowkit.runtime.snapshot import FlowRows
from coflowkit.runtime.state import Store
from coflowkit.runtime.tc import PAUSED_FLOOR, check_paused_floor

log = logging.getLogger("coflowkit.master")

SINGLE_BASE = 1 << 62  # coflow ids of unregistered flows; registered ids stay below
ACCEPTS_PER_WAKEUP = 64
# Flows whose identified label ``GET /api/labels`` remembers (the oldest go first).
LABEL_LOG_MAX = 65536
# Finished coflows the API still lists (the policy driver keeps as many; see
# coflowkit-runtime's HISTORY): a master's memory follows the flows alive.
COFLOW_HISTORY = 1000
# Rounds whose time ``GET /api/rounds`` keeps (the dashboard's history).
ROUND_LOG_MAX = 600
DEFAULT_MAX_AGENTS = 50_000
# Descriptors kept beyond agents and HTTP requests: listening sockets, the state
# file, logs, the reserve descriptor, Python's own.
FD_RESERVE = 64


@dataclass
class Limits:
    """What one peer may cost the master (docs/runtime.md, Bounds)."""

    max_agents: int | None = None  # None: DEFAULT_MAX_AGENTS, or what ulimit -n allows
    handshake_timeout: float = 5.0  # TLS handshake + HELLO
    read_timeout: float = 10.0  # silence of an agent; a partial frame; an HTTP read
    send_queue: int = 4 << 20  # bytes queued for one agent
    http_inflight: int = 64
    http_body: int = 4 << 20
    lost_after: float = 30.0  # a disconnected host's flows end after this
    hub_shards: int = 1  # processes holding the sessions (--io rust; runtime/shards.py)

    def check(self) -> None:
        if self.hub_shards < 1:
            raise CoflowkitError(f"hub-shards must be >= 1, got {self.hub_shards}")
        if self.max_agents is None:
            room = descriptor_room() - self.http_inflight - FD_RESERVE
            if self.hub_shards > 1:  # each shard holds its share (shards.shard_cap)
                room = int((descriptor_room() - 64 - 256) * self.hub_shards / 1.1)
            self.max_agents = max(1, min(DEFAULT_MAX_AGENTS, room))
            if self.max_agents < DEFAULT_MAX_AGENTS:
                log.warning(
                    "at most %d agents at once: the descriptor limit (ulimit -n) allows no "
                    "more than that (%d by default)", self.max_agents, DEFAULT_MAX_AGENTS,
                )  # fmt: skip
        for name in ("max_agents", "send_queue", "http_inflight", "http_body"):
            if getattr(self, name) < 1:
                raise CoflowkitError(f"{name.replace('_', '-')} must be >= 1")
        for name in ("handshake_timeout", "read_timeout", "lost_after"):
            if not getattr(self, name) > 0:
                raise CoflowkitError(f"{name.replace('_', '-')} must be positive")


def check_options(
    interval: float, membership: str, enforce: str, hosts: int, io: str, tls_dir: str | None,
    paused_floor: float = PAUSED_FLOOR,
) -> None:  # fmt: skip
    """One clear error for a master option out of its range."""
    check_paused_floor(paused_floor, "master: --paused-floor")
    if not interval > 0:
        raise CoflowkitError(f"interval must be positive, got {interval}")
    if membership not in ("registry", "none"):
        raise CoflowkitError(f"membership must be registry or none, got {membership!r}")
    if enforce not in ("rates", "classes"):
        raise CoflowkitError(f"enforce must be rates or classes, got {enforce!r}")
    if not 1 <= hosts < 65536:
        raise CoflowkitError(f"hosts must be in 1..65535, got {hosts}")
    if io not in ("python", "rust"):
        raise CoflowkitError(f"io must be python or rust, got {io!r}")
    if io == "rust" and tls_dir is None:
        raise CoflowkitError("--io rust needs the TLS directory (tls_dir)")


class Master(HubLoop, Registered):
    def __init__(
        self,
        policy: str,
        params: dict[str, str],
        hosts: int,
        link_bytes_per_s: float,
        tls_context: ssl.SSLContext,
        listen: tuple[str, int] = ("127.0.0.1", 7470),
        http: tuple[str, int] | None = ("127.0.0.1", 7471),
        interval: float = 0.02,
        membership: str = "registry",
        enforce: str = "rates",
        hysteresis: float = 0.02,
        state_path: str | None = None,
        api_tokens: dict[str, frozenset[str]] | None = None,
        api_tls: ssl.SSLContext | None = None,
        limits: Limits | None = None,
        io: str = "python",
        tls_dir: str | None = None,
        paused_floor: float = PAUSED_FLOOR,
    ):
        check_options(interval, membership, enforce, hosts, io, tls_dir, paused_floor)
        self.paused_floor = paused_floor  # the agents' trickle share, left free on links
        self.limits = self._checked_limits(limits or Limits(), io)
        self.live = LiveScheduler(policy, params, hosts, link_bytes_per_s)
        self.policy = policy
        self.hosts = hosts
        self.capacity = link_bytes_per_s
        self.ctx = tls_context
        self.interval = interval
        self.membership = membership
        self.enforce = enforce
        self.hysteresis = hysteresis
        self.t0 = time.monotonic()
        self.wall0 = time.time()
        self._init_bookkeeping()
        self.next_single = SINGLE_BASE
        self.requests: queue.Queue = queue.Queue()
        self.lock = threading.Lock()
        self.snapshot: dict = {"coflows": [], "flows": FlowRows.empty(), "agents": 0}
        self._compacted_key: tuple[int, int] | None = None
        self._compacted_rows: list[dict] = []
        # For a policy that identifies coflows itself (coda): the last label of
        # each flow seen, by (src, dst, src port, dst port), bounded.
        # Written by the round thread and read by the HTTP threads, under the lock.
        self.label_log: collections.OrderedDict = collections.OrderedDict()
        # (seconds since the master started, round seconds) of the latest rounds.
        self.round_log: collections.deque = collections.deque(maxlen=ROUND_LOG_MAX)
        self.stop = threading.Event()
        self.dirty = False
        self.limiter = LogLimiter(log)
        self.metrics = collections.Counter(
            rounds=0, round_seconds_sum=0.0, round_seconds_max=0.0, round_seconds_last=0.0,
            rejected_messages=0, decisions_sent=0, reports=0, unresolved_flows=0,
            ignored_flows=0, refused_connections=0, accept_errors=0, slow_agents=0,
            lost_flows=0, round_errors=0, accepted_connections=0, finished_flows=0,
            finished_bytes=0, gc_collections=0, gc_seconds_sum=0.0, gc_seconds_max=0.0,
            gc_full_collections=0,
        )  # fmt: skip
        self._gc_started = 0.0
        self.store = Store(state_path) if state_path else None
        self._listen(listen, io, tls_dir)
        self._sel: selectors.BaseSelector | None = None
        self.httpd = None
        if self.store is not None:
            self._reload()
        if http is not None:
            self.httpd = ApiServer(
                http, self, api_tokens, api_tls, self.limits.http_inflight,
                self.limits.read_timeout, self.limits.http_body,
            )  # fmt: skip
            self.http_address = self.httpd.server_address[:2]

    @staticmethod
    def _checked_limits(limits: Limits, io: str) -> Limits:
        """``limits`` once they are in range, go with ``io``, and the process
        may open the descriptors they need."""
        limits.check()
        if limits.hub_shards > 1 and io != "rust":
            raise CoflowkitError("--hub-shards needs --io rust (the shards are session hubs)")
        # Under shards the sessions' descriptors are the shards' (each checks its own).
        sessions = limits.max_agents if limits.hub_shards == 1 else limits.hub_shards
        ensure_descriptors(
            sessions + limits.http_inflight + FD_RESERVE,
            f"--max-agents {limits.max_agents} (+ --http-inflight {limits.http_inflight})",
        )
        return limits

    def _listen(self, listen: tuple[str, int], io: str, tls_dir: str | None) -> None:
        """Opens the agents' port: the session hub's (--io rust, agents' sessions
        on its tokio threads) or this thread's own socket."""
        self.hub = None
        self.server = None
        self.reserve = None
        if io == "rust" and self.limits.hub_shards > 1:
            from coflowkit.runtime.shards import ShardedHub

            lim = self.limits
            self.hub = ShardedHub(
                lim.hub_shards, listen[0], listen[1], tls_dir, self.hosts, lim.max_agents,
                lim.handshake_timeout, lim.read_timeout, lim.send_queue, 3 * self.interval,
            )  # fmt: skip
            self.address = self.hub.address
        elif io == "rust":
            lim = self.limits
            self.hub = _core.AgentHub(
                listen[0], listen[1], tls_dir, self.hosts, lim.max_agents, lim.handshake_timeout,
                lim.read_timeout, lim.send_queue, 3 * self.interval,
            )  # fmt: skip
            self.address = self.hub.address
        else:
            self.server = socket.create_server(listen, backlog=1024)
            self.server.setblocking(False)
            self.address = self.server.getsockname()[:2]
            self.reserve = ReserveFd()

    def _init_bookkeeping(self) -> None:
        """Sessions, hosts and the flow slots' owners (the round thread's state)."""
        self.sessions: dict[int, Session] = {}  # fd -> session
        # Sessions holding bytes TLS has already decrypted (the selector cannot
        # see them), by fd: found when a session is served, so a loop step costs
        # the sessions that are ready, not all of them.
        self.tls_ready: dict[int, Session] = {}
        # Connected hosts, least recently sent to first: a round's heartbeats
        # walk only the hosts that are due.
        self.send_order: collections.OrderedDict[int, float] = collections.OrderedDict()
        self.by_host: dict[int, Session] = {}
        self.boot: dict[int, bytes] = {}  # host -> boot id of its agent process
        self.lost_since: dict[int, float] = {}  # host -> when its session ended
        self.ip_host: dict[str, int] = {}
        self.pending: dict[tuple[int, int, int], collections.deque[int]] = {}
        # Registered flows that were running when the master last stopped:
        # (src, sport, dst, dport) -> slot. Their agents report them again.
        self.rebind: dict[tuple[int, int, int, int], int] = {}
        self.reg_slot: dict[int, tuple[int, int]] = {}  # registered slot -> (coflow, index)
        self.slot_owner: dict[int, tuple[int, int]] = {}  # slot -> (host, fid)
        self.host_flows: dict[int, dict[int, int]] = {}  # host -> fid -> slot
        # Flows whose destination no agent has announced yet: held (with their
        # latest byte count) until that agent says hello. host -> fid -> NewFlow
        self.unresolved: dict[int, dict[int, proto.NewFlow]] = {}
        # The same flows by the address they wait for: address -> {(host, fid)}.
        self.unresolved_to: dict[str, set[tuple[int, int]]] = {}
        self.n_unresolved = 0
        self.slot_info: dict[
            int, tuple[int, int, int, int]
        ] = {}  # slot -> (src, dst, sport, dport)
        # What each agent was told, and the per-flow half of a round (Rust:
        # coflowkit-runtime/src/enforce.rs).
        self.enf = _core.Enforcer(
            self.hosts, self.capacity, self.hysteresis, self.enforce == "classes", self.paused_floor
        )
        # Registered coflows whose every flow has a size: coflow -> total bytes.
        self.coflow_size: dict[int, float] = {}
        self.done_size: collections.OrderedDict[int, float] = collections.OrderedDict()

    def now(self) -> float:
        return time.monotonic() - self.t0

    def wall(self, t: float) -> float:
        return self.wall0 + t

    # -- registrations (round thread) ------------------------------------------
    # -- the HTTP API's calls (other threads) ----------------------------------
    def get(self, path: str) -> tuple[int, object, str]:
        with self.lock:
            snap = self.snapshot
        if path == "/api/coflows":
            return 200, snap["coflows"], "application/json"
        if path == "/api/flows":
            return 200, snap["flows"].rows(), "application/json"
        if path == "/api/labels":
            with self.lock:
                rows = [
                    {
                        "src": k[0],
                        "dst": k[1],
                        "src_port": k[2],
                        "dst_port": k[3],
                        "label": v[0],
                        "seen_s": v[1],
                    }  # fmt: skip
                    for k, v in self.label_log.items()
                ]
            return 200, rows, "application/json"
        if path == "/api/health":
            body = {
                "policy": self.policy,
                "agents": snap["agents"],
                "rounds": self.metrics["rounds"],
            }
            return 200, body, "application/json"
        if path in dashboard.ENDPOINTS:
            with self.lock:
                rounds = list(self.round_log)
            return 200, dashboard.ENDPOINTS[path](self, snap, rounds), "application/json"
        if path == "/metrics":
            return 200, dashboard.prometheus(self), "text/plain; version=0.0.4"
        return 404, {"error": f"no such endpoint {path}"}, "application/json"

    def submit(self, reg: Registration, timeout: float = 5.0) -> tuple[int, object]:
        reply: queue.Queue = queue.Queue()
        self.requests.put((reg, reply))
        try:
            return reply.get(timeout=timeout)
        except queue.Empty:
            return 503, {"error": "the master did not run a round in time"}

    # -- agents' connections ---------------------------------------------------
    def _accept(self, sel: selectors.BaseSelector) -> None:
        for _ in range(ACCEPTS_PER_WAKEUP):
            try:
                sock, addr = self.server.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as e:
                self.metrics["accept_errors"] += 1
                if e.errno in (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM):
                    self.limiter.warn("accept", "cannot accept an agent: %s; refusing one", e)
                    self.reserve.shed(self.server)
                    return
                if e.errno in (errno.ECONNABORTED, errno.EPROTO, errno.EPERM):
                    continue
                self.limiter.warn("accept", "accept failed: %s", e)
                return
            if len(self.sessions) >= self.limits.max_agents:
                self.metrics["refused_connections"] += 1
                self.limiter.warn(
                    "full",
                    "refusing %s: %d connections (--max-agents)",
                    addr[0],
                    len(self.sessions),
                )
                sock.close()
                continue
            try:
                tsock = wrap_server(self.ctx, sock)
            except (OSError, ssl.SSLError) as e:
                self.limiter.warn("accept", "cannot set up TLS with %s: %s", addr[0], e)
                sock.close()
                continue
            self.metrics["accepted_connections"] += 1
            conn = Conn(
                tsock, proto.master_channel(), f"{addr[0]}:{addr[1]}", self.limits.send_queue,
                deadline=time.monotonic() + self.limits.handshake_timeout,
            )  # fmt: skip
            s = Session(conn)
            self.sessions[conn.fileno()] = s
            sel.register(conn.sock, selectors.EVENT_READ, s)

    def _close(
        self, sel: selectors.BaseSelector | None, s: Session, why: str, tell: bool = False
    ) -> None:
        if s.conn is None:  # the hub's session
            if self.hub is not None:
                self.hub.close(s.sid, why, tell)
            self.sessions.pop(s.sid, None)
            self._forget(s, why)
            return
        if tell and s.conn.open:
            try:
                s.conn.send(proto.ERROR, why.encode()[:1000])
            except (OSError, ssl.SSLError, SendQueueFull, proto.ProtocolError):
                pass
        try:
            sel.unregister(s.conn.sock)
        except (KeyError, ValueError):
            pass
        self.sessions.pop(s.conn.fileno(), None)
        self.tls_ready.pop(s.conn.fileno(), None)
        self._forget(s, why)
        s.conn.close()

    def _forget(self, s: Session, why: str) -> None:
        """The master's side of a session's end: its host is lost (for now)."""
        self.limiter.warn("close", "agent %s (host %s) disconnected: %s", s.peer, s.host, why)
        if s.host is not None and self.by_host.get(s.host) is s:
            del self.by_host[s.host]
            self.send_order.pop(s.host, None)
            self.lost_since[s.host] = time.monotonic()
            # Its agent fails open: nothing it was told is in force any more.
            self.enf.set_up(s.host, False)
            self.enf.unpush(list(s.flows.values()))

    def _io(self, sel: selectors.BaseSelector, s: Session, mask: int) -> None:
        """Handles one session's readiness; any failure ends that session only."""
        try:
            if not s.conn.open:
                if not s.conn.handshake():
                    self._interest(sel, s)
                    return
                s.ident = tls.identity(s.conn.sock.getpeercert())
                if s.ident.role != "host":
                    raise proto.ProtocolError(f"a {s.ident} certificate is not an agent's")
            if mask & selectors.EVENT_WRITE:
                s.conn.flush()
            for mtype, payload in s.conn.read_frames():
                if mtype == proto.HELLO and s.host is None:
                    self._hello(sel, s, proto.decode_hello(payload))
                elif mtype == proto.REPORT and s.host is not None:
                    self._report(s, proto.decode_report(payload))
                else:
                    raise proto.ProtocolError(f"unexpected {proto.TYPE_NAMES[mtype]}")
            if s.conn.sock.fileno() >= 0:
                self._interest(sel, s)
                if s.conn.readable_now:
                    self.tls_ready[s.conn.fileno()] = s
                else:
                    self.tls_ready.pop(s.conn.fileno(), None)
        except (proto.ProtocolError, CoflowkitError) as e:
            self.metrics["rejected_messages"] += 1
            self._close(sel, s, f"rejected: {e}", tell=True)
        except SendQueueFull as e:
            self.metrics["slow_agents"] += 1
            self._close(sel, s, f"does not keep up: {e}")
        except ssl.SSLError as e:
            self.metrics["rejected_messages"] += 1
            self._close(sel, s, f"TLS: {e.reason or e}")
        except (OSError, ConnectionError) as e:
            self._close(sel, s, str(e) or type(e).__name__)
        except Exception as e:  # a bug must not stop the master: end this session
            log.exception("session %s failed", s.peer)
            self._close(sel, s, f"internal error: {type(e).__name__}")

    def _interest(self, sel: selectors.BaseSelector, s: Session) -> None:
        events = selectors.EVENT_READ | (selectors.EVENT_WRITE if s.conn.wants_write else 0)
        key = sel.get_key(s.conn.sock)
        if key.events != events:
            sel.modify(s.conn.sock, events, s)

    def _hello(self, sel: selectors.BaseSelector, s: Session, h: proto.Hello) -> None:
        ident = s.ident
        assert ident is not None
        if ident.host != h.host:
            raise proto.ProtocolError(f"HELLO says host {h.host}, but the certificate is {ident}")
        if not 0 <= h.host < self.hosts:
            raise proto.ProtocolError(f"host {h.host} is outside this master's {self.hosts} hosts")
        for a in h.addrs:
            if a not in ident.ips:
                raise proto.ProtocolError(f"address {a} is not in host {h.host}'s certificate")
            owner = self.ip_host.get(a)
            if owner is not None and owner != h.host and owner in self.by_host:
                raise proto.ProtocolError(f"address {a} belongs to connected host {owner}")
        old = self.by_host.get(h.host)
        if old is not None and old is not s:
            self._close(sel, old, f"replaced by a new session from {s.peer}", tell=True)
        prev_boot = self.boot.get(h.host)
        if prev_boot is not None and prev_boot != h.boot_id:
            self._retire_host(h.host, "its agent restarted")
        self.boot[h.host] = h.boot_id
        self.lost_since.pop(h.host, None)
        if s.conn is not None:
            s.conn.deadline = None
        # A host's flows outlive its sessions (same agent process): it reports
        # them again under the same numbers and they keep their slots.
        s.flows = self.host_flows.setdefault(h.host, {})
        self.enf.unpush(list(s.flows.values()))
        s.host, s.addrs = h.host, h.addrs
        self.by_host[h.host] = s
        self.enf.set_up(h.host, True)
        self.send_order[h.host] = s.last_sent
        self.send_order.move_to_end(h.host, last=False)  # owed a heartbeat first
        for a in h.addrs:
            self.ip_host[a] = h.host
        log.info("agent %s is host %d (%s)", s.peer, h.host, ", ".join(h.addrs))
        # Flows towards the addresses just announced are scheduled from now on.
        now = self.now()
        for a in h.addrs:
            for src, fid in sorted(self.unresolved_to.pop(a, ())):
                f = self._unhold(src, fid)
                if f is not None and self._admit(src, f, now):
                    self.dirty = True
        self.metrics["unresolved_flows"] = self.n_unresolved

    def _hold(self, src: int, f: proto.NewFlow) -> None:
        """Holds a flow whose destination no agent has announced yet."""
        held = self.unresolved.setdefault(src, {})
        if f.fid in held:
            self._unhold(src, f.fid)
            held = self.unresolved.setdefault(src, {})
        held[f.fid] = f
        self.unresolved_to.setdefault(f.dst, set()).add((src, f.fid))
        self.n_unresolved += 1

    def _unhold(self, src: int, fid: int) -> proto.NewFlow | None:
        """Takes a held flow out of both indexes (None if it was not held)."""
        held = self.unresolved.get(src)
        f = None if held is None else held.pop(fid, None)
        if f is None:
            return None
        if not held:
            del self.unresolved[src]
        waiting = self.unresolved_to.get(f.dst)
        if waiting is not None:
            waiting.discard((src, fid))
            if not waiting:
                del self.unresolved_to[f.dst]
        self.n_unresolved -= 1
        return f

    def _retire_host(self, host: int, why: str) -> None:
        """Ends every flow host ``host``'s agent had reported (its process is gone
        or the host is lost), with the bytes last reported."""
        flows = self.host_flows.pop(host, {})
        for fid in list(self.unresolved.get(host, ())):
            self._unhold(host, fid)
        self.metrics["unresolved_flows"] = self.n_unresolved
        now = self.now()
        for slot in flows.values():
            self._end_flow(slot, now)
        if flows:
            self.metrics["lost_flows"] += len(flows)
            self.dirty = True
            log.warning("host %d: %s; its %d flows ended", host, why, len(flows))

    def _end_flow(self, slot: int, now: float) -> None:
        done = self.live.finish(slot, now)
        self.enf.release(slot)
        self.slot_info.pop(slot, None)
        self.slot_owner.pop(slot, None)
        reg = self.reg_slot.pop(slot, None)
        if reg is not None and done is not None and reg[0] in self.coflow_size:
            # Sizes of finished coflows: only as many as the API lists.
            self.done_size[reg[0]] = self.coflow_size.pop(reg[0])
            while len(self.done_size) > COFLOW_HISTORY:
                self.done_size.popitem(last=False)
        if reg is not None and self.store is not None:
            if done is not None:
                self.store.completed(reg[0])
            else:
                self.store.finish(reg[0], reg[1], self.live.sent(slot))

    def _admit(self, src: int, f: proto.NewFlow, now: float) -> bool:
        """Give a reported flow a slot; False if its destination is not (yet) a host."""
        dst = self.ip_host.get(f.dst)
        if dst is None:
            self._hold(src, f)
            return False
        if dst == src:
            self.metrics["ignored_flows"] += 1
            return False
        flows = self.host_flows.setdefault(src, {})
        slot = self.rebind.pop((src, f.sport, dst, f.dport), None)
        q = self.pending.get((src, dst, f.dport)) if self.membership == "registry" else None
        if slot is None and q:
            slot = q.popleft()
            if not q:
                del self.pending[(src, dst, f.dport)]
        if slot is not None:
            self.live.start(slot, f.sport, now)
            reg = self.reg_slot.get(slot)
            if reg is not None and self.store is not None:
                self.store.bind(reg[0], reg[1], src, f.sport, dst, f.dport)
                self.store.arrived(reg[0], self.wall(now))
        else:
            slot = self.live.add_single(self.next_single, src, dst, f.sport, f.dport, now)
            self.next_single += 1
        flows[f.fid] = slot
        self.slot_owner[slot] = (src, f.fid)
        self.enf.own(slot, src, f.fid, src, dst)
        self.slot_info[slot] = (src, dst, f.sport, f.dport)
        self.live.update([slot], [float(f.sent)])
        return True

    def _report(self, s: Session, r: proto.Report) -> None:
        self.metrics["reports"] += 1
        if r.new or r.gone:
            self.dirty = True  # arrivals and completions get a round at once
        now = self.now()
        live = self.live
        assert s.host is not None
        for f in r.new:
            if f.fid in s.flows:
                live.update([s.flows[f.fid]], [float(f.sent)])
            else:
                self._unhold(s.host, f.fid)
                self._admit(s.host, f, now)
        if r.updated:
            held = self.unresolved.get(s.host, {})
            slots, sent = [], []
            for fid, b in r.updated:
                slot = s.flows.get(fid)
                if slot is not None:
                    slots.append(slot)
                    sent.append(float(b))
                elif fid in held:
                    held[fid].sent = b
            live.update(slots, sent)
        for fid, b in r.gone:
            self._unhold(s.host, fid)
            slot = s.flows.pop(fid, None)
            if slot is None:
                continue
            live.update([slot], [float(b)])
            self._end_flow(slot, now)
            self.metrics["finished_flows"] += 1
            self.metrics["finished_bytes"] += b
        self.metrics["unresolved_flows"] = self.n_unresolved

    def _housekeeping(self, sel: selectors.BaseSelector) -> None:
        """Deadlines: handshakes, partial frames, silent agents, lost hosts."""
        mono = time.monotonic()
        rt = self.limits.read_timeout
        for s in list(self.sessions.values()):
            c = s.conn
            if c is None:
                continue  # the hub keeps its sessions' deadlines
            if c.deadline is not None and mono > c.deadline:
                self._close(sel, s, "no TLS handshake and HELLO in time")
            elif c.frame_since is not None and mono - c.frame_since > rt:
                self._close(sel, s, f"a frame left unfinished for {rt:g} s")
            elif s.host is not None and mono - c.last_heard > rt:
                self._close(sel, s, f"silent for {rt:g} s")
        for host, since in list(self.lost_since.items()):
            if mono - since > self.limits.lost_after:
                del self.lost_since[host]
                self._retire_host(host, f"disconnected for {self.limits.lost_after:g} s")

    # -- rounds ------------------------------------------------------------------
    def _registrations(self) -> None:
        while True:
            try:
                reg, reply = self.requests.get_nowait()
            except queue.Empty:
                return
            try:
                reply.put((201, self.register(reg)))
            except CoflowkitError as e:
                reply.put((400, {"error": str(e)}))
            except Exception:
                log.exception("registration of coflow %s failed", getattr(reg, "id", "?"))
                reply.put((500, {"error": "internal error (logged by the master)"}))

    def _gc_timer(self, phase: str, info: dict) -> None:
        """``gc.callbacks`` while the master runs: the cyclic collector's passes
        (any thread's: each holds the interpreter lock) are timed, so a long
        round can be told apart from a long collection."""
        if phase == "start":
            self._gc_started = time.perf_counter()
            return
        dt = time.perf_counter() - self._gc_started
        m = self.metrics
        m["gc_collections"] += 1
        m["gc_full_collections"] += info.get("generation") == 2
        m["gc_seconds_sum"] += dt
        m["gc_seconds_max"] = max(m["gc_seconds_max"], dt)

    def round(self) -> float:
        """Registrations in, one decision, changes out; returns the round's seconds."""
        t = time.perf_counter()
        cpu = time.thread_time()  # this thread's CPU: the rest of a round is waiting
        gc0 = self.metrics["gc_seconds_sum"]  # read after t: a pass holds the GIL
        self._registrations()
        flows, rates, classes = self.live.decide(self.now())
        out = self.enf.round(flows, rates, classes, self.enforce == "rates")
        if self.store is not None:
            self.store.commit()  # what this round learned is on disk before anyone hears of it
        self._push(out)
        dt = time.perf_counter() - t
        m = self.metrics
        m["rounds"] += 1
        m["round_seconds_sum"] += dt
        m["round_seconds_last"] = dt
        m["round_seconds_max"] = max(m["round_seconds_max"], dt)
        gc_dt = m["gc_seconds_sum"] - gc0  # collections that ran inside the round
        cpu = time.thread_time() - cpu
        with self.lock:
            self.round_log.append((m["rounds"], round(time.time() - self.wall0, 3), dt, gc_dt, cpu))
        return dt

    def _push(self, out: list[tuple[int, list[tuple[int, int, float]]]]) -> None:
        """Queues each connected agent's changes. The API shows the round first,
        so it never lags what agents were told; an agent whose queue overflows
        is disconnected, which unmarks its flows."""
        frames = [(self.by_host[host], items) for host, items in out]
        self._publish()
        if self._send(frames):
            self._publish()

    def _heartbeats(self) -> None:
        """An empty DECISIONS to every agent told nothing for 3 Δ (an agent fails
        open after 10 Δ of silence). Sent between rounds, not in them: they carry
        no decision, so a round's changes never wait behind thousands of them.
        Under --io rust the hub sends them itself."""
        if self.hub is not None:
            return
        due = time.monotonic() - 3 * self.interval
        frames = []
        for host, last in self.send_order.items():
            if last > due:
                break  # the rest were sent to more recently
            frames.append((self.by_host[host], []))
        self._send(frames)

    def _send(self, frames: list[tuple[Session, list]]) -> bool:
        """Sends each session its DECISIONS frame; True if some session failed
        (and was closed)."""
        mono = time.monotonic()
        failed: list[tuple[Session, str]] = []
        for s, items in frames:
            if s.conn is None:  # the hub's session: it queues, or says why not
                n = self.hub.send_decisions(s.sid, items)
                if n > 0:
                    self.metrics["slow_agents"] += 1
                    failed.append((s, f"does not keep up: {n} bytes queued for {s.peer} "
                                      f"(limit {self.limits.send_queue})"))  # fmt: skip
                    continue
                if n < 0:
                    continue  # gone: its end is an event on its way
                s.last_sent = mono
                self.metrics["decisions_sent"] += len(items)
                continue
            try:
                s.conn.send(proto.DECISIONS, proto.encode_decisions(items))
            except SendQueueFull as e:
                self.metrics["slow_agents"] += 1
                failed.append((s, f"does not keep up: {e}"))
                continue
            except (OSError, ssl.SSLError) as e:
                failed.append((s, f"send failed: {e}"))
                continue
            s.last_sent = mono
            self.send_order[s.host] = mono
            self.send_order.move_to_end(s.host)
            self.metrics["decisions_sent"] += len(items)
            if items and log.isEnabledFor(logging.DEBUG):
                log.debug("pushed %d decisions to host %d at %.6f", len(items), s.host, time.time())
        for s, why in failed:
            if self._sel is not None or s.conn is None:
                self._close(self._sel, s, why)
        return bool(failed)

    def _coflow_row(self, cid, arrival, finish, width, sent, cls) -> dict:
        size = self.coflow_size.get(cid, self.done_size.get(cid))
        return {
            "id": cid,
            "registered": cid < SINGLE_BASE,
            "arrival_s": arrival,
            "finish_s": None if finish != finish else finish,
            "width": width,
            "bytes_sent": sent,
            "size_bytes": size,
            "progress": None if not size else min(1.0, sent / size),
            "class": cls,
        }

    def _publish(self) -> None:
        """The round as the API shows it. Per-flow rows are built when asked
        for (:class:`FlowRows`), so a round does not pay for them; a policy
        that labels flows (coda) updates the label log here."""
        slots, rates, classes, enforced = self.enf.last()
        # Per coflow: the lowest (most favoured) class among its scheduled flows.
        cls_of: dict[int, int] = {}
        if classes and max(classes) >= 0:
            for slot, cls in zip(slots, classes, strict=True):
                if cls >= 0:
                    cid = self.live.coflow_of(slot)
                    cls_of[cid] = min(cls, cls_of.get(cid, cls))
        # The compacted coflows' rows change only at a compaction: built then.
        key = (id(self.live), self.live.compactions)
        if key != self._compacted_key:
            self._compacted_rows = [
                self._coflow_row(*c, None) for c in self.live.compacted_coflows()
            ]
            self._compacted_key = key
        held = []
        arrival_of: dict[int, float] = {}
        for c in self.live.held_coflows():
            arrival_of[c[0]] = c[1]
            held.append(self._coflow_row(*c, cls_of.get(c[0])))
        coflows = self._compacted_rows + held
        labels = self.live.labels(slots) if slots else None
        flows = FlowRows(self.live, slots, rates, classes, enforced, self.slot_info, labels)
        seen: list[tuple[tuple, int]] = []
        if labels is not None:
            for f in flows.rows():
                if f["label"] is not None:
                    # First sight: the arrival of its coflow (the flow itself
                    # when nothing is registered), as a wall-clock time.
                    first = arrival_of.get(f["coflow"])
                    wall = None if first is None or first != first else self.wall(first)
                    key = (f["src"], f["dst"], f["src_port"], f["dst_port"])
                    seen.append((key, (f["label"], wall)))
        with self.lock:
            self.snapshot = {
                "coflows": coflows,
                "flows": flows,
                "agents": len(self.by_host),
                "agent_hosts": sorted(self.by_host),
                "total_sent": self.live.total_sent,
            }
            log_ = self.label_log
            for key, (label, first) in seen:
                old = log_.get(key)
                log_[key] = (label, first if old is None else old[1])
                log_.move_to_end(key)
            while len(log_) > LABEL_LOG_MAX:
                log_.popitem(last=False)

    # -- the loop ------------------------------------------------------------------
    def run(self, duration: float | None = None) -> None:
        gc.callbacks.append(self._gc_timer)
        try:
            self._run(duration)
        finally:
            gc.callbacks.remove(self._gc_timer)

    def _run(self, duration: float | None) -> None:
        if self.httpd is not None:
            threading.Thread(
                target=self.httpd.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True
            ).start()
        if self.hub is not None:
            self._run_hub(duration)
            return
        end = None if duration is None else time.monotonic() + duration
        sel = selectors.DefaultSelector()
        self._sel = sel
        sel.register(self.server, selectors.EVENT_READ, None)
        next_round = time.monotonic()
        next_house = time.monotonic()
        try:
            while not self.stop.is_set() and (end is None or time.monotonic() < end):
                self._step(sel, next_round)
                next_round, next_house = self._due(sel, next_round, next_house)
        finally:
            for s in list(self.sessions.values()):
                self._close(sel, s, "master stopping", tell=True)
            self.server.close()
            self.reserve.close()
            sel.close()
            if self.httpd is not None:
                self.httpd.shutdown()
                self.httpd.server_close()
            if self.store is not None:
                self.store.close()

    def _due(
        self, sel: selectors.BaseSelector | None, next_round: float, next_house: float
    ) -> tuple[float, float]:
        """Housekeeping, and the round (at once when flows arrived or ended),
        when they are due; returns when each is due next."""
        mono = time.monotonic()
        if mono >= next_house:
            next_house = mono + min(0.5, self.limits.read_timeout / 4)
            self._guard(self._housekeeping, sel)
        if self.dirty or mono >= next_round:
            next_round += self.interval
            if next_round < mono:
                next_round = mono + self.interval
            self.dirty = False
            self._guard(self.round)
            self._guard(self._heartbeats)
        return next_round, next_house

    def _step(self, sel: selectors.BaseSelector, next_round: float) -> None:
        # Sessions with bytes already decrypted inside TLS are served without waiting.
        ready = list(self.tls_ready.values())
        wait = 0.0 if ready else max(0.0, next_round - time.monotonic())
        for key, mask in sel.select(timeout=wait):
            if key.data is None:
                self._guard(self._accept, sel)
            else:
                self._io(sel, key.data, mask)
        for s in ready:
            if s.conn.sock.fileno() >= 0 and s.conn.fileno() in self.sessions:
                self._io(sel, s, selectors.EVENT_READ)

    def _guard(self, fn, *args) -> None:
        """Runs a step of the loop; an unexpected error is logged, never fatal."""
        try:
            fn(*args)
        except Exception:
            self.metrics["round_errors"] += 1
            self.limiter.warn("loop", "master step %s failed", fn.__name__, exc_info=True)

    def open_connections(self) -> int:
        """Agent connections open, HELLO accepted or not."""
        return len(self.sessions) if self.hub is None else self.hub.open_sessions

    def close(self) -> None:
        self.stop.set()
