"""`coflowkit reproduce coflex`: the evaluation of the Coflex paper
(../shared/papers/003_90a1b6450103ec5e.txt, Secs. IV-C and V), as an
:class:`~coflowkit.experiments.spec.Experiment`; its report's text is
``coflex.md``.

* Fig. 4: misreporting, 100 coflows on 2 links (Coflex, alpha = 1).
* Fig. 5: 100 coflows of the trace at once: progress vs alpha, progress CDF and
  utilization per policy (one allocation, at t = 0).
* Table III, Fig. 6a and 6c: the trace replayed under three models (slowdown per
  policy, slowdown vs alpha, normalized CCT against Coflex), and PS-P's readings
  under CoflowSim's.
* Testbed micro-benchmark (Fig. 7): three coflows on 60 machines, 1 Gbps up,
  40 Gbps down, arriving at 0, 3 and 4 s.
"""

from __future__ import annotations

import random

import numpy as np
import pandas as pd

from coflowkit import _core, api, metrics, runner
from coflowkit.experiments import common
from coflowkit.experiments.common import Claim
from coflowkit.experiments.spec import Claims, Experiment, Figure, Model, Paper, Run, Table

PAPER_FILE = "../shared/papers/003_90a1b6450103ec5e.txt"
#: Coflex's alpha in every comparison (the paper's choice, Sec. V-A).
ALPHA = 0.5
TRACE_POLICIES = [
    ("fair", (), "Per-flow"),
    ("psp", (), "PS-P"),
    ("hug", (), "HUG"),
    ("coflex", (f"alpha={ALPHA}",), "Coflex"),
    ("varys", (), "Varys"),
]
#: Table III of the paper: min, mean, 95th percentile and std of the slowdown.
PAPER_TABLE3 = {
    "Per-flow": (1.00, 120.06, 757.0, 248.0),
    "PS-P": (1.00, 9.47, 20.73, 6.75),
    "HUG": (1.00, 3.13, 5.00, 1.38),
    "Coflex": (1.00, 1.59, 2.73, 0.66),
    "Varys": (1.00, 1.10, 1.85, 0.35),
}
#: The other numbers the paper states, and where.
PAPER = {
    "hug_progress": Paper(93.0, "Sec. V-A1, Fig. 5b"),
    "coflex_isolation": Paper(46.0, "Sec. V-A1, Fig. 5b"),
    "coflex_over_500": Paper(0.40, "Sec. V-A1, Fig. 5b"),
    "coflex_over_hug_progress": Paper(2.2, "Sec. V-A1, Fig. 5b"),
    "varys_at_zero": Paper(0.68, "Sec. V-A1, Fig. 5b"),
    "coflex_util": Paper(0.97, "Sec. V-A1, Fig. 5c"),
    "varys_util": Paper(0.97, "Sec. V-A1, Fig. 5c"),
    "fair_util": Paper(0.89, "Sec. V-A1, Fig. 5c"),
    "hug_util_gap": Paper(0.31, "Sec. V-A1, Fig. 5c"),
    "psp_util": Paper(0.60, "Sec. V-A1, Fig. 5c"),
    "fabric_gbps": Paper(300.0, "Sec. V-A1, Fig. 5c"),
    "hug_over_coflex_mean": Paper(2.0, "Sec. V-A2, Table III"),
    "hug_over_coflex_p95": Paper(1.8, "Sec. V-A2, Table III"),
    "hug_over_coflex_norm": Paper(2.0, "Sec. V-A2, Fig. 6c"),
    "varys_over_coflex_norm": Paper(0.76, "Sec. V-A2, Fig. 6c"),
    "slower_than_hug": Paper(25.0, "Sec. V-A2, Fig. 6c"),
    "knee_mean": Paper(0.5, "Sec. V-A2, Fig. 6a"),
    "knee_p95": Paper(0.8, "Sec. V-A2, Fig. 6a"),
    "misreport_runs_gaining": Paper(0.03, "Sec. IV-C, Fig. 4"),
    "misreport_gain": Paper(0.03, "Sec. IV-C, Fig. 4"),
    "micro_a_delay": Paper(0.08, "Sec. V-B, Fig. 7"),
    "replayed_coflows": Paper(526.0, "Sec. V-A2"),
}
#: Fig. 6a's alphas on the trace (alpha = 0 is Varys, alpha = 0.5 the Coflex run).
SWEEP = [0.25, 0.75, 1.0]
#: Fig. 5a's alphas (one allocation each: cheap).
SNAP_ALPHAS = [round(0.1 * i, 1) for i in range(11)]
#: The default replay: the first coflows of the trace (see the report for why).
DEFAULT_COFLOWS = 200
LINK_MBPS = 1000.0  # progress is reported as a fraction of a 1 Gbps link, in Mbps
#: Fig. 4: runs, coflows per run, and the grid of reports.
MISREPORT_RUNS = 100
MISREPORT_COFLOWS = 100
GRID = [round(0.1 * i, 1) for i in range(1, 11)]
#: Fig. 5: how many coflows of the trace arrive at once.
CONCURRENT = 100
#: Fig. 7: every flow's size and the three arrivals.
MICRO_MIB = 100.0
MICRO_ARRIVALS_S = (0.0, 3.0, 4.0)
MICRO_FABRIC = "bigswitch:up_gbps=1,down_gbps=40"
#: The column of the claims about one allocation (the same under every model).
SNAPSHOT = "snapshot at t = 0"

