"""The experiment runner: byte-identical results serially, on 2 processes, and from
the cache."""

import subprocess
import sys

from coflowkit import runner


def jobs(trace):
    spec = runner.WorkloadSpec(trace=trace)
    return [runner.Job(spec, p) for p in ["fair", "varys", "aalo", "sincronia"]]


def test_serial_parallel_and_cached_runs_agree(tmp_path, example_path):
    js = jobs(str(example_path))
    a = runner.run_jobs(js, workers=1, cache_dir=None)
    b = runner.run_jobs(js, workers=2, cache_dir=str(tmp_path / "c"))
    c = runner.run_jobs(js, workers=2, cache_dir=str(tmp_path / "c"))  # all from cache
    assert len(list((tmp_path / "c").iterdir())) == 4
    for x, y, z in zip(a, b, c, strict=True):
        assert x.coflows.to_csv() == y.coflows.to_csv() == z.coflows.to_csv()
        assert x.policy == y.policy


def test_a_job_listed_twice_is_simulated_once(tmp_path, example_path, monkeypatch):
    spec = runner.WorkloadSpec(trace=str(example_path))
    # The same job twice (parameters in another order: the same key), and another.
    js = [
        runner.Job(spec, "aalo", (("queues", "4"), ("multiplier", "4"))),
        runner.Job(spec, "fair"),
        runner.Job(spec, "aalo", (("multiplier", "4"), ("queues", "4"))),
    ]
    simulated = []
    real = runner._run_one
    monkeypatch.setattr(runner, "_run_one", lambda j: simulated.append(j) or real(j))
    stats = {}
    res = runner.run_jobs(js, workers=1, cache_dir=None, stats=stats)
    assert [j.policy for j in simulated] == ["aalo", "fair"]
    assert stats == {"cached": 0, "simulated": 2}
    assert res[0].coflows.to_csv() == res[2].coflows.to_csv()
    assert res[0].coflows.to_csv() != res[1].coflows.to_csv()


def test_cache_key_depends_on_every_input(example_path, tmp_path):
    spec = runner.WorkloadSpec(trace=str(example_path))
    k = runner.Job(spec, "aalo").key()
    assert runner.Job(spec, "aalo", (("queues", "4"),)).key() != k
    assert runner.Job(spec, "aalo", fabric="bigswitch:gbps=2").key() != k
    assert runner.Job(spec, "fifo").key() != k
    other = tmp_path / "o.txt"
    other.write_text(example_path.read_text().replace("0 1 8", "0 1 9"))
    assert runner.Job(runner.WorkloadSpec(trace=str(other)), "aalo").key() != k


def test_coflows_csv_is_byte_identical_across_runs_and_workers(tmp_path):
    outs = []
    for i, workers in enumerate(["1", "2", "2"]):
        d = tmp_path / f"r{i}"
        subprocess.run(
            [
                sys.executable,
                "-m",
                "coflowkit",
                "compare",
                "--synthetic",
                "fb",
                "--seed",
                "7",
                "--first",
                "40",
                "--policies",
                "varys,aalo",
                "--baseline",
                "fair",
                "--workers",
                workers,
                "--no-cache",
                "--out",
                str(d),
            ],
            check=True,
            capture_output=True,
        )
        outs.append({p.name: p.read_bytes() for p in sorted(d.iterdir())})
    assert outs[0] == outs[1] == outs[2]  # the figure too
    assert sorted(outs[0]) == [
        "coflows_aalo.csv",
        "coflows_fair.csv",
        "coflows_varys.csv",
        "compare.csv",
        "compare.png",
    ]
