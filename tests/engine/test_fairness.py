"""The fairness issue from Python: instantaneous metrics, strategic reports,
snapshots, and the experiment building blocks, against hand-computed values."""

import json
import math

import coflowkit as ck
import numpy as np
import pandas as pd
import pytest
from coflowkit import cli, metrics
from coflowkit.experiments import coflex, common


def test_drf_series_every_event_matches_the_hand_computation(example_path):
    # Same numbers as crates/coflowkit-sim/tests/series.rs: every coflow at P = ½
    # while sharing, 1 alone; utilization = Σ rate · 2 / (4 · 128 MiB/s).
    r = ck.simulate(ck.load_trace(example_path), "drf", record="every", record_coflows=True)
    s = r.series
    assert s["time_s"].tolist() == pytest.approx([0.0, 0.016, 0.03125, 0.0785, 0.10175])
    assert s["duration_s"].tolist() == pytest.approx([0.016, 0.01525, 0.04725, 0.02325, 0.0])
    assert s["utilization"].tolist() == pytest.approx([0.5, 0.75, 0.5, 0.5, 0.0])
    assert s["min_progress"].tolist()[:4] == pytest.approx([0.5, 0.5, 0.5, 1.0])
    assert math.isnan(s["min_progress"].iloc[4])
    assert r.progress["coflow_id"].tolist() == [1, 2, 1, 2, 3, 1, 3, 1]
    u = r.series_summary["utilization"]
    # Time-weighted over the busy samples: (0.5·0.016 + 0.75·0.01525 + 0.5·0.04725
    # + 0.5·0.02325) / 0.10175.
    want = (0.5 * 0.016 + 0.75 * 0.01525 + 0.5 * 0.04725 + 0.5 * 0.02325) / 0.10175
    assert u["time_weighted_mean"] == pytest.approx(want)
    assert u["mean"] == pytest.approx((0.5 + 0.75 + 0.5 + 0.5) / 4)
    assert r.series_summary["disparity"]["max"] == pytest.approx(1.0)


def test_starvation_makes_disparity_infinite_and_is_counted(example_path):
    r = ck.simulate(ck.load_trace(example_path), "fifo", record="every")
    d = r.series_summary["disparity"]
    assert r.series["disparity"].iloc[0] == np.inf
    assert 0 < d["fraction_infinite"] < 1
    assert d["max"] == np.inf


def test_percentile_handles_infinity():
    assert metrics.percentile(np.array([1.0, np.inf]), 0) == 1.0
    assert metrics.percentile(np.array([1.0, np.inf]), 100) == np.inf
    assert metrics.percentile(np.array([1.0, 3.0]), 50) == 2.0


def test_bad_record_values_are_clear_errors(example_path):
    w = ck.load_trace(example_path)
    with pytest.raises(ck.CoflowkitError, match="record must be 'every' or a number"):
        ck.simulate(w, "fair", record="often")
    with pytest.raises(ck.CoflowkitError, match=">= 0 seconds"):
        ck.simulate(w, "fair", record=-1)


def test_reports_change_drf_shares_and_bad_reports_name_the_problem(example_path):
    w = ck.load_trace(example_path)
    # Coflow 2 (1→1: up1, down1) also claims up0, which C1 and C3 use. Until C3
    # arrives, Σ d' peaks at 2 either way (P* = ½). From 0.016 s, up0 carries three
    # claims: P* = 1/3, everyone at 128/3. C2 has 0.976 MiB left → ends at
    # 0.016 + 0.976·3/128 = 0.038875. Then C1 and C3 share up0 at 64: C3 has sent
    # 0.976 and ends at 0.038875 + 3.024/64 = 0.086125 (CCT 0.070125); C1 has sent
    # 5.024 by then and ends alone at 0.086125 + 2.976/128 = 0.109375.
    lying = w.with_reports({2: {"up1": 1.0, "down1": 1.0, "up0": 1.0}})
    assert ck.simulate(lying, "drf").coflows["cct_s"].tolist() == pytest.approx(
        [0.109375, 0.038875, 0.070125]
    )
    assert ck.simulate(w, "drf").coflows["cct_s"].tolist() == pytest.approx(
        [0.10175, 0.03125, 0.0625]
    )
    with pytest.raises(ck.CoflowkitError, match="coflow 2 uses link down1 but reports no demand"):
        w.with_reports({2: {"up1": 1.0}})
    with pytest.raises(ck.CoflowkitError, match="'middle' is not a link"):
        w.with_reports({2: {"middle": 1.0}})
    with pytest.raises(ck.CoflowkitError, match="coflow 9 is not in the workload"):
        w.with_reports({9: {"up0": 1.0}})


