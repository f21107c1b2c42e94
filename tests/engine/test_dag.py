"""Multi-stage coflows: the stage and priority columns (CSV, Parquet, transforms)
and the ``dag`` transform, with hand-computed flow tables and CCTs."""

import subprocess
import sys

import coflowkit as ck
import pandas as pd
import pyarrow.parquet as pq
import pytest
from coflowkit import transforms
from coflowkit._core import CoflowkitError
from conftest import build

MIB = 1_048_576.0
BARRIER = 1e-6


def table(w):
    """Rows of the flow table as dicts, by flow id."""
    c = w.flow_columns()
    return {fid: {k: c[k][i] for k in c} for i, fid in enumerate(c["flow_id"])}


# --------------------------------------------------------------------------------
# stage and priority columns: CSV and Parquet


def staged():
    # Partial columns: None where a flow has no stage or priority.
    rows = [(1, 1, 0, 1, MIB, 0.0), (1, 2, 1, 2, MIB, 0.0), (2, 3, 2, 0, 2 * MIB, 1.0)]
    return build(rows, ports=3, stage=[2, 1, None], priority=[None, 0, 7], tenant=["a", None, "b"])


@pytest.mark.parametrize("fmt,name", [("flows", "w.csv"), ("parquet", "w.parquet")])
def test_stage_and_priority_round_trip(tmp_path, fmt, name):
    w = staged()
    p = tmp_path / name
    ck.write_trace(w, p, fmt)
    v = ck.load_trace(p)
    c = v.flow_columns()
    assert c["stage"] == [2, 1, None]
    assert c["priority"] == [None, 0, 7]
    assert c == w.flow_columns()


def test_parquet_stores_stage_and_priority_as_nullable_integers(tmp_path):
    p = tmp_path / "w.parquet"
    ck.write_trace(staged(), p, "parquet")
    t = pq.read_table(p)
    assert str(t.schema.field("stage").type) == "uint32"
    assert str(t.schema.field("priority").type) == "uint32"
    assert t.column("stage").to_pylist() == [2, 1, None]
    assert t.column("priority").to_pylist() == [None, 0, 7]
    # Without stages or priorities, no such columns.
    q = tmp_path / "plain.parquet"
    ck.write_trace(build([(1, 1, 0, 1, MIB, 0.0)]), q, "parquet")
    assert "stage" not in pq.read_table(q).column_names


def test_hand_written_csv_and_parquet_with_stage_and_priority(tmp_path):
    csv = tmp_path / "f.csv"
    csv.write_text(
        "coflow_id,flow_id,src,dst,bytes,start_s,stage,priority\n"
        "1,1,0,1,100,0,3,\n"
        "1,2,1,0,100,0,,2\n"
    )
    c = ck.load_trace(csv).flow_columns()
    assert c["stage"] == [3, None] and c["priority"] == [None, 2]
    # Floats with NaN (as pandas writes a column with gaps) are read as whole numbers.
    df = pd.DataFrame(
        {
            "coflow_id": [1, 1],
            "flow_id": [1, 2],
            "src": [0, 1],
            "dst": [1, 0],
            "bytes": [100.0, 100.0],
            "start_s": [0.0, 0.0],
            "stage": [3.0, float("nan")],
            "priority": [float("nan"), 2.0],
        }
    )
    pqf = tmp_path / "f.parquet"
    df.to_parquet(pqf)
    c = ck.load_trace(pqf).flow_columns()
    assert c["stage"] == [3, None] and c["priority"] == [None, 2]


@pytest.mark.parametrize(
    "column,values,message",
    [
        ("stage", [1, -1], "row 2: stage: expected a whole number >= 0, got -1"),
        ("priority", [0.5, 1.0], "row 1: priority: expected a whole number >= 0, got 0.5"),
    ],
)
def test_parquet_bad_stage_or_priority_names_row_and_column(tmp_path, column, values, message):
    df = pd.DataFrame(
        {
            "coflow_id": [1, 1],
            "flow_id": [1, 2],
            "src": [0, 1],
            "dst": [1, 0],
            "bytes": [100.0, 100.0],
            "start_s": [0.0, 0.0],
            column: values,
        }
    )
    p = tmp_path / "bad.parquet"
    df.to_parquet(p)
    with pytest.raises(CoflowkitError, match=f"bad.parquet: {message}"):
        ck.load_trace(p)


