"""`coflowkit reproduce coda-scheduler` on a few coflows of the Facebook trace: its
tables against direct simulations, its normalization by hand, and the error-rate
search against the labels' measured quality."""

import coflowkit as ck
import numpy as np
import pandas as pd
import pytest
from coflowkit import cli, labels, metrics, runner
from coflowkit.experiments import EXPERIMENTS, coda_report, writer
from coflowkit.experiments import coda_scheduler as cs
from coflowkit.experiments.common import fmt

#: The default decision model: CODA's simulator decides every second (§6.1).
MODEL = {"realloc": "interval", "decision_s": "1"}


def _workload(trace, key, n=None):
    return runner.WorkloadSpec(trace=trace, transforms=cs.BY_KEY[key].transforms, first=n).load()


@pytest.mark.parametrize("key", ["hadoop", "batch10", "batch50"])
def test_error_rate_search_meets_its_target(small_trace, key):
    s = cs.BY_KEY[key]
    w = _workload(small_trace, key)
    r = cs.find_error_rate(w, s.target, s.metric)
    # The quality reported is the quality of the labels coda will use at that rate.
    q = labels.source_quality(w, "random", r.error_rate, cs.LABEL_SEED)
    assert (q.precision, q.recall) == (r.quality.precision, r.quality.recall)
    assert r.matched and abs(getattr(q, s.metric) - s.target) <= cs.SEARCH_TOL
    assert r.error_rate * cs.RATE_STEPS == pytest.approx(round(r.error_rate * cs.RATE_STEPS))
    assert cs.find_error_rate(w, s.target, s.metric) == r  # deterministic


def test_error_rate_search_out_of_reach_returns_the_worst_labels(small_trace):
    w = _workload(small_trace, "hadoop")
    r = cs.find_error_rate(w, 0.05, "accuracy")
    assert not r.matched
    # The lowest accuracy on the 0.05 grid: no grid rate does worse.
    grid = [labels.source_quality(w, "random", k / 20).accuracy for k in range(21)]
    assert r.achieved == pytest.approx(min(grid))
    assert cs.find_error_rate(w, 1.0, "accuracy").error_rate == 0.0  # the truth


def check_error_kinds(out, small_trace, aalo: float) -> None:
    """The error-kind study (on Hadoop here): each kind at the rate the search
    finds, the quality of exactly those labels, and CODA / Aalo (``aalo``: Aalo's
    mean CCT on the true coflows) from direct runs."""
    kinds = pd.read_csv(out / "error_kinds.csv")
    assert list(kinds["errors"]) == list(cs.ERROR_KINDS)
    assert set(kinds["scenario"]) == {"Hadoop"}
    w = _workload(small_trace, "hadoop", 40)
    metric, target, _ = cs.KIND_TARGETS["hadoop"]
    for _, row in kinds.iterrows():
        r = cs.find_error_rate(w, target, metric, source=row["errors"])
        assert row["error_rate"] == r.error_rate
        q = labels.source_quality(w, row["errors"], r.error_rate, cs.LABEL_SEED)
        assert (row["precision"], row["recall"]) == pytest.approx((q.precision, q.recall))
    by = kinds.set_index("errors")
    assert by.loc["merge", "recall"] == 1.0  # a merge never cuts a coflow
    assert by.loc["split", "precision"] == 1.0  # a split never mixes coflows
    for kind in ("merge", "split"):
        for ablated, col in ((False, "CODA / Aalo"), (True, "w/o both / Aalo")):
            policy, params = cs.kind_params(kind, by.loc[kind, "error_rate"], ablated)
            c = ck.simulate(w, policy, dict(params) | MODEL).coflows["cct_s"].mean()
            assert by.loc[kind, col] == pytest.approx(c / aalo), (kind, col)
    # The report's bullet quotes CODA / Aalo of every kind that reached the target.
    text = (out / "report.md").read_text()
    for kind, row in by.iterrows():
        if row[f"within {cs.SEARCH_TOL:g}"] == "yes":
            assert f"`{kind}` {fmt(row['CODA / Aalo'])}x" in text, kind


