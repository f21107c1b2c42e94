"""The report of `coflowkit reproduce coda-identify`: one section per figure or
table of CODA, the paper's numbers beside coflowkit's, and the differences (see
:mod:`coda_identify`)."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pandas as pd

from coflowkit import metric_learning
from coflowkit.experiments.coda_identify import (
    AALO,
    BY_KEY,
    CODA,
    DEFAULT_SEED,
    DISTANCE,
    EPS,
    FAIR,
    INTERVAL_S,
    MIN_BYTES,
    NO_LB,
    PAPER_10A,
    PAPER_10BC,
    PAPER_10D_LOSS,
    PAPER_14A,
    SCENARIOS,
    SWEPT,
    TAU,
    TRAINING,
    Config,
    Results,
    compute,
    norm,
)
from coflowkit.experiments.coda_identify_speed import run_speed, table1_summary
from coflowkit.experiments.coda_report import PAPER_MAIN
from coflowkit.experiments.coda_scheduler import TICK_S
from coflowkit.experiments.common import Output, plt, ratio_note
from coflowkit.experiments.writer import machine
from coflowkit.metrics import concurrency

# ---------------------------------------------------------------------------
# The report


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def _paper_rows(R: Results, key: str, paper: tuple) -> list[dict]:
    """Rows of one scenario: the paper's weights, the other paper weights, learned."""
    s = BY_KEY[key]
    other = "hadoop" if s.weights == "spark" else "spark"
    lw = R.trained[s.learned]
    pp, pr = paper
    rows = []
    for name, eps, q in (
        (f"paper {WEIGHT_NAMES[s.weights]}", EPS, R.paper_q[key]),
        (f"paper {WEIGHT_NAMES[other]}", EPS, R.other_q[key]),
        (f"learned ({TRAINING_NAMES[s.learned]})", lw.eps, R.learned_q[key]),
    ):
        rows.append(
            {
                "workload": s.title,
                "coflows": R.sizes[key][0],
                "flows": R.sizes[key][1],
                "weights": name,
                "eps": eps,
                "precision": q.precision,
                "recall": q.recall,
                "accuracy": q.accuracy,
                "paper precision": pp,
                "paper recall": pr,
                "precision ratio": ratio_note(q.precision, pp) if pp else "-",
                "recall ratio": ratio_note(q.recall, pr) if pr else "-",
                "pooled precision": q.pooled.precision,
                "pooled recall": q.pooled.recall,
            }
        )
    return rows


WEIGHT_NAMES = {"spark": "As", "hadoop": "Ah", "equal": "equal"}
TRAINING_NAMES = {"spark": "Spark twin", "hadoop": "Hadoop twin", "mixed": "mixed twin"}


def _quality_bars(ax, groups, series, paper=None) -> None:
    x = np.arange(len(groups))
    width = 0.8 / len(series)
    for j, (name, vals) in enumerate(series.items()):
        ax.bar(x + (j - (len(series) - 1) / 2) * width, vals, width, label=name)
    if paper:
        for j, (name, vals) in enumerate(paper.items()):
            xs = x + (j - (len(series) - 1) / 2) * width
            v = np.asarray([np.nan if y is None else y for y in vals], dtype=float)
            ax.scatter(xs, v, marker="_", s=300, color="black", zorder=3, label=name)
    ax.set_xticks(x, groups)
    ax.set_ylim(0, 1.05)
    ax.legend(fontsize=7, loc="lower left")


def section_10a(o: Output, R: Results) -> None:
    rows = []
    for key in ("spark", "hadoop", "mixed"):
        rows += _paper_rows(R, key, PAPER_10A[key])
    o.add(
        "## Fig. 10a: identification under normal workloads\n\n"
        "Offline identification (`coflowkit.identify`: Rough-DBSCAN with leaders "
        f"within τ = {TAU:g}, DBSCAN over leaders with ε = {EPS:g}, min-points 1) of every "
        f"flow of at least {MIN_BYTES / 1e3:g} KB (CODA §3; every flow of the Facebook "
        "trace is at least 1 MiB, so none is left out). `paper As`/`paper Ah` are CODA's "
        "weights (§3.2) with distances in seconds; the other paper vector is shown too. "
        "`learned`: our metric learning (Xing et al., diagonal; "
        "`coflowkit.metric_learning`) on the training twin (next section), with its ε "
        "chosen there. Paper numbers: §6.3 text.\n"
    )
    o.add(o.table("fig10a", pd.DataFrame(rows), "Fig. 10a: precision and recall"))
    pl = plt()
    fig, ax = pl.subplots(figsize=(7, 3.2))
    keys = ("spark", "hadoop", "mixed")
    series = {
        "precision, paper weights": [R.paper_q[k].precision for k in keys],
        "recall, paper weights": [R.paper_q[k].recall for k in keys],
        "precision, learned": [R.learned_q[k].precision for k in keys],
        "recall, learned": [R.learned_q[k].recall for k in keys],
    }
    paper = {
        "paper (precision, recall)": [PAPER_10A[k][0] for k in keys],
        "": [PAPER_10A[k][1] for k in keys],
    }
    _quality_bars(ax, ["Spark", "Hadoop", "mixed"], series)
    x = np.arange(3)
    w = 0.2
    ax.scatter(
        x - 1.5 * w,
        paper["paper (precision, recall)"],
        marker="_",
        s=300,
        color="k",
        zorder=3,
        label="paper",
    )
    ax.scatter(x - 0.5 * w, paper[""], marker="_", s=300, color="k", zorder=3)
    ax.legend(fontsize=7, loc="lower left")
    ax.set_ylabel("precision / recall")
    ax.set_title("Fig. 10a: normal workloads (paper: black marks)")
    o.add(o.figure("fig10a", fig))


