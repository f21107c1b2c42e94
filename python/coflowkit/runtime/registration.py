"""A coflow registration, as the master's HTTP API receives it: parsed and typed
before anything else sees it.

``{"id": int, "flows": [{"src": HOST, "dst": HOST, "dst_port": int, "size": bytes?}]}``

* ``id``: an integer in [0, 2^62) (booleans are not integers here);
* ``flows``: 1 to ``max_flows`` objects with exactly these keys;
* a HOST is a host index in [0, hosts) or the IPv4 address of a host (resolved
  by the master against its agents' addresses);
* ``dst_port``: an integer in 1..65535; ``size``: a positive, finite number of
  bytes below 2^63, or absent.

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
FLOW_KEYS = {"src", "dst", "dst_port", "size"}


class RegistrationError(CoflowkitError):
    """A registration that is not valid JSON of the documented shape."""


Host = int | str  # an index, or an IPv4 address to resolve


@dataclass(frozen=True)
class Registration:
    id: int
    flows: tuple[tuple[Host, Host, int, float | None], ...]


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
    if not isinstance(body, dict) or set(body) != {"id", "flows"}:
        extra = sorted(set(body) - {"id", "flows"}) if isinstance(body, dict) else []
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
    out = []
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
    return Registration(cid, tuple(out))
