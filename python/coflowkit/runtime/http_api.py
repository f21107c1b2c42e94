"""The master's HTTP API: bounded, authenticated, typed.

* **Bounds.** At most ``max_inflight`` connections are served at once (a thread
  each); one more is answered ``503`` and closed without being read. Every read
  times out after ``read_timeout`` seconds, and a reaper closes any connection
  older than twice that, so a slow client (slowloris) holds a slot for a bounded
  time. A body needs a ``Content-Length`` of at most ``max_body`` bytes. Running
  out of file descriptors on accept pauses accepting briefly; it never stops the
  server.
* **Authentication.** ``Authorization: Bearer TOKEN`` with a token of the
  master's token file (:func:`coflowkit.runtime.tls.read_tokens`): scope
  ``read`` for ``GET``, ``register`` for ``POST /api/coflows``. Two answers need
  none: ``/`` (the dashboard's page, which holds no data) and ``/api/auth``
  (whether a token is needed and whether the request's is good). Without a token
  file the API is open, and then it may only listen on a loopback address. On a
  non-loopback address it speaks TLS with the master's certificate.
* **Typing.** A registration is parsed by :mod:`coflowkit.runtime.registration`
  before the round thread sees it. A request that fails for any other reason is
  a ``500`` naming nothing internal, and is logged.
"""

from __future__ import annotations

import errno
import hmac
import ipaddress
import json
import logging
import socket
import ssl
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from coflowkit._core import CoflowkitError
from coflowkit.runtime import dashboard, registration
from coflowkit.runtime.resources import LogLimiter

log = logging.getLogger("coflowkit.master.http")

FD_ERRORS = (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM)
BUSY = (
    b"HTTP/1.0 503 Service Unavailable\r\nContent-Type: application/json\r\n"
    b"Retry-After: 1\r\nContent-Length: 35\r\n\r\n"
    b'{"error": "too many requests"}     '
)


def is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


class ApiServer(ThreadingHTTPServer):
    """A ``ThreadingHTTPServer`` with the bounds above. ``app`` answers requests:
    ``app.get(path) -> (status, body, content_type)`` and
    ``app.submit(Registration) -> (status, body)``; ``hosts`` is the host count."""

    daemon_threads = True
    request_queue_size = 128

    def __init__(
        self,
        address: tuple[str, int],
        app,
        tokens: dict[str, frozenset[str]] | None = None,
        tls: ssl.SSLContext | None = None,
        max_inflight: int = 64,
        read_timeout: float = 10.0,
        max_body: int = 4 << 20,
    ):
        if max_inflight < 1:
            raise CoflowkitError(f"max in-flight HTTP requests must be >= 1, got {max_inflight}")
        if read_timeout <= 0:
            raise CoflowkitError(f"HTTP read timeout must be positive, got {read_timeout}")
        if tokens is None and not is_loopback(address[0]):
            raise CoflowkitError(
                f"--http {address[0]}:{address[1]} is not a loopback address: the API needs "
                "--api-tokens there (`coflowkit ca token`)"
            )
        self.app = app
        self.tokens = tokens
        self.tls = tls
        self.read_timeout = read_timeout
        self.max_body = max_body
        self.slots = threading.BoundedSemaphore(max_inflight)
        self.busy = 0
        # connection -> (its socket now, TLS-wrapped or not; when it was accepted)
        self.live: dict[socket.socket, tuple[socket.socket, float]] = {}
        self.live_lock = threading.Lock()
        self.limiter = LogLimiter(log)
        self.stopping = threading.Event()
        super().__init__(address, Handler)
        self._reaper = threading.Thread(target=self._reap, daemon=True)
        self._reaper.start()

    # -- accepting ------------------------------------------------------------
    def get_request(self):
        try:
            return super().get_request()
        except OSError as e:
            if e.errno in FD_ERRORS:
                # Out of descriptors: the listening socket stays readable, so
                # pause instead of spinning; the next accept may succeed.
                self.limiter.warn("accept", "http: cannot accept a connection: %s", e)
                time.sleep(0.05)
            raise

    def process_request(self, request, client_address):
        if not self.slots.acquire(blocking=False):
            self.busy += 1
            try:
                request.settimeout(0.2)
                request.sendall(BUSY)
            except OSError:
                pass
            self.shutdown_request(request)
            return
        self._track(request, request)
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._done(request)
            raise

    def process_request_thread(self, request, client_address):
        key = request
        try:
            if self.tls is not None:
                request.settimeout(self.read_timeout)
                try:
                    request = self.tls.wrap_socket(request, server_side=True)
                except (OSError, ssl.SSLError) as e:
                    self.limiter.warn(
                        "tls", "http: TLS handshake with %s failed: %s", client_address[0], e
                    )
                    self.shutdown_request(request)
                    return
                self._track(key, request)
            super().process_request_thread(request, client_address)
        finally:
            self._done(key)

    def _track(self, key, sock) -> None:
        with self.live_lock:
            started = self.live.get(key, (None, time.monotonic()))[1]
            self.live[key] = (sock, started)

    def _done(self, key) -> None:
        with self.live_lock:
            self.live.pop(key, None)
        self.slots.release()

    def handle_error(self, request, client_address):
        self.limiter.warn("error", "http: request from %s failed", client_address[0], exc_info=True)

    def _reap(self) -> None:
        """Closes connections older than twice the read timeout (slow clients)."""
        limit = 2 * self.read_timeout
        while not self.stopping.wait(min(1.0, self.read_timeout / 2)):
            now = time.monotonic()
            with self.live_lock:
                old = [s for s, t in self.live.values() if now - t > limit]
            for s in old:
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def server_close(self):
        self.stopping.set()
        super().server_close()


