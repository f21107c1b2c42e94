"""`coflowkit testbed bench`: the runtime's performance targets, measured.

* enforcement accuracy: one TCP flow limited to R (HTB class from :class:`TcPlan`)
  between two namespaces of its own; goodput over one second, for several R; and
  the time from a rate change to the new rate being in force;
* agent CPU: a whole ``coflowkit agent`` process (its own namespace, 100 flows
  whose counts change every round, a master deciding their rates) at Δ = 20 ms,
  as a share of one core, with the host's TCP hash table its own or shared
  (the shared one also with a dump every round instead of the default lookups);
* observation round: CPU time of one dump and of one round of exact lookups
  with 100 tracked flows, in a small and in a large TCP hash table;
* change latency: from a new flow's connection to the other flow's halved
  limit being in force (observation, decision and enforcement);
* master round: 16 agents, 1,000 active flows all reporting new byte counts every
  round; reports applied, policy decision, changes encoded and sent.

Figures are ratios and times from one run on this machine (shared, noisy): read
them as orders of magnitude against the targets, not as precise constants.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time

from coflowkit.runtime import proto, tls
from coflowkit.runtime.agent import discovery_rounds, ehash_buckets
from coflowkit.runtime.master import Master, Session
from coflowkit.runtime.tc import TcBatch, TcPlan
from coflowkit.runtime.testbed import (
    CONTROL_PRIORITY,
    HOST_EHASH_BUCKETS,
    child_env,
    make_identities,
    own_tcp_tables,
)


def _ns(name: str, *cmd: str) -> list[str]:
    return ["ip", "netns", "exec", name, *cmd]


def enforcement(rates=(1e6, 2.5e6, 5e6, 10e6)) -> dict:
    a, b = "cfkbench-a", "cfkbench-b"
    try:
        _veth_pair(a, b, ("10.79.0.1", "10.79.0.2"))
        sink = subprocess.Popen(_ns(b, sys.executable, "-c",
            "import socket; s=socket.create_server(('10.79.0.2', 7999)); c,_=s.accept()\nwhile c.recv(1<<20): pass"))  # fmt: skip
        time.sleep(0.5)
        src = subprocess.Popen(_ns(a, sys.executable, "-c",
            "import socket,time; c=socket.create_connection(('10.79.0.2', 7999)); e=time.time()+60\n"
            "while time.time()<e: c.sendall(b'x'*65536)"))  # fmt: skip
        time.sleep(0.5)

        def acked() -> int:
            out = subprocess.run(
                _ns(a, "ss", "-tni", "dst", "10.79.0.2"), capture_output=True, text=True
            ).stdout
            m = re.search(r"bytes_acked:(\d+)", out)
            return int(m.group(1)) if m else 0

        out = subprocess.run(
            _ns(a, "ss", "-tn", "dst", "10.79.0.2"), capture_output=True, text=True
        ).stdout
        sport = int(re.search(r"10\.79\.0\.1:(\d+)", out).group(1))
        # The testbed's 100 Mbit/s link: every R is above the paused-flow floor
        # (0.5 % of the link), which would otherwise decide the rate.
        plan = TcPlan("eth0", 0.1e9 / 8 / (1514 / 1448))
        tc = TcBatch(["ip", "netns", "exec", a])
        tc.run(plan.setup())
        match = {1: ("10.79.0.1", sport, "10.79.0.2", 7999)}
        rows = []
        for r in rates:
            tc.run(plan.apply([(1, proto.RATE, r)], match))
            t_change = time.time()
            # Time until a 50 ms window runs within 10% of the new rate.
            settle = None
            prev, tp = acked(), time.time()
            while time.time() - t_change < 2.0:
                time.sleep(0.05)
                cur, tc_ = acked(), time.time()
                if abs((cur - prev) / (tc_ - tp) / r - 1) < 0.1:
                    settle = tc_ - t_change
                    break
                prev, tp = cur, tc_
            time.sleep(0.5)
            a0, t0 = acked(), time.time()
            time.sleep(1.0)
            a1, t1 = acked(), time.time()
            rows.append({"rate": r, "goodput": (a1 - a0) / (t1 - t0), "settle_s": settle})
        errors = tc.take_errors()
        tc.close()
        src.kill()
        sink.kill()
        return {"rows": rows, "tc_errors": errors}
    finally:
        for n in (a, b):
            subprocess.run(["ip", "netns", "del", n], capture_output=True)


_ROUNDS = """
import json, socket, statistics, time
from coflowkit.runtime import sockdiag
from coflowkit.runtime.agent import Observer
srv = socket.create_server(("127.0.0.1", 0), backlog=256)
pairs = []
for _ in range(100):
    c = socket.create_connection(srv.getsockname())
    p, _ = srv.accept()
    c.sendall(b"x" * 150_000)
    pairs.append((c, p))
