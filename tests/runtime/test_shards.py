"""Session shards (runtime/shards.py): the master's sessions in several
processes sharing one port, and the emulator's agents in several processes."""

import os
import signal
import time

import pytest
from coflowkit import _core
from coflowkit._core import CoflowkitError
from coflowkit.runtime import scale, shards


def test_each_shard_accepts_its_share_and_a_margin():
    # 40,000 sessions over 3 shards: ceil(44,000 / 3) + 64 each.
    assert shards.shard_cap(40_000, 3) == 14_667 + 64
    assert shards.shard_cap(40_000, 1) == 40_000
    assert shards.shard_cap(10, 2) == 10  # never more than the whole
    # Under a 20,000-descriptor limit (256 kept): 19,744 sessions fit in one
    # process; 40,000 do not fit in two (22,064 each) and fit in three.
    assert shards.shards_for(19_744, 20_000) == 1
    assert shards.shards_for(19_745, 20_000) == 2
    assert shards.shards_for(40_000, 20_000) == 3
    with pytest.raises(CoflowkitError, match="no room for sessions"):
        shards.shards_for(10, 300)


def test_a_coflow_ends_when_every_shard_given_its_flows_says_so():
    """SwarmGroup's merge of its shards' answers, with the shards faked: coflow
    7 has flows on shards 0 and 1, coflow 8 on shard 1 only."""
    g = shards.SwarmGroup.__new__(shards.SwarmGroup)
    g.shards, g.of, g.buf = 2, {0: 0, 1: 1}, [[], []]
    g.parts, g.done = {}, {}
    answers = {0: [[], [7]], 1: [[7, 8], []]}  # per shard, per call of finished()
    sent = []

    def ask(i, op, *args):
        sent.append((i, op))
        return answers[i].pop(0) if op == "finished" else None

    g._ask = ask
    g.start_flows(0, [(1, 1, "127.1.0.1", 1, 1e6, 0.0, 7)])
    g.start_flows(1, [(2, 1, "127.1.0.0", 1, 1e6, 0.0, 7), (3, 1, "127.1.0.0", 1, 1e6, 0.0, 8)])
    assert g.finished() == [8]  # shard 1 is done with 7, shard 0 is not
    assert g.finished() == [7]
    assert ("start", 0) not in sent and (0, "start") in sent and (1, "start") in sent
    with pytest.raises(CoflowkitError, match="host 5 is not emulated here"):
        g.start_flows(5, [])


def hub(tmp_path, n_hosts, max_agents, n_shards=2):
    pki = str(tmp_path / "tls")
    os.makedirs(pki)
    scale.make_pki(pki, n_hosts)
    h = shards.ShardedHub(n_shards, "127.0.0.1", 0, pki, n_hosts, max_agents, 10.0, 10.0,
                          1 << 20, 1.0)  # fmt: skip
    return h, pki


def swarm(h, pki, hosts):
    return _core.AgentSwarm(h.address[0], h.address[1], pki, hosts,
                            [scale.addr_of(x) for x in hosts], 0.05)  # fmt: skip


def collect(h, want, kind="hello", within=60.0):
    got = []
    end = time.monotonic() + within
    while len([e for e in got if e[0] == kind]) < want and time.monotonic() < end:
        got += h.poll(0.1)
    return got


def test_sessions_spread_over_shards_and_decisions_reach_them(tmp_path):
    """40 agents on a 2-shard hub: every HELLO reaches the master with a session
    id naming its shard, both shards got some (all 40 on one: probability
    2^-39), a decision sent to each session reaches its agent, and a shard
    killed ends exactly its sessions and is started again on the same port."""
    h, pki = hub(tmp_path, 48, 48)
    s = swarm(h, pki, list(range(40)))
    try:
        hellos = [e for e in collect(h, 40) if e[0] == "hello"]
        assert len(hellos) == 40
        assert {e[3] for e in hellos} == set(range(40))  # hosts, each once
        by_shard = {}
        for e in hellos:
            by_shard.setdefault(e[1] >> shards.SHARD_SHIFT, []).append(e[1])
        assert set(by_shard) == {0, 1}
        for e in hellos:
            assert h.send_decisions(e[1], [(1, 1, 1000.0)]) == 0
        end = time.monotonic() + 30
        while s.stats()["decisions"] < 40 and time.monotonic() < end:
            h.poll(0.05)  # flushes the buffered sends
        assert s.stats()["decisions"] >= 40
        end = time.monotonic() + 10
        while h.open_sessions != 40 and time.monotonic() < end:
            h.poll(0.05)  # each shard reports its open sessions every 0.1 s
        assert h.open_sessions == 40
        os.kill(h.procs[1].pid, signal.SIGKILL)
        closed = [e for e in collect(h, len(by_shard[1]), "closed") if e[0] == "closed"]
        assert sorted(e[1] for e in closed) == sorted(by_shard[1])
        assert all("session shard 1 stopped" in e[3] for e in closed)
        end = time.monotonic() + 60
        while h.restarts < 1 and time.monotonic() < end:
            h.poll(0.1)
        assert h.restarts == 1 and h.address[1] == h.port
        late = swarm(h, pki, [40, 41, 42, 43])  # new agents reach the hub again
        try:
            assert {e[3] for e in collect(h, 4) if e[0] == "hello"} == {40, 41, 42, 43}
        finally:
            late.stop()
    finally:
        s.stop()
        h.stop("test over", 0.5)
    assert all(p.poll() is not None for p in h.procs)


