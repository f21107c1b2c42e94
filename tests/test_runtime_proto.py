"""The master-agent protocol: round trips, bad frames, authentication; and a master
driven over loopback by hand-made agents."""

import json
import socket
import struct
import threading
import time
import urllib.error
import urllib.request

import pytest
from coflowkit.runtime import proto
from coflowkit.runtime.master import Master

SECRET = b"0123456789abcdef-secret"


def session():
    """A master-side and an agent-side channel after the challenge."""
    m, a = proto.Channel(SECRET), proto.Channel(SECRET)
    ((t, nonce),) = a.feed(m.frame(proto.CHALLENGE, proto.Channel.new_nonce()))
    assert t == proto.CHALLENGE and len(nonce) == proto.NONCE_LEN
    return m, a


def test_every_message_round_trips():
    m, a = session()
    hello = proto.Hello(3, 20, ["10.77.0.4", "192.168.1.9"], "host-3")
    rep = proto.Report(
        12.5,
        [proto.NewFlow(7, 40001, "10.77.0.2", 20005, 11.25, 300_000)],
        [(5, 1 << 40), (6, 123)],
        [(2, 999)],
    )
    dec = [(7, proto.RATE, 1.25e6), (5, proto.CLASS, 3.0), (6, proto.UNLIMITED, 0.0)]
    frames = a.frame(proto.HELLO, proto.encode_hello(hello)) + a.frame(
        proto.REPORT, proto.encode_report(rep)
    )
    # Split anywhere: the reader reassembles.
    got = m.feed(frames[:7]) + m.feed(frames[7:50]) + m.feed(frames[50:])
    assert [t for t, _ in got] == [proto.HELLO, proto.REPORT]
    assert proto.decode_hello(got[0][1]) == hello
    assert proto.decode_report(got[1][1]) == rep
    ((t, p),) = a.feed(m.frame(proto.DECISIONS, proto.encode_decisions(dec)))
    assert t == proto.DECISIONS and proto.decode_decisions(p) == dec


def test_wrong_secret_is_refused_both_ways():
    m = proto.Channel(SECRET)
    a = proto.Channel(b"another-secret-of-16+")
    with pytest.raises(proto.ProtocolError, match="authentication failed"):
        a.feed(m.frame(proto.CHALLENGE, proto.Channel.new_nonce()))


def test_tampering_replay_and_reordering_are_refused():
    m, a = session()
    f1 = a.frame(proto.REPORT, proto.encode_report(proto.Report(1.0)))
    f2 = a.frame(proto.REPORT, proto.encode_report(proto.Report(2.0)))
    bad = bytearray(f1)
    bad[20] ^= 1  # a payload bit
    with pytest.raises(proto.ProtocolError, match="authentication failed"):
        proto.Channel(SECRET, m.nonce).feed(bytes(bad))
    # Out of order: #1 before #0.
    m2 = proto.Channel(SECRET, m.nonce)
    with pytest.raises(proto.ProtocolError, match="sequence 1, expected 0"):
        m2.feed(f2)
    # A frame of another session (other nonce) does not verify.
    other_m, _ = session()
    with pytest.raises(proto.ProtocolError, match="authentication failed"):
        proto.Channel(SECRET, other_m.nonce).feed(f1)
    # Replaying #0 after it was accepted.
    m3 = proto.Channel(SECRET, m.nonce)
    m3.feed(f1)
    with pytest.raises(proto.ProtocolError, match="sequence 0, expected 1"):
        m3.feed(f1)


def frame_raw(
    version=proto.VERSION, mtype=proto.REPORT, magic=b"CK", payload=b"", nonce=b"n" * 16, seq=0
):
    import hashlib
    import hmac

    body = struct.pack("<2sBBQ", magic, version, mtype, seq) + payload
    tag = hmac.new(SECRET, nonce + body, hashlib.sha256).digest()
    return struct.pack("<I", len(body) + 32) + body + tag


def test_bad_frames_name_what_is_wrong():
    n = b"n" * 16
    with pytest.raises(proto.ProtocolError, match="version 9 is not supported"):
        proto.Channel(SECRET, n).feed(frame_raw(version=9))
    with pytest.raises(proto.ProtocolError, match="bad magic"):
        proto.Channel(SECRET, n).feed(frame_raw(magic=b"XX"))
    with pytest.raises(proto.ProtocolError, match="unknown message type 77"):
        proto.Channel(SECRET, n).feed(frame_raw(mtype=77))
    with pytest.raises(proto.ProtocolError, match="frame length"):
        proto.Channel(SECRET, n).feed(struct.pack("<I", 1 << 30) + b"x" * 8)
    with pytest.raises(proto.ProtocolError, match="expected a CHALLENGE first"):
        proto.Channel(SECRET).feed(frame_raw())
    # Payload-level errors.
    good = proto.encode_report(proto.Report(1.0, [proto.NewFlow(1, 2, "1.2.3.4", 5, 0.0, 6)]))
    for cut in (3, 10, len(good) - 1):
        with pytest.raises(proto.ProtocolError, match="REPORT"):
            proto.decode_report(good[:cut])
    with pytest.raises(proto.ProtocolError, match="trailing"):
        proto.decode_report(good + b"\0")
    with pytest.raises(proto.ProtocolError, match="unknown kind 9"):
        proto.decode_decisions(struct.pack("<IIBd", 1, 4, 9, 0.0))
    with pytest.raises(proto.ProtocolError, match="bad rate"):
        proto.decode_decisions(struct.pack("<IIBd", 1, 4, proto.RATE, float("nan")))
    with pytest.raises(proto.ProtocolError, match="HELLO"):
        proto.decode_hello(b"\x01")