def test_reports_reach_coflex_the_paper_s_fig_3():
    # Coflex Fig. 3 in a 6-port big switch (see drf.rs): A (coflow 1) truthful with
    # doubled bytes, B (coflow 2) claims ⟨1, 1⟩. With alpha = 1, B's true progress
    # rises to ¾ and A's falls to ½ (the paper's Fig. 3b).
    mib = common.MIB
    rows = [(1, 0, 2, 2 * mib, 0.0), (1, 3, 1, 1 * mib, 0.0)]
    rows += [(2, 0, 4, mib / 6, 0.0), (2, 5, 1, 1 * mib, 0.0)]
    w = common.flows_workload(rows, "fig3", ports=6)
    lying = w.with_reports({2: {"up0": 1, "up5": 1, "down1": 1, "down4": 1}})
    per, _ = ck.snapshot(lying, "coflex", {"alpha": 1})
    assert per.set_index("coflow_id")["progress"].to_dict() == pytest.approx({1: 0.5, 2: 0.75})
    per, _ = ck.snapshot(w, "coflex", {"alpha": 1})
    # Truthful, B first in SEBF (Γ_B < Γ_A): DRF gives both 2/3; B's MADD is
    # blocked by the full down1, backfilling cannot raise a coflow's minimum.
    assert per.set_index("coflow_id")["progress"].to_dict() == pytest.approx({1: 2 / 3, 2: 2 / 3})


def test_snapshot_is_the_first_allocation(example_path):
    per, tot = ck.snapshot(ck.load_trace(example_path), "fifo")
    assert per["progress"].tolist() == [1.0, 0.0]
    assert tot["utilization"] == 0.5 and tot["active_coflows"] == 2
    with pytest.raises(ck.CoflowkitError, match="horizon must be a time >= 0, got -1"):
        ck.snapshot(ck.load_trace(example_path), "fifo", at_s=-1.0)
    late = common.flows_workload([(1, 0, 1, 1e6, 1.0)], "late")
    with pytest.raises(ck.CoflowkitError, match="nothing has started by t=0.5 s"):
        ck.snapshot(late, "fifo", at_s=0.5)


def test_cli_simulate_writes_the_series(example_path, tmp_path):
    out = tmp_path / "run"
    rc = cli.main(
        ["simulate", "--trace", str(example_path), "--policy", "drf", "--out", str(out)]
        + ["--record", "every", "--record-coflows", "--quiet"]
    )
    assert rc == 0
    s = pd.read_parquet(out / "series.parquet")
    assert s["utilization"].tolist() == pytest.approx([0.5, 0.75, 0.5, 0.5, 0.0])
    assert len(pd.read_csv(out / "progress.csv")) == 8
    summary = json.loads((out / "summary.json").read_text())
    assert summary["series"]["disparity"]["max"] == pytest.approx(1.0)


def test_cli_record_coflows_needs_record(example_path, capsys):
    rc = cli.main(["simulate", "--trace", str(example_path), "--policy", "drf", "--record-coflows"])
    assert rc == 2
    assert "--record-coflows needs --record" in capsys.readouterr().err