MODELS = (
    Model("exact", "exact"),
    Model("exact, realloc=coflow", "exact", ("realloc=coflow",)),
    Model("CoflowSim", "coflowsim"),
)
#: PS-P's other readings (the sensitivity table; docs/policies/psp.md): row name ->
#: parameters. The default (spare=onepass, tenants=link) is Table III's row.
PSP_READINGS = {
    "spare=none": ("spare=none",),
    "spare=maxmin": ("spare=maxmin",),
    "tenants=all, spare=none": ("spare=none", "tenants=all"),
    "tenants=all": ("tenants=all",),
    "tenants=host, spare=none": ("spare=none", "tenants=host"),
}
RUNS = (
    *(Run(n, p, kv, model_params=p != "fair") for p, kv, n in TRACE_POLICIES),
    *(Run(f"alpha {a}", "coflex", (f"alpha={a}",)) for a in SWEEP),
    *(Run(f"PS-P, {n}", "psp", kv, models=("CoflowSim",)) for n, kv in PSP_READINGS.items()),
)


def slow(r) -> dict[str, float]:
    return metrics.slowdown_stats(r.coflows)


# ---------------------------------------------------------------------------
# Fig. 4: misreporting (in memory)


def progress_of(w, coflow_id: int) -> float:
    """The coflow's progress in Coflex's (alpha = 1) first allocation."""
    raw = _core.simulate(w, "coflex", {"alpha": "1"}, False, None, 0.0, True, 0.0)
    rows = raw["progress"]
    at = [i for i, c in enumerate(rows["coflow_id"]) if c == coflow_id and rows["sample"][i] == 0]
    return float(rows["progress"][at[0]])


def misreport(runs: int, seed: int, n: int = MISREPORT_COFLOWS) -> pd.DataFrame:
    """Fig. 4, one row per run: a random coflow of ``n`` on two 1 Gbps links tries
    every report on the grid; its average normalized progress, and what the
    report's text reads about the run (the liar's true correlation vector, its
    place in SEBF order, its best report and gain, the DRF bottleneck and the
    other link's spare after DRF)."""
    rng = random.Random(seed)
    # Links 1 and 2 are down0 and down1 (1 Gbps); coflow k's two flows come from
    # private senders 2 + 2k and 3 + 2k whose uplinks (1000 Gbps) never bind.
    fabric = f"bigswitch:ports={2 + 2 * n},up_gbps=1000,down_gbps=1"
    out = []
    for _ in range(runs):
        demands = [(1.0 - rng.random(), 1.0 - rng.random()) for _ in range(n)]
        rows = []
        for k, (a, b) in enumerate(demands):
            rows += [(k + 1, 2 + 2 * k, 0, a * 100 * common.MIB, 0.0)]
            rows += [(k + 1, 3 + 2 * k, 1, b * 100 * common.MIB, 0.0)]
        w = common.flows_workload(rows, "misreport").with_fabric(fabric)
        k = rng.randrange(n)
        truthful = progress_of(w, k + 1)
        gains = {}
        for x in GRID:
            for y in GRID:
                rep = {
                    f"up{2 + 2 * k}": 1e-3 * x,
                    f"up{3 + 2 * k}": 1e-3 * y,
                    "down0": x,
                    "down1": y,
                }
                gains[(x, y)] = progress_of(w.with_reports({k + 1: rep}), k + 1) / truthful
        a, b = demands[k]
        vec = np.array(demands) / np.max(demands, axis=1, keepdims=True)
        load = vec.sum(axis=0)
        bottleneck = int(np.argmax(load))
        best = max(gains, key=lambda r: gains[r])
        out.append(
            {
                "average": float(np.mean(list(gains.values()))),
                "true vector": (a / max(a, b), b / max(a, b)),
                "SEBF rank": 1 + sum(max(d) < max(a, b) for d in demands),
                "best report": best,
                "best vector": (best[0] / max(best), best[1] / max(best)),
                "best gain": gains[best],
                "bottleneck link": bottleneck + 1,
                "spare on the other link": 1.0 - load[1 - bottleneck] / load[bottleneck],
                "over-report on the bottleneck": best[bottleneck]
                / max(best)
                / ((a, b)[bottleneck] / max(a, b)),
            }
        )
    return pd.DataFrame(out)


