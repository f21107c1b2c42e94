"""tc command generation against hand-written invocations, and the same lines
accepted by the kernel in a namespace of the test's own."""

import subprocess
import uuid

import pytest
from coflowkit._core import CoflowkitError
from coflowkit.runtime import proto
from coflowkit.runtime.tc import TcBatch, TcPlan

M = {7: ("10.0.0.1", 40000, "10.0.0.2", 5001), 8: ("10.0.0.1", 40001, "10.0.0.3", 5002)}


def plan():
    # 1448 payload bytes per 1514-byte frame; a link of 12.5e6 payload B/s is
    # 12.5e6 * 8 * 1514 / 1448 = 104,558,011 bit/s on the wire.
    return TcPlan("eth0", 12.5e6, min_fraction=0.01)


def test_setup_and_teardown():
    p = plan()
    assert p.setup() == [
        "qdisc add dev eth0 root handle 1: htb",
        "class add dev eth0 parent 1: classid 1:1 htb rate 104558011bit ceil 104558011bit quantum 30280",
    ]
    assert p.teardown() == ["qdisc del dev eth0 root"]


def test_add_change_remove_are_incremental():
    p = plan()
    # 1e6 B/s goodput = 8e6 * 1514/1448 = 8,364,641 bit/s.
    lines = p.apply([(7, proto.RATE, 1e6)], M)
    assert lines == [
        "class add dev eth0 parent 1:1 classid 1:2 htb rate 8364641bit ceil 8364641bit quantum 30280",
        "filter add dev eth0 parent 1: protocol ip prio 1 handle 800::2 u32 match ip src 10.0.0.1/32 "
        "match ip dst 10.0.0.2/32 match ip sport 40000 0xffff match ip dport 5001 0xffff flowid 1:2",
    ]
    # Same decision again: nothing. New rate: one class change, no filter work.
    assert p.apply([(7, proto.RATE, 1e6)], M) == []
    assert p.apply([(7, proto.RATE, 2e6)], M) == [
        "class change dev eth0 parent 1:1 classid 1:2 htb rate 16729282bit ceil 16729282bit quantum 30280"
    ]
    # A paused flow keeps the floor: 1% of the link = 1,045,580 bit/s.
    assert p.apply([(7, proto.RATE, 0.0)], M) == [
        "class change dev eth0 parent 1:1 classid 1:2 htb rate 1045580bit ceil 1045580bit quantum 30280"
    ]
    # Released from the floor, by default: one class change (HTB keeps the
    # paused class's token debt, up to one frame's time at the floor rate).
    assert p.release == "change"
    assert p.apply([(7, proto.RATE, 2e6)], M) == [
        "class change dev eth0 parent 1:1 classid 1:2 htb rate 16729282bit ceil 16729282bit quantum 30280"
    ]
    p.apply([(7, proto.RATE, 0.0)], M)
    # With `agent --release rebuild` the class is built anew (full tokens), in
    # the same slot, its filter removed first and added last.
    p.release = "rebuild"
    assert p.apply([(7, proto.RATE, 2e6)], M) == [
        "filter del dev eth0 parent 1: protocol ip prio 1 handle 800::2 u32",
        "class del dev eth0 classid 1:2",
        "class add dev eth0 parent 1:1 classid 1:2 htb rate 16729282bit ceil 16729282bit quantum 30280",
        "filter add dev eth0 parent 1: protocol ip prio 1 handle 800::2 u32 match ip src 10.0.0.1/32 "
        "match ip dst 10.0.0.2/32 match ip sport 40000 0xffff match ip dport 5001 0xffff flowid 1:2",
    ]
    # Paused again; a rise that stays at the floor is a change, as is any
    # other rate change.
    p.apply([(7, proto.RATE, 0.0)], M)
    assert p.apply([(7, proto.RATE, 1.0)], M) == [
        "class change dev eth0 parent 1:1 classid 1:2 htb rate 1045580bit ceil 1045580bit quantum 30280"
    ]
    p.release = "change"
    assert p.apply([(7, proto.RATE, 2e6)], M) == [
        "class change dev eth0 parent 1:1 classid 1:2 htb rate 16729282bit ceil 16729282bit quantum 30280"
    ]
    assert p.releases == {"change": 2, "rebuild": 1}
    p.apply([(7, proto.RATE, 0.0)], M)
    # A class decision: strict priority by HTB prio (capped at 7), borrowing up to the link.
    lines = p.apply([(8, proto.CLASS, 9.0)], M)
    assert lines[0] == (
        "class add dev eth0 parent 1:1 classid 1:3 htb rate 1045580bit ceil 104558011bit quantum 30280 prio 7"
    )
    assert "handle 800::3" in lines[1] and "flowid 1:3" in lines[1]
    # UNLIMITED removes: filter first, then class; the slot is reused.
    assert p.apply([(7, proto.UNLIMITED, 0.0)], M) == [
        "filter del dev eth0 parent 1: protocol ip prio 1 handle 800::2 u32",
        "class del dev eth0 classid 1:2",
    ]
    assert p.forget(8) == [
        "filter del dev eth0 parent 1: protocol ip prio 1 handle 800::3 u32",
        "class del dev eth0 classid 1:3",
    ]
    assert p.forget(8) == []
    assert p.apply([(8, proto.RATE, 1e6)], M)[0].startswith(
        "class add dev eth0 parent 1:1 classid 1:3 "
    )
    # Unknown flows (not observed here) are ignored.
    assert p.apply([(99, proto.RATE, 1e6)], M) == []


