"""Coordination at scale: a real master (its own process) and N emulated agents
(one asyncio process) over loopback, as CODA's Fig. 9 measured it.

``coflowkit testbed emulate --agents N --flows-per-agent F``:

* A throw-away cluster CA issues the master's and every host's certificate. Host
  ``h`` has the address :func:`addr_of` (127.1.0.0 + h) in its certificate, binds
  its connection to it (one source address per host, so N is not bounded by the
  ephemeral ports of one address) and announces it in its HELLO.
* The master runs ``coflowkit master`` with ``--max-agents`` and its descriptor
  limit raised to N plus room; the emulator raises its own.
* Agents connect in batches (each batch's handshakes finish before the next), so
  no handshake waits past the master's deadline.
* The workload keeps ``coflows`` coflows running: each has N·F / coflows flows
  between random hosts, with sizes drawn from the Facebook trace's flows (seeded),
  registered through the HTTP API before they start. Every Δ each agent with flows
  sends one REPORT: new flows, the bytes of the running ones, the ones that ended.
  Bytes advance at the rate the master last decided for each flow (closed loop);
  when a coflow's last flow ends, a new one is registered.
* After ``warmup`` rounds, the master's own round times (``GET /api/rounds``:
  reports applied, decision, changes sent) over ``rounds`` rounds, its CPU time
  (``/proc/PID/stat``) and its RSS are recorded.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import asdict, dataclass, field

from coflowkit._core import CoflowkitError
from coflowkit.runtime import proto, tls

#: Bytes a flow has sent when its agent first reports it (the agent's threshold).
FIRST_BYTES = 100_000
CONNECT_BATCH = 200


def addr_of(h: int) -> str:
    """Host ``h``'s loopback address: 127.1.0.0 + h (127/8 is all local)."""
    x = (1 << 16) + h
    return f"127.{(x >> 16) & 255}.{(x >> 8) & 255}.{x & 255}"


@dataclass
class Config:
    agents: int
    flows_per_agent: float = 4.0
    coflows: int = 100
    policy: str = "fair"
    params: tuple[tuple[str, str], ...] = ()
    interval_ms: float = 100.0
    rounds: int = 500
    warmup: int = 20
    gbps: float = 1.0
    seed: int = 1
    trace: str | None = None
    io: str = "python"  # the master's session layer (coflowkit master --io)

    def check(self) -> None:
        if not 1 <= self.agents <= 65000:
            raise CoflowkitError(f"--agents must be in 1..65000, got {self.agents}")
        if not self.flows_per_agent > 0:
            raise CoflowkitError(f"--flows-per-agent must be positive, got {self.flows_per_agent}")
        for name in ("coflows", "rounds"):
            if getattr(self, name) < 1:
                raise CoflowkitError(f"--{name} must be >= 1")
        if not self.interval_ms > 0:
            raise CoflowkitError(f"--interval-ms must be positive, got {self.interval_ms}")
        if self.io not in ("python", "rust"):
            raise CoflowkitError(f"--io must be python or rust, got {self.io!r}")


@dataclass
class Flow:
    fid: int
    src: int
    dst: int
    dport: int
    size: float
    coflow: int
    sent: float = FIRST_BYTES
    rate: float = 0.0
    reported: bool = False


@dataclass
class Agent:
    host: int
    writer: asyncio.StreamWriter
    chan: proto.Channel
    flows: dict[int, Flow] = field(default_factory=dict)
    gone: list[tuple[int, int]] = field(default_factory=list)
    decisions: int = 0
    # Held here: asyncio keeps only weak references to tasks and stream readers.
    reader: asyncio.StreamReader | None = None
    task: asyncio.Task | None = None


