"""Small helpers shared by the command line and the runtime (no imports of either)."""

from __future__ import annotations

import os

from coflowkit._core import CoflowkitError


def parse_kv(items: list[str] | None, what: str = "--param") -> dict[str, str]:
    """``["k=v", ...]`` as a dict; a malformed item is one clear error."""
    out: dict[str, str] = {}
    for it in items or []:
        if "=" not in it:
            raise CoflowkitError(f"{what} '{it}' is not KEY=VALUE")
        k, v = it.split("=", 1)
        out[k.strip()] = v.strip()
    return out


def default_trace() -> str:
    """The Facebook trace in ../shared beside the working directory or the source tree."""
    here = os.path.dirname(os.path.abspath(__file__))
    for base in [os.getcwd(), os.path.join(here, "..", "..")]:
        p = os.path.normpath(os.path.join(base, "..", "shared", "traces", "FB2010-1Hr-150-0.txt"))
        if os.path.exists(p):
            return p
    return os.path.join("..", "shared", "traces", "FB2010-1Hr-150-0.txt")
