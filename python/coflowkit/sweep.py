"""`coflowkit sweep SPEC.toml`: a declarative grid of simulations.

A spec names workloads (a trace or a generator, with transforms), fabrics, engines
and policies with parameter ranges; every combination runs once per seed through
:func:`coflowkit.runner.run_jobs` (cached, on local processes or Ray). The output:

* ``runs.csv``/``runs.parquet``: one row per run (its coordinates and summary);
* ``coflows.csv``/``coflows.parquet``: one row per coflow per run, with its CCT
  normalized to the baseline's on the same workload, seed, fabric and engine;
* ``report.html`` (self-contained) and ``report.md``: normalized CCT per bin and CCT
  CDFs, one figure per workload, fabric and engine, and the provenance.

The spec's format is in docs/sweep.md. Every error names the spec key (and the
line, where the TOML parser gives one).
"""

from __future__ import annotations

import itertools
import os
import shlex
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from coflowkit import api, labels, metrics, runner, transforms
from coflowkit._core import CoflowkitError

try:  # Python 3.11+
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]


class SpecError(CoflowkitError):
    """A sweep spec that cannot run: the message names the file and the key."""


SWEEP_KEYS = {"name", "seeds", "fabrics", "engines", "baseline"}
WORKLOAD_KEYS = {"name", "trace", "format", "synthetic", "first", "transforms", "seeds"}
POLICY_KEYS = {"name", "label", "params"}
TOP_KEYS = {"sweep", "workload", "policy"}


@dataclass(frozen=True)
class Run:
    """One point of the grid."""

    workload: str
    seed: int | None
    fabric: str
    engine: str
    policy: str  # the label: name and parameters
    job: runner.Job = field(compare=False)


@dataclass
class Spec:
    path: str
    name: str
    baseline: str | None
    runs: list[Run]
    shape: dict[str, int]


def _err(path: str, key: str, msg: str) -> SpecError:
    return SpecError(f"{path}: {key}: {msg}")


def _list(path: str, key: str, value: Any, kind: type, default: list) -> list:
    if value is None:
        return default
    if isinstance(value, kind) and not isinstance(value, bool):
        value = [value]
    if not isinstance(value, list) or not value:
        raise _err(path, key, f"expected a non-empty list of {kind.__name__}, got {value!r}")
    for v in value:
        if not isinstance(v, kind) or isinstance(v, bool):
            raise _err(path, key, f"expected {kind.__name__} entries, got {v!r}")
    return value


def _keys(path: str, where: str, table: Any, allowed: set[str]) -> dict:
    if not isinstance(table, dict):
        raise _err(path, where, f"expected a table, got {table!r}")
    for k in table:
        if k not in allowed:
            raise _err(
                path,
                f"{where}.{k}" if where else k,
                f"unknown key; valid: {', '.join(sorted(allowed))}",
            )
    return table


def _scalar(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float, str)):
        return str(v)
    raise TypeError(v)


def _param_grid(path: str, where: str, params: Any) -> list[dict[str, str]]:
    """``{queues = [4, 8], mode = "x"}`` → every combination, as strings."""
    if params is None:
        return [{}]
    params = _keys(path, where, params, set(params) if isinstance(params, dict) else set())
    names, choices = [], []
    for k in sorted(params):
        v = params[k]
        vs = v if isinstance(v, list) else [v]
        if not vs:
            raise _err(path, f"{where}.{k}", "an empty list of values")
        try:
            choices.append([_scalar(x) for x in vs])
        except TypeError as e:
            raise _err(
                path, f"{where}.{k}", f"expected a value or a list of values, got {e.args[0]!r}"
            ) from None
        names.append(k)
    return [dict(zip(names, combo, strict=True)) for combo in itertools.product(*choices)]


