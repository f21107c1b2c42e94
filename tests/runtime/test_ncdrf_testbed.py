"""`reproduce ncdrf-testbed` (NC-DRF Figs. 7-8 on the testbed), shrunk: 12 hosts, the
paper's three coflows with tiny flows and arrivals a tenth apart. Real TCP under the
master and agents; the report's tables come from the runs' own files."""

import pandas as pd
import pytest
from coflowkit._core import CoflowkitError
from coflowkit.experiments import common, ncdrf_testbed
from coflowkit.runtime import testbed


def test_the_micro_benchmark_runs_for_real_and_is_reported(tmp_path):
    out = tmp_path / "nt"
    try:
        ncdrf_testbed.run(
            str(out),
            policies=[("fair", "TCP"), ("ncdrf", "NC-DRF")],
            size_scale=0.004,
            time_scale=0.1,
        )
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
    report = (out / "report.md").read_text()
    assert "NC-DRF finishes all three coflows no later than TCP (Fig. 7)" in report
    assert "; simulated: " in report  # each Fig. 7 verdict on the simulation too
    # the run folders keep the results, not the run's TLS keys or per-host logs
    kept = {p.name for p in (out / "runs" / "ncdrf").iterdir()}
    assert kept == ncdrf_testbed.KEEP | {"sim"}, kept
    assert "most nearly equal progress" in report


def test_the_trace_options_are_refused(tmp_path):
    with pytest.raises(CoflowkitError, match="--coflows and --transform do not apply"):
        ncdrf_testbed.run(str(tmp_path / "x"), coflows=10)