def test_micro_benchmark_workload_has_the_papers_shape():
    w = common.testbed_micro((0.0, 10.0, 20.0), "random", seed=3)
    c = w.flow_columns()
    df = pd.DataFrame(c)
    assert w.ports == 60
    assert df.groupby("coflow_id").size().to_dict() == {1: 360, 2: 60, 3: 60}
    a = df[df["coflow_id"] == 1]
    assert ((a["src"] // 6) == (a["dst"] // 6)).all()  # inside a group of 6
    b = df[df["coflow_id"] == 2]
    assert set(zip(b["src"], b["dst"], strict=True)) == {(i, i + 30) for i in range(30)} | {
        (i + 30, i) for i in range(30)
    }
    cc = df[df["coflow_id"] == 3]
    js = list(range(15)) + list(range(30, 45))
    assert set(zip(cc["src"], cc["dst"], strict=True)) == {(j, j + 15) for j in js} | {
        (j + 15, j) for j in js
    }
    assert df["bytes"].between(30 * common.MIB, 100 * common.MIB).all()
    assert df.groupby("coflow_id")["start_s"].first().tolist() == [0.0, 10.0, 20.0]


def test_a_smaller_micro_benchmark_gives_every_link_the_same_flows():
    # Two groups (12 machines) instead of ten: B pairs i and i + 6, C j and j + 3
    # for j in 0..2 and 6..8. Every machine still sends and receives 6 flows of A
    # (5 without its flow to itself), 1 of B and 1 of C, as on 60 machines.
    w = common.testbed_micro((0.0, 10.0, 20.0), "random", seed=3, groups=2)
    df = pd.DataFrame(w.flow_columns())
    assert w.ports == 12
    assert df.groupby("coflow_id").size().to_dict() == {1: 72, 2: 12, 3: 12}
    for end in ("src", "dst"):
        per = df.groupby(["coflow_id", end]).size().unstack(0).fillna(0)
        assert (per[1] == 6).all() and (per[2] == 1).all() and (per[3] == 1).all()
    cc = df[df["coflow_id"] == 3]
    assert set(zip(cc["src"], cc["dst"], strict=True)) == {
        (j, j + 3) for j in (0, 1, 2, 6, 7, 8)
    } | {(j + 3, j) for j in (0, 1, 2, 6, 7, 8)}
    # without flows to self: the same sizes for the others (same draws)
    w2 = common.testbed_micro((0.0, 10.0, 20.0), "random", seed=3, groups=2, self_flows=False)
    d2 = pd.DataFrame(w2.flow_columns())
    assert len(d2) == 96 - 12 and (d2["src"] != d2["dst"]).all()
    key = ["coflow_id", "src", "dst"]
    both = d2.merge(df, on=key, suffixes=("", "_all"))
    assert len(both) == len(d2) and (both["bytes"] == both["bytes_all"]).all()
    with pytest.raises(ck.CoflowkitError, match="groups must be even"):
        common.testbed_micro((0.0, 10.0, 20.0), "random", groups=3)


def test_micro_benchmark_with_equal_flows_is_uplink_bound():
    # Coflex's setting: every machine uploads A's 6 flows, and B and C add one each
    # for the machines in both patterns: 8 · 100 MiB at 128 MiB/s = 6.25 s, the
    # end of A under any work-conserving policy.
    w = common.testbed_micro((0.0, 3.0, 4.0), "equal")
    for p in ["coflex", "varys", "hug"]:
        r = ck.simulate(w, p, fabric="bigswitch:up_gbps=1,down_gbps=40")
        assert r.coflows["finish_s"].max() == pytest.approx(6.25), p


def test_concurrent_sample_is_seeded_and_starts_at_zero(example_path):
    w = common.flows_workload(
        [(k, k % 3, (k + 1) % 3, 1e6, float(k)) for k in range(1, 11)], "ten", ports=3
    )
    a = common.concurrent_sample(w, 4, seed=5)
    b = common.concurrent_sample(w, 4, seed=5)
    assert a.flow_columns() == b.flow_columns()
    assert a.num_coflows == 4 and set(a.flow_columns()["start_s"]) == {0.0}
    with pytest.raises(ck.CoflowkitError, match="cannot sample 11 coflows from 10"):
        common.concurrent_sample(w, 11, seed=5)


def test_misreporting_rarely_pays(tmp_path):
    # Fig. 4 on a few runs: the averages are well defined ratios, and lying does
    # not pay on average in any of them (the paper: under 3% of runs).
    runs = coflex.misreport(runs=3, seed=2)
    assert len(runs) == 3
    assert (runs["average"] <= 1.0).all()
    assert 0 < runs["average"].median() < 1
    for _, r in runs.iterrows():
        # the best report gains at least the average; the vectors are scaled to a
        # largest entry of 1; the liar's rank is among the 100
        assert r["best gain"] >= r["average"] and max(r["true vector"]) == 1.0
        assert max(r["best vector"]) == 1.0
        assert 1 <= r["SEBF rank"] <= 100 and r["bottleneck link"] in (1, 2)
        assert 0.0 <= r["spare on the other link"] < 1.0


def test_reproduce_ncdrf_tables_agree_with_direct_runs(fb_trace, tmp_path):
    out = tmp_path / "ncdrf"
    rc = cli.main(["reproduce", "ncdrf", "--coflows", "12", "--out", str(out), "--workers", "1"])
    assert rc == 0
    t2 = pd.read_csv(out / "table2_slowdown_values.csv").set_index("claim")
    w = ck.load_trace(fb_trace).head(12)
    for policy, name in [("psp", "PS-P"), ("ncdrf", "NC-DRF"), ("drf", "DRF")]:
        sl = ck.simulate(w, policy).coflows["slowdown"]
        assert t2.loc[f"{name} mean", "exact"] == pytest.approx(sl.mean())
        assert t2.loc[f"{name} p95", "exact"] == pytest.approx(np.percentile(sl, 95))
    assert t2.loc["DRF mean", "paper"] == 3.36
    report = (out / "report.md").read_text()
    assert "Table II" in report and "fig5a_disparity_cdf.png" in report
    for f in ["fig5a_disparity_cdf.png", "fig5b_utilization.png", "fig6a_normalized_cdf.png"]:
        assert (out / f).stat().st_size > 1000
    norm = pd.read_csv(out / "fig6_normalized.csv").set_index(["model", "policy"])
    drf = ck.simulate(w, "drf").coflows["cct_s"].to_numpy()
    ps = ck.simulate(w, "psp").coflows["cct_s"].to_numpy()
    assert norm.loc[("exact", "PS-P"), "all"] == pytest.approx(np.mean(ps / drf))


def test_reproduce_rejects_bad_coflow_counts(capsys):
    assert cli.main(["reproduce", "ncdrf", "--coflows", "zero"]) == 2
    assert "--coflows must be a number or 'all'" in capsys.readouterr().err
