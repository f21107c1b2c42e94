"""benches/coda_whole.py: CODA's Fig. 11 on the whole trace from a sweep's tables,
checked on hand-made tables and, end to end, on a small real sweep."""

import sys
import textwrap

import pandas as pd
import pytest
from coflowkit import sweep
from conftest import load_bench

IDENTIFY = "coda:distance_s=0.75,eps=0.5,interval_s=0.1,labels=identify,tau=0.05,weights=spark"


def bench():
    return load_bench("coda_whole")


#: (policy label, CCT of an SN coflow, CCT of an LW coflow).
CCTS = [
    (IDENTIFY, 1.0, 10.0),
    ("aalo", 1.0, 9.0),
    ("fair", 4.0, 20.0),
    (IDENTIFY + ",late_binding=false", 2.0, 10.0),
]


def tables(b):
    rows = []
    for policy, sn, lw in CCTS:
        for cid, b_, cct in ((1, "SN", sn), (2, "LW", lw)):
            rows.append({"workload": "w", "fabric": "bigswitch", "policy": policy,
                         "coflow_id": cid, "bin": b_, "cct_s": cct})  # fmt: skip
    coflows = pd.DataFrame(rows)
    coflows["scheme"] = coflows.policy.map(b.scheme)
    return b.by_scheme(coflows)


def test_labels_map_to_schemes_and_unknown_ones_are_refused():
    b = bench()
    assert b.scheme(IDENTIFY) == b.CODA
    assert b.scheme(IDENTIFY + ",late_binding=false") == b.NO_LB
    assert b.scheme(IDENTIFY + ",intra=false") == b.NO_IP
    assert b.scheme("varys") == b.VARYS
    with pytest.raises(SystemExit, match="coda:labels=truth"):
        b.scheme("coda:labels=truth")
    with pytest.raises(SystemExit, match="aalo:queues=4"):
        b.scheme("aalo:queues=4")


def test_normalized_ccts_targets_and_mechanisms_by_hand():
    b = bench()
    s = tables(b)
    f = b.fig11(s).set_index("scheme")
    # Aalo: (1 + 9) / (1 + 10); SN 1/1; LW 9/10. Fair: 24/11, SN 4, LW 2.
    assert f.loc["Aalo", "all"] == pytest.approx(10 / 11)
    assert f.loc["Aalo", "SN"] == pytest.approx(1.0)
    assert f.loc["Aalo", "LW"] == pytest.approx(0.9)
    assert f.loc["Fair", "all"] == pytest.approx(24 / 11)
    assert f.loc["Fair", "SN"] == pytest.approx(4.0)
    assert pd.isna(f.loc["Fair", "LN"])  # no LN coflow
    assert f.loc["coflows", "SN"] == 1 and f.loc["coflows", "all"] == 2
    t = b.targets(s).set_index("target")
    # CODA / Aalo = 11/10 = 1.1: met (<= 1.1); Fair / CODA = 24/11 = 2.18: met.
    assert t.iloc[0]["ours"] == pytest.approx(1.1) and t.iloc[0]["met"] == "yes"
    assert t.iloc[1]["ours"] == pytest.approx(24 / 11) and t.iloc[1]["met"] == "yes"
    m = b.mechanisms(s).set_index("mechanism")
    assert m.loc["late binding", "without / with, all"] == pytest.approx(12 / 11)
    assert m.loc["late binding", "without / with, SN"] == pytest.approx(2.0)
    assert "intra-coflow prioritisation" not in m.index  # not run
    bound = b.bound_table(s, pd.Series([0.5, 5.0]).to_numpy()).set_index("scheme")
    assert bound.loc["Fair", "/ bound"] == pytest.approx(12 / 2.75)
    assert bound.loc["CODA", "SN / SN bound"] == pytest.approx(2.0)


def test_a_missing_run_is_named(tmp_path):
    b = bench()
    rows = [{"workload": "w", "fabric": "bigswitch", "policy": p, "coflow_id": 1}
            for p in ("aalo", IDENTIFY)]  # fmt: skip
    pd.DataFrame(rows).to_csv(tmp_path / "coflows.csv", index=False)
    pd.DataFrame(rows).to_csv(tmp_path / "runs.csv", index=False)
    with pytest.raises(SystemExit, match="no Fair run"):
        b.load(str(tmp_path))


