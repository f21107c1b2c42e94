"""The benchmark harness: each policy as a user runs it, timed from outside.

For every policy it runs `python -m coflowkit simulate --trace T --policy P --out DIR
--quiet` in a child process and reports the wall time of that whole command (start-up,
parsing, simulation and output) and the child's peak resident memory (ru_maxrss from
wait4, so Rust's allocations count). `--record SECONDS|every` adds the recording of
the instantaneous metrics, to measure what it costs. Benchmarks are not tests: numbers depend on the
machine; compare ratios from one run.
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import tempfile
import time

DEFAULT_TRACE = os.path.join("..", "shared", "traces", "FB2010-1Hr-150-0.txt")


# `coflowkit bench --timeout`'s default (seconds per policy; cli.py's add_bench sets it).
DEFAULT_TIMEOUT_S = 1800.0


def run_one(
    trace: str,
    policy: str,
    timeout: float,
    record: str | None = None,
    transforms: tuple[str, ...] = (),
    fabric: str | None = None,
    first: int | None = None,
    engine: str | None = None,
) -> dict:
    """Times one `simulate`; ``policy`` may carry parameters: ``coda:labels=identify``.
    Returns ``status``, ``wall_s``, ``rss_mib`` (peak), ``mean_cct_s``, ``events``,
    ``policy_calls`` and ``mean_active_flows`` (the last four NaN or 0 unless ok)."""
    name, *kvs = policy.split(":")
    extra = [a for kv in kvs for a in ("--param", kv)]
    extra += [a for t in transforms for a in ("--transform", t)]
    extra += ["--fabric", fabric] if fabric else []
    extra += ["--first", str(first)] if first else []
    extra += ["--engine", engine] if engine else []
    with tempfile.TemporaryDirectory() as out:
        cmd = [
            sys.executable,
            "-m",
            "coflowkit",
            "simulate",
            "--trace",
            trace,
            "--policy",
            name,
            *extra,
            "--out",
            out,
            "--quiet",
        ] + (["--record", record] if record else [])
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = t0 + timeout
        status = "ok"
        while True:
            pid, code, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                proc.kill()
                pid, code, usage = os.wait4(proc.pid, 0)
                status = f"timeout>{timeout:.0f}s"
                break
            time.sleep(0.02)
        wall = time.perf_counter() - t0
        if status == "ok" and code != 0:
            err = proc.stderr.read().decode(errors="replace").strip().splitlines()
            status = "failed: " + (err[-1] if err else f"exit {code}")
        proc.stderr.close()
        row = {
            "status": status,
            "wall_s": wall,
            "rss_mib": usage.ru_maxrss / 1024.0,
            "mean_cct_s": float("nan"),
            "events": 0,
            "policy_calls": 0,
            "mean_active_flows": 0.0,
        }
        if status == "ok":
            import json

            with open(os.path.join(out, "summary.json"), encoding="utf-8") as fh:
                d = json.load(fh)
            row["mean_cct_s"] = d["summary"]["all"]["cct_s"]["mean"]
            for k in ("events", "policy_calls", "mean_active_flows"):
                row[k] = d[k]
        return row


_ROUTE_CHILD = """
import json, sys, time
t0 = time.perf_counter()
import coflowkit as ck
w = ck.load_trace(sys.argv[1])
if sys.argv[3]:
    w = w.head(int(sys.argv[3]))
t1 = time.perf_counter()
w = w.with_fabric(sys.argv[2])
t2 = time.perf_counter()
print(json.dumps({"load_s": t1 - t0, "route_s": t2 - t1, "flows": w.num_flows}))
"""


def route_cost(trace: str, fabric: str, first: int | None = None) -> tuple[float, float]:
    """Loading and routing alone, in a child process: (load s, route s)."""
    import json

    proc = subprocess.Popen(
        [sys.executable, "-c", _ROUTE_CHILD, trace, fabric, str(first or "")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    out, err = proc.communicate()
    if proc.returncode != 0:
        lines = err.decode(errors="replace").strip().splitlines()
        raise RuntimeError(lines[-1] if lines else f"exit {proc.returncode}")
    d = json.loads(out)
    return d["load_s"], d["route_s"]


def machine() -> str:
    """One line: CPU model, cores, memory, OS, Python, and the load average now
    (a loaded machine makes every time in the table longer)."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            cpu = next(ln.split(":", 1)[1].strip() for ln in fh if ln.startswith("model name"))
    except (OSError, StopIteration):
        pass
    mem = ""
    try:
        with open("/proc/meminfo", encoding="utf-8") as fh:
            kib = int(next(ln.split()[1] for ln in fh if ln.startswith("MemTotal")))
        mem = f", {kib / 1048576:.0f} GiB"
    except (OSError, StopIteration, ValueError):
        pass
    load = ""
    if hasattr(os, "getloadavg"):
        load = ", load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())
    return (
        f"{cpu}, {os.cpu_count()} cores{mem}, {platform.system()} {platform.release()}, "
        f"Python {platform.python_version()}{load}"
    )


