"""`coflowkit testbed emulate` at a small N: a real master process and emulated
agents over loopback, each host on its own 127.1.x.y source address."""

import csv
import os
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
    # 40 rounds (2 s): enough master CPU time to show in /proc's 10 ms ticks.
    cfg = scale.Config(agents=20, flows_per_agent=2, coflows=5, interval_ms=50, rounds=40,
                       warmup=2)  # fmt: skip
    row = scale.run(cfg, str(tmp_path))
    # Every agent has a session at the end: none fell silent while the others
    # connected or while coflows were registered.
    assert row["agents_connected_end"] == 20
    assert row["rounds"] == 40 and 0 < row["round_median_ms"] <= row["round_max_ms"]
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
    with pytest.raises(
        CoflowkitError, match=r"10000000 agents in 1 process\(es\) need 10000256 descriptors"
    ):
        scale.check_descriptors(10_000_000)


def test_a_short_soak_with_churn_loses_nothing(tmp_path):
    """Agents leave and come back as the same process during the run: every
    flow end they reported reached the master with its final bytes, no flow
    was lost, and every churned session reconnected."""
    cfg = scale.Config(agents=12, flows_per_agent=2, coflows=4, interval_ms=50, warmup=2,
                       master_nice=3)  # fmt: skip
    soak = scale.Soak(minutes=0.25, churn_every_s=2.0, churn_hosts=3, away_s=0.3)
    row = scale.run(cfg, str(tmp_path), soak=soak)
    assert row["churned_sessions"] >= 3 * 5 and row["agents_disconnected"] == 0
    assert row["reconnected_sessions"] == row["churned_sessions"]
    assert row["agent_flows_done"] > 0 and row["coflows_finished"] > 0
    assert row["master_flows_finished"] == row["agent_flows_done"]
    assert row["master_bytes_finished"] == row["agent_bytes_done"]
    assert row["master_lost_flows"] == 0
    assert row["rounds"] > 0 and row["rss_end_mib"] > 10
    assert row["master_nice"] == min(19, os.nice(0) + 3)  # the master's own, read from /proc
    assert row["backlog_timeline"] and all(n >= 0 for _, n in row["backlog_timeline"])
    assert row["rounds_seen"] == row["rounds_total"]  # no round missed by the polling
    # A round's own thread CPU and the collector's passes inside it fit in the
    # round (1 ms for the clocks' resolution).
    assert 0 <= row["round_max_cpu_ms"] <= row["round_max_ms"] + 1
    assert 0 <= row["round_max_gc_ms"] <= row["round_max_ms"] + 1
    assert row["gc_collections"] > 0 and row["gc_max_ms"] * 1e-3 <= row["gc_seconds"]


def test_soak_parameters_are_checked():
    with pytest.raises(CoflowkitError, match=r"--master-nice must be in -20..19, got 20"):
        scale.Config(agents=1, master_nice=20).check()
    with pytest.raises(CoflowkitError, match="--away-s must be positive"):
        scale.Soak(away_s=0).check()


def test_a_registration_the_busy_master_refuses_is_sent_again():
    """A master whose round does not come in time answers 503: the emulator
    registers again (as a job framework would) and counts it; another error
    stops the run with the coflow named."""
    import http.server
    import threading

    answers = [503, 503, 201, 400]

    class H(http.server.BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 - http.server's name
            self.rfile.read(int(self.headers["Content-Length"]))
            self.send_response(answers.pop(0))
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *a):
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        cfg = scale.Config(agents=4, coflows=1)
        emu = scale.Emulation(cfg, srv.server_address, ("127.0.0.1", 1), "")
        cid, flows = emu.new_coflow()
        emu.post(cid, flows)
        assert emu.register_retries == 2 and answers == [400]
        with pytest.raises(CoflowkitError, match=f"registration of coflow {cid}: HTTP 400"):
            emu.post(cid, flows)
    finally:
        srv.shutdown()