# --------------------------------------------------------------------------------
# the dag transform on a hand-built coflow


def two_flows():
    """Coflow 7 arriving at 0.5 s on 4 ports at 1 Gbps (128 MiB/s): flow 1 0->1,
    1 MiB, starting at 0.5; flow 2 2->3, 2 MiB, starting at 0.75."""
    rows = [(7, 1, 0, 1, MIB, 0.5), (7, 2, 2, 3, 2 * MIB, 0.75)]
    return build(rows, ports=4, arrival_s=[0.5, 0.5], priority=[3, 1], tenant=["t", "u"])


# Rotation j*P//S for P = 4 ports, S = 6 stages: 0, 0, 1, 2, 2, 3. Flow ids: stage j's
# copy of flow f is j*3 + f (3 = largest id + 1); barriers from 6*3 = 18. The stage
# column is the sub-coflow's number j + 1; a barrier is in its parent's stage.
TPCDS = {
    # id: (src, dst, bytes, start_s, stage, depends_on)
    1: (0, 1, MIB, 0.5, 1, []),  # scan_a, j=0
    2: (2, 3, 2 * MIB, 0.75, 1, []),
    4: (0, 1, MIB, 0.5, 2, []),  # scan_b, j=1
    5: (2, 3, 2 * MIB, 0.75, 2, []),
    7: (1, 2, MIB, 0.5, 3, []),  # scan_c, j=2, +1
    8: (3, 0, 2 * MIB, 0.75, 3, []),
    10: (2, 3, MIB, 0.5, 4, [18]),  # join1, j=3, +2
    11: (0, 1, 2 * MIB, 0.5, 4, [18]),
    13: (2, 3, MIB, 0.5, 5, [19]),  # join2, j=4, +2
    14: (0, 1, 2 * MIB, 0.5, 5, [19]),
    16: (3, 0, MIB, 0.5, 6, [20]),  # agg, j=5, +3
    17: (1, 2, 2 * MIB, 0.5, 6, [20]),
    18: (2, 3, BARRIER, 0.5, 4, [1, 2, 4, 5]),  # join1 waits for scan_a, scan_b
    19: (2, 3, BARRIER, 0.5, 5, [7, 8, 10, 11]),  # join2 waits for join1, scan_c
    20: (3, 0, BARRIER, 0.5, 6, [13, 14]),  # agg waits for join2
}

TAO = {
    1: (0, 1, MIB, 0.5, 1, []),  # db1, j=0
    2: (2, 3, 2 * MIB, 0.75, 1, []),
    4: (0, 1, MIB, 0.5, 2, []),  # db2, j=1
    5: (2, 3, 2 * MIB, 0.75, 2, []),
    7: (1, 2, MIB, 0.5, 3, [18]),  # leader, j=2, +1
    8: (3, 0, 2 * MIB, 0.5, 3, [18]),
    10: (2, 3, MIB, 0.5, 4, [19]),  # follower1, j=3, +2
    11: (0, 1, 2 * MIB, 0.5, 4, [19]),
    13: (2, 3, MIB, 0.5, 5, [20]),  # follower2, j=4, +2
    14: (0, 1, 2 * MIB, 0.5, 5, [20]),
    16: (3, 0, MIB, 0.5, 6, [21]),  # web, j=5, +3
    17: (1, 2, 2 * MIB, 0.5, 6, [21]),
    18: (1, 2, BARRIER, 0.5, 3, [1, 2, 4, 5]),  # leader waits for db1, db2
    19: (2, 3, BARRIER, 0.5, 4, [7, 8]),  # follower1 waits for the leader
    20: (2, 3, BARRIER, 0.5, 5, [7, 8]),  # follower2 waits for the leader
    21: (3, 0, BARRIER, 0.5, 6, [10, 11, 13, 14]),  # web waits for both followers
}


