"""atheris target: the master's HTTP API as a hostile client reaches it.

Each input is the raw bytes of one connection. They go through the real request
handler (`coflowkit.runtime.http_api.Handler`: the stdlib's HTTP parsing, then
ours: bearer tokens, Content-Length, strict JSON, the typed registration) over
an in-memory socket, against a stand-in master that accepts what the handler
passes on. Any exception escaping the handler, or an answer that is not a
well-formed HTTP status line, is a finding. ``benches/fuzz.py`` runs it.
"""

from __future__ import annotations

# The stdlib's HTTP and JSON parsers run but are not instrumented (that made
# each input ~100 times slower); coverage guidance comes from our modules.
import email.parser  # noqa: F401,E402
import http.server  # noqa: F401,E402
import io
import json  # noqa: F401,E402
import sys

import atheris
import coflowkit.runtime.proto  # noqa: F401,E402  (numpy, pandas: not instrumented)

with atheris.instrument_imports(
    include=["coflowkit.runtime.http_api", "coflowkit.runtime.registration"]
):
    from coflowkit.runtime import http_api, registration

TOKEN = "Z" * 20 + "abcdefghijklmnopqrstuvw"  # 43 characters, 24 distinct


class FakeSocket:
    def __init__(self, data: bytes):
        self.rfile = io.BytesIO(data)
        self.sent = bytearray()

    def makefile(self, mode, *args, **kwargs):
        return self.rfile

    def settimeout(self, _):
        pass

    def sendall(self, b):
        self.sent += b

    def getpeername(self):
        return ("127.0.0.1", 1)


class App:
    hosts = 16

    def get(self, path):
        return 200, {"path": path}, "application/json"

    def submit(self, reg):
        assert isinstance(reg, registration.Registration)
        assert all(isinstance(p, int) and 0 < p < 65536 for _, _, p, _ in reg.flows)
        return 201, {"id": reg.id}


class Server:
    read_timeout = 1.0
    max_body = 1 << 16
    app = App()

    def __init__(self, tokens):
        self.tokens = tokens


SERVERS = [Server(None), Server({TOKEN: frozenset({"read", "register"})})]


def one(data: bytes) -> None:
    if not data:
        return
    sock = FakeSocket(data[1:])
    http_api.Handler(sock, ("127.0.0.1", 1), SERVERS[data[0] & 1])
    if sock.sent:
        assert sock.sent.startswith(b"HTTP/1."), bytes(sock.sent[:40])
    # The registration path on its own, as JSON and as a decoded value.
    try:
        registration.parse(registration.loads(data[1:]), 16)
    except registration.RegistrationError:
        pass


def main() -> None:
    import logging

    logging.disable(logging.CRITICAL)  # the handler logs what it refuses
    atheris.Setup(sys.argv, one)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
