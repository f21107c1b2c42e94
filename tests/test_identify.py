"""Coflow identification: clustering against scikit-learn and hand-built points,
communities, the identify / learn-distance commands, and coda's online source."""

from __future__ import annotations

import json

import coflowkit as ck
import numpy as np
import pytest
from coflowkit import _core, identify
from coflowkit._core import CoflowkitError
from coflowkit.cli import main
from coflowkit.labels import quality
from conftest import SHARED_TRACE


def _same_partition(a, b) -> bool:
    """True when the two labelings group the points identically."""
    a, b = np.asarray(a), np.asarray(b)
    pairs = set(zip(a.tolist(), b.tolist(), strict=True))
    return len(pairs) == len(set(a.tolist())) == len(set(b.tolist()))


def _refines(a, b) -> bool:
    """Every cluster of ``a`` lies in one cluster of ``b``."""
    to = {}
    return all(to.setdefault(x, y) == y for x, y in zip(np.asarray(a).tolist(), b, strict=True))


def _random_points(seed, n=250, extra=False):
    g = np.random.default_rng(seed)
    r = {
        "time": g.uniform(0, 20, n),
        "com": g.integers(0, 2, n).astype(np.uint64),
        "agg": g.integers(0, 4, n).astype(np.uint64),
    }
    w = {"t": g.uniform(0.5, 4), "com": g.uniform(0, 1), "prt": g.uniform(0, 0.3)}
    if extra:
        r["x"] = g.normal(0, 1, n)
        w["x"] = g.uniform(0.01, 0.2)
    return r, w


def _distances(r, w):
    t = r["time"]
    d2 = w["t"] * (t[:, None] - t[None, :]) ** 2
    d2 += w["com"] * (r["com"][:, None] != r["com"][None, :])
    d2 += w["prt"] * (r["agg"][:, None] != r["agg"][None, :])
    if "x" in r:
        d2 += w["x"] * (r["x"][:, None] - r["x"][None, :]) ** 2
    return np.sqrt(d2)


def _ours(r, w, eps, min_pts=1, algorithm="dbscan", tau=0.0):
    extra = [r["x"].tolist()] if "x" in r else []
    w_extra = [w["x"]] if "x" in r else []
    return np.asarray(
        _core.cluster(
            r["time"].tolist(),
            r["com"].tolist(),
            r["agg"].tolist(),
            w["t"],
            w["com"],
            w["prt"],
            eps,
            extra=extra,
            w_extra=w_extra,
            tau=tau,
            min_pts=min_pts,
            algorithm=algorithm,
        )
    )


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("extra", [False, True])
def test_exact_dbscan_equals_scikit_learn(seed, extra):
    from sklearn.cluster import DBSCAN

    r, w = _random_points(seed, extra=extra)
    d = _distances(r, w)
    for eps in (0.2, 0.45, 0.9):
        # min-points 1: every point is core; the clusters are the components.
        ref = DBSCAN(eps=eps, min_samples=1, metric="precomputed").fit(d).labels_
        ours = _ours(r, w, eps)
        assert _same_partition(ours, ref), (seed, eps)
        # min-points 4: same noise, same clusters of core points (border points
        # may go to either neighbouring cluster, in both implementations).
        sk = DBSCAN(eps=eps, min_samples=4, metric="precomputed").fit(d)
        ours = _ours(r, w, eps, min_pts=4)
        core = np.zeros(len(ours), dtype=bool)
        core[sk.core_sample_indices_] = True
        assert _same_partition(ours[core], sk.labels_[core]), (seed, eps)
        sizes = np.bincount(ours)
        noise_ours = sizes[ours] == 1
        # A point alone in its cluster is noise unless it is a core point
        # (impossible with min-points 4).
        assert np.array_equal(noise_ours, sk.labels_ == -1), (seed, eps)


@pytest.mark.parametrize("seed", range(6))
def test_rough_dbscan_sits_between_exact_dbscans(seed):
    # Followers are within tau of their leader: exact DBSCAN at eps - 2 tau
    # refines Rough-DBSCAN at eps, which refines exact DBSCAN at eps + 2 tau.
    r, w = _random_points(seed, n=400)
    eps, tau = 0.4, 0.05
    rough = _ours(r, w, eps, algorithm="rough", tau=tau)
    assert _refines(_ours(r, w, eps - 2 * tau), rough.tolist())
    assert _refines(rough, _ours(r, w, eps + 2 * tau).tolist())
    # tau = 0: every flow leads itself: Rough-DBSCAN is exact DBSCAN.
    assert np.array_equal(_ours(r, w, eps, algorithm="rough"), _ours(r, w, eps))


