"""Does the master's late first sight of flows explain CODA's testbed results?

Reads the `identification.csv` of testbed runs with nothing registered (each
flow's delay between its planned start and the master's first sight of it) and
simulates the same testbed workload with every flow starting when the master
first saw it:

* `coda:labels=identify`: identification on the sighting times instead of the
  planned starts (the simulator's identifier reads a flow's start time);
* `coda:labels=truth` and `aalo`: the same later starts with perfect labels, so
  that the cost of the later starts alone is known.

Usage: python3 benches/coda_sighting.py RUN_DIR... [--out FILE.md]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile

import numpy as np
import pandas as pd
from coflowkit import api
from coflowkit.cli import default_trace
from coflowkit.labels import quality
from coflowkit.runtime import testbed


def shifted(base: pd.DataFrame, delay: np.ndarray, path: str):
    """The testbed workload with every flow starting `delay` later (never before
    its coflow's arrival)."""
    t = base.copy()
    t["start_s"] = np.maximum(t["start_s"].to_numpy() + delay, t["arrival_s"].to_numpy())
    t.to_csv(path, index=False)
    return api.load_trace(path)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+")
    ap.add_argument("--out")
    a = ap.parse_args()
    w = testbed.workload(default_trace(), 8, 40, 0.005, 0.1, 300e3)
    truth = np.asarray(w.flow_columns()["coflow_id"])
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        flows_csv = os.path.join(tmp, "flows.csv")
        api.write_trace(w, flows_csv, "flows")
        base = pd.read_csv(flows_csv)
        for run in a.runs:
            ident = pd.read_csv(os.path.join(run, "identification.csv")).sort_values("flow")
            if len(ident) != len(base) or ident["seen_after_start_s"].isna().any():
                sys.exit(f"{run}: identification.csv does not give every flow's first sight")
            comp = json.load(open(os.path.join(run, "comparison.json"), encoding="utf-8"))
            fabric = testbed.sim_fabric(8, comp["goodput_bytes_per_s"])
            delay = ident["seen_after_start_s"].to_numpy()
            sim_w = shifted(base, delay, os.path.join(tmp, "shifted.csv")).with_fabric(fabric)
            planned = w.with_fabric(fabric)
            q_real = comp["identification"]
            row = {
                "run": os.path.basename(os.path.normpath(run)),
                "sight delay median (s)": float(np.median(delay)),
                "p95 (s)": float(np.percentile(delay, 95)),
                "testbed P / R": f"{q_real['precision']:.3f} / {q_real['recall']:.3f}",
                "testbed CCT (s)": comp["real_mean_cct_s"],
            }
            for name, wl in (("planned", planned), ("sighted", sim_w)):
                r = api.simulate(wl, "coda", {"labels": "identify"})
                q = quality(truth, np.asarray(r.extra["flow_labels"]))
                row[f"sim {name} P / R"] = f"{q.precision:.3f} / {q.recall:.3f}"
                row[f"sim {name} CCT (s)"] = float(r.coflows["cct_s"].mean())
            for pol, params in (("coda", {"labels": "truth"}), ("aalo", {})):
                r = api.simulate(sim_w, pol, params)
                row[f"sim sighted, {pol} true labels CCT (s)"] = float(r.coflows["cct_s"].mean())
            rows.append(row)
    cols = list(rows[0])
    fmt = lambda v: f"{v:.3f}" if isinstance(v, float) else str(v)  # noqa: E731
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(fmt(r[c]) for c in cols) + " |" for r in rows]
    text = "\n".join(lines)
    print(text)
    if a.out:
        with open(a.out, "w", encoding="utf-8") as fh:
            fh.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
