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
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from coflowkit import transforms as T
from coflowkit._core import CoflowkitError
from coflowkit.experiments import common, ncdrf
from coflowkit.experiments.common import Claim
from coflowkit.experiments.spec import Claims, Experiment, Figure, Paper, Table

#: The paper's Fig. 7 schedulers (TCP is per-flow fairness), by report name.
POLICIES = (("fair", "TCP"), ("psp", "PS-P"), ("ncdrf", "NC-DRF"), ("hug", "HUG"), ("drf", "DRF"))
#: The paper's testbed: machines and link rate (Mbit/s) (Sec. V-B), and arrivals
#: (Table III).
PAPER_MACHINES = Paper(60, "Sec. V-B")
PAPER_MBPS = Paper(200.0, "Sec. V-B")
ARRIVALS_S = (0.0, 10.0, 20.0)
COFLOWS = {1: "A", 2: "B", 3: "C"}
#: Sampling interval of the master's per-coflow bytes (Fig. 8), seconds.
SAMPLE_S = 0.5
#: The master's round (ms), as `testbed run` uses it.
INTERVAL_MS = 20


@dataclass(frozen=True)
class Setup:
    """The scaled benchmark: ``6 · groups`` hosts with ``mbps`` links, the paper's
    ``policies``; ``size_scale`` (default ``mbps / 200``) and ``time_scale``
    (arrivals ×, default 1) shrink it for tests."""

    groups: int = 2
    mbps: float = 25.0
    policies: tuple[tuple[str, str], ...] = POLICIES
    size_scale: float | None = None
    time_scale: float = 1.0
    seed: int = 1

    @property
    def hosts(self) -> int:
        return 6 * self.groups

    @property
    def arrivals(self) -> tuple[float, ...]:
        return tuple(self.time_scale * a for a in ARRIVALS_S)

    @property
    def factor(self) -> float:
        return self.mbps / PAPER_MBPS.value if self.size_scale is None else self.size_scale


@dataclass
class Runs:
    """The real runs, by report name, each with its folder (``dir``), and the
    workload they replayed."""

    setup: Setup
    flows: int
    runs: dict[str, dict] = field(default_factory=dict)


def setup_of(ctx) -> Setup:
    return ctx.opts.config or Setup()


def refuse_trace_options(ctx) -> None:
    """No trace is replayed: ``--coflows`` and ``--transform`` do not apply."""
    if ctx.opts.coflows is not None or ctx.opts.transforms:
        raise CoflowkitError(
            "reproduce ncdrf-testbed replays the paper's three-coflow micro-benchmark, "
            "not the trace: --coflows and --transform do not apply"
        )


def real_runs(ctx) -> Runs:
    """Runs the scaled micro-benchmark for real under each policy (root: it builds
    the testbed), each also simulated on the goodput measured before it."""
    from coflowkit.runtime import testbed

    s = setup_of(ctx)
    w = common.testbed_micro(s.arrivals, "random", seed=s.seed, groups=s.groups, self_flows=False)
    w = scale_bytes(w, s.factor)
    out = Runs(s, len(w.flow_columns()["flow_id"]))
    for policy, name in s.policies:
        d = os.path.join(ctx.opts.out, "runs", policy)
        r = testbed.run_workload(
            w, policy, {}, d, s.hosts, s.mbps / 1000.0, INTERVAL_MS, sample_s=SAMPLE_S
        )
        r["dir"] = d
        prune(d)
        out.runs[name] = r
    return out


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


def fig8(ctx):
    """Per-link rate of each coflow over time under TCP, PS-P and NC-DRF."""
    R: Runs = ctx.local
    pl = common.plt()
    shown = [n for n in ("TCP", "PS-P", "NC-DRF") if n in R.runs]
    if not shown:
        return None
    fig, axes = pl.subplots(1, len(shown), figsize=(4 * len(shown), 3), sharey=True, squeeze=False)
    for ax, name in zip(axes[0], shown, strict=True):
        r = coflow_rates(R.runs[name]["dir"], R.setup.hosts)
        for k, lab in COFLOWS.items():
            part = r[r["coflow_id"] == k]
            ax.plot(part["time_s"], part["mbps"], label=lab)
        ax.set_title(name)
        ax.set_xlabel("time (s)")
    axes[0][0].set_ylabel(f"rate per host link (Mbit/s of {R.setup.mbps:g})")
    axes[0][0].legend()
    fig.tight_layout()
    return fig


def fig7_table(ctx) -> pd.DataFrame:
    return cct_table(ctx.local.runs)


def windows(ctx) -> dict[str, dict[str, float]]:
    """Per policy, :func:`window_rates` of its real run."""
    R: Runs = ctx.local
    return {n: window_rates(r["dir"], R.setup.hosts, R.setup.arrivals) for n, r in R.runs.items()}


