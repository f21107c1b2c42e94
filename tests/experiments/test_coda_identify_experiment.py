"""`coflowkit reproduce coda-identify` on a few narrow coflows of the Facebook trace,
through the experiment writer: the tables' content (rows, ranges, paper numbers),
the claims table against the tables, the text's numbers against the tables,
cross-checks against direct identification and simulation, and the quality
measures it adds."""

import json
import re
from dataclasses import replace
from pathlib import Path

import coflowkit as ck
import numpy as np
import pandas as pd
import pytest
from coflowkit import experiments, identify, labels, metric_learning, runner
from coflowkit.experiments import EXPERIMENTS, MODULES, writer
from coflowkit.experiments import coda_identify as ci
from coflowkit.experiments import coda_identify_report as cir
from coflowkit.experiments import coda_identify_speed as cis
from coflowkit.experiments import coda_scheduler as cs
from coflowkit.experiments.common import CLAIM_TOLERANCE

TINY = replace(ci.SMALL, t1_widths=(3, 50), t1_concurrent=4, t1_max_rounds=12)


@pytest.fixture(scope="module")
def report(small_trace, tmp_path_factory):
    out = tmp_path_factory.mktemp("cid-out") / "coda-identify"
    path = experiments.run(
        "coda-identify",
        out=str(out),
        trace=small_trace,
        coflows=15,
        workers=1,
        cache_dir=None,
        config=TINY,
    )
    return out, Path(path).read_text()


def _csv(out, name):
    return pd.read_csv(out / f"{name}.csv")


def test_registered_as_a_spec():
    assert "coda-identify" in EXPERIMENTS
    assert MODULES["coda-identify"] == "coda_identify_report"
    spec = cir.EXPERIMENT
    assert spec.name == "coda-identify" and spec.template == "coda_identify.md"
    # everything is computed in memory (its simulations inside compute): no
    # workload, models or runs of the writer's own, no run() of its own
    assert spec.workload is None and spec.models == () and spec.runs == ()
    assert spec.local is cir.local and not hasattr(cir, "run")
    # the scenarios reuse the coda-scheduler experiment's start transforms
    assert ci.starts_spec("spark", False, 1) == cs.SPARK
    assert ci.starts_spec("hadoop", True, 1) == cs.HADOOP_STRETCHED


def test_config_comes_from_the_writer_options():
    assert cir.config(writer.Options("o", "t")) == ci.Config()
    assert cir.config(writer.Options("o", "t", config=ci.SMALL)) is ci.SMALL
    # Options' default seed is the experiment's
    assert writer.Options("o", "t").seed == ci.DEFAULT_SEED


def test_paper_views_are_the_paper_table():
    # the tables' paper columns read PAPER, the claims' values and `where`s
    assert ci.PAPER_10A["hadoop"] == (0.94, 0.84)
    assert ci.PAPER_10BC["batch50"] == (None, None)
    assert ci.PAPER_10BC["stretched-spark"] == (None, 0.60)
    assert ci.PAPER_T1["R-DBSCAN"] == (27.50, 0.9647)
    assert ci.PAPER_14A == (0.10, -0.04)
    assert ci.PAPER["CODA_ms"].where == "§6.3, Table 1"


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
        "fig13_15.png",
    }
    for p in pngs:
        assert f"({p})" in text, p
    sections = [
        "Fig. 10a",
        "Learned weights",
        "Fig. 10b-c",
        "Fig. 10d",
        "Fig. 10e",
        "Table 1",
        "Fig. 14a",
        "Fig. 14b",
        "Figs. 11-12",
        "Figs. 13 and 15",
        "Every simulation",
        "The paper's claims, one row each",
        "Differences from the paper",
        "Commands and wall times",
        "Provenance",
    ]
    found = re.findall(r"^## (.*)$", text, flags=re.M)
    assert [next(s for s in sections if f.startswith(s)) for f in found] == sections
    assert "coflowkit reproduce coda-identify --out" in text
    assert "--coflows 15" in text
    # the raw rows are written beside the tables and named, not shown
    for raw in ("learned_eps_sweep", "table1_rounds"):
        assert (out / f"{raw}.csv").exists() and not (out / f"{raw}.md").exists()
        assert f"`{raw}.csv`" in text and f"(`{raw}.csv`)\n\n|" not in text
    # the text says which coflows the offline analyses used
    assert "its first 15 coflows" in text and "(first 15 coflows)" in text


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
    loss = 1 - d.loc[1, "accuracy"] / d.loc[0, "accuracy"]
    assert d.loc[1, "accuracy loss vs learned"] == pytest.approx(loss)

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


