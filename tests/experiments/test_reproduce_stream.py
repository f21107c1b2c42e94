"""`coflowkit reproduce stream` on a shrunken plan (one small FatTree, few coflows):
the files it writes, and its tables against direct `coflowkit.simulate` runs."""

import coflowkit as ck
import numpy as np
import pandas as pd
import pytest
from coflowkit import cli
from coflowkit.experiments import EXPERIMENTS, stream

N = 8  # coflows replayed in every experiment
#: What the report was rendered from (context, parts, values), for re-rendering.
RENDERED: dict = {}


@pytest.fixture(scope="module")
def out(tmp_path_factory):
    from coflowkit.experiments import writer
    from conftest import SHARED_TRACE

    if not SHARED_TRACE.exists():
        pytest.fail(f"the Facebook trace is missing: expected it at {SHARED_TRACE}")
    d = tmp_path_factory.mktemp("stream")
    mp = pytest.MonkeyPatch()
    # The shape of the evaluation, on fabrics small enough for a test.
    mp.setattr(stream, "KS", (4, 8))
    mp.setattr(stream, "WAVES", (2,))
    mp.setattr(stream, "QUEUE_COUNTS", (2, 4))
    mp.setattr(stream, "HEAVY_MB", (10, 100))
    render = writer.render

    def keep(ctx, parts, values):
        RENDERED.update(ctx=ctx, parts=parts, values=values)
        return render(ctx, parts, values)

    mp.setattr(writer, "render", keep)
    # The trace cut to its first N coflows, replayed whole (`--coflows all`).
    argv = ["reproduce", "stream", "--trace", str(SHARED_TRACE), "--transform", f"head:count={N}"]
    try:
        argv += ["--coflows", "all", "--out", str(d), "--workers", "1", "--no-cache"]
        assert cli.main(argv) == 0
    finally:
        mp.undo()
    return d


def _csv(out, name):
    return pd.read_csv(out / f"{name}.csv")


def test_registered():
    assert "stream" in EXPERIMENTS


def test_writes_every_table_figure_and_the_report(out):
    for name in [
        "fig6",
        "improvement",
        "fig7",
        "fig8",
        "fig9",
        "fig10",
        "fig11",
        "fig12",
        "fig13",
        "ablation",
        "baraat_threshold",
        "aalo_forms",
    ]:
        assert (out / f"{name}.csv").exists(), name
    for name in ["fig6", "fig7", "fig8", "fig9", "fig10", "fig11", "fig12", "fig13"]:
        assert (out / f"{name}.png").stat().st_size > 1000, name
    report = (out / "report.md").read_text()
    assert "## Fig. 6" in report and "## Fig. 13" in report
    assert "Differences from the paper" in report


def test_fig6_matches_direct_simulations(out):
    from conftest import SHARED_TRACE

    fig6 = _csv(out, "fig6")
    assert len(fig6) == 2 * 2 * 4  # k in (4, 8), 1G and 10G, four policies
    w = ck.load_trace(str(SHARED_TRACE)).head(N)
    r = ck.simulate(w, "stream", params={"queues": "4"}, fabric="fattree:k=4,gbps=1")
    row = fig6[(fig6.k == 4) & (fig6.gbps == 1) & (fig6.policy == "Stream")]
    assert row["avg CCT (s)"].item() == pytest.approx(r.coflows["cct_s"].mean(), rel=1e-12)
    mice = r.coflows["size_bytes"] < 100 * 1048576
    assert row["mice CCT (s)"].item() == pytest.approx(r.coflows["cct_s"][mice].mean(), rel=1e-12)


