"""Distance metric learning for CODA's coflow identification (CODA, SIGCOMM'16, §3.2).

CODA clusters flows into coflows with a weighted distance

    d(f_i, f_j)^2 = sum_k a_k * u_k(f_i, f_j),

one term per attribute of :data:`ATTRIBUTES`. For a numeric attribute ``u_k`` is the
squared difference of the two flows' values; for the pairwise attributes ``d_com``
and ``d_prt`` it is an indicator, 0 when both flows are in the same community (go to
the same destination host and port) and 1 otherwise. The weights ``a >= 0`` are
learned from flows whose coflow is known, following Xing et al. (NIPS'02, "Distance
metric learning with application to clustering with side-information") restricted
to a diagonal matrix, as the CODA paper does::

    minimise   sum_{(i,j) in S} a . u_ij
    subject to mean_{(i,j) in D} sqrt(a . u_ij) >= 1,   a >= 0,

with S the same-coflow pairs and D the different-coflow pairs.

Normalisation. Xing et al. constrain the *sum* over D of the distances; with
sampled pairs the sum grows with the number of pairs drawn, and so would the
weights. Here the constraint uses the *mean* over D pairs, so the learned weights
are a property of the data, not of how many pairs were sampled. (The number of S
pairs only multiplies the objective and never moved the minimiser.)

Solving. The constraint is active at the optimum, and the optimum direction is the
one minimising ``(s . a) / H(a)^2`` where ``s`` is the mean of ``u`` over S and
``H(a) = mean_D sqrt(a . u)``. That is also the direction of the minimiser of
Xing's convex unconstrained form (see :func:`objective`)::

    g(a) = s . a - log H(a),        a >= 0,

whose minimiser a_g always has ``s . a_g = 1/2`` (g is linear plus -1/2 log along a
ray). :func:`learn_diagonal` minimises g, by projected Newton-Raphson (default) or
by gradient projection scaled by the Hessian's diagonal, and rescales a_g to
``a_g / H(a_g)^2``, where the constraint holds with equality. Columns are scaled to
a unit mean over D before solving, so attributes in seconds squared and in bytes
squared are handled alike.

Edge cases:

* an attribute that never differs within D pairs (a zero column in D, in
  particular an unavailable attribute) gets weight 0: it can only add to the
  same-coflow distances;
* an attribute that never differs within S pairs but does within D (say every
  coflow sits in one community) separates coflows perfectly: the objective reaches
  0 with weight on such attributes only, and g has no minimiser. The solution is
  then taken on those attributes alone, as the limit of treating a vanishing share
  of the D pairs as if they were S pairs (label noise): minimise
  ``mean_D(u) . a`` over them under the same constraint.

This module needs nothing beyond numpy.
"""

from __future__ import annotations

import json
import math
import os
from typing import Union

import numpy as np

from coflowkit._core import CoflowkitError

#: The attributes of CODA §3.1/§3.2 in the paper's order: flow start time, mean and
#: variance of packet size, mean and variance of packet inter-arrival time, then
#: the two pairwise attributes (community and destination IP/port).
ATTRIBUTES = ("s_time", "m_size", "v_size", "m_int", "v_int", "d_com", "d_prt")

#: Attributes compared pairwise by an indicator rather than a squared difference.
PAIRWISE = ("d_com", "d_prt")

#: Format tag of the JSON files written by :func:`save`.
FORMAT = "coflowkit-distance/1"

#: The diagonal weights the CODA paper learned on its testbed (§3.2, "Learning
#: Results": As for Spark and Ah for Hadoop), in :data:`ATTRIBUTES` order.
PAPER_WEIGHTS = {
    "spark": [3.825, 0.0, 0.0, 0.0, 0.0, 5.431, 0.217],
    "hadoop": [3.472, 0.0, 0.0, 0.0, 0.0, 3.207, 0.0],
}

#: Record keys of the numeric attributes, in ATTRIBUTES order (after the time).
_NUMERIC_KEYS = ("m_size", "v_size", "m_int", "v_int")

METHODS = ("newton", "gradient")

PathLike = Union[str, "os.PathLike[str]"]


# ---------------------------------------------------------------------------
# pair features


def _n_flows(records) -> int:
    if not isinstance(records, dict):
        raise CoflowkitError(f"records must be a dict of numpy arrays, got {type(records)}")
    if "time" not in records:
        raise CoflowkitError("records have no 'time' (the flow start time, s_time)")
    n = None
    for key in ("time", *_NUMERIC_KEYS, "com", "agg"):
        if key in records:
            arr = np.asarray(records[key])
            if arr.ndim != 1:
                raise CoflowkitError(f"records['{key}'] must be one-dimensional")
            if n is None:
                n = len(arr)
            elif len(arr) != n:
                raise CoflowkitError(
                    f"records['{key}'] has {len(arr)} entries, records['time'] has {n}"
                )
    return int(n)


