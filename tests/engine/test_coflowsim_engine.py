"""`--engine coflowsim` from Python and the CLI: CoflowSim's own numbers (the Rust
fixtures, produced by CoflowSim itself), the CCT convention, and clear refusals."""

import csv
import json
import os
import subprocess
import sys

import coflowkit as ck
import numpy as np
import pytest
from coflowkit import api

FIXTURES = os.path.join(
    os.path.dirname(__file__),
    "..",
    "..",
    "crates",
    "coflowkit-sim",
    "tests",
    "fixtures",
    "coflowsim",
)


def coflowsim_rows(trace: str, policy: str) -> dict[int, tuple[float, float, float]]:
    with open(os.path.join(FIXTURES, "coflowsim.csv")) as fh:
        return {
            int(r["coflow_id"]): (
                float(r["admitted_units"]),
                float(r["finish_units"]),
                float(r["duration_units"]),
            )
            for r in csv.DictReader(fh)
            if r["trace"] == trace and r["policy"] == policy
        }


@pytest.mark.parametrize("policy", ["fair", "aalo", "varys", "tcf"])
def test_cct_is_coflowsims_duration_over_1000(policy):
    w = ck.load_trace(os.path.join(FIXTURES, "t3.txt"))
    r = ck.simulate(w, policy, engine="coflowsim", progress=False)
    want = coflowsim_rows("t3.txt", policy)
    assert len(want) == len(r.coflows) > 0
    for row in r.coflows.itertuples():
        adm, fin, dur = want[int(row.coflow_id)]
        assert row.cct_s == pytest.approx(dur / 1000, rel=0, abs=1e-12)
        assert row.admitted_s == pytest.approx(adm / 1000, rel=0, abs=1e-12)
        assert row.finish_s == pytest.approx(fin / 1000, rel=0, abs=1e-12)
        # admission is at an epoch start no later than the arrival's epoch
        assert row.admitted_s <= row.arrival_s
    assert r.extra["engine"] == "coflowsim:epoch_s=10.24"


def test_engine_specs():
    assert api.parse_engine("exact") == ("exact", 0)
    assert api.parse_engine("coflowsim") == ("coflowsim", 10240)
    assert api.parse_engine("coflowsim:epoch_s=1.024") == ("coflowsim", 1024)
    for bad, words in [
        ("warp", "unknown engine"),
        ("coflowsim:epoch_s=0.01", "multiple of 0.008"),
        ("coflowsim:epoch=10", "epoch_s=SECONDS"),
        ("coflowsim:epoch_s=ten", "not a number"),
        ("coflowsim:epoch_s=inf", "multiple of 0.008"),
        ("coflowsim:epoch_s=nan", "multiple of 0.008"),
        ("coflowsim:epoch_s=1e300", "multiple of 0.008"),
        ("coflowsim:epoch_s=-10.24", "multiple of 0.008"),
        ("exact:x=1", "no options"),
    ]:
        with pytest.raises(ck.CoflowkitError, match=words):
            api.parse_engine(bad)


