"""`coflowkit reproduce coda-scheduler` as an
:class:`~coflowkit.experiments.spec.Experiment`: one part per figure of CODA's
§6.4 (tables, figures, the paper's numbers beside coflowkit's), a claims table,
and the report's text in ``coda_scheduler.md``, from the scenarios, error rates
and policies of :mod:`coflowkit.experiments.coda_scheduler`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from coflowkit import labels, metrics, runner
from coflowkit.experiments import coda_error_kinds, coda_late_binding, common
from coflowkit.experiments.coda_scheduler import (
    AALO,
    ABLATIONS,
    BY_KEY,
    CODA,
    DEFAULT_COFLOWS,
    DEFAULT_DECISIONS,
    ERROR_KINDS,
    FAIR,
    GRID_STEPS,
    KIND_TARGETS,
    LABEL_SEED,
    NO_BOTH,
    NO_ID,
    NO_ID_SCENARIOS,
    NO_IP,
    NO_LB,
    OBSERVATION_SCENARIO,
    PIONEERS,
    RATE_STEPS,
    SCENARIOS,
    SEARCH_TOL,
    SPARK,
    STRAGGLERS,
    TICK_S,
    WORKLOAD_SEED,
    Rate,
    _heavy,
    chosen_of,
    find_error_rate,
    kind_params,
    kind_scheme,
    norm,
    res_of,
    scheme_params,
    schemes_of,
)
from coflowkit.experiments.common import Claim, fmt, ratio_note
from coflowkit.experiments.spec import Claims, Experiment, Figure, Table
from coflowkit.metrics import concurrency, lower_bounds

PAPER_FILE = "../shared/papers/000_b0cc221885eae45d.txt"


def gain_note(ours: float, paper: float) -> str:
    """Our gain (normalized CCT - 1) / the paper's, flagged when off by more than the
    tolerance."""
    return ratio_note(ours - 1.0, paper - 1.0)


def _bars(
    ax, groups: list[str], series: dict[str, list[float]], paper=None, gain: bool = False
) -> None:
    """Grouped bars, one group per entry of ``groups``; ``paper`` (same keys as
    ``series``, NaN where the paper gives nothing) as black marks. ``gain``: plot
    (value - 1) in percent around 0 instead of the ratio around 1."""

    def y(vals):
        v = np.asarray(vals, dtype=float)
        return 100 * (v - 1) if gain else v

    x = np.arange(len(groups))
    width = 0.8 / max(1, len(series))
    for j, (name, vals) in enumerate(series.items()):
        ax.bar(x + (j - (len(series) - 1) / 2) * width, y(vals), width, label=name)
    if paper:
        for j, vals in enumerate(paper.values()):
            xs = x + (j - (len(paper) - 1) / 2) * width
            ax.scatter(
                xs,
                y(vals),
                marker="_",
                s=300,
                color="black",
                zorder=3,
                label="paper" if j == 0 else None,
            )
    ax.axhline(0.0 if gain else 1.0, color="grey", lw=0.8)
    ax.set_xticks(x, [g.replace(" ", "\n", 1) for g in groups])
    ax.legend(fontsize=8)


# ---------------------------------------------------------------------------
# Sections


#: Fig. 10 of the paper, as its text states it: (precision, recall), None where not stated.
PAPER_QUALITY = {
    "spark": (0.97, 0.98),
    "hadoop": (0.94, 0.84),
    "batch10": (0.85, None),
    "batch50": (None, None),
    "batch100": (0.56, None),
    "stretched-spark": (None, 0.60),
    "stretched-hadoop": (None, 0.60),
}


#: Fig. 11-12 as the text states them: Aalo / CODA and Fair / CODA (average CCT), as
#: (low, high); the 50 s batch point is only said to lie between 10 s and 100 s.
PAPER_MAIN = {
    "spark": ((1.0, 1.0), (2.7, 2.7)),
    "hadoop": ((1 / 1.1, 1 / 1.1), (2.3, 2.3)),
    "batch10": ((1 / 1.3, 1 / 1.3), (2.0, 2.0)),
    "batch50": ((1 / 1.8, 1 / 1.3), (1.5, 2.0)),
    "batch100": ((1 / 1.8, 1 / 1.8), (1.5, 1.5)),
    "stretched-spark": ((1 / 1.3, 1 / 1.3), (2.0, 2.0)),
    "stretched-hadoop": ((1 / 1.3, 1 / 1.3), (2.0, 2.0)),
}


def _paper_value(r: tuple[float, float]) -> float | str:
    lo, hi = r
    return lo if lo == hi else f"{lo:.2f}-{hi:.2f}"


def _between_note(ours: float, r: tuple[float, float]) -> str:
    """``ratio_note`` against the paper's value, or the nearest end of its range."""
    lo, hi = r
    if lo < hi and lo <= ours <= hi:
        return "in range"
    return ratio_note(ours, lo if ours < lo else hi)


def _main_rows(chosen, res, figure: str) -> list[dict]:
    rows = []
    for s in chosen:
        if not s.figure.startswith(figure):
            continue
        pa, pf = PAPER_MAIN[s.key]
        a, f = norm(res, s.key, AALO), norm(res, s.key, FAIR)
        rows.append(
            {
                "scenario": s.title,
                "CODA mean CCT (s)": float(res[(s.key, CODA)]["cct_s"].mean()),
                "Aalo / CODA": a,
                "Fair / CODA": f,
                "paper Aalo / CODA": _paper_value(pa),
                "paper Fair / CODA": _paper_value(pf),
                "Aalo ratio": _between_note(a, pa),
                "Fair ratio": _between_note(f, pf),
            }
        )
    return rows


