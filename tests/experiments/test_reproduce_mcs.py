"""`coflowkit reproduce mcs` on a small slice of the Facebook trace: the files it
writes, and its tables against direct `coflowkit.simulate` runs of the same
workloads and policies."""

from types import SimpleNamespace

import coflowkit as ck
import numpy as np
import pandas as pd
import pytest
from coflowkit import cli, mcs_train, metrics
from coflowkit.experiments import EXPERIMENTS, mcs

N = 38  # coflows replayed (of the 50 in the slice): every bin has some


@pytest.fixture(scope="module")
def small_trace(tmp_path_factory):
    """The first 50 coflows of the Facebook trace with at most 120 flows (no coflow
    wide enough to make varys slow), on its 150 ports."""
    from conftest import SHARED_TRACE

    if not SHARED_TRACE.exists():
        pytest.fail(f"the Facebook trace is missing: expected it at {SHARED_TRACE}")
    lines = SHARED_TRACE.read_text().splitlines()
    keep = []
    for line in lines[1:]:
        f = line.split()
        mappers = int(f[2])
        if mappers * int(f[3 + mappers]) <= 120:
            keep.append(line)
        if len(keep) == 50:
            break
    path = tmp_path_factory.mktemp("trace") / "fb50.txt"
    path.write_text(f"150 {len(keep)}\n" + "\n".join(keep) + "\n")
    return str(path)


@pytest.fixture(scope="module")
def out(small_trace, tmp_path_factory):
    d = tmp_path_factory.mktemp("mcs")
    argv = ["reproduce", "mcs", "--trace", small_trace, "--coflows", str(N), "--out", str(d)]
    assert cli.main([*argv, "--workers", "1", "--no-cache"]) == 0
    return d


def _csv(out, name):
    return pd.read_csv(out / f"{name}.csv")


def _ratio_of_means(r, base, b):
    """Average CCT of ``r`` over bin ``b`` / average CCT of ``base`` over it."""
    c, a = r.coflows, base.coflows
    m = np.ones(len(a), bool) if b == "all" else (a["bin"] == b).to_numpy()
    return c["cct_s"].to_numpy()[m].mean() / a["cct_s"].to_numpy()[m].mean()


def test_registered():
    assert "mcs" in EXPERIMENTS


def test_writes_tables_figures_and_report(out):
    report = (out / "report.md").read_text()
    for title in ["Table I", "Fig. 13", "Fig. 14", "Fig. 15", "Fig. 16", "Fig. 17", "Fig. 18"]:
        assert f"## {title}" in report
    assert "Where coflowkit and the paper differ" in report
    assert f"--coflows {N}" in report
    for name in [
        "table1_correlations",
        "table1_classes",
        "fig13_normalized",
        "fig13_claims",
        "fig14_normalized",
        "fig15_normalized",
        "fig14_15_claims",
        "fig16_width",
        "fig17_deltas",
        "fig18a_wide",
        "fig18b_narrow",
    ]:
        assert (out / f"{name}.csv").exists() and (out / f"{name}.md").exists()
    for png in [
        "fig13a_cct_cdf",
        "fig13b_normalized",
        "fig14_bins",
        "fig15_bins",
        "fig16_width",
        "fig17_deltas",
        "fig18a_wide",
        "fig18b_narrow",
    ]:
        assert (out / f"{png}.png").stat().st_size > 1000
        assert f"({png}.png)" in report