def test_improvements_are_ratios_of_the_fig6_means(out):
    fig6 = _csv(out, "fig6").set_index(["gbps", "k", "policy"])
    imp = _csv(out, "improvement")
    for _, row in imp.iterrows():
        col = "avg CCT (s)" if row["CCT"] == "avg" else "mice CCT (s)"
        for k in (4, 8):
            want = (
                fig6.loc[(row["gbps"], k, row["compared"]), col]
                / fig6.loc[(row["gbps"], k, "Stream"), col]
            )
            assert row[f"k={k}"] == pytest.approx(want, rel=1e-9)
        assert row["mean over k"] == pytest.approx(np.mean([row["k=4"], row["k=8"]]), rel=1e-9)
    # The paper's 1G headline ratios are carried beside ours.
    paper = imp[(imp.gbps == 1) & (imp.CCT == "avg")].set_index("compared")["paper"]
    assert paper.to_dict() == {"Baraat": 1.4, "Fair Sharing": 1.77, "Aalo": 0.87}


def test_queue_and_heavy_tables_use_the_right_runs(out):
    fig11 = _csv(out, "fig11").set_index("queues")
    fig6 = _csv(out, "fig6").set_index(["gbps", "k", "policy"])
    # K = 4 is the Fig. 6 run itself.
    assert fig11.loc[4, "Stream mean CCT (s)"] == pytest.approx(
        fig6.loc[(1, 8, "Stream"), "avg CCT (s)"], rel=1e-12
    )
    heavy = _csv(out, "baraat_threshold").set_index("heavy_mb")
    assert heavy.loc[100, "Baraat mean CCT (s)"] == pytest.approx(
        fig6.loc[(1, 8, "Baraat"), "avg CCT (s)"], rel=1e-12
    )


def test_aalo_forms_use_fig6s_aalo_and_their_own_runs(out):
    from conftest import SHARED_TRACE

    forms = _csv(out, "aalo_forms")
    fig6 = _csv(out, "fig6").set_index(["gbps", "k", "policy"])
    labels = list(stream.AALO_FORMS)
    assert len(forms) == len(labels) * len(stream.SPEEDS)
    for g in stream.SPEEDS:
        rows = forms[forms.gbps == g].set_index("Aalo")
        # The first form is Fig. 6's Aalo run on 8 pods.
        want = fig6.loc[(g, 8, "Aalo"), "avg CCT (s)"]
        assert rows.loc[labels[0], "mean CCT (s)"] == pytest.approx(want, rel=1e-12)
        stream_avg = fig6.loc[(g, 8, "Stream"), "avg CCT (s)"]
        for label in labels:
            ratio = rows.loc[label, "mean CCT (s)"] / stream_avg
            assert rows.loc[label, "Aalo / Stream"] == pytest.approx(ratio, rel=1e-12)
    # The shared-queue form is its own simulation, with its own parameters.
    w = ck.load_trace(str(SHARED_TRACE)).head(N)
    params = dict(stream.AALO_FORMS[labels[1]])
    assert params == {"queues": "4", "within": "fair"}
    r = ck.simulate(w, "aalo", params=params, fabric="fattree:k=8,gbps=1")
    got = forms[(forms.gbps == 1) & (forms.Aalo == labels[1])]["mean CCT (s)"].item()
    assert got == pytest.approx(r.coflows["cct_s"].mean(), rel=1e-12)


def test_dag_runs_replay_multi_stage_coflows(out):
    from conftest import SHARED_TRACE

    # The TPC-DS DAG of the first N coflows: each coflow is six sub-coflows (plus
    # 1e-6 B barriers), so six times its original's size; a DAG runs its stages
    # one after another, so it takes longer than its original alone.
    w = ck.transform(ck.load_trace(str(SHARED_TRACE)), f"head:count={N}")
    d = ck.transform(w, "dag:shape=tpcds")
    assert d.num_coflows == N
    r = ck.simulate(d, "fair", fabric="fattree:k=8,gbps=1")
    orig = ck.simulate(w, "fair", fabric="fattree:k=8,gbps=1")
    ratio = r.coflows["size_bytes"].to_numpy() / orig.coflows["size_bytes"].to_numpy()
    assert ratio == pytest.approx(np.full(N, 6.0), rel=1e-9)
    assert (r.coflows["cct_s"].to_numpy() > orig.coflows["isolated_s"].to_numpy()).all()
    fig12 = _csv(out, "fig12")
    assert set(fig12["compared"]) == {"Baraat", "Fair Sharing", "Aalo"}


