"""The sock_diag observer: real kernel captures, hand-built replies, a live dump."""

from __future__ import annotations

import dataclasses
import errno
import fcntl
import json
import os
import random
import socket
import struct
import sys
import termios
import threading
import time
from pathlib import Path

import pytest
from coflowkit import CoflowkitError
from coflowkit.runtime import sockdiag as sd
from coflowkit.runtime.sockdiag import (
    ALL_STATES_MASK,
    TCP_CLOSING,
    TCP_ESTABLISHED,
    TCP_LISTEN,
    SockDiag,
    SockDiagError,
    TcpConn,
    build_request,
    parse_dump,
    states_mask,
)

DATA = Path(__file__).resolve().parents[1] / "data" / "sockdiag"
META = json.loads((DATA / "capture.json").read_text())
CAPTURES = {c["file"]: c for c in META["captures"]}

# Kernel numbers, written out here rather than taken from the module under test.
SOCK_DIAG_BY_FAMILY = 20
NLMSG_NOOP, NLMSG_ERROR, NLMSG_DONE = 1, 2, 3
NLM_F_MULTI = 0x2
INET_DIAG_INFO, INET_DIAG_SHUTDOWN, INET_DIAG_CGROUP_ID = 2, 8, 21
SEQ = 7


# --- Hand-built netlink messages ---------------------------------------------


def nlmsg(mtype: int, payload: bytes, seq: int = SEQ, flags: int = NLM_F_MULTI) -> bytes:
    """One netlink message, padded to 4 bytes (nlmsg_len counts the padding, as Linux does)."""
    body = payload + b"\0" * (-len(payload) % 4)
    return struct.pack("=IHHII", 16 + len(body), mtype, flags, seq, 4242) + body


def nla(atype: int, payload: bytes) -> bytes:
    """One netlink attribute; nla_len excludes the alignment padding."""
    return struct.pack("=HH", 4 + len(payload), atype) + payload + b"\0" * (-len(payload) % 4)


def diag_msg(
    sport: int,
    dport: int,
    src: str = "10.1.2.3",
    dst: str = "10.4.5.6",
    state: int = TCP_ESTABLISHED,
    inode: int = 777,
    family: int = socket.AF_INET,
) -> bytes:
    """struct inet_diag_msg: 4 x u8, sockid (be16 ports, 16-byte addresses, if, cookie),
    then expires, rqueue, wqueue, uid, inode in host order."""
    raw_src = socket.inet_pton(family, src).ljust(16, b"\0")
    raw_dst = socket.inet_pton(family, dst).ljust(16, b"\0")
    sockid = struct.pack("!HH16s16sIII", sport, dport, raw_src, raw_dst, 0, 0xDEAD, 0xBEEF)
    return (
        struct.pack("=BBBB", family, state, 0, 0) + sockid + struct.pack("=5I", 1, 2, 3, 4, inode)
    )


def tcp_info(acked: int, received: int, length: int = 232) -> bytes:
    """struct tcp_info laid out field by field from include/uapi/linux/tcp.h:
    8 x u8, 24 x u32 (rto .. total_retrans), then u64 pacing_rate, max_pacing_rate,
    bytes_acked, bytes_received, then the rest (zeros here), cut to ``length``."""
    head = struct.pack("=8B24I", *range(1, 9), *range(100, 124))
    full = head + struct.pack("=4Q", 11, 22, acked, received)
    return (full + b"\0" * max(0, length - len(full)))[:length]


def diag_reply(acked: int = 123_456_789_012, received: int = 987_654_321, **kw: int) -> bytes:
    attrs = (
        nla(INET_DIAG_SHUTDOWN, b"\0")
        + nla(INET_DIAG_CGROUP_ID, struct.pack("=Q", 99))
        + nla(INET_DIAG_INFO, tcp_info(acked, received))
    )
    return nlmsg(SOCK_DIAG_BY_FAMILY, diag_msg(**kw) + attrs)


def done() -> bytes:
    return nlmsg(NLMSG_DONE, struct.pack("=i", 0))


def boundaries(data: bytes) -> list[int]:
    """The offsets at which whole messages end (0 included), walked independently."""
    out, off = [0], 0
    while off < len(data):
        off += (struct.unpack_from("=I", data, off)[0] + 3) & ~3
        out.append(off)
    return out


def expected_conn(**kw: object) -> TcpConn:
    return TcpConn(**{f.name: kw[f.name] for f in dataclasses.fields(TcpConn)})