def test_incremental_structure_matches_a_rebuild():
    r, w = _random_points(11, n=300)
    eps = 0.4
    x = _core.RoughIdentifier(
        r["time"].tolist(),
        r["com"].tolist(),
        r["agg"].tolist(),
        w["t"],
        w["com"],
        w["prt"],
        eps,
        0.0,
    )
    g = np.random.default_rng(3)
    present = np.zeros(300, dtype=bool)
    for _ in range(8):
        add = np.flatnonzero(~present & (g.random(300) < 0.3))
        drop = np.flatnonzero(present & (g.random(300) < 0.2))
        x.insert(add.tolist())
        x.remove(drop.tolist())
        present[add] = True
        present[drop] = False
        x.cluster()
        idx = np.flatnonzero(present)
        got = x.labels(idx.tolist())
        assert len(x) == len(idx) and min(got) >= 0
        sub = {k: v[idx] for k, v in r.items()}
        assert _same_partition(got, _ours(sub, w, eps))


def test_hand_built_flows_and_late_binding():
    # a_t = 1: flows at 0, 0.1, 0.2 | 1.0, 1.1 | 3.0; eps 0.3.
    t = [0.0, 0.1, 0.2, 1.0, 1.1, 3.0]
    z = [0] * 6
    x = _core.RoughIdentifier(t, z, z, 1.0, 0.0, 0.0, 0.3, 0.0)
    x.insert(list(range(6)))
    x.cluster()
    lab = x.labels(list(range(6)))
    assert lab[0] == lab[1] == lab[2] != lab[3] == lab[4] != lab[5]
    # Flow 2 is 0.8 from the second cluster and 2.8 from the third.
    assert x.near([2], 0.79) == [[]]
    assert x.near([2], 0.8) == [[lab[3]]]
    assert x.near([2], 2.8) == [sorted([lab[3], lab[5]])]
    with pytest.raises(CoflowkitError, match="flow 9 is not below 6"):
        x.insert([9])


def test_communities_split_service_groups_only():
    src, dst = [], []
    for g in (range(0, 6), range(6, 12)):
        for a in g:
            for b in g:
                if a < b:
                    src.append(a)
                    dst.append(b)
    src.append(0)
    dst.append(6)
    c = _core.communities(12, src, dst, [1.0] * len(src))
    assert c == [0] * 6 + [1] * 6
    # With the bar at conductance 0 nothing is split.
    assert _core.communities(12, src, dst, [1.0] * len(src), 0.0) == [0] * 12
    with pytest.raises(CoflowkitError, match="host 12 is not below hosts=12"):
        _core.communities(12, [12], [0], [1.0])


FLOWS = """coflow_id,flow_id,src,dst,bytes,start_s,src_port,dst_port
1,1,0,2,1e6,0.00,40001,7000
1,2,1,2,1e6,0.02,40002,7000
1,3,0,3,1e6,0.05,40003,7001
2,4,1,3,1e6,5.00,40004,7002
2,5,0,3,1e6,5.01,40005,7002
3,6,1,2,5e4,9.00,40006,7003
"""


def test_identify_command_labels_and_scores(tmp_path, capsys):
    src = tmp_path / "flows.csv"
    src.write_text(FLOWS)
    out = tmp_path / "labels.csv"
    assert main(["identify", "--flows", str(src), "--out", str(out)]) == 0
    text = capsys.readouterr().out
    import pandas as pd

    got = pd.read_csv(out)
    assert got["flow_id"].tolist() == [1, 2, 3, 4, 5, 6]
    lab = got["label"].tolist()
    # Spark weights (As), eps 0.5: flows 1-3 within 0.05 s (flow 3 to another
    # port: 3.825·0.03² + 0.217 ≤ 0.25); 4-5 together; 6 under 100 KB: -1.
    assert lab[0] == lab[1] == lab[2] != lab[3] == lab[4] and lab[5] == -1
    assert "6 flows, 5 identified" in text and "into 2 coflows" in text
    assert "precision 1.0000  recall 1.0000  accuracy 1.0000" in text


