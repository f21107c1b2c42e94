"""`coflowkit sweep`: the spec's grid, its errors, the tables against hand-computed
CCTs, the HTML report in a real browser, and the same sweep on a local Ray cluster."""

import os
import subprocess
import sys
import textwrap

import pandas as pd
import pytest
from coflowkit import runner, sweep
from coflowkit._core import CoflowkitError
from conftest import EXAMPLE_CCTS

FB = "[[workload]]\nsynthetic = 'fb'\n"
FAIR = "[[policy]]\nname = 'fair'\n"


def write(tmp_path, text, name="spec.toml"):
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return str(p)


def example_spec(tmp_path, example_path, extra=""):
    return write(
        tmp_path,
        f"""
        [sweep]
        fabrics = ["bigswitch", "bigswitch:gbps=2"]
        baseline = "fair"
        {extra}
        [[workload]]
        name = "example"
        trace = "{example_path}"

        [[policy]]
        name = "varys"

        [[policy]]
        name = "fifo"
        """,
    )


def test_grid_is_the_product_of_every_axis(tmp_path, example_path):
    spec = sweep.load(
        write(
            tmp_path,
            f"""
            [sweep]
            seeds = [1, 2, 3]
            fabrics = ["bigswitch", "bigswitch:gbps=10"]
            engines = ["exact", "coflowsim"]
            baseline = "fair"
            [[workload]]
            synthetic = "fb"
            first = 5
            [[workload]]
            trace = "{example_path}"
            [[policy]]
            name = "aalo"
            params = {{ queues = [4, 8], multiplier = [10, 4] }}
            [[policy]]
            name = "varys"
            """,
        )
    )
    # (3 seeds of fb + 1 unseeded trace) × 2 fabrics × 2 engines × (fair + 4 aalo + varys)
    assert len(spec.runs) == 4 * 2 * 2 * 6
    labels = list(dict.fromkeys(r.policy for r in spec.runs))
    assert labels == [
        "fair",
        "aalo:multiplier=10,queues=4",
        "aalo:multiplier=10,queues=8",
        "aalo:multiplier=4,queues=4",
        "aalo:multiplier=4,queues=8",
        "varys",
    ]
    seeds = sorted({(r.workload, r.seed) for r in spec.runs}, key=str)
    assert seeds == [("example.txt", None), ("fb", 1), ("fb", 2), ("fb", 3)]
    assert {r.job.workload.seed for r in spec.runs if r.workload == "fb"} == {1, 2, 3}


def test_seed_in_a_transform_seeds_each_copy_of_a_trace(tmp_path, example_path):
    spec = sweep.load(
        write(
            tmp_path,
            f"""
            [sweep]
            seeds = [7, 8]
            [[workload]]
            trace = "{example_path}"
            transforms = ["starts:model=spark,tick_s=0.01,seed={{seed}}"]
            [[policy]]
            name = "fair"
            """,
        )
    )
    assert [r.job.workload.transforms for r in spec.runs] == [
        ("starts:model=spark,tick_s=0.01,seed=7",),
        ("starts:model=spark,tick_s=0.01,seed=8",),
    ]


@pytest.mark.parametrize(
    "body,message",
    [
        ("[sweep]\nseeds = [1,\n", "not valid TOML"),
        ("[sweep]\nseed = [1]\n", "sweep.seed: unknown key"),
        ("[sweep]\nfabrics = ['ring']\n", "sweep.fabrics[0]: fabric: unknown fabric 'ring'"),
        ("[sweep]\nengines = ['warp']\n", "sweep.engines[0]"),
        ("[sweep]\nseeds = ['a']\n", "sweep.seeds: expected int entries"),
        ("[[workload]]\nsynthetic = 'fb'\n", "policy: at least one [[policy]]"),
        (
            "[[workload]]\nsynthetic = 'fb'\n[[policy]]\nname = 'aalo'\nparams = {queues = 0}\n",
            "policy[0]",
        ),
        ("[[workload]]\nsynthetic = 'fb'\n[[policy]]\nname = 'nope'\n", "policy[0]"),
        ("[[workload]]\ntrace = 'missing.txt'\n[[policy]]\nname = 'fair'\n", "workload[0].trace"),
        (
            "[[workload]]\nsynthetic = 'fb'\ntrace = 'x'\n[[policy]]\nname = 'fair'\n",
            "workload[0]: give exactly one of trace or synthetic",
        ),
        (
            FB + "transforms = ['warp:x=1']\n" + FAIR,
            "workload[0].transforms[0]",
        ),
        (
            "[sweep]\nbaseline = 'nope'\n" + FB + FAIR,
            "sweep.baseline",
        ),
        ("[sweep]\nengines = ['coflowsim']\n" + FB + "[[policy]]\nname = 'coda'\n", "coda stays"),
        (FB + "[[policy]]\nname = 'fair'\nlabel = 3\n", "policy[0].label: expected a string"),
    ],
)
def test_spec_errors_name_the_key(tmp_path, body, message):
    path = write(tmp_path, body)
    with pytest.raises(CoflowkitError) as e:
        sweep.load(path)
    assert message in str(e.value) and path in str(e.value)