def section_weights(o: Output, R: Results) -> None:
    As, Ah = metric_learning.PAPER_WEIGHTS["spark"], metric_learning.PAPER_WEIGHTS["hadoop"]

    def norm1(v):
        m = max(v)
        return [x / m if m > 0 else 0.0 for x in v]

    cols = {"attribute": list(metric_learning.ATTRIBUTES)}
    cols["paper As"] = As
    cols["paper As / max"] = norm1(As)
    cols["paper Ah"] = Ah
    cols["paper Ah / max"] = norm1(Ah)
    for key in TRAINING:
        lw = R.trained[key]
        cols[f"ours, {key}"] = lw.weights
        cols[f"ours, {key} / max"] = lw.normalized
    eps_rows = []
    for key in TRAINING:
        lw = R.trained[key]
        eps_rows.append(
            {
                "training workload": TRAINING_NAMES[key],
                "transforms": ", ".join(_training_specs(key)),
                "same-coflow pairs": lw.pairs["same"],
                "different-coflow pairs": lw.pairs["different"],
                "eps": lw.eps,
                "time window eps/sqrt(a_t) (s)": lw.window_s,
                "tau": lw.tau,
                "training precision": lw.train_quality.precision,
                "training recall": lw.train_quality.recall,
            }
        )
    sweep = [
        {"training workload": TRAINING_NAMES[k], **row}
        for k in TRAINING
        for row in R.trained[k].sweep
    ]
    pd.DataFrame(sweep).to_csv(f"{o.out}/learned_eps_sweep.csv", index=False)
    o.add(
        "## Learned weights (§3.2)\n\n"
        "Each training workload is the test workload's *twin*: the same trace under the "
        "same transforms with seed + 1 (other start times, ports and packet statistics; "
        "the coflows are the same, their flows' timing is not). Every flow carries "
        "synthetic packet statistics (`table_from_workload(packet_stats=True)`: one "
        "distribution for every flow whatever its coflow, since the trace has none), "
        "so all seven attributes of the paper are offered to the learner. Weights are "
        "scaled so that the mean distance over different-coflow pairs is 1 "
        "(`metric_learning`), so their absolute size is not comparable with the "
        "paper's; compare the normalised columns (weight / largest weight). Pairs: up "
        f"to {R.cfg.max_pairs:,} sampled, half from the same coflow.\n"
    )
    o.add(o.table("learned_weights", pd.DataFrame(cols), "Learned diagonal weights", digits=4))
    terms = {"attribute": list(metric_learning.ATTRIBUTES)}
    for key in TRAINING:
        lw = R.trained[key]
        terms[f"{key}: same-coflow pairs"] = lw.same_mean
        terms[f"{key}: different-coflow pairs"] = lw.diff_mean
    o.add(
        "What each attribute tells apart: the mean of its term over the pairs learned "
        "from (squared difference for S_time in s² and for the standardised packet "
        "statistics; share of pairs that differ for D_com and D_prt). An attribute "
        "earns weight when it is small over same-coflow pairs and large over "
        "different-coflow pairs.\n"
    )
    o.add(o.table("learned_terms", pd.DataFrame(terms), "Mean attribute terms over pairs"))
    o.add(
        "ε for learned weights is in their own units: it is chosen on the training "
        "workload among the time windows "
        f"{', '.join(f'{x:g}' for x in R.cfg.learned_windows_s)} s (ε = window · "
        "sqrt(a_t)), keeping the best accuracy (the smaller ε on a tie; sweep in "
        "`learned_eps_sweep.csv`); τ = ε/10 as with the defaults (0.05/0.5).\n"
    )
    o.add(o.table("learned_eps", pd.DataFrame(eps_rows), "ε chosen on each training workload"))


def _training_specs(key: str) -> tuple[str, ...]:
    if key == "mixed":
        return ("even coflows: Spark twin", "odd coflows: Hadoop twin")
    return BY_KEY[key].transforms(DEFAULT_SEED + 1)


def section_10bc(o: Output, R: Results) -> None:
    rows = []
    for key in ("batch10", "batch50", "batch100", "stretched-spark", "stretched-hadoop"):
        rows += _paper_rows(R, key, PAPER_10BC[key])
    o.add(
        "## Fig. 10b-c: batch and stretched arrivals\n\n"
        "Batch: Hadoop-like starts and ports, then `batch:spread=coda` (the coflows of "
        "each window arrive within 100-300 ms at its end). Stretched: starts over "
        "U(0, 5 s) (+ Exp(1 s) for Hadoop). Learned weights: those of the Spark or "
        "Hadoop twin (the paper also applies one learned metric to every scenario).\n"
    )
    o.add(o.table("fig10bc", pd.DataFrame(rows), "Fig. 10b-c: precision and recall"))
    pl = plt()
    fig, axes = pl.subplots(1, 2, figsize=(9, 3.2), gridspec_kw={"width_ratios": [3, 2]})
    for ax, keys, title in (
        (axes[0], ("batch10", "batch50", "batch100"), "Fig. 10b: batch (Hadoop, Ah)"),
        (axes[1], ("stretched-spark", "stretched-hadoop"), "Fig. 10c: stretched (As, Ah)"),
    ):
        series = {
            "precision": [R.paper_q[k].precision for k in keys],
            "recall": [R.paper_q[k].recall for k in keys],
        }
        paper = {
            "paper precision": [PAPER_10BC[k][0] for k in keys],
            "paper recall": [PAPER_10BC[k][1] for k in keys],
        }
        _quality_bars(ax, [BY_KEY[k].title for k in keys], series, paper)
        ax.set_title(title, fontsize=9)
    o.add(o.figure("fig10bc", fig))


def section_10d(o: Output, R: Results) -> None:
    rows = []
    for key, (nc, nf, items) in R.equal.items():
        learned_acc = items[0][2].accuracy
        for name, eps, q in items:
            loss = 1 - q.accuracy / learned_acc if name != "learned" else None
            rows.append(
                {
                    "workload": BY_KEY[key].title,
                    "coflows": nc,
                    "flows": nf,
                    "weights": name,
                    "eps": eps,
                    "precision": q.precision,
                    "recall": q.recall,
                    "accuracy": q.accuracy,
                    "accuracy loss vs learned": loss,
                    "paper loss": f">{PAPER_10D_LOSS:g}" if loss is not None else None,
                    "loss ratio": ratio_note(loss, PAPER_10D_LOSS) if loss is not None else "-",
                }
            )
    n = R.cfg.equal_coflows
    o.add(
        '## Fig. 10d: learned against equal weights ("without DML")\n\n'
        f"On the first {n} coflows of each workload (equal weights put weight on the "
        "four packet statistics, so the metric is no longer time-only and the "
        "clustering scans every pair of flows within ε in time: on the whole trace that "
        "is minutes per run). Flows carry the synthetic packet statistics, standardised "
        "(unit variance) as `identify.records` does. Equal weights: 1 on each of the "
        "seven attributes, at the paper's default ε and at a larger one; learned: the "
        "twin's weights and ε. Loss = 1 - accuracy / learned accuracy; the paper reports "
        "a loss of over 40% without giving ε.\n"
    )
    o.add(o.table("fig10d", pd.DataFrame(rows), "Fig. 10d: learned vs equal weights"))
    pl = plt()
    fig, ax = pl.subplots(figsize=(7, 3))
    labels_ = [
        f"{r['workload']}\n{r['weights']}" + (f" ε={r['eps']:g}" if r["weights"] == "equal" else "")
        for r in rows
    ]
    x = np.arange(len(rows))
    ax.bar(x - 0.2, [r["precision"] for r in rows], 0.4, label="precision")
    ax.bar(x + 0.2, [r["recall"] for r in rows], 0.4, label="recall")
    ax.set_xticks(x, labels_, fontsize=7)
    ax.set_ylim(0, 1.05)
    ax.legend(fontsize=7)
    ax.set_title("Fig. 10d: learned vs equal weights")
    o.add(o.figure("fig10d", fig))


