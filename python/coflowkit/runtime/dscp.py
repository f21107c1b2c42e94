"""Marking a flow's class in its packets' DSCP field, for switches with strict
priority queues (decentralized Stream's senders).

The kernel's tc actions that rewrite headers (``pedit``, ``skbedit``) are
optional and missing on some kernels (this machine's among them); nf_tables is
nearly always there. So the marks are one nf_tables table of the agent's own::

    table ip coflowkit_dscp
      map classes  (src ip . sport . dst ip . dport) -> goto cN
      chain cN     ip dscp set N            (N = 0..7)
      chain out    output hook, mangle priority: the 4-tuple looked up in classes

A flow's class change is one map element replaced; a round's changes go to one
``nft -f -``. Without the ``nft`` program (package nftables) nothing is marked:
:meth:`DscpMarker.available` is False and the agent says so once at start.
"""

from __future__ import annotations

import logging
import shutil
import subprocess

log = logging.getLogger("coflowkit.agent.dscp")

TABLE = "coflowkit_dscp"
LEVELS = 8  # DSCP values 0..7 (class selector bits stay 0): at most 8 switch queues

Key = tuple[str, int, str, int]


def _element(key: Key) -> str:
    src, sport, dst, dport = key
    return f"{src} . {int(sport)} . {dst} . {int(dport)}"


class DscpMarker:
    """The DSCP marks of this host's flows (module doc)."""

    def __init__(self, argv_prefix: list[str] | None = None):
        self.argv = [*(argv_prefix or []), "nft", "-f", "-"]
        self.available = shutil.which("nft") is not None
        self.marks: dict[Key, int] = {}
        self.ready = False
        self.errors = 0

    def _run(self, script: str) -> bool:
        r = subprocess.run(self.argv, input=script, capture_output=True, text=True, check=False)
        if r.returncode != 0:
            self.errors += 1
            log.warning("nft: %s", r.stderr.strip()[:300])
            return False
        return True

    def setup(self) -> bool:
        if not self.available:
            return False
        chains = "".join(
            f"  chain c{n} {{\n    ip dscp set {n} accept\n  }}\n" for n in range(LEVELS)
        )
        script = (
            f"table ip {TABLE}\ndelete table ip {TABLE}\n"
            f"table ip {TABLE} {{\n"
            "  map classes {\n"
            "    type ipv4_addr . inet_service . ipv4_addr . inet_service : verdict\n"
            "  }\n"
            f"{chains}"
            "  chain out {\n"
            "    type filter hook output priority mangle; policy accept;\n"
            "    ip saddr . tcp sport . ip daddr . tcp dport vmap @classes\n"
            "  }\n"
            "}\n"
        )
        self.ready = self._run(script)
        self.marks.clear()
        return self.ready

    def apply(self, wanted: dict[Key, int]) -> None:
        """Marks exactly the flows of ``wanted`` (4-tuple -> class; classes above
        7 are marked 7), changing only what differs."""
        if not self.ready:
            return
        lines = []
        for key in [k for k in self.marks if k not in wanted]:
            lines.append(f"delete element ip {TABLE} classes {{ {_element(key)} }}")
            del self.marks[key]
        for key, cls in wanted.items():
            n = min(max(int(cls), 0), LEVELS - 1)
            cur = self.marks.get(key)
            if cur == n:
                continue
            if cur is not None:
                lines.append(f"delete element ip {TABLE} classes {{ {_element(key)} }}")
            lines.append(f"add element ip {TABLE} classes {{ {_element(key)} : goto c{n} }}")
            self.marks[key] = n
        if lines and not self._run("\n".join(lines) + "\n"):
            # The table's state is unknown now: rebuild it next round.
            self.setup()

    def teardown(self) -> None:
        if self.available:
            self._run(f"table ip {TABLE}\ndelete table ip {TABLE}\n")
        self.marks.clear()
        self.ready = False
