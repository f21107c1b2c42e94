"""benches/switch_queues.py: tc's queue statistics parsed, and summarized by hand."""

import pandas as pd
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
