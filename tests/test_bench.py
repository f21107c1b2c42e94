import subprocess
import sys

import coflowkit as ck


def test_bench_reports_wall_time_rss_and_mean_cct(tmp_path, example_path):
    out = tmp_path / "bench.md"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "coflowkit",
            "bench",
            "--trace",
            str(example_path),
            "--policies",
            "fifo,varys",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    rows = [
        line
        for line in out.read_text().splitlines()
        if line.startswith("| fifo") or line.startswith("| varys")
    ]
    assert len(rows) == 2 and r.stdout.count("| ok |") == 2
    # Mean CCTs of the worked example: fifo (0.0625+0.078125+0.07775)/3, varys 0.052083.
    assert rows[0].split("|")[5].strip() == "0.0728"
    assert rows[1].split("|")[5].strip() == "0.0521"
    assert float(rows[0].split("|")[4]) > 0  # peak RSS in MiB
    # Provenance: what ran, where, when.
    text = out.read_text()
    assert f"Version: coflowkit {ck.__version__}, commit " in text and " UTC" in text
    assert "cores" in text.splitlines()[0] and "load average" in text.splitlines()[0]


def test_bench_rejects_unknown_policy(example_path):
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "coflowkit",
            "bench",
            "--trace",
            str(example_path),
            "--policies",
            "nope",
        ],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 2 and "unknown policy 'nope'" in r.stderr


def test_bench_on_a_fattree_times_routing_apart(tmp_path, example_path):
    # The worked example's two ports on a k = 4 FatTree (spread: hosts 0 and 8, in
    # different pods). Every link is 1 Gbps and the flows contend on the same host
    # links as on the big switch, so fifo's mean CCT is the big switch's 0.0728.
    out = tmp_path / "bench.md"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "coflowkit",
            "bench",
            "--trace",
            str(example_path),
            "--policies",
            "fifo",
            "--fabric",
            "fattree:k=4,placement=spread",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    text = out.read_text()
    assert "--fabric fattree:k=4,placement=spread" in text
    assert "Path computation alone" in text and "routing" in text
    row = next(line for line in text.splitlines() if line.startswith("| fifo"))
    assert row.split("|")[5].strip() == "0.0728"
    assert r.stdout.count("| ok |") == 1


def test_provenance_names_only_a_coflowkit_checkout(tmp_path):
    """The commit comes from a coflowkit checkout: not from a plain folder, and not
    from another git repository that happens to hold the package (pyenv's
    checkout holds its site-packages)."""
    import os

    from coflowkit.policy_timing import source_commit

    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    head = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=repo, capture_output=True, text=True
    ).stdout.strip()
    plain = tmp_path / "plain"
    plain.mkdir()
    other = tmp_path / "other"
    other.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=other, check=True)
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q",
         "--allow-empty", "-m", "x"],
        cwd=other,
        check=True,
    )  # fmt: skip
    assert source_commit([str(plain)]) == "unknown"
    assert source_commit([str(other)]) == "unknown"
    if not head:
        return  # not run from a git checkout of coflowkit
    # The first candidate that is a coflowkit checkout wins.
    got = source_commit([str(other), repo])
    assert got.split("+")[0] == head and got in (head, head + "+dirty")
