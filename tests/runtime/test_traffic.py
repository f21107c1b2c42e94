"""The testbed's per-host traffic worker (coflowkit.runtime.traffic), on loopback:
127.0.0.1, 127.0.0.2, ... are all loopback addresses on Linux, so each plays a host."""

from __future__ import annotations

import errno
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from coflowkit.runtime import testbed, traffic

H0, H1, H2 = "127.0.0.1", "127.0.0.2", "127.0.0.3"
TIMEOUT = 10.0  # seconds for any one worker process


def free_port(ip: str) -> int:
    """A TCP port free on ``ip`` right now (above 30000: the kernel's ephemeral range)."""
    while True:
        with socket.socket() as s:
            s.bind((ip, 0))
            port = s.getsockname()[1]
        if port > 30000:
            return port


def stream(flow_id: int, n: int) -> bytes:
    """The first ``n`` bytes flow ``flow_id`` carries."""
    p = traffic.pattern(flow_id)
    return (p * (n // len(p) + 1))[:n]


def write_plan(tmp_path: Path, flows: list[dict], *, hosts=(H0, H1), t0=None, deadline_s=20):
    plan = {
        "t0": time.time() if t0 is None else t0,
        "hosts": list(hosts),
        "flows": flows,
        "deadline_s": deadline_s,
    }
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan))
    return path, plan


