"""The master's RSS over a soak (`coflowkit testbed soak`, soak.json), one line
per run, with the target band (RSS at minute 1 + 10%) of the last. Usage:

    python3 benches/plot_soak.py OUT.png LABEL=soak.json [LABEL=soak.json ...]
"""

from __future__ import annotations

import json
import sys


def main(argv: list[str]) -> int:
    if len(argv) < 2 or any("=" not in a for a in argv[1:]):
        print(__doc__)
        return 2
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.2))
    row = {}
    for arg in argv[1:]:
        label, path = arg.split("=", 1)
        with open(path) as fh:
            row = json.load(fh)
        t = [p[0] / 60 for p in row["rss_timeline"]]
        ax.plot(t, [p[1] for p in row["rss_timeline"]], label=label)
    top = 1.1 * row["rss_minute1_mib"]
    ax.axhline(top, color="grey", linestyle="--", linewidth=1)
    ax.text(0.01, top + 3, "RSS at minute 1 + 10% (last run)", color="grey", fontsize=8,
            transform=ax.get_yaxis_transform())  # fmt: skip
    ax.set_xlabel("minutes")
    ax.set_ylabel("master RSS (MiB)")
    ax.set_title(f"{row['agents']:,} agents, {row['policy']}, Δ = {row['interval_ms']:g} ms, "
                 f"{row['churn_hosts']} agents churned every {row['churn_every_s']:g} s",
                 fontsize=10)  # fmt: skip
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(argv[0], dpi=120)
    print(f"wrote {argv[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
