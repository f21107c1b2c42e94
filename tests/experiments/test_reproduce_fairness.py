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
from coflowkit.experiments import coflex, mcs
from coflowkit.experiments.common import Output


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


def test_ncdrf_table2_has_both_engines(fb_trace, tmp_path):
    out = tmp_path / "ncdrf"
    r = reproduce("ncdrf", "--out", str(out), "--coflows", "20", "--no-cache")
    assert r.returncode == 0, r.stderr
    t = pd.read_csv(out / "table2_slowdown.csv").set_index("policy")
    for row, policy in [("TCP", "fair"), ("PS-P", "psp"), ("NC-DRF", "ncdrf"), ("DRF", "drf")]:
        mean, p95 = coflowsim_stats(fb_trace, policy, 20)
        assert t.loc[row, "CoflowSim mean"] == pytest.approx(mean, rel=1e-12)
        assert t.loc[row, "CoflowSim p95"] == pytest.approx(p95, rel=1e-12)
    assert t.loc["DRF", "paper mean"] == 3.36
    assert (out / "fig6_normalized_coflowsim.csv").exists()
    claims = pd.read_csv(out / "table2_claims.csv").set_index("claim")
    want = t.loc["PS-P", "CoflowSim mean"] / t.loc["NC-DRF", "CoflowSim mean"]
    got = claims.loc["PS-P / NC-DRF, mean slowdown (CoflowSim)", "coflowkit"]
    assert got == pytest.approx(want, rel=1e-12)


def test_ncdrf_on_coflowsim_alone(fb_trace, tmp_path):
    out = tmp_path / "cs"
    r = reproduce(
        "ncdrf", "--out", str(out), "--coflows", "12", "--engine", "coflowsim", "--no-cache"
    )
    assert r.returncode == 0, r.stderr
    t = pd.read_csv(out / "table2_slowdown.csv")
    assert not any(c.startswith("exact") for c in t.columns)
    assert not (out / "fig5a_disparity.csv").exists()  # needs the exact engine's samples
    report = (out / "report.md").read_text()
    assert "--engine coflowsim" in report and "only the exact engine" in report


def test_engine_is_refused_where_the_paper_did_not_use_coflowsim(tmp_path):
    r = reproduce("stream", "--out", str(tmp_path / "s"), "--engine", "coflowsim")
    assert r.returncode != 0
    assert "exact engine only" in r.stderr
    r = reproduce("ncdrf", "--out", str(tmp_path / "n"), "--engine", "warp")
    assert r.returncode != 0 and "unknown engine" in r.stderr


def test_coflex_table3_has_both_engines(fb_trace, tmp_path):
    o = Output(str(tmp_path / "coflex"), "t")
    coflex.trace_section(o, fb_trace, 15, 1, None)
    t = pd.read_csv(tmp_path / "coflex" / "table3_slowdown.csv").set_index("policy")
    for row, policy, params in [
        ("Per-flow", "fair", None),
        ("Varys", "varys", None),
        ("Coflex", "coflex", {"alpha": "0.5"}),
        ("HUG", "hug", None),
    ]:
        mean, _ = coflowsim_stats(fb_trace, policy, 15, params)
        assert t.loc[row, "CoflowSim mean"] == pytest.approx(mean, rel=1e-12)
    assert (tmp_path / "coflex" / "fig6a_alpha_coflowsim.csv").exists()


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