def _key(title: str) -> str:
    return next(s.key for s in SCENARIOS if s.title == title)


#: Fig. 13 as the text states it: w/o L.B., w/o I.P., w/o both, over CODA; (lo, hi) ranges.
PAPER_ABLATION = {
    "batch10": (None, (1.01, 1.05), (1.03, 1.05)),
    "batch50": (None, (1.01, 1.05), (1.03, 1.05)),
    "batch100": (None, (1.01, 1.05), (1.03, 1.05)),
    "stretched-spark": ((1.10, None), (1.01, 1.05), (1.14, 1.14)),
    "stretched-hadoop": ((1.10, None), (1.07, 1.07), (1.16, 1.16)),
}


def _paper_range(r) -> str:
    if r is None:
        return "-"
    lo, hi = r
    if hi is None:
        return f"> {lo:g}"
    return f"{lo:g}" if lo == hi else f"{lo:g}-{hi:g}"


def _range_note(ours: float, r) -> str:
    """Our gain against the paper's (a range: the nearest end; '> x': x if below)."""
    if r is None:
        return "-"
    lo, hi = r
    if hi is None:
        return "in range" if ours >= lo else gain_note(ours, lo)
    if lo - 1e-12 <= round(ours, 2) <= hi + 1e-12:
        return "in range"
    return gain_note(ours, lo if ours < lo else hi)


def impact_reduction(res, key: str) -> float:
    """CODA's footnote 8: (CCT w/o both - CCT CODA) / (CCT w/o both - CCT Aalo), the
    share of the errors' cost the design removes; undefined (NaN) when the errors
    cost nothing, i.e. Aalo on the true coflows is not faster than on the wrong
    labels (w/o both)."""
    wob = res[(key, NO_BOTH)]["cct_s"].mean()
    coda = res[(key, CODA)]["cct_s"].mean()
    aalo = res[(key, AALO)]["cct_s"].mean()
    return impact_of(wob, coda, aalo)


def impact_of(wob: float, coda: float, aalo: float) -> float:
    """Footnote 8 from the three average CCTs: without both parts, CODA, Aalo on
    the true coflows (NaN when Aalo is not faster than without both)."""
    return float((wob - coda) / (wob - aalo)) if wob > aalo else float("nan")


def _span(vals) -> str:
    v = [x for x in vals if np.isfinite(x)]
    if not v:
        return "-"
    lo, hi = min(v), max(v)
    return fmt(lo) if fmt(lo) == fmt(hi) else f"{fmt(lo)}-{fmt(hi)}"


def _pct(vals) -> str:
    """Gains (normalized CCT - 1) as signed percentages: '-1.1% to +9.9%'."""
    v = [100 * (x - 1) for x in vals if np.isfinite(x)]
    if not v:
        return "-"
    lo, hi = (f"{x:+.1f}%".replace("-0.0%", "+0.0%") for x in (min(v), max(v)))
    return lo if lo == hi else f"{lo} to {hi}"


#: Fig. 15: the most intra-coflow prioritisation gains for SN coflows (text: "up to").
PAPER_SN = {"batch": 1.16, "stretched": 1.30}
PAPER_NO_ID = {"all": 1.08, "SN": 7.4}
#: The other numbers of the paper's text the report quotes (§4, §6.3-6.4).
PAPER_TEXT = {
    "spark_accuracy": 0.95,
    "hadoop_accuracy": 0.90,
    "batch_accuracy": (0.85, 0.56),
    "stretched_recall": 0.60,
    "design_batch": (0.03, 0.05),
    "design_stretched": (0.14, 0.16),
    "ip_batch": (0.01, 0.05),
    "ip_stretched": (0.01, 0.07),
    "lb_stretched": 0.10,
    "impact": 0.40,
    "impact_sec42": 0.30,
    "obs1_straggler": 1.33,
    "obs1_pioneer": 1.03,
}
#: Where each kind of number is stated.
WHERE = {
    "main11": "§6.4, Fig. 11",
    "main12": "§6.4, Fig. 12",
    "quality": "§6.3, Fig. 10",
    "no_id": "§6.4, Fig. 16",
    "impact": "§6.4, Fig. 13 and footnote 8",
}


# ---------------------------------------------------------------------------
# Before the runs: the workloads, the error rates, the bounds


def specs_of(opts) -> dict:
    return {
        s.key: runner.WorkloadSpec(
            trace=opts.trace, transforms=tuple(opts.transforms) + s.transforms, first=opts.coflows
        )
        for s in chosen_of(opts)
    }


#: The whole trace with Spark starts (the paper's Fig. 11 setting): fair and Aalo on
#: it measure how crowded the paper's workload is, beside the replays.
WHOLE = "whole trace, Spark starts"


def whole_spec(opts):
    return runner.WorkloadSpec(trace=opts.trace, transforms=(*opts.transforms, SPARK))


