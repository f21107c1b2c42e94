"""Workload transforms: composable, deterministic functions from a workload to a new one.

A transform reads the workload's columns (``Workload.flow_columns()``), changes some
of them with numpy and rebuilds a workload with ``_core.workload_from_columns`` on
the same fabric (same port count and link rates, unless ``scale`` changes the port
count). Everything a transform does not change survives it: coflow ids, arrivals,
weights, flow ids, sizes, start times, ports, tenants, stages, priorities and
dependencies. Strategic
reports (``Workload.with_reports``) are not carried: set them after transforming.

Randomness comes only from ``numpy.random.default_rng(seed)`` (every random
transform has a ``seed`` parameter, default 1), drawn in a documented order, so the
same input and parameters give an identical workload. docs/transforms.md gives the
semantics of each transform; ``coflowkit transforms`` lists them.

Use::

    import coflowkit as ck
    w = ck.load_trace("FB2010-1Hr-150-0.txt")
    w = ck.transform(w, "batch:interval_s=10,spread=instant")
    w = ck.transforms.apply(w, "poisson", load=0.8, seed=3)
    w = ck.transforms.apply_all(w, ["starts:model=hadoop", "ports:model=hadoop"])

Adding a transform is one function decorated with :func:`_register` (its
parameters, with their defaults in the signature): it appears in ``TRANSFORMS``,
in ``apply`` and in the CLI (``--transform``, ``coflowkit transforms``).
"""

from __future__ import annotations

import contextlib
import functools
import gc
import heapq
import inspect
import itertools
import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from coflowkit import _core
from coflowkit._core import CoflowkitError, Workload

#: 1 Gbps in bytes/s (CoflowSim's convention: 1024³ bit/s).
GBPS_BYTES_PER_S = _core.GBPS_BYTES_PER_S
#: Linux's default ephemeral port range (``net.ipv4.ip_local_port_range``), inclusive.
EPHEMERAL_PORTS = (32768, 60999)
#: Hadoop's shuffle handler port (``mapreduce.shuffle.port``).
HADOOP_SHUFFLE_PORT = 13562
#: The engine's time tolerance: events less than this apart are one event.
TIME_EPS = _core.TIME_EPS
#: Size of a ``waves`` barrier flow: the engine's smallest finish tolerance, so the
#: barrier finishes at the instant it starts, whatever rate the policy gives it.
BARRIER_BYTES = _core.FINISH_BYTES

REQUIRED = inspect.Parameter.empty


# --------------------------------------------------------------------------------
# The workload as numpy columns


class Flows:
    """A workload as columns, one row per flow in global order (coflows by arrival
    then id, a coflow's flows contiguous), plus what rebuilding it needs.

    Numeric columns are numpy arrays; ``src_port``, ``dst_port``, ``tenant``,
    ``stage``, ``priority`` (None where absent) and ``depends_on`` (flow ids) are
    lists. ``arrival_s`` and
    ``weight`` are the flow's coflow's. ``coflow`` is each flow's coflow position
    (0, 1, ... in arrival order) and ``first`` the row of each coflow's first flow.
    Transforms change the columns in place and may append rows (``waves``).
    """

    def __init__(self, w: Workload):
        # One list per flow for depends_on: the cyclic GC would scan the heap again
        # and again while they are created (0.75 s instead of 0.2 s on the FB trace).
        with _gc_paused():
            c = w.flow_columns()
        self.source = w.source
        self.fabric = w.fabric
        self.ports = w.ports
        self.coflow_id = np.asarray(c["coflow_id"], dtype=np.uint64)
        self.flow_id = np.asarray(c["flow_id"], dtype=np.uint64)
        self.src = np.asarray(c["src"], dtype=np.int64)
        self.dst = np.asarray(c["dst"], dtype=np.int64)
        self.bytes = np.asarray(c["bytes"], dtype=np.float64)
        self.start_s = np.asarray(c["start_s"], dtype=np.float64)
        self.arrival_s = np.asarray(c["arrival_s"], dtype=np.float64)
        self.weight = np.asarray(c["weight"], dtype=np.float64)
        self.src_port: list = c["src_port"]
        self.dst_port: list = c["dst_port"]
        self.tenant: list = c["tenant"]
        self.stage: list = c["stage"]
        self.priority: list = c["priority"]
        self.depends_on: list = c["depends_on"]
        self._index()

    def _index(self) -> None:
        n = len(self.flow_id)
        new = np.ones(n, dtype=bool)
        new[1:] = self.coflow_id[1:] != self.coflow_id[:-1]
        self.first = np.flatnonzero(new)
        self.coflow = np.cumsum(new) - 1

    @property
    def num_flows(self) -> int:
        return len(self.flow_id)

    @property
    def num_coflows(self) -> int:
        return len(self.first)

    def coflow_arrival(self) -> np.ndarray:
        return self.arrival_s[self.first]

    def coflow_bytes(self) -> np.ndarray:
        return np.add.reduceat(self.bytes, self.first)

    def set_arrivals(self, arrival: np.ndarray) -> None:
        """Moves each coflow to ``arrival[k]``; every flow keeps its start offset
        from its coflow's arrival (offsets a rounding error below zero become 0)."""
        a = np.asarray(arrival, dtype=np.float64)[self.coflow]
        self.start_s = np.maximum(a + (self.start_s - self.arrival_s), a)
        self.arrival_s = a

    def keep(self, mask: np.ndarray) -> None:
        """Keeps the flows where ``mask`` is true (whole coflows); dependencies on
        flows that are gone are dropped."""
        idx = np.flatnonzero(mask)
        for name in (
            "coflow_id",
            "flow_id",
            "src",
            "dst",
            "bytes",
            "start_s",
            "arrival_s",
            "weight",
        ):
            setattr(self, name, getattr(self, name)[idx])
        take = idx.tolist()
        self.src_port = [self.src_port[i] for i in take]
        self.dst_port = [self.dst_port[i] for i in take]
        self.tenant = [self.tenant[i] for i in take]
        self.stage = [self.stage[i] for i in take]
        self.priority = [self.priority[i] for i in take]
        deps = [self.depends_on[i] for i in take]
        if any(deps):
            kept = set(self.flow_id.tolist())
            deps = [[d for d in ds if d in kept] if ds else ds for ds in deps]
        self.depends_on = deps
        self._index()

    def build(self, label: str) -> Workload:
        """The workload of these columns, on the input's fabric with ``self.ports``
        ports; its source is the input's followed by ``| label``."""

        def opt(col: list) -> list | None:
            return col if any(x is not None for x in col) else None

        # GC paused while the columns become millions of Python objects (see __init__).
        with _gc_paused():
            w = _core.workload_from_columns(
                f"{self.source} | {label}",
                self.coflow_id.tolist(),
                self.flow_id.tolist(),
                self.src.tolist(),
                self.dst.tolist(),
                self.bytes.tolist(),
                self.start_s.tolist(),
                arrival_s=self.arrival_s.tolist(),
                weight=self.weight.tolist(),
                src_port=opt(self.src_port),
                dst_port=opt(self.dst_port),
                tenant=opt(self.tenant),
                stage=opt(self.stage),
                priority=opt(self.priority),
                depends_on=self.depends_on if any(self.depends_on) else None,
            )
        fabric = re.sub(r"ports=\d+", f"ports={self.ports}", self.fabric)
        return w.with_fabric(fabric)


