"""Workload transforms (coflowkit.transforms): hand-computed expectations on small
workloads built in memory, statistics on larger seeded ones, the CLI, and one
structural check on the Facebook trace."""

import inspect
import json
import re
import subprocess
import sys

import coflowkit as ck
import numpy as np
import pandas as pd
import pytest
from coflowkit import runner, transforms
from coflowkit._core import CoflowkitError
from conftest import build

MIB = 1_048_576.0
GBPS = 1024**3 / 8  # bytes/s


def one_flow_each(arrivals, sizes=None, ports=4):
    """Coflow k (id k + 1) is one flow (id 100 + k) from port k % ports to port
    (k + 1) % ports, of ``sizes[k]`` (1 MiB) bytes, arriving at ``arrivals[k]``."""
    sizes = sizes if sizes is not None else [MIB] * len(arrivals)
    rows = [
        (k + 1, 100 + k, k % ports, (k + 1) % ports, sizes[k], a) for k, a in enumerate(arrivals)
    ]
    return build(rows, ports=ports, arrival_s=list(map(float, arrivals)))


def coflow_arrivals(w):
    c = w.coflow_columns()
    return dict(zip(c["coflow_id"], c["arrival_s"], strict=True))


def flows_by_id(w):
    c = w.flow_columns()
    return {fid: {k: c[k][i] for k in c} for i, fid in enumerate(c["flow_id"])}


def rich():
    """Three coflows with weights, ports, tenants, stages, priorities and
    dependencies, on an 8-port 10 Gbps fabric (hosts 0..5 only)."""
    rows = [
        (1, 1, 0, 1, 1 * MIB, 0.0),
        (1, 2, 2, 1, 2 * MIB, 0.5),
        (2, 3, 3, 4, 3 * MIB, 2.0),
        (2, 4, 3, 5, 4 * MIB, 2.0),
        (3, 5, 5, 0, 5 * MIB, 11.0),
    ]
    w = build(
        rows,
        arrival_s=[0.0, 0.0, 2.0, 2.0, 11.0],
        weight=[2.0, 2.0, 1.0, 1.0, 3.0],
        src_port=[5000, None, 6000, 6001, None],
        dst_port=[80, None, 81, 82, None],
        tenant=["a", "a", None, "b", "c"],
        stage=[2, 1, None, 1, 1],
        priority=[0, 0, 3, None, 1],
        depends_on=[[], [1], [], [3], [2, 4]],
    )
    return w.with_fabric("bigswitch:ports=8,gbps=10")


# --------------------------------------------------------------------------------
# flow_columns and the rebuild lose nothing


def test_flow_columns_have_every_field_needed_to_rebuild():
    c = rich().flow_columns()
    assert c["flow_id"] == [1, 2, 3, 4, 5]
    assert c["arrival_s"] == [0.0, 0.0, 2.0, 2.0, 11.0]
    assert c["weight"] == [2.0, 2.0, 1.0, 1.0, 3.0]
    assert c["src_port"] == [5000, None, 6000, 6001, None]
    assert c["dst_port"] == [80, None, 81, 82, None]
    assert c["tenant"] == ["a", "a", None, "b", "c"]
    assert c["stage"] == [2, 1, None, 1, 1]
    assert c["priority"] == [0, 0, 3, None, 1]
    assert c["depends_on"] == [[], [1], [], [3], [2, 4]]
    bare = one_flow_each([0.0, 1.0]).flow_columns()
    assert bare["src_port"] == [None, None] and bare["tenant"] == [None, None]
    assert bare["stage"] == [None, None] and bare["priority"] == [None, None]
    assert bare["depends_on"] == [[], []]


def test_identity_transform_keeps_every_column_and_the_fabric():
    w = rich()
    v = transforms.apply(w, "scale")  # factors 1, ports unchanged
    assert v.flow_columns() == w.flow_columns()
    assert v.fabric == w.fabric == "bigswitch:ports=8,gbps=10"
    assert v.source == "hand | scale:bytes=1,time=1,mapping=mod"


@pytest.mark.parametrize(
    "spec",
    [
        "batch:interval_s=5",
        "batch:interval_s=5,spread=instant",
        "poisson:load=0.5",
        "starts:model=hadoop",
        "waves:max_senders=1",
        "scale:bytes=2,time=3",
    ],
)
def test_weights_ports_tenants_and_dependencies_survive(spec):
    w = rich()
    v = transforms.apply(w, spec)
    before, after = flows_by_id(w), flows_by_id(v)
    assert v.fabric == w.fabric
    for fid, f in before.items():
        g = after[fid]
        for k in (
            "coflow_id",
            "src",
            "dst",
            "weight",
            "src_port",
            "dst_port",
            "tenant",
            "stage",
            "priority",
        ):
            assert g[k] == f[k], (spec, fid, k)
        assert set(f["depends_on"]) <= set(g["depends_on"]), (spec, fid)
        assert g["start_s"] >= g["arrival_s"]


def test_ports_transform_keeps_tenants_and_dependencies():
    w = rich()
    v = transforms.apply(w, "ports:model=hadoop")
    c, d = w.flow_columns(), v.flow_columns()
    for k in ("tenant", "stage", "priority", "depends_on", "weight", "arrival_s", "start_s"):
        assert c[k] == d[k]
    assert c["bytes"] == d["bytes"]
    assert d["src_port"] == [13562] * 5


# --------------------------------------------------------------------------------
# batch


