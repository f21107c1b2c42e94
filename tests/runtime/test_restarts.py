"""Restarts and crashes: a master process killed and started again keeps its
registrations; an agent process that restarts (new boot id, flow ids from 1
again) does not inherit its predecessor's flows; a master under a small
descriptor limit survives more connections than it may hold."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time

import pytest
from coflowkit.runtime import proto
from coflowkit.runtime.state import Store

from .conftest import TIMEOUT_S, FakeAgent, connect, http, pki_ip, wait_for, wait_hosts


class MasterProcess:
    """``coflowkit master`` as a child process (to be killed like a real one)."""

    def __init__(self, pki, tmp_path, *extra, policy="varys", state=True, prefix=()):
        self.pki = pki
        self.log = open(tmp_path / "master.log", "a")
        self.agent_port = _free_port()
        self.http_port = _free_port()
        self.http_address = ("127.0.0.1", self.http_port)
        self.address = ("127.0.0.1", self.agent_port)
        argv = [*prefix, sys.executable, "-m", "coflowkit", "master", "--policy", policy, "--hosts", "3",
                "--gbps", "0.08", "--goodput", "1", "--listen", f"127.0.0.1:{self.agent_port}",
                "--http", f"127.0.0.1:{self.http_port}", "--tls-dir", pki, "--interval-ms", "10",
                "--state", str(tmp_path / "master.db") if state else "none", *extra]  # fmt: skip
        from coflowkit.runtime.testbed import child_env

        self.proc = subprocess.Popen(
            argv, env=child_env(), stdout=self.log, stderr=subprocess.STDOUT
        )
        wait_for(self._up, "the master to answer", timeout=30)

    def _up(self) -> bool:
        assert self.proc.poll() is None, f"the master exited with {self.proc.returncode}"
        try:
            return http(self, "/api/health")[0] == 200
        except OSError:
            return False

    def kill(self, sig=signal.SIGKILL) -> None:
        self.proc.send_signal(sig)
        self.proc.wait(timeout=TIMEOUT_S)
        self.log.close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# The registration of the restart tests: coflow 5 (1 MB) host 0 -> host 1 and
# coflow 6 (8 MB) host 0 -> host 2, both out of host 0's 10 MB/s uplink. Varys
# serves coflow 5 at the whole link and pauses coflow 6; as unregistered flows
# they would share it 50/50.
REGS = [
    {"id": 5, "flows": [{"src": 0, "dst": 1, "dst_port": 7001, "size": 1e6}]},
    {"id": 6, "flows": [{"src": 0, "dst": 2, "dst_port": 7002, "size": 8e6}]},
]
FLOWS = [
    proto.NewFlow(1, 41001, pki_ip(1), 7001, 0.5, 200_000),
    proto.NewFlow(2, 41002, pki_ip(2), 7002, 0.5, 300_000),
]


def _varys_rates(a: FakeAgent) -> dict[int, float]:
    got: dict[int, float] = {}
    while set(got) != {1, 2}:
        got.update({fid: v for fid, _, v in a.decisions()})
    return got


def test_a_killed_master_restarts_with_its_registrations(pki, tmp_path):
    m = MasterProcess(pki, tmp_path)
    try:
        for r in REGS:
            assert http(m, "/api/coflows", r)[0] == 201
        agents = [connect(m, pki, h) for h in range(3)]
        agents[0].report(proto.Report(1.0, FLOWS))
        assert _varys_rates(agents[0]) == {1: pytest.approx(10e6 * 0.995), 2: 0.0}
        m.kill()  # SIGKILL: nothing is flushed on the way out
        for a in agents:
            a.wait_closed()
        m = MasterProcess(pki, tmp_path)
        # The agents reconnect (same processes: same boot ids) and report every
        # flow they track as new; the registrations are back in the first round.
        agents = [connect(m, pki, h) for h in range(3)]
        agents[0].report(proto.Report(2.0, [proto.NewFlow(f.fid, f.sport, f.dst, f.dport, f.first_seen, 400_000)
                                            for f in FLOWS]))  # fmt: skip
        assert _varys_rates(agents[0]) == {1: pytest.approx(10e6 * 0.995), 2: 0.0}
        status, coflows = http(m, "/api/coflows")
        by_id = {c["id"]: c for c in coflows}
        assert by_id[5]["registered"] and by_id[5]["bytes_sent"] == 400_000
        assert by_id[5]["arrival_s"] < 0  # it arrived before this master process started
        # Registering coflow 5 again is refused: the registry is the same.
        status, body = http(m, "/api/coflows", REGS[0])
        assert status == 400 and "already registered" in body["error"]
        # Coflow 5 completes: its rows leave the state file.
        agents[0].report(proto.Report(3.0, gone=[(1, 1_000_000)]))
        wait_for(
            lambda: len(Store(str(tmp_path / "master.db")).load()) == 1, "coflow 5 to be dropped"
        )
    finally:
        m.kill(signal.SIGTERM)


def test_a_finished_flow_of_a_registration_stays_finished_across_a_restart(pki, tmp_path):
    """Coflow 7 has two flows on the same (hosts, port): the first ends, the
    master dies, and the agent's next connection on that port takes the second
    slot, not the first one again."""
    m = MasterProcess(pki, tmp_path, policy="fair")
    try:
        reg = {"id": 7, "flows": [{"src": 0, "dst": 1, "dst_port": 7100}] * 2}
        assert http(m, "/api/coflows", reg)[0] == 201
        agents = [connect(m, pki, h) for h in range(2)]
        agents[0].report(
            proto.Report(1.0, [proto.NewFlow(1, 42001, pki_ip(1), 7100, 0.5, 150_000)])
        )
        agents[0].decisions()
        agents[0].report(proto.Report(1.5, gone=[(1, 500_000)]))
        wait_for(
            lambda: Store(str(tmp_path / "master.db")).load()[0].bindings[0].finished,
            "the end on disk",
        )
        m.kill()
        m = MasterProcess(pki, tmp_path, policy="fair")
        agents = [connect(m, pki, h) for h in range(2)]
        agents[0].report(
            proto.Report(2.0, [proto.NewFlow(2, 42002, pki_ip(1), 7100, 1.9, 150_000)])
        )
        agents[0].decisions()
        status, coflows = http(m, "/api/coflows")
        (c,) = [c for c in coflows if c["id"] == 7]
        assert c["bytes_sent"] == 650_000 and c["finish_s"] is None
        agents[0].report(proto.Report(2.5, gone=[(2, 500_000)]))
        wait_for(lambda: [c["finish_s"] is not None for c in http(m, "/api/coflows")[1] if c["id"] == 7] == [True],
                 "coflow 7 to complete")  # fmt: skip
    finally:
        m.kill(signal.SIGTERM)


def test_a_restarted_agent_does_not_inherit_its_predecessors_flows(master, pki):
    """The old agent process reported flow 1 (36 MB so far); a new process
    (another boot id) numbers its flows from 1 again. The old flow 1 ends with
    the bytes it had, and the new flow 1 is a flow of its own."""
    a = connect(master, pki, 0, boot=b"A" * 16)
    b = connect(master, pki, 1)
    wait_hosts(master, 2)
    a.report(proto.Report(1.0, [proto.NewFlow(1, 40000, pki_ip(1), 9000, 0.5, 36_000_000)]))
    a.decisions()
    a.close()
    wait_for(lambda: 0 not in master.by_host, "the disconnect")
    a2 = connect(master, pki, 0, boot=b"B" * 16)
    a2.report(proto.Report(2.0, [proto.NewFlow(1, 40001, pki_ip(1), 9001, 1.5, 200_000)]))
    a2.decisions()
    status, coflows = http(master, "/api/coflows")
    got = sorted((c["bytes_sent"], c["finish_s"] is not None) for c in coflows)
    assert got == [(200_000, False), (36_000_000, True)]
    assert master.metrics["lost_flows"] == 1
    # A reconnection of the same process keeps its flows.
    a2.close()
    wait_for(lambda: 0 not in master.by_host, "the disconnect")
    a3 = connect(master, pki, 0, boot=b"B" * 16)
    a3.report(proto.Report(3.0, [proto.NewFlow(1, 40001, pki_ip(1), 9001, 1.5, 300_000)]))
    # The master re-sends the host's decisions when it reconnects (its agent
    # failed open, so nothing counts as pushed), so the next DECISIONS frame may
    # come before this report is read: wait for the bytes.
    wait_for(
        lambda: (
            sorted(c["bytes_sent"] for c in http(master, "/api/coflows")[1])
            == [300_000, 36_000_000]
        ),
        "the reconnected agent's bytes",
    )
    assert master.metrics["lost_flows"] == 1 and not b.closed


def test_a_lost_hosts_flows_end_after_lost_after(start_master, pki):
    from coflowkit.runtime.master import Limits

    m = start_master(limits=Limits(max_agents=20, lost_after=0.3))
    a = connect(m, pki, 0)
    b = connect(m, pki, 1)
    wait_hosts(m, 2)
    a.report(proto.Report(1.0, [proto.NewFlow(1, 40000, pki_ip(1), 9000, 0.5, 500_000)]))
    a.decisions()
    a.close()
    wait_for(lambda: m.metrics["lost_flows"] == 1, "the lost host's flow to end")
    assert [c["finish_s"] is not None for c in http(m, "/api/coflows")[1]] == [True]
    assert not b.closed


def test_a_master_under_ulimit_512_survives_600_connections(pki, tmp_path):
    """The descriptor limit allows 512: the master's agent cap comes out at
    384 (512 minus HTTP and reserve). 600 idle connections: the extras are
    refused, the idle ones are dropped after the handshake timeout, and then an
    agent connects."""
    m = MasterProcess(pki, tmp_path, "--handshake-timeout", "1", policy="fair", state=False,
                      prefix=("prlimit", "--nofile=512:512"))  # fmt: skip
    idle = []
    try:
        for _ in range(600):
            try:
                idle.append(socket.create_connection(m.address, timeout=5))
            except OSError:
                pass
        assert m.proc.poll() is None

        def refused() -> float:
            text = http(m, "/metrics")[1]
            return float(re.search(r"^coflowkit_refused_connections_total (\S+)$", text, re.M)[1])

        wait_for(lambda: refused() >= 600 - 384, "the connections over the cap to be refused")
        for s in idle:
            s.close()
        a = connect(m, pki, 0)
        wait_for(lambda: http(m, "/api/health")[1]["agents"] == 1, "the agent")
        assert m.proc.poll() is None and not a.closed
        log = open(tmp_path / "master.log").read()
        assert "at most 384 agents at once" in log
    finally:
        for s in idle:
            s.close()
        m.kill(signal.SIGTERM)


def test_the_master_stops_promptly_on_sigterm_with_a_peer_that_does_not_read(pki, tmp_path):
    m = MasterProcess(pki, tmp_path, policy="fair", state=False)
    stuck = FakeAgent(m.address, pki, 0, rcvbuf=4096)
    stuck.hello(0)
    others = [connect(m, pki, h) for h in (1, 2)]
    stuck.report(
        proto.Report(
            1.0,
            [proto.NewFlow(i, 20000 + i, pki_ip(1 + i % 2), 80, 0.5, 200_000) for i in range(3000)],
        )
    )
    time.sleep(0.5)
    m.proc.send_signal(signal.SIGTERM)
    m.proc.wait(timeout=TIMEOUT_S)  # it used to ignore SIGTERM while blocked in sendall
    assert m.proc.returncode == 0
    m.log.close()
    assert others and os.path.exists(tmp_path / "master.log")


def test_the_state_file_keeps_stages_priorities_and_the_dag(tmp_path):
    """What a registration says beyond its flows survives a restart; a file
    written before stages were stored (4-element rows) reads as stage 0."""
    path = str(tmp_path / "s.db")
    st = Store(path)
    info = {"weight": 2.0, "parents": [[1, 2]], "report": [[0, 1.0], [5, 0.5]]}
    st.add_coflow(7, [(0, 1, 80, 1e6, 1, 3), (0, 2, 81, None, 2, 0)], 100.0, info)
    st.add_coflow(8, [(1, 2, 82, None, 0, 0)], 101.0)
    st.db.execute(
        "INSERT INTO coflows(id, seq, registered_wall, arrival_wall, flows) VALUES (9, 9, 1, NULL, ?)",
        ('[[2, 0, 83, null]]',),
    )  # fmt: skip
    st.close()
    got = {c.id: c for c in Store(path).load()}
    assert got[7].flows == [(0, 1, 80, 1e6, 1, 3), (0, 2, 81, None, 2, 0)]
    assert got[7].info == info and got[8].info == {}
    assert got[9].flows == [(2, 0, 83, None, 0, 0)]
