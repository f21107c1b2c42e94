"""Decentralized Stream (issue 26, item 3): the receiver's eq. (5), relays and
child reports between hosts (hand-computed classes), and two real agents
exchanging a class over their mutual-TLS session on loopback.

Every class below is computed by hand from eq. (5) of the Stream paper, with
``queues=4`` (K), ``first_threshold_mb=1`` (τ_0 = 1 MiB), E = 10, α = β = 1,
one flow per unit (n = 1) and none finished: a unit in class 0 moves to class 1
when T = β·S + X reaches T* = (1 + √(1 + 3))/1.5 = 2 MiB, and to class 2 at
T* = 10 + √120 = 20.95 MiB (docs/policies/stream.md, Worked example).
"""

from __future__ import annotations

import json
import socket
import threading
import time
import urllib.request

import pytest
from coflowkit._core import CoflowkitError, StreamRule, encode_classes
from coflowkit.runtime import proto, tls
from coflowkit.runtime.decentral import CHILD, RELAY, StreamNode
from coflowkit.runtime.registration import parse
from coflowkit.runtime.sockdiag import TCP_CLOSE_WAIT, TCP_ESTABLISHED, TCP_SYN_RECV, TcpConn

MIB = 1 << 20
PARAMS = {"queues": 4, "first_threshold_mb": 1}
S, R1, R2 = "10.0.0.1", "10.0.0.2", "10.0.0.3"


def reg(cid, flows, parents=()):
    body = {
        "id": cid,
        "flows": [{"src": s, "dst": d, "dst_port": p, "stage": st} for s, d, p, st in flows],
    }
    if parents:
        body["parents"] = [list(p) for p in parents]
    return parse(body, 1 << 16)


def rx(me, port, peer, peer_port, received, state=TCP_ESTABLISHED):
    """A receiving socket of host ``me`` as sock_diag shows it."""
    return TcpConn(me, port, peer, peer_port, state, 0, received, 0)


def tx(me, port, peer, peer_port, state=TCP_ESTABLISHED):
    return TcpConn(me, port, peer, peer_port, state, 1000, 0, 0)


def test_the_rule_settles_class_by_class_as_the_simulator_crosses_them():
    r = StreamRule({k: str(v) for k, v in PARAMS.items()})
    assert r.queues == 4
    # 3 MiB in one round: (5) in τ_0 alone says class 2 (ratio (1 + 1/3)/3 = 0.44,
    # 4 - ⌈1.78⌉ = 2), but the simulator demotes at T* = 2 MiB into class 1, whose
    # τ_1 = 10 keeps it there until 20.95 MiB.
    assert r.equation_five(0, 3 * MIB, 0, 1, 0, 1) == 2
    assert r.classify(0, 3 * MIB, 0, 1, 0, 1) == 1
    assert r.classify(0, 1.99 * MIB, 0, 1, 0, 1) == 0
    assert r.classify(0, 2.0 * MIB, 0, 1, 0, 1) == 1
    assert r.classify(0, 20.9 * MIB, 0, 1, 0, 1) == 1
    assert r.classify(0, 21 * MIB, 0, 1, 0, 1) == 2
    assert r.classify(3, 0, 0, 1, 0, 1) == 3  # never moves up
    with pytest.raises(CoflowkitError, match="finite"):
        r.classify(0, float("nan"), 0, 1, 0, 1)


def test_a_receiver_classes_its_flows_and_tells_their_sender():
    r = StreamNode([R1], PARAMS)
    assert r.register(reg(7, [(S, R1, 20000, 0), (S, R2, 20001, 0)])) == {
        "id": 7,
        "units": 1,
        "flows_here": 1,
    }
    r.observe([rx(R1, 20000, S, 40000, 1 * MIB)])
    assert r.classes() == {S: [(S, 40000, R1, 20000, 7, 0, 0, 1 * MIB)]}
    assert r.classes() == {}, "nothing moved: nothing is sent again"
    r.observe([rx(R1, 20000, S, 40000, 3 * MIB)], now=5.0)
    assert r.classes(now=5.0) == {S: [(S, 40000, R1, 20000, 7, 0, 1, 3 * MIB)]}
    # The demotion is recorded with its time, X and S (docs/runtime.md).
    assert r.status()[0]["demotions"] == [[5.0, 1, 3 * MIB, 0]]
    # The flow ends (FIN received): the unit is done and tells nobody.
    r.observe([rx(R1, 20000, S, 40000, 4 * MIB, TCP_CLOSE_WAIT)])
    assert r.classes() == {}
    assert r.status()[0]["flows_finished"] == 1
    assert r.status()[0]["bytes_received"] == 4 * MIB


