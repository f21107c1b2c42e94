"""benches/testbed_rates.py: assigned against achieved rates of a testbed run,
on a run directory written here and checked by hand."""

import json

import pytest
from conftest import load_bench


def write_run(d):
    """One SN flow (coflow 1, host 0 -> 1, 250 bytes) alive over [0, 0.3] s.
    Polls at 0, 0.1, 0.2 (a row of another coflow at 0 makes it a poll): the
    master assigns the flow nothing at 0, then 1000 B/s. The receiver had 50
    bytes at 0.15 s and all 250 at 0.3 s."""
    (d / "traffic-plan.json").write_text(
        json.dumps({"t0": 0, "hosts": [], "deadline_s": 9, "flows": [
            {"id": 0, "coflow": 1, "src": 0, "dst": 1, "port": 1, "bytes": 250, "start_s": 0.0}]})
    )  # fmt: skip
    (d / "coflows.csv").write_text("coflow_id,bin\n1,SN\n")
    (d / "flows.csv").write_text("flow,coflow,planned_s,start_s,late_s,end_s\n0,1,0,0,0,0.3\n")
    (d / "rates.csv").write_text(
        "time_s,coflow_id,slot,src,dst,rate_bytes_per_s\n"
        "0.0,2,9,3,4,500\n0.1,1,5,0,1,1000\n0.2,1,5,0,1,1000\n"
    )
    (d / "flow_marks.csv").write_text("flow,time_s,bytes\n0,0.0,0\n0,0.15,50\n0,0.3,250\n")


def test_assigned_and_achieved_by_hand(tmp_path):
    b = load_bench("testbed_rates")
    write_run(tmp_path)
    per_bin, age, skipped = b.table(b.load(str(tmp_path)))
    # Bytes at the interval edges 0, 0.1, 0.2, 0.3 (linear between marks):
    # 0, 50 * 0.1/0.15 = 33.33, 50 + 200 * 0.05/0.15 = 116.67, 250.
    # Assigned 0, 1000, 1000 over 0.1 s each: 200 bytes over the life.
    row = per_bin.iloc[0]
    assert row["bin"] == "SN" and row["flows"] == 1 and skipped == 0
    assert row["assigned over life / size (median)"] == pytest.approx(200 / 250)
    # While assigned: (83.33 + 133.33) / 200.
    assert row["achieved / assigned, while assigned"] == pytest.approx((250 - 100 / 3) / 200)
    assert row["share of bytes carried while assigned nothing"] == pytest.approx((100 / 3) / 250)
    # The rise at 0.1: the interval [0.1, 0.2) is 0 s after it (83.33 of 100),
    # [0.2, 0.3) is 0.1 s after it (133.33 of 100).
    got = {str(a): r for a, r in zip(age.age, age["achieved / assigned"], strict=True)}
    want = {"[0, 0.05) s": 250 / 300, "[0.1, 0.2) s": 400 / 300}
    assert got == {k: pytest.approx(v) for k, v in want.items()}
    assert list(age.intervals) == [1, 1]


def test_gzipped_files_read_the_same(tmp_path):
    import gzip

    b = load_bench("testbed_rates")
    write_run(tmp_path)
    plain = b.table(b.load(str(tmp_path)))[0]
    for name in ("rates.csv", "traffic-plan.json"):
        f = tmp_path / name
        (tmp_path / (name + ".gz")).write_bytes(gzip.compress(f.read_bytes()))
        f.unlink()
    assert b.table(b.load(str(tmp_path)))[0].equals(plain)


def test_a_run_without_samples_is_one_clear_error(tmp_path):
    b = load_bench("testbed_rates")
    write_run(tmp_path)
    (tmp_path / "rates.csv").unlink()
    with pytest.raises(SystemExit, match="no rates.csv .*--sample-ms"):
        b.load(str(tmp_path))


def test_marks_of_a_flow_that_sends_at_its_assigned_rates():
    import numpy as np

    b = load_bench("testbed_rates")
    # Assigned 0, then 1000 B/s from 0.1 to 0.3 s: 100 bytes by 0.2, 200 by 0.3.
    edges = np.array([0.0, 0.1, 0.2, 0.3])
    a = np.array([0.0, 1000.0, 1000.0])
    t, got = b.marks_at_assigned(edges, a, np.array([0.0, 50, 100, 150, 200, 250]))
    # 250 is never reached; 50 is reached half way through [0.1, 0.2).
    assert list(got) == [0, 50, 100, 150, 200]
    assert t == pytest.approx([0.0, 0.15, 0.2, 0.25, 0.3])
    # Interpolated, the 50 bytes between the first mark (the flow's start)
    # and the second spread over [0, 0.15): 33.33 bytes seem to go in
    # [0, 0.1), assigned nothing, and 66.67 of 100 in [0.1, 0.2).
    assert np.diff(np.interp(edges, t, got)) == pytest.approx([100 / 3, 200 / 3, 100])
    # Marks as coarse as the flow (0 and 200 bytes only): interpolated, the
    # step at 0.1 s is smeared over the whole span, and the interval right
    # after the rise seems to carry 2/3 of its assigned bytes.
    t, got = b.marks_at_assigned(edges, a, np.array([0.0, 200]))
    assert list(got) == [0, 200] and t == pytest.approx([0.0, 0.3])
    assert np.diff(np.interp(edges, t, got)) == pytest.approx([200 / 3] * 3)


def test_the_control_replaces_the_marks(tmp_path):
    b = load_bench("testbed_rates")
    write_run(tmp_path)
    # The real marks' levels are 0, 50 and 250; a flow at its assigned rates
    # reaches 50 at 0.15 s and never 250 (200 bytes assigned in all), so the
    # control's bytes at the edges 0, 0.1, 0.2, 0.3 are 0, 33.33, 50, 50:
    # 16.67 of 100 in [0.1, 0.2), 0 of 100 in [0.2, 0.3).
    _, age, _ = b.table(b.load(str(tmp_path)), control=True)
    got = {str(x): r for x, r in zip(age.age, age["achieved / assigned"], strict=True)}
    assert got == {"[0, 0.05) s": pytest.approx(50 / 3 / 100), "[0.1, 0.2) s": 0.0}


def test_trickle_room_counts_paused_flows_on_a_served_flows_links():
    import pandas as pd

    b = load_bench("testbed_rates")
    # Poll 0: coflow 1's flow 0 -> 1 is served; coflow 2 has paused flows
    # 0 -> 2 (on its uplink) and 3 -> 1, 4 -> 1 (on its downlink), and a
    # served flow 5 -> 6 that shares no link with them. Poll 0.1: nothing paused.
    rates = pd.DataFrame(
        [(0.0, 1, 0, 1, 100.0), (0.0, 2, 0, 2, 0.0), (0.0, 2, 3, 1, 0.0), (0.0, 2, 4, 1, 0.0),
         (0.0, 2, 5, 6, 50.0), (0.1, 1, 0, 1, 100.0)],
        columns=["time_s", "coflow_id", "src", "dst", "rate_bytes_per_s"],
    )  # fmt: skip
    coflows = pd.DataFrame({"bin": ["SN", "LW"]}, index=pd.Index([1, 2], name="coflow_id"))
    room = b.trickle_room(rates, coflows, 0.005).set_index("bin")
    # SN: the larger of 1 (uplink) and 2 (downlink) paused flows at 0.5%, then 0.
    assert list(room.loc["SN"]) == pytest.approx([0.005, 0.005, 0.01])
    assert list(room.loc["LW"]) == [0.0, 0.0, 0.0]