@pytest.mark.parametrize(
    "text,message",
    [
        ("flow_id,src,dst\n1,0,1\n", "start_s: missing required column"),
        (FLOWS.replace("0.02,", "soon,"), "line 3: start_s: 'soon' is not a number"),
        (FLOWS.replace("1,2,1,2", "1,2,-1,2"), "line 3: src: '-1' is not an integer >= 0"),
        (FLOWS.replace("2,5,0,3", "2,4,0,3"), "flow_id 4 appears more than once"),
        ("coflow_id,flow_id,src,dst,bytes,start_s\n", "no flows"),
    ],
)
def test_identify_bad_tables_are_one_clear_error(tmp_path, capsys, text, message):
    src = tmp_path / "flows.csv"
    src.write_text(text)
    out = tmp_path / "labels.csv"
    assert main(["identify", "--flows", str(src), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err and str(src) in err
    assert not out.exists()


def test_identify_options_are_checked(tmp_path, capsys):
    src = tmp_path / "flows.csv"
    src.write_text(FLOWS)
    out = str(tmp_path / "l.csv")
    assert main(["identify", "--flows", str(src), "--out", out, "--eps", "0"]) == 2
    assert "--eps must be a number > 0, got '0'" in capsys.readouterr().err
    assert main(["identify", "--flows", str(src), "--out", out, "--weights", "nope.json"]) == 2
    assert "nope.json: no such file" in capsys.readouterr().err


def test_learn_distance_weights_time_and_feed_identify(tmp_path, capsys):
    # 40 coflows 10 s apart, 20 flows each within 0.2 s, random hosts and ports:
    # only the start time tells coflows apart.
    g = np.random.default_rng(5)
    rows = ["coflow_id,flow_id,src,dst,bytes,start_s,dst_port"]
    f = 0
    for k in range(40):
        for _ in range(20):
            f += 1
            t = 10.0 * k + g.uniform(0, 0.2)
            rows.append(
                f"{k},{f},{g.integers(0, 30)},{g.integers(0, 30)},1e6,{t},{g.integers(1, 9)}"
            )
    src = tmp_path / "train.csv"
    src.write_text("\n".join(rows) + "\n")
    wfile = tmp_path / "w.json"
    assert main(["learn-distance", "--flows", str(src), "--out", str(wfile)]) == 0
    d = json.loads(wfile.read_text())
    w = dict(zip(d["attributes"], d["weights"], strict=True))
    assert w["s_time"] > 0 and w["s_time"] == max(d["weights"])
    assert d["normalized"][0] == 1.0
    capsys.readouterr()
    out = tmp_path / "l.csv"
    # The learned weights have their own scale; learn-distance stored the best
    # radius on the training table with them.
    assert d["eps"] > 0 and d["tau"] == pytest.approx(d["eps"] / 10)
    assert main(["identify", "--flows", str(src), "--weights", str(wfile), "--out", str(out)]) == 0
    assert "precision 1.0000  recall 1.0000" in capsys.readouterr().out


def test_offline_identification_of_the_trace(fb_trace):
    w = ck.load_trace(fb_trace).head(60)
    w = ck.transform(ck.transform(w, "starts:model=spark,seed=1"), "ports:model=spark")
    t = identify.table_from_workload(w)
    res = identify.identify(t, "spark")
    keep = res.labels >= 0
    assert keep.sum() == (t.bytes >= 100e3).sum() == res.identified
    # CODA reports ~97% precision and ~98% recall for Spark traffic (Fig. 10a).
    assert res.quality.precision > 0.9 and res.quality.recall > 0.9
    # Exact DBSCAN and Rough-DBSCAN agree within 2 points of accuracy.
    exact = identify.identify(t, "spark", algorithm="dbscan")
    assert abs(exact.quality.accuracy - res.quality.accuracy) < 0.02
    assert res.quality == quality(t.coflow_id[keep], res.labels[keep])


# Three coflows 2 s apart, all flows of a coflow starting together: online
# identification finds exactly the true coflows at their arrival.
SEPARATED = """coflow_id,flow_id,src,dst,bytes,start_s
1,1,0,2,3e6,0
1,2,1,2,3e6,0
1,3,1,3,1e6,0
2,4,0,3,2e6,2
2,5,1,3,2e6,2
3,6,0,2,5e6,4
"""


def test_online_identification_equals_truth_when_coflows_are_apart():
    w = _core.parse_trace("separated", SEPARATED, "flows")
    truth = ck.simulate(w, "coda").coflows["cct_s"]
    ident = ck.simulate(w, "coda", params={"labels": "identify"}).coflows["cct_s"]
    assert np.allclose(truth, ident, rtol=0, atol=1e-9)
    # With eps so large that all flows are one cluster, identify is labels=one.
    one = ck.simulate(w, "coda", params={"labels": "one"}).coflows["cct_s"]
    big = ck.simulate(w, "coda", params={"labels": "identify", "eps": "100"}).coflows["cct_s"]
    assert np.allclose(one, big, rtol=0, atol=1e-9)


def test_online_identification_on_the_trace_is_close_to_truth(fb_trace):
    w = ck.load_trace(fb_trace).head(25)
    w = ck.transform(ck.transform(w, "starts:model=spark,tick_s=0.05,seed=1"), "ports:model=spark")
    # Without intra-coflow queues (per-flow events make coda slow to simulate).
    p = {"intra": "false"}
    ident = ck.simulate(w, "coda", params={"labels": "identify", **p}, check_invariants=True)
    truth = ck.simulate(w, "coda", params=p)
    fair = ck.simulate(w, "fair")
    a, b, c = (np.mean(r.coflows["cct_s"]) for r in (ident, truth, fair))
    # Identification errors cost little next to having no coflows at all.
    assert a < c and abs(a - b) / b < 0.25


def test_identify_parameters_are_checked():
    w = ck.synthetic("fb", seed=2).head(3)
    for params, message in [
        ({"weights": "1,2"}, "weights=1,2 is not spark, hadoop, equal or three numbers"),
        ({"eps": "-1"}, "eps"),
        ({"interval_s": "0"}, "interval_s"),
    ]:
        with pytest.raises(CoflowkitError, match=message):
            ck.simulate(w, "coda", params={"labels": "identify", **params})


def test_identify_reads_parquet_and_names_rows(tmp_path, capsys):
    import pandas as pd

    df = pd.read_csv(__import__("io").StringIO(FLOWS))
    src = tmp_path / "flows.parquet"
    df.to_parquet(src)
    out = tmp_path / "labels.csv"
    assert main(["identify", "--flows", str(src), "--out", str(out)]) == 0
    assert "precision 1.0000  recall 1.0000" in capsys.readouterr().out
    assert pd.read_csv(out)["label"].tolist()[5] == -1
    df.loc[2, "start_s"] = float("nan")
    df.to_parquet(src)
    assert main(["identify", "--flows", str(src), "--out", str(out)]) == 2
    assert "row 3: start_s: missing value" in capsys.readouterr().err


def test_simulation_reports_the_labels_it_scheduled_with(tmp_path):
    from coflowkit import runner

    w = _core.parse_trace("separated", SEPARATED, "flows")
    r = ck.simulate(w, "coda", params={"labels": "identify"})
    lab = np.asarray(r.extra["flow_labels"])
    assert quality([1, 1, 1, 2, 2, 3], lab) == quality([0, 0, 0, 1, 1, 2], [0, 0, 0, 1, 1, 2])
    assert lab[0] == lab[1] == lab[2] != lab[3] == lab[4] != lab[5]
    assert "flow_labels" not in ck.simulate(w, "aalo").extra
    # Through the runner and its cache, too.
    src = tmp_path / "sep.csv"
    src.write_text(SEPARATED)
    job = runner.Job(
        workload=runner.WorkloadSpec(trace=str(src)),
        policy="coda",
        params=(("labels", "identify"),),
    )
    for _ in range(2):
        (res,) = runner.run_jobs([job], cache_dir=str(tmp_path / "c"))
        assert np.array_equal(res.extra["flow_labels"], lab)


def test_simulation_reports_each_flows_binding():
    # CODA binds a flow to the extended coflow it is first served with (late
    # binding). Without late binding that is always the flow's own label; with it
    # and injected neighbour errors, the label or the flow's true coflow (the only
    # coflow a mislabelled flow is near), and on this trace some flows take the
    # second. Labels and bindings are coflow indices in the workload's order.
    w = ck.load_trace(SHARED_TRACE).head(40)
    truth = np.unique(np.asarray(w.flow_columns()["coflow_id"]), return_inverse=True)[1]
    base = {"labels": "random", "error_rate": "0.4", "seed": "3"}
    off = ck.simulate(w, "coda", base | {"late_binding": "false"}).extra
    assert np.array_equal(off["flow_bindings"], off["flow_labels"])
    on = ck.simulate(w, "coda", base).extra
    lab, bound = np.asarray(on["flow_labels"]), np.asarray(on["flow_bindings"])
    assert len(bound) == w.num_flows and (bound >= 0).all()
    assert ((bound == lab) | (bound == truth)).all()
    moved = bound != lab
    assert moved.any() and (bound[moved] == truth[moved]).all()
    assert "flow_bindings" not in ck.simulate(w, "aalo").extra
