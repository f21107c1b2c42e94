"""How much each policy's answer changes per call: the floor of an exact engine.

An engine that reallocates at every event must at least apply the rates that
changed. This runs `run_trace` (engine alone) per policy on the first N coflows of
the FB trace and records policy calls, rate changes (per flow, or per path for
path-mode policies such as `fair`), mean active flows, and the simulate time, so
that a policy's time can be compared with the volume of its answers:

    rate changes per call / mean active flows

A policy whose answers change a large share of the active flows at every call
(the DRF family, PS-P, HUG, Coflex) cannot be made to cost time in "what
changed" only: what changed is most flows. A policy whose answers change few
flows (pfp, sincronia, varys) can, and the incremental forms target those.

    python3 benches/output_volume.py [--first 200] [--policies fair,varys]
        [--binary target/release/examples/run_trace] [--out FILE]

Benchmarks are not tests: times depend on the machine and its load; the counts do
not.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TRACE = os.path.join(ROOT, "..", "shared", "traces", "FB2010-1Hr-150-0.txt")
LINE = re.compile(
    r"simulate ([\d.]+)s events (\d+) calls (\d+) mean_active (\d+) .*?rate_changes (\d+)", re.S
)
DEFAULT = (
    "fair,fifo,scf,tcf,ncf,lcof,aalo,mcs,spq,pfp,sincronia,varys,coflex,naive-tradeoff,"
    "drf,hug,psp,ncdrf,pias,baraat,stream,coda"
)


def provenance() -> str:
    commit = subprocess.run(
        ["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    return f"commit {commit or 'unknown'}, {stamp}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--first", type=int, default=200)
    ap.add_argument("--policies", default=DEFAULT)
    ap.add_argument(
        "--binary", default=os.path.join(ROOT, "target", "release", "examples", "run_trace")
    )
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--out", help="write the Markdown table here too")
    a = ap.parse_args()
    if not os.path.exists(a.binary):
        print(f"output_volume: no binary at {a.binary} (cargo build --release --example run_trace)")
        return 2
    rows = [
        "| policy | calls | mean active flows | rate changes per call | share of active | simulate (s) |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    print("\n".join(rows), flush=True)
    for p in a.policies.split(","):
        env = dict(os.environ, FIRST=str(a.first))
        try:
            r = subprocess.run(
                [a.binary, TRACE, p], env=env, capture_output=True, text=True, timeout=a.timeout
            )
        except subprocess.TimeoutExpired:
            row = f"| {p} | timeout>{a.timeout:.0f}s | | | | |"
        else:
            m = LINE.search(r.stdout + r.stderr)
            if not m:
                print(f"output_volume: {p}: no result line in run_trace's output", file=sys.stderr)
                return 1
            t, _, calls, active, changes = m.groups()
            per = int(changes) / max(int(calls), 1)
            share = per / max(int(active), 1)
            row = (
                f"| {p} | {int(calls)} | {int(active)} | {per:.0f} | {share:.3f} | {float(t):.2f} |"
            )
        rows.append(row)
        print(row, flush=True)
    if a.out:
        cmd = "python3 benches/output_volume.py " + " ".join(sys.argv[1:])
        head = [
            f"# Output volume per policy call, first {a.first} FB coflows, big switch",
            "",
            f"Command: `{cmd}`",
            f"Version: {provenance()}",
            "",
            "`fair` answers per path (path mode): its rate changes count paths, and its",
            "share compares them with active flows. Times are the engine alone.",
            "",
        ]
        with open(a.out, "w", encoding="utf-8") as fh:
            fh.write("\n".join(head + rows) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
