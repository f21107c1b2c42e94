"""The protocol's frames (decoded in Rust, `coflowkit-runtime/src/wire.rs`) as the
Python side sees them, and the identities TLS sessions carry: the CA, certificates
naming a role, host and addresses, private key files and API tokens."""

import os
import socket
import ssl
import struct
import threading

import pytest
from coflowkit._core import CoflowkitError
from coflowkit.runtime import proto, tls


def test_every_message_round_trips_through_channels():
    a, m = proto.agent_channel(), proto.master_channel()
    hello = proto.Hello(3, 20, ["10.77.0.4", "192.168.1.9"], "host-3", b"b" * 16)
    rep = proto.Report(
        12.5,
        [proto.NewFlow(7, 40001, "10.77.0.2", 20005, 11.25, 300_000)],
        [(5, 1 << 40), (6, 123)],
        [(2, 999)],
    )
    frames = a.frame(proto.HELLO, proto.encode_hello(hello)) + a.frame(
        proto.REPORT, proto.encode_report(rep)
    )
    # Split anywhere: the reader reassembles (the REPORT is over the pre-HELLO
    # limit only if it is large; this one fits).
    got = m.feed(frames[:7]) + m.feed(frames[7:50]) + m.feed(frames[50:])
    assert [t for t, _ in got] == [proto.HELLO, proto.REPORT]
    assert proto.decode_hello(got[0][1]) == hello
    assert proto.decode_report(got[1][1]) == rep
    dec = [(7, proto.RATE, 1.25e6), (5, proto.CLASS, 3.0), (6, proto.UNLIMITED, 0.0)]
    ((t, p),) = a.feed(m.frame(proto.DECISIONS, proto.encode_decisions(dec)))
    assert t == proto.DECISIONS and proto.decode_decisions(p) == dec


def test_a_frame_over_the_limit_is_refused_from_its_length_alone():
    """A peer's first frame (its HELLO) may be 4 KiB; the length field of a
    16 MiB - 1 first frame is refused with nothing of it buffered. After the
    first frame, frames may be up to 16 MiB."""
    m = proto.master_channel()
    with pytest.raises(proto.ProtocolError, match=r"frame length 16777215 outside 12\.\.4096"):
        m.feed(struct.pack("<I", (16 << 20) - 1) + b"CK")
    m = proto.master_channel()
    hello = proto.encode_hello(proto.Hello(1, 10, ["10.0.0.2"], "x"))
    m.feed(
        proto.agent_channel().frame(proto.HELLO, hello)
        + struct.pack("<I", (16 << 20) - 1)
        + b"CK\x02\x03"
    )
    assert m.pending == 8  # held (and bounded by MAX_FRAME)


def test_sequence_type_and_version_are_checked():
    a, m = proto.agent_channel(), proto.master_channel()
    f0 = a.frame(proto.REPORT, proto.encode_report(proto.Report(1.0)))
    m.feed(f0)
    with pytest.raises(proto.ProtocolError, match="sequence 0, expected 1"):
        m.feed(f0)  # a replay within the session
    with pytest.raises(proto.ProtocolError, match="unexpected message DECISIONS"):
        proto.master_channel().feed(a.frame(proto.DECISIONS, b"\0\0\0\0"))
    bad = bytearray(proto.agent_channel().frame(proto.HELLO, b""))
    bad[6] = 1  # version 1: the HMAC protocol of before
    with pytest.raises(proto.ProtocolError, match="version 1 is not supported"):
        proto.master_channel().feed(bytes(bad))
    for cut in (3, 10):
        with pytest.raises(proto.ProtocolError, match="REPORT"):
            proto.decode_report(proto.encode_report(proto.Report(1.0))[:cut])
    with pytest.raises(proto.ProtocolError, match="HELLO"):
        proto.decode_hello(b"\x01")
    with pytest.raises(proto.ProtocolError, match="not an IPv4 address"):
        proto.encode_hello(proto.Hello(1, 10, ["nope"], "x"))


# -- identities -------------------------------------------------------------------


