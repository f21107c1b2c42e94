"""The Python API: loading traces, simulating, and results as DataFrames."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

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
    """The policy catalogue, in the registry's order: ``name``, ``info`` (the
    information model), ``knows`` (what else it uses, for the docs), ``summary``,
    ``rule`` (one line), ``paper``, ``params`` (name, default, help) and
    ``example_ccts`` (its hand-computed CCTs of the shared worked example)."""
    out = []
    for p in _core.policies():
        p["params"] = [{"name": n, "default": d, "help": h} for n, d, h in p["params"]]
        out.append(p)
    return out


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
    #: Engine counters and timings; for ``coda`` also ``flow_labels`` (each flow's
    #: last label) and ``flow_bindings`` (the label late binding last bound it to),
    #: both coflow indices in the workload's order (`split` errors add labels past
    #: them), by flow in the order of
    #: ``Workload.flow_columns()``, -1 for a flow never seen or never served.
    #: A policy's own per-flow columns, in the same flow order (NaN for a flow it
    #: never saw): for ``stream``, ``stream_first_class`` and ``stream_last_class``
    #: (the class eq. (5) gave the flow's receiver unit when it appeared, and its
    #: class at the end; 0 highest), ``stream_child_mib`` (the unit's
    #: Child-to-Parent bytes) and ``stream_internal_id`` (Algorithm 1's id).
    extra: dict[str, Any] = field(default_factory=dict)
    #: Instantaneous metrics (``record=`` given): one row per sample with
    #: ``time_s, duration_s, active_coflows, min_progress, mean_progress,
    #: max_progress, disparity, utilization``; ``None`` otherwise.
    series: pd.DataFrame | None = None
    #: Per-coflow progress rows (``record_coflows=True``): ``time_s, coflow_id, progress``.
    progress: pd.DataFrame | None = None
    #: Summary of ``series`` (see :func:`coflowkit.metrics.summarize_series`).
    series_summary: dict[str, Any] | None = None
    #: False when the run stopped at ``horizon_s`` with coflows unfinished.
    complete: bool = True


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
    progress: bool | Callable[[int, int, float], None] | None = None,
    record: float | str | None = None,
    record_coflows: bool = False,
    horizon_s: float | None = None,
    engine: str = "exact",
) -> Result:
    """Simulates ``workload`` under ``policy``.

    ``engine`` is ``"exact"`` (the default: event-driven, no time steps) or
    ``"coflowsim"`` (``"coflowsim:epoch_s=10.24"``): CoflowSim's model, with which
    the NC-DRF, Coflex and MCS papers made their numbers (docs/engines.md). Under
    it ``cct_s`` is CoflowSim's job duration / 1000 and ``admitted_s`` its admission.

    ``params`` are the policy's parameters (``coflowkit policies`` lists them);
    ``fabric`` (e.g. ``bigswitch:gbps=10``) and ``check_invariants`` are engine
    options, kept apart from the policy's parameters.

    ``record`` asks for the instantaneous metrics (coflow progress, isolation
    guarantee, progress disparity, utilization): ``"every"`` (or 0) samples after
    every event, a number of seconds samples on a grid from the first event.
    ``record_coflows`` also keeps each active coflow's progress at every sample.
    ``horizon_s`` stops the run before the first event after that time.
    ``progress``: a progress bar on stderr (coflows finished, simulated time) when
    true, or by default when stderr is a terminal; a callable gets
    ``(coflows finished, coflows, simulated seconds)`` now and then instead.
    """
    if not isinstance(workload, Workload):
        raise CoflowkitError(
            f"workload must be a coflowkit Workload, got {type(workload).__name__}"
        )
    p = _params(params)
    interval = parse_record(record)
    if fabric:
        workload = workload.with_fabric(fabric)
    name, epoch_units = parse_engine(engine)
    if name == "coflowsim":
        return _simulate_coflowsim(
            workload, policy, p, epoch_units, check_invariants, interval, horizon_s
        )
    with progress_bar(progress, f"{policy}") as cb:
        raw = _core.simulate(
            workload, policy, p, check_invariants, cb, interval, record_coflows, horizon_s
        )
    return result_from_raw(workload, policy, p, raw)


ENGINES = ("exact", "coflowsim")
#: CoflowSim's admission epoch: 10 × 1024 of its units (1/1024 s), printed by the
#: papers as 10.24 s (its units are read as milliseconds).
COFLOWSIM_EPOCH_S = 10.24


def parse_engine(spec: str | None) -> tuple[str, int]:
    """``exact`` → ("exact", 0); ``coflowsim[:epoch_s=S]`` → ("coflowsim", epoch in
    CoflowSim units, S × 1000, a positive multiple of its 8-unit step)."""
    spec = (spec or "exact").strip()
    name, _, opts = spec.partition(":")
    name = name.strip().lower()
    if name not in ENGINES:
        raise CoflowkitError(f"unknown engine {name!r}; engines: {', '.join(ENGINES)}")
    if name == "exact":
        if opts.strip():
            raise CoflowkitError(f"engine exact takes no options, got {opts!r}")
        return name, 0
    epoch_s = COFLOWSIM_EPOCH_S
    for kv in filter(None, (x.strip() for x in opts.split(","))):
        k, eq, v = kv.partition("=")
        if not eq or k.strip() != "epoch_s":
            raise CoflowkitError(
                f"engine coflowsim: option {kv!r} is not epoch_s=SECONDS (its only option)"
            )
        try:
            epoch_s = float(v)
        except ValueError:
            raise CoflowkitError(f"engine coflowsim: epoch_s={v!r} is not a number") from None
    units = epoch_s * 1000.0
    if not (
        8 <= units <= 86400 * 1024 and abs(units - round(units)) < 1e-6 and round(units) % 8 == 0
    ):
        raise CoflowkitError(
            f"engine coflowsim: epoch_s must be a positive multiple of 0.008 s "
            f"(CoflowSim's step) up to its 88473.6 s horizon, got {epoch_s}"
        )
    return name, int(round(units))


def _simulate_coflowsim(workload, policy, p, epoch_units, check_invariants, interval, horizon_s):
    """`simulate` under CoflowSim's model (see :func:`simulate`)."""
    unsupported = [
        name
        for name, given in [
            ("check_invariants", check_invariants),
            ("record", interval is not None),
            ("horizon_s", horizon_s is not None),
        ]
        if given
    ]
    if unsupported:
        raise CoflowkitError(
            f"engine coflowsim steps as CoflowSim does: {', '.join(unsupported)} do not apply"
        )
    check_coflowsim_policy(policy, p)
    raw = _core.simulate_coflowsim(workload, policy, p, epoch_units)
    return result_from_coflowsim(workload, policy, epoch_units, raw, p)


