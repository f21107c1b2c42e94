"""The experiment runner: many (workload, policy, parameters) simulations, in
parallel across processes, cached by the hash of their inputs.

Every later `reproduce` command builds on :func:`run_jobs`. Results come back in job
order and are identical whether jobs run serially, on several local processes, or on
a Ray cluster (``backend="ray"``): each job is a pure function of its inputs (seeds
are part of the workload spec). Only the driver reads and writes the result cache;
workers return results, and a finished job is stored as soon as it comes back.

The backend of calls that do not name one is :func:`backend_scope`'s, so a command
can send every simulation of an experiment to Ray without threading it through.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np
import pandas as pd

from coflowkit import __version__, api, transforms
from coflowkit._core import CoflowkitError


@dataclass(frozen=True)
class WorkloadSpec:
    """Where a workload comes from: a trace file, or a generator with a seed; then
    workload transforms (``coflowkit.transforms`` specs such as
    ``"batch:interval_s=10"``) applied in order, then the first ``first`` coflows."""

    trace: str | None = None
    format: str | None = None
    synthetic: str | None = None
    seed: int = 0
    first: int | None = None
    transforms: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if isinstance(self.transforms, str):
            raise CoflowkitError("transforms must be a sequence of specs, not one string")
        object.__setattr__(self, "transforms", tuple(self.transforms))
        for s in self.transforms:  # fail fast on an unknown transform or parameter
            transforms.canonical(s)

    def load(self, fabric: str | None = None):
        """The workload; on ``fabric`` when given, applied before the transforms (so
        ``poisson``'s load and ``scale`` see the fabric the simulation uses)."""
        if self.trace is not None:
            w = api.load_trace(self.trace, self.format)
        elif self.synthetic is not None:
            w = api.synthetic(self.synthetic, self.seed)
        else:
            raise CoflowkitError("a workload needs a trace or a synthetic generator")
        if fabric:
            w = w.with_fabric(fabric)
        w = transforms.apply_all(w, self.transforms)
        if self.first is not None:
            w = w.head(self.first)
        return w

    def fingerprint(self) -> dict[str, Any]:
        d = asdict(self)
        if self.transforms:
            d["transforms"] = [transforms.canonical(s) for s in self.transforms]
        else:
            del d["transforms"]  # keys of workloads without transforms stay as they were
        if self.trace is not None:
            h = hashlib.sha256()
            with open(self.trace, "rb") as fh:
                for chunk in iter(lambda: fh.read(1 << 20), b""):
                    h.update(chunk)
            d["trace"] = h.hexdigest()
        return d


@dataclass(frozen=True)
class Job:
    workload: WorkloadSpec
    policy: str
    params: tuple = ()
    fabric: str | None = None
    check_invariants: bool = False
    label: str = field(default="", compare=False)
    #: Record the instantaneous metrics: None, 0 (every event) or seconds.
    record: float | None = None
    record_coflows: bool = False
    #: "exact" or "coflowsim[:epoch_s=S]" (see :func:`coflowkit.api.parse_engine`).
    engine: str = "exact"

    def key(self) -> str:
        spec = {
            "workload": self.workload.fingerprint(),
            "policy": self.policy,
            "params": sorted(self.params),
            "fabric": self.fabric or "",
            "version": __version__,
        }
        if self.record is not None:
            spec["record"] = [self.record, self.record_coflows]
        name, epoch = api.parse_engine(self.engine)
        if name != "exact":  # keys of exact runs stay as they were
            spec["engine"] = [name, epoch]
        blob = json.dumps(spec, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:32]


def default_cache_dir() -> str:
    return os.environ.get(
        "COFLOWKIT_CACHE", os.path.join(os.path.expanduser("~"), ".cache", "coflowkit")
    )


@lru_cache(maxsize=4)
def _load(spec: WorkloadSpec, fabric: str | None = None):
    return spec.load(fabric)


def _workload(spec: WorkloadSpec, fabric: str | None):
    """The job's workload on its fabric. Transforms see the fabric (it is applied
    before them); without transforms one cached load serves every fabric."""
    if spec.transforms and fabric:
        return _load(spec, fabric)
    w = _load(spec)
    return w.with_fabric(fabric) if fabric else w


def _run_one(job: Job) -> dict[str, Any]:
    """The job's raw result, with the time its simulation took (``sim_cpu_s``, this
    process's CPU seconds, and ``sim_wall_s``); the cache keeps both, so a result read
    from it still tells what its simulation cost."""
    w = _workload(job.workload, job.fabric)  # not timed: loads are shared by jobs
    wall, cpu = time.perf_counter(), time.process_time()
    raw = _simulate(job, w)
    raw["sim_cpu_s"] = round(time.process_time() - cpu, 6)
    raw["sim_wall_s"] = round(time.perf_counter() - wall, 6)
    return raw


def _simulate(job: Job, w) -> dict[str, Any]:
    name, epoch = api.parse_engine(job.engine)
    if name == "coflowsim":
        return dict(api._core.simulate_coflowsim(w, job.policy, dict(job.params), epoch))
    raw = api._core.simulate(
        w,
        job.policy,
        dict(job.params),
        job.check_invariants,
        None,
        job.record,
        job.record_coflows,
        None,
    )
    return {
        k: raw[k]
        for k in (
            "finish_s",
            "events",
            "policy_calls",
            "series",
            "progress",
            "flow_labels",
            "flow_bindings",
            "flow_columns",
        )
        if k in raw
    }


_TABLES = ("series", "progress")


def _cached(job: Job, cache_dir: str | None) -> dict[str, Any] | None:
    if not cache_dir:
        return None
    path = os.path.join(cache_dir, job.key() + ".json")
    try:
        with open(path, encoding="utf-8") as fh:
            raw = json.load(fh)
        for name in raw.pop("tables", []):
            df = pd.read_parquet(os.path.join(cache_dir, f"{job.key()}.{name}.parquet"))
            raw[name] = {c: df[c].to_numpy() for c in df.columns}
        return raw
    except (OSError, ValueError):
        return None


def _store(job: Job, cache_dir: str | None, raw: dict[str, Any]) -> None:
    """Writes the tables first and the JSON last (atomically), so a JSON entry in
    the cache always has its tables."""
    if not cache_dir:
        return
    os.makedirs(cache_dir, exist_ok=True)
    meta = {k: v for k, v in raw.items() if k not in _TABLES}
    meta["tables"] = [n for n in _TABLES if raw.get(n) is not None]
    for name in meta["tables"]:
        path = os.path.join(cache_dir, f"{job.key()}.{name}.parquet")
        tmp = f"{path}.{os.getpid()}.tmp"
        pd.DataFrame({c: np.asarray(v) for c, v in raw[name].items()}).to_parquet(tmp, index=False)
        os.replace(tmp, path)
    path = os.path.join(cache_dir, job.key() + ".json")
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(meta, fh)
    os.replace(tmp, path)


def run_jobs(
    jobs: list[Job],
    workers: int = 1,
    cache_dir: str | None = None,
    progress: bool | None = None,
    backend: str | None = None,
    stats: dict[str, int] | None = None,
    address: str | None = None,
) -> list[api.Result]:
    """Runs ``jobs`` and returns one :class:`Result` per job, in job order.

    ``backend`` is ``process`` (``workers`` local processes), ``serial``, or ``ray``
    (a Ray cluster at ``address``; without one, a local cluster of ``workers``
    processes); ``None`` takes :func:`backend_scope`'s, by default ``process``. A
    spec ``"ray:ADDRESS"`` also names the address. ``stats``, when given, gets
    ``cached`` and ``simulated`` job counts (the copies of a job simulated in
    this call count in neither)."""
    backend, address = _resolve_backend(backend, address)
    _check_jobs(jobs)
    raws: list[dict[str, Any] | None] = [_cached(j, cache_dir) for j in jobs]
    copies = _copies(jobs, raws)
    todo = list(copies)
    if stats is not None:
        repeats = sum(len(same) for same in copies.values())
        stats["cached"] = stats.get("cached", 0) + len(jobs) - repeats
        stats["simulated"] = stats.get("simulated", 0) + len(todo)
    _run_todo(jobs, todo, raws, workers, cache_dir, progress, backend, address)
    for first, same in copies.items():
        for i in same[1:]:
            raws[i] = raws[first]
    return [_result(j, raw) for j, raw in zip(jobs, raws, strict=True)]


def _check_jobs(jobs: list[Job]) -> None:
    """Fails fast on bad policies, parameters or engines, and on transforms that
    fail on the workload itself (a sample count above its number of coflows): those
    workloads are built here, where such an error reaches the caller as it is (the
    results need them anyway; forked workers inherit them)."""
    for j in jobs:
        api._core.check_policy(j.policy, dict(j.params))
        if api.parse_engine(j.engine)[0] == "coflowsim":
            api.check_coflowsim_policy(j.policy, dict(j.params))
            if j.record is not None or j.check_invariants:
                raise CoflowkitError(
                    f"engine coflowsim steps as CoflowSim does: {j.policy} takes no "
                    f"recording or invariant checks there"
                )
    for spec, fabric in dict.fromkeys((j.workload, j.fabric) for j in jobs):
        if spec.transforms:
            _workload(spec, fabric)


def _copies(jobs: list[Job], raws: list[dict[str, Any] | None]) -> dict[int, list[int]]:
    """The jobs to simulate (those not cached), each with the positions of its
    copies: a job listed twice (same workload, policy, parameters, fabric and
    engine) is simulated once and its copies take that result."""
    copies: dict[int, list[int]] = {}
    firsts: dict[str, int] = {}
    for i, r in enumerate(raws):
        if r is None:
            first = firsts.setdefault(jobs[i].key(), i)
            copies.setdefault(first, []).append(i)
    return copies


def _run_todo(
    jobs: list[Job],
    todo: list[int],
    raws: list[dict[str, Any] | None],
    workers: int,
    cache_dir: str | None,
    progress: bool | None,
    backend: str,
    address: str | None,
) -> None:
    """Simulates the jobs at positions ``todo`` into ``raws`` and the cache, with a
    progress bar on a terminal (or as ``progress`` says)."""
    show = sys.stderr.isatty() if progress is None else progress
    bar: Callable[[], None] = lambda: None  # noqa: E731
    ctx = None
    if show and todo:
        from rich.progress import Progress

        ctx = Progress(transient=True)
        ctx.start()
        task = ctx.add_task("simulating", total=len(todo))
        bar = lambda: ctx.advance(task)  # noqa: E731
    try:
        if backend == "ray" and todo:
            for i, raw in _ray_run([jobs[i] for i in todo], todo, workers, address):
                raws[i] = raw
                _store(jobs[i], cache_dir, raw)
                bar()
        elif backend == "serial" or workers <= 1 or len(todo) <= 1:
            for i in todo:
                raws[i] = _run_one(jobs[i])
                _store(jobs[i], cache_dir, raws[i])
                bar()
        else:
            with ProcessPoolExecutor(max_workers=workers) as ex:
                futures = {i: ex.submit(_run_one, jobs[i]) for i in todo}
                for i in todo:
                    raws[i] = futures[i].result()
                    _store(jobs[i], cache_dir, raws[i])
                    bar()
    finally:
        if ctx is not None:
            ctx.stop()


def _result(j: Job, raw: dict[str, Any] | None) -> api.Result:
    """A job's result from its raw engine output, as its engine reports it."""
    w = _workload(j.workload, j.fabric)
    name, epoch = api.parse_engine(j.engine)
    if name == "coflowsim":
        return api.result_from_coflowsim(w, j.policy, epoch, raw, dict(j.params))
    return api.result_from_raw(w, j.policy, dict(j.params), raw)


BACKENDS = ("process", "serial", "ray")
_scope: list[tuple[str, str | None]] = [("process", None)]


def parse_backend(spec: str) -> tuple[str, str | None]:
    """``process``, ``serial``, ``ray`` or ``ray:ADDRESS`` (``ray:10.0.0.1:6379``)."""
    name, _, address = spec.partition(":")
    if name not in BACKENDS or (address and name != "ray"):
        raise CoflowkitError(
            f"unknown backend '{spec}'; valid backends: process, serial, ray, ray:ADDRESS"
        )
    return name, address or None


def _resolve_backend(backend: str | None, address: str | None) -> tuple[str, str | None]:
    if backend is None:
        return _scope[-1]
    name, addr = parse_backend(backend)
    return name, address or addr


def describe_backend(backend: str | None, workers: int) -> str:
    """Where ``run_jobs(..., backend, workers)`` runs its jobs, in words."""
    name, address = _resolve_backend(backend, None)
    if name == "ray":
        return f"Ray at {address}" if address else f"a local Ray cluster of {workers} workers"
    return "this process" if name == "serial" or workers <= 1 else f"{workers} local processes"


@contextlib.contextmanager
def backend_scope(spec: str | None) -> Iterator[None]:
    """Inside the block, :func:`run_jobs` calls that name no backend use ``spec``
    (see :func:`parse_backend`; ``None`` changes nothing). A Ray connection made
    inside is kept for the whole block (one cluster for all of an experiment's
    calls) and closed at its end."""
    if spec is None:
        yield
        return
    name, _ = parse_backend(spec)
    if name == "ray":
        _ray()  # says how to install Ray before anything runs
    _scope.append(parse_backend(spec))
    _ray_keep.append(True)
    try:
        yield
    finally:
        _scope.pop()
        _ray_keep.pop()
        if not _ray_keep and _ray_started:
            _ray_shutdown()


#: Installed with ``pip install 'coflowkit[ray]'``.
RAY_MISSING = (
    "backend ray needs Ray, an optional extra: pip install 'coflowkit[ray]' "
    "(or pip install 'ray>=2.9')"
)
#: Ray reruns a job whose worker process died (not one whose simulation raised).
RAY_RETRIES = 3
_ray_keep: list[bool] = []
_ray_started: list[bool] = []
_ray_task = None


def _ray():
    try:
        import ray
    except ImportError:
        raise CoflowkitError(RAY_MISSING) from None
    return ray


def _ray_connect(workers: int, address: str | None):
    """Connects to the cluster at ``address``, or starts a local one with
    ``workers`` CPUs; reuses a connection already made (by us or the caller)."""
    ray = _ray()
    if not ray.is_initialized():
        kw: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
        if address:
            kw["address"] = address
        else:
            kw["num_cpus"] = max(1, workers)
            # A cluster of our own is this machine's alone: it listens on loopback.
            kw["_node_ip_address"] = "127.0.0.1"
        # Workers of a local cluster import coflowkit from where the driver did.
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        path = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)
        if not address:
            kw["runtime_env"] = {"env_vars": {"PYTHONPATH": path}}
        try:
            ray.init(**kw)
        except ConnectionError as e:
            raise CoflowkitError(
                f"backend ray: cannot reach the cluster at {address}: {e}"
            ) from None
        _ray_started.append(True)
    return ray


