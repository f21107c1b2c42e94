"""Fixtures shared by the reproduction tests."""

import coflowkit as ck
import pandas as pd
import pytest
from coflowkit.experiments import common
from conftest import SHARED_TRACE  # noqa: E402


@pytest.fixture(scope="session")
def small_trace(tmp_path_factory):
    """The narrow coflows (at most 50 flows) among the first 150 of the Facebook trace,
    as a flow table: over a hundred coflows, few enough flows that every scenario
    loads and runs in well under a second."""
    if not SHARED_TRACE.exists():
        pytest.fail(f"the Facebook trace is missing: expected it at {SHARED_TRACE}")
    c = ck.load_trace(SHARED_TRACE).head(150).flow_columns()
    width = pd.Series(c["coflow_id"]).value_counts()
    rows = [
        (k, s, d, b, t)
        for k, s, d, b, t in zip(
            c["coflow_id"], c["src"], c["dst"], c["bytes"], c["start_s"], strict=True
        )
        if width[k] <= 50
    ]
    path = tmp_path_factory.mktemp("coda") / "fb-narrow.csv"
    ck.write_trace(common.flows_workload(rows, "fb-narrow", ports=150), path, "flows")
    return str(path)
