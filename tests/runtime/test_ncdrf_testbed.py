"""`reproduce ncdrf-testbed` (NC-DRF Figs. 7-8 on the testbed), shrunk: 12 hosts, the
paper's three coflows with tiny flows and arrivals a tenth apart. Real TCP under the
master and agents; the report's tables come from the runs' own files."""

import pandas as pd
import pytest
from coflowkit._core import CoflowkitError
from coflowkit.experiments import common, ncdrf_testbed
from coflowkit.runtime import testbed


def run(out, **kw):
    from coflowkit import experiments

    return experiments.run("ncdrf-testbed", out=str(out), trace="unused", **kw)


def test_the_micro_benchmark_runs_for_real_and_is_reported(tmp_path):
    out = tmp_path / "nt"
    setup = ncdrf_testbed.Setup(
        policies=(("fair", "TCP"), ("ncdrf", "NC-DRF")), size_scale=0.004, time_scale=0.1
    )
    try:
        run(out, config=setup)
    finally:
        testbed.down()
    t = pd.read_csv(out / "fig7_cct.csv")
    assert list(t["policy"]) == ["TCP", "NC-DRF"]
    for c in "ABC":
        assert (t[f"{c} real"] > 0).all() and (t[f"{c} sim"] > 0).all()
    # the master's samples: every coflow, bytes that only grow, up to the coflow's
    # bytes (a connecting sender counts its SYN: one byte more per flow)
    w = ncdrf_testbed.scale_bytes(
        common.testbed_micro((0.0, 1.0, 2.0), "random", groups=2, self_flows=False), 0.004
    )
    cols = pd.DataFrame(w.flow_columns())
    total = cols.groupby("coflow_id")["bytes"].sum()
    width = cols.groupby("coflow_id").size()
    for policy in ("fair", "ncdrf"):
        p = pd.read_csv(out / "runs" / policy / "progress.csv")
        assert set(p["coflow_id"]) == {1, 2, 3}
        for k, part in p.groupby("coflow_id"):
            b = part.sort_values("time_s")["bytes_sent"].to_numpy()
            assert (b[1:] >= b[:-1]).all()
            assert b[-1] <= total[k] + width[k] + 1e-6
    # the claims: Fig. 7's ordering against TCP on the real runs and on their
    # simulation, each verdict the ordering of the CCTs in fig7_cct.csv
    claims = pd.read_csv(out / "claims.csv").set_index("claim")
    row = claims.loc["NC-DRF finishes all three coflows no later than TCP"]
    by = t.set_index("policy")
    for model, col in (("real", "real"), ("simulated", "sim")):
        holds = all(by.loc["NC-DRF", f"{c} {col}"] <= by.loc["TCP", f"{c} {col}"] for c in "ABC")
        assert row[model] == ("holds" if holds else "**fails**"), (model, row[model])
    assert any("most nearly equal progress" in c for c in claims.index)
    windows = pd.read_csv(out / "fig8_windows.csv")
    assert list(windows["policy"]) == ["TCP", "NC-DRF"]
    report = (out / "report.md").read_text()
    assert "## Provenance" in report and "fig8_progress.png" in report
    # the run folders keep the results, not the run's TLS keys or per-host logs
    kept = {p.name for p in (out / "runs" / "ncdrf").iterdir()}
    assert kept == ncdrf_testbed.KEEP | {"sim"}, kept


def test_the_trace_options_are_refused(tmp_path):
    with pytest.raises(CoflowkitError, match="--coflows and --transform do not apply"):
        run(tmp_path / "x", coflows=10)
    with pytest.raises(CoflowkitError, match="--coflows and --transform do not apply"):
        run(tmp_path / "y", transforms=("batch",))
