"""`coflowkit reproduce ncdrf-testbed`: the NC-DRF paper's testbed micro-benchmark
(Sec. V-B, Table III, Figs. 7-8) run for real: coflowkit's runtime (a master and one
agent per host) scheduling real TCP between network namespaces of this machine.
Needs root (it builds the testbed of docs/runtime.md).

The paper ran 60 EC2 machines with 200 Mbps links. This machine carries about 8
hosts at 25 Mbit/s (docs/runtime.md), so the benchmark is scaled, keeping what the
schedulers see on each link:

* 12 hosts: coflow A in two groups of six machines instead of ten, B pairing i and
  i + 6, C pairing j and j + 3 (j in 0..2 and 6..8). Every host link carries the same
  flows of A, B and C as on 60 machines (:func:`common.testbed_micro`).
* Links of 25 Mbit/s, and every flow's size × 25/200, so the timeline is the
  paper's: arrivals at 0, 10 and 20 s, sizes drawn in 30-100 MB (× 1/8).
* A's flows from a machine to itself are left out: they do not cross the network.

Each policy's run is also simulated (the exact engine, on links of the goodput
measured before the run), as `testbed run` does.
"""

from __future__ import annotations

import os
import shutil
import time

import numpy as np
import pandas as pd

from coflowkit import transforms as T
from coflowkit._core import CoflowkitError
from coflowkit.experiments import common
from coflowkit.experiments.common import Output, fmt

#: The paper's Fig. 7 schedulers (TCP is per-flow fairness), by report name.
POLICIES = [("fair", "TCP"), ("psp", "PS-P"), ("ncdrf", "NC-DRF"), ("hug", "HUG"), ("drf", "DRF")]
#: The paper's link rate (Mbit/s) and arrivals (Table III).
PAPER_MBPS = 200.0
ARRIVALS_S = (0.0, 10.0, 20.0)
COFLOWS = {1: "A", 2: "B", 3: "C"}
#: Sampling interval of the master's per-coflow bytes (Fig. 8), seconds.
SAMPLE_S = 0.5


def run(
    out: str,
    trace: str | None = None,
    workers: int = 1,
    cache_dir: str | None = None,
    transforms: tuple[str, ...] = (),
    coflows: int | None = None,
    seed: int = 1,
    groups: int = 2,
    mbps: float = 25.0,
    policies: list[tuple[str, str]] | None = None,
    size_scale: float | None = None,
    time_scale: float = 1.0,
) -> str:
    """Runs the scaled micro-benchmark under each of ``policies`` (default: the
    paper's five) on a testbed of ``6 · groups`` hosts with ``mbps`` links and
    writes the report. ``trace``, ``workers`` and ``cache_dir`` are not used (no
    trace is replayed, and real runs are never cached); ``coflows`` and
    ``transforms`` are refused. ``size_scale`` (default ``mbps / 200``) and
    ``time_scale`` (arrivals ×, default 1) shrink the benchmark for tests."""
    from coflowkit.runtime import testbed

    del trace, workers, cache_dir
    if coflows is not None or transforms:
        raise CoflowkitError(
            "reproduce ncdrf-testbed replays the paper's three-coflow micro-benchmark, "
            "not the trace: --coflows and --transform do not apply"
        )
    policies = policies or POLICIES
    hosts = 6 * groups
    arrivals = tuple(time_scale * a for a in ARRIVALS_S)
    w = common.testbed_micro(arrivals, "random", seed=seed, groups=groups, self_flows=False)
    factor = mbps / PAPER_MBPS if size_scale is None else size_scale
    w = scale_bytes(w, factor)
    o = Output(out, "NC-DRF testbed micro-benchmark (Sec. V-B, Figs. 7-8) on coflowkit's testbed")
    runs = {}
    for policy, name in policies:
        d = os.path.join(out, "runs", policy)
        runs[name] = testbed.run_workload(w, policy, {}, d, hosts, mbps / 1000.0, sample_s=SAMPLE_S)
        runs[name]["dir"] = d
        prune(d)
    t = cct_table(runs)
    o.add(
        "## Fig. 7: CCT of the three coflows\n\n"
        "Real: the last byte of the coflow received, from its release (Table III's "
        "arrivals). Simulated: the same workload on the exact engine with links of the "
        "goodput measured before each run.\n"
    )
    o.add(o.table("fig7_cct", t, "CCT (s) per coflow, real and simulated"))
    rates = {name: window_rates(r["dir"], hosts, arrivals) for name, r in runs.items()}
    o.add(o.figure("fig8_progress", fig8(runs, hosts, mbps)))
    o.add("## The paper's claims, checked on the real runs\n\n")
    o.add("".join(f"* {c}\n" for c in with_sim_verdicts(t, rates)))
    pre = (
        f"Command: `coflowkit reproduce ncdrf-testbed --out {out}` (took "
        f"{time.monotonic() - o.started:.0f} s, every run real); {o.provenance}.\n\n"
        f"Setup: {hosts} hosts of the testbed (docs/runtime.md), {mbps:g} Mbit/s links, "
        f"the paper's three coflows scaled as the module doc says (flow sizes × {factor:g}, "
        f"arrivals at {', '.join(f'{a:g}' for a in arrivals)} s, seed {seed}); "
        f"{len(w.flow_columns()['flow_id'])} flows. "
        "The master reallocates every 20 ms; agents enforce with HTB.\n\n"
    )
    o.add(notes(runs, hosts, mbps, factor))
    return o.write(pre)


