"""`coflowkit reproduce stream`: the large-scale simulations of Stream
(../shared/papers/004_690cd0cb6f2c8b3e.txt, Sec. IV-B) on FatTrees.

* Fig. 6: average and mice (category I) CCT against the network size k = 8..48,
  1G and 10G switches, for Baraat, per-flow fair sharing, Stream and Aalo.
* Fig. 7: the improvement (compared CCT / Stream's CCT) per size category of
  Table 3 (Size A) on the 8-pod fabrics.
* Fig. 8: multi-wave coflows (2, 3, 4 waves) on the 8-pod 1G fabric.
* Figs. 9-10: bursty traffic (every coflow arrives at once) on the 8-pod fabrics;
  Fig. 10: the CCT of the first 100 coflows to complete under Baraat and Stream.
* Fig. 11: Stream with 2 to 7 queues (improvement over fair sharing).
* Figs. 12-13: many-to-many DAGs (TPC-DS query-42-like and Facebook-Tao-like, the
  `dag` transform), improvement per Size B category, 1G and 10G.
* Ablations the paper does not show: Stream without Information-Relay,
  Child-to-Parent or Weighted-Priority on the Tao DAGs, and Baraat's heavy
  threshold.

Every run replays the whole trace or its first coflows (``SAMPLE``), on
``fattree:k=K,gbps=G`` with the trace's racks placed on edge switches (the default
``rack`` placement, docs/fabrics.md), so a larger fabric gives each rack more hosts
and uplinks: that is how the paper varies the load.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from coflowkit import metrics, runner
from coflowkit.experiments.common import CLAIM_TOLERANCE, Claim, fmt, plt, ratio_note
from coflowkit.experiments.spec import OWN_SAMPLES, Claims, Experiment, Figure, Table

PAPER_FILE = "../shared/papers/004_690cd0cb6f2c8b3e.txt"
MIB = metrics.MIB
#: Table 1 of the paper.
KS = (8, 16, 24, 32, 48)
SPEEDS = (1, 10)
#: The paper: "Aalo and Stream employ 4 priority queues in their scheduling schemes".
QUEUES = 4
POLICIES: dict[str, tuple[str, tuple]] = {
    "Baraat": ("baraat", ()),
    "Fair Sharing": ("fair", ()),
    "Stream": ("stream", (("queues", str(QUEUES)),)),
    "Aalo": ("aalo", (("queues", str(QUEUES)),)),
}
COMPARED = ("Baraat", "Fair Sharing", "Aalo")
#: First coflows replayed per experiment (None: the whole trace, as the paper
#: does). The many-to-one runs (Figs. 6-8, Baraat's threshold) and the queue
#: counts (Fig. 11) replay the whole hour; the bursty runs (every coflow at once)
#: and the DAGs (six sub-coflows per coflow, six times the flows) replay the
#: first coflows, because on 8 pods a whole-trace run of either takes longer
#: than the whole reproduction's budget (issue 24; the report says so).
SAMPLE: dict[str, int | None] = {"many-to-one": None, "dag": 8, "bursty": 20, "queues": None}
WAVES = (2, 3, 4)
QUEUE_COUNTS = (2, 3, 4, 5, 6, 7)
DAG_SHAPES = {"tpcds": "TPC-DS query 42", "tao": "Facebook Tao"}
#: Bursty: every coflow of the sample in one window, released together.
BURST = "batch:interval_s=100000,spread=instant"
#: Table 3, upper bounds of categories I-IV in MiB (V is above the last).
SIZE_A = (100.0, 1024.0, 10 * 1024.0, 100 * 1024.0)
SIZE_B = (1024.0, 10 * 1024.0, 100 * 1024.0, 1024 * 1024.0)
CATEGORIES = ("I", "II", "III", "IV", "V")
ABLATIONS = {
    "no Information-Relay": (("relay", "false"),),
    "no Child-to-Parent": (("child_to_parent", "false"),),
    "no Weighted-Priority": (("weighted", "false"),),
    "none of the three": (
        ("relay", "false"),
        ("child_to_parent", "false"),
        ("weighted", "false"),
    ),
}
HEAVY_MB = (10, 100, 1000)
#: Aalo's model inside a queue and its queue count, on the 8-pod fabrics (the
#: Fig. 6 runs): the paper gives neither its Aalo's thresholds for 4 queues nor
#: how a queue is shared, only "a rate limiter that behaves like TCP for all
#: schemes". Label -> Aalo's parameters; the first is Fig. 6's Aalo.
AALO_FORMS = {
    "4 queues, FIFO inside (Fig. 6)": (("queues", str(QUEUES)),),
    "4 queues, max-min inside (TCP in a switch queue)": (
        ("queues", str(QUEUES)),
        ("within", "fair"),
    ),
    "10 queues, FIFO inside (Aalo's default)": (("queues", "10"),),
}

#: The paper's numbers (improvement = compared CCT / Stream's CCT).
PAPER = {
    ("avg", 1, "Baraat"): 1.4,
    ("avg", 1, "Fair Sharing"): 1.77,
    ("avg", 1, "Aalo"): 0.87,
    ("mice", 1, "Baraat"): 2.7,
    ("mice", 1, "Fair Sharing"): 5.1,
    ("mice", 1, "Aalo"): 0.76,
    ("avg", 10, "Baraat"): 1.5,
    ("avg", 10, "Fair Sharing"): 2.1,
    ("avg", 10, "Aalo"): 0.83,
    ("mice", 10, "Baraat"): 1.8,
    ("mice", 10, "Fair Sharing"): 1.9,
    ("mice", 10, "Aalo"): 0.87,
}
WHERE_FIG6 = "Sec. IV-B, Figs. 5b-6"
#: Stream's improvement for category I of the DAG runs (Sec. IV-B on Figs. 12-13):
#: (shape, Gbps, compared) -> (value, where).
PAPER_DAG_I = {
    **{
        ("tpcds", g, n): (v, "Sec. IV-B, Fig. 12")
        for g, vs in ((1, (7.43, 12.12, 1.79)), (10, (3.51, 6.19, 1.02)))
        for n, v in zip(("Baraat", "Fair Sharing", "Aalo"), vs, strict=True)
    },
    **{
        ("tao", g, n): (v, "Sec. IV-B, Fig. 13")
        for g, vs in ((1, (16.9, 28.79, 2.81)), (10, (7.53, 15.68, 1.1)))
        for n, v in zip(("Baraat", "Fair Sharing", "Aalo"), vs, strict=True)
    },
}
#: "trailing by 0.87x compared to Aalo (within 13%)" (Sec. IV-B).
PAPER_AALO_GAP = 0.13
#: The claims table's columns: the paper's average over the network sizes, and the
#: 8-pod fabric alone (the one the sample loads; the figures after Fig. 6 use it).
MEAN_OVER_K = "mean over k"
AT_8 = "k = 8"


def fabric(k: int, gbps: int) -> str:
    return f"fattree:k={k},gbps={gbps}"


def category(size_bytes: np.ndarray, bounds: tuple[float, ...]) -> np.ndarray:
    """Table 3 category index (0 = I) of each coflow size."""
    return np.searchsorted(np.asarray(bounds) * MIB, size_bytes, side="right")


def plan(trace: str, sample: dict[str, int | None], extra: tuple[str, ...] = ()):
    """Every simulation: a list of (key, job). Keys are tuples naming the run; a
    sample of None replays the whole trace."""
    out: list[tuple[tuple, runner.Job]] = []

    def spec(n: int, *tf: str) -> runner.WorkloadSpec:
        return runner.WorkloadSpec(trace=trace, first=n, transforms=(*extra, *tf))

    base = spec(sample["many-to-one"])
    for k in KS:
        for g in SPEEDS:
            for name, (pol, params) in POLICIES.items():
                out.append((("size", k, g, name), runner.Job(base, pol, params, fabric(k, g))))
    for w in WAVES:
        ws = spec(sample["many-to-one"], f"waves:count={w}")
        for name, (pol, params) in POLICIES.items():
            out.append((("waves", w, name), runner.Job(ws, pol, params, fabric(8, 1))))
    bs = spec(sample["bursty"], BURST)
    for g in SPEEDS:
        for name, (pol, params) in POLICIES.items():
            out.append((("bursty", g, name), runner.Job(bs, pol, params, fabric(8, g))))
    qs = spec(sample["queues"])
    for q in QUEUE_COUNTS:
        if q != QUEUES:
            out.append(
                (("queues", q), runner.Job(qs, "stream", (("queues", str(q)),), fabric(8, 1)))
            )
    for shape in DAG_SHAPES:
        head = () if sample["dag"] is None else (f"head:count={sample['dag']}",)
        ds = runner.WorkloadSpec(trace=trace, transforms=(*extra, *head, f"dag:shape={shape}"))
        for g in SPEEDS:
            for name, (pol, params) in POLICIES.items():
                out.append((("dag", shape, g, name), runner.Job(ds, pol, params, fabric(8, g))))
        if shape == "tao":
            for label, extra_params in ABLATIONS.items():
                params = (("queues", str(QUEUES)), *extra_params)
                out.append((("ablation", label), runner.Job(ds, "stream", params, fabric(8, 1))))
    for h in HEAVY_MB:
        if h != 100:
            out.append(
                (("heavy", h), runner.Job(base, "baraat", (("heavy_mb", str(h)),), fabric(8, 1)))
            )
    for label, params in list(AALO_FORMS.items())[1:]:
        for g in SPEEDS:
            out.append((("aalo", label, g), runner.Job(base, "aalo", params, fabric(8, g))))
    return out


def means(r, bounds: tuple[float, ...]) -> dict[str, float]:
    """Mean CCT overall, of category I (mice) and of each category."""
    df = r.coflows
    cat = category(df["size_bytes"].to_numpy(), bounds)
    cct = df["cct_s"].to_numpy()
    d = {
        "avg": float(cct.mean()),
        "mice": float(cct[cat == 0].mean()) if (cat == 0).any() else np.nan,
    }
    for i, c in enumerate(CATEGORIES):
        d[c] = float(cct[cat == i].mean()) if (cat == i).any() else np.nan
        d[f"n_{c}"] = int((cat == i).sum())
    return d


def improvement(res: dict, key, bounds, cols=("avg", "mice")) -> dict[str, dict[str, float]]:
    """For each compared policy: its mean CCT / Stream's, per column."""
    s = means(res[(*key, "Stream")], bounds)
    out = {}
    for name in COMPARED:
        m = means(res[(*key, name)], bounds)
        out[name] = {c: m[c] / s[c] if s[c] and np.isfinite(s[c]) else np.nan for c in cols}
    return out