def test_learned_eps_is_the_sweeps_most_accurate(report):
    # the rule of learn_weights, checked on its sweep: per training workload, the
    # window of best (precision + recall) / 2, the first (smaller ε) on a tie
    out, _ = report
    sweep, chosen = _csv(out, "learned_eps_sweep"), _csv(out, "learned_eps")
    assert len(sweep) == len(ci.TRAINING) * len(TINY.learned_windows_s)
    for _, row in chosen.iterrows():
        s = sweep[sweep["training workload"] == row["training workload"]]
        assert list(s["window_s"]) == list(TINY.learned_windows_s)
        acc = ((s["precision"] + s["recall"]) / 2).to_numpy()
        best = s.iloc[int(np.argmax(acc))]
        assert row["time window eps/sqrt(a_t) (s)"] == best["window_s"]
        assert row["eps"] == pytest.approx(best["eps"])
        assert row["tau"] == pytest.approx(best["eps"] * ci.TAU / ci.EPS)


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
    assert len(rounds) == t.loc["CODA: incremental R-DBSCAN", "rounds"]
    # The exact DBSCAN on its two paths gives the same clusters.
    assert set(rounds["scan_same"].dropna()) == {"yes"}
    assert "Table 1: time per identification round" in text
    heavy = rounds[rounds["scan_ms"].notna()]
    assert len(heavy) == TINY.t1_heavy_rounds
    assert f"run on {len(heavy)} of the timed rounds only" in text
    assert f"in {len(heavy)} of {len(heavy)} rounds and" in text


def test_schedule_spreads_the_timed_and_heavy_rounds(small_trace):
    base = runner.WorkloadSpec(trace=small_trace).load().head(15)
    setup = cis.speed_setup(base, TINY, 1)
    plan = cis.schedule(setup, TINY)
    assert plan.rounds[0] == pytest.approx(ci.INTERVAL_S)
    assert np.allclose(np.diff(plan.rounds), ci.INTERVAL_S)
    assert plan.rounds[-1] >= setup.end.max()
    assert len(plan.timed) == TINY.t1_max_rounds
    # the heavy rounds are timed rounds, neither the first nor the last
    timed = sorted(plan.timed)
    assert plan.heavy <= plan.timed and len(plan.heavy) == TINY.t1_heavy_rounds
    assert timed[0] not in plan.heavy and timed[-1] not in plan.heavy


def test_late_binding_tables(report):
    out, _ = report
    a = _csv(out, "fig14a")
    assert list(a["d"]) == [0.0, *TINY.d_offline]
    assert a["precision"].between(0, 1).all() and a["recall"].between(0, 1).all()
    # Extending coflows can only gather flows: recall never drops as d grows.
    assert a["recall"].is_monotonic_increasing
    assert a.loc[0, "flows in 2+ extended coflows"] == 0
    b = _csv(out, "fig14b")
    assert list(b["d"].astype(str)) == ["off", "0.75", "2.0", "0.75", "2.0"]
    assert list(b["binding"]) == ["-", "first", "first", "round", "round"]
    assert b.loc[b["d"].astype(str) == "off", "normalized CCT (vs late binding off)"].item() == 1
    # Without late binding every served flow is bound to its own label.
    assert b.loc[b["d"].astype(str) == "off", "flows bound elsewhere"].item() == 0
    assert (b["flows bound elsewhere"] <= b["flows served"]).all()
    assert (b["flows served"] > 0).all()


