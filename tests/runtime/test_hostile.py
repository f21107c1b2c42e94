"""What a faulty host or an attacker can do to a master, in-process: every defect of
the hardening issue (#18) has its regression test here or in test_restarts.py.
Each test fails on the master before the fix (a crash, a hang, a wrong answer)."""

from __future__ import annotations

import logging
import os
import resource
import socket
import ssl
import subprocess
import sys
import threading
import time

import pytest
from coflowkit._core import CoflowkitError
from coflowkit.runtime import proto, tls
from coflowkit.runtime.agent import Agent
from coflowkit.runtime.http_api import ApiServer
from coflowkit.runtime.master import Limits
from coflowkit.runtime.resources import LogLimiter
from coflowkit.runtime.session import Conn, SendQueueFull

from .conftest import FakeAgent, connect, http, pki_ip, token_of, wait_for, wait_hosts

# Agents' sessions are attacked through both session layers: Python (selectors)
# and the hub (tokio, --io rust). Tests of the HTTP API take the default.
both_io = pytest.mark.parametrize("master_io", ["python", "rust"])


def alive(m) -> bool:
    """The master still runs rounds and answers its API."""
    r0 = m.metrics["rounds"]
    wait_for(lambda: m.metrics["rounds"] > r0, "a round")
    return http(m, "/api/health")[0] == 200


def raw_http(m, data: bytes, timeout=5.0) -> bytes:
    """Sends ``data`` as is and returns everything the server answers."""
    s = socket.create_connection(m.http_address, timeout=timeout)
    s.sendall(data)
    out = b""
    try:
        while chunk := s.recv(65536):
            out += chunk
    except TimeoutError:
        pass
    s.close()
    return out


# -- 1 and 11: typed registrations --------------------------------------------------


@pytest.mark.parametrize(
    ("flow", "msg"),
    [
        ({"src": -5, "dst": 1, "dst_port": 80}, "host -5 is out of range"),
        ({"src": 1e23, "dst": 1, "dst_port": 80}, "1e+23 is not a host"),
        ({"src": 10**30, "dst": 1, "dst_port": 80}, "is out of range"),
        ({"src": True, "dst": 1, "dst_port": 80}, "true is not a host"),
        ({"src": 0, "dst": 1, "dst_port": True}, "dst_port must be a TCP port, got true"),
        ({"src": 0, "dst": 1, "dst_port": 80, "size": True}, "size must be a positive number"),
        ({"src": 0, "dst": 1, "dst_port": 80, "size": -1}, "size must be a positive number"),
        ({"src": 0, "dst": 1, "dst_port": 80, "rate": 1}, "unknown key 'rate'"),
        ({"src": [0], "dst": 1, "dst_port": 80}, "a JSON array is not a host"),
    ],
)
def test_a_registration_with_a_bad_field_is_a_400_never_a_crash(master, flow, msg):
    status, body = http(master, "/api/coflows", {"id": 1, "flows": [flow]})
    assert status == 400 and msg in body["error"], body
    assert alive(master)