def pair_features(records, i, j) -> np.ndarray:
    """``u_k(f_i, f_j)`` for every pair ``(i[p], j[p])``: an array ``(len(i), 7)``.

    ``records`` is a dict of equally long numpy arrays, one entry per flow:
    ``time`` (s_time, required), ``m_size``, ``v_size``, ``m_int``, ``v_int``
    (floats), ``com`` (int community key) and ``agg`` (int64 key of the
    destination host and port; ``coflowkit.identify.records`` aggregates a flow
    with no port by its destination host, as the clustering does, and never
    writes -1; a caller may pass -1 for "matches nothing"). A missing key means
    the attribute is unavailable and its column is 0. Numeric columns hold squared
    differences; ``d_com`` is 1 when the communities differ, ``d_prt`` is 1 when
    the aggregation keys differ or either is -1.
    """
    n = _n_flows(records)
    i = np.asarray(i, dtype=np.int64)
    j = np.asarray(j, dtype=np.int64)
    if i.shape != j.shape or i.ndim != 1:
        raise CoflowkitError(
            f"i and j must be two 1-d index arrays of one length, got {i.shape} and {j.shape}"
        )
    if i.size and (min(i.min(), j.min()) < 0 or max(i.max(), j.max()) >= n):
        raise CoflowkitError(f"pair indices must be in [0, {n})")
    u = np.zeros((i.size, len(ATTRIBUTES)), dtype=np.float64)
    for col, key in enumerate(("time", *_NUMERIC_KEYS)):
        if key in records:
            x = np.asarray(records[key], dtype=np.float64)
            diff = x[i] - x[j]
            u[:, col] = diff * diff
    if "com" in records:
        com = np.asarray(records["com"])
        u[:, 5] = com[i] != com[j]
    if "agg" in records:
        agg = np.asarray(records["agg"], dtype=np.int64)
        ai, aj = agg[i], agg[j]
        u[:, 6] = (ai != aj) | (ai == -1) | (aj == -1)
    return u


# ---------------------------------------------------------------------------
# pair sampling


def _decode(index, per_pos, first_partner, order):
    """Pairs numbered ``index`` in the enumeration where position p (in grouped
    order) pairs with positions ``first_partner[p] .. first_partner[p]+per_pos[p]-1``."""
    start = np.cumsum(per_pos) - per_pos  # first pair number of each position
    p = np.searchsorted(start, index, side="right") - 1
    # positions with no pairs share their start with the next one; side="right"
    # then picks the last of them, which is the one that has pairs
    q = first_partner[p] + (index - start[p])
    a, b = order[p], order[q]
    return np.minimum(a, b), np.maximum(a, b)


def _choose(rng, total: int, size: int) -> np.ndarray:
    if size >= total:
        return np.arange(total, dtype=np.int64)
    return np.sort(rng.choice(total, size=size, replace=False, shuffle=False)).astype(np.int64)


def sample_pairs(coflow_ids, max_pairs: int = 200_000, seed: int = 1):
    """Same-coflow and different-coflow flow pairs: ``(S_i, S_j, D_i, D_j)``.

    Flows are numbered by their position in ``coflow_ids``. Every returned pair has
    ``i < j`` (no flow is paired with itself, no pair appears twice). When all
    pairs of the table number at most ``max_pairs`` they are all returned;
    otherwise pairs are drawn uniformly without replacement, at most
    ``max_pairs // 2`` same-coflow ones (fewer if there are fewer; the rest of
    the budget then goes to different-coflow pairs, and conversely). The draw
    depends only on ``coflow_ids``, ``max_pairs`` and ``seed``; within S and
    within D pairs come in a fixed order (grouped by coflow, then by flow).
    """
    ids = np.asarray(coflow_ids)
    if ids.ndim != 1:
        raise CoflowkitError("coflow_ids must be one-dimensional")
    if int(max_pairs) < 2:
        raise CoflowkitError(f"max_pairs must be at least 2, got {max_pairs}")
    max_pairs = int(max_pairs)
    empty = np.zeros(0, dtype=np.int64)
    n = ids.size
    if n < 2:
        return empty, empty, empty, empty
    _, inv = np.unique(ids, return_inverse=True)
    inv = inv.reshape(-1)
    order = np.argsort(inv, kind="stable")  # flows grouped by coflow, by index within
    grouped = inv[order]
    pos = np.arange(n, dtype=np.int64)
    group_end = np.searchsorted(grouped, grouped, side="right").astype(np.int64)
    same_per_pos = group_end - pos - 1  # partners later in the same coflow
    diff_per_pos = n - group_end  # partners in later coflows
    n_same = int(same_per_pos.sum())
    n_diff = int(diff_per_pos.sum())

    if n_same + n_diff <= max_pairs:
        take_same, take_diff = n_same, n_diff
    else:
        half = max_pairs // 2
        if n_same <= half:
            take_same, take_diff = n_same, max_pairs - n_same
        elif n_diff <= max_pairs - half:
            take_same, take_diff = max_pairs - n_diff, n_diff
        else:
            take_same, take_diff = half, max_pairs - half

    rng = np.random.default_rng(seed)
    s_idx = _choose(rng, n_same, take_same)
    d_idx = _choose(rng, n_diff, take_diff)
    s_i, s_j = _decode(s_idx, same_per_pos, pos + 1, order) if s_idx.size else (empty, empty)
    d_i, d_j = _decode(d_idx, diff_per_pos, group_end, order) if d_idx.size else (empty, empty)
    return s_i, s_j, d_i, d_j