def fig4_table(ctx) -> pd.DataFrame:
    av = ctx.local["misreport"]["average"].to_numpy()
    return pd.DataFrame(
        [
            {
                "runs": len(av),
                "fraction of runs > 1": float(np.mean(av > 1.0)),
                "largest average gain": float(av.max() - 1.0),
                "median": float(np.median(av)),
                "paper: fraction > 1": f"< {PAPER['misreport_runs_gaining'].value:g}",
                "paper: largest gain": f"<= {PAPER['misreport_gain'].value:g}",
            }
        ]
    )


def fig4_figure(ctx):
    av = ctx.local["misreport"]["average"].to_numpy()
    fig, ax = common.plt().subplots(figsize=(5, 3.2))
    common.cdf(ax, av, "Coflex, alpha = 1")
    ax.axvline(1.0, color="grey", lw=0.8)
    ax.set_xlabel("average normalized progress of the misreporting coflow")
    ax.set_ylabel("fraction of runs")
    ax.set_title("Fig. 4: misreporting")
    return fig


# ---------------------------------------------------------------------------
# Fig. 5: one allocation of 100 concurrent coflows (in memory)


def alpha_sweep(w) -> pd.DataFrame:
    """Fig. 5a: Coflex's minimum and average progress at t = 0 against alpha."""
    rows = []
    for a in SNAP_ALPHAS:
        _, tot = api.snapshot(w, "coflex", {"alpha": a})
        rows.append(
            {
                "alpha": a,
                "min progress (Mbps)": tot["min_progress"] * LINK_MBPS,
                "mean progress (Mbps)": tot["mean_progress"] * LINK_MBPS,
                "utilization": tot["utilization"],
            }
        )
    return pd.DataFrame(rows)


def progress_at_zero(w) -> tuple[pd.DataFrame, dict[str, np.ndarray]]:
    """Figs. 5b-c: each policy's per-coflow progress (Mbps) and utilization at t = 0."""
    gbps = PAPER["fabric_gbps"].value
    rows, per_coflow = [], {}
    for p, kv, name in TRACE_POLICIES:
        params = dict(x.split("=", 1) for x in kv)
        per, tot = api.snapshot(w, p, {k: float(v) for k, v in params.items()})
        x = per["progress"].to_numpy() * LINK_MBPS
        per_coflow[name] = x
        rows.append(
            {
                "policy": name,
                "min (Mbps)": float(x.min()),
                "mean (Mbps)": float(x.mean()),
                "fraction at 0": float(np.mean(x <= 0)),
                "fraction > 500 Mbps": float(np.mean(x > 500)),
                "utilization": tot["utilization"],
                f"allocated Gbps (of {gbps:g})": tot["utilization"] * gbps,
            }
        )
    return pd.DataFrame(rows), per_coflow


def fig5a_figure(ctx):
    sweep = ctx.local["sweep"]
    fig, ax = common.plt().subplots(figsize=(5, 3.2))
    ax.plot(sweep["alpha"], sweep["min progress (Mbps)"], "o-", label="minimum (isolation)")
    ax.plot(sweep["alpha"], sweep["mean progress (Mbps)"], "s-", label="average")
    ax.set_xlabel("alpha")
    ax.set_ylabel("progress (Mbps)")
    ax.legend()
    ax.set_title("Fig. 5a: Coflex's tradeoff")
    return fig