# --- Request, states ----------------------------------------------------------


def test_build_request_layout() -> None:
    req = build_request(states_mask(TCP_ESTABLISHED), seq=5)
    want = struct.pack("=IHHII", 72, 20, 0x301, 5, 0) + struct.pack(
        "=BBBBI", socket.AF_INET, socket.IPPROTO_TCP, 1 << (INET_DIAG_INFO - 1), 0, 1 << 1
    )
    assert req == want + bytes(48)
    assert build_request()[20:24] == struct.pack("=I", 0xFFE)
    assert build_request(family=socket.AF_INET6)[16] == socket.AF_INET6
    with pytest.raises(ValueError):
        build_request(family=socket.AF_UNIX)
    with pytest.raises(ValueError):
        build_request(1 << 32)


def test_states_mask() -> None:
    assert ALL_STATES_MASK == 0xFFE == states_mask(*range(1, 12))
    assert states_mask(TCP_ESTABLISHED, TCP_LISTEN) == (1 << 1) | (1 << 10)
    assert states_mask(TCP_CLOSING) == 1 << 11
    for bad in [(), (0,), (12,), (TCP_ESTABLISHED, -1)]:
        with pytest.raises(ValueError):
            states_mask(*bad)


# --- Real captures ------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(CAPTURES))
def test_capture_matches_expectations(name: str) -> None:
    meta = CAPTURES[name]
    data = (DATA / name).read_bytes()
    assert len(data) == sum(meta["datagram_sizes"])
    conns, seen_done = parse_dump(data, seq=meta["seq"])
    assert seen_done
    assert len(conns) == meta["n_sockets"]
    by_ports = {(c.sport, c.dport): c for c in conns}
    for exp in meta["expected"]:
        got = by_ports[(exp["sport"], exp["dport"])]
        assert got == expected_conn(**exp), exp["name"]
    if meta["states_mask"] == states_mask(TCP_ESTABLISHED):
        assert {c.state for c in conns} == {TCP_ESTABLISHED}
    # The known byte counts, spelled out: 300000 acknowledged on the sender,
    # 300000 received on the receiver (+1 for the SYN on a connecting sender).
    named = {e["name"]: by_ports[(e["sport"], e["dport"])] for e in meta["expected"]}
    assert named["down server (sender)"].bytes_acked == 300_000
    assert named["down client (receiver)"].bytes_received == 300_000
    assert named["up server (receiver)"].bytes_received == 300_000
    assert named["up client (sender)"].bytes_acked == 300_000 + 1


@pytest.mark.parametrize("name", sorted(CAPTURES))
def test_capture_datagram_by_datagram(name: str) -> None:
    meta = CAPTURES[name]
    data = (DATA / name).read_bytes()
    whole, _ = parse_dump(data)
    parts: list[TcpConn] = []
    off = 0
    sizes = meta["datagram_sizes"]
    assert len(sizes) > 1  # a multi-part reply
    for i, size in enumerate(sizes):
        conns, seen_done = parse_dump(memoryview(data)[off : off + size], seq=meta["seq"])
        assert seen_done == (i == len(sizes) - 1)
        parts += conns
        off += size
    assert parts == whole


def test_capture_wrong_sequence_number() -> None:
    meta = CAPTURES["all_states.bin"]
    with pytest.raises(SockDiagError, match="sequence number"):
        parse_dump((DATA / "all_states.bin").read_bytes(), seq=meta["seq"] + 1)


def test_capture_cut_anywhere() -> None:
    data = (DATA / "all_states.bin").read_bytes()
    whole, _ = parse_dump(data)
    ends = boundaries(data)
    first_datagram = CAPTURES["all_states.bin"]["datagram_sizes"][0]
    cuts = list(range(first_datagram + 1)) + list(range(first_datagram, len(data), 13))
    for cut in cuts:
        if cut in ends:
            conns, seen_done = parse_dump(data[:cut])
            assert not seen_done
            assert conns == whole[: len(conns)]
        else:
            with pytest.raises(SockDiagError, match="offset"):
                parse_dump(data[:cut])


def test_capture_corrupted_bytes_raise_only_sockdiag_error() -> None:
    data = (DATA / "all_states.bin").read_bytes()
    rng = random.Random(20240601)
    for _ in range(400):
        buf = bytearray(data[:4000])
        for _ in range(rng.randint(1, 4)):
            buf[rng.randrange(len(buf))] = rng.randrange(256)
        try:
            parse_dump(bytes(buf))
        except SockDiagError:
            pass


