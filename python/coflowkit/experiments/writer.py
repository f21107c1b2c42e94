"""One planner, runner and writer for every :class:`~coflowkit.experiments.spec.
Experiment`.

``run(experiment, out=..., trace=..., ...)``:

1. selects the models ``--engine`` asks for (:func:`select_models`);
2. plans one :class:`runner.Job` per model and run (:func:`plan`), or takes the
   experiment's own ``jobs`` (after its ``prepare``), and runs them through the
   runner (cached by their inputs, in parallel);
3. computes the experiment's in-memory part (``local``), then every table, claims
   table and figure, writing each as CSV and Markdown or PNG;
4. renders the experiment's template into ``report.md`` and ``report.html``, with
   a provenance section (command, version, commit, date, uncached wall time,
   machine) written here and also saved as ``provenance.json``.

A claims table has, per model, the cell shown (value, ratio ours / paper, verdict),
and in ``NAME_values.csv`` the raw value, the ratio and a flag set when the value
is more than :data:`common.CLAIM_TOLERANCE` from the paper's, or a stated bound or
ordering fails.
"""

from __future__ import annotations

import json
import os
import platform
import shlex
import time
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from coflowkit._core import CoflowkitError
from coflowkit.experiments import common
from coflowkit.experiments.spec import Claims, Data, Experiment, Figure, Model, Table

HERE = os.path.dirname(os.path.abspath(__file__))


@dataclass(frozen=True)
class Options:
    """What `coflowkit reproduce` passes on."""

    out: str
    trace: str
    coflows: int | None = None
    workers: int = 2
    cache_dir: str | None = None
    seed: int = 1
    transforms: tuple[str, ...] = ()
    engine: str | None = None
    #: When policies decide (``event`` or seconds, :func:`common.parse_decisions`);
    #: None: the experiment's own (:attr:`Experiment.default_decisions`).
    decisions: str | None = None
    #: Keeps only these parts of an experiment (its scenario keys), for tests.
    select: tuple[str, ...] | None = None
    #: The experiment's own settings (coda-identify: a ``coda_identify.Config``,
    #: smaller in tests); None: its defaults.
    config: Any = None


@dataclass
class Context:
    """What builders and the template see: the options, the selected models, the
    results ``runs[model label][run name]`` and the in-memory part ``local``."""

    exp: Experiment
    opts: Options
    models: list[Model]
    runs: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: key -> Result, for an experiment that plans its own jobs (``Experiment.jobs``).
    results: dict[Any, Any] = field(default_factory=dict)
    #: What ``Experiment.prepare`` computed before the jobs were planned.
    prep: Any = None
    local: Any = None
    stats: dict[str, int] = field(default_factory=dict)

    @property
    def labels(self) -> list[str]:
        return [m.label for m in self.models]

    @property
    def recorded(self) -> list[str]:
        """The models whose runs carry instantaneous metrics."""
        return [m.label for m in self.models if m.record is not None]

    def model(self, label: str) -> Model:
        return next(m for m in self.models if m.label == label)

    def each(self, f, labels: list[str] | None = None) -> dict[str, Any]:
        """``{label: f(label)}`` over ``labels`` (every model by default)."""
        return {m: f(m) for m in (self.labels if labels is None else labels)}


def select_models(exp: Experiment, engine: str | None) -> list[Model]:
    """The experiment's models whose engine family ``--engine`` selects (``both``
    or None: all), each with the engine spec it asked for (CoflowSim's epoch)."""
    from coflowkit import api

    if not exp.models:
        return []
    engines = common.parse_engines(engine)
    out = []
    for m in exp.models:
        for e in engines:
            if api.parse_engine(e)[0] == m.engine:
                record = m.record if m.engine == "exact" else None
                out.append(replace(m, engine=e, record=record))
    if not out:
        raise CoflowkitError(f"reproduce {exp.name}: --engine {engine} selects none of its models")
    return out


def plan(exp: Experiment, opts: Options, models: list[Model]) -> list[tuple[tuple[str, str], Any]]:
    """One job per (model, run), keyed by (model label, run name)."""
    from coflowkit import runner

    spec = exp.workload(opts)
    jobs = []
    for m in models:
        for r in exp.runs:
            if r.models is not None and m.label not in r.models:
                continue
            name, _, rest = r.spec(m).partition(":")
            params = tuple(sorted(tuple(kv.split("=", 1)) for kv in rest.split(",") if kv))
            record = m.record if r.record else None
            job = runner.Job(spec, name, params, engine=m.engine, record=record)
            jobs.append(((m.label, r.name), job))
    return jobs


