"""Per-coflow metrics, run summaries and comparisons between runs.

Definitions (used by every paper coflowkit reproduces):

* CCT = finish of the coflow's last flow - coflow arrival.
* isolated CCT = max over links of the coflow's bytes on the link / capacity: the time
  its bottleneck needs alone in the fabric; slowdown = CCT / isolated CCT.
* bins: short if length (largest flow) < 5 MiB, narrow if width (flows) <= 50:
  SN, LN, SW, LW.
* percentiles interpolate linearly (numpy's default).
* normalized CCT of a policy against a baseline: per coflow CCT_policy / CCT_baseline;
  reported as the mean of ratios and as the ratio of means.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from coflowkit import _core

MIB = _core.MIB
SHORT_LENGTH_BYTES = 5 * MIB
NARROW_WIDTH = 50
BINS = ["SN", "LN", "SW", "LW"]
COLUMNS = [
    "coflow_id",
    "arrival_s",
    "finish_s",
    "cct_s",
    "isolated_s",
    "slowdown",
    "width",
    "length_bytes",
    "size_bytes",
    "bin",
]


def bin_of(length_bytes: np.ndarray, width: np.ndarray) -> np.ndarray:
    short = np.asarray(length_bytes) < SHORT_LENGTH_BYTES
    narrow = np.asarray(width) <= NARROW_WIDTH
    return np.where(short, np.where(narrow, "SN", "SW"), np.where(narrow, "LN", "LW"))


def coflow_table(workload, finish_s) -> pd.DataFrame:
    """One row per coflow, in workload order (arrival, then id)."""
    c = workload.coflow_columns()
    finish = np.asarray(finish_s, dtype=float)
    arrival = np.asarray(c["arrival_s"], dtype=float)
    iso = np.asarray(c["isolated_s"], dtype=float)
    cct = finish - arrival
    df = pd.DataFrame(
        {
            "coflow_id": np.asarray(c["coflow_id"], dtype=np.uint64),
            "arrival_s": arrival,
            "finish_s": finish,
            "cct_s": cct,
            "isolated_s": iso,
            "slowdown": cct / iso,
            "width": np.asarray(c["width"], dtype=np.int64),
            "length_bytes": np.asarray(c["length_bytes"], dtype=float),
            "size_bytes": np.asarray(c["size_bytes"], dtype=float),
        }
    )
    df["bin"] = bin_of(df["length_bytes"].to_numpy(), df["width"].to_numpy())
    return df[COLUMNS]


def coflowsim_table(workload, admitted_units, finish_units, duration_units) -> pd.DataFrame:
    """:func:`coflow_table` for a run under CoflowSim's model: ``admitted_s`` is
    CoflowSim's admission, ``finish_s`` its finish and ``cct_s`` its job duration
    (from admission), each in its units (1/1024 s) divided by 1000, as the papers
    printed them; ``arrival_s`` stays the trace's arrival. ``slowdown`` is unit-free:
    the duration in real seconds (units / 1024) over the exact isolated CCT."""
    admitted = np.asarray(admitted_units, dtype=float) / 1000.0
    finish = np.asarray(finish_units, dtype=float) / 1000.0
    cct = np.asarray(duration_units, dtype=float) / 1000.0
    df = coflow_table(workload, finish)
    df["cct_s"] = cct
    df["slowdown"] = np.asarray(duration_units, dtype=float) / 1024.0 / df["isolated_s"].to_numpy()
    df.insert(2, "admitted_s", admitted)
    return df


def percentile(x: np.ndarray, q: float) -> float:
    """Linear-interpolation percentile that treats +inf as larger than any number
    (numpy's interpolation gives NaN for 0 · inf)."""
    x = np.asarray(x, dtype=float)
    big = np.finfo(float).max
    v = float(np.percentile(np.where(np.isinf(x), big, x), q))
    return float("inf") if v >= big else v


def _stats(x: np.ndarray) -> dict[str, float]:
    if len(x) == 0:
        return {
            "mean": float("nan"),
            "median": float("nan"),
            "p95": float("nan"),
            "p99": float("nan"),
            "max": float("nan"),
        }
    return {
        "mean": float(np.mean(x)),
        "median": float(np.percentile(x, 50)),
        "p95": float(np.percentile(x, 95)),
        "p99": float(np.percentile(x, 99)),
        "max": float(np.max(x)),
    }


#: The instantaneous metrics recorded by the engine (docs/metrics.md).
SERIES_METRICS = ["min_progress", "mean_progress", "max_progress", "disparity", "utilization"]


def series_table(raw: dict[str, Any], end_s: float) -> pd.DataFrame:
    """The engine's samples as a DataFrame, with ``duration_s``: the time until the
    next sample (the last one lasts until ``end_s``, the end of the run)."""
    df = pd.DataFrame(
        {
            "time_s": np.asarray(raw["time_s"], dtype=float),
            "active_coflows": np.asarray(raw["active_coflows"], dtype=np.int64),
            **{k: np.asarray(raw[k], dtype=float) for k in SERIES_METRICS},
        }
    )
    t = df["time_s"].to_numpy()
    dur = np.empty_like(t)
    if len(t):
        dur[:-1] = np.diff(t)
        dur[-1] = max(0.0, end_s - t[-1])
    df.insert(1, "duration_s", dur)
    return df


def progress_table(raw: dict[str, Any], series: pd.DataFrame) -> pd.DataFrame:
    """Per-coflow progress rows: ``sample, time_s, coflow_id, progress``."""
    sample = np.asarray(raw["sample"], dtype=np.int64)
    return pd.DataFrame(
        {
            "sample": sample,
            "time_s": series["time_s"].to_numpy()[sample] if len(sample) else np.zeros(0),
            "coflow_id": np.asarray(raw["coflow_id"], dtype=np.uint64),
            "progress": np.asarray(raw["progress"], dtype=float),
        }
    )


def summarize_series(series: pd.DataFrame) -> dict[str, Any]:
    """Per metric, over the samples with at least one active coflow: ``mean`` (of
    samples), ``time_weighted_mean`` (weighted by ``duration_s``), ``min``, ``p5``,
    ``p50``, ``p95``, ``p99``, ``max``. Disparity is infinite while some coflow is
    starved (progress 0); its means are over the finite samples, and
    ``fraction_infinite`` (of samples) says how often it was infinite."""
    busy = series[series["active_coflows"] > 0]
    out: dict[str, Any] = {"samples": int(len(series)), "busy_samples": int(len(busy))}
    w = busy["duration_s"].to_numpy()
    for k in SERIES_METRICS:
        x = busy[k].to_numpy()
        finite = np.isfinite(x)
        stats: dict[str, float] = {}
        if len(x) == 0:
            stats = {
                s: float("nan")
                for s in ["mean", "time_weighted_mean", "min", "p5", "p50", "p95", "p99", "max"]
            }
        else:
            xf, wf = x[finite], w[finite]
            stats["mean"] = float(xf.mean()) if len(xf) else float("nan")
            stats["time_weighted_mean"] = (
                float(np.average(xf, weights=wf)) if wf.sum() > 0 else stats["mean"]
            )
            stats["min"] = float(x.min())
            for q in (5, 50, 95, 99):
                stats[f"p{q}"] = percentile(x, q)
            stats["max"] = float(x.max())
        if k == "disparity":
            stats["fraction_infinite"] = float((~finite).mean()) if len(x) else float("nan")
        out[k] = stats
    return out


def summarize(table: pd.DataFrame) -> dict[str, Any]:
    """Statistics of CCT and slowdown, overall and per bin."""
    out: dict[str, Any] = {}
    for name, part in [("all", table)] + [(b, table[table["bin"] == b]) for b in BINS]:
        out[name] = {
            "coflows": int(len(part)),
            "cct_s": _stats(part["cct_s"].to_numpy()),
            "slowdown": _stats(part["slowdown"].to_numpy()),
        }
    return out


def normalized(table: pd.DataFrame, baseline: pd.DataFrame) -> dict[str, Any]:
    """Per-bin normalized CCT (policy / baseline) and slowdown statistics."""
    if not np.array_equal(table["coflow_id"].to_numpy(), baseline["coflow_id"].to_numpy()):
        raise ValueError("the two runs are not over the same coflows")
    out: dict[str, Any] = {}
    for name in ["all"] + BINS:
        mask = np.ones(len(table), bool) if name == "all" else (table["bin"] == name).to_numpy()
        a = table["cct_s"].to_numpy()[mask]
        b = baseline["cct_s"].to_numpy()[mask]
        if len(a) == 0:
            out[name] = {"coflows": 0}
            continue
        ratios = a / b
        out[name] = {
            "coflows": int(mask.sum()),
            "mean_of_ratios": float(np.mean(ratios)),
            "ratio_of_means": float(np.mean(a) / np.mean(b)),
            "median_ratio": float(np.percentile(ratios, 50)),
            "p95_ratio": float(np.percentile(ratios, 95)),
            "mean_slowdown": float(np.mean(table["slowdown"].to_numpy()[mask])),
            "p95_slowdown": float(np.percentile(table["slowdown"].to_numpy()[mask], 95)),
        }
    return out


def concurrency(c: pd.DataFrame) -> float:
    """Average number of coflows in the network (Little's law): total CCT over the
    time from the first arrival to the last."""
    span = float(c["arrival_s"].max() - c["arrival_s"].min())
    return float(c["cct_s"].sum() / span) if span > 0 else float("nan")


def lower_bounds(workload) -> pd.Series:
    """Per coflow (indexed by id), a CCT no schedule can beat: the larger of its
    isolated CCT (its busiest link alone) and the start offset of its last flow."""
    f = workload.flow_columns()
    last = (
        pd.DataFrame({"k": f["coflow_id"], "off": np.subtract(f["start_s"], f["arrival_s"])})
        .groupby("k")["off"]
        .max()
    )
    c = workload.coflow_columns()
    iso = pd.Series(np.asarray(c["isolated_s"], dtype=float), index=c["coflow_id"])
    return np.maximum(iso, last.reindex(iso.index).to_numpy())


def slowdown_stats(table: pd.DataFrame) -> dict[str, float]:
    """Min, mean, 95th percentile and (population) standard deviation of the
    slowdown: the rows of the NC-DRF and Coflex papers' slowdown tables."""
    x = table["slowdown"].to_numpy()
    return {
        "min": float(x.min()),
        "mean": float(x.mean()),
        "p95": float(np.percentile(x, 95)),
        "std": float(x.std()),
    }


def bin_shares(table: pd.DataFrame) -> dict[str, float]:
    """The share of coflows in each of :data:`BINS`."""
    b = table["bin"]
    return {k: float((b == k).mean()) for k in BINS}


def mean_normalized(table: pd.DataFrame, baseline: pd.DataFrame) -> dict[str, float]:
    """Mean of per-coflow CCT / CCT under ``baseline``, overall (``all``) and per
    bin (NaN for an empty bin)."""
    n = normalized(table, baseline)
    return {b: n[b].get("mean_of_ratios", float("nan")) for b in ["all"] + BINS}


def busy_disparity(series: pd.DataFrame) -> np.ndarray:
    """The progress disparity of the samples with at least one active coflow."""
    return series[series["active_coflows"] > 0]["disparity"].to_numpy()


def disparity_stats(series: pd.DataFrame) -> dict[str, float]:
    """Median, 95th percentile, largest and largest finite progress disparity over
    the busy samples, and the fraction of them where it is infinite (a coflow with
    no progress beside one with some)."""
    busy = busy_disparity(series)
    finite = busy[np.isfinite(busy)]
    return {
        "samples": len(busy),
        "p50": percentile(busy, 50),
        "p95": percentile(busy, 95),
        "max": float(busy.max()) if len(busy) else float("nan"),
        "max finite": float(finite.max()) if len(finite) else float("nan"),
        "fraction infinite": float(np.mean(~np.isfinite(busy))) if len(busy) else 0.0,
    }
