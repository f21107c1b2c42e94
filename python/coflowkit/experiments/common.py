"""Shared pieces of the `reproduce` commands: workloads built in memory, tables,
figures and the report beside the paper's numbers."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from coflowkit import _core, metrics
from coflowkit._core import CoflowkitError, Workload

MIB = metrics.MIB
#: How far from the paper a number may be before the report must explain why.
TOLERANCE = 0.25


def flows_workload(rows: list[tuple], source: str, ports: int | None = None) -> Workload:
    """A workload from ``(coflow_id, src, dst, bytes, start_s)`` rows; flow ids are
    the row numbers; each coflow arrives with its earliest flow."""
    if not rows:
        raise CoflowkitError(f"{source}: no flows")
    cols = list(zip(*rows, strict=True))
    n = len(rows)
    w = _core.workload_from_columns(
        source,
        [int(x) for x in cols[0]],
        list(range(1, n + 1)),
        [int(x) for x in cols[1]],
        [int(x) for x in cols[2]],
        [float(x) for x in cols[3]],
        [float(x) for x in cols[4]],
    )
    if ports is not None and ports != w.ports:
        w = w.with_fabric(f"bigswitch:ports={ports}")
    return w


def testbed_micro(
    arrivals_s: Sequence[float],
    sizes: str,
    seed: int = 1,
    equal_bytes: float = 100 * MIB,
    groups: int = 10,
    self_flows: bool = True,
) -> Workload:
    """The three coflows of the NC-DRF and Coflex testbed micro-benchmarks on
    ``6 · groups`` machines, N (the papers: 10 groups, N = 60, numbered 1..60; here
    ports 0..N-1):

    * A: the machines in ``groups`` groups of 6 (1-6, 7-12, ...), all-to-all inside
      each group, a machine to itself included: 36 flows a group (360 on 60);
    * B: machine i and i + N/2 for i in 1..N/2, both ways (60 flows on 60);
    * C: machine j and j + N/4 for j in 1..N/4 and N/2+1..3N/4, both ways (60 on 60).

    Every machine's links carry the same flows of A, B and C whatever ``groups``
    (an even number, so that N/4 is whole). ``self_flows=False`` leaves out A's
    flows from a machine to itself (on real hosts they do not cross the network).
    ``sizes``: ``"random"`` draws every flow uniformly in [30, 100] MB with
    ``seed`` (NC-DRF), ``"equal"`` gives every flow ``equal_bytes`` (Coflex).
    """
    if groups < 2 or groups % 2:
        raise CoflowkitError(f"testbed micro-benchmark: groups must be even and >= 2, got {groups}")
    rng = random.Random(seed)

    def size() -> float:
        if sizes == "random":
            return rng.uniform(30.0, 100.0) * MIB
        if sizes == "equal":
            return equal_bytes
        raise CoflowkitError(f"sizes must be 'random' or 'equal', got {sizes!r}")

    n = 6 * groups
    half, quarter = n // 2, n // 4
    rows: list[tuple] = []
    a, b, c = arrivals_s
    for g in range(groups):
        group = range(6 * g, 6 * g + 6)
        rows += [(1, s, d, size(), a) for s in group for d in group]
    for i in range(half):
        rows += [(2, i, i + half, size(), b), (2, i + half, i, size(), b)]
    for j in list(range(quarter)) + list(range(half, half + quarter)):
        rows += [(3, j, j + quarter, size(), c), (3, j + quarter, j, size(), c)]
    if not self_flows:  # drawn all the same, so the other flows keep their sizes
        rows = [r for r in rows if r[1] != r[2]]
    return flows_workload(rows, f"micro-benchmark({sizes})", ports=n)


def concurrent_sample(trace: Workload, n: int, seed: int) -> Workload:
    """``n`` coflows of ``trace`` drawn uniformly without replacement (seeded), all
    arriving, with all their flows, at time 0 (Coflex Sec. V-A1)."""
    cols = trace.flow_columns()
    ids = sorted(set(cols["coflow_id"]))
    if n > len(ids):
        raise CoflowkitError(f"cannot sample {n} coflows from {len(ids)}")
    keep = set(random.Random(seed).sample(ids, n))
    rows = [
        (k, s, d, b, 0.0)
        for k, s, d, b in zip(
            cols["coflow_id"], cols["src"], cols["dst"], cols["bytes"], strict=True
        )
        if k in keep
    ]
    return flows_workload(rows, f"{n} coflows of {trace.source} at t=0", ports=trace.ports)


def slowdown_stats(r) -> dict[str, float]:
    """:func:`metrics.slowdown_stats` of a result."""
    return metrics.slowdown_stats(r.coflows)


#: What `reproduce --engine both` (the default of the experiments made on CoflowSim)
#: runs: coflowkit's exact engine, and CoflowSim's model with its 10.24 s epochs.
BOTH_ENGINES = ("exact", "coflowsim")


def parse_engines(spec: str | None) -> tuple[str, ...]:
    """``both`` (or None) → both engines; otherwise one engine spec, checked
    (``exact`` or ``coflowsim[:epoch_s=S]``)."""
    from coflowkit import api

    if spec is None or spec.strip() == "both":
        return BOTH_ENGINES
    api.parse_engine(spec)
    return (spec.strip(),)


#: What ``--decisions`` takes: ``event`` (the policy decides at every flow event,
#: the exact engine's default) or S, seconds between decisions (``realloc=interval``,
#: ``decision_s=S``: the policy decides at k·S only, rates held in between;
#: docs/engines.md).
EVENT_DECISIONS = "event"


def parse_decisions(spec: str | float | None) -> str | None:
    """``--decisions``: None (the experiment's own), ``event`` or a positive
    number of seconds, returned in canonical form (``event`` or ``%g`` of it)."""
    if spec is None:
        return None
    text = str(spec).strip()
    if text == EVENT_DECISIONS:
        return text
    try:
        s = float(text)
    except ValueError:
        s = float("nan")
    if not (s > 0 and np.isfinite(s)):
        raise CoflowkitError(
            f"--decisions must be 'event' or a positive number of seconds, got {spec!r}"
        )
    return f"{s:g}"


def decision_params(decisions: str | None) -> tuple[tuple[str, str], ...]:
    """The policy parameters of a decision model (see :func:`parse_decisions`):
    none per event, ``realloc=interval,decision_s=S`` every S seconds."""
    d = parse_decisions(decisions)
    if d is None or d == EVENT_DECISIONS:
        return ()
    return (("realloc", "interval"), ("decision_s", d))


def decisions_label(decisions: str | None) -> str:
    """How a report names the decision model."""
    d = parse_decisions(decisions)
    if d is None or d == EVENT_DECISIONS:
        return "at every flow event"
    return f"every {d} s"


def engine_label(engine: str) -> str:
    from coflowkit import api

    name, units = api.parse_engine(engine)
    if name == "exact":
        return "exact"
    return "CoflowSim" if units == 10240 else f"CoflowSim (epoch {units / 1000:g} s)"


def fmt(x: Any, digits: int = 3) -> str:
    if isinstance(x, str):
        return x
    if x is None or (isinstance(x, float) and np.isnan(x)):
        return "-"
    if isinstance(x, float) and np.isinf(x):
        return "inf"
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    return f"{x:.{digits}g}" if abs(x) >= 1e-3 or x == 0 else f"{x:.2e}"


def markdown(df: pd.DataFrame, digits: int = 3) -> str:
    cols = [str(c) for c in df.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for row in df.itertuples(index=False):
        lines.append("| " + " | ".join(fmt(v, digits) for v in row) + " |")
    return "\n".join(lines)


def ratio_note(ours: float, paper: float, tolerance: float = TOLERANCE) -> str:
    """`ours / paper`, flagged when off by more than ``tolerance``."""
    if paper == 0 or not np.isfinite(ours) or not np.isfinite(paper):
        return "-"
    q = ours / paper
    flag = f" **>{tolerance:.0%}**" if abs(q - 1) > tolerance else ""
    return f"{q:.2f}{flag}"


def provenance_line() -> str:
    """coflowkit version, git commit and UTC date (as `coflowkit bench` prints them)."""
    from coflowkit.policy_timing import provenance

    return provenance()


#: The claims tables' tolerance: a value within 15% of the paper's reproduces it.
CLAIM_TOLERANCE = 0.15


@dataclass
class Claim:
    """One quantitative claim of a paper and coflowkit's value under each model.

    ``kind``: ``"value"`` (reproduced within :data:`CLAIM_TOLERANCE` of ``target``),
    ``"below"`` / ``"above"`` (the paper states a bound: ours must respect it), or
    ``"true"`` (an ordering or statement; the value is a bool)."""

    claim: str
    paper: str
    kind: str
    target: float
    values: dict[str, Any]
    #: Where the paper states it ("Table II", "Sec. V-A"); shown by the writer.
    where: str = ""


def verdict(c: Claim, value: Any) -> str:
    """The cell of a claims table: our value and whether it reproduces the claim."""
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return "-"
    if c.kind == "true":
        return "holds" if bool(value) else "**fails**"
    v = float(value)
    if c.kind == "below":
        return f"{fmt(v)}: " + ("holds" if v < c.target else "**fails**")
    if c.kind == "above":
        return f"{fmt(v)}: " + ("holds" if v > c.target else "**fails**")
    q = v / c.target if c.target else float("nan")
    ok = np.isfinite(q) and abs(q - 1) <= CLAIM_TOLERANCE
    return f"{fmt(v)} ({q:.2f}): " + ("reproduced" if ok else f"**off >{CLAIM_TOLERANCE:.0%}**")


def slowdown_claims(paper: dict, slow: dict, labels: list[str], where: str = "") -> list[Claim]:
    """A paper's slowdown table (policy -> (min, mean, p95, std)) as claims; ``slow``
    is model -> policy -> :func:`slowdown_stats`."""
    out = []
    for name, values in paper.items():
        for stat, v in zip(("min", "mean", "p95", "std"), values, strict=True):
            ours = {m: slow[m][name][stat] for m in labels}
            out.append(Claim(f"{name} {stat}", fmt(v), "value", v, ours, where))
    return out


def order_claim(order: list[str], slow: dict, labels: list[str], where: str = "") -> Claim:
    """The paper's ordering of mean slowdowns, first the largest."""
    import itertools

    return Claim(
        "mean slowdown: " + " > ".join(order),
        "holds",
        "true",
        1,
        {
            m: all(slow[m][a]["mean"] > slow[m][b]["mean"] for a, b in itertools.pairwise(order))
            for m in labels
        },
        where,
    )


def ratio_claims(
    num: str, den: str, means: tuple[float, float], slow: dict, labels: list[str], where: str = ""
) -> list[Claim]:
    """``num / den`` of the mean and of the 95th-percentile slowdown, against the
    paper's two ratios ``means``."""
    return [
        Claim(
            f"{num} / {den}, {stat} slowdown",
            fmt(v),
            "value",
            v,
            {m: slow[m][num][stat] / slow[m][den][stat] for m in labels},
            where,
        )
        for stat, v in zip(("mean", "p95"), means, strict=True)
    ]


def claims_table(claims: list[Claim], models: list[str]) -> pd.DataFrame:
    """One row per claim: the paper's value, then ours under each model with its
    verdict (value, ratio ours / paper, reproduced or not)."""
    rows = []
    for c in claims:
        row = {"claim": c.claim, "paper": c.paper}
        for m in models:
            row[m] = verdict(c, c.values.get(m))
        rows.append(row)
    return pd.DataFrame(rows)


def plt():
    """matplotlib with a non-interactive backend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as pyplot

    return pyplot


def cdf(ax, values: np.ndarray, label: str, **kw) -> None:
    x = np.sort(np.asarray(values, dtype=float))
    if len(x) == 0:
        return
    y = np.arange(1, len(x) + 1) / len(x)
    ax.step(x, y, where="post", label=label, **kw)


def normalized_figure(
    bars: dict[str, Sequence[float]],
    ccts: Sequence[tuple[str, np.ndarray]],
    baseline: str | None,
    bar_title: str = "normalized CCT per bin",
    cct_label: str = "CCT (s)",
    title: str | None = None,
):
    """The comparison figure of `compare` and `sweep`. Left: each policy's mean CCT
    over the baseline's, for all coflows and per bin (``bars[label]``: 5 values, NaN
    where a bin is empty; log scale). Right: the CDF of each run's CCTs, the
    baseline's in black and each policy in its bars' colour."""
    pyplot = plt()
    fig, (left, right) = pyplot.subplots(1, 2, figsize=(11, 4))
    bins = ["all"] + metrics.BINS
    labels = list(bars)
    if labels and baseline is not None:
        width = 0.8 / len(labels)
        for i, label in enumerate(labels):
            xs = [j + i * width for j in range(len(bins))]
            left.bar(xs, list(bars[label]), width, label=label, color=f"C{i}")
        left.axhline(1.0, color="black", linewidth=0.8)
        left.set_yscale("log")
        left.set_xticks([j + width * (len(labels) - 1) / 2 for j in range(len(bins))], bins)
        left.set_ylabel(f"mean CCT / {baseline}'s (log)")
        left.set_title(bar_title)
        left.legend(fontsize=7)
    else:
        left.axis("off")
        left.text(0.5, 0.5, "no baseline", ha="center")
    for label, values in ccts:
        color = (
            "black" if label == baseline else f"C{labels.index(label)}" if label in labels else None
        )
        cdf(right, values, label, color=color)
    right.set_xscale("log")
    right.set_xlabel(cct_label)
    right.set_ylabel("fraction of coflows")
    right.set_title("CCT distribution")
    right.legend(fontsize=7)
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig
