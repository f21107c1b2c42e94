"""The experiment runner: many (workload, policy, parameters) simulations, in
parallel across processes, cached by the hash of their inputs.

Every later `reproduce` command builds on :func:`run_jobs`. Results come back in job
order and are identical whether jobs run serially or on several processes: each job
is a pure function of its inputs (seeds are part of the workload spec). A distributed
backend (for example Ray) can be added behind ``backend=`` without changing callers.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from typing import Any, Callable

from coflowkit import __version__, api, metrics
from coflowkit._core import CoflowkitError


@dataclass(frozen=True)
class WorkloadSpec:
    """Where a workload comes from: a trace file, or a generator with a seed."""

    trace: str | None = None
    format: str | None = None
    synthetic: str | None = None
    seed: int = 0
    first: int | None = None

    def load(self):
        if self.trace is not None:
            w = api.load_trace(self.trace, self.format)
        elif self.synthetic is not None:
            w = api.synthetic(self.synthetic, self.seed)
        else:
            raise CoflowkitError("a workload needs a trace or a synthetic generator")
        if self.first is not None:
            w = w.head(self.first)
        return w

    def fingerprint(self) -> dict[str, Any]:
        d = asdict(self)
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

    def key(self) -> str:
        blob = json.dumps(
            {
                "workload": self.workload.fingerprint(),
                "policy": self.policy,
                "params": sorted(self.params),
                "fabric": self.fabric or "",
                "version": __version__,
            },
            sort_keys=True,
        )
        return hashlib.sha256(blob.encode()).hexdigest()[:32]


def default_cache_dir() -> str:
    return os.environ.get(
        "COFLOWKIT_CACHE", os.path.join(os.path.expanduser("~"), ".cache", "coflowkit")
    )


@lru_cache(maxsize=4)
def _load(spec: WorkloadSpec):
    return spec.load()


def _run_one(job: Job) -> dict[str, Any]:
    w = _load(job.workload)
    r = api.simulate(
        w, job.policy, dict(job.params), job.fabric, check_invariants=job.check_invariants
    )
    return {
        "finish_s": r.coflows["finish_s"].tolist(),
        "events": r.events,
        "policy_calls": r.policy_calls,
    }


def _cached(job: Job, cache_dir: str | None) -> dict[str, Any] | None:
    if not cache_dir:
        return None
    path = os.path.join(cache_dir, job.key() + ".json")
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return None


def _store(job: Job, cache_dir: str | None, raw: dict[str, Any]) -> None:
    if not cache_dir:
        return
    os.makedirs(cache_dir, exist_ok=True)
    path = os.path.join(cache_dir, job.key() + ".json")
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(raw, fh)
    os.replace(tmp, path)


def run_jobs(
    jobs: list[Job],
    workers: int = 1,
    cache_dir: str | None = None,
    progress: bool | None = None,
    backend: str = "process",
) -> list[api.Result]:
    """Runs ``jobs`` and returns one :class:`Result` per job, in job order."""
    if backend not in ("process", "serial"):
        raise CoflowkitError(f"unknown backend '{backend}'; valid backends: process, serial")
    for j in jobs:  # fail fast on bad policies or parameters
        api._core.check_policy(j.policy, dict(j.params))
    raws: list[dict[str, Any] | None] = [_cached(j, cache_dir) for j in jobs]
    todo = [i for i, r in enumerate(raws) if r is None]
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
        if backend == "serial" or workers <= 1 or len(todo) <= 1:
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
    results = []
    for j, raw in zip(jobs, raws):
        w = _load(j.workload)
        if j.fabric:
            w = w.with_fabric(j.fabric)
        table = metrics.coflow_table(w, raw["finish_s"])
        results.append(
            api.Result(
                policy=j.policy,
                params=dict(j.params),
                fabric=w.fabric,
                coflows=table,
                summary=metrics.summarize(table),
                events=raw["events"],
                policy_calls=raw["policy_calls"],
            )
        )
    return results