def simulate(ctx: Context) -> None:
    """Runs the planned jobs (cached, in parallel) into ``ctx.runs`` (or, for an
    experiment with its own ``jobs``, into ``ctx.results``). An experiment with
    neither a workload nor jobs computes everything in ``local``: nothing to run."""
    from coflowkit import runner

    own = ctx.exp.jobs is not None
    if not own and ctx.exp.workload is None:
        return
    keyed = ctx.exp.jobs(ctx) if own else plan(ctx.exp, ctx.opts, ctx.models)
    run_jobs = ctx.exp.execute or (
        lambda js, workers, cache_dir, stats: runner.run_jobs(js, workers, cache_dir, stats=stats)
    )
    res = run_jobs([j for _, j in keyed], ctx.opts.workers, ctx.opts.cache_dir, ctx.stats)
    if own:
        ctx.results = {key: r for (key, _), r in zip(keyed, res, strict=True)}
        return
    ctx.runs = {m.label: {} for m in ctx.models}
    for ((label, name), _), r in zip(keyed, res, strict=True):
        ctx.runs[label][name] = r


def claims_frames(
    claims: list[common.Claim], models: list[str]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The claims table shown (claim, paper, a verdict cell per model, where) and
    its raw values (claim, paper's number, ours per model, where, then per model
    the ratio ours / paper and the flag)."""
    shown = common.claims_table(claims, models)
    shown["where"] = [c.where for c in claims]
    raw = []
    for c in claims:
        row: dict[str, Any] = {"claim": c.claim, "paper": c.target}
        row.update({m: c.values.get(m) for m in models})
        row["where"] = c.where
        for m in models:
            row[f"{m}: ratio"], row[f"{m}: flag"] = ratio_and_flag(c, c.values.get(m))
        raw.append(row)
    return shown, pd.DataFrame(raw)


def ratio_and_flag(c: common.Claim, value: Any) -> tuple[float, bool | None]:
    """Ours / paper (values and bounds; NaN for orderings) and whether the claim
    is flagged: off by more than the tolerance, or a bound or ordering failing.
    None where there is no value."""
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return float("nan"), None
    if c.kind == "true":
        return float("nan"), not bool(value)
    v = float(value)
    q = v / c.target if c.target else float("nan")
    if c.kind == "below":
        return q, not v < c.target
    if c.kind == "above":
        return q, not v > c.target
    return q, not (np.isfinite(q) and abs(q - 1) <= common.CLAIM_TOLERANCE)


class Parts:
    """The computed tables, claims and figures, as the Markdown the template shows
    (a table or claims table by its name, a figure by its file name, ``NAME.png``);
    records which the template showed. A :class:`Data` part is only written."""

    def __init__(self, out: str) -> None:
        self.out = out
        self.md: dict[str, str] = {}
        self.claims: dict[str, list[common.Claim]] = {}
        self.shown: set[str] = set()

    def compute(self, ctx: Context, part: Table | Claims | Figure | Data) -> None:
        built = part.build(ctx)
        if built is None:
            return
        if isinstance(part, Data):
            built.to_csv(os.path.join(self.out, f"{part.name}.csv"), index=False)
        elif isinstance(part, Table):
            self.md[part.name] = self._table(part.name, built, part.caption, part.digits)
        elif isinstance(part, Claims):
            models = (
                list(part.models)
                if isinstance(part.models, tuple)
                else {"all": ctx.labels, "first": ctx.labels[:1], "recorded": ctx.recorded}[
                    part.models
                ]
            )
            shown, raw = claims_frames(built, models)
            raw.to_csv(os.path.join(self.out, f"{part.name}_values.csv"), index=False)
            self.claims[part.name] = built
            self.md[part.name] = self._table(part.name, shown, part.caption, 3)
        else:
            path = os.path.join(self.out, f"{part.name}.png")
            if not built.get_constrained_layout():
                # subplot titles and axis labels of neighbouring panels apart
                built.tight_layout()
            built.savefig(path, dpi=110, bbox_inches="tight", metadata={"Software": None})
            import matplotlib.pyplot as plt

            plt.close(built)
            self.md[f"{part.name}.png"] = f"![{part.name}]({part.name}.png)\n"

    def _table(self, name: str, df: pd.DataFrame, caption: str, digits: int) -> str:
        df.to_csv(os.path.join(self.out, f"{name}.csv"), index=False)
        md = f"**{caption}** (`{name}.csv`)\n\n{common.markdown(df, digits)}\n"
        with open(os.path.join(self.out, f"{name}.md"), "w", encoding="utf-8") as fh:
            fh.write(md)
        return md

    def show(self, name: str) -> str:
        if name not in self.md:
            raise CoflowkitError(f"report template shows '{name}', which was not computed")
        self.shown.add(name)
        return self.md[name]

    def has(self, name: str) -> bool:
        return name in self.md


def render(ctx: Context, parts: Parts, values: dict[str, Any]) -> str:
    """The experiment's template filled from the computed parts and values."""
    import jinja2

    folder, name = os.path.split(ctx.exp.template)
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(os.path.join(HERE, folder)),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )
    env.filters["fmt"] = common.fmt
    env.filters["pct"] = lambda x, digits=0: f"{x:.{digits}%}"
    env.filters["num"] = lambda x: f"{x:g}"
    env.filters["fixed"] = lambda x, digits=2: f"{x:.{digits}f}" if np.isfinite(x) else "-"
    try:
        text = env.get_template(name).render(
            show=parts.show,
            has=parts.has,
            opts=ctx.opts,
            labels=ctx.labels,
            recorded=ctx.recorded,
            full=ctx.exp.full(ctx),
            tolerance=common.CLAIM_TOLERANCE,
            reproduced=reproduced(ctx, parts),
            **values,
        )
    except jinja2.TemplateError as e:
        raise CoflowkitError(f"report template {ctx.exp.template}: {e}") from e
    missing = sorted(set(parts.md) - parts.shown)
    if missing:
        raise CoflowkitError(
            f"report template {ctx.exp.template} does not show {', '.join(missing)}"
        )
    return text


