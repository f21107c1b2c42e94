"""A coflow registration, as the master's HTTP API receives it: parsed and typed
before anything else sees it.

``{"id": int, "flows": [{"src": HOST, "dst": HOST, "dst_port": int, "size": bytes?,
"stage": int?, "priority": int?}], "weight": number?, "parents": [[child, parent]]?,
"report": [{"host": HOST, "link": "up" | "down", "demand": number}]?}``

* ``id``: an integer in [0, 2^62) (booleans are not integers here);
* ``flows``: 1 to ``max_flows`` objects with these keys;
* a HOST is a host index in [0, hosts) or the IPv4 address of a host (resolved
  by the master against its agents' addresses);
* ``dst_port``: an integer in 1..65535; ``size``: a positive, finite number of
  bytes below 2^63, or absent;
* ``stage`` (the flow's sub-coflow in a multi-stage coflow) and ``priority``
  (0 highest, for ``spq``): integers in [0, 2^31), 0 when absent;
* ``weight``: a positive finite number (1 when absent; ``sincronia``);
* ``parents``: the stage DAG, at most ``max_flows`` pairs ``[child, parent]``:
  a flow of stage ``parent`` waits for stage ``child``'s (``stream``); both
  stages must have flows here, and differ;
* ``report``: a demand vector the coflow reports (the DRF family: ``drf``,
  ``hug``, ``coflex``), at most one entry per host and link, demands finite
  and >= 0, not all 0 (scaled to a maximum of 1).

Anything else is a :class:`RegistrationError` naming the field; no input raises
anything else (fuzzed: docs/results/runtime/fuzz.md).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

from coflowkit._core import CoflowkitError
from coflowkit.runtime.proto import ipv4

ID_LIMIT = 1 << 62
SIZE_LIMIT = float(1 << 63)
MAX_FLOWS = 100_000
FLOW_KEYS = {"src", "dst", "dst_port", "size", "stage", "priority"}
KEYS = {"id", "flows", "weight", "parents", "report"}
STAGE_LIMIT = 1 << 31


class RegistrationError(CoflowkitError):
    """A registration that is not valid JSON of the documented shape."""


Host = int | str  # an index, or an IPv4 address to resolve


@dataclass(frozen=True)
class Registration:
    id: int
    flows: tuple[tuple[Host, Host, int, float | None], ...]
    stages: tuple[int, ...] = ()  # per flow; empty: all 0
    priorities: tuple[int, ...] = ()  # per flow; empty: all 0
    weight: float = 1.0
    parents: tuple[tuple[int, int], ...] = ()
    report: tuple[tuple[Host, str, float], ...] = ()  # (host, "up" | "down", demand)


def _no_constants(name: str):
    raise ValueError(f"{name} is not a number JSON allows")


def _unique_keys(pairs):
    out = {}
    for k, v in pairs:
        if k in out:
            raise ValueError(f"key {k!r} appears twice")
        out[k] = v
    return out


def loads(body: bytes) -> object:
    """Strict JSON: UTF-8, no NaN or Infinity, no repeated keys, bounded nesting."""
    try:
        text = body.decode("utf-8")
        return json.loads(text, parse_constant=_no_constants, object_pairs_hook=_unique_keys)
    except UnicodeDecodeError:
        raise RegistrationError("bad JSON: the body is not UTF-8") from None
    except RecursionError:
        raise RegistrationError("bad JSON: nested too deeply") from None
    except ValueError as e:
        raise RegistrationError(f"bad JSON: {e}") from None


def _int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _host(v: object, hosts: int, where: str) -> Host:
    if isinstance(v, str) and v.isdigit() and len(v) <= 5:
        v = int(v)
    if _int(v):
        if not 0 <= v < hosts:
            raise RegistrationError(f"{where}: host {v} is out of range 0..{hosts - 1}")
        return v
    if isinstance(v, str) and ipv4(v):
        return v
    raise RegistrationError(
        f"{where}: {_show(v)} is not a host (an index in 0..{hosts - 1} or an IPv4 address)"
    )


def _show(v: object) -> str:
    if _int(v) and v.bit_length() > 64:
        return f"an integer of {v.bit_length()} bits"
    if isinstance(v, (list, dict)):
        return f"a JSON {'array' if isinstance(v, list) else 'object'}"
    text = json.dumps(v) if isinstance(v, (bool, type(None))) else repr(v)
    return text if len(text) <= 40 else text[:37] + "..."


def parse(body: object, hosts: int, max_flows: int = MAX_FLOWS) -> Registration:
    """A typed :class:`Registration` from a decoded JSON value."""
    if not isinstance(body, dict) or not {"id", "flows"} <= set(body) <= KEYS:
        extra = sorted(set(body) - KEYS) if isinstance(body, dict) else []
        raise RegistrationError(
            'a registration is {"id": int, "flows": [{"src", "dst", "dst_port", "size"?}]}'
            + (f"; unknown key {extra[0]!r}" if extra else "")
        )
    cid = body["id"]
    if not _int(cid) or not 0 <= cid < ID_LIMIT:
        raise RegistrationError(f"id must be an integer in [0, 2^62), got {_show(cid)}")
    flows = body["flows"]
    if not isinstance(flows, list) or not 1 <= len(flows) <= max_flows:
        raise RegistrationError(f"flows must be a list of 1 to {max_flows} flows")
    out, stages, priorities = [], [], []
    for i, f in enumerate(flows):
        where = f"flows[{i}]"
        if not isinstance(f, dict):
            raise RegistrationError(f"{where} must be an object")
        missing = sorted({"src", "dst", "dst_port"} - set(f))
        if missing:
            raise RegistrationError(f"{where}: missing {missing[0]}")
        extra = sorted(set(f) - FLOW_KEYS)
        if extra:
            raise RegistrationError(f"{where}: unknown key {extra[0]!r}")
        src = _host(f["src"], hosts, f"{where}.src")
        dst = _host(f["dst"], hosts, f"{where}.dst")
        if src == dst:
            raise RegistrationError(f"{where}: source and destination are both {src}")
        port = f["dst_port"]
        if not _int(port) or not 0 < port < 65536:
            raise RegistrationError(f"{where}.dst_port must be a TCP port, got {_show(port)}")
        size = f.get("size")
        if size is not None:
            if (
                not isinstance(size, (int, float))
                or isinstance(size, bool)
                or not (0 < size < SIZE_LIMIT)
                or not math.isfinite(size)
            ):
                raise RegistrationError(
                    f"{where}.size must be a positive number of bytes below 2^63, got {_show(size)}"
                )
            size = float(size)
        out.append((src, dst, port, size))
        for key, into in (("stage", stages), ("priority", priorities)):
            v = f.get(key, 0)
            if not _int(v) or not 0 <= v < STAGE_LIMIT:
                raise RegistrationError(
                    f"{where}.{key} must be an integer in [0, 2^31), got {_show(v)}"
                )
            into.append(v)
    weight = body.get("weight", 1.0)
    if (
        not isinstance(weight, (int, float))
        or isinstance(weight, bool)
        or not math.isfinite(weight)
        or not weight > 0
    ):
        raise RegistrationError(f"weight must be a positive number, got {_show(weight)}")
    return Registration(
        cid, tuple(out), tuple(stages) if any(stages) else (),
        tuple(priorities) if any(priorities) else (), float(weight),
        _parents(body.get("parents", []), set(stages), max_flows),
        _report(body.get("report", []), hosts),
    )  # fmt: skip


def _parents(v: object, stages: set[int], max_flows: int) -> tuple[tuple[int, int], ...]:
    if not isinstance(v, list) or len(v) > max_flows:
        raise RegistrationError(
            f"parents must be a list of at most {max_flows} [child, parent] pairs"
        )
    out = []
    for i, p in enumerate(v):
        if not (isinstance(p, list) and len(p) == 2 and all(_int(x) for x in p)):
            raise RegistrationError(
                f"parents[{i}] must be [child stage, parent stage], got {_show(p)}"
            )
        for what, st in zip(("child", "parent"), p, strict=True):
            if st not in stages:
                raise RegistrationError(f"parents[{i}]: {what} stage {_show(st)} has no flow")
        if p[0] == p[1]:
            raise RegistrationError(f"parents[{i}]: stage {p[0]} is its own parent")
        out.append((p[0], p[1]))
    return tuple(out)


def _report(v: object, hosts: int) -> tuple[tuple[Host, str, float], ...]:
    if not isinstance(v, list) or len(v) > 2 * hosts:
        raise RegistrationError(f"report must be a list of at most {2 * hosts} demands")
    out = []
    for i, r in enumerate(v):
        where = f"report[{i}]"
        if not isinstance(r, dict) or set(r) != {"host", "link", "demand"}:
            raise RegistrationError(f'{where} must be {{"host", "link": "up" or "down", "demand"}}')
        host = _host(r["host"], hosts, f"{where}.host")
        if r["link"] not in ("up", "down"):
            raise RegistrationError(f'{where}.link must be "up" or "down", got {_show(r["link"])}')
        d = r["demand"]
        if not isinstance(d, (int, float)) or isinstance(d, bool) or not math.isfinite(d) or d < 0:
            raise RegistrationError(f"{where}.demand must be a number >= 0, got {_show(d)}")
        out.append((host, r["link"], float(d)))
    if out and not any(d > 0 for *_, d in out):
        raise RegistrationError("report: every demand is 0")
    return tuple(out)