for _, p in pairs:
    got = 0
    while got < 150_000:
        got += len(p.recv(1 << 16))
time.sleep(0.1)
obs = Observer(["127.0.0.1"], 100_000)
out = {}
with sockdiag.SockDiag() as d:
    obs.round(d, 1.0, True)
    assert len(obs) == 100, len(obs)
    for full, key in ((True, "dump_us"), (False, "lookup_us")):
        ts = []
        for i in range(500):
            t0 = time.thread_time()
            obs.round(d, 2.0 + i, full)
            ts.append(time.thread_time() - t0)
        out[key] = statistics.median(ts) * 1e6
print(json.dumps(out))
"""


def observation_rounds() -> dict:
    """CPU time of one observation round, dump or lookups, with 100 tracked
    flows, in a namespace with a TCP hash table of its own and in one sharing
    the machine's."""
    out = {}
    ns = "cfkbench-r"
    for own in (True, False):
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)
        with own_tcp_tables() if own else contextlib.nullcontext():
            subprocess.run(["ip", "netns", "add", ns], check=True)
        try:
            subprocess.run(["ip", "-n", ns, "link", "set", "lo", "up"], check=True)
            r = subprocess.run(_ns(ns, sys.executable, "-c", _ROUNDS), capture_output=True,
                               text=True, env=child_env(), timeout=120)  # fmt: skip
            if r.returncode != 0:
                raise RuntimeError(f"observation-round benchmark failed: {r.stderr.strip()}")
            buckets = subprocess.run(_ns(ns, "cat", "/proc/sys/net/ipv4/tcp_ehash_entries"),
                                     capture_output=True, text=True).stdout.strip()  # fmt: skip
            name = (
                f"its own, {buckets} buckets" if own else f"shared, {buckets.lstrip('-')} buckets"
            )
            out[name] = json.loads(r.stdout)
        finally:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
    return out


def _veth_pair(a: str, b: str, addrs: tuple[str, str], own_tables: bool = True) -> None:
    """Namespaces ``a`` and ``b`` joined by one veth (``eth0`` on both sides),
    with TCP hash tables of their own as the testbed's hosts have (or sharing
    the machine's)."""
    for n in (a, b):
        subprocess.run(["ip", "netns", "del", n], capture_output=True)
    with own_tcp_tables() if own_tables else contextlib.nullcontext():
        for n in (a, b):
            subprocess.run(["ip", "netns", "add", n], check=True)
    subprocess.run(["ip", "-n", a, "link", "add", "eth0", "type", "veth", "peer", "name", "eth0", "netns", b], check=True)  # fmt: skip
    for n, ip in zip((a, b), addrs, strict=True):
        subprocess.run(["ip", "-n", n, "addr", "add", f"{ip}/24", "dev", "eth0"], check=True)
        subprocess.run(["ip", "-n", n, "link", "set", "dev", "eth0", "gso_max_segs", "1"], check=True)  # fmt: skip
        subprocess.run(["ip", "-n", n, "link", "set", "eth0", "up"], check=True)
        subprocess.run(["ip", "-n", n, "link", "set", "lo", "up"], check=True)


