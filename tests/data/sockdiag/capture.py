"""Capture real sock_diag replies from the running kernel for the sockdiag tests.

How the captures in this directory were made (as root, from the repository root,
in a fresh network namespace so that the dumps hold only the sockets made here):

    unshare -n sh -c 'ip link set lo up && PYTHONPATH=python python3 tests/data/sockdiag/capture.py'

(Without ``unshare`` it works too, but the dumps then also hold whatever other
TCP sockets the host has.) The script

1. opens, on 127.0.0.1, a listener and connections with known transfers:
   - ``up``: the client sends exactly 300000 bytes, the server reads them all and
     answers 5000 bytes, which the client reads;
   - ``down``: the accepted socket sends exactly 300000 bytes, the client reads
     them all and answers 5000 bytes, which the server reads;
   - ``tw``: the client sends 1000 bytes and closes first, so it ends in TIME_WAIT
     (a socket with no tcp_info in the reply);
   - ``IDLE_PAIRS`` idle connections, so the reply spans several datagrams;
2. waits until every byte sent has been acknowledged (the kernel's send queue,
   ``SIOCOUTQ``, is empty on each sender);
3. dumps AF_INET TCP sockets as the agent does (``build_request`` of
   ``coflowkit.runtime.sockdiag``, INET_DIAG_INFO requested), once for all states
   and once for ESTABLISHED only, reading until NLMSG_DONE;
4. saves each raw reply (the datagrams concatenated, exactly as received) to
   ``<name>.bin`` and writes ``capture.json``: the kernel release, per capture the
   file, request mask and sequence number, datagram sizes, and the expected
   fields of the known sockets, derived from the transfers above (not from the
   parser), plus each socket's inode from ``os.fstat``.

Expected byte counters follow Linux: ``tcpi_bytes_acked`` counts acknowledged
sequence space, so on a socket that *initiated* its connection it includes 1 for
the SYN (the ``up`` client reports 300000 + 1); an accepted socket counts data
only. ``tcpi_bytes_received`` counts payload bytes.

Before writing anything, the script parses its captures and stops if the known
sockets do not show the expected values (e.g. an acknowledgement still in flight).
"""

from __future__ import annotations

import fcntl
import json
import os
import platform
import socket
import struct
import sys
import termios
import time
from pathlib import Path

from coflowkit.runtime.sockdiag import (
    ALL_STATES_MASK,
    NETLINK_SOCK_DIAG,
    TCP_ESTABLISHED,
    TCP_LISTEN,
    TCP_TIME_WAIT,
    build_request,
    parse_dump,
    states_mask,
)

HERE = Path(__file__).resolve().parent
BIG = 300_000
SMALL = 5_000
TW_BYTES = 1_000
IDLE_PAIRS = 24
SETTLE_TIMEOUT_S = 5.0


def recv_exactly(sock: socket.socket, n: int) -> None:
    """Read and discard exactly ``n`` bytes."""
    left = n
    while left:
        chunk = sock.recv(min(left, 1 << 16))
        if not chunk:
            raise RuntimeError(f"peer closed with {left} bytes still expected")
        left -= len(chunk)


def outq(sock: socket.socket) -> int:
    """Bytes in the socket's send queue not yet acknowledged (SIOCOUTQ)."""
    raw = fcntl.ioctl(sock.fileno(), termios.TIOCOUTQ, struct.pack("i", 0))
    return struct.unpack("i", raw)[0]


def wait_acked(socks: list[socket.socket]) -> None:
    deadline = time.monotonic() + SETTLE_TIMEOUT_S
    while any(outq(s) for s in socks):
        if time.monotonic() > deadline:
            raise RuntimeError("data still unacknowledged after the timeout")
        time.sleep(0.01)
    time.sleep(0.1)  # let delayed ACKs for the last segments land too


def raw_dump(mask: int, seq: int) -> list[bytes]:
    """The reply datagrams of one AF_INET TCP dump, up to NLMSG_DONE."""
    with socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_SOCK_DIAG) as nl:
        nl.settimeout(2.0)
        nl.sendto(build_request(mask, socket.AF_INET, seq=seq), (0, 0))
        datagrams = []
        while True:
            dgram = nl.recv(1 << 17)
            datagrams.append(dgram)
            if parse_dump(dgram, seq=seq)[1]:
                return datagrams


