"""Round time against the number of agents, from `coflowkit testbed emulate`
tables (scale.csv): one line per (policy, master --io), median with the p99
as a band. Usage:

    python3 benches/plot_scale.py OUT.png scale-a.csv [scale-b.csv ...]
"""

from __future__ import annotations

import csv
import sys
from collections import defaultdict


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__)
        return 2
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out, paths = argv[0], argv[1:]
    series: dict[tuple[str, str], list[tuple[int, float, float]]] = defaultdict(list)
    for path in paths:
        with open(path, newline="") as fh:
            for r in csv.DictReader(fh):
                key = (r["policy"], r.get("io") or "python")
                series[key].append(
                    (int(r["agents"]), float(r["round_median_ms"]), float(r["round_p99_ms"]))
                )
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for (policy, io), pts in sorted(series.items()):
        pts.sort()
        n = [p[0] for p in pts]
        ax.plot(n, [p[1] for p in pts], marker="o", label=f"{policy}, --io {io} (median)")
        ax.fill_between(n, [p[1] for p in pts], [p[2] for p in pts], alpha=0.15)
    ax.axhline(70, color="grey", linestyle="--", linewidth=1)
    ax.set_xscale("log")
    ax.text(0.01, 72, "target at 10,000 agents: 70 ms", color="grey", fontsize=8,
            transform=ax.get_yaxis_transform())  # fmt: skip
    ax.set_xlabel("emulated agents (N)")
    ax.set_ylabel("master round (ms); band up to p99")
    ax.set_title("Master round against N (Δ = 100 ms, 100 coflows)", fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
