"""Table 1 of `coflowkit reproduce coda-identify`: time per identification round
and accuracy of exact DBSCAN, Rough-DBSCAN from scratch and incremental
Rough-DBSCAN (and scikit-learn's DBSCAN as an outside reference) with about 30
concurrent coflows and 10^5 active flows (see :mod:`coda_identify`)."""

from __future__ import annotations

import gc
import math
import time
from collections import Counter
from dataclasses import dataclass

import numpy as np
import pandas as pd

from coflowkit import _core, identify, labels
from coflowkit import transforms as tf
from coflowkit.experiments.coda_identify import EPS, INTERVAL_S, PAPER_T1, TAU, Config
from coflowkit.experiments.common import ratio_note

# ---------------------------------------------------------------------------
# Table 1: identification speed


T1_ROWS = (
    # (name, column, paper row, rounds)
    ("DBSCAN, pair scan (exact, no 1-D shortcut)", "scan", "DBSCAN", "heavy"),
    ("DBSCAN, scikit-learn 1-D embedding (exact)", "sklearn", "DBSCAN", "heavy"),
    ("DBSCAN, coflowkit (exact, sorted chains)", "dbscan", "DBSCAN", "all"),
    ("R-DBSCAN from scratch", "rough", "R-DBSCAN", "all"),
    ("CODA: incremental R-DBSCAN", "incremental", "CODA", "all"),
)


@dataclass
class SpeedSetup:
    """The flows of the Table 1 benchmark: who arrives when and leaves when."""

    records: dict
    truth: np.ndarray
    start: np.ndarray
    end: np.ndarray
    coflows: int
    lifetime_s: float
    description: str


def speed_setup(base, cfg: Config, seed: int) -> SpeedSetup | None:
    """Coflows of ``base`` with ``cfg.t1_widths`` flows, in arrival order, the k-th
    arriving at k · spacing; each flow starts after its coflow's arrival as the
    Hadoop-like ``starts`` transform draws it (exact times, no tick) and stays
    active for ``lifetime = concurrent · spacing - guard`` seconds."""
    w = tf.apply(base, f"starts:model=hadoop,seed={seed}")
    c = w.flow_columns()
    ids = np.asarray(c["coflow_id"], dtype=np.int64)
    width = Counter(ids.tolist())
    lo, hi = cfg.t1_widths
    chosen = [k for k in dict.fromkeys(ids.tolist()) if lo <= width[k] <= hi]
    if len(chosen) < 2:
        return None
    rank = {k: i for i, k in enumerate(chosen)}
    sel = np.flatnonzero(np.isin(ids, chosen))
    offset = (np.asarray(c["start_s"]) - np.asarray(c["arrival_s"]))[sel]
    start = np.array([rank[k] for k in ids[sel].tolist()]) * cfg.t1_spacing_s + offset
    life = cfg.t1_concurrent * cfg.t1_spacing_s - cfg.t1_guard_s
    t = identify.Table(
        flow_id=np.arange(len(sel), dtype=np.int64),
        src=np.asarray(c["src"], dtype=np.int64)[sel],
        dst=np.asarray(c["dst"], dtype=np.int64)[sel],
        start_s=start,
        bytes=None,
        src_port=None,
        dst_port=None,
        coflow_id=ids[sel],
        packet={},
    )
    widths = [width[k] for k in chosen]
    desc = (
        f"{len(chosen)} coflows of {lo}-{hi} flows ({len(sel):,} flows, {np.mean(widths):.0f} "
        f"per coflow on average, at most {max(widths):,})"
    )
    return SpeedSetup(identify.records(t), ids[sel], start, start + life, len(chosen), life, desc)


