"""Every kind of bad input stops with one clear error naming the file, the line (or
row) and the field, from the API and from the CLI (exit 2, one line, no traceback)."""

import subprocess
import sys

import coflowkit as ck
import pandas as pd
import pytest

H = "coflow_id,flow_id,src,dst,bytes,start_s"
CASES = [
    ("empty.txt", "", "empty.txt: the file is empty"),
    ("missing.txt", "3 1\n1 0 2 0 1:1\n", "missing.txt:2: mapper 2: expected a whole number"),
    ("zero.txt", "3 1\n1 0 1 0 1 1:0\n", "zero.txt:2: reducer 1: shuffle size must be > 0 MB"),
    ("neg.txt", "3 1\n1 0 1 0 1 1:-3\n", "neg.txt:2: reducer 1: shuffle size must be > 0 MB"),
    ("noflows.txt", "3 1\n1 0 0 0 0\n", "noflows.txt:2: number of flows: coflow 1 has no flows"),
    ("port.txt", "3 1\n1 0 1 7 1 1:1\n", "port.txt:2: mapper 1: port 7 is outside the fabric"),
    ("count.txt", "3 2\n1 0 1 0 1 1:1\n", "count.txt:1: coflows: the header says 2 coflows but"),
    ("counts.txt", "3 1\n1 0 1 0 2 1:1\n", "counts.txt:2: reducer 2: missing: the line declares 2"),
    (
        "dup.txt",
        "3 2\n1 0 1 0 1 1:1\n1 0 1 0 1 1:1\n",
        "dup.txt:3: coflow_id: duplicate coflow id 1",
    ),
    ("sinc.txt", "3 1\n1 0 2 1 1\n0 1 1\n", "sinc.txt:3: src: missing: coflow 1 declares 2 flows"),
    (
        "cycle.csv",
        f"{H},depends_on\n1,1,0,1,5,0,2\n1,2,0,1,5,0,1\n",
        "cycle.csv:2: depends_on: dependency cycle through flow 1",
    ),
    (
        "unknown.csv",
        f"{H},depends_on\n1,1,0,1,5,0,9\n",
        "unknown.csv:2: depends_on: flow 1 depends on unknown flow 9",
    ),
    (
        "dupflow.csv",
        f"{H}\n1,1,0,1,5,0\n1,1,0,1,5,0\n",
        "dupflow.csv:3: flow_id: duplicate flow id 1",
    ),
    (
        "nobytes.csv",
        "coflow_id,flow_id,src,dst,start_s\n1,1,0,1,0\n",
        "nobytes.csv:1: bytes: missing required column",
    ),
    ("zerobytes.csv", f"{H}\n1,1,0,1,0,0\n", "zerobytes.csv:2: bytes: flow size must be > 0"),
]


@pytest.mark.parametrize("name,text,message", CASES, ids=[c[0] for c in CASES])
def test_api_error_names_file_line_and_field(tmp_path, name, text, message):
    p = tmp_path / name
    p.write_text(text)
    with pytest.raises(ck.CoflowkitError) as e:
        ck.load_trace(p)
    assert str(e.value).startswith(str(tmp_path / message.split(":")[0]) + message[len(name) :])


@pytest.mark.parametrize("name,text,message", CASES[:4], ids=[c[0] for c in CASES[:4]])
def test_cli_prints_one_line_and_exits_2(tmp_path, name, text, message):
    p = tmp_path / name
    p.write_text(text)
    out = tmp_path / "out"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "coflowkit",
            "simulate",
            "--trace",
            str(p),
            "--policy",
            "fair",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("coflowkit: error: ")
    assert "Traceback" not in r.stderr
    assert not out.exists()  # nothing half-done is written


def test_parquet_errors_name_row_and_column(tmp_path):
    p = tmp_path / "bad.parquet"
    pd.DataFrame(
        {
            "coflow_id": [1, 1],
            "flow_id": [1, 2],
            "src": [0, 0],
            "dst": [1, 1],
            "bytes": [5.0, -1.0],
            "start_s": [0.0, 0.0],
        }
    ).to_parquet(p)
    with pytest.raises(
        ck.CoflowkitError, match=r"bad.parquet: row 2: bytes: flow size must be > 0"
    ):
        ck.load_trace(p)
    q = tmp_path / "nocol.parquet"
    pd.DataFrame({"coflow_id": [1]}).to_parquet(q)
    with pytest.raises(ck.CoflowkitError, match=r"nocol.parquet: flow_id: missing required column"):
        ck.load_trace(q)
    r = tmp_path / "null.parquet"
    pd.DataFrame(
        {
            "coflow_id": [1, None],
            "flow_id": [1, 2],
            "src": [0, 0],
            "dst": [1, 1],
            "bytes": [5.0, 1.0],
            "start_s": [0.0, 0.0],
        }
    ).to_parquet(r)
    with pytest.raises(ck.CoflowkitError, match=r"null.parquet: row 2: coflow_id: missing value"):
        ck.load_trace(r)


def test_missing_file_and_bad_format(tmp_path):
    with pytest.raises(ck.CoflowkitError, match="no such file"):
        ck.load_trace(tmp_path / "nope.txt")
    p = tmp_path / "t.txt"
    p.write_text("3 1\n1 0 1 0 1 1:1\n")
    with pytest.raises(ck.CoflowkitError, match="unknown trace format 'xml'"):
        ck.load_trace(p, "xml")
    # Forcing the wrong reader gives a clear error too.
    with pytest.raises(ck.CoflowkitError, match=r"t.txt:2: src: expected a whole number"):
        ck.load_trace(p, "sincronia")