def fig5b_figure(ctx):
    fig, ax = common.plt().subplots(figsize=(5, 3.2))
    for name, x in ctx.local["per_coflow"].items():
        common.cdf(ax, x, name)
    ax.set_xlabel("coflow progress (Mbps)")
    ax.set_ylabel("fraction of coflows")
    ax.legend()
    ax.set_title("Fig. 5b: progress")
    return fig


def fig5c_figure(ctx):
    pt = ctx.local["progress"]
    gbps = PAPER["fabric_gbps"].value
    fig, ax = common.plt().subplots(figsize=(5, 3.2))
    ax.bar(pt["policy"], pt[f"allocated Gbps (of {gbps:g})"])
    ax.set_ylabel(f"allocated (Gbps of {gbps:g})")
    ax.set_title("Fig. 5c: utilization")
    return fig


def fig5_claims(ctx) -> list[Claim]:
    """The numbers the paper's text states about Fig. 5, against the snapshot."""
    get = ctx.local["progress"].set_index("policy")
    hug, cfx, var = get.loc["HUG"], get.loc["Coflex"], get.loc["Varys"]

    def c(key: str, text: str, value, kind: str = "value", shown: str | None = None) -> Claim:
        p = PAPER[key]
        return Claim(text, shown or common.fmt(p.value), kind, p.value, {SNAPSHOT: value}, p.where)

    hug_util = PAPER["coflex_util"].value - PAPER["hug_util_gap"].value
    return [
        c("hug_progress", "HUG's uniform progress (Mbps)", hug["mean (Mbps)"]),
        c("coflex_isolation", "Coflex's isolation guarantee (Mbps)", cfx["min (Mbps)"]),
        c(
            "coflex_over_500",
            "Coflex: fraction of coflows > 500 Mbps",
            cfx["fraction > 500 Mbps"],
            shown="0.40",
        ),
        c(
            "coflex_over_hug_progress",
            "Coflex / HUG average progress",
            cfx["mean (Mbps)"] / hug["mean (Mbps)"],
        ),
        c("varys_at_zero", "Varys: fraction of coflows at 0", var["fraction at 0"]),
        c("coflex_util", "Coflex utilization", cfx["utilization"]),
        c("varys_util", "Varys utilization", var["utilization"]),
        c("fair_util", "Per-flow utilization", get.loc["Per-flow"]["utilization"]),
        Claim(
            "HUG utilization (Coflex's minus 31%)",
            common.fmt(hug_util),
            "value",
            hug_util,
            {SNAPSHOT: hug["utilization"]},
            PAPER["hug_util_gap"].where,
        ),
        c(
            "psp_util",
            "PS-P utilization",
            get.loc["PS-P"]["utilization"],
            kind="below",
            shown="< 0.60",
        ),
    ]


# ---------------------------------------------------------------------------
# Fig. 7: the micro-benchmark (in memory)


def micro() -> dict:
    """CCTs of the three coflows, and the work on one of A's senders' uplinks."""
    w = common.testbed_micro(MICRO_ARRIVALS_S, "equal", equal_bytes=MICRO_MIB * common.MIB)
    rows = []
    for p, params, name in [
        ("coflex", {"alpha": ALPHA}, "Coflex"),
        ("hug", {}, "HUG"),
        ("varys", {}, "Varys"),
    ]:
        r = api.simulate(w, p, params, fabric=MICRO_FABRIC)
        cc = r.coflows.set_index("coflow_id")["cct_s"]
        rows.append({"policy": name, "A": cc[1], "B": cc[2], "C": cc[3]})
    t = pd.DataFrame(rows).set_index("policy")
    src = np.asarray(w.flow_columns()["src"])
    flows = int((src == 0).sum())  # machine 0 sends as many flows as every sender of A
    up_mib_s = 1024 / 8  # 1 Gbps uplinks in MiB/s (1 Gbps = 1024 Mbit/s here)
    work_s = flows * MICRO_MIB / up_mib_s
    cf, hg, vy = t.loc["Coflex"], t.loc["HUG"], t.loc["Varys"]
    return {
        "cct": t,
        "flows_per_sender": flows,
        "work_s": work_s,
        "up_mib_s": up_mib_s,
        "a_at_work_bound": bool(np.allclose(t["A"].to_numpy(), work_s, rtol=1e-9)),
        "bc_faster_than_hug": bool(cf["B"] < hg["B"] and cf["C"] < hg["C"]),
        "a_delay": float(cf["A"] / hg["A"] - 1),
        "varys_faster": bool(vy["B"] <= cf["B"] and vy["C"] <= cf["C"]),
    }