@pytest.mark.parametrize("shape,want", [("tpcds", TPCDS), ("tao", TAO)])
def test_dag_flow_table_by_hand(shape, want):
    w = two_flows()
    v = transforms.apply(w, "dag", shape=shape)
    got = table(v)
    assert v.num_flows == len(want) == 6 * 2 + (3 if shape == "tpcds" else 4)
    assert list(got) == sorted(want)  # ids ascending: stage blocks, then barriers
    for fid, (src, dst, size, start, stage, deps) in want.items():
        f = got[fid]
        assert (f["src"], f["dst"], f["bytes"], f["start_s"]) == (src, dst, size, start), fid
        assert f["stage"] == stage, fid
        assert sorted(f["depends_on"]) == deps, fid
        assert (f["coflow_id"], f["arrival_s"]) == (7, 0.5)
    # Priorities and tenants are copied from the original flow (id mod 3 = 1: flow 1,
    # priority 3, tenant t; 2: flow 2, 1, u). A barrier takes those of its path flow,
    # the parent's first flow (a copy of flow 1), and has no ports.
    copies = [f for f in got.values() if f["bytes"] > BARRIER]
    barriers = [f for f in got.values() if f["bytes"] == BARRIER]
    for f in copies:
        assert (f["priority"], f["tenant"]) == ((3, "t") if f["flow_id"] % 3 == 1 else (1, "u"))
    assert [(f["priority"], f["tenant"], f["src_port"]) for f in barriers] == [
        (3, "t", None)
    ] * len(barriers)
    # Bytes: 6 copies of the 3 MiB coflow, plus 1e-6 B per barrier.
    assert sum(f["bytes"] for f in copies) == 6 * 3 * MIB
    assert len(barriers) == len(want) - 12
    assert v.num_coflows == 1 and v.fabric == w.fabric
    assert v.source == f"hand | dag:shape={shape}"


@pytest.mark.parametrize(
    "shape,cct",
    [
        # Relative to the arrival, 128 MiB/s links. Leaves: flows 1, 4 share 0->1
        # (64 MiB/s) and end at 1/64; flows 2, 5 (from 0.25) share 2->3 and end at
        # 0.25 + 2/64 = 0.28125; flow 7 ends at 1/128, flow 8 at 0.25 + 2/128.
        # tpcds: join1 (2 MiB on 0->1) ends at 0.28125 + 1/64 = 0.296875; join2
        # then (scan_c is done) at 0.3125; agg at 0.328125.
        ("tpcds", 0.328125),
        # tao: the leader (2 MiB 3->0) ends at 0.296875; the followers share 2->3
        # and 0->1 (2 MiB each at 64 MiB/s) until 0.328125; web at 0.34375.
        ("tao", 0.34375),
    ],
)
def test_dag_cct_by_hand(shape, cct):
    r = ck.simulate(transforms.apply(two_flows(), "dag", shape=shape), "fair")
    assert r.coflows["cct_s"].tolist() == pytest.approx([cct], abs=1e-9)


def one_flow(ports):
    return build([(1, 1, 0, 1, MIB, 0.0)], ports=ports)


@pytest.mark.parametrize("policy", ["fair", "fifo", "varys", "aalo", "spq", "baraat", "stream"])
@pytest.mark.parametrize("shape", ["tpcds", "tao"])
def test_dag_cct_is_the_critical_path_when_stages_use_their_own_links(shape, policy):
    # 6 ports: stage j is the flow j -> j+1 (mod 6), every stage on its own links,
    # 1/128 s each. Both shapes are 4 stages deep (scan_a, join1, join2, agg; db1,
    # leader, follower1, web): CCT 4/128.
    r = ck.simulate(transforms.apply(one_flow(6), "dag", shape=shape), policy)
    assert r.coflows["cct_s"].tolist() == pytest.approx([4 / 128], abs=1e-9)