def start_worker(
    plan_path: Path, host: int, tmp_path: Path, go: Path | None = None
) -> tuple[subprocess.Popen, Path, Path]:
    out, ready = tmp_path / f"out{host}.json", tmp_path / f"ready{host}"
    env = testbed.child_env()  # the workers import the coflowkit these tests import
    extra = ["--go", str(go)] if go is not None else []
    proc = subprocess.Popen(
        [sys.executable, "-m", "coflowkit.runtime.traffic"]
        + ["--plan", str(plan_path), "--host", str(host), "--out", str(out), "--ready", str(ready)]
        + extra,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    return proc, out, ready


def wait_ready(proc: subprocess.Popen, ready: Path) -> None:
    give_up = time.monotonic() + TIMEOUT
    while not ready.exists():
        if proc.poll() is not None:
            pytest.fail(f"worker exited early ({proc.returncode}): {proc.stderr.read()}")
        if time.monotonic() > give_up:
            proc.kill()
            pytest.fail("worker never became ready")
        time.sleep(0.02)
    assert ready.read_text() == "ok"


def finish(proc: subprocess.Popen) -> tuple[int, str]:
    try:
        _, err = proc.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        pytest.fail("worker did not exit in time")
    return proc.returncode, err


def hand_send(port: int, data: bytes, *, src: str = H0, dst: str = H1) -> None:
    """A hand-written sender: connect from ``src`` and send ``data``, then close."""
    with socket.socket() as s:
        s.settimeout(TIMEOUT)
        s.bind((src, 0))
        s.connect((dst, port))
        try:
            s.sendall(data)
            s.shutdown(socket.SHUT_WR)
        except OSError as e:
            # A receiver that refuses the peer (an unexpected source) may
            # close before the bytes are out: what it records is checked.
            if e.errno not in (errno.EPIPE, errno.ECONNRESET, errno.ENOTCONN):
                raise
            return
        try:
            while s.recv(65536):
                pass
        except ConnectionResetError:
            pass


def flow(fid, coflow, src, dst, port, nbytes, start_s=0.0):
    return {
        "id": fid,
        "coflow": coflow,
        "src": src,
        "dst": dst,
        "port": port,
        "bytes": nbytes,
        "start_s": start_s,
    }


def test_pattern_is_deterministic_and_per_flow():
    p = traffic.pattern(3)
    assert len(p) == traffic.PATTERN_LEN == 65536
    assert traffic.CHUNK % traffic.PATTERN_LEN == 0
    assert p == traffic.pattern(3)
    assert p != traffic.pattern(4)
    import hashlib

    assert p[:64] == hashlib.blake2b(b"coflowkit-traffic:3:0", digest_size=64).digest()


def test_two_hosts_three_flows(tmp_path):
    flows = [
        flow(0, 0, 0, 1, free_port(H1), 3_000_000, 0.0),
        flow(1, 0, 1, 0, free_port(H0), 1_000_003, 0.05),
        flow(2, 1, 0, 1, free_port(H1), 200_001, 0.1),
    ]
    t0 = time.time() + 1.0  # both workers import and listen before time 0
    path, plan = write_plan(tmp_path, flows, t0=t0)
    workers = [start_worker(path, h, tmp_path) for h in (0, 1)]
    for proc, _, ready in workers:
        wait_ready(proc, ready)
    results = []
    for proc, out, _ in workers:
        rc, err = finish(proc)
        assert rc == 0, err
        results.append(json.loads(out.read_text()))

    assert [r["host"] for r in results] == [0, 1]
    assert all(r["errors"] == 0 for r in results)
    by = {(r["id"], r["role"]): r for res in results for r in res["flows"]}
    assert set(by) == {(i, role) for i in range(3) for role in ("send", "recv")}
    for f in flows:
        for role in ("send", "recv"):
            r = by[(f["id"], role)]
            assert r["bytes"] == f["bytes"] and r["error"] is None
            assert r["start"] <= r["end"]
        # Not sent before its release; received after its connect, which
        # returned between the sender's start and the last byte's arrival.
        send = by[(f["id"], "send")]
        assert send["start"] >= t0 + f["start_s"] - 0.01
        assert by[(f["id"], "recv")]["end"] > send["start"]
        assert send["start"] <= send["connected"] <= by[(f["id"], "recv")]["end"]
        assert "connected" not in by[(f["id"], "recv")]
        # Progress marks: 0 at accept, a mark each time another 1/64 of the
        # flow has arrived (a new multiple of the step), and one at the last
        # byte: at most 66, in time order, none after the last byte.
        marks = by[(f["id"], "recv")]["marks"]
        step = f["bytes"] // traffic.PROGRESS_MARKS
        assert marks[0][1] == 0 and marks[-1][1] == f["bytes"] and 2 <= len(marks) <= 66
        for (ta, ba), (tb, bb) in zip(marks, marks[1:], strict=False):
            assert tb >= ta and (bb // step > ba // step or bb == f["bytes"] > ba)
        assert marks[-1][0] <= by[(f["id"], "recv")]["end"] + 1e-6

    c = traffic.collect(results, plan)
    assert c["errors"] == 0
    assert [f["bytes"] for f in c["flows"]] == [f["bytes"] for f in flows]
    assert [co["coflow"] for co in c["coflows"]] == [0, 1]
    co0, co1 = c["coflows"]
    assert co0["start"] == 0.0 and co1["start"] == 0.1
    for co in c["coflows"]:
        assert co["error"] is None
        assert co["start"] <= co["end"]
        assert co["end"] - co["start"] > 0
    assert co0["end"] == max(c["flows"][0]["end"], c["flows"][1]["end"])


def test_go_file_sets_the_start_once_every_worker_listens(tmp_path):
    # The plan's t0 is an hour away; the go file, written once both workers
    # listen, moves the start to now: flows start at the go time plus their
    # start_s, never before it, and times are relative to the go file's t0.
    flows = [
        flow(0, 0, 0, 1, free_port(H1), 500_000, 0.0),
        flow(1, 1, 1, 0, free_port(H0), 400_000, 0.2),
    ]
    path, plan = write_plan(tmp_path, flows, t0=time.time() + 3600)
    go = tmp_path / "go.json"
    workers = [start_worker(path, h, tmp_path, go) for h in (0, 1)]
    for proc, _, ready in workers:
        wait_ready(proc, ready)
    t0 = time.time() + 0.3
    (tmp_path / "go.tmp").write_text(json.dumps({"t0": t0}))
    (tmp_path / "go.tmp").rename(go)
    results = []
    for proc, out, _ in workers:
        rc, err = finish(proc)
        assert rc == 0, err
        results.append(json.loads(out.read_text()))
    by = {(r["id"], r["role"]): r for res in results for r in res["flows"]}
    for f in flows:
        assert by[(f["id"], "send")]["start"] >= t0 + f["start_s"] - 0.01
    c = traffic.collect(results, dict(plan, t0=t0))
    assert c["errors"] == 0
    assert all(0.0 <= f["start"] - flows[f["id"]]["start_s"] for f in c["flows"])


def test_a_bad_go_file_is_one_clear_error(tmp_path):
    path, _ = write_plan(tmp_path, [flow(0, 0, 0, 1, free_port(H1), 1000)], t0=time.time() + 3600)
    go = tmp_path / "go.json"
    proc, out, ready = start_worker(path, 1, tmp_path, go)
    wait_ready(proc, ready)
    go.write_text(json.dumps({"t0": "soon"}))
    rc, err = finish(proc)
    assert rc == traffic.EXIT_BAD_PLAN
    assert "'t0' is not a finite number" in err and str(go) in err
    assert not out.exists()


def test_wrong_content_names_flow_and_offset(tmp_path):
    port = free_port(H1)
    n = 300_000  # the bad byte sits past the first 256 KiB buffer's worth of pattern
    path, _ = write_plan(tmp_path, [flow(7, 0, 0, 1, port, n)])
    proc, out, ready = start_worker(path, 1, tmp_path)
    wait_ready(proc, ready)
    data = bytearray(stream(7, n))
    data[200_000] ^= 0xFF
    hand_send(port, bytes(data))
    rc, _ = finish(proc)
    assert rc == 3
    res = json.loads(out.read_text())
    (rec,) = res["flows"]
    assert res["errors"] == 1 and rec["role"] == "recv" and rec["id"] == 7
    assert "flow 7" in rec["error"] and "200000" in rec["error"]
    assert rec["bytes"] == n  # it drained the whole stream


def test_another_flows_pattern_is_wrong_content(tmp_path):
    port = free_port(H1)
    path, _ = write_plan(tmp_path, [flow(1, 0, 0, 1, port, 1000)])
    proc, out, ready = start_worker(path, 1, tmp_path)
    wait_ready(proc, ready)
    hand_send(port, stream(2, 1000))
    assert finish(proc)[0] == 3
    (rec,) = json.loads(out.read_text())["flows"]
    assert "flow 1" in rec["error"] and "offset 0" in rec["error"]


@pytest.mark.parametrize("sent", [1000, 5001])
def test_wrong_byte_count_is_an_error(tmp_path, sent):
    port = free_port(H1)
    path, _ = write_plan(tmp_path, [flow(4, 0, 0, 1, port, 5000)])
    proc, out, ready = start_worker(path, 1, tmp_path)
    wait_ready(proc, ready)
    hand_send(port, stream(4, sent))
    assert finish(proc)[0] == 3
    (rec,) = json.loads(out.read_text())["flows"]
    assert rec["bytes"] == sent
    assert "flow 4" in rec["error"]
    if sent < 5000:
        assert "received 1000 bytes, expected 5000" in rec["error"]
    else:
        assert "more than the expected 5000" in rec["error"]


def test_unexpected_peer_is_an_error(tmp_path):
    port = free_port(H1)
    path, _ = write_plan(tmp_path, [flow(5, 0, 0, 1, port, 100)], hosts=(H0, H1, H2))
    proc, out, ready = start_worker(path, 1, tmp_path)
    wait_ready(proc, ready)
    hand_send(port, stream(5, 100), src=H2)  # host 2, not the flow's src host 0
    assert finish(proc)[0] == 3
    (rec,) = json.loads(out.read_text())["flows"]
    assert "unexpected peer 127.0.0.3" in rec["error"]


def test_refused_connection_is_retried_then_an_error(tmp_path):
    path, _ = write_plan(tmp_path, [flow(6, 0, 0, 1, free_port(H1), 100)])
    proc, out, ready = start_worker(path, 0, tmp_path)  # nobody runs host 1
    began = time.monotonic()
    rc, _ = finish(proc)
    assert rc == 3 and time.monotonic() - began >= traffic.CONNECT_RETRY_S
    (rec,) = json.loads(out.read_text())["flows"]
    assert rec["role"] == "send" and "flow 6" in rec["error"] and "refused" in rec["error"]


def test_deadline_and_sigterm_record_unfinished_flows(tmp_path):
    # Deadline: nobody ever connects to host 1.
    path, _ = write_plan(tmp_path, [flow(8, 0, 0, 1, free_port(H1), 100)], deadline_s=0.8)
    proc, out, ready = start_worker(path, 1, tmp_path)
    assert finish(proc)[0] == 3
    assert json.loads(out.read_text())["flows"][0]["error"] == "deadline"

    # SIGTERM: write what it has.
    sub = tmp_path / "term"
    sub.mkdir()
    path, _ = write_plan(sub, [flow(9, 0, 0, 1, free_port(H1), 100)])
    proc, out, ready = start_worker(path, 1, sub)
    wait_ready(proc, ready)
    proc.send_signal(signal.SIGTERM)
    assert finish(proc)[0] == 3
    res = json.loads(out.read_text())
    assert res["errors"] == 1 and res["flows"][0]["error"] == "terminated"


def test_host_without_flows_exits_cleanly(tmp_path):
    path, _ = write_plan(tmp_path, [], hosts=(H0,))
    proc, out, ready = start_worker(path, 0, tmp_path)
    assert finish(proc)[0] == 0
    # The worker inherits this process's scheduling (a normal one under pytest).
    sched = "other" if os.sched_getscheduler(0) == os.SCHED_OTHER else "rr"
    assert json.loads(out.read_text()) == {"host": 0, "flows": [], "errors": 0, "scheduler": sched}
    assert ready.read_text() == "ok"


GOOD = [flow(0, 0, 0, 1, 30001, 10), flow(1, 0, 1, 0, 30001, 10)]


def _bad(change):
    plan = {"t0": 1.0, "hosts": [H0, H1], "flows": json.loads(json.dumps(GOOD)), "deadline_s": 5}
    change(plan)
    return plan


@pytest.mark.parametrize(
    "change, words",
    [
        (lambda p: p.pop("hosts"), ["'hosts'"]),
        (lambda p: p.pop("t0"), ["'t0'"]),
        (lambda p: p.__setitem__("deadline_s", 0), ["'deadline_s'"]),
        (lambda p: p["hosts"].__setitem__(1, "not-an-ip"), ["'hosts[1]'"]),
        (lambda p: p["flows"][1].pop("port"), ["flow 1", "'port'"]),
        (lambda p: p["flows"][1].pop("id"), ["index 1", "'id'"]),
        (lambda p: p["flows"][1].__setitem__("dst", 2), ["flow 1", "'dst'", "out of range"]),
        (lambda p: p["flows"][0].__setitem__("src", -1), ["flow 0", "'src'", "out of range"]),
        (lambda p: p["flows"][1].__setitem__("bytes", -5), ["flow 1", "'bytes'", "negative"]),
        (lambda p: p["flows"][1].__setitem__("bytes", 1.5), ["flow 1", "'bytes'"]),
        (lambda p: p["flows"][1].__setitem__("start_s", -1), ["flow 1", "'start_s'"]),
        (lambda p: p["flows"][1].__setitem__("id", 0), ["flow 0", "duplicate 'id'"]),
        (lambda p: p["flows"][1].__setitem__("dst", 1), ["flow 1", "'port'", "flow 0"]),
    ],
)
def test_bad_plan_raises_naming_the_field(tmp_path, change, words):
    traffic.validate_plan(_bad(lambda p: None))  # the base plan is valid
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(_bad(change)))
    with pytest.raises(ValueError) as e:
        traffic.load_plan(path)
    for w in words:
        assert w in str(e.value)


@pytest.mark.parametrize(
    "change, words",
    [
        (lambda p: p["flows"][1].__setitem__("dst", 1), ["flow 1", "'port'"]),
        (lambda p: p["flows"][0].__setitem__("bytes", -1), ["flow 0", "'bytes'"]),
    ],
)
def test_bad_plan_exits_2_and_writes_nothing(tmp_path, change, words):
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(_bad(change)))
    proc, out, ready = start_worker(path, 0, tmp_path)
    rc, err = finish(proc)
    assert rc == 2
    assert all(w in err for w in words) and len(err.strip().splitlines()) == 1
    assert not out.exists() and not ready.exists()