@contextlib.contextmanager
def _gc_paused():
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def uplink_capacity(fabric: str) -> float:
    """Sum of the uplink capacities (bytes/s) of a fabric description: ports x the
    rate of a host's uplink. Big switch: ``bigswitch:ports=150,gbps=1`` or
    ``bigswitch:ports=60,up_gbps=1,down_gbps=40`` (``up_gbps``, else ``gbps``).
    FatTree: ``fattree:k=8,ports=150,gbps=1,...`` or
    ``fattree:k=8,ports=150,host_gbps=1,fabric_gbps=10,...`` (the host links:
    ``host_gbps``, else ``gbps``; ``fabric_gbps`` is the switch-to-switch rate)."""
    kind, _, rest = fabric.partition(":")
    opts = dict(kv.strip().split("=", 1) for kv in rest.split(",") if "=" in kv)
    rate_keys = ("host_gbps", "gbps") if kind.strip() == "fattree" else ("up_gbps", "gbps")
    try:
        ports = int(opts["ports"])
        gbps = float(next(opts[k] for k in rate_keys if k in opts))
    except (KeyError, StopIteration, ValueError):
        raise CoflowkitError(f"cannot read the uplink capacity of fabric '{fabric}'") from None
    return ports * gbps * GBPS_BYTES_PER_S


# --------------------------------------------------------------------------------
# The registry


@dataclass(frozen=True)
class Param:
    """A transform parameter. ``kind``: ``float``, ``int``, ``bool``, ``choice`` or
    ``ids`` (distinct whole numbers joined by ``+``, as a sorted tuple);
    ``check`` (with ``expect`` for messages, e.g. ``"> 0"``) limits the values;
    ``default`` comes from the function's signature (``REQUIRED``: none)."""

    name: str
    kind: str
    help: str
    choices: tuple[str, ...] = ()
    check: Callable[[Any], bool] | None = None
    expect: str = ""
    default: Any = REQUIRED

    @property
    def required(self) -> bool:
        return self.default is REQUIRED


@dataclass(frozen=True)
class Transform:
    """A registered transform: its function (columns in, columns out), a one-line
    summary, its parameters and an optional check across parameters."""

    name: str
    func: Callable[..., Flows]
    summary: str
    params: tuple[Param, ...]
    check: Callable[[dict[str, Any]], str | None] | None = None

    def resolve(self, given: dict[str, Any]) -> dict[str, Any]:
        """Every parameter's value (given, converted and checked, or its default)."""
        known = {p.name: p for p in self.params}
        for k in given:
            if k not in known:
                valid = ", ".join(known) or "none"
                raise CoflowkitError(
                    f"transform {self.name}: unknown parameter '{k}'; valid parameters: {valid}"
                )
        out = {}
        for p in self.params:
            if p.name in given:
                out[p.name] = _convert(self.name, p, given[p.name])
            elif p.required:
                raise CoflowkitError(
                    f"transform {self.name}: missing required parameter {p.name} ({p.help})"
                )
            else:
                out[p.name] = p.default
        if self.check is not None:
            msg = self.check(out)
            if msg:
                raise CoflowkitError(f"transform {self.name}: {msg}")
        return out

    def label(self, values: dict[str, Any]) -> str:
        """``name:k=v,...`` with every parameter that has a value (defaults included)."""
        kv = ",".join(f"{k}={_show(v)}" for k, v in values.items() if v is not None)
        return f"{self.name}:{kv}" if kv else self.name

    def run(self, workload: Workload, given: dict[str, Any]) -> Workload:
        if not isinstance(workload, Workload):
            raise CoflowkitError(
                f"transform {self.name}: expected a coflowkit Workload, "
                f"got {type(workload).__name__}"
            )
        values = self.resolve(given)
        label = self.label(values)
        flows = self.func(Flows(workload), **values)
        try:
            return flows.build(label)
        except CoflowkitError as e:
            raise CoflowkitError(f"transform {self.name}: {e}") from None