# ---------------------------------------------------------------------------
# the optimisation


def _check_u(u, name: str, ncol=None) -> np.ndarray:
    u = np.asarray(u, dtype=np.float64)
    if u.ndim != 2:
        raise CoflowkitError(
            f"{name} must be a 2-d array (pairs x attributes), got shape {u.shape}"
        )
    if ncol is not None and u.shape[1] != ncol:
        raise CoflowkitError(f"{name} has {u.shape[1]} attributes, u_same has {ncol}")
    if not np.all(np.isfinite(u)):
        raise CoflowkitError(f"{name} has non-finite entries")
    if np.any(u < 0):
        raise CoflowkitError(f"{name} has negative entries (u_k are squared differences or 0/1)")
    return u


def objective(a, u_same, u_diff) -> float:
    """Xing's unconstrained form with means:
    ``g(a) = mean_S a.u - log(mean_D sqrt(a.u))`` (``inf`` where the log is undefined)."""
    a = np.asarray(a, dtype=np.float64)
    s = np.asarray(u_same, dtype=np.float64).mean(axis=0)
    h = np.sqrt(np.maximum(np.asarray(u_diff, dtype=np.float64) @ a, 0.0))
    m = h.mean()
    return float(s @ a - math.log(m)) if m > 0 else math.inf


class _Problem:
    """g(a) = s.a - log(sum_j sqrt(U_j . a)) on the D rows with some difference
    (the rows that are zero everywhere only shift g by a constant)."""

    def __init__(self, s, U):
        self.s = s
        self.U = U
        self.U2 = U * U

    def value(self, a):
        h = np.sqrt(self.U @ a)
        if h.min() <= 0.0:  # a distinguishable D pair at distance 0: outside the domain
            return math.inf
        return float(self.s @ a - math.log(h.sum()))

    def derivatives(self, a, hessian=None):
        """g, its gradient and, if hessian is "full" or "diag", its Hessian or the
        Hessian's diagonal."""
        h = np.sqrt(self.U @ a)
        total = h.sum()
        w = 0.5 / h
        q = (self.U.T @ w) / total  # gradient of log(sum h)
        grad = self.s - q
        value = float(self.s @ a - math.log(total))
        if hessian is None:
            return value, grad, None
        c = 0.25 / (h * h * h) / total
        if hessian == "diag":
            return value, grad, self.U2.T @ c + q * q
        hess = (self.U * c[:, None]).T @ self.U + np.outer(q, q)
        return value, grad, hess


def _kkt_residual(a, grad) -> float:
    """Scale-free distance from the optimality conditions of min g over a >= 0:
    max_k |min(a_k / a_max, a_max * grad_k)| (a_max * grad_k is unit-free since
    s . a is)."""
    amax = float(a.max())
    if amax <= 0:
        return math.inf
    return float(np.max(np.abs(np.minimum(a / amax, amax * grad))))


def _solve_psd(h, g):
    """h^-1 g, damping h if it is (numerically) singular."""
    n = h.shape[0]
    scale = max(float(np.trace(h)) / n, 1e-300)
    mu = 0.0
    for _ in range(30):
        try:
            chol = np.linalg.cholesky(h + mu * scale * np.eye(n))
            return np.linalg.solve(chol.T, np.linalg.solve(chol, g))
        except np.linalg.LinAlgError:
            mu = 1e-12 if mu == 0.0 else mu * 100
    return g / np.maximum(np.diag(h), 1e-300)