def test_fig13_equals_direct_runs(small_trace, out):
    # The batch transform goes over the whole trace, then the first N coflows are kept.
    w = ck.transforms.apply_all(ck.load_trace(small_trace), [mcs.BATCH]).head(N)
    assert len(set(w.coflow_columns()["arrival_s"])) < N  # real batches
    runs = {name: ck.simulate(w, p) for name, p in [("Varys", "varys"), ("Aalo", "aalo")]}
    runs["MCS"] = ck.simulate(w, "mcs")
    t = _csv(out, "fig13_normalized").set_index("policy")
    assert all(t.loc["coflows", b] > 0 for b in metrics.BINS)
    for name, r in runs.items():
        for b in mcs.COLS:
            assert t.loc[name, b] == pytest.approx(_ratio_of_means(r, runs["Aalo"], b))
    a = runs["Aalo"].coflows
    sn = a[a["bin"] == "SN"]
    assert t.loc[mcs.BOUND, "SN"] == pytest.approx(sn["isolated_s"].mean() / sn["cct_s"].mean())
    assert t.loc["coflows", "all"] == N
    assert sum(t.loc["coflows", b] for b in metrics.BINS) == N
    claims = _csv(out, "fig13_claims").set_index("quantity")
    assert float(claims.loc["MCS, SN", "coflowkit"]) == pytest.approx(t.loc["MCS", "SN"])
    assert float(claims.loc["MCS, SN", "paper"]) == 0.38


def test_normalization_is_a_ratio_of_means_by_hand():
    # Two SN coflows (Aalo 1 s and 3 s, MCS 0.5 s and 1.5 s) and one LW (10 s, 20 s):
    # SN = (0.5 + 1.5) / (1 + 3) = 0.5, LW = 2, all = 22 / 14 (a mean of ratios
    # would give 1); an empty bin is NaN.
    def run(cct):
        return SimpleNamespace(
            coflows=pd.DataFrame(
                {
                    "coflow_id": np.array([1, 2, 3], dtype=np.uint64),
                    "cct_s": cct,
                    "isolated_s": [0.5, 1.0, 5.0],
                    "slowdown": np.array(cct) / [0.5, 1.0, 5.0],
                    "bin": ["SN", "SN", "LW"],
                }
            )
        )

    aalo, m = run([1.0, 3.0, 10.0]), run([0.5, 1.5, 20.0])
    n = mcs.normalized(m, aalo)
    assert n["SN"] == pytest.approx(0.5)
    assert n["LW"] == pytest.approx(2.0)
    assert n["all"] == pytest.approx(22 / 14)
    assert np.isnan(n["LN"]) and np.isnan(n["SW"])
    bound = mcs.lower_bound(aalo)
    assert bound["SN"] == pytest.approx(1.5 / 4) and bound["all"] == pytest.approx(6.5 / 14)


@pytest.mark.parametrize(
    "fig,load,policy",
    [("fig14", 0.8, "MCS"), ("fig14", 0.8, "Varys"), ("fig15", 0.2, "MCS"), ("fig14", 0.1, "MCS")],
)
def test_poisson_rows_equal_direct_runs(small_trace, out, fig, load, policy):
    iv = mcs.INTERVALS[fig]
    w = ck.transforms.apply_all(
        ck.load_trace(small_trace),
        [f"poisson:load={load},seed=1", f"batch:interval_s={iv},spread=instant"],
    ).head(N)
    aalo = ck.simulate(w, "aalo")
    r = ck.simulate(w, policy.lower())
    t = _csv(out, f"{fig}_normalized")
    row = t[(t["load"] == load) & (t["policy"] == policy)].iloc[0]
    for b in mcs.COLS:
        assert row[b] == pytest.approx(_ratio_of_means(r, aalo, b))
    # Varys ran at the loads of VARYS_LOADS only.
    assert set(t[t["policy"] == "Varys"]["load"]) == set(mcs.VARYS_LOADS)


@pytest.mark.parametrize(
    "table,setting,params",
    [
        ("fig16_width", "missing 15%", {"width_unknown": 0.15, "seed": 1}),
        ("fig16_width", "alpha 0.1", {"width_scale": 0.1}),
        ("fig17_deltas", "x0.5", {"deltas": "5,50,500,5000"}),
        ("fig17_deltas", "step 100", {"deltas": "100,200,300,400"}),
        ("fig18a_wide", "16 MB", {"wide_first_mb": 16}),
        ("fig18b_narrow", "1000 MB", {"narrow_first_mb": 1000}),
    ],
)
def test_variant_rows_equal_direct_runs(small_trace, out, table, setting, params):
    w = ck.transforms.apply_all(ck.load_trace(small_trace), [mcs.BATCH]).head(N)
    aalo, exact = ck.simulate(w, "aalo"), ck.simulate(w, "mcs")
    r = ck.simulate(w, "mcs", params=params)
    row = _csv(out, table).set_index("setting").loc[setting]
    for b in mcs.COLS:
        assert row[b] == pytest.approx(_ratio_of_means(r, aalo, b))
        assert row[f"{b} / exact"] == pytest.approx(_ratio_of_means(r, exact, b))


