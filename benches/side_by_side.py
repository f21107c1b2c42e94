"""Two builds of the engine on the same cases, alternating, in one run: engine-alone
simulate time, events and mean CCT of each (`run_trace`), and old / new.

    python3 benches/side_by_side.py --new BIN --old BIN --fabric fattree:k=16 \\
        --first 100 --policies fair,aalo:queues=4,stream:queues=4,baraat --out FILE.md
    python3 benches/side_by_side.py --new BIN --old BIN --first 100 \
        --transform starts:model=spark,tick_s=0.01,seed=1 --policies pias,coda --out FILE.md

`--transform` (repeatable, coflowkit's transforms) reshapes the trace with the
Python package first and hands both builds the result as a flows CSV, cut to
`--first` coflows after the transforms (as `coflowkit simulate --first` does).

Both runs of a case are made back to back (new first), so their ratio compares two
runs under the same load; times from different reports do not compare. The two
builds must agree on events and mean CCT (they are printed side by side); a
mismatch is marked. Benchmarks are not tests: times depend on the machine.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TRACE = os.path.join(ROOT, "..", "shared", "traces", "FB2010-1Hr-150-0.txt")
LINE = re.compile(r"simulate ([\d.]+)s events (\d+) calls \d+ mean_active (\d+) mean_cct ([\d.]+)")


def run(binary: str, trace: str, policy: str, env: dict[str, str], timeout: float) -> tuple | None:
    """(simulate s, events, mean active flows, mean CCT) of one run, None on timeout."""
    try:
        p = subprocess.run(
            [binary, trace, policy],
            env={**os.environ, **env},
            capture_output=True,
            text=True,
            timeout=timeout,
            check=True,
        )
    except subprocess.TimeoutExpired:
        return None
    m = LINE.search(p.stdout + p.stderr)
    if m is None:
        sys.exit(f"{binary} {policy}: no result line in its output")
    return float(m[1]), int(m[2]), int(m[3]), m[4]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--new", required=True)
    ap.add_argument("--old", required=True)
    ap.add_argument("--policies", required=True)
    ap.add_argument("--fabric", default="")
    ap.add_argument("--first", type=int, default=0)
    ap.add_argument("--transform", action="append", default=[])
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    env = {}
    if a.fabric:
        env["FABRIC"] = a.fabric
    trace = TRACE
    if a.transform:
        from coflowkit import api, transforms

        w = transforms.apply_all(api.load_trace(TRACE), a.transform)
        if a.first:
            w = w.head(a.first)
        trace = os.path.join(tempfile.mkdtemp(prefix="side_by_side_"), "trace.csv")
        api.write_trace(w, trace, "flows")
    elif a.first:
        env["FIRST"] = str(a.first)
    started = time.perf_counter()
    rows = []
    for policy in a.policies.split(","):
        new = run(a.new, trace, policy, env, a.timeout)
        old = run(a.old, trace, policy, env, a.timeout)
        cell = lambda r: "timeout" if r is None else f"{r[0]:.2f}"  # noqa: E731
        ratio = f"{old[0] / new[0]:.2f}" if new and old else "-"
        same = new and old and new[1] == old[1] and new[3] == old[3]
        events = f"{new[1]}" if new else "-"
        note = (
            "" if same or not (new and old) else f" **differs: old {old[1]} events, CCT {old[3]}**"
        )
        mean = f"{new[3]}{note}" if new else "-"
        active = f"{new[2]}" if new else "-"
        rows.append(
            f"| {policy} | {events} | {active} | {mean} | {cell(new)} | {cell(old)} | {ratio} |"
        )
        print(rows[-1], flush=True)
    from coflowkit.policy_timing import machine, provenance

    text = [
        "# Two engine builds side by side",
        "",
        f"Command: `python3 benches/side_by_side.py {' '.join(sys.argv[1:])}`  ",
        f"Version: {provenance()} (of the tree that wrote this report)  ",
        f"Machine: {machine()}  ",
        f"Wall time of the whole run: {time.perf_counter() - started:.0f} s",
        "",
        f"FB trace{''.join(f', {t}' for t in a.transform)}"
        f"{f', first {a.first} coflows' if a.first else ''}"
        f"{f', on {a.fabric}' if a.fabric else ', big switch'}; engine-alone simulate time "
        "(`run_trace`), each case run by the new build and then the old one.",
        "",
        "| policy | events | mean active flows | mean CCT (s) | new (s) | old (s) | old / new |",
        "|---|---:|---:|---:|---:|---:|---:|",
        *rows,
        "",
    ]
    with open(a.out, "w", encoding="utf-8") as fh:
        fh.write("\n".join(text))
    return 0


if __name__ == "__main__":
    sys.exit(main())
