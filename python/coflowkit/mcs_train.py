"""`coflowkit mcs-train`: the SNCF training of MCS (Section V of the MCS paper,
IEEE/ACM ToN 2018), which turns a workload into the class file of the `mcs` policy.

Two parts (docs/mcs-train.md gives the equations and every edge-case choice):

* Table I: the Pearson correlation between coflow width w (number of flows), size
  d (total bytes), minimal CCT in bytes
  Γ = max(max_i Σ_j d_ij, max_j Σ_i d_ij) (the most a sender sends or a receiver
  receives in the coflow) and length (largest flow), on raw and on log10 values,
  with the 95 % Fisher-z interval of the log10 value (the paper's brackets).
* Algorithm 1 (SNCF): CLASSIFICATIONTHRESH picks width thresholds Δ_1..Δ_{n-1}
  (Δ_i = Δ_{i-1}·Step, then times Step while the accuracy
  A(T_i, Δ_i) = β_i / α_i does not drop); ASSIGNPRIORITY gives class i the queue j
  with T_{j-1} ≤ min size of the class < T_j.

Width thresholds are exact rationals (``Fraction``): widths are integers, so the
class [Δ_{i-1}, Δ_i) holds the widths in [⌈Δ_{i-1}⌉, ⌈Δ_i⌉), and ⌈Δ_i⌉ is what the
class file stores.
"""

from __future__ import annotations

import bisect
import math
import os
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import pandas as pd

from coflowkit._core import CoflowkitError, Workload

#: 1 MB, the project's convention (as in the benchmark trace format).
MB = 1 << 20

#: The attributes of Table I, in the paper's order, with their display names.
ATTRIBUTES = {
    "width": "width",
    "size_bytes": "size",
    "min_cct_bytes": "minimal CCT",
    "length_bytes": "length",
}

#: Table I of the paper (Facebook trace, 526 coflows): raw ρ, ρ of the log10
#: values, and the bracketed interval (which is the 95 % Fisher-z interval of the
#: log10 ρ for 526 coflows).
PAPER_TABLE_I: dict[tuple[str, str], tuple[float, float, tuple[float, float]]] = {
    ("width", "size_bytes"): (0.54, 0.91, (0.89, 0.92)),
    ("width", "min_cct_bytes"): (0.5, 0.81, (0.77, 0.83)),
    ("width", "length_bytes"): (0.22, 0.37, (0.29, 0.44)),
    ("size_bytes", "min_cct_bytes"): (0.97, 0.96, (0.96, 0.97)),
    ("size_bytes", "length_bytes"): (0.46, 0.71, (0.67, 0.75)),
    ("min_cct_bytes", "length_bytes"): (0.51, 0.82, (0.78, 0.84)),
}

#: Two-sided 95 % normal quantile, for the Fisher-z interval.
Z95 = 1.959963984540054
#: The confidence level of those intervals.
CONFIDENCE = 0.95

Number = int | float | str | Fraction


# --------------------------------------------------------------------------- #
# Table I
# --------------------------------------------------------------------------- #


def coflow_attributes(w: Workload) -> pd.DataFrame:
    """One row per coflow: ``coflow_id, width, size_bytes, min_cct_bytes,
    length_bytes``, in the order of ``w.coflow_columns()``.

    ``min_cct_bytes`` is Γ: the largest of the bytes each sender sends and each
    receiver receives within the coflow (a flow src→dst counts for sender src and
    receiver dst, also when src = dst)."""
    c = pd.DataFrame(w.coflow_columns())
    f = pd.DataFrame(w.flow_columns(), columns=["coflow_id", "src", "dst", "bytes"])
    up = f.groupby(["coflow_id", "src"], sort=False)["bytes"].sum().groupby(level=0).max()
    down = f.groupby(["coflow_id", "dst"], sort=False)["bytes"].sum().groupby(level=0).max()
    gamma = np.maximum(up, down.reindex(up.index))
    out = pd.DataFrame(
        {
            "coflow_id": c["coflow_id"].astype("int64"),
            "width": c["width"].astype("int64"),
            "size_bytes": c["size_bytes"].astype("float64"),
            "min_cct_bytes": gamma.reindex(c["coflow_id"]).to_numpy(dtype="float64"),
            "length_bytes": c["length_bytes"].astype("float64"),
        }
    )
    return out


