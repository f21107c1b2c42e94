"""Hostile inputs in CI: every value a JSON body can hold through the registration
parser, random bytes through the protocol's decoders and the API's request
handler. Each must end in a typed refusal, never another exception. The long
coverage-guided runs are recorded in docs/results/runtime/fuzz.md
(benches/fuzz.py)."""

from __future__ import annotations

import io
import json
import logging
import math
import re
import struct

from coflowkit import _core
from coflowkit.runtime import http_api, proto, registration
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

SETTINGS = settings(max_examples=1500, deadline=None, suppress_health_check=list(HealthCheck))

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=5),
    max_leaves=20,
)  # fmt: skip
host = st.one_of(
    st.integers(min_value=-3, max_value=20), st.booleans(), st.floats(allow_nan=False),
    st.sampled_from(["10.0.0.1", "3", "x", "", "1.2.3"]),
)  # fmt: skip
flow = st.fixed_dictionaries(
    {"src": host, "dst": host, "dst_port": st.one_of(st.integers(-2, 70000), st.booleans(), st.none())},
    optional={"size": st.one_of(st.integers(-5, 2**64), st.floats(), st.booleans(), st.text(max_size=3)),
              "extra": st.integers()},
)  # fmt: skip
body = st.fixed_dictionaries(
    {"id": st.one_of(st.integers(-1, 2**63), st.booleans(), st.floats()), "flows": st.lists(flow, max_size=4)}
)  # fmt: skip


def _check(value) -> None:
    try:
        reg = registration.parse(value, 16)
    except registration.RegistrationError:
        return
    # Whatever is accepted is exactly typed.
    assert type(reg.id) is int and 0 <= reg.id < 2**62 and 1 <= len(reg.flows)
    for src, dst, port, size in reg.flows:
        for h in (src, dst):
            assert (type(h) is int and 0 <= h < 16) or (type(h) is str and proto.ipv4(h))
        assert src != dst and type(port) is int and 0 < port < 65536
        assert size is None or (type(size) is float and math.isfinite(size) and 0 < size < 2**63)


@SETTINGS
@given(json_values)
def test_any_json_value_is_parsed_or_refused_with_a_registration_error(value):
    _check(value)


@SETTINGS
@given(body)
def test_registration_shaped_bodies_are_typed_exactly(value):
    _check(value)
    try:
        decoded = registration.loads(json.dumps(value).encode())
    except registration.RegistrationError as e:  # json.dumps writes inf and nan as such
        assert re.search(r"(Infinity|NaN) is not a number JSON allows", str(e)), e
        return
    _check(decoded)


@SETTINGS
@given(st.binary(max_size=300))
def test_random_bytes_are_refused_as_bad_json_or_parsed(data):
    try:
        _check(registration.loads(data))
    except registration.RegistrationError:
        pass


@SETTINGS
@given(
    st.binary(max_size=200), st.sampled_from(["hello", "report", "decisions", "classes", "units"])
)
def test_payload_decoders_raise_only_protocol_errors(data, kind):
    decode = {"hello": proto.decode_hello, "report": proto.decode_report,
              "decisions": proto.decode_decisions, "classes": _core.decode_classes,
              "units": _core.decode_units}[kind]  # fmt: skip
    try:
        decode(data)
    except proto.ProtocolError:
        pass


@SETTINGS
@given(st.lists(st.binary(max_size=64), max_size=6))
def test_frame_readers_hold_at_most_one_bounded_frame(chunks):
    ch = proto.master_channel()
    try:
        for c in chunks:
            ch.feed(struct.pack("<I", len(c)) + c)
            assert ch.pending <= proto.MAX_FRAME + 4
    except proto.ProtocolError:
        pass


class _Sock:
    def __init__(self, data: bytes):
        self.rfile = io.BytesIO(data)
        self.sent = bytearray()

    def makefile(self, *a, **k):
        return self.rfile

    def settimeout(self, _):
        pass

    def sendall(self, b):
        self.sent += b


class _App:
    hosts = 4

    def get(self, path):
        return 200, {}, "application/json"

    def submit(self, reg):
        return 201, {"id": reg.id}


class _Server:
    read_timeout = 1.0
    max_body = 4096
    app = _App()
    tokens = {"T" * 20 + "abcdefghijklmnopqrstuvw": frozenset({"read"})}


request_line = st.sampled_from(
    [b"GET /api/health", b"POST /api/coflows", b"PUT /", b"GET", b"\xff"]
)
version = st.sampled_from([b" HTTP/1.1", b" HTTP/1.0", b" HTTP/0.9", b"", b" HTTP/9"])
header = st.sampled_from([b"Content-Length: 5", b"Content-Length: -1", b"Authorization: Bearer x",
                          b"Authorization: Bearer " + b"T" * 20 + b"abcdefghijklmnopqrstuvw", b"X: \xff"])  # fmt: skip


@SETTINGS
@given(request_line, version, st.lists(header, max_size=3), st.binary(max_size=40))
def test_the_api_handler_answers_any_request_with_a_status_line(line, ver, headers, rest):
    logging.disable(logging.CRITICAL)
    try:
        s = _Sock(line + ver + b"\r\n" + b"".join(h + b"\r\n" for h in headers) + b"\r\n" + rest)
        http_api.Handler(s, ("127.0.0.1", 1), _Server())
    finally:
        logging.disable(logging.NOTSET)
    assert not s.sent or s.sent.startswith(b"HTTP/1."), bytes(s.sent[:30])