def test_shorter_epoch_admits_later_coflows_sooner():
    # Arrival 5000 ms: admitted at 0 with 10.24 s epochs, at 4096 with 1.024 s ones.
    w = ck.load_trace(os.path.join(FIXTURES, "t3.txt"))
    fine = ck.simulate(w, "fifo", engine="coflowsim:epoch_s=1.024", progress=False).coflows
    coarse = ck.simulate(w, "fifo", engine="coflowsim", progress=False).coflows
    for epoch, table in [(1024, fine), (10240, coarse)]:
        for row in table.itertuples():
            # the first epoch start E with arrival <= E + epoch
            arrival = round(row.arrival_s * 1000)
            k = max(0, -(-arrival // epoch) - 1)
            assert row.admitted_s * 1000 == pytest.approx(k * epoch, abs=1e-9)
    assert (fine["admitted_s"] >= coarse["admitted_s"]).all()
    assert (fine["admitted_s"] > coarse["admitted_s"]).any()


def test_refusals_name_the_reason(fb_trace):
    w = ck.load_trace(os.path.join(FIXTURES, "t0.txt"))
    with pytest.raises(ck.CoflowkitError, match="coda stays on the exact engine"):
        ck.simulate(w, "coda", engine="coflowsim", progress=False)
    with pytest.raises(ck.CoflowkitError, match="variant=dark is not one of dclas, coflowsim"):
        ck.simulate(w, "aalo", {"variant": "dark"}, engine="coflowsim", progress=False)
    with pytest.raises(ck.CoflowkitError, match="realloc is an exact-engine parameter"):
        ck.simulate(w, "ncdrf", {"realloc": "coflow"}, engine="coflowsim", progress=False)
    with pytest.raises(ck.CoflowkitError, match="record"):
        ck.simulate(w, "ncdrf", engine="coflowsim", record=1.0, progress=False)
    with pytest.raises(ck.SimulationError, match="1 Gbps"):
        ck.simulate(w, "fair", fabric="bigswitch:gbps=10", engine="coflowsim", progress=False)


def test_cli_simulate_and_compare(tmp_path):
    trace = os.path.join(FIXTURES, "t5.txt")
    out = tmp_path / "run"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "coflowkit",
            "simulate",
            "--trace",
            trace,
            "--policy",
            "varys",
            "--engine",
            "coflowsim",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    assert "CoflowSim's SEBF" in r.stdout
    import pandas as pd

    c = pd.read_csv(out / "coflows.csv")
    assert list(c.columns[:4]) == ["coflow_id", "arrival_s", "admitted_s", "finish_s"]
    want = coflowsim_rows("t5.txt", "varys")
    assert sorted(int(x) for x in c["coflow_id"]) == sorted(want)
    for cid, cct in zip(c["coflow_id"], c["cct_s"], strict=True):
        assert cct == pytest.approx(want[int(cid)][2] / 1000, abs=1e-12)
    s = json.loads((out / "summary.json").read_text())
    assert s["engine"] == "coflowsim:epoch_s=10.24"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "coflowkit",
            "compare",
            "--trace",
            trace,
            "--policies",
            "varys,aalo",
            "--engine",
            "coflowsim",
            "--workers",
            "1",
            "--out",
            str(tmp_path / "cmp"),
        ],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    rows = pd.read_csv(tmp_path / "cmp" / "compare.csv")
    fair = coflowsim_rows("t5.txt", "fair")
    varys = want
    ratio_of_means = sum(v[2] for v in varys.values()) / sum(v[2] for v in fair.values())
    got = rows[(rows.policy == "varys") & (rows.bin == "all")]["ratio_of_means"].iloc[0]
    assert got == pytest.approx(ratio_of_means, rel=1e-12)


def test_realloc_is_accepted_with_every_policy_and_checked():
    w = ck.load_trace(os.path.join(FIXTURES, "t2.txt"))
    for policy in ["fair", "varys", "sincronia"]:
        every = ck.simulate(w, policy, progress=False).summary["all"]["cct_s"]["mean"]
        lazy = ck.simulate(w, policy, {"realloc": "coflow"}, progress=False)
        # a flow's leftover capacity goes to no one: never faster on average here
        assert lazy.summary["all"]["cct_s"]["mean"] >= every * (1 - 1e-9)
    with pytest.raises(ck.CoflowkitError, match="'event', 'coflow' or 'interval'"):
        ck.simulate(w, "fair", {"realloc": "often"}, progress=False)


def test_interval_decisions_run_every_policy_and_are_checked():
    """realloc=interval with every registry policy: the run
    completes with the engine's invariant checks on, no coflow ends before the first
    decision at or after its arrival, and decision_s is checked."""
    w = ck.load_trace(os.path.join(FIXTURES, "t2.txt"))
    arrival = w.coflow_columns()["arrival_s"]
    dt = 0.25
    for p in ck.policies():
        r = ck.simulate(w, p["name"], {"realloc": "interval", "decision_s": dt},
                        check_invariants=True, progress=False)  # fmt: skip
        t = r.coflows.set_index("coflow_id")
        first = np.ceil(np.asarray(arrival) / dt - 1e-9) * dt
        assert r.complete, p["name"]
        assert (t.finish_s.to_numpy() > first - 1e-9).all(), p["name"]
    for bad, msg in (("0", "from 1e-6 to 1e6"), ("x", "from 1e-6 to 1e6")):
        with pytest.raises(ck.CoflowkitError, match=msg):
            ck.simulate(w, "fair", {"realloc": "interval", "decision_s": bad}, progress=False)
    with pytest.raises(ck.CoflowkitError, match="give realloc=interval too"):
        ck.simulate(w, "fair", {"decision_s": "1"}, progress=False)


def test_other_policies_run_on_coflowsims_hooks(tmp_path):
    from coflowkit import runner

    # One coflow: rack 0 sends 1 MB to rack 1 and 3 MB to rack 2. NC-DRF gives each
    # flow ½ of rack 0's uplink; the 1 MB flow ends after 16 units, but only a coflow
    # departure re-rates, so the other keeps ½ MB per 8-unit step: 48 units in all.
    trace = tmp_path / "one.txt"
    trace.write_text("3 1\n1 0 1 0 2 1:1.0 2:3.0\n")
    w = ck.load_trace(str(trace))
    r = ck.simulate(w, "ncdrf", engine="coflowsim", progress=False)
    assert r.coflows["cct_s"].tolist() == [0.048]
    assert r.extra["scheduler"] == "hooks"
    # Parameters reach the policy, through the runner too (and into its cache key).
    # MCS, coflow 1: rack 0 → rack 1, 2 MB (width 1); coflow 2: racks 2 and 3 → rack
    # 1, 1 MB each (width 2). By default both are in width class 0 and FIFO: coflow 1
    # takes rack 1 whole (done at 16 units), then coflow 2's flows ½ each (32). With
    # deltas=2 and priorities=2,1 the wider one starts in the first queue: coflow 2
    # at 16, coflow 1 at 32.
    two = tmp_path / "two.txt"
    two.write_text("4 2\n1 0 1 0 1 1:2.0\n2 0 2 2 3 1 1:2.0\n")
    spec = runner.WorkloadSpec(trace=str(two))
    jobs = [
        runner.Job(spec, "mcs", (), engine="coflowsim"),
        runner.Job(spec, "mcs", (("deltas", "2"), ("priorities", "2,1")), engine="coflowsim"),
    ]
    fifo, wide = runner.run_jobs(jobs, 1, str(tmp_path / "cache"), progress=False)
    assert fifo.coflows["cct_s"].tolist() == [0.016, 0.032]
    assert wide.coflows["cct_s"].tolist() == [0.032, 0.016]
    assert wide.params == {"deltas": "2", "priorities": "2,1"}
    with pytest.raises(ck.CoflowkitError, match="priorities"):
        runner.run_jobs(
            [runner.Job(spec, "mcs", (("priorities", "0"),), engine="coflowsim")],
            1,
            str(tmp_path / "cache"),
            progress=False,
        )