def test_certificates_name_role_host_and_addresses(pki):
    def peer(cert: str) -> tls.Identity:
        from cryptography import x509

        with open(os.path.join(pki, cert), "rb") as fh:
            c = x509.load_pem_x509_certificate(fh.read())
        san = c.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        alt = [("URI", u) for u in san.get_values_for_type(x509.UniformResourceIdentifier)]
        alt += [("IP Address", str(a)) for a in san.get_values_for_type(x509.IPAddress)]
        return tls.identity({"subjectAltName": tuple(alt)})

    assert peer("host-3.crt") == tls.Identity("host", 3, frozenset({"10.0.0.4"}))
    assert peer("master.crt") == tls.Identity("master", None, frozenset({"127.0.0.1"}))
    with pytest.raises(CoflowkitError, match="no single coflowkit role"):
        tls.identity({"subjectAltName": (("URI", "urn:other"),)})
    with pytest.raises(CoflowkitError, match="unknown role 'host:x'"):
        tls.identity({"subjectAltName": (("URI", "urn:coflowkit:host:x"),)})
    with pytest.raises(CoflowkitError, match="no verified certificate"):
        tls.identity(None)


def test_private_files_must_be_private_and_tokens_strong(tmp_path, pki):
    key = tmp_path / "k"
    key.write_text("x")
    os.chmod(key, 0o644)
    with pytest.raises(CoflowkitError, match=r"mode 0644 lets others read it; `chmod 600"):
        tls.check_private(str(key), "TLS key")
    os.chmod(key, 0o600)
    tls.check_private(str(key), "TLS key")
    # A world-readable host key is refused when the context is built.
    d = tmp_path / "tls"
    d.mkdir()
    for f in ("ca.crt", "host-1.crt", "host-1.key"):
        (d / f).write_bytes(open(os.path.join(pki, f), "rb").read())
    os.chmod(d / "host-1.key", 0o640)
    with pytest.raises(CoflowkitError, match="TLS key .*host-1.key: mode 0640"):
        tls.host_client_context(str(d), 1)
    os.chmod(d / "host-1.key", 0o600)
    tls.host_client_context(str(d), 1)
    # Tokens: private file, strong tokens, known scopes.
    t = tmp_path / "tokens"
    for text, msg in [
        ("password password\n", "too weak"),
        ("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa read\n", "too weak"),
        (f"{tls.new_token()} admin\n", "unknown scope admin"),
        (f"{tls.new_token()}\n", "expected `TOKEN SCOPE"),
        ("# nothing\n", "no token"),
    ]:
        t.write_text(text)
        os.chmod(t, 0o600)
        with pytest.raises(CoflowkitError, match=msg):
            tls.read_tokens(str(t))
    good = tls.new_token()
    t.write_text(f"# ops\n{good} read,register\n")
    os.chmod(t, 0o644)
    with pytest.raises(CoflowkitError, match="mode 0644"):
        tls.read_tokens(str(t))
    os.chmod(t, 0o600)
    assert tls.read_tokens(str(t)) == {good: frozenset({"read", "register"})}


def test_ca_refuses_to_be_made_twice_and_bad_ips(tmp_path):
    tls.init_ca(str(tmp_path))
    assert os.stat(tmp_path / "ca.key").st_mode & 0o777 == 0o600
    with pytest.raises(CoflowkitError, match="a CA is made once"):
        tls.init_ca(str(tmp_path))
    with pytest.raises(CoflowkitError, match="not an IP address"):
        tls.issue(str(tmp_path), 1, ["10.0.0.300"])


def _tls_pair(server_ctx, client_ctx):
    """A TLS handshake over a socket pair; returns (server, client) identities."""
    srv, cli = socket.socketpair()
    out = {}

    def serve():
        try:
            s = server_ctx.wrap_socket(srv, server_side=True)
            out["server_sees"] = tls.identity(s.getpeercert())
        except (ssl.SSLError, OSError) as e:
            out["server_error"] = e

    t = threading.Thread(target=serve)
    t.start()
    try:
        c = client_ctx.wrap_socket(cli)
        out["client_sees"] = tls.identity(c.getpeercert())
    except (ssl.SSLError, OSError) as e:
        out["client_error"] = e
        cli.close()
    t.join(10)
    return out


def test_mutual_tls_gives_each_side_the_others_identity(pki, tmp_path):
    got = _tls_pair(tls.master_context(pki), tls.host_client_context(pki, 2))
    assert got["server_sees"] == tls.Identity("host", 2, frozenset({"10.0.0.3"}))
    assert got["client_sees"].role == "master"
    # A certificate from another CA is refused by the master.
    other = tmp_path / "other"
    tls.init_ca(str(other))
    tls.issue(str(other), 2, ["10.0.0.3"])
    ctx = tls.host_client_context(str(other), 2)
    ctx.load_verify_locations(os.path.join(pki, "ca.crt"))  # it trusts our master
    got = _tls_pair(tls.master_context(pki), ctx)
    assert "server_error" in got and "server_sees" not in got