def test_batch_instant_releases_each_window_at_its_end():
    # B = 10: windows [0, 10) -> 10, [10, 20) -> 20, [20, 30) -> 30.
    w = one_flow_each([0.0, 3.0, 9.99, 10.0, 25.0])
    v = transforms.apply(w, "batch:interval_s=10,spread=instant")
    assert coflow_arrivals(v) == {1: 10.0, 2: 10.0, 3: 10.0, 4: 20.0, 5: 30.0}
    # 1e-9 s below a boundary counts as on it, as the engine's events do: 0.3 is in
    # [0.3, 0.4) although 0.3 < 3 * 0.1 in floating point.
    v = transforms.apply(one_flow_each([0.3, 0.35]), "batch:interval_s=0.1,spread=instant")
    assert list(coflow_arrivals(v).values()) == pytest.approx([0.4, 0.4])


def test_batch_keeps_each_flow_start_offset():
    # Coflow 1 arrives at 3 with flows starting at 3 and 3.5 (offsets 0 and 0.5);
    # released at 10: flows start at 10 and 10.5.
    w = build(
        [(1, 1, 0, 1, MIB, 3.0), (1, 2, 1, 0, MIB, 3.5), (2, 3, 2, 3, MIB, 12.0)],
        arrival_s=[3.0, 3.0, 12.0],
    )
    v = transforms.apply(w, "batch", spread="instant")
    c = v.flow_columns()
    assert c["start_s"] == [10.0, 10.5, 20.0]
    assert c["arrival_s"] == [10.0, 10.0, 20.0]


def test_batch_coda_spreads_each_batch_over_at_most_300_ms():
    # 400 coflows over 200 s, 20 windows of 10 s.
    arrivals = np.linspace(0.0, 199.5, 400)
    w = one_flow_each(arrivals)
    v = transforms.apply(w, "batch:interval_s=10,seed=7")
    by_id = coflow_arrivals(v)
    new = np.array([by_id[k] for k in range(1, 401)])
    release = (np.floor(arrivals / 10) + 1) * 10
    offset = new - release
    assert offset.min() >= 0.0 and offset.max() <= 0.3
    spread = pd.Series(offset).groupby(release).max()
    assert len(spread) == 20 and (spread > 0.05).all()
    # The documented draws, by hand: one spread per batch, then one offset per coflow.
    rng = np.random.default_rng(7)
    width = rng.uniform(0.1, 0.3, size=20)
    want = release + rng.uniform(0.0, 1.0, size=400) * np.repeat(width, 20)
    assert new == pytest.approx(want, abs=1e-12)


# --------------------------------------------------------------------------------
# poisson