def test_tables_agree_with_direct_runs(small_trace, tmp_path):
    out = tmp_path / "coda"
    report = writer.run(
        coda_report.EXPERIMENT,
        out=str(out),
        trace=small_trace,
        coflows=40,
        workers=1,
        cache_dir=None,
        select=("spark", "hadoop", "batch10"),
    )
    assert report == str(out / "report.md")
    text = (out / "report.md").read_text()
    for section in ["Fig. 11", "Fig. 12", "Fig. 13", "Fig. 15", "Fig. 16", "Observation 1"]:
        assert section in text
    for f in [
        "fig11_normalized.png",
        "fig12_normalized.png",
        "fig13_ablation.png",
        "fig15_sn.png",
        "fig16_no_identification.png",
    ]:
        assert (out / f).stat().st_size > 1000
    ident = pd.read_csv(out / "identification.csv")
    runs = pd.read_csv(out / "runs.csv")

    # Every CODA run: the rate in the identification table, the CCTs of a direct run.
    cct = {}
    for key in ["spark", "hadoop", "batch10"]:
        s = cs.BY_KEY[key]
        w = _workload(small_trace, key, 40)
        row = ident[(ident["scenario"] == s.title) & (ident["labels"] == "random")].iloc[0]
        rate = float(row["error_rate"])
        q = labels.source_quality(w, "random", rate, cs.LABEL_SEED)
        assert abs(getattr(q, s.metric) - s.target) <= cs.SEARCH_TOL
        assert rate == cs.find_error_rate(w, s.target, s.metric).error_rate
        assert row["precision"] == pytest.approx(q.precision)
        assert row["recall"] == pytest.approx(q.recall)
        for name in cs.schemes_of(s):
            policy, params = cs.scheme_params(name, rate)
            c = ck.simulate(w, policy, dict(params) | MODEL).coflows["cct_s"].to_numpy()
            cct[(key, name)] = c
            got = runs[(runs["scenario"] == s.title) & (runs["scheme"] == name)]
            assert got["mean CCT (s)"].iloc[0] == pytest.approx(c.mean()), (key, name)

    # Normalization by hand: a scheme's average CCT over CODA's.
    fig11 = pd.read_csv(out / "fig11_normal.csv").set_index("scenario")
    h = {n: cct[("hadoop", n)].mean() for n in [cs.CODA, cs.AALO, cs.FAIR]}
    assert fig11.loc["Hadoop", "Fair / CODA"] == pytest.approx(h[cs.FAIR] / h[cs.CODA])
    assert fig11.loc["Hadoop", "Aalo / CODA"] == pytest.approx(h[cs.AALO] / h[cs.CODA])
    assert fig11.loc["Hadoop", "paper Fair / CODA"] == 2.3
    abl = pd.read_csv(out / "fig13_ablation.csv").set_index("scenario")
    st = {n: cct[("batch10", n)].mean() for n in cs.schemes_of(cs.BY_KEY["batch10"])}
    assert abl.loc["batch 10 s", "w/o both / CODA"] == pytest.approx(st[cs.NO_BOTH] / st[cs.CODA])
    if st[cs.NO_BOTH] != st[cs.AALO]:
        want = (st[cs.NO_BOTH] - st[cs.CODA]) / (st[cs.NO_BOTH] - st[cs.AALO])
        assert abl.loc["batch 10 s", "impact reduction"] == pytest.approx(want)
    else:
        assert np.isnan(abl.loc["batch 10 s", "impact reduction"])
    # The claims table carries the same ratios, with the paper's value and where.
    cl = pd.read_csv(out / "claims_values.csv").set_index("claim")
    assert float(cl.loc["Fair / CODA, Hadoop", "ours"]) == pytest.approx(h[cs.FAIR] / h[cs.CODA])
    assert cl.loc["Fair / CODA, Hadoop", "paper"] == 2.3
    assert cl.loc["Fair / CODA, Hadoop", "where"] == "§6.4, Fig. 11"
    q = abs(h[cs.FAIR] / h[cs.CODA] / 2.3 - 1) > 0.15
    assert bool(cl.loc["Fair / CODA, Hadoop", "ours: flag"]) == q
    # The last row of the bound table: fair on the whole trace with Spark starts.
    whole = runner.WorkloadSpec(trace=small_trace, transforms=(cs.SPARK,)).load()
    fair = ck.simulate(whole, "fair", MODEL).coflows
    bound = pd.read_csv(out / "bound.csv").iloc[-1]
    assert bound["coflows"] == whole.num_coflows
    lb = metrics.lower_bounds(whole).reindex(fair["coflow_id"].to_numpy()).to_numpy()
    assert bound["Fair / bound"] == pytest.approx(fair["cct_s"].mean() / lb.mean())
    fig16 = pd.read_csv(out / "fig16_no_identification.csv").set_index("scenario")
    assert fig16.loc["Spark", "Fair / CODA (all)"] == pytest.approx(
        cct[("spark", cs.FAIR)].mean() / cct[("spark", cs.NO_ID)].mean()
    )
    check_error_kinds(out, small_trace, cct[("hadoop", cs.AALO)].mean())
    assert "Which kinds of error hurt" in text and "error_kinds.png" in text
    assert "Policies decide **every 1 s**" in text and "--decisions" not in text.split("## ")[-1]


