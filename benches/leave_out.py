"""Who holds a coflow back: its CCT with other coflows removed from the workload.

A leave-out experiment: the policy runs on the whole workload, then once per
``--drop`` set with those coflows removed (the ``drop`` transform; every other
coflow keeps its arrival), and the target coflow's CCT is compared. A set whose
removal gives the target back its time is what held it.

    python3 benches/leave_out.py --target 379 --drop 378 --drop 163+247+299
        [--policy mcs] [--engine coflowsim:epoch_s=10.24] [--trace T] [--out FILE.md]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))

import coflowkit as ck  # noqa: E402
from coflowkit.policy_timing import machine, provenance  # noqa: E402

TRACE = os.path.join(ROOT, "..", "shared", "traces", "FB2010-1Hr-150-0.txt")


def cct_of(w, policy: str, engine: str, target: int) -> tuple[float, float, float]:
    """(CCT, admission, finish) of coflow ``target``."""
    c = ck.simulate(w, policy, engine=engine, progress=False).coflows.set_index("coflow_id")
    r = c.loc[target]
    admitted = r["admitted_s"] if "admitted_s" in c.columns else r["arrival_s"]
    return float(r["cct_s"]), float(admitted), float(r["finish_s"])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trace", default=TRACE)
    ap.add_argument("--engine", default="coflowsim:epoch_s=10.24")
    ap.add_argument("--policy", default="mcs")
    ap.add_argument("--target", type=int, required=True, help="the coflow whose CCT is watched")
    ap.add_argument("--drop", action="append", required=True, metavar="ID[+ID...]")
    ap.add_argument("--out")
    o = ap.parse_args()
    t0 = time.time()
    w = ck.load_trace(o.trace)
    base, admitted, finish = cct_of(w, o.policy, o.engine, o.target)
    rows = []
    for d in o.drop:
        v = ck.transform(w, f"drop:coflows={d}")
        if o.target in {int(x) for x in d.split("+")}:
            raise SystemExit(f"--drop {d}: it removes the target coflow {o.target}")
        rows.append((d, *cct_of(v, o.policy, o.engine, o.target)))
    drops = " ".join(f"--drop {d}" for d in o.drop)
    lines = [
        f"# Who holds coflow {o.target} back under `{o.policy}`: a leave-out experiment",
        "",
        f"Command: `python3 benches/leave_out.py --target {o.target} {drops} "
        f"--policy {o.policy} --engine {o.engine}`  ",
        f"Version: {provenance()}  ",
        f"Machine: {machine()}; wall time {time.time() - t0:.0f} s, uncached  ",
        f"Workload: `{os.path.relpath(o.trace, ROOT)}`; engine `{o.engine}`.",
        "",
        f"On the whole workload coflow {o.target} is admitted at {admitted:.2f} s and "
        f"finishes at {finish:.2f} s: CCT **{base:.3f} s**.",
        "",
        "| coflows removed | its CCT (s) | change (s) | admitted (s) | finished (s) |",
        "|---|---:|---:|---:|---:|",
    ]
    for d, cct, adm, fin in rows:
        lines.append(
            f"| {d.replace('+', ', ')} | {cct:.3f} | {cct - base:+.3f} | {adm:.2f} | {fin:.2f} |"
        )
    text = "\n".join(lines) + "\n"
    if o.out:
        with open(o.out, "w", encoding="utf-8") as fh:
            fh.write(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