#: name -> :class:`Transform`, in the order they are listed.
TRANSFORMS: dict[str, Transform] = {}


def _register(summary: str, *params: Param, check=None):
    """Registers ``func(flows, **params) -> Flows`` as a transform named after it, and
    returns the public function ``func(workload, **params) -> Workload``."""

    def deco(func):
        sig = inspect.signature(func)
        first, *names = list(sig.parameters)
        if names != [p.name for p in params]:
            raise TypeError(f"{func.__name__}: parameters {names} are not those registered")
        full = tuple(replace(p, default=sig.parameters[p.name].default) for p in params)
        t = Transform(func.__name__, func, summary, full, check)
        TRANSFORMS[t.name] = t

        @functools.wraps(func)
        def public(workload: Workload, *args, **kwargs) -> Workload:
            try:
                bound = sig.bind_partial(None, *args, **kwargs)
            except TypeError as e:
                raise CoflowkitError(f"transform {t.name}: {e}") from None
            given = dict(bound.arguments)
            given.pop(first)
            return t.run(workload, given)

        public.__signature__ = sig.replace(
            parameters=[
                inspect.Parameter("workload", inspect.Parameter.POSITIONAL_OR_KEYWORD),
                *list(sig.parameters.values())[1:],
            ]
        )
        return public

    return deco


def _convert(tname: str, p: Param, v: Any) -> Any:
    where = f"transform {tname}: {p.name}"
    if v is None and p.default is None:
        return None
    text = v.strip() if isinstance(v, str) else v
    x: Any
    if p.kind == "float":
        try:
            if isinstance(text, bool):
                raise ValueError
            x = float(text)
        except (TypeError, ValueError):
            raise CoflowkitError(f"{where} must be a number, got {v!r}") from None
        if not math.isfinite(x):
            raise CoflowkitError(f"{where} must be a finite number, got {v!r}")
    elif p.kind == "int":
        try:
            if isinstance(text, bool) or (isinstance(text, float) and not text.is_integer()):
                raise ValueError
            x = int(text)
        except (TypeError, ValueError):
            raise CoflowkitError(f"{where} must be a whole number, got {v!r}") from None
    elif p.kind == "bool":
        if isinstance(text, bool):
            x = text
        elif str(text).lower() in ("true", "1", "yes", "on"):
            x = True
        elif str(text).lower() in ("false", "0", "no", "off"):
            x = False
        else:
            raise CoflowkitError(f"{where} must be true or false, got {v!r}")
    elif p.kind == "ids":  # whole numbers joined by '+' (',' separates parameters)
        parts = text.split("+") if isinstance(text, str) else list(text)
        try:
            x = tuple(sorted({int(i) for i in parts if not isinstance(i, bool)}))
            if len(x) != len(parts) or any(i < 0 for i in x):
                raise ValueError
        except (TypeError, ValueError):
            raise CoflowkitError(
                f"{where} must be distinct whole numbers >= 0 joined by '+', got {v!r}"
            ) from None
    elif p.kind == "choice":
        if text not in p.choices:
            raise CoflowkitError(f"{where} must be one of {', '.join(p.choices)}, got {v!r}")
        x = text
    else:  # pragma: no cover - a registry mistake
        raise TypeError(f"unknown parameter kind {p.kind}")
    if p.check is not None and not p.check(x):
        raise CoflowkitError(f"{where} must be {p.expect}, got {v!r}")
    return x


def _show(v: Any) -> str:
    if isinstance(v, tuple):
        return "+".join(map(str, v))
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, float):
        r = repr(v)
        return r[:-2] if r.endswith(".0") else r
    return str(v)


def parse_spec(spec: str) -> tuple[str, dict[str, str]]:
    """``"batch:interval_s=10,spread=instant"`` -> ``("batch", {...})``."""
    if not isinstance(spec, str):
        raise CoflowkitError(f"a transform is NAME or NAME:KEY=VALUE,..., got {spec!r}")
    name, _, rest = spec.strip().partition(":")
    name = name.strip()
    if name not in TRANSFORMS:
        raise CoflowkitError(
            f"unknown transform '{name}'; valid transforms: {', '.join(TRANSFORMS)}"
        )
    params: dict[str, str] = {}
    for item in (s.strip() for s in rest.split(",")):
        if not item:
            continue
        k, eq, v = item.partition("=")
        if not eq:
            raise CoflowkitError(f"transform {name}: '{item}' is not KEY=VALUE")
        k = k.strip()
        if k in params:
            raise CoflowkitError(f"transform {name}: parameter {k} is given twice")
        params[k] = v.strip()
    return name, params


def _resolve(spec: str, params: dict[str, Any]) -> tuple[Transform, dict[str, Any]]:
    name, given = parse_spec(spec)
    for k, v in params.items():
        if k in given:
            raise CoflowkitError(f"transform {name}: parameter {k} is given twice")
        given[k] = v
    return TRANSFORMS[name], given


def apply(workload: Workload, spec: str, **params: Any) -> Workload:
    """Applies one transform: ``spec`` is a name (``"poisson"``) or a name with
    parameters (``"poisson:load=0.8,seed=2"``); ``params`` add parameters. Bad
    input raises :class:`CoflowkitError` naming the transform and the parameter."""
    t, given = _resolve(spec, params)
    return t.run(workload, given)


def apply_all(workload: Workload, specs: Iterable[str]) -> Workload:
    """Applies ``specs`` in order (each as in :func:`apply`)."""
    for s in specs:
        workload = apply(workload, s)
    return workload


def canonical(spec: str, **params: Any) -> str:
    """The spec with every parameter spelled out (defaults included), after checking
    it: ``"batch"`` -> ``"batch:interval_s=10,spread=coda,seed=1"``. Cache keys use it."""
    t, given = _resolve(spec, params)
    return t.label(t.resolve(given))


