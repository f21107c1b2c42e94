import json
import subprocess
import sys

import coflowkit as ck
import pandas as pd
import pytest
from conftest import EXAMPLE_CCTS


def run(*args, check=True):
    r = subprocess.run([sys.executable, "-m", "coflowkit", *args], capture_output=True, text=True)
    if check and r.returncode != 0:
        raise AssertionError(r.stderr)
    return r


def test_simulate_writes_csv_parquet_and_summary(tmp_path, example_path):
    out = tmp_path / "run"
    r = run("simulate", "--trace", str(example_path), "--policy", "varys", "--out", str(out))
    assert "varys" in r.stdout and "mean CCT" in r.stdout
    df = pd.read_csv(out / "coflows.csv")
    for col in [
        "coflow_id",
        "arrival_s",
        "finish_s",
        "cct_s",
        "isolated_s",
        "slowdown",
        "width",
        "length_bytes",
        "size_bytes",
        "bin",
    ]:
        assert col in df.columns
    assert df["cct_s"].tolist() == pytest.approx(EXAMPLE_CCTS["varys"])
    pq = pd.read_parquet(out / "coflows.parquet")
    assert pq["cct_s"].tolist() == df["cct_s"].tolist()
    summary = json.loads((out / "summary.json").read_text())
    assert summary["policy"] == "varys"
    assert summary["summary"]["all"]["coflows"] == 3
    assert summary["summary"]["all"]["cct_s"]["max"] == pytest.approx(0.109375)


def test_simulate_with_params_and_fabric(tmp_path, example_path):
    out = tmp_path / "run"
    run(
        "simulate",
        "--trace",
        str(example_path),
        "--policy",
        "aalo",
        "--param",
        "queues=4",
        "--fabric",
        "bigswitch:gbps=2",
        "--out",
        str(out),
        "--quiet",
    )
    s = json.loads((out / "summary.json").read_text())
    assert s["params"] == {"queues": "4"} and "gbps=2" in s["fabric"]


def test_compare_prints_and_writes_normalized_cct(tmp_path, example_path):
    out = tmp_path / "cmp"
    r = run(
        "compare",
        "--trace",
        str(example_path),
        "--policies",
        "varys,fifo",
        "--baseline",
        "fair",
        "--out",
        str(out),
        "--workers",
        "1",
    )
    assert "normalized CCT vs fair" in r.stdout
    df = pd.read_csv(out / "compare.csv")
    row = df[(df.policy == "varys") & (df.bin == "all")].iloc[0]
    v, f = EXAMPLE_CCTS["varys"], EXAMPLE_CCTS["fair"]
    assert row.mean_of_ratios == pytest.approx(sum(a / b for a, b in zip(v, f, strict=True)) / 3)
    assert row.ratio_of_means == pytest.approx(sum(v) / sum(f))
    png = (out / "compare.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000  # the figure, not an empty file
    assert f"wrote {out / 'compare.csv'} and {out / 'compare.png'}" in r.stdout


def test_policies_lists_every_policy_with_its_parameters():
    r = run("policies")
    names = [line.split()[0] for line in r.stdout.strip().splitlines()]
    assert names == [p["name"] for p in ck.policies()]  # the registry's order
    assert "queues=10" in r.stdout and "ordering=dynamic" in r.stdout
    assert "backfill_rounds=1" in r.stdout and "spare=onepass" in r.stdout
    assert "heavy_mb=100" in r.stdout and "child_to_parent=true" in r.stdout


@pytest.mark.parametrize(
    "args,message",
    [
        (
            ["--policy", "nope"],
            "unknown policy 'nope'; valid policies: " + ", ".join(p["name"] for p in ck.policies()),
        ),
        (["--policy", "aalo", "--param", "k=1"], "policy 'aalo' has no parameter 'k'"),
        (["--policy", "aalo", "--param", "queues"], "--param 'queues' is not KEY=VALUE"),
        (["--policy", "fair", "--fabric", "torus"], "unknown fabric 'torus'"),
    ],
)
def test_user_mistakes_get_one_line(example_path, args, message):
    r = run("simulate", "--trace", str(example_path), *args, check=False)
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == [f"coflowkit: error: {message}"] or (
        len(r.stderr.strip().splitlines()) == 1 and message in r.stderr
    )
    assert "Traceback" not in r.stderr


def test_missing_trace_file(tmp_path):
    r = run("simulate", "--trace", str(tmp_path / "x.txt"), "--policy", "fair", check=False)
    assert r.returncode == 2 and "x.txt: no such file" in r.stderr


def test_convert_between_formats(tmp_path, example_path):
    out = tmp_path / "e.csv"
    run("convert", "--trace", str(example_path), "--to", "flows", "--out", str(out))
    df = pd.read_csv(out)
    assert len(df) == 3 and df["bytes"].tolist() == [8 * 2**20, 2 * 2**20, 4 * 2**20]
