"""Session shards: the master's agent sessions (and the emulator's agents) held
by several processes, for more sessions than one process may hold descriptors.

One process holds one descriptor per TCP session, and ``ulimit -Hn`` bounds a
process's descriptors (20,000 on the machine the scale results come from, with
no ``CAP_SYS_RESOURCE`` to raise it). ``coflowkit master --io rust --hub-shards
S`` runs S session hubs (``_core.AgentHub``, crates/coflowkit-runtime/src/hub.rs)
in S child processes bound to the same port with ``SO_REUSEPORT``: the kernel
spreads new connections over them, each hub does TLS, framing, deadlines and
heartbeats for its sessions, and forwards its events to the master over a pipe.
:class:`ShardedHub` is the master's side: the interface of ``AgentHub`` (poll,
send_decisions, close, stop, metrics, open_sessions, address), so the master's
loop (hubloop.py) does not know the difference. Session ids carry their shard
in the bits above :data:`SHARD_SHIFT`.

* Sends and closes are buffered per shard and go out in one message at the next
  ``poll`` (the loop polls right after a round). A session whose send queue is
  full is closed by its shard ("does not keep up"), which the master learns as
  that session's ``closed`` event.
* ``--max-agents`` holds for the whole master: a HELLO beyond it is refused with
  its session closed; each shard also accepts at most its share plus a margin
  (:func:`shard_cap`), so no shard holds more than its descriptors allow.
* A shard that dies (its pipe ends) ends its sessions (one ``closed`` event
  each, as a dead connection would) and is started again on the same port;
  its agents reconnect as after any lost connection. The master goes on.

:class:`SwarmGroup` is the emulator's side (``coflowkit testbed emulate``): the
interface of ``_core.AgentSwarm`` over S child processes, host ``h`` in shard
``h % S``. A coflow ends when every shard given some of its flows says so.

Each shard is a fresh interpreter (``python -c``, not multiprocessing's spawn, so
the caller's main module is never imported again) on one end of a socket pair
inherited from its parent (``multiprocessing.connection``, pickled messages):
nothing outside this process and its own children reads or writes them.
"""

from __future__ import annotations

import collections
import logging
import math
import multiprocessing
import multiprocessing.connection
import os
import resource
import signal
import subprocess
import sys
import threading
import time

from coflowkit._core import CoflowkitError
from coflowkit.runtime.resources import descriptor_room, ensure_descriptors

log = logging.getLogger("coflowkit.master")

SHARD_SHIFT = 48
LOCAL = (1 << SHARD_SHIFT) - 1
#: Descriptors a shard keeps beyond its sessions (its pipe, Python's own, logs).
SHARD_RESERVE = 256
#: How long a shard may take to start (spawn, import, bind).
START_S = 60.0
#: A shard polls its hub this long between looks at the master's messages.
TICK_S = 0.002
METRICS_EVERY_S = 0.1


