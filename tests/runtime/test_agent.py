"""The agent's observer: a live loopback connection through sock_diag and the
Rust flow table (threshold, first-seen time, updates, end), and its failure mode."""

from __future__ import annotations

import socket
import struct
import time

import pytest
from coflowkit.runtime import sockdiag
from coflowkit.runtime.agent import Observer, discovery_rounds, ehash_buckets

TIMEOUT_S = 5.0


def received(sock: socket.socket, n: int) -> None:
    got = 0
    while got < n:
        got += len(sock.recv(1 << 20))


def until(obs: Observer, diag: sockdiag.SockDiag, port: int, check, now: float, full=True):
    """Rounds (same `now`) until `check(report, flows)` holds for our connection."""
    deadline = time.monotonic() + TIMEOUT_S
    while True:
        rep = obs.round(diag, now, full).report()
        mine = {fid for fid, m in obs.matches().items() if m[1] == port}
        if check(rep, mine):
            return rep, mine
        assert time.monotonic() < deadline, f"no such round: last {rep}"
        time.sleep(0.01)


@pytest.mark.parametrize("full", [True, False], ids=["dumps", "lookups"])
@pytest.mark.parametrize("reset", [False, True], ids=["fin", "rst"])
def test_observer_reports_a_connection_from_threshold_to_end(full, reset):
    """The same life seen by dumps and by exact lookups (after the dump that
    found the flow: lookups find no new one); the report is the Rust-encoded
    payload, read back by the protocol's decoder. A connection reset is destroyed at once: its lookup
    is answered ENOENT; a closed one lingers in TIME_WAIT or FIN_WAIT2."""
    srv = socket.create_server(("127.0.0.1", 0))
    client = socket.create_connection(srv.getsockname())
    peer, _ = srv.accept()
    port = client.getsockname()[1]
    dst_port = srv.getsockname()[1]
    obs = Observer(["127.0.0.1"], 100_000)
    with sockdiag.SockDiag() as diag:
        # 50 KB: under the threshold, not a flow yet; its first-seen time is kept.
        client.sendall(b"x" * 50_000)
        received(peer, 50_000)
        r = obs.round(diag, 10.0, full=True)
        assert all(f.sport != port for f in r.report().new)
        # 150 KB in all: a new flow, first seen at 10.0. The initiator's
        # bytes_acked counts its SYN: 150,001.
        client.sendall(b"x" * 100_000)
        received(peer, 100_000)
        rep, mine = until(obs, diag, port, lambda r, m: m, 10.5, full=True)
        new = [f for f in rep.new if f.sport == port]
        assert len(new) == 1 and len(mine) == 1
        f = new[0]
        assert (f.dst, f.dport, f.first_seen, f.sent) == ("127.0.0.1", dst_port, 10.0, 150_001)
        assert rep.time == 10.5
        # The receiving socket (bytes_acked 0) is never a flow.
        assert all(m[1] != peer.getsockname()[1] for m in obs.matches().values())
        # More bytes: one update, with the new count.
        client.sendall(b"x" * 10_000)
        received(peer, 10_000)
        rep, _ = until(
            obs, diag, port, lambda r, m: any(u[0] == f.fid for u in r.updated), 11.0, full
        )
        assert (f.fid, 160_001) in rep.updated
        # Unchanged: nothing about it, and nothing changed at all.
        r = obs.round(diag, 11.5, full)
        rep = r.report()
        assert all(u[0] != f.fid for u in rep.updated) and all(g[0] != f.fid for g in rep.gone)
        assert r.changed == bool(rep.new or rep.updated or rep.gone)
        # Ended: gone, with its last count (the FIN's +1 may or may not be in).
        if reset:
            client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        client.close()
        peer.close()
        rep, mine = until(obs, diag, port, lambda r, m: not m, 12.0, full)
        gone = dict(rep.gone)
        assert gone[f.fid] in (160_001, 160_002)
        # A session's first report re-announces what is tracked: not this flow.
        assert all(x.fid != f.fid for x in obs.everything(13.0).new)
    srv.close()


