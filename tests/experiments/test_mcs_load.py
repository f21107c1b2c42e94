"""benches/mcs_load.py: the MCS testbed's load and batch workloads (Figs. 11-12)
and their claims, checked by hand."""

import json

import pandas as pd
import pytest
from conftest import load_bench

MIB = 1048576


def bench():
    return load_bench("mcs_load")


def lines(text):
    return text.strip().split("\n")


def arrivals(text):
    return [float(x.split()[1]) for x in lines(text)[1:]]


def test_the_coflows_are_fig_10s_and_only_the_arrivals_differ():
    b = bench()
    text = b.generate(1, 50, False, 0.05)
    ref = lines(b.T.generate(100, 1))
    got = lines(text)
    assert got[0] == ref[0] == "8 100"
    for g, r in zip(got[1:], ref[1:], strict=True):
        g, r = g.split(), r.split()
        assert g[0] == r[0] and g[2:] == r[2:]
    t = arrivals(text)
    assert t[0] == 0.0 and all(a < c for a, c in zip(t, t[1:], strict=False))
    # Offered load over the span: the bytes (times the scale) over 8 links of
    # 25 Mbit/s for the span of 99 exponential gaps; seed 1 lands within 20%.
    volume = sum(b.coflow_bytes(x) for x in got[1:]) * MIB * 0.05
    offered = volume / (t[-1] / 1000) / (8 * 25e6 / 8)
    assert offered == pytest.approx(0.5, rel=0.2)
    assert b.generate(1, 50, False, 0.05) == text  # seeded


def test_every_load_and_scale_rescales_the_same_gaps():
    b = bench()
    t50 = arrivals(b.generate(3, 50, False, 0.05))
    t20 = arrivals(b.generate(3, 20, False, 0.05))
    t50_big = arrivals(b.generate(3, 50, False, 0.1))
    for a, c, d in zip(t50, t20, t50_big, strict=True):
        assert c == pytest.approx(2.5 * a, abs=2e-3)  # 2.5 times slower arrivals
        assert d == pytest.approx(2 * a, abs=2e-3)  # twice the bytes per coflow
    assert arrivals(b.generate(4, 50, False, 0.05)) != t50


def test_batches_of_ten_share_an_arrival():
    b = bench()
    t = arrivals(b.generate(2, 80, True, 0.05))
    batches = [t[i : i + 10] for i in range(0, 100, 10)]
    assert all(len(set(x)) == 1 for x in batches)
    starts = [x[0] for x in batches]
    assert starts[0] == 0.0 and all(a < c for a, c in zip(starts, starts[1:], strict=False))
    # batches come ten times less often than single coflows at the same load
    single = arrivals(b.generate(2, 80, False, 0.05))
    assert starts[-1] > 3 * (single[-1] / 99) * 9


def test_bad_load_or_scale_is_refused():
    b = bench()
    with pytest.raises(ValueError, match="load"):
        b.generate(1, 0, False)
    with pytest.raises(ValueError, match="load"):
        b.generate(1, 120, False)
    with pytest.raises(ValueError, match="scale"):
        b.generate(1, 50, False, 0.0)


def test_byte_thresholds_scale_with_the_sizes():
    p = bench().policies(0.05)
    assert float(p["mcs"]["narrow_first_mb"]) == pytest.approx(0.5)
    assert float(p["mcs"]["wide_first_mb"]) == pytest.approx(0.05)
    assert p["mcs"]["deltas"] == "2,4,8,16"  # widths are not bytes
    assert float(p["aalo"]["first_threshold_bytes"]) == pytest.approx(0.5 * MIB)
    assert p["varys"] == {}


def write_run(root, mode, load, policy, cct_sn, cct_lw):
    """One fake run: an SN coflow (2 flows of 0.1 MiB) and an LW one (10 flows of
    0.5 MiB), sizes already at scale 0.05; simulated CCTs twice the real ones."""
    d = root / mode / f"l{load}-s1" / policy
    (d / "sim").mkdir(parents=True)
    cols = ["coflow_id", "cct_s", "width", "length_bytes", "isolated_s"]
    rows = [(1, cct_sn, 2, 0.1 * MIB, 0.5), (2, cct_lw, 10, 0.5 * MIB, 0.5)]
    pd.DataFrame(rows, columns=cols).to_csv(d / "coflows.csv", index=False)
    sim = [(i, 2 * c, w, n, s) for i, c, w, n, s in rows]
    pd.DataFrame(sim, columns=cols).to_csv(d / "sim" / "coflows.csv", index=False)
    (d / "comparison.json").write_text(json.dumps({"policy": policy}))