def _ray_shutdown() -> None:
    ray = _ray()
    ray.shutdown()
    _ray_started.clear()


def _trace_copy(blob: bytes) -> str:
    """On a Ray worker: the shipped trace as a local file, named by its hash (so
    a worker on another machine needs no shared file system)."""
    digest = hashlib.sha256(blob).hexdigest()
    folder = os.path.join(tempfile.gettempdir(), "coflowkit-traces")
    path = os.path.join(folder, digest)
    if not os.path.exists(path):
        os.makedirs(folder, exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "wb") as fh:
            fh.write(blob)
        os.replace(tmp, path)
    return path


def _ray_job(job: Job, blob: bytes | None) -> dict[str, Any]:
    """One job on a Ray worker. A fault-injection hook for the tests: when
    ``COFLOWKIT_FAULT_EXIT_ONCE`` names a file that does not exist yet, the first
    job to see it creates it and kills its worker process."""
    marker = os.environ.get("COFLOWKIT_FAULT_EXIT_ONCE")
    if marker:
        try:
            fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            pass
        else:
            os.close(fd)
            os._exit(1)
    if blob is not None:
        from dataclasses import replace

        job = replace(job, workload=replace(job.workload, trace=_trace_copy(blob)))
    return _run_one(job)


def _ray_run(
    jobs: list[Job], index: list[int], workers: int, address: str | None
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Submits ``jobs`` to Ray and yields ``(index[k], result)`` as they finish.
    Each trace file is read once here and shipped through Ray's object store."""
    global _ray_task
    ray = _ray_connect(workers, address)
    try:
        if _ray_task is None:
            _ray_task = ray.remote(max_retries=RAY_RETRIES)(_ray_job)
        blobs: dict[str, Any] = {}
        for j in jobs:
            t = j.workload.trace
            if t is not None and t not in blobs:
                with open(t, "rb") as fh:
                    blobs[t] = ray.put(fh.read())
        pending = {
            _ray_task.remote(j, blobs.get(j.workload.trace)): i
            for j, i in zip(jobs, index, strict=True)
        }
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            for ref in done:
                i = pending.pop(ref)
                try:
                    raw = ray.get(ref)
                except ray.exceptions.RayTaskError as e:
                    cause = e.cause if isinstance(e.cause, Exception) else e
                    raise CoflowkitError(f"backend ray: job {i} failed: {cause}") from None
                except ray.exceptions.RayError as e:
                    raise CoflowkitError(
                        f"backend ray: job {i} lost after {RAY_RETRIES} retries: {e}"
                    ) from None
                yield i, raw
    finally:
        if not _ray_keep and _ray_started:
            _ray_shutdown()