@pytest.mark.parametrize("shape", ["tpcds", "tao"])
def test_dag_cct_on_one_port_pair(shape):
    # 2 ports: rotations 0, 0, 0, 1, 1, 1; every stage on the pair 0->1 or 1->0.
    # tpcds: the 3 scans share 0->1 (3/128), then join1, join2, agg one after another
    # (1/128 each): 6/128. tao: db1 and db2 share 0->1 (2/128), the leader (3/128),
    # the two followers share 1->0 (5/128), web (6/128).
    v = transforms.apply(one_flow(2), "dag", shape=shape)
    c = v.flow_columns()
    assert list(zip(c["src"], c["dst"], strict=True))[:6] == [(0, 1)] * 3 + [(1, 0)] * 3
    r = ck.simulate(v, "fair")
    assert r.coflows["cct_s"].tolist() == pytest.approx([6 / 128], abs=1e-9)


def test_dag_several_coflows_ids_arrivals_and_offsets():
    # Coflow 5 at 1.0 (flow 10, start offset 0.2); coflow 3 at 2.0 (flows 4 and 12,
    # offsets 0 and 0.5). B = 13: copies j*13 + f; barriers from 78, coflow 5 first
    # (it arrives first).
    rows = [(5, 10, 0, 1, MIB, 1.2), (3, 4, 1, 0, MIB, 2.0), (3, 12, 2, 3, MIB, 2.5)]
    w = build(rows, ports=4, arrival_s=[1.0, 2.0, 2.0], weight=[2.0, 1.0, 1.0])
    v = transforms.apply(w, "dag:shape=tpcds")
    c = v.flow_columns()
    assert v.num_coflows == 2 and v.num_flows == 6 * 3 + 2 * 3
    assert len(set(c["flow_id"])) == v.num_flows
    ids5 = [f for f, k in zip(c["flow_id"], c["coflow_id"], strict=True) if k == 5]
    ids3 = [f for f, k in zip(c["flow_id"], c["coflow_id"], strict=True) if k == 3]
    assert ids5 == [10, 23, 36, 49, 62, 75, 78, 79, 80]
    assert ids3 == [4, 12, 17, 25, 30, 38, 43, 51, 56, 64, 69, 77, 81, 82, 83]
    got = table(v)
    # Stages are numbered 1..6 within each coflow; barriers in join1, join2, agg.
    assert [got[f]["stage"] for f in ids5] == [1, 2, 3, 4, 5, 6, 4, 5, 6]
    assert [got[f]["stage"] for f in ids3] == [1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 4, 5, 6]
    # Leaves (scans, j = 0..2) keep their start times; the others start at arrival.
    assert [got[f]["start_s"] for f in (10, 23, 36, 49, 62, 75)] == [1.2] * 3 + [1.0] * 3
    assert [got[f]["start_s"] for f in (4, 12, 30, 38, 43, 51)] == [2.0, 2.5, 2.0, 2.5, 2.0, 2.0]
    arrivals = dict(
        zip(v.coflow_columns()["coflow_id"], v.coflow_columns()["arrival_s"], strict=True)
    )
    assert arrivals == {5: 1.0, 3: 2.0}
    assert {got[f]["weight"] for f in ids5} == {2.0}
    # Each coflow's barriers wait for its own flows only.
    assert sorted(got[81]["depends_on"]) == [4, 12, 17, 25]
    assert sorted(got[78]["depends_on"]) == [10, 23]
    size = dict(zip(v.coflow_columns()["coflow_id"], v.coflow_columns()["size_bytes"], strict=True))
    assert size[5] == pytest.approx(6 * MIB + 3 * BARRIER)
    assert size[3] == pytest.approx(12 * MIB + 3 * BARRIER)