def check_coflowsim_policy(policy: str, params: dict[str, str] | None = None) -> None:
    """Fails unless ``policy`` (with ``params``) runs under the CoflowSim engine:
    the eight CoflowSim schedulers take no parameters; every other registry policy
    but ``coda`` runs on CoflowSim's hooks (docs/engines.md)."""
    _core.check_coflowsim_policy(policy, dict(params or {}))


def result_from_coflowsim(
    workload: Workload,
    policy: str,
    epoch_units: int,
    raw: dict,
    params: dict[str, str] | None = None,
) -> Result:
    """A :class:`Result` from what the CoflowSim engine returned."""
    table = metrics.coflowsim_table(
        workload, raw["admitted_units"], raw["finish_units"], raw["duration_units"]
    )
    return Result(
        policy=policy,
        params=dict(params or {}),
        fabric=workload.fabric,
        coflows=table,
        summary=metrics.summarize(table),
        events=raw["event_steps"],
        policy_calls=raw["recomputes"],
        extra={
            "engine": f"coflowsim:epoch_s={epoch_units / 1000:g}",
            "scheduler": raw["scheduler"],
            "steps": raw["steps"],
        }
        | _timing(raw),
        complete=raw["complete"],
    )


@contextlib.contextmanager
def progress_bar(progress: bool | Callable | None, label: str):
    """The callback :func:`simulate` hands the engine: ``progress`` itself when
    callable; a rich progress bar on stderr when true (or None and stderr is a
    terminal); nothing otherwise."""
    if callable(progress):
        yield progress
        return
    if progress is False or (progress is None and not sys.stderr.isatty()):
        yield None
        return
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    bar = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total} coflows"),
        TextColumn("simulated {task.fields[sim]:.1f} s"),
        TimeElapsedColumn(),
        transient=True,
    )
    task = bar.add_task(label, total=None, sim=0.0)

    def cb(done: int, total: int, sim_s: float) -> None:
        bar.update(task, completed=done, total=total, sim=sim_s)

    with bar:
        yield cb


def parse_record(record: float | str | None) -> float | None:
    """``None`` → no recording; ``"every"`` or 0 → every event; seconds otherwise."""
    if record is None:
        return None
    if isinstance(record, str):
        if record.strip().lower() in ("every", "event", "events"):
            return 0.0
        try:
            record = float(record)
        except ValueError:
            raise CoflowkitError(
                f"record must be 'every' or a number of seconds, got {record!r}"
            ) from None
    x = float(record)
    if not (x >= 0.0 and x != float("inf")):
        raise CoflowkitError(f"record interval must be >= 0 seconds, got {record!r}")
    return x