# The agent-CPU benchmark's traffic. The sink (in the peer namespace) accepts
# and drains connections; the sender (in the agent's namespace) opens FLOWS
# connections, sends 150 KB on each (so each is a flow), prints "ready", then
# sends RATE bytes/s on each, in 10 ms slices, until its stdin closes: every
# flow's count changes in every round, the agent's worst case.
_SINK = """
import selectors, socket, sys
srv = socket.create_server((sys.argv[1], int(sys.argv[2])), backlog=512)
sel = selectors.DefaultSelector()
sel.register(srv, selectors.EVENT_READ)
while True:
    for key, _ in sel.select():
        if key.fileobj is srv:
            c, _ = srv.accept()
            sel.register(c, selectors.EVENT_READ)
        elif not key.fileobj.recv(1 << 20):
            sel.unregister(key.fileobj)
            key.fileobj.close()
"""
_SENDER = """
import socket, sys, threading, time
dst, port, n, rate = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
conns = [socket.create_connection((dst, port)) for _ in range(n)]
for c in conns:
    c.sendall(b"x" * 150_000)
stop = threading.Event()
threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
time.sleep(0.5)
print("ready", flush=True)
chunk = b"x" * max(1, int(rate / 100))
t = time.monotonic()
while not stop.is_set():
    for c in conns:
        c.sendall(chunk)
    t += 0.01
    time.sleep(max(0.0, t - time.monotonic()))
"""

# Short connections: ``per_s`` a second, each sending ``size`` bytes, staying
# open ``hold`` seconds and closing (the RPCs of a real cluster), beside the
# long flows of _SENDER.
_SHORT = """
import socket, sys, threading, time
dst, port, per_s, size, hold = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
stop = threading.Event()
threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
print("ready", flush=True)
data, t, n = b"x" * size, time.monotonic(), 0
def one():
    c = socket.create_connection((dst, port))
    c.sendall(data)
    time.sleep(hold)
    c.close()
while not stop.is_set():
    threading.Thread(target=one, daemon=True).start()
    n += 1
    t += 1.0 / per_s
    time.sleep(max(0.0, t - time.monotonic()))
print(n, flush=True)
"""


def _cpu_ns(pid: int) -> int:
    """CPU time (ns, user + system) of every thread of ``pid`` (schedstat)."""
    total = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{tid}/schedstat") as fh:
            total += int(fh.read().split()[0])
    return total


def agent_cpu(
    flows: int = 100,
    seconds: float = 20.0,
    rate: float = 125_000.0,
    own_tables: bool = True,
    discover_every: int | None = None,
    threshold: int | None = None,
    short_per_s: float = 0.0,
    short_bytes: int = 20_000,
    short_hold_s: float = 0.1,
) -> dict:
    """The CPU of a whole `coflowkit agent` process, observing ``flows`` TCP flows.

    Two namespaces joined by a veth: in the agent's, a master (policy ``fair``),
    the agent itself (Δ = 20 ms, enforcing) and the senders; in the other, the
    receivers and their host's agent. Each flow sends ``rate`` bytes/s (1 Mbit/s). The
    agent's CPU is read from the kernel's per-thread accounting over
    ``seconds``, after the flows are reported. ``own_tables``: the namespaces
    have TCP hash tables of their own (as testbed hosts do), or share the
    machine's, which every dump then walks. ``discover_every``: the agent's
    ``--discover-every`` (None: its default, from the table's size).
    ``threshold``: the agents' ``--threshold`` (None: their default, 100 KB).
    ``short_per_s``: also that many short connections a second, of
    ``short_bytes`` each, open ``short_hold_s``; the row then counts the flows
    the master saw end."""
    a, ips = "cfkbench-a", ("10.79.1.1", "10.79.1.2")
    with _two_hosts(ips, own_tables, discover_every=discover_every, threshold=threshold) as (
        env, agent, procs,
    ):  # fmt: skip
        sender = subprocess.Popen(
            _ns(a, sys.executable, "-c", _SENDER, ips[1], "7999", str(flows), str(rate)),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)  # fmt: skip
        procs.append(sender)
        if sender.stdout.readline().strip() != "ready":
            raise RuntimeError(f"the sender failed ({sender.wait()})")
        short = None
        if short_per_s > 0:
            short = subprocess.Popen(
                _ns(a, sys.executable, "-c", _SHORT, ips[1], "7999", str(short_per_s),
                    str(short_bytes), str(short_hold_s)),
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)  # fmt: skip
            procs.append(short)
            if short.stdout.readline().strip() != "ready":
                raise RuntimeError(f"the short-connection sender failed ({short.wait()})")
        time.sleep(2.0)  # the flows cross the threshold and are reported
        pid = _agent_pid(agent.pid)
        url = "http://127.0.0.1:7471/metrics"
        d0 = _metric(a, url, "coflowkit_decisions_sent_total")
        f0 = _metric(a, url, "coflowkit_flows_finished_total")
        c0, t0 = _cpu_ns(pid), time.monotonic()
        time.sleep(seconds)
        c1, t1 = _cpu_ns(pid), time.monotonic()
        d1 = _metric(a, url, "coflowkit_decisions_sent_total")
        f1 = _metric(a, url, "coflowkit_flows_finished_total")
        tracked = _count_flows(a, ips[0])
        sender.stdin.close()
        opened = None
        if short is not None:
            short.stdin.close()
            opened = int(short.stdout.readline().strip() or 0)
        return {
            "flows": flows,
            "sockets_sending": tracked,
            "seconds": t1 - t0,
            "cpu_share": (c1 - c0) / 1e9 / (t1 - t0),
            "decisions": d1 - d0,
            "threshold": threshold,
            "short_per_s": short_per_s,
            "short_opened": opened,
            "flows_finished_at_master": f1 - f0,
        }


