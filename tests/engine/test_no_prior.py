"""Scheduling without prior knowledge from Python: mcs's classes file, coda's
labelling sources and their precision/recall, and the pias worked example."""

import subprocess
import sys

import coflowkit as ck
import numpy as np
import pytest
from coflowkit import labels
from coflowkit._core import CoflowkitError, workload_from_columns
from conftest import EXAMPLE

MIB = 1048576.0


def build(rows):
    """(coflow_id, src, dst, MiB, start_s) rows -> workload (flow ids = row numbers)."""
    cols = list(zip(*rows, strict=True))
    return workload_from_columns(
        "hand",
        list(cols[0]),
        list(range(1, len(rows) + 1)),
        list(cols[1]),
        list(cols[2]),
        [x * MIB for x in cols[3]],
        list(cols[4]),
    )


def test_pias_worked_example():
    # EXAMPLE: C = 128 MiB/s; f1 8 MiB 0->1, f2 2 MiB 1->1 (both at 0), f3 4 MiB 0->0
    # at 16 ms. Flow queues: [0, 1), [1, 4), [4, 16) MiB...
    # 0: f1, f2 in queue 0 share down1, 64 each; both reach 1 MiB at 15.625 ms.
    # 15.625: both in queue 1, still 64 each. 16: f3 arrives in queue 0 and takes
    #   up0 (128), so f1 (up0) gets 0 and f2 gets down1 alone (128); sent 1.024 each.
    # 23.625: f2's last 0.976 MiB done -> CCT 0.023625. f3 (0.976 MiB sent) still
    #   queue 0 at 128. 23.8125: f3 reaches 1 MiB, queue 1 with f1: up0 shared, 64.
    # 70.3125: f1 reaches 4 MiB (queue 2); f3 (3.976 sent, queue 1) gets 128 and
    #   ends at 70.5 -> CCT 0.0545. f1's last 4 MiB at 128 end at 101.75 ms.
    r = ck.simulate(ck._core.parse_trace("example", EXAMPLE), "pias")
    assert r.coflows["cct_s"].tolist() == pytest.approx([0.10175, 0.023625, 0.0545])


def test_quality_by_hand():
    # Truth: A = {0,1,2,3}, B = {4,5}. Labels: x = {0,1,2}, y = {3,4,5}.
    truth = ["A"] * 4 + ["B"] * 2
    lab = [7, 7, 7, 9, 9, 9]
    q = labels.quality(truth, lab)
    # Precision: x is all A (3/3); y holds 2 B of 3 -> 2/3. Mean 5/6.
    # Recall: A's best cluster holds 3 of 4; B's holds 2 of 2. Mean 7/8.
    assert q.precision == pytest.approx(5 / 6)
    assert q.recall == pytest.approx(7 / 8)
    assert q.accuracy == pytest.approx((5 / 6 + 7 / 8) / 2)
    # Perfect, all-in-one and all-alone labellings.
    assert labels.quality(truth, truth) == labels.Quality(1.0, 1.0)
    one = labels.quality(truth, [0] * 6)
    assert (one.precision, one.recall) == (pytest.approx(4 / 6), 1.0)
    alone = labels.quality(truth, range(6))
    assert (alone.precision, alone.recall) == (1.0, pytest.approx((1 / 4 + 1 / 2) / 2))
    with pytest.raises(CoflowkitError, match="same length"):
        labels.quality([1, 2], [1])


def test_coda_labels_match_the_sources():
    # Three coflows of 4, 2 and 2 flows, arriving in that order.
    w = build([(1, 0, 1, 1, 0.0)] * 4 + [(2, 1, 2, 1, 1.0)] * 2 + [(3, 2, 0, 1, 2.0)] * 2)
    assert labels.coda_labels(w, "truth").tolist() == [0, 0, 0, 0, 1, 1, 2, 2]
    assert labels.coda_labels(w, "alone").tolist() == [3 + f for f in range(8)]
    assert labels.coda_labels(w, "one").tolist() == [0] * 8
    # Every flow mislabelled: pioneers go to the previous coflow (the first has
    # none), stragglers to the next (the last has none).
    assert labels.coda_labels(w, "pioneers", 1.0).tolist() == [0, 0, 0, 0, 0, 0, 1, 1]
    assert labels.coda_labels(w, "stragglers", 1.0).tolist() == [1, 1, 1, 1, 2, 2, 2, 2]
    q = labels.source_quality(w, "stragglers", 1.0)
    # Clusters: label 1 = {A x4}, label 2 = {B x2, C x2}: precision (1 + 1/2) / 2;
    # recall: A 4/4, B 2/2, C 2/2 -> 1.
    assert (q.precision, q.recall) == (pytest.approx(0.75), 1.0)
    assert labels.source_quality(w, "truth").accuracy == 1.0
    with pytest.raises(CoflowkitError, match="labels=dbscan is not one of"):
        labels.coda_labels(w, "dbscan")
    with pytest.raises(CoflowkitError, match="error_rate"):
        labels.coda_labels(w, "random", 1.5)