def test_claims_take_the_best_load_per_mode(tmp_path):
    b = bench()
    # poisson: SN MCS / Aalo 0.8 at 20%, 0.5 at 80%; batch: 0.3 at 20%.
    runs = {
        ("poisson", 20): {"mcs": (0.8, 10), "aalo": (1.0, 10), "varys": (0.5, 5)},
        ("poisson", 80): {"mcs": (1.0, 12), "aalo": (2.0, 10), "varys": (0.5, 10)},
        ("batch", 20): {"mcs": (0.3, 9.5), "aalo": (1.0, 10), "varys": (0.2, 6)},
    }
    for (mode, load), per in runs.items():
        for policy, (sn, lw) in per.items():
            write_run(tmp_path, mode, load, policy, sn, lw)
    df = b.load_runs(str(tmp_path), 0.05)
    # binned at the scale: 0.1 MiB is short (below 5 MiB x 0.05), 0.5 MiB long
    assert set(df["bin"]) == {"SN", "LW"}
    assert set(df["which"]) == {"real, poisson", "sim, poisson", "real, batch", "sim, batch"}
    norm = b.T.normalized(df)
    cl = b.claims(norm, None).set_index(["mode", "bin", "ratio"])
    row = cl.loc[("poisson", "SN", "mcs/aalo")]
    assert row["real"] == pytest.approx(0.5) and row["real_load"] == 80
    assert row["verdict"] == "met"  # 0.5 <= 0.58 x 1.15
    row = cl.loc[("batch", "SN", "mcs/aalo")]
    assert row["real"] == pytest.approx(0.3) and row["real_load"] == 20
    # LW MCS / Varys, poisson: min(10 / 5, 12 / 10) = 1.2 at 80%: within 40%
    row = cl.loc[("poisson", "LW", "mcs/varys")]
    assert row["real"] == pytest.approx(1.2) and row["verdict"] == "met"
    # LW MCS / Aalo, poisson: min(1.0, 1.2) = 1.0 against "up to 10% lower"
    assert cl.loc[("poisson", "LW", "mcs/aalo"), "verdict"] == "met"  # 1.0 <= 0.9 x 1.15
    assert cl.loc[("batch", "LN", "mcs/aalo"), "verdict"] == "no coflow of this bin"
    # the simulations are twice the runs: the same ratios
    assert cl.loc[("poisson", "SN", "mcs/aalo"), "sim"] == pytest.approx(0.5)

    dest = tmp_path / "report"
    b.table(str(tmp_path), str(dest), "cmd", 3.0, None, 0.05)
    text = (dest / "README.md").read_text()
    assert "Fig. 12a: SN up to 60% lower than Aalo" in text
    assert "**SN at the lowest load (20%).**" in text
    fid = pd.read_csv(dest / "fidelity.csv")
    assert set(fid["policy"]) == {"mcs", "aalo", "varys"}
    # every real CCT is half its simulation: real / sim 0.5, |error| 0.5
    assert fid["real / sim mean CCT"].tolist() == pytest.approx([0.5] * len(fid))
    assert set(fid["mode"]) == {"poisson", "batch"}
    assert "poisson: median per-coflow |error| 50%, real / sim 0.5; batch:" in text
    # with the runs' simulations as the draws: batch LW MCS / Aalo is 0.95, not
    # within 1.15 of the paper's 0.8; its bound (0.5 s alone over Aalo's 20 s)
    # allows it and Varys (0.6) reaches it
    sim_csv = tmp_path / "sim.csv"
    df[df["which"].str.startswith("sim")].to_csv(sim_csv, index=False)
    b.table(str(tmp_path), str(tmp_path / "with-sim"), "cmd", 3.0, str(sim_csv), 0.05)
    text = (tmp_path / "with-sim" / "README.md").read_text()
    assert "**Fig. 12d: LW up to 20% lower than Aalo** (paper 0.8)" in text
    assert "bound 0.025, Varys 0.6, MCS 0.95." in text
    assert (
        "The bound allows it at 20%; clairvoyant Varys reaches it there (within 1.15x),"
        " MCS does not." in text
    )
    assert "Fig. 11a: SN up to 42% lower than Aalo** (paper" not in text  # met

    # the report's own sim.csv (normalized) renders the same findings
    again_sim = tmp_path / "again-sim"
    b.table(
        str(tmp_path / "with-sim"),
        str(again_sim),
        "",
        None,
        str(tmp_path / "with-sim" / "sim.csv"),
        0.05,
    )
    assert "bound 0.025, Varys 0.6, MCS 0.95." in (again_sim / "README.md").read_text()

    # re-rendered from the report directory alone, with the runs' provenance
    b.table(str(dest), str(tmp_path / "again"), "", None, None, 0.05)
    again = json.loads((tmp_path / "again" / "provenance.json").read_text())
    assert again["command"] == "cmd" and "rendered" in again


def test_no_runs_is_one_clear_error(tmp_path):
    with pytest.raises(SystemExit, match="no runs"):
        bench().load_runs(str(tmp_path), 0.05)
