"""`coflowkit reproduce coda-identify` on a few narrow coflows of the Facebook trace:
the tables' content (rows, ranges, paper numbers), cross-checks against direct
identification and simulation, and the quality measures it adds."""

import re
from dataclasses import replace
from pathlib import Path

import coflowkit as ck
import numpy as np
import pandas as pd
import pytest
from coflowkit import identify, labels, metric_learning, runner
from coflowkit.experiments import EXPERIMENTS
from coflowkit.experiments import coda_identify as ci
from coflowkit.experiments import coda_identify_report as cir
from coflowkit.experiments import coda_scheduler as cs

TINY = replace(ci.SMALL, t1_widths=(3, 50), t1_concurrent=4, t1_max_rounds=12)


@pytest.fixture(scope="module")
def report(small_trace, tmp_path_factory):
    out = tmp_path_factory.mktemp("cid-out") / "coda-identify"
    path = cir.run(
        out=str(out), trace=small_trace, coflows=15, workers=1, cache_dir=None, config=TINY
    )
    return out, Path(path).read_text()


def _csv(out, name):
    return pd.read_csv(out / f"{name}.csv")


def test_registered():
    assert "coda-identify" in EXPERIMENTS
    # The scenarios reuse the coda-scheduler experiment's start transforms.
    assert ci.starts_spec("spark", False, 1) == cs.SPARK
    assert ci.starts_spec("hadoop", True, 1) == cs.HADOOP_STRETCHED


def test_report_names_every_figure_and_section(report):
    out, text = report
    pngs = sorted(p.name for p in out.glob("*.png"))
    assert set(pngs) == {
        "fig10a.png",
        "fig10bc.png",
        "fig10d.png",
        "fig10e.png",
        "table1_rounds.png",
        "fig14a.png",
        "fig14b.png",
        "fig11_12.png",
    }
    for p in pngs:
        assert f"({p})" in text, p
    for section in [
        "Fig. 10a",
        "Learned weights",
        "Fig. 10b-c",
        "Fig. 10d",
        "Fig. 10e",
        "Table 1",
        "Fig. 14a",
        "Fig. 14b",
        "Figs. 11-12",
        "Differences from the paper",
        "Commands and wall times",
    ]:
        assert f"## {section}" in text, section
    assert "coflowkit reproduce coda-identify --out" in text
    assert "--coflows 15" in text


def test_fig10_tables(report, small_trace):
    out, _ = report
    a = _csv(out, "fig10a")
    assert list(a["workload"]) == ["Spark"] * 3 + ["Hadoop"] * 3 + ["mixed"] * 3
    assert list(a["weights"][:2]) == ["paper As", "paper Ah"]
    assert a["weights"].str.startswith("learned").sum() == 3
    for col in ["precision", "recall", "pooled precision", "pooled recall"]:
        assert a[col].between(0, 1).all(), col
    assert (a["accuracy"] == (a["precision"] + a["recall"]) / 2).all()
    paper = a.drop_duplicates("workload").set_index("workload")
    assert paper.loc["Spark", "paper precision"] == 0.97
    assert paper.loc["Hadoop", "paper recall"] == 0.84
    assert paper.loc["mixed", "paper recall"] == 0.92
    # The paper-weights row is what identify.identify gives on the same workload.
    w = runner.WorkloadSpec(trace=small_trace, transforms=ci.BY_KEY["hadoop"].transforms(1))
    w = w.load().head(15)
    q = identify.identify(identify.table_from_workload(w), "hadoop").quality
    row = a[(a["workload"] == "Hadoop") & (a["weights"] == "paper Ah")].iloc[0]
    assert row["precision"] == pytest.approx(q.precision)
    assert row["recall"] == pytest.approx(q.recall)

    bc = _csv(out, "fig10bc")
    assert list(bc["workload"].unique()) == [
        "batch 10 s",
        "batch 50 s",
        "batch 100 s",
        "stretched Spark",
        "stretched Hadoop",
    ]
    assert bc["precision"].between(0, 1).all() and bc["recall"].between(0, 1).all()
    assert set(bc.loc[bc["workload"] == "batch 100 s", "paper precision"]) == {0.56}
    assert set(bc.loc[bc["workload"] == "stretched Hadoop", "paper recall"]) == {0.6}

    d = _csv(out, "fig10d")
    assert list(d["weights"]) == ["learned", "equal"]
    assert d["accuracy"].between(0, 1).all()

    e = _csv(out, "fig10e")
    assert list(e["eps"]) == list(TINY.eps_grid)
    assert [c for c in e.columns if c.endswith("recall")] == [
        "Spark recall",
        "Hadoop recall",
        "stretched Spark recall",
        "stretched Hadoop recall",
    ]
    # A larger radius never splits what a smaller one joined.
    assert e["Hadoop recall"].is_monotonic_increasing


def test_learned_weights_table(report):
    out, _ = report
    t = _csv(out, "learned_weights")
    assert list(t["attribute"]) == list(metric_learning.ATTRIBUTES)
    assert list(t["paper As"]) == metric_learning.PAPER_WEIGHTS["spark"]
    assert list(t["paper Ah"]) == metric_learning.PAPER_WEIGHTS["hadoop"]
    for key in ci.TRAINING:
        assert (t[f"ours, {key}"] >= 0).all()
        assert t[f"ours, {key} / max"].max() == pytest.approx(1.0)
    eps = _csv(out, "learned_eps")
    assert len(eps) == 3 and (eps["eps"] > 0).all()
    assert set(eps["time window eps/sqrt(a_t) (s)"]) <= set(TINY.learned_windows_s)