def test_bound_elsewhere_counts_served_flows_off_their_label():
    # flows: served with their label, bound elsewhere, never served (-1)
    assert ci.bound_elsewhere([3, 3, 4, 5], [3, 4, -1, 7]) == (3, 2)
    assert ci.bound_elsewhere([], []) == (0, 0)


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
    # CODA per scenario, Fig. 14b's late binding off and d = 2 (first), its
    # binding=round twins at d = 0.75 and 2, and Fig. 13's runs without
    # intra-coflow prioritisation (late binding on, and off)
    assert runs["params"].str.contains("labels=identify").sum() == 1 + 2 + 1 + 2 + 2
    assert runs["params"].str.contains("binding=round").sum() == 2
    assert runs["params"].str.contains("intra=false").sum() == 2
    # Every run decides every second (CODA's simulator, §6.1), the default model.
    assert runs["params"].str.contains("realloc=interval").all()
    assert runs["params"].str.contains("decision_s=1").all()


def test_fig13_15_against_runs(report):
    out, text = report
    f = _csv(out, "fig13_15").set_index("workload")
    assert list(f.index) == ["stretched Hadoop"]
    runs = _csv(out, "runs")
    mean = runs[runs["workload"] == "stretched Hadoop"].set_index("run")["mean CCT (s)"]
    row = f.loc["stretched Hadoop"]
    for col, run in (
        ("w/o L.B. / CODA", ci.NO_LB),
        ("w/o I.P. / CODA", ci.NO_IP),
        ("w/o both / CODA", ci.NO_BOTH),
        ("Aalo / CODA", "Aalo"),
    ):
        assert row[col] == pytest.approx(mean[run] / mean["CODA"], rel=1e-3), col
    assert row["CODA mean CCT (s)"] == pytest.approx(mean["CODA"], rel=1e-3)
    # the paper's text: late binding "more than 10%", intra 7%, both 1.16x
    paper = [str(row[f"paper {a}"]) for a in ("w/o L.B.", "w/o I.P.", "w/o both")]
    assert paper == ["> 1.1", "1.07", "1.16"]
    assert row["paper w/o I.P. (SN, best case)"] == 1.30
    # footnote 8 from the same means, when the errors cost anything
    wob, coda, aalo = mean[ci.NO_BOTH], mean["CODA"], mean["Aalo"]
    if wob > aalo:
        assert row["impact reduction"] == pytest.approx((wob - coda) / (wob - aalo), rel=1e-3)
    else:
        assert np.isnan(row["impact reduction"])
    runs = runs.set_index(["workload", "run"])
    no_ip = runs.loc[("stretched Hadoop", ci.NO_IP), "params"]
    both = runs.loc[("stretched Hadoop", ci.NO_BOTH), "params"]
    assert "intra=false" in no_ip and "distance_s=0.75" in no_ip
    assert "intra=false" in both and "late_binding=false" in both
    assert "(fig13_15.png)" in text
    # the Differences bullet quotes the table: one scenario, so each span is one value
    bullet = _bullet(text, "**Figs. 13 and 15 on CODA's own identification.**")
    for col, name in (("w/o L.B. / CODA", "w/o L.B."), ("w/o both / CODA", "w/o both")):
        g = f"{100 * (row[col] - 1):+.1f}%"
        assert f"{g} to {g} ({name}; in the paper's range in" in " ".join(bullet.split())
    prec = row["run's precision"]
    assert f"{prec:.3f}-{prec:.3f}" in bullet