def section_10e(o: Output, R: Results) -> None:
    rows = []
    for i, eps in enumerate(R.cfg.eps_grid):
        row = {"eps": eps}
        for key in SWEPT:
            q = R.sweep[key][i][1]
            row[f"{BY_KEY[key].title} precision"] = q.precision
            row[f"{BY_KEY[key].title} recall"] = q.recall
        rows.append(row)
    o.add(
        "## Fig. 10e: the radius ε\n\n"
        "Spark-like workloads with As, Hadoop-like with Ah, τ fixed at 0.05 (the paper "
        "sweeps ε on normal workloads; the stretched ones are added to discuss Fig. "
        "10c). With As, two flows of different destination aggregations are at least "
        f"sqrt(0.217) = {math.sqrt(0.217):.3f} apart, so below that ε a Spark coflow "
        "splits by destination.\n"
    )
    o.add(o.table("fig10e", pd.DataFrame(rows), "Fig. 10e: precision and recall against ε"))
    pl = plt()
    fig, axes = pl.subplots(1, 2, figsize=(9, 3), sharey=True)
    for ax, model in zip(axes, ("spark", "hadoop"), strict=True):
        for key, ls in ((model, "-"), (f"stretched-{model}", ":")):
            e = [x for x, _ in R.sweep[key]]
            tag = "stretched " if key != model else ""
            ax.plot(e, [q.precision for _, q in R.sweep[key]], "o" + ls, label=f"{tag}precision")
            ax.plot(e, [q.recall for _, q in R.sweep[key]], "s" + ls, label=f"{tag}recall")
        ax.axvline(EPS, color="grey", lw=0.8, ls="--")
        ax.set_xscale("log")
        ax.set_xlabel("ε")
        w = WEIGHT_NAMES[BY_KEY[model].weights]
        ax.set_title(f"Fig. 10e: {BY_KEY[model].title}-like ({w})", fontsize=9)
        ax.legend(fontsize=6)
    axes[0].set_ylabel("precision / recall")
    o.add(o.figure("fig10e", fig))


def section_table1(o: Output, R: Results) -> None:
    cfg = R.cfg
    o.add("## Table 1: identification speed\n")
    if R.speed is None or len(R.speed) == 0:
        o.add("No coflow of the workload has the benchmark's widths: Table 1 skipped.\n")
        return
    sp = R.speed
    su = table1_summary(sp)
    heavy = sp[sp["scan_ms"].notna()]
    life = R.setup.lifetime_s
    lo_c, hi_c = sp["active_coflows"].min(), sp["active_coflows"].max()
    ncof = f"{lo_c}" if lo_c == hi_c else f"{lo_c}-{hi_c}"
    at_s = ", ".join(f"{x:.1f}" for x in heavy["round_s"])
    at_flows = ", ".join(f"{int(x):,}" for x in heavy["active_flows"])
    agree = int(
        np.all(
            [
                sp[f"{a}_{m}"] == sp[f"dbscan_{m}"]
                for a in ("incremental", "rough")
                for m in ("precision", "recall")
            ],
            axis=0,
        ).sum()
    )
    o.add(
        f"Flows: {R.setup.description} of the trace, in arrival order, the k-th arriving "
        f"at k · {cfg.t1_spacing_s:g} s (the trace's 6.9 s mean gap compressed, like a "
        "batch arrival, to reach the paper's concurrency); flows start as the Hadoop-like "
        "`starts` transform draws them (U(0, 1 s) + Exp(0.1 s) after their coflow, exact "
        f"times); **lifetime model: every flow stays active {life:g} s** "
        f"({cfg.t1_concurrent} x {cfg.t1_spacing_s:g} s - {cfg.t1_guard_s:g} s, so at most "
        f"{cfg.t1_concurrent} coflows overlap). Rounds every {INTERVAL_S * 1e3:g} ms: the "
        "flows started since the last round are inserted (in time order) and those past "
        "their lifetime removed, then the leaders are clustered. Weights Ah, ε = 0.5, "
        "τ = 0.05 (Ah has no port term, so the distance embeds in one dimension per "
        "community key for scikit-learn; the flows here form a single community: one "
        "dimension). Widths: coflows with more flows are left out because one 20,000-flow "
        "coflow alone gives scikit-learn ~10^8 neighbour pairs to hold.\n\n"
        f"Timed: {len(sp)} rounds spread evenly over the steady state (every round with "
        f"{min(cfg.t1_concurrent, R.setup.coflows)} coflows active): "
        f"{sp['active_flows'].min():,}-{sp['active_flows'].max():,} active flows "
        f"(mean {sp['active_flows'].mean():,.0f}), {ncof} "
        f"active coflows, {sp['leaders'].mean():,.0f} leaders, "
        f"{sp['new_flows'].mean():.0f} flows arriving and {sp['left_flows'].mean():.0f} "
        "leaving per round on average. Every algorithm clusters the same active flows in "
        "the same process, one after the other (`time.perf_counter`, garbage collector "
        "off). From-scratch times include passing 10^5-entry Python lists to Rust and the "
        "labels back; the incremental time is `insert` + `remove` + `cluster` (it returns "
        "the number of flows that changed label, what a scheduler needs); reading every "
        f"active flow's label out of it as a list takes {sp['readout_ms'].mean():.2f} ms "
        "more on average. The two slow exact DBSCANs run on "
        f"{len(heavy)} of the timed rounds only ({at_s} s; {at_flows} active flows); their "
        "`CODA speedup` is against the incremental times of those same rounds. *Pair scan*: "
        "coflowkit's exact DBSCAN made to take its general path (a zero attribute column "
        "with a positive weight: same distances, but no longer time-only), which checks "
        "every pair of flows within ε in time like a textbook DBSCAN with a sorted index; "
        "*scikit-learn*: `sklearn.cluster.DBSCAN(eps=0.5, min_samples=1)` on "
        "sqrt(a_t) · start time (KD-tree), "
        f"skipped on a round with more than {cfg.t1_sklearn_max_pairs:.2g} neighbour pairs "
        f"(memory: the process peaked at {R.peak_rss_gb:.1f} GB resident by the end of "
        "this benchmark). Accuracy: mean over the rounds of (precision + recall) / 2 of the "
        "active flows' labels against their coflows (the slow DBSCAN rows give the "
        "exact DBSCAN's, see the check below).\n"
    )
    o.add(o.table("table1", su, "Table 1: time per identification round and accuracy"))
    same_sk = heavy["sklearn_same"].tolist() if "sklearn_same" in heavy else []
    same_scan = heavy["scan_same"].tolist() if "scan_same" in heavy else []
    o.add(
        "Checks: on the heavy rounds, the pair-scan DBSCAN gave the same clusters as "
        f"the sorted-chain one in {same_scan.count('yes')} of {len(same_scan)} rounds and "
        f"scikit-learn's in {same_sk.count('yes')} of {sum(1 for x in same_sk if x)} rounds "
        "it ran; incremental R-DBSCAN, R-DBSCAN from scratch and DBSCAN gave the same "
        "precision and recall in "
        f"{agree} of {len(sp)} rounds. Every timed round is in `table1_rounds.csv`.\n"
    )
    sp.to_csv(f"{o.out}/table1_rounds.csv", index=False)
    o.add(o.figure("table1_rounds", _table1_figure(sp, heavy)))