def catalogue() -> list[dict[str, Any]]:
    """The transforms: name, summary and parameters (name, kind, default, help)."""
    return [
        {
            "name": t.name,
            "summary": t.summary,
            "params": [
                {
                    "name": p.name,
                    "kind": p.kind if p.kind != "choice" else "|".join(p.choices),
                    "default": None if p.required else p.default,
                    "required": p.required,
                    "help": p.help,
                }
                for p in t.params
            ],
        }
        for t in TRANSFORMS.values()
    ]


def _seed() -> Param:
    return Param(
        "seed", "int", "seed of numpy.random.default_rng", check=lambda x: x >= 0, expect=">= 0"
    )


def _positive(name: str, help: str) -> Param:
    return Param(name, "float", help, check=lambda x: x > 0, expect="> 0")


# --------------------------------------------------------------------------------
# The transforms


@_register(
    "release the coflows arriving in each window [kB, (k+1)B) together at (k+1)B",
    _positive("interval_s", "window length B, seconds"),
    Param(
        "spread",
        "choice",
        "instant: all at (k+1)B (MCS); coda: each batch spread over U[0.1, 0.3] s (CODA)",
        choices=("coda", "instant"),
    ),
    _seed(),
)
def batch(flows: Flows, interval_s: float = 10.0, spread: str = "coda", seed: int = 1) -> Flows:
    """Batched arrivals. A coflow arriving at ``a`` is in window ``k``, the ``k``
    with ``kB <= a < (k+1)B`` (``B = interval_s``; computed in floating point, an
    arrival less than 1e-9 s below a boundary counting as on it, as the engine's
    events do), and is released at ``(k+1)B``. ``instant`` (the MCS paper): every
    coflow of the batch arrives at that instant (ties broken by coflow id).
    ``coda`` (the CODA paper: "all coflows in one batch condensed with very close
    arrival times (100-300 ms)"): each batch draws a spread ``S ~ U[0.1, 0.3]`` s
    and each of its coflows arrives at ``(k+1)B + U[0, S]``. Draws: one spread per
    non-empty batch in increasing ``k``, then one offset per coflow in arrival
    order. Flows keep their start offsets."""
    a = flows.coflow_arrival() + TIME_EPS  # within 1e-9 s of a boundary: on it
    k = np.floor(a / interval_s)
    k = np.where((k + 1) * interval_s <= a, k + 1, k)
    k = np.where(k * interval_s > a, k - 1, k)
    release = (k + 1) * interval_s
    if spread == "coda":
        rng = np.random.default_rng(seed)
        batches, which = np.unique(k, return_inverse=True)
        width = rng.uniform(0.1, 0.3, size=len(batches))
        release = release + rng.uniform(0.0, 1.0, size=len(a)) * width[which]
    flows.set_arrivals(release)
    return flows


@_register(
    "Poisson arrivals at a target load: lambda = load x uplink capacity / mean coflow bytes",
    Param(
        "load",
        "float",
        "target load, in (0, 1]",
        check=lambda x: 0 < x <= 1,
        expect="in (0, 1]",
    ),
    _seed(),
)
def poisson(flows: Flows, load: float = REQUIRED, seed: int = 1) -> Flows:
    """Poisson arrivals: ``lambda = load * C / S`` coflows per second, with ``C`` the
    sum of the fabric's uplink capacities (ports x port rate, bytes/s) and ``S`` the
    mean coflow size (total bytes). Coflows keep their order (arrival, then id);
    the first keeps its arrival, each next one arrives an ``Exp(mean 1/lambda)``
    gap after the previous (``num_coflows - 1`` draws, in order). Flows keep
    their start offsets."""
    lam = load * uplink_capacity(flows.fabric) / float(flows.coflow_bytes().mean())
    rng = np.random.default_rng(seed)
    gaps = rng.exponential(1.0 / lam, size=flows.num_coflows - 1)
    a0 = float(flows.coflow_arrival()[0])
    flows.set_arrivals(a0 + np.concatenate([[0.0], np.cumsum(gaps)]))
    return flows


@_register(
    "flow starts after the coflow's arrival as in Spark (U[0, 0.1] s) or Hadoop "
    "(U[0, 1] + Exp(0.1) s); stretched: U[0, 5] (+ Exp(1)) (CODA Sec. 6)",
    Param("model", "choice", "spark or hadoop", choices=("spark", "hadoop")),
    Param("stretched", "bool", "the stretched variant (CODA Sec. 6.3)"),
    Param(
        "tick_s",
        "float",
        "round offsets up to a multiple of this (0: exact); flows of a coflow in one "
        "tick start together",
        check=lambda x: x >= 0,
        expect=">= 0",
    ),
    _seed(),
)
def starts(
    flows: Flows, model: str = REQUIRED, stretched: bool = False, tick_s: float = 0.0, seed: int = 1
) -> Flows:
    """Flow start = coflow arrival + offset (CODA Secs. 6.1 and 6.3): ``spark``
    U(0, 0.1 s); ``hadoop`` U(0, 1 s) + Exp(mean 0.1 s); stretched ``spark`` U(0, 5 s);
    stretched ``hadoop`` U(0, 5 s) + Exp(mean 1 s). Arrivals (hence CCTs, measured
    from them) and dependencies are unchanged. Draws: one uniform per flow in global
    order, then (hadoop) one exponential per flow. With ``tick_s > 0`` each offset
    is rounded up to a whole number of ticks: every flow start is an event of an
    exact simulation, and a tick (say 10 ms, a tenth of CODA's 100 ms coordination
    interval) bounds their number per coflow."""
    span = 5.0 if stretched else (0.1 if model == "spark" else 1.0)
    rng = np.random.default_rng(seed)
    offset = rng.uniform(0.0, span, size=flows.num_flows)
    if model == "hadoop":
        offset += rng.exponential(1.0 if stretched else 0.1, size=flows.num_flows)
    if tick_s > 0:
        offset = np.ceil(offset / tick_s) * tick_s
    flows.start_s = flows.arrival_s + offset
    return flows