def test_poisson_mean_gap_is_one_over_lambda():
    # 4 ports at 1 Gbps: C = 4 * 128 MiB/s. Sizes alternate 1 and 3 MiB: mean 2 MiB.
    # load 0.5 -> lambda = 0.5 * 512 MiB/s / 2 MiB = 128 coflows/s, mean gap 1/128 s.
    n = 3000
    w = one_flow_each(np.arange(n) * 0.5, sizes=[MIB, 3 * MIB] * (n // 2))
    v = transforms.apply(w, "poisson:load=0.5,seed=11")
    a = np.array(list(coflow_arrivals(v).values()))
    gaps = np.diff(a)
    assert a[0] == 0.0  # the first coflow keeps its arrival
    assert (gaps > 0).all()  # order kept (ids 1..n still in arrival order)
    # Standard error of the mean gap: (1/128) / sqrt(2999) = 1.8 %.
    assert gaps.mean() == pytest.approx(1 / 128, rel=0.06)
    assert gaps.std() == pytest.approx(1 / 128, rel=0.1)  # exponential: std = mean
    # lambda is proportional to the link rate: on 2 Gbps links every gap halves.
    fast = transforms.apply(w.with_fabric("bigswitch:gbps=2"), "poisson:load=0.5,seed=11")
    b = np.array(list(coflow_arrivals(fast).values()))
    assert np.diff(b) == pytest.approx(gaps / 2, rel=1e-12)


def test_poisson_keeps_order_and_offsets():
    w = build(
        [(5, 1, 0, 1, MIB, 4.0), (5, 2, 1, 0, MIB, 4.25), (2, 3, 2, 3, MIB, 7.0)],
        arrival_s=[4.0, 4.0, 7.0],
    )
    v = transforms.apply(w, "poisson:load=1")
    c = v.flow_columns()
    assert c["coflow_id"] == [5, 5, 2]
    assert c["arrival_s"][0] == 4.0 and c["start_s"][:2] == [4.0, 4.25]
    assert c["start_s"][2] == c["arrival_s"][2] > 4.0


@pytest.mark.parametrize(
    "fabric,gbps",
    [
        ("bigswitch:ports=150,gbps=1", 1),
        ("bigswitch:ports=150,up_gbps=2,down_gbps=40", 2),
        ("fattree:k=8,ports=150,gbps=1,placement=spread,seed=1", 1),
        # The host links count, not the faster switch-to-switch links.
        ("fattree:k=8,ports=150,host_gbps=2.5,fabric_gbps=10,placement=spread,seed=1", 2.5),
    ],
)
def test_uplink_capacity_is_ports_times_the_host_rate(fabric, gbps):
    assert transforms.uplink_capacity(fabric) == 150 * gbps * GBPS


def test_uplink_capacity_of_an_unreadable_fabric_is_one_clear_error():
    for fabric in ("fattree:k=8,ports=150,fabric_gbps=10", "bigswitch:gbps=1"):
        with pytest.raises(CoflowkitError, match="cannot read the uplink capacity of fabric"):
            transforms.uplink_capacity(fabric)


def test_poisson_on_a_fattree_uses_the_host_links():
    # k=4: 16 hosts; 4 used. Same host rate as the big switch: the same arrivals.
    w = one_flow_each(np.arange(200) * 0.5)
    big = transforms.apply(w.with_fabric("bigswitch:ports=4,gbps=1"), "poisson:load=0.5")
    tree = w.with_fabric("fattree:k=4,ports=4,host_gbps=1,fabric_gbps=10")
    assert tree.fabric.startswith("fattree:k=4,ports=4,host_gbps=1,fabric_gbps=10")
    v = transforms.apply(tree, "poisson:load=0.5")
    assert v.fabric == tree.fabric
    assert coflow_arrivals(v) == pytest.approx(coflow_arrivals(big), abs=1e-12)


# --------------------------------------------------------------------------------
# starts


def spread_workload(n=6000):
    rows = [(1 + k // 100, k, k % 10, (k + 3) % 10, MIB, 2.0 * (k // 100)) for k in range(n)]
    return build(rows)


@pytest.mark.parametrize(
    "model,stretched,lo,hi,mean",
    [
        ("spark", False, 0.0, 0.1, 0.05),
        ("spark", True, 0.0, 5.0, 2.5),
        ("hadoop", False, 0.0, None, 0.5 + 0.1),
        ("hadoop", True, 0.0, None, 2.5 + 1.0),
    ],
)
def test_starts_offsets_within_bounds_and_mean(model, stretched, lo, hi, mean):
    w = spread_workload()
    v = transforms.apply(w, "starts", model=model, stretched=stretched, seed=3)
    c = v.flow_columns()
    off = np.array(c["start_s"]) - np.array(c["arrival_s"])
    assert c["arrival_s"] == w.flow_columns()["arrival_s"]  # CCTs measured from these
    assert off.min() >= lo
    if hi is not None:
        assert off.max() <= hi
    # Standard errors over 6000 flows: at most 1.8/sqrt(6000) = 0.023 (stretched hadoop).
    assert off.mean() == pytest.approx(mean, abs=0.1 if stretched else 0.02)


def test_starts_hadoop_is_uniform_plus_exponential_drawn_in_order():
    w = spread_workload(2000)
    v = transforms.apply(w, "starts:model=hadoop,seed=5")
    rng = np.random.default_rng(5)
    u = rng.uniform(0.0, 1.0, 2000)
    e = rng.exponential(0.1, 2000)
    c = v.flow_columns()
    assert np.array(c["start_s"]) == pytest.approx(np.array(c["arrival_s"]) + u + e)
    assert e.mean() == pytest.approx(0.1, rel=0.1)


def test_starts_tick_rounds_offsets_up_to_whole_ticks():
    w = spread_workload(2000)
    exact = transforms.apply(w, "starts:model=hadoop,seed=5")
    ticked = transforms.apply(w, "starts:model=hadoop,seed=5,tick_s=0.01")
    a = np.array(exact.flow_columns()["arrival_s"])
    off = np.array(exact.flow_columns()["start_s"]) - a
    toff = np.array(ticked.flow_columns()["start_s"]) - a
    # Same draws, each offset rounded up to the next multiple of 10 ms.
    assert toff == pytest.approx(np.ceil(off / 0.01) * 0.01)
    assert (toff >= off - 1e-12).all() and (toff - off < 0.01 + 1e-9).all()
    # A coflow's 100 flows now start at far fewer instants.
    per = np.array(ticked.flow_columns()["coflow_id"])
    assert len(np.unique(toff[per == per[0]].round(9))) < len(np.unique(off[per == per[0]]))
    assert "tick_s must be >= 0" in str(
        pytest.raises(CoflowkitError, transforms.apply, w, "starts:model=spark,tick_s=-1").value
    )


# --------------------------------------------------------------------------------
# ports


def test_spark_ports_share_the_destination_port_per_coflow_and_destination():
    w = spread_workload(3000)
    c = transforms.apply(w, "ports:model=spark").flow_columns()
    df = pd.DataFrame(c)
    lo, hi = transforms.EPHEMERAL_PORTS
    assert (lo, hi) == (32768, 60999)
    assert df["src_port"].between(lo, hi).all() and df["dst_port"].between(lo, hi).all()
    per = df.groupby(["coflow_id", "dst"])["dst_port"].nunique()
    assert (per == 1).all()
    # Independent draws: across (coflow, destination) pairs and across flows they differ.
    assert df.groupby(["coflow_id", "dst"])["dst_port"].first().nunique() > 250
    assert df["src_port"].nunique() > 2500


def test_hadoop_ports_use_the_shuffle_handler_as_source():
    c = transforms.apply(spread_workload(3000), "ports:model=hadoop").flow_columns()
    assert set(c["src_port"]) == {13562}
    assert min(c["dst_port"]) >= 32768 and max(c["dst_port"]) <= 60999
    assert len(set(c["dst_port"])) > 2500  # one draw per flow


# --------------------------------------------------------------------------------
# waves


def six_flows():
    # One coflow: f1 0->5, f2 1->5, f3 1->6, f4 2->5, f5 3->5, f6 4->5, 1 MiB each.
    rows = [(1, i + 1, s, d, MIB, 0.0) for i, (s, d) in enumerate(WAVE_PATHS)]
    return build(rows)


WAVE_PATHS = [(0, 5), (1, 5), (1, 6), (2, 5), (3, 5), (4, 5)]


def test_waves_link_every_flow_to_every_flow_of_the_previous_wave():
    # Senders 0..4, two per wave: {0, 1} = f1 f2 f3, {2, 3} = f4 f5, {4} = f6.
    v = transforms.apply(six_flows(), "waves:max_senders=2")
    assert v.flow_columns()["depends_on"] == [[], [], [], [1, 2, 3], [1, 2, 3], [4, 5]]
    # One sender per wave: five waves.
    v = transforms.apply(six_flows(), "waves:max_senders=1")
    assert v.flow_columns()["depends_on"] == [[], [1], [1], [2, 3], [4], [5]]
    # Five or more senders per wave: one wave, nothing changes.
    v = transforms.apply(six_flows(), "waves:max_senders=5")
    assert v.flow_columns()["depends_on"] == [[]] * 6


def test_waves_count_splits_each_coflows_senders_into_that_many_waves():
    # Five senders, count=2: ceil(5/2) = 3 per wave: {0, 1, 2} = f1..f4, {3, 4} = f5 f6.
    v = transforms.apply(six_flows(), "waves:count=2")
    assert v.flow_columns()["depends_on"] == [[], [], [], [], [1, 2, 3, 4], [1, 2, 3, 4]]
    # count=3: ceil(5/3) = 2 per wave, as max_senders=2.
    assert (
        transforms.apply(six_flows(), "waves:count=3").flow_columns()["depends_on"]
        == transforms.apply(six_flows(), "waves:max_senders=2").flow_columns()["depends_on"]
    )
    # More waves than senders: one sender per wave (five waves).
    v = transforms.apply(six_flows(), "waves:count=9")
    assert v.flow_columns()["depends_on"] == [[], [1], [1], [2, 3], [4], [5]]
    with pytest.raises(CoflowkitError, match="exactly one of max_senders and count"):
        transforms.apply(six_flows(), "waves:count=2,max_senders=2")
    with pytest.raises(CoflowkitError, match="exactly one of max_senders and count"):
        transforms.apply(six_flows(), "waves")


def test_head_keeps_the_first_coflows_like_first():
    w = one_flow_each([3.0, 1.0, 2.0, 0.5])
    h = transforms.apply(w, "head:count=2")
    # Arrivals 0.5 and 1.0 come first (the workload's order).
    assert h.flow_columns()["arrival_s"] == [0.5, 1.0]
    assert h.flow_columns() == w.head(2).flow_columns()
    assert transforms.apply(w, "head:count=10").num_flows == 4


def test_waves_barrier_flows_above_max_pairs():
    # max_pairs=0: every boundary gets a barrier (ids 7 and 8, above every flow id),
    # 1e-6 B on the path of the next wave's first flow, from the coflow's arrival.
    v = transforms.apply(six_flows(), "waves:max_senders=2,max_pairs=0")
    c = v.flow_columns()
    assert c["flow_id"] == [1, 2, 3, 4, 5, 6, 7, 8]
    assert c["depends_on"] == [[], [], [], [7], [7], [8], [1, 2, 3], [4, 5]]
    assert (c["src"][6], c["dst"][6]) == (2, 5) and (c["src"][7], c["dst"][7]) == (4, 5)
    assert c["bytes"][6:] == [transforms.BARRIER_BYTES] * 2 == [1e-6] * 2
    assert c["start_s"][6:] == [0.0, 0.0]
    # 3 x 2 = 6 pairs: linked directly when max_pairs >= 6, by a barrier below.
    v = transforms.apply(six_flows(), "waves:max_senders=2,max_pairs=6")
    assert v.flow_columns()["depends_on"][3] == [1, 2, 3]
    v = transforms.apply(six_flows(), "waves:max_senders=2,max_pairs=5")
    assert v.flow_columns()["depends_on"][3] == [7]


def test_waves_barrier_takes_the_stage_priority_and_tenant_of_its_path_flow():
    # Barrier 7 is on f4's path (2->5), barrier 8 on f6's (4->5).
    rows = [(1, i + 1, s, d, MIB, 0.0) for i, (s, d) in enumerate(WAVE_PATHS)]
    w = build(
        rows,
        tenant=["t1", "t2", "t3", "t4", "t5", "t6"],
        stage=[1, 1, 1, 2, 2, None],
        priority=[5, 4, 3, 2, 1, 0],
    )
    c = transforms.apply(w, "waves:max_senders=2,max_pairs=0").flow_columns()
    assert c["flow_id"][6:] == [7, 8]
    assert c["tenant"] == ["t1", "t2", "t3", "t4", "t5", "t6", "t4", "t6"]
    assert c["stage"] == [1, 1, 1, 2, 2, None, 2, None]
    assert c["priority"] == [5, 4, 3, 2, 1, 0, 2, 0]
    assert c["src_port"] == [None] * 8


@pytest.mark.parametrize("policy", ["fair", "fifo", "aalo", "varys"])
@pytest.mark.parametrize("max_pairs", [0, 2500])
def test_waves_cct_by_hand_with_and_without_barriers(policy, max_pairs):
    # 128 MiB/s links. Wave {0, 1}: f1, f2 share down5, f2, f3 share up1 -> 64 MiB/s
    # each, done at 1/64. Wave {2, 3}: f4, f5 share down5 -> done at 2/64. Wave {4}:
    # f6 alone, 1/128 more: CCT 2/64 + 1/128 = 0.0390625, barriers or not.
    v = transforms.apply(six_flows(), "waves", max_senders=2, max_pairs=max_pairs)
    r = ck.simulate(v, policy)
    assert r.coflows["cct_s"].tolist() == pytest.approx([0.0390625], abs=1e-9)


@pytest.mark.parametrize("policy", ["fifo", "aalo", "fair", "sincronia"])
def test_barriers_give_the_same_ccts_as_direct_links_under_contention(policy):
    # 12 coflows of 8 senders x 3 receivers on 10 ports, arriving every 10 ms: under
    # FIFO a later coflow's barrier often sits on a saturated link (rate 0); it must
    # still release the next wave at the instant the previous one ends.
    rng = np.random.default_rng(0)
    rows, fid = [], 0
    for c in range(12):
        for s in range(8):
            for d in (8, 9, c % 8):
                fid += 1
                rows.append(
                    (c + 1, fid, (s + c) % 10, d, float(rng.integers(1, 8)) * MIB, 0.01 * c)
                )
    w = build(rows)
    direct = transforms.apply(w, "waves:max_senders=3,max_pairs=1000000")
    barrier = transforms.apply(w, "waves:max_senders=3,max_pairs=0")
    assert barrier.num_flows == direct.num_flows + 12 * 2
    a = ck.simulate(direct, policy).coflows["cct_s"].to_numpy()
    b = ck.simulate(barrier, policy).coflows["cct_s"].to_numpy()
    assert b == pytest.approx(a, abs=1e-9)
    assert np.abs(a - ck.simulate(w, policy).coflows["cct_s"].to_numpy()).max() > 0.1


# --------------------------------------------------------------------------------
# sample


def test_sample_count_and_fraction_keep_original_arrivals():
    w = one_flow_each(np.arange(10) * 1.5)
    full = coflow_arrivals(w)
    v = transforms.apply(w, "sample:count=3,seed=4")
    kept = np.sort(np.random.default_rng(4).choice(10, size=3, replace=False))
    assert list(coflow_arrivals(v)) == [int(k) + 1 for k in kept]
    assert coflow_arrivals(v) == {k: full[k] for k in coflow_arrivals(v)}
    assert transforms.apply(w, "sample:fraction=0.5").num_coflows == 5
    assert transforms.apply(w, "sample:fraction=0.25").num_coflows == 3  # 2.5 rounds up
    assert transforms.apply(w, "sample:fraction=0.01").num_coflows == 1
    assert transforms.apply(w, "sample:count=10").flow_columns() == w.flow_columns()


def test_drop_removes_the_named_coflows_and_keeps_the_others_arrivals():
    w = one_flow_each([3.0, 1.0, 2.0, 0.5])  # coflow ids 1..4
    v = transforms.apply(w, "drop:coflows=3+1")
    assert coflow_arrivals(v) == {2: 1.0, 4: 0.5}
    assert transforms.canonical("drop:coflows=3+1") == "drop:coflows=1+3"
    assert transforms.apply(w, "drop", coflows=[4]).num_coflows == 3
    # Dependencies on the removed flows go with them (rich(): flow 5 of coflow 3
    # depends on flows 2 and 4; coflow 2 holds flow 4).
    c = transforms.apply(rich(), "drop:coflows=2").flow_columns()
    assert c["flow_id"] == [1, 2, 5] and c["depends_on"] == [[], [1], [2]]


@pytest.mark.parametrize(
    "spec,message",
    [
        ("drop", "transform drop: missing required parameter coflows"),
        ("drop:coflows=1+x", "coflows must be distinct whole numbers >= 0 joined by '+'"),
        ("drop:coflows=2+2", "coflows must be distinct whole numbers >= 0 joined by '+'"),
        ("drop:coflows=-1", "coflows must be distinct whole numbers >= 0 joined by '+'"),
        ("drop:coflows=2+9+7", "transform drop: coflows: no coflow with id 7, 9 in the workload"),
        ("drop:coflows=1+2+3+4", "that is every coflow of the workload"),
    ],
)
def test_drop_errors_name_the_parameter(spec, message):
    with pytest.raises(CoflowkitError, match=re.escape(message)):
        transforms.apply(one_flow_each([0.0, 1.0, 2.0, 3.0]), spec)


def test_sample_drops_dependencies_on_dropped_coflows():
    w = rich()
    # With seed 9, rng.choice(3, 2) keeps coflows 0 and 2 in arrival order (ids 1, 3).
    assert sorted(np.random.default_rng(9).choice(3, size=2, replace=False)) == [0, 2]
    v = transforms.apply(w, "sample:count=2,seed=9")
    c = v.flow_columns()
    assert c["flow_id"] == [1, 2, 5]
    assert c["depends_on"] == [[], [1], [2]]  # flow 5 depended on 2 and 4 (dropped)
    assert c["stage"] == [2, 1, 1] and c["priority"] == [0, 0, 1]
    assert c["tenant"] == ["a", "a", "c"]


# --------------------------------------------------------------------------------
# scale


def test_scale_bytes_time_and_ports_mod():
    w = rich()
    v = transforms.apply(w, "scale:bytes=0.5,time=2,ports=3")
    c = v.flow_columns()
    assert c["bytes"] == [0.5 * MIB, 1 * MIB, 1.5 * MIB, 2 * MIB, 2.5 * MIB]
    assert c["arrival_s"] == [0.0, 0.0, 4.0, 4.0, 22.0]
    assert c["start_s"] == [0.0, 1.0, 4.0, 4.0, 22.0]
    # Hosts (0,1) (2,1) (3,4) (3,5) (5,0) mod 3.
    assert list(zip(c["src"], c["dst"], strict=True)) == [(0, 1), (2, 1), (0, 1), (0, 2), (2, 0)]
    assert v.fabric == "bigswitch:ports=3,gbps=10"
    assert v.ports == 3


def test_scale_ports_balanced_mapping_by_hand():
    # Bytes per host (sent + received, MiB): h0 1+5=6, h1 1+2=3, h2 2, h3 3+4=7,
    # h4 3, h5 4+5=9, h6, h7 0. Decreasing: h5 9, h3 7, h0 6, h1 3, h4 3, h2 2, h6, h7.
    # Two ports: h5 -> p0 (9), h3 -> p1 (7), h0 -> p1 (13), h1 -> p0 (12),
    # h4 -> p0 (15), h2 -> p1 (15), h6 -> p0, h7 -> p1.
    v = transforms.apply(rich(), "scale:ports=2,mapping=balanced")
    c = v.flow_columns()
    port = {0: 1, 1: 0, 2: 1, 3: 1, 4: 0, 5: 0}
    want = [(port[s], port[d]) for s, d in [(0, 1), (2, 1), (3, 4), (3, 5), (5, 0)]]
    assert list(zip(c["src"], c["dst"], strict=True)) == want


# --------------------------------------------------------------------------------
# composition, determinism, registry, errors


def test_composition_order_matters():
    # Arrival 4: scale then batch: 8 -> released at 10; batch then scale: 10 -> 20.
    w = one_flow_each([4.0])
    a = transforms.apply_all(w, ["scale:time=2", "batch:interval_s=10,spread=instant"])
    b = transforms.apply_all(w, ["batch:interval_s=10,spread=instant", "scale:time=2"])
    assert coflow_arrivals(a) == {1: 10.0} and coflow_arrivals(b) == {1: 20.0}
    assert (
        a.source
        == "hand | scale:bytes=1,time=2,mapping=mod | batch:interval_s=10,spread=instant,seed=1"
    )


RANDOM = [
    "batch:interval_s=20",
    "poisson:load=0.7",
    "starts:model=spark",
    "ports:model=spark",
    "sample:fraction=0.5",
]


@pytest.mark.parametrize("spec", RANDOM)
def test_same_seed_same_workload_other_seed_other_workload(spec):
    w = spread_workload(3000)
    a = transforms.apply(w, spec).flow_columns()
    assert transforms.apply(w, spec).flow_columns() == a
    assert transforms.apply(w, spec, seed=1).flow_columns() == a  # the default seed
    assert transforms.apply(w, spec, seed=2).flow_columns() != a


def test_package_level_transform_and_registry():
    w = one_flow_each([0.0, 1.0])
    assert ck.transform is transforms.apply
    assert ck.transform(w, "batch:interval_s=10,spread=instant").flow_columns() == (
        transforms.batch(w, interval_s=10, spread="instant").flow_columns()
    )
    assert list(transforms.TRANSFORMS) == [
        "batch",
        "poisson",
        "starts",
        "ports",
        "waves",
        "dag",
        "head",
        "drop",
        "sample",
        "repeat",
        "scale",
    ]
    for name, t in transforms.TRANSFORMS.items():
        sig = inspect.signature(getattr(transforms, name))
        assert list(sig.parameters) == ["workload"] + [p.name for p in t.params]
        for p in t.params:
            assert p.help
            assert p.default == sig.parameters[p.name].default or p.required
    defaults = {p.name: p.default for p in transforms.TRANSFORMS["batch"].params}
    assert defaults == {"interval_s": 10.0, "spread": "coda", "seed": 1}
    assert transforms.canonical("batch") == "batch:interval_s=10,spread=coda,seed=1"
    assert (
        transforms.canonical("starts:model=spark")
        == "starts:model=spark,stretched=false,tick_s=0,seed=1"
    )


@pytest.mark.parametrize(
    "spec,params,message",
    [
        ("shuffle", {}, "unknown transform 'shuffle'; valid transforms: batch, poisson"),
        ("batch:interval=5", {}, "transform batch: unknown parameter 'interval'; valid"),
        ("batch:interval_s", {}, "transform batch: 'interval_s' is not KEY=VALUE"),
        ("batch:interval_s=abc", {}, "transform batch: interval_s must be a number, got 'abc'"),
        ("batch:interval_s=0", {}, "transform batch: interval_s must be > 0, got '0'"),
        ("batch:spread=wide", {}, "transform batch: spread must be one of coda, instant"),
        ("batch:seed=1.5", {}, "transform batch: seed must be a whole number, got '1.5'"),
        ("batch:seed=-1", {}, "transform batch: seed must be >= 0"),
        ("batch:seed=1", {"seed": 2}, "transform batch: parameter seed is given twice"),
        ("poisson", {}, "transform poisson: missing required parameter load"),
        ("poisson:load=0", {}, "transform poisson: load must be in (0, 1], got '0'"),
        ("poisson", {"load": 1.5}, "transform poisson: load must be in (0, 1], got 1.5"),
        ("starts", {}, "transform starts: missing required parameter model"),
        ("starts:model=spark,stretched=maybe", {}, "stretched must be true or false"),
        ("waves:max_senders=0", {}, "transform waves: max_senders must be >= 1, got '0'"),
        ("sample", {}, "transform sample: give exactly one of fraction and count"),
        ("sample:count=2,fraction=0.5", {}, "give exactly one of fraction and count"),
        ("sample:count=3", {}, "transform sample: count must be at most the number of"),
        ("sample:fraction=1.5", {}, "transform sample: fraction must be in (0, 1]"),
        ("scale:ports=0", {}, "transform scale: ports must be >= 1, got '0'"),
        ("scale:bytes=-1", {}, "transform scale: bytes must be > 0, got '-1'"),
        ("repeat", {}, "transform repeat: missing required parameter times"),
        ("repeat:times=0", {}, "transform repeat: times must be >= 1, got '0'"),
        ("repeat:times=2,mode=parallel", {}, "mode must be one of sequential, overlap"),
    ],
)
def test_bad_input_is_one_clear_error(spec, params, message):
    with pytest.raises(CoflowkitError) as e:
        transforms.apply(one_flow_each([0.0, 1.0]), spec, **params)
    assert message in str(e.value)


def test_direct_calls_check_their_parameters_too():
    w = one_flow_each([0.0])
    with pytest.raises(CoflowkitError, match=r"transform poisson: load must be in \(0, 1\]"):
        transforms.poisson(w, load=0)
    with pytest.raises(CoflowkitError, match="transform poisson: missing required parameter"):
        transforms.poisson(w)
    with pytest.raises(CoflowkitError, match="transform batch: .*unexpected keyword"):
        transforms.batch(w, width=3)
    with pytest.raises(CoflowkitError, match="expected a coflowkit Workload"):
        transforms.batch("trace.txt")


# --------------------------------------------------------------------------------
# runner and CLI


def test_workload_spec_applies_transforms_and_keys_change(example_path):
    plain = runner.WorkloadSpec(trace=str(example_path))
    batched = runner.WorkloadSpec(trace=str(example_path), transforms=["batch:spread=instant"])
    assert batched.transforms == ("batch:spread=instant",)
    assert "transforms" not in plain.fingerprint()  # older cache keys are unchanged
    assert batched.fingerprint()["transforms"] == ["batch:interval_s=10,spread=instant,seed=1"]
    assert runner.Job(plain, "fair").key() != runner.Job(batched, "fair").key()
    other = runner.WorkloadSpec(trace=str(example_path), transforms=["batch:interval_s=5"])
    assert runner.Job(other, "fair").key() != runner.Job(batched, "fair").key()
    assert set(coflow_arrivals(batched.load()).values()) == {10.0}
    # --first keeps the first coflows after the transforms.
    first = runner.WorkloadSpec(trace=str(example_path), first=1, transforms=["scale:time=2"])
    assert coflow_arrivals(first.load()) == {1: 0.0}
    with pytest.raises(CoflowkitError, match="unknown transform 'bach'"):
        runner.WorkloadSpec(trace=str(example_path), transforms=("bach",))


def test_runner_transforms_see_the_job_fabric(example_path):
    # poisson's lambda is proportional to the link rate: the job's fabric goes first.
    spec = runner.WorkloadSpec(trace=str(example_path), transforms=("poisson:load=0.5",))
    slow = runner.run_jobs([runner.Job(spec, "fair")])[0].coflows["arrival_s"]
    fast = runner.run_jobs([runner.Job(spec, "fair", fabric="bigswitch:gbps=4")])[0]
    assert fast.coflows["arrival_s"].to_numpy() == pytest.approx(slow.to_numpy() / 4)
    assert fast.fabric == "bigswitch:ports=2,gbps=4"


def run(*args, check=True):
    r = subprocess.run([sys.executable, "-m", "coflowkit", *args], capture_output=True, text=True)
    if check and r.returncode != 0:
        raise AssertionError(r.stderr)
    return r


def test_cli_lists_the_transforms():
    out = run("transforms").stdout
    for name in transforms.TRANSFORMS:
        assert f"\n{name}: " in "\n" + out
    assert "interval_s=10" in out and "load (required)" in out and "max_pairs=2500" in out


def test_cli_simulate_with_transforms_by_hand(tmp_path, example_path):
    # The example's coflows (arrivals 0, 0, 0.016) all released at 1 s. Fair: every
    # flow at 64 MiB/s (up0: C1, C3; down1: C1, C2). C2 (2 MiB) done at 1/32; C3's
    # last 2 MiB still share up0 with C1 -> 1/16; C1's last 4 MiB alone -> 3/32.
    out = tmp_path / "run"
    run(
        "simulate",
        "--trace",
        str(example_path),
        "--policy",
        "fair",
        "--transform",
        "batch:interval_s=1,spread=instant",
        "--transform",
        "ports:model=hadoop",
        "--out",
        str(out),
        "--quiet",
    )
    df = pd.read_csv(out / "coflows.csv")
    assert df["arrival_s"].tolist() == [1.0, 1.0, 1.0]
    assert df["cct_s"].tolist() == pytest.approx([0.09375, 0.03125, 0.0625])
    assert json.loads((out / "summary.json").read_text())["summary"]["all"]["coflows"] == 3


def test_cli_convert_writes_the_transformed_flow_table(tmp_path, example_path):
    out = tmp_path / "flows.csv"
    run(
        "convert",
        "--trace",
        str(example_path),
        "--transform",
        "ports:model=hadoop",
        "--to",
        "flows",
        "--out",
        str(out),
    )
    df = pd.read_csv(out)
    assert df["src_port"].tolist() == [13562] * 3
    assert df["dst_port"].between(32768, 60999).all()


@pytest.mark.parametrize(
    "spec,message",
    [
        ("batch:interval_s=-1", "transform batch: interval_s must be > 0, got '-1'"),
        ("nope", "unknown transform 'nope'"),
        ("poisson:load=1.2", "transform poisson: load must be in (0, 1], got '1.2'"),
        ("sample:count=9", "transform sample: count must be at most the number of coflows"),
    ],
)
def test_cli_bad_transform_is_exit_2(example_path, spec, message):
    for cmd in (["simulate", "--policy", "fair"], ["compare", "--policies", "varys"]):
        r = run(*cmd, "--trace", str(example_path), "--transform", spec, check=False)
        assert r.returncode == 2, r.stderr
        assert r.stderr.startswith(f"coflowkit: error: {message}")
        assert len(r.stderr.strip().splitlines()) == 1


def test_reproduce_passes_transforms_to_the_experiment(monkeypatch, example_path, tmp_path):
    from coflowkit import cli, experiments
    from coflowkit.experiments import writer

    # every experiment is a spec (tests/experiments/test_writer.py) and takes
    # transforms through the writer's options, () by default
    assert writer.Options("o", "t").transforms == ()
    seen = {}

    def fake_run(name, **kw):
        seen.update(kw, name=name)
        return "report.md"

    monkeypatch.setattr(experiments, "run", fake_run)
    args = ["reproduce", "ncdrf", "--trace", str(example_path), "--out", str(tmp_path)]
    assert cli.main([*args, "--transform", "batch", "--transform", "scale:bytes=2"]) == 0
    assert seen["transforms"] == ("batch", "scale:bytes=2")
    assert cli.main([*args, "--transform", "batch:x=1"]) == 2


# --------------------------------------------------------------------------------
# the Facebook trace


def test_fb_trace_hadoop_starts_and_waves(fb_trace):
    w = ck.load_trace(fb_trace)
    c = w.flow_columns()
    v = transforms.apply(w, "starts:model=hadoop")
    d = v.flow_columns()
    start, arrival = np.array(d["start_s"]), np.array(d["arrival_s"])
    assert (start >= arrival).all()
    assert d["arrival_s"] == c["arrival_s"]
    assert sum(d["bytes"]) == sum(c["bytes"]) and v.num_flows == w.num_flows == 706_397
    assert v.fabric == w.fabric
    # waves with 10 senders: linked directly, 7e8 dependencies; with barriers where a
    # boundary has more than 2500 flow pairs, a few hundred extra flows.
    x = transforms.apply(w, "waves:max_senders=10")
    e = x.flow_columns()
    barriers = x.num_flows - w.num_flows
    assert 0 < barriers < 2000
    assert sum(e["bytes"]) == pytest.approx(sum(c["bytes"]) + barriers * 1e-6)
    assert sum(len(d) for d in e["depends_on"]) < 5_000_000


# --------------------------------------------------------------------------------
# repeat


def test_repeat_sequential_shifts_each_copy_by_the_last_arrival():
    w = one_flow_each([0.0, 2.0, 5.0])
    v = transforms.apply(w, "repeat", times=3)
    # ids: + i x (max id + 1) = i x 4 for coflows, i x 103 for flows; shift i x 5 s.
    assert coflow_arrivals(v) == {
        1: 0.0, 2: 2.0, 3: 5.0, 5: 5.0, 6: 7.0, 7: 10.0, 9: 10.0, 10: 12.0, 11: 15.0
    }  # fmt: skip
    f = flows_by_id(v)
    assert sorted(f) == [100, 101, 102, 203, 204, 205, 306, 307, 308]
    g = f[307]
    assert (g["coflow_id"], g["src"], g["dst"], g["start_s"]) == (10, 1, 2, 12.0)


def test_repeat_overlap_keeps_arrivals_and_ports_so_copies_share_the_link():
    # One 1 GiB flow on a 1 Gbps link takes 8 s; two copies at the same time on the
    # same ports share it: each gets half and finishes at 16 s.
    w = build([(1, 1, 0, 1, 1024 * MIB, 0.0)], ports=2)
    v = transforms.apply(w, "repeat:times=2,mode=overlap")
    assert coflow_arrivals(v) == {1: 0.0, 3: 0.0}  # coflow id 1 + 1 x 2
    assert ck.simulate(w, "fair").coflows["cct_s"].tolist() == pytest.approx([8.0])
    assert ck.simulate(v, "fair").coflows["cct_s"].tolist() == pytest.approx([16.0, 16.0])
    seq = transforms.apply(w, "repeat:times=2,mode=sequential")  # last arrival 0: no shift
    assert coflow_arrivals(seq) == {1: 0.0, 3: 0.0}


def test_repeat_copies_dependencies_within_each_copy():
    v = transforms.apply(rich(), "repeat:times=2")
    f = flows_by_id(v)
    # rich(): flow ids 1..5, so copy 1 adds 6; coflow ids 1..3, copy 1 adds 4.
    assert f[11]["depends_on"] == [8, 10] and f[11]["coflow_id"] == 7
    assert f[5]["depends_on"] == [2, 4]
    assert f[11]["start_s"] == f[5]["start_s"] + 11.0
    assert transforms.apply(rich(), "repeat:times=1").flow_columns() == rich().flow_columns()
