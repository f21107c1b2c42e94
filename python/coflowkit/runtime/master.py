"""`coflowkit master`: the global view, the policy, and what each agent enforces.

One thread owns everything that changes (the agents' sessions and the
:class:`coflowkit._core.LiveScheduler` running the registry policy); it wakes on
agent frames and every interval Δ for a round: apply reports, decide, push to
each agent only the decisions that changed. The HTTP API runs in other threads and
talks to the round thread through a queue (writes) and a snapshot published after
every round (reads).

Membership: a flow whose (source host, destination host, destination port) was
registered joins that coflow's next free slot; any other flow is a coflow of its
own (``membership=none`` ignores registrations). Identification by clustering
(CODA) runs inside the ``coda`` policy, which sees every flow as its own coflow
and groups them itself.
"""

from __future__ import annotations

import collections
import gc
import json
import logging
import queue
import selectors
import signal
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from coflowkit._core import CoflowkitError, LiveScheduler
from coflowkit.runtime import proto
from coflowkit.runtime.tc import PAUSED_FLOOR

log = logging.getLogger("coflowkit.master")

SINGLE_BASE = 1 << 62  # coflow ids of unregistered flows; registered ids stay below


@dataclass
class Session:
    sock: socket.socket
    peer: str
    chan: proto.Channel
    host: int | None = None
    addrs: list[str] = field(default_factory=list)
    flows: dict[int, int] = field(default_factory=dict)  # fid -> slot
    last_sent: float = 0.0