def pearson(x, y) -> float:
    """ρ = Σ(x - x̄)(y - ȳ) / sqrt(Σ(x - x̄)² · Σ(y - ȳ)²); NaN with fewer than two
    values or when either variable is constant."""
    x = np.asarray(x, dtype="float64")
    y = np.asarray(y, dtype="float64")
    if len(x) != len(y):
        raise ValueError("pearson: x and y differ in length")
    if len(x) < 2:
        return math.nan
    dx = x - x.mean()
    dy = y - y.mean()
    den = math.sqrt(float(np.dot(dx, dx)) * float(np.dot(dy, dy)))
    if den == 0.0:
        return math.nan
    return float(np.dot(dx, dy)) / den


def fisher_interval(r: float, n: int, z: float = Z95) -> tuple[float, float]:
    """The confidence interval tanh(atanh(ρ) ± z / sqrt(n - 3)); NaNs when it is
    undefined (n ≤ 3, |ρ| = 1 or ρ NaN)."""
    if n <= 3 or not math.isfinite(r) or abs(r) >= 1.0:
        return (math.nan, math.nan)
    c = math.atanh(r)
    h = z / math.sqrt(n - 3)
    return (math.tanh(c - h), math.tanh(c + h))


@dataclass(frozen=True)
class Correlation:
    """One cell of Table I: ρ of two attributes, raw and on log10 values."""

    x: str
    y: str
    raw: float
    log10: float
    coflows: int
    #: Coflows used for the log10 value (those with both values > 0).
    coflows_log: int
    ci_log: tuple[float, float]
    paper_raw: float | None
    paper_log10: float | None
    paper_ci: tuple[float, float] | None

    @property
    def label(self) -> str:
        return f"{ATTRIBUTES[self.x]} – {ATTRIBUTES[self.y]}"


def correlations(attrs: pd.DataFrame) -> list[Correlation]:
    """The six pairs of Table I, in the paper's order. The log10 value uses only
    the coflows whose two attributes are both > 0 (log10 of 0 is undefined)."""
    names = list(ATTRIBUTES)
    out = []
    for a in range(len(names)):
        for b in range(a + 1, len(names)):
            x = attrs[names[a]].to_numpy(dtype="float64")
            y = attrs[names[b]].to_numpy(dtype="float64")
            pos = (x > 0) & (y > 0)
            rlog = pearson(np.log10(x[pos]), np.log10(y[pos]))
            paper = PAPER_TABLE_I.get((names[a], names[b]))
            out.append(
                Correlation(
                    x=names[a],
                    y=names[b],
                    raw=pearson(x, y),
                    log10=rlog,
                    coflows=len(x),
                    coflows_log=int(pos.sum()),
                    ci_log=fisher_interval(rlog, int(pos.sum())),
                    paper_raw=paper[0] if paper else None,
                    paper_log10=paper[1] if paper else None,
                    paper_ci=paper[2] if paper else None,
                )
            )
    return out


# --------------------------------------------------------------------------- #
# Algorithm 1
# --------------------------------------------------------------------------- #


def exact(value: Number, name: str) -> Fraction:
    """``value`` as an exact rational (a float or a decimal string keeps its decimal
    value: 1.1 is 11/10); a CoflowkitError naming ``name`` if it is not a finite
    number."""
    try:
        if isinstance(value, (float, np.floating)):
            value = repr(float(value))
        if isinstance(value, str):
            value = value.strip()
        return Fraction(value)
    except (ValueError, TypeError, ZeroDivisionError, OverflowError):
        raise CoflowkitError(f"{name} must be a number, got {value!r}") from None


