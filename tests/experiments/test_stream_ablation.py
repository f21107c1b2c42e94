"""benches/stream_ablation.py: Stream's ablation per Table 3 category and coflow by
coflow, by hand on a made-up table, and end to end on a few DAG coflows."""

import pandas as pd
import pytest
from coflowkit import runner
from coflowkit.experiments import stream as S
from conftest import SHARED_TRACE, load_bench

sa = load_bench("stream_ablation")
RELAY, NONE, C2P = "no Information-Relay", "none of the three", "no Child-to-Parent"


def _table():
    # Three coflows: two of category I (< 1 GiB), one of II.
    t = pd.DataFrame(
        {"category": ["I", "I", "II"], "size_mib": [10.0, 500.0, 2048.0], sa.ALL: [1.0, 4.0, 10.0]},
        index=pd.Index([1, 2, 3], name="coflow_id"),
    )
    t[RELAY] = [3.0, 4.02, 9.0]  # slower, within 1%, faster
    for v in [*S.ABLATIONS, *sa.SETTLED_VARIANTS]:
        if v != RELAY:
            t[v] = t[sa.ALL]
    return t


def test_sensitivity_by_hand():
    t = _table()
    t[sa.SETTLED] = [0.5, 2.0, 10.0]
    t["settled, no Child-to-Parent"] = [1.0, 2.0, 5.0]
    p = sa.sensitivity(t).set_index("category")
    assert p.loc["all", "settled / one-shot"] == pytest.approx(12.5 / 15.0)
    assert p.loc["I", "settled / one-shot"] == pytest.approx(2.5 / 5.0)
    assert p.loc["I", "settled, no Child-to-Parent / settled"] == pytest.approx(3.0 / 2.5)
    assert p.loc["II", "settled, no Child-to-Parent / settled"] == pytest.approx(0.5)
    # "none of the three" settled is the table's ALL column: 15 over 12.5.
    assert p.loc["all", "settled, none of the three / settled"] == pytest.approx(15.0 / 12.5)


class _Run:
    def __init__(self, **cols):
        self.extra = cols


def test_why_c2p_per_stage_by_hand():
    t = _table()
    t[C2P] = [0.25, 4.0, 10.0]  # only coflow 1 moves (faster without it)
    # Coflow 1: stage 1 (two receivers), stage 2 (one); coflow 2: one flow.
    flows = pd.DataFrame(
        {"coflow_id": [1, 1, 1, 2], "stage": [1, 1, 2, 0], "bytes": [S.MIB, 2 * S.MIB, S.MIB, 1.0]}
    )
    nan = float("nan")

    def run(first, last, child):
        return _Run(
            stream_first_class=first,
            stream_last_class=last,
            stream_child_mib=child,
            stream_internal_id=[1, 1, 2, 1],
        )

    runs = {
        sa.ALL: run([3, 3, 0, 0], [3, 3, 1, 0], [5.0, 5.0, 0.0, 0.0]),
        C2P: run([0, 0, 0, 0], [1, 2, 1, 0], [0.0, 0.0, 0.0, 0.0]),
        sa.SETTLED: run([1, 1, 0, nan], [1, 1, 1, nan], [5.0, 5.0, 0.0, nan]),
    }
    w = sa.why_c2p(t, runs, flows)
    assert w["coflow"].tolist() == [1, 1] and w["stage"].tolist() == [1, 2]
    one = w.iloc[0]
    assert one["internal id"] == 1 and one["MiB"] == pytest.approx(3.0)
    assert one["child MiB"] == 5.0
    assert one["class with all: first"] == "3" and one["class without: last"] == "1-2"
    assert one["class settled: first"] == "1"
    assert w.iloc[1]["internal id"] == 2 and w.iloc[1]["class with all: last"] == "1"


def test_a_run_cached_without_streams_state_is_refused():
    flows = pd.DataFrame({"coflow_id": [1], "stage": [0], "bytes": [1.0]})
    with pytest.raises(SystemExit, match="fresh --cache-dir"):
        sa._state(_Run(), flows)


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
    assert "Sensitivity" in text and "Why Child-to-Parent" in text
