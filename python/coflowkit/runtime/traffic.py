"""The per-host traffic worker of the network-namespace testbed.

One worker process runs inside each host's network namespace and replays its part of
a coflow workload with real TCP: it receives every flow whose ``dst`` is its host and
sends every flow whose ``src`` is its host, and checks every received byte.

The plan (one JSON file for all hosts, written by the orchestrator)::

    {"t0": 1700000000.0,                  # time.time() epoch of workload time 0
     "hosts": ["10.77.0.1", ...],         # IPv4 address of host i on the data network
     "flows": [{"id": 0, "coflow": 3, "src": 0, "dst": 5, "port": 20001,
                "bytes": 1234567, "start_s": 0.25}, ...],
     "deadline_s": 600}                   # give up at t0 + deadline_s

``port`` is the TCP port the receiver (host ``dst``) listens on for that flow, unique
per (dst, port). Command line::

    python -m coflowkit.runtime.traffic --plan PLAN.json --host I --out RESULT.json \\
        [--ready FILE] [--go FILE]

The worker binds and listens on ``(hosts[I], port)`` for each flow it receives, then
writes ``ok`` to the ``--ready`` file (atomically, by rename; also when a bind failed,
which errors that flow). With ``--go``, it then waits for that file, ``{"t0": T}``,
and replays from ``T`` instead of the plan's ``t0``: the orchestrator writes it once
every host listens, so no flow starts before its receiver, and none starts late
because a worker was slow to start. At ``t0 + start_s`` it
connects from ``hosts[I]`` to each flow's receiver, sends the flow's bytes of
:func:`pattern` and half-closes; the receiver reads to EOF, checks the peer address,
the byte count and the content, and closes. When every flow is done (or errored), at
the deadline, or on SIGTERM/SIGINT, the worker writes ``--out`` atomically::

    {"host": I, "errors": 1, "scheduler": "other",
     "flows": [{"id": 0, "role": "send", "start": ..., "end": ..., "bytes": 1234567,
                "error": null}, ...]}

Times are absolute ``time.time()`` epochs (``null`` when never reached). Send records:
``start`` just before the first connect attempt, ``end`` once all bytes were handed to
the kernel and the write side shut down, ``bytes`` handed to the kernel. Receive
records: ``start`` at accept, ``end`` when the last expected byte arrived (EOF time for
empty flows or on error), ``bytes`` received. Exit codes: 0 no errors, 3 some flow
errored (including ``"deadline"`` and ``"terminated"``), 2 bad plan or arguments
(nothing written to ``--out``).

:func:`load_plan` validates a plan, :func:`collect` merges the hosts' results into
per-flow and per-coflow times relative to ``t0``. Pure standard library.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import ipaddress
import json
import math
import os
import signal
import socket
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any

PATTERN_LEN = 65536
"""Length of a flow's pattern: byte k of a flow's stream is ``pattern(id)[k % PATTERN_LEN]``."""

CHUNK = 4 * PATTERN_LEN
"""Bytes per ``sendall`` and per ``recv_into`` (a multiple of the pattern length)."""

PROGRESS_MARKS = 64
"""A receiver notes the time each time another 1/64 of its flow has arrived."""

CONNECT_RETRY_S = 2.0
"""How long a sender retries a refused connection (its receiver may start late)."""

EXIT_OK, EXIT_BAD_PLAN, EXIT_FLOW_ERRORS = 0, 2, 3

LEAD_S = 0.2
"""A sender's thread is started this long before its flow's start and sleeps
until it: a thread started late (the GIL, a loaded host) no longer delays a flow."""

GO_WAIT_S = 120.0
"""How long a worker given ``--go`` waits for that file before giving up."""

_POLL_S = 0.2  # main loop wake-up: bounds the latency of SIGTERM handling
_THREAD_STACK = 512 * 1024  # hundreds of flow threads: keep their reserved stacks small
# Linux: bind the source address without reserving a port until connect(), so
# bind-before-connect shares the ephemeral range per 4-tuple (named in Python 3.12+).
_IP_BIND_ADDRESS_NO_PORT: int | None = getattr(
    socket, "IP_BIND_ADDRESS_NO_PORT", 24 if sys.platform.startswith("linux") else None
)


@functools.lru_cache(maxsize=256)
def pattern(flow_id: int) -> bytes:
    """The :data:`PATTERN_LEN` bytes that flow ``flow_id`` repeats: BLAKE2b in counter
    mode, block ``c`` (64 bytes) being ``blake2b(b"coflowkit-traffic:%d:%d" % (flow_id,
    c), digest_size=64)``. Byte ``k`` of the flow's stream is ``pattern[k % PATTERN_LEN]``;
    different flows have different patterns, so a misrouted connection fails the check."""
    return b"".join(
        hashlib.blake2b(b"coflowkit-traffic:%d:%d" % (flow_id, c), digest_size=64).digest()
        for c in range(PATTERN_LEN // 64)
    )


# ---------------------------------------------------------------------------- the plan

_FLOW_INT_FIELDS = ("coflow", "src", "dst", "port", "bytes")


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _is_number(x: Any) -> bool:
    return (isinstance(x, (int, float)) and not isinstance(x, bool)) and math.isfinite(x)


def validate_plan(plan: Any) -> dict[str, Any]:
    """``plan`` itself if it is a valid plan; otherwise :class:`ValueError` whose
    message names the field (and the flow id, for a flow's field)."""
    if not isinstance(plan, dict):
        raise ValueError("bad plan: the top level must be a JSON object")
    for key in ("t0", "hosts", "flows", "deadline_s"):
        if key not in plan:
            raise ValueError(f"bad plan: missing key {key!r}")
    if not _is_number(plan["t0"]):
        raise ValueError(f"bad plan: 't0' = {plan['t0']!r} is not a finite number")
    deadline = plan["deadline_s"]
    if not _is_number(deadline) or deadline <= 0:
        raise ValueError(f"bad plan: 'deadline_s' = {deadline!r} is not a number > 0")

    hosts = plan["hosts"]
    if not isinstance(hosts, list) or not hosts:
        raise ValueError("bad plan: 'hosts' must be a non-empty list of IPv4 addresses")
    seen_hosts: dict[str, int] = {}
    for i, h in enumerate(hosts):
        try:
            ipaddress.IPv4Address(h)
        except (ipaddress.AddressValueError, ValueError, TypeError):
            raise ValueError(f"bad plan: 'hosts[{i}]' = {h!r} is not an IPv4 address") from None
        if h in seen_hosts:
            raise ValueError(f"bad plan: 'hosts[{i}]' = {h!r} repeats 'hosts[{seen_hosts[h]}]'")
        seen_hosts[h] = i

    flows = plan["flows"]
    if not isinstance(flows, list):
        raise ValueError("bad plan: 'flows' must be a list")
    ids: dict[int, int] = {}
    listeners: dict[tuple[int, int], int] = {}
    for index, f in enumerate(flows):
        if not isinstance(f, dict):
            raise ValueError(f"bad plan: 'flows[{index}]' is not an object")
        if "id" not in f:
            raise ValueError(f"bad plan: flow at index {index}: missing key 'id'")
        fid = f["id"]
        if not _is_int(fid):
            raise ValueError(f"bad plan: flow at index {index}: 'id' = {fid!r} is not an integer")
        if fid in ids:
            raise ValueError(f"bad plan: flow {fid}: duplicate 'id' (also flows[{ids[fid]}])")
        ids[fid] = index
        where = f"bad plan: flow {fid}"
        for key in (*_FLOW_INT_FIELDS, "start_s"):
            if key not in f:
                raise ValueError(f"{where}: missing key {key!r}")
        for key in _FLOW_INT_FIELDS:
            if not _is_int(f[key]):
                raise ValueError(f"{where}: {key!r} = {f[key]!r} is not an integer")
        for key in ("src", "dst"):
            if not 0 <= f[key] < len(hosts):
                raise ValueError(
                    f"{where}: {key!r} = {f[key]} is out of range ({len(hosts)} hosts)"
                )
        if not 1 <= f["port"] <= 65535:
            raise ValueError(f"{where}: 'port' = {f['port']} is not in 1..65535")
        if f["bytes"] < 0:
            raise ValueError(f"{where}: 'bytes' = {f['bytes']} is negative")
        if not _is_number(f["start_s"]) or f["start_s"] < 0:
            raise ValueError(f"{where}: 'start_s' = {f['start_s']!r} is not a number >= 0")
        key2 = (f["dst"], f["port"])
        if key2 in listeners:
            raise ValueError(
                f"{where}: 'port' = {f['port']} on dst host {f['dst']} is already used by "
                f"flow {listeners[key2]} (duplicate (dst, port))"
            )
        listeners[key2] = fid
    return plan


def load_plan(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The validated plan in the JSON file ``path``; :class:`ValueError` (naming the
    field and flow id) when it is unreadable, not JSON, or not a valid plan."""
    try:
        with open(path, encoding="utf-8") as fh:
            plan = json.load(fh)
    except OSError as e:
        raise ValueError(f"cannot read the plan {os.fspath(path)!r}: {e}") from None
    except json.JSONDecodeError as e:
        raise ValueError(f"bad plan: {os.fspath(path)!r} is not valid JSON: {e}") from None
    return validate_plan(plan)


# -------------------------------------------------------------------------- the worker


@dataclass
class FlowRecord:
    """What one host saw of one flow in one role (``"send"`` or ``"recv"``)."""

    id: int
    role: str
    start: float | None = None
    end: float | None = None
    nbytes: int = 0
    error: str | None = None
    done: bool = False
    # Receive records: (time, bytes received) at accept, each time another
    # 1/PROGRESS_MARKS of the flow has arrived, and at its last byte (at most
    # PROGRESS_MARKS + 2 pairs).
    marks: list[tuple[float, int]] | None = None
    # Send records: when `connect` returned (the handshake done on this side).
    connected: float | None = None

    def as_json(self) -> dict[str, Any]:
        d = {
            "id": self.id,
            "role": self.role,
            "start": self.start,
            "end": self.end,
            "bytes": self.nbytes,
            "error": self.error,
        }
        if self.marks is not None:
            d["marks"] = self.marks
        if self.connected is not None:
            d["connected"] = self.connected
        return d


def _first_mismatch(ref: bytes, offset: int, data: memoryview) -> int:
    """The index of the first byte of ``data`` that differs from ``ref[offset:]``
    (``data`` is known to differ): a binary search on the matching prefix length."""
    lo, hi = 0, len(data)  # data[:lo] matches, data[:hi] does not
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ref.startswith(data[:mid], offset):
            lo = mid
        else:
            hi = mid
    return lo


class Worker:
    """The flows of host ``host`` of ``plan``: :meth:`run` replays them and returns
    their records. ``stop`` is polled: set ``stop[0] = True`` (from a signal handler,
    say) to end the run early, recording unfinished flows as ``"terminated"``."""

    def __init__(self, plan: dict[str, Any], host: int, stop: list[bool] | None = None) -> None:
        self.plan = plan
        self.host = host
        self.hosts: list[str] = plan["hosts"]
        self.addr = self.hosts[host]
        self.t0 = float(plan["t0"])
        self.deadline = self.t0 + float(plan["deadline_s"])
        self.stop = stop if stop is not None else [False]
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._final = False
        self.sends = [f for f in plan["flows"] if f["src"] == host]
        self.recvs = [f for f in plan["flows"] if f["dst"] == host]
        self.records: list[FlowRecord] = []
        self._send_rec: dict[int, FlowRecord] = {}
        self._recv_rec: dict[int, FlowRecord] = {}
        for f in plan["flows"]:  # plan order; a flow from a host to itself has both
            if f["src"] == host:
                self._send_rec[f["id"]] = r = FlowRecord(f["id"], "send")
                self.records.append(r)
            if f["dst"] == host:
                self._recv_rec[f["id"]] = r = FlowRecord(f["id"], "recv")
                self.records.append(r)
        self._pending = len(self.records)  # records not yet done

    # -- bookkeeping

    def _finish(self, rec: FlowRecord, error: str | None = None) -> None:
        """Mark ``rec`` done (with ``error``), unless the run is already over."""
        with self._lock:
            if self._final or rec.done:
                return
            rec.error = error
            rec.done = True
            self._pending -= 1
        self._wake.set()

    def _spawn(self, name: str, owner: FlowRecord | str, target: Any, *args: Any) -> None:
        """Run ``target(*args)`` in a daemon thread. If the thread cannot start or
        ``target`` fails unexpectedly, the flows it owns (one record, or every record
        of a role) become errors at once rather than waiting for the deadline."""

        def fail(text: str) -> None:
            if isinstance(owner, FlowRecord):
                self._finish(owner, f"flow {owner.id} {owner.role}: {text}")
            else:
                for r in self.records:
                    if r.role == owner:
                        self._finish(r, f"flow {r.id} {r.role}: {text}")

        def guarded() -> None:
            try:
                target(*args)
            except Exception as e:  # a bug, not a network error: keep the worker going
                fail(f"internal error in thread {name}: {e!r}")

        try:
            threading.Thread(target=guarded, name=name, daemon=True).start()
        except RuntimeError as e:  # can't start new thread
            fail(f"cannot start a thread: {e}")

    # -- the run

    def run(self, ready: str | None = None, go: str | None = None) -> list[dict[str, Any]]:
        """Listen, signal readiness, (with ``go``) wait for the start time, send and
        receive; return the records (as JSON objects, plan order) once all flows are
        done, at the deadline, or on stop."""
        _raise_fd_limit(len(self.records) + 64)
        old_stack = threading.stack_size(_THREAD_STACK)
        try:
            listeners = self._listen()
            if ready:
                _write_atomic(ready, "ok")
            if go:
                self._await_go(go)
            self._spawn("accept", "recv", self._launch_receivers, listeners)
            self._spawn("launch", "send", self._launch_senders)
            reason = self._wait()
        finally:
            threading.stack_size(old_stack)
        return self._finalize(reason)

    def _await_go(self, path: str) -> None:
        """Waits for ``path`` (``{"t0": T}``, written atomically) and replays from
        ``T``; a :class:`ValueError` after :data:`GO_WAIT_S` or on a bad file."""
        give_up = time.monotonic() + GO_WAIT_S
        while not os.path.exists(path):
            if self.stop[0]:
                return
            if time.monotonic() > give_up:
                raise ValueError(f"no start time in {path} after {GO_WAIT_S:g} s")
            time.sleep(0.002)
        with open(path, encoding="utf-8") as fh:
            try:
                t0 = json.load(fh).get("t0")
            except (ValueError, AttributeError):
                t0 = None
        if not _is_number(t0):
            raise ValueError(f"{path}: 't0' is not a finite number")
        self.t0 = float(t0)
        self.deadline = self.t0 + float(self.plan["deadline_s"])

    def _wait(self) -> str | None:
        """Block until all flows are done (``None``), the deadline (``"deadline"``) or a
        stop request (``"terminated"``)."""
        while True:
            self._wake.clear()
            if self.stop[0]:
                return "terminated"
            if self._pending == 0:
                return None
            remaining = self.deadline - time.time()
            if remaining <= 0:
                return "deadline"
            # Event.set is not safe in a signal handler, hence polling for stop.
            self._wake.wait(min(remaining, _POLL_S))

    def _finalize(self, reason: str | None) -> list[dict[str, Any]]:
        with self._lock:
            self._final = True
            out = []
            for r in self.records:
                d = r.as_json()
                if not r.done and d["error"] is None:
                    d["error"] = reason or "unfinished"
                out.append(d)
        return out

    # -- receivers

    def _listen(self) -> dict[socket.socket, dict[str, Any]]:
        """A listening socket per received flow (a failure errors that flow only)."""
        listeners: dict[socket.socket, dict[str, Any]] = {}
        for f in self.recvs:
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            try:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                s.bind((self.addr, f["port"]))
                s.listen(8)
                s.setblocking(False)
            except OSError as e:
                s.close()
                self._finish(
                    self._recv_rec[f["id"]],
                    f"flow {f['id']} recv: cannot listen on {self.addr}:{f['port']}: {e}",
                )
                continue
            listeners[s] = f
        return listeners

    def _launch_receivers(self, listeners: dict[socket.socket, dict[str, Any]]) -> None:
        """Start each received flow's thread :data:`LEAD_S` before its flow's
        ``t0 + start_s``; the thread waits in ``accept`` on the flow's own
        listening socket. A connection is so taken the moment the kernel has it:
        no shared accept loop to wake and no thread to start on the flow's time
        (each cost a new flow tens of milliseconds on a busy worker)."""
        sock_of = {f["id"]: s for s, f in listeners.items()}
        for f in self._in_time(listeners.values()):
            rec = self._recv_rec[f["id"]]
            lsock = sock_of.pop(f["id"])
            self._spawn(f"recv-{f['id']}", rec, self._accept_and_receive, lsock, f, rec)
        for lsock in sock_of.values():  # stopped before their time
            lsock.close()

    def _accept_and_receive(self, lsock: socket.socket, f: dict[str, Any], rec: FlowRecord) -> None:
        """Accept the flow's one connection (until the deadline), then receive it."""
        with lsock:
            try:
                lsock.settimeout(max(0.1, self.deadline - time.time()))
                conn, peer = lsock.accept()
            except TimeoutError:
                return  # never came: the deadline reports it
            except OSError as e:
                self._finish(rec, f"flow {f['id']} recv: accept failed: {e}")
                return
        rec.start = time.time()
        self._receive(conn, peer, f, rec)

    def _receive(
        self, conn: socket.socket, peer: tuple[str, int], f: dict[str, Any], rec: FlowRecord
    ) -> None:
        fid = f["id"]
        try:
            with conn:
                conn.setblocking(True)
                want = self.hosts[f["src"]]
                if peer[0] != want:
                    rec.end = time.time()
                    self._finish(
                        rec,
                        f"flow {fid} recv: connection from unexpected peer {peer[0]}:{peer[1]}"
                        f" (expected {want})",
                    )
                    return
                error = self._read_and_check(conn, f, rec)
            self._finish(rec, error)
        except OSError as e:
            rec.end = time.time()
            self._finish(rec, f"flow {fid} recv: after {rec.nbytes} bytes: {e}")

    @staticmethod
    def _read_and_check(conn: socket.socket, f: dict[str, Any], rec: FlowRecord) -> str | None:
        """Read ``conn`` to EOF, checking each buffer against the flow's pattern with
        one ``memcmp`` (``bytes.startswith`` on a memoryview); after an error keep
        draining (so the sender finishes cleanly) without checking. Sets ``rec.nbytes``
        and ``rec.end``; returns the error text or ``None``."""
        fid, expected = f["id"], f["bytes"]
        # ref[o : o + CHUNK] is the stream from any offset o < PATTERN_LEN on.
        ref = pattern(fid) * (CHUNK // PATTERN_LEN + 1)
        buf = bytearray(CHUNK)
        view = memoryview(buf)
        got = 0
        error: str | None = None
        last_byte: float | None = None
        step = max(1, expected // PROGRESS_MARKS)
        next_mark = step
        rec.marks = [(time.time(), 0)]
        while True:
            n = conn.recv_into(buf)
            if n == 0:
                break
            if error is None:
                good = max(0, min(n, expected - got))
                offset = got % PATTERN_LEN
                if good and not ref.startswith(view[:good], offset):
                    k = got + _first_mismatch(ref, offset, view[:good])
                    error = f"flow {fid} recv: content differs from the pattern at byte offset {k}"
                elif n > good:
                    error = f"flow {fid} recv: received more than the expected {expected} bytes"
            got += n
            rec.nbytes = got
            if got >= next_mark or (last_byte is None and got >= expected):
                rec.marks.append((time.time(), got))
                next_mark = (got // step + 1) * step
            if last_byte is None and got >= expected:
                last_byte = time.time()
        eof = time.time()
        if error is None and got != expected:
            error = f"flow {fid} recv: received {got} bytes, expected {expected}"
        rec.end = last_byte if (error is None and last_byte is not None) else eof
        return error

    # -- senders

    def _in_time(self, flows) -> Any:
        """Yields each of ``flows`` :data:`LEAD_S` before its ``t0 + start_s``, in
        start order; stops early on a stop request or once the run is final."""
        for f in sorted(flows, key=lambda f: (f["start_s"], f["id"])):
            at = self.t0 + f["start_s"] - LEAD_S
            while True:
                if self.stop[0] or self._final:
                    return
                delay = at - time.time()
                if delay <= 0:
                    break
                time.sleep(min(delay, 1.0))
            yield f

    def _launch_senders(self) -> None:
        """Start each sending thread :data:`LEAD_S` before its flow's
        ``t0 + start_s``; the thread sleeps until then."""
        for f in self._in_time(self.sends):
            rec = self._send_rec[f["id"]]
            self._spawn(f"send-{f['id']}", rec, self._send, f, rec)

    def _connect(self, f: dict[str, Any]) -> socket.socket:
        """A connection from ``(addr, 0)`` to the flow's receiver, retrying a refused
        connection for :data:`CONNECT_RETRY_S`."""
        dst = (self.hosts[f["dst"]], f["port"])
        give_up = time.monotonic() + CONNECT_RETRY_S
        while True:
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            try:
                if _IP_BIND_ADDRESS_NO_PORT is not None:
                    try:
                        s.setsockopt(socket.IPPROTO_IP, _IP_BIND_ADDRESS_NO_PORT, 1)
                    except OSError:
                        pass
                s.bind((self.addr, 0))
                s.settimeout(max(0.1, self.deadline - time.time()))
                s.connect(dst)
                s.settimeout(None)
                return s
            except ConnectionRefusedError as e:
                s.close()
                if time.monotonic() >= give_up:
                    raise ConnectionRefusedError(
                        e.errno, f"connection refused (retried for {CONNECT_RETRY_S:g} s)"
                    ) from None
                time.sleep(0.05)
            except BaseException:
                s.close()
                raise

    def _send(self, f: dict[str, Any], rec: FlowRecord) -> None:
        fid, total = f["id"], f["bytes"]
        dst = f"{self.hosts[f['dst']]}:{f['port']}"
        pattern(fid)  # computed before the start, not on the flow's time
        at = self.t0 + f["start_s"]
        while not self.stop[0] and (delay := at - time.time()) > 0:
            time.sleep(min(delay, _POLL_S))
        rec.start = time.time()
        try:
            sock = self._connect(f)
            rec.connected = time.time()
        except OSError as e:
            rec.end = time.time()
            self._finish(rec, f"flow {fid} send: connect to {dst}: {e}")
            return
        with sock:
            try:
                chunk = memoryview(pattern(fid) * (CHUNK // PATTERN_LEN))
                left = total
                while left > 0:
                    m = min(left, CHUNK)
                    sock.sendall(chunk[:m])
                    left -= m
                    rec.nbytes += m
                sock.shutdown(socket.SHUT_WR)
                rec.end = time.time()
            except OSError as e:
                rec.end = time.time()
                self._finish(rec, f"flow {fid} send: to {dst} after {rec.nbytes} bytes: {e}")
                return
            # Wait for the receiver to close, so the connection goes away cleanly. Its
            # own record is authoritative on delivery, so a failure here is not an error.
            try:
                sock.settimeout(max(0.1, self.deadline - time.time()))
                while sock.recv(65536):
                    pass
            except OSError:
                pass
        self._finish(rec, None)


def _raise_fd_limit(needed: int) -> None:
    """Raise the soft open-files limit towards the hard one if ``needed`` exceeds it."""
    try:
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft != resource.RLIM_INFINITY and soft < needed:
            new = needed if hard == resource.RLIM_INFINITY else min(needed, hard)
            resource.setrlimit(resource.RLIMIT_NOFILE, (new, hard))
    except (ImportError, OSError, ValueError):
        pass


def _write_atomic(path: str, text: str) -> None:
    tmp = f"{path}.tmp.{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.replace(tmp, path)


# ------------------------------------------------------------------------- the results


def _scheduler() -> str:
    """This process's scheduling policy: ``rr`` or ``fifo`` (real-time, as the
    testbed's ``--traffic-priority control``), ``other`` (normal), or its number."""
    names = {os.SCHED_OTHER: "other", os.SCHED_RR: "rr", os.SCHED_FIFO: "fifo"}
    p = os.sched_getscheduler(0)
    return names.get(p, str(p))


def collect(results: list[dict[str, Any]], plan: dict[str, Any]) -> dict[str, Any]:
    """Merge all hosts' result files into times relative to ``plan["t0"]``::

        {"flows":   [{"id", "coflow", "planned", "start", "end", "bytes", "error", "marks"}, ...],  # plan order
         "coflows": [{"coflow", "start", "end", "error"}, ...],                # by coflow id
         "errors":  number of flows with an error,
         "schedulers": the workers' scheduling policies, e.g. ["other"]}

    A flow's ``planned`` is its ``start_s``, ``start`` its sender's connect time, ``end``
    the receiver's last byte, ``bytes`` the bytes received, ``marks`` the receiver's
    (time, bytes received) pairs (:data:`PROGRESS_MARKS`; empty from older workers),
    ``error`` its send and receive errors joined by
    ``"; "`` (a missing record is an error). A coflow's ``start`` is its scheduled
    release (min ``start_s`` of its flows), ``end`` the max of its flows' ends (``None``
    if one is missing), ``error`` the first error of its flows in plan order. A
    :class:`ValueError` if two records claim the same (flow id, role)."""
    t0 = float(plan["t0"])
    seen: dict[tuple[int, str], dict[str, Any]] = {}
    for res in results:
        for r in res.get("flows", []):
            key = (r["id"], r["role"])
            if key in seen:
                raise ValueError(f"flow {r['id']}: two {r['role']!r} records in the results")
            seen[key] = r

    def rel(t: float | None) -> float | None:
        return None if t is None else t - t0

    flows: list[dict[str, Any]] = []
    coflows: dict[int, dict[str, Any]] = {}
    for f in plan["flows"]:
        fid = f["id"]
        snd, rcv = seen.get((fid, "send")), seen.get((fid, "recv"))
        errors = []
        for role, r, host in (("send", snd, f["src"]), ("recv", rcv, f["dst"])):
            if r is None:
                errors.append(f"flow {fid} {role}: no result from host {host}")
            elif r.get("error"):
                errors.append(str(r["error"]))
        row = {
            "id": fid,
            "coflow": f["coflow"],
            "planned": float(f["start_s"]),
            "start": rel(snd["start"]) if snd else None,
            "end": rel(rcv["end"]) if rcv else None,
            "bytes": rcv["bytes"] if rcv else None,
            "error": "; ".join(errors) or None,
            "marks": [(t - t0, b) for t, b in rcv.get("marks") or ()] if rcv else [],
        }
        flows.append(row)
        c = coflows.get(f["coflow"])
        if c is None:
            coflows[f["coflow"]] = c = {
                "coflow": f["coflow"],
                "start": float(f["start_s"]),
                "end": row["end"],
                "error": row["error"],
                "_missing_end": row["end"] is None,
            }
        else:
            c["start"] = min(c["start"], float(f["start_s"]))
            if row["end"] is None:
                c["_missing_end"] = True
            elif c["end"] is None or row["end"] > c["end"]:
                c["end"] = row["end"]
            if c["error"] is None:
                c["error"] = row["error"]
    out_coflows = []
    for cid in sorted(coflows):
        c = coflows[cid]
        if c.pop("_missing_end"):
            c["end"] = None
        out_coflows.append(c)
    return {
        "flows": flows,
        "coflows": out_coflows,
        "errors": sum(1 for r in flows if r["error"] is not None),
        # Each worker's scheduling policy (absent from results of older workers).
        "schedulers": sorted({str(r.get("scheduler", "unknown")) for r in results}),
    }


# ------------------------------------------------------------------------ command line


def main(argv: list[str] | None = None) -> int:
    """The worker's command line; returns the exit code."""
    ap = argparse.ArgumentParser(
        prog="python -m coflowkit.runtime.traffic",
        description="Send and receive one host's flows of a testbed plan over real TCP.",
    )
    ap.add_argument("--plan", required=True, help="the plan (JSON, one file for all hosts)")
    ap.add_argument("--host", required=True, type=int, help="this host's index in 'hosts'")
    ap.add_argument("--out", required=True, help="where to write this host's results (JSON)")
    ap.add_argument("--ready", help="file to write 'ok' to once every receiver listens")
    ap.add_argument("--go", help='file to wait for after --ready: {"t0": T}, the start time')
    args = ap.parse_args(argv)

    stop = [False]
    previous: dict[int, Any] = {}
    if threading.current_thread() is threading.main_thread():

        def on_signal(signum: int, frame: Any) -> None:
            stop[0] = True

        for sig in (signal.SIGTERM, signal.SIGINT):
            previous[sig] = signal.signal(sig, on_signal)
    try:
        try:
            plan = load_plan(args.plan)
        except ValueError as e:
            print(f"coflowkit.runtime.traffic: {e}", file=sys.stderr)
            return EXIT_BAD_PLAN
        if not 0 <= args.host < len(plan["hosts"]):
            print(
                f"coflowkit.runtime.traffic: --host {args.host} is out of range "
                f"(the plan has {len(plan['hosts'])} hosts)",
                file=sys.stderr,
            )
            return EXIT_BAD_PLAN
        try:
            records = Worker(plan, args.host, stop).run(args.ready, args.go)
        except ValueError as e:
            print(f"coflowkit.runtime.traffic: {e}", file=sys.stderr)
            return EXIT_BAD_PLAN
        errors = sum(1 for r in records if r["error"] is not None)
        result = {
            "host": args.host, "flows": records, "errors": errors, "scheduler": _scheduler(),
        }  # fmt: skip
        _write_atomic(args.out, json.dumps(result, indent=1) + "\n")
        return EXIT_OK if errors == 0 else EXIT_FLOW_ERRORS
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


if __name__ == "__main__":
    sys.exit(main())