# --- Hand-built replies -------------------------------------------------------


def test_hand_built_reply() -> None:
    data = diag_reply(sport=5001, dport=40000, inode=31337) + done()
    conns, seen_done = parse_dump(data, seq=SEQ)
    assert seen_done
    assert conns == [
        TcpConn(
            "10.1.2.3",
            5001,
            "10.4.5.6",
            40000,
            TCP_ESTABLISHED,
            123_456_789_012,
            987_654_321,
            31337,
        )
    ]
    conn = conns[0]
    assert hash(conn) == hash(
        TcpConn("10.1.2.3", 5001, "10.4.5.6", 40000, 1, 123_456_789_012, 987_654_321, 31337)
    )
    with pytest.raises(dataclasses.FrozenInstanceError):
        conn.sport = 1  # type: ignore[misc]
    assert not hasattr(conn, "__dict__")
    # bytearray and memoryview inputs parse the same.
    assert parse_dump(bytearray(data)) == parse_dump(memoryview(data)) == (conns, True)


def test_several_messages_noop_and_unknown_types_skipped() -> None:
    data = (
        diag_reply(1, 2, sport=1, dport=2)
        + nlmsg(NLMSG_NOOP, b"")
        + nlmsg(0x77, b"whatever")
        + nlmsg(NLMSG_ERROR, struct.pack("=i", 0) + bytes(16))  # an ACK, not an error
        + diag_reply(3, 4, sport=3, dport=4, state=TCP_LISTEN)
        + done()
        + b"ignored after NLMSG_DONE"
    )
    conns, seen_done = parse_dump(data)
    assert seen_done
    assert [(c.sport, c.bytes_acked, c.bytes_received, c.state) for c in conns] == [
        (1, 1, 2, TCP_ESTABLISHED),
        (3, 3, 4, TCP_LISTEN),
    ]


def test_message_without_tcp_info_reports_zero() -> None:
    data = nlmsg(SOCK_DIAG_BY_FAMILY, diag_msg(9, 10, inode=0) + nla(INET_DIAG_SHUTDOWN, b"\3"))
    conns, seen_done = parse_dump(data)
    assert not seen_done
    assert (conns[0].bytes_acked, conns[0].bytes_received, conns[0].inode) == (0, 0, 0)


@pytest.mark.parametrize(
    ("length", "acked", "received"),
    [(104, 0, 0), (120, 0, 0), (128, 55, 0), (136, 55, 66), (280, 55, 66)],
)
def test_short_tcp_info_of_older_kernels(length: int, acked: int, received: int) -> None:
    data = nlmsg(
        SOCK_DIAG_BY_FAMILY, diag_msg(1, 2) + nla(INET_DIAG_INFO, tcp_info(55, 66, length))
    )
    conns, _ = parse_dump(data)
    assert (conns[0].bytes_acked, conns[0].bytes_received) == (acked, received)


def test_ipv6_message() -> None:
    msg = diag_msg(443, 50000, src="2001:db8::1", dst="::ffff:10.0.0.9", family=socket.AF_INET6)
    conns, _ = parse_dump(nlmsg(SOCK_DIAG_BY_FAMILY, msg + nla(INET_DIAG_INFO, tcp_info(8, 9))))
    assert conns == [TcpConn("2001:db8::1", 443, "::ffff:10.0.0.9", 50000, 1, 8, 9, 777)]


@pytest.mark.parametrize("code", [errno.EINVAL, errno.ENOENT, errno.EPERM])
def test_error_reply_names_the_errno(code: int) -> None:
    request = build_request(seq=SEQ)
    data = nlmsg(NLMSG_ERROR, struct.pack("=i", -code) + request[:16], flags=0)
    with pytest.raises(SockDiagError, match=errno.errorcode[code]) as info:
        parse_dump(data)
    assert isinstance(info.value, CoflowkitError)
    assert os.strerror(code) in str(info.value)


def test_done_carrying_an_error() -> None:
    with pytest.raises(SockDiagError, match="EINTR"):
        parse_dump(nlmsg(NLMSG_DONE, struct.pack("=i", -errno.EINTR)))