def test_collect_hand_computed():
    t0 = 1000.0
    plan = {
        "t0": t0,
        "hosts": [H0, H1, H2],
        "deadline_s": 60,
        "flows": [
            flow(10, 1, 0, 1, 30001, 100, 0.5),
            flow(11, 1, 2, 1, 30002, 200, 0.25),
            flow(12, 2, 1, 2, 30003, 300, 1.0),
            flow(13, 3, 0, 2, 30004, 400, 2.0),
        ],
    }

    def rec(fid, role, start, end, nbytes, error=None):
        return {
            "id": fid,
            "role": role,
            "start": start,
            "end": end,
            "bytes": nbytes,
            "error": error,
        }

    results = [
        {"host": 0, "errors": 0, "flows": [rec(10, "send", 1000.6, 1000.9, 100)]},
        {
            "host": 1,
            "errors": 1,
            "flows": [
                dict(rec(10, "recv", 1000.61, 1001.5, 100), marks=[[1000.61, 0], [1001.0, 50]]),
                rec(11, "recv", 1000.3, 1002.0, 200),
                rec(12, "send", 1001.0, 1001.1, 300),
            ],
        },
        {
            "host": 2,
            "errors": 1,
            "flows": [
                rec(11, "send", 1000.26, 1000.8, 200),
                rec(12, "recv", 1001.2, 1001.4, 250, "flow 12 recv: received 250 bytes"),
                rec(13, "recv", None, None, 0, "deadline"),
            ],
        },
        # host 0's record of flow 13's send is missing
    ]
    c = traffic.collect(results, plan)
    flows = {f["id"]: f for f in c["flows"]}
    assert flows[10] == {
        "id": 10,
        "coflow": 1,
        "planned": 0.5,
        "start": pytest.approx(0.6),
        "end": pytest.approx(1.5),
        "bytes": 100,
        "error": None,
        "marks": [(pytest.approx(0.61), 0), (pytest.approx(1.0), 50)],  # relative to t0
    }
    assert flows[11]["marks"] == []
    assert flows[11]["start"] == pytest.approx(0.26) and flows[11]["end"] == pytest.approx(2.0)
    # 10 ms after its planned 0.25 s: the lateness testbed runs record
    assert flows[11]["start"] - flows[11]["planned"] == pytest.approx(0.01)
    assert flows[12]["bytes"] == 250 and flows[12]["error"] == "flow 12 recv: received 250 bytes"
    assert flows[13]["start"] is None and flows[13]["end"] is None
    assert "flow 13 send: no result from host 0" in flows[13]["error"]
    assert "deadline" in flows[13]["error"]
    assert c["errors"] == 2
    assert c["coflows"] == [
        # scheduled release min(0.5, 0.25), not the connect time 0.26; end max(1.5, 2.0)
        {"coflow": 1, "start": 0.25, "end": pytest.approx(2.0), "error": None},
        {
            "coflow": 2,
            "start": 1.0,
            "end": pytest.approx(1.4),
            "error": "flow 12 recv: received 250 bytes",
        },
        {"coflow": 3, "start": 2.0, "end": None, "error": flows[13]["error"]},
    ]
    with pytest.raises(ValueError, match="flow 10"):
        traffic.collect(results + [results[0]], plan)
