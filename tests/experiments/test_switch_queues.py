"""benches/switch_queues.py: tc's queue statistics parsed, and summarized by hand."""

import json

import pandas as pd
import pytest
from conftest import load_bench

TC = """qdisc htb 1: dev p0 root refcnt 3 r2q 10 default 0x1 direct_packets_stat 0 direct_qlen 1000
 Sent 1096 bytes 12 pkt (dropped 0, overlimits 0 requeues 0)
 backlog 0b 0p requeues 0
qdisc pfifo 10: dev p0 parent 1:1 limit 100p
 Sent 1006 bytes 11 pkt (dropped 7, overlimits 0 requeues 0)
 backlog 3028b 2p requeues 0
qdisc pfifo 10: dev ifb0 parent 1:1 limit 100p
 Sent 0 bytes 0 pkt (dropped 0, overlimits 0 requeues 0)
 backlog 0b 0p requeues 0
"""


def test_only_the_port_queues_are_read():
    b = load_bench("switch_queues")
    assert b.parse(TC) == [("p0", 3028, 2, 7), ("ifb0", 0, 0, 0)]


def test_summary_by_hand():
    b = load_bench("switch_queues")
    rows = [  # p0 holds 0, 4, 60, 0 packets at t = 0..3 (busy from 1 to 2); drops 1 -> 3
        (0.0, "p0", 0, 0, 1), (1.0, "p0", 0, 4, 1), (2.0, "p0", 0, 60, 3), (3.0, "p0", 0, 0, 3),
    ]  # fmt: skip
    q = pd.DataFrame(rows, columns=["t", "dev", "bytes", "pkts", "drops"])
    s = b.summary(q, first_s=0.5).set_index("dev").loc["p0"]
    assert s["mean pkts"] == 32 and s["samples over 50 pkts"] == 0.5 and s["drops"] == 2
    assert s["mean pkts, first 0.5 s"] == 4


def test_the_summary_keeps_the_replay_and_its_busy_window(tmp_path):
    b = load_bench("switch_queues")
    rows = []
    # p0 holds 0, 0, 60, 20, 0 packets at t = 1..5 and drops 2 then 3 more;
    # ifb0 holds 2 throughout. A sample at t = 9 is after the replay.
    for t, n, d in zip([1, 2, 3, 4, 5], [0, 0, 60, 20, 0], [0, 0, 2, 5, 5], strict=True):
        rows += [(t, "p0", 1500 * n, n, d), (t, "ifb0", 3000, 2, 0)]
    rows += [(9, "p0", 150000, 100, 9), (9, "ifb0", 0, 0, 0)]
    q = pd.DataFrame(rows, columns=["t", "dev", "bytes", "pkts", "drops"])
    (tmp_path / "traffic-go.json").write_text(json.dumps({"t0": 1.0}))
    pd.DataFrame({"flow": [0], "end_s": [4.0]}).to_csv(tmp_path / "flows.csv", index=False)
    span = b.window(str(tmp_path))
    assert span == (1.0, 5.0)
    s = b.summary(q, first_s=2.0, span=span).set_index("dev")
    assert list(s.index) == ["p0", "ifb0"]  # downlinks first
    # busy from t = 1 (ifb0) to 5: p0's mean (0 + 0 + 60 + 20 + 0) / 5 = 16,
    # one sample of five over 50, drops 5 - 0
    assert s.loc["p0", "mean pkts"] == pytest.approx(16.0)
    assert s.loc["p0", "samples over 50 pkts"] == pytest.approx(0.2)
    assert s.loc["p0", "drops"] == 5
    # first 2 s of the busy window (t = 1..3): p0 0, 0, 60
    assert s.loc["p0", "mean pkts, first 2 s"] == pytest.approx(20.0)
    assert s.loc["ifb0", "mean pkts"] == pytest.approx(2.0)
    # without the window the sample at t = 9 counts
    assert b.summary(q, first_s=2.0).set_index("dev").loc["p0", "drops"] == 9
    with pytest.raises(SystemExit, match="no sample with a packet queued"):
        b.summary(q, span=(20.0, 30.0))
