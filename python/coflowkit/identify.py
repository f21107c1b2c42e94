"""Coflow identification with no help from applications (CODA §3), offline.

A *flow table* lists what an observer sees of each flow: ``flow_id``, ``src``,
``dst``, ``start_s`` (first seen), optionally ``bytes`` (flows below
``min_bytes`` are left out, as in CODA), ``src_port`` / ``dst_port``, packet
statistics (``mean_pkt_bytes``, ``var_pkt_bytes``, ``mean_iat_s``,
``var_iat_s``) and ``coflow_id``, the ground truth, which is only ever used to
score the result. The same clustering code (``coflowkit-ident``, Rust) runs
online inside simulations as ``coda``'s ``labels=identify`` source.

Attributes (CODA §3.1), in the order of the paper's weight vectors:

* ``s_time``: first-seen time, seconds;
* ``m_size``, ``v_size``, ``m_int``, ``v_int``: packet statistics, each
  standardised over the flows identified (zero mean, unit variance);
* ``d_com``: 0 when both flows' hosts are in the same communities (recursive
  spectral bisection of the host graph weighted by flow counts), else 1;
* ``d_prt``: 0 when both flows go to the same destination host and port (a flow
  with no port is aggregated by destination host), else 1.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

import numpy as np

from coflowkit import _core
from coflowkit._core import CoflowkitError
from coflowkit.labels import Quality, quality
from coflowkit.metric_learning import ATTRIBUTES, PAPER_WEIGHTS

PACKET_COLUMNS = {
    "m_size": "mean_pkt_bytes",
    "v_size": "var_pkt_bytes",
    "m_int": "mean_iat_s",
    "v_int": "var_iat_s",
}
REQUIRED = ("flow_id", "src", "dst", "start_s")
NO_PORT = 0xFFFFFFFF

# Named weight vectors: the paper's As and Ah (metric_learning.PAPER_WEIGHTS),
# and every attribute weighted 1 (CODA Fig. 10d's "without DML").
NAMED_WEIGHTS = {**PAPER_WEIGHTS, "equal": [1.0] * 7}
DEFAULT_EPS = 0.5
DEFAULT_TAU = 0.05
DEFAULT_MIN_BYTES = 100e3
ALGORITHMS = ("rough", "dbscan")


@dataclass(frozen=True)
class Table:
    """A validated flow table, as numpy columns (absent optional columns: None)."""

    flow_id: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    start_s: np.ndarray
    bytes: np.ndarray | None
    src_port: np.ndarray | None
    dst_port: np.ndarray | None
    coflow_id: np.ndarray | None
    packet: dict

    def __len__(self) -> int:
        return len(self.flow_id)


def _frame(path: str):
    import pandas as pd

    if not os.path.exists(path):
        raise CoflowkitError(f"{path}: no such file")
    try:
        if path.endswith(".parquet"):
            return pd.read_parquet(path), "row", 1
        return pd.read_csv(path, dtype=str, keep_default_na=False, comment="#"), "line", 2
    except Exception as e:  # noqa: BLE001 - any reader failure is bad input
        raise CoflowkitError(f"{path}: not a readable flow table ({e})") from None


def _numbers(df, name, path, where, first, kind, optional):
    if name not in df.columns:
        if optional:
            return None
        raise CoflowkitError(
            f"{path}: {name}: missing required column (required: {', '.join(REQUIRED)})"
        )
    raw = df[name].tolist()
    out = np.empty(len(raw), dtype=np.float64)
    for i, v in enumerate(raw):
        text = v.strip() if isinstance(v, str) else v
        if text == "" or text is None or (isinstance(text, float) and math.isnan(text)):
            if not optional:
                raise CoflowkitError(f"{path}: {where} {i + first}: {name}: missing value")
            out[i] = math.nan
            continue
        try:
            x = float(text)
            if not math.isfinite(x):
                raise ValueError
            if kind == "uint" and (x < 0 or not float(x).is_integer()):
                raise ValueError
            if kind == "nonneg" and x < 0:
                raise ValueError
        except ValueError:
            what = {"uint": "an integer >= 0", "nonneg": "a number >= 0"}.get(kind, "a number")
            raise CoflowkitError(
                f"{path}: {where} {i + first}: {name}: {v!r} is not {what}"
            ) from None
        out[i] = x
    return out


def read_table(path: str) -> Table:
    """Reads a flow table (CSV or Parquet) for identification; one clear error
    naming the file, the line (CSV) or row (Parquet) and the column otherwise."""
    df, where, first = _frame(path)
    if len(df) == 0:
        raise CoflowkitError(f"{path}: no flows")
    cols = {
        name: _numbers(df, name, path, where, first, kind, name not in REQUIRED)
        for name, kind in [
            ("flow_id", "uint"),
            ("src", "uint"),
            ("dst", "uint"),
            ("start_s", "number"),
            ("bytes", "nonneg"),
            ("src_port", "uint"),
            ("dst_port", "uint"),
            ("coflow_id", "uint"),
        ]
    }
    for name in ("bytes", "coflow_id"):
        c = cols[name]
        if c is not None and np.isnan(c).any():
            i = int(np.flatnonzero(np.isnan(c))[0])
            raise CoflowkitError(f"{path}: {where} {i + first}: {name}: missing value")
    ids = cols["flow_id"].astype(np.int64)
    uniq, counts = np.unique(ids, return_counts=True)
    if (counts > 1).any():
        raise CoflowkitError(f"{path}: flow_id {int(uniq[counts > 1][0])} appears more than once")
    packet = {}
    for attr, col in PACKET_COLUMNS.items():
        c = _numbers(df, col, path, where, first, "number", True)
        if c is not None:
            if np.isnan(c).any():
                i = int(np.flatnonzero(np.isnan(c))[0])
                raise CoflowkitError(f"{path}: {where} {i + first}: {col}: missing value")
            packet[attr] = c

    def ports(c):
        if c is None:
            return None
        return np.where(np.isnan(c), NO_PORT, c).astype(np.int64)

    return Table(
        flow_id=ids,
        src=cols["src"].astype(np.int64),
        dst=cols["dst"].astype(np.int64),
        start_s=cols["start_s"],
        bytes=cols["bytes"],
        src_port=ports(cols["src_port"]),
        dst_port=ports(cols["dst_port"]),
        coflow_id=None if cols["coflow_id"] is None else cols["coflow_id"].astype(np.int64),
        packet=packet,
    )


def table_from_workload(workload, packet_stats: bool = False, seed: int = 1) -> Table:
    """The flow table an observer would see of a workload (after its transforms).

    ``packet_stats=True`` adds packet statistics drawn from one seeded
    distribution for every flow, whatever its coflow: attributes that say nothing
    about coflows, as CODA found packet statistics to be (§3.2)."""
    c = workload.flow_columns()
    n = len(c["flow_id"])
    packet = {}
    if packet_stats:
        g = np.random.default_rng(seed)
        packet = {
            "m_size": g.normal(1200.0, 150.0, n),
            "v_size": g.gamma(2.0, 2e4, n),
            "m_int": g.exponential(1e-4, n),
            "v_int": g.gamma(2.0, 5e-9, n),
        }

    def ports(name):
        p = np.asarray(c[name], dtype=object)
        if all(x is None for x in p):
            return None
        return np.array([NO_PORT if x is None else int(x) for x in p], dtype=np.int64)

    return Table(
        flow_id=np.arange(n, dtype=np.int64),
        src=np.asarray(c["src"], dtype=np.int64),
        dst=np.asarray(c["dst"], dtype=np.int64),
        start_s=np.asarray(c["start_s"], dtype=np.float64),
        bytes=np.asarray(c["bytes"], dtype=np.float64),
        src_port=ports("src_port"),
        dst_port=ports("dst_port"),
        coflow_id=np.asarray(c["coflow_id"], dtype=np.int64),
        packet=packet,
    )


def host_communities(t: Table, max_conductance: float = 0.1) -> np.ndarray:
    """Community of every host, from the host graph weighted by flow counts."""
    hosts = int(max(t.src.max(), t.dst.max())) + 1
    return np.asarray(
        _core.communities(
            hosts,
            t.src.astype(np.uint32).tolist(),
            t.dst.astype(np.uint32).tolist(),
            [1.0] * len(t),
            max_conductance,
        ),
        dtype=np.int64,
    )


def records(t: Table, keep: np.ndarray | None = None, max_conductance: float = 0.1) -> dict:
    """The attribute records of the flows ``keep`` (default all): ``time``, the
    packet statistics present (standardised), ``com`` and ``agg`` keys."""
    keep = np.arange(len(t)) if keep is None else np.asarray(keep)
    com = host_communities(t, max_conductance)
    port = t.dst_port if t.dst_port is not None else np.full(len(t), NO_PORT, dtype=np.int64)
    r = {
        "time": t.start_s[keep].astype(np.float64),
        "com": (com[t.src[keep]] << 32) | com[t.dst[keep]],
        "agg": (t.dst[keep] << 32) | port[keep],
    }
    for attr, col in t.packet.items():
        x = col[keep].astype(np.float64)
        sd = x.std()
        r[attr] = (x - x.mean()) / sd if sd > 0 else np.zeros_like(x)
    return r


def weights_vector(weights) -> tuple:
    """The 7 weights (ATTRIBUTES order) of a name in NAMED_WEIGHTS or a list."""
    if weights is None:
        weights = "spark"
    if isinstance(weights, str):
        if weights not in NAMED_WEIGHTS:
            raise CoflowkitError(
                f"weights={weights} is not one of {', '.join(NAMED_WEIGHTS)} or a list of 7"
            )
        weights = NAMED_WEIGHTS[weights]
    w = [float(x) for x in weights]
    if len(w) != 7 or not all(math.isfinite(x) and x >= 0 for x in w):
        raise CoflowkitError(f"weights must be 7 finite numbers >= 0 ({', '.join(ATTRIBUTES)})")
    return tuple(w)


def cluster_records(
    r: dict,
    weights=None,
    eps: float = DEFAULT_EPS,
    tau: float = DEFAULT_TAU,
    algorithm: str = "rough",
    min_pts: int = 1,
) -> np.ndarray:
    """Cluster numbers of the records ``r`` (see :func:`records`)."""
    if algorithm not in ALGORITHMS:
        raise CoflowkitError(f"algorithm={algorithm} is not one of {', '.join(ALGORITHMS)}")
    cols, w_extra, extra = _columns(r, weights)
    return np.asarray(
        _core.cluster(
            *cols,
            float(eps),
            extra=extra,
            w_extra=w_extra,
            tau=float(tau),
            min_pts=int(min_pts),
            algorithm=algorithm,
        ),
        dtype=np.int64,
    )


def _columns(r: dict, weights) -> tuple[list, list, list]:
    """The binding's arguments for records ``r``: ``[time, com, agg, a_t, a_com,
    a_prt]``, and the packet-statistic columns present with a positive weight
    (their weights, their values)."""
    w = weights_vector(weights)
    extra, w_extra = [], []
    for k, attr in enumerate(ATTRIBUTES[1:5], start=1):
        if attr in r and w[k] > 0:
            extra.append(np.asarray(r[attr], dtype=np.float64).tolist())
            w_extra.append(w[k])
    cols = [
        np.asarray(r["time"], dtype=np.float64).tolist(),
        np.asarray(r["com"], dtype=np.uint64).tolist(),
        np.asarray(r["agg"], dtype=np.uint64).tolist(),
        w[0],
        w[5],
        w[6],
    ]
    return cols, w_extra, extra


def rough_identifier(r: dict, weights, eps: float = DEFAULT_EPS, tau: float = DEFAULT_TAU):
    """An incremental Rough-DBSCAN structure (:class:`_core.RoughIdentifier`) over
    the records ``r``: flows enter (``insert``) and leave (``remove``) by index,
    ``cluster()`` re-clusters, ``labels`` and ``near`` read it."""
    cols, w_extra, extra = _columns(r, weights)
    return _core.RoughIdentifier(*cols, float(eps), float(tau), extra=extra, w_extra=w_extra)


@dataclass(frozen=True)
class Identified:
    """Labels per flow of a table (-1: left out, below ``min_bytes``) and, when
    the table has ``coflow_id``, the quality over the flows identified."""

    labels: np.ndarray
    quality: Quality | None
    identified: int


def identify(
    t: Table,
    weights=None,
    eps: float = DEFAULT_EPS,
    tau: float = DEFAULT_TAU,
    algorithm: str = "rough",
    min_bytes: float = DEFAULT_MIN_BYTES,
    max_conductance: float = 0.1,
    min_pts: int = 1,
) -> Identified:
    """Identifies the coflows of a flow table."""
    if not (isinstance(eps, (int, float)) and math.isfinite(eps) and eps > 0):
        raise CoflowkitError(f"eps={eps} is not a number > 0")
    if not (isinstance(tau, (int, float)) and math.isfinite(tau) and tau >= 0):
        raise CoflowkitError(f"tau={tau} is not a number >= 0")
    keep = np.arange(len(t)) if t.bytes is None else np.flatnonzero(t.bytes >= min_bytes)
    labels = np.full(len(t), -1, dtype=np.int64)
    q = None
    if len(keep):
        r = records(t, keep, max_conductance)
        labels[keep] = cluster_records(r, weights, eps, tau, algorithm, min_pts)
        if t.coflow_id is not None:
            q = quality(t.coflow_id[keep], labels[keep])
    return Identified(labels=labels, quality=q, identified=len(keep))


def choose_eps(
    r: dict, truth, weights, steps: int = 25, tau_fraction: float = 0.1, algorithm="rough"
) -> tuple[float, float, Quality]:
    """The radius ε (and τ = ``tau_fraction``·ε) that identifies the labelled
    records ``r`` best (highest accuracy; the smallest ε on ties), searched on a
    geometric grid spanning the distances between time-adjacent flows. Learned
    weights have their own scale, so ε must be found in it."""
    w = weights_vector(weights)
    truth = np.asarray(truth)
    t = np.sort(np.asarray(r["time"], dtype=np.float64))
    gaps = np.diff(t)
    gaps = gaps[gaps > 0]
    if w[0] <= 0 or gaps.size == 0:
        grid = np.geomspace(1e-3, 1e3, steps)
    else:
        lo = math.sqrt(w[0]) * float(np.quantile(gaps, 0.5))
        hi = math.sqrt(w[0] * max(float(t[-1] - t[0]), 1e-9) ** 2 + sum(w[1:]))
        grid = np.geomspace(max(lo, hi * 1e-6), hi, steps)
    best = None
    for eps in grid:
        lab = cluster_records(r, w, float(eps), float(eps) * tau_fraction, algorithm)
        q = quality(truth, lab)
        if best is None or q.accuracy > best[2].accuracy + 1e-12:
            best = (float(eps), float(eps) * tau_fraction, q)
    return best