def test_coflows_all_replays_the_whole_trace_and_no_flag_the_samples(monkeypatch, tmp_path):
    """`--coflows all` was once read as "not given", so it replayed the 20-coflow
    samples: each of the three forms must reach the plan as asked."""
    from coflowkit import experiments
    from coflowkit.experiments import writer
    from conftest import SHARED_TRACE

    seen = []
    monkeypatch.setattr(experiments, "run", lambda name, **kw: seen.append(kw) or "report.md")
    base = ["reproduce", "stream", "--trace", str(SHARED_TRACE), "--out", str(tmp_path)]
    for extra in ([], ["--coflows", "all"], ["--coflows", "7"]):
        assert cli.main([*base, *extra]) == 0
    default = writer.Options(out="o", trace="t", coflows=stream.EXPERIMENT.default_coflows)
    assert "coflows" not in seen[0]
    assert stream.sample_of(default) == stream.SAMPLE
    assert seen[1]["coflows"] is None and seen[2]["coflows"] == 7
    whole = writer.Options(out="o", trace="t", coflows=None)
    assert stream.sample_of(whole) == dict.fromkeys(stream.SAMPLE)
    assert stream.sample_of(writer.Options(out="o", trace="t", coflows=7)) == dict.fromkeys(
        stream.SAMPLE, 7
    )
    # The command line in the report's provenance names what was replayed.
    assert "--coflows" not in writer.command(stream.EXPERIMENT, default)
    assert writer.command(stream.EXPERIMENT, whole).endswith("--coflows all")


def test_a_whole_trace_plan_cuts_no_workload():
    keyed = stream.plan("trace.txt", dict.fromkeys(stream.SAMPLE))
    assert len(keyed) == len(stream.plan("trace.txt", dict(stream.SAMPLE)))
    for key, job in keyed:
        assert job.workload.first is None, key
        assert not any(t.startswith("head:") for t in job.workload.transforms), key
    dags = [job for key, job in keyed if key[0] == "dag"]
    assert dags and all(job.workload.transforms[-1].startswith("dag:shape=") for job in dags)
    sampled = dict(stream.plan("trace.txt", dict(stream.SAMPLE)))
    assert sampled[("size", 8, 1, "Stream")].workload.first == stream.SAMPLE["many-to-one"]
    dag = sampled[("dag", "tao", 1, "Stream")].workload
    assert f"head:count={stream.SAMPLE['dag']}" in dag.transforms


def test_the_report_says_what_was_replayed(out):
    """Whole (this run: every coflow of the cut trace) or sampled (the same
    numbers rendered with a smaller sample)."""
    from coflowkit.experiments import writer

    report = (out / "report.md").read_text()
    whole = f"Every run replays all {N} coflows of the trace, the paper's setting.\nNumbers"
    assert whole in report
    assert "**The whole trace and the network sizes.**" in report
    assert "Only " not in report and "--coflows all" in report
    ctx, parts, values = RENDERED["ctx"], RENDERED["parts"], RENDERED["values"]
    sample = {**dict.fromkeys(stream.SAMPLE, 3), "dag": N}
    text = writer.render(ctx, parts, {**values, "sample": sample})
    assert "Runs replay\nthe first 3 coflows (many-to-one), " in text
    rest = f"all {N} coflows (dag), the first 3 coflows (bursty), the first 3 coflows (queues) of"
    assert rest in text
    assert "not the whole hour" not in text  # the DAGs replay it all
    assert "**The sample, and what it does to the network sizes.**" in text
    assert "**The whole trace and the network sizes.**" not in text
    assert "**Bursty traffic and the DAGs replay the first coflows.**" in text
    # Bursty: 2 speeds x 4 policies; DAGs: 2 shapes x 2 speeds x 4, and 4 ablations.
    assert "With these 28\n  runs whole," in text
    assert "is not established here.\n* **Ablations.**" in report
    dags = writer.render(ctx, parts, {**values, "sample": dict.fromkeys(stream.SAMPLE, 3)})
    assert "Only 3 DAGs are replayed.\n* **Ablations.**" in dags
    assert "**Bursty traffic and the DAGs" not in report
