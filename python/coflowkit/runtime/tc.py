"""Enforcing decisions with Linux traffic control, incrementally.

The tree on the agent's egress device::

    1:      htb root (no default class: unmatched traffic is not shaped)
    1:1     htb rate LINK ceil LINK   (parent of every flow class)
    1:N     one class per scheduled flow, N = 2..4095 (hex in tc syntax):
              rate decision:  rate R ceil R
              class decision: rate MIN ceil LINK prio min(class, 7)  (HTB lends
              spare capacity to the lowest prio first: strict priority)
    800::N  u32 filter matching the flow's 5-tuple (TCP, IPv4) -> 1:N

A round's changes are one batch of ``tc`` lines: add (class, then filter), change
(class only) or remove (filter, then class). Nothing is rebuilt, except as
:data:`RELEASES` says for a paused flow given a rate. Rates arrive as
goodput (payload bytes/s, what policies and the simulator count); tc counts bits of
whole frames, so rates are multiplied by ``overhead`` (frame bytes per payload byte,
1514/1448 for 1500-byte MTU with TCP timestamps).
"""

from __future__ import annotations

import collections
import subprocess
import threading
from dataclasses import dataclass

from coflowkit._core import CoflowkitError
from coflowkit.runtime.proto import CLASS, RATE, UNLIMITED

FRAME_OVERHEAD = 1514 / 1448
# A flow decided a rate below this share of the link is sent at it (a trickle
# that keeps TCP's ACK clock); the master leaves room for these trickles.
PAUSED_FLOOR = 0.005
MAX_PAUSED_FLOOR = 0.05


def check_paused_floor(fraction: float, option: str = "--paused-floor") -> float:
    """The share of a link a paused flow trickles at (agent and master must
    agree): in (0, MAX_PAUSED_FLOOR]."""
    if not 0.0 < fraction <= MAX_PAUSED_FLOOR:
        raise CoflowkitError(f"{option} must be in (0, {MAX_PAUSED_FLOOR}], got {fraction!r}")
    return fraction


MAX_SLOTS = 0xFFF  # u32 node ids and class minors 2..0xfff
QUANTUM = 30280  # 20 full frames; an explicit quantum keeps HTB's r2q warnings away
PRIO_LEVELS = 8
FRAME_BYTES = 1514
RELEASES = ("change", "rebuild", "move")
"""How a paused flow's class is given its new rate (``agent --release``).

HTB keeps a class's token debt across ``class change``: a paused class owes up
to one frame's time at the trickle rate (97 ms at 0.5% of any link) and sends
nothing at its new rate until it has paid.

- ``change`` (the default): the class is changed in place and pays the debt.
- ``rebuild``: the class is deleted and added anew in the same slot (full
  tokens). Deleting it drops the frames queued in it, which TCP must recover.
- ``move``: the flow gets a new class with full tokens in another slot, and
  its filter moves there. The old class keeps the frames queued in it and is
  changed to the new rate, so they leave once its debt is paid; it is deleted
  by :meth:`TcPlan.reap` once that time has passed (``drain_s``)."""


def _bits(rate_bits: float) -> str:
    return f"{max(int(round(rate_bits)), 8)}bit"


@dataclass(slots=True)
class Installed:
    slot: int
    kind: int
    value: float
    match: tuple[str, int, str, int]


