"""The Python API: loading traces, simulating, and results as DataFrames."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Callable

import pandas as pd

from coflowkit import _core, metrics
from coflowkit._core import CoflowkitError, Workload

PARQUET_MAGIC = b"PAR1"


def load_trace(path: str | os.PathLike, format: str | None = None) -> Workload:
    """Reads a trace: Coflow-Benchmark, Sincronia, or a flow table (CSV or Parquet).

    ``format`` is ``benchmark``, ``sincronia`` or ``flows``; by default it is detected
    from the content. Bad input raises :class:`CoflowkitError` naming the file, the
    line (or row) and the field.
    """
    path = os.fspath(path)
    if not os.path.exists(path):
        raise CoflowkitError(f"{path}: no such file")
    with open(path, "rb") as fh:
        head = fh.read(4)
    if head == PARQUET_MAGIC:
        if format not in (None, "auto", "flows"):
            raise CoflowkitError(f"{path}: a Parquet file is a flow table, not format '{format}'")
        from coflowkit.parquet import read_parquet_flows

        return read_parquet_flows(path)
    return _core.read_trace(path, format)


def synthetic(name: str = "fb", seed: int = 0) -> Workload:
    """A generated workload. ``fb``: the statistics of the Facebook trace (docs/synthetic.md)."""
    if name != "fb":
        raise CoflowkitError(f"unknown synthetic workload '{name}'; valid: fb")
    if not isinstance(seed, int) or seed < 0:
        raise CoflowkitError(f"seed must be a whole number >= 0, got {seed!r}")
    return _core.synthetic_fb(seed)


def write_trace(workload: Workload, path: str | os.PathLike, format: str) -> None:
    """Writes ``workload`` as ``benchmark``, ``sincronia``, ``flows`` (CSV) or ``parquet``."""
    path = os.fspath(path)
    if format == "parquet":
        from coflowkit.parquet import write_parquet_flows

        write_parquet_flows(workload, path)
        return
    text = workload.to_text(format)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)


def policies() -> list[dict[str, Any]]:
    """The policy catalogue: name, information model, summary and parameters."""
    return [
        {
            "name": name,
            "info": info,
            "summary": summary,
            "params": [{"name": p, "default": d, "help": h} for p, d, h in params],
        }
        for name, info, summary, params in _core.policies()
    ]


@dataclass
class Result:
    """The outcome of one simulation."""

    policy: str
    params: dict[str, str]
    fabric: str
    coflows: pd.DataFrame
    summary: dict[str, Any]
    events: int = 0
    policy_calls: int = 0
    extra: dict[str, Any] = field(default_factory=dict)


def _params(params: Mapping[str, Any] | None) -> dict[str, str]:
    out = {}
    for k, v in (params or {}).items():
        if isinstance(v, bool):
            v = str(v).lower()
        out[str(k)] = str(v)
    return out


def simulate(
    workload: Workload,
    policy: str,
    params: Mapping[str, Any] | None = None,
    fabric: str | None = None,
    *,
    check_invariants: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> Result:
    """Simulates ``workload`` under ``policy``.

    ``params`` are the policy's parameters (``coflowkit policies`` lists them);
    ``fabric`` (e.g. ``bigswitch:gbps=10``) and ``check_invariants`` are engine
    options, kept apart from the policy's parameters.
    """
    if not isinstance(workload, Workload):
        raise CoflowkitError(
            f"workload must be a coflowkit Workload, got {type(workload).__name__}"
        )
    p = _params(params)
    if fabric:
        workload = workload.with_fabric(fabric)
    raw = _core.simulate(workload, policy, p, check_invariants, progress)
    table = metrics.coflow_table(workload, raw["finish_s"])
    return Result(
        policy=policy,
        params=p,
        fabric=workload.fabric,
        coflows=table,
        summary=metrics.summarize(table),
        events=raw["events"],
        policy_calls=raw["policy_calls"],
        extra={"checks": raw["checks"]},
    )