def load(path: str) -> Spec:
    """Parses and validates the spec at ``path`` into its grid of runs."""
    try:
        with open(path, "rb") as fh:
            raw = tomllib.load(fh)
    except tomllib.TOMLDecodeError as e:
        raise SpecError(f"{path}: not valid TOML: {e}") from None
    except OSError as e:
        raise SpecError(f"{path}: cannot read the spec: {e.strerror}") from None
    _keys(path, "", raw, TOP_KEYS)
    sweep = _keys(path, "sweep", raw.get("sweep", {}), SWEEP_KEYS)
    name = sweep.get("name", os.path.splitext(os.path.basename(path))[0])
    if not isinstance(name, str):
        raise _err(path, "sweep.name", f"expected a string, got {name!r}")
    seeds = _list(path, "sweep.seeds", sweep.get("seeds"), int, [0])
    fabrics, engines = _fabrics_engines(path, sweep)
    policies, baseline = _policies(path, raw.get("policy"), sweep.get("baseline"), engines)
    runs: list[Run] = []
    wlist = raw.get("workload")
    if not isinstance(wlist, list) or not wlist:
        raise _err(path, "workload", "at least one [[workload]] table is needed")
    here = os.path.dirname(os.path.abspath(path))
    names: set[tuple[str, int | None]] = set()
    for i, w in enumerate(wlist):
        where = f"workload[{i}]"
        _keys(path, where, w, WORKLOAD_KEYS)
        for wl_spec, seed in _workloads(path, where, here, w, seeds):
            wname = w.get("name", w.get("synthetic") or os.path.basename(w.get("trace", "")))
            if (wname, seed) in names:
                raise _err(path, f"{where}.name", f"workload '{wname}' appears twice")
            names.add((wname, seed))
            for fabric, engine, (label, pname, params) in itertools.product(
                fabrics, engines, policies
            ):
                job = runner.Job(
                    wl_spec, pname, tuple(sorted(params.items())), fabric, engine=engine
                )
                runs.append(Run(wname, seed, fabric, engine, label, job))
    shape = {
        "(workload, seed) pairs": len(names),
        "fabrics": len(fabrics),
        "engines": len(engines),
        "policy settings": len(policies),
    }
    return Spec(path, name, baseline, runs, shape)


def _fabrics_engines(path: str, sweep: dict) -> tuple[list[str], list[str]]:
    fabrics = _list(path, "sweep.fabrics", sweep.get("fabrics"), str, ["bigswitch"])
    engines = _list(path, "sweep.engines", sweep.get("engines"), str, ["exact"])
    for i, e in enumerate(engines):
        try:
            api.parse_engine(e)
        except CoflowkitError as ex:
            raise _err(path, f"sweep.engines[{i}]", str(ex)) from None
    probe = api.synthetic("fb", 0).head(1)
    for i, f in enumerate(fabrics):
        try:
            probe.with_fabric(f)
        except CoflowkitError as ex:
            raise _err(path, f"sweep.fabrics[{i}]", str(ex)) from None
    return fabrics, engines