def _rescale(prob, a):
    """The best point on the ray through a: g(t a) = t s.a - 1/2 log t + const is
    least at t = 1 / (2 s.a)."""
    sa = float(prob.s @ a)
    return a / (2.0 * sa) if sa > 0 else a


def _newton(prob, a, max_iter, tol):
    """Projected Newton (Bertsekas' two-metric form): a Newton step on the
    coordinates that are free, a scaled gradient step on those held at 0 by a
    positive gradient, and an Armijo search along the projection arc."""
    for _ in range(max_iter):
        value, grad, hess = prob.derivatives(a, hessian="full")
        if _kkt_residual(a, grad) <= tol:
            break
        amax = float(a.max())
        pg = a - np.maximum(a - amax * amax * grad, 0.0)
        eps = min(1e-3 * amax, float(np.abs(pg).max()))
        active = (a <= eps) & (grad > 0)
        free = ~active
        step = np.zeros_like(a)
        step[free] = _solve_psd(hess[np.ix_(free, free)], grad[free])
        step[active] = grad[active] / np.diag(hess)[active]
        alpha = 1.0
        while True:
            trial = np.maximum(a - alpha * step, 0.0)
            tv = prob.value(trial)
            if tv <= value + 1e-4 * float(grad @ (trial - a)):
                break
            alpha *= 0.5
            if alpha < 1e-30:
                return a
        if np.array_equal(trial, a):
            break
        a = _rescale(prob, trial)
    return a


def _projected_gradient(prob, a, max_iter, tol):
    """Gradient projection with diagonal scaling: the step is the gradient divided
    by the diagonal of the Hessian, projected on a >= 0, with an Armijo search along
    the projection arc."""
    for _ in range(max_iter):
        value, grad, diag = prob.derivatives(a, hessian="diag")
        if _kkt_residual(a, grad) <= tol:
            break
        step = grad / diag
        alpha = 1.0
        while True:
            trial = np.maximum(a - alpha * step, 0.0)
            tv = prob.value(trial)
            if tv <= value + 1e-4 * float(grad @ (trial - a)):
                break
            alpha *= 0.5
            if alpha < 1e-30:
                return a
        if np.array_equal(trial, a):
            break
        a = trial
    return a


def learn_diagonal(
    u_same, u_diff, method: str = "newton", max_iter: int | None = None, tol: float = 1e-10
) -> np.ndarray:
    """The diagonal weights ``a >= 0`` minimising the mean over S of ``a . u``
    subject to the mean over D of ``sqrt(a . u)`` being at least 1.

    ``u_same`` and ``u_diff`` are arrays (pairs x attributes) of :func:`pair_features`.
    ``method`` is "newton" (projected Newton-Raphson, default ``max_iter`` 200) or
    "gradient" (gradient projection with the step scaled by the Hessian's diagonal,
    default ``max_iter`` 50 000; a plain step crawls where some D pair is nearly
    at distance 0 and g curves sharply). Both stop when the scale-free optimality
    residual of g, ``max_k |min(a_k / max(a), max(a) * dg/da_k)|``, is at most
    ``tol``. See the module docstring for the normalisation and the edge cases.
    """
    if method not in METHODS:
        raise CoflowkitError(f"method={method!r} is not one of {', '.join(METHODS)}")
    u_same = _check_u(u_same, "u_same")
    u_diff = _check_u(u_diff, "u_diff", u_same.shape[1])
    if u_same.shape[0] == 0:
        raise CoflowkitError("no same-coflow pairs to learn from")
    if u_diff.shape[0] == 0:
        raise CoflowkitError("no different-coflow pairs to learn from")
    if max_iter is None:
        max_iter = 200 if method == "newton" else 50_000
    m = u_same.shape[1]
    weights = np.zeros(m)
    dbar = u_diff.mean(axis=0)
    keep = np.flatnonzero(dbar > 0)  # attributes that ever differ across coflows
    if keep.size == 0:
        raise CoflowkitError("the different-coflow pairs do not differ in any attribute")
    # unit mean over D per attribute
    s = u_same[:, keep].mean(axis=0) / dbar[keep]
    U = u_diff[:, keep] / dbar[keep]
    separating = s <= 1e-12
    if separating.any():
        # perfect separators: the objective is 0 on them alone (module docstring)
        keep = keep[separating]
        U = U[:, separating]
        s = np.ones(keep.size)
    n_diff = U.shape[0]
    U = U[U.any(axis=1)]
    prob = _Problem(s, U)
    a0 = np.full(keep.size, 0.5 / float(s.sum()))  # best point on the diagonal ray
    solver = _newton if method == "newton" else _projected_gradient
    a = solver(prob, a0, int(max_iter), float(tol))
    a[a < 1e-12 * a.max()] = 0.0
    mean_dist = float(np.sqrt(U @ a).sum()) / n_diff
    weights[keep] = a / (mean_dist * mean_dist) / dbar[keep]
    return weights