@contextlib.contextmanager
def _two_hosts(
    ips: tuple[str, str], own_tables: bool = True, master_log=None, discover_every=None,
    threshold=None,
):  # fmt: skip
    """Hosts ``cfkbench-a`` (0) and ``cfkbench-b`` (1) joined by a veth; a
    receiver sink on b (port 7999); a master (``fair``, every flow alone, links
    of 1 Gbit/s, HTTP on a's loopback port 7471) on a; an agent on each host. Yields the
    child environment, host a's agent process and the list of processes, which
    are all stopped (and the namespaces deleted) on exit."""
    a, b = "cfkbench-a", "cfkbench-b"
    procs: list[subprocess.Popen] = []
    try:
        _veth_pair(a, b, ips, own_tables)
        with tempfile.TemporaryDirectory() as tmp:
            pki = make_identities(os.path.join(tmp, "tls"), 2, [[ips[0]], [ips[1]]], [ips[0]])
            # Master and agents at the testbed's control-plane priority: the
            # flows' senders and receivers here can fill both cores.
            py = [*CONTROL_PRIORITY, sys.executable, "-m", "coflowkit"]
            env = child_env()
            procs.append(
                subprocess.Popen(_ns(b, sys.executable, "-c", _SINK, ips[1], "7999"), env=env)
            )
            procs.append(subprocess.Popen(
                _ns(a, *py, "master", "--policy", "fair", "--hosts", "2", "--gbps", "1",
                    "--listen", f"{ips[0]}:7470", "--http", "127.0.0.1:7471", "--membership", "none",
                    "--tls-dir", pki, "--state", "none",
                    "--log-level", "debug" if master_log else "warning"),
                env=env, stderr=master_log))  # fmt: skip
            time.sleep(1.0)
            # The receivers' host has an agent too, so the master knows where
            # the flows go and decides (and the agent enforces) their rates.
            for ns, host in ((a, 0), (b, 1)):
                extra = [] if discover_every is None else ["--discover-every", str(discover_every)]
                extra += [] if threshold is None else ["--threshold", str(threshold)]
                procs.append(subprocess.Popen(
                    _ns(ns, *py, "agent", "--master", f"{ips[0]}:7470", "--host", str(host), "--dev", "eth0",
                        "--gbps", "1", "--tls-dir", pki, "--log-level", "warning", *extra),
                    env=env))  # fmt: skip
            time.sleep(1.0)
            yield env, procs[2], procs
    finally:
        for p in reversed(procs):
            if p.poll() is None:
                p.terminate()
        for p in procs:
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        for n in (a, b):
            subprocess.run(["ip", "netns", "del", n], capture_output=True)