def test_a_connection_first_seen_in_its_handshake_counts_its_bytes_later():
    """A round that catches a receiving connection in SYN_RECV (a minisocket:
    0 bytes) sees it but must not take it as finished: once established its
    bytes count, and 3 MiB demotes the unit to class 1 as in the test above.
    (Taken as finished, the unit stayed at 0 bytes and class 0 for good: the
    flaky decentralized testbed test.)"""
    r = StreamNode([R1], PARAMS)
    r.register(reg(7, [(S, R1, 20000, 0)]))
    r.observe([rx(R1, 20000, S, 40000, 0, TCP_SYN_RECV)], now=1.0)
    assert r.classes(now=1.0) == {S: [(S, 40000, R1, 20000, 7, 0, 0, 0)]}
    [u] = r.status()
    assert (u["flows_seen"], u["flows_finished"]) == (1, 0)
    r.observe([rx(R1, 20000, S, 40000, 3 * MIB)], now=2.0)
    assert r.classes(now=2.0) == {S: [(S, 40000, R1, 20000, 7, 0, 1, 3 * MIB)]}
    [u] = r.status()
    assert (u["bytes_received"], u["class"], u["flows_finished"]) == (3 * MIB, 1, 0)


def test_x_is_told_again_once_it_grew_by_the_tell_fraction():
    """X goes to the senders (for their relays) when it grew by the tell
    fraction of what was last told, and at least 64 KiB: by an eighth by
    default (8 MiB -> 9 MiB), by 1/64 when asked (8 MiB -> 8.125 MiB)."""
    key = (S, 40000, R1, 20000)
    for frac, small, enough in [(0.125, 8.9 * MIB, 9 * MIB), (1 / 64, 8.1 * MIB, 8.125 * MIB)]:
        r = StreamNode([R1], {**PARAMS, "first_threshold_mb": "100"}, tell_fraction=frac)
        r.register(reg(7, [(S, R1, 20000, 0)]))
        r.observe([rx(R1, 20000, S, 40000, 8 * MIB)])
        assert r.classes() == {S: [(*key, 7, 0, 0, 8 * MIB)]}
        r.observe([rx(R1, 20000, S, 40000, int(small))])
        assert r.classes() == {}, (frac, "not grown enough: nothing told")
        r.observe([rx(R1, 20000, S, 40000, int(enough))])
        assert r.classes() == {S: [(*key, 7, 0, 0, int(enough))]}, frac
    with pytest.raises(CoflowkitError, match="tell fraction must be in"):
        StreamNode([R1], PARAMS, tell_fraction=0.0)


def test_a_starved_unit_is_raised_one_class_until_eq5_demotes_it_again():
    """``starvation_s`` = 10 ms, as the simulator's rule: no new bytes for 10 ms
    raises the unit one class (not above class 0); the next demotion by eq. (5)
    clears the raise. The sender takes the lowered class."""
    r = StreamNode([R1], {**PARAMS, "starvation_s": "0.01"})
    r.register(reg(7, [(S, R1, 20000, 0)]))
    key = (S, 40000, R1, 20000)
    r.observe([rx(R1, 20000, S, 40000, 3 * MIB)], now=1.0)
    assert r.classes(now=1.0) == {S: [(*key, 7, 0, 1, 3 * MIB)]}
    r.observe([rx(R1, 20000, S, 40000, 3 * MIB)], now=1.005)
    assert r.classes(now=1.005) == {}, "5 ms without bytes: not yet starved"
    r.observe([rx(R1, 20000, S, 40000, 3 * MIB)], now=1.02)
    assert r.classes(now=1.02) == {S: [(*key, 7, 0, 0, 3 * MIB)]}
    [u] = r.status()
    assert (u["class"], u["class_eq5"], u["boost"]) == (0, 1, 1)
    r.observe([rx(R1, 20000, S, 40000, 3 * MIB)], now=1.04)
    assert r.classes(now=1.04) == {}, "class 0 cannot be raised"
    # 25 MiB: eq. (5) demotes to class 2 (T* = 20.95 MiB in class 1); the boost goes.
    r.observe([rx(R1, 20000, S, 40000, 25 * MIB)], now=1.05)
    assert r.classes(now=1.05) == {S: [(*key, 7, 0, 2, 25 * MIB)]}
    assert r.status()[0]["starvation_boosts"] == 1
    s = StreamNode([S], PARAMS)
    s.on_classes(frozenset([R1]), [(*key, 7, 0, 1, 3 * MIB)], now=0.0)
    s.on_classes(frozenset([R1]), [(*key, 7, 0, 0, 3 * MIB)], now=0.0)
    s.observe([tx(S, 40000, R1, 20000)])
    assert [c for _, c, _ in s.decisions()] == [0]


