"""What the agents' report threshold costs: the CPU of a whole `coflowkit agent`
process (Δ = 20 ms, enforcing, its host's own 4096-bucket TCP table) that
observes 100 long flows of 1 Mbit/s and, beside them, short connections (20 KB
sent, open 100 ms) started at a steady rate, at thresholds 100 KB (the
default), 10 KB and 1 B. As root (network namespaces). Usage:

    python3 benches/threshold_cost.py OUT.md [SHORT_PER_S ...]   (default 0 50 200)
"""

from __future__ import annotations

import subprocess
import sys
import time


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__)
        return 2
    from coflowkit import __version__
    from coflowkit.runtime.runtime_targets import agent_cpu

    out, rates = argv[0], [float(x) for x in argv[1:]] or [0.0, 50.0, 200.0]
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()  # fmt: skip
    start = time.time()
    rows = []
    for per_s in rates:
        for threshold in (100_000, 10_000, 1):
            r = agent_cpu(threshold=threshold, short_per_s=per_s, seconds=20.0)
            rows.append(r)
            print(r, flush=True)
    lines = [
        "# What the agents' report threshold costs",
        "",
        f"- Command: `python3 benches/threshold_cost.py {' '.join(argv)}`",
        f"- coflowkit {__version__}, commit {commit}, "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime(start))}, "
        f"{time.time() - start:.0f} s wall, uncached.",
        "- Setting: `coflowkit.runtime.runtime_targets.agent_cpu`. One agent observes 100 long "
        "flows of 1 Mbit/s and enforces their rates (Δ = 20 ms; its host's own 4096-bucket "
        "TCP table, dumped every round). Beside them, a sender starts short connections at "
        "the rate given; each sends 20 KB, stays open 100 ms and closes. The agent's CPU covers all its threads, "
        "from the kernel's accounting over 20 s.",
        "",
        "| short connections / s | threshold | opened | flows the master saw end | agent CPU (% of one core) |",
        "|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['short_per_s']:g} | {r['threshold']:,} B | {r['short_opened'] or 0:,} | "
            f"{r['flows_finished_at_master']:.0f} | {100 * r['cpu_share']:.2f} |"
        )
    with open(out, "w") as fh:
        fh.write("\n".join(lines) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
