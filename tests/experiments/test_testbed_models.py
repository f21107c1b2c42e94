"""benches/testbed_models.py: the simulations a testbed run is compared with,
checked by hand on one flow."""

import coflowkit as ck
import numpy as np
import pytest
from conftest import load_bench


def one_flow(tmp_path):
    from coflowkit.runtime import testbed

    trace = tmp_path / "one.txt"
    trace.write_text("2 1\n1 50 1 0 1 1:1.0\n")  # arrives at 50 ms
    return ck.load_trace(str(trace)).with_fabric(testbed.sim_fabric(2, 1e6))


def test_a_late_sender_is_in_the_simulated_cct(tmp_path):
    b = load_bench("testbed_models")
    w = one_flow(tmp_path)
    on_time = float(ck.simulate(w, "fair", progress=False).coflows["cct_s"].iloc[0])
    # Its sender started 0.1 s after the coflow's arrival: the coflow is still
    # timed from its arrival, so its CCT grows by those 0.1 s.
    late = b.as_started(w, np.array([0.15]))
    got = float(ck.simulate(late, "fair", progress=False).coflows["cct_s"].iloc[0])
    assert got == pytest.approx(on_time + 0.1, rel=1e-9)
    # A start before the arrival (clock jitter) is the arrival.
    early = b.as_started(w, np.array([0.0]))
    got = float(ck.simulate(early, "fair", progress=False).coflows["cct_s"].iloc[0])
    assert got == pytest.approx(on_time, rel=1e-9)


def test_the_six_models(tmp_path):
    b = load_bench("testbed_models")
    w = one_flow(tmp_path)
    import pandas as pd

    real = pd.DataFrame({"cct_s": [1.0], "bin": ["SN"]}, index=pd.Index([1], name="coflow_id"))
    real.attrs["starts"] = np.array([0.15])
    real.attrs["connected"] = np.array([0.32])
    sims = b.simulated(real, w, "fair", {}, 0.1)
    base = float(sims["event"].iloc[0])
    # Decisions every 0.1 s: the flow arriving at 0.05 waits until 0.1; started
    # at 0.15, it waits until 0.2. Either way 0.05 s more than at every event.
    assert float(sims["interval"].iloc[0]) == pytest.approx(base + 0.05, rel=1e-9)
    assert float(sims["started"].iloc[0]) == pytest.approx(base + 0.1, rel=1e-9)
    assert float(sims["started, interval"].iloc[0]) == pytest.approx(base + 0.15, rel=1e-9)
    # Accepted at 0.32: 0.27 s after the arrival; at Δ = 0.1 it waits until 0.4.
    assert float(sims["connected"].iloc[0]) == pytest.approx(base + 0.27, rel=1e-9)
    assert float(sims["connected, interval"].iloc[0]) == pytest.approx(base + 0.35, rel=1e-9)


def test_a_wrong_number_of_starts_is_one_clear_error(tmp_path):
    b = load_bench("testbed_models")
    with pytest.raises(SystemExit, match="2 flow starts for a workload of 1 flows"):
        b.as_started(one_flow(tmp_path), np.array([0.1, 0.2]))


def test_summary_reads_the_runs_own_comparisons(tmp_path):
    import json

    import pandas as pd

    b = load_bench("testbed_models")
    run = tmp_path / "r"
    run.mkdir()
    (run / "comparison.json").write_text(json.dumps({"policy": "varys", "mean_cct_error": 0.05}))
    # Errors 0.1, -0.3, 0.6 per event; 0.05, 0.2, 0.4 at Δ.
    for suffix, errs, ratio in (("", [0.1, -0.3, 0.6], 1.4), ("-interval", [0.05, 0.2, 0.4], 1.2)):
        pd.DataFrame({"coflow_id": [1, 2, 3], "error": errs}).to_csv(
            run / f"comparison{suffix}.csv", index=False
        )
        pd.DataFrame({"bin": ["SN"], "real_over_sim": [ratio]}).to_csv(
            run / f"breakdown{suffix}.csv", index=False
        )
    # Three flows started at 0, 0.1 and 0.2 s, accepted at 0.05, 0.3 and 0.25 s
    # (each flow's first mark; later marks do not count): handshakes of 50,
    # 200 and 50 ms, median 50, 90th percentile 50 + 0.8 x 150 = 170.
    pd.DataFrame({"flow": [0, 1, 2], "start_s": [0.0, 0.1, 0.2]}).to_csv(
        run / "flows.csv", index=False
    )
    marks = {"flow": [0, 0, 1, 2, 2], "time_s": [0.05, 0.5, 0.3, 0.25, 0.26], "bytes": [0] * 5}
    pd.DataFrame(marks).to_csv(run / "flow_marks.csv.gz", index=False)
    row = b.summary([str(run)]).iloc[0]
    assert row["handshake median / p90 (ms)"] == "50 / 170"
    assert "to accept (ms)" not in row  # no traffic records kept
    # The traffic workers' records: senders start at 10.0 and 10.1 s, receivers
    # accept at 10.03 and 10.2 and first read at 10.04 and 10.26: to accept
    # 30 and 100 ms (median 65, p90 93), accept to read 10 and 60 ms.
    host0 = {"flows": [
        {"id": 0, "role": "send", "start": 10.0, "connected": 10.02},
        {"id": 1, "role": "recv", "start": 10.2, "marks": [[10.26, 0], [10.3, 5]]},
    ]}  # fmt: skip
    host1 = {"flows": [
        {"id": 1, "role": "send", "start": 10.1, "connected": 10.14},
        {"id": 0, "role": "recv", "start": 10.03, "marks": [[10.04, 0]]},
    ]}  # fmt: skip
    (run / "traffic-host0.json").write_text(json.dumps(host0))
    (run / "traffic-host1.json").write_text(json.dumps(host1))
    row = b.summary([str(run)]).iloc[0]
    assert row["to accept (ms)"] == "65 / 93"
    assert row["accept to first read (ms)"] == "35 / 55"
    # connect returned after 20 and 40 ms: median 30, p90 20 + 0.9 x 20 = 38
    assert row["to connect (ms)"] == "30 / 38"
    assert row["release"] == "change" and row["mean real / sim"] == "+5.0%"
    assert row["median abs error"] == "30.0%" and row["> 50% off"] == 1 and row["SN"] == "1.40"
    assert row["median abs error, sim at Δ"] == "20.0%" and row["> 50% off, sim at Δ"] == 0
    assert row["SN, sim at Δ"] == "1.20" and "SW" not in row