def test_dag_is_deterministic_and_composes():
    w = build([(1, 1, 0, 1, MIB, 0.0), (2, 2, 1, 0, MIB, 3.0)], ports=2)
    a = transforms.apply(w, "dag:shape=tao")
    assert a.flow_columns() == transforms.apply(w, "dag:shape=tao").flow_columns()
    # Later transforms carry the stages and the dependencies.
    b = transforms.apply_all(w, ["dag:shape=tao", "batch:interval_s=10,spread=instant"])
    assert b.flow_columns()["stage"] == a.flow_columns()["stage"]
    assert b.flow_columns()["depends_on"] == a.flow_columns()["depends_on"]
    assert set(b.flow_columns()["arrival_s"]) == {10.0}
    assert a.source == "hand | dag:shape=tao"


def test_dag_round_trips_through_csv_and_parquet(tmp_path):
    v = transforms.apply(two_flows(), "dag:shape=tpcds")
    base = ck.simulate(v, "fair").coflows["cct_s"].tolist()
    for fmt, name in [("flows", "d.csv"), ("parquet", "d.parquet")]:
        p = tmp_path / name
        ck.write_trace(v, p, fmt)
        u = ck.load_trace(p)
        assert u.flow_columns() == v.flow_columns()
        assert ck.simulate(u, "fair").coflows["cct_s"].tolist() == base


def test_dag_refuses_coflows_with_dependencies():
    rows = [(1, 1, 0, 1, MIB, 0.0), (4, 2, 1, 0, MIB, 0.0), (4, 3, 1, 0, MIB, 0.0)]
    w = build(rows, ports=2, depends_on=[[], [], [2]])
    with pytest.raises(CoflowkitError) as e:
        transforms.apply(w, "dag:shape=tpcds")
    assert str(e.value) == (
        "transform dag: coflow 4 already has dependencies (flow 3 waits for flow 2); "
        "dag needs coflows without dependencies"
    )
    # Hence dag twice is refused too.
    once = transforms.apply(one_flow(2), "dag:shape=tao")
    with pytest.raises(CoflowkitError, match="transform dag: coflow 1 already has dependencies"):
        transforms.apply(once, "dag:shape=tao")


@pytest.mark.parametrize(
    "spec,message",
    [
        ("dag", "transform dag: missing required parameter shape"),
        ("dag:shape=star", "transform dag: shape must be one of tpcds, tao, got 'star'"),
        ("dag:shape=tao,seed=1", "transform dag: unknown parameter 'seed'; valid parameters"),
    ],
)
def test_dag_bad_parameters(spec, message):
    with pytest.raises(CoflowkitError) as e:
        transforms.apply(one_flow(2), spec)
    assert message in str(e.value)


def test_cli_lists_dag_with_its_shapes():
    out = subprocess.run(
        [sys.executable, "-m", "coflowkit", "transforms"], capture_output=True, text=True
    ).stdout
    assert "\ndag: " in out
    assert "shape (required)" in out and "tpcds|tao" in out


# --------------------------------------------------------------------------------
# the Facebook trace


def test_fb_trace_dag_tpcds(fb_trace):
    # 526 coflows, 706,397 flows: 6 copies of each flow, 3 barriers per coflow.
    w = ck.load_trace(fb_trace)
    v = transforms.apply(w, "dag:shape=tpcds")
    c = v.flow_columns()
    assert v.num_coflows == w.num_coflows == 526
    assert v.num_flows == 6 * 706_397 + 3 * 526
    assert len(set(c["flow_id"])) == v.num_flows
    assert sum(c["bytes"]) == pytest.approx(6 * sum(w.flow_columns()["bytes"]), rel=1e-12)
    assert sorted(set(c["stage"])) == [1, 2, 3, 4, 5, 6]
    assert v.coflow_columns()["arrival_s"] == w.coflow_columns()["arrival_s"]
    # One dependency per parent flow (on its barrier), plus the barriers' own:
    # join1 waits for 2 copies, join2 for 2, agg for 1.
    assert sum(len(d) for d in c["depends_on"]) == 3 * 706_397 + 5 * 706_397