def _embedding(r: dict, act: np.ndarray, w) -> np.ndarray | None:
    """Points whose Euclidean distances are CODA's distances of the flows ``act``:
    sqrt(a_t)·time, and a one-hot column per community key scaled by sqrt(a_com/2)
    (two different keys then add a_com to the squared distance). None when a port
    term would be needed (one column per destination and port)."""
    cols = [math.sqrt(w[0]) * np.asarray(r["time"])[act]]
    com = np.asarray(r["com"])[act]
    agg = np.asarray(r["agg"])[act]
    if w[6] > 0 and len(np.unique(agg)) > 1:
        return None
    if w[5] > 0:
        keys, inv = np.unique(com, return_inverse=True)
        if len(keys) > 1:
            onehot = np.zeros((len(act), len(keys)))
            onehot[np.arange(len(act)), inv.reshape(-1)] = math.sqrt(w[5] / 2)
            cols += list(onehot.T)
    return np.column_stack(cols)


def _pairs_1d(x: np.ndarray, eps: float) -> int:
    """Neighbour pairs (ordered, self included) within ``eps`` in 1-D: an upper
    bound of scikit-learn's neighbourhood sizes (other columns only add distance)."""
    s = np.sort(x)
    return int((np.searchsorted(s, s + eps, "right") - np.searchsorted(s, s - eps, "left")).sum())


@dataclass(frozen=True)
class Schedule:
    """The rounds of the Table 1 benchmark: every round's time, and the indices of
    the rounds timed and, among them, of the heavy rounds (the slow exact DBSCANs)."""

    rounds: np.ndarray
    timed: set
    heavy: set


def schedule(setup: SpeedSetup, cfg: Config) -> Schedule:
    """A round every Δ until every flow has left; ``cfg.t1_max_rounds`` of them timed,
    spread evenly over the steady state (every round with ``cfg.t1_concurrent``
    coflows, or as many as the setup has, active; else the rounds with the most),
    and ``cfg.t1_heavy_rounds`` heavy ones spread evenly among the timed, ends left
    out."""
    rounds = np.arange(1, int(math.ceil(setup.end.max() / INTERVAL_S)) + 2) * INTERVAL_S
    # Coflows with at least one active flow at each round.
    order = np.argsort(setup.truth, kind="stable")
    _, first = np.unique(setup.truth[order], return_index=True)
    c_start = np.minimum.reduceat(setup.start[order], first)
    c_end = np.maximum.reduceat(setup.end[order], first)
    live = np.searchsorted(np.sort(c_start), rounds, "right") - np.searchsorted(
        np.sort(c_end), rounds, "right"
    )
    target = min(cfg.t1_concurrent, setup.coflows)
    steady = np.flatnonzero(live >= target)
    if len(steady) == 0:
        steady = np.flatnonzero(live == live.max())
    k = min(cfg.t1_max_rounds, len(steady))
    timed = set(steady[np.linspace(0, len(steady) - 1, k).round().astype(int)].tolist())
    timed_list = sorted(timed)
    hk = min(cfg.t1_heavy_rounds, len(timed_list))
    heavy = set(
        timed_list[i] for i in np.linspace(0, len(timed_list) - 1, hk + 2)[1:-1].round().astype(int)
    )
    return Schedule(rounds, timed, heavy)


class Columns:
    """The flows' records as the lists and weights `_core.cluster` takes."""

    def __init__(self, setup: SpeedSetup, weights) -> None:
        self.w = identify.weights_vector(weights)
        r = setup.records
        self.records = r
        self.time = np.asarray(r["time"], dtype=np.float64)
        self.com = np.asarray(r["com"], dtype=np.uint64)
        self.agg = np.asarray(r["agg"], dtype=np.uint64)

    def lists(self, act: np.ndarray) -> tuple[list, list, list]:
        return self.time[act].tolist(), self.com[act].tolist(), self.agg[act].tolist()