def reproduced(ctx: Context, parts: Parts) -> dict[str, tuple[int, int]]:
    """Per model, how many of the claims it has a value for reproduce (within the
    tolerance, or the bound or ordering holds), and how many it has a value for."""
    out = {}
    columns = dict.fromkeys(
        [*ctx.labels, *(m for cs in parts.claims.values() for c in cs for m in c.values)]
    )
    for m in columns:
        flags = [
            ratio_and_flag(c, c.values[m])[1]
            for cs in parts.claims.values()
            for c in cs
            if m in c.values
        ]
        out[m] = (sum(f is False for f in flags), len(flags))
    return out


def command(exp: Experiment, opts: Options) -> str:
    """The `coflowkit reproduce` command line that makes this report."""
    args = ["coflowkit", "reproduce", exp.name, "--out", opts.out]
    if opts.coflows != exp.default_coflows:
        args += ["--coflows", "all" if opts.coflows is None else str(opts.coflows)]
    for t in opts.transforms:
        args += ["--transform", t]
    if opts.engine is not None:
        args += ["--engine", opts.engine]
    if opts.decisions != exp.default_decisions:
        args += ["--decisions", opts.decisions]
    return shlex.join(args)


def machine() -> str:
    """The machine the report was made on, measured (never written by hand)."""
    mem = ""
    try:
        pages, size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
        mem = f", {pages * size / 2**30:.0f} GiB"
    except (ValueError, OSError, AttributeError):
        pass
    return (
        f"{platform.machine()}, {os.cpu_count()} CPUs{mem}, "
        f"{platform.system()} {platform.release()}, Python {platform.python_version()}"
    )


def provenance(ctx: Context, started: float, header: str) -> dict[str, Any]:
    from coflowkit import __version__

    _, _, rest = header.partition(", commit ")
    commit, _, date = rest.partition(", ")
    return {
        "command": command(ctx.exp, ctx.opts),
        "version": __version__,
        "commit": commit,
        "date": date,
        "wall_s": round(time.monotonic() - started, 1),
        "cached_jobs": ctx.stats.get("cached", 0),
        "simulated_jobs": ctx.stats.get("simulated", 0),
        "machine": machine(),
        "paper": ctx.exp.paper,
    }


def provenance_md(p: dict[str, Any]) -> str:
    cached = p["cached_jobs"]
    total = cached + p["simulated_jobs"]
    timing = (
        f"{p['wall_s']:.0f} s, uncached"
        if cached == 0
        else f"{p['wall_s']:.0f} s, with {cached} of {total} trace simulations read from the "
        "result cache (run with `--no-cache` for the uncached time)"
    )
    paper = f"* Paper: `{p['paper']}`\n" if p.get("paper") else ""
    return (
        "## Provenance\n\n"
        f"* Command: `{p['command']}`\n"
        f"* coflowkit {p['version']}, commit {p['commit']}, {p['date']}\n"
        f"* Wall time: {timing}\n"
        f"* Machine: {p['machine']}\n"
        f"{paper}"
    )