def _table1_figure(sp: pd.DataFrame, heavy: pd.DataFrame):
    """Time per round of each algorithm over the run, with the active flows."""
    pl = plt()
    fig, ax = pl.subplots(figsize=(8, 3.4))
    for col, name in (
        ("dbscan_ms", "DBSCAN (chains)"),
        ("rough_ms", "R-DBSCAN from scratch"),
        ("incremental_ms", "incremental R-DBSCAN"),
    ):
        ax.plot(sp["round_s"], sp[col], ".", ms=3, label=name)
    ax.plot(heavy["round_s"], heavy["scan_ms"], "kx", label="DBSCAN pair scan")
    if heavy["sklearn_ms"].notna().any():
        ax.plot(heavy["round_s"], heavy["sklearn_ms"], "r^", label="scikit-learn DBSCAN")
    ax.set_yscale("log")
    ax.set_xlabel("round (s)")
    ax.set_ylabel("time per round (ms)")
    ax2 = ax.twinx()
    ax2.plot(sp["round_s"], sp["active_flows"], color="grey", lw=0.8, label="active flows")
    ax2.set_ylabel("active flows", color="grey")
    ax.legend(fontsize=7, loc="center left")
    ax.set_title("Table 1: time per round")
    return fig


def section_14a(o: Output, R: Results) -> None:
    base = R.late[0]
    rows = []
    for r in R.late:
        dp, dr = r["precision"] - base["precision"], r["recall"] - base["recall"]
        rows.append(
            {
                "d": r["d"],
                "d / eps": r["d"] / EPS,
                "precision": r["precision"],
                "recall": r["recall"],
                "precision change (points)": 100 * dp,
                "recall change (points)": 100 * dr,
                "flows in 2+ extended coflows": r["multi"],
                "paper change (points)": "-4 / +10" if r["d"] == DISTANCE else None,
            }
        )
    o.add(
        "## Fig. 14a: late binding, offline\n\n"
        "Stretched Hadoop workload (whole trace), Ah, ε = 0.5: the flows are clustered, "
        "then every identified coflow C is extended to C* = C ∪ {f : d(f, C) ≤ d} "
        "(`RoughIdentifier.near`, the exact smallest distance to a flow of C). A flow may "
        "then be in several extended coflows; precision and recall are those of "
        "`labels.quality` computed over the extended coflows, a flow counting once in "
        "each extended coflow that holds it: precision = per extended coflow, the largest "
        "share of its flows from one true coflow, averaged over extended coflows; recall "
        "= per true coflow, the largest share of its flows inside one extended coflow, "
        "averaged over true coflows (d = 0 gives exactly `labels.quality`). Since the "
        "clusters are DBSCAN components with min-points 1, no flow of another cluster is "
        "within ε: d ≤ ε extends nothing. The paper's d = 150 with ε = 100 is d = "
        f"{DISTANCE:g} here.\n"
    )
    o.add(o.table("fig14a", pd.DataFrame(rows), "Fig. 14a: before and after extension by d"))
    pl = plt()
    fig, ax = pl.subplots(figsize=(6, 3))
    d = [r["d"] for r in R.late]
    ax.plot(d, [r["precision"] for r in R.late], "o-", label="precision")
    ax.plot(d, [r["recall"] for r in R.late], "s-", label="recall")
    ax.axvline(DISTANCE, color="grey", ls="--", lw=0.8)
    ax.set_xlabel("diameter d (0: identified coflows)")
    ax.set_title("Fig. 14a: stretched Hadoop, extended coflows")
    ax.legend(fontsize=7)
    o.add(o.figure("fig14a", fig))


def _late_key(d):
    return CODA if d == DISTANCE else d


def section_14b(o: Output, R: Results) -> None:
    rows = []
    curves = {}
    for key in R.cfg.late_scenarios:
        if (key, None) not in R.res:
            continue
        base = R.res[(key, None)]["cct_s"].mean()
        pts = []
        off = R.res[(key, None)]["cct_s"].to_numpy()
        for d in (None, DISTANCE, *R.cfg.d_sim):
            c = R.res[(key, _late_key(d))]
            v = float(c["cct_s"].mean() / base)
            diff = np.abs(c["cct_s"].to_numpy() - off)
            rows.append(
                {
                    "workload": BY_KEY[key].title,
                    "d": "off" if d is None else d,
                    "mean CCT (s)": float(c["cct_s"].mean()),
                    "normalized CCT (vs late binding off)": v,
                    "coflows whose CCT changed": int((diff > 1e-9).sum()),
                    "largest change (s)": float(diff.max()),
                }
            )
            pts.append((0.0 if d is None else d, v))
        curves[key] = sorted(pts)
    if not rows:
        return
    o.add(
        "## Fig. 14b: CCT against the late-binding diameter d\n\n"
        "`coda` with `labels=identify` (the online identifier, As or Ah, ε = 0.5, "
        "τ = 0.05, Δ = 100 ms) and late binding at diameter d, normalised by the same "
        "run without late binding (d = 0 in the figure). The paper shows the curve only "
        "(stretched Hadoop improves, then worsens as d grows; Spark degrades slowly); its "
        "text gives no values.\n"
    )
    o.add(o.table("fig14b", pd.DataFrame(rows), "Fig. 14b: normalized CCT against d", 5))
    pl = plt()
    fig, ax = pl.subplots(figsize=(6, 3))
    for key, pts in curves.items():
        ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", label=BY_KEY[key].title)
    ax.axhline(1.0, color="grey", lw=0.8)
    ax.set_xlabel("diameter d (0: late binding off)")
    ax.set_ylabel("CCT / CCT without late binding")
    ax.set_title("Fig. 14b")
    ax.legend(fontsize=7)
    o.add(o.figure("fig14b", fig))


