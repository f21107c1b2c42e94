"""benches/switch_backlog.py: the switch's port queues, parsed and summarized
by hand."""

import json

import pandas as pd
import pytest
from conftest import load_bench


def bench():
    return load_bench("switch_backlog")


def qdisc(dev, kind, qlen, backlog, limit=None):
    q = {"dev": dev, "kind": kind, "qlen": qlen, "backlog": backlog, "options": {}}
    if limit is not None:
        q["options"]["limit"] = limit
    return q


def test_only_the_ports_packet_queues_are_read():
    text = json.dumps(
        [
            qdisc("lo", "noqueue", 0, 0),
            qdisc("p0", "htb", 7, 9000),  # the shaper above the queue: not a queue
            qdisc("p0", "pfifo", 7, 9000, 100),
            qdisc("ifb3", "pfifo", 2, 3000, 100),
            qdisc("br0", "pfifo", 5, 5000, 100),  # not a port
        ]
    )
    rows = bench().parse(text, 12.5)
    assert rows == [(12.5, "p0", 7, 9000, 100), (12.5, "ifb3", 2, 3000, 100)]


def test_summary_per_direction_and_port_within_the_replay():
    b = bench()
    rows = []
    # p0 holds 0, 50, 95, 100 packets at t = 1..4; p1 always 10; ifb0 always 0.
    for t, n in zip([1, 2, 3, 4], [0, 50, 95, 100], strict=True):
        rows += [(t, "p0", n, 1500 * n, 100), (t, "p1", 10, 15000, 100), (t, "ifb0", 0, 0, 100)]
    rows.append((9, "p0", 100, 150000, 100))  # after the replay: left out
    df = pd.DataFrame(rows, columns=b.COLUMNS)
    s = b.summary(df, (1.0, 4.0)).set_index(["direction", "port"])
    # downlinks: 0, 10, 10, 10, 10, 50, 95, 100 -> median 10, 2 of 8 at 90+
    assert s.loc[("downlink", "all"), "samples"] == 8
    assert s.loc[("downlink", "all"), "median packets"] == 10
    assert s.loc[("downlink", "all"), "at 90% of the limit"] == "25%"
    # p0 alone: median of 0, 50, 95, 100 = 72.5; p90 = 95 + 0.7 x 5 = 98.5
    assert s.loc[("downlink", "p0"), "median packets"] == pytest.approx(72.5)
    assert s.loc[("downlink", "p0"), "p90 packets"] == pytest.approx(98.5)
    assert s.loc[("downlink", "p0"), "at 90% of the limit"] == "50%"
    assert s.loc[("uplink", "all"), "at 90% of the limit"] == "0%"
    with pytest.raises(SystemExit, match="no samples"):
        b.summary(df, (20.0, 30.0))


def test_the_window_is_the_replay(tmp_path):
    (tmp_path / "traffic-go.json").write_text(json.dumps({"t0": 1000.0}))
    pd.DataFrame({"flow": [0, 1], "end_s": [3.0, 7.5]}).to_csv(tmp_path / "flows.csv", index=False)
    assert bench().window(str(tmp_path)) == (1000.0, 1007.5)