def test_the_master_wide_agent_cap_holds_across_shards(tmp_path):
    """--max-agents 10 over 2 shards, 20 agents: exactly 10 HELLOs reach the
    master; the others are refused (at HELLO, or by a full shard at accept)."""
    h, pki = hub(tmp_path, 20, 10)
    s = swarm(h, pki, list(range(20)))
    try:
        got = collect(h, 10)
        # Refused by the cap at HELLO, or by a shard at accept when more than its
        # share (10 here) came its way: once 10 are refused, all 20 are accounted.
        end = time.monotonic() + 60
        while h.metrics().get("refused_connections", 0) < 10 and time.monotonic() < end:
            got += h.poll(0.05)
        got += h.poll(0.5)  # any stray HELLO would be here by now
        assert len([e for e in got if e[0] == "hello"]) == 10
        assert h.metrics()["refused_connections"] == 10
    finally:
        s.stop()
        h.stop("test over", 0.5)


def test_shards_need_two_and_the_rust_session_layer(tmp_path):
    with pytest.raises(CoflowkitError, match="at least 2, got 1"):
        shards.ShardedHub(1, "127.0.0.1", 0, str(tmp_path), 1, 1, 1.0, 1.0, 1, 1.0)
    with pytest.raises(CoflowkitError, match="need 3 session shards, which need --io rust"):
        scale.Config(agents=30, shards=3, io="python").check()
    with pytest.raises(CoflowkitError, match="cannot listen|certificate|TLS"):
        shards.ShardedHub(2, "127.0.0.1", 0, str(tmp_path / "none"), 1, 1, 1.0, 1.0, 1, 1.0)


def test_an_emulation_with_both_sides_sharded(tmp_path):
    """`testbed emulate` with 2 shards per side: the master's sessions in two
    hub processes, the agents in two emulator processes; every agent connected,
    decisions flowed, and the master's CPU and RSS include its shards."""
    cfg = scale.Config(agents=24, flows_per_agent=2, coflows=4, interval_ms=50, rounds=30,
                       warmup=2, io="rust", shards=2)  # fmt: skip
    row = scale.run(cfg, str(tmp_path))
    assert row["shards"] == 2 and row["agents_connected_end"] == 24
    assert row["rounds"] == 30 and row["decisions_received"] > 0 and row["master_flows_end"] > 0
    # Three Python processes at least (master, two shards): each over 10 MiB.
    assert row["master_rss_mib"] > 30


def test_a_script_with_no_main_guard_can_start_shards(tmp_path):
    """Shards are fresh interpreters, not multiprocessing's spawn: a caller's
    script is not imported again in them (with spawn, this script would start
    shards from inside its shards and fail)."""
    import subprocess
    import sys

    pki = tmp_path / "tls"
    pki.mkdir()
    scale.make_pki(str(pki), 2)
    script = tmp_path / "noguard.py"
    script.write_text(
        "from coflowkit.runtime import shards\n"
        f"h = shards.ShardedHub(2, '127.0.0.1', 0, {str(pki)!r}, 2, 2, 5.0, 5.0, 4096, 1.0)\n"
        "print('port', h.address[1] > 0, len(h.pids()))\n"
        "h.stop('done', 0.2)\n"
    )
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120,
                       env=shards._child_env())  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "port True 2"


class ChattyHub:
    """A hub with events at every poll, to fill a shard's pipe to the master."""

    def __init__(self):
        self.sent = 0
        self.stopped = None
        self.open_sessions = 0

    def poll(self, timeout, max):  # noqa: A002 - AgentHub's signature
        return [("updates", [1], [2], [3])] * 1000

    def metrics(self):
        return {}

    def send_decisions(self, sid, items):
        self.sent += 1
        return 0

    def close(self, sid, why, tell):
        pass

    def stop(self, why, grace):
        self.stopped = why


def test_a_shard_blocked_sending_events_still_takes_the_masters_sends():
    """The deadlock the first 40,000-agent run hit: the master, busy in a round,
    does not read; the shard blocks sending it events; the master then sends a
    batch larger than the pipe holds. The shard's reader thread takes it anyway,
    so the master's send returns while nobody reads the events."""
    import multiprocessing
    import threading

    master, shard = multiprocessing.Pipe()
    h = ChattyHub()
    t = threading.Thread(target=shards._serve_hub, args=(shard, h, 1 << 20), daemon=True)
    t.start()
    time.sleep(0.5)  # the shard's events fill the pipe: its loop blocks in send
    ops = [("send", 1, [(f, 1, 1.0) for f in range(100)]) for _ in range(20_000)]  # ~25 MB
    sender = threading.Thread(target=master.send, args=(("ops", ops),), daemon=True)
    sender.start()
    sender.join(60)
    assert not sender.is_alive()  # delivered while the shard was blocked sending
    master.send(("stop", "test over", 0.0))
    end = time.monotonic() + 60
    while t.is_alive() and time.monotonic() < end:
        while master.poll(0.05):
            master.recv()  # the events drain; the shard applies the ops and stops
    assert not t.is_alive() and h.stopped == "test over" and h.sent == 20_000