def test_end_to_end_on_a_small_sweep(tmp_path, example_path, monkeypatch):
    """A real sweep of the example trace, then the script: its tables agree with
    the sweep's own runs, and CODA's labels carry their quality."""
    spec = tmp_path / "spec.toml"
    spec.write_text(
        textwrap.dedent(
            """
            [sweep]
            baseline = "aalo"
            [[workload]]
            trace = "EXAMPLE"
            transforms = ["starts:model=spark,tick_s=0.01,seed=2", "ports:model=spark,seed=2"]
            [[policy]]
            name = "coda"
            [policy.params]
            labels = "identify"
            weights = "spark"
            eps = 0.5
            tau = 0.05
            interval_s = 0.1
            distance_s = 0.75
            [[policy]]
            name = "fair"
            """
        ).replace("EXAMPLE", str(example_path))
    )
    # The same runs under 1 s decisions: every policy table gains the engine's
    # realloc=interval (the script reads it as the decision model's sweep).
    interval = tmp_path / "interval.toml"
    every = '{ realloc = "interval", decision_s = 1 }'
    interval.write_text(
        spec.read_text()
        .replace('baseline = "aalo"', 'baseline = "aalo:decision_s=1,realloc=interval"')
        .replace('name = "fair"', f'name = "fair"\nparams = {every}')
        .replace("distance_s = 0.75", 'distance_s = 0.75\nrealloc = "interval"\ndecision_s = 1')
        + f'[[policy]]\nname = "aalo"\nparams = {every}\n'
    )
    out, rep, out_i = tmp_path / "sweep", tmp_path / "rep", tmp_path / "sweep_i"
    cache = str(tmp_path / "cache")
    for sp, o in ((spec, out), (interval, out_i)):
        sweep.run(str(sp), str(o), workers=1, cache_dir=cache)
    # The script in this process (a subprocess would import the source tree's
    # coflowkit, which has no compiled core when the package is installed).
    b = bench()
    argv = [str(out), "--spec", str(spec), "--out", str(rep), "--interval", str(out_i)]
    monkeypatch.setattr(sys, "argv", ["coda_whole.py", *argv])
    b.main()
    ri = pd.read_csv(out_i / "runs.csv")
    mean_i = {p.split(":")[0]: m for p, m in zip(ri.policy, ri.mean_cct_s, strict=True)}
    dm = pd.read_csv(rep / "decision_model.csv").set_index("decisions")
    assert dm.loc["every 1 s", "Fair / CODA"] == pytest.approx(mean_i["fair"] / mean_i["coda"])
    assert dm.loc["every 1 s", "Aalo / CODA"] == pytest.approx(mean_i["aalo"] / mean_i["coda"])
    runs = pd.read_csv(out / "runs.csv").set_index("policy")
    mine = pd.read_csv(rep / "runs.csv").set_index("scheme")
    assert mine.loc["CODA", "mean CCT (s)"] == pytest.approx(runs.loc[IDENTIFY, "mean_cct_s"])
    assert 0 < mine.loc["CODA", "label precision"] <= 1
    f = pd.read_csv(rep / "fig11.csv").set_index("scheme")
    assert f.loc["Fair", "all"] == pytest.approx(
        runs.loc["fair", "mean_cct_s"] / runs.loc[IDENTIFY, "mean_cct_s"]
    )
    bound = pd.read_csv(rep / "bound.csv").set_index("scheme")
    assert (bound["/ bound"] >= 1 - 1e-9).all()  # no schedule beats the bound
    text = (rep / "README.md").read_text()
    assert "Fair / CODA (identified), Spark" in text and "## Provenance" in text


def test_coflowsims_own_means_are_read_from_its_results_page():
    """The three CoflowSim means the models table uses, as the committed page prints
    them (docs/results/coflowsim/README.md: FAIR 70.5928, DARK 46.0977, SEBF 28.5285)."""
    b = bench()
    assert b.coflowsim_means() == {"fair": 70.5928, "aalo": 46.0977, "varys": 28.5285}


def test_the_models_table_by_hand(tmp_path):
    b = bench()
    s = tables(b)
    s["Varys"] = s["Aalo"].assign(cct_s=[1.0, 4.0])
    m = b.models(s, None, None).set_index("model")
    row = m.loc["exact, per event, Spark starts"]
    # Fair 24/2 = 12, Aalo 10/2 = 5, Varys 5/2 = 2.5.
    assert row["Fair / Aalo"] == pytest.approx(12 / 5)
    assert row["Fair / Varys"] == pytest.approx(12 / 2.5)
    assert row["Aalo / Varys"] == pytest.approx(2.0)
    cs = m.loc["CoflowSim (FAIR, DARK, SEBF), plain trace"]
    assert cs["Fair / Aalo"] == pytest.approx(70.5928 / 46.0977)


def test_scenario_ablations_and_mechanism_targets_by_hand():
    """Two scenarios, hand-made CCTs (an SN and an LW coflow each): Fig. 13's ratios,
    footnote 8's impact reduction and issue 23's two mechanism targets."""
    b = bench()

    def runs_of(ccts):
        return {k: pd.DataFrame({"coflow_id": [1, 2], "bin": ["SN", "LW"], "cct_s": v})
                for k, v in ccts.items()}  # fmt: skip

    sc = {
        # stretched Spark: w/o L.B. 12/10 overall (+20%), w/o both 14/10; Aalo 8/10.
        "stretched-spark": runs_of({
            b.CODA: [1.0, 9.0], b.AALO: [1.0, 7.0], b.FAIR: [2.0, 20.0],
            b.NO_LB: [1.0, 11.0], b.NO_IP: [1.02, 9.0], b.NO_BOTH: [2.0, 12.0],
        }),
        # batch 100 s: w/o I.P. on SN 1.5/1 (+50%).
        "batch100": runs_of({
            b.CODA: [1.0, 9.0], b.AALO: [1.0, 9.0], b.FAIR: [1.0, 9.0],
            b.NO_LB: [1.0, 9.0], b.NO_IP: [1.5, 9.0], b.NO_BOTH: [1.5, 9.0],
        }),
    }  # fmt: skip
    a = b.ablation_table(sc).set_index("scenario")
    assert a.loc["stretched Spark", "w/o L.B. / CODA"] == pytest.approx(1.2)
    assert a.loc["stretched Spark", "w/o both / CODA"] == pytest.approx(1.4)
    # (14 - 10) / (14 - 8) = 2/3.
    assert a.loc["stretched Spark", "impact reduction"] == pytest.approx(2 / 3)
    assert a.loc["batch 100 s", "SN: w/o I.P. / CODA"] == pytest.approx(1.5)
    assert pd.isna(a.loc["batch 100 s", "impact reduction"])  # footnote 8: stretched only
    t = b.mechanism_targets(sc).set_index("met")
    assert list(t.index) == ["yes", "yes"]  # +20% >= 5%; best SN gain +50% >= 5%
    sc["stretched-spark"][b.NO_LB] = sc["stretched-spark"][b.CODA].copy()
    assert b.mechanism_targets(sc).iloc[0]["met"] == "**no**"  # +0% < 5%