class TcPlan:
    """What is installed on one device, and the tc lines that move it to a new state."""

    def __init__(
        self,
        dev: str,
        link_bytes_per_s: float,
        overhead: float = FRAME_OVERHEAD,
        min_fraction: float = PAUSED_FLOOR,
    ):
        if link_bytes_per_s <= 0:
            raise CoflowkitError(f"link rate must be positive, got {link_bytes_per_s}")
        if overhead < 1.0:
            raise CoflowkitError(
                f"overhead must be >= 1 (frame bytes per payload byte), got {overhead}"
            )
        if not 0.0 <= min_fraction < 1.0:
            raise CoflowkitError(f"min_fraction must be in [0, 1), got {min_fraction}")
        self.dev = dev
        self.overhead = overhead
        self.link_bits = link_bytes_per_s * 8 * overhead
        # A paused flow keeps a trickle (min_fraction of the link) so that TCP keeps
        # its ACK clock instead of backing off its retransmission timer.
        self.min_bits = max(self.link_bits * min_fraction, 8000.0)
        self.installed: dict[int, Installed] = {}
        self._free = list(range(MAX_SLOTS, 1, -1))
        # How a paused flow released to a rate gets it: one of RELEASES.
        self.release = "change"
        # Under ``move``, an old class is deleted this long after its flow left
        # it: twice one frame's time at the trickle rate (its debt, at most
        # one frame's time, then its queue at the new rate).
        self.drain_s = 2 * FRAME_BYTES * 8 / self.min_bits
        # Old classes still draining, (time due for deletion, slot), oldest first.
        self.draining: collections.deque[tuple[float, int]] = collections.deque()
        # Paused flows given a rate, by how: "change", "rebuild", "move".
        self.releases: collections.Counter[str] = collections.Counter()

    def setup(self) -> list[str]:
        d = self.dev
        return [
            f"qdisc add dev {d} root handle 1: htb",
            f"class add dev {d} parent 1: classid 1:1 htb rate {_bits(self.link_bits)} "
            f"ceil {_bits(self.link_bits)} quantum {QUANTUM}",
        ]

    def teardown(self) -> list[str]:
        self.installed.clear()
        self.draining.clear()
        self._free = list(range(MAX_SLOTS, 1, -1))
        return [f"qdisc del dev {self.dev} root"]

    def _class_args(self, kind: int, value: float) -> str:
        if kind == RATE:
            r = _bits(max(value * 8 * self.overhead, self.min_bits))
            return f"htb rate {r} ceil {r} quantum {QUANTUM}"
        prio = min(max(int(value), 0), PRIO_LEVELS - 1)
        return f"htb rate {_bits(self.min_bits)} ceil {_bits(self.link_bits)} quantum {QUANTUM} prio {prio}"

    def apply(
        self,
        decisions: list[tuple[int, int, float]],
        matches: dict[int, tuple[str, int, str, int]],
        now: float = 0.0,
    ) -> list[str]:
        """tc lines for ``decisions`` ``(fid, kind, value)``; ``matches[fid]`` is the
        flow's (src ip, src port, dst ip, dst port). UNLIMITED removes a flow's
        class; a decision for an unknown flow or one equal to what is installed
        produces nothing. ``now`` (seconds, any monotonic clock) dates the
        classes that ``move`` leaves draining, for :meth:`reap`."""
        d = self.dev
        lines: list[str] = []
        for fid, kind, value in decisions:
            cur = self.installed.get(fid)
            if kind == UNLIMITED:
                if cur is not None:
                    lines += self._remove(fid)
                continue
            if kind not in (RATE, CLASS):
                raise CoflowkitError(f"flow {fid}: unknown decision kind {kind}")
            if cur is not None:
                if cur.kind == kind and cur.value == value:
                    continue
                if self._released(cur, kind, value):
                    if self.release == "rebuild":
                        self.releases["rebuild"] += 1
                        m = cur.match
                        lines += self._remove(fid)
                        lines += self._add(fid, kind, value, m)
                        continue
                    if self.release == "move" and self._free:
                        self.releases["move"] += 1
                        lines += self._move(fid, cur, kind, value, now)
                        continue
                    # Changed in place (under move, when no slot is free).
                    self.releases["change"] += 1
                cur.kind, cur.value = kind, value
                lines.append(
                    f"class change dev {d} parent 1:1 classid 1:{cur.slot:x} {self._class_args(kind, value)}"
                )
                continue
            m = matches.get(fid)
            if m is None or not self._free:
                continue
            lines += self._add(fid, kind, value, m)
        return lines

    def _released(self, cur: Installed, kind: int, value: float) -> bool:
        """Whether a flow installed at ``cur`` is paused (a rate at the trickle
        floor) and now gets a rate above it."""
        floor = self.min_bits / (8 * self.overhead)
        return cur.kind == RATE and kind == RATE and cur.value <= floor < value

    def _move(self, fid: int, cur: Installed, kind: int, value: float, now: float) -> list[str]:
        """The flow's filter to a new class at ``value``; the old class, still
        holding the frames queued in it, changed to the same rate and left to
        drain. The new filter is added before the old one is deleted, so that
        no frame meets neither."""
        d = self.dev
        old = cur.slot
        lines = self._add(fid, kind, value, cur.match)
        self.draining.append((now + self.drain_s, old))
        return lines + [
            f"filter del dev {d} parent 1: protocol ip prio 1 handle 800::{old:x} u32",
            f"class change dev {d} parent 1:1 classid 1:{old:x} {self._class_args(kind, value)}",
        ]

    def reap(self, now: float) -> list[str]:
        """Deletes the old classes of ``move`` whose time to drain has passed
        (any frame still in one is dropped with it) and frees their slots."""
        lines: list[str] = []
        while self.draining and self.draining[0][0] <= now:
            _, slot = self.draining.popleft()
            self._free.append(slot)
            lines.append(f"class del dev {self.dev} classid 1:{slot:x}")
        return lines

    def _add(self, fid: int, kind: int, value: float, m: tuple[str, int, str, int]) -> list[str]:
        d = self.dev
        slot = self._free.pop()
        self.installed[fid] = Installed(slot, kind, value, m)
        src, sport, dst, dport = m
        return [
            f"class add dev {d} parent 1:1 classid 1:{slot:x} {self._class_args(kind, value)}",
            f"filter add dev {d} parent 1: protocol ip prio 1 handle 800::{slot:x} u32 "
            f"match ip src {src}/32 match ip dst {dst}/32 "
            f"match ip sport {sport} 0xffff match ip dport {dport} 0xffff flowid 1:{slot:x}",
        ]

    def forget(self, fid: int) -> list[str]:
        """The flow is gone: remove its class if it has one."""
        return self._remove(fid) if fid in self.installed else []

    def _remove(self, fid: int) -> list[str]:
        cur = self.installed.pop(fid)
        self._free.append(cur.slot)
        d = self.dev
        return [
            f"filter del dev {d} parent 1: protocol ip prio 1 handle 800::{cur.slot:x} u32",
            f"class del dev {d} classid 1:{cur.slot:x}",
        ]


