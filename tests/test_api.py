import math

import coflowkit as ck
import numpy as np
import pytest
from coflowkit import _core, metrics
from conftest import EXAMPLE_CCTS


def test_every_policy_reproduces_the_hand_computed_worked_example(example_path):
    w = ck.load_trace(example_path)
    assert len(EXAMPLE_CCTS) == len(ck.policies())  # one entry per registered name
    for policy, want in EXAMPLE_CCTS.items():
        r = ck.simulate(w, policy, check_invariants=True)
        assert r.coflows["cct_s"].tolist() == pytest.approx(want, abs=1e-9), policy
        assert r.extra["checks"] > 0


def test_every_policy_runs_on_a_fattree_that_adds_no_contention(example_path):
    # The worked example's ports on a k = 4 FatTree, spread placement: port 0 on
    # host 0 (pod 0), port 1 on host 8 (pod 2). Flows 0->1, 1->1, 0->0 contend on the
    # host links h0.up, h8.down exactly as on up0, down1 of the big switch; f1's
    # four switch links carry nothing else. So every policy gives the big switch's
    # CCTs, on 2- and 6-link paths.
    w = ck.load_trace(example_path).with_fabric("fattree:k=4,placement=spread")
    assert w.fabric.startswith("fattree:k=4,ports=2,gbps=1,placement=spread")
    for policy, want in EXAMPLE_CCTS.items():
        r = ck.simulate(w, policy, check_invariants=True)
        assert r.coflows["cct_s"].tolist() == pytest.approx(want, abs=1e-9), policy
        # Isolated CCTs follow the real paths: the bottleneck is one 1G host link.
        assert r.coflows["isolated_s"].tolist() == pytest.approx([1 / 16, 1 / 64, 1 / 32])


def test_spq_serves_the_priority_column_in_strict_priority(example_path):
    # The worked example with priorities 1, 0, 0 (coflows 1, 2, 3). f2 (class 0) has
    # down1 alone: done at 2/128 = 15.625 ms. f1 (class 1) gets 128 MiB/s from then
    # until f3 (class 0) takes up0 at 16 ms (f1 has 0.048 MiB); f3 ends at 16 + 31.25
    # = 47.25 ms; f1's 7.952 MiB then take 62.125 ms: done at 109.375 ms.
    w = ck.load_trace(example_path)
    c = w.flow_columns()
    cols = [c[k] for k in ("coflow_id", "flow_id", "src", "dst", "bytes", "start_s")]
    prio = _core.workload_from_columns(
        "prio", *cols, arrival_s=c["arrival_s"], priority=[1, 0, 0]
    ).with_fabric(w.fabric)
    r = ck.simulate(prio, "spq", check_invariants=True)
    assert r.coflows["cct_s"].tolist() == pytest.approx([0.109375, 0.015625, 0.03125], abs=1e-9)
    # Without priorities every flow is in class 0: fair's CCTs.
    assert ck.simulate(w, "spq").coflows["cct_s"].tolist() == pytest.approx(
        EXAMPLE_CCTS["fair"], abs=1e-9
    )


def test_coflow_table_columns_and_derived_values(example_path):
    r = ck.simulate(ck.load_trace(example_path), "fair")
    df = r.coflows
    assert list(df.columns) == metrics.COLUMNS
    # Coflow 1: 8 MiB alone on its bottleneck at 128 MiB/s -> isolated 1/16 s.
    assert df["isolated_s"].tolist() == pytest.approx([0.0625, 0.015625, 0.03125])
    assert df["slowdown"].tolist() == pytest.approx([0.10175 / 0.0625, 2.0, 2.0])
    assert df["bin"].tolist() == ["LN", "SN", "SN"]  # 8 MiB >= 5 MiB is long
    assert df["length_bytes"].tolist() == [8 * 2**20, 2 * 2**20, 4 * 2**20]


def test_summary_uses_linear_percentiles(example_path):
    r = ck.simulate(ck.load_trace(example_path), "fifo")
    cct = np.array(EXAMPLE_CCTS["fifo"])
    s = r.summary["all"]["cct_s"]
    assert s["mean"] == pytest.approx(cct.mean())
    # Linear interpolation between 0.07775 and 0.078125 for p95 of 3 values.
    assert s["p95"] == pytest.approx(0.07775 + 0.9 * (0.078125 - 0.07775))
    assert s["median"] == pytest.approx(0.07775)
    assert r.summary["SN"]["coflows"] == 2 and r.summary["LW"]["coflows"] == 0
    assert math.isnan(r.summary["LW"]["cct_s"]["mean"])


