"""How the engine keeps strict-priority classes, side by side: per flow, by group, auto.

Runs the engine alone (`run_trace`, built by `cargo build --release -p coflowkit-sim
--example run_trace`) on each scenario and policy under `CLASSES=flows`, `groups`
and `auto` (the engine's `ClassForm`), one run after the other so that the times
compare under the same load, and records the simulate time, peak RSS, events,
class decisions served by group, form switches, and the largest relative
difference of a coflow's finish time from the first form's run (the forms give
the same rates up to the order of float sums; 1e-6 is the engine's tolerance).

    python3 benches/class_forms.py [--scenarios fb-bigswitch,k48] [--policies stream:queues=4]
        [--forms flows,groups,auto] [--timeout 1200] [--out docs/results/bench/class-groups.md]

Benchmarks are not tests: times depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TRACE = os.path.join(ROOT, "..", "shared", "traces", "FB2010-1Hr-150-0.txt")
BINARY = os.path.join(ROOT, "target", "release", "examples", "run_trace")
SCENARIOS = {
    "fb-bigswitch": {},
    "fb100-fattree8": {"FABRIC": "fattree:k=8", "FIRST": "100"},
    "fattree8": {"FABRIC": "fattree:k=8"},
    "fattree16": {"FABRIC": "fattree:k=16"},
    "fattree48": {"FABRIC": "fattree:k=48"},
}
LINE = re.compile(r"simulate ([\d.]+)s events (\d+) calls (\d+) mean_active (\d+)")
GROUPS = re.compile(r"class_group_calls (\d+) class_form_switches (\d+)")


def load(path: str) -> dict[int, float]:
    with open(path, encoding="utf-8") as fh:
        return {int(a): float(b) for a, b in (ln.split() for ln in fh if ln.strip())}


def run(binary: str, scenario: str, policy: str, form: str, dump: str, timeout: float) -> dict:
    env = dict(os.environ, CLASSES=form, **SCENARIOS[scenario])
    cmd = ["/usr/bin/time", "-f", "maxrss_kb %M", binary, TRACE, policy, "--dump", dump]
    try:
        r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"status": f"timeout ({timeout:.0f} s)"}
    if r.returncode != 0:
        return {"status": f"failed: {r.stderr.strip().splitlines()[-1:]}"}
    out = r.stdout + r.stderr
    m, g = LINE.search(out), GROUPS.search(out)
    rss = re.search(r"maxrss_kb (\d+)", out)
    if not (m and g and rss):
        return {"status": "no summary line"}
    return {
        "status": "ok",
        "sim_s": float(m.group(1)),
        "events": int(m.group(2)),
        "active": int(m.group(4)),
        "group_calls": int(g.group(1)),
        "switches": int(g.group(2)),
        "rss_mib": int(rss.group(1)) / 1024,
        "finish": load(dump),
    }


def max_rel(a: dict[int, float], b: dict[int, float]) -> float:
    if a.keys() != b.keys():
        return float("inf")
    return max((abs(a[k] - b[k]) / max(abs(b[k]), 1e-12) for k in a), default=0.0)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--binary", default=BINARY)
    ap.add_argument("--scenarios", default="fb-bigswitch,fb100-fattree8,fattree48")
    ap.add_argument("--policies", default="stream:queues=4,spq")
    ap.add_argument("--forms", default="flows,groups,auto")
    ap.add_argument("--timeout", type=float, default=1200.0)
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    forms = a.forms.split(",")
    for f in forms:
        if f not in ("flows", "groups", "auto"):
            ap.error(f"--forms: {f!r} is not flows, groups or auto")
    for s in a.scenarios.split(","):
        if s not in SCENARIOS:
            ap.error(f"--scenarios: {s!r} is not one of {', '.join(SCENARIOS)}")
    if not os.path.exists(a.binary):
        ap.error(
            f"--binary: {a.binary} does not exist (cargo build --release -p coflowkit-sim --example run_trace)"
        )
    commit = subprocess.run(
        ["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    cmd = "python3 benches/class_forms.py " + " ".join(sys.argv[1:])
    lines = [
        f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"Linux {platform.release()}, load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}",
        f"Version: coflowkit 0.1.0, commit {commit}, {now}",
        f"Command: `{cmd}`",
        "",
        "Engine alone (`run_trace`), one run after the other per row group. `max rel diff`: the "
        "largest relative difference of a coflow's finish time from the first form's run.",
        "",
        "| scenario | policy | form | status | simulate (s) | peak RSS (MiB) | events | mean active flows "
        "| calls by group | form switches | max rel diff |",
        "|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    with tempfile.TemporaryDirectory() as tmp:
        for s in a.scenarios.split(","):
            for p in a.policies.split(","):
                first = None
                for form in forms:
                    dump = os.path.join(tmp, f"{s}-{form}.txt")
                    r = run(a.binary, s, p, form, dump, a.timeout)
                    if r["status"] != "ok":
                        row = [s, p, form, r["status"]] + [""] * 7
                    else:
                        if first is None:
                            first = r["finish"]
                        diff = max_rel(r["finish"], first)
                        row = [
                            s,
                            p,
                            form,
                            "ok",
                            f"{r['sim_s']:.2f}",
                            f"{r['rss_mib']:.0f}",
                            str(r["events"]),
                            str(r["active"]),
                            str(r["group_calls"]),
                            str(r["switches"]),
                            f"{diff:.2g}",
                        ]
                    print(" | ".join(row), flush=True)
                    lines.append("| " + " | ".join(row) + " |")
    text = "\n".join(lines) + "\n"
    if a.out:
        with open(a.out, "w", encoding="utf-8") as fh:
            fh.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