def test_table1_is_mcs_train_on_the_whole_trace(small_trace, out):
    w = ck.load_trace(small_trace)
    corr = mcs_train.correlations(mcs_train.coflow_attributes(w))
    t = _csv(out, "table1_correlations")
    assert list(t["attributes"]) == [c.label for c in corr]
    assert np.allclose(t["raw"], [c.raw for c in corr])
    assert np.allclose(t["log10"], [c.log10 for c in corr])
    assert list(t["paper raw"]) == [0.54, 0.5, 0.22, 0.97, 0.46, 0.51]
    classes = _csv(out, "table1_classes")
    trained = mcs_train.train(w)
    assert list(classes["priority p_i"]) == [c.priority for c in trained.classes]


def test_plan_batches_before_the_subset_and_runs_each_setting_once():
    keys, jobs = mcs.plan("trace.txt", 200)
    fig13 = [j for k, j in zip(keys, jobs, strict=True) if k[0] in ("fig13", "mcs")]
    assert all(j.workload.transforms == (mcs.BATCH,) and j.workload.first == 200 for j in fig13)
    params = [j.params for j in fig13 if j.policy == "mcs"]
    assert len(params) == len(set(params))  # default-valued settings share the default run
    assert () in params
    poisson = [j for k, j in zip(keys, jobs, strict=True) if k[0] in mcs.INTERVALS]
    assert all(j.workload.transforms[0].startswith("poisson:") for j in poisson)
    assert all(j.workload.transforms[1].startswith("batch:") for j in poisson)
    n_varys = sum(j.policy == "varys" for j in poisson)
    assert n_varys == len(mcs.INTERVALS) * len(mcs.VARYS_LOADS)
    assert len(poisson) == len(mcs.INTERVALS) * 2 * len(mcs.LOADS) + n_varys
    # User transforms go first; `--coflows all` replays everything.
    keys, jobs = mcs.plan("trace.txt", None, ("sample:count=100",))
    assert all(j.workload.transforms[0] == "sample:count=100" for j in jobs)
    assert all(j.workload.first is None for j in jobs)


def test_run_all_returns_results_in_job_order(small_trace):
    from coflowkit import runner

    specs = [
        runner.WorkloadSpec(trace=small_trace, first=8, transforms=mcs.poisson_transforms(x, 10))
        for x in (0.1, 0.2, 0.3, 0.4, 0.5)
    ]
    jobs = [runner.Job(s, p) for s in specs for p in ("aalo", "varys")]
    stats = {}
    got = mcs.run_all(jobs, 1, None, stats)
    want = runner.run_jobs(jobs, 1, None)
    for g, w in zip(got, want, strict=True):
        assert g.policy == w.policy
        assert np.array_equal(g.coflows["cct_s"].to_numpy(), w.coflows["cct_s"].to_numpy())
    assert stats == {"cached": 0, "simulated": len(jobs)}


def test_class_changes_counts_coflows_whose_width_class_moves():
    # A class is how many Delta_i are <= the width. Default Delta = 10, 100,
    # 1000, 10000: classes 0, 1, 1, 2, 2, 4. Delta x 5 = 50, 500, 5000, 50000:
    # classes 0, 0, 1, 1, 2, 2 -> widths 10, 100 and 20000 move.
    w = [5, 10, 50, 100, 999, 20000]
    assert mcs.class_changes(w, 5.0) == 3
    assert mcs.class_changes(w, 1.0) == 0
