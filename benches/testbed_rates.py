"""Assigned against achieved rates, flow by flow, in a testbed run made with
``coflowkit testbed run --sample-ms MS`` (issue 26, item 5).

Reads the run directory's ``rates.csv`` (every scheduled flow's assigned rate,
as the master's API showed it at each poll), ``flow_marks.csv`` (when each
1/64 of a flow had arrived at its receiver), ``flows.csv`` and
``traffic-plan.json``, and prints, per bin of coflows (SN, SW, LW):

- the bytes the assigned rates would have carried over the flows' lives,
  against their sizes;
- the bytes achieved against the bytes assigned in each poll interval, by the
  time since the flow's assigned rate last rose (a step up: a flow resumed, or
  given more), so a slow take-up of a raised rate shows as a low ratio in the
  first intervals after a step;
- the bytes carried while the master assigned the flow nothing (unknown to it
  yet, or paused at the trickle).

A flow is matched to the master's rows by (coflow, source, destination); a
pair that is not unique within its coflow is left out (counted).

``--control`` measures the method itself: each flow's marks are replaced by
the marks of a flow that sent exactly at its assigned rates (the same byte
levels, each reached when the assigned rates' integral reaches it), and the
age table gets the ratio computed from them beside the real one. Marks are 1/64 of a flow apart, so a
large flow's marks can be seconds apart, and achieved bytes interpolated
between them smear a step in rate over the span; the control shows how much
of a low ratio after a rise that alone gives.

``--room``: per bin, the share of its links that the master held for paused
flows' trickles while a flow of that bin was served, at each poll: the larger
of its two links' count of paused flows (assigned 0) times the run's paused
floor (``paused_floor`` in ``comparison.json``, 0.005 if absent).

    python3 benches/testbed_rates.py RUN_DIR [--markdown] [--control] [--room]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sys

import numpy as np
import pandas as pd

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from coflowkit.experiments.common import markdown  # noqa: E402

AGE_EDGES_S = (0.0, 0.05, 0.1, 0.2, 0.5, np.inf)


def load(run: str) -> dict:
    need = ("rates.csv", "flow_marks.csv", "flows.csv", "coflows.csv", "traffic-plan.json")
    # Each file as the run wrote it, or gzipped (as the committed runs keep them).
    path = {n: next((os.path.join(run, x) for x in (n, n + ".gz")
                     if os.path.exists(os.path.join(run, x))), None) for n in need}  # fmt: skip
    missing = [n for n in need if path[n] is None]
    if missing:
        raise SystemExit(
            f"{run}: no {', '.join(missing)} (a run of `coflowkit testbed run --sample-ms MS`)"
        )
    opener = gzip.open if path["traffic-plan.json"].endswith(".gz") else open
    with opener(path["traffic-plan.json"], "rt", encoding="utf-8") as fh:
        plan = pd.DataFrame(json.load(fh)["flows"]).set_index("id")
    return {
        "plan": plan,
        "rates": pd.read_csv(path["rates.csv"]),
        "marks": pd.read_csv(path["flow_marks.csv"]),
        "flows": pd.read_csv(path["flows.csv"]).set_index("flow"),
        "coflows": pd.read_csv(path["coflows.csv"]).set_index("coflow_id"),
    }


def marks_at_assigned(edges: np.ndarray, a: np.ndarray, levels: np.ndarray):
    """The marks (times, bytes) of a flow that sends at rate ``a[i]`` from
    ``edges[i]`` to ``edges[i + 1]``: each byte level of ``levels`` that its
    bytes reach, at the time they reach it (the first at ``edges[0]`` if it
    is 0)."""
    got = np.concatenate(([0.0], np.cumsum(a * np.diff(edges))))
    # (Within rounding: a flow assigned exactly its size reaches its last level.)
    levels = levels[levels <= got[-1] * (1 + 1e-9)]
    j = np.minimum(np.searchsorted(got, levels, side="left"), len(got) - 1)
    t = np.empty(len(levels))
    first = j == 0
    t[first] = edges[0]
    k = j[~first]
    frac = np.minimum((levels[~first] - got[k - 1]) / (got[k] - got[k - 1]), 1.0)
    t[~first] = edges[k - 1] + frac * (edges[k] - edges[k - 1])
    return t, levels


def intervals(d: dict, control: bool = False) -> tuple[pd.DataFrame, int]:
    """One row per (flow, poll interval inside its life): the assigned rate at
    the interval's start, the bytes achieved in it (from the receiver's marks,
    linear between marks), its length, and the time since the flow's assigned
    rate last rose. ``control``: the marks of a flow that sent exactly at its
    assigned rates instead (:func:`marks_at_assigned`)."""
    plan, rates, marks, flows = d["plan"], d["rates"], d["marks"], d["flows"]
    polls = np.array(sorted(rates.time_s.unique()))
    unique = plan.groupby(["coflow", "src", "dst"]).size()
    by_key = {k: g.set_index("time_s").rate_bytes_per_s for k, g in
              rates.groupby(["coflow_id", "src", "dst"])}  # fmt: skip
    marks_of = {f: (g.time_s.to_numpy(), g.bytes.to_numpy(float)) for f, g in marks.groupby("flow")}
    rows = []
    skipped = 0
    for fid, p in plan.iterrows():
        key = (p.coflow, p.src, p.dst)
        if unique[key] != 1 or fid not in marks_of:
            skipped += 1
            continue
        start, end = flows.loc[fid, "start_s"], flows.loc[fid, "end_s"]
        inside = polls[(polls >= start) & (polls < end)]
        if len(inside) < 2:
            continue
        assigned = by_key.get(key)
        a = (
            np.zeros(len(inside))
            if assigned is None
            else assigned[~assigned.index.duplicated()].reindex(inside, fill_value=0.0).to_numpy()
        )
        edges = np.append(inside, end)
        mt, mb = marks_of[fid]
        if control:
            mt, mb = marks_at_assigned(edges, a, mb)
            if len(mt) == 0:
                continue
        got = np.interp(edges, mt, mb)
        rose_at = inside[0]
        for i in range(len(inside)):
            if i > 0 and a[i] > a[i - 1] * 1.05:
                rose_at = inside[i]
            rows.append((fid, p.coflow, a[i], got[i + 1] - got[i], edges[i + 1] - edges[i],
                         inside[i] - rose_at, p.bytes))  # fmt: skip
    cols = ["flow", "coflow", "assigned", "achieved_bytes", "dt", "since_rise_s", "size"]
    return pd.DataFrame(rows, columns=cols), skipped


def table(d: dict, control: bool = False) -> tuple[pd.DataFrame, pd.DataFrame, int]:
    iv, skipped = intervals(d, control)
    iv["bin"] = d["coflows"].loc[iv.coflow, "bin"].to_numpy()
    iv["assigned_bytes"] = iv.assigned * iv.dt
    per_bin = []
    for b, g in iv.groupby("bin"):
        lives = g.groupby("flow").agg(assigned=("assigned_bytes", "sum"), size=("size", "first"))
        on = g[g.assigned > 0]
        off = g[g.assigned <= 0]
        per_bin.append({
            "bin": b,
            "flows": int(g.flow.nunique()),
            "assigned over life / size (median)": float((lives.assigned / lives["size"]).median()),
            "achieved / assigned, while assigned": float(on.achieved_bytes.sum() / on.assigned_bytes.sum()),
            "share of bytes carried while assigned nothing": float(off.achieved_bytes.sum() / g.achieved_bytes.sum()),
        })  # fmt: skip
    on = iv[iv.assigned > 0].copy()
    on["age"] = pd.cut(on.since_rise_s, AGE_EDGES_S, right=False)
    age = (
        on.groupby(["bin", "age"], observed=True)
        .apply(
            lambda g: pd.Series(
                {
                    "intervals": len(g),
                    "achieved / assigned": g.achieved_bytes.sum() / g.assigned_bytes.sum(),
                }
            ),
            include_groups=False,
        )  # fmt: skip
        .reset_index()
    )
    age["age"] = [f"[{a.left:g}, {a.right:g}) s" for a in age["age"]]
    age["intervals"] = age["intervals"].astype(int)
    return pd.DataFrame(per_bin), age, skipped


def trickle_room(rates: pd.DataFrame, coflows: pd.DataFrame, floor: float) -> pd.DataFrame:
    """Per bin: mean, median and largest share of a served flow's links held
    for trickles (see the module doc), over (flow, poll) pairs."""
    paused = rates[rates.rate_bytes_per_s <= 0]
    served = rates[rates.rate_bytes_per_s > 0]
    up = paused.groupby(["time_s", "src"]).size()
    down = paused.groupby(["time_s", "dst"]).size()
    n_up = up.reindex(pd.MultiIndex.from_arrays([served.time_s, served.src])).fillna(0).to_numpy()
    n_down = down.reindex(pd.MultiIndex.from_arrays([served.time_s, served.dst])).fillna(0)
    room = floor * np.maximum(n_up, n_down.to_numpy())
    out = pd.DataFrame({"bin": coflows.loc[served.coflow_id, "bin"].to_numpy(), "room": room})
    return (
        out.groupby("bin")
        .room.agg(["mean", "median", "max"])
        .rename(columns=lambda c: f"{c} share held for trickles")
        .reset_index()
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run", help="a `coflowkit testbed run --sample-ms` output directory")
    ap.add_argument("--markdown", action="store_true", help="print Markdown tables")
    ap.add_argument(
        "--control",
        action="store_true",
        help="the same tables for flows that sent exactly at their assigned rates, "
        "marked at the real marks' byte levels (what the method alone gives)",
    )
    ap.add_argument(
        "--room", action="store_true", help="the share of served flows' links held for trickles"
    )
    a = ap.parse_args(argv)
    d = load(a.run)
    per_bin, age, skipped = table(d)
    if a.control:
        # Side by side: the real ratio, the control's, and the real over the control.
        _, ctl, _ = table(d, control=True)
        age = age.merge(ctl[["bin", "age", "achieved / assigned"]], on=["bin", "age"],
                        suffixes=("", ", control"))  # fmt: skip
        age["real / control"] = age["achieved / assigned"] / age["achieved / assigned, control"]
    show = markdown if a.markdown else (lambda t: t.round(3).to_string(index=False))
    print(show(per_bin))
    print()
    print(show(age))
    print(f"\nflows left out (a (coflow, src, dst) pair not unique in its coflow): {skipped}")
    if a.room:
        with open(os.path.join(a.run, "comparison.json"), encoding="utf-8") as fh:
            floor = json.load(fh).get("paused_floor", 0.005)
        print(f"\npaused floor {floor}")
        print(show(trickle_room(d["rates"], d["coflows"], floor)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