def test_simulations_are_the_policies_under_the_decision_model(report, small_trace):
    out, text = report
    runs = _csv(out, "runs").set_index(["workload", "run"])
    spec = runner.WorkloadSpec(
        trace=small_trace, transforms=ci.BY_KEY["spark"].transforms(1), first=15
    )
    w = spec.load()
    fair = ck.simulate(w, "fair", {"realloc": "interval", "decision_s": "1"})
    assert runs.loc[("Spark", "Fair"), "mean CCT (s)"] == pytest.approx(
        fair.coflows["cct_s"].mean()
    )
    assert "policies deciding **every 1 s**" in text
    # The run's precision and recall are those of the labels CODA's own run
    # scheduled with, against the true coflows.
    e = _csv(out, "fig11_12").set_index("workload")
    params = dict(ci.coda_params(ci.BY_KEY["spark"], ci.DISTANCE))
    coda = ck.simulate(w, "coda", params | {"realloc": "interval", "decision_s": "1"})
    truth = np.asarray(w.flow_columns()["coflow_id"])
    q = labels.quality(truth, coda.extra["flow_labels"])
    assert e.loc["Spark", "run's precision"] == pytest.approx(q.precision)
    assert e.loc["Spark", "run's recall"] == pytest.approx(q.recall)
    assert 0 < q.precision <= 1 and 0 < q.recall <= 1


def test_claims_are_the_tables_numbers_beside_the_papers(report):
    out, text = report
    v = pd.read_csv(out / "claims_values.csv").set_index("claim")
    a = _csv(out, "fig10a").set_index(["workload", "weights"])
    e = _csv(out, "fig11_12").set_index("workload")
    t1 = _csv(out, "table1").set_index("algorithm")
    d = _csv(out, "fig10d")

    c = v.loc["precision, Hadoop (Ah)"]
    assert c["ours"] == pytest.approx(a.loc[("Hadoop", "paper Ah"), "precision"])
    assert c["paper"] == 0.94 and c["where"] == "§6.3, Fig. 10a"
    assert c["ours: ratio"] == pytest.approx(c["ours"] / 0.94)
    assert c["ours: flag"] == (abs(c["ours"] / 0.94 - 1) > CLAIM_TOLERANCE)

    c = v.loc["Fair / CODA (identified), Spark"]
    assert c["ours"] == pytest.approx(e.loc["Spark", "Fair / CODA"])
    assert c["paper"] == 2.7 and c["where"] == "§6.4, Fig. 11"
    c = v.loc["Aalo / CODA (identified), stretched Hadoop"]
    assert c["paper"] == pytest.approx(1 / 1.3) and c["where"] == "§6.4, Fig. 12"

    c = v.loc["ms per round, CODA: incremental R-DBSCAN"]
    assert c["ours"] == pytest.approx(t1.loc["CODA: incremental R-DBSCAN", "mean ms"])
    assert c["paper"] == 5.23
    c = v.loc["speedup of incremental R-DBSCAN over R-DBSCAN from scratch"]
    assert c["ours"] == pytest.approx(t1.loc["R-DBSCAN from scratch", "CODA speedup"])
    assert c["paper"] == 5

    # "over 40%" is a bound: flagged exactly when the loss is not above it
    c = v.loc["accuracy loss of equal weights, Spark, ε = 0.5"]
    assert c["ours"] == pytest.approx(d.loc[1, "accuracy loss vs learned"])
    assert c["ours: flag"] == (not c["ours"] > 0.40)

    late = _csv(out, "fig14a").set_index("d")
    c = v.loc[f"recall change by late binding at d = {ci.DISTANCE:g}, stretched Hadoop"]
    assert 100 * c["ours"] == pytest.approx(late.loc[ci.DISTANCE, "recall change (points)"])

    # Fig. 13 on stretched Hadoop, as gains (normalized CCT - 1): w/o L.B.
    # "more than 10%" is a bound, w/o I.P. 7% and w/o both 1.16x are values;
    # Fig. 15's best SN gain "up to 30%"
    f = _csv(out, "fig13_15").set_index("workload")
    c = v.loc["gain of CODA over w/o L.B. (identified), stretched Hadoop"]
    assert c["ours"] == pytest.approx(f.loc["stretched Hadoop", "w/o L.B. / CODA"] - 1)
    assert c["paper"] == pytest.approx(0.10) and c["ours: flag"] == (not c["ours"] > 0.10)
    c = v.loc["gain of CODA over w/o both (identified), stretched Hadoop"]
    assert c["paper"] == pytest.approx(0.16) and c["where"] == "§6.4, Fig. 13 and footnote 8"
    assert c["ours: ratio"] == pytest.approx(c["ours"] / 0.16)
    text_sn = "best SN gain of intra-coflow prioritisation (identified), stretched arrivals"
    c = v.loc[text_sn]
    assert c["paper"] == pytest.approx(0.30) and c["where"] == "§6.4, Fig. 15"
    if np.isfinite(f.loc["stretched Hadoop", "w/o I.P. / CODA (SN)"]):
        assert c["ours"] == pytest.approx(f.loc["stretched Hadoop", "w/o I.P. / CODA (SN)"] - 1)

    # one row per stated number this run measures
    stated = 6 + 2 + 2  # Fig. 10a precision and recall; 10b precision; 10c recall
    fig13 = 3 + 1 + 1  # stretched Hadoop: three ablations, footnote 8, Fig. 15
    assert len(v) == (
        stated + (d["weights"] == "equal").sum() + 2 * len(t1) + 2 + 2 + 2 * len(e) + fig13
    )
    ok = int((v["ours: flag"].astype(str) == "False").sum())
    assert f"Reproduced:\n{ok} of {int(v['ours'].notna().sum())}." in text