def test_secret_file_errors(tmp_path):
    with pytest.raises(proto.CoflowkitError, match="no-such: No such file"):
        proto.read_secret(str(tmp_path / "no-such"))
    short = tmp_path / "short"
    short.write_text("abc\n")
    with pytest.raises(proto.CoflowkitError, match="at least 16 bytes, got 3"):
        proto.read_secret(str(short))
    ok = tmp_path / "ok"
    ok.write_text("  " + SECRET.decode() + "\n")
    assert proto.read_secret(str(ok)) == SECRET


# -- a master over loopback ---------------------------------------------------


class FakeAgent:
    """An agent speaking the protocol by hand (no sock_diag, no tc)."""

    def __init__(self, addr, secret=SECRET):
        self.sock = socket.create_connection(addr, timeout=5)
        self.chan = proto.Channel(secret)
        self.frames: list[tuple[int, bytes]] = []

    def read(self, until, timeout=5.0):
        end = time.time() + timeout
        while time.time() < end:
            for f in self.frames:
                if until(f):
                    return f
            self.sock.settimeout(max(0.01, end - time.time()))
            try:
                data = self.sock.recv(65536)
            except TimeoutError:
                continue
            if not data:
                return None
            self.frames += self.chan.feed(data)
        raise AssertionError("timed out")

    def send(self, mtype, payload):
        self.sock.sendall(self.chan.frame(mtype, payload))


@pytest.fixture
def master():
    m = Master(
        "fair", {}, 3, 10e6, SECRET, listen=("127.0.0.1", 0), http=("127.0.0.1", 0), interval=0.01
    )
    t = threading.Thread(target=m.run, daemon=True)
    t.start()
    yield m
    m.close()
    t.join(timeout=5)


def connect(master, host, ip):
    a = FakeAgent(master.address)
    a.read(lambda f: f[0] == proto.CHALLENGE)
    a.send(proto.HELLO, proto.encode_hello(proto.Hello(host, 10, [ip], f"h{host}")))
    return a


def http(m, path, body=None):
    url = f"http://{m.http_address[0]}:{m.http_address[1]}{path}"
    data = (
        None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    )
    try:
        with urllib.request.urlopen(urllib.request.Request(url, data=data), timeout=5) as r:
            raw = r.read().decode()
            return r.status, (raw if path == "/metrics" else json.loads(raw))
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read().decode())


# Host 0's report of two new flows of 200 KB: flow 1 to host 1, flow 2 to host 2.
TWO_FLOWS = proto.Report(
    1.0,
    [
        proto.NewFlow(1, 40000, "10.0.0.2", 5001, 0.9, 200_000),
        proto.NewFlow(2, 40001, "10.0.0.3", 5002, 0.9, 200_000),
    ],
)


def wait_hosts(master, n):
    deadline = time.time() + 5
    while len(master.by_host) < n and time.time() < deadline:
        time.sleep(0.01)
    assert len(master.by_host) == n


def test_master_decides_max_min_rates_and_pushes_only_changes(master):
    a0 = connect(master, 0, "10.0.0.1")
    others = [connect(master, 1, "10.0.0.2"), connect(master, 2, "10.0.0.3")]
    wait_hosts(master, 3)  # the three HELLOs arrive on three sockets, in any order
    # Host 0 sends two flows (to hosts 1 and 2): 5 MB/s each on its 10 MB/s uplink.
    a0.send(proto.REPORT, proto.encode_report(TWO_FLOWS))
    f = a0.read(lambda f: f[0] == proto.DECISIONS and proto.decode_decisions(f[1]))
    dec = sorted(proto.decode_decisions(f[1]))
    assert [(fid, k) for fid, k, _ in dec] == [(1, proto.RATE), (2, proto.RATE)]
    assert [v for *_, v in dec] == pytest.approx([5e6, 5e6])
    # Flow 1 ends: flow 2 gets the whole link, and only flow 2's decision is sent.
    a0.frames.clear()
    a0.send(proto.REPORT, proto.encode_report(proto.Report(1.1, gone=[(1, 900_000)])))
    f = a0.read(lambda f: f[0] == proto.DECISIONS and proto.decode_decisions(f[1]))
    assert proto.decode_decisions(f[1]) == [(2, proto.RATE, pytest.approx(10e6))]
    status, flows = http(master, "/api/flows")
    assert status == 200 and [x["dst"] for x in flows] == [2]
    assert len(others) == 2  # the other agents stayed connected throughout