def _timing(raw: dict) -> dict[str, float]:
    """What the simulation cost when it ran (``coflowkit.runner`` records it), if known."""
    return {k: raw[k] for k in ("sim_cpu_s", "sim_wall_s") if k in raw}


def result_from_raw(workload: Workload, policy: str, p: dict[str, str], raw: dict) -> Result:
    """Builds a :class:`Result` from what the engine returned."""
    table = metrics.coflow_table(workload, raw["finish_s"])
    series = progress_rows = series_summary = None
    if raw.get("series") is not None:
        finish = table["finish_s"].to_numpy()
        end = float(finish[~pd.isna(finish)].max()) if (~pd.isna(finish)).any() else 0.0
        series = metrics.series_table(raw["series"], end)
        series_summary = metrics.summarize_series(series)
        if raw.get("progress") is not None:
            progress_rows = metrics.progress_table(raw["progress"], series)
    return Result(
        policy=policy,
        params=p,
        fabric=workload.fabric,
        coflows=table,
        summary=metrics.summarize(table),
        events=raw["events"],
        policy_calls=raw["policy_calls"],
        extra={
            "checks": raw.get("checks", 0),
            "rate_changes": raw.get("rate_changes", 0),
            # Active flows the policy saw per call, on average.
            "mean_active_flows": raw.get("active_flow_calls", 0) / max(raw["policy_calls"], 1),
        }
        | ({"flow_labels": raw["flow_labels"]} if raw.get("flow_labels") is not None else {})
        | ({"flow_bindings": raw["flow_bindings"]} if raw.get("flow_bindings") is not None else {})
        | dict(raw.get("flow_columns") or {})
        | _timing(raw),
        series=series,
        progress=progress_rows,
        series_summary=series_summary,
        complete=raw.get("complete", True),
    )


def snapshot(
    workload: Workload,
    policy: str,
    params: Mapping[str, Any] | None = None,
    fabric: str | None = None,
    at_s: float = 0.0,
) -> tuple[pd.DataFrame, dict[str, float]]:
    """The allocation in force at time ``at_s``: each active coflow's progress and the
    fabric's utilization, without running the workload to its end.

    Returns ``(per_coflow, totals)``: a DataFrame ``coflow_id, progress`` and a dict
    with ``time_s, active_coflows, min_progress, mean_progress, max_progress,
    disparity, utilization``.
    """
    r = simulate(
        workload, policy, params, fabric, record="every", record_coflows=True, horizon_s=at_s
    )
    s = r.series
    if s is None or len(s) == 0 or s["time_s"].iloc[0] > at_s:
        raise CoflowkitError(f"nothing has started by t={at_s} s")
    last = int((s["time_s"] <= at_s).to_numpy().nonzero()[0][-1])
    rows = r.progress[r.progress["sample"] == last][["coflow_id", "progress"]]
    totals = {k: float(s[k].iloc[last]) for k in metrics.SERIES_METRICS}
    totals["time_s"] = float(s["time_s"].iloc[last])
    totals["active_coflows"] = int(s["active_coflows"].iloc[last])
    return rows.reset_index(drop=True), totals


def write_result(result: Result, out: str) -> None:
    """Writes a run as `coflowkit simulate --out` does: coflows.csv/.parquet, the
    series when recorded, summary.json."""
    os.makedirs(out, exist_ok=True)
    result.coflows.to_csv(os.path.join(out, "coflows.csv"), index=False)
    result.coflows.to_parquet(os.path.join(out, "coflows.parquet"), index=False)
    for name, table in [("series", result.series), ("progress", result.progress)]:
        if table is not None:
            table.to_csv(os.path.join(out, f"{name}.csv"), index=False)
            table.to_parquet(os.path.join(out, f"{name}.parquet"), index=False)
    with open(os.path.join(out, "summary.json"), "w", encoding="utf-8") as fh:
        json.dump(
            {
                "policy": result.policy,
                "engine": result.extra.get("engine", "exact"),
                "params": result.params,
                "fabric": result.fabric,
                "version": _core.__version__,
                "events": result.events,
                "policy_calls": result.policy_calls,
                "mean_active_flows": round(result.extra.get("mean_active_flows", 0.0), 1),
                "summary": result.summary,
                **({"series": result.series_summary} if result.series_summary else {}),
            },
            fh,
            indent=2,
            sort_keys=True,
        )
        fh.write("\n")