def timed_round(
    cols: Columns, x, truth: np.ndarray, act: np.ndarray, now: float, counts: dict
) -> tuple[dict, tuple]:
    """A timed round, after the incremental identifier's update: its labels read
    out, exact DBSCAN and Rough-DBSCAN from scratch on the active flows ``act``,
    each timed; the row (``counts``: new and left flows, incremental ms) and, for
    :func:`heavy_round`, the column lists and exact DBSCAN's labels."""
    w = cols.w
    act_l = act.tolist()
    t0 = time.perf_counter()
    lab_inc = np.asarray(x.labels(act_l))
    t_read = time.perf_counter() - t0
    tl, cl, al = cols.lists(act)
    t0 = time.perf_counter()
    lab_db = _core.cluster(tl, cl, al, w[0], w[5], w[6], EPS, algorithm="dbscan")
    t_db = time.perf_counter() - t0
    t0 = time.perf_counter()
    lab_r = _core.cluster(tl, cl, al, w[0], w[5], w[6], EPS, tau=TAU, algorithm="rough")
    t_r = time.perf_counter() - t0
    row = {
        "round_s": float(now),
        "active_flows": len(act),
        "active_coflows": len(np.unique(truth)),
        "new_flows": counts["new"],
        "left_flows": counts["left"],
        "leaders": x.leaders,
        "incremental_ms": counts["incremental_ms"],
        "readout_ms": 1e3 * t_read,
        "dbscan_ms": 1e3 * t_db,
        "rough_ms": 1e3 * t_r,
        "scan_ms": float("nan"),
        "sklearn_ms": float("nan"),
        "sklearn_pairs": float("nan"),
        "sklearn_same": "",
    }
    for name, lab in (("incremental", lab_inc), ("dbscan", lab_db), ("rough", lab_r)):
        q = labels.quality(truth, np.asarray(lab))
        row[f"{name}_precision"], row[f"{name}_recall"] = q.precision, q.recall
    return row, (tl, cl, al, lab_db)


def heavy_round(
    row: dict, cols: Columns, act: np.ndarray, lists: tuple, cfg: Config, DBSCAN
) -> None:
    """A heavy round: the slow exact DBSCANs on the active flows ``act`` (the Rust
    one with its one-dimensional shortcut turned off, and scikit-learn's, when
    ``DBSCAN`` is given and the round has few enough neighbour pairs), their times
    and whether they agree with exact DBSCAN, into ``row``."""
    w = cols.w
    tl, cl, al, lab_db = lists
    zeros = [0.0] * len(act)
    t0 = time.perf_counter()
    lab_scan = _core.cluster(tl, cl, al, w[0], w[5], w[6], EPS, extra=[zeros], w_extra=[1.0])
    row["scan_ms"] = 1e3 * (time.perf_counter() - t0)
    row["scan_same"] = "yes" if lab_scan == lab_db else "no"
    pts = _embedding(cols.records, act, w)
    if DBSCAN is not None and pts is not None:
        pairs = _pairs_1d(pts[:, 0], EPS)
        row["sklearn_pairs"] = float(pairs)
        if pairs <= cfg.t1_sklearn_max_pairs:
            t0 = time.perf_counter()
            sk = DBSCAN(eps=EPS, min_samples=1, algorithm="kd_tree").fit(pts).labels_
            row["sklearn_ms"] = 1e3 * (time.perf_counter() - t0)
            same = np.array_equal(_core_canonical(sk.tolist()), np.asarray(lab_db, dtype=np.int64))
            row["sklearn_same"] = "yes" if same else "no"
            del sk
        gc.collect()


def _sklearn_dbscan():
    try:
        from sklearn.cluster import DBSCAN  # reference only; optional
    except ImportError:  # pragma: no cover - the test extras install it
        return None
    return DBSCAN