def test_error_and_done_without_payload() -> None:
    with pytest.raises(SockDiagError, match="truncated NLMSG_ERROR at offset 0"):
        parse_dump(struct.pack("=IHHII", 16, NLMSG_ERROR, 0, SEQ, 0))
    assert parse_dump(struct.pack("=IHHII", 16, NLMSG_DONE, 0, SEQ, 0)) == ([], True)


def _with_len(msg: bytes, nlmsg_len: int) -> bytes:
    return struct.pack("=I", nlmsg_len) + msg[4:]


GOOD = diag_reply(sport=1, dport=2)
MALFORMED = {
    "nlmsg_len shorter than the header": (
        GOOD + _with_len(done(), 12),
        f"offset {len(GOOD)}: nlmsg_len 12",
    ),
    "nlmsg_len beyond the buffer": (_with_len(GOOD, len(GOOD) + 4), "exceeds"),
    "short inet_diag_msg": (
        nlmsg(SOCK_DIAG_BY_FAMILY, diag_msg(1, 2)[:60]),
        "truncated inet_diag_msg at offset 16: 60 bytes",
    ),
    "short inet_diag_msg, more messages after it": (
        nlmsg(SOCK_DIAG_BY_FAMILY, diag_msg(1, 2)[:40]) + GOOD + done(),
        "truncated inet_diag_msg at offset 16: 40 bytes",
    ),
    "nla_len below 4": (
        nlmsg(SOCK_DIAG_BY_FAMILY, diag_msg(1, 2) + struct.pack("=HH", 2, 8)),
        "attribute at offset 88: nla_len 2",
    ),
    "nla_len beyond the message": (
        nlmsg(SOCK_DIAG_BY_FAMILY, diag_msg(1, 2) + struct.pack("=HH", 400, 2) + tcp_info(1, 2)),
        "attribute at offset 88: nla_len 400",
    ),
    "trailing bytes after the attributes": (
        struct.pack("=IHHII", 16 + 72 + 2, SOCK_DIAG_BY_FAMILY, 2, SEQ, 0)
        + diag_msg(1, 2)
        + b"\0\0",
        "attribute at offset 88",
    ),
    "tcp_info too short": (
        nlmsg(SOCK_DIAG_BY_FAMILY, diag_msg(1, 2) + nla(INET_DIAG_INFO, tcp_info(1, 2, 100))),
        "tcp_info",
    ),
    "unknown address family": (
        nlmsg(SOCK_DIAG_BY_FAMILY, b"\x63" + diag_msg(1, 2)[1:]),
        "address family 99",
    ),
    "header cut short": (GOOD + done()[:10], f"offset {len(GOOD)}"),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed(case: str) -> None:
    data, message = MALFORMED[case]
    with pytest.raises(SockDiagError, match=message):
        parse_dump(data)


def test_hand_built_cut_at_every_offset() -> None:
    data = diag_reply(sport=1, dport=2) + diag_reply(sport=3, dport=4) + done()
    ends = boundaries(data)
    for cut in range(len(data)):
        if cut in ends:
            conns, seen_done = parse_dump(data[:cut])
            assert not seen_done
            assert [c.sport for c in conns] == [1, 3][: ends.index(cut)]
        else:
            with pytest.raises(SockDiagError):
                parse_dump(data[:cut])


def test_bench_parse_runs() -> None:
    assert sd.bench_parse(n_sockets=5, repeat=3) > 0


# --- Live ---------------------------------------------------------------------

LIVE_BYTES = 200_000
LIVE_TIMEOUT_S = 5.0


def _open_sockdiag() -> SockDiag:
    if not sys.platform.startswith("linux"):
        pytest.skip("sock_diag is Linux only")
    try:
        return SockDiag()
    except SockDiagError as exc:
        pytest.skip(f"no sock_diag here: {exc}")


def _outq(sock: socket.socket) -> int:
    raw = fcntl.ioctl(sock.fileno(), termios.TIOCOUTQ, struct.pack("i", 0))
    return struct.unpack("i", raw)[0]


def _recv_exactly(sock: socket.socket, n: int) -> None:
    while n:
        chunk = sock.recv(min(n, 1 << 16))
        assert chunk, "peer closed early"
        n -= len(chunk)


def test_live_loopback_transfer() -> None:
    with _open_sockdiag() as diag, socket.socket() as lst:
        lst.bind(("127.0.0.1", 0))
        lst.listen(1)
        with socket.create_connection(lst.getsockname(), timeout=LIVE_TIMEOUT_S) as client:
            server, _ = lst.accept()
            with server:
                server.settimeout(LIVE_TIMEOUT_S)
                deadline = time.monotonic() + LIVE_TIMEOUT_S
                # client -> server and server -> client, 200000 bytes each way,
                # read completely by the other side.
                sender = threading.Thread(target=client.sendall, args=(b"c" * LIVE_BYTES,))
                sender.start()
                _recv_exactly(server, LIVE_BYTES)
                sender.join(LIVE_TIMEOUT_S)
                server.sendall(b"s" * LIVE_BYTES)
                _recv_exactly(client, LIVE_BYTES)
                while _outq(client) or _outq(server):  # until everything is acknowledged
                    assert time.monotonic() < deadline, "data not acknowledged in time"
                    time.sleep(0.005)

                conns = diag.dump(states_mask(TCP_ESTABLISHED))
                again = diag.dump()  # a second dump on the same socket (next sequence number)
                by_ports = {(c.sport, c.dport): c for c in conns}
                cport, sport = client.getsockname()[1], lst.getsockname()[1]
                c = by_ports[(cport, sport)]
                s = by_ports[(sport, cport)]
                # The accepted socket sent 200000 bytes: all acknowledged; it received 200000.
                assert s.bytes_acked == LIVE_BYTES
                assert s.bytes_received == LIVE_BYTES
                # The client's acknowledged count includes its SYN.
                assert c.bytes_acked == LIVE_BYTES + 1
                assert c.bytes_received == LIVE_BYTES
                assert c.inode == os.fstat(client.fileno()).st_ino
                assert s.inode == os.fstat(server.fileno()).st_ino
                assert (c.src, c.dst, c.state) == ("127.0.0.1", "127.0.0.1", TCP_ESTABLISHED)
                assert any(x.state == TCP_LISTEN and x.sport == sport for x in again)
                assert time.monotonic() < deadline + 1.0


def test_live_error_reply_from_the_kernel() -> None:
    _open_sockdiag().close()
    request = bytearray(build_request(seq=3))
    request[17] = 253  # sdiag_protocol: none the kernel has a sock_diag handler for
    with socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, sd.NETLINK_SOCK_DIAG) as nl:
        nl.settimeout(LIVE_TIMEOUT_S)
        nl.sendto(bytes(request), (0, 0))
        reply = nl.recv(1 << 16)
    # Depending on where the kernel fails, the errno comes in NLMSG_ERROR or (as
    # here, 6.x: ENOENT) in the payload of NLMSG_DONE; both must raise, named.
    with pytest.raises(SockDiagError, match=r"at offset 0: E[A-Z]+ \("):
        parse_dump(reply, seq=3)