def local(ctx) -> dict:
    full = runner.WorkloadSpec(trace=ctx.opts.trace, transforms=ctx.opts.transforms).load()
    w = common.concurrent_sample(full, CONCURRENT, ctx.opts.seed)
    pt, per_coflow = progress_at_zero(w)
    return {
        "misreport": misreport(MISREPORT_RUNS, ctx.opts.seed),
        "sweep": alpha_sweep(w),
        "progress": pt,
        "per_coflow": per_coflow,
        "micro": micro(),
    }


# ---------------------------------------------------------------------------
# Table III and Fig. 6: the trace replay


def table3(ctx) -> list[Claim]:
    st = {m: {n: slow(ctx.runs[m][n]) for n in PAPER_TABLE3} for m in ctx.labels}
    return common.slowdown_claims(PAPER_TABLE3, st, ctx.labels, "Table III")


def knee(named: dict, stat: str) -> float:
    """Fig. 6a's "best tradeoff point": the alpha of the sweep (0 = Varys, 0.5 = the
    Coflex run) where the steepest rise of ``stat`` begins (the start of the segment
    with the largest slope), as the paper reads its figure ("beyond which the
    slowdown sees a sharp increase")."""
    by = by_alpha(named)
    xs = sorted(by)
    ys = [slow(by[a])[stat] for a in xs]
    slopes = [(ys[i + 1] - ys[i]) / (xs[i + 1] - xs[i]) for i in range(len(xs) - 1)]
    return xs[max(range(len(slopes)), key=lambda i: slopes[i])]


def by_alpha(named: dict) -> dict:
    """alpha -> run (alpha = 0 is Varys: the same allocation by construction)."""
    return {0.0: named["Varys"], ALPHA: named["Coflex"]} | {a: named[f"alpha {a}"] for a in SWEEP}


def trace_claims(ctx) -> list[Claim]:
    """Table III's order and ratios and Fig. 6's claims, one row each, per model."""
    runs, each = ctx.runs, ctx.each
    labels = ctx.labels
    st = {m: {n: slow(runs[m][n]) for n in PAPER_TABLE3} for m in labels}
    cct = {m: {n: runs[m][n].coflows["cct_s"].to_numpy() for n in PAPER_TABLE3} for m in labels}
    slower = {m: cct[m]["Coflex"] > cct[m]["HUG"] * (1 + 1e-9) for m in labels}

    def bins(m: str) -> dict[str, float]:
        nm = metrics.mean_normalized(runs[m]["HUG"].coflows, runs[m]["Coflex"].coflows)
        return {b: nm[b] for b in metrics.BINS}

    def gains_most(m: str) -> bool:
        by = bins(m)
        return max(by, key=lambda b: by[b] if np.isfinite(by[b]) else -1.0) in ("SN", "SW")

    def c(key: str, text: str, values: dict, shown: str | None = None) -> Claim:
        p = PAPER[key]
        return Claim(text, shown or common.fmt(p.value), "value", p.value, values, p.where)

    def holds(text: str, where: str, f) -> Claim:
        return Claim(text, "holds", "true", 1, each(f), where)

    ratios = (PAPER["hug_over_coflex_mean"].value, PAPER["hug_over_coflex_p95"].value)
    fig6c = PAPER["hug_over_coflex_norm"].where
    return [
        common.order_claim(["Per-flow", "PS-P", "HUG", "Coflex", "Varys"], st, labels, "Table III"),
        *common.ratio_claims("HUG", "Coflex", ratios, st, labels, "Table III"),
        c(
            "hug_over_coflex_norm",
            "HUG's CCT / Coflex's, mean over coflows (Fig. 6c)",
            each(lambda m: float(np.mean(cct[m]["HUG"] / cct[m]["Coflex"]))),
            "about 2",
        ),
        c(
            "varys_over_coflex_norm",
            "Varys's CCT / Coflex's, mean (Varys 24% faster)",
            each(lambda m: float(np.mean(cct[m]["Varys"] / cct[m]["Coflex"]))),
        ),
        c(
            "slower_than_hug",
            "coflows slower under Coflex than under HUG",
            each(lambda m: float(slower[m].sum())),
        ),
        holds("short coflows gain most from Coflex against HUG (Fig. 6c)", fig6c, gains_most),
        holds(
            "HUG / Coflex normalized CCT above 1 in all four bins (Fig. 6c)",
            fig6c,
            lambda m: all(bins(m)[b] > 1 for b in metrics.BINS),
        ),
        holds(
            "Coflex closer to Varys than to HUG in mean slowdown (Fig. 6b)",
            "Sec. V-A2, Fig. 6b",
            lambda m: (
                st[m]["Coflex"]["mean"] - st[m]["Varys"]["mean"]
                < st[m]["HUG"]["mean"] - st[m]["Coflex"]["mean"]
            ),
        ),
        c(
            "knee_mean",
            "Fig. 6a, mean: alpha where the steepest rise begins (sweep step 0.25)",
            each(lambda m: knee(runs[m], "mean")),
        ),
        c(
            "knee_p95",
            "Fig. 6a, p95: alpha where the steepest rise begins (sweep step 0.25)",
            each(lambda m: knee(runs[m], "p95")),
        ),
    ]