def _ceil(x: Fraction) -> int:
    return -((-x.numerator) // x.denominator)


#: The largest width threshold the class file may hold: 2^53, so that every
#: threshold is exact for any reader (also one that parses numbers as doubles).
MAX_DELTA = 1 << 53

#: The parameter names used in messages (the CLI passes its flags instead).
PARAMETER_NAMES = ("n", "t_first_mb", "t_multiplier", "step")


def check_parameters(
    n: int | str,
    t_first_mb: Number,
    t_multiplier: Number,
    step: Number,
    names: tuple[str, str, str, str] = PARAMETER_NAMES,
) -> tuple[int, Fraction, Fraction, Fraction]:
    """Validates the training parameters and returns them exact: n a whole number
    ≥ 2, t_first_mb > 0, t_multiplier > 1 (strictly increasing T_i) and step > 1
    (strictly increasing Δ_i, and a search that moves). Messages name ``names``."""
    if isinstance(n, str):
        try:
            n = int(n.strip())
        except ValueError:
            raise CoflowkitError(f"{names[0]} must be a whole number >= 2, got {n!r}") from None
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 2:
        raise CoflowkitError(f"{names[0]} must be a whole number >= 2, got {n!r}")
    first = exact(t_first_mb, names[1])
    mult = exact(t_multiplier, names[2])
    st = exact(step, names[3])
    if first <= 0:
        raise CoflowkitError(f"{names[1]} must be > 0, got {_show(first)}")
    if mult <= 1:
        raise CoflowkitError(f"{names[2]} must be > 1, got {_show(mult)}")
    if st <= 1:
        raise CoflowkitError(f"{names[3]} must be > 1, got {_show(st)}")
    return int(n), first, mult, st


def size_thresholds_bytes(n: int, t_first_mb: Number = 10, t_multiplier: Number = 10) -> list:
    """T_1..T_{n-1} in bytes: T_i = t_first_mb · t_multiplier^(i-1) MB (T_0 = 0 and
    T_n = ∞ are implicit). Floats, exact for the defaults."""
    n, first, mult, _ = check_parameters(n, t_first_mb, t_multiplier, 10)
    out = []
    for i in range(1, n):
        t = first * mult ** (i - 1) * MB
        try:
            tf = float(t)
        except OverflowError:
            tf = math.inf
        if not math.isfinite(tf):
            raise CoflowkitError(f"size threshold T_{i} overflows; use fewer classes")
        out.append(tf)
    return out


def class_accuracy(widths, sizes, w_lo: int, w_hi: int | None, t_lo: float, t_hi: float):
    """(A, α·N, β·N) for the class widths in [w_lo, w_hi) (``None``: ∞) and sizes
    in [t_lo, t_hi). α = coflows in the width range / N, β = those also in the size
    range / N, A = β / α as an exact fraction, and A = 0 when α = 0."""
    in_w = widths >= w_lo
    if w_hi is not None:
        in_w &= widths < w_hi
    na = int(in_w.sum())
    nb = int((in_w & (sizes >= t_lo) & (sizes < t_hi)).sum())
    return (Fraction(nb, na) if na else Fraction(0)), na, nb


def classification_thresh(widths, sizes, thresholds_bytes, step: Number = 10):
    """CLASSIFICATIONTHRESH. Returns ``(deltas, searches)``: ``deltas`` are the exact
    Δ_0..Δ_{n-1} (n = len(thresholds_bytes) + 1), ``searches[i-1]`` the list of
    ``(Δ candidate, A)`` the search for Δ_i evaluated, in order.

    Δ_0 = max(1, min width); Δ_i = Δ_{i-1}·Step; while Δ_i ≤ max width and
    A(T_i, Δ_i) ≤ A(T_i, Δ_i·Step): Δ_i ·= Step. The guard Δ_i ≤ max width makes the
    loop finite: beyond the largest width a larger Δ_i changes no class."""
    widths = np.asarray(widths, dtype="int64")
    sizes = np.asarray(sizes, dtype="float64")
    if len(widths) == 0:
        raise CoflowkitError("the workload has no coflows")
    st = check_parameters(2, 1, 10, step)[3]
    bounds = [0.0, *thresholds_bytes, math.inf]
    wmax = int(widths.max())
    deltas = [Fraction(max(1, int(widths.min())))]
    searches = []
    for i in range(1, len(bounds) - 1):
        lo = deltas[i - 1]

        def acc(hi: Fraction, lo=lo, i=i) -> Fraction:
            return class_accuracy(widths, sizes, _ceil(lo), _ceil(hi), bounds[i - 1], bounds[i])[0]

        d = lo * st
        a = acc(d)
        trail = [(d, a)]
        while d <= wmax:
            a_next = acc(d * st)
            trail.append((d * st, a_next))
            if a > a_next:
                break
            d, a = d * st, a_next
        deltas.append(d)
        searches.append(trail)
    return deltas, searches


def class_members(widths, deltas, i: int):
    """Mask of the coflows of class i (1-based) for Δ_0..Δ_{n-1} = ``deltas``:
    ⌈Δ_{i-1}⌉ ≤ w < ⌈Δ_i⌉, with Δ_n = ∞."""
    widths = np.asarray(widths, dtype="int64")
    m = widths >= _ceil(deltas[i - 1])
    if i < len(deltas):
        m &= widths < _ceil(deltas[i])
    return m


def assign_priority(widths, sizes, deltas, thresholds_bytes) -> list[int]:
    """ASSIGNPRIORITY: p_i = the j (1-based) with T_{j-1} ≤ min size of class i < T_j.
    An empty class takes the priority of the class before it (class 1 holds the
    narrowest coflows, so it is never empty)."""
    sizes = np.asarray(sizes, dtype="float64")
    out: list[int] = []
    for i in range(1, len(deltas) + 1):
        m = class_members(widths, deltas, i)
        if not m.any():
            out.append(out[-1] if out else 1)
            continue
        out.append(bisect.bisect_right(list(thresholds_bytes), float(sizes[m].min())) + 1)
    return out


def file_classes(deltas, priorities) -> tuple[list[int], list[int]]:
    """The class file's ``deltas`` (⌈Δ_1⌉..⌈Δ_{n-1}⌉) and ``priorities``, with the
    deltas strictly increasing: where ⌈Δ_{i-1}⌉ = ⌈Δ_i⌉, class i = [⌈Δ_{i-1}⌉, ⌈Δ_i⌉)
    holds no integer width, so it is dropped with its upper threshold and its
    priority; class i+1 then starts at the same width as before. No coflow changes
    class or priority."""
    ints = [_ceil(d) for d in deltas]
    out_d: list[int] = []
    out_p = [priorities[0]]
    for i in range(1, len(ints)):
        if ints[i] > (out_d[-1] if out_d else ints[0]):
            out_d.append(ints[i])
            out_p.append(priorities[i])
        else:
            # Class i is empty: the class above the last kept threshold is class i+1.
            out_p[-1] = priorities[i]
    return out_d, out_p


@dataclass(frozen=True)
class ClassInfo:
    """One class of the training: its width range, its coflows and its priority."""

    index: int
    width_lo: int
    #: ``None``: ∞ (the last class).
    width_hi: int | None
    size_lo_bytes: float
    size_hi_bytes: float
    coflows: int
    min_size_bytes: float
    median_size_bytes: float
    max_size_bytes: float
    #: A(T_i, Δ_i) = β_i / α_i (0 when the class is empty).
    accuracy: float
    #: Coflows of the class whose size is in [T_{i-1}, T_i) (β_i · N).
    in_size_range: int
    priority: int
    #: The (Δ candidate, A) the search for Δ_i evaluated, in order (empty for the last class).
    search: tuple


@dataclass(frozen=True)
class Training:
    """The result of Algorithm 1 on a workload."""

    source: str
    coflows: int
    n: int
    t_first_mb: Fraction
    t_multiplier: Fraction
    step: Fraction
    thresholds_bytes: tuple
    #: Δ_0..Δ_{n-1}, exact.
    deltas: tuple
    classes: tuple
    #: What the class file holds (strictly increasing deltas, one more priority).
    file_deltas: tuple
    file_priorities: tuple


def train(
    w: Workload | pd.DataFrame,
    n: int = 5,
    t_first_mb: Number = 10,
    t_multiplier: Number = 10,
    step: Number = 10,
    source: str | None = None,
) -> Training:
    """Algorithm 1 on a workload (or on a DataFrame with ``width`` and ``size_bytes``)."""
    n, t_first_mb, t_multiplier, step = check_parameters(n, t_first_mb, t_multiplier, step)
    if isinstance(w, pd.DataFrame):
        attrs = w
        source = source or "<table>"
    else:
        attrs = pd.DataFrame(w.coflow_columns())
        source = source or w.source
    widths = attrs["width"].to_numpy(dtype="int64")
    sizes = attrs["size_bytes"].to_numpy(dtype="float64")
    ts = size_thresholds_bytes(n, t_first_mb, t_multiplier)
    deltas, searches = classification_thresh(widths, sizes, ts, step)
    prios = assign_priority(widths, sizes, deltas, ts)
    bounds = [0.0, *ts, math.inf]
    classes = []
    for i in range(1, n + 1):
        m = class_members(widths, deltas, i)
        hi = _ceil(deltas[i]) if i < n else None
        a, _, nb = class_accuracy(widths, sizes, _ceil(deltas[i - 1]), hi, bounds[i - 1], bounds[i])
        s = sizes[m]
        classes.append(
            ClassInfo(
                index=i,
                width_lo=_ceil(deltas[i - 1]),
                width_hi=hi,
                size_lo_bytes=bounds[i - 1],
                size_hi_bytes=bounds[i],
                coflows=int(m.sum()),
                min_size_bytes=float(s.min()) if len(s) else math.nan,
                median_size_bytes=float(np.median(s)) if len(s) else math.nan,
                max_size_bytes=float(s.max()) if len(s) else math.nan,
                accuracy=float(a),
                in_size_range=nb,
                priority=prios[i - 1],
                search=tuple(searches[i - 1]) if i < n else (),
            )
        )
    fd, fp = file_classes(deltas, prios)
    if fd and fd[-1] > MAX_DELTA:
        raise CoflowkitError(
            f"width threshold {fd[-1]} is larger than 2^53; use fewer classes or a smaller step"
        )
    return Training(
        source=source,
        coflows=len(widths),
        n=n,
        t_first_mb=t_first_mb,
        t_multiplier=t_multiplier,
        step=step,
        thresholds_bytes=tuple(ts),
        deltas=tuple(deltas),
        classes=tuple(classes),
        file_deltas=tuple(fd),
        file_priorities=tuple(fp),
    )


# --------------------------------------------------------------------------- #
# The class file of the `mcs` policy
# --------------------------------------------------------------------------- #


def _show(x: Fraction | float) -> str:
    """A number for people: integers without a point, else up to 6 significant digits."""
    if isinstance(x, Fraction) and x.denominator == 1:
        return str(x.numerator)
    f = float(x)
    if math.isfinite(f) and f == int(f) and abs(f) < 1e15:
        return str(int(f))
    return f"{f:.6g}"


def params_text(t: Training, trace: str) -> str:
    """The class file of the `mcs` policy (``--param classes=FILE``)::

    # coflowkit mcs classes, written by `coflowkit mcs-train` from <trace>
    # T_i (MB) = 10,100,1000,10000
    deltas = 10,100,1000,10000
    priorities = 1,2,3,4,5
    """
    t_mb = ",".join(_show(t.t_first_mb * t.t_multiplier**k) for k in range(t.n - 1))
    return (
        f"# coflowkit mcs classes, written by `coflowkit mcs-train` from {trace}\n"
        f"# T_i (MB) = {t_mb}\n"
        f"deltas = {','.join(str(d) for d in t.file_deltas)}\n"
        f"priorities = {','.join(str(p) for p in t.file_priorities)}\n"
    )


def write_params(t: Training, trace: str, path: str | os.PathLike) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(params_text(t, trace))


# --------------------------------------------------------------------------- #
# CLI report
# --------------------------------------------------------------------------- #


def _fmt(x: float | None, digits: int = 2) -> str:
    if x is None or not math.isfinite(x):
        return "-"
    return f"{x:.{digits}f}"


def _ci(ci: tuple[float, float] | None) -> str:
    if ci is None or not all(math.isfinite(v) for v in ci):
        return "-"
    return f"({ci[0]:.2f}, {ci[1]:.2f})"


def _mb(x: float) -> str:
    """Bytes in MB: thousands separators from 100 MB on, else 3 significant digits."""
    if not math.isfinite(x):
        return "∞" if x > 0 else "-"
    v = x / MB
    return f"{v:,.0f}" if v >= 100 else f"{v:.3g}"


def print_report(corr: list[Correlation], t: Training, console=None) -> None:
    """Table I beside the paper's, then the classes, with rich tables."""
    from rich.console import Console
    from rich.table import Table

    console = console or Console(width=130)
    tab = Table(
        title=f"Table I: Pearson correlation, {t.source} ({t.coflows} coflows)",
        caption="paper: Facebook trace; CI: 95 % Fisher-z interval of the log10 ρ",
    )
    for c in ["attributes", "paper raw", "raw", "paper log10", "log10", "paper CI", "95% CI"]:
        tab.add_column(c, justify="left" if c == "attributes" else "right")
    for c in corr:
        tab.add_row(
            c.label,
            _fmt(c.paper_raw),
            _fmt(c.raw),
            _fmt(c.paper_log10),
            _fmt(c.log10),
            _ci(c.paper_ci),
            _ci(c.ci_log),
        )
    console.print(tab)
    skipped = max(t.coflows - c.coflows_log for c in corr) if corr else 0
    if skipped:
        console.print(f"log10 values: {skipped} coflows with a zero attribute left out")

    tab = Table(
        title=f"SNCF classes (n = {t.n}, T_i = {_show(t.t_first_mb)}·{_show(t.t_multiplier)}"
        f"^(i-1) MB, Step = {_show(t.step)})"
    )
    for c in [
        "class",
        "width range",
        "size range (MB)",
        "coflows",
        "min MB",
        "median MB",
        "max MB",
        "A(T_i, Δ_i)",
        "priority p_i",
    ]:
        tab.add_column(c, justify="right")
    for c in t.classes:
        hi = "∞" if c.width_hi is None else str(c.width_hi)
        tab.add_row(
            str(c.index),
            f"[{c.width_lo}, {hi})",
            f"[{_show(c.size_lo_bytes / MB)}, "
            f"{'∞' if math.isinf(c.size_hi_bytes) else _show(c.size_hi_bytes / MB)})",
            str(c.coflows),
            _mb(c.min_size_bytes),
            _mb(c.median_size_bytes),
            _mb(c.max_size_bytes),
            f"{c.accuracy:.3f} ({c.in_size_range}/{c.coflows})",
            str(c.priority),
        )
    console.print(tab)
    console.print(
        f"deltas = {','.join(map(str, t.file_deltas))}   "
        f"priorities = {','.join(map(str, t.file_priorities))}"
    )