def test_move_gives_a_released_flow_a_new_class_and_drains_the_old_one():
    p = plan()
    p.release = "move"
    # The floor is 1% of the link, 1,045,580 bit/s: one 1514-byte frame is
    # 11.58 ms, and an old class is deleted two frames' time after the move.
    assert p.drain_s == pytest.approx(2 * 1514 * 8 / 1045580)
    p.apply([(7, proto.RATE, 0.0), (8, proto.RATE, 1e6)], M, now=10.0)  # slots 2 and 3
    # Released at t = 10: a new class in slot 4 with its filter, then the old
    # filter deleted, and the old class changed to the same rate to drain.
    assert p.apply([(7, proto.RATE, 2e6)], M, now=10.0) == [
        "class add dev eth0 parent 1:1 classid 1:4 htb rate 16729282bit ceil 16729282bit quantum 30280",
        "filter add dev eth0 parent 1: protocol ip prio 1 handle 800::4 u32 match ip src 10.0.0.1/32 "
        "match ip dst 10.0.0.2/32 match ip sport 40000 0xffff match ip dport 5001 0xffff flowid 1:4",
        "filter del dev eth0 parent 1: protocol ip prio 1 handle 800::2 u32",
        "class change dev eth0 parent 1:1 classid 1:2 htb rate 16729282bit ceil 16729282bit quantum 30280",
    ]
    assert p.installed[7].slot == 4 and list(p.draining) == [(10.0 + p.drain_s, 2)]
    # A rise that is not a release (flow 8 was never paused) is a change.
    assert p.apply([(8, proto.RATE, 2e6)], M, now=10.0) == [
        "class change dev eth0 parent 1:1 classid 1:3 htb rate 16729282bit ceil 16729282bit quantum 30280"
    ]
    # Before its time the old class stays, and slot 2 is not given out: a new
    # flow takes slot 5.
    assert p.reap(10.0 + p.drain_s / 2) == []
    m9 = {9: ("10.0.0.1", 40002, "10.0.0.4", 5003)}
    assert "classid 1:5 " in p.apply([(9, proto.RATE, 0.0)], m9, now=10.01)[0]
    # Flow 7 paused and released again before slot 2 is reaped: a third class.
    p.apply([(7, proto.RATE, 0.0)], M, now=10.01)
    assert "classid 1:6 " in p.apply([(7, proto.RATE, 1e6)], M, now=10.02)[0]
    # Reaped in the order they were left: slot 2 at 10 + drain_s, slot 4 later.
    assert p.reap(10.0 + p.drain_s) == ["class del dev eth0 classid 1:2"]
    assert p.reap(10.02 + p.drain_s) == ["class del dev eth0 classid 1:4"]
    assert p.reap(100.0) == [] and not p.draining
    assert p.releases == {"move": 2}
    # The reaped slots are free again (the last freed is given out first).
    m10 = {
        10: ("10.0.0.1", 40003, "10.0.0.4", 5004),
        11: ("10.0.0.1", 40004, "10.0.0.4", 5005),
    }
    lines = p.apply([(10, proto.RATE, 1e6), (11, proto.RATE, 1e6)], m10)
    assert "classid 1:4 " in lines[0] and "classid 1:2 " in lines[2]


def test_move_changes_in_place_when_no_slot_is_free():
    p = plan()
    p.release = "move"
    many = {i: ("10.0.0.1", 1000 + i, "10.0.0.2", 80) for i in range(0xFFE)}
    p.apply([(i, proto.RATE, 0.0) for i in range(0xFFE)], many)  # every slot 2..0xfff
    assert p.apply([(0, proto.RATE, 2e6)], many, now=1.0) == [
        "class change dev eth0 parent 1:1 classid 1:2 htb rate 16729282bit ceil 16729282bit quantum 30280"
    ]
    assert not p.draining and p.releases == {"change": 1}