class Master:
    def __init__(
        self,
        policy: str,
        params: dict[str, str],
        hosts: int,
        link_bytes_per_s: float,
        secret: bytes,
        listen: tuple[str, int] = ("127.0.0.1", 7470),
        http: tuple[str, int] | None = ("127.0.0.1", 7471),
        interval: float = 0.02,
        membership: str = "registry",
        enforce: str = "rates",
        hysteresis: float = 0.02,
    ):
        if interval <= 0:
            raise CoflowkitError(f"interval must be positive, got {interval}")
        if membership not in ("registry", "none"):
            raise CoflowkitError(f"membership must be registry or none, got {membership!r}")
        if enforce not in ("rates", "classes"):
            raise CoflowkitError(f"enforce must be rates or classes, got {enforce!r}")
        self.live = LiveScheduler(policy, params, hosts, link_bytes_per_s)
        self.policy = policy
        self.hosts = hosts
        self.capacity = link_bytes_per_s
        self.secret = secret
        self.interval = interval
        self.membership = membership
        self.enforce = enforce
        self.hysteresis = hysteresis
        self.t0 = time.monotonic()
        self.server = socket.create_server(listen, reuse_port=False)
        self.server.setblocking(False)
        self.address = self.server.getsockname()[:2]
        self.sessions: dict[int, Session] = {}
        self.by_host: dict[int, Session] = {}
        self.ip_host: dict[str, int] = {}
        self.pending: dict[tuple[int, int, int], collections.deque[int]] = {}
        self.slot_owner: dict[int, tuple[int, int]] = {}  # slot -> (host, fid)
        self.host_flows: dict[int, dict[int, int]] = {}  # host -> fid -> slot
        # Flows whose destination no agent has announced yet: held (with their
        # latest byte count) until that agent says hello. host -> fid -> NewFlow
        self.unresolved: dict[int, dict[int, proto.NewFlow]] = {}
        self.slot_info: dict[
            int, tuple[int, int, int, int]
        ] = {}  # slot -> (src, dst, sport, dport)
        self.pushed: dict[int, tuple[int, float]] = {}  # slot -> (kind, value) the agent has
        self.rates: dict[int, tuple[float, int]] = {}
        self.next_single = SINGLE_BASE
        self.requests: queue.Queue = queue.Queue()
        self.lock = threading.Lock()
        self.snapshot: dict = {"coflows": [], "flows": []}
        self.stop = threading.Event()
        self.dirty = False
        self.metrics = {
            "rounds": 0,
            "round_seconds_sum": 0.0,
            "round_seconds_max": 0.0,
            "round_seconds_last": 0.0,
            "rejected_messages": 0,
            "decisions_sent": 0,
            "reports": 0,
            "unresolved_flows": 0,
            "ignored_flows": 0,
        }
        self.httpd = None
        if http is not None:
            self.httpd = ThreadingHTTPServer(http, _handler(self))
            self.httpd.daemon_threads = True
            self.http_address = self.httpd.server_address[:2]

    def now(self) -> float:
        return time.monotonic() - self.t0

    # -- registrations (called from the round thread) ------------------------
    def _host_of(self, v) -> int:
        if isinstance(v, bool):
            raise CoflowkitError(f"bad host {v!r}")
        if isinstance(v, int):
            return v
        if isinstance(v, str) and v in self.ip_host:
            return self.ip_host[v]
        if isinstance(v, str) and v.isdigit():
            return int(v)
        raise CoflowkitError(
            f"unknown host {v!r} (a host index, or the address of a connected agent)"
        )

    def register(self, body: dict) -> dict:
        if not isinstance(body, dict) or "id" not in body or "flows" not in body:
            raise CoflowkitError(
                'a registration is {"id": int, "flows": [{"src", "dst", "dst_port", "size"?}]}'
            )
        cid = body["id"]
        if not isinstance(cid, int) or not 0 <= cid < SINGLE_BASE:
            raise CoflowkitError(f"id must be an integer in [0, 2^62), got {cid!r}")
        if not isinstance(body["flows"], list):
            raise CoflowkitError("flows must be a list")
        flows = []
        for i, f in enumerate(body["flows"]):
            if not isinstance(f, dict):
                raise CoflowkitError(f"flows[{i}] must be an object")
            try:
                src, dst = self._host_of(f["src"]), self._host_of(f["dst"])
                port = f["dst_port"]
            except KeyError as e:
                raise CoflowkitError(f"flows[{i}]: missing {e.args[0]}") from None
            except CoflowkitError as e:
                raise CoflowkitError(f"flows[{i}]: {e}") from None
            if not isinstance(port, int) or not 0 < port < 65536:
                raise CoflowkitError(f"flows[{i}].dst_port must be a TCP port, got {port!r}")
            size = f.get("size")
            if size is not None and not isinstance(size, (int, float)):
                raise CoflowkitError(f"flows[{i}].size must be a number of bytes, got {size!r}")
            flows.append((src, dst, port, None if size is None else float(size)))
        first = self.live.register(cid, flows, self.now())
        for k, (src, dst, port, _) in enumerate(flows):
            self.pending.setdefault((src, dst, port), collections.deque()).append(first + k)
            self.slot_info[first + k] = (src, dst, 0, port)
        return {"id": cid, "flows": len(flows), "first_slot": first}

    # -- agent frames --------------------------------------------------------
    def _accept(self, sel: selectors.BaseSelector) -> None:
        try:
            sock, addr = self.server.accept()
        except BlockingIOError:
            return
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        chan = proto.Channel(self.secret)
        s = Session(sock, f"{addr[0]}:{addr[1]}", chan)
        try:
            sock.sendall(chan.frame(proto.CHALLENGE, proto.Channel.new_nonce()))
        except OSError:
            sock.close()
            return
        sock.setblocking(False)
        self.sessions[sock.fileno()] = s
        sel.register(sock, selectors.EVENT_READ, s)

    def _close(self, sel: selectors.BaseSelector, s: Session, why: str) -> None:
        log.warning("agent %s (host %s) disconnected: %s", s.peer, s.host, why)
        try:
            sel.unregister(s.sock)
        except (KeyError, ValueError):
            pass
        self.sessions.pop(s.sock.fileno(), None)
        if s.host is not None and self.by_host.get(s.host) is s:
            del self.by_host[s.host]
        # Its limits are gone (the agent fails open); resend after a reconnect.
        for slot in s.flows.values():
            self.pushed.pop(slot, None)
        s.sock.close()

    def _frames(self, sel: selectors.BaseSelector, s: Session) -> None:
        try:
            data = s.sock.recv(proto.RECV_BYTES)
            if not data:
                self._close(sel, s, "connection closed")
                return
            for mtype, payload in s.chan.feed(data):
                if mtype == proto.HELLO and s.host is None:
                    self._hello(s, proto.decode_hello(payload))
                elif mtype == proto.REPORT and s.host is not None:
                    self._report(s, proto.decode_report(payload))
                else:
                    raise proto.ProtocolError(f"unexpected {proto.TYPE_NAMES[mtype]}")
        except proto.ProtocolError as e:
            self.metrics["rejected_messages"] += 1
            log.warning("rejected a message from %s: %s", s.peer, e)
            try:
                s.sock.setblocking(True)
                s.sock.sendall(s.chan.frame(proto.ERROR, str(e).encode()))
            except (OSError, proto.ProtocolError):
                pass
            self._close(sel, s, str(e))
        except CoflowkitError as e:
            self.metrics["rejected_messages"] += 1
            log.warning("rejected a report from %s: %s", s.peer, e)
            self._close(sel, s, str(e))
        except OSError as e:
            self._close(sel, s, str(e))

    def _hello(self, s: Session, h: proto.Hello) -> None:
        if not 0 <= h.host < self.hosts:
            raise proto.ProtocolError(f"host {h.host} is outside this master's {self.hosts} hosts")
        old = self.by_host.get(h.host)
        if old is not None and old is not s:
            log.warning("host %d reconnected from %s; dropping its old session", h.host, s.peer)
        # A host's flows outlive its sessions: after a reconnect the agent reports
        # them again under the same numbers and they keep their slots.
        s.flows = self.host_flows.setdefault(h.host, {})
        for slot in s.flows.values():
            self.pushed.pop(slot, None)
        s.host, s.addrs = h.host, h.addrs
        self.by_host[h.host] = s
        for a in h.addrs:
            self.ip_host[a] = h.host
        log.info("agent %s is host %d (%s)", s.peer, h.host, ", ".join(h.addrs))
        # Flows towards the addresses just announced are scheduled from now on.
        now = self.now()
        for src, held in self.unresolved.items():
            for fid in [fid for fid, f in held.items() if f.dst in self.ip_host]:
                if self._admit(src, held.pop(fid), now):
                    self.dirty = True
        self.metrics["unresolved_flows"] = sum(map(len, self.unresolved.values()))

    def _admit(self, src: int, f: proto.NewFlow, now: float) -> bool:
        """Give a reported flow a slot; False if its destination is not (yet) a host."""
        dst = self.ip_host.get(f.dst)
        if dst is None:
            self.unresolved.setdefault(src, {})[f.fid] = f
            return False
        if dst == src:
            self.metrics["ignored_flows"] += 1
            return False
        flows = self.host_flows.setdefault(src, {})
        q = self.pending.get((src, dst, f.dport)) if self.membership == "registry" else None
        if q:
            slot = q.popleft()
            self.live.start(slot, f.sport, now)
        else:
            slot = self.live.add_single(self.next_single, src, dst, f.sport, f.dport, now)
            self.next_single += 1
        flows[f.fid] = slot
        self.slot_owner[slot] = (src, f.fid)
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
        held = self.unresolved.setdefault(s.host, {})
        for f in r.new:
            if f.fid in s.flows:
                live.update([s.flows[f.fid]], [float(f.sent)])
            else:
                held.pop(f.fid, None)
                self._admit(s.host, f, now)
        if r.updated:
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
            held.pop(fid, None)
            slot = s.flows.pop(fid, None)
            if slot is None:
                continue
            live.update([slot], [float(b)])
            live.finish(slot, now)
            self.pushed.pop(slot, None)
            self.rates.pop(slot, None)
            self.slot_owner.pop(slot, None)
        self.metrics["unresolved_flows"] = sum(map(len, self.unresolved.values()))

    # -- rounds ----------------------------------------------------------------
    def round(self) -> float:
        """Registrations in, one decision, changes out; returns the round's seconds."""
        t = time.perf_counter()
        while True:
            try:
                body, reply = self.requests.get_nowait()
            except queue.Empty:
                break
            try:
                reply.put(("ok", self.register(body)))
            except CoflowkitError as e:
                reply.put(("error", str(e)))
        flows, rates, classes = self.live.decide(self.now())
        if self.enforce == "rates":
            rates = self._room_for_trickles(flows, rates)
        out: dict[int, list[tuple[int, int, float]]] = collections.defaultdict(list)
        self.rates = {}
        for slot, rate, cls in zip(flows, rates, classes):
            self.rates[slot] = (rate, cls)
            owner = self.slot_owner.get(slot)
            if owner is None:
                continue
            if self.enforce == "classes" and cls >= 0:
                want = (proto.CLASS, float(min(cls, 7)))
            else:
                want = (proto.RATE, rate)
            have = self.pushed.get(slot)
            if have is not None and have[0] == want[0]:
                if want[0] == proto.CLASS and have[1] == want[1]:
                    continue
                if want[0] == proto.RATE and abs(have[1] - want[1]) <= self.hysteresis * max(
                    have[1], want[1]
                ):
                    continue
            self.pushed[slot] = want
            out[owner[0]].append((owner[1], want[0], want[1]))
        # The API shows this round before any agent hears of it.
        self._publish()
        mono = time.monotonic()
        for host, s in list(self.by_host.items()):
            items = out.get(host, [])
            if not items and mono - s.last_sent < 3 * self.interval:
                continue
            try:
                s.sock.setblocking(True)
                s.sock.sendall(s.chan.frame(proto.DECISIONS, proto.encode_decisions(items)))
                s.sock.setblocking(False)
                s.last_sent = mono
                self.metrics["decisions_sent"] += len(items)
                if items and log.isEnabledFor(logging.DEBUG):
                    log.debug(
                        "pushed %d decisions to host %d at %.6f", len(items), host, time.time()
                    )
            except OSError as e:
                log.warning("sending to host %d failed: %s", host, e)
        dt = time.perf_counter() - t
        m = self.metrics
        m["rounds"] += 1
        m["round_seconds_sum"] += dt
        m["round_seconds_last"] = dt
        m["round_seconds_max"] = max(m["round_seconds_max"], dt)
        return dt

    def _room_for_trickles(self, flows: list[int], rates: list[float]) -> list[float]:
        """Rates scaled so that each link also carries the trickles of its
        paused and slow flows.

        An agent sends a flow decided below ``PAUSED_FLOOR`` of the link at that
        floor (tc.py), bandwidth the policy did not give out. On each link
        (a host's uplink, a host's downlink) the other flows' rates are scaled
        by ``(C - trickles) / their sum`` when they would not fit, and a flow
        takes the smaller factor of its two links. Without this, a priority
        policy's paused flows took up to 0.5 % of the link each from the flows
        it favoured."""
        floor = PAUSED_FLOOR * self.capacity
        trickle: collections.Counter = collections.Counter()
        big: collections.Counter = collections.Counter()
        links = []
        for slot, rate in zip(flows, rates):
            src, dst = self.slot_info.get(slot, (-1, -1))[:2]
            up, down = (0, src), (1, dst)
            links.append((up, down))
            if rate < floor:
                trickle[up] += floor
                trickle[down] += floor
            else:
                big[up] += rate
                big[down] += rate
        if not trickle:
            return rates
        scale = {
            link: max(0.0, self.capacity - trickle[link]) / total
            for link, total in big.items()
            if total + trickle[link] > self.capacity * (1 + 1e-9)
        }
        if not scale:
            return rates
        return [
            rate if rate < floor else rate * min(scale.get(up, 1.0), scale.get(down, 1.0), 1.0)
            for rate, (up, down) in zip(rates, links)
        ]

    def _publish(self) -> None:
        coflows = []
        for cid, arrival, finish, width, sent in self.live.coflows():
            coflows.append(
                {
                    "id": cid,
                    "registered": cid < SINGLE_BASE,
                    "arrival_s": arrival,
                    "finish_s": None if finish != finish else finish,
                    "width": width,
                    "bytes_sent": sent,
                }
            )
        flows = []
        for slot, (rate, cls) in self.rates.items():
            src, dst, sport, dport = self.slot_info.get(slot, (0, 0, 0, 0))
            flows.append(
                {
                    "slot": slot,
                    "coflow": self.live.coflow_of(slot),
                    "src": src,
                    "dst": dst,
                    "src_port": sport,
                    "dst_port": dport,
                    "rate_bytes_per_s": rate,
                    "class": None if cls < 0 else cls,
                    "enforced": self.pushed.get(slot, (None,))[0] is not None,
                }
            )
        with self.lock:
            self.snapshot = {"coflows": coflows, "flows": flows, "agents": len(self.by_host)}

    def run(self, duration: float | None = None) -> None:
        end = None if duration is None else time.monotonic() + duration
        sel = selectors.DefaultSelector()
        sel.register(self.server, selectors.EVENT_READ, None)
        if self.httpd is not None:
            threading.Thread(
                target=self.httpd.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True
            ).start()
        next_round = time.monotonic()
        try:
            while not self.stop.is_set() and (end is None or time.monotonic() < end):
                wait = max(0.0, next_round - time.monotonic())
                for key, _ in sel.select(timeout=wait):
                    if key.data is None:
                        self._accept(sel)
                    else:
                        self._frames(sel, key.data)
                if self.dirty or time.monotonic() >= next_round:
                    next_round += self.interval
                    if next_round < time.monotonic():
                        next_round = time.monotonic() + self.interval
                    self.dirty = False
                    self.round()
        finally:
            for s in list(self.sessions.values()):
                self._close(sel, s, "master stopping")
            self.server.close()
            sel.close()
            if self.httpd is not None:
                self.httpd.shutdown()
                self.httpd.server_close()

    def close(self) -> None:
        self.stop.set()

    # -- HTTP side -----------------------------------------------------------
    def submit(self, body: dict, timeout: float = 5.0) -> tuple[str, object]:
        reply: queue.Queue = queue.Queue()
        self.requests.put((body, reply))
        try:
            return reply.get(timeout=timeout)
        except queue.Empty:
            return ("error", "the master did not run a round in time")

    def prometheus(self) -> str:
        m = self.metrics
        with self.lock:
            snap = self.snapshot
        active = sum(1 for c in snap["coflows"] if c["finish_s"] is None and c["bytes_sent"] > 0)
        sent = sum(c["bytes_sent"] for c in snap["coflows"])
        lines = [
            "# HELP coflowkit_round_seconds Coordination round time (reports applied, decision, changes sent).",
            "# TYPE coflowkit_round_seconds summary",
            f"coflowkit_round_seconds_sum {m['round_seconds_sum']:.6f}",
            f"coflowkit_round_seconds_count {m['rounds']}",
            "# HELP coflowkit_round_seconds_max Longest coordination round so far.",
            "# TYPE coflowkit_round_seconds_max gauge",
            f"coflowkit_round_seconds_max {m['round_seconds_max']:.6f}",
            "# HELP coflowkit_agents_connected Agents with an authenticated session.",
            "# TYPE coflowkit_agents_connected gauge",
            f"coflowkit_agents_connected {snap.get('agents', 0)}",
            "# HELP coflowkit_coflows_active Coflows with bytes sent and not finished.",
            "# TYPE coflowkit_coflows_active gauge",
            f"coflowkit_coflows_active {active}",
            "# HELP coflowkit_bytes_scheduled_total Bytes acknowledged on scheduled flows.",
            "# TYPE coflowkit_bytes_scheduled_total counter",
            f"coflowkit_bytes_scheduled_total {sent:.0f}",
            "# HELP coflowkit_rejected_messages_total Agent messages rejected (malformed or unauthenticated).",
            "# TYPE coflowkit_rejected_messages_total counter",
            f"coflowkit_rejected_messages_total {m['rejected_messages']}",
            "# HELP coflowkit_decisions_sent_total Decision changes pushed to agents.",
            "# TYPE coflowkit_decisions_sent_total counter",
            f"coflowkit_decisions_sent_total {m['decisions_sent']}",
            "# HELP coflowkit_unresolved_flows Reported flows held until their destination's agent connects.",
            "# TYPE coflowkit_unresolved_flows gauge",
            f"coflowkit_unresolved_flows {m['unresolved_flows']}",
        ]
        return "\n".join(lines) + "\n"