def per_category(res: dict, by: str, keys: dict, bounds: tuple[float, ...]) -> pd.DataFrame:
    """One row per (value of ``by``, compared policy): compared CCT / Stream's CCT
    per Table 3 category and on average, for the runs ``keys[value]``."""
    rows = []
    for value, key in keys.items():
        imp = improvement(res, key, bounds, cols=("avg", *CATEGORIES))
        for name in COMPARED:
            row = {by: value, "compared": name, **{c: imp[name][c] for c in CATEGORIES}}
            rows.append({**row, "Avg": imp[name]["avg"]})
    return pd.DataFrame(rows)


def cost(key: tuple) -> float:
    if key[0] == "size":
        return key[1] * 10 + (5 if key[3] in ("Stream", "Aalo") else 0)
    if key[0] == "aalo":
        return 8 * 10 + 5
    return 1.0


def bars(p, df: pd.DataFrame, by: str, values, suffix: str):
    fig, axes = p.subplots(1, len(values), figsize=(5 * len(values), 3.5), squeeze=False)
    cols = [*CATEGORIES, "Avg"]
    x = np.arange(len(cols))
    for ax, v in zip(axes[0], values, strict=True):
        d = df[df[by] == v]
        for i, name in enumerate(COMPARED):
            row = d[d.compared == name]
            ax.bar(x + (i - 1) * 0.27, row[cols].to_numpy(dtype=float)[0], width=0.27, label=name)
        ax.axhline(1.0, color="k", lw=0.8)
        ax.set_xticks(x)
        ax.set_xticklabels(cols)
        ax.set_ylabel("improvement of Stream")
        ax.set_title(f"{v}{suffix}")
    axes[0][0].legend()
    return fig


