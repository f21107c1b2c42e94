"""How the engine's cost grows with the workload: `repeat:times=N` for N = 1, 2, 4, 8.

`sequential` copies run one after another (N times the simulated time at the same
concurrency): an engine whose cost per event does not grow with the run's length
takes about N times as long. `overlap` copies share the ports at the same times
(N times the concurrent flows): an engine whose per-event cost is proportional to
the active flows takes about N² times as long (64x at N = 8).

Each run is a child process that loads the trace, applies `head:count=C` then
`repeat`, and times `coflowkit.simulate` alone; the parent records the child's
peak resident memory (ru_maxrss from wait4, Rust's allocations included).

    python3 benches/growth.py [--cases fair,varys,aalo,stream] [--out docs/results/bench/growth.md]

Targets (issue 20): sequential at 8x <= 10x the 1x time; overlap at 8x <= 16x.
Benchmarks are not tests: times depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TRACE = os.path.join(ROOT, "..", "shared", "traces", "FB2010-1Hr-150-0.txt")
#: name -> (policy, fabric or "", coflows kept before repeating)
CASES = {
    "fair": ("fair", "", 100),
    "varys": ("varys", "", 100),
    "aalo": ("aalo", "", 100),
    "stream": ("stream:queues=4", "fattree:k=8", 50),
}
TIMES = (1, 2, 4, 8)
MODES = ("sequential", "overlap")
TARGET = {"sequential": 10.0, "overlap": 16.0}

CHILD = """
import json, sys, time
import coflowkit as ck
trace, policy, fabric, count, times, mode = sys.argv[1:7]
w = ck.load_trace(trace)
w = ck.transforms.apply_all(w, [f"head:count={count}", f"repeat:times={times},mode={mode}"])
if fabric:
    w = w.with_fabric(fabric)
name, *kvs = policy.split(":")
params = dict(kv.split("=", 1) for kv in kvs)
t0 = time.perf_counter()
r = ck.simulate(w, name, params=params, progress=False)
t1 = time.perf_counter()
print(json.dumps({"simulate_s": t1 - t0, "events": r.events, "calls": r.policy_calls,
                  "mean_active": r.extra["mean_active_flows"], "flows": w.num_flows,
                  "mean_cct_s": float(r.coflows["cct_s"].mean())}))
"""


def one(policy: str, fabric: str, count: int, times: int, mode: str, timeout: float) -> dict:
    args = [sys.executable, "-c", CHILD, TRACE, policy, fabric, str(count), str(times), mode]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.perf_counter() + timeout
    while True:
        pid, code, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.perf_counter() > deadline:
            proc.kill()
            os.wait4(proc.pid, 0)
            return {"status": f"timeout>{timeout:.0f}s"}
        time.sleep(0.05)
    out, err = proc.stdout.read(), proc.stderr.read()
    if code != 0:
        lines = err.decode(errors="replace").strip().splitlines()
        return {"status": "failed: " + (lines[-1] if lines else f"exit {code}")}
    d = json.loads(out)
    d.update(status="ok", rss_mib=usage.ru_maxrss / 1024.0)
    return d


def main() -> int:
    sys.path.insert(0, os.path.join(ROOT, "python"))
    from coflowkit.policy_timing import machine, provenance

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "results", "bench", "growth.md"))
    a = ap.parse_args()
    started = time.perf_counter()
    head = (
        "| case | mode | N | flows | events | mean active flows | simulate (s) | x the 1x time "
        "| ms per event | peak RSS (MiB) | target at 8x | met |"
    )
    rows = [head, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    print(head, flush=True)
    for case in a.cases.split(","):
        policy, fabric, count = CASES[case]
        for mode in a.modes.split(","):
            base = None
            for n in TIMES:
                r = one(policy, fabric, count, n, mode, a.timeout)
                where = f"{case} ({policy}{', ' + fabric if fabric else ''}, {count} coflows)"
                if r["status"] != "ok":
                    row = f"| {where} | {mode} | {n} | | | | {r['status']} | | | | | |"
                else:
                    base = r["simulate_s"] if n == 1 else base
                    x = r["simulate_s"] / base if base else float("nan")
                    tgt = f"<= {TARGET[mode]:g}x" if n == 8 else ""
                    met = ("yes" if x <= TARGET[mode] else "**no**") if n == 8 else ""
                    row = (
                        f"| {where} | {mode} | {n} | {r['flows']} | {r['events']} "
                        f"| {r['mean_active']:.0f} | {r['simulate_s']:.2f} | {x:.1f} "
                        f"| {1e3 * r['simulate_s'] / max(r['events'], 1):.3f} "
                        f"| {r['rss_mib']:.0f} | {tgt} | {met} |"
                    )
                rows.append(row)
                print(row, flush=True)
    cmd = "python3 benches/growth.py " + " ".join(sys.argv[1:])
    text = [
        "# Growth: the engine's cost against N copies of the workload",
        "",
        f"Command: `{cmd.strip()}`  ",
        f"Version: {provenance()}  ",
        f"Machine: {machine()}  ",
        f"Wall time of the whole run: {time.perf_counter() - started:.0f} s",
        "",
        "`head:count=C` then `repeat:times=N,mode=M` (docs/transforms.md); simulate time "
        "is `coflowkit.simulate` alone, in a child process per run. An engine whose cost "
        "per event grows with the active flows is about N² in `overlap` (64x at N = 8). "
        "`overlap` is also a different schedule: N times the load on the same links makes "
        "every flow last longer, so more coflows overlap and the number of events grows "
        "faster than N; the time per event shows the engine's own growth.",
        "",
        *rows,
        "",
    ]
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    with open(a.out, "w", encoding="utf-8") as fh:
        fh.write("\n".join(text))
    return 0


if __name__ == "__main__":
    sys.exit(main())