def test_table1(report):
    out, text = report
    t = _csv(out, "table1").set_index("algorithm")
    for name in [
        "DBSCAN, coflowkit (exact, sorted chains)",
        "R-DBSCAN from scratch",
        "CODA: incremental R-DBSCAN",
        "DBSCAN, pair scan (exact, no 1-D shortcut)",
    ]:
        assert name in t.index, name
        assert 0 <= t.loc[name, "accuracy"] <= 1
        assert t.loc[name, "rounds"] > 0 and t.loc[name, "mean ms"] > 0
    assert t.loc["CODA: incremental R-DBSCAN", "paper ms"] == 5.23
    assert t.loc["DBSCAN, coflowkit (exact, sorted chains)", "paper accuracy"] == 0.9821
    rounds = _csv(out, "table1_rounds")
    assert (rounds["active_coflows"] <= TINY.t1_concurrent).all()
    # The exact DBSCAN on its two paths gives the same clusters.
    assert set(rounds["scan_same"].dropna()) == {"yes"}
    assert "Table 1: time per identification round" in text


def test_late_binding_tables(report):
    out, _ = report
    a = _csv(out, "fig14a")
    assert list(a["d"]) == [0.0, *TINY.d_offline]
    assert a["precision"].between(0, 1).all() and a["recall"].between(0, 1).all()
    # Extending coflows can only gather flows: recall never drops as d grows.
    assert a["recall"].is_monotonic_increasing
    assert a.loc[0, "flows in 2+ extended coflows"] == 0
    b = _csv(out, "fig14b")
    assert list(b["d"].astype(str)) == ["off", "0.75", "2.0"]
    assert b.loc[b["d"].astype(str) == "off", "normalized CCT (vs late binding off)"].item() == 1


def test_end_to_end_against_runs(report):
    out, _ = report
    e = _csv(out, "fig11_12").set_index("workload")
    runs = _csv(out, "runs")
    for w in ["Spark", "stretched Hadoop"]:
        mean = runs[runs["workload"] == w].set_index("run")["mean CCT (s)"]
        assert e.loc[w, "Aalo / CODA"] == pytest.approx(mean["Aalo"] / mean["CODA"], rel=1e-3)
        assert e.loc[w, "Fair / CODA"] == pytest.approx(mean["Fair"] / mean["CODA"], rel=1e-3)
        assert 0 <= e.loc[w, "offline precision"] <= 1
    assert e.loc["Spark", "paper Fair / CODA"] == 2.7
    assert set(runs["coflows"]) == {15}
    assert runs["params"].str.contains("labels=identify").sum() == 1 + 2 + 1


def test_differences_explain_every_flag(report):
    _, text = report
    body, diff = text.split("## Differences from the paper")
    if "**>25%**" in body:
        assert diff.count("\n* **") >= 1


def test_extended_quality_matches_labels_quality():
    truth = np.array([1, 1, 1, 2, 2, 3])
    own = np.array([0, 0, 1, 1, 2, 2])
    q, multi = ci.extended_quality(truth, own, [[] for _ in own])
    assert (q.precision, q.recall) == pytest.approx(
        (labels.quality(truth, own).precision, labels.quality(truth, own).recall)
    )
    assert multi == 0
    # Flow 2 (coflow 1, labelled 1) also joins extended coflow 0: coflow 1 is then
    # whole in C*_0 = {0, 1, 2}: recall of coflow 1 becomes 1.
    q2, multi2 = ci.extended_quality(truth, own, [[], [], [0], [], [], []])
    assert q2.recall == pytest.approx((1 + 1 / 2 + 1) / 3)
    # C*_0 = {0,1,2} all coflow 1 (1), C*_1 = {2,3} (1/2), C*_2 = {4,5} (1/2).
    assert q2.precision == pytest.approx((1 + 0.5 + 0.5) / 3)
    assert multi2 == pytest.approx(1 / 6)


def test_pooled_quality_by_hand():
    truth = np.array([1, 1, 1, 1, 2])
    lab = np.array([0, 0, 0, 0, 0])  # everything merged
    q = ci.pooled_quality(truth, lab)
    assert q.precision == pytest.approx(4 / 5) and q.recall == 1.0
    assert labels.quality(truth, lab).precision == pytest.approx(4 / 5)
    lab2 = np.array([0, 0, 1, 1, 2])  # coflow 1 split in two halves
    q2 = ci.pooled_quality(truth, lab2)
    assert q2.precision == 1.0 and q2.recall == pytest.approx(3 / 5)
    assert labels.quality(truth, lab2).recall == pytest.approx((0.5 + 1) / 2)


def test_mixed_workload_takes_halves(small_trace):
    base = runner.WorkloadSpec(trace=small_trace).load().head(10)
    sp = ck.transforms.apply_all(base, ci.BY_KEY["spark"].transforms(1))
    hd = ck.transforms.apply_all(base, ci.BY_KEY["hadoop"].transforms(1))
    mx = ci.mixed_workload(sp, hd)
    a, b, m = sp.flow_columns(), hd.flow_columns(), mx.flow_columns()
    assert m["flow_id"] == a["flow_id"]
    order = list(dict.fromkeys(m["coflow_id"]))
    for i, k in enumerate(m["coflow_id"]):
        src = b if order.index(k) % 2 else a
        assert m["start_s"][i] == src["start_s"][i]
        assert m["src_port"][i] == src["src_port"][i]
    # Hadoop's half keeps the shuffle handler's source port.
    odd = [i for i, k in enumerate(m["coflow_id"]) if order.index(k) % 2]
    assert {m["src_port"][i] for i in odd} == {13562}


def test_wall_times_table(report):
    out, text = report
    t = _csv(out, "wall_times")
    assert t["step"].iloc[-1] == "total"
    assert (t["wall time (s)"] >= 0).all()
    assert re.search(r"took \d+ s on this machine", text)
