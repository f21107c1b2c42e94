"""`coflowkit testbed`: a cluster of network namespaces on one machine.

Layout (``up``)::

    cfk-h0 .. cfk-h{N-1}   one namespace per host: eth0 10.77.0.(i+1)/24 (data),
                           ctl0 10.78.0.(i+1)/24 (management)
    cfk-sw                 the switch: bridge br0 joins p0..p{N-1} (data), bridge brc
                           joins c0..c{N-1} and the root namespace's cfk-ctl
                           (10.78.0.254, where the master listens)

Every data port is shaped to X in both directions at the switch: p_i's egress (the
host's downlink) by an HTB class of rate X, and p_i's ingress (the host's uplink)
redirected to ifb_i, shaped the same way. The hosts' own egress stays free for the
agents' HTB trees. The management network is not shaped.

``run`` replays a scaled workload with real TCP (:mod:`coflowkit.runtime.traffic`)
under a master and one agent per host, then simulates the same workload with the
goodput measured on the testbed's links, and writes both and their comparison.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
import urllib.error
import urllib.request

import numpy as np

from coflowkit import api
from coflowkit import transforms as T
from coflowkit._core import CoflowkitError, Workload
from coflowkit.runtime.tc import PAUSED_FLOOR, RELEASES, check_paused_floor
from coflowkit.runtime.testbed_compare import (  # noqa: F401 (re-exported: tests and reports use them)
    _compare,
    _compare_interval,
    _prom,
    _start_lateness,
    breakdown,
    identification,
)
from coflowkit.runtime.testbed_hosts import (  # noqa: F401 (the testbed's names, re-exported)
    CONTROL_PRIORITY,
    CTL_NET,
    DATA_NET,
    MASTER_IP,
    PREFIX,
    SWITCH,
    _python,
    child_env,
    host_ip,
    host_ns,
    make_identities,
    stop_all,
)

MASTER_PORT = 7470
STATE_FILE = "/run/coflowkit-testbed.json"
# Held by a `testbed run` while it uses the bed: its pid, the pid's start time
# (so a reused pid is not taken for it) and its output directory.
LOCK_FILE = "/run/coflowkit-testbed.lock"
# Bumped whenever `up` builds something different: a testbed of an older layout
# is rebuilt rather than reused.
LAYOUT = 2
# The default host link rate, Gbit/s: 8 hosts at 25 Mbit/s is what this 2-core
# machine carries faithfully (docs/results/testbed/README.md).
DEFAULT_GBPS = 0.025
CC = "echo"
CC_FILE = "/proc/sys/net/ipv4/tcp_congestion_control"
# Each host namespace gets a TCP established-hash table of its own, sized for a
# host with a few thousand connections. Without it every namespace shares the
# machine's table (262,144 buckets here), and each agent's sock_diag dump walks
# all of it every Δ (about 1.9 % of a core per agent on this machine; see
# docs/results/runtime/bench.md).
EHASH_SYSCTL = "/proc/sys/net/ipv4/tcp_child_ehash_entries"
HOST_EHASH_BUCKETS = 4096


def _sh(args: list[str], check: bool = True) -> subprocess.CompletedProcess:
    r = subprocess.run(args, capture_output=True, text=True)
    if check and r.returncode != 0:
        raise CoflowkitError(
            f"testbed: `{' '.join(args)}` failed: {r.stderr.strip() or r.returncode}"
        )
    return r


def _need_tools() -> None:
    if os.geteuid() != 0:
        raise CoflowkitError("testbed: network namespaces need root")
    for tool in ("ip", "tc"):
        if subprocess.run(["which", tool], capture_output=True).returncode != 0:
            raise CoflowkitError(f"testbed: `{tool}` not found (apt-get install iproute2)")


def namespaces() -> list[str]:
    r = _sh(["ip", "netns", "list"], check=False)
    return [line.split()[0] for line in r.stdout.splitlines() if line.startswith(f"{PREFIX}-")]


def _started(pid: int) -> str | None:
    """The start time of process ``pid`` (field 22 of /proc/PID/stat), or None
    when there is no such process."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as fh:
            return fh.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def in_use_by() -> dict | None:
    """The live `testbed run` holding the bed (``{"pid", "started", "out"}``),
    other than this process; a lock left by a process that is gone is removed."""
    try:
        with open(LOCK_FILE, encoding="utf-8") as fh:
            held = json.load(fh)
        pid = int(held["pid"])
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError):
        held, pid = None, -1
    if held is not None and _started(pid) == held.get("started"):
        return None if pid == os.getpid() else held
    with contextlib.suppress(FileNotFoundError):
        os.unlink(LOCK_FILE)
    return None


