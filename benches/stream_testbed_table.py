"""The Stream paper's testbed rows (Fig. 5) from `coflowkit testbed run
--decentralized` outputs: TCP (``--observe-only``) against Stream, real and
simulated, on the same workload.

    python benches/stream_testbed_table.py TCP_DIR STREAM_DIR [STREAM_DIR ...]

Prints a markdown table: average CCT, average CCT of the small coflows (the SN
bin: short and narrow, coflowkit's "mice"), and the 95th percentile CCT, each
with TCP / Stream (the paper's improvement factor: above 1, Stream is faster).
"""

from __future__ import annotations

import json
import os
import sys

import numpy as np
import pandas as pd


def stats(d: str, which: str) -> dict:
    """``which``: "real" (the run) or "sim" (its simulation)."""
    path = (
        os.path.join(d, "coflows.csv") if which == "real" else os.path.join(d, "sim", "coflows.csv")
    )
    c = pd.read_csv(path)
    cct = c["cct_s"].to_numpy()
    mice = c.loc[c["bin"] == "SN", "cct_s"].to_numpy()
    return {
        "mean": float(np.mean(cct)),
        "mice": float(np.mean(mice)) if len(mice) else float("nan"),
        "p95": float(np.percentile(cct, 95)),
        "coflows": len(cct),
        "mice_n": len(mice),
    }


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__)
        return 2
    tcp, streams = argv[0], argv[1:]
    rows = []
    for which in ("real", "sim"):
        t = stats(tcp, which)
        for d in streams:
            with open(os.path.join(d, "comparison.json")) as fh:
                params = json.load(fh)["params"]
            s = stats(d, which)
            label = ", ".join(f"{k}={v}" for k, v in sorted(params.items())) or "defaults"
            rows.append(
                f"| {which} | {label} | {t['mean']:.3f} / {s['mean']:.3f} = **{t['mean'] / s['mean']:.2f}** "
                f"| {t['mice']:.3f} / {s['mice']:.3f} = **{t['mice'] / s['mice']:.2f}** ({s['mice_n']}) "
                f"| {t['p95']:.3f} / {s['p95']:.3f} = **{t['p95'] / s['p95']:.2f}** |"
            )
    print(
        "| run | stream parameters | mean CCT, s: TCP / Stream | SN (mice) mean CCT (n) | p95 CCT |"
    )
    print("|---|---|---|---|---|")
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