def _handler(master: Master):
    class Handler(BaseHTTPRequestHandler):
        server_version = "coflowkit-master"

        def log_message(self, fmt, *args):  # route to logging, not stderr
            log.debug("http %s " + fmt, self.client_address[0], *args)

        def _send(self, code: int, body, ctype: str = "application/json") -> None:
            data = (json.dumps(body) if ctype == "application/json" else body).encode()
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            path = self.path.split("?")[0]
            with master.lock:
                snap = master.snapshot
            if path == "/api/coflows":
                self._send(200, snap["coflows"])
            elif path == "/api/flows":
                self._send(200, snap["flows"])
            elif path == "/api/health":
                self._send(
                    200,
                    {
                        "policy": master.policy,
                        "agents": snap.get("agents", 0),
                        "rounds": master.metrics["rounds"],
                    },
                )
            elif path == "/metrics":
                self._send(200, master.prometheus(), "text/plain; version=0.0.4")
            else:
                self._send(404, {"error": f"no such endpoint {path}"})

        def do_POST(self):
            path = self.path.split("?")[0]
            if path != "/api/coflows":
                self._send(404, {"error": f"no such endpoint {path}"})
                return
            try:
                n = int(self.headers.get("Content-Length", "0"))
                if n > 16 << 20:
                    raise ValueError("body too large")
                body = json.loads(self.rfile.read(n) or b"null")
            except (ValueError, json.JSONDecodeError) as e:
                self._send(400, {"error": f"bad JSON: {e}"})
                return
            status, result = master.submit(body)
            if status == "ok":
                self._send(201, result)
            else:
                self._send(400, {"error": result})

    return Handler


def parse_addr(text: str, what: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":")
    if not host or not port.isdigit() or not 0 <= int(port) < 65536:
        raise CoflowkitError(f"{what} must be HOST:PORT, got {text!r}")
    return host, int(port)


def main(args) -> int:
    """Entry point of ``coflowkit master`` (arguments parsed by the CLI)."""
    from coflowkit.cli import parse_kv

    m = Master(
        args.policy,
        parse_kv(args.param),
        args.hosts,
        args.gbps * 1e9 / 8 * args.goodput,
        proto.read_secret(args.secret_file),
        listen=parse_addr(args.listen, "--listen"),
        http=None if args.http == "off" else parse_addr(args.http, "--http"),
        interval=args.interval_ms / 1000,
        membership=args.membership,
        enforce=args.enforce,
    )

    def stop(*_):
        m.close()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    log.info("master: policy %s, %d hosts, agents on %s:%d", args.policy, args.hosts, *m.address)
    # What exists now (modules, the policy, the server) lives as long as the
    # process: out of the cyclic collector's sight, its full passes stay short.
    gc.freeze()
    m.run()
    return 0