def _bullet(text: str, start: str) -> str:
    diff = text.split("## Differences from the paper")[1]
    return next(b for b in diff.split("\n\n* ") if b.startswith(start))


def test_differences_quote_this_runs_numbers(report):
    out, text = report
    body, diff = text.split("## Differences from the paper")
    if "**>25%**" in body:
        assert diff.count("\n* **") >= 1
    # every number of a bullet is this run's, as in the tables
    e = _csv(out, "fig11_12")
    if e["Fair ratio"].str.contains(">25%").any():
        fair = _bullet(text, "**Fair / CODA")
        assert fair.startswith("**Fair / CODA " + ", ".join(f"{x:.2f}" for x in e["Fair / CODA"]))
        assert f"(paper {', '.join(f'{x:g}' for x in e['paper Fair / CODA'])})" in fair
    t1 = _csv(out, "table1").set_index("algorithm")
    times = _bullet(text, "**Table 1 times")
    inc = t1.loc["CODA: incremental R-DBSCAN", "mean ms"]
    assert f"incremental R-DBSCAN {inc:.3g} ms per round\n  (paper 5.23)" in times
    assert "(paper about\n  600x and 5x)" in times
    late = _csv(out, "fig14a").set_index("d").loc[ci.DISTANCE]
    offline = _bullet(text, "**Late binding offline")
    assert f"recall {late['recall change (points)']:+.1f} points" in offline
    assert f"{late['flows in 2+ extended coflows']:.2%} of the flows" in offline
    assert "paper\n  +10 and -4" in offline


def test_wall_times_and_provenance(report):
    out, text = report
    t = _csv(out, "wall_times")
    assert t["step"].iloc[-1] == "total"
    assert (t["wall time (s)"] >= 0).all()
    assert t["wall time (s)"].iloc[-1] == pytest.approx(t["wall time (s)"].iloc[:-1].sum())
    assert "simulations on 1 worker(s)" in t["step"].iloc[-2]
    p = json.loads((out / "provenance.json").read_text())
    assert p["command"] == f"coflowkit reproduce coda-identify --out {out} --coflows 15"
    # no cache: every simulation of the runs table was run, none read
    assert p["simulated_jobs"] == len(_csv(out, "runs")) and p["cached_jobs"] == 0
    assert re.search(r"\* Wall time: \d+ s, uncached", text)
    assert f"`{p['command']}` on {p['machine']}" in text


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


def test_whole_trace_simulations_take_the_whole_trace_text(small_trace, tmp_path):
    out = tmp_path / "whole"
    experiments.run(
        "coda-identify",
        out=str(out),
        trace=small_trace,
        workers=1,
        cache_dir=None,
        config=replace(TINY, sim_coflows=None),
    )
    runs = _csv(out, "runs")
    whole = runner.WorkloadSpec(trace=small_trace).load().num_coflows
    assert set(runs["coflows"]) == {whole}
    text = (out / "report.md").read_text()
    assert f"All {whole} coflows of each workload (the whole trace" in text
    assert "fit this command's budget" not in text