def test_toml_syntax_error_gives_the_line(tmp_path):
    path = write(tmp_path, "[sweep]\nname = 'x'\nseeds = [1 2]\n")
    with pytest.raises(CoflowkitError, match=r"line 3"):
        sweep.load(path)


def test_unseeded_trace_refuses_several_seeds(tmp_path, example_path):
    path = write(
        tmp_path,
        f"[[workload]]\ntrace = '{example_path}'\nseeds = [1, 2]\n[[policy]]\nname = 'fair'\n",
    )
    with pytest.raises(CoflowkitError, match=r"workload\[0\].seeds: a trace is not seeded"):
        sweep.load(path)


def test_tables_match_the_hand_computed_ccts(tmp_path, example_path):
    out = tmp_path / "out"
    cache = str(tmp_path / "cache")
    prov = sweep.run(example_spec(tmp_path, example_path), str(out), workers=1, cache_dir=cache)
    assert prov["runs"] == 6 and prov["simulated_jobs"] == 6
    cof = pd.read_parquet(out / "coflows.parquet")
    runs = pd.read_csv(out / "runs.csv")
    assert len(cof) == 6 * 3 and list(runs.policy[:3]) == ["fair", "varys", "fifo"]
    base = cof[(cof.fabric == "bigswitch")]
    for policy in ("fair", "varys", "fifo"):
        got = base[base.policy == policy].sort_values("coflow_id").cct_s.tolist()
        assert got == pytest.approx(EXAMPLE_CCTS[policy], rel=1e-9), policy
        want = [a / b for a, b in zip(EXAMPLE_CCTS[policy], EXAMPLE_CCTS["fair"], strict=True)]
        assert base[base.policy == policy].sort_values("coflow_id").normalized_cct.tolist() == (
            pytest.approx(want, rel=1e-9)
        )
        row = runs[(runs.policy == policy) & (runs.fabric == "bigswitch")].iloc[0]
        assert row.ratio_of_means == pytest.approx(
            sum(EXAMPLE_CCTS[policy]) / sum(EXAMPLE_CCTS["fair"]), rel=1e-9
        )
    # On the doubled fabric the baseline is itself again, and the ratios come from
    # the same coflows table.
    fast = cof[cof.fabric == "bigswitch:gbps=2"]
    assert (fast[fast.policy == "fair"].normalized_cct == 1.0).all()
    v = fast[fast.policy == "varys"].set_index("coflow_id").cct_s
    f = fast[fast.policy == "fair"].set_index("coflow_id").cct_s
    row = runs[(runs.policy == "varys") & (runs.fabric == "bigswitch:gbps=2")].iloc[0]
    assert row.ratio_of_means == pytest.approx(v.sum() / f.sum(), rel=1e-12)
    assert (out / "fig1.png").exists() and (out / "fig2.png").exists()
    # Rerun: every job comes from the cache, and the tables are the same bytes.
    before = (out / "coflows.csv").read_bytes()
    prov = sweep.run(example_spec(tmp_path, example_path), str(out), workers=1, cache_dir=cache)
    assert prov["cached_jobs"] == 6 and prov["simulated_jobs"] == 0
    assert (out / "coflows.csv").read_bytes() == before


def test_sweep_report_renders_in_a_browser(tmp_path, example_path, browser):
    out = tmp_path / "out"
    sweep.run(example_spec(tmp_path, example_path), str(out), workers=1)
    page, errors = browser.open((out / "report.html").as_uri())
    assert errors == []
    assert page.title() == "Sweep spec"  # the spec file's name
    # Two figures (one per fabric), embedded and decoded; the runs table and the
    # timings table have 6 rows each.
    widths = page.evaluate("Array.from(document.images).map(i => i.naturalWidth)")
    assert len(widths) == 2 and all(w > 500 for w in widths)
    assert page.evaluate("Array.from(document.images).every(i => i.src.startsWith('data:'))")
    tables = page.locator("table")
    assert tables.count() == 2  # the runs, and each run's simulation time
    assert tables.nth(0).locator("tbody tr").count() == 6
    assert tables.nth(1).locator("tbody tr").count() == 6
    assert "Provenance" in page.locator("section.provenance").inner_text()


