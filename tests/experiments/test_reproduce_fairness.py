"""`reproduce ncdrf|coflex|mcs` under either engine: the CoflowSim columns beside
the paper equal the slowdowns of runs under `--engine coflowsim` (CoflowSim's own
schedulers, or coflowkit's policies on its hooks), `--engine` picks the columns,
and MCS's batches become CoflowSim's epochs rather than a transform."""

import subprocess
import sys

import coflowkit as ck
import numpy as np
import pandas as pd
import pytest
from coflowkit.experiments import coflex, mcs, writer


def coflowsim_stats(trace, policy, first, params=None):
    w = ck.load_trace(trace).head(first)
    s = ck.simulate(w, policy, params, engine="coflowsim", progress=False).coflows["slowdown"]
    return float(s.mean()), float(np.percentile(s, 95))


def reproduce(*args):
    return subprocess.run(
        [sys.executable, "-m", "coflowkit", "reproduce", *args],
        capture_output=True,
        text=True,
    )


def test_ncdrf_tables_have_every_model(fb_trace, tmp_path):
    out = tmp_path / "ncdrf"
    r = reproduce("ncdrf", "--out", str(out), "--coflows", "20", "--no-cache")
    assert r.returncode == 0, r.stderr
    t = pd.read_csv(out / "table2_slowdown_values.csv").set_index("claim")
    models = ["exact", "exact, realloc=coflow", "CoflowSim"]
    assert list(t.columns) == [
        "paper",
        *models,
        "where",
        *(f"{m}: {k}" for m in models for k in ("ratio", "flag")),
    ]
    assert (t["where"] == "Table II").all()
    for m in models:  # the ratio and the 15% flag are those of the values beside them
        q = t[m] / t["paper"]
        assert t[f"{m}: ratio"].tolist() == pytest.approx(q.tolist(), rel=1e-12)
        assert t[f"{m}: flag"].tolist() == [not abs(x - 1) <= 0.15 for x in q]
    for row, policy in [("TCP", "fair"), ("PS-P", "psp"), ("NC-DRF", "ncdrf"), ("DRF", "drf")]:
        mean, p95 = coflowsim_stats(fb_trace, policy, 20)
        assert t.loc[f"{row} mean", "CoflowSim"] == pytest.approx(mean, rel=1e-12)
        assert t.loc[f"{row} p95", "CoflowSim"] == pytest.approx(p95, rel=1e-12)
    assert t.loc["DRF mean", "paper"] == 3.36
    # realloc=coflow reaches the policies but not fair (CoflowSim's FAIR is per step)
    w = ck.load_trace(fb_trace).head(20)
    for row, policy, params in [("NC-DRF", "ncdrf", {"realloc": "coflow"}), ("TCP", "fair", {})]:
        s = ck.simulate(w, policy, params, progress=False).coflows["slowdown"]
        assert t.loc[f"{row} mean", "exact, realloc=coflow"] == pytest.approx(s.mean(), rel=1e-12)
    c = pd.read_csv(out / "claims_values.csv").set_index("claim")
    c = c.apply(pd.to_numeric, errors="coerce")  # orderings are True/False
    want = t.loc["PS-P mean", "CoflowSim"] / t.loc["NC-DRF mean", "CoflowSim"]
    assert c.loc["PS-P / NC-DRF, mean slowdown", "CoflowSim"] == pytest.approx(want, rel=1e-12)
    # Fig. 5 needs recorded samples: the exact models only
    assert np.isnan(c.loc["NC-DRF disparity, 95th percentile (Fig. 5a)", "CoflowSim"])
    assert not np.isnan(c.loc["NC-DRF disparity, 95th percentile (Fig. 5a)", "exact"])
    shown = pd.read_csv(out / "claims.csv").set_index("claim")
    cell = shown.loc["PS-P / NC-DRF, mean slowdown", "CoflowSim"]
    assert cell.endswith(("reproduced", "**off >15%**")), cell
    sens = pd.read_csv(out / "sensitivity_spare.csv").set_index("model")
    assert sens.loc["CoflowSim", "PS-P mean slowdown, spare=onepass"] == pytest.approx(
        t.loc["PS-P mean", "CoflowSim"], rel=1e-12
    )
    # the backfill table: each reading is its own run (NC-DRF without backfill, PS-P
    # over every active coflow), beside the defaults of Table II
    b = pd.read_csv(out / "sensitivity_backfill.csv").set_index(["model", "policy"])
    for policy, name, params in [
        ("ncdrf", "NC-DRF, no backfill", {"backfill_rounds": "0"}),
        ("psp", "PS-P, tenants=all", {"tenants": "all"}),
        ("ncdrf", "NC-DRF (backfill, the default)", None),
    ]:
        mean, p95 = coflowsim_stats(fb_trace, policy, 20, params)
        row = b.loc[("CoflowSim", name)]
        assert row["mean slowdown"] == pytest.approx(mean, rel=1e-12)
        assert row["mean / paper"] == pytest.approx(
            mean / 5.75 if policy == "ncdrf" else mean / 9.47
        )


