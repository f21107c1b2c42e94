"""The agent's observer: a live loopback connection through sock_diag and the
Rust flow table (threshold, first-seen time, updates, end), and its failure mode."""

from __future__ import annotations

import socket
import time

import pytest
from coflowkit.runtime import sockdiag
from coflowkit.runtime.agent import Observer

TIMEOUT_S = 5.0


def received(sock: socket.socket, n: int) -> None:
    got = 0
    while got < n:
        got += len(sock.recv(1 << 20))


def until(obs: Observer, diag: sockdiag.SockDiag, port: int, check, now: float):
    """Rounds (same `now`) until `check(report, flows)` holds for our connection."""
    deadline = time.monotonic() + TIMEOUT_S
    while True:
        rep = obs.round(diag, now)
        mine = {fid for fid, m in obs.matches().items() if m[1] == port}
        if check(rep, mine):
            return rep, mine
        assert time.monotonic() < deadline, f"no such round: last {rep}"
        time.sleep(0.01)


def test_observer_reports_a_connection_from_threshold_to_end():
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
        rep = obs.round(diag, 10.0)
        assert all(f.sport != port for f in rep.new)
        # 150 KB in all: a new flow, first seen at 10.0. The initiator's
        # bytes_acked counts its SYN: 150,001.
        client.sendall(b"x" * 100_000)
        received(peer, 100_000)
        rep, mine = until(obs, diag, port, lambda r, m: m, 10.5)
        new = [f for f in rep.new if f.sport == port]
        assert len(new) == 1 and len(mine) == 1
        f = new[0]
        assert (f.dst, f.dport, f.first_seen, f.sent) == ("127.0.0.1", dst_port, 10.0, 150_001)
        # The receiving socket (bytes_acked 0) is never a flow.
        assert all(m[1] != peer.getsockname()[1] for m in obs.matches().values())
        # More bytes: one update, with the new count.
        client.sendall(b"x" * 10_000)
        received(peer, 10_000)
        rep, _ = until(obs, diag, port, lambda r, m: any(u[0] == f.fid for u in r.updated), 11.0)
        assert (f.fid, 160_001) in rep.updated
        # Unchanged: nothing about it.
        rep = obs.round(diag, 11.5)
        assert all(u[0] != f.fid for u in rep.updated) and all(g[0] != f.fid for g in rep.gone)
        # Closed: gone, with its last count (the FIN's +1 may or may not be in).
        client.close()
        peer.close()
        rep, mine = until(obs, diag, port, lambda r, m: not m, 12.0)
        gone = dict(rep.gone)
        assert gone[f.fid] in (160_001, 160_002)
        # A session's first report re-announces what is tracked: not this flow.
        assert all(x.fid != f.fid for x in obs.everything(13.0).new)
    srv.close()


def test_a_failed_dump_raises_and_changes_nothing():
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

        real = obs.table

        class Broken:  # the table is fed a malformed datagram mid-dump
            def begin(self):
                real.begin()

            def feed(self, data, seq):
                real.feed(data[: len(data) // 2 + 1], None)
                return real.feed(b"\x08\0\0\0" + bytes(12), None)

            def end(self, now):
                return real.end(now)

        obs.table = Broken()
        with pytest.raises(sockdiag.SockDiagError, match="nlmsg_len 8"):
            obs.round(diag, 2.0)
        obs.table = real
        # Still tracked, not reported gone, no spurious update.
        rep = obs.round(diag, 3.0)
        assert fid in obs.matches() and all(g[0] != fid for g in rep.gone)
        assert all(u[0] != fid for u in rep.updated)
    client.close()
    peer.close()
    srv.close()


def test_bad_addresses_and_states_are_refused():
    with pytest.raises(ValueError, match=r"not an IPv4 address: .10\.0\.0."):
        Observer(["10.0.0"], 100_000)
    from coflowkit._core import FlowTable

    with pytest.raises(ValueError, match="not a TCP state number: 12"):
        FlowTable(["10.0.0.1"], 1, [1, 12])