def test_flow_to_a_host_whose_agent_is_not_connected_yet_is_held_then_scheduled(master):
    a0 = connect(master, 0, "10.0.0.1")
    a1 = connect(master, 1, "10.0.0.2")
    wait_hosts(master, 2)
    a0.send(proto.REPORT, proto.encode_report(TWO_FLOWS))
    # Only flow 1 can be placed: it has the whole 10 MB/s uplink.
    f = a0.read(lambda f: f[0] == proto.DECISIONS and proto.decode_decisions(f[1]))
    assert proto.decode_decisions(f[1]) == [(1, proto.RATE, pytest.approx(10e6))]
    assert master.metrics["unresolved_flows"] == 1
    # Flow 2's bytes keep being counted while it is held.
    a0.send(proto.REPORT, proto.encode_report(proto.Report(1.1, updated=[(2, 300_000)])))
    time.sleep(0.05)
    a0.frames.clear()
    # Host 2's agent arrives: flow 2 is scheduled, and the uplink is shared.
    a2 = connect(master, 2, "10.0.0.3")
    got: dict[int, float] = {}
    deadline = time.time() + 5
    while set(got) != {1, 2} and time.time() < deadline:
        f = a0.read(lambda f: f[0] == proto.DECISIONS and proto.decode_decisions(f[1]))
        got.update({fid: v for fid, _, v in proto.decode_decisions(f[1])})
        a0.frames.remove(f)
    assert got == {1: pytest.approx(5e6), 2: pytest.approx(5e6)}
    assert master.metrics["unresolved_flows"] == 0
    status, flows = http(master, "/api/flows")
    assert status == 200 and sorted(x["dst"] for x in flows) == [1, 2]
    status, coflows = http(master, "/api/coflows")  # unregistered flows are coflows of their own
    assert status == 200 and sorted(c["bytes_sent"] for c in coflows) == [200_000, 300_000]
    assert a1 is not None and a2 is not None


def test_unauthenticated_and_malformed_agents_are_rejected_without_harm(master):
    # Wrong secret: the master's challenge fails on the agent side; the agent's
    # HELLO (signed with the wrong key) is rejected by the master.
    bad = FakeAgent(master.address, secret=b"wrong-secret-0123456")
    with pytest.raises(proto.ProtocolError):
        bad.read(lambda f: f[0] == proto.CHALLENGE)
    bad.chan.nonce = b"x" * 16
    bad.send(proto.HELLO, proto.encode_hello(proto.Hello(0, 10, ["10.0.0.1"], "evil")))
    # Garbage bytes from another client.
    junk = socket.create_connection(master.address, timeout=5)
    junk.sendall(b"GET / HTTP/1.1\r\n\r\n" * 4)
    # A correctly signed but malformed REPORT.
    a = connect(master, 0, "10.0.0.1")
    a.send(proto.REPORT, b"\x01\x02")
    deadline = time.time() + 5
    while master.metrics["rejected_messages"] < 3 and time.time() < deadline:
        time.sleep(0.02)
    assert master.metrics["rejected_messages"] == 3
    # The malformed agent was told why and disconnected.
    err = a.read(lambda f: f[0] == proto.ERROR)
    assert err is not None and b"REPORT" in err[1]
    # The master still serves a good agent.
    good = connect(master, 1, "10.0.0.2")
    good.send(proto.REPORT, proto.encode_report(proto.Report(0.0)))
    status, health = http(master, "/api/health")
    assert status == 200 and health["policy"] == "fair"
    status, text = http(master, "/metrics")
    assert "coflowkit_rejected_messages_total 3" in text
    assert "coflowkit_agents_connected" in text