def section_e2e(o: Output, R: Results) -> None:
    rows = []
    for key in R.cfg.sim_scenarios:
        if (key, CODA) not in R.res:
            continue
        nc, nf, q = R.sim_q[key]
        (alo, ahi), (flo, fhi) = PAPER_MAIN[key]
        a = norm(R.res, (key, AALO), (key, CODA))
        f = norm(R.res, (key, FAIR), (key, CODA))
        pa = alo if alo == ahi else None
        pf = flo if flo == fhi else None
        b = R.bounds[key].reindex(R.res[(key, CODA)]["coflow_id"].to_numpy()).to_numpy()
        rows.append(
            {
                "workload": BY_KEY[key].title,
                "coflows": nc,
                "flows": nf,
                "offline precision": q.precision,
                "offline recall": q.recall,
                "coflows in the network (Fair)": concurrency(R.res[(key, FAIR)]),
                "CODA / bound": float(R.res[(key, CODA)]["cct_s"].mean() / b.mean()),
                "Fair / bound": float(R.res[(key, FAIR)]["cct_s"].mean() / b.mean()),
                "CODA mean CCT (s)": float(R.res[(key, CODA)]["cct_s"].mean()),
                "Aalo / CODA": a,
                "paper Aalo / CODA": pa,
                "Aalo ratio": ratio_note(a, pa) if pa else "-",
                "Fair / CODA": f,
                "paper Fair / CODA": pf,
                "Fair ratio": ratio_note(f, pf) if pf else "-",
            }
        )
    if not rows:
        return
    n = rows[0]["coflows"]
    sim_s = sum(t for name, t in R.phases if "simulations" in name)
    o.add(
        "## Figs. 11-12: CODA on its own identification\n\n"
        f"The first {n} coflows of each workload, simulated exactly (event-driven, 150-port "
        "big switch, 1 Gbps links). CODA = `coda` with `labels=identify` (As for Spark, Ah "
        f"otherwise; ε = {EPS:g}, τ = {TAU:g}, Δ = {INTERVAL_S * 1e3:g} ms, late binding "
        f"d = {DISTANCE:g}, intra-coflow prioritisation on); Aalo on the true coflows; "
        "per-flow fair sharing. Normalized CCT = average CCT / CODA's (> 1: CODA faster). "
        f"{n} coflows, as in the coda-scheduler experiment, keep the whole command within "
        f"about ten minutes (the simulations took {sim_s:.0f} s here). Online, flows are "
        "identified from their first round whatever they have sent (`min_bytes=0`, the "
        "policy's default; offline's 100 KB leaves no flow of this trace out either). "
        "The `offline` columns are the identifier's quality on these coflows offline "
        "(the online identifier sees each flow when it starts and labels it at the next "
        "round). Paper values: §6.4 text (Aalo '1.1x', '1.3x-1.8x' better is read as "
        "Aalo / CODA = 1/1.1, 1/1.3, 1/1.8). `coflows in the network`: "
        "total CCT under fair / time from the first arrival to the last (Little's law); "
        "`bound`: per coflow, the larger of its isolated CCT and its last flow's start "
        "offset, a CCT no schedule can beat (`metrics.lower_bounds`, as in the "
        "coda-scheduler experiment).\n"
    )
    o.add(o.table("fig11_12", pd.DataFrame(rows), "Figs. 11-12: normalized CCT"))
    o.add(o.figure("fig11_12", _e2e_figure(rows)))


def _e2e_figure(rows: list[dict]):
    """Aalo / CODA and Fair / CODA per workload, the paper's values marked."""
    pl = plt()
    fig, ax = pl.subplots(figsize=(8, 3.2))
    x = np.arange(len(rows))
    ax.bar(x - 0.2, [r["Aalo / CODA"] for r in rows], 0.4, label="Aalo / CODA")
    ax.bar(x + 0.2, [r["Fair / CODA"] for r in rows], 0.4, label="Fair / CODA")
    ax.scatter(
        x - 0.2,
        [np.nan if r["paper Aalo / CODA"] is None else r["paper Aalo / CODA"] for r in rows],
        marker="_",
        s=300,
        color="k",
        zorder=3,
        label="paper",
    )
    ax.scatter(
        x + 0.2,
        [np.nan if r["paper Fair / CODA"] is None else r["paper Fair / CODA"] for r in rows],
        marker="_",
        s=300,
        color="k",
        zorder=3,
    )
    ax.axhline(1.0, color="grey", lw=0.8)
    ax.set_xticks(x, [r["workload"].replace(" ", "\n", 1) for r in rows], fontsize=8)
    ax.set_ylabel("normalized CCT")
    ax.set_title("Figs. 11-12 with CODA's own identification")
    ax.legend(fontsize=7)
    return fig


def section_runs(o: Output, R: Results) -> None:
    rows = []
    for k, job in R.jobs:
        c = R.res[k]
        name = k[1] if isinstance(k[1], str) else (NO_LB if k[1] is None else f"CODA, d={k[1]:g}")
        rows.append(
            {
                "workload": BY_KEY[k[0]].title,
                "run": name,
                "policy": job.policy,
                "params": ",".join(f"{a}={b}" for a, b in job.params) or "-",
                "coflows": len(c),
                "mean CCT (s)": float(c["cct_s"].mean()),
                "p95 CCT (s)": float(np.percentile(c["cct_s"], 95)),
            }
        )
    if rows:
        o.add("## Every simulation\n")
        o.add(o.table("runs", pd.DataFrame(rows), "Every run"))


def section_differences(o: Output, R: Results) -> None:
    o.add("## Differences from the paper\n\n" + differences(R))


def section_times(o: Output, R: Results, command: str) -> None:
    rows = [{"step": name, "wall time (s)": t} for name, t in R.phases]
    rows.append({"step": "total", "wall time (s)": sum(t for _, t in R.phases)})
    o.add(
        "## Commands and wall times\n\n"
        f"`{command}` on {machine()} (the machine is measured, and may have been "
        "running other jobs: compare the steps' ratios, not their absolute times).\n"
    )
    o.add(o.table("wall_times", pd.DataFrame(rows), "Wall time of each step", digits=3))