def test_live_recovers_after_a_failed_dump(monkeypatch: pytest.MonkeyPatch) -> None:
    with _open_sockdiag() as diag:
        diag.dump()
        first_sock = diag._sock

        def broken(data: object, *, seq: int | None = None) -> tuple[list[TcpConn], bool]:
            raise SockDiagError("injected")

        monkeypatch.setattr(sd, "parse_dump", broken)
        with pytest.raises(SockDiagError, match="injected"):
            diag.dump()
        monkeypatch.undo()
        assert diag._sock is not first_sock  # reopened: the unread reply is gone
        conns = diag.dump(family=socket.AF_INET)
        assert isinstance(conns, list)
        diag.dump(family=socket.AF_INET6)
    with pytest.raises(SockDiagError, match="closed"):
        diag.dump()


def test_live_silent_kernel_times_out_with_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    # A netlink message without NLM_F_REQUEST gets no reply at all: the receive
    # timeout (SO_RCVTIMEO) must end the dump with one clear error.
    with _open_sockdiag() as diag:
        diag.close()
    diag = SockDiag(timeout=0.05)
    real = sd.build_request

    def silent(*args: object, **kw: object) -> bytes:
        req = bytearray(real(*args, **kw))
        req[6:8] = b"\0\0"  # nlmsg_flags = 0
        return bytes(req)

    monkeypatch.setattr(sd, "build_request", silent)
    t0 = time.monotonic()
    with pytest.raises(SockDiagError, match=r"no reply from the kernel within 0\.05 s"):
        diag.dump()
    assert time.monotonic() - t0 < 2.0
    monkeypatch.undo()
    assert isinstance(diag.dump(), list)  # the next dump works on a fresh socket
    diag.close()