def raise_nofile(want: int) -> int:
    """Raises this process's soft descriptor limit toward ``want`` (up to the
    hard limit, or past it where the process may); returns the soft limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft >= want:
        return soft
    new = want if hard == resource.RLIM_INFINITY else min(want, hard)
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, max(want, hard)))
        return want
    except (ValueError, OSError):  # no CAP_SYS_RESOURCE (a container)
        resource.setrlimit(resource.RLIMIT_NOFILE, (new, hard))
        return new


def shards_for(sessions: int, limit: int | None = None) -> int:
    """The fewest processes that hold ``sessions`` sessions within ``limit``
    descriptors each (default: this machine's hard limit), margins included."""
    per = (limit or descriptor_room()) - SHARD_RESERVE
    if per < 64:
        raise CoflowkitError(f"a descriptor limit of {limit} leaves no room for sessions")
    s = 1
    while shard_cap(sessions, s) > per:
        s += 1
    return s


def shard_cap(sessions: int, shards: int) -> int:
    """Sessions one of ``shards`` shards accepts: its even share, 10% more and
    64 (the kernel spreads connections by a hash, not evenly)."""
    if shards <= 1:
        return sessions
    return min(sessions, math.ceil(sessions * 1.1 / shards) + 64)


def _child_env() -> dict:
    """The children import this very coflowkit (installed or a source tree)."""
    env = dict(os.environ)
    pkg = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = pkg + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _start_child(target: str, args: tuple, what: str):
    """Starts ``TARGETS[target](conn, *args)`` in a fresh interpreter (no import
    of the caller's main module, unlike multiprocessing's spawn); returns
    (process, connection, the child's answer after "ready")."""
    ours, theirs = multiprocessing.Pipe()
    fd = theirs.fileno()
    code = "import sys; from coflowkit.runtime.shards import child; child(int(sys.argv[1]))"
    proc = subprocess.Popen([sys.executable, "-c", code, str(fd)], pass_fds=(fd,),
                            env=_child_env(), stdin=subprocess.DEVNULL)  # fmt: skip
    theirs.close()
    ours.send((target, args))
    if not ours.poll(START_S):
        proc.kill()
        proc.wait()
        raise CoflowkitError(f"{what} did not start in {START_S:.0f} s")
    try:
        msg = ours.recv()
    except EOFError:
        proc.wait(5)
        raise CoflowkitError(f"{what} ended while starting (exit code {proc.returncode})") from None
    if msg[0] != "ready":
        proc.wait(5)
        raise CoflowkitError(f"{what}: {msg[1]}")
    return proc, ours, msg[1]


def child(fd: int) -> None:
    """A shard process's entry: its task comes first on the pipe from its parent."""
    # The parent stops its shards (or its end of the pipe closes when it dies): a
    # signal to the whole process group must not end them before the parent
    # has told their agents it is stopping.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    conn = multiprocessing.connection.Connection(fd)
    target, args = conn.recv()
    {"hub": _hub_shard, "swarm": _swarm_shard}[target](conn, *args)


# --- the master's side -------------------------------------------------------


def _hub_shard(conn, index: int, kw: dict) -> None:
    """A shard process: one hub on the shared port, its events to the master,
    the master's sends and closes to its sessions, until told to stop or the
    master is gone."""
    from coflowkit import _core

    try:
        ensure_descriptors(kw["max_agents"] + SHARD_RESERVE,
                           f"session shard {index} ({kw['max_agents']} sessions; or more "
                           "--hub-shards)")  # fmt: skip
        hub = _core.AgentHub(**kw, reuse_port=True)
    except Exception as e:  # noqa: BLE001 - reported to the master, which refuses to start
        conn.send(("error", str(e)))
        return
    conn.send(("ready", hub.address[1]))
    _serve_hub(conn, hub, kw["send_queue"])


def _serve_hub(conn, hub, send_queue: int) -> None:
    # The master's messages are read by their own thread, so the two processes
    # never wait on each other's pipe at once: this loop may block sending
    # events to a master busy in a round, while the master's sends still land.
    inbox: collections.deque = collections.deque()

    def read() -> None:
        try:
            while True:
                inbox.append(conn.recv())
        except (EOFError, OSError):
            inbox.append(None)

    threading.Thread(target=read, daemon=True, name="from-master").start()
    next_metrics = 0.0
    try:
        while True:
            events = hub.poll(TICK_S, 8192)
            if events:
                conn.send(("events", events))
            now = time.monotonic()
            if now >= next_metrics:
                conn.send(("metrics", dict(hub.metrics()), hub.open_sessions))
                next_metrics = now + METRICS_EVERY_S
            while inbox:
                msg = inbox.popleft()
                if msg is None:
                    raise EOFError
                if msg[0] == "stop":
                    hub.stop(msg[1], msg[2])
                    conn.send(("stopped",))
                    return
                for op in msg[1]:
                    if op[0] == "send":
                        n = hub.send_decisions(op[1], op[2])
                        if n > 0:
                            hub.close(op[1], f"does not keep up: {n} bytes queued "
                                             f"(limit {send_queue})", True)  # fmt: skip
                    else:
                        hub.close(op[1], op[2], op[3])
    except (EOFError, OSError):
        hub.stop("master gone", 1.0)  # the master died: its agents reconnect elsewhere


class ShardedHub:
    """``AgentHub``'s interface over ``shards`` child processes (module docs)."""

    def __init__(
        self, shards: int, host: str, port: int, tls_dir: str, hosts: int, max_agents: int,
        handshake_timeout: float, read_timeout: float, send_queue: int, heartbeat: float,
    ):  # fmt: skip
        if shards < 2:
            raise CoflowkitError(f"hub shards: at least 2, got {shards}")
        self.shards = shards
        self.max_agents = max_agents
        self.kw = dict(host=host, port=port, tls_dir=tls_dir, hosts=hosts,
                       max_agents=shard_cap(max_agents, shards),
                       handshake_timeout=handshake_timeout, read_timeout=read_timeout,
                       send_queue=send_queue, heartbeat=heartbeat)  # fmt: skip
        self.conns: list = [None] * shards
        self.procs: list = [None] * shards
        self.ops: list[list] = [[] for _ in range(shards)]
        self.peers: list[dict[int, str]] = [{} for _ in range(shards)]  # local sid -> peer
        self.shard_metrics: list[dict] = [{} for _ in range(shards)]
        self.opened = [0] * shards
        self.queue: collections.deque = collections.deque()
        self.refused_over_cap = 0
        self.restarts = 0
        self.lock = threading.Lock()  # conns and procs, against the restarter
        self.restarting: set[int] = set()
        self.stopping = False
        try:
            for i in range(shards):
                self._start(i)
                if i == 0:
                    self.kw["port"] = self.port  # the first bound port 0 to a real one
        except BaseException:
            self.stop("master could not start", 0.5)
            raise
        self.address = (host, self.port)

    def _start(self, i: int) -> None:
        proc, conn, port = _start_child("hub", (i, dict(self.kw)), f"session shard {i}")
        with self.lock:
            self.procs[i], self.conns[i] = proc, conn
        self.port = port

    # -- events in --

    def poll(self, timeout: float, max: int = 4096) -> list[tuple]:  # noqa: A002 - AgentHub's name
        self._flush()
        if not self.queue:
            live = [c for c in self.conns if c is not None]
            ready = multiprocessing.connection.wait(live, timeout=max_wait(timeout)) if live else []
            if not live:
                time.sleep(max_wait(timeout))
            for c in ready:
                self._drain(self.conns.index(c))
        out = []
        while self.queue and len(out) < max:
            out.append(self.queue.popleft())
        return out

    def _drain(self, i: int) -> None:
        c = self.conns[i]
        try:
            while c.poll(0):
                msg = c.recv()
                if msg[0] == "events":
                    self._events(i, msg[1])
                elif msg[0] == "metrics":
                    self.shard_metrics[i], self.opened[i] = msg[1], msg[2]
        except (EOFError, OSError):
            self._lost(i, "its process ended")

    def _events(self, i: int, events: list[tuple]) -> None:
        tag = i << SHARD_SHIFT
        peers = self.peers[i]
        for ev in events:
            kind = ev[0]
            if kind == "updates":
                self.queue.append(("updates", [tag | s for s in ev[1]], ev[2], ev[3]))
                continue
            sid = ev[1]
            if kind == "hello":
                if sum(len(p) for p in self.peers) >= self.max_agents:
                    self.refused_over_cap += 1
                    self.ops[i].append(("close", sid, "too many agents (--max-agents)", True))
                    continue
                peers[sid] = ev[2]
            elif kind == "closed":
                if peers.pop(sid, None) is None and not ev[4]:
                    continue  # refused before its HELLO reached the master
            self.queue.append((kind, tag | sid, *ev[2:]))

    def _lost(self, i: int, why: str) -> None:
        """Shard ``i`` is gone: its sessions end; it is started again."""
        with self.lock:
            conn, self.conns[i] = self.conns[i], None
        if conn is None:
            return
        conn.close()
        proc = self.procs[i]
        if proc is not None and proc.poll() is None:  # alive with its pipe gone: end it
            proc.kill()
        if proc is not None:
            proc.wait(5)  # reaped, not left a zombie
        log.error("session shard %d: %s; its %d sessions end%s", i, why, len(self.peers[i]),
                  "" if self.stopping else ", restarting it")  # fmt: skip
        tag = i << SHARD_SHIFT
        for sid, peer in self.peers[i].items():
            self.queue.append(("closed", tag | sid, peer, f"session shard {i} stopped", False))
        self.peers[i].clear()
        self.ops[i].clear()
        self.opened[i] = 0
        if i not in self.restarting and not self.stopping:
            self.restarting.add(i)
            threading.Thread(target=self._restart, args=(i,), daemon=True).start()

    def _restart(self, i: int) -> None:
        delay = 0.5
        while not self.stopping:
            try:
                self._start(i)
                self.restarts += 1
                break
            except CoflowkitError as e:
                log.error("session shard %d: restart failed: %s", i, e)
                time.sleep(delay)
                delay = min(2 * delay, 30.0)
        self.restarting.discard(i)

    # -- sends out --

    def send_decisions(self, sid: int, items: list) -> int:
        i = sid >> SHARD_SHIFT
        if not 0 <= i < self.shards or self.conns[i] is None:
            return -1
        self.ops[i].append(("send", sid & LOCAL, items))
        return 0

    def close(self, sid: int, why: str, tell: bool) -> None:
        i = sid >> SHARD_SHIFT
        if 0 <= i < self.shards and self.conns[i] is not None:
            self.ops[i].append(("close", sid & LOCAL, why, tell))

    def _flush(self) -> None:
        for i, ops in enumerate(self.ops):
            if ops and self.conns[i] is not None:
                try:
                    self.conns[i].send(("ops", ops))
                except OSError:
                    self._lost(i, "its pipe broke")
            self.ops[i] = []

    # -- state --

    @property
    def open_sessions(self) -> int:
        return sum(self.opened)

    def metrics(self) -> dict:
        out: dict = collections.Counter()
        for m in self.shard_metrics:
            out.update(m)
        out = dict(out)
        out["events_pending"] = out.get("events_pending", 0) + len(self.queue)
        out["event_items_pending"] = out.get("event_items_pending", 0) + len(self.queue)
        out["refused_connections"] = out.get("refused_connections", 0) + self.refused_over_cap
        out["shard_restarts"] = self.restarts
        return out

    def pids(self) -> list[int]:
        return [p.pid for p in self.procs if p is not None]

    def stop(self, why: str = "master stopping", grace: float = 1.0) -> None:
        self.stopping = True
        self._flush()
        with self.lock:
            conns = list(enumerate(self.conns))
            self.conns = [None] * self.shards
        for _, c in conns:
            if c is not None:
                try:
                    c.send(("stop", why, grace))
                except OSError:
                    pass
        end = time.monotonic() + grace + 2.0
        for i, c in conns:
            p = self.procs[i]
            if p is None:
                continue
            try:
                p.wait(max(0.0, end - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
            if c is not None:
                c.close()


def max_wait(timeout: float) -> float:
    return min(max(0.0, timeout), 3600.0)


# --- the emulator's side -----------------------------------------------------


def _swarm_shard(conn, index: int, kw: dict) -> None:
    """A process of emulated agents: requests from the driver, one answer each."""
    from coflowkit import _core

    try:
        ensure_descriptors(len(kw["hosts"]) + SHARD_RESERVE,
                           f"emulator shard {index} ({len(kw['hosts'])} agents)")  # fmt: skip
        swarm = _core.AgentSwarm(**kw)
    except Exception as e:  # noqa: BLE001 - reported to the driver
        conn.send(("error", str(e)))
        return
    conn.send(("ready", None))
    try:
        while True:
            op, *args = conn.recv()
            try:
                if op == "start":
                    for host, items in args[0]:
                        swarm.start_flows(host, items)
                    res = None
                elif op == "stop":
                    swarm.stop()
                    conn.send(("ok", None))
                    return
                else:
                    res = getattr(swarm, op)(*args)
                    res = dict(res) if op == "stats" else res
                conn.send(("ok", res))
            except CoflowkitError as e:
                conn.send(("error", str(e)))
    except (EOFError, OSError):
        swarm.stop()


class SwarmGroup:
    """``_core.AgentSwarm``'s interface over ``shards`` child processes."""

    def __init__(self, shards: int, master_host: str, master_port: int, tls_dir: str,
                 hosts: list[int], addrs: list[str], interval_s: float, workers: int = 1):  # fmt: skip
        if shards < 2:
            raise CoflowkitError(f"emulator shards: at least 2, got {shards}")
        if len(hosts) != len(addrs):
            raise CoflowkitError("swarm: one address per host")
        self.shards = shards
        self.of = {h: k % shards for k, h in enumerate(hosts)}
        self.procs, self.conns = [], []
        self.buf: list[list] = [[] for _ in range(shards)]
        self.parts: dict[int, set[int]] = {}  # coflow -> shards given some of its flows
        self.done: dict[int, set[int]] = {}  # coflow -> shards that saw all theirs end
        try:
            for i in range(shards):
                kw = dict(master_host=master_host, master_port=master_port, tls_dir=tls_dir,
                          hosts=hosts[i::shards], addrs=addrs[i::shards],
                          interval_s=interval_s, workers=workers)  # fmt: skip
                p, c, _ = _start_child("swarm", (i, kw), f"emulator shard {i}")
                self.procs.append(p)
                self.conns.append(c)
        except BaseException:
            self.stop()
            raise

    def _ask(self, i: int, *msg):
        self.conns[i].send(msg)
        try:
            status, res = self.conns[i].recv()
        except EOFError:
            raise CoflowkitError(f"emulator shard {i} ended") from None
        if status == "error":
            raise CoflowkitError(f"emulator shard {i}: {res}")
        return res

    def _flush(self) -> None:
        for i, b in enumerate(self.buf):
            if b:
                self.buf[i] = []
                self._ask(i, "start", b)

    def start_flows(self, host: int, flows: list) -> None:
        i = self.of.get(host)
        if i is None:
            raise CoflowkitError(f"swarm: host {host} is not emulated here")
        self.buf[i].append((host, flows))
        for f in flows:
            self.parts.setdefault(f[6], set()).add(i)

    def finished(self) -> list[int]:
        self._flush()
        out = []
        for i in range(self.shards):
            for cid in self._ask(i, "finished"):
                got = self.done.setdefault(cid, set())
                got.add(i)
                if got >= self.parts.get(cid, set()):
                    out.append(cid)
                    self.done.pop(cid, None)
                    self.parts.pop(cid, None)
        return out

    def stats(self) -> dict:
        self._flush()
        total: dict = {}
        for i in range(self.shards):
            for k, v in self._ask(i, "stats").items():
                if k == "first_error":
                    total[k] = total.get(k) or v
                else:
                    total[k] = total.get(k, 0) + v
        return total

    def churn(self, hosts: list[int], away_s: float) -> None:
        by: dict[int, list[int]] = {}
        for h in hosts:
            by.setdefault(self.of[h], []).append(h)
        for i, hs in by.items():
            self._ask(i, "churn", hs, away_s)

    def pause(self, paused: bool) -> None:
        self._flush()
        for i in range(self.shards):
            self._ask(i, "pause", paused)

    def stop(self) -> None:
        for i, c in enumerate(self.conns):
            try:
                self._ask(i, "stop")
            except (CoflowkitError, OSError):
                pass
            c.close()
        for p in self.procs:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        self.conns, self.procs = [], []