def raise_nofile(want: int) -> int:
    """Raises this process's descriptor limit toward ``want``; returns the limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < want:
        new = want if hard == resource.RLIM_INFINITY else min(want, hard)
        if new < want and os.geteuid() == 0:
            new = want
            resource.setrlimit(resource.RLIMIT_NOFILE, (new, max(new, hard)))
        else:
            resource.setrlimit(resource.RLIMIT_NOFILE, (new, hard))
        soft = new
    return soft


def make_pki(directory: str, n: int) -> None:
    tls.init_ca(directory)
    tls.issue(directory, None, ["127.0.0.1"])
    for h in range(n):
        tls.issue(directory, h, [addr_of(h)])


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def sizes_from_trace(path: str | None, seed: int) -> list[float]:
    """Flow sizes (bytes) of the Facebook trace, shuffled with ``seed``."""
    from coflowkit import api
    from coflowkit.options import default_trace

    w = api.load_trace(path or default_trace())
    sizes = [float(b) for b in w.flow_columns()["bytes"]]
    random.Random(seed).shuffle(sizes)
    return sizes


class Emulation:
    def __init__(self, cfg: Config, http: tuple[str, int], master: tuple[str, int], pki: str):
        self.cfg = cfg
        self.http = http
        self.master = master
        self.pki = pki
        self.rng = random.Random(cfg.seed)
        self.sizes = sizes_from_trace(cfg.trace, cfg.seed)
        self.agents: list[Agent] = []
        self.next_fid = 1
        self.next_coflow = 1
        self.live: dict[int, int] = {}  # coflow -> flows still running
        self.started = 0
        self.finished = 0
        self.ticks = 0
        self.width = max(1, round(cfg.agents * cfg.flows_per_agent / cfg.coflows))

    async def connect_all(self) -> None:
        for lo in range(0, self.cfg.agents, CONNECT_BATCH):
            hosts = range(lo, min(lo + CONNECT_BATCH, self.cfg.agents))
            self.agents += await asyncio.gather(*(self.connect(h) for h in hosts))

    async def connect(self, h: int) -> Agent:
        ctx = tls.host_client_context(self.pki, h)
        reader, writer = await asyncio.open_connection(
            self.master[0], self.master[1], ssl=ctx, server_hostname="127.0.0.1",
            local_addr=(addr_of(h), 0),
        )  # fmt: skip
        a = Agent(h, writer, proto.agent_channel(), reader=reader)
        hello = proto.Hello(h, int(self.cfg.interval_ms), [addr_of(h)], f"emulated-{h}", b"\1" * 16)
        writer.write(a.chan.frame(proto.HELLO, proto.encode_hello(hello)))
        a.task = asyncio.get_running_loop().create_task(self.read(a, reader))
        return a

    async def read(self, a: Agent, reader: asyncio.StreamReader) -> None:
        while True:
            try:
                data = await reader.read(65536)
            except (ConnectionError, OSError):
                data = b""
            if not data:
                return
            for mtype, payload in a.chan.feed(data):
                if mtype == proto.DECISIONS:
                    for fid, kind, value in proto.decode_decisions(payload):
                        f = a.flows.get(fid)
                        if f is not None and kind == proto.RATE:
                            f.rate = value
                        a.decisions += 1

    def new_coflow(self) -> tuple[int, list[Flow]]:
        """A new coflow's flows between random hosts (not yet registered)."""
        n = self.cfg.agents
        cid = self.next_coflow
        self.next_coflow += 1
        flows = []
        for k in range(self.width):
            src = self.rng.randrange(n)
            dst = self.rng.randrange(n - 1) if n > 1 else 0
            dst += dst >= src and n > 1
            size = max(self.sizes[(self.next_fid + k) % len(self.sizes)], 2 * FIRST_BYTES)
            flows.append(Flow(self.next_fid + k, src, dst, 10000 + k % 50000, size, cid))
        self.next_fid += self.width
        self.live[cid] = len(flows)
        return cid, flows

    def post(self, cid: int, flows: list[Flow]) -> None:
        """Registers the coflow with the master (blocking: run it off the loop)."""
        body = {"id": cid, "flows": [
            {"src": f.src, "dst": f.dst, "dst_port": f.dport, "size": f.size} for f in flows
        ]}  # fmt: skip
        req = urllib.request.Request(
            f"http://{self.http[0]}:{self.http[1]}/api/coflows", json.dumps(body).encode()
        )
        with urllib.request.urlopen(req, timeout=30) as r:
            if r.status != 201:
                raise CoflowkitError(f"registration of coflow {cid}: HTTP {r.status}")

    def start(self, flows: list[Flow]) -> None:
        """The registered coflow's flows start: their agents report them next Δ."""
        for f in flows:
            self.agents[f.src].flows[f.fid] = f
        self.started += 1

    def tick(self, dt: float, now: float) -> int:
        """Every agent's REPORT for this Δ; returns how many were sent. As the real
        agent does, one with nothing to say still reports every 5th round."""
        sent = 0
        self.ticks += 1
        for a in self.agents:
            if not a.flows and not a.gone and self.ticks % 5:
                continue
            new, upd = [], []
            for f in list(a.flows.values()):
                f.sent = min(f.size, f.sent + f.rate * dt)
                if not f.reported:
                    f.reported = True
                    new.append(proto.NewFlow(f.fid, 20000 + f.fid % 40000, addr_of(f.dst),
                                             f.dport, now, int(f.sent)))  # fmt: skip
                elif f.sent >= f.size:
                    a.gone.append((f.fid, int(f.sent)))
                    del a.flows[f.fid]
                    self.live[f.coflow] -= 1
                    if self.live[f.coflow] == 0:
                        del self.live[f.coflow]
                        self.finished += 1
                else:
                    upd.append((f.fid, int(f.sent)))
            report = proto.Report(now, new, upd, a.gone)
            a.gone = []
            a.writer.write(a.chan.frame(proto.REPORT, proto.encode_report(report)))
            sent += 1
        return sent