def prepare(ctx) -> dict:
    """Per scenario: its error rate (the labels' quality matched to the paper's), its
    size and its lower bounds; the whole trace's flows."""
    rates, sizes, bounds = {}, {}, {}
    specs = specs_of(ctx.opts)
    for s in chosen_of(ctx.opts):
        w = specs[s.key].load()
        rates[s.key] = find_error_rate(w, s.target, s.metric)
        sizes[s.key] = (w.num_coflows, w.num_flows)
        bounds[s.key] = lower_bounds(w)
        if s.key == OBSERVATION_SCENARIO:
            r = rates[s.key].error_rate
            rates[PIONEERS] = Rate(r, labels.source_quality(w, "pioneers", r, LABEL_SEED), "", 0)
            rates[STRAGGLERS] = Rate(
                r, labels.source_quality(w, "stragglers", r, LABEL_SEED), "", 0
            )
        if s.key in NO_ID_SCENARIOS:
            rates[(NO_ID, s.key)] = Rate(0.0, labels.source_quality(w, "one"), "", 0)
        if s.key in KIND_TARGETS:
            metric, target, _ = KIND_TARGETS[s.key]
            for kind in ERROR_KINDS:
                rates[(s.key, kind)] = find_error_rate(w, target, metric, source=kind)
    whole = whole_spec(ctx.opts).load()
    return {
        "specs": specs,
        "rates": rates,
        "sizes": sizes,
        "bounds": bounds,
        "whole_flows": whole.num_flows,
        "whole_coflows": whole.num_coflows,
        "whole_bound": lower_bounds(whole),
    }


def jobs(ctx) -> list:
    """Jobs grouped by workload (the runner keeps a few workloads loaded), the costly
    ones first within each group, and the groups with the most cheap jobs last, so
    that the two workers finish close together; then fair and Aalo on the whole
    trace with Spark starts."""
    specs, rates = ctx.prep["specs"], ctx.prep["rates"]
    model = common.decision_params(ctx.opts.decisions)
    groups = []
    for s in chosen_of(ctx.opts):
        group = []
        for name in dict.fromkeys(schemes_of(s)):
            policy, params = scheme_params(name, rates[s.key].error_rate)
            group.append((not _heavy(policy, params), (s.key, name), policy, params + model))
        for kind in ERROR_KINDS if s.key in KIND_TARGETS else ():
            for ablated in (False, True):
                policy, params = kind_params(kind, rates[(s.key, kind)].error_rate, ablated)
                key = (s.key, kind_scheme(kind, ablated))
                group.append((not _heavy(policy, params), key, policy, params + model))
        groups.append(sorted(group, key=lambda g: g[0]))
    out = []
    for group in sorted(groups, key=lambda g: sum(light for light, *_ in g)):
        for _, key, policy, params in group:
            out.append((key, runner.Job(specs[key[0]], policy, params)))
    for name in (FAIR, AALO):
        policy = scheme_params(name, 0)[0]
        out.append(((WHOLE, name), runner.Job(whole_spec(ctx.opts), policy, model)))
    return out


# ---------------------------------------------------------------------------
# Tables


def identification(ctx) -> pd.DataFrame:
    rates, sizes = ctx.prep["rates"], ctx.prep["sizes"]
    rows = []
    for s in chosen_of(ctx.opts):
        r = rates[s.key]
        pp, pr = PAPER_QUALITY[s.key]
        rows.append(
            {
                "scenario": s.title,
                "coflows": sizes[s.key][0],
                "flows": sizes[s.key][1],
                "labels": "random",
                "matched": s.metric,
                "target": s.target,
                "target from": s.target_source,
                "error_rate": r.error_rate,
                "precision": r.quality.precision,
                "recall": r.quality.recall,
                "accuracy": r.quality.accuracy,
                "within 0.01": "yes" if r.matched else "no (out of reach)",
                "paper precision": pp,
                "paper recall": pr,
                "precision ratio": ratio_note(r.quality.precision, pp) if pp else "-",
                "recall ratio": ratio_note(r.quality.recall, pr) if pr else "-",
            }
        )
        extra = []
        if s.key == OBSERVATION_SCENARIO:
            extra = [("pioneers", rates[PIONEERS]), ("stragglers", rates[STRAGGLERS])]
        if s.key in NO_ID_SCENARIOS:
            extra.append(("one", rates[(NO_ID, s.key)]))
        for src, r2 in extra:
            rows.append(
                {
                    "scenario": s.title,
                    "coflows": sizes[s.key][0],
                    "flows": sizes[s.key][1],
                    "labels": src,
                    "matched": "-",
                    "target": None,
                    "target from": "Observation 1 (same rate)" if src != "one" else "Fig. 16",
                    "error_rate": r2.error_rate if src != "one" else None,
                    "precision": r2.quality.precision,
                    "recall": r2.quality.recall,
                    "accuracy": r2.quality.accuracy,
                    "within 0.01": "-",
                    "paper precision": None,
                    "paper recall": None,
                    "precision ratio": "-",
                    "recall ratio": "-",
                }
            )
    return pd.DataFrame(rows)


def runs_table(ctx) -> pd.DataFrame:
    rows = []
    for (sk, name), job in jobs(ctx):
        if sk == WHOLE:
            continue
        c = ctx.results[(sk, name)].coflows
        sn = c[c["bin"] == "SN"]["cct_s"]
        rows.append(
            {
                "scenario": BY_KEY[sk].title,
                "scheme": name,
                "policy": job.policy,
                "params": ",".join(f"{k}={v}" for k, v in job.params) or "-",
                "coflows": len(c),
                "mean CCT (s)": float(c["cct_s"].mean()),
                "p95 CCT (s)": float(np.percentile(c["cct_s"], 95)),
                "SN coflows": len(sn),
                "SN mean CCT (s)": float(sn.mean()) if len(sn) else float("nan"),
            }
        )
    return pd.DataFrame(rows)


