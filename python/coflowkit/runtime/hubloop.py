"""The master's loop under ``--io rust``: the session hub (``_core.AgentHub``,
``crates/coflowkit-runtime/src/hub.rs``) holds the agents' sessions on tokio
threads; this thread takes its events (checked HELLOs, REPORTs with new or
ended flows, merged byte counts, session ends), keeps house and runs rounds.
A mixin of :class:`coflowkit.runtime.master.Master`."""

from __future__ import annotations

import logging
import time

from coflowkit._core import CoflowkitError
from coflowkit.runtime import proto, tls
from coflowkit.runtime.session import Session

log = logging.getLogger("coflowkit.master")


class HubLoop:
    def _run_hub(self, duration: float | None) -> None:
        """The loop under --io rust: the hub's events, housekeeping, rounds."""
        end = None if duration is None else time.monotonic() + duration
        next_round = next_house = time.monotonic()
        try:
            while not self.stop.is_set() and (end is None or time.monotonic() < end):
                wait = min(0.2, max(0.0, next_round - time.monotonic()))
                for ev in self.hub.poll(wait):
                    self._guard(self._hub_event, ev)
                self._guard(self._hub_metrics)
                next_round, next_house = self._due(None, next_round, next_house)
        finally:
            self.hub.stop("master stopping", 1.0)
            for s in list(self.sessions.values()):
                self._forget(s, "master stopping")
            self.sessions.clear()
            if self.httpd is not None:
                self.httpd.shutdown()
                self.httpd.server_close()
            if self.store is not None:
                self.store.close()

    def _hub_metrics(self) -> None:
        """The hub's counters, as the Python session layer counts them."""
        hm = self.hub.metrics()
        m = self.metrics
        for k in ("accepted_connections", "refused_connections", "accept_errors", "reports",
                  "event_items_pending"):  # fmt: skip
            m[k] = hm[k]

    def _hub_event(self, ev: tuple) -> None:
        """One event of the hub (a checked HELLO, a non-empty REPORT, a session's
        end); a failure ends that session only."""
        kind, sid = ev[0], ev[1]
        if kind == "updates":
            self._hub_updates(*ev[1:])
            return
        if kind == "closed":
            _, _, peer, why, rejected = ev
            if rejected:
                self.metrics["rejected_messages"] += 1
            s = self.sessions.pop(sid, None)
            if s is not None:
                self._forget(s, why)
            elif rejected or why.startswith("TLS") or "in time" in why:
                self.limiter.warn("close", "agent %s disconnected: %s", peer, why)
            return
        if kind == "hello":
            _, _, peer, host, addrs, name, boot, interval_ms, cert_ips = ev
            s = Session(None, tls.Identity("host", host, frozenset(cert_ips)), sid=sid,
                        peer_name=peer)  # fmt: skip
            self.sessions[sid] = s
            hello = proto.Hello(host, interval_ms, addrs, name, boot)
            self._guarded_session(s, self._hello, None, s, hello)
            return
        s = self.sessions.get(sid)
        if s is None or s.host is None:
            return  # closed meanwhile
        _, _, t, new, updated, gone = ev
        report = proto.Report(t, [proto.NewFlow(*f) for f in new], updated, gone)
        self._guarded_session(s, self._report, s, report)

    def _hub_updates(self, sids: list[int], fids: list[int], sent: list[int]) -> None:
        """Byte counts of running flows, merged by the hub from many REPORTs."""
        sessions, slots, values = self.sessions, [], []
        for sid, fid, b in zip(sids, fids, sent, strict=True):
            s = sessions.get(sid)
            if s is None or s.host is None:
                continue
            slot = s.flows.get(fid)
            if slot is not None:
                slots.append(slot)
                values.append(float(b))
            else:
                held = self.unresolved.get(s.host)
                if held is not None and fid in held:
                    held[fid].sent = b
        self.live.update(slots, values)

    def _guarded_session(self, s: Session, fn, *args) -> None:
        """Runs ``fn`` on a hub session's message; a bad message ends the session."""
        try:
            fn(*args)
        except (proto.ProtocolError, CoflowkitError) as e:
            self.metrics["rejected_messages"] += 1
            self._close(None, s, f"rejected: {e}", tell=True)
        except Exception as e:  # a bug must not stop the master: end this session
            log.exception("session %s failed", s.peer)
            self._close(None, s, f"internal error: {type(e).__name__}")