def _policies(
    path: str, plist: Any, baseline: Any, engines: list[str] | None = None
) -> tuple[list[tuple[str, str, dict[str, str]]], str | None]:
    """The ``[[policy]]`` tables' settings as (label, name, parameters), the
    baseline first when it is not among them; each checked against CoflowSim's
    model when ``engines`` has it."""
    policies: list[tuple[str, str, dict[str, str]]] = []
    if not isinstance(plist, list) or not plist:
        raise _err(path, "policy", "at least one [[policy]] table is needed")
    for i, p in enumerate(plist):
        where = f"policy[{i}]"
        _keys(path, where, p, POLICY_KEYS)
        pname = p.get("name")
        if not isinstance(pname, str):
            raise _err(path, f"{where}.name", f"expected a policy name, got {pname!r}")
        if not isinstance(p.get("label", pname), str):
            raise _err(path, f"{where}.label", f"expected a string, got {p['label']!r}")
        for params in _param_grid(path, f"{where}.params", p.get("params")):
            try:
                api._core.check_policy(pname, params)
            except CoflowkitError as ex:
                raise _err(path, where, str(ex)) from None
            label = p.get("label", pname)
            if params:
                label += ":" + ",".join(f"{k}={v}" for k, v in params.items())
            policies.append((label, pname, params))
    labels = [lab for lab, _, _ in policies]
    for lab in labels:
        if labels.count(lab) > 1:
            raise _err(path, "policy", f"'{lab}' appears twice in the grid")
    if baseline is not None:
        if not isinstance(baseline, str):
            raise _err(path, "sweep.baseline", f"expected a policy label, got {baseline!r}")
        if baseline not in labels:
            try:
                api._core.check_policy(baseline, {})
            except CoflowkitError as ex:
                raise _err(path, "sweep.baseline", str(ex)) from None
            policies.insert(0, (baseline, baseline, {}))
    if any(api.parse_engine(e)[0] == "coflowsim" for e in engines or ()):
        for _, pname, params in policies:
            try:
                api.check_coflowsim_policy(pname, params)
            except CoflowkitError as ex:
                raise _err(path, "sweep.engines", str(ex)) from None
    return policies, baseline


def _workloads(path: str, where: str, here: str, w: dict, seeds: list[int]):
    """The workload table's specs, one per seed it takes."""
    trace, synthetic = w.get("trace"), w.get("synthetic")
    if (trace is None) == (synthetic is None):
        raise _err(path, where, "give exactly one of trace or synthetic")
    first = w.get("first")
    if first is not None and (not isinstance(first, int) or isinstance(first, bool) or first < 1):
        raise _err(path, f"{where}.first", f"expected a number of coflows >= 1, got {first!r}")
    specs = _list(path, f"{where}.transforms", w.get("transforms"), str, [])
    own = _list(path, f"{where}.seeds", w.get("seeds"), int, seeds)
    seeded = synthetic is not None or any("{seed}" in s for s in specs)
    if not seeded:
        if w.get("seeds") is not None and len(own) > 1:
            raise _err(
                path, f"{where}.seeds",
                "a trace is not seeded: put {seed} in one of its transforms "
                "(e.g. starts:model=spark,seed={seed}) or give no seeds",
            )  # fmt: skip
        own = [None]
    for seed in own:
        ts = tuple(s.replace("{seed}", str(seed)) for s in specs)
        for k, t in enumerate(ts):
            try:
                transforms.canonical(t)
            except CoflowkitError as ex:
                raise _err(path, f"{where}.transforms[{k}]", str(ex)) from None
        if trace is not None:
            if not isinstance(trace, str):
                raise _err(path, f"{where}.trace", f"expected a path, got {trace!r}")
            tpath = trace if os.path.isabs(trace) else os.path.join(here, trace)
            if not os.path.exists(tpath):
                raise _err(path, f"{where}.trace", f"{tpath}: no such file")
            fmt = w.get("format")
            if fmt is not None and fmt not in ("benchmark", "sincronia", "flows"):
                raise _err(
                    path, f"{where}.format", f"expected benchmark, sincronia or flows, got {fmt!r}"
                )
            spec = runner.WorkloadSpec(trace=tpath, format=fmt, first=first, transforms=ts)
        else:
            if not isinstance(synthetic, str):
                raise _err(
                    path, f"{where}.synthetic", f"expected a generator name, got {synthetic!r}"
                )
            try:
                api.synthetic(synthetic, 0).head(1)
            except CoflowkitError as ex:
                raise _err(path, f"{where}.synthetic", str(ex)) from None
            spec = runner.WorkloadSpec(synthetic=synthetic, seed=seed, first=first, transforms=ts)
        yield spec, seed