@_register(
    "fill the 5-tuple ports: spark (one ephemeral destination port per coflow and "
    "destination) or hadoop (source 13562, ephemeral destination per flow)",
    Param("model", "choice", "spark or hadoop", choices=("spark", "hadoop")),
    _seed(),
)
def ports(flows: Flows, model: str = REQUIRED, seed: int = 1) -> Flows:
    """Sets every flow's ``src_port`` and ``dst_port`` (replacing any), from the
    ephemeral range [32768, 60999]. ``spark``: all flows of a coflow to one
    destination host (one executor) share one destination port, one draw per
    (coflow, destination) pair in (arrival order, destination) order; then one
    source port per flow in global order. ``hadoop``: source port 13562 (the
    shuffle handler), one destination port per flow in global order."""
    lo, hi = EPHEMERAL_PORTS
    rng = np.random.default_rng(seed)
    n = flows.num_flows
    if model == "spark":
        key = flows.coflow.astype(np.int64) * (int(flows.dst.max()) + 1) + flows.dst
        pairs, which = np.unique(key, return_inverse=True)
        dport = rng.integers(lo, hi + 1, size=len(pairs))[which]
        sport = rng.integers(lo, hi + 1, size=n)
    else:
        sport = np.full(n, HADOOP_SHUFFLE_PORT)
        dport = rng.integers(lo, hi + 1, size=n)
    flows.src_port = sport.tolist()
    flows.dst_port = dport.tolist()
    return flows


def _one_of_max_senders_or_count(v: dict[str, Any]) -> str | None:
    if (v["max_senders"] is None) == (v["count"] is None):
        return "give exactly one of max_senders and count"
    return None