def test_cli_sweep_writes_the_report(tmp_path, example_path):
    out = tmp_path / "cli"
    r = subprocess.run(
        [sys.executable, "-m", "coflowkit", "sweep", example_spec(tmp_path, example_path),
         "--out", str(out), "--workers", "1"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "sweep spec: 6 runs" in r.stdout and f"wrote {out / 'report.html'}" in r.stdout
    bad = write(tmp_path, "[sweep]\nseed = 1\n", "bad.toml")
    r = subprocess.run(
        [sys.executable, "-m", "coflowkit", "sweep", bad], capture_output=True, text=True
    )
    assert r.returncode == 2
    assert r.stderr.strip() == f"coflowkit: error: {bad}: sweep.seed: unknown key; " + (
        "valid: baseline, engines, fabrics, name, seeds"
    )


def test_backend_errors_are_clear():
    with pytest.raises(CoflowkitError, match="unknown backend 'slurm'"):
        runner.parse_backend("slurm")
    with pytest.raises(CoflowkitError, match="unknown backend 'process:x'"):
        runner.parse_backend("process:x")
    assert runner.parse_backend("ray:10.0.0.1:6379") == ("ray", "10.0.0.1:6379")


def test_sweep_on_a_local_ray_cluster_equals_the_local_run(tmp_path, fb_trace, monkeypatch):
    """A real Ray head on loopback with two worker processes. The first job's worker
    is killed (fault injection): Ray reruns it, and the tables are byte-identical
    to the local backend's; the driver alone writes the cache."""
    spec = write(
        tmp_path,
        f"""
        [sweep]
        seeds = [1, 2]
        fabrics = ["bigswitch", "bigswitch:gbps=10"]
        baseline = "fair"
        [[workload]]
        name = "fb12"
        trace = "{fb_trace}"
        first = 12
        transforms = ["starts:model=spark,tick_s=0.01,seed={{seed}}"]
        [[policy]]
        name = "varys"
        [[policy]]
        name = "aalo"
        params = {{ queues = [4, 10] }}
        """,
    )
    local = tmp_path / "local"
    sweep.run(spec, str(local), workers=2, cache_dir=None)
    marker = tmp_path / "killed-once"
    monkeypatch.setenv("COFLOWKIT_FAULT_EXIT_ONCE", str(marker))
    cache = tmp_path / "raycache"
    with runner.backend_scope("ray"):
        prov = sweep.run(spec, str(tmp_path / "ray"), workers=2, cache_dir=str(cache))
        assert marker.exists()  # a worker really died, and its job was rerun
        assert prov["simulated_jobs"] == 16
        for name in ("coflows.csv", "runs.csv"):
            assert (tmp_path / "ray" / name).read_bytes() == (local / name).read_bytes(), name
        # Every cache entry is whole (no temporary files left by a dead worker), and
        # a second run submits nothing.
        entries = os.listdir(cache)
        assert len([e for e in entries if e.endswith(".json")]) == 16
        assert not [e for e in entries if e.endswith(".tmp")]
        prov = sweep.run(spec, str(tmp_path / "ray2"), workers=2, cache_dir=str(cache))
        assert prov["cached_jobs"] == 16 and prov["simulated_jobs"] == 0
    import ray

    assert not ray.is_initialized()  # the scope closed the cluster it started


def test_ray_backend_without_ray_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(CoflowkitError, match=r"pip install 'coflowkit\[ray\]'"):
        with runner.backend_scope("ray"):
            pass


def test_runs_of_a_labelling_policy_carry_the_quality_of_its_labels(tmp_path):
    """`coda` schedules its own labelling: its run gets the precision, recall and
    accuracy of the labels it used, equal to the labelling source's own quality
    computed apart (coflowkit.labels); a policy without labels gets none."""
    from coflowkit import labels

    spec = write(
        tmp_path,
        """
        [[workload]]
        synthetic = "fb"
        first = 12
        seeds = [3]
        [[policy]]
        name = "coda"
        params = { labels = "random", error_rate = 0.4, seed = 2 }
        [[policy]]
        name = "fair"
        """,
    )
    out = tmp_path / "out"
    sweep.run(spec, str(out), workers=1, cache_dir=str(tmp_path / "cache"))
    runs = pd.read_csv(out / "runs.csv").set_index("policy")
    w = runner._workload(sweep.load(spec).runs[0].job.workload, "bigswitch")
    q = labels.source_quality(w, "random", 0.4, 2)
    assert q.precision < 1 and q.recall < 1  # the errors are there to be seen
    got = runs.loc["coda:error_rate=0.4,labels=random,seed=2"]
    assert got.label_precision == pytest.approx(q.precision, rel=1e-12)
    assert got.label_recall == pytest.approx(q.recall, rel=1e-12)
    assert got.label_accuracy == pytest.approx(q.accuracy, rel=1e-12)
    assert pd.isna(runs.loc["fair", "label_precision"])


def test_each_run_records_what_its_simulation_cost_and_the_cache_keeps_it(tmp_path):
    """timings.csv: every run simulated here has positive CPU and wall seconds; read
    back from the cache, the same runs show the same (original) times; runs.csv
    stays free of them (its bytes depend only on the inputs)."""
    spec = write(tmp_path, FB + "first = 4\nseeds = [1]\n" + FAIR)
    cache = str(tmp_path / "cache")
    sweep.run(spec, str(tmp_path / "a"), workers=1, cache_dir=cache)
    first = pd.read_csv(tmp_path / "a" / "timings.csv")
    assert (first.sim_cpu_s > 0).all() and (first.sim_wall_s > 0).all()
    prov = sweep.run(spec, str(tmp_path / "b"), workers=1, cache_dir=cache)
    assert prov["cached_jobs"] == len(first)
    again = pd.read_csv(tmp_path / "b" / "timings.csv")
    pd.testing.assert_frame_equal(first, again)
    assert "sim_cpu_s" not in pd.read_csv(tmp_path / "a" / "runs.csv").columns
    assert "Simulation time per run" in (tmp_path / "b" / "report.md").read_text()
