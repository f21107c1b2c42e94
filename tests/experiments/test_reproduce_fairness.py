"""`reproduce ncdrf` and `reproduce coflex` on a few coflows: the CoflowSim columns
beside the paper equal the slowdowns of runs under `--engine coflowsim`, and
policies without a CoflowSim version are left blank rather than guessed."""

import subprocess
import sys

import coflowkit as ck
import numpy as np
import pandas as pd
import pytest
from coflowkit.experiments import coflex
from coflowkit.experiments.common import Output


def coflowsim_slowdown(trace, policy, first):
    w = ck.load_trace(trace).head(first)
    s = ck.simulate(w, policy, engine="coflowsim", progress=False).coflows["slowdown"]
    return float(s.mean()), float(np.percentile(s, 95))


def test_ncdrf_table2_has_coflowsims_column(fb_trace, tmp_path):
    out = tmp_path / "ncdrf"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "coflowkit",
            "reproduce",
            "ncdrf",
            "--out",
            str(out),
            "--coflows",
            "20",
        ],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    t = pd.read_csv(out / "table2_slowdown.csv").set_index("policy")
    for row, policy in [("TCP", "fair"), ("Aalo", "aalo")]:
        mean, p95 = coflowsim_slowdown(fb_trace, policy, 20)
        assert t.loc[row, "CoflowSim mean"] == pytest.approx(mean, rel=1e-12)
        assert t.loc[row, "CoflowSim p95"] == pytest.approx(p95, rel=1e-12)
    for row in ["PS-P", "NC-DRF", "DRF"]:
        assert np.isnan(t.loc[row, "CoflowSim mean"])


def test_coflex_table3_has_coflowsims_column(fb_trace, tmp_path):
    o = Output(str(tmp_path / "coflex"), "t")
    coflex.trace_section(o, fb_trace, 15, 1, None)
    t = pd.read_csv(tmp_path / "coflex" / "table3_slowdown.csv").set_index("policy")
    for row, policy in [("Per-flow", "fair"), ("Varys", "varys")]:
        mean, _ = coflowsim_slowdown(fb_trace, policy, 15)
        assert t.loc[row, "CoflowSim mean"] == pytest.approx(mean, rel=1e-12)
    assert np.isnan(t.loc["Coflex", "CoflowSim mean"])
