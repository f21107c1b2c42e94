#!/usr/bin/env python3
"""Dumps every policy's coflow finish times on the FB trace (big switch) and on
fattree:k=8 with its first 100 coflows, with the engine as it is, as fixtures the
incremental engine is compared against (crates/coflowkit-sim/tests/exactness.rs).

    python3 benches/engine_fixtures.py --out crates/coflowkit-sim/tests/fixtures/engine

Each fixture is `SCENARIO/POLICY.txt`: one line per coflow, `id finish_s` at full
precision (`run_trace --dump`). `runs.csv` records each run's simulate time, events,
policy calls and mean active flows: the old engine's figures for the benchmark
table. Runs go two at a time (2 cores).
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import csv
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TRACE = os.path.join(ROOT, "..", "shared", "traces", "FB2010-1Hr-150-0.txt")
SCENARIOS = {"fb-bigswitch": {}, "fb100-fattree8": {"FABRIC": "fattree:k=8", "FIRST": "100"}}
EXTRA = ["coda:labels=identify"]


def policies() -> list[str]:
    sys.path.insert(0, os.path.join(ROOT, "python"))
    import coflowkit

    return [p["name"] for p in coflowkit.policies()] + EXTRA


def one(binary: str, out: str, scenario: str, policy: str, timeout: float) -> dict:
    path = os.path.join(out, scenario, policy.replace(":", "_").replace("=", "-") + ".txt")
    env = dict(os.environ, **SCENARIOS[scenario])
    try:
        r = subprocess.run([binary, TRACE, policy, "--dump", path], env=env, capture_output=True,
                           text=True, timeout=timeout)  # fmt: skip
        line = r.stdout.strip().splitlines()[-1] if r.stdout.strip() else r.stderr.strip()[-200:]
    except subprocess.TimeoutExpired:
        line = f"timeout after {timeout:.0f} s"
    m = re.search(r"simulate ([\d.]+)s events (\d+) calls (\d+) mean_active (\d+)", line)
    row = {"scenario": scenario, "policy": policy, "status": "ok" if m else line}
    if m:
        row.update(simulate_s=float(m[1]), events=int(m[2]), calls=int(m[3]), mean_active=int(m[4]))
    print(scenario, policy, row.get("simulate_s", line), flush=True)
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument(
        "--out",
        default=os.path.join(ROOT, "crates", "coflowkit-sim", "tests", "fixtures", "engine"),
    )
    ap.add_argument("--timeout", type=float, default=7200)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument(
        "--binary", help="a run_trace built beforehand (default: build one now); copy it out of "
        "target/ first if the tree will be rebuilt while this runs",
    )  # fmt: skip
    a = ap.parse_args()
    binary = a.binary
    if binary is None:
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "coflowkit-sim", "--example", "run_trace"],
                       cwd=ROOT, check=True)  # fmt: skip
        binary = os.path.join(ROOT, "target", "release", "examples", "run_trace")
    for s in SCENARIOS:
        os.makedirs(os.path.join(a.out, s), exist_ok=True)
    runs = os.path.join(a.out, "runs.csv")
    done = []
    if os.path.exists(runs):
        with open(runs, newline="") as fh:
            done = [r for r in csv.DictReader(fh) if r["status"] == "ok"]
    have = {(r["scenario"], r["policy"]) for r in done}
    jobs = [(s, p) for s in reversed(list(SCENARIOS)) for p in policies() if (s, p) not in have]
    with cf.ThreadPoolExecutor(a.workers) as ex:
        rows = done + list(ex.map(lambda j: one(binary, a.out, j[0], j[1], a.timeout), jobs))
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip()  # fmt: skip
    with open(os.path.join(a.out, "runs.csv"), "w", newline="") as fh:
        w = csv.DictWriter(
            fh, ["scenario", "policy", "status", "simulate_s", "events", "calls", "mean_active"]
        )
        w.writeheader()
        w.writerows(rows)
    with open(os.path.join(a.out, "README.md"), "w") as fh:
        fh.write(
            "# The engine before the incremental rewrite: fixtures\n\n"
            f"Made by `python3 benches/engine_fixtures.py` at commit {commit}, on this 2-core machine, "
            "two runs at a time. `SCENARIO/POLICY.txt`: `coflow_id finish_s` per coflow, full precision; "
            "`runs.csv`: each run's simulate time, events, policy calls and mean active flows. "
            "The engine that made them is gone; `tests/exactness.rs` compares the current one against them.\n"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