def api_get(http: tuple[str, int], path: str):
    """The master's answer to ``GET path`` (JSON, or text for /metrics)."""
    with urllib.request.urlopen(f"http://{http[0]}:{http[1]}{path}", timeout=30) as r:
        data = r.read()
    return data.decode() if path == "/metrics" else json.loads(data)


def master_rounds(http: tuple[str, int]) -> dict:
    return api_get(http, "/api/rounds")


def proc_cpu_rss(pid: int) -> tuple[float, int]:
    with open(f"/proc/{pid}/stat") as fh:
        parts = fh.read().rsplit(")", 1)[1].split()
    cpu = (int(parts[11]) + int(parts[12])) / os.sysconf("SC_CLK_TCK")
    rss = 0
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1]) * 1024
    return cpu, rss


async def connect_reporting(emu: Emulation, dt: float, t0: float) -> None:
    """Connects every agent; those connected so far keep reporting (every 5th Δ,
    with nothing to say) while the others connect, as real agents would, so none
    falls silent."""
    connecting = asyncio.get_running_loop().create_task(emu.connect_all())
    while not connecting.done():
        tick_start = time.monotonic()
        emu.tick(dt, tick_start - t0)
        await asyncio.sleep(max(0.0, dt - (time.monotonic() - tick_start)))
    await connecting


async def drive(cfg: Config, emu: Emulation, pid: int) -> dict:
    """Registers the first coflows, connects the agents, then reports every Δ; new
    coflows are registered off the event loop (a registration waits for a master
    round), so no agent falls silent meanwhile."""
    dt = cfg.interval_ms / 1000
    loop = asyncio.get_running_loop()
    first = [emu.new_coflow() for _ in range(cfg.coflows)]
    for cid, flows in first:
        emu.post(cid, flows)
    t0 = time.monotonic()
    await connect_reporting(emu, dt, t0)
    connect_s = time.monotonic() - t0
    for _, flows in first:
        emu.start(flows)
    pending: list[asyncio.Future] = []
    start_rounds = None
    cpu0 = rss1 = 0.0
    wall0 = time.monotonic()
    reports = 0
    active_sum = ticks = 0
    while True:
        tick_start = time.monotonic()
        reports += emu.tick(dt, tick_start - t0)
        if start_rounds is not None:
            active_sum += sum(len(a.flows) for a in emu.agents)
            ticks += 1
        for fut in [f for f in pending if f.done()]:
            pending.remove(fut)
            emu.start(fut.result())
        while len(emu.live) < cfg.coflows:
            cid, flows = emu.new_coflow()
            pending.append(loop.run_in_executor(None, lambda c=cid, f=flows: emu.post(c, f) or f))
        await asyncio.sleep(max(0.0, dt - (time.monotonic() - tick_start)))
        r = (await loop.run_in_executor(None, master_rounds, emu.http))["rounds"]
        if start_rounds is None and r >= cfg.warmup:
            start_rounds = r
            cpu0, rss1 = proc_cpu_rss(pid)
            wall0 = time.monotonic()
            reports = 0
        if start_rounds is not None and r - start_rounds >= cfg.rounds:
            break
    cpu1, rss_end = proc_cpu_rss(pid)
    return summary(cfg, emu, time.monotonic() - wall0, cpu1 - cpu0, rss1, rss_end,
                   active_sum / max(ticks, 1), reports, connect_s)  # fmt: skip


def summary(cfg: Config, emu: Emulation, wall: float, cpu: float, rss_start: float,
            rss_end: float, mean_active: float, reports: int, connect_s: float) -> dict:  # fmt: skip
    """The measurement's row: the master's round times over the last ``rounds``
    rounds, its CPU share and RSS, and what the emulator saw."""
    got = master_rounds(emu.http)
    hist = [h["round_s"] for h in got["history"]][-cfg.rounds :]
    hist_sorted = sorted(hist)

    def pct(q: float) -> float:
        return hist_sorted[min(len(hist_sorted) - 1, int(q * len(hist_sorted)))]

    active = sum(len(a.flows) for a in emu.agents)
    health = api_get(emu.http, "/api/health")
    master_flows = len(api_get(emu.http, "/api/flows"))
    if os.environ.get("COFLOWKIT_EMULATE_LOG"):  # debugging: the master's counters
        print(api_get(emu.http, "/metrics"), file=sys.stderr)
    return {
        "agents": cfg.agents,
        "flows_per_agent": cfg.flows_per_agent,
        "policy": cfg.policy,
        "interval_ms": cfg.interval_ms,
        "rounds": len(hist),
        "round_median_ms": 1000 * pct(0.5),
        "round_p99_ms": 1000 * pct(0.99),
        "round_max_ms": 1000 * hist_sorted[-1],
        "round_mean_ms": 1000 * sum(hist) / len(hist),
        "master_cpu_share": cpu / wall,
        "master_rss_mib": rss_end / 2**20,
        "master_rss_start_mib": rss_start / 2**20,
        "mean_active_flows": mean_active,
        "active_flows_end": active,
        "master_flows_end": master_flows,
        "agents_connected_end": health["agents"],
        "coflows_finished": emu.finished,
        "reports_per_s": reports / wall,
        "decisions_received": sum(a.decisions for a in emu.agents),
        "connect_s": connect_s,
        "wall_s": wall,
    }