# ---------------------------------------------------------------------------
# tables


def fig6_table(ctx) -> pd.DataFrame:
    res, rows = ctx.results, []
    for g in SPEEDS:
        for k in KS:
            for name in POLICIES:
                m = means(res[("size", k, g, name)], SIZE_A)
                rows.append(
                    {
                        "gbps": g,
                        "k": k,
                        "policy": name,
                        "avg CCT (s)": m["avg"],
                        "mice CCT (s)": m["mice"],
                        "coflows": len(res[("size", k, g, name)].coflows),
                    }
                )
    return pd.DataFrame(rows)


def headline(ctx) -> pd.DataFrame:
    """Stream's improvement per fabric and its mean over k, beside the paper's."""
    rows = []
    for g in SPEEDS:
        per_k = {k: improvement(ctx.results, ("size", k, g), SIZE_A) for k in KS}
        for name in COMPARED:
            for col in ("avg", "mice"):
                vals = [per_k[k][name][col] for k in KS]
                mean = float(np.nanmean(vals))
                paper = PAPER.get((col, g, name), np.nan)
                rows.append(
                    {
                        "gbps": g,
                        "CCT": col,
                        "compared": name,
                        **{f"k={k}": v for k, v in zip(KS, vals, strict=True)},
                        "mean over k": mean,
                        "paper": paper,
                        "ours / paper": ratio_note(mean, paper),
                    }
                )
    return pd.DataFrame(rows)


