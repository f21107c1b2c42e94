"""What a testbed run is compared with: the real run written as `simulate`
writes a run, the simulation beside it, per-coflow and per-bin errors, the
simulation of the master's control loop, the senders' lateness and the
identification score. Called by :func:`coflowkit.runtime.testbed.run_workload`."""

from __future__ import annotations

import json
import os

import numpy as np

from coflowkit import api
from coflowkit._core import CoflowkitError


def _prom(text: str, name: str) -> float:
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    return float("nan")


def identification(p: dict, labels: list, out: str) -> dict:
    """Scores the master's labels (``GET /api/labels``) against the planned
    coflows: each planned flow is found by (source, destination, destination
    port), unique per flow in a plan. A flow the master never labelled counts
    as a coflow of its own. Writes ``identification.csv`` (flow, coflow, label, delay)
    and returns precision, recall and accuracy (:func:`coflowkit.labels.quality`).
    When the labels carry ``seen_s`` (the master's first sight, wall clock), the
    csv gives each flow's delay after its planned start (``p["t0"] + start_s``)."""
    from coflowkit.labels import quality

    by_key = {}
    for row in labels:
        key = (int(row["src"]), int(row["dst"]), int(row["dst_port"]))
        by_key[key] = (int(row["label"]), row.get("seen_s"))
    truth, lab, late, missing = [], [], [], 0
    for f in p["flows"]:
        label, seen = by_key.get((f["src"], f["dst"], f["port"]), (None, None))
        if label is None:
            missing += 1
            label = -1 - f["id"]  # alone
        truth.append(f["coflow"])
        lab.append(label)
        # How long after its planned start the master first saw the flow.
        late.append(float("nan") if seen is None else seen - (p["t0"] + f["start_s"]))
    with open(os.path.join(out, "identification.csv"), "w", encoding="utf-8") as fh:
        fh.write("flow,coflow,label,seen_after_start_s\n")
        for f, t, x, d in zip(p["flows"], truth, lab, late, strict=True):
            lbl = x if x >= 0 else ""
            fh.write(f"{f['id']},{t},{lbl},{'' if d != d else f'{d:.6f}'}\n")
    q = quality(np.asarray(truth), np.asarray(lab))
    return {
        "flows": len(truth),
        "unlabelled": missing,
        "labels": len({x for x in lab if x >= 0}),
        "coflows": len(set(truth)),
        "precision": q.precision,
        "recall": q.recall,
        "accuracy": q.accuracy,
    }


def breakdown(comp, bins):
    """Per bin (SN, LN, SW, LW: short/long by length, narrow/wide by width;
    docs/synthetic.md, `coflowkit.metrics.BINS`): coflows, real and simulated
    mean CCT, their ratio, the median per-coflow |error| and how many are over 50%.
    ``comp``: a ``comparison.csv`` frame; ``bins``: each row's bin."""
    import pandas as pd

    df = comp.assign(bin=bins, abs_error=np.abs(comp["error"]))
    rows = []
    for b, g in sorted(df.groupby("bin"), key=lambda x: str(x[0])):
        rows.append({
            "bin": b, "coflows": len(g),
            "real_mean_cct_s": float(g["real_cct_s"].mean()),
            "sim_mean_cct_s": float(g["sim_cct_s"].mean()),
            "real_over_sim": float(g["real_cct_s"].mean() / g["sim_cct_s"].mean()),
            "median_abs_error": float(g["abs_error"].median()),
            "over_50pct": int((g["abs_error"] > 0.5).sum()),
        })  # fmt: skip
    return pd.DataFrame(rows)


def _start_lateness(flows: list[dict], out: str) -> dict:
    """Writes ``flows.csv`` (per flow: planned start, the sender's actual start,
    how late it was, and its last byte; seconds from t0), ``flow_marks.csv``
    (per flow, when each 1/64 of it had arrived at its receiver) and returns the
    lateness's median, 95th percentile and maximum. A late sender delays its
    coflow in the real run but not in the simulation, so this is the harness's
    own share of the error."""
    late = np.array([f["start"] - f["planned"] for f in flows], dtype=float)
    with open(os.path.join(out, "flows.csv"), "w", encoding="utf-8") as fh:
        fh.write("flow,coflow,planned_s,start_s,late_s,end_s\n")
        for f, d in zip(flows, late, strict=True):
            fh.write(
                f"{f['id']},{f['coflow']},{f['planned']:.6f},{f['start']:.6f},{d:.6f},{f['end']:.6f}\n"
            )
    with open(os.path.join(out, "flow_marks.csv"), "w", encoding="utf-8") as fh:
        fh.write("flow,time_s,bytes\n")
        for f in flows:
            for t, b in f.get("marks") or ():
                fh.write(f"{f['id']},{t:.6f},{b}\n")
    if not len(late):
        return {"median": 0.0, "p95": 0.0, "max": 0.0}
    return {
        "median": float(np.median(late)),
        "p95": float(np.percentile(late, 95)),
        "max": float(np.max(late)),
    }


