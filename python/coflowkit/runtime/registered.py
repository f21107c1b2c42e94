"""The master's registered coflows: a registration into the policy driver
(``_core.LiveScheduler``), its flows' slots declared so that reported flows
bind to them, and the registrations of a previous master process reloaded from
the state file (:mod:`coflowkit.runtime.state`). A mixin of
:class:`coflowkit.runtime.master.Master`, run on its round thread."""

from __future__ import annotations

import collections
import logging
import time

from coflowkit._core import CoflowkitError
from coflowkit.runtime.registration import Registration

log = logging.getLogger("coflowkit.master")


class Registered:
    def _resolve(self, v: int | str, where: str) -> int:
        if isinstance(v, int):
            return v
        host = self.ip_host.get(v)
        if host is None:
            raise CoflowkitError(f"{where}: no connected agent has address {v}")
        return host

    def register(self, reg: Registration) -> dict:
        flows = []
        for i, (src, dst, port, size) in enumerate(reg.flows):
            s = self._resolve(src, f"flows[{i}].src")
            d = self._resolve(dst, f"flows[{i}].dst")
            stage = reg.stages[i] if reg.stages else 0
            flows.append((s, d, port, size, stage, reg.priorities[i] if reg.priorities else 0))
        info: dict = {}
        if reg.weight != 1.0:
            info["weight"] = reg.weight
        if reg.parents:
            info["parents"] = [list(p) for p in reg.parents]
        if reg.report:
            info["report"] = [
                [self._resolve(h, f"report[{i}].host") + (self.hosts if link == "down" else 0), v]
                for i, (h, link, v) in enumerate(reg.report)
            ]  # fmt: skip
        first = self._register_live(reg.id, flows, info, self.now())
        if self.store is not None:
            self.store.add_coflow(reg.id, flows, time.time(), info)
        self._declare(reg.id, first, flows, set())
        return {"id": reg.id, "flows": len(flows), "first_slot": first}

    def _register_live(self, cid: int, flows: list, info: dict, now: float) -> int:
        """Coflow ``cid`` into the policy driver: flows ``(src, dst, port, size,
        stage, priority)`` and ``info`` (weight, parents, report as stored)."""
        return self.live.register(
            cid, flows, now, float(info.get("weight", 1.0)),
            [tuple(p) for p in info.get("parents", [])],
            [(int(link), float(v)) for link, v in info.get("report", [])],
        )  # fmt: skip

    def _declare(self, cid: int, first: int, flows: list, bound: set[int]) -> None:
        sizes = [f[3] for f in flows]
        if sizes and all(z is not None for z in sizes):
            self.coflow_size[cid] = float(sum(sizes))
        for k, (src, dst, port, *_) in enumerate(flows):
            slot = first + k
            self.reg_slot[slot] = (cid, k)
            self.slot_info[slot] = (src, dst, 0, port)
            if k not in bound:
                self.pending.setdefault((src, dst, port), collections.deque()).append(slot)

    def _reload(self) -> None:
        """Registrations of the previous master process, with which of their flows
        had started (they come back as their agents report them) or ended."""
        assert self.store is not None
        now = self.now()
        n_flows = n_coflows = 0
        for c in self.store.load():
            flows = [
                (int(s), int(d), int(p), z, int(st), int(pr)) for s, d, p, z, st, pr in c.flows
            ]
            first = self._register_live(c.id, flows, c.info, now)
            if c.arrival_wall is not None:
                self.live.set_arrival(c.id, c.arrival_wall - self.wall0)
            bound = set()
            for b in c.bindings:
                slot = first + b.idx
                bound.add(b.idx)
                if b.finished:
                    self.live.start(slot, b.sport, now)
                    self.live.update([slot], [b.bytes])
                    self.live.finish(slot, now)
                else:
                    self.rebind[(b.src, b.sport, b.dst, b.dport)] = slot
            self._declare(c.id, first, flows, bound)
            n_flows += len(flows)
            n_coflows += 1
        if n_coflows:
            log.info(
                "state %s: %d coflows (%d flows, %d running) restored",
                self.store.path, n_coflows, n_flows, len(self.rebind),
            )  # fmt: skip