def test_a_sender_enforces_classes_of_its_own_flows_only():
    s = StreamNode([S], PARAMS)
    key = (S, 40000, R1, 20000)
    s.on_classes(frozenset([R1]), [(*key, 7, 0, 1, 3 * MIB)], now=0.0)
    # A receiver may not class a flow into another host, nor one this host does not send.
    s.on_classes(frozenset([R1]), [(S, 40001, R2, 20000, 7, 0, 3, 0)], now=0.0)
    s.on_classes(frozenset([R1]), [(R2, 40001, R1, 20000, 7, 0, 3, 0)], now=0.0)
    assert s.refused == 2
    assert s.decisions() == [], "no class before the flow is seen"
    s.observe([tx(S, 40000, R1, 20000)])
    [(fid, cls, k)] = s.decisions()
    assert (cls, k) == (1, key)
    s.observe([])
    assert s.gone == [fid] and s.decisions() == []


def test_a_sender_relays_the_bytes_of_its_other_receivers():
    """Coflow 7: S sends to R1 and R2. R2 has 1.5 MiB, R1 1 MiB. With the relay,
    R1's T = 1 + 1.5 = 2.5 MiB ≥ 2: class 1; alone it stays in class 0."""
    s = StreamNode([S], PARAMS)
    s.on_classes(frozenset([R2]), [(S, 40002, R2, 20001, 7, 0, 0, int(1.5 * MIB))], 0.0)
    s.on_classes(frozenset([R1]), [(S, 40001, R1, 20000, 7, 0, 0, 1 * MIB)], 0.0)
    s.observe([tx(S, 40001, R1, 20000), tx(S, 40002, R2, 20001)])
    relays = s.relays()
    assert relays == {
        R1: [(RELAY, 7, 0, R2, int(1.5 * MIB))],
        R2: [(RELAY, 7, 0, R1, 1 * MIB)],
    }
    assert s.relays() == {}, "unchanged relays are not sent again"
    for relay in (True, False):
        r1 = StreamNode([R1], {**PARAMS, "relay": str(relay).lower()})
        r1.register(reg(7, [(S, R1, 20000, 0), (S, R2, 20001, 0)]))
        r1.observe([rx(R1, 20000, S, 40001, 1 * MIB)])
        r1.on_units(frozenset([S]), relays[R1])
        [(*_, cls, x)] = r1.classes()[S]
        assert (cls, x) == ((1, 1 * MIB) if relay else (0, 1 * MIB))
    # A relay about a coflow this host does not receive, or from a host that is
    # not one of the unit's senders, is refused.
    r1.on_units(frozenset([S]), [(RELAY, 8, 0, R2, MIB)])
    r1.on_units(frozenset([R2]), [(RELAY, 7, 0, R2, MIB)])
    assert r1.refused == 2


def test_a_finished_child_stage_reports_its_bytes_to_the_parent_receivers():
    """Coflow 9: stage 1 (child, S → R1) feeds stage 0 (parent, S → R2). R1
    receives 3 MiB and completes; R2's first parent flow, with nothing received
    yet, starts from S = 3 MiB: T = 3 ≥ 2, class 1 (internal id 1: W = 1)."""
    flows = [(S, R1, 20000, 1), (S, R2, 20001, 0)]
    r1, r2 = StreamNode([R1], PARAMS), StreamNode([R2], PARAMS)
    for n in (r1, r2):
        n.register(reg(9, flows, parents=[(1, 0)]))
    r1.observe([rx(R1, 20000, S, 40001, 3 * MIB)])
    assert r1.child_reports() == {}, "not complete yet"
    r1.observe([])  # the connection is gone: every byte arrived
    assert r1.child_reports() == {R2: [(CHILD, 9, 1, R1, 3 * MIB)]}
    assert r1.child_reports() == {}, "reported once"
    r2.on_units(frozenset([S]), [(CHILD, 9, 1, R1, 3 * MIB)])  # not from R1 itself
    assert r2.refused == 1
    r2.on_units(frozenset([R1]), [(CHILD, 9, 1, R1, 3 * MIB)])
    r2.observe([rx(R2, 20001, S, 40002, 0)])
    assert r2.classes() == {S: [(S, 40002, R2, 20001, 9, 0, 1, 0)]}
    assert r2.status()[0]["s"] == 3 * MIB