@pytest.mark.parametrize("small_first", [False, True], ids=["new", "crossing"])
def test_lookups_find_no_new_flow_and_the_next_dump_does(small_first):
    """Neither a new connection nor a known one crossing the threshold is found
    by lookups; the next dump finds either, with its first-seen time."""
    srv = socket.create_server(("127.0.0.1", 0))
    obs = Observer(["127.0.0.1"], 100_000)
    with sockdiag.SockDiag() as diag:
        if not small_first:
            obs.round(diag, 1.0, full=True)  # before the connection exists
        client = socket.create_connection(srv.getsockname())
        peer, _ = srv.accept()
        port = client.getsockname()[1]
        if small_first:
            client.sendall(b"x" * 1000)
            received(peer, 1000)
            obs.round(diag, 1.0, full=True)  # a small connection, first seen at 1.0
        client.sendall(b"x" * 200_000)
        received(peer, 200_000)
        time.sleep(0.05)  # the last ACK is in
        for now in (1.5, 2.0):
            r = obs.round(diag, now, full=False)
            assert all(f.sport != port for f in r.report().new)
        rep, mine = until(obs, diag, port, lambda r, m: m, 3.0, full=True)
        (f,) = [f for f in rep.new if f.sport == port]
        assert f.first_seen == (1.0 if small_first else 3.0)
        assert f.sent == 201_001 if small_first else 200_001
    client.close()
    peer.close()
    srv.close()


@pytest.mark.parametrize("full", [True, False], ids=["dump", "lookups"])
def test_a_failed_round_raises_and_changes_nothing(full):
    srv = socket.create_server(("127.0.0.1", 0))
    client = socket.create_connection(srv.getsockname())
    peer, _ = srv.accept()
    port = client.getsockname()[1]
    obs = Observer(["127.0.0.1"], 100_000)
    with sockdiag.SockDiag() as diag:
        client.sendall(b"x" * 200_000)
        received(peer, 200_000)
        _, mine = until(obs, diag, port, lambda r, m: m, 1.0)
        (fid,) = mine
        client.sendall(b"x" * 10_000)
        received(peer, 10_000)
        # The netlink socket dies under the round (as when the kernel drops it).
        diag._sock.close()
        with pytest.raises(sockdiag.SockDiagError, match="Bad file descriptor"):
            obs.round(diag, 2.0, full)
        # A fresh socket next round: still tracked, not gone, the update not lost.
        rep, _ = until(obs, diag, port, lambda r, m: any(u[0] == fid for u in r.updated), 3.0, full)
        assert fid in obs.matches() and all(g[0] != fid for g in rep.gone)
        assert (fid, 210_001) in rep.updated
    client.close()
    peer.close()
    srv.close()


@pytest.mark.parametrize(
    "buckets, rounds",
    [(None, 1), (4096, 1), (16384, 1), (16385, 2), (65536, 4), (262_144, 10), (1 << 20, 10)],
)
def test_discovery_rounds_follow_the_hash_table(buckets, rounds):
    assert discovery_rounds(buckets) == rounds


def test_discover_every_below_one_is_refused():
    from coflowkit._core import CoflowkitError
    from coflowkit.runtime.agent import Agent

    with pytest.raises(CoflowkitError, match="discover-every must be at least 1 round, got 0"):
        Agent(("127.0.0.1", 1), b"s" * 32, 0, "lo", 1e6, addrs=["127.0.0.1"], discover_every=0)
    a = Agent(("127.0.0.1", 1), b"s" * 32, 0, "lo", 1e6, addrs=["127.0.0.1"], discover_every=3)
    assert a.discover_every == 3


def test_ehash_buckets_reads_the_sysctl(tmp_path):
    p = tmp_path / "tcp_ehash_entries"
    p.write_text("-262144\n")  # a namespace sharing the machine's table
    assert ehash_buckets(str(p)) == 262_144
    p.write_text("4096\n")
    assert ehash_buckets(str(p)) == 4096
    assert ehash_buckets(str(tmp_path / "missing")) is None


def test_bad_addresses_and_states_are_refused():
    with pytest.raises(ValueError, match=r"not an IPv4 address: .10\.0\.0."):
        Observer(["10.0.0"], 100_000)
    from coflowkit._core import FlowTable

    with pytest.raises(ValueError, match="not a TCP state number: 12"):
        FlowTable(["10.0.0.1"], 1, [1, 12])
