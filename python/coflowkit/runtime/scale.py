"""Coordination at scale: a real master (its own process) and N emulated agents
(one process: a swarm of real TLS sessions on tokio threads,
``_core.AgentSwarm``, coflowkit-runtime/src/swarm.rs) over loopback, as CODA's
Fig. 9 measured it.

``coflowkit testbed emulate --agents N --flows-per-agent F``:

* A throw-away cluster CA issues the master's and every host's certificate. Host
  ``h`` has the address :func:`addr_of` (127.1.0.0 + h) in its certificate, binds
  its connection to it (one source address per host, so N is not bounded by the
  ephemeral ports of one address) and announces it in its HELLO.
* The master runs ``coflowkit master`` with ``--max-agents`` and its descriptor
  limit raised to N plus room; the emulator raises its own.
* Agents connect with at most 256 handshakes in progress, so no handshake waits
  past the master's deadline; each reports from the moment it is connected.
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

import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import asdict, dataclass

from coflowkit._core import CoflowkitError
from coflowkit.runtime import tls
from coflowkit.runtime.shards import SHARD_RESERVE, SwarmGroup, raise_nofile, shard_cap, shards_for

#: Bytes a flow has sent when its agent first reports it (the agent's threshold).
FIRST_BYTES = 100_000
#: Attempts at one registration answered 503 (the master busy) before giving up.
REGISTER_TRIES = 20
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
    emulator_threads: int = 1  # the swarm's tokio threads
    # Added to the master's nice value (`nice -n`). The emulated agents stand for other
    # machines but share this one's cores: a negative value (root only) keeps
    # them from taking the master's. 0: as the harness runs.
    master_nice: int = 0
    # Processes holding the sessions, on each side (the master's --hub-shards and
    # the emulator's own; runtime/shards.py). 0: as few as the descriptor limit
    # allows (1 when one process can hold every session).
    shards: int = 0
    # The master's --read-timeout: how long an agent may stay silent. The emulated
    # agents share this machine's cores; where they cannot all report on time (tens
    # of thousands on 2 cores), a longer timeout keeps their sessions, and
    # `reports_per_s` says how often they did report.
    read_timeout_s: float = 10.0

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
        if not -20 <= self.master_nice <= 19:
            raise CoflowkitError(f"--master-nice must be in -20..19, got {self.master_nice}")
        if self.shards < 0:
            raise CoflowkitError(f"--shards must be >= 0, got {self.shards}")
        if not self.read_timeout_s > 0:
            raise CoflowkitError(f"--read-timeout must be positive, got {self.read_timeout_s}")
        if self.sessions_shards() > 1 and self.io != "rust":
            raise CoflowkitError(
                f"{self.agents} agents need {self.sessions_shards()} session shards, which "
                "need --io rust"
            )

    def sessions_shards(self) -> int:
        """Processes per side that hold the sessions."""
        return self.shards or shards_for(self.agents)


@dataclass
class Flow:
    fid: int
    src: int
    dst: int
    dport: int
    size: float
    coflow: int


def check_descriptors(agents: int, shards: int = 1) -> None:
    """Raises the descriptor limit for ``agents`` sessions in one process (or for
    a shard's share of them), or says why it cannot."""
    need = shard_cap(agents, shards) + SHARD_RESERVE
    got = raise_nofile(need)
    if got < need:
        raise CoflowkitError(
            f"{agents} agents in {shards} process(es) need {need} descriptors per process; "
            f"the hard limit (ulimit -Hn) allows {got} and cannot be raised here (it needs "
            f"root with CAP_SYS_RESOURCE): use --shards {shards_for(agents, got)}"
        )


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
        self.swarm = None  # _core.AgentSwarm, once the master is up
        self.pool = None  # registers new coflows off the loop (launch)
        self.pending: list = []  # their registrations in flight
        self.next_fid = 1
        self.next_coflow = 1
        self.live: dict[int, int] = {}  # coflow -> flows (running until it ends)
        self.started = 0
        self.finished = 0
        self.register_retries = 0  # registrations answered 503 (busy) and sent again
        self.width = max(1, round(cfg.agents * cfg.flows_per_agent / cfg.coflows))

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
        data = json.dumps(body).encode()
        url = f"http://{self.http[0]}:{self.http[1]}/api/coflows"
        # A master whose round does not come within the API's wait answers 503
        # (busy): a job framework tries again, and so does the emulator, for up
        # to REGISTER_TRIES attempts (counted in the row).
        for attempt in range(REGISTER_TRIES):
            try:
                with urllib.request.urlopen(urllib.request.Request(url, data), timeout=30) as r:
                    if r.status != 201:
                        raise CoflowkitError(f"registration of coflow {cid}: HTTP {r.status}")
                    return
            except urllib.error.HTTPError as e:
                if e.code != 503 or attempt == REGISTER_TRIES - 1:
                    raise CoflowkitError(f"registration of coflow {cid}: HTTP {e.code}") from None
                self.register_retries += 1
                time.sleep(min(2.0, 0.1 * 2**attempt))

    def start(self, flows: list[Flow]) -> None:
        """The registered coflow's flows start: their agents report them next Δ."""
        by_src: dict[int, list] = {}
        for f in flows:
            by_src.setdefault(f.src, []).append(
                (f.fid, 20000 + f.fid % 40000, addr_of(f.dst), f.dport, f.size, float(FIRST_BYTES),
                 f.coflow)
            )  # fmt: skip
        for src, items in by_src.items():
            self.swarm.start_flows(src, items)
        self.started += 1

    def collect(self) -> None:
        """Coflows whose flows all ended are done."""
        for cid in self.swarm.finished():
            if self.live.pop(cid, None) is not None:
                self.finished += 1

    def launch(self) -> float:
        """Registers the first coflows, connects every agent (a swarm of real TLS
        sessions on tokio threads, ``_core.AgentSwarm``) and starts those
        coflows; returns the seconds the agents took to connect."""
        import concurrent.futures

        from coflowkit import _core

        cfg = self.cfg
        first = [self.new_coflow() for _ in range(cfg.coflows)]
        for cid, flows in first:
            self.post(cid, flows)
        t0 = time.monotonic()
        hosts = list(range(cfg.agents))
        addrs = [addr_of(h) for h in hosts]
        shards = cfg.sessions_shards()
        if shards > 1:  # more agents than one process may hold sessions
            self.swarm = SwarmGroup(shards, self.master[0], self.master[1], self.pki, hosts,
                                    addrs, cfg.interval_ms / 1000, workers=cfg.emulator_threads)  # fmt: skip
        else:
            self.swarm = _core.AgentSwarm(
                self.master[0], self.master[1], self.pki, hosts, addrs,
                cfg.interval_ms / 1000, workers=cfg.emulator_threads,
            )  # fmt: skip
        while (st := self.swarm.stats())["connected"] + st["failed"] < cfg.agents:
            if time.monotonic() - t0 > 60 + cfg.agents / 50:
                raise CoflowkitError(f"agents did not connect in time ({st})")
            time.sleep(0.05)
        if st["failed"]:
            raise CoflowkitError(f"{st['failed']} agents could not connect: {st['first_error']}")
        connect_s = time.monotonic() - t0
        for _, flows in first:
            self.start(flows)
        self.pool = concurrent.futures.ThreadPoolExecutor(4)
        return connect_s

    def refill(self) -> None:
        """Done coflows out; coflows whose registration came back start; new ones
        are registered off the loop (a registration waits for a master round)
        until ``coflows`` run."""
        self.collect()
        for fut in [f for f in self.pending if f.done()]:
            self.pending.remove(fut)
            self.start(fut.result())
        while len(self.live) < self.cfg.coflows:
            cid, flows = self.new_coflow()
            self.pending.append(self.pool.submit(lambda c=cid, f=flows: self.post(c, f) or f))

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=False, cancel_futures=True)
        if self.swarm is not None:
            self.swarm.stop()


