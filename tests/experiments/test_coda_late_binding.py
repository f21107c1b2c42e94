"""Late binding's largest losses (coda_late_binding): the queue of a coflow's true
bytes and of its labels' bytes, by hand, on a made-up run of three coflows."""

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from coflowkit.experiments import coda_late_binding as lbx
from coflowkit.experiments import coda_scheduler as cs

MIB = 1048576.0


def test_codas_thresholds_are_ten_mib_times_powers_of_ten():
    th = lbx.coda_thresholds()
    # docs/policies/coda.md: K = 10 queues, T0 = 10 MiB, E = 10.
    assert len(th) == 9
    assert th[0] == 10 * MIB and th[5] == 10 * MIB * 1e5
    got = lbx.queue_of([0, 10 * MIB - 1, 10 * MIB, 1.7e12, 1e20], th)
    assert got.tolist() == [0, 0, 1, 6, 9]


def test_pieces_by_hand():
    flows = pd.DataFrame({"coflow_id": [1, 1, 2], "bytes": [10.0, 30.0, 60.0]})
    p = lbx.pieces(flows, np.array([7, 8, 8]))
    # Coflow 1: 10 B in label 7, 30 B in label 8 (which also holds coflow 2's 60 B).
    assert p.loc[1].tolist() == [40.0, 0.75, 90.0]
    assert p.loc[2].tolist() == [60.0, 1.0, 90.0]


class _Spec:
    def __init__(self, flows):
        self.flows = flows

    def load(self):
        ids = np.unique(self.flows["coflow_id"])
        return SimpleNamespace(
            flow_columns=lambda: self.flows, coflow_columns=lambda: {"coflow_id": ids}
        )


def _run(cct, labels=None, bindings=None):
    c = pd.DataFrame(
        {
            "coflow_id": [1, 2, 3],
            "cct_s": cct,
            "bin": ["LW", "SN", "LN"],
            "slowdown": [1.0, 1.0, 1.0],
            "finish_s": cct,
        }
    )
    extra = {} if labels is None else {"flow_labels": labels}
    if bindings is not None:
        extra["flow_bindings"] = bindings
    return SimpleNamespace(coflows=c, extra=extra)


def _ctx(coda, nolb, aalo):
    key = "stretched-hadoop"
    assert cs.BY_KEY[key].ablate
    # Coflow 1: three flows of 0.6 TB (1.8 TB: queue 6) in labels 0, 1, 2; coflow 2
    # (1 MB, queue 0) in label 1; coflow 3 (20 MB, queue 1) in label 2. Labels 1
    # and 2 hold 0.6 TB and a little: queue 5.
    flows = {
        "coflow_id": np.array([1, 1, 1, 2, 3]),
        "bytes": np.array([6e11, 6e11, 6e11, 1e6, 2e7]),
    }
    labels = [0, 1, 2, 1, 2]
    # With late binding, two of coflow 1's flows are bound to its own label (index
    # 0), the third to label 1 (coflow 2's); the others to their own.
    results = {
        (key, cs.CODA): _run(coda, bindings=[0, 0, 1, 1, 2]),
        (key, cs.NO_LB): _run(nolb, labels),
        (key, cs.AALO): _run(aalo),
    }
    return SimpleNamespace(
        opts=SimpleNamespace(select=(key,)), results=results, prep={"specs": {key: _Spec(flows)}}
    )


def test_losses_table_and_values_by_hand():
    ctx = _ctx(coda=[1000.0, 50.0, 5.0], nolb=[400.0, 10.0, 6.0], aalo=[900.0, 1.0, 4.0])
    t = lbx.losses_table(ctx)
    # Losses 600, 40, -1 s: every coflow, the largest first.
    assert t["coflow"].tolist() == [1, 2, 3]
    assert t["queue (true bytes)"].tolist() == [6, 0, 1]
    assert t["queue of its fullest label w/o L.B."].tolist() == [5, 5, 5]
    assert t["largest label share w/o L.B."].tolist() == pytest.approx([1 / 3, 1.0, 1.0])
    assert t["CCT Aalo, truth (s)"].tolist() == [900.0, 1.0, 4.0]
    # Coflow 1: 1.2 of its 1.8 TB bound to label 0, which holds only those (queue
    # 6); coflows 2 and 3 wholly in their own labels: label 1 holds coflow 2's 1 MB
    # and coflow 1's third flow (0.6 TB, queue 5), label 2 coflow 3's 20 MB (queue 1).
    assert t["share bound to its own label (CODA)"].tolist() == pytest.approx([2 / 3, 1, 1])
    assert t["queue of its own label (CODA)"].tolist() == [6, 5, 1]
    v = lbx.losses_values(ctx)
    # Only coflow 1 sits higher on its labels than on its true bytes.
    assert (v["count"], v["split"], v["others"]) == (3, 1, [2, 3])
    assert (v["split_queue"], v["split_label_queue"]) == ([6], [5])
    assert v["split_share"] == pytest.approx((1 / 3, 1 / 3))
    assert v["own_share"] == pytest.approx((2 / 3, 2 / 3)) and v["own_queue"] == [6]
    assert v["sums"] == {"coda": 1000.0, "nolb": 400.0, "aalo": 900.0}
    assert v["lw_nolb"] == pytest.approx((400 / 900, 400 / 900))
    assert v["lw_coda"] == pytest.approx((1000 / 900, 1000 / 900))