def _agent_pid(wrapper: int) -> int:
    """The python process under ``ip netns exec`` (which execs, so the same pid)."""
    with open(f"/proc/{wrapper}/cmdline", "rb") as fh:
        if b"agent" not in fh.read():
            raise RuntimeError(f"process {wrapper} is not the agent")
    return wrapper


_STREAM = """
import socket, sys, time
c = socket.create_connection((sys.argv[1], int(sys.argv[2])))
print(time.monotonic(), flush=True)
chunk = b"x" * 65536
while True:
    c.sendall(chunk)
"""

_RATE = re.compile(r"class htb 1:(\d+) parent 1:1 .*?rate (\d+(?:\.\d+)?)([KMG]?)bit")


def _leaf_rates(ns: str) -> dict[int, float]:
    """{HTB minor: rate in bit/s} of the agent's per-flow classes on ``ns``'s eth0."""
    out = subprocess.run(
        ["tc", "-n", ns, "class", "show", "dev", "eth0"], capture_output=True, text=True
    ).stdout
    mult = {"": 1, "K": 1e3, "M": 1e6, "G": 1e9}
    return {int(m.group(1)): float(m.group(2)) * mult[m.group(3)] for m in _RATE.finditer(out)}


def change_latency(trials: int = 8, timeout: float = 5.0) -> dict:
    """How long a decision takes to be in force, and the whole loop around it.

    A master (``fair``) and two agents as in :func:`agent_cpu`, links of
    1 Gbit/s. One flow runs alone at the whole link. A second flow from the same
    host starts: the agent sees it in its next dump, the master decides at once
    (a new flow triggers a round) and halves the first flow's rate, and the
    agent changes that flow's HTB class. ``tc class show`` is polled (about
    every 5 ms, the spawn of ``tc``) until both classes are at half the link.
    Measured: from the master pushing the decision (its debug log) to that
    moment, and from the second connection's establishment to it."""
    a, ips = "cfkbench-a", ("10.79.2.1", "10.79.2.2")
    with tempfile.TemporaryFile("w+") as mlog, _two_hosts(ips, master_log=mlog) as (env, _, procs):
        return _change_latency(a, ips, trials, timeout, mlog, env, procs)