class TcBatch:
    """A long-lived ``tc -force -batch -`` fed one line per change: no process per
    round. Errors (tc reports them by line number) are collected for the log."""

    def __init__(self, argv_prefix: list[str] | None = None):
        self.argv = [*(argv_prefix or []), "tc", "-force", "-batch", "-"]
        self.lines_sent = 0
        # The last lines sent (tc names a failed line by its number in the stream).
        self.history: collections.deque[str] = collections.deque(maxlen=65536)
        self.errors: list[str] = []
        self._lock = threading.Lock()
        try:
            self.proc = subprocess.Popen(
                self.argv,
                stdin=subprocess.PIPE,
                stderr=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                text=True,
                bufsize=1,
            )
        except FileNotFoundError:
            raise CoflowkitError(
                "tc (iproute2) is not installed: apt-get install iproute2"
            ) from None
        self._reader = threading.Thread(target=self._read_errors, daemon=True)
        self._reader.start()

    def _read_errors(self) -> None:
        assert self.proc.stderr is not None
        pending: list[str] = []
        for line in self.proc.stderr:
            line = line.rstrip()
            if line.startswith("Command failed -:"):
                n = int(line.rsplit(":", 1)[1])
                with self._lock:
                    back = self.lines_sent - n
                    cmd = self.history[-1 - back] if 0 <= back < len(self.history) else "?"
                    self.errors.append(f"tc failed: {cmd}: {'; '.join(pending) or 'error'}")
                pending = []
            elif line and not line.startswith("Warning"):
                pending.append(line)

    def run(self, lines: list[str]) -> None:
        if not lines:
            return
        if self.proc.poll() is not None:
            raise CoflowkitError(f"tc batch process exited with {self.proc.returncode}")
        with self._lock:
            self.history.extend(lines)
            self.lines_sent += len(lines)
        assert self.proc.stdin is not None
        self.proc.stdin.write("".join(line + "\n" for line in lines))
        self.proc.stdin.flush()

    def take_errors(self) -> list[str]:
        with self._lock:
            e, self.errors = self.errors, []
        return e

    def close(self) -> None:
        if self.proc.stdin and not self.proc.stdin.closed:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self._reader.join(timeout=1)


def remove_tree(dev: str, argv_prefix: list[str] | None = None) -> bool:
    """Removes the agent's tree from ``dev`` if one is installed (an HTB root
    with handle 1:, as :meth:`TcPlan.setup` makes); another root qdisc is left
    alone. Returns whether a tree was removed."""
    tc = [*(argv_prefix or []), "tc"]
    try:
        r = subprocess.run(
            [*tc, "qdisc", "show", "dev", dev, "root"], capture_output=True, text=True
        )
    except FileNotFoundError:
        raise CoflowkitError("tc (iproute2) is not installed: apt-get install iproute2") from None
    if r.returncode != 0:
        raise CoflowkitError(f"tc: device {dev}: {r.stderr.strip() or 'not found'}")
    if not any(line.startswith("qdisc htb 1: root") for line in r.stdout.splitlines()):
        return False
    d = subprocess.run([*tc, "qdisc", "del", "dev", dev, "root"], capture_output=True, text=True)
    if d.returncode != 0:
        raise CoflowkitError(f"tc: cannot remove the tree on {dev}: {d.stderr.strip()}")
    return True