def psp_table(ctx) -> pd.DataFrame | None:
    """PS-P's readings under CoflowSim's model (the paper's) against Table III's row."""
    if "CoflowSim" not in ctx.labels:
        return None
    runs = ctx.runs["CoflowSim"]
    res = {"spare=onepass (the default)": runs["PS-P"]}
    res.update({n: runs[f"PS-P, {n}"] for n in PSP_READINGS})
    paper = PAPER_TABLE3["PS-P"]
    rows = []
    for name, r in res.items():
        st = slow(r)
        row = {"PS-P reading": name}
        for k, i in (("mean", 1), ("p95", 2), ("std", 3)):
            row[f"{k} slowdown"] = st[k]
            row[f"{k} / paper"] = st[k] / paper[i]
        rows.append(row)
    return pd.DataFrame(rows)


def primary(ctx) -> str:
    """The model whose Fig. 6 is unsuffixed: CoflowSim's, the paper's, when selected."""
    return "CoflowSim" if "CoflowSim" in ctx.labels else ctx.labels[0]


def suffix(ctx, m: str) -> str:
    return "" if m == primary(ctx) else "_" + m.replace(", ", "_").replace("=", "_")


def fig6a_table(m: str):
    def build(ctx) -> pd.DataFrame:
        by = by_alpha(ctx.runs[m])
        return pd.DataFrame([{"alpha": a, **slow(by[a])} for a in sorted(by)])

    return build


def fig6a_figure(m: str):
    def build(ctx):
        sw = fig6a_table(m)(ctx)
        fig, ax = common.plt().subplots(figsize=(5, 3.2))
        ax.plot(sw["alpha"], sw["mean"], "o-", label="mean")
        ax.plot(sw["alpha"], sw["p95"], "s-", label="95th percentile")
        for key, text in [("knee_mean", "paper: best mean"), ("knee_p95", "paper: best p95")]:
            x = PAPER[key].value
            ax.axvline(x, color="grey", ls="--", lw=0.8)
            ax.annotate(text, (x, ax.get_ylim()[0]), rotation=90, fontsize=7, color="grey")
        ax.set_xlabel("alpha")
        ax.set_ylabel("slowdown")
        ax.legend()
        ax.set_title("Fig. 6a: slowdown vs alpha")
        return fig

    return build


def fig6c_table(m: str):
    def build(ctx) -> pd.DataFrame:
        base = ctx.runs[m]["Coflex"].coflows
        return pd.DataFrame(
            [
                {"policy": n, **metrics.mean_normalized(ctx.runs[m][n].coflows, base)}
                for n in ("HUG", "Varys")
            ]
        )

    return build


def fig6c_figure(m: str):
    def build(ctx):
        t = fig6c_table(m)(ctx).set_index("policy")
        fig, ax = common.plt().subplots(figsize=(5.5, 3.2))
        x = np.arange(5)
        for j, name in enumerate(["HUG", "Varys"]):
            ax.bar(x + (j - 0.5) * 0.38, t.loc[name].to_numpy(dtype=float), 0.38, label=name)
        ax.axhline(1.0, color="grey", lw=0.8)
        ax.set_xticks(x, ["all"] + metrics.BINS)
        ax.set_ylabel("CCT / CCT under Coflex")
        ax.legend()
        ax.set_title("Fig. 6c: normalized CCT")
        return fig

    return build