HTML = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body {{ font-family: sans-serif; max-width: 72em; margin: 2em auto; padding: 0 1em;
  line-height: 1.45; color: #222; }}
table {{ border-collapse: collapse; margin: 1em 0; font-size: 0.85em; }}
th, td {{ border: 1px solid #ccc; padding: 0.2em 0.5em; }}
th {{ background: #f3f3f3; }}
tr:nth-child(even) td {{ background: #fafafa; }}
img {{ max-width: 100%; }}
code {{ background: #f6f6f6; }}
section.provenance {{ background: #f4f7fb; border: 1px solid #d5deea; padding: 0.2em 1em;
  margin-bottom: 1.5em; font-size: 0.9em; }}
</style></head><body>
<h1>{title}</h1>
<section class="provenance">{provenance}</section>
{body}
</body></html>
"""


def _inline_images(body: str, folder: str) -> str:
    """Replaces each ``<img src="NAME.png">`` whose file is in ``folder`` by the
    image itself (a data URI), so the page needs nothing beside it."""
    import base64
    import re

    def embed(m: re.Match) -> str:
        path = os.path.join(folder, m.group(2))
        if os.path.dirname(m.group(2)) or not os.path.isfile(path):
            return m.group(0)
        with open(path, "rb") as fh:
            data = base64.b64encode(fh.read()).decode("ascii")
        return f'{m.group(1)}"data:image/png;base64,{data}"'

    return re.sub(r'(<img [^>]*src=)"([^"/]+\.png)"', embed, body)


def write_report(out: str, title: str, body: str, prov: dict[str, Any]) -> str:
    """``report.md`` (title, body, provenance last) and its ``report.html``
    (:func:`render_html`)."""
    path = os.path.join(out, "report.md")
    text = f"# {title}\n\n{body.rstrip()}\n\n{provenance_md(prov)}"
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
    render_html(out)
    return path


def render_html(out: str) -> str:
    """Writes ``out/report.html`` from ``out/report.md``: one self-contained page,
    the provenance section first and every figure of ``out`` embedded. Also
    renders a report written before the HTML reports existed."""
    import html

    import markdown

    with open(os.path.join(out, "report.md"), encoding="utf-8") as fh:
        text = fh.read()
    first, _, rest = text.partition("\n")
    if not first.startswith("# "):
        raise CoflowkitError(f"{out}/report.md: the first line is not the report's title")
    body, sep, prov = rest.partition("\n## Provenance\n")
    if sep:
        prov = "## Provenance\n" + prov
    else:  # reports before the section: a "Command: ..." paragraph above the first "##"
        head, _, _ = body.partition("\n## ")
        para = next((p for p in head.split("\n\n") if p.strip().startswith("Command:")), "")
        if not para:
            raise CoflowkitError(f"{out}/report.md: no provenance (command, version, date)")
        body = body.replace(para, "", 1)
        prov = "## Provenance\n\n" + para.strip()
    md = markdown.Markdown(extensions=["tables"])
    page = HTML.format(
        title=html.escape(first[2:].strip()),
        provenance=md.convert(prov),
        body=_inline_images(md.reset().convert(body), out),
    )
    path = os.path.join(out, "report.html")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(page)
    return path


def run(exp: Experiment, **kw) -> str:
    """Runs ``exp`` with the options ``kw`` (see :class:`Options`; ``coflows``
    defaults to the experiment's own); returns the path of ``report.md``."""
    kw.setdefault("coflows", exp.default_coflows)
    decisions = common.parse_decisions(kw.get("decisions"))
    if decisions is not None and exp.default_decisions is None:
        raise CoflowkitError(
            f"reproduce {exp.name}: --decisions applies only to the experiments whose "
            "paper states a decision interval (coda-scheduler, coda-identify)"
        )
    kw["decisions"] = exp.default_decisions if decisions is None else decisions
    kw["transforms"] = tuple(kw.get("transforms", ()))
    opts = Options(**kw)
    started = time.monotonic()
    header = common.provenance_line()  # the commit and date when the run started
    ctx = Context(exp, opts, select_models(exp, opts.engine))
    os.makedirs(opts.out, exist_ok=True)
    if exp.prepare is not None:
        ctx.prep = exp.prepare(ctx)
    simulate(ctx)
    if exp.local is not None:
        ctx.local = exp.local(ctx)
    parts = Parts(opts.out)
    for part in exp.parts(ctx) if callable(exp.parts) else exp.parts:
        parts.compute(ctx, part)
    values = exp.values(ctx) if exp.values is not None else {}
    body = render(ctx, parts, values)
    p = provenance(ctx, started, header)
    with open(os.path.join(opts.out, "provenance.json"), "w", encoding="utf-8") as fh:
        json.dump(p, fh, indent=2, sort_keys=True)
        fh.write("\n")
    return write_report(opts.out, exp.title, body, p)