def write(o: Output, R: Results, out, trace, coflows, seed, transforms) -> str:
    section_10a(o, R)
    section_weights(o, R)
    section_10bc(o, R)
    section_10d(o, R)
    section_10e(o, R)
    section_table1(o, R)
    section_14a(o, R)
    section_14b(o, R)
    section_e2e(o, R)
    section_runs(o, R)
    section_differences(o, R)
    flag = "" if coflows is None else f" --coflows {coflows}"
    flag += "".join(f" --transform {t}" for t in transforms)
    command = f"coflowkit reproduce coda-identify --out {out}{flag}"
    section_times(o, R, command)
    scope = "the whole trace" if coflows is None else f"its first {coflows} coflows"
    specs = sorted({t for s in SCENARIOS if s.model != "mixed" for t in s.transforms(seed)})
    pre = (
        f"Workload: `{trace}` (the Facebook trace: {R.sizes['spark'][0]} coflows, "
        f"{R.sizes['spark'][1]:,} flows analysed offline: {scope}). The trace has no "
        "flow start times, ports or packet statistics; as in CODA §6.1 each scenario adds "
        "them with coflowkit's transforms (docs/transforms.md): "
        f"{', '.join(f'`{t}`' for t in specs)}; mixed = even coflows (in arrival order) "
        "Spark-like, odd ones Hadoop-like. Flow starts are rounded up to "
        f"{TICK_S * 1e3:g} ms ticks (`tick_s`), as in the coda-scheduler experiment, so "
        "the offline tables and the simulations see the same flows. Seeds: test "
        f"workloads {seed}, training twins {seed + 1}, pair sampling {seed}.\n\n"
        "Identification is coflowkit's (`coflowkit.identify`, the Rust crate "
        "`coflowkit-ident`): attributes S_time (first-seen time, s), packet statistics, "
        "D_com (host communities by spectral bisection) and D_prt (destination host and "
        "port); distance sqrt(sum of weight · term); incremental Rough-DBSCAN with "
        f"ε = {EPS:g}, τ = {TAU:g}. Quality is CODA's (§6.1; `coflowkit.labels.quality`): "
        "precision averaged over identified coflows, recall over true coflows, accuracy = "
        "their mean. Ratio columns are coflowkit / paper; **>25%** marks a difference "
        "explained in the last section.\n\n"
        f"Command: `{command}` ({o.timing()})."
    )
    return o.write(pre)


def _off(ours: float, paper: float) -> bool:
    return paper is not None and abs(ours / paper - 1) > common_tolerance()


def common_tolerance() -> float:
    from coflowkit.experiments.common import TOLERANCE

    return TOLERANCE


def _closest_eps(sweep, metric: str, target: float) -> tuple[float, float]:
    e, q = min(sweep, key=lambda p: abs(getattr(p[1], metric) - target))
    return e, getattr(q, metric)


def _f3(x: float) -> str:
    return f"{x:.3f}"


def _diff_batch(R: Results, out: list[str]) -> None:
    """Fig. 10b: batch precision."""
    f = _f3
    batch = [k for k in ("batch10", "batch100") if PAPER_10BC[k][0]]
    if any(_off(R.paper_q[k].precision, PAPER_10BC[k][0]) for k in batch):
        parts = []
        for k in ("batch10", "batch50", "batch100"):
            nb, share = R.batch_share[k]
            q = R.paper_q[k]
            parts.append(
                f"{BY_KEY[k].title}: precision {f(q.precision)} per coflow, "
                f"{f(q.pooled.precision)} pooled over flows, recall {f(q.recall)}; "
                f"{nb} batches whose largest coflow holds on average {f(share)} of "
                "the batch's flows"
            )
        out.append(
            "* **Batch arrivals (Fig. 10b): precision "
            + " and ".join(f(R.paper_q[k].precision) for k in batch)
            + " at "
            + " and ".join(BY_KEY[k].title for k in batch)
            + ", paper 0.85 and 0.56.** Recall is about 1: the coflows of a batch arrive "
            "within 100-300 ms and spread their flows over about a second (Hadoop), so "
            "the identifier joins each batch into one cluster, and a joined batch's "
            "precision is the share of its largest coflow. The trace is heavy-tailed, so "
            "that share is large and averaging precision over identified coflows (as "
            "`labels.quality` does) keeps it high; pooled over flows it is much lower. "
            + "; ".join(parts)
            + ". The pooled reading lands within a few points of the paper at both "
            "intervals; the paper's definition (§6.1) does not say how it averages, so "
            "that it pooled is likely but not established.\n"
        )


def _diff_stretched(R: Results, out: list[str]) -> None:
    """Fig. 10c: stretched recall."""
    f = _f3
    st = [k for k in ("stretched-spark", "stretched-hadoop")]
    if any(_off(R.paper_q[k].recall, 0.60) for k in st) or any(
        _off(R.learned_q[k].recall, 0.60) for k in st
    ):
        parts = []
        for k in st:
            q = R.paper_q[k]
            e, r = _closest_eps(R.sweep[k], "recall", 0.60) if k in R.sweep else (None, None)
            parts.append(
                f"{BY_KEY[k].title} ({WEIGHT_NAMES[BY_KEY[k].weights]}): recall "
                f"{f(q.recall)} per coflow, {f(q.pooled.recall)} pooled over flows"
                + (
                    f"; closest to 0.60 in the ε sweep: {f(r)} at ε = {e:g}"
                    if e is not None
                    else ""
                )
            )
        lw = R.trained["hadoop"]
        out.append(
            "* **Stretched arrivals (Fig. 10c): recall above the paper's ~0.60.** "
            + "; ".join(parts)
            + ". (1) The time scale of ε: the paper normalised S_time (footnote 7) "
            "without saying how, so its ε = 100 is not a number of seconds; ours reads "
            "ε = 0.5 with S_time in seconds (a 0.27 s window with Ah, 0.26 s with As), and "
            "recall under stretched starts depends on that window (Fig. 10e table). "
            "(2) Pooled over flows recall is near 1: the large coflows have flows close "
            "enough in time to chain; it is coflows of a few flows spread over seconds "
            "that split, and averaged per coflow they count as much as a large one. So "
            "the number depends on ε and on how narrow the coflows are, and the paper's "
            "ε in seconds is unknown. The learned weights' rows are higher still: the "
            f"Hadoop twin chose a {lw.window_s:g} s window, which joins more of a "
            "stretched coflow. Unlike the paper, stretched Hadoop gets the higher recall "
            "here: As's port term keeps flows of a Spark coflow to different "
            "destinations apart unless they start within "
            f"{math.sqrt((EPS**2 - 0.217) / 3.825):.3f} s of each other.\n"
        )


def _diff_weights(R: Results, out: list[str]) -> None:
    """The learned weights."""
    lw = R.trained["spark"]
    k, big, hosts = R.communities
    com_txt = (
        f"puts all {hosts} hosts that carry traffic in a single community"
        if k == 1
        else f"puts {big} of the {hosts} hosts that carry traffic in one of {k} communities"
    )
    if lw.normalized[5] < 0.5:
        zero = [a for a, x in zip(metric_learning.ATTRIBUTES, lw.normalized, strict=True) if x == 0]
        out.append(
            "* **Learned weights: S_time only; the paper's As and Ah weigh D_com about "
            "as much as S_time (Ah) or more (As).** Ours: "
            + ", ".join(
                f"{TRAINING_NAMES[k]} " + " ".join(f"{x:.2g}" for x in R.trained[k].normalized)
                for k in TRAINING
            )
            + f" (normalised; zero: {', '.join(zero) or 'none'}). Measured on the "
            "Spark twin's pairs (`learned_terms`): S_time differs by "
            f"{lw.same_mean[0]:.3g} s² on average within a coflow against "
            f"{lw.diff_mean[0]:.3g} s² across coflows; D_com differs for "
            f"{lw.same_mean[5]:.3f} of same-coflow and {lw.diff_mean[5]:.3f} of "
            f"different-coflow pairs; D_prt for {lw.same_mean[6]:.3f} and "
            f"{lw.diff_mean[6]:.3f}; the packet statistics alike in both (they are drawn "
            "from one distribution for every flow, uninformative by construction; the "
            "paper found its real ones useless too). D_com: the paper learned on a "
            "testbed split by construction into two communities of 10 servers, and notes "
            "(§6.3) that the Facebook trace has a unified community; here spectral "
            f"bisection {com_txt}. D_prt: a coflow's flows go to several "
            "destination hosts, so two of them usually differ in destination (and port) "
            "nearly as often as two flows of different coflows; the paper's Spark weight "
            "was small too (0.217, 4% of As's largest).\n"
        )