def tables(spec: Spec, results: list[api.Result]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The per-coflow and per-run tables of a finished sweep. With a baseline, each
    coflow's CCT is normalized to the baseline's on the same workload, seed, fabric
    and engine (``normalized_cct``), and each run gets its ratio of mean CCTs to the
    baseline's, overall and per bin (``ratio_of_means``, ``ratio_of_means_SN``...)."""
    frames, rows = [], []
    base: dict[tuple, pd.DataFrame] = {}
    if spec.baseline is not None:
        for r, res in zip(spec.runs, results, strict=True):
            if r.policy == spec.baseline:
                base[(r.workload, r.seed, r.fabric, r.engine)] = res.coflows
    for k, (r, res) in enumerate(zip(spec.runs, results, strict=True)):
        df = res.coflows[metrics.COLUMNS].copy()
        coords = {"run": k, "workload": r.workload, "seed": r.seed, "fabric": r.fabric,
                  "engine": r.engine, "policy": r.policy}  # fmt: skip
        row = {
            **coords,
            "coflows": len(df),
            "events": res.events,
            "mean_cct_s": df.cct_s.mean(),
            "median_cct_s": df.cct_s.median(),
            "p95_cct_s": df.cct_s.quantile(0.95),
            "mean_slowdown": df.slowdown.mean(),
        }
        row.update(_label_quality(r, res))
        b = base.get((r.workload, r.seed, r.fabric, r.engine))
        if b is not None:
            bcct = b.set_index("coflow_id").loc[df.coflow_id, "cct_s"].to_numpy()
            df["normalized_cct"] = df.cct_s.to_numpy() / bcct
            row["mean_normalized_cct"] = df.normalized_cct.mean()
            row["ratio_of_means"] = df.cct_s.sum() / bcct.sum()
            for bn in metrics.BINS:
                m = (df.bin == bn).to_numpy()
                row[f"ratio_of_means_{bn}"] = (
                    df.cct_s[m].sum() / bcct[m].sum() if m.any() else np.nan
                )
        for c, v in reversed(list(coords.items())):
            df.insert(0, c, v)
        frames.append(df)
        rows.append(row)
    coflows = pd.concat(frames, ignore_index=True)
    runs = pd.DataFrame(rows)
    for t in (coflows, runs):
        t["seed"] = t["seed"].astype("Int64")
    return coflows, runs


def timings(spec: Spec, results: list[api.Result]) -> pd.DataFrame:
    """Per run, the CPU and wall seconds its simulation took (NaN when unknown)."""
    rows = []
    for k, (r, res) in enumerate(zip(spec.runs, results, strict=True)):
        rows.append({"run": k, "workload": r.workload, "fabric": r.fabric, "engine": r.engine,
                     "policy": r.policy, "sim_cpu_s": res.extra.get("sim_cpu_s", np.nan),
                     "sim_wall_s": res.extra.get("sim_wall_s", np.nan)})  # fmt: skip
    return pd.DataFrame(rows)


def _label_quality(r: Run, res: api.Result) -> dict[str, float]:
    """For a policy that schedules its own labelling of the flows (``coda``): the
    precision, recall and accuracy of the labels it ended with, against the
    workload's true coflows (CODA §6.1; :func:`coflowkit.labels.quality`)."""
    got = res.extra.get("flow_labels")
    if got is None:
        return {}
    w = runner._workload(r.job.workload, r.job.fabric)
    q = labels.quality(w.flow_columns()["coflow_id"], got)
    return {"label_precision": q.precision, "label_recall": q.recall,
            "label_accuracy": q.accuracy}  # fmt: skip


def figures(
    spec: Spec, coflows: pd.DataFrame, runs: pd.DataFrame, out: str
) -> list[tuple[str, str]]:
    """One PNG per workload, fabric and engine: each policy's ratio of mean CCTs to
    the baseline's per bin, averaged over seeds (with a baseline), and the CDF of
    CCTs over all seeds. Returns (caption, file name) pairs."""
    from coflowkit.experiments.common import normalized_figure, plt

    made = []
    cols = ["ratio_of_means"] + [f"ratio_of_means_{b}" for b in metrics.BINS]
    for n, (key, g) in enumerate(coflows.groupby(["workload", "fabric", "engine"], sort=False)):
        wl, fabric, engine = key
        rg = runs[(runs.workload == wl) & (runs.fabric == fabric) & (runs.engine == engine)]
        labels = list(dict.fromkeys(g.policy))
        bars = {}
        if spec.baseline is not None:
            for p in labels:
                if p != spec.baseline:
                    bars[p] = rg[rg.policy == p][cols].mean().to_numpy()
        ccts = [(p, g[g.policy == p].cct_s.to_numpy()) for p in labels]
        caption = f"{wl}, {fabric}, engine {engine}"
        fig = normalized_figure(
            bars, ccts, spec.baseline, "normalized CCT per bin (mean over seeds)",
            "CCT (s), all seeds", caption,
        )  # fmt: skip
        name = f"fig{n + 1}.png"
        fig.savefig(os.path.join(out, name), dpi=100)
        plt().close(fig)
        made.append((caption, name))
    return made


def run(path: str, out: str, workers: int = 2, cache_dir: str | None = None,
        progress: bool | None = None, backend: str | None = None,
        command: str | None = None) -> dict[str, Any]:  # fmt: skip
    """Loads the spec, runs the grid, writes the tables and the report into
    ``out``; returns the provenance (with ``runs``, the number of runs).
    ``command`` is the command line the report names (by default one built from
    the arguments)."""
    from coflowkit import __version__
    from coflowkit.experiments import common, writer

    started = time.monotonic()
    header = common.provenance_line()
    spec = load(path)
    stats: dict[str, int] = {}
    shape = " × ".join(f"{v} {k}" for k, v in spec.shape.items())
    print(f"sweep {spec.name}: {len(spec.runs)} runs ({shape})", flush=True)
    results = runner.run_jobs(
        [r.job for r in spec.runs], workers, cache_dir, progress, backend, stats
    )
    os.makedirs(out, exist_ok=True)
    coflows, runs = tables(spec, results)
    for name, df in (("coflows", coflows), ("runs", runs)):
        df.to_csv(os.path.join(out, f"{name}.csv"), index=False)
        df.to_parquet(os.path.join(out, f"{name}.parquet"), index=False)
    figs = figures(spec, coflows, runs, out)
    _, _, rest = header.partition(", commit ")
    commit, _, date = rest.partition(", ")
    prov = {
        "command": command
        or shlex.join(
            ["coflowkit", "sweep", path, "--out", out, "--workers", str(workers)]
            + (["--backend", backend] if backend else [])
        ),
        "backend": runner.describe_backend(backend, workers),
        "version": __version__,
        "commit": commit,
        "date": date,
        "wall_s": round(time.monotonic() - started, 1),
        "cached_jobs": stats.get("cached", 0),
        "simulated_jobs": stats.get("simulated", 0),
        "machine": writer.machine(),
        "runs": len(spec.runs),
    }
    summary = runs.drop(columns=["run"])
    summary["seed"] = ["-" if pd.isna(x) else str(x) for x in summary.seed]  # unseeded: -
    body = [
        f"A grid of {len(spec.runs)} runs: {shape}; simulated on {prov['backend']}.",
        "## Runs",
        common.markdown(summary),
    ]
    times = timings(spec, results)
    times.to_csv(os.path.join(out, "timings.csv"), index=False)
    body += [
        "## Simulation time per run",
        "CPU and wall seconds of each run's simulation, measured when it was simulated "
        "(a run read from the result cache shows the times of its original simulation; "
        "runs cached before the times were recorded show none). `timings.csv`; kept "
        "out of `runs.csv`, whose bytes depend only on the inputs.",
        common.markdown(times.drop(columns=["run"])),
    ]
    body.append("## Figures")
    body += [f"**{cap}**\n\n![{cap}]({name})" for cap, name in figs]
    text = "\n\n".join(body) + "\n"
    writer.write_report(out, f"Sweep {spec.name}", text, prov)
    return prov