def run(cfg: Config, workdir: str | None = None) -> dict:
    """One measurement: a master process and the emulated agents; returns the row."""
    cfg.check()
    need = cfg.agents + 256
    if raise_nofile(need) < need:
        raise CoflowkitError(
            f"{cfg.agents} agents need {need} descriptors; ulimit -n allows fewer "
            "(raise it, or run as root)"
        )
    own = workdir is None
    workdir = workdir or tempfile.mkdtemp(prefix="coflowkit-emulate-")
    pki = os.path.join(workdir, "tls")
    if not os.path.exists(os.path.join(pki, tls.host_files(cfg.agents - 1)[0])):
        os.makedirs(pki, exist_ok=True)
        make_pki(pki, cfg.agents)
    listen, http = ("127.0.0.1", free_port()), ("127.0.0.1", free_port())
    from coflowkit.runtime.testbed import child_env

    cmd = [sys.executable, "-m", "coflowkit", "master", "--policy", cfg.policy,
           "--hosts", str(cfg.agents), "--gbps", str(cfg.gbps), "--tls-dir", pki,
           "--listen", f"{listen[0]}:{listen[1]}", "--http", f"{http[0]}:{http[1]}",
           "--state", "none", "--interval-ms", str(cfg.interval_ms),
           "--max-agents", str(cfg.agents + 16), "--handshake-timeout", "30", "--io", cfg.io,
           "--log-level", os.environ.get("COFLOWKIT_EMULATE_LOG", "warning")]  # fmt: skip
    for k, v in cfg.params:
        cmd += ["--param", f"{k}={v}"]
    log = open(os.path.join(workdir, "master.log"), "w")  # noqa: SIM115 - closed below
    master = subprocess.Popen(cmd, env=child_env(), stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                master_rounds(http)
                break
            except OSError:
                if master.poll() is not None or time.monotonic() > deadline:
                    raise CoflowkitError(
                        f"the master did not start (see {workdir}/master.log)"
                    ) from None
                time.sleep(0.2)
        emu = Emulation(cfg, http, listen, pki)
        row = asyncio.run(drive(cfg, emu, master.pid))
    finally:
        master.send_signal(signal.SIGTERM)
        try:
            master.wait(timeout=20)
        except subprocess.TimeoutExpired:
            master.kill()
        log.close()
        if own:
            shutil.rmtree(workdir, ignore_errors=True)
    row["params"] = ",".join(f"{k}={v}" for k, v in cfg.params)
    row["io"] = cfg.io
    row["config"] = asdict(cfg)
    return row


def sweep(
    agents: list[int], policies: list[str], params: dict[str, str], flows_per_agent: float,
    coflows: int, interval_ms: float, rounds: int, out: str, gbps: float = 1.0,
    io: str = "python",
) -> list[dict]:  # fmt: skip
    """Every (N, policy) measurement, one master each, into ``out/scale.csv`` (rows
    written as they come). The certificates of the largest N serve every run."""
    import csv

    os.makedirs(out, exist_ok=True)
    rows: list[dict] = []
    work = tempfile.mkdtemp(prefix="coflowkit-emulate-")
    try:
        make_pki(os.path.join(work, "tls"), max(agents))
        for n in agents:
            for policy in policies:
                cfg = Config(n, flows_per_agent, coflows, policy, tuple(sorted(params.items())),
                             interval_ms, rounds, gbps=gbps, io=io)  # fmt: skip
                row = run(cfg, work)
                row.pop("config")
                rows.append(row)
                with open(os.path.join(out, "scale.csv"), "w", newline="") as fh:
                    w = csv.DictWriter(fh, fieldnames=list(rows[0]))
                    w.writeheader()
                    w.writerows(rows)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return rows