@_register(
    "senders in waves (at most max_senders each, or count waves), each after the previous",
    Param("max_senders", "int", "senders per wave (>= 1)", check=lambda x: x >= 1, expect=">= 1"),
    Param(
        "count",
        "int",
        "waves per coflow (>= 1): ceil(senders / count) senders each",
        check=lambda x: x >= 1,
        expect=">= 1",
    ),
    Param(
        "max_pairs",
        "int",
        "above this many (wave w, wave w+1) flow pairs, one barrier flow links them",
        check=lambda x: x >= 0,
        expect=">= 0",
    ),
    check=_one_of_max_senders_or_count,
)
def waves(
    flows: Flows,
    max_senders: int | None = None,
    count: int | None = None,
    max_pairs: int = 2500,
) -> Flows:
    """Multi-wave senders. A coflow's distinct senders, sorted by host, are split
    into consecutive waves of at most ``max_senders``, or of ``ceil(s / count)``
    for a coflow of ``s`` senders (so ``count`` waves, fewer when ``s < count``:
    Stream's multi-wave case studies of 2, 3 and 4 waves); every flow of wave w+1
    depends on every flow of wave w, so a wave starts when the previous one ends
    (flows keep their own start times and dependencies too).

    Linking two waves of ``a`` and ``b`` flows directly takes ``a·b`` dependencies:
    on the Facebook trace with ``max_senders=10`` that is 7·10^8, too many to hold.
    So when ``a·b > max_pairs`` the waves are linked by a *barrier*: one extra flow
    of the coflow (1e-6 B, the engine's finish tolerance, on the path of wave w+1's
    first flow and with its tenant, stage and priority, starting at the coflow's
    arrival, with a new id above every flow id)
    that depends on every flow of wave w, and on which every flow of wave w+1
    depends: ``a + b`` dependencies. The barrier finishes at the instant
    wave w ends, whatever rate the policy gives it, so wave w+1 starts exactly then:
    the same start times as the direct links. It adds one flow (and 1e-6 B) to its
    coflow; with the default ``max_pairs`` = 2500 only coflows with more than 100
    flows get barriers (``a·b > 2500`` implies ``a + b > 100``), so no coflow
    changes bin (narrow is at most 50 flows)."""
    n = flows.num_flows
    span = int(flows.src.max()) + 1
    key = flows.coflow.astype(np.int64) * span + flows.src
    pairs, which = np.unique(key, return_inverse=True)  # (coflow, sender), sorted
    pair_coflow = pairs // span
    first = np.searchsorted(pair_coflow, pair_coflow, side="left")
    rank = np.arange(len(pairs)) - first
    if count is not None:
        senders = np.searchsorted(pair_coflow, pair_coflow, side="right") - first
        per_wave = -(-senders // count)  # ceil
    else:
        per_wave = max_senders
    wave = (rank // per_wave)[which]
    if not (wave > 0).any():
        return flows
    order = np.lexsort((np.arange(n), wave, flows.coflow))
    cw = flows.coflow[order], wave[order]
    cut = np.flatnonzero((cw[0][1:] != cw[0][:-1]) | (cw[1][1:] != cw[1][:-1])) + 1
    groups = np.split(order, cut)
    deps = list(flows.depends_on)
    ids = flows.flow_id
    next_id = int(ids.max()) + 1
    extra: list[tuple[int, int, list[int]]] = []  # (row of wave w+1's first flow, id, deps)
    for prev, cur in itertools.pairwise(groups):
        if flows.coflow[prev[0]] != flows.coflow[cur[0]]:
            continue
        before = ids[prev].tolist()
        if len(prev) * len(cur) <= max_pairs:
            link = before
        else:
            extra.append((int(cur.min()), next_id, before))
            link = [next_id]
            next_id += 1
        for i in cur.tolist():
            deps[i] = deps[i] + link if deps[i] else link
    flows.depends_on = deps
    _append_barriers(flows, extra)
    return flows


def _append_barriers(flows: Flows, barriers: list[tuple[int, int, list[int]]]) -> None:
    """Appends one barrier flow per ``(row, flow id, depends_on)``: a flow of
    ``BARRIER_BYTES`` with the given id and dependencies, in the coflow of flow
    ``row``, on its path, with its weight, tenant, stage and priority, no ports, and
    starting at the coflow's arrival. The rows go at the end (``first``/``coflow``
    are not updated: the columns are ready for :meth:`Flows.build`). Used by
    ``waves`` and ``dag``; the caller makes the flows that wait for a barrier
    depend on its id."""
    if not barriers:
        return
    rows = np.array([r for r, _, _ in barriers], dtype=np.int64)
    take = rows.tolist()
    arr = flows.arrival_s[rows]
    flows.coflow_id = np.concatenate([flows.coflow_id, flows.coflow_id[rows]])
    flows.flow_id = np.concatenate(
        [flows.flow_id, np.array([b for _, b, _ in barriers], dtype=np.uint64)]
    )
    flows.src = np.concatenate([flows.src, flows.src[rows]])
    flows.dst = np.concatenate([flows.dst, flows.dst[rows]])
    flows.bytes = np.concatenate([flows.bytes, np.full(len(rows), BARRIER_BYTES)])
    flows.start_s = np.concatenate([flows.start_s, arr])
    flows.arrival_s = np.concatenate([flows.arrival_s, arr])
    flows.weight = np.concatenate([flows.weight, flows.weight[rows]])
    flows.src_port = flows.src_port + [None] * len(rows)
    flows.dst_port = flows.dst_port + [None] * len(rows)
    flows.tenant = flows.tenant + [flows.tenant[r] for r in take]
    flows.stage = flows.stage + [flows.stage[r] for r in take]
    flows.priority = flows.priority + [flows.priority[r] for r in take]
    flows.depends_on = flows.depends_on + [d for _, _, d in barriers]


#: The ``dag`` shapes: each sub-coflow's name and the sub-coflows it waits for (its
#: children), in the order that sets its port rotation and its number (the
#: ``stage`` column, 1 + its position; leaves first, the root — the final stage —
#: last).
DAG_SHAPES: dict[str, tuple[tuple[str, tuple[str, ...]], ...]] = {
    # A TPC-DS query-42-like plan: three scans, two joins, an aggregation.
    "tpcds": (
        ("scan_a", ()),
        ("scan_b", ()),
        ("scan_c", ()),
        ("join1", ("scan_a", "scan_b")),
        ("join2", ("join1", "scan_c")),
        ("agg", ("join2",)),
    ),
    # Facebook Tao's layers: databases, cache leader, cache followers, web server.
    "tao": (
        ("db1", ()),
        ("db2", ()),
        ("leader", ("db1", "db2")),
        ("follower1", ("leader",)),
        ("follower2", ("leader",)),
        ("web", ("follower1", "follower2")),
    ),
}


@_register(
    "each coflow becomes a multi-stage coflow: a DAG of sub-coflows replicating it "
    "(Stream's many-to-many evaluation)",
    Param(
        "shape",
        "choice",
        "tpcds: 3 scans -> 2 joins -> aggregation (6 stages); tao: 2 databases -> cache "
        "leader -> 2 cache followers -> web server (6 stages)",
        choices=tuple(DAG_SHAPES),
    ),
)
def dag(flows: Flows, shape: str = REQUIRED) -> Flows:
    """Multi-stage coflows (Stream's many-to-many evaluation: "each DAG structure is
    made up of sub-coflows that are exact replications of a coflow taken from the
    original trace; each DAG structure is mapped to a different coflow").

    Each coflow becomes ``S`` sub-coflows (the stages of :data:`DAG_SHAPES`
    ``[shape]``, S = 6), each a copy of its flows with the same sizes. Stage j (in
    the shape's order, 0-based) moves every endpoint h to ``(h + j*P // S) mod P``
    (P = the port count), so stages use different hosts. Flow ids: the copy of
    flow f in stage j gets ``j*B + f`` with ``B`` = the largest flow id + 1 (stage
    0 keeps the ids). The ``stage`` column is the sub-coflow's number, ``j + 1``
    (1..S, unique within the coflow, so sibling sub-coflows are never merged);
    Stream's internal ids (its Algorithm 1) are not stored: the ``stream`` policy
    computes them from the stage DAG that the dependencies define. ``priority``,
    tenant, ports and weight are copied from the original flow.

    A parent waits for all its children through one barrier flow (as ``waves``):
    ``BARRIER_BYTES``, in the parent's stage (its number), on the path of the
    parent's first flow, depending on every flow of its children; every flow of the
    parent depends on it. Barrier ids are ``S*B``, ``S*B + 1``, ... in coflow order
    (arrival, id) then stage order. The coflow keeps its id, arrival and weight;
    leaf flows keep their start times; parent flows start at the arrival (their
    dependencies gate them). A coflow with a flow that already has dependencies is
    an error. Deterministic: no random draws, and ``shape`` is the only
    parameter."""
    stages = DAG_SHAPES[shape]
    _check_dag_input(flows, len(stages), sum(1 for _, cs in stages if cs))
    first, size = flows.first, np.diff(np.append(flows.first, flows.num_flows))
    block = _replicate_stages(flows, stages)
    flows.depends_on, barriers = _link_stages(flows, stages, first, size, block)
    _append_barriers(flows, barriers)
    return flows


def _check_dag_input(flows: Flows, stages: int, parents: int) -> None:
    """dag needs coflows without dependencies, and room for the new flow ids."""
    has_deps = next((i for i, d in enumerate(flows.depends_on) if d), None)
    if has_deps is not None:
        raise CoflowkitError(
            f"transform dag: coflow {int(flows.coflow_id[has_deps])} already has dependencies "
            f"(flow {int(flows.flow_id[has_deps])} waits for flow "
            f"{flows.depends_on[has_deps][0]}); dag needs coflows without dependencies"
        )
    block = int(flows.flow_id.max()) + 1
    if stages * block + parents * flows.num_coflows > 2**64:
        raise CoflowkitError(
            f"transform dag: flow ids up to {block - 1} leave no room for {stages} stages "
            "of new ids below 2^64"
        )


def _replicate_stages(flows: Flows, stages) -> int:
    """Every flow copied once per stage, coflow by coflow (arrival order), stage by
    stage, flows in order; stage j's endpoints shifted by j·P/S ports. Returns the
    id block B (stage j's copy of flow f has id j·B + f)."""
    S, P, n = len(stages), flows.ports, flows.num_flows
    block = int(flows.flow_id.max()) + 1
    row = np.tile(np.arange(n), S)
    j = np.repeat(np.arange(S), n)
    order = np.lexsort((row, j, flows.coflow[row]))
    row, j = row[order], j[order]
    leaf = np.array([not cs for _, cs in stages])[j]
    shift = (np.arange(S) * P // S)[j]
    arrival = flows.arrival_s[row]
    take = row.tolist()
    flows.coflow_id = flows.coflow_id[row]
    flows.flow_id = flows.flow_id[row] + j.astype(np.uint64) * np.uint64(block)
    flows.src = (flows.src[row] + shift) % P
    flows.dst = (flows.dst[row] + shift) % P
    flows.bytes = flows.bytes[row]
    flows.start_s = np.where(leaf, flows.start_s[row], arrival)
    flows.arrival_s = arrival
    flows.weight = flows.weight[row]
    flows.src_port = [flows.src_port[i] for i in take]
    flows.dst_port = [flows.dst_port[i] for i in take]
    flows.tenant = [flows.tenant[i] for i in take]
    flows.priority = [flows.priority[i] for i in take]
    flows.stage = (j + 1).tolist()  # the sub-coflow's number
    flows._index()
    return block


def _link_stages(flows: Flows, stages, first, size, block: int):
    """Each parent stage's flows depend on one barrier that depends on every flow of
    its children. ``first``/``size``: each coflow's first row and flow count before
    replication. Returns the dependencies and the barriers to append."""
    S = len(stages)
    pos = {name: j for j, (name, _) in enumerate(stages)}
    with _gc_paused():
        deps: list[list[int]] = [[] for _ in range(flows.num_flows)]
        ids_new = flows.flow_id.tolist()
        barriers: list[tuple[int, int, list[int]]] = []
        next_id = S * block
        for k in range(len(first)):
            m, base = int(size[k]), S * int(first[k])  # stage j of coflow k: base + j*m + i
            for name, cs in stages:
                if not cs:
                    continue
                start = base + pos[name] * m
                waits = [f for c in cs for f in ids_new[base + pos[c] * m : base + pos[c] * m + m]]
                barriers.append((start, next_id, waits))
                link = [next_id]
                for r in range(start, start + m):
                    deps[r] = link
                next_id += 1
    return deps, barriers


@_register(
    "the first count coflows by arrival (cheaper than --first before a costly transform)",
    Param(
        "count", "int", "number of coflows to keep (>= 1)", check=lambda x: x >= 1, expect=">= 1"
    ),
)
def head(flows: Flows, count: int = REQUIRED) -> Flows:
    """Keeps the first ``count`` coflows in the workload's order (arrival, then id),
    with all their flows: what ``--first`` does after the transforms, available as
    a transform so that an expensive one (``dag``) runs on the kept coflows only.
    Dependencies on flows of dropped coflows are dropped."""
    flows.keep(flows.coflow < count)
    return flows


@_register(
    "the named coflows removed (a leave-out experiment: who holds a coflow back)",
    Param("coflows", "ids", "ids of the coflows to remove, joined by '+' (e.g. 163+247)"),
)
def drop(flows: Flows, coflows: tuple[int, ...] = REQUIRED) -> Flows:
    """Removes the coflows whose id is in ``coflows``, with all their flows; every
    other coflow keeps its arrival. Dependencies on flows of removed coflows are
    dropped. An id the workload does not have is an error."""
    present = set(flows.coflow_id.tolist())
    missing = [c for c in coflows if c not in present]
    if missing:
        raise CoflowkitError(
            f"transform drop: coflows: no coflow with id {', '.join(map(str, missing))} "
            "in the workload"
        )
    if len(coflows) == len(present):
        raise CoflowkitError("transform drop: coflows: that is every coflow of the workload")
    flows.keep(~np.isin(flows.coflow_id, coflows))
    return flows


def _one_of_fraction_or_count(v: dict[str, Any]) -> str | None:
    if (v["fraction"] is None) == (v["count"] is None):
        return "give exactly one of fraction and count"
    return None


@_register(
    "a seeded random subset of the coflows (fraction or count), original arrivals",
    Param(
        "fraction",
        "float",
        "share of the coflows to keep, in (0, 1]",
        check=lambda x: 0 < x <= 1,
        expect="in (0, 1]",
    ),
    Param(
        "count", "int", "number of coflows to keep (>= 1)", check=lambda x: x >= 1, expect=">= 1"
    ),
    _seed(),
    check=_one_of_fraction_or_count,
)
def sample(
    flows: Flows, fraction: float | None = None, count: int | None = None, seed: int = 1
) -> Flows:
    """Keeps ``count`` coflows, or ``max(1, round(fraction x num_coflows))`` (halves
    round up), drawn uniformly without replacement (``rng.choice``) among the
    coflows in arrival order, with all their flows and their original arrivals.
    Dependencies on flows of dropped coflows are dropped."""
    total = flows.num_coflows
    k = count if count is not None else max(1, math.floor(fraction * total + 0.5))
    if k > total:
        raise CoflowkitError(
            f"transform sample: count must be at most the number of coflows ({total}), got {k}"
        )
    keep = np.sort(np.random.default_rng(seed).choice(total, size=k, replace=False))
    flows.keep(np.isin(flows.coflow, keep))
    return flows


@_register(
    "N copies of the workload, one after another (sequential) or at the same times on "
    "the same ports (overlap)",
    Param("times", "int", "number of copies N (>= 1)", check=lambda x: x >= 1, expect=">= 1"),
    Param(
        "mode",
        "choice",
        "sequential: copy i shifted by i x the last arrival; overlap: arrivals kept",
        choices=("sequential", "overlap"),
    ),
)
def repeat(flows: Flows, times: int = REQUIRED, mode: str = "sequential") -> Flows:
    """Copy ``i`` (0-based) of every coflow and flow gets id ``id + i x (max id + 1)``
    (coflow and flow ids separately, dependencies follow their flow). ``sequential``
    moves copy ``i`` by ``i x L``, with ``L`` the last coflow arrival of the input,
    so each copy starts where the previous one's arrivals end: N times the
    duration at the same concurrency. ``overlap`` keeps every arrival and every
    port (port ``p`` of copy ``i`` is port ``p``): the same duration with N times
    the concurrent flows on the same ports. ``times=1`` is the identity."""
    if times == 1:
        return flows
    n = flows.num_flows
    cstep = int(flows.coflow_id.max()) + 1 if n else 1
    fstep = int(flows.flow_id.max()) + 1 if n else 1
    shift = float(flows.arrival_s.max()) if (n and mode == "sequential") else 0.0
    copies = np.repeat(np.arange(times, dtype=np.uint64), n)
    flows.coflow_id = np.tile(flows.coflow_id, times) + copies * np.uint64(cstep)
    flows.flow_id = np.tile(flows.flow_id, times) + copies * np.uint64(fstep)
    offset = copies.astype(np.float64) * shift
    flows.start_s = np.tile(flows.start_s, times) + offset
    flows.arrival_s = np.tile(flows.arrival_s, times) + offset
    for name in ("src", "dst", "bytes", "weight"):
        setattr(flows, name, np.tile(getattr(flows, name), times))
    for name in ("src_port", "dst_port", "tenant", "stage", "priority"):
        setattr(flows, name, getattr(flows, name) * times)
    deps = flows.depends_on
    flows.depends_on = [
        [d + i * fstep for d in ds] if ds else ds for i in range(times) for ds in deps
    ]
    flows._index()
    return flows


def _map_ports(flows: Flows, target: int, mapping: str) -> np.ndarray:
    """Port of every host ``0..flows.ports - 1`` on a ``target``-port fabric."""
    hosts = flows.ports
    if mapping == "mod":
        return np.arange(hosts) % target
    # balanced: hosts by decreasing bytes (sent + received), ties by host, each to
    # the port with the fewest bytes so far, ties by port (greedy LPT).
    load = np.bincount(flows.src, weights=flows.bytes, minlength=hosts)
    load = load + np.bincount(flows.dst, weights=flows.bytes, minlength=hosts)
    out = np.zeros(hosts, dtype=np.int64)
    heap = [(0.0, p) for p in range(target)]
    for h in sorted(range(hosts), key=lambda h: (-load[h], h)):
        b, p = heapq.heappop(heap)
        out[h] = p
        heapq.heappush(heap, (b + float(load[h]), p))
    return out


@_register(
    "scale sizes (bytes), times (time) and the port count (ports) for small testbeds",
    _positive("bytes", "factor on every flow size"),
    Param(
        "ports",
        "int",
        "port count of the new fabric (default: unchanged)",
        check=lambda x: x >= 1,
        expect=">= 1",
    ),
    _positive("time", "factor on arrivals and start times"),
    Param(
        "mapping",
        "choice",
        "host to port with ports: mod (h mod P) or balanced (even bytes per port)",
        choices=("mod", "balanced"),
    ),
)
def scale(
    flows: Flows,
    bytes: float = 1.0,
    ports: int | None = None,
    time: float = 1.0,
    mapping: str = "mod",
) -> Flows:
    """Multiplies flow sizes by ``bytes`` and arrivals and start times by ``time``
    (offsets scale too). With ``ports = P``, the fabric gets P ports (same link
    rates) and host h moves to port ``h mod P`` (``mapping=mod``) or, with
    ``mapping=balanced``, hosts taken by decreasing bytes sent + received go each
    to the port with the fewest bytes so far (ties: lowest host, lowest port), which
    evens the load per port. Flows between two hosts on one port stay (they use
    that port's uplink and downlink)."""
    flows.bytes = flows.bytes * bytes
    if time != 1.0:
        a = flows.arrival_s * time
        flows.start_s = np.maximum(flows.start_s * time, a)
        flows.arrival_s = a
    if ports is not None:
        port_of = _map_ports(flows, ports, mapping)
        flows.src = port_of[flows.src]
        flows.dst = port_of[flows.dst]
        flows.ports = ports
    return flows