def api_get(http: tuple[str, int], path: str):
    """The master's answer to ``GET path`` (JSON, or text for /metrics)."""
    with urllib.request.urlopen(f"http://{http[0]}:{http[1]}{path}", timeout=30) as r:
        data = r.read()
    return data.decode() if path == "/metrics" else json.loads(data)


def master_rounds(http: tuple[str, int]) -> dict:
    return api_get(http, "/api/rounds")


def proc_tree_cpu_rss(pid: int) -> tuple[float, int]:
    """CPU seconds and RSS of process ``pid`` and every process below it (the
    master and its session shards)."""
    kids: dict[int, list[int]] = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as fh:
                ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue  # gone meanwhile
        kids.setdefault(ppid, []).append(int(d))
    cpu, rss, todo = 0.0, 0, [pid]
    while todo:
        p = todo.pop()
        try:
            c, r = proc_cpu_rss(p)
        except OSError:
            continue
        cpu, rss = cpu + c, rss + r
        todo.extend(kids.get(p, []))
    return cpu, rss


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


def proc_nice(pid: int) -> int:
    """The nice value process ``pid`` runs at (/proc/PID/stat, field 19)."""
    with open(f"/proc/{pid}/stat") as fh:
        return int(fh.read().rsplit(")", 1)[1].split()[16])