@contextlib.contextmanager
def hold(out: str):
    """Marks the bed as used by this process (for :func:`down`) while the block runs."""
    held = in_use_by()
    if held is not None:
        raise CoflowkitError(_busy(held))
    with open(LOCK_FILE, "w", encoding="utf-8") as fh:
        json.dump({"pid": os.getpid(), "started": _started(os.getpid()), "out": out}, fh)
    try:
        yield
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(LOCK_FILE)


def _busy(held: dict) -> str:
    return (
        f"testbed: in use by a `coflowkit testbed run` (pid {held['pid']}, writing "
        f"{held.get('out')}); wait for it or stop it first"
    )


def down() -> int:
    """Removes every namespace and link of the testbed; returns how many namespaces.
    Refused while another process's `testbed run` holds the bed (:func:`hold`)."""
    _need_tools()
    held = in_use_by()
    if held is not None:
        raise CoflowkitError(_busy(held))
    names = namespaces()
    for ns in names:
        _sh(["ip", "netns", "pids", ns], check=False)
        pids = _sh(["ip", "netns", "pids", ns], check=False).stdout.split()
        for pid in pids:
            try:
                os.kill(int(pid), signal.SIGKILL)
            except (ProcessLookupError, ValueError):
                pass
        _sh(["ip", "netns", "del", ns], check=False)
    _sh(["ip", "link", "del", f"{PREFIX}-ctl"], check=False)
    if os.path.exists(STATE_FILE):
        os.remove(STATE_FILE)
    return len(names)


