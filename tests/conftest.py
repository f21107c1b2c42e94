import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED_TRACE = ROOT.parent / "shared" / "traces" / "FB2010-1Hr-150-0.txt"

# The worked example of the foundation issue, in the Sincronia format (2 ports):
# coflow 1 at 0 ms sends 8 MiB 0->1, coflow 2 at 0 ms 2 MiB 1->1, coflow 3 at 16 ms 4 MiB 0->0.
EXAMPLE = "2 3\n1 0 1 1 1\n0 1 8\n2 0 1 1 1\n1 1 2\n3 16 1 1 1\n0 0 4\n"
EXAMPLE_CCTS = {
    "fair": [0.10175, 0.03125, 0.0625],
    "fifo": [0.0625, 0.078125, 0.07775],
    "ncf": [0.0625, 0.078125, 0.07775],
    "aalo": [0.0625, 0.078125, 0.07775],
    "varys": [0.109375, 0.015625, 0.03125],
    "sincronia": [0.109375, 0.015625, 0.03125],
    "scf": [0.109375, 0.015625, 0.03125],
    "tcf": [0.109375, 0.015625, 0.03125],
    "pfp": [0.109375, 0.015625, 0.03125],
    # One flow per link per coflow: NC-DRF's rates equal fair's at every event.
    "ncdrf": [0.10175, 0.03125, 0.0625],
    "psp": [0.10175, 0.03125, 0.0625],
    "drf": [0.10175, 0.03125, 0.0625],
    # Hand-computed in crates/coflowkit-sim/tests/hand_computed.rs.
    "hug": [0.10175, 0.03125, 0.0625],
    "coflex": [0.10575, 2 / 96, 4 / 96],
    "naive-tradeoff": [0.1955, 0.0625, 0.125],
    # Width 1 and under 10 MiB each: every coflow stays in mcs's first queue and
    # coda's first coflow queue, one flow each: FIFO, as aalo.
    "mcs": [0.0625, 0.078125, 0.07775],
    "coda": [0.0625, 0.078125, 0.07775],
    # Per-flow queues at 1, 4, 16 MiB (tests/test_no_prior.py walks through it).
    "pias": [0.10175, 0.023625, 0.0545],
    # No priority column: every flow in class 0, max-min fair inside it, as fair
    # (test_api.py gives the flows priorities).
    "spq": [0.10175, 0.03125, 0.0625],
    # Nobody reaches heavy_mb = 100 MiB: coflows in (arrival, id) order, as fifo.
    "baraat": [0.0625, 0.078125, 0.07775],
    # One receiver unit per coflow, m = 1 (W = 1), no relay or child bytes; with
    # K = 8, tau_0 = 10 MiB and n = 1 a unit leaves class 0 at
    # T* = (10 + sqrt(100 + 4 * 7/8 * 10)) / (2 * 7/8) = 12.35 MiB, above every
    # coflow (8, 2, 4 MiB): all in class 0, as fair.
    "stream": [0.10175, 0.03125, 0.0625],
}


@pytest.fixture
def example_path(tmp_path):
    p = tmp_path / "example.txt"
    p.write_text(EXAMPLE)
    return p


@pytest.fixture
def fb_trace():
    if not SHARED_TRACE.exists():
        pytest.fail(f"the Facebook trace is missing: expected it at {SHARED_TRACE}")
    return str(SHARED_TRACE)


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("COFLOWKIT_CACHE", str(tmp_path / "cache"))
    os.environ.setdefault("NO_COLOR", "1")


def build(rows, ports=None, **optional):
    """A workload from ``(coflow_id, flow_id, src, dst, bytes, start_s)`` rows;
    ``optional`` columns (arrival_s, weight, src_port, stage, ...) are per-row lists;
    ``ports`` puts it on a big switch of that many 1 Gbps ports."""
    from coflowkit import _core

    cols = list(zip(*rows))
    w = _core.workload_from_columns(
        "hand",
        [int(x) for x in cols[0]],
        [int(x) for x in cols[1]],
        [int(x) for x in cols[2]],
        [int(x) for x in cols[3]],
        [float(x) for x in cols[4]],
        [float(x) for x in cols[5]],
        **optional,
    )
    if ports is not None:
        w = w.with_fabric(f"bigswitch:ports={ports},gbps=1")
    return w