def test_bad_ids_and_bad_json_are_400s(master):
    for body, msg in [
        ({"id": True, "flows": [{"src": 0, "dst": 1, "dst_port": 80}]}, "id must be an integer"),
        ({"id": 2**62, "flows": [{"src": 0, "dst": 1, "dst_port": 80}]}, "id must be an integer"),
        ({"id": 1, "flows": []}, "flows must be a list of 1 to"),
        (b'{"id": 1, "id": 2, "flows": []}', "key 'id' appears twice"),
        (b'{"id": NaN, "flows": []}', "NaN is not a number JSON allows"),
        (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
        (b"\xff\xfe", "not UTF-8"),
    ]:
        status, got = http(master, "/api/coflows", body)
        assert status == 400 and msg in got["error"], (body[:20], got)
    assert alive(master)


def test_content_length_is_checked_before_anything_is_read(master):
    # -1 used to hang the handler; a huge length used to be read into memory.
    for length, code in [(b"-1", b"400"), (b"abc", b"400"), (b"99999999999", b"413")]:
        out = raw_http(
            master, b"POST /api/coflows HTTP/1.1\r\nContent-Length: " + length + b"\r\n\r\n{}"
        )
        assert out.startswith(b"HTTP/1.0 " + code), out[:60]
    out = raw_http(master, b"POST /api/coflows HTTP/1.1\r\n\r\n")
    assert out.startswith(b"HTTP/1.0 411"), out[:60]
    assert alive(master)


def test_a_registration_that_fails_inside_the_round_is_a_500_and_the_master_goes_on(
    master, monkeypatch
):
    def boom(reg):
        raise RuntimeError("a bug")

    monkeypatch.setattr(master, "register", boom)
    status, body = http(
        master, "/api/coflows", {"id": 1, "flows": [{"src": 0, "dst": 1, "dst_port": 8}]}
    )
    assert status == 500 and "internal error" in body["error"]
    monkeypatch.undo()
    assert alive(master)


# -- 2: descriptors and slow HTTP clients --------------------------------------------


@both_io
def test_running_out_of_descriptors_never_stops_the_master(start_master, pki):
    """The process's descriptors run out (its soft limit lowered under what is
    open) while a client keeps connecting; accepts fail with EMFILE. The master
    refuses what it cannot accept and, once descriptors are back, serves
    agents and the API again."""
    m = start_master(limits=Limits(max_agents=500, handshake_timeout=2.0))
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    child = subprocess.Popen(
        [sys.executable, "-c",
         "import socket, sys, time\n"
         "port, hport = int(sys.argv[1]), int(sys.argv[2]); held = []\n"
         "for i in range(300):\n"
         "    try: held.append(socket.create_connection(('127.0.0.1', port if i % 3 else hport), timeout=2))\n"
         "    except OSError: pass\n"
         "    time.sleep(0.005)\n"
         "time.sleep(60)",
         str(m.address[1]), str(m.http_address[1])])  # fmt: skip
    try:
        open_now = len(os.listdir("/proc/self/fd"))
        resource.setrlimit(resource.RLIMIT_NOFILE, (open_now + 8, hard))
        wait_for(lambda: m.metrics["accept_errors"] > 0, "an accept to fail with EMFILE")
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
        child.kill()
        child.wait()
    a = connect(m, pki, 0)
    wait_hosts(m, 1)
    assert alive(m) and not a.closed


@both_io
def test_connections_beyond_the_cap_are_refused_and_idle_ones_time_out(start_master, pki):
    m = start_master(limits=Limits(max_agents=20, handshake_timeout=0.5))
    idle = [socket.create_connection(m.address, timeout=5) for _ in range(40)]
    wait_for(lambda: m.metrics["refused_connections"] >= 20, "connections over the cap refused")
    # No TLS handshake within 0.5 s: every idle connection is closed, and an
    # agent gets in.
    wait_for(lambda: m.open_connections() == 0, "idle connections to be closed")
    a = connect(m, pki, 0)
    wait_hosts(m, 1)
    assert not a.closed
    for s in idle:
        s.close()


def test_slow_http_clients_hold_a_slot_for_a_bounded_time(start_master):
    """Slowloris: 10 connections send half a request and stop. Beyond the
    in-flight cap (4) clients get 503 at once; the stalled ones time out after
    the read timeout. A client trickling a byte at a time (each read in time)
    is closed by the reaper after twice the read timeout. Then the API answers."""
    m = start_master(limits=Limits(max_agents=20, read_timeout=2.0, http_inflight=4))
    stalled = []
    for _ in range(10):
        s = socket.create_connection(m.http_address, timeout=10)
        s.sendall(b"GET /api/health HTTP/1.1\r\nX-Slow: ")
        stalled.append(s)
    wait_for(lambda: m.httpd.busy >= 6, "503s beyond the in-flight cap")
    for s in stalled:  # each is answered 503 or closed by the server
        assert s.recv(65536)[:12] in (b"", b"HTTP/1.0 503"), "a stalled client was not closed"
        s.close()
    wait_for(lambda: not m.httpd.live, "stalled connections to be closed")
    trickle = socket.create_connection(m.http_address, timeout=10)
    trickle.sendall(b"GET /api/health HTTP/1.1\r\n")

    def drip():
        try:
            for _ in range(200):
                trickle.sendall(b"X-A: b\r\n")
                time.sleep(0.5)
        except OSError:
            pass

    threading.Thread(target=drip, daemon=True).start()
    assert trickle.recv(65536) == b"", "the reaper did not close the trickling client"
    trickle.close()
    assert http(m, "/api/health")[0] == 200


# -- 3: memory before authentication -------------------------------------------------


@both_io
def test_an_unauthenticated_frame_cannot_claim_more_than_4_kib(master, pki):
    a = FakeAgent(master.address, pki, 0)
    a.sock.sendall(((16 << 20) - 1).to_bytes(4, "little") + b"CK")
    err = a.error()
    assert err is not None and "frame length 16777215 outside 12..4096" in err
    # Under --io rust the agent may hear the ERROR before the master counts it.
    wait_for(lambda: master.metrics["rejected_messages"] >= 1, "the rejection counted")
    assert master.metrics["rejected_messages"] == 1


@both_io
def test_a_truncated_frame_is_not_held_forever(start_master, pki):
    m = start_master(limits=Limits(max_agents=20, handshake_timeout=0.5))
    a = FakeAgent(m.address, pki, 0)
    hello = a.chan.frame(proto.HELLO, proto.encode_hello(proto.Hello(0, 10, [pki_ip(0)], "x")))
    a.sock.sendall(hello[:-3])
    a.wait_closed()
    assert a.closed
    # After its HELLO an agent may leave a frame unfinished for read_timeout only.
    m2 = start_master(limits=Limits(max_agents=20, read_timeout=0.5))
    b = connect(m2, pki, 1)
    wait_hosts(m2, 1)
    rep = b.chan.frame(proto.REPORT, proto.encode_report(proto.Report(1.0)))
    b.sock.sendall(rep[:-2])
    b.wait_closed()
    assert b.closed


@both_io
def test_a_non_tls_client_is_dropped_at_the_handshake(master):
    s = socket.create_connection(master.address, timeout=5)
    s.sendall(((16 << 20) - 1).to_bytes(4, "little") + b"CK" + b"x" * 65536)
    s.settimeout(5)
    try:
        while s.recv(65536):
            pass
    except (ConnectionResetError, TimeoutError):
        pass
    s.close()
    wait_for(lambda: master.open_connections() == 0, "the session to end")
    wait_for(lambda: master.metrics["rejected_messages"] >= 1, "the rejection counted")


# -- 4: no frame from one session verifies in another -----------------------------------


def _one_shot_server(ctx: ssl.SSLContext | None, payload: bytes | None = None):
    """A server accepting one connection: TLS with ``ctx``, or ``payload`` sent raw."""
    srv = socket.create_server(("127.0.0.1", 0))

    def serve():
        c, _ = srv.accept()
        try:
            if ctx is not None:
                c = ctx.wrap_socket(c, server_side=True)
                c.sendall(b"\0" * 4)
            else:
                c.sendall(payload)
            time.sleep(1)
        except (OSError, ssl.SSLError):
            pass
        c.close()

    threading.Thread(target=serve, daemon=True).start()
    return srv


def _agent(pki, port: int) -> Agent:
    return Agent(("127.0.0.1", port), tls.host_client_context(pki, 0), 0, "lo", 1e6,
                 addrs=[pki_ip(0)], enforce=False)  # fmt: skip


def test_the_agent_talks_only_to_a_master_of_its_cluster(pki, tmp_path):
    # A server whose certificate another CA signed.
    other = tmp_path / "other"
    tls.init_ca(str(other))
    tls.issue(str(other), None, ["127.0.0.1"])
    srv = _one_shot_server(tls.master_context(str(other)))
    with pytest.raises(ssl.SSLError, match="certificate verify failed"):
        _agent(pki, srv.getsockname()[1])._connect()
    # A host of this cluster (its key stolen) posing as the master.
    srv = _one_shot_server(tls.host_server_context(pki, 5))
    with pytest.raises(CoflowkitError, match="is host 5, not the master"):
        _agent(pki, srv.getsockname()[1])._connect()


@both_io
def test_a_recorded_master_session_replayed_to_an_agent_does_not_verify(master, pki):
    """Record every byte a real master sends an agent through a proxy (the
    session's TLS handshake, then its frames), replay them to a new agent
    connection: the handshake fails, the agent applies nothing."""
    recorded = bytearray()
    proxy = socket.create_server(("127.0.0.1", 0))

    def relay():
        c, _ = proxy.accept()
        up = socket.create_connection(master.address)

        def pipe(a, b, keep):
            try:
                while data := a.recv(65536):
                    if keep:
                        recorded.extend(data)
                    b.sendall(data)
            except OSError:
                pass

        threading.Thread(target=pipe, args=(c, up, False), daemon=True).start()
        pipe(up, c, True)

    threading.Thread(target=relay, daemon=True).start()
    a = FakeAgent(proxy.getsockname(), pki, 0)
    a.hello(0)
    others = [connect(master, pki, 1)]
    wait_hosts(master, 2)
    a.report(proto.Report(1.0, [proto.NewFlow(1, 4000, pki_ip(1), 80, 0.5, 200_000)]))
    assert a.decisions()[0][1] == proto.RATE
    a.close()
    time.sleep(0.2)
    assert len(recorded) > 500
    srv = _one_shot_server(None, bytes(recorded))
    agent = _agent(pki, srv.getsockname()[1])
    with pytest.raises(ssl.SSLError):
        agent._connect()
    assert agent.decisions_applied == 0 and not agent.session
    assert others


# -- 5: a peer that stops reading ---------------------------------------------------


def test_a_send_queue_never_blocks_and_overflows_with_an_error():
    mine, theirs = socket.socketpair()
    mine.setblocking(False)
    c = Conn(mine, proto.agent_channel(), "peer", max_queue=1 << 20)
    c.open = True
    sent = 0
    with pytest.raises(SendQueueFull, match=r"queued for peer \(limit 1048576\)"):
        while True:  # the peer never reads: the kernel buffer fills, then the queue
            c.send(proto.HELLO, b"x" * 65536)
            sent += 1
            assert sent < 10_000
    assert len(c.out) <= 1 << 20
    mine.close()
    theirs.close()


@both_io
def test_an_agent_that_stops_reading_is_dropped_and_rounds_go_on(start_master, pki):
    m = start_master(limits=Limits(max_agents=20, send_queue=8 << 10))
    slow = FakeAgent(m.address, pki, 0, rcvbuf=4096)
    slow.hello(0)
    healthy = connect(m, pki, 1)
    dst = connect(m, pki, 2)
    wait_hosts(m, 3)
    # 2000 flows: one DECISIONS of 26 kB for the agent that never reads.
    slow.report(
        proto.Report(
            1.0,
            [proto.NewFlow(i, 20000 + i % 40000, pki_ip(2), 80, 0.5, 200_000) for i in range(2000)],
        )
    )
    healthy.report(proto.Report(1.0, [proto.NewFlow(1, 4000, pki_ip(2), 81, 0.5, 200_000)]))
    assert healthy.decisions()[0][0] == 1
    wait_for(lambda: m.metrics["slow_agents"] == 1, "the slow agent to be dropped")
    assert alive(m) and 0 not in m.by_host and not healthy.closed and not dst.closed


def test_the_hub_closes_a_peer_that_never_reads_within_a_grace(pki):
    """The hub's writer blocks in a TLS write once a peer that never reads has
    filled the kernel's buffers. Closing that session must still free its socket
    within the grace (about 1 s), not when the peer reads: before the fix, the
    blocked writer kept the connection open for as long as the peer lived."""
    from coflowkit._core import AgentHub

    hub = AgentHub("127.0.0.1", 0, str(pki), 3, 20, 5.0, 30.0, 256 << 10, 10.0)
    try:
        address = tuple(hub.address)
        slow = FakeAgent(address, pki, 0, rcvbuf=4096)
        slow.hello(0)
        sid = None
        for _ in range(500):
            sid = next((e[1] for e in hub.poll(0.05) if e[0] == "hello"), sid)
            if sid is not None:
                break
        assert sid is not None, "no HELLO from the agent"
        items = [(i, 0, 1e6 + i) for i in range(4000)]  # one DECISIONS of about 52 kB
        for _ in range(2000):  # until the queue (256 kB) is full: the writer is blocked
            if hub.send_decisions(sid, items) > 0:
                break
            time.sleep(0.002)
        else:
            pytest.fail("the send queue never filled")
        port = slow.sock.getsockname()[1]
        assert established(address[1], port)
        hub.close(sid, "does not keep up", False)
        wait_for(lambda: not established(address[1], port),
                 "the hub to close its end of the connection")  # fmt: skip
        wait_for(lambda: hub.open_sessions == 0, "the session to end")
    finally:
        hub.stop("test over", 1.0)


def established(local_port: int, remote_port: int) -> bool:
    """Whether this machine has an ESTABLISHED TCP socket from `local_port` to
    `remote_port` (on loopback: the server's end of a client's connection)."""
    with open("/proc/net/tcp") as f:
        rows = [line.split() for line in f.readlines()[1:]]
    return any(
        int(r[1].split(":")[1], 16) == local_port
        and int(r[2].split(":")[1], 16) == remote_port
        and r[3] == "01"
        for r in rows
    )


# -- 8: flows of a disconnected host are not enforced -----------------------------------


@both_io
def test_a_disconnected_hosts_flows_are_shown_unenforced(master, pki):
    a0 = connect(master, pki, 0)
    a1 = connect(master, pki, 1)
    wait_hosts(master, 2)
    a0.report(proto.Report(1.0, [proto.NewFlow(1, 4000, pki_ip(1), 80, 0.5, 200_000)]))
    a0.decisions()
    wait_for(lambda: [f["enforced"] for f in http(master, "/api/flows")[1]] == [True], "enforced")
    a0.close()  # the agent dies (its limits go with it: it fails open)
    wait_for(lambda: 0 not in master.by_host, "the disconnect")
    wait_for(
        lambda: [f["enforced"] for f in http(master, "/api/flows")[1]] == [False], "unenforced"
    )
    assert not a1.closed


# -- 9: one identity per host ---------------------------------------------------------


@both_io
def test_a_hello_must_match_the_certificate(master, pki):
    a = FakeAgent(master.address, pki, 1)
    a.hello(2, addrs=[pki_ip(2)])
    assert "HELLO says host 2, but the certificate is host 1" in a.error()
    b = FakeAgent(master.address, pki, 1)
    b.hello(1, addrs=[pki_ip(1), pki_ip(3)])  # claims host 3's address
    assert "address 10.0.0.4 is not in host 1's certificate" in b.error()
    wait_for(lambda: master.metrics["rejected_messages"] == 2, "two rejections")
    assert master.by_host == {} and master.ip_host == {}


@both_io
def test_a_new_session_for_a_host_closes_the_old_one(master, pki):
    old = connect(master, pki, 0)
    wait_hosts(master, 1)
    new = connect(master, pki, 0)
    assert "replaced by a new session" in old.error()
    old.wait_closed()
    wait_for(lambda: master.by_host.get(0) is not None and len(master.sessions) == 1, "one session")
    assert not new.closed


# -- 10: the API's authentication --------------------------------------------------------


def test_the_api_needs_a_token_with_the_right_scope(start_master, pki):
    tokens = tls.read_tokens(os.path.join(pki, "tokens"))
    tokens.update(tls.read_tokens(os.path.join(pki, "read-tokens")))
    m = start_master(api_tokens=tokens)
    good, reader = token_of(pki), token_of(pki, "read-tokens")
    reg = {"id": 5, "flows": [{"src": 0, "dst": 1, "dst_port": 80}]}
    assert http(m, "/api/health")[0] == 401
    assert http(m, "/api/health", token="x" * 43)[0] == 401
    assert http(m, "/api/health", token=reader)[0] == 200
    assert http(m, "/metrics", token=reader)[0] == 200
    status, body = http(m, "/api/coflows", reg, token=reader)
    assert status == 403 and "lacks the register scope" in body["error"]
    assert http(m, "/api/coflows", reg)[0] == 401
    assert http(m, "/api/coflows", reg, token=good)[0] == 201


def test_a_non_loopback_api_needs_tokens_and_speaks_tls(start_master, pki):
    with pytest.raises(CoflowkitError, match="not a loopback address: the API needs --api-tokens"):
        ApiServer(("0.0.0.0", 0), app=None)
    tokens = tls.read_tokens(os.path.join(pki, "tokens"))
    m = start_master(http=("0.0.0.0", 0), api_tokens=tokens, api_tls=tls.api_server_context(pki))
    ctx = ssl.create_default_context(cafile=os.path.join(pki, "ca.crt"))
    ctx.check_hostname = False
    status, body = http(m, "/api/health", token=token_of(pki), scheme="https", context=ctx)
    assert status == 200 and body["policy"] == "fair"


# -- 11: logs a peer cannot flood ------------------------------------------------------


def test_repeated_warnings_are_rate_limited(caplog):
    lim = LogLimiter(logging.getLogger("coflowkit.test"), burst=3, period=60)
    with caplog.at_level(logging.WARNING, logger="coflowkit.test"):
        for i in range(100):
            lim.warn("k", "rejected frame %d", i)
        lim.warn("other", "another kind")
    assert [r.getMessage() for r in caplog.records] == [
        "rejected frame 0", "rejected frame 1", "rejected frame 2", "another kind",
    ]  # fmt: skip
    lim._state["k"][0] -= 61  # a minute later: one more, with the count held back
    with caplog.at_level(logging.WARNING, logger="coflowkit.test"):
        lim.warn("k", "rejected frame %d", 100)
    assert caplog.records[-1].getMessage() == "rejected frame 100 (97 similar messages suppressed)"


@both_io
def test_a_rejected_frame_logs_one_line(master, pki, caplog):
    with caplog.at_level(logging.WARNING, logger="coflowkit.master"):
        a = connect(master, pki, 0)
        wait_hosts(master, 1)
        a.send(proto.REPORT, b"\x01\x02")
        assert "REPORT" in a.error()
        wait_for(lambda: 0 not in master.by_host, "the disconnect")
    lines = [r.getMessage() for r in caplog.records if "127.0.0.1" in r.getMessage()]
    assert len(lines) == 1 and "rejected: REPORT" in lines[0], lines