def test_injected_error_rate_lowers_accuracy_monotonically_on_the_trace(fb_trace):
    w = ck.load_trace(fb_trace).head(100)
    acc = [labels.source_quality(w, "random", e, seed=1).accuracy for e in (0, 0.05, 0.2)]
    assert acc[0] == 1.0 and acc[0] > acc[1] > acc[2]


def write_classes(tmp_path, text):
    p = tmp_path / "classes.txt"
    p.write_text(text)
    return str(p)


def test_mcs_classes_file_equals_explicit_parameters(tmp_path):
    # 30 coflows: widths 5-9 and 50-99 occur and contend, so these classes move CCTs.
    w = ck.synthetic("fb", seed=2).head(30)
    f = write_classes(
        tmp_path, "# from a test\n# T_i (MB) = 10,100\ndeltas = 5,50\npriorities = 1,2,4\n"
    )
    a = ck.simulate(w, "mcs", params={"classes": f}).coflows["cct_s"]
    b = ck.simulate(w, "mcs", params={"deltas": "5,50", "priorities": "1,2,4"}).coflows["cct_s"]
    assert a.tolist() == b.tolist()
    # And it differs from the defaults on this workload (the file is really read).
    c = ck.simulate(w, "mcs").coflows["cct_s"]
    assert a.tolist() != c.tolist()


@pytest.mark.parametrize(
    "text,params,message",
    [
        ("deltas = 5\n", {}, "needs both `deltas = ...` and `priorities = ...`"),
        ("deltas = 5\npriorities = 1,2\nqueues = 3\n", {}, ":3: unknown key 'queues'"),
        ("deltas 5\n", {}, ":1: expected `key = value`"),
        ("deltas = 5\ndeltas = 6\npriorities = 1,2\n", {}, ":2: 'deltas' given twice"),
        ("deltas = 50,5\npriorities = 1,2,3\n", {}, "deltas=50,5 must be increasing"),
        ("deltas = 5\npriorities = 1\n", {}, "must be 2 whole queue numbers in [1, 10]"),
        ("deltas = 5\npriorities = 1,2\n", {"deltas": "7"}, "either classes=FILE or deltas="),
    ],
)
def test_mcs_bad_classes_file(tmp_path, text, params, message):
    w = ck.synthetic("fb", seed=2).head(3)
    f = write_classes(tmp_path, text)
    with pytest.raises(CoflowkitError) as e:
        ck.simulate(w, "mcs", params={"classes": f, **params})
    assert message in str(e.value)


def test_mcs_missing_classes_file_is_one_cli_line(tmp_path, example_path):
    r = subprocess.run(
        [sys.executable, "-m", "coflowkit", "simulate", "--trace", str(example_path)]
        + ["--policy", "mcs", "--param", f"classes={tmp_path / 'none.txt'}"],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "mcs: classes=" in lines[0] and "none.txt" in lines[0]


def test_mcs_train_file_feeds_mcs(tmp_path, fb_trace):
    out = tmp_path / "mcs.txt"
    r = subprocess.run(
        [sys.executable, "-m", "coflowkit", "mcs-train", "--trace", fb_trace, "--out", str(out)],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    w = ck.load_trace(fb_trace).head(30)
    # SNCF on the trace finds the paper's Δ_i = 10^i, p_i = i: mcs's defaults.
    a = ck.simulate(w, "mcs", params={"classes": str(out)}).coflows["cct_s"]
    b = ck.simulate(w, "mcs").coflows["cct_s"]
    assert np.array_equal(a, b)


def test_coda_parameters_are_checked():
    w = ck.synthetic("fb", seed=2).head(3)
    with pytest.raises(CoflowkitError, match="coda: labels=x is not one of identify, truth"):
        ck.simulate(w, "coda", params={"labels": "x"})
    with pytest.raises(CoflowkitError, match="late_binding=maybe is not one of true, false"):
        ck.simulate(w, "coda", params={"late_binding": "maybe"})