def describe(
    name: str, sock: socket.socket, state: int, acked: int, received: int, inode: bool = True
) -> dict:
    src, sport = sock.getsockname()[:2]
    try:
        dst, dport = sock.getpeername()[:2]
    except OSError:  # a listener
        dst, dport = "0.0.0.0", 0
    return {
        "name": name,
        "src": src,
        "sport": sport,
        "dst": dst,
        "dport": dport,
        "state": state,
        "bytes_acked": acked,
        "bytes_received": received,
        "inode": os.fstat(sock.fileno()).st_ino if inode else 0,
    }


def main() -> int:
    keep: list[socket.socket] = []
    lst = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    lst.bind(("127.0.0.1", 0))
    lst.listen(64)
    keep.append(lst)
    addr = lst.getsockname()

    def pair() -> tuple[socket.socket, socket.socket]:
        client = socket.create_connection(addr)
        server, _ = lst.accept()
        keep.extend((client, server))
        return client, server

    up_c, up_s = pair()
    up_c.sendall(b"u" * BIG)
    recv_exactly(up_s, BIG)
    up_s.sendall(b"v" * SMALL)
    recv_exactly(up_c, SMALL)

    down_c, down_s = pair()
    down_s.sendall(b"d" * BIG)
    recv_exactly(down_c, BIG)
    down_c.sendall(b"e" * SMALL)
    recv_exactly(down_s, SMALL)

    tw_c = socket.create_connection(addr)
    tw_s, _ = lst.accept()
    tw_c.sendall(b"t" * TW_BYTES)
    recv_exactly(tw_s, TW_BYTES)
    tw_port = tw_c.getsockname()[1]
    tw_c.close()  # active close: the client ends in TIME_WAIT
    if tw_s.recv(1):
        raise RuntimeError("expected EOF on the tw server socket")
    tw_s.close()

    for _ in range(IDLE_PAIRS):
        pair()

    wait_acked([up_c, up_s, down_c, down_s])

    known = [
        describe("listener", lst, TCP_LISTEN, 0, 0),
        describe("up client (sender)", up_c, TCP_ESTABLISHED, BIG + 1, SMALL),
        describe("up server (receiver)", up_s, TCP_ESTABLISHED, SMALL, BIG),
        describe("down client (receiver)", down_c, TCP_ESTABLISHED, SMALL + 1, BIG),
        describe("down server (sender)", down_s, TCP_ESTABLISHED, BIG, SMALL),
    ]
    time_wait = {
        "name": "tw client (TIME_WAIT, no tcp_info)",
        "src": addr[0],
        "sport": tw_port,
        "dst": addr[0],
        "dport": addr[1],
        "state": TCP_TIME_WAIT,
        "bytes_acked": 0,
        "bytes_received": 0,
        "inode": 0,
    }

    captures = []
    plans = [
        ("all_states", ALL_STATES_MASK, 101, known + [time_wait]),
        ("established", states_mask(TCP_ESTABLISHED), 102, known[1:]),
    ]
    blobs = {}
    for name, mask, seq, expected in plans:
        datagrams = raw_dump(mask, seq)
        blob = b"".join(datagrams)
        conns, done = parse_dump(blob, seq=seq)
        by_ports = {(c.sport, c.dport): c for c in conns}
        for exp in expected:
            got = by_ports.get((exp["sport"], exp["dport"]))
            fields = {k: exp[k] for k in exp if k != "name"}
            if not done or got is None or {k: getattr(got, k) for k in fields} != fields:
                print(f"{name}: {exp['name']}: expected {fields}, got {got}", file=sys.stderr)
                return 1
        blobs[f"{name}.bin"] = blob
        captures.append(
            {
                "file": f"{name}.bin",
                "states_mask": mask,
                "seq": seq,
                "datagram_sizes": [len(d) for d in datagrams],
                "n_sockets": len(conns),
                "expected": expected,
            }
        )
        print(f"{name}: {len(conns)} sockets in {len(datagrams)} datagrams, {len(blob)} bytes")

    for fname, blob in blobs.items():
        (HERE / fname).write_bytes(blob)
    meta = {
        "kernel": platform.release(),
        "idle_pairs": IDLE_PAIRS,
        "note": "bytes_acked of a connecting (client) socket includes 1 for its SYN",
        "captures": captures,
    }
    (HERE / "capture.json").write_text(json.dumps(meta, indent=2) + "\n")
    for s in keep:
        s.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
