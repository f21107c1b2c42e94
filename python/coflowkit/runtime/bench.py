"""`coflowkit testbed bench`: the runtime's performance targets, measured.

* enforcement accuracy: one TCP flow limited to R (HTB class from :class:`TcPlan`)
  between two namespaces of its own; goodput over one second, for several R; and
  the time from a rate change to the new rate being in force;
* agent CPU: an agent's observation round (sock_diag dump of 100 live loopback
  connections, diff, report encoding) at Δ = 20 ms, as a share of one core;
* master round: 16 agents, 1,000 active flows all reporting new byte counts every
  round; reports applied, policy decision, changes encoded and sent.

Figures are ratios and times from one run on this machine (shared, noisy): read
them as orders of magnitude against the targets, not as precise constants.
"""

from __future__ import annotations

import os
import re
import resource
import socket
import subprocess
import sys
import threading
import time

from coflowkit.runtime import proto, sockdiag
from coflowkit.runtime.agent import Observer
from coflowkit.runtime.master import Master, Session
from coflowkit.runtime.tc import TcBatch, TcPlan


def _ns(name: str, *cmd: str) -> list[str]:
    return ["ip", "netns", "exec", name, *cmd]


def enforcement(rates=(1e6, 2.5e6, 5e6, 10e6)) -> dict:
    a, b = "cfkbench-a", "cfkbench-b"
    for n in (a, b):
        subprocess.run(["ip", "netns", "del", n], capture_output=True)
        subprocess.run(["ip", "netns", "add", n], check=True)
    try:
        subprocess.run(
            [
                "ip",
                "-n",
                a,
                "link",
                "add",
                "eth0",
                "type",
                "veth",
                "peer",
                "name",
                "eth0",
                "netns",
                b,
            ],
            check=True,
        )
        for n, ip in ((a, "10.79.0.1"), (b, "10.79.0.2")):
            subprocess.run(["ip", "-n", n, "addr", "add", f"{ip}/24", "dev", "eth0"], check=True)
            subprocess.run(
                ["ip", "-n", n, "link", "set", "dev", "eth0", "gso_max_segs", "1"], check=True
            )
            subprocess.run(["ip", "-n", n, "link", "set", "eth0", "up"], check=True)
            subprocess.run(["ip", "-n", n, "link", "set", "lo", "up"], check=True)
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


def agent_cpu(flows: int = 100, rounds: int = 250, interval: float = 0.02) -> dict:
    srv = socket.create_server(("127.0.0.1", 0))
    port = srv.getsockname()[1]
    conns, peers = [], []
    for _ in range(flows):
        c = socket.create_connection(("127.0.0.1", port))
        p, _ = srv.accept()
        conns.append(c)
        peers.append(p)
    stop = threading.Event()

    def pump():  # keep every connection sending a little, so byte counts change
        chunk = b"x" * 4096
        while not stop.is_set():
            for c, p in zip(conns, peers):
                c.send(chunk)
                p.recv(65536)

    for c in conns:
        c.send(b"x" * 150_000)
    for p in peers:
        got = 0
        while got < 150_000:
            got += len(p.recv(1 << 20))
    t = threading.Thread(target=pump, daemon=True)
    obs = Observer(["127.0.0.1"], 100_000)
    chan = proto.Channel(b"k" * 32, b"n" * 16)
    diag = sockdiag.SockDiag()
    # CPU of the observation path only (the pump thread runs in this process too,
    # so time the round itself with the thread clock).
    t.start()
    cpu = 0.0
    reported = 0
    start = time.perf_counter()
    for _ in range(rounds):
        c0 = time.thread_time()
        rep = obs.round(diag.dump(sockdiag.states_mask(*sockdiag_open())), time.time())
        chan.frame(proto.REPORT, proto.encode_report(rep))
        cpu += time.thread_time() - c0
        reported = max(reported, len(obs.flows))
        time.sleep(max(0.0, interval - (time.thread_time() - c0)))
    wall = time.perf_counter() - start
    stop.set()
    t.join()
    diag.close()
    for s in conns + peers + [srv]:
        s.close()
    return {
        "flows": reported,
        "rounds": rounds,
        "cpu_per_round_s": cpu / rounds,
        "cpu_share": cpu / (rounds * interval),
        "wall_s": wall,
    }


def sockdiag_open():
    from coflowkit.runtime.agent import OPEN_STATES

    return OPEN_STATES


class _Null:
    """A socket stand-in for the master's sessions: counts bytes."""

    def __init__(self):
        self.sent = 0

    def setblocking(self, _):
        pass

    def sendall(self, data):
        self.sent += len(data)

    def fileno(self):
        return id(self)


def master_round(
    hosts: int = 16, flows: int = 1000, rounds: int = 200, policy: str = "fair"
) -> dict:
    m = Master(policy, {}, hosts, 12.5e6, b"k" * 32, listen=("127.0.0.1", 0), http=None)
    sessions = []
    for h in range(hosts):
        s = Session(_Null(), f"h{h}", proto.Channel(b"k" * 32, b"n" * 16))
        m._hello(s, proto.Hello(h, 20, [f"10.0.{h}.1"], f"h{h}"))
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
        payloads.append(sum(s.sock.sent for s in sessions))
    m.server.close()
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
    e = enforcement()
    lines += ["## Enforcement accuracy (one flow limited to R, goodput over 1 s)", "", "| R (MB/s) | goodput (MB/s) | ratio | first 50 ms window within 10 % of R ends at |", "|---|---|---|---|"]  # fmt: skip
    for r in e["rows"]:
        settle = "n/a" if r["settle_s"] is None else f"{1e3 * r['settle_s']:.0f} ms"
        lines.append(
            f"| {r['rate'] / 1e6:.2f} | {r['goodput'] / 1e6:.3f} | {r['goodput'] / r['rate']:.3f} | {settle} |"
        )
    lines += ["", f"tc errors: {len(e['tc_errors'])}", ""]
    a = agent_cpu()
    lines += ["## Agent CPU (observation round at Δ = 20 ms)", "",
              f"{a['flows']} flows tracked, {a['rounds']} rounds: {1e3 * a['cpu_per_round_s']:.3f} ms CPU per round, "
              f"**{100 * a['cpu_share']:.2f}% of one core**.", ""]  # fmt: skip
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