class Handler(BaseHTTPRequestHandler):
    server_version = "coflowkit-master"
    # Every answer has a status line, even to a request line that cannot be read
    # (the stdlib's default, HTTP/0.9, answers those with a bare body).
    default_request_version = "HTTP/1.0"
    server: ApiServer

    def send_error(self, code, message=None, explain=None):
        if self.request_version == "HTTP/0.9":  # set by a request line claiming it
            self.request_version = "HTTP/1.0"
            self.close_connection = True
        super().send_error(code, message, explain)

    def parse_request(self) -> bool:
        if not super().parse_request():
            return False
        if self.request_version == "HTTP/0.9":
            self.request_version = "HTTP/1.0"
            self.close_connection = True
            self.send_error(400, "HTTP/0.9 is not supported")
            return False
        return True

    def setup(self):
        self.timeout = self.server.read_timeout
        super().setup()

    def log_message(self, fmt, *args):  # to logging, not stderr
        log.debug("http %s " + fmt, self.client_address[0], *args)

    def _send(self, code: int, body, ctype: str = "application/json") -> None:
        data = (json.dumps(body) if ctype == "application/json" else body).encode()
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        if code == 401:
            self.send_header("WWW-Authenticate", 'Bearer realm="coflowkit"')
        self.end_headers()
        self.wfile.write(data)

    def _scopes(self) -> tuple[frozenset[str] | None, str | None]:
        """The scopes of the request's bearer token, or why it has none."""
        auth = self.headers.get("Authorization", "")
        kind, _, token = auth.partition(" ")
        if kind.lower() != "bearer" or not token:
            return None, "authentication required (Authorization: Bearer TOKEN)"
        token = token.strip()
        scopes = None
        for known, s in (self.server.tokens or {}).items():
            if hmac.compare_digest(known.encode(), token.encode()):
                scopes = s
        return (None, "unknown token") if scopes is None else (scopes, None)

    def _allowed(self, scope: str) -> bool:
        if self.server.tokens is None:
            return True
        scopes, why = self._scopes()
        if scopes is None:
            self._send(401, {"error": why})
            return False
        if scope not in scopes:
            self._send(403, {"error": f"this token lacks the {scope} scope"})
            return False
        return True

    def _auth(self) -> dict:
        """``GET /api/auth``: whether the API needs a token and whether this
        request's token is good for reading, always answered 200 (the dashboard
        asks here first, so a browser logs no failed request)."""
        if self.server.tokens is None:
            return {"required": False, "read": True}
        scopes, why = self._scopes()
        ok = scopes is not None and "read" in scopes
        return {"required": True, "read": ok, "error": None if ok else why or "no read scope"}

    def _guarded(self, fn) -> None:
        try:
            fn()
        except (OSError, ssl.SSLError):
            raise  # the connection broke: nothing to answer
        except Exception:
            log.exception("http: %s %s failed", self.command, self.path)
            try:
                self._send(500, {"error": "internal error (logged by the master)"})
            except OSError:
                pass

    def do_GET(self):
        self._guarded(self._get)

    def do_POST(self):
        self._guarded(self._post)

    def _get(self):
        path = self.path.split("?")[0]
        if path in ("/", "/index.html"):  # the dashboard: a page with no data in it
            self._send(200, dashboard.page(), "text/html; charset=utf-8")
            return
        if path == "/api/auth":
            self._send(200, self._auth())
            return
        if not self._allowed("read"):
            return
        status, body, ctype = self.server.app.get(path)
        self._send(status, body, ctype)

    def _post(self):
        path = self.path.split("?")[0]
        if path != "/api/coflows":
            self._send(404, {"error": f"no such endpoint {path}"})
            return
        if not self._allowed("register"):
            return
        length = self.headers.get("Content-Length")
        if length is None:
            self._send(411, {"error": "a POST needs a Content-Length"})
            return
        if not length.strip().isdigit():
            self._send(400, {"error": f"bad Content-Length {length[:40]!r}"})
            return
        n = int(length)
        if n > self.server.max_body:
            self._send(413, {"error": f"body of {n} bytes; at most {self.server.max_body}"})
            return
        body = self.rfile.read(n)
        if len(body) != n:
            self._send(400, {"error": f"body ended after {len(body)} of {n} bytes"})
            return
        try:
            reg = registration.parse(registration.loads(body), self.server.app.hosts)
        except registration.RegistrationError as e:
            self._send(400, {"error": str(e)})
            return
        status, result = self.server.app.submit(reg)
        self._send(status, result)
