"""Which coflows make a bin's normalized CCT: policy B against policy A, coflow by coflow.

A bin's normalized CCT (the MCS paper's eq. 8) is a ratio of sums, so a single
coflow can carry it. This runs both policies on the same workload and engine and
lists, for one bin, the coflows whose CCT moved most, with their width, length and
(for `mcs`) the initial queue its width classes give, and the bin's ratio with the
largest contributor left out.

    python3 benches/bin_excess.py [--trace T] [--engine coflowsim:epoch_s=10.24]
        [--a aalo] [--b mcs] [--bin SW] [--top 10] [--out FILE.md]

Defaults: Fig. 13's setting under CoflowSim's model (10 s batches as its admission
epochs, `reproduce mcs --engine coflowsim`), MCS against Aalo (DARK), the SW bin.
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
# The mcs defaults (docs/policies/mcs.md): class i = #{Δ_j ≤ width}, initial queue p_i.
MCS_DELTAS = (10, 100, 1000, 10000)
MCS_PRIORITIES = (1, 2, 3, 4, 5)


def mcs_queue(width: int) -> int:
    """The 1-based queue the default `mcs` starts a coflow of ``width`` flows in."""
    return MCS_PRIORITIES[sum(1 for d in MCS_DELTAS if d <= width)]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trace", default=TRACE)
    ap.add_argument("--engine", default="coflowsim:epoch_s=10.24")
    ap.add_argument("--a", default="aalo")
    ap.add_argument("--b", default="mcs")
    ap.add_argument("--bin", default="SW", choices=["SN", "LN", "SW", "LW"])
    ap.add_argument("--top", type=int, default=10)
    ap.add_argument("--out")
    o = ap.parse_args()
    t0 = time.time()
    w = ck.load_trace(o.trace)
    runs = {p: ck.simulate(w, p, engine=o.engine, progress=False).coflows for p in (o.a, o.b)}
    a = runs[o.a].set_index("coflow_id")
    b = runs[o.b].set_index("coflow_id")
    d = a[["width", "length_bytes", "size_bytes", "bin", "admitted_s", "isolated_s"]].copy()
    d["cct_a"], d["cct_b"] = a["cct_s"], b["cct_s"]
    d["excess"] = d.cct_b - d.cct_a
    s = d[d.bin == o.bin]
    ratio = s.cct_b.sum() / s.cct_a.sum()
    top = s.reindex(s.excess.abs().sort_values(ascending=False).index).head(o.top)
    worst = s.excess.idxmax()
    rest = s.drop(index=worst)
    lines = [
        f"# {o.bin} coflows: `{o.b}` against `{o.a}`, coflow by coflow",
        "",
        f"Command: `python3 benches/bin_excess.py --engine {o.engine} --a {o.a} --b {o.b} "
        f"--bin {o.bin} --top {o.top}`  ",
        f"Version: {provenance()}  ",
        f"Machine: {machine()}; wall time {time.time() - t0:.0f} s  ",
        f"Workload: `{os.path.relpath(o.trace, ROOT)}`, every coflow; engine `{o.engine}`.",
        "",
        f"{len(s)} {o.bin} coflows. Normalized CCT ({o.b} / {o.a}, ratio of sums): "
        f"**{ratio:.3f}**; {int((s.excess > 0).sum())} coflows slower under {o.b}, "
        f"{int((s.excess < 0).sum())} faster. Sum of the differences "
        f"{s.excess.sum():+.1f} s, of which coflow {worst} alone {s.excess[worst]:+.1f} s. "
        f"Without coflow {worst}: {rest.cct_b.sum() / rest.cct_a.sum():.3f}.",
        "",
        f"The {len(top)} largest differences (`mcs` queue: the 1-based queue its default "
        "width classes start the coflow in, Δ = 10, 100, 1000, 10000, p_i = i):",
        "",
        f"| coflow | width | largest flow (MiB) | bytes (GiB) | `mcs` queue | admitted (s) "
        f"| alone (s) | {o.a} CCT (s) | {o.b} CCT (s) | difference (s) |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for cid, r in top.iterrows():
        lines.append(
            f"| {cid} | {int(r.width):,} | {r.length_bytes / 2**20:.1f} | "
            f"{r.size_bytes / 2**30:.2f} | {mcs_queue(int(r.width))} | {r.admitted_s:.2f} | "
            f"{r.isolated_s:.3f} | {r.cct_a:.3f} | {r.cct_b:.3f} | {r.excess:+.3f} |"
        )
    text = "\n".join(lines) + "\n"
    if o.out:
        with open(o.out, "w", encoding="utf-8") as fh:
            fh.write(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