def claims(ctx) -> list[Claim]:
    """Every improvement the paper states: the headline ratios (averaged over the
    network sizes, and at k = 8 alone) and the DAGs' category I."""
    head = headline(ctx).set_index(["gbps", "CCT", "compared"])
    out = []
    for (col, g, name), v in PAPER.items():
        row = head.loc[(g, col, name)]
        values = {MEAN_OVER_K: row["mean over k"], AT_8: row.get("k=8", np.nan)}
        what = "mean CCT" if col == "avg" else "mice CCT"
        out.append(Claim(f"{name} / Stream, {what}, {g}G", fmt(v), "value", v, values, WHERE_FIG6))
    for (shape, g, name), (v, where) in PAPER_DAG_I.items():
        x = improvement(ctx.results, ("dag", shape, g), SIZE_B, cols=("I",))[name]["I"]
        text = f"{name} / Stream, category I, {DAG_SHAPES[shape]} DAGs, {g}G"
        out.append(Claim(text, fmt(v), "value", v, {AT_8: x}, where))
    return out


def fig7_table(ctx) -> pd.DataFrame:
    return per_category(ctx.results, "gbps", {g: ("size", 8, g) for g in SPEEDS}, SIZE_A)


def fig8_table(ctx) -> pd.DataFrame:
    return per_category(ctx.results, "waves", {w: ("waves", w) for w in WAVES}, SIZE_A)


def fig9_table(ctx) -> pd.DataFrame:
    return per_category(ctx.results, "gbps", {g: ("bursty", g) for g in SPEEDS}, SIZE_A)


def first_completed(ctx, g: int, name: str) -> np.ndarray:
    df = ctx.results[("bursty", g, name)].coflows.sort_values(["finish_s", "coflow_id"])
    return df["cct_s"].to_numpy()[:100]


def fig10_table(ctx) -> pd.DataFrame:
    rows = []
    for g in SPEEDS:
        for name in ("Baraat", "Stream"):
            c = first_completed(ctx, g, name)
            rows.append(
                {
                    "gbps": g,
                    "policy": name,
                    "first completed": len(c),
                    "mean CCT of them (s)": float(c.mean()),
                    "last of them (s)": float(c[-1]),
                }
            )
    return pd.DataFrame(rows)


def fig11_table(ctx) -> pd.DataFrame:
    res = ctx.results
    fair = means(res[("size", 8, 1, "Fair Sharing")], SIZE_A)
    rows = []
    for q in QUEUE_COUNTS:
        r = res[("size", 8, 1, "Stream")] if q == QUEUES else res[("queues", q)]
        m = means(r, SIZE_A)
        rows.append(
            {
                "queues": q,
                "Stream mean CCT (s)": m["avg"],
                "improvement over fair": fair["avg"] / m["avg"],
                "mice improvement over fair": fair["mice"] / m["mice"],
            }
        )
    return pd.DataFrame(rows)


def dag_table(shape: str):
    def build(ctx) -> pd.DataFrame:
        keys = {g: ("dag", shape, g) for g in SPEEDS}
        return per_category(ctx.results, "gbps", keys, SIZE_B)

    return build


def ablation_table(ctx) -> pd.DataFrame:
    base = means(ctx.results[("dag", "tao", 1, "Stream")], SIZE_B)
    rows = [{"Stream": "all mechanisms", "mean CCT (s)": base["avg"], "× all": 1.0}]
    for label in ABLATIONS:
        m = means(ctx.results[("ablation", label)], SIZE_B)
        rows.append({"Stream": label, "mean CCT (s)": m["avg"], "× all": m["avg"] / base["avg"]})
    return pd.DataFrame(rows)


