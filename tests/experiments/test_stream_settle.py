"""benches/stream_settle.py: Stream's two readings of eq. (5) beside Aalo, from a
hand-made sweep output, checked by hand."""

import pandas as pd
import pytest
from conftest import load_bench

MIB = 1048576


def bench():
    return load_bench("stream_settle")


#: (policy, CCT of a 50 MiB coflow (category I), of a 500 MiB one (II)) per k.
CCTS = {
    16: [
        ("stream:queues=4", 1.0, 4.0),
        ("stream:queues=4,settle=true", 0.5, 4.0),
        ("aalo:queues=4", 1.0, 9.0),
    ],
    48: [
        ("stream:queues=4", 1.0, 1.0),
        ("stream:queues=4,settle=true", 1.0, 3.0),
        ("aalo:queues=4", 1.0, 3.0),
    ],
}


def sweep_dir(tmp_path, drop=None):
    rows = []
    for k, runs in CCTS.items():
        for policy, mouse, large in runs:
            if policy == drop:
                continue
            for cid, (size, cct) in enumerate([(50 * MIB, mouse), (500 * MIB, large)]):
                rows.append(
                    {
                        "fabric": f"fattree:k={k},gbps=1",
                        "policy": policy,
                        "coflow_id": cid,
                        "size_bytes": size,
                        "cct_s": cct,
                    }
                )
    d = tmp_path / "sweep"
    d.mkdir()
    pd.DataFrame(rows).to_csv(d / "coflows.csv", index=False)
    (d / "report.md").write_text("# sweep\n\n## Provenance\n\n* Command: `coflowkit sweep x`\n")
    return d


def test_table_by_hand(tmp_path):
    b = bench()
    t = b.table(b.load(str(sweep_dir(tmp_path)))).set_index("k")
    # k = 16: one-shot mean (1 + 4) / 2 = 2.5, settled 2.25, Aalo 5.
    assert t.loc[16, "one-shot mean CCT (s)"] == pytest.approx(2.5)
    assert t.loc[16, "settled / one-shot"] == pytest.approx(2.25 / 2.5)
    assert t.loc[16, "I"] == pytest.approx(0.5) and t.loc[16, "II"] == pytest.approx(1.0)
    assert t.loc[16, "Aalo / one-shot"] == pytest.approx(2.0)
    assert t.loc[16, "Aalo / settled"] == pytest.approx(5.0 / 2.25)
    # k = 48: settled is slower (2 against 1); Aalo equals it.
    assert t.loc[48, "settled / one-shot"] == pytest.approx(2.0)
    assert t.loc[48, "Aalo / settled"] == pytest.approx(1.0)
    assert pd.isna(t.loc[48, "III"])  # no coflow of category III


def test_report_and_its_claim_row(tmp_path):
    b = bench()
    out = tmp_path / "out"
    assert b.main([str(sweep_dir(tmp_path)), "--out", str(out)]) == 0
    text = (out / "README.md").read_text()
    # Aalo / one-shot Stream over k: (5/2.5 + 2/1) / 2 = 2; settled: (5/2.25 +
    # 2/2) / 2 = 1.611, 1.85x the paper's 0.87.
    assert "| 0.87 | 2 | 1.61 | 1.85 | differs by more than 15% |" in text
    assert "under either reading Aalo / Stream differs" in text
    assert "Sweep provenance:" in text and "coflowkit sweep x" in text
    assert "0.900-2.000x" in text


def test_a_sweep_without_the_settled_runs_is_refused(tmp_path):
    b = bench()
    with pytest.raises(SystemExit, match="settle=true"):
        b.load(str(sweep_dir(tmp_path, drop="stream:queues=4,settle=true")))


def test_the_verdict_follows_the_numbers():
    b = bench()
    t = pd.DataFrame(
        {
            "k": [16, 48],
            "settled / one-shot": [0.5, 0.6],
            "Aalo / one-shot": [2.0, 2.0],
            "Aalo / settled": [0.9, 0.8],
        }
    )
    text = "\n".join(b.notes(t))
    assert "| 0.87 | 2 | 0.85 | 0.977 | within 15% |" in text
    assert "the settled reading brings Aalo / Stream within 15%" in text
    t["Aalo / one-shot"] = [0.9, 0.9]
    assert "under either reading Aalo / Stream is within 15%" in "\n".join(b.notes(t))
