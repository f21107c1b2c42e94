"""`coflowkit testbed emulate` at a small N: a real master process and emulated
agents over loopback, each host on its own 127.1.x.y source address."""

import csv
import subprocess
import sys

import pytest
from coflowkit._core import CoflowkitError
from coflowkit.runtime import scale


def test_host_addresses_are_distinct_loopback_addresses():
    assert scale.addr_of(0) == "127.1.0.0"
    assert scale.addr_of(256) == "127.1.1.0"
    assert scale.addr_of(65000) == "127.1.253.232"
    assert len({scale.addr_of(h) for h in range(65000)}) == 65000


def test_emulated_agents_are_scheduled_by_a_real_master(tmp_path):
    cfg = scale.Config(agents=20, flows_per_agent=2, coflows=5, interval_ms=50, rounds=10,
                       warmup=2)  # fmt: skip
    row = scale.run(cfg, str(tmp_path))
    # Every agent has a session at the end: none fell silent while the others
    # connected or while coflows were registered.
    assert row["agents_connected_end"] == 20
    assert row["rounds"] == 10 and 0 < row["round_median_ms"] <= row["round_max_ms"]
    # Closed loop: the master decided rates for the reported flows, and the
    # agents received them.
    assert row["decisions_received"] > 0 and row["master_flows_end"] > 0
    assert 0 < row["master_cpu_share"] and row["master_rss_mib"] > 10
    # 20 agents × 2 flows over 5 coflows: 8 flows per coflow.
    assert scale.Emulation(cfg, ("127.0.0.1", 1), ("127.0.0.1", 1), "").width == 8


def test_cli_writes_the_scale_table(tmp_path):
    out = tmp_path / "out"
    r = subprocess.run(
        [sys.executable, "-m", "coflowkit", "testbed", "emulate", "--agents", "8",
         "--flows-per-agent", "2", "--concurrent-coflows", "4", "--rounds", "5",
         "--interval-ms", "50", "--policy", "fair,aalo", "--out", str(out)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    rows = list(csv.DictReader(open(out / "scale.csv")))
    assert [(x["policy"], x["agents"]) for x in rows] == [("fair", "8"), ("aalo", "8")]
    assert "aalo      8 agents: round median" in r.stdout


def test_agents_beyond_the_descriptor_limit_are_refused_before_anything_starts():
    # No process may hold ten million descriptors (nr_open is at most 2^20):
    # the emulator says so, with the number it could run, instead of failing
    # half-way through connecting.
    with pytest.raises(CoflowkitError, match=r"10000000 agents need 10000256 descriptors"):
        scale.check_descriptors(10_000_000)
