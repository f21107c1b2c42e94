"""benches/stream_aalo_forms.py: Aalo's readings against Stream from a sweep's
coflows.csv, checked on a hand-made sweep output."""

import pandas as pd
import pytest
from conftest import load_bench

MIB = 1048576

#: (policy, CCT of a 50 MiB coflow (category I), CCT of a 500 MiB one (II)),
#: per (k, gbps). Stream's mean is 2.5 at k = 8 and 2.0 at k = 16, 1G.
CCTS = {
    (8, 1): [
        ("stream:queues=4", 1.0, 4.0),
        ("aalo:queues=4", 1.0, 9.0),
        ("aalo:queues=4,within=fair", 1.0, 3.0),
        ("aalo:queues=10", 1.0, 2.0),
    ],
    (16, 1): [
        ("stream:queues=4", 1.0, 3.0),
        ("aalo:queues=4", 1.0, 5.0),
        ("aalo:queues=4,within=fair", 1.0, 3.0),
        ("aalo:queues=10", 0.5, 1.5),
    ],
}


def sweep_dir(tmp_path, drop=None):
    rows = []
    for (k, g), runs in CCTS.items():
        for policy, mouse, large in runs:
            if (k, policy) == drop:
                continue
            for cid, size, cct in ((1, 50 * MIB, mouse), (2, 500 * MIB, large)):
                rows.append(
                    {
                        "workload": "fb-whole",
                        "fabric": f"fattree:k={k},gbps={g}",
                        "policy": policy,
                        "coflow_id": cid,
                        "size_bytes": size,
                        "cct_s": cct,
                        "isolated_s": 0.5,
                    }
                )
    pd.DataFrame(rows).to_csv(tmp_path / "coflows.csv", index=False)
    (tmp_path / "report.md").write_text("# Sweep\n\n## Provenance\n\n* Command: `x`\n")
    return tmp_path


def test_ratios_over_k_and_verdicts_by_hand(tmp_path):
    b = load_bench("stream_aalo_forms")
    f = b.forms(str(sweep_dir(tmp_path)))
    got = f.set_index(["k", "Aalo"])["Aalo / Stream"]
    # k = 8: Stream 2.5; Aalo 5.0, 2.0, 1.5. k = 16: Stream 2.0; Aalo 3.0, 2.0, 1.0.
    assert got[(8, "aalo:queues=4")] == pytest.approx(2.0)
    assert got[(8, "aalo:queues=4,within=fair")] == pytest.approx(0.8)
    assert got[(16, "aalo:queues=10")] == pytest.approx(0.5)
    cat = f.set_index(["k", "Aalo"])
    assert cat.loc[(8, "aalo:queues=4"), "II"] == pytest.approx(9.0 / 4.0)
    assert cat.loc[(16, "aalo:queues=10"), "I"] == pytest.approx(0.5)
    ok = b.over_k(f).set_index("Aalo")
    # Averages over k: 4 queues FIFO (2.0 + 1.5) / 2, shared (0.8 + 1.0) / 2,
    # 10 queues (0.6 + 0.5) / 2.
    assert ok.loc["aalo:queues=4", "mean over k"] == pytest.approx(1.75)
    assert ok.loc["aalo:queues=4,within=fair", "mean over k"] == pytest.approx(0.9)
    assert ok.loc["aalo:queues=10", "mean over k"] == pytest.approx(0.55)
    assert ok["verdict"].to_dict() == {
        "aalo:queues=4": "not met",
        "aalo:queues=4,within=fair": "met",
        "aalo:queues=10": "not met",
    }
    assert ok.loc["aalo:queues=4,within=fair", "ours / paper"] == pytest.approx(0.9 / 0.87)
    text = "\n".join(b.findings(f, b.over_k(f)))
    assert "Within the target: `aalo:queues=4,within=fair`" in text
    assert "Fig. 6's Aalo is the slowest reading" in text
    # Fig. 6's Aalo is furthest behind in category II at k = 8 (9 / 4 = 2.25x),
    # where sharing gives 3 / 4 and 10 queues 2 / 4.
    assert "category II, k = 8, 1G: 2.25x), sharing each queue gives 0.75x" in text
    assert "10 queues 0.50x" in text


def test_a_sweep_missing_a_reading_or_a_size_is_refused(tmp_path):
    b = load_bench("stream_aalo_forms")
    d = tmp_path / "a"
    d.mkdir()
    rows = pd.read_csv(sweep_dir(d) / "coflows.csv")
    rows[rows.policy != "aalo:queues=10"].to_csv(d / "coflows.csv", index=False)
    with pytest.raises(SystemExit, match="aalo:queues=10"):
        b.forms(str(d))
    e = tmp_path / "b"
    e.mkdir()
    f = b.forms(str(sweep_dir(e, drop=(16, "aalo:queues=10"))))
    with pytest.raises(SystemExit, match=r"aalo:queues=10 at 1G: runs for k = \[8\]"):
        b.over_k(f)


def test_the_report_is_written_with_the_sweeps_provenance(tmp_path, monkeypatch):
    b = load_bench("stream_aalo_forms")
    d = sweep_dir(tmp_path)
    out = tmp_path / "out"
    monkeypatch.setattr("sys.argv", ["stream_aalo_forms.py", str(d), "--out", str(out)])
    b.main()
    text = (out / "README.md").read_text()
    assert "Sweep provenance:" in text and "* Command: `x`" in text
    assert (out / "forms.csv").exists() and (out / "over_k.csv").exists()
    assert "| 1 | aalo:queues=4,within=fair | 0.900 |" in text