def test_normalized_cct_mean_of_ratios_and_ratio_of_means(example_path):
    w = ck.load_trace(example_path)
    a = ck.simulate(w, "varys").coflows
    b = ck.simulate(w, "fair").coflows
    n = metrics.normalized(a, b)["all"]
    va, vf = np.array(EXAMPLE_CCTS["varys"]), np.array(EXAMPLE_CCTS["fair"])
    assert n["mean_of_ratios"] == pytest.approx(np.mean(va / vf))
    assert n["ratio_of_means"] == pytest.approx(va.mean() / vf.mean())


def test_fabric_capacity_is_an_engine_option(example_path):
    w = ck.load_trace(example_path)
    slow = ck.simulate(w, "fifo").coflows["cct_s"].to_numpy()
    fast = ck.simulate(w, "fifo", fabric="bigswitch:gbps=2").coflows["cct_s"].to_numpy()
    # Coflow 1 is alone at first, so twice the capacity halves its CCT exactly.
    assert fast[0] == pytest.approx(slow[0] / 2)
    with pytest.raises(ck.CoflowkitError, match="gbps must be > 0"):
        ck.simulate(w, "fifo", fabric="bigswitch:gbps=0")


def test_policy_parameters_are_validated(example_path):
    w = ck.load_trace(example_path)
    with pytest.raises(ck.CoflowkitError, match="unknown policy 'nope'; valid policies: fair"):
        ck.simulate(w, "nope")
    with pytest.raises(ck.CoflowkitError, match="has no parameter 'k'; valid parameters: queues"):
        ck.simulate(w, "aalo", params={"k": 1})
    r = ck.simulate(w, "varys", params={"ordering": "static"})
    assert r.params == {"ordering": "static"}


def test_formats_round_trip_exactly(tmp_path, example_path):
    w = ck.load_trace(example_path)
    base = ck.simulate(w, "fair").coflows["cct_s"].tolist()
    for fmt, name in [("sincronia", "a.txt"), ("flows", "a.csv"), ("parquet", "a.parquet")]:
        p = tmp_path / name
        ck.write_trace(w, p, fmt)
        v = ck.load_trace(p)
        assert v.num_flows == w.num_flows
        assert ck.simulate(v, "fair").coflows["cct_s"].tolist() == base


def test_benchmark_format_round_trip(tmp_path):
    p = tmp_path / "b.txt"
    p.write_text("3 2\n1 0 2 0 1 2 1:3 2:1\n2 5 1 2 1 0:2\n")
    w = ck.load_trace(p)
    assert w.num_flows == 5
    cols = w.flow_columns()
    # Mapper-major: (0->1, 0->2, 1->1, 1->2), each reducer's MB split over 2 mappers.
    assert list(zip(cols["src"][:4], cols["dst"][:4], strict=True)) == [
        (0, 1),
        (0, 2),
        (1, 1),
        (1, 2),
    ]
    assert cols["bytes"][:4] == [1.5 * 2**20, 0.5 * 2**20, 1.5 * 2**20, 0.5 * 2**20]
    q = tmp_path / "c.txt"
    ck.write_trace(w, q, "benchmark")
    assert q.read_text() == "3 2\n1 0 2 0 1 2 1:3 2:1\n2 5 1 2 1 0:2\n"


def test_head_keeps_the_first_coflows(example_path):
    w = ck.load_trace(example_path)
    h = w.head(2)
    assert h.num_coflows == 2 and h.num_flows == 2
    with pytest.raises(ck.CoflowkitError):
        w.head(0)


def test_synthetic_is_seeded():
    a = ck.synthetic("fb", 3).coflow_columns()
    b = ck.synthetic("fb", 3).coflow_columns()
    c = ck.synthetic("fb", 4).coflow_columns()
    assert a == b and a != c
    assert len(a["coflow_id"]) == 526
    with pytest.raises(ck.CoflowkitError, match="unknown synthetic workload"):
        ck.synthetic("google")


def test_progress_callback_sees_every_coflow_finish_and_the_end_time(example_path):
    # The worked example's three coflows: the engine reports (finished, total, now)
    # as coflows finish; the last report is all three at the last finish time.
    w = ck.load_trace(str(example_path))
    calls = []
    r = ck.simulate(w, "fifo", progress=lambda done, total, now: calls.append((done, total, now)))
    assert calls and calls[-1][:2] == (3, 3)
    assert calls[-1][2] == pytest.approx(r.coflows["finish_s"].max())
    assert [c[0] for c in calls] == sorted(c[0] for c in calls)
    assert all(c[1] == 3 for c in calls)
    assert r.coflows["cct_s"].tolist() == pytest.approx(EXAMPLE_CCTS["fifo"])