def test_registration_api_groups_flows_into_coflows(master):
    connect(master, 1, "10.0.0.2")
    connect(master, 2, "10.0.0.3")
    a0 = connect(master, 0, "10.0.0.1")
    status, body = http(master, "/api/coflows", {"id": 77, "flows": [
        {"src": 0, "dst": 1, "dst_port": 6000, "size": 1e6},
        {"src": "10.0.0.1", "dst": "10.0.0.3", "dst_port": 6001},
    ]})  # fmt: skip
    assert status == 201 and body == {"id": 77, "flows": 2, "first_slot": 0}
    for bad, msg in [
        (b"{not json", "bad JSON"),
        ({"id": 78}, "a registration is"),
        ({"id": 78, "flows": [{"src": 0, "dst": 9, "dst_port": 1}]}, "host 9 is out of range"),
        ({"id": 78, "flows": [{"src": 0, "dst": 1}]}, "flows[0]: missing dst_port"),
        (
            {"id": 78, "flows": [{"src": "1.2.3.4", "dst": 1, "dst_port": 1}]},
            "unknown host '1.2.3.4'",
        ),
        ({"id": 77, "flows": [{"src": 0, "dst": 1, "dst_port": 1}]}, "already registered"),
    ]:
        status, body = http(master, "/api/coflows", bad)
        assert status == 400 and msg in body["error"], (bad, body)
    # Both flows show up: they join coflow 77 (not coflows of their own).
    rep = proto.Report(
        1.0,
        [
            proto.NewFlow(1, 40000, "10.0.0.2", 6000, 0.9, 200_000),
            proto.NewFlow(2, 40001, "10.0.0.3", 6001, 0.9, 200_000),
            proto.NewFlow(3, 40002, "10.0.0.3", 6002, 0.9, 200_000),
        ],
    )
    a0.send(proto.REPORT, proto.encode_report(rep))
    a0.read(lambda f: f[0] == proto.DECISIONS and proto.decode_decisions(f[1]))
    status, coflows = http(master, "/api/coflows")
    by_id = {c["id"]: c for c in coflows}
    assert by_id[77]["width"] == 2 and by_id[77]["registered"]
    assert by_id[77]["bytes_sent"] == 400_000
    singles = [c for c in coflows if not c["registered"]]
    assert len(singles) == 1 and singles[0]["bytes_sent"] == 200_000


def test_small_rate_changes_are_pushed_when_they_matter_to_the_flow(master):
    # 40 flows share host 0's 10 MB/s uplink: 250 kB/s each. One ends: the 39
    # others get 10/39 MB/s, +2.6 % for each flow but only +0.06 % of the link.
    # All 39 must be told, or the link would stay 2.5 % idle.
    a0 = connect(master, 0, "10.0.0.1")
    a1 = connect(master, 1, "10.0.0.2")
    wait_hosts(master, 2)
    new = [proto.NewFlow(i, 40000 + i, "10.0.0.2", 5001, 0.9, 200_000) for i in range(1, 41)]
    a0.send(proto.REPORT, proto.encode_report(proto.Report(1.0, new)))
    f = a0.read(lambda f: f[0] == proto.DECISIONS and proto.decode_decisions(f[1]))
    assert [v for *_, v in proto.decode_decisions(f[1])] == pytest.approx([10e6 / 40] * 40)
    a0.frames.clear()
    a0.send(proto.REPORT, proto.encode_report(proto.Report(1.1, gone=[(40, 1_000_000)])))
    f = a0.read(lambda f: f[0] == proto.DECISIONS and proto.decode_decisions(f[1]))
    dec = proto.decode_decisions(f[1])
    assert sorted(fid for fid, _, _ in dec) == list(range(1, 40))
    assert [v for *_, v in dec] == pytest.approx([10e6 / 39] * 39)
    assert a1 is not None


def test_paused_flows_trickle_and_the_favoured_flow_leaves_them_room():
    # Varys on host 0's 10 MB/s uplink: coflow 1 (1 MB) goes first at the whole
    # link, coflow 2 (5 MB) is paused. The agent sends a paused flow at its
    # floor, 0.5 % of the link (50 kB/s), so the master gives coflow 1 the rest:
    # 9.95 MB/s, and tells flow 2 zero.
    m = Master("varys", {}, 3, 10e6, SECRET, listen=("127.0.0.1", 0), http=None, interval=0.01)
    t = threading.Thread(target=m.run, daemon=True)
    t.start()
    try:
        for cid, dst, port, size in ((1, 1, 5001, 1e6), (2, 2, 5002, 5e6)):
            body = {"id": cid, "flows": [{"src": 0, "dst": dst, "dst_port": port, "size": size}]}
            assert m.submit(body)[0] == "ok"
        agents = [connect(m, h, f"10.0.0.{h + 1}") for h in range(3)]
        wait_hosts(m, 3)
        agents[0].send(proto.REPORT, proto.encode_report(TWO_FLOWS))
        got: dict[int, float] = {}
        deadline = time.time() + 5
        while set(got) != {1, 2} and time.time() < deadline:
            f = agents[0].read(lambda f: f[0] == proto.DECISIONS and proto.decode_decisions(f[1]))
            got.update({fid: v for fid, _, v in proto.decode_decisions(f[1])})
            agents[0].frames.remove(f)
        assert got == {1: pytest.approx(10e6 - 0.005 * 10e6), 2: 0.0}
    finally:
        m.close()
        t.join(timeout=5)