def _diff_equal(R: Results, out: list[str]) -> None:
    """Fig. 10d: equal weights."""
    for key, (_, _, items) in R.equal.items():
        la = items[0][2].accuracy
        losses = [(e, 1 - q.accuracy / la) for n, e, q in items if n == "equal"]
        small = [(e, x) for e, x in losses if x < PAPER_10D_LOSS * (1 - common_tolerance())]
        if small:
            out.append(
                f"* **Equal weights ({BY_KEY[key].title}, Fig. 10d): accuracy loss "
                + ", ".join(f"{x:.3f} at ε = {e:g}" for e, x in losses)
                + f", paper over {PAPER_10D_LOSS:g}.** At the default ε the loss is "
                "close to the paper's: the four standardised packet statistics put two "
                "flows about sqrt(8) apart on average, far beyond ε, so almost every flow "
                "stays alone (precision 1, recall low). A larger ε absorbs that noise "
                "while flows of different coflows stay seconds apart in S_time, so equal "
                "weights then do nearly as well as learned ones. The paper does not give "
                "the ε of its 'without DML' run, nor how it scaled its packet "
                "statistics, so which setting it matches is not established.\n"
            )
            break


def _diff_speed(R: Results, out: list[str]) -> None:
    """Table 1: speed and accuracy."""
    f = _f3
    if R.speed is not None and len(R.speed):
        su = table1_summary(R.speed).set_index("algorithm")
        inc = su.loc["CODA: incremental R-DBSCAN"]
        db = su.loc["DBSCAN, coflowkit (exact, sorted chains)"]
        ro = su.loc["R-DBSCAN from scratch"]
        scan = su["mean ms"].get("DBSCAN, pair scan (exact, no 1-D shortcut)", float("nan"))
        sk = su["mean ms"].get("DBSCAN, scikit-learn 1-D embedding (exact)", float("nan"))
        sp = R.speed
        scan_up = su["CODA speedup"].get("DBSCAN, pair scan (exact, no 1-D shortcut)", math.nan)
        out.append(
            f"* **Table 1 times: incremental R-DBSCAN {inc['mean ms']:.3g} ms per round "
            f"(paper 5.23), R-DBSCAN from scratch {ro['mean ms']:.3g} ms (paper 27.50), "
            f"exact DBSCAN {db['mean ms']:.3g} ms with sorted chains, {scan:.4g} ms as a "
            f"pair scan, {sk:.4g} ms in scikit-learn (paper 3217.27).** The paper does "
            "not say how its flows arrive and leave or what its code runs on, so only the "
            "orders of magnitude compare. What this run shows: (1) a textbook exact "
            "DBSCAN, which examines every pair of flows within ε, costs seconds on "
            "10^5 flows here too (pair scan and scikit-learn, within a factor 3 of the "
            "paper); (2) with min-points 1 and time as the only numeric attribute, exact "
            "DBSCAN is a union of sorted chains (`coflowkit-ident`), a sort instead of "
            "a pair scan, which is why coflowkit's exact DBSCAN is hundreds of times "
            "faster than the paper's and than the pair scan, and why R-DBSCAN from "
            "scratch is not faster than it (its leader step is extra work, and both "
            "pass 10^5-entry lists between Python and Rust: "
            f"reading the labels alone takes {sp['readout_ms'].mean():.2f} ms); "
            f"(3) incremental R-DBSCAN does per round only the {sp['new_flows'].mean():.0f} "
            f"arrivals and {sp['left_flows'].mean():.0f} departures plus a clustering of "
            f"{sp['leaders'].mean():,.0f} leaders (τ = 0.05 gathers about "
            f"{sp['active_flows'].mean() / sp['leaders'].mean():.0f} flows per leader), "
            "which in compiled code takes a fraction of a millisecond. Speedups of "
            f"incremental R-DBSCAN: {scan_up:,.0f}x "
            f"over the pair scan and {ro['CODA speedup']:.0f}x over R-DBSCAN from scratch "
            "(paper about 600x and 5x).\n"
        )
        same = (sp["rough_precision"] == sp["dbscan_precision"]).all()
        if same:
            out.append(
                "* **Table 1 accuracy: the three algorithms agree exactly here "
                f"({f(inc['accuracy'])}); the paper loses 1.7 points with R-DBSCAN "
                "(98.21% to 96.47%).** Rough-DBSCAN can split a cluster only where two "
                "flows within ε have leaders more than ε apart with no chain of leaders "
                "between them; with thousands of flows per coflow arriving within about "
                "a second, leaders lie a few hundredths of a second apart and always "
                "chain. The accuracy itself (within 1% of the paper's DBSCAN) is "
                "that of 30 Hadoop-like coflows two seconds apart.\n"
            )


def _diff_late_offline(R: Results, out: list[str]) -> None:
    """Fig. 14a: late binding offline."""
    rows = {r["d"]: r for r in R.late}
    if DISTANCE in rows:
        base, at = rows[0.0], rows[DISTANCE]
        dr, dp = at["recall"] - base["recall"], at["precision"] - base["precision"]
        ten = [r for r in R.late if r["recall"] - base["recall"] >= PAPER_14A[0]]
        more = ""
        if ten:
            r = ten[0]
            more = (
                f" Recall gains the paper's 10 points at d = {r['d']:g} "
                f"({r['d'] / EPS:g} ε), where precision loses "
                f"{100 * (base['precision'] - r['precision']):.1f} points."
            )
        out.append(
            f"* **Late binding offline (Fig. 14a): at d = {DISTANCE:g} (the paper's "
            f"1.5 ε) recall {100 * dr:+.1f} points and precision {100 * dp:+.1f} "
            "points; paper +10 and -4.** Extending a cluster by d only reaches the "
            "flows whose distance to it lies between ε (nothing closer is in another "
            "cluster) and d; with Ah that is a gap in start times between "
            f"{EPS / math.sqrt(3.472):.2f} and {DISTANCE / math.sqrt(3.472):.2f} s, and "
            "few split-off pieces of a stretched coflow start that close to it: "
            f"{100 * at['multi']:.2f}% of the flows join another cluster's extension "
            f"at d = {DISTANCE:g}." + more + " That the paper's distances give more "
            "recall for less precision at d = 1.5 ε is consistent with its ε being a "
            "shorter time window than ours (previous points), which would leave more "
            "split-off flows just outside ε; not established.\n"
        )