def test_registrations_name_hosts_by_address_and_do_not_collide():
    n = StreamNode([R1], PARAMS)
    with pytest.raises(CoflowkitError, match=r"flows\[0\].src: .*IPv4 address"):
        n.register(parse({"id": 1, "flows": [{"src": 0, "dst": R1, "dst_port": 5}]}, 8))
    n.register(reg(1, [(S, R1, 5, 0)]))
    with pytest.raises(CoflowkitError, match="already registered"):
        n.register(reg(1, [(S, R1, 6, 0)]))
    with pytest.raises(CoflowkitError, match="belongs to coflow 1"):
        n.register(reg(2, [(S, R1, 5, 0)]))


# -- two agents over TLS on loopback --------------------------------------------------

SENDER, RECEIVER = "127.0.0.11", "127.0.0.12"


@pytest.fixture(scope="module")
def peer_pki(tmp_path_factory):
    d = str(tmp_path_factory.mktemp("peer-pki"))
    tls.init_ca(d)
    tls.issue(d, None, ["127.0.0.1"])
    tls.issue(d, 0, [SENDER])
    tls.issue(d, 1, [RECEIVER])
    return d


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(cond, what, timeout=20.0):
    end = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < end, f"timed out waiting for {what}"
        time.sleep(0.02)


@pytest.fixture
def two_agents(peer_pki):
    from coflowkit.runtime.peering import StreamAgent

    port = free_port()
    agents = []
    for host, addr in ((0, SENDER), (1, RECEIVER)):
        agents.append(
            StreamAgent(
                host,
                tls.host_server_context(peer_pki, host),
                tls.host_client_context(peer_pki, host),
                "lo",
                1e9,
                PARAMS,
                interval=0.02,
                addrs=[addr],
                peer_port=port,
                api=("127.0.0.1", 0),
                enforce=False,
            )
        )
    threads = [threading.Thread(target=a.run, daemon=True) for a in agents]
    for t in threads:
        t.start()
    yield agents
    for a in agents:
        a.close()
    for t in threads:
        t.join(10)


def post(agent, body) -> tuple[int, dict]:
    host, port = agent.api.server_address[:2]
    req = urllib.request.Request(
        f"http://{host}:{port}/api/coflows", data=json.dumps(body).encode(), method="POST"
    )
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def test_two_agents_exchange_a_class_over_their_authenticated_session(two_agents):
    """A real TCP flow from the sender's address to the receiver's: the
    receiver's agent classes it from tcpi_bytes_received and the sender's agent
    receives the class (hand-computed: 3 MiB → 1, 25 MiB → 2)."""
    sender, receiver = two_agents
    srv = socket.create_server((RECEIVER, 0))
    dport = srv.getsockname()[1]
    status, body = post(
        receiver, {"id": 5, "flows": [{"src": SENDER, "dst": RECEIVER, "dst_port": dport}]}
    )
    assert (status, body) == (201, {"id": 5, "units": 1, "flows_here": 1})
    assert post(receiver, {"id": 6, "flows": [{"src": 0, "dst": 1, "dst_port": dport}]})[0] == 409
    cli = socket.create_connection((RECEIVER, dport), source_address=(SENDER, 0))
    conn, _ = srv.accept()
    key = (SENDER, cli.getsockname()[1], RECEIVER, dport)
    got = [0]

    def drain(n):
        while got[0] < n:
            got[0] += len(conn.recv(1 << 20))

    def cls():
        with sender.lock:
            o = sender.node.out.get(key)
            return None if o is None else o.cls

    def send(n):  # from a thread: sendall blocks until the receiver reads
        t = threading.Thread(target=cli.sendall, args=(b"x" * n,), daemon=True)
        t.start()
        return t

    try:
        send(3 * MIB)
        drain(3 * MIB)
        wait_for(lambda: cls() == 1, "class 1 at the sender")
        send(22 * MIB)
        drain(25 * MIB)
        wait_for(lambda: cls() == 2, "class 2 at the sender")

        def unit():
            with receiver.lock:
                return receiver.node.status()[0]

        # The class may change before the receiver's round sees the last bytes.
        wait_for(lambda: unit()["bytes_received"] == 25 * MIB, "the receiver to see 25 MiB")
        assert unit()["class"] == 2
        # Demoted once per class: to 1 past T* = 2 MiB, to 2 past 20.95 MiB.
        [(_, c1, x1, _), (_, c2, x2, _)] = unit()["demotions"]
        assert (c1, c2) == (1, 2) and 2 * MIB <= x1 <= 3 * MIB and 20.95 * MIB <= x2 <= 25 * MIB
        assert receiver.health()["sent"]["classes"] >= 2
        assert sender.health()["received"]["classes"] >= 2
        assert sender.health()["refused_records"] == 0
    finally:
        cli.close()
        conn.close()
        srv.close()
    wait_for(lambda: cls() is None, "the sender to forget the finished flow")