# ---------------------------------------------------------------------------
# from records to a distance file


def learn(
    records, coflow_ids, max_pairs: int = 200_000, seed: int = 1, method: str = "newton"
) -> dict:
    """Learn the CODA weights from flows with known coflows; a JSON-ready dict::

        {"format": "coflowkit-distance/1", "attributes": [...7 names...],
         "weights": [...7...], "normalized": weights / max(weights),
         "pairs": {"same": n, "different": n}, "method": ..., "seed": ...}

    ``records`` as in :func:`pair_features`, ``coflow_ids`` one per flow; pairs come
    from :func:`sample_pairs`.
    """
    n = _n_flows(records)
    ids = np.asarray(coflow_ids)
    if ids.ndim != 1 or ids.size != n:
        raise CoflowkitError(
            f"coflow_ids must give one coflow per flow ({n}), got shape {ids.shape}"
        )
    s_i, s_j, d_i, d_j = sample_pairs(ids, max_pairs=max_pairs, seed=seed)
    if d_i.size == 0:
        raise CoflowkitError(
            "all flows are in one coflow: there are no different-coflow pairs to learn from"
        )
    if s_i.size == 0:
        raise CoflowkitError(
            "every coflow has a single flow: there are no same-coflow pairs to learn from"
        )
    w = learn_diagonal(
        pair_features(records, s_i, s_j), pair_features(records, d_i, d_j), method=method
    )
    top = float(w.max())
    return {
        "format": FORMAT,
        "attributes": list(ATTRIBUTES),
        "weights": [float(x) for x in w],
        "normalized": [float(x / top) if top > 0 else 0.0 for x in w],
        "pairs": {"same": int(s_i.size), "different": int(d_i.size)},
        "method": method,
        "seed": int(seed),
    }


def _validate(d, where: str) -> dict:
    if not isinstance(d, dict):
        raise CoflowkitError(f"{where}: expected a JSON object, got {type(d).__name__}")
    if d.get("format") != FORMAT:
        raise CoflowkitError(f"{where}: format must be '{FORMAT}', got {d.get('format')!r}")
    if "attributes" in d and list(d["attributes"]) != list(ATTRIBUTES):
        raise CoflowkitError(
            f"{where}: attributes must be {list(ATTRIBUTES)}, got {d['attributes']!r}"
        )
    w = d.get("weights")
    if not isinstance(w, (list, tuple)) or len(w) != len(ATTRIBUTES):
        got = f"{len(w)} entries" if isinstance(w, (list, tuple)) else repr(w)
        raise CoflowkitError(
            f"{where}: weights must be a list of {len(ATTRIBUTES)} numbers, got {got}"
        )
    for name, x in zip(ATTRIBUTES, w, strict=True):
        if isinstance(x, bool) or not isinstance(x, (int, float)):
            raise CoflowkitError(f"{where}: weight of {name} is not a number: {x!r}")
        if not math.isfinite(x) or x < 0:
            raise CoflowkitError(f"{where}: weight of {name} must be finite and >= 0, got {x!r}")
    for key, low in (("eps", 0.0), ("tau", None)):
        if key in d:
            e = d[key]
            bad = isinstance(e, bool) or not isinstance(e, (int, float)) or not math.isfinite(e)
            if bad or (e <= 0 if low is not None else e < 0):
                op = ">" if low is not None else ">="
                raise CoflowkitError(f"{where}: {key} must be a number {op} 0, got {e!r}")
    out = dict(d)
    out["weights"] = [float(x) for x in w]
    for key in ("eps", "tau"):
        if key in d:
            out[key] = float(d[key])
    return out


def save(d: dict, path: PathLike) -> None:
    """Write a distance dict (as :func:`learn` returns) to ``path`` as JSON,
    after the checks :func:`load` makes."""
    d = _validate(d, os.fspath(path))
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(d, fh, indent=2)
        fh.write("\n")


def load(path: PathLike) -> dict:
    """Read a distance file written by :func:`save`; a :class:`CoflowkitError`
    naming the file and the problem if it is missing or malformed."""
    where = os.fspath(path)
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except FileNotFoundError:
        raise CoflowkitError(f"{where}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CoflowkitError(f"{where}: cannot be read ({exc})") from None
    try:
        d = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CoflowkitError(
            f"{where}: not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"
        ) from None
    return _validate(d, where)