def speed_benchmark(setup: SpeedSetup, cfg: Config, weights="hadoop") -> pd.DataFrame:
    """Rounds every Δ = 100 ms: flows that started since the last round join,
    flows past their lifetime leave. Incremental Rough-DBSCAN
    (:class:`_core.RoughIdentifier`) follows every round (insert, remove, cluster);
    on the timed rounds exact DBSCAN and Rough-DBSCAN cluster all active flows from
    scratch, and on a few of them the slow exact DBSCANs too (the Rust one with its
    one-dimensional shortcut turned off, and scikit-learn's). One row per timed
    round: counts, times (ms) and each algorithm's precision and recall."""
    cols = Columns(setup, weights)
    x = identify.rough_identifier(setup.records, weights, EPS, TAU)
    by_start = np.argsort(setup.start, kind="stable")
    by_end = np.argsort(setup.end, kind="stable")
    s_sorted, e_sorted = setup.start[by_start], setup.end[by_end]
    plan = schedule(setup, cfg)
    DBSCAN = _sklearn_dbscan()
    active = np.zeros(len(setup.truth), dtype=bool)
    ia = ie = 0
    rows = []
    was_enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        for i, now in enumerate(plan.rounds):
            ja = int(np.searchsorted(s_sorted, now, "right"))
            je = int(np.searchsorted(e_sorted, now, "right"))
            new, left = by_start[ia:ja], by_end[ie:je]
            ia, ie = ja, je
            active[new] = True
            active[left] = False
            new_l, left_l = new.tolist(), left.tolist()
            t0 = time.perf_counter()
            x.insert(new_l)
            x.remove(left_l)
            x.cluster()
            t_inc = time.perf_counter() - t0
            if i not in plan.timed:
                continue
            act = np.flatnonzero(active)
            counts = {"new": len(new_l), "left": len(left_l), "incremental_ms": 1e3 * t_inc}
            row, lists = timed_round(cols, x, setup.truth[act], act, now, counts)
            if i in plan.heavy:
                heavy_round(row, cols, act, lists, cfg, DBSCAN)
            rows.append(row)
    finally:
        if was_enabled:
            gc.enable()
    return pd.DataFrame(rows)


def _core_canonical(raw: list) -> np.ndarray:
    """Cluster numbers renumbered in order of first appearance (as `_core.cluster`
    numbers them)."""
    seen: dict = {}
    return np.asarray([seen.setdefault(v, len(seen)) for v in raw], dtype=np.int64)


def table1_summary(speed: pd.DataFrame) -> pd.DataFrame:
    heavy = speed[speed["scan_ms"].notna()]
    inc_all = speed["incremental_ms"].mean()
    rows = []
    for name, col, paper, which in T1_ROWS:
        d = heavy if which == "heavy" else speed
        x = d[f"{col}_ms"].dropna()
        if len(x) == 0:
            continue
        acc_col = col if col in ("incremental", "dbscan", "rough") else "dbscan"
        acc = float(((d[f"{acc_col}_precision"] + d[f"{acc_col}_recall"]) / 2).mean())
        inc = d.loc[x.index, "incremental_ms"].mean() if which == "heavy" else inc_all
        pt, pa = PAPER_T1[paper]
        rows.append(
            {
                "algorithm": name,
                "rounds": len(x),
                "mean ms": float(x.mean()),
                "median ms": float(x.median()),
                "p95 ms": float(np.percentile(x, 95)),
                "accuracy": acc,
                "CODA speedup": float(x.mean() / inc),
                "paper ms": pt,
                "paper accuracy": pa,
                "paper CODA speedup": pt / PAPER_T1["CODA"][0],
                "time ratio": _ratio(float(x.mean()), pt),
                "accuracy ratio": ratio_note(acc, pa),
            }
        )
    return pd.DataFrame(rows)


def _ratio(ours: float, paper: float) -> str:
    """``ratio_note`` with three significant digits for ratios far below 1."""
    q = ours / paper
    if q >= 0.1:
        return ratio_note(ours, paper)
    return f"{q:.3g} **>25%**"


def run_speed(base, cfg: Config, seed: int):
    """Table 1's benchmark on ``base``: ``(setup, table)``, both None when the
    workload cannot hold the setup (see :func:`speed_setup`)."""
    setup = speed_setup(base, cfg, seed)
    return setup, (None if setup is None else speed_benchmark(setup, cfg))