def test_the_local_api_refuses_bad_registrations_and_stays_on_loopback(two_agents, peer_pki):
    _, receiver = two_agents
    status, body = post(receiver, {"id": 1, "flows": [{"src": SENDER, "dst": RECEIVER}]})
    assert (status, body) == (400, {"error": "flows[0]: missing dst_port"})
    status, body = post(receiver, {"id": 2, "flows": [], "extra": 1})
    assert status == 400 and "unknown key 'extra'" in body["error"]
    assert (
        post(receiver, {"id": 3, "flows": [{"src": SENDER, "dst": RECEIVER, "dst_port": 9}]})[0]
        == 201
    )
    from coflowkit.runtime.peering import StreamAgent

    with pytest.raises(CoflowkitError, match="must be on loopback"):
        StreamAgent(
            1, tls.host_server_context(peer_pki, 1), tls.host_client_context(peer_pki, 1), "lo",
            1e9, addrs=["127.0.0.13"], peer_port=free_port(), api=("0.0.0.0", 0), enforce=False,
        )  # fmt: skip


def test_a_peer_that_never_finishes_its_handshake_is_dropped_in_time(peer_pki, monkeypatch):
    """A 'peer' that accepts TCP but never speaks TLS: the agent's session to it
    ends at the handshake deadline, and the agent keeps its rounds and its API."""
    from coflowkit.runtime import peering

    monkeypatch.setattr(peering, "HANDSHAKE_S", 0.5)
    port = free_port()
    mute = socket.create_server(("127.0.0.15", port))  # never accepts: the kernel completes TCP
    agent = peering.StreamAgent(
        1, tls.host_server_context(peer_pki, 1), tls.host_client_context(peer_pki, 1), "lo",
        1e9, PARAMS, addrs=[RECEIVER], peer_port=port, api=("127.0.0.1", 0), enforce=False,
    )  # fmt: skip
    t = threading.Thread(target=agent.run, daemon=True)
    t.start()
    srv = socket.create_server((RECEIVER, 0))
    dport = srv.getsockname()[1]
    body = {"id": 4, "flows": [{"src": "127.0.0.15", "dst": RECEIVER, "dst_port": dport}]}
    assert post(agent, body)[0] == 201
    # A flow from the mute host: the agent classes it and must tell that host.
    cli = socket.create_connection((RECEIVER, dport), source_address=("127.0.0.15", 0))
    conn, _ = srv.accept()
    try:
        cli.sendall(b"x" * 1000)
        wait_for(lambda: agent.dropped_peers >= 1, "the mute peer to be dropped")
        rounds = agent.rounds
        wait_for(lambda: agent.rounds > rounds, "more rounds")
        assert (
            post(agent, {"id": 1, "flows": [{"src": SENDER, "dst": RECEIVER, "dst_port": 9}]})[0]
            == 201
        )
    finally:
        agent.close()
        t.join(10)
        for s in (cli, conn, srv, mute):
            s.close()


def test_a_peer_sending_a_bad_record_loses_its_session_only(two_agents, peer_pki):
    sender, receiver = two_agents
    ctx = tls.host_client_context(peer_pki, 0)
    raw = socket.create_connection((RECEIVER, receiver.peer_port), source_address=(SENDER, 0))
    s = ctx.wrap_socket(raw)
    chan = proto.Channel((), 1 << 20)
    bad = bytearray(encode_classes([(RECEIVER, 1, SENDER, 2, 1, 0, 0, 0)]))
    bad[4 + 24] = 64  # class 64: not below 64
    s.sendall(chan.frame(6, bytes(bad)))
    s.settimeout(10)
    assert s.recv(1) == b"", "the receiver's agent closed the session"
    s.close()
    wait_for(lambda: receiver.dropped_peers >= 1, "the bad session to be dropped")
    assert receiver.health()["rounds"] > 0
    # The agent still serves: a registration is accepted.
    assert (
        post(receiver, {"id": 1, "flows": [{"src": SENDER, "dst": RECEIVER, "dst_port": 9}]})[0]
        == 201
    )