def _shape(ns: str, dev: str, bits: int, queues: int = 1) -> list[list[str]]:
    """A switch port shaped to ``bits``/s. With ``queues`` > 1 it has strict
    priority queues chosen by DSCP, as the Stream paper's switch (DSCP d goes to
    queue min(d, queues - 1), 0 first): one HTB leaf per queue under the port's
    rate, ``prio`` = queue, each assured only 0.1 % of the port, so HTB lends
    the rest to the lowest ``prio`` with packets (this kernel has no prio qdisc).
    Class minors are hexadecimal in tc: queue q is class 1:(10 + q), written
    ``1:a`` for queue 0, the default of unmarked packets."""
    tc = ["tc", "-n", ns]
    cmds = [
        [*tc, "qdisc", "add", "dev", dev, "root", "handle", "1:", "htb", "default", "1" if queues == 1 else "a"],
        [*tc, "class", "add", "dev", dev, "parent", "1:", "classid", "1:1", "htb",
         "rate", f"{bits}bit", "ceil", f"{bits}bit", "quantum", "30280"],
    ]  # fmt: skip
    if queues == 1:
        return cmds + [[*tc, "qdisc", "add", "dev", dev, "parent", "1:1", "handle", "10:", "pfifo", "limit", "100"]]  # fmt: skip
    floor = max(8000, bits // 1000)
    for q in range(queues):
        cmds += [
            [*tc, "class", "add", "dev", dev, "parent", "1:1", "classid", f"1:{10 + q:x}", "htb",
             "rate", f"{floor}bit", "ceil", f"{bits}bit", "prio", str(q), "quantum", "30280"],
            [*tc, "qdisc", "add", "dev", dev, "parent", f"1:{10 + q:x}", "handle", f"{10 + q:x}:", "pfifo", "limit", "100"],
        ]  # fmt: skip
    for d in range(1, 8):
        cmds.append([*tc, "filter", "add", "dev", dev, "parent", "1:", "protocol", "ip", "prio", "1", "u32",
                     "match", "ip", "dsfield", f"{d << 2:#04x}", "0xfc", "flowid", f"1:{10 + min(d, queues - 1):x}"])  # fmt: skip
    return cmds


@contextlib.contextmanager
def own_tcp_tables(buckets: int = HOST_EHASH_BUCKETS):
    """Network namespaces created inside get their own TCP established-hash
    table of ``buckets`` buckets (``net.ipv4.tcp_child_ehash_entries``, Linux
    6.1 and later), as separate hosts have; the setting is restored on exit.
    Yields ``buckets``, or ``None`` where the kernel has no such setting (the
    namespaces then share the machine's table)."""
    try:
        with open(EHASH_SYSCTL, encoding="ascii") as fh:
            old = fh.read().strip()
    except OSError:
        yield None
        return
    with open(EHASH_SYSCTL, "w", encoding="ascii") as fh:
        fh.write(str(buckets))
    try:
        yield buckets
    finally:
        with open(EHASH_SYSCTL, "w", encoding="ascii") as fh:
            fh.write(old)


def _switch_commands() -> list[list[str]]:
    """The switch namespace: a data bridge, a control bridge and the master's
    control link into it."""
    cmds: list[list[str]] = [["ip", "netns", "add", SWITCH]]
    sw = ["ip", "-n", SWITCH]
    cmds += [
        [*sw, "link", "set", "lo", "up"],
        [*sw, "link", "add", "br0", "type", "bridge"],
        [*sw, "link", "add", "brc", "type", "bridge"],
        [*sw, "link", "set", "br0", "up"],
        [*sw, "link", "set", "brc", "up"],
        [
            "ip",
            "link",
            "add",
            f"{PREFIX}-ctl",
            "type",
            "veth",
            "peer",
            "name",
            "ctl",
            "netns",
            SWITCH,
        ],
        ["ip", "addr", "add", f"{MASTER_IP}/24", "dev", f"{PREFIX}-ctl"],
        ["ip", "link", "set", f"{PREFIX}-ctl", "up"],
        [*sw, "link", "set", "ctl", "master", "brc", "up"],
    ]
    return cmds


def _host_commands(i: int, bits: int, queues: int = 1) -> list[list[str]]:
    """Host `i`'s namespace: its data and control links to the switch, with its
    port shaped to `bits` per second both ways (egress HTB, ingress through an ifb)."""
    ns = host_ns(i)
    h = ["ip", "-n", ns]
    sw = ["ip", "-n", SWITCH]
    return [
        ["ip", "netns", "add", ns],
        [*h, "link", "set", "lo", "up"],
        # Hosts run a loss-based TCP, CUBIC or else Reno (this machine defaults to
        # BBR, whose bandwidth probing takes tens of RTTs to climb back after a
        # flow is paused and resumed; a namespace gets CUBIC only if the
        # machine-wide net.ipv4.tcp_allowed_congestion_control lists it).
        ["ip", "netns", "exec", ns, "sh", "-c", f"{CC} cubic > {CC_FILE} 2>/dev/null || {CC} reno > {CC_FILE}"],
        [*sw, "link", "add", f"p{i}", "type", "veth", "peer", "name", "eth0", "netns", ns],
        [*sw, "link", "add", f"c{i}", "type", "veth", "peer", "name", "ctl0", "netns", ns],
        [*h, "addr", "add", f"{host_ip(i)}/24", "dev", "eth0"],
        [*h, "addr", "add", f"{CTL_NET}.{i + 1}/24", "dev", "ctl0"],
        # One MSS per packet (no GSO super-packets): an HTB class held at a low
        # rate then releases a packet every few ms instead of a 64 KB burst a
        # second, so TCP keeps its ACK clock and never backs off into RTOs.
        [*h, "link", "set", "dev", "eth0", "gso_max_segs", "1"],
        [*h, "link", "set", "eth0", "up"],
        [*h, "link", "set", "ctl0", "up"],
        [*sw, "link", "set", f"p{i}", "master", "br0", "up"],
        [*sw, "link", "set", f"c{i}", "master", "brc", "up"],
        [*sw, "link", "add", f"ifb{i}", "type", "ifb"],
        [*sw, "link", "set", f"ifb{i}", "txqueuelen", "1000", "up"],
        *_shape(SWITCH, f"p{i}", bits, queues),
        *_shape(SWITCH, f"ifb{i}", bits, queues),
        ["tc", "-n", SWITCH, "qdisc", "add", "dev", f"p{i}", "handle", "ffff:", "ingress"],
        ["tc", "-n", SWITCH, "filter", "add", "dev", f"p{i}", "parent", "ffff:", "protocol", "all", "u32",
         "match", "u32", "0", "0", "action", "mirred", "egress", "redirect", "dev", f"ifb{i}"],
    ]  # fmt: skip


def up(hosts: int, gbps: float, switch_queues: int = 1) -> dict:
    """Builds the testbed (removing any leftover first); returns its description.
    ``switch_queues`` > 1: the switch's ports have that many strict-priority
    queues, chosen by DSCP (:func:`_shape`)."""
    _need_tools()
    if not 1 <= switch_queues <= 8:
        raise CoflowkitError(f"testbed: --switch-queues must be in 1..8, got {switch_queues}")
    if not 2 <= hosts <= 200:
        raise CoflowkitError(f"testbed: --hosts must be in 2..200, got {hosts}")
    if not 0.001 <= gbps <= 40:
        raise CoflowkitError(f"testbed: --gbps must be in [0.001, 40], got {gbps}")
    down()
    bits = int(round(gbps * 1e9))
    cmds = _switch_commands()
    for i in range(hosts):
        cmds += _host_commands(i, bits, switch_queues)
    try:
        with own_tcp_tables() as buckets:
            for c in cmds:
                _sh(c)
    except CoflowkitError:
        down()
        raise
    state = {
        "hosts": hosts,
        "gbps": gbps,
        "switch_queues": switch_queues,
        "layout": LAYOUT,
        "tcp_ehash_buckets_per_host": buckets,
        "ips": [host_ip(i) for i in range(hosts)],
        "master": MASTER_IP,
    }
    with open(STATE_FILE, "w", encoding="utf-8") as fh:
        json.dump(state, fh)
    return state


def state() -> dict | None:
    if not os.path.exists(STATE_FILE) or SWITCH not in namespaces():
        return None
    with open(STATE_FILE, encoding="utf-8") as fh:
        return json.load(fh)


# -- workload ----------------------------------------------------------------


def workload(
    trace: str,
    hosts: int,
    coflows: int,
    bytes_scale: float,
    time_scale: float,
    min_flow: float,
    layout: str = "shuffle",
) -> Workload:
    """The testbed's workload: the first ``coflows`` coflows of ``trace``, sizes ×
    ``bytes_scale``, times × ``time_scale``, racks spread on ``hosts`` ports with
    even bytes (``scale`` transform, ``mapping=balanced``); then one flow per
    (coflow, source host, destination host) carrying their bytes (a host opens one
    connection per peer and shuffle), no flow from a host to itself (it would not
    cross the network), and every flow at least ``min_flow`` bytes (so the agents,
    which ignore flows below 100 KB, see all of them).

    ``layout="many-to-one"``: the Stream paper's testbed (§IV-A: senders on
    six machines, receivers on one): every flow goes to host ``hosts - 2``
    and comes from host ``src mod (hosts - 2)``; the last host stays idle
    (the paper ran background iperf traffic from it, which this does not)."""
    if layout not in ("shuffle", "many-to-one"):
        raise CoflowkitError(f"testbed: layout must be shuffle or many-to-one, got {layout!r}")
    if layout == "many-to-one" and hosts < 3:
        raise CoflowkitError("testbed: many-to-one needs at least 3 hosts")
    w = api.load_trace(trace)
    w = T.apply(
        T.apply(w, "head", count=coflows),
        "scale",
        bytes=bytes_scale,
        ports=hosts,
        time=time_scale,
        mapping="balanced",
    )
    f = T.Flows(w)
    if layout == "many-to-one":
        f.src = f.src % (hosts - 2)
        f.dst = np.full_like(f.dst, hosts - 2)
    f.keep(f.src != f.dst)
    if f.num_flows == 0:
        raise CoflowkitError(
            f"testbed: no flow between distinct hosts in the first {coflows} coflows"
        )
    key = (f.coflow.astype(np.int64) * hosts + f.src) * hosts + f.dst
    _, first, inv = np.unique(key, return_index=True, return_inverse=True)
    total = np.bincount(inv, weights=f.bytes)
    start = np.full(len(first), np.inf)
    np.minimum.at(start, inv, f.start_s)
    keep = np.zeros(len(key), dtype=bool)
    keep[first] = True
    f.bytes = np.maximum(np.round(total[inv]), min_flow)
    f.start_s = start[inv]
    f.depends_on = [[] for _ in range(f.num_flows)]
    f.keep(keep)
    return f.build(f"testbed({os.path.basename(trace)}, {coflows} coflows)")


def plan(w: Workload, t0: float, ips: list[str], deadline_s: float) -> dict:
    c = w.flow_columns()
    flows = []
    next_port: dict[int, int] = {}
    for i in range(len(c["flow_id"])):
        dst = int(c["dst"][i])
        port = next_port.get(dst, 20000)
        next_port[dst] = port + 1
        flows.append(
            {
                "id": i,
                "coflow": int(c["coflow_id"][i]),
                "src": int(c["src"][i]),
                "dst": dst,
                "port": port,
                "bytes": int(c["bytes"][i]),
                "start_s": float(c["start_s"][i]),
            }
        )
    return {"t0": t0, "hosts": ips, "flows": flows, "deadline_s": deadline_s}


# -- processes ----------------------------------------------------------------


def read_token(directory: str) -> str:
    with open(os.path.join(directory, "tokens"), encoding="utf-8") as fh:
        return fh.read().split()[0]


def _http(url: str, body: dict | None = None, timeout: float = 5.0, token: str | None = None):
    data = None if body is None else json.dumps(body).encode()
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    req = urllib.request.Request(url, data=data, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            raw = r.read()
    except urllib.error.HTTPError as e:
        raise CoflowkitError(
            f"testbed: master {url}: {e.code} {e.read().decode(errors='replace')}"
        ) from None
    return raw.decode() if url.endswith("/metrics") else json.loads(raw)


def measure_goodput(
    ips: list[str], gbps: float, out: str, seconds: float = 2.0, traffic_priority: str = "normal"
) -> float:
    """Payload bytes/s per direction of a link carrying data both ways: one TCP
    flow host 0 -> host 1 and one host 1 -> host 0, at once, for ``seconds``
    (no agent). Both ways, as in a shuffle where hosts send and receive: each
    link then also carries the ACKs of the other direction's data (~2 %)."""
    size = int(gbps * 1e9 / 8 * seconds)
    p = {"t0": time.time() + 1.0, "hosts": ips[:2], "deadline_s": 60,
         "flows": [{"id": i, "coflow": 0, "src": i, "dst": 1 - i, "port": 19998 + i, "bytes": size, "start_s": 0.0}
                   for i in (0, 1)]}  # fmt: skip
    res = _run_workers(p, out, "goodput", hosts=2, priority=traffic_priority)
    rates = []
    for f in res["flows"]:
        if f["error"]:
            raise CoflowkitError(f"testbed: goodput probe failed: {f['error']}")
        # The whole flow, slow start included: it costs a few RTTs of ~1 ms here.
        rates.append(size / (f["end"] - f["start"]))
    return sum(rates) / len(rates)


GO_MARGIN_S = 0.5
"""Time from the moment every traffic worker listens to the replay's start."""


TRAFFIC_PRIORITIES = ("normal", "control")
"""The traffic workers' scheduling: ``normal`` (the default, as every run
before 2026-11-28), or ``control``: the real-time priority of the master and
agents (:data:`CONTROL_PRIORITY`). On this machine's 2 cores the agents at
real-time priority can starve normal workers, which then start flows late
(docs/results/testbed/stream-decentralized, "Correction"); on a cluster the
applications have cores of their own."""


def _run_workers(p: dict, out: str, tag: str, hosts: int, priority: str = "normal") -> dict:
    """Starts one traffic worker per host, waits until every one listens, then
    sets ``p["t0"]`` to :data:`GO_MARGIN_S` from then and tells them (the
    worker's ``--go`` file), so the replay starts on time however slowly the
    workers started. Returns :func:`traffic.collect` of their results."""
    from coflowkit.runtime import traffic

    path = os.path.join(out, f"{tag}-plan.json")
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(p, fh)
    go = os.path.join(out, f"{tag}-go.json")
    if os.path.exists(go):
        os.unlink(go)
    procs = []
    for i in range(hosts):
        res = os.path.join(out, f"{tag}-host{i}.json")
        ready = os.path.join(out, f"{tag}-ready{i}")
        if os.path.exists(ready):
            os.unlink(ready)
        procs.append(
            (res, ready, subprocess.Popen(
                _python(host_ns(i), "coflowkit.runtime.traffic", "--plan", path, "--host", str(i),
                        "--out", res, "--ready", ready, "--go", go, control=priority == "control"),
                env=child_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True))
        )  # fmt: skip
    try:
        _await_ready(procs)
    except BaseException:
        for _, _, proc in procs:
            proc.kill()
        raise
    p["t0"] = time.time() + GO_MARGIN_S
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(p, fh)
    tmp = go + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump({"t0": p["t0"]}, fh)
    os.replace(tmp, go)
    results = []
    for res, _, proc in procs:
        try:
            _, err = proc.communicate(timeout=p["deadline_s"] + (p["t0"] - time.time()) + 30)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise CoflowkitError(f"testbed: traffic worker for {res} did not finish") from None
        if proc.returncode not in (0, 3):
            raise CoflowkitError(
                f"testbed: traffic worker failed ({proc.returncode}): {err.strip()}"
            )
        with open(res, encoding="utf-8") as fh:
            results.append(json.load(fh))
    return traffic.collect(results, p)


def _await_ready(procs: list, timeout_s: float = 60.0) -> None:
    """Waits until every worker of ``procs`` (result, ready file, process) listens;
    a :class:`CoflowkitError` naming the host if one exits first or is not ready
    in ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    for i, (_, ready, proc) in enumerate(procs):
        while not os.path.exists(ready):
            if proc.poll() is not None:
                err = proc.stderr.read().strip() if proc.stderr else ""
                raise CoflowkitError(
                    f"testbed: traffic worker of host {i} exited ({proc.returncode}) "
                    f"before listening: {err}"
                )
            if time.monotonic() > deadline:
                raise CoflowkitError(
                    f"testbed: traffic worker of host {i} not listening after {timeout_s:g} s"
                )
            time.sleep(0.01)


class Cluster:
    """A master and one agent per host, started and stopped together."""

    def __init__(
        self,
        policy: str,
        params: dict,
        hosts: int,
        gbps: float,
        goodput: float,
        out: str,
        interval_ms: int,
        membership: str = "registry",
        threshold: int = 100_000,
        release: str = "change",
        paused_floor: float = PAUSED_FLOOR,
    ):
        self.out = out
        tls_dir = make_identities(os.path.join(out, "tls"), hosts)
        self.token = read_token(tls_dir)
        self.http = "127.0.0.1:7471"
        params_args = [a for k, v in params.items() for a in ("--param", f"{k}={v}")]
        self.logs = [open(os.path.join(out, "master.log"), "w")]
        self.master = subprocess.Popen(
            _python(None, "coflowkit", "master", "--policy", policy, *params_args, "--hosts", str(hosts),
                    "--gbps", str(gbps), "--goodput", f"{goodput * 8 / (gbps * 1e9):.6f}",
                    "--listen", f"{MASTER_IP}:{MASTER_PORT}", "--http", self.http,
                    "--tls-dir", tls_dir, "--api-tokens", os.path.join(tls_dir, "tokens"),
                    "--state", "none", "--interval-ms", str(interval_ms),
                    "--membership", membership, "--paused-floor", str(paused_floor),
                    control=True),
            env=child_env(), stdout=self.logs[0], stderr=subprocess.STDOUT)  # fmt: skip
        agent_args = ["--gbps", str(gbps), "--tls-dir", tls_dir, "--interval-ms", str(interval_ms),
                      "--timeout-rounds", "25", "--threshold", str(threshold), "--release", release,
                      "--paused-floor", str(paused_floor)]  # fmt: skip
        self.agents = [self._start_agent(i, agent_args) for i in range(hosts)]
        self._wait_connected(hosts)

    def _start_agent(self, i: int, args: list[str]) -> subprocess.Popen:
        """Host ``i``'s agent in its namespace, logging to ``agent{i}.log``."""
        log = open(os.path.join(self.out, f"agent{i}.log"), "w")
        self.logs.append(log)
        argv = _python(host_ns(i), "coflowkit", "agent", "--master", f"{MASTER_IP}:{MASTER_PORT}",
                       "--host", str(i), "--dev", "eth0", *args, control=True)  # fmt: skip
        return subprocess.Popen(argv, env=child_env(), stdout=log, stderr=subprocess.STDOUT)

    def _wait_connected(self, hosts: int) -> None:
        """Until every agent has said hello to the master (at most 30 s)."""
        out = self.out
        deadline = time.time() + 30
        while True:
            if self.master.poll() is not None:
                raise CoflowkitError(
                    f"testbed: the master exited ({self.master.returncode}); see {out}/master.log"
                )
            try:
                if self.get("/api/health", timeout=1)["agents"] == hosts:
                    break
            except OSError:
                pass
            if time.time() > deadline:
                self.stop()
                raise CoflowkitError(
                    f"testbed: agents did not all connect in 30 s; see {out}/agent*.log"
                )
            time.sleep(0.2)

    def register(self, w: Workload, p: dict) -> None:
        by: dict[int, list] = {}
        for f in p["flows"]:
            by.setdefault(f["coflow"], []).append(
                {"src": f["src"], "dst": f["dst"], "dst_port": f["port"], "size": f["bytes"]}
            )
        for cid, flows in by.items():
            _http(f"http://{self.http}/api/coflows", {"id": cid, "flows": flows}, token=self.token)

    def get(self, path: str, timeout: float = 5.0):
        return _http(f"http://{self.http}{path}", token=self.token, timeout=timeout)

    def metrics(self) -> str:
        return self.get("/metrics")

    def stop(self) -> None:
        stop_all(self.agents)
        self.master.send_signal(signal.SIGTERM)
        try:
            self.master.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.master.kill()
        for log in self.logs:
            log.close()


class ProgressSampler:
    """Polls the master's ``GET /api/coflows`` and ``GET /api/flows`` every
    ``every_s`` seconds in a thread and keeps ``(wall time, coflow, bytes_sent)``
    and ``(wall time, coflow, slot, src, dst, assigned rate)``; :meth:`stop`
    writes the times from ``plan["t0"]`` as it is then (the replay's start is
    set only once every traffic worker listens, after sampling began). A failed
    poll (the master busy for a moment) is skipped, and counted."""

    def __init__(self, cluster: Cluster, plan: dict, every_s: float):
        import threading

        self.rows: list[tuple[float, int, float]] = []
        self.rates: list[tuple[float, int, int, int, int, float]] = []
        self.failed = 0
        self._plan = plan
        self._halt = threading.Event()

        def loop() -> None:
            while not self._halt.wait(every_s):
                now = time.time()
                try:
                    coflows = cluster.get("/api/coflows", timeout=1.0)
                    flows = cluster.get("/api/flows", timeout=1.0)
                except (OSError, ValueError, CoflowkitError):
                    self.failed += 1
                    continue
                for c in coflows:
                    self.rows.append((now, int(c["id"]), float(c["bytes_sent"])))
                for f in flows:
                    self.rates.append((now, int(f["coflow"]), int(f["slot"]), int(f["src"]),
                                       int(f["dst"]), float(f["rate_bytes_per_s"])))  # fmt: skip

        self._thread = threading.Thread(target=loop, daemon=True)
        self._thread.start()

    def stop(self, path: str) -> None:
        """Stops polling and writes ``path`` (time_s, coflow_id, bytes_sent) and,
        beside it, ``rates.csv`` (time_s, coflow_id, slot, src, dst,
        rate_bytes_per_s: every flow the master scheduled, as each poll saw it)."""
        import pandas as pd

        self._halt.set()
        self._thread.join(timeout=5)
        t0 = float(self._plan["t0"])
        rows = [(t - t0, k, b) for t, k, b in self.rows]
        pd.DataFrame(rows, columns=["time_s", "coflow_id", "bytes_sent"]).to_csv(path, index=False)
        rates = [(t - t0, *rest) for t, *rest in self.rates]
        cols = ["time_s", "coflow_id", "slot", "src", "dst", "rate_bytes_per_s"]
        pd.DataFrame(rates, columns=cols).to_csv(
            os.path.join(os.path.dirname(path), "rates.csv"), index=False
        )


def sim_fabric(hosts: int, goodput_bytes_per_s: float) -> str:
    """The simulator's big switch whose links carry ``goodput_bytes_per_s``.

    The simulator counts "gbps" as CoflowSim does (1024³ bit/s, so that traces
    compare with published CoflowSim results), while tc and the testbed's
    ``--gbps`` count 10⁹ bit/s: the rate is converted, not copied."""
    gbps = goodput_bytes_per_s / T.GBPS_BYTES_PER_S
    return f"bigswitch:ports={hosts},gbps={gbps:.9g}"


def run(
    trace: str,
    policy: str,
    params: dict,
    out: str,
    hosts: int = 8,
    gbps: float = DEFAULT_GBPS,
    coflows: int = 40,
    bytes_scale: float = 0.005,
    time_scale: float = 0.1,
    min_flow: float = 300e3,
    interval_ms: int = 20,
    membership: str = "registry",
    threshold: int = 100_000,
    **kw,
) -> dict:
    """Replays the scaled workload for real under ``policy`` and simulates it; see the
    module doc. ``threshold``: the agents' ``--threshold`` (bytes acknowledged
    before a flow is reported); ``kw``: :func:`run_workload`'s decentralized
    options."""
    w = workload(
        trace, hosts, coflows, bytes_scale, time_scale, min_flow, kw.pop("layout", "shuffle")
    )
    return run_workload(w, policy, params, out, hosts, gbps, interval_ms, membership=membership,
                        threshold=threshold, **kw)  # fmt: skip


def run_workload(
    w: Workload,
    policy: str,
    params: dict,
    out: str,
    hosts: int,
    gbps: float,
    interval_ms: int = 20,
    sample_s: float | None = None,
    membership: str = "registry",
    threshold: int = 100_000,
    decentralized: bool = False,
    observe_only: bool = False,
    switch_queues: int = 1,
    traffic_priority: str = "normal",
    tell_fraction: float | None = None,
    release: str = "change",
    paused_floor: float = PAUSED_FLOOR,
) -> dict:
    """Replays ``w`` (flows between distinct hosts ``0..hosts-1``, each at least
    100 KB so the agents see it) for real under ``policy`` on the testbed, simulates
    it on the measured goodput, and writes both and their comparison to ``out``.
    ``sample_s``: also write ``progress.csv``, every coflow's acknowledged bytes as
    the master sees them (``GET /api/coflows``), sampled every ``sample_s`` seconds
    from the replay's start. ``membership="none"``: no coflow is registered, so
    the master sees every flow as a coflow of its own; a policy that identifies
    coflows itself (``coda`` with ``labels=identify``) groups them, and its labels
    are scored against the workload's coflows (``identification.json``).
    ``decentralized``: no master; every host runs ``coflowkit agent
    --decentralized stream`` (``policy`` must be stream) and registers its
    coflows on its own agent; with ``observe_only`` the agents enforce nothing
    (plain TCP, simulated as ``fair``). ``switch_queues``: strict-priority
    queues per switch port, by DSCP (:func:`up`). ``traffic_priority``: the
    traffic workers' scheduling (:data:`TRAFFIC_PRIORITIES`). ``tell_fraction``:
    the decentralized agents' ``--tell-fraction`` (``None``: their default).
    ``release``: the agents' ``--release``; ``paused_floor``: the master's and
    the agents' ``--paused-floor``."""
    _check_options(policy, membership, decentralized, observe_only, traffic_priority,
                   tell_fraction, sample_s, release, paused_floor)  # fmt: skip
    os.makedirs(out, exist_ok=True)
    with hold(out):
        st = _bed(hosts, gbps, switch_queues)
        goodput = measure_goodput(st["ips"], gbps, out, traffic_priority=traffic_priority)
        if observe_only:
            policy, params = "fair", {}
        if decentralized:
            from coflowkit.runtime.testbed_stream import DecentralCluster

            cluster = DecentralCluster(
                params, hosts, gbps, out, interval_ms, observe_only, tell_fraction
            )
        else:
            cluster = Cluster(policy, params, hosts, gbps, goodput, out, interval_ms, membership, threshold, release, paused_floor)  # fmt: skip
        try:
            sim_w = w.with_fabric(sim_fabric(hosts, goodput))
            sim = api.simulate(sim_w, policy, params)
            makespan = float(np.nanmax(sim.coflows["finish_s"].to_numpy()))
            p = plan(w, time.time() + 3.0, st["ips"], deadline_s=max(60.0, 4 * makespan))
            if decentralized:
                real, prom, extra = _replay_decentralized(cluster, p, out, hosts, traffic_priority)
                extra["decentralized"] = "tcp (agents observe only)" if observe_only else "stream"
            else:
                real, prom, extra = _replay_with_master(
                    cluster, w, p, out, hosts, membership, sample_s, traffic_priority
                )
        finally:
            cluster.stop()
    summary = _compare(w, sim_w, sim, real, prom, policy, params, hosts, gbps, goodput, out)
    if not decentralized:
        summary["interval_model"] = _compare_interval(sim_w, policy, params, interval_ms, out)
    summary.update(extra, membership=membership, agent_threshold_bytes=threshold,
                   switch_queues=switch_queues, traffic_priority=traffic_priority,
                   traffic_schedulers=real.get("schedulers", []),
                   tell_fraction=tell_fraction, agent_release=release,
                   paused_floor=paused_floor)  # fmt: skip
    with open(os.path.join(out, "comparison.json"), "w", encoding="utf-8") as fh:
        json.dump(summary, fh, indent=2, sort_keys=True)
        fh.write("\n")
    return summary


def _check_options(
    policy, membership, decentralized, observe_only, traffic_priority, tell_fraction,
    sample_s=None, release="change", paused_floor=PAUSED_FLOOR,
):  # fmt: skip
    """:func:`run_workload`'s options that are out of range or do not go
    together, refused before anything is touched."""
    if sample_s is not None and not (0.001 <= sample_s <= 60.0):
        raise CoflowkitError(f"testbed: --sample-ms must be in [1, 60000], got {sample_s * 1e3!r}")
    if release not in RELEASES:
        raise CoflowkitError(
            f"testbed: --agent-release must be one of {', '.join(RELEASES)}, got {release!r}"
        )
    check_paused_floor(paused_floor, "testbed: --paused-floor")
    if decentralized and paused_floor != PAUSED_FLOOR:
        # Decentralized agents decide classes, never pause a flow at a rate.
        raise CoflowkitError(
            "testbed: --paused-floor is for runs with a master, not --decentralized"
        )
    if traffic_priority not in TRAFFIC_PRIORITIES:
        raise CoflowkitError(
            f"testbed: traffic priority must be one of {', '.join(TRAFFIC_PRIORITIES)}, "
            f"got {traffic_priority!r}"
        )
    if membership not in ("registry", "none"):
        raise CoflowkitError(f"testbed: membership must be registry or none, got {membership!r}")
    if decentralized and policy != "stream":
        raise CoflowkitError(f"testbed: only stream runs decentralized, not {policy}")
    if tell_fraction is not None and not (decentralized and 0.0 < tell_fraction <= 1.0):
        raise CoflowkitError(
            f"testbed: --tell-fraction is for --decentralized runs, in (0, 1]; got {tell_fraction!r}"
        )
    if observe_only and not decentralized:
        raise CoflowkitError("testbed: --observe-only is for --decentralized runs")


def _bed(hosts: int, gbps: float, switch_queues: int) -> dict:
    """The testbed of this shape: the one that is up, or a new one."""
    st = state()
    if (st is None or st["hosts"] != hosts or st["gbps"] != gbps
            or st.get("switch_queues", 1) != switch_queues or st.get("layout") != LAYOUT):  # fmt: skip
        st = up(hosts, gbps, switch_queues)
    return st


def _replay_with_master(cluster, w, p, out, hosts, membership, sample_s, priority) -> tuple:
    """Registers the coflows (unless ``membership`` is none), replays ``p``, and
    reads the master's metrics and labels: ``(real, metrics text, extra summary)``."""
    sampler = None
    try:
        if membership == "registry":
            cluster.register(w, p)
        if sample_s:
            sampler = ProgressSampler(cluster, p, sample_s)
        real = _run_workers(p, out, "traffic", hosts, priority)
    finally:
        if sampler is not None:
            sampler.stop(os.path.join(out, "progress.csv"))
    extra = {}
    prom = cluster.metrics()
    labels = cluster.get("/api/labels")
    if any(True for _ in labels):
        extra["identification"] = identification(p, labels, out)
    return real, prom, extra


def _replay_decentralized(cluster, p, out, hosts, priority) -> tuple:
    """Registers each coflow on its receivers' agents, then replays ``p`` (its
    clock starts once every traffic worker listens, after the registrations), and
    reads every agent's health: ``(real, "", extra summary)``."""
    cluster.register(p)
    real = _run_workers(p, out, "traffic", hosts, priority)
    return real, "", {"agents": cluster.health()}