def fig8_table(ctx) -> pd.DataFrame:
    """The per-link rate (Mbit/s) of each coflow in Fig. 8's windows, per policy."""
    return pd.DataFrame([{"policy": n, **w} for n, w in windows(ctx).items()])


#: Fig. 8's windows: the two coflows sharing the links, and when.
WINDOWS = (("A, 10-20 s", "B, 10-20 s", "10-20 s"), ("A, from 20 s", "C, from 20 s", "from 20 s"))


def fig7_claims(by: pd.DataFrame, suffix: str) -> dict[str, bool]:
    """Fig. 7's orderings on the CCT columns ``"{coflow} {suffix}"`` (real or sim),
    for the policies that ran."""
    out: dict[str, bool] = {}
    if "NC-DRF" not in by.index:
        return out
    nc = by.loc["NC-DRF"]
    for other in ("TCP", "PS-P"):
        if other in by.index:
            out[f"all:{other}"] = all(
                nc[f"{c} {suffix}"] <= by.loc[other, f"{c} {suffix}"] for c in "ABC"
            )
    for other in ("HUG", "DRF"):
        if other in by.index:
            out[f"B:{other}"] = bool(nc[f"B {suffix}"] < by.loc[other, f"B {suffix}"])
    return out


def fig8_claims(rates: dict[str, dict[str, float]]) -> dict[str, bool]:
    """Fig. 8: NC-DRF's two coflows progress the most nearly equally (the least
    |log ratio| of their rates) among TCP, PS-P and NC-DRF, in each window."""

    def gap(name: str, a: str, b: str) -> float:
        x, y = rates[name][a], rates[name][b]
        return abs(np.log(x / y)) if x > 0 and y > 0 else float("inf")

    out = {}
    for a, b, when in WINDOWS:
        g = {n: gap(n, a, b) for n in ("TCP", "PS-P", "NC-DRF") if n in rates}
        if "NC-DRF" in g and len(g) > 1:
            out[when] = all(g["NC-DRF"] < g[n] for n in g if n != "NC-DRF")
    return out


def claims(ctx) -> list[Claim]:
    """Every Fig. 7 ordering on the real runs and on their simulations; Fig. 8's
    on the real runs (the master's samples)."""
    by = cct_table(ctx.local.runs).set_index("policy")
    real, sim = fig7_claims(by, "real"), fig7_claims(by, "sim")
    out = []
    for key, ok in real.items():
        kind, other = key.split(":")
        text = (
            f"NC-DRF finishes all three coflows no later than {other}"
            if kind == "all"
            else f"NC-DRF finishes B earlier than {other}"
        )
        out.append(Claim(text, "yes", "true", 1.0, {"real": ok, "simulated": sim[key]}, "Fig. 7"))
    for when, ok in fig8_claims(windows(ctx)).items():
        a, b = next((x[0], y[0]) for x, y, w in WINDOWS if w == when)
        out.append(
            Claim(
                f"NC-DRF gives {a} and {b} the most nearly equal progress {when}",
                "yes",
                "true",
                1.0,
                {"real": ok},
                "Fig. 8",
            )
        )
    return out


def values(ctx) -> dict:
    """What the text quotes: the setup, and per policy the real against simulated
    mean-CCT error and the master's mean round."""
    R: Runs = ctx.local
    s = R.setup
    errs = {n: r["mean_cct_error"] for n, r in R.runs.items()}
    return {
        "hosts": s.hosts,
        "mbps": s.mbps,
        "factor": s.factor,
        "arrivals": ", ".join(f"{a:g}" for a in s.arrivals),
        "seed": s.seed,
        "flows": R.flows,
        "interval_ms": INTERVAL_MS,
        "sample_s": SAMPLE_S,
        "paper_machines": PAPER_MACHINES,
        "paper_mbps": PAPER_MBPS,
        "errors": ", ".join(f"{n} {common.fmt(100 * e)}%" for n, e in errs.items()),
        "worst_error": max(abs(e) for e in errs.values()),
        "agree_below": 0.05,
        "rounds": ", ".join(
            f"{n} {common.fmt(1000 * r['master_round_mean_s'])} ms" for n, r in R.runs.items()
        ),
    }


EXPERIMENT = Experiment(
    name="ncdrf-testbed",
    title="NC-DRF testbed micro-benchmark (Sec. V-B, Figs. 7-8) on coflowkit's testbed",
    paper=ncdrf.PAPER_FILE,
    models=(),
    runs=(),
    workload=None,
    prepare=refuse_trace_options,
    local=real_runs,
    values=values,
    parts=(
        Table("fig7_cct", "CCT (s) per coflow, real and simulated", fig7_table),
        Figure("fig8_progress", fig8),
        Table(
            "fig8_windows", "Per-link rate (Mbit/s) of each coflow in Fig. 8's windows", fig8_table
        ),
        Claims(
            "claims",
            "The paper's claims, on the real runs and on their simulation",
            claims,
            models=("real", "simulated"),
        ),
    ),
    template="ncdrf_testbed.md",
)