def progress(text: str) -> None:
    """A line on stderr, so that a long emulation shows how far it is."""
    print(f"[emulate {time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


def drive(cfg: Config, emu: Emulation, pid: int) -> dict:
    """Launches the workload (:meth:`Emulation.launch`), keeps ``coflows``
    coflows running, and measures the master's rounds after warm-up."""
    dt = cfg.interval_ms / 1000
    start_rounds = None
    cpu0 = rss1 = 0.0
    reports0 = 0
    active_sum = ticks = 0
    try:
        connect_s = emu.launch()
        progress(f"{cfg.agents} agents connected in {connect_s:.1f} s")
        wall0 = next_note = time.monotonic()
        while True:
            tick_start = time.monotonic()
            emu.refill()
            st = emu.swarm.stats()
            if tick_start >= next_note:
                next_note = tick_start + 10
                r = master_rounds(emu.http)["rounds"]
                progress(f"{r} rounds ({cfg.warmup} warm-up + {cfg.rounds}), "
                         f"{st['active_flows']} flows active, {emu.finished} coflows done")  # fmt: skip
            if start_rounds is not None:
                active_sum += st["active_flows"]
                ticks += 1
            time.sleep(max(0.0, dt - (time.monotonic() - tick_start)))
            r = master_rounds(emu.http)["rounds"]
            if start_rounds is None and r >= cfg.warmup:
                start_rounds = r
                cpu0, rss1 = proc_tree_cpu_rss(pid)
                wall0 = time.monotonic()
                reports0 = emu.swarm.stats()["reports"]
            if start_rounds is not None and r - start_rounds >= cfg.rounds:
                break
        cpu1, rss_end = proc_tree_cpu_rss(pid)
        st = emu.swarm.stats()
        return summary(cfg, emu, time.monotonic() - wall0, cpu1 - cpu0, rss1, rss_end,
                       active_sum / max(ticks, 1), st["reports"] - reports0, connect_s)  # fmt: skip
    finally:
        emu.close()


@dataclass
class Soak:
    """A long run (item 2 of the scale issue): ``minutes`` of rounds; every
    ``churn_every_s`` seconds ``churn_hosts`` random agents (seeded) leave and
    reconnect ``away_s`` later as the same agent process."""

    minutes: float = 10.0
    churn_every_s: float = 10.0
    churn_hosts: int = 100
    away_s: float = 2.0

    def check(self) -> None:
        for name in ("minutes", "churn_every_s", "away_s"):
            if not getattr(self, name) > 0:
                raise CoflowkitError(f"--{name.replace('_', '-')} must be positive")
        if self.churn_hosts < 0:
            raise CoflowkitError("--churn-hosts must be >= 0")


def metric(text: str, name: str) -> float:
    """The value of ``coflowkit_<name>`` in the master's /metrics text."""
    for line in text.splitlines():
        if line.startswith(f"coflowkit_{name} "):
            return float(line.split()[1])
    raise CoflowkitError(f"the master's /metrics has no coflowkit_{name}")


def keep_rounds(got: dict, warm: int | None, rounds: dict[int, tuple[float, float, float]]) -> None:
    """Keeps the rounds of an /api/rounds answer that came after warm-up (none
    before it is known), keyed by number: (seconds, collector's, thread CPU)."""
    if warm is None:
        return
    for h in got["history"]:
        if h["round"] > warm:
            rounds[h["round"]] = (h["round_s"], h["gc_s"], h["cpu_s"])


def soak_rounds(rounds: dict[int, tuple[float, float, float]], warm: int | None, got: dict,
                dt: float) -> dict:  # fmt: skip
    """The soak's round figures: times, rounds over 2 Δ, and whether the
    collector explains them (its seconds inside the longest round and inside
    each round over 2 Δ, the round thread's CPU there, and its passes over the
    whole run from the last /api/rounds answer ``got``)."""
    hist = [rounds[t][0] for t in sorted(rounds)]
    longest = max(rounds, key=lambda t: (rounds[t][0], -t))
    over = [t for t in sorted(rounds) if rounds[t][0] > 2 * dt]
    return {
        "rounds": len(hist), "round_median_ms": 1000 * sorted(hist)[len(hist) // 2],
        "round_max_ms": 1000 * max(hist),
        "rounds_seen": len(hist), "rounds_total": got["history"][-1]["round"] - (warm or 0),
        "round_max_all_ms": 1000 * got["max_s"],
        "rounds_over_2delta": len(over),
        "round_max_gc_ms": 1000 * rounds[longest][1],
        "round_max_cpu_ms": 1000 * rounds[longest][2],
        "rounds_over_2delta_cpu_ms": [1000 * rounds[t][2] for t in over],
        "rounds_over_2delta_gc_ms": [1000 * rounds[t][1] for t in over],
        "rounds_over_2delta_without_gc": sum(1 for t in over if rounds[t][0] - rounds[t][1] > 2 * dt),
        "gc_collections": got["gc"]["collections"], "gc_full_collections": got["gc"]["full_collections"],
        "gc_seconds": got["gc"]["seconds"], "gc_max_ms": 1000 * got["gc"]["max_s"],
    }  # fmt: skip


def soak_drive(cfg: Config, soak: Soak, emu: Emulation, pid: int) -> dict:
    """Runs the workload for ``soak.minutes`` with churn, then pauses every agent
    and compares what the master counted with what the agents reported: the
    flows ended and their final bytes. Rounds after warm-up are collected from
    the master's /api/rounds (its latest 600, polled every second: up to 600 rounds
    a second); ``rounds_seen`` against ``rounds_total`` says whether any were
    missed, and ``round_max_all_ms`` is the master's own maximum over the run."""
    dt = cfg.interval_ms / 1000
    rng = random.Random(cfg.seed + 1)
    hosts = list(range(cfg.agents))
    # Per round: its seconds, the collector's inside it, the round thread's CPU.
    rounds: dict[int, tuple[float, float, float]] = {}
    rss: list[tuple[float, float]] = []
    warm = None  # the master's round count when the measurement starts
    backlog: list[tuple[float, float]] = []
    try:
        emu.launch()
        start = time.monotonic()
        end = start + 60 * soak.minutes
        next_churn, next_poll, next_rss = start + soak.churn_every_s, start, start
        while (now := time.monotonic()) < end:
            emu.refill()
            if now >= next_churn and soak.churn_hosts:
                emu.swarm.churn(rng.sample(hosts, min(soak.churn_hosts, len(hosts))), soak.away_s)
                next_churn += soak.churn_every_s
            if now >= next_poll:
                got = master_rounds(emu.http)
                if warm is None and got["rounds"] >= cfg.warmup and got["history"]:
                    warm = got["history"][-1]["round"]
                keep_rounds(got, warm, rounds)
                next_poll += 1  # the master keeps 600 rounds: none missed below 600/s
            if now >= next_rss:
                rss.append((now - start, proc_tree_cpu_rss(pid)[1] / 2**20))
                # Agent messages received and not applied yet: a growing backlog
                # would be a master falling behind (and memory held for it).
                backlog.append((now - start, metric(api_get(emu.http, "/metrics"),
                                                    "event_items_pending")))  # fmt: skip
                next_rss += 10
            time.sleep(dt)
        # Quiesce: no report in flight, then compare the two sides' counts.
        emu.swarm.pause(True)
        time.sleep(2 * dt)
        st = emu.swarm.stats()  # nothing changes on the agents' side from here
        quiet_by = time.monotonic() + 10  # reports in flight reach the master
        while True:
            text = api_get(emu.http, "/metrics")
            done = metric(text, "flows_finished_total") == st["flows_done"]
            if done or time.monotonic() > quiet_by:
                break
            time.sleep(0.25)
        got = master_rounds(emu.http)
        keep_rounds(got, warm, rounds)
        rss.append((time.monotonic() - start, proc_tree_cpu_rss(pid)[1] / 2**20))
        emu.swarm.pause(False)
    finally:
        emu.close()
    minute1 = next((r for t, r in rss if t >= 60), rss[-1][1])
    return {
        "agents": cfg.agents, "policy": cfg.policy, "interval_ms": cfg.interval_ms,
        "io": cfg.io, "minutes": soak.minutes, "churn_every_s": soak.churn_every_s,
        "churn_hosts": soak.churn_hosts, "away_s": soak.away_s,
        **soak_rounds(rounds, warm, got, dt),
        "rss_minute1_mib": minute1, "rss_end_mib": rss[-1][1],
        "rss_growth": rss[-1][1] / minute1 - 1,
        "rss_timeline": rss, "backlog_timeline": backlog,
        "agent_flows_done": st["flows_done"], "agent_bytes_done": st["bytes_done"],
        "master_flows_finished": metric(text, "flows_finished_total"),
        "master_bytes_finished": metric(text, "flow_bytes_finished_total"),
        "master_lost_flows": metric(text, "lost_flows_total"),
        "churned_sessions": st["churned"], "reconnected_sessions": st["reconnected"],
        "agents_disconnected": st["disconnected"], "coflows_finished": emu.finished,
    }  # fmt: skip


def summary(cfg: Config, emu: Emulation, wall: float, cpu: float, rss_start: float,
            rss_end: float, mean_active: float, reports: int, connect_s: float) -> dict:  # fmt: skip
    """The measurement's row: the master's round times over the last ``rounds``
    rounds, its CPU share and RSS, and what the emulator saw."""
    got = master_rounds(emu.http)
    hist = [h["round_s"] for h in got["history"]][-cfg.rounds :]
    hist_sorted = sorted(hist)

    def pct(q: float) -> float:
        return hist_sorted[min(len(hist_sorted) - 1, int(q * len(hist_sorted)))]

    st = emu.swarm.stats()
    active = st["active_flows"]
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
        "decisions_received": st["decisions"],
        "agents_disconnected": st["disconnected"],
        "connect_s": connect_s,
        "register_retries": emu.register_retries,
        "wall_s": wall,
    }


def run(cfg: Config, workdir: str | None = None, soak: Soak | None = None) -> dict:
    """One measurement: a master process and the emulated agents; returns the
    row (a long run with churn when ``soak`` is given)."""
    cfg.check()
    shards = cfg.sessions_shards()
    check_descriptors(cfg.agents, shards)
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
           "--read-timeout", str(cfg.read_timeout_s),
           "--log-level", os.environ.get("COFLOWKIT_EMULATE_LOG", "warning")]  # fmt: skip
    if shards > 1:
        cmd += ["--hub-shards", str(shards)]
    for k, v in cfg.params:
        cmd += ["--param", f"{k}={v}"]
    if cfg.master_nice:
        cmd = ["nice", "-n", str(cfg.master_nice), *cmd]
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
        nice = proc_nice(master.pid)  # as measured, not as asked
        if soak is not None:
            soak.check()
            row = soak_drive(cfg, soak, emu, master.pid)
        else:
            row = drive(cfg, emu, master.pid)
        row["master_nice"] = nice
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
    row["shards"] = shards
    row["config"] = asdict(cfg)
    return row


def sweep(
    agents: list[int], policies: list[str], params: dict[str, str], flows_per_agent: float,
    coflows: int, interval_ms: float, rounds: int, out: str, gbps: float = 1.0,
    io: str = "python", master_nice: int = 0, shards: int = 0,
) -> list[dict]:  # fmt: skip
    """Every (N, policy) measurement, one master each, into ``out/scale.csv`` (rows
    written as they come). The certificates of the largest N serve every run."""
    import csv

    os.makedirs(out, exist_ok=True)
    rows: list[dict] = []
    work = tempfile.mkdtemp(prefix="coflowkit-emulate-")
    try:
        top = Config(max(agents), io=io, shards=shards)
        top.check()
        check_descriptors(top.agents, top.sessions_shards())
        make_pki(os.path.join(work, "tls"), max(agents))
        for n in agents:
            for policy in policies:
                cfg = Config(n, flows_per_agent, coflows, policy, tuple(sorted(params.items())),
                             interval_ms, rounds, gbps=gbps, io=io,
                             master_nice=master_nice, shards=shards)  # fmt: skip
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