def source_commit(dirs: list[str]) -> str:
    """The commit of the first of `dirs` inside a coflowkit checkout (with `+dirty`
    when a file outside docs/results has uncommitted changes), or "unknown". A
    directory inside some other git repository does not count: an installed
    package can sit in one (pyenv's own checkout holds its site-packages)."""

    def git(cwd: str, *a: str) -> str:
        try:
            r = subprocess.run(["git", *a], cwd=cwd, capture_output=True, text=True, timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            return ""
        return r.stdout.strip() if r.returncode == 0 else ""

    for d in dirs:
        top = git(d, "rev-parse", "--show-toplevel")
        if not top or not os.path.isdir(os.path.join(top, "crates", "coflowkit-sim")):
            continue
        commit = git(top, "rev-parse", "--short", "HEAD")
        if not commit:
            continue
        # Committed results (docs/results) being rewritten by a run do not make the
        # code dirty.
        if git(top, "status", "--porcelain", "--untracked-files=no", "--", ".",
               ":(exclude)docs/results"):  # fmt: skip
            commit += "+dirty"
        return commit
    return "unknown"


def provenance() -> str:
    """coflowkit version, git commit and UTC date. The commit is that of the
    checkout the package was imported from, else of the one the command runs in
    (an installed package, as `make test` leaves it, run from its checkout)."""
    import datetime

    from coflowkit import __version__

    here = os.path.dirname(os.path.abspath(__file__))
    commit = source_commit([here, os.getcwd()])
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return f"coflowkit {__version__}, commit {commit}, {date}"


COFLOWSIM_COLUMNS = (
    "Under `--engine coflowsim`: events are the time steps executed literally (CoflowSim "
    "executes every one), policy calls the rate recomputations at its admission and "
    "departure hooks; mean active flows is not measured."
)


def main(args) -> int:
    from coflowkit import api

    trace = args.trace or DEFAULT_TRACE
    if not os.path.exists(trace):
        print(f"coflowkit: error: {trace}: no such file", file=sys.stderr)
        return 2
    engine = getattr(args, "engine", None)
    names = valid = [p["name"] for p in api.policies()]
    if engine and api.parse_engine(engine)[0] == "coflowsim":
        # by default the eight it maps; the others run on its hooks when asked for
        names = list(api._core.coflowsim_policies())
    if args.policies:
        want = [p.strip() for p in args.policies.split(",") if p.strip()]
        for p in want:
            if p.split(":")[0] not in valid:
                print(
                    f"coflowkit: error: unknown policy '{p}'; valid policies: {', '.join(valid)}",
                    file=sys.stderr,
                )
                return 2
        names = want
    lines = [
        f"Machine: {machine()}",
        f"Version: {provenance()}",
        f"Command: coflowkit bench --trace {trace}"
        + (f" --policies {args.policies}" if args.policies else "")
        + (f" --record {args.record}" if getattr(args, "record", None) else "")
        + "".join(f" --transform {t}" for t in getattr(args, "transform", None) or ())
        + (f" --fabric {args.fabric}" if getattr(args, "fabric", None) else "")
        + (f" --first {args.first}" if getattr(args, "first", None) else "")
        + (f" --engine {engine}" if engine else "")
        + (f" --timeout {args.timeout:g}" if args.timeout != DEFAULT_TIMEOUT_S else ""),
        "",
        "| policy | status | wall time (s) | peak RSS (MiB) | mean CCT (s) | events "
        "| policy calls | mean active flows |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    if engine and api.parse_engine(engine)[0] == "coflowsim":
        lines.insert(-3, COFLOWSIM_COLUMNS)
    fabric = getattr(args, "fabric", None)
    first = getattr(args, "first", None)
    if fabric:
        load_s, route_s = route_cost(trace, fabric, first)
        lines.insert(
            -3,
            f"Path computation alone (load the trace, then route every flow on {fabric}): "
            f"load {load_s:.2f} s, routing {route_s:.2f} s",
        )
    print("\n".join(lines), flush=True)
    started = time.perf_counter()
    for name in names:
        r = run_one(
            trace,
            name,
            args.timeout,
            getattr(args, "record", None),
            tuple(getattr(args, "transform", None) or ()),
            fabric,
            first,
            engine,
        )
        cct = f"{r['mean_cct_s']:.4f}" if r["status"] == "ok" else "-"
        row = (
            f"| {name} | {r['status']} | {r['wall_s']:.2f} | {r['rss_mib']:.0f} | {cct} "
            f"| {r['events']} | {r['policy_calls']} | {r['mean_active_flows']:.0f} |"
        )
        lines.append(row)
        print(row, flush=True)
    tail = f"\nWall time of the whole run: {time.perf_counter() - started:.0f} s"
    lines.append(tail)
    print(tail, flush=True)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            fh.write("\n".join(lines) + "\n")
    return 0