@contextlib.contextmanager
def _polling_priority():
    """The poller (and the tc it spawns) at real-time priority while it polls:
    at normal priority the flows' processes, which fill both cores, would delay
    it by tens of milliseconds. Below the control plane's, since it spins; and
    only while polling, so that the flows' processes it starts do not inherit
    a real-time policy (they would then starve the kernel's softirq threads and,
    at equal round-robin priority, the poller itself for whole time slices)."""
    old = os.sched_getscheduler(0), os.sched_getparam(0)
    prio = max(1, int(CONTROL_PRIORITY[-1]) // 2)
    os.sched_setscheduler(0, os.SCHED_RR, os.sched_param(prio))
    try:
        yield
    finally:
        os.sched_setscheduler(0, *old)


def _change_latency(a, ips, trials, timeout, mlog, env, procs) -> dict:
    decided, whole = [], []
    stream = _ns(a, sys.executable, "-c", _STREAM, ips[1], "7999")
    first = subprocess.Popen(stream, stdout=subprocess.PIPE, text=True, env=env)
    procs.append(first)
    first.stdout.readline()

    def wait(cond) -> float | None:
        end = time.monotonic() + timeout
        with _polling_priority():
            while time.monotonic() < end:
                if cond(_leaf_rates(a)):
                    return time.monotonic()
        return None

    def last_push() -> float:
        mlog.seek(0)
        pushes = re.findall(r"pushed \d+ decisions to host 0 at (\d+\.\d+)", mlog.read())
        return float(pushes[-1]) if pushes else float("nan")

    full = 0.9e9  # one flow alone: its class is at (about) the link rate
    if wait(lambda r: len(r) == 1 and max(r.values()) > full) is None:
        raise RuntimeError("the first flow never got its class")
    for _ in range(trials):
        second = subprocess.Popen(stream, stdout=subprocess.PIPE, text=True, env=env)
        t0 = float(second.stdout.readline())
        t1 = wait(lambda r: len(r) == 2 and all(0.4e9 < v < 0.6e9 for v in r.values()))
        if t1 is not None:
            wall = time.time() - (time.monotonic() - t1)
            whole.append(t1 - t0)
            decided.append(wall - last_push())
        second.kill()
        second.wait()
        if wait(lambda r: len(r) == 1 and max(r.values()) > full) is None:
            raise RuntimeError("the first flow did not get the link back")
    return {
        "trials": trials,
        "missed": trials - len(whole),
        "from_decision_s": sorted(decided),
        "from_connection_s": sorted(whole),
    }


def _metric(ns: str, url: str, name: str) -> float:
    """One value of the master's Prometheus endpoint (read from inside ``ns``)."""
    code = (
        f"import urllib.request; print(urllib.request.urlopen({url!r}, timeout=5).read().decode())"
    )
    out = subprocess.run(
        _ns(ns, sys.executable, "-c", code), capture_output=True, text=True, check=True
    ).stdout
    m = re.search(rf"^{name} (\S+)$", out, re.M)
    if m is None:
        raise RuntimeError(f"{name} is not in the master's metrics")
    return float(m.group(1))


def _count_flows(ns: str, src: str) -> int:
    """Connections from ``src`` in ``ns`` with more than 150 KB acknowledged."""
    out = subprocess.run(_ns(ns, "ss", "-tni", "src", src), capture_output=True, text=True).stdout
    return sum(1 for m in re.finditer(r"bytes_acked:(\d+)", out) if int(m.group(1)) > 150_000)


class _NullConn:
    """A session's connection stand-in for the master round: counts the bytes of
    the frames the master queues."""

    def __init__(self, peer: str):
        self.peer = peer
        self.sent = 0
        self.chan = proto.master_channel()
        self.open = True
        self.deadline = None

    def send(self, mtype: int, payload: bytes) -> None:
        self.sent += len(self.chan.frame(mtype, payload))


def master_round(
    hosts: int = 16, flows: int = 1000, rounds: int = 200, policy: str = "fair"
) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        ctx = tls.master_context(make_identities(os.path.join(tmp, "tls"), 0))
    m = Master(policy, {}, hosts, 12.5e6, ctx, listen=("127.0.0.1", 0), http=None)
    sessions = []
    for h in range(hosts):
        s = Session(_NullConn(f"h{h}"), tls.Identity("host", h, frozenset([f"10.0.{h}.1"])))
        m._hello(None, s, proto.Hello(h, 20, [f"10.0.{h}.1"], f"h{h}"))
        sessions.append(s)
    per = flows // hosts
    for h, s in enumerate(sessions):
        new = [
            proto.NewFlow(
                i, 30000 + i, f"10.0.{(h + 1 + i % (hosts - 1)) % hosts}.1", 5000 + i, 0.0, 200_000
            )
            for i in range(per)
        ]
        m._report(s, proto.Report(0.0, new))
    gc.collect()
    gc.freeze()  # as `coflowkit master` does before serving
    times = []
    payloads = []
    for r in range(rounds):
        # Every flow reports a new byte count (the worst case): encode as the agent
        # would, decode and apply as the master does, then the round itself.
        t0 = time.perf_counter()
        for s in sessions:
            rep = proto.Report(
                0.0, updated=[(i, 200_000 + 1000 * (r + 1) * (1 + i % 7)) for i in range(per)]
            )
            m._report(s, proto.decode_report(proto.encode_report(rep)))
        m.round()
        times.append(time.perf_counter() - t0)
        payloads.append(sum(s.conn.sent for s in sessions))
    m.server.close()
    gc.unfreeze()
    times.sort()
    return {
        "hosts": hosts,
        "flows": per * hosts,
        "policy": policy,
        "median_s": times[len(times) // 2],
        "p99_s": times[int(0.99 * (len(times) - 1))],
        "max_s": times[-1],
    }


def run(out: str | None) -> str:
    lines = [
        "# Runtime benchmarks",
        "",
        "Command: `coflowkit testbed bench" + (f" --out {out}`" if out else "`"),
        "",
    ]
    # Change latency first: the most sensitive to a busy machine, and the
    # kernel tears namespaces down asynchronously (cleanup_net), with CPU, for a
    # while after the other benchmarks delete theirs.
    ch = change_latency()
    e = enforcement()
    lines += ["## Enforcement accuracy (one flow limited to R, goodput over 1 s)", "", "| R (MB/s) | goodput (MB/s) | ratio | first 50 ms window within 10 % of R ends at |", "|---|---|---|---|"]  # fmt: skip
    for r in e["rows"]:
        settle = "n/a" if r["settle_s"] is None else f"{1e3 * r['settle_s']:.0f} ms"
        lines.append(
            f"| {r['rate'] / 1e6:.2f} | {r['goodput'] / 1e6:.3f} | {r['goodput'] / r['rate']:.3f} | {settle} |"
        )
    lines += ["", f"tc errors: {len(e['tc_errors'])}", ""]
    own, shared = agent_cpu(own_tables=True), agent_cpu(own_tables=False)
    dumps = agent_cpu(own_tables=False, discover_every=1)
    buckets = ehash_buckets()
    big = "?" if buckets is None else f"{buckets:,}"
    n_big = discovery_rounds(buckets)
    lines += ["## Agent CPU (a whole `coflowkit agent` process, Δ = 20 ms)", "",
              f"{own['flows']} flows of 1 Mbit/s each, every count changing every round, the agent enforcing "
              f"(HTB classes installed); CPU of the agent process (all threads) over {own['seconds']:.0f} s "
              "(target: below 2 % of one core).", "",
              "| host's TCP established-hash table | observation | agent CPU (% of one core) |", "|---|---|---|",
              f"| its own, {HOST_EHASH_BUCKETS} buckets (as the testbed's hosts) | a dump every round (default) | **{100 * own['cpu_share']:.2f}** |",
              f"| this machine's, {big} buckets, shared | a dump every {n_big} rounds, lookups between (default) | **{100 * shared['cpu_share']:.2f}** |",
              f"| the same | a dump every round (`--discover-every 1`) | {100 * dumps['cpu_share']:.2f} |", ""]  # fmt: skip
    rc = observation_rounds()
    lines += ["## One observation round (100 tracked flows, thread CPU time, median of 500)", "",
              "In a namespace with 100 loopback connections (so 200 sockets): a dump, which walks the whole "
              "hash table and returns every socket, against exact lookups of the 100 tracked flows.", "",
              "| TCP hash table | dump (µs) | lookups (µs) |", "|---|---|---|"]  # fmt: skip
    for name, r in rc.items():
        lines.append(f"| {name} | {r['dump_us']:.0f} | {r['lookup_us']:.0f} |")
    lines += ["", "Hence the agent's default: dumps every round on a small table, where they are "
              "cheaper than lookups; lookups between rarer dumps on a large one.", ""]  # fmt: skip

    def ms(xs):
        return ", ".join(f"{1e3 * x:.0f}" for x in xs)

    lines += ["## Limits change after a decision (a new flow halves another flow's rate)", "",
              f"{ch['trials']} trials, Δ = 20 ms, `tc class show` polled every ~5 ms; missed (over 5 s): {ch['missed']}.", "",
              f"- from the master pushing the decision to both classes in force: **{ms(ch['from_decision_s'])} ms** "
              "(target: within 2 Δ = 40 ms);",
              f"- from the new connection (observation, threshold, decision, enforcement): {ms(ch['from_connection_s'])} ms.", ""]  # fmt: skip
    for pol in ("fair", "varys", "aalo"):
        mr = master_round(policy=pol)
        lines += [f"## Master round ({mr['hosts']} agents, {mr['flows']} flows, `{pol}`)", "",
                  f"median {1e3 * mr['median_s']:.2f} ms, p99 {1e3 * mr['p99_s']:.2f} ms, max {1e3 * mr['max_s']:.2f} ms "
                  f"(target: below Δ = 20 ms).", ""]  # fmt: skip
    ru = resource.getrusage(resource.RUSAGE_SELF)
    lines += [f"Peak RSS of the benchmark process: {ru.ru_maxrss / 1024:.0f} MB.", ""]
    text = "\n".join(lines)
    if out:
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, "bench.md"), "w", encoding="utf-8") as fh:
            fh.write(text)
    return text
