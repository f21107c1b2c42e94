"""A testbed run's per-coflow error against four simulations of it (issue 26,
item 5): which part of the gap between real TCP and the simulator is the
master's control loop, which part the harness's late senders.

- ``event``: what ``coflowkit testbed run`` compares against: the policy decides
  at every event, every flow starts at its planned time;
- ``interval``: the policy decides only every Δ (``realloc=interval``,
  ``decision_s`` = Δ): the master's control loop (the run's ``sim-interval/``);
- ``started``: every flow starts when its sender actually started (the run's
  ``flows.csv``), each coflow still timed from its planned arrival, as the
  real CCT is: the harness's lateness is in both;
- ``started, interval``: both;
- ``connected``: every flow starts when its receiver accepted its connection
  (the first of the run's ``flow_marks.csv``, the receiver's, for the flow):
  TCP's handshake, which waits in the switch's queues like any packet, is in
  the real CCT and not in the simulator's flows;
- ``connected, interval``: that and the control loop.

    python3 benches/testbed_models.py RUN_DIR [RUN_DIR ...]
    python3 benches/testbed_models.py --summary RUN_DIR [RUN_DIR ...]

``--summary`` prints, from each run's own files only, the run's errors and
per-bin ratios against the per-event simulation and against the control-loop
simulation (``comparison-interval.csv``, ``breakdown-interval.csv``), and the
handshakes' median and 90th percentile (each flow's sender start to its
receiver's first read) where the run kept its flow marks, split into the start
to the receiver's accept and the accept to the first read, and the start to
the sender's ``connect`` returning, where the traffic workers' records are
still there.

A run directory is what ``coflowkit testbed run`` wrote for the default
workload of that command (``--coflows 40 --bytes-scale 0.005 --time-scale 0.1
--min-flow-bytes 300000`` on 8 hosts), or a committed copy of one; the
interval is the run's ``--interval-ms`` (20 ms unless given).
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import numpy as np
import pandas as pd

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))

import coflowkit as ck  # noqa: E402
from coflowkit import transforms as T  # noqa: E402
from coflowkit.experiments.common import markdown  # noqa: E402

MODELS = (
    "event",
    "interval",
    "started",
    "started, interval",
    "connected",
    "connected, interval",
)


def as_started(w, starts: np.ndarray):
    """``w`` with flow ``i`` starting at ``starts[i]`` (not before its coflow's
    arrival, which stays: a coflow is still timed from its planned arrival)."""
    f = T.Flows(w)
    if len(starts) != f.num_flows:
        raise SystemExit(f"{len(starts)} flow starts for a workload of {f.num_flows} flows")
    f.start_s = np.maximum(np.asarray(starts, dtype=float), f.arrival_s)
    return f.build("as started")


def simulated(real: pd.DataFrame, w, policy: str, params: dict, interval_s: float) -> dict:
    """Per model: the simulated CCT of every coflow, by coflow id."""
    out = {}
    for model in MODELS:
        ww = w
        if model.startswith("started"):
            ww = as_started(w, real.attrs["starts"])
        elif model.startswith("connected"):
            ww = as_started(w, real.attrs["connected"])
        p = dict(params)
        if model.endswith("interval"):
            p.update(realloc="interval", decision_s=repr(interval_s))
        sim = ck.simulate(ww, policy, params=p, progress=False).coflows.set_index("coflow_id")
        out[model] = sim["cct_s"]
    return out


def accept_split(run: str) -> dict[str, pd.Series] | None:
    """Per flow, from the traffic workers' records (``traffic-host*.json``, which
    committed copies of a run leave out): ``to accept`` (the sender's start to
    the receiver's accept) and ``accept to first read``, and, where the sender
    recorded when its ``connect`` returned, ``to connect`` (its start to
    then); None without records."""
    import glob

    send, connected, accept, read = {}, {}, {}, {}
    for path in sorted(glob.glob(os.path.join(run, "traffic-host*.json"))):
        with open(path, encoding="utf-8") as fh:
            for f in json.load(fh)["flows"]:
                if f["role"] == "send":
                    send[f["id"]] = f["start"]
                    if f.get("connected") is not None:
                        connected[f["id"]] = f["connected"]
                elif f.get("start") is not None and f.get("marks"):
                    accept[f["id"]], read[f["id"]] = f["start"], f["marks"][0][0]
    ids = [i for i in send if i in accept]
    if not ids:
        return None
    out = {
        "to accept": pd.Series({i: accept[i] - send[i] for i in ids}),
        "accept to first read": pd.Series({i: read[i] - accept[i] for i in ids}),
    }
    if connected:
        out["to connect"] = pd.Series({i: connected[i] - send[i] for i in send if i in connected})
    return out


def accepts(run: str) -> pd.Series | None:
    """Per flow, when its receiver accepted the connection (its first mark,
    seconds from the run's t0, as ``flows.csv``); None without marks."""
    for name in ("flow_marks.csv", "flow_marks.csv.gz"):
        path = os.path.join(run, name)
        if os.path.exists(path):
            return pd.read_csv(path).groupby("flow")["time_s"].min()
    return None


def load(run: str, trace: str):
    from coflowkit.runtime import testbed as TB

    with open(os.path.join(run, "comparison.json"), encoding="utf-8") as fh:
        c = json.load(fh)
    hosts = int(c["hosts"])
    w = TB.workload(trace, hosts, 40, 0.005, 0.1, 300e3, "shuffle")
    w = w.with_fabric(TB.sim_fabric(hosts, c["goodput_bytes_per_s"]))
    real = pd.read_csv(os.path.join(run, "coflows.csv")).set_index("coflow_id")
    flows = pd.read_csv(os.path.join(run, "flows.csv")).sort_values("flow")
    real.attrs["starts"] = flows["start_s"].to_numpy()
    accepted = accepts(run)
    if accepted is None:
        raise SystemExit(f"{run}: no flow_marks.csv(.gz): the connected models need it")
    got = flows["flow"].map(accepted)
    real.attrs["connected"] = got.fillna(flows["start_s"]).to_numpy()
    interval = (c.get("interval_model") or {}).get("decision_s", 0.02)
    return c, w, real, interval


def table(runs: list[str], trace: str) -> pd.DataFrame:
    rows = []
    for run in runs:
        c, w, real, interval = load(run, trace)
        sims = simulated(real, w, c["policy"], c.get("params", {}), interval)
        sn = real["bin"] == "SN"
        for model, sim in sims.items():
            e = real["cct_s"] / sim - 1
            rows.append({
                "run": os.path.basename(os.path.normpath(run)),
                "policy": c["policy"],
                "model": model,
                "median abs error": float(e.abs().median()),
                "> 50% off": int((e.abs() > 0.5).sum()),
                "SN real / sim": float(real["cct_s"][sn].mean() / sim[sn].mean()),
            })  # fmt: skip
    return pd.DataFrame(rows)


def ms(x: pd.Series) -> str:
    """``median / p90`` of seconds, in whole milliseconds."""
    return f"{1e3 * x.median():.0f} / {1e3 * x.quantile(0.9):.0f}"


def summary(runs: list[str]) -> pd.DataFrame:
    rows = []
    for run in runs:
        with open(os.path.join(run, "comparison.json"), encoding="utf-8") as fh:
            c = json.load(fh)
        row = {
            "run": os.path.basename(os.path.normpath(run)),
            "policy": c["policy"],
            "release": c.get("agent_release", "change"),
            "mean real / sim": f"{100 * c['mean_cct_error']:+.1f}%",
        }
        for tag, suffix in (("", ""), (", sim at Δ", "-interval")):
            comp = pd.read_csv(os.path.join(run, f"comparison{suffix}.csv"))
            bins = pd.read_csv(os.path.join(run, f"breakdown{suffix}.csv")).set_index("bin")
            row[f"median abs error{tag}"] = f"{100 * comp['error'].abs().median():.1f}%"
            row[f"> 50% off{tag}"] = int((comp["error"].abs() > 0.5).sum())
            for b in ("SN", "SW", "LW"):
                if b in bins.index:
                    row[f"{b}{tag}"] = f"{bins.loc[b, 'real_over_sim']:.2f}"
        accepted = accepts(run)
        if accepted is not None:
            flows = pd.read_csv(os.path.join(run, "flows.csv")).set_index("flow")
            hs = (accepted - flows["start_s"]).dropna()
            row["handshake median / p90 (ms)"] = ms(hs)
        for name, x in (accept_split(run) or {}).items():
            row[f"{name} (ms)"] = ms(x)
        rows.append(row)
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="+", help="`coflowkit testbed run` output directories")
    ap.add_argument("--summary", action="store_true", help="the runs' own comparisons only")
    ap.add_argument(
        "--trace", default=os.path.join(ROOT, "..", "shared", "traces", "FB2010-1Hr-150-0.txt")
    )
    a = ap.parse_args(argv)
    print(markdown(summary(a.runs) if a.summary else table(a.runs, a.trace)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