def _diff_late_sim(R: Results, out: list[str]) -> None:
    """Fig. 14b: late binding in simulation."""
    flat = []
    for key in R.cfg.late_scenarios:
        if (key, None) in R.res:
            base = R.res[(key, None)]["cct_s"].mean()
            vals = [
                R.res[(key, _late_key(d))]["cct_s"].mean() / base for d in (DISTANCE, *R.cfg.d_sim)
            ]
            flat.append((key, min(vals), max(vals)))
    if flat:
        span = "; ".join(
            f"{BY_KEY[k].title} {100 * (lo - 1):+.3f}% to {100 * (hi - 1):+.3f}%"
            for k, lo, hi in flat
        )
        far = {r["d"]: r["multi"] for r in R.late}
        near_txt = ", ".join(
            f"{100 * far[d]:.2f}% at d = {d:g}" for d in (DISTANCE, max(far)) if d in far
        )
        out.append(
            "* **Late binding in simulation (Fig. 14b): CCT hardly moves with d (change "
            f"against no late binding: {span}); the paper's stretched Hadoop curve first "
            "improves.** (1) There is nothing to win on these replays: CODA's average "
            "CCT is within a few percent of the bound no schedule can beat (`CODA / "
            "bound` in the next table), because the first coflows of the trace rarely "
            "compete for links and stretched coflows wait for their own late flows. "
            "(2) Few flows are within d of another cluster at all: offline (Fig. 14a) "
            f"{near_txt}. (Online a flow is matched against the clusters that exist "
            "when it is labelled and is bound once served, which can only make that "
            "smaller; not measured.)\n"
        )


def _diff_e2e(R: Results, out: list[str]) -> None:
    """Figs. 11-12: CODA on its own identification."""
    rows = []
    for key in R.cfg.sim_scenarios:
        if (key, CODA) in R.res:
            (alo, ahi), (flo, fhi) = PAPER_MAIN[key]
            a = norm(R.res, (key, AALO), (key, CODA))
            fr = norm(R.res, (key, FAIR), (key, CODA))
            b = R.bounds[key].reindex(R.res[(key, CODA)]["coflow_id"].to_numpy()).to_numpy()
            rows.append(
                (
                    key,
                    a,
                    alo,
                    fr,
                    flo,
                    concurrency(R.res[(key, FAIR)]),
                    R.res[(key, FAIR)]["cct_s"].mean() / b.mean(),
                    R.res[(key, CODA)]["cct_s"].mean() / b.mean(),
                )
            )
    if rows and any(_off(r[3], r[4]) for r in rows):
        out.append(
            "* **Fair / CODA "
            + ", ".join(f"{r[3]:.2f}" for r in rows)
            + " (paper "
            + ", ".join(f"{r[4]:g}" for r in rows)
            + ").** The replays are uncrowded: under fair "
            + f"{min(r[5] for r in rows):.2f}-{max(r[5] for r in rows):.2f} coflows are in "
            "the network on average and fair itself is only "
            f"{min(r[6] for r in rows):.2f}-{max(r[6] for r in rows):.2f} times the lower "
            f"bound, so no scheduler can be {min(r[4] for r in rows):g}-"
            f"{max(r[4] for r in rows):g}x faster than fair here. The coda-scheduler "
            "experiment (`coflowkit reproduce coda-scheduler`, docs/results/coda-scheduler) "
            "measures the same for these first coflows, and runs fair and Aalo on the "
            "whole trace with Spark starts, where the network is more crowded and fair "
            "further from the bound (its table 'How much any scheduler could gain'). "
            "Simulating the whole trace with the online identifier does not fit this "
            "command's budget.\n"
        )
    if rows and any(_off(r[1], r[2]) for r in rows):
        bad = [r for r in rows if _off(r[1], r[2])]
        out.append(
            "* **Aalo / CODA "
            + ", ".join(f"{r[1]:.3f} ({BY_KEY[r[0]].title}, paper {r[2]:.3f})" for r in bad)
            + ": CODA on its own identification is closer to Aalo than the paper's.** "
            "Where CODA is within a few percent of the bound (`CODA / bound` "
            + ", ".join(f"{r[7]:.2f}" for r in bad)
            + ") identification errors cannot cost much: a coflow that waits for its "
            "own late flows finishes at about the same time whichever order the "
            "scheduler picks. Where the network is contended (batch 100 s) CODA does "
            "fall behind Aalo, as in the paper.\n"
        )


def differences(R: Results) -> str:
    """The causes of every difference over 25% (and of the paper's qualitative
    claims this run does not reproduce), with this run's numbers."""
    out = [
        "The paper's numbers come from its own simulator and identifier, neither "
        "published; coflowkit's are exact for the setting stated above. A cause is "
        "stated as established only where a number of this report shows it.\n"
    ]
    for step in (
        _diff_batch,
        _diff_stretched,
        _diff_weights,
        _diff_equal,
        _diff_speed,
        _diff_late_offline,
        _diff_late_sim,
        _diff_e2e,
    ):
        step(R, out)
    return "\n".join(out)


# ---------------------------------------------------------------------------
# The experiment (`coflowkit reproduce coda-identify`)


def run(
    out: str,
    trace: str,
    coflows: int | None = None,
    workers: int = 2,
    cache_dir: str | None = None,
    seed: int = DEFAULT_SEED,
    transforms: tuple[str, ...] = (),
    config: Config | None = None,
    **overrides,
) -> str:
    """``coflows``: None analyses the whole trace offline and simulates its first
    ``config.sim_coflows`` coflows; a number N uses the first N coflows for both.
    ``seed``: seed of the test workloads' transforms (training workloads: seed + 1).
    ``config``: the sweeps and sizes (default :class:`Config`; tests: :data:`SMALL`);
    ``overrides``: fields of :class:`Config` to change (e.g. ``sim_coflows=50``)."""
    cfg = replace(config or Config(), **overrides)
    o = Output(out, "CODA's coflow identifier (§3, §6.3, §6.4) reproduced by coflowkit")
    R = compute(
        trace, coflows, workers, cache_dir, seed, tuple(transforms), cfg, o.stats, run_speed
    )
    return write(o, R, out, trace, coflows, seed, tuple(transforms))