def main_table(figure: str):
    def build(ctx) -> pd.DataFrame | None:
        rows = _main_rows(chosen_of(ctx.opts), res_of(ctx), figure)
        return pd.DataFrame(rows) if rows else None

    return build


def ablate(ctx) -> list:
    return [s for s in chosen_of(ctx.opts) if s.ablate]


def ablation_table(ctx) -> pd.DataFrame | None:
    res, rows = res_of(ctx), []
    for s in ablate(ctx):
        p = PAPER_ABLATION[s.key]
        vals = [norm(res, s.key, a) for a in ABLATIONS]
        row = {"scenario": s.title}
        for a, v, pr in zip(ABLATIONS, vals, p, strict=True):
            row[f"{a} / CODA"] = v
            row[f"paper {a}"] = _paper_range(pr)
            row[f"{a} gain ratio"] = _range_note(v, pr)
        row["Aalo / CODA"] = norm(res, s.key, AALO)
        row["impact reduction"] = impact_reduction(res, s.key)
        stretched = s.key.startswith("stretched")
        impact = PAPER_TEXT["impact"]
        row["paper impact reduction"] = impact if stretched else None
        row["impact ratio"] = ratio_note(row["impact reduction"], impact) if stretched else "-"
        rows.append(row)
    return pd.DataFrame(rows) if rows else None


def sn_table(ctx) -> pd.DataFrame | None:
    res, rows = res_of(ctx), []
    for s in ablate(ctx):
        kind = "batch" if s.key.startswith("batch") else "stretched"
        n = int((res[(s.key, CODA)]["bin"] == "SN").sum())
        rows.append(
            {
                "scenario": s.title,
                "SN coflows": n,
                "w/o I.P. / CODA (SN)": norm(res, s.key, NO_IP, bin="SN"),
                "w/o L.B. / CODA (SN)": norm(res, s.key, NO_LB, bin="SN"),
                "w/o both / CODA (SN)": norm(res, s.key, NO_BOTH, bin="SN"),
                "Aalo / CODA (SN)": norm(res, s.key, AALO, bin="SN"),
                "paper w/o I.P. (SN, best case)": PAPER_SN[kind],
            }
        )
    if not rows:
        return None
    t = pd.DataFrame(rows)
    for kind, best in PAPER_SN.items():
        part = t[t["scenario"].str.startswith(kind)]
        if len(part):
            top = float(part["w/o I.P. / CODA (SN)"].max())
            t.loc[part.index, "best in group gain ratio"] = gain_note(top, best)
    return t


def no_id_table(ctx) -> pd.DataFrame | None:
    res, rows = res_of(ctx), []
    for s in chosen_of(ctx.opts):
        if s.key not in NO_ID_SCENARIOS:
            continue
        row = {"scenario": s.title}
        for b in ["all"] + metrics.BINS:
            row[f"Fair / CODA ({b})"] = norm(res, s.key, FAIR, base=NO_ID, bin=b)
        row["paper (all)"] = PAPER_NO_ID["all"]
        row["paper (SN)"] = PAPER_NO_ID["SN"]
        row["all gain ratio"] = gain_note(row["Fair / CODA (all)"], PAPER_NO_ID["all"])
        row["SN ratio"] = ratio_note(row["Fair / CODA (SN)"], PAPER_NO_ID["SN"])
        rows.append(row)
    return pd.DataFrame(rows) if rows else None


def observation_table(ctx) -> pd.DataFrame | None:
    key = OBSERVATION_SCENARIO
    if not any(s.key == key for s in chosen_of(ctx.opts)):
        return None
    res, rates = res_of(ctx), ctx.prep["rates"]
    rows = []
    for name, lab in [(NO_BOTH, "random"), (PIONEERS, "pioneers"), (STRAGGLERS, "stragglers")]:
        q = rates[key].quality if lab == "random" else rates[name].quality
        rows.append(
            {
                "labels": lab,
                "scheme": "Aalo on the labels (CODA w/o both)",
                "error_rate": rates[key].error_rate,
                "accuracy": q.accuracy,
                "over Aalo (truth)": norm(res, key, name, base=AALO),
                "over CODA (random)": norm(res, key, name),
                "SN over Aalo (truth)": norm(res, key, name, base=AALO, bin="SN"),
            }
        )
    return pd.DataFrame(rows)


def whole(ctx) -> dict[str, float]:
    """The whole trace with Spark starts: average CCT overall and of the SN coflows
    under fair and Aalo, the lower bound averaged the same ways, and the coflows in
    the network under fair."""
    fair, aalo = (ctx.results[(WHOLE, n)].coflows for n in (FAIR, AALO))
    b = ctx.prep["whole_bound"].reindex(fair["coflow_id"].to_numpy()).to_numpy()
    sn = (fair["bin"] == "SN").to_numpy()
    return {
        "fair": float(fair["cct_s"].mean()),
        "fair_sn": float(fair["cct_s"][sn].mean()),
        "aalo": float(aalo["cct_s"].mean()),
        "aalo_sn": float(aalo["cct_s"][(aalo["bin"] == "SN").to_numpy()].mean()),
        "bound": float(b.mean()),
        "bound_sn": float(b[sn].mean()),
        "crowd": concurrency(fair),
        "coflows": len(fair),
    }