def heavy_table(ctx) -> pd.DataFrame:
    res = ctx.results
    b100 = means(res[("size", 8, 1, "Baraat")], SIZE_A)["avg"]
    stream = means(res[("size", 8, 1, "Stream")], SIZE_A)["avg"]
    rows = []
    for h in HEAVY_MB:
        m = b100 if h == 100 else means(res[("heavy", h)], SIZE_A)["avg"]
        rows.append({"heavy_mb": h, "Baraat mean CCT (s)": m, "improvement of Stream": m / stream})
    return pd.DataFrame(rows)


def aalo_run(res: dict, label: str, g: int):
    """The run of Aalo's form ``label`` on the 8-pod fabric at ``g`` Gbps (the
    first form is Fig. 6's own Aalo run)."""
    if label == next(iter(AALO_FORMS)):
        return res[("size", 8, g, "Aalo")]
    return res[("aalo", label, g)]


def aalo_table(ctx) -> pd.DataFrame:
    """Aalo's forms against Stream on the 8-pod fabrics: mean CCT, and Aalo's
    CCT / Stream's overall, for mice and per Table 3 category."""
    res = ctx.results
    rows = []
    for g in SPEEDS:
        s = means(res[("size", 8, g, "Stream")], SIZE_A)
        for label in AALO_FORMS:
            m = means(aalo_run(res, label, g), SIZE_A)
            row = {"gbps": g, "Aalo": label, "mean CCT (s)": m["avg"]}
            row["Aalo / Stream"] = m["avg"] / s["avg"]
            row.update({c: m[c] / s[c] for c in CATEGORIES})
            rows.append(row)
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------
# figures


#: Per policy in a line plot: markers shrinking and dashes differing, so that
#: lines with equal values show one inside the other.
LINE_STYLES = (
    {"marker": "o", "markersize": 11, "linestyle": "-", "alpha": 0.8},
    {"marker": "s", "markersize": 8, "linestyle": "--", "alpha": 0.8},
    {"marker": "^", "markersize": 6, "linestyle": "-.", "alpha": 0.9},
    {"marker": "x", "markersize": 6, "linestyle": ":", "alpha": 1.0},
)


def fig6_figure(ctx):
    fig6 = fig6_table(ctx)
    fig, axes = plt().subplots(2, 2, figsize=(10, 7))
    for i, g in enumerate(SPEEDS):
        for j, col in enumerate(("mice CCT (s)", "avg CCT (s)")):
            ax = axes[i][j]
            for n, name in enumerate(POLICIES):
                d = fig6[(fig6.gbps == g) & (fig6.policy == name)]
                # Equal values (the mice of Baraat, Stream and Aalo often are)
                # stay visible: each policy its own marker size and dash.
                ax.plot(d["k"], d[col], label=name, **LINE_STYLES[n % len(LINE_STYLES)])
            ax.set_xlabel("k (pods)")
            ax.set_ylabel(col)
            ax.set_title(f"{g}G switches")
            ax.set_xticks(KS)
    axes[0][0].legend()
    return fig


def fig10_figure(ctx):
    fig, axes = plt().subplots(1, 2, figsize=(10, 3.5))
    for ax, g in zip(axes, SPEEDS, strict=True):
        for name in ("Baraat", "Stream"):
            c = first_completed(ctx, g, name)
            ax.plot(np.arange(1, len(c) + 1), c, label=name)
        ax.set_xlabel("coflows in completion order")
        ax.set_ylabel("CCT (s)")
        ax.set_title(f"{g}G")
        ax.legend()
    return fig


def fig11_figure(ctx):
    fig11 = fig11_table(ctx)
    fig, ax = plt().subplots(figsize=(5, 3.5))
    ax.plot(fig11["queues"], fig11["improvement over fair"], marker="o", label="all")
    ax.plot(fig11["queues"], fig11["mice improvement over fair"], marker="s", label="mice")
    ax.set_xlabel("queues")
    ax.set_ylabel("fair CCT / Stream CCT")
    ax.legend()
    return fig


def bars_of(table, by: str, values, suffix: str):
    def build(ctx):
        return bars(plt(), table(ctx), by, values() if callable(values) else values, suffix)

    return build


# ---------------------------------------------------------------------------
# what the text quotes


def registry_defaults() -> dict[str, dict[str, str]]:
    """The defaults of the policies' parameters, from the registry."""
    from coflowkit import api

    return {p["name"]: {x["name"]: x["default"] for x in p["params"]} for p in api.policies()}