def test_nothing_to_show_where_late_binding_does_not_slow_coda():
    ctx = _ctx(coda=[400.0, 10.0, 6.0], nolb=[1000.0, 50.0, 5.0], aalo=[900.0, 1.0, 4.0])
    assert lbx.losses_table(ctx) is None
    assert lbx.losses_values(ctx) is None


def _ip_ctx(bindings=True):
    key = "stretched-hadoop"
    # Coflow 1 (SN): two flows of 1 MB; coflow 2 (LW): three of 0.6 TB; coflow 3
    # (SN): one of 2 MB. CODA bound coflow 1's flows and one of coflow 2's to label 0
    # (coflow 1's), the rest of coflow 2 to label 1, coflow 3 to label 2.
    flows = {
        "coflow_id": np.array([1, 1, 2, 2, 2, 3]),
        "bytes": np.array([1e6, 1e6, 6e11, 6e11, 6e11, 2e6]),
    }
    extra = {"flow_bindings": [0, 0, 0, 1, 1, 2]} if bindings else {}

    def run(cct):
        c = pd.DataFrame(
            {
                "coflow_id": [1, 2, 3],
                "cct_s": cct,
                "bin": ["SN", "LW", "SN"],
                "slowdown": [1.0, 1.0, 1.0],
            }
        )
        return SimpleNamespace(coflows=c, extra=extra)

    results = {
        (key, cs.CODA): run([100.0, 500.0, 3.0]),
        (key, cs.NO_IP): run([5.0, 520.0, 2.0]),
        (key, cs.AALO): run([4.0, 450.0, 2.0]),
    }
    spec = SimpleNamespace(
        load=lambda: SimpleNamespace(
            flow_columns=lambda: flows, coflow_columns=lambda: {"coflow_id": np.array([1, 2, 3])}
        )
    )
    return SimpleNamespace(
        opts=SimpleNamespace(select=(key,)), results=results, prep={"specs": {key: spec}}
    )


def test_intra_losses_by_hand():
    t = lbx.ip_table(_ip_ctx()).set_index("coflow")
    # SN losses: coflow 1 95 s, coflow 3 1 s (both shown, the largest first).
    assert t.index.tolist() == [1, 3]
    one = t.loc[1]
    # Label 0 (coflow 1's) also holds one flow of coflow 2: 0.6 TB, and with coflow
    # 1's 2 MB the label reaches queue 5 (100 GiB-ish to 1 TiB-ish of D-CLAS).
    assert (one["its label (coflow)"], one["other flows bound there"]) == (1, 1)
    assert one["their GB"] == pytest.approx(600.0)
    assert (one["most of them from"], one["label's queue by the end"]) == (2, 5)
    assert (one["CCT CODA (s)"], one["CCT w/o I.P. (s)"], one["CCT Aalo, truth (s)"]) == (
        100.0,
        5.0,
        4.0,
    )
    three = t.loc[3]
    assert (three["other flows bound there"], three["label's queue by the end"]) == (0, 0)
    (row,) = lbx.ip_values(_ip_ctx())["rows"]
    assert row["share"] == pytest.approx(95 / 96) and row["top"]["coflow"] == 1
    # 100 s against 5 s without it: 20x, a loss the text reads the rules into.
    assert row["factor"] == pytest.approx(20.0) and row["strong"]


def test_intra_losses_need_the_runs_bindings():
    with pytest.raises(ValueError, match="no flow bindings.*fresh --cache-dir"):
        lbx.ip_table(_ip_ctx(bindings=False))