def bound_table(ctx) -> pd.DataFrame:
    res, bounds, rows = res_of(ctx), ctx.prep["bounds"], []
    for s in chosen_of(ctx.opts):
        fair, coda = res[(s.key, FAIR)], res[(s.key, CODA)]
        b = bounds[s.key].reindex(coda["coflow_id"].to_numpy()).to_numpy()
        sn = (coda["bin"] == "SN").to_numpy()
        rows.append(
            {
                "scenario": s.title,
                "coflows": len(fair),
                "coflows in the network (Fair)": concurrency(fair),
                "bound: mean CCT (s)": float(b.mean()),
                "CODA / bound": float(coda["cct_s"].mean() / b.mean()),
                "Fair / bound": float(fair["cct_s"].mean() / b.mean()),
                "SN bound (s)": float(b[sn].mean()) if sn.any() else float("nan"),
                "SN: CODA / bound": float(coda["cct_s"][sn].mean() / b[sn].mean())
                if sn.any()
                else float("nan"),
                "SN: Fair / bound": float(fair["cct_s"][sn].mean() / b[sn].mean())
                if sn.any()
                else float("nan"),
            }
        )
    if ctx.opts.coflows is None:  # the scenarios replay the whole trace already
        return pd.DataFrame(rows)
    w = whole(ctx)
    rows.append(
        {
            "scenario": f"{WHOLE} (fair and Aalo only)",
            "coflows": w["coflows"],
            "coflows in the network (Fair)": w["crowd"],
            "bound: mean CCT (s)": w["bound"],
            "Fair / bound": w["fair"] / w["bound"],
            "SN bound (s)": w["bound_sn"],
            "SN: Fair / bound": w["fair_sn"] / w["bound_sn"],
        }
    )
    return pd.DataFrame(rows)


def bins_table(ctx) -> pd.DataFrame:
    res, rows = res_of(ctx), []
    for s in chosen_of(ctx.opts):
        for name in dict.fromkeys(schemes_of(s)):
            if name == CODA:
                continue
            row = {"scenario": s.title, "scheme": name}
            n = metrics.normalized(res[(s.key, name)], res[(s.key, CODA)])
            for b in ["all"] + metrics.BINS:
                row[b] = n[b].get("ratio_of_means", float("nan"))
            rows.append(row)
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------
# Claims: every number the paper states that a run here measures


def claims(ctx) -> list[Claim]:
    res, rates, col = res_of(ctx), ctx.prep["rates"], "ours"
    out = []
    for s in chosen_of(ctx.opts):
        pa, pf = PAPER_MAIN[s.key]
        where = WHERE["main11"] if s.figure.startswith("11") else WHERE["main12"]
        for name, (lo, hi) in ((AALO, pa), (FAIR, pf)):
            v = norm(res, s.key, name)
            text = f"{name} / CODA, {s.title}"
            if lo == hi:
                out.append(Claim(text, fmt(lo), "value", lo, {col: v}, where))
            else:  # a range: its two ends, each a bound
                out.append(
                    Claim(f"{text} (range's low end)", f"> {fmt(lo)}", "above", lo, {col: v}, where)
                )
                out.append(
                    Claim(
                        f"{text} (range's high end)", f"< {fmt(hi)}", "below", hi, {col: v}, where
                    )
                )
        pp, pr = PAPER_QUALITY[s.key]
        q = rates[s.key].quality
        for what, paper, ours in (("precision", pp, q.precision), ("recall", pr, q.recall)):
            if paper is not None:
                text = f"label {what}, {s.title} (injected errors)"
                out.append(Claim(text, fmt(paper), "value", paper, {col: ours}, WHERE["quality"]))
        if s.key in NO_ID_SCENARIOS:
            for b in ("all", "SN"):
                v = norm(res, s.key, FAIR, base=NO_ID, bin=b)
                text = f"Fair / CODA without identification, {b}, {s.title}"
                p = PAPER_NO_ID[b]
                out.append(Claim(text, fmt(p), "value", p, {col: v}, WHERE["no_id"]))
        if s.ablate and s.key.startswith("stretched"):
            p = PAPER_TEXT["impact"]
            v = impact_reduction(res, s.key)
            text = f"impact reduction (footnote 8), {s.title}"
            out.append(Claim(text, fmt(p), "value", p, {col: v}, WHERE["impact"]))
    return out


# ---------------------------------------------------------------------------
# Figures


def main_figure(figure: str, title: str):
    def build(ctx):
        rows = _main_rows(chosen_of(ctx.opts), res_of(ctx), figure)
        if not rows:
            return None
        fig, ax = common.plt().subplots(figsize=(1.6 + 1.3 * len(rows), 3.2))
        groups = [r["scenario"] for r in rows]

        def paper(col):
            return [float(np.mean(PAPER_MAIN[_key(r["scenario"])][col])) for r in rows]

        _bars(
            ax,
            groups,
            {AALO: [r["Aalo / CODA"] for r in rows], FAIR: [r["Fair / CODA"] for r in rows]},
            {AALO: paper(0), FAIR: paper(1)},
        )
        ax.set_ylabel("average CCT / CODA's")
        ax.set_title(title)
        return fig

    return build


