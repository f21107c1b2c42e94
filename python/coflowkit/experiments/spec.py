"""What a reproduction is, as data: :class:`Experiment`.

An experiment names the models it replays a workload under (the columns of its
tables), the named policy runs, the tables, claims tables and figures it computes
from their results, and the Markdown template (``experiments/NAME.md``, Jinja2)
that places them in the report with the written text. The paper's numbers live in
the spec beside where the paper states them; a template holds no result and no
paper number of its own, only references to them (``tests/experiments/
test_writer.py`` checks). :mod:`coflowkit.experiments.writer` turns any spec into
cached jobs, CSV and Markdown tables, figures, ``report.md``, ``report.html`` and
``provenance.json``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Model:
    """A column of the tables: one way of replaying the workload.

    ``engine`` is the engine family (``exact`` or ``coflowsim``); ``--engine``
    selects the families and CoflowSim's epoch. ``params`` are added to every run
    that takes them (see :attr:`Run.model_params`); ``record`` samples the
    instantaneous metrics every so many simulated seconds (exact engine only)."""

    label: str
    engine: str
    params: tuple[str, ...] = ()
    record: float | None = None


@dataclass(frozen=True)
class Run:
    """A named run of one policy with its parameters, made under every model.

    ``model_params=False`` leaves the model's parameters out (a policy they do not
    apply to); ``record=False`` skips the instantaneous metrics for this run;
    ``models`` names the models it is made under (None: every one)."""

    name: str
    policy: str
    params: tuple[str, ...] = ()
    model_params: bool = True
    record: bool = True
    models: tuple[str, ...] | None = None

    def spec(self, model: Model) -> str:
        """``policy[:k=v,...]`` under ``model``."""
        kv = [*self.params, *(model.params if self.model_params else ())]
        return self.policy + (":" + ",".join(kv) if kv else "")


@dataclass(frozen=True)
class Paper:
    """A number the paper states, and where: ``Paper(5.75, "Table II")``."""

    value: float
    where: str


#: A computed part of the report: takes the :class:`~coflowkit.experiments.writer.
#: Context` and returns a DataFrame (table), a list of claims (claims table) or a
#: matplotlib figure, or None when it does not apply to this run (then nothing is
#: written, and the template must not show it).
Builder = Callable[[Any], Any]


@dataclass(frozen=True)
class Table:
    name: str
    caption: str
    build: Builder
    digits: int = 3


@dataclass(frozen=True)
class Claims:
    """A claims table: one row per claim, the paper's value and where it is stated,
    ours under each model in ``models`` (``all``, ``first`` or ``recorded``) with
    the ratio and verdict, and the raw values in ``NAME_values.csv``. ``models``
    may also name the columns outright (a claim about an in-memory computation,
    the same under every model)."""

    name: str
    caption: str
    build: Builder
    models: str | tuple[str, ...] = "all"


@dataclass(frozen=True)
class Figure:
    name: str
    build: Builder


@dataclass(frozen=True)
class Data:
    """A CSV (``NAME.csv``) written beside the tables and not placed in the report:
    the raw rows a table or figure summarises. The template may name the file."""

    name: str
    build: Builder


#: ``Experiment.default_coflows`` of an experiment whose parts replay samples of
#: their own sizes (``stream``'s ``SAMPLE``) unless ``--coflows`` gives a number
#: or ``all``. `--coflows` takes only numbers from 1 up, so 0 cannot be asked
#: for; without it, ``all`` (None) and the default could not be told apart.
OWN_SAMPLES = 0


@dataclass
class Experiment:
    """One paper's reproduction.

    ``workload(opts)`` is the trace-level workload (a ``runner.WorkloadSpec``),
    replayed under every selected model with every run; ``local(ctx)`` computes
    what is built in memory rather than replayed (a micro-benchmark), stored as
    ``ctx.local``; ``values(ctx)`` the named numbers the template's text quotes.
    ``parts`` may be a function of the context (parts repeated per selected
    model). ``template`` is a file name in ``experiments/`` (or an absolute path).
    ``full(ctx)`` says when the "differences" part applies (the whole trace under
    every model, typically); the template reads it as ``full``."""

    name: str
    title: str
    paper: str
    models: tuple[Model, ...]
    runs: tuple[Run, ...]
    workload: Callable[[Any], Any] | None
    parts: tuple[Table | Claims | Figure | Data, ...] | Callable[[Any], tuple]
    template: str
    #: The coflows replayed when `--coflows` is not given (None: every coflow;
    #: :data:`OWN_SAMPLES`: each part its own sample, as the experiment says).
    default_coflows: int | None = None
    #: When policies decide unless ``--decisions`` says otherwise (``event`` or
    #: seconds, :func:`coflowkit.experiments.common.parse_decisions`); None: the
    #: experiment does not take ``--decisions`` (its runs decide at every event
    #: or as its models say).
    default_decisions: str | None = None
    local: Callable[[Any], Any] | None = None
    values: Callable[[Any], dict] | None = None
    full: Callable[[Any], bool] = field(default=lambda ctx: False)
    jobs: Callable[[Any], list] | None = None
    prepare: Callable[[Any], Any] | None = None
    #: Runs the planned jobs instead of ``runner.run_jobs`` (same arguments and
    #: result), e.g. in groups that bound how many workloads are built at once.
    execute: Callable[..., list] | None = None
