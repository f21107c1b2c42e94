"""Decentralized Stream on a 4-host testbed whose switch has strict-priority
queues by DSCP: the queues do what a Stream switch does, and a run with no
master classes real flows, marks them, and compares with the simulation.

CI runs as root; these tests fail rather than skip when a namespace cannot be
made (as tests/runtime/test_testbed.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest
from coflowkit.runtime import testbed

TRACE = os.path.join(
    os.path.dirname(__file__), "..", "..", "..", "shared", "traces", "FB2010-1Hr-150-0.txt"
)
GBPS = 0.01  # 10 Mbit/s: easy to keep saturated on a loaded machine


@pytest.fixture(scope="module")
def bed():
    st = testbed.up(4, GBPS, switch_queues=4)
    yield st
    testbed.down()


def sw(*args: str) -> str:
    return subprocess.run(
        ["tc", "-n", testbed.SWITCH, *args], capture_output=True, text=True, check=True
    ).stdout


def test_switch_ports_have_one_strict_priority_queue_per_class(bed):
    assert bed["switch_queues"] == 4
    for dev in ("p2", "ifb2"):
        out = sw("class", "show", "dev", dev)
        # The port's rate, then queues 0..3 as HTB leaves of prio 0..3 (minors 0xa..0xd).
        assert "class htb 1:1 root rate 10Mbit ceil 10Mbit" in out, out
        for q in range(4):
            assert f"class htb 1:{10 + q:x} parent 1:1 leaf {10 + q:x}: prio {q} " in out, out
        assert "default 0xa" in sw("qdisc", "show", "dev", dev) or "default a" in sw(
            "qdisc", "show", "dev", dev
        )
        # DSCP 1..7 are filtered to queues 1, 2, 3, 3, 3, 3, 3.
        filters = sw("filter", "show", "dev", dev)
        assert filters.count("flowid 1:d") == 5 and filters.count("flowid 1:b") == 1, filters


def _sender(host: int, port: int, tos: int, seconds: float) -> subprocess.Popen:
    code = (
        "import socket,time\n"
        f"c=socket.socket(); c.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, {tos})\n"
        f"c.connect(('{testbed.host_ip(2)}', {port})); e=time.time()+{seconds}\n"
        "while time.time()<e: c.sendall(b'x'*16384)\n"
    )
    return subprocess.Popen(
        ["ip", "netns", "exec", testbed.host_ns(host), sys.executable, "-c", code]
    )


def test_a_marked_class_waits_for_the_higher_one_at_the_switch(bed):
    """Two senders into host 2 for 4 s: DSCP 0 from host 0, DSCP 1 from host 1.
    Strict priority at host 2's downlink gives the DSCP-0 flow nearly all of it;
    plain FIFO would split it about evenly."""
    sink = (
        "import socket,threading,sys,json\n"
        "s=socket.create_server(('0.0.0.0', 7990)); got={}\n"
        "def rd(c,k):\n"
        "    n=0\n"
        "    while (d:=c.recv(1<<16)): n+=len(d)\n"
        "    got[k]=n\n"
        "ts=[]\n"
        "for _ in range(2):\n"
        "    c,a=s.accept(); t=threading.Thread(target=rd,args=(c,a[0])); t.start(); ts.append(t)\n"
        "[t.join() for t in ts]; print(json.dumps(got))\n"
    )
    rx = subprocess.Popen(
        ["ip", "netns", "exec", testbed.host_ns(2), sys.executable, "-c", sink],
        stdout=subprocess.PIPE,
        text=True,
    )
    time.sleep(0.5)
    senders = [_sender(0, 7990, 0, 4), _sender(1, 7990, 1 << 2, 4)]
    for p in senders:
        assert p.wait(timeout=60) == 0
    import json

    got = json.loads(rx.communicate(timeout=60)[0])
    high, low = got[testbed.host_ip(0)], got[testbed.host_ip(1)]
    assert high > 3 * low, got


def test_a_decentralized_run_classes_marks_and_compares(bed, tmp_path):
    out = str(tmp_path / "run")
    s = testbed.run(
        TRACE, "stream", {"first_threshold_mb": "0.1", "queues": "4"}, out, hosts=4, gbps=GBPS,
        coflows=6, bytes_scale=0.001, time_scale=0.05, decentralized=True, switch_queues=4,
        traffic_priority="control",
    )  # fmt: skip
    # Every flow's bytes were checked by its receiver (a failure raises).
    assert s["decentralized"] == "stream" and s["coflows"] >= 3
    # The traffic workers ran at the agents' real-time priority, as asked.
    assert s["traffic_priority"] == "control" and s["traffic_schedulers"] == ["rr"]
    agents = s["agents"]
    assert len(agents) == 4
    assert sum(a["sent"]["classes"] for a in agents) > 0
    assert sum(a["received"]["classes"] for a in agents) > 0
    assert all(a["refused_records"] == 0 and a["dropped_peers"] == 0 for a in agents)
    # τ_0 = 0.1 MiB: a 300 KB flow alone crosses T* = 0.2 MiB, so some flow was
    # demoted, marked, and its packets went through a lower queue of the switch.
    assert max(a["max_class"] for a in agents) >= 1
    lower = 0
    for i in range(4):
        for line in sw("-s", "class", "show", "dev", f"p{i}").split("class htb ")[1:]:
            if line.startswith(("1:b ", "1:c ", "1:d ")):
                lower += int(line.split(" Sent ")[1].split()[0])
    assert lower > 100_000, lower
    # Agents removed their HTB trees and DSCP tables on exit.
    for i in range(4):
        ns = testbed.host_ns(i)
        q = subprocess.run(
            ["tc", "-n", ns, "qdisc", "show", "dev", "eth0"], capture_output=True, text=True
        )
        assert "htb" not in q.stdout
        t = subprocess.run(
            ["ip", "netns", "exec", ns, "nft", "list", "tables"], capture_output=True, text=True
        )
        assert "coflowkit_dscp" not in t.stdout