def spark_cdf(ctx):
    if not any(s.key == "spark" for s in chosen_of(ctx.opts)):
        return None
    res = res_of(ctx)
    fig, ax = common.plt().subplots(figsize=(5, 3.2))
    for name in [CODA, AALO, FAIR]:
        common.cdf(ax, res[("spark", name)]["cct_s"].to_numpy(), name)
    ax.set_xscale("log")
    ax.set_xlabel("CCT (s)")
    ax.set_ylabel("fraction of coflows")
    ax.legend()
    ax.set_title("Fig. 11b: CCT, Spark")
    return fig


def ablation_figure(ctx):
    t = ablation_table(ctx)
    if t is None:
        return None
    fig, ax = common.plt().subplots(figsize=(1.6 + 1.3 * len(t), 3.2))

    def mark(r):
        if r is None:
            return np.nan
        return r[0] if r[1] is None else (r[0] + r[1]) / 2

    _bars(
        ax,
        list(t["scenario"]),
        {a: list(t[f"{a} / CODA"]) for a in ABLATIONS},
        {
            a: [mark(PAPER_ABLATION[_key(s)][i]) for s in t["scenario"]]
            for i, a in enumerate(ABLATIONS)
        },
        gain=True,
    )
    ax.set_ylabel("CODA's gain (%)")
    ax.set_title("Fig. 13: without late binding / intra-coflow prioritisation")
    return fig


def sn_figure(ctx):
    t = sn_table(ctx)
    if t is None:
        return None
    fig, ax = common.plt().subplots(figsize=(1.6 + 1.3 * len(t), 3.2))
    nan = [np.nan] * len(t)
    _bars(
        ax,
        list(t["scenario"]),
        {
            NO_IP: list(t["w/o I.P. / CODA (SN)"]),
            NO_LB: list(t["w/o L.B. / CODA (SN)"]),
            NO_BOTH: list(t["w/o both / CODA (SN)"]),
            AALO: list(t["Aalo / CODA (SN)"]),
        },
        {NO_IP: list(t["paper w/o I.P. (SN, best case)"]), NO_LB: nan, NO_BOTH: nan, AALO: nan},
        gain=True,
    )
    ax.set_ylabel("CODA's gain for SN coflows (%)")
    ax.set_title("Fig. 15: SN coflows")
    return fig


def no_id_figure(ctx):
    t = no_id_table(ctx)
    if t is None:
        return None
    fig, ax = common.plt().subplots(figsize=(5.5, 3.2))
    bins = ["all"] + metrics.BINS
    _bars(
        ax, bins, {r["scenario"]: [r[f"Fair / CODA ({b})"] for b in bins] for _, r in t.iterrows()}
    )
    ax.set_ylabel("Fair's average CCT / CODA's")
    ax.set_title("Fig. 16: CODA without identification vs fair")
    return fig


def observation_figure(ctx):
    t = observation_table(ctx)
    if t is None:
        return None
    fig, ax = common.plt().subplots(figsize=(4.5, 3.2))
    _bars(
        ax,
        ["all", "SN"],
        {r["labels"]: [r["over Aalo (truth)"], r["SN over Aalo (truth)"]] for _, r in t.iterrows()},
    )
    ax.set_ylabel("average CCT / Aalo's on the truth")
    ax.set_title("Observation 1: pioneers vs stragglers")
    return fig


# ---------------------------------------------------------------------------
# What the text quotes


#: A coflow counts as sped up or slowed down by late binding when its CCT moves by
#: more than this share.
LB_CHANGE = 0.01


class Measured:
    """This run's results with the ratios the text reads: a scheme over its lower
    bound, and how crowded a scenario is."""

    def __init__(self, ctx) -> None:
        self.res, self.rates = res_of(ctx), ctx.prep["rates"]
        self.bounds, self.sizes = ctx.prep["bounds"], ctx.prep["sizes"]
        self.keys = [s.key for s in chosen_of(ctx.opts)]
        self.ab = [k for k in self.keys if BY_KEY[k].ablate]
        self.title = {k: BY_KEY[k].title for k in self.keys}

    def crowd(self, k: str) -> float:
        return concurrency(self.res[(k, FAIR)])

    def over_bound(self, k: str, name: str, sn: bool = False) -> float:
        c = self.res[(k, name)]
        b = self.bounds[k].reindex(c["coflow_id"].to_numpy()).to_numpy()
        m = (c["bin"] == "SN").to_numpy() if sn else np.ones(len(c), bool)
        return float(c["cct_s"][m].mean() / b[m].mean()) if m.any() else float("nan")

    def norm(self, k: str, name: str, **kw) -> float:
        return norm(self.res, k, name, **kw)

    def lb_split(self, k: str, top: int = 5) -> dict:
        """Late binding coflow by coflow in scenario ``k``: coflows more than
        :data:`LB_CHANGE` faster and slower with it, the net change of the total CCT (s), and the
        ``top`` coflows it slows most (their loss in s and their bins)."""
        a = self.res[(k, CODA)].set_index("coflow_id")
        b = self.res[(k, NO_LB)].set_index("coflow_id")
        r = a["cct_s"] / b["cct_s"]
        d = (a["cct_s"] - b["cct_s"]).sort_values(ascending=False).head(top)
        tol = LB_CHANGE
        return {
            "title": self.title[k],
            "faster": int((r < 1 - tol).sum()),
            "slower": int((r > 1 + tol).sum()),
            "tol": tol,
            "net": float((a["cct_s"] - b["cct_s"]).sum()),
            "top_loss": float(d.sum()),
            "top_bins": sorted(set(a.loc[d.index, "bin"])),
            "top_finish": (
                float(a.loc[d.index, "finish_s"].min()),
                float(a.loc[d.index, "finish_s"].max()),
            ),
            "last_finish": float(a["finish_s"].max()),
        }

    def share(self, k: str, name: str, bin: str) -> float:
        """The share of ``name``'s total CCT carried by the coflows of ``bin``."""
        c = self.res[(k, name)]
        return float(c["cct_s"][c["bin"] == bin].sum() / c["cct_s"].sum())

    def sn_bound(self, k: str) -> float:
        c = self.res[(k, CODA)]
        return float(self.bounds[k].reindex(c["coflow_id"][c["bin"] == "SN"].to_numpy()).mean())

    def sn_isolated(self, k: str) -> float:
        c = self.res[(k, CODA)]
        return float(c["isolated_s"][c["bin"] == "SN"].mean())