def values(ctx) -> dict:
    res = ctx.results

    def imp(key, name, col="avg", bounds=SIZE_A):
        return improvement(res, key, bounds, cols=(col,))[name][col]

    k0, k1 = KS[0], KS[-1]
    big = [imp(("size", k, g), n) for k in KS if k > k0 for g in SPEEDS for n in COMPARED]
    big = [x for x in big if np.isfinite(x)] or [1.0]
    near = [imp(("size", k, g), n) for k in KS if k > k0 for g in SPEEDS for n in COMPARED[:2]]
    near = [x for x in near if np.isfinite(x)] or [1.0]
    fair = {k: means(res[("size", k, 1, "Fair Sharing")], SIZE_A)["avg"] for k in (k0, k1)}
    cat_aalo = improvement(res, ("size", 8, 1), SIZE_A, cols=CATEGORIES)["Aalo"]
    worst_aalo = max((v, c) for c, v in cat_aalo.items() if np.isfinite(v))
    abl = {lab: means(res[("ablation", lab)], SIZE_B)["avg"] for lab in ABLATIONS}
    base = means(res[("dag", "tao", 1, "Stream")], SIZE_B)["avg"]
    defaults = registry_defaults()
    st = defaults["stream"]
    tau0, e = float(st["first_threshold_mb"]), float(st["multiplier"])
    counts = means(res[("size", 8, 1, "Stream")], SIZE_A)
    racks = ctx.local["ports"]
    return {
        "sample": ctx.local["sample"],
        "trace_coflows": ctx.local["trace_coflows"],
        "trace_flows": ctx.local["trace_flows"],
        "sampled_runs": sum(key[0] in ("bursty", "dag", "ablation") for key in res),
        "queues": QUEUES,
        "ks": KS,
        "k0": k0,
        "k1": k1,
        "racks": racks,
        "edges_k0": k0 * k0 // 2,
        "hosts_per_edge_k0": k0 // 2,
        "fair_drop": fair[k0] / fair[k1],
        "big_spread": max(abs(x - 1) for x in big),
        "big_min": min(big),
        "big_max": max(big),
        "near_spread": max(abs(x - 1) for x in near),
        "near_min": min(near),
        "near_max": max(near),
        "k8": {n: imp(("size", k0, 1), n) for n in COMPARED},
        "mice_k8": {n: imp(("size", k0, 1), n, "mice") for n in COMPARED},
        "worst_aalo": worst_aalo,
        # Aalo / Stream on 8 pods per Gbps: Fig. 6's form, queues shared, 10 queues.
        **{
            name: {
                g: means(aalo_run(res, label, g), SIZE_A)["avg"]
                / means(res[("size", 8, g, "Stream")], SIZE_A)["avg"]
                for g in SPEEDS
            }
            for name, label in zip(
                ("aalo_fifo4", "aalo_fair4", "aalo_fifo10"), AALO_FORMS, strict=True
            )
        },
        "aalo_cat_fair": improvement_of(res, list(AALO_FORMS)[1], 1),
        "aalo_cat_fifo10": improvement_of(res, list(AALO_FORMS)[2], 1),
        "paper_aalo": (PAPER[("avg", 1, "Aalo")], PAPER[("avg", 10, "Aalo")]),
        "claim_tol": CLAIM_TOLERANCE,
        "burst_i": {n: imp(("bursty", 1), n, "I") for n in COMPARED},
        "dag_i": {s: imp(("dag", s, 1), "Aalo", "I", SIZE_B) for s in DAG_SHAPES},
        "abl": {lab: abl[lab] / base for lab in ABLATIONS},
        "tau0": tau0,
        "e": e,
        "thresholds_mib": [f"{tau0 * e**q:g}" for q in range(QUEUES - 1)],
        "alpha": st["alpha"],
        "beta": st["beta"],
        "heavy_mb": defaults["baraat"]["heavy_mb"],
        "counts": {c: counts["n_" + c] for c in CATEGORIES},
        "paper": PAPER,
        "paper_dag": PAPER_DAG_I,
        "paper_aalo_gap": PAPER_AALO_GAP,
        "MEAN_OVER_K": MEAN_OVER_K,
        "AT_8": AT_8,
    }