def fig6_models(ctx) -> list[tuple[str, str]]:
    """(model, suffix) for Fig. 6: the primary model first, then the others."""
    ordered = [primary(ctx)] + [m for m in ctx.labels if m != primary(ctx)]
    return [(m, suffix(ctx, m)) for m in ordered]


def parts(ctx) -> tuple:
    caption_6a = (
        "Slowdown vs alpha (0 is Varys; the paper's best points: "
        f"{PAPER['knee_mean'].value:g} for the mean, {PAPER['knee_p95'].value:g} for the "
        "95th percentile)"
    )
    per_model = []
    for m, s in fig6_models(ctx):
        per_model += [
            Figure(f"fig6a_alpha{s}", fig6a_figure(m)),
            Table(f"fig6a_alpha{s}", caption_6a, fig6a_table(m)),
            Figure(f"fig6c_normalized{s}", fig6c_figure(m)),
            Table(f"fig6c_normalized{s}", "Mean of CCT / CCT under Coflex", fig6c_table(m)),
        ]
    return (
        Figure("fig4_misreport_cdf", fig4_figure),
        Table("fig4_misreport", "Average normalized progress over the runs", fig4_table),
        Figure("fig5a_alpha", fig5a_figure),
        Table(
            "fig5a_alpha",
            "Coflex's minimum and average progress vs alpha",
            lambda ctx: ctx.local["sweep"],
        ),
        Figure("fig5b_progress_cdf", fig5b_figure),
        Figure("fig5c_utilization", fig5c_figure),
        Table(
            "fig5bc_progress",
            "Progress and utilization per policy at t = 0",
            lambda ctx: ctx.local["progress"],
        ),
        Claims(
            "fig5_claims",
            "Fig. 5: the numbers the paper's text states (one allocation, the same under "
            "every model)",
            fig5_claims,
            models=(SNAPSHOT,),
        ),
        Claims("table3_slowdown", "Table III under each model", table3),
        Claims("table3_claims", "Table III and Fig. 6", trace_claims),
        Table("sensitivity_psp", "PS-P readings under CoflowSim", psp_table),
        *per_model,
        Table(
            "micro_cct",
            "CCT (s) of the three coflows",
            lambda ctx: ctx.local["micro"]["cct"].reset_index(),
        ),
    )


def values(ctx) -> dict:
    """What ``coflex.md`` quotes: the paper's numbers, the setup, the snapshot's and
    the micro-benchmark's facts, and the misreporting outlier."""
    mr = ctx.local["misreport"]
    out = mr.loc[mr["average"].idxmax()]
    snap = {c.claim: c.values[SNAPSHOT] for c in fig5_claims(ctx)}
    return {
        "paper": PAPER,
        "table3": PAPER_TABLE3,
        "n_coflows": len(ctx.runs[ctx.labels[0]]["Coflex"].coflows),
        "default_coflows": DEFAULT_COFLOWS,
        "fig6": fig6_models(ctx),
        "misreport_runs": len(mr),
        "misreport_coflows": MISREPORT_COFLOWS,
        "concurrent": CONCURRENT,
        "gaining": float(np.mean(mr["average"] > 1.0)),
        "outlier": out.to_dict(),
        "outlier_gain": float(out["average"] - 1.0),
        "hug_util": snap["HUG utilization (Coflex's minus 31%)"],
        "hug_progress": snap["HUG's uniform progress (Mbps)"],
        "psp_util": snap["PS-P utilization"],
        "coflex_over_500": snap["Coflex: fraction of coflows > 500 Mbps"],
        "micro": ctx.local["micro"],
        "micro_mib": MICRO_MIB,
        "micro_arrivals": MICRO_ARRIVALS_S,
        "grid": GRID,
        "alpha": ALPHA,
    }


EXPERIMENT = Experiment(
    name="coflex",
    title="Coflex (Secs. IV-C, V) reproduced by coflowkit",
    paper=PAPER_FILE,
    models=MODELS,
    runs=RUNS,
    workload=lambda o: runner.WorkloadSpec(trace=o.trace, first=o.coflows, transforms=o.transforms),
    parts=parts,
    default_coflows=DEFAULT_COFLOWS,
    template="coflex.md",
    local=local,
    values=values,
    full=lambda ctx: True,
)
