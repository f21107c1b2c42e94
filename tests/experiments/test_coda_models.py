"""benches/coda_models.py: reproduce coda-scheduler's ratios under several
replays, read back from the reports' CSVs of a small run."""

import json

import pandas as pd
import pytest
from coflowkit.experiments import coda_report, writer
from conftest import load_bench


def test_table_holds_each_reports_ratios(small_trace, tmp_path):
    out = tmp_path / "r"
    writer.run(
        coda_report.EXPERIMENT,
        out=str(out),
        trace=small_trace,
        coflows=30,
        workers=1,
        cache_dir=None,
        select=("spark", "stretched-hadoop"),
    )
    cm = load_bench("coda_models")
    assert cm.main(["--run", f"first 30={out}", "--out", str(tmp_path / "m")]) == 0
    table = pd.read_csv(tmp_path / "m" / "models.csv").set_index("scenario")
    fig11 = pd.read_csv(out / "fig11_normal.csv").set_index("scenario")
    abl = pd.read_csv(out / "fig13_ablation.csv").set_index("scenario")
    assert table.loc["Spark", "Fair / CODA"] == pytest.approx(fig11.loc["Spark", "Fair / CODA"])
    sh = "stretched Hadoop"
    assert table.loc[sh, "w/o L.B. / CODA"] == pytest.approx(abl.loc[sh, "w/o L.B. / CODA"])
    assert pd.isna(table.loc["Spark", "w/o L.B. / CODA"])  # no ablation on Spark
    assert (table["replay"] == "first 30").all()
    text = (tmp_path / "m" / "README.md").read_text()
    prov = json.loads((out / "provenance.json").read_text())
    assert prov["command"] in text and "## Provenance" in text


def test_a_folder_that_is_not_a_report_is_refused(tmp_path):
    cm = load_bench("coda_models")
    with pytest.raises(SystemExit, match="no fig11_normal.csv"):
        cm.main(["--run", f"x={tmp_path}", "--out", str(tmp_path / "m")])
