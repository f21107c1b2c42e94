"""Bounded resources for the runtime's servers: file descriptors, and logs that a
hostile peer cannot flood."""

from __future__ import annotations

import logging
import os
import resource
import threading
import time

from coflowkit._core import CoflowkitError


class LogLimiter:
    """At most ``burst`` messages per key every ``period`` seconds; the count of
    those held back is added to the next message that gets through."""

    def __init__(self, logger: logging.Logger, burst: int = 5, period: float = 10.0):
        self.log = logger
        self.burst = burst
        self.period = period
        self._state: dict[str, list] = {}  # key -> [window start, sent, suppressed]
        self._lock = threading.Lock()

    def warn(self, key: str, msg: str, *args, exc_info: bool = False) -> None:
        now = time.monotonic()
        with self._lock:
            st = self._state.setdefault(key, [now, 0, 0])
            if now - st[0] >= self.period:
                st[0], st[1] = now, 0
            if st[1] >= self.burst:
                st[2] += 1
                return
            st[1] += 1
            held, st[2] = st[2], 0
            if len(self._state) > 1024:  # keys are few; never let them grow
                self._state = {key: st}
        if held:
            msg += f" ({held} similar messages suppressed)"
        self.log.warning(msg, *args, exc_info=exc_info)


def descriptor_room() -> int:
    """Descriptors this process may open once its soft limit is raised to the hard one."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY:
        return 1 << 20
    return max(soft, hard)


def ensure_descriptors(need: int, what: str) -> int:
    """Raises this process's soft descriptor limit to at least ``need`` (up to the
    hard limit); refuses, naming ``what``, if the hard limit is lower. Returns the
    soft limit in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft >= need or soft == resource.RLIM_INFINITY:
        return soft
    target = need if hard == resource.RLIM_INFINITY else min(need, hard)
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        soft = target
    except (ValueError, OSError):
        pass
    if soft < need:
        raise CoflowkitError(
            f"{what} needs {need} file descriptors, but this process may open {soft} "
            f"(hard limit {hard}); raise `ulimit -n` (LimitNOFILE= in a systemd unit) or lower it"
        )
    return soft


class ReserveFd:
    """One descriptor kept open for a rainy day: when ``accept`` fails with
    EMFILE, :meth:`shed` frees it, accepts one pending connection and closes it at
    once (so the backlog drains instead of the listening socket staying readable
    forever), then takes the descriptor back."""

    def __init__(self):
        self.fd: int | None = self._take()

    @staticmethod
    def _take() -> int | None:
        try:
            return os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            return None

    def shed(self, server) -> bool:
        """Refuses one pending connection of ``server``; False if it could not."""
        if self.fd is None:
            self.fd = self._take()
            return False
        os.close(self.fd)
        self.fd = None
        refused = False
        try:
            conn, _ = server.accept()
            conn.close()
            refused = True
        except OSError:
            pass
        self.fd = self._take()
        return refused

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