#: What a run keeps in the report's folder: the real run as `simulate` writes it,
#: its simulation, the comparison and the master's samples. The rest (TLS identities
#: made for the run, per-host logs and traffic records) is removed.
KEEP = {"comparison.csv", "comparison.json", "progress.csv", "coflows.csv", "summary.json"}


def prune(run_dir: str) -> None:
    """Removes from ``run_dir`` all but :data:`KEEP` (and ``sim/``'s CSV and JSON)."""
    for name in os.listdir(run_dir):
        path = os.path.join(run_dir, name)
        if name == "sim":
            for f in os.listdir(path):
                if not f.endswith((".csv", ".json")):
                    os.remove(os.path.join(path, f))
        elif name not in KEEP:
            shutil.rmtree(path) if os.path.isdir(path) else os.remove(path)


def scale_bytes(w, factor: float):
    """``w`` with every flow's bytes × ``factor`` (the ``scale`` transform)."""
    return T.apply(w, "scale", bytes=factor)


def cct_table(runs: dict) -> pd.DataFrame:
    rows = []
    for name, r in runs.items():
        comp = pd.read_csv(os.path.join(r["dir"], "comparison.csv")).set_index("coflow_id")
        row: dict = {"policy": name}
        for k, lab in COFLOWS.items():
            row[f"{lab} real"] = comp.loc[k, "real_cct_s"]
        for k, lab in COFLOWS.items():
            row[f"{lab} sim"] = comp.loc[k, "sim_cct_s"]
        row["mean error"] = r["mean_cct_error"]
        rows.append(row)
    return pd.DataFrame(rows)


def coflow_rates(run_dir: str, hosts: int) -> pd.DataFrame:
    """Per coflow, its acknowledged bytes' rate per host link over time (Mbit/s),
    from the master's samples: columns time_s, coflow_id, mbps."""
    p = pd.read_csv(os.path.join(run_dir, "progress.csv"))
    out = []
    for k, part in p.groupby("coflow_id"):
        part = part.sort_values("time_s")
        t = part["time_s"].to_numpy()
        b = part["bytes_sent"].to_numpy()
        if len(t) < 2:
            continue
        r = np.diff(b) / np.diff(t) * 8 / 1e6 / hosts
        out.append(pd.DataFrame({"time_s": t[1:], "coflow_id": k, "mbps": r}))
    return pd.concat(out) if out else pd.DataFrame(columns=["time_s", "coflow_id", "mbps"])


def window_rates(run_dir: str, hosts: int, arrivals=ARRIVALS_S) -> dict[str, float]:
    """The per-link rate of each coflow over the paper's Fig. 8 windows: A and B from
    B's arrival until C's (10-20 s), A and C from C's arrival until the first of
    them ends."""
    p = pd.read_csv(os.path.join(run_dir, "progress.csv"))
    comp = pd.read_csv(os.path.join(run_dir, "comparison.csv")).set_index("coflow_id")
    ta, tb, tc = arrivals
    end_ab = min(tc, tb + comp.loc[2, "real_cct_s"])
    end_ac = min(ta + comp.loc[1, "real_cct_s"], tc + comp.loc[3, "real_cct_s"])

    def rate(k: int, t0: float, t1: float) -> float:
        part = p[p["coflow_id"] == k].sort_values("time_s")
        if t1 <= t0 or part.empty:
            return float("nan")
        b = np.interp([t0, t1], part["time_s"], part["bytes_sent"])
        return float((b[1] - b[0]) / (t1 - t0) * 8 / 1e6 / hosts)

    return {
        "A, 10-20 s": rate(1, tb, end_ab),
        "B, 10-20 s": rate(2, tb, end_ab),
        "A, from 20 s": rate(1, tc, end_ac),
        "C, from 20 s": rate(3, tc, end_ac),
    }


