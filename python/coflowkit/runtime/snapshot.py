"""What the master's API shows of a round, built when asked for."""

from __future__ import annotations

import threading


class FlowRows:
    """A round's flows for the API, as rows (dicts) built on first use, from
    what the round left: the slots, their rates, classes and whether they are
    enforced, and a copy of the flows' addresses (so the round thread may go
    on changing its own)."""

    def __init__(self, live, slots, rates, classes, enforced, slot_info, labels=None):
        self._args = (live, slots, rates, classes, enforced, dict(slot_info), labels)
        self._rows: list[dict] | None = None
        self._lock = threading.Lock()

    @classmethod
    def empty(cls) -> FlowRows:
        return cls(None, [], [], [], [], {})

    def rows(self) -> list[dict]:
        with self._lock:
            if self._rows is None:
                self._rows = self._build()
            return self._rows

    def __iter__(self):
        return iter(self.rows())

    def __len__(self) -> int:
        return len(self._args[1])

    def _build(self) -> list[dict]:
        live, slots, rates, classes, enforced, info, labels = self._args
        rows = []
        for i, slot in enumerate(slots):
            src, dst, sport, dport = info.get(slot, (0, 0, 0, 0))
            cls = classes[i]
            flow = {
                "slot": slot,
                "coflow": live.coflow_of(slot),
                "src": src,
                "dst": dst,
                "src_port": sport,
                "dst_port": dport,
                "rate_bytes_per_s": rates[i],
                "class": None if cls < 0 else cls,
                "enforced": enforced[i],
            }
            if labels is not None:
                flow["label"] = None if labels[i] < 0 else labels[i]
            rows.append(flow)
        return rows
