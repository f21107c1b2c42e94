"""The papers' experiments, one command each: `coflowkit reproduce NAME`.

Each writes under an output folder its tables (Markdown and CSV), figures (PNG)
and `report.md`, which puts the paper's numbers beside coflowkit's.
"""

from __future__ import annotations

EXPERIMENTS = {
    "ncdrf": "NC-DRF (Sec. V): Table II, Figs. 5-6 on the Facebook trace; testbed micro-benchmark",
    "ncdrf-testbed": "NC-DRF (Sec. V-B): Figs. 7-8, the micro-benchmark on the testbed (root)",
    "coflex": "Coflex (Sec. IV-V): Table III, Figs. 4-6 on the Facebook trace; micro-benchmark",
    "mcs": "MCS (Sec. VIII): Table I, Figs. 13-18 on the Facebook trace (batched, Poisson loads)",
    "coda-scheduler": "CODA (Secs. 4, 6.4): Figs. 11-13, 15-16, scheduling with wrong coflows",
    "coda-identify": "CODA (Secs. 3, 6.3, 6.4): Fig. 10, Table 1, Fig. 14, Figs. 11-12 identified",
    "stream": "Stream (Sec. IV-B): Figs. 6-13 on FatTrees (sizes, waves, bursts, queues, DAGs)",
}


#: The module of each experiment, whose ``EXPERIMENT`` spec
#: :mod:`coflowkit.experiments.writer` runs.
MODULES = {
    "ncdrf": "ncdrf",
    "ncdrf-testbed": "ncdrf_testbed",
    "coflex": "coflex",
    "mcs": "mcs",
    "coda-scheduler": "coda_report",
    "coda-identify": "coda_identify_report",
    "stream": "stream",
}


#: The experiments whose papers ran CoflowSim: they take ``engine`` (``both`` by
#: default, ``exact`` or ``coflowsim[:epoch_s=S]``); the others run on the exact
#: engine only.
ENGINE_EXPERIMENTS = ("ncdrf", "coflex", "mcs")


def run(name: str, **kw) -> str:
    """Runs experiment ``name``. Keywords: ``out``, ``trace``, ``workers``,
    ``cache_dir``, ``coflows``, ``transforms`` (workload transform specs applied
    to the trace before the experiment's own choices, e.g. its first N coflows),
    for :data:`ENGINE_EXPERIMENTS`, ``engine``, and for the experiments with a
    decision interval (coda-scheduler, coda-identify), ``decisions``."""
    from coflowkit._core import CoflowkitError

    engine = kw.get("engine")
    if name not in ENGINE_EXPERIMENTS and "engine" in kw:
        if engine not in (None, "exact"):
            raise CoflowkitError(
                f"reproduce {name}: its paper did not use CoflowSim, so it runs on the exact "
                f"engine only (--engine applies to {', '.join(ENGINE_EXPERIMENTS)})"
            )
        kw.pop("engine")
    if name in ENGINE_EXPERIMENTS:
        from coflowkit.experiments import common

        common.parse_engines(engine)  # fail fast
    if name in MODULES:
        import importlib

        from coflowkit.experiments import writer

        mod = importlib.import_module(f"coflowkit.experiments.{MODULES[name]}")
        return writer.run(mod.EXPERIMENT, **kw)
    raise CoflowkitError(f"unknown experiment '{name}'; valid: {', '.join(EXPERIMENTS)}")