def _compare_interval(sim_w, policy, params, interval_ms, out) -> dict:
    """The real run against a simulation of the master's control loop: the
    policy decides only every Δ (``realloc=interval``, ``decision_s`` = Δ;
    docs/engines.md), a started flow waits for the next decision and an ended
    flow's rate idles until then, as under a master whose agents report every
    Δ. Writes ``sim-interval/``, ``comparison-interval.csv`` and
    ``breakdown-interval.csv`` and returns their totals (or why the policy
    refused the model)."""
    import pandas as pd

    iv = {"realloc": "interval", "decision_s": repr(interval_ms / 1000.0)}
    try:
        sim = api.simulate(sim_w, policy, {**params, **iv})
    except CoflowkitError as e:
        return {"decision_s": interval_ms / 1000.0, "refused": str(e)}
    api.write_result(sim, os.path.join(out, "sim-interval"))
    comp = pd.read_csv(os.path.join(out, "comparison.csv"))
    comp["sim_cct_s"] = sim.coflows["cct_s"].to_numpy()
    comp["error"] = (comp["real_cct_s"] - comp["sim_cct_s"]) / comp["sim_cct_s"]
    comp.to_csv(os.path.join(out, "comparison-interval.csv"), index=False)
    bins = pd.read_csv(os.path.join(out, "coflows.csv"))["bin"].to_numpy()
    by_bin = breakdown(comp, bins)
    by_bin.to_csv(os.path.join(out, "breakdown-interval.csv"), index=False)
    return {
        "decision_s": interval_ms / 1000.0,
        "sim_mean_cct_s": float(comp["sim_cct_s"].mean()),
        "mean_cct_error": float(comp["real_cct_s"].mean() / comp["sim_cct_s"].mean() - 1),
        "median_coflow_error": float(comp["error"].abs().median()),
        "by_bin": by_bin.to_dict(orient="records"),
    }


def _compare(w, sim_w, sim, real, prom, policy, params, hosts, gbps, goodput, out) -> dict:
    """Checks the real run (every flow's bytes), writes it as `simulate` writes a
    run, the simulation in ``sim/`` and the comparison; returns the summary."""
    errors = [f for f in real["flows"] if f["error"]]
    if errors:
        raise CoflowkitError(
            f"testbed: {len(errors)} of {len(real['flows'])} flows failed, first: flow {errors[0]['id']}: {errors[0]['error']}"
        )
    ids = list(w.coflow_columns()["coflow_id"])
    end = {c["coflow"]: c["end"] for c in real["coflows"]}
    finish = np.array([end[int(i)] for i in ids], dtype=float)
    result = api.result_from_raw(
        sim_w,
        policy,
        dict(params),
        {
            "finish_s": finish,
            "events": 0,
            "policy_calls": int(np.nan_to_num(_prom(prom, "coflowkit_round_seconds_count"))),
        },
    )
    api.write_result(result, out)
    api.write_result(sim, os.path.join(out, "sim"))
    real_cct = result.coflows["cct_s"].to_numpy()
    sim_cct = sim.coflows["cct_s"].to_numpy()
    comp = result.coflows[["coflow_id"]].copy()
    comp["real_cct_s"] = real_cct
    comp["sim_cct_s"] = sim_cct
    comp["error"] = (real_cct - sim_cct) / sim_cct
    comp.to_csv(os.path.join(out, "comparison.csv"), index=False)
    by_bin = breakdown(comp, result.coflows["bin"].to_numpy())
    by_bin.to_csv(os.path.join(out, "breakdown.csv"), index=False)
    late = _start_lateness(real["flows"], out)
    rounds = _prom(prom, "coflowkit_round_seconds_count")
    summary = {
        "policy": policy,
        "params": dict(params),
        "hosts": hosts,
        "gbps": gbps,
        "goodput_bytes_per_s": goodput,
        "coflows": int(len(ids)),
        "flows": len(real["flows"]),
        "real_mean_cct_s": float(np.mean(real_cct)),
        "sim_mean_cct_s": float(np.mean(sim_cct)),
        "mean_cct_error": float(np.mean(real_cct) / np.mean(sim_cct) - 1),
        "median_coflow_error": float(np.median(np.abs(comp["error"]))),
        "by_bin": by_bin.to_dict(orient="records"),
        "master_round_mean_s": _prom(prom, "coflowkit_round_seconds_sum") / max(rounds, 1),
        "master_round_max_s": _prom(prom, "coflowkit_round_seconds_max"),
        "decisions_sent": _prom(prom, "coflowkit_decisions_sent_total"),
        "sender_start_late_s": late,
    }
    with open(os.path.join(out, "comparison.json"), "w", encoding="utf-8") as fh:
        json.dump(summary, fh, indent=2, sort_keys=True)
        fh.write("\n")
    return summary
