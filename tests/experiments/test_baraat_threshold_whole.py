"""benches/baraat_threshold_whole.py: Baraat / Stream per network size and heavy
threshold from a sweep's coflows.csv, checked on a hand-made sweep output."""

import sys

import pandas as pd
import pytest
from conftest import load_bench

MIB = 1048576


def bench():
    return load_bench("baraat_threshold_whole")


#: (policy, mouse CCT, large CCT) per fabric: a 50 MiB coflow (category I) and
#: a 500 MiB one (category II). `baraat` without parameters is H = 100 MiB.
CCTS = {
    "fattree:k=8,gbps=1": [
        ("stream:queues=4", 1.0, 4.0),
        ("baraat:heavy_mb=10", 6.0, 4.0),
        ("baraat", 1.0, 5.0),
    ],
    "fattree:k=16,gbps=1": [
        ("stream:queues=4", 2.0, 2.0),
        ("baraat:heavy_mb=10", 2.0, 3.0),
        ("baraat", 2.0, 2.0),
    ],
    "fattree:k=8,gbps=10": [
        ("stream:queues=4", 1.0, 1.0),
        ("baraat:heavy_mb=10", 1.0, 1.0),
        ("baraat", 1.0, 2.0),
    ],
}


def sweep_dir(tmp_path, extra=()):
    rows = []
    for fabric, runs in CCTS.items():
        for policy, mouse, large in [*runs, *extra]:
            for cid, size, cct in ((1, 50 * MIB, mouse), (2, 500 * MIB, large)):
                rows.append(
                    {
                        "fabric": fabric,
                        "policy": policy,
                        "coflow_id": cid,
                        "size_bytes": size,
                        "cct_s": cct,
                    }
                )
    pd.DataFrame(rows).to_csv(tmp_path / "coflows.csv", index=False)
    (tmp_path / "report.md").write_text("# Sweep\n\n## Provenance\n\n* Command: `x`\n")
    return tmp_path


def test_ratios_and_best_k_by_hand(tmp_path):
    b = bench()
    t = b.table(b.load(str(sweep_dir(tmp_path))))
    row = t[(t.gbps == 1) & (t.k == 8) & (t.heavy_mb == 10)].iloc[0]
    # Stream: mean (1 + 4) / 2 = 2.5, mice 1; H = 10: mean 5, mice 6.
    assert row["baraat / stream"] == pytest.approx(2.0)
    assert row["mice: baraat / stream"] == pytest.approx(6.0)
    row = t[(t.gbps == 1) & (t.k == 16) & (t.heavy_mb == 100)].iloc[0]
    assert row["baraat / stream"] == pytest.approx(1.0)
    best = b.best(t)
    # 1G, H = 10: k = 8 gives 2.0, k = 16 gives 2.5 / 2 = 1.25: best k = 8,
    # 2.0 / 1.4 of the paper, mean over k (2.0 + 1.25) / 2.
    r = best[(best.gbps == 1) & (best.heavy_mb == 10)].iloc[0]
    assert r["best k"] == 8
    assert r["ours / paper"] == pytest.approx(2.0 / 1.4)
    assert r["mean over k"] == pytest.approx(1.625)
    # 10G, H = 100: (1 + 2) / 2 over 1 = 1.5, the paper's 1.5.
    r = best[(best.gbps == 10) & (best.heavy_mb == 100)].iloc[0]
    assert r["ours / paper"] == pytest.approx(1.0)


def test_main_writes_both_files(tmp_path, monkeypatch):
    sweep = tmp_path / "sweep"
    sweep.mkdir()
    d = sweep_dir(sweep)
    out = tmp_path / "out"
    monkeypatch.setattr(sys, "argv", ["baraat_threshold_whole.py", str(d), "--out", str(out)])
    assert bench().main() == 0
    text = (out / "baraat_threshold.md").read_text()
    assert "## At the best k" in text and "* Command: `x`" in text
    csv = pd.read_csv(out / "baraat_threshold.csv")
    assert len(csv) == 6  # 3 fabrics x 2 thresholds


def test_other_policies_are_refused(tmp_path):
    d = sweep_dir(tmp_path, extra=[("fair", 1.0, 1.0)])
    b = bench()
    with pytest.raises(SystemExit, match="neither stream:queues=4 nor baraat"):
        b.load(str(d))