def test_slot_numbers_are_hex_in_tc_syntax():
    p = plan()
    matches = {i: ("10.0.0.1", 1000 + i, "10.0.0.2", 80) for i in range(20)}
    lines = p.apply([(i, proto.RATE, 1e6) for i in range(20)], matches)
    # The 15th flow gets slot 16 = 0x10.
    assert "classid 1:10 " in lines[2 * 14] and "handle 800::10 " in lines[2 * 14 + 1]


def test_bad_parameters():
    with pytest.raises(CoflowkitError, match="link rate must be positive"):
        TcPlan("eth0", 0)
    with pytest.raises(CoflowkitError, match="overhead must be >= 1"):
        TcPlan("eth0", 1e6, overhead=0.5)


def test_the_kernel_accepts_the_generated_lines():
    """Runs a plan's lines through `tc -batch` in a namespace created here (CI runs
    as root: failing to create it is a failure, not a skip)."""
    ns = f"cfktc-{uuid.uuid4().hex[:6]}"
    subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        subprocess.run(
            ["ip", "-n", ns, "link", "add", "eth0", "type", "veth", "peer", "name", "peer0"],
            check=True,
        )
        p = plan()
        tc = TcBatch(["ip", "netns", "exec", ns])
        tc.run(p.setup())
        tc.run(p.apply([(7, proto.RATE, 1e6), (8, proto.CLASS, 2.0)], M))
        tc.run(p.apply([(7, proto.RATE, 0.0)], M))
        p.release = "rebuild"
        tc.run(p.apply([(7, proto.RATE, 3e6)], M))  # released: built anew
        tc.run(p.forget(8))
        # Moved: the new class (1:3) and its filter, the old filter deleted and
        # the old class (1:2) kept until reaped.
        p.release = "move"
        tc.run(p.apply([(7, proto.RATE, 0.0)], M, now=5.0))
        tc.run(p.apply([(7, proto.RATE, 3e6)], M, now=5.0))
        tc.close()  # returns once tc has run every line
        assert tc.take_errors() == []
        moved = subprocess.run(
            ["ip", "netns", "exec", ns, "tc", "-batch", "-"],
            input="class show dev eth0\nfilter show dev eth0\n",
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        assert "class htb 1:2 " in moved and "class htb 1:3 " in moved
        assert "flowid 1:3" in moved and "flowid 1:2" not in moved
        tc = TcBatch(["ip", "netns", "exec", ns])
        tc.run(p.reap(6.0))
        tc.close()
        assert tc.take_errors() == []
        classes = subprocess.run(
            ["tc", "-n", ns, "class", "show", "dev", "eth0"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        # 3e6 B/s goodput -> 25,093,923 bit/s, which tc prints rounded.
        assert "class htb 1:3 parent 1:1 " in classes and "rate 25093Kbit ceil 25093Kbit" in classes
        assert "1:2 " not in classes
        filters = subprocess.run(
            ["tc", "-n", ns, "filter", "show", "dev", "eth0"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        assert "flowid 1:3" in filters and "match 0a000001/ffffffff at 12" in filters
        # A line the kernel refuses is reported with the command that failed.
        tc2 = TcBatch(["ip", "netns", "exec", ns])
        tc2.run(["class del dev eth0 classid 1:99"])
        tc2.close()
        errs = tc2.take_errors()
        assert len(errs) == 1 and "class del dev eth0 classid 1:99" in errs[0]
    finally:
        subprocess.run(["ip", "netns", "del", ns])


def test_the_paused_floor_is_checked_where_it_is_given():
    from coflowkit.runtime import tc
    from coflowkit.runtime.agent import Agent
    from coflowkit.runtime.master import Master

    assert tc.check_paused_floor(0.005) == 0.005 and tc.check_paused_floor(0.05) == 0.05
    # A floor of 1% of a 12.5e6 B/s link: a paused flow's class at 1,045,580 bit/s.
    assert (
        "rate 1045580bit"
        in TcPlan("eth0", 12.5e6, min_fraction=0.01).apply([(7, proto.RATE, 0.0)], M)[0]
    )
    for bad in (0.0, -0.01, 0.06):
        with pytest.raises(
            CoflowkitError, match=rf"--paused-floor must be in \(0, 0\.05\], got {bad}"
        ):
            tc.check_paused_floor(bad)
    # Refused before anything is opened (no TLS context, no socket is needed).
    with pytest.raises(CoflowkitError, match=r"agent: --paused-floor must be in \(0, 0\.05\]"):
        Agent(("127.0.0.1", 1), None, 0, "eth0", 1e6, paused_floor=0.5)
    with pytest.raises(CoflowkitError, match=r"master: --paused-floor must be in \(0, 0\.05\]"):
        Master("fair", {}, 2, 1e6, None, http=None, paused_floor=0.0)
