"""The engine against its fixtures: every policy's finish times, coflow by coflow.

For every fixture `crates/coflowkit-sim/tests/fixtures/engine/SCENARIO/POLICY.txt`
(dumped by the engine before the incremental rewrite, see benches/engine_fixtures.py)
it runs the current engine (`run_trace --dump`), compares each coflow's finish time
with the fixture (1e-6 relative, as tests/exactness.rs does) and records the
simulate time, events and policy calls. With `--old BINARY` (a `run_trace` built
from the old engine) it also times the old engine on the same case right after,
so the speed-up column compares two runs made under the same load. Without it the
old time is the fixture run's (`runs.csv`: made earlier, under another load).

    python3 benches/exactness.py [--scenarios fb100-fattree8] [--policies fair,drf]
        [--old /tmp/run_trace_old] [--repeat N] [--out docs/results/bench/exactness.md]

Benchmarks are not tests: times depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import csv
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIX = os.path.join(ROOT, "crates", "coflowkit-sim", "tests", "fixtures", "engine")
TRACE = os.path.join(ROOT, "..", "shared", "traces", "FB2010-1Hr-150-0.txt")
SCENARIOS = {"fb-bigswitch": {}, "fb100-fattree8": {"FABRIC": "fattree:k=8", "FIRST": "100"}}
REL_TOL = 1e-6
LINE = re.compile(r"simulate ([\d.]+)s events (\d+) calls (\d+) mean_active (\d+)")


# Fixtures made under a default that changed since: the parameters that give the
# fixture's policy (tests/exactness.rs has the same table). psp's default became
# spare=onepass (the NC-DRF paper's model) in commit dbcc351; the fixture is spare=maxmin.
FIXTURE_PARAMS = {"psp": "psp:spare=maxmin"}


def policy_of(stem: str) -> str:
    """`coda_labels-identify` -> `coda:labels=identify` (engine_fixtures.py's naming)."""
    if stem in FIXTURE_PARAMS:
        return FIXTURE_PARAMS[stem]
    return stem.replace("_", ":", 1).replace("-", "=") if "_" in stem else stem


def load(path: str) -> dict[int, float]:
    with open(path, encoding="utf-8") as fh:
        return {int(a): float(b) for a, b in (ln.split() for ln in fh if ln.strip())}


def run(binary: str, scenario: str, policy: str, dump: str, timeout: float) -> dict:
    env = dict(os.environ, **SCENARIOS[scenario])
    t0 = time.perf_counter()
    try:
        r = subprocess.run(
            [binary, TRACE, policy, "--dump", dump],
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return {"status": f"timeout>{timeout:.0f}s"}
    m = LINE.search(r.stdout)
    if not m:
        tail = (r.stdout + r.stderr).strip().splitlines()
        return {"status": "failed: " + (tail[-1] if tail else f"exit {r.returncode}")}
    return {
        "status": "ok",
        "wall_s": time.perf_counter() - t0,
        "simulate_s": float(m[1]),
        "events": int(m[2]),
        "calls": int(m[3]),
        "mean_active": int(m[4]),
    }


def median_run(runs: list[dict]) -> dict:
    """The run of median simulate time among `runs` (a failed one if any failed);
    with several, `spread` gives their range."""
    bad = [r for r in runs if r["status"] != "ok"]
    if bad:
        return bad[0]
    runs = sorted(runs, key=lambda r: r["simulate_s"])
    med = dict(runs[len(runs) // 2])
    if len(runs) > 1:
        med["spread"] = f" ({runs[0]['simulate_s']:.2f}-{runs[-1]['simulate_s']:.2f})"
    return med


def compare(want: dict[int, float], got: dict[int, float]) -> tuple[int, float]:
    """(coflows beyond REL_TOL or missing, largest relative difference)."""
    if want.keys() != got.keys():
        return len(want.keys() ^ got.keys()), float("inf")
    rel = [abs(got[k] - t) / max(abs(t), 1e-12) for k, t in want.items()]
    return sum(r > REL_TOL for r in rel), max(rel, default=0.0)


def one_case(a, binary: str, scenario: str, stem: str, fixture_runs: dict) -> tuple[str, bool]:
    """Runs one fixture's case (and the old engine with --old): its table row, and
    whether it failed (differences, or the run did not finish)."""
    policy = policy_of(stem)
    want = load(os.path.join(FIX, scenario, stem + ".txt"))
    with tempfile.TemporaryDirectory() as tmp:
        news, olds = [], []
        for _ in range(a.repeat):
            news.append(run(binary, scenario, policy, os.path.join(tmp, "new.txt"), a.timeout))
            if a.old:
                olds.append(run(a.old, scenario, policy, os.path.join(tmp, "old.txt"), a.timeout))
            if news[-1]["status"] != "ok":
                break
        new = median_run(news)
        got = load(os.path.join(tmp, "new.txt")) if new["status"] == "ok" else {}
        old = median_run(olds) if a.old else None
    if new["status"] != "ok":
        return f"| {scenario} | {policy} | {len(want)} | {new['status']} | | | | | | |", True
    bad, worst = compare(want, got)
    if old is not None:
        old_s = old.get("simulate_s")
        old_txt = f"{old_s:.2f}{old.get('spread', '')}" if old_s is not None else old["status"]
    else:
        fr = fixture_runs.get((scenario, policy), {})
        old_s = float(fr["simulate_s"]) if fr.get("simulate_s") else None
        old_txt = f"{old_s:.2f}*" if old_s is not None else "-"
    ratio = f"{old_s / new['simulate_s']:.2f}" if old_s and new["simulate_s"] > 0 else "-"
    row = (
        f"| {scenario} | {policy} | {len(want)} | {bad} | {worst:.1e} | {new['events']} "
        f"| {new['calls']} | {new['simulate_s']:.2f}{new.get('spread', '')} | {old_txt} | {ratio} |"
    )
    return row, bad > 0


def main() -> int:
    sys.path.insert(0, os.path.join(ROOT, "python"))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scenarios", default=",".join(SCENARIOS))
    ap.add_argument("--policies", help="comma-separated fixture stems (default: all)")
    ap.add_argument("--old", help="run_trace of the old engine, timed in the same run")
    ap.add_argument("--binary", help="run_trace of the current engine (default: build it)")
    ap.add_argument("--timeout", type=float, default=3600)
    ap.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="run each case N times (new and old alternately) and report the median",
    )
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "results", "bench", "exactness.md"))
    a = ap.parse_args()
    started = time.perf_counter()
    binary = a.binary
    if binary is None:
        subprocess.run(
            ["cargo", "build", "--release", "-q", "-p", "coflowkit-sim", "--example", "run_trace"],
            cwd=ROOT,
            check=True,
        )
        binary = os.path.join(ROOT, "target", "release", "examples", "run_trace")
    fixture_runs = {}
    with open(os.path.join(FIX, "runs.csv"), newline="") as fh:
        for r in csv.DictReader(fh):
            fixture_runs[(r["scenario"], r["policy"])] = r
    want_stems = set(a.policies.split(",")) if a.policies else None
    header = (
        "| scenario | policy | coflows | differ (> 1e-6 rel) | max rel diff | events | calls "
        "| new simulate (s) | old simulate (s) | old / new |"
    )
    rows = [header, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    print(header, flush=True)
    failures = 0
    for scenario in a.scenarios.split(","):
        d = os.path.join(FIX, scenario)
        for name in sorted(os.listdir(d)):
            stem = name[: -len(".txt")]
            if want_stems is not None and stem not in want_stems:
                continue
            row, bad = one_case(a, binary, scenario, stem, fixture_runs)
            failures += bad
            rows.append(row)
            print(row, flush=True)
            write(a, rows, failures, time.perf_counter() - started, done=False)
    write(a, rows, failures, time.perf_counter() - started, done=True)
    return 1 if failures else 0


def write(a: argparse.Namespace, rows: list[str], failures: int, wall: float, done: bool) -> None:
    """The report so far (rewritten after every case, so an interrupted run keeps
    what it measured)."""
    from coflowkit.policy_timing import machine, provenance

    cmd = "python3 benches/exactness.py " + " ".join(sys.argv[1:])
    text = [
        "# The incremental engine against the old engine's fixtures",
        "",
        f"Command: `{cmd.strip()}`  ",
        f"Version: {provenance()} (of the tree that wrote this report; `--binary` may be older)  ",
        f"Machine: {machine()}  ",
        f"Wall time of the {'whole run' if done else 'run so far'}: {wall:.0f} s",
        "",
        "Each coflow's finish time from the current engine (`run_trace --dump`) against the "
        "fixture dumped by the engine before the rewrite (`crates/coflowkit-sim/tests/fixtures/"
        "engine/`); a coflow differs when it is more than 1e-6 relative away. Simulate time is "
        "the engine alone (trace loaded, fabric routed). "
        + (
            "Old times were measured in this run, right after the new one on the same case."
            + (
                f" Each case ran {a.repeat} times, new and old alternately: the times are "
                "the median run's, with the range of the runs in brackets."
                if a.repeat > 1
                else ""
            )
            if a.old
            else "Old times marked * come from the fixture run (`runs.csv`), made earlier "
            "under another load: ratios are indicative only."
        ),
        "",
        *rows,
        "",
        f"{failures} case(s) with differences."
        + ("" if done else " The run is not finished: cases after the last row are missing."),
        "",
    ]
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    with open(a.out, "w", encoding="utf-8") as fh:
        fh.write("\n".join(text))


if __name__ == "__main__":
    sys.exit(main())