def test_ncdrf_on_coflowsim_alone(fb_trace, tmp_path):
    out = tmp_path / "cs"
    r = reproduce(
        "ncdrf", "--out", str(out), "--coflows", "12", "--engine", "coflowsim", "--no-cache"
    )
    assert r.returncode == 0, r.stderr
    t = pd.read_csv(out / "table2_slowdown_values.csv")
    assert list(t.columns) == [
        "claim",
        "paper",
        "CoflowSim",
        "where",
        "CoflowSim: ratio",
        "CoflowSim: flag",
    ]
    assert not (out / "fig5a_disparity.csv").exists()  # needs the exact engine's samples
    report = (out / "report.md").read_text()
    assert "--engine coflowsim" in report and "only the exact engine" in report


def test_engine_is_refused_where_the_paper_did_not_use_coflowsim(tmp_path):
    r = reproduce("stream", "--out", str(tmp_path / "s"), "--engine", "coflowsim")
    assert r.returncode != 0
    assert "exact engine only" in r.stderr
    r = reproduce("ncdrf", "--out", str(tmp_path / "n"), "--engine", "warp")
    assert r.returncode != 0 and "unknown engine" in r.stderr


def test_coflex_table3_has_every_model(fb_trace, tmp_path):
    # the trace parts of the report, computed by the writer on 15 coflows
    out = tmp_path / "coflex"
    out.mkdir()
    opts = writer.Options(out=str(out), trace=fb_trace, coflows=15, workers=1)
    ctx = writer.Context(coflex.EXPERIMENT, opts, writer.select_models(coflex.EXPERIMENT, None))
    writer.simulate(ctx)
    parts = writer.Parts(str(out))
    for p in coflex.parts(ctx):
        if p.name.startswith(("table3", "sensitivity_psp", "fig6")):
            parts.compute(ctx, p)
    assert len(ctx.runs["exact"]["Coflex"].coflows) == 15
    t = pd.read_csv(tmp_path / "coflex" / "table3_slowdown_values.csv").set_index("claim")
    for row, policy, params in [
        ("Per-flow", "fair", None),
        ("Varys", "varys", None),
        ("Coflex", "coflex", {"alpha": "0.5"}),
        ("HUG", "hug", None),
    ]:
        mean, _ = coflowsim_stats(fb_trace, policy, 15, params)
        assert t.loc[f"{row} mean", "CoflowSim"] == pytest.approx(mean, rel=1e-12)
    assert (tmp_path / "coflex" / "fig6a_alpha.csv").exists()  # CoflowSim's, the paper's model
    assert (tmp_path / "coflex" / "fig6a_alpha_exact.csv").exists()
    c = pd.read_csv(tmp_path / "coflex" / "table3_claims_values.csv").set_index("claim")
    c = c.apply(pd.to_numeric, errors="coerce")
    want = t.loc["HUG mean", "exact"] / t.loc["Coflex mean", "exact"]
    assert c.loc["HUG / Coflex, mean slowdown", "exact"] == pytest.approx(want, rel=1e-12)
    # PS-P's readings under CoflowSim: the default row is Table III's, the others
    # their own runs, each over the paper's row
    ps = pd.read_csv(tmp_path / "coflex" / "sensitivity_psp.csv").set_index("PS-P reading")
    assert ps.loc["spare=onepass (the default)", "mean slowdown"] == pytest.approx(
        t.loc["PS-P mean", "CoflowSim"], rel=1e-12
    )
    mean, p95 = coflowsim_stats(fb_trace, "psp", 15, {"spare": "none", "tenants": "all"})
    assert ps.loc["tenants=all, spare=none", "mean slowdown"] == pytest.approx(mean, rel=1e-12)
    assert ps.loc["tenants=all, spare=none", "p95 / paper"] == pytest.approx(p95 / 20.73)


def test_mcs_batches_are_coflowsims_epochs():
    keys, jobs = mcs.plan("t.txt", 50, (), "coflowsim")
    by = dict(zip(keys, jobs, strict=True))
    j13 = by[("fig13", "aalo")]
    assert j13.engine == "coflowsim:epoch_s=10.24"
    assert not any(t.startswith("batch") for t in j13.workload.transforms)
    j15 = by[("fig15", 0.8, "mcs")]
    assert j15.engine == "coflowsim:epoch_s=1.024"
    assert j15.workload.transforms == ("poisson:load=0.8,seed=1",)
    keys, jobs = mcs.plan("t.txt", 50, (), "exact")
    by = dict(zip(keys, jobs, strict=True))
    assert by[("fig13", "aalo")].workload.transforms == (mcs.BATCH,)
    assert by[("fig13", "aalo")].engine == "exact"