def fig8(runs: dict, hosts: int, mbps: float):
    pl = common.plt()
    shown = [n for n in ("TCP", "PS-P", "NC-DRF") if n in runs]
    fig, axes = pl.subplots(1, len(shown), figsize=(4 * len(shown), 3), sharey=True, squeeze=False)
    for ax, name in zip(axes[0], shown, strict=True):
        r = coflow_rates(runs[name]["dir"], hosts)
        for k, lab in COFLOWS.items():
            part = r[r["coflow_id"] == k]
            ax.plot(part["time_s"], part["mbps"], label=lab)
        ax.set_title(name)
        ax.set_xlabel("time (s)")
    axes[0][0].set_ylabel(f"rate per host link (Mbit/s of {mbps:g})")
    axes[0][0].legend()
    fig.tight_layout()
    return fig


def fig7_8_claims(t: pd.DataFrame, rates: dict) -> list[str]:
    by = t.set_index("policy")
    out = []
    if "NC-DRF" not in by.index:
        return out
    nc = by.loc["NC-DRF"]
    for other in ("TCP", "PS-P"):
        if other in by.index:
            ok = all(nc[f"{c} real"] <= by.loc[other, f"{c} real"] for c in "ABC")
            out.append(
                f"NC-DRF finishes all three coflows no later than {other} (Fig. 7): "
                f"{'holds' if ok else '**fails**'}"
            )
    for other in ("HUG", "DRF"):
        if other in by.index:
            ok = nc["B real"] < by.loc[other, "B real"]
            out.append(
                f"NC-DRF finishes B earlier than {other} (Fig. 7): "
                f"{'holds' if ok else '**fails**'} ({fmt(nc['B real'])} s against "
                f"{fmt(by.loc[other, 'B real'])} s)"
            )

    def gap(name: str, a: str, b: str) -> float:
        x, y = rates[name][a], rates[name][b]
        return abs(np.log(x / y)) if x > 0 and y > 0 else float("inf")

    for a, b, when in (
        ("A, 10-20 s", "B, 10-20 s", "10-20 s"),
        ("A, from 20 s", "C, from 20 s", "from 20 s"),
    ):
        g = {n: gap(n, a, b) for n in ("TCP", "PS-P", "NC-DRF") if n in rates}
        if "NC-DRF" not in g:
            continue
        ok = all(g["NC-DRF"] < g[n] for n in g if n != "NC-DRF")
        cells = ", ".join(f"{n} {fmt(rates[n][a])} / {fmt(rates[n][b])}" for n in g)
        out.append(
            f"NC-DRF gives {a[0]} and {b[0]} the most nearly equal progress {when} (Fig. 8; "
            f"Mbit/s per host link, {a[0]} / {b[0]}: {cells}): {'holds' if ok else '**fails**'}"
        )
    return out


def notes(runs: dict, hosts: int, mbps: float, factor: float) -> str:
    errs = ", ".join(f"{n} {fmt(100 * r['mean_cct_error'])}%" for n, r in runs.items())
    worst = max(abs(r["mean_cct_error"]) for r in runs.values())
    agree = (
        f"* Every real run is within {fmt(100 * worst)}% of its simulation in mean CCT. "
        "Where a Fig. 7 claim fails on the real runs and on their simulation alike, "
        "it fails in the model, not because of the testbed.\n"
        if worst < 0.05
        else ""
    )
    rounds = ", ".join(f"{n} {fmt(1000 * r['master_round_mean_s'])} ms" for n, r in runs.items())
    return (
        "## Notes\n\n"
        f"* Real against simulated mean CCT: {errs}. The simulation is a fluid model on "
        "the measured goodput; the real runs add TCP's dynamics, the 20 ms rounds and "
        "the agents' reporting delay.\n"
        f"* The master's mean round: {rounds}.\n"
        f"* The paper's EC2 runs had 60 machines at {PAPER_MBPS:g} Mbps; this is {hosts} "
        f"hosts at {mbps:g} Mbit/s with flow sizes × {factor:g}: the per-link mix of the "
        "three coflows is the paper's, the absolute rates are not.\n" + agree
    )


def sim_table(t: pd.DataFrame) -> pd.DataFrame:
    """:func:`cct_table`'s simulated CCTs in the place of the real ones."""
    sim = t[["policy"]].copy()
    for c in "ABC":
        sim[f"{c} real"] = t[f"{c} sim"]
    return sim


def with_sim_verdicts(t: pd.DataFrame, rates: dict) -> list[str]:
    """The claims on the real runs, each Fig. 7 claim followed by its verdict on the
    simulated CCTs of the same runs."""
    real = fig7_8_claims(t, rates)
    sim = [c for c in fig7_8_claims(sim_table(t), {}) if "(Fig. 7)" in c]
    out = []
    for c in real:
        if "(Fig. 7)" in c:
            v = sim.pop(0)
            c += f"; simulated: {'**fails**' if 'fails' in v else 'holds'}"
        out.append(c)
    return out
