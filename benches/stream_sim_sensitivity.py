"""Stream in simulation on a testbed workload, under the modelling choices that
could separate the testbed from the simulator (docs/results/testbed/
stream-decentralized/README.md): the receiver's decision delay, no relay, and a
starvation timer (low classes get bandwidth back).

    python benches/stream_sim_sensitivity.py [shuffle|many-to-one] [GOODPUT_MBIT]

Prints the mean CCT overall and per bin for each variant (same workload and
goodput as `coflowkit testbed run --decentralized` with that layout).
"""

from __future__ import annotations

import sys

from coflowkit import api
from coflowkit.options import default_trace
from coflowkit.runtime.testbed import sim_fabric, workload

LAYOUTS = {
    "shuffle": (8, 40, 0.005, 0.1, 300e3, "shuffle"),
    "many-to-one": (8, 117, 0.0002, 0.1, 30e3, "many-to-one"),
}
VARIANTS = [
    ("stream (defaults)", "stream", {}),
    ("delay_s=0.02 (one round)", "stream", {"delay_s": "0.02"}),
    ("delay_s=0.1", "stream", {"delay_s": "0.1"}),
    ("delay_s=0.2", "stream", {"delay_s": "0.2"}),
    ("delay_s=0.3", "stream", {"delay_s": "0.3"}),
    ("delay_s=0.5", "stream", {"delay_s": "0.5"}),
    ("delay_s=1", "stream", {"delay_s": "1"}),
    ("settle=true (class by class, as the agents)", "stream", {"settle": "true"}),
    ("reeval_s=0.02 (S seen every agent round)", "stream", {"reeval_s": "0.02"}),
    ("settle=true, reeval_s=0.02", "stream", {"settle": "true", "reeval_s": "0.02"}),
    ("relay=false", "stream", {"relay": "false"}),
    ("starvation_s=0.01", "stream", {"starvation_s": "0.01"}),
    ("fair (TCP's model)", "fair", {}),
]


def main(argv: list[str]) -> int:
    layout = argv[0] if argv else "shuffle"
    mbit = float(argv[1]) if len(argv) > 1 else 23.3
    w = workload(default_trace(), *LAYOUTS[layout]).with_fabric(sim_fabric(8, mbit * 1e6 / 8))
    print(f"{layout}, {mbit} Mbit/s goodput per link")
    print("| variant | mean CCT, s | " + " | ".join(["LN", "LW", "SN", "SW"]) + " |")
    print("|---|---|---|---|---|---|")
    for label, policy, params in VARIANTS:
        c = api.simulate(w, policy, params).coflows
        by = c.groupby("bin")["cct_s"].mean()
        cells = " | ".join(f"{by[b]:.3f}" if b in by else "" for b in ["LN", "LW", "SN", "SW"])
        print(f"| {label} | {c['cct_s'].mean():.3f} | {cells} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
