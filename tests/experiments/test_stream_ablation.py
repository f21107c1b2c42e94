"""benches/stream_ablation.py: Stream's ablation per Table 3 category and coflow by
coflow, by hand on a made-up table, and end to end on a few DAG coflows."""

import pandas as pd
import pytest
from coflowkit import runner
from coflowkit.experiments import stream as S
from conftest import SHARED_TRACE, load_bench

sa = load_bench("stream_ablation")
RELAY, NONE = "no Information-Relay", "none of the three"


def _table():
    # Three coflows: two of category I (< 1 GiB), one of II.
    t = pd.DataFrame(
        {"category": ["I", "I", "II"], "size_mib": [10.0, 500.0, 2048.0], sa.ALL: [1.0, 4.0, 10.0]},
        index=pd.Index([1, 2, 3], name="coflow_id"),
    )
    t[RELAY] = [3.0, 4.02, 9.0]  # slower, within 1%, faster
    for v in S.ABLATIONS:
        if v != RELAY:
            t[v] = t[sa.ALL]
    return t


def test_per_category_by_hand():
    p = _table().pipe(sa.per_category).set_index("category")
    assert p.loc["all", "coflows"] == 3 and p.loc["I", "coflows"] == 2
    assert p.loc["all", "Stream mean CCT (s)"] == pytest.approx(5.0)
    assert p.loc["I", f"{RELAY} / all"] == pytest.approx(7.02 / 5.0)
    assert p.loc["II", f"{RELAY} / all"] == pytest.approx(0.9)
    # Coflow 2 moves by 0.5%: neither faster nor slower.
    assert p.loc["all", f"{RELAY}: faster, slower"] == "1, 1"
    assert p.loc["I", f"{NONE}: faster, slower"] == "0, 0"


def test_movers_list_only_coflows_moved_by_more_than_the_threshold():
    m = sa.movers(_table())
    assert m[["removed", "way", "coflow"]].values.tolist() == [
        [RELAY, "faster", 3],
        [RELAY, "slower", 1],
    ]


def test_end_to_end_on_a_few_dag_coflows(tmp_path):

    out = tmp_path / "sa"
    args = ["--trace", str(SHARED_TRACE), "--coflows", "3", "--out", str(out)]
    assert sa.main(args + ["--cache-dir", str(tmp_path / "c")]) == 0
    c = pd.read_csv(out / "coflows.csv")
    # Every variant's CCT equals a direct run of the same job.
    js = sa.jobs(str(SHARED_TRACE), 3, "tao", 8, 1)
    for v, job in js.items():
        (r,) = runner.run_jobs([job])
        got = c.set_index("coflow_id")[v]
        want = r.coflows.set_index("coflow_id")["cct_s"]
        assert got.reindex(want.index).to_numpy() == pytest.approx(want.to_numpy())
    text = (out / "README.md").read_text()
    assert "## First 3 coflows" in text and "## Provenance" in text and "--coflows 3" in text