def challenging_values(m: Measured) -> dict | None:
    ch = [k for k in m.keys if BY_KEY[k].figure in ("12a", "12b")]
    if not ch:
        return None
    r = m.rates.get("batch100")
    return {
        "slower": _span([1 / m.norm(k, AALO) for k in ch]),
        "wob": _span([m.norm(k, NO_BOTH, base=AALO) for k in ch if (k, NO_BOTH) in m.res]),
        "has_wob": any((k, NO_BOTH) in m.res for k in ch),
        "batch100": None
        if "batch100" not in ch
        else {
            "min_precision": r.grid_min_precision,
            "min_accuracy": r.grid_min_accuracy,
            "accuracy": r.quality.accuracy,
            "rate": f"{r.error_rate:g}",
        },
    }


def ablation_values(m: Measured) -> dict | None:
    ab = m.ab
    if not ab:
        return None
    imp = {m.title[k]: impact_reduction(m.res, k) for k in ab}
    lb = [m.norm(k, NO_LB) for k in ab]
    return {
        "gain": _pct([m.norm(k, NO_BOTH) for k in ab]),
        "cost": _pct([m.norm(k, NO_BOTH, base=AALO) for k in ab]),
        "impact": imp,
        "good": sum(np.isfinite(x) and x >= PAPER_TEXT["impact"] for x in imp.values()),
        "count": len(ab),
        "lb": _pct(lb),
        "ip": _pct([m.norm(k, NO_IP) for k in ab]),
        "neg": [m.title[k] for k, x in zip(ab, lb, strict=True) if x < 1 - 1e-9],
        "ipsn": _pct([m.norm(k, NO_IP, bin="SN") for k in ab]),
        "ipsn_span": _span([m.norm(k, NO_IP, bin="SN") for k in ab]),
        "lbsn_span": _span([m.norm(k, NO_LB, bin="SN") for k in ab]),
        # Late binding per bin: CCT without it over CCT with it (below 1: it slows
        # that bin down), and the share of the total CCT each bin carries under CODA.
        "lb_bins": {
            b: _span([m.norm(k, NO_LB, bin=b) for k in ab]) for b in ("SN", "LN", "SW", "LW")
        },
        "lb_slows_lw": [m.title[k] for k in ab if m.norm(k, NO_LB, bin="LW") < 1 - 1e-9],
        "lw_share": _span([m.share(k, CODA, "LW") for k in ab]),
        "ip_slows": [m.title[k] for k in ab if m.norm(k, NO_IP, bin="SN") < 0.99],
        "lb_split": [m.lb_split(k) for k in ab if m.norm(k, NO_LB) < 1 - 1e-9],
        "cost_small": all(m.norm(k, NO_BOTH, base=AALO) < 1.05 for k in ab),
        "sn_bound": _span([m.sn_bound(k) for k in ab]),
        "sn_iso": _span([m.sn_isolated(k) for k in ab]),
        "sn_over": {m.title[k]: m.over_bound(k, CODA, sn=True) for k in ab},
    }


def no_id_values(m: Measured) -> dict | None:
    ni = [k for k in m.keys if k in NO_ID_SCENARIOS]
    if not ni:
        return None
    return {
        "all": _span([m.norm(k, FAIR, base=NO_ID) for k in ni]),
        "sn": _span([m.norm(k, FAIR, base=NO_ID, bin="SN") for k in ni]),
        "fair_over": {m.title[k]: m.over_bound(k, FAIR, sn=True) for k in ni},
        "noid_over": {m.title[k]: m.over_bound(k, NO_ID, sn=True) for k in ni},
    }


def observation_values(m: Measured) -> dict | None:
    k = OBSERVATION_SCENARIO
    if k not in m.keys:
        return None
    p, st = m.norm(k, PIONEERS, base=AALO), m.norm(k, STRAGGLERS, base=AALO)
    psn = m.norm(k, PIONEERS, base=AALO, bin="SN")
    ssn = m.norm(k, STRAGGLERS, base=AALO, bin="SN")
    return {"p": p, "st": st, "psn": psn, "ssn": ssn, "holds": ssn > psn and st >= p}