def test_impact_reduction_is_the_papers_footnote_8():
    # CODA 1.3x slower than Aalo, 'without both' 1.16x slower than CODA:
    # (1.3 * 1.16 - 1.3) / (1.3 * 1.16 - 1) = 0.41 ("40%").
    def runs(mean):
        return pd.DataFrame({"cct_s": [mean]})

    res = {("x", cs.AALO): runs(1.0), ("x", cs.CODA): runs(1.3), ("x", cs.NO_BOTH): runs(1.508)}
    assert coda_report.impact_reduction(res, "x") == pytest.approx(0.208 / 0.508)


def test_no_identification_is_pias(small_trace):
    # Fig. 16's CODA (every flow in one coflow, per-flow queues on) is the pias policy.
    w = _workload(small_trace, "hadoop", 40)
    a = ck.simulate(w, "coda", {"labels": "one"}).coflows["cct_s"].to_numpy()
    b = ck.simulate(w, "pias").coflows["cct_s"].to_numpy()
    np.testing.assert_allclose(a, b, rtol=1e-9)


def test_cli_runs_every_scenario(small_trace, tmp_path):
    assert "coda-scheduler" in EXPERIMENTS
    out = tmp_path / "cli"
    argv = ["reproduce", "coda-scheduler", "--trace", small_trace, "--coflows", "3"]
    assert cli.main(argv + ["--out", str(out), "--workers", "1", "--no-cache"]) == 0
    runs = pd.read_csv(out / "runs.csv")
    assert set(runs["scenario"]) == {s.title for s in cs.SCENARIOS}
    assert (runs["coflows"] == 3).all()
    assert "--coflows 3" in (out / "report.md").read_text()


def test_decisions_event_decides_at_every_flow_event(small_trace, tmp_path):
    # --decisions event: the runs are the plain (per-event) policies, and the
    # report's command and model say so.
    out = tmp_path / "event"
    argv = ["reproduce", "coda-scheduler", "--trace", small_trace, "--coflows", "12"]
    argv += ["--out", str(out), "--workers", "1", "--no-cache", "--decisions", "event"]
    assert cli.main(argv) == 0
    runs = pd.read_csv(out / "runs.csv").set_index(["scenario", "scheme"])
    w = _workload(small_trace, "spark", 12)
    fair = ck.simulate(w, "fair").coflows["cct_s"].mean()
    assert runs.loc[("Spark", cs.FAIR), "mean CCT (s)"] == pytest.approx(fair)
    every = ck.simulate(w, "fair", MODEL).coflows["cct_s"].mean()
    assert every > fair  # new flows wait for the next decision: a different model
    text = (out / "report.md").read_text()
    assert "Policies decide **at every flow event**" in text
    assert "--decisions event" in text.split("## Provenance")[-1]


@pytest.mark.parametrize("bad", ["0", "-1", "soon", "nan", "inf"])
def test_decisions_must_be_event_or_positive_seconds(small_trace, tmp_path, bad):
    with pytest.raises(ck.CoflowkitError, match="--decisions must be 'event' or a positive"):
        writer.run(
            coda_report.EXPERIMENT,
            out=str(tmp_path / "x"),
            trace=small_trace,
            coflows=3,
            decisions=bad,
        )


def test_decisions_only_where_the_paper_states_an_interval(small_trace, tmp_path):
    from coflowkit.experiments import mcs

    with pytest.raises(ck.CoflowkitError, match="--decisions applies only to"):
        writer.run(mcs.EXPERIMENT, out=str(tmp_path / "m"), trace=small_trace, decisions="1")


def test_whole_trace_report_reads_its_own_numbers(small_trace, tmp_path):
    # --coflows all (the default): the scenarios are the whole trace, so the bound
    # table has no separate whole-trace row and the text takes its whole-trace branch.
    out = tmp_path / "whole"
    writer.run(
        coda_report.EXPERIMENT,
        out=str(out),
        trace=small_trace,
        coflows=None,
        workers=1,
        cache_dir=None,
        select=("spark", "stretched-hadoop"),
    )
    text = (out / "report.md").read_text()
    n = runner.WorkloadSpec(trace=small_trace).load().num_coflows
    bound = pd.read_csv(out / "bound.csv")
    assert list(bound["scenario"]) == ["Spark", "stretched Hadoop"]
    assert (bound["coflows"] == n).all()
    assert "replays **all coflows**" in text and "Room is not what is missing" in text
    assert "removes cause 1" not in text and "--coflows" not in text.split("## Provenance")[-1]
    # The per-bin late binding sentence quotes the bins table.
    runs = pd.read_csv(out / "runs.csv").set_index(["scenario", "scheme"])
    assert runs.loc[("Spark", cs.FAIR), "coflows"] == bound["coflows"].iloc[0]