def improvement_of(res: dict, label: str, g: int) -> dict[str, float]:
    """Aalo's form ``label`` / Stream, per Table 3 category, 8 pods."""
    s = means(res[("size", 8, g, "Stream")], SIZE_A)
    m = means(aalo_run(res, label, g), SIZE_A)
    return {c: m[c] / s[c] for c in CATEGORIES}


def local(ctx) -> dict:
    """The sample sizes (a whole-trace replay counts every coflow) and the trace's
    own size (its coflows and racks)."""
    w = runner.WorkloadSpec(trace=ctx.opts.trace, transforms=ctx.opts.transforms).load()
    n = w.num_coflows
    sample = {k: n if v is None else min(v, n) for k, v in sample_of(ctx.opts).items()}
    return {"sample": sample, "trace_coflows": n, "trace_flows": w.num_flows, "ports": w.ports}


def sample_of(opts) -> dict[str, int | None]:
    """The first coflows each experiment replays: ``SAMPLE`` by default, else
    ``--coflows`` for every one (None, from ``--coflows all``: the whole trace)."""
    if opts.coflows == OWN_SAMPLES:
        return dict(SAMPLE)
    return {k: opts.coflows for k in SAMPLE}


def jobs(ctx) -> list:
    """Every simulation, the slowest (large fabrics, then Stream and Aalo) first."""
    opts = ctx.opts
    keyed = plan(opts.trace, sample_of(opts), opts.transforms)
    return sorted(keyed, key=lambda kj: -cost(kj[0]))


def parts(ctx) -> tuple:
    cats = "coflows per category: " + ", ".join(f"{c} {n}" for c, n in values_counts(ctx))
    return (
        Table(
            "fig6",
            "Mean CCT and mean CCT of mice coflows (category I, < 100 MB) per fabric",
            fig6_table,
        ),
        Figure("fig6", fig6_figure),
        Table(
            "improvement",
            "Stream's improvement per fabric; the paper's numbers are "
            "its averages over the network sizes (Sec. IV-B)",
            headline,
        ),
        Claims("claims", "Every improvement the paper states", claims, models=(MEAN_OVER_K, AT_8)),
        Table("fig7", f"Compared CCT / Stream's CCT per category; {cats}", fig7_table),
        Figure("fig7", bars_of(fig7_table, "gbps", SPEEDS, "G")),
        Table(
            "fig8",
            "Compared CCT / Stream's CCT with each coflow's senders in 2, 3 or 4 waves "
            "(`waves:count=N`)",
            fig8_table,
        ),
        Figure("fig8", bars_of(fig8_table, "waves", lambda: WAVES, " waves")),
        Table(
            "fig9",
            "Compared CCT / Stream's CCT, every coflow of the sample arriving at once",
            fig9_table,
        ),
        Figure("fig9", bars_of(fig9_table, "gbps", SPEEDS, "G")),
        Table("fig10", "The first (up to) 100 coflows to complete", fig10_table),
        Figure("fig10", fig10_figure),
        Table("fig11", "Stream with K queues against per-flow fair sharing", fig11_table),
        Figure("fig11", fig11_figure),
        *(
            part
            for fig_no, shape in (("fig12", "tpcds"), ("fig13", "tao"))
            for part in (
                Table(
                    fig_no,
                    f"Compared CCT / Stream's CCT per Size B category (`dag:shape={shape}`)",
                    dag_table(shape),
                ),
                Figure(fig_no, bars_of(dag_table(shape), "gbps", SPEEDS, "G")),
            )
        ),
        Table(
            "ablation", "Stream on the Tao DAGs, 8 pods, 1G, without each mechanism", ablation_table
        ),
        Table("baraat_threshold", "Baraat's heavy threshold, 8 pods, 1G", heavy_table),
        Table(
            "aalo_forms",
            "Aalo's queues and how a queue is shared, 8 pods: Aalo's CCT / Stream's",
            aalo_table,
        ),
    )


def values_counts(ctx) -> list[tuple[str, int]]:
    counts = means(ctx.results[("size", 8, 1, "Stream")], SIZE_A)
    return [(c, counts["n_" + c]) for c in CATEGORIES]


EXPERIMENT = Experiment(
    name="stream",
    title="Stream (decentralized coflow scheduling) reproduced by coflowkit",
    paper=PAPER_FILE,
    models=(),
    runs=(),
    workload=None,
    parts=parts,
    template="stream.md",
    default_coflows=OWN_SAMPLES,
    local=local,
    values=values,
    jobs=jobs,
)