def values(ctx) -> dict:
    """The numbers of the report's text: the setup, the paper's, and this run's."""
    m = Measured(ctx)
    chosen = chosen_of(ctx.opts)
    figs = {s.figure[:2] for s in chosen}
    roomy = max(m.keys, key=lambda k: m.over_bound(k, FAIR))
    hadoop = m.rates["hadoop"].quality if "hadoop" in m.keys else None
    return {
        "paper": PAPER_TEXT,
        "paper_main": PAPER_MAIN,
        "paper_sn": PAPER_SN,
        "paper_no_id": PAPER_NO_ID,
        "paper_quality": PAPER_QUALITY,
        "tick_ms": TICK_S * 1000,
        "tick_s": TICK_S,
        "decisions": common.decisions_label(ctx.opts.decisions),
        "per_event": common.decision_params(ctx.opts.decisions) == (),
        "label_seed": LABEL_SEED,
        "workload_seed": WORKLOAD_SEED,
        "search_tol": SEARCH_TOL,
        "tolerance_25": common.TOLERANCE,
        "grid_step": 1 / GRID_STEPS,
        "rate_steps": RATE_STEPS,
        "seeds": list(dict.fromkeys(t for s in chosen for t in s.transforms)),
        "has11": "11" in figs,
        "has12": "12" in figs,
        "observation": m.title.get(OBSERVATION_SCENARIO),
        "w": whole(ctx),
        "whole_flows": ctx.prep["whole_flows"],
        "whole_coflows": ctx.prep["whole_coflows"],
        "flow_factor": ctx.prep["whole_flows"] / max(m.sizes[k][1] for k in m.keys),
        "fair_span": _span([m.norm(k, FAIR) for k in m.keys]),
        "fair_aalo_span": _span([m.norm(k, FAIR, base=AALO) for k in m.keys]),
        "aalo_bound_span": _span([m.over_bound(k, AALO) for k in m.keys]),
        "crowd_span": _span([m.crowd(k) for k in m.keys]),
        "coda_bound_span": _span([m.over_bound(k, CODA) for k in m.keys]),
        "fair_bound_span": _span([m.over_bound(k, FAIR) for k in m.keys]),
        "fmt": fmt,
        "roomy": {"title": m.title[roomy], "fair": m.over_bound(roomy, FAIR)},
        "challenging": challenging_values(m),
        "ablation": ablation_values(m),
        "no_id": no_id_values(m),
        "hadoop": None
        if hadoop is None
        else {"precision": hadoop.precision, "recall": hadoop.recall},
        "obs": observation_values(m),
        "kinds": coda_error_kinds.kinds_values(ctx),
        "lbx": coda_late_binding.losses_values(ctx),
        "ipx": coda_late_binding.ip_values(ctx),
        "split_parts": labels.SPLIT_PARTS,
    }


def parts(ctx) -> tuple:
    return (
        Table("identification", "Labelling quality per scenario", identification, digits=3),
        Claims("claims", "The paper's numbers that these runs measure", claims, models=("ours",)),
        Table("runs", "Average and 95th-percentile CCT of every run", runs_table),
        Figure("fig11_normalized", main_figure("11", "Fig. 11a: normal workloads")),
        Table("fig11_normal", "Normalized CCT (scheme / CODA)", main_table("11")),
        Figure("fig11b_cct_cdf_spark", spark_cdf),
        Figure("fig12_normalized", main_figure("12", "Fig. 12: batch and stretched")),
        Table("fig12_challenging", "Normalized CCT (scheme / CODA)", main_table("12")),
        Figure("fig13_ablation", ablation_figure),
        Table(
            "fig13_ablation", "Normalized CCT (variant / CODA) and impact reduction", ablation_table
        ),
        Figure("fig15_sn", sn_figure),
        Table("fig15_sn", "Normalized CCT of SN coflows (scheme / CODA)", sn_table),
        Figure("fig16_no_identification", no_id_figure),
        Table(
            "fig16_no_identification", "Fair / CODA without identification, per bin", no_id_table
        ),
        Figure("observation1", observation_figure),
        Table("observation1", "Average CCT over Aalo on the true coflows", observation_table),
        Figure("error_kinds", coda_error_kinds.error_kinds_figure),
        Table(
            "error_kinds",
            "CODA on each kind of injected error",
            coda_error_kinds.error_kinds_table,
        ),
        Table("bound", "Crowding and the lower bound on CCT", bound_table),
        Table(
            "bins",
            "Normalized CCT (average CCT / CODA's) overall and per bin (SN, LN, SW, LW)",
            bins_table,
        ),
        Table(
            "late_binding_losses",
            "Late binding's largest losses: queues and CCT",
            coda_late_binding.losses_table,
            digits=4,
        ),
        Table(
            "intra_losses",
            "Intra-coflow prioritisation's largest SN losses",
            coda_late_binding.ip_table,
            digits=4,
        ),
    )


EXPERIMENT = Experiment(
    name="coda-scheduler",
    title="CODA's scheduler (§4, §6.4) reproduced by coflowkit",
    paper=PAPER_FILE,
    models=(),
    runs=(),
    workload=None,
    parts=parts,
    default_coflows=DEFAULT_COFLOWS,
    default_decisions=DEFAULT_DECISIONS,
    template="coda_scheduler.md",
    values=values,
    prepare=prepare,
    jobs=jobs,
)
