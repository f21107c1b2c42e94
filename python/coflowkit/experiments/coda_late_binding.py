"""Late binding's largest losses in `coflowkit reproduce coda-scheduler`: the
coflows late binding slows most, with what the labels without it did to them; and
the SN coflows intra-coflow prioritisation slows most, with what late binding bound
to their labels.

D-CLAS (Aalo's, which CODA runs over labelled coflows) queues a labelled coflow by
the bytes its flows have sent. Injected errors spread a coflow's flows over its
own label and its neighbours'; each label then holds part of its bytes. This
module measures, for each of the coflows late binding slows most, the queue D-CLAS
gives its true bytes, the share of its bytes in its largest label without late
binding, and the highest queue any of those labels reaches (all the bytes the
label holds at the end, other coflows' flows included), beside its CCT under
CODA, without late binding and under Aalo on the true coflows. The runs are those
of :mod:`coda_report`; the labels are the ones the run without late binding
scheduled with (``flow_labels``)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from coflowkit import api
from coflowkit.experiments.coda_scheduler import (
    AALO,
    BY_KEY,
    CODA,
    NO_IP,
    NO_LB,
    chosen_of,
    norm,
)

#: The coflows shown per scenario: those late binding slows most.
TOP = 5
#: Intra-coflow prioritisation counts as slowing SN coflows in a scenario when
#: their mean CCT without it is below this share of CODA's (as the report's text).
IP_SLOWS = 0.99
#: The SN coflows shown per such scenario: those it slows most.
TOP_IP = 3
#: The text reads the rules of the mechanism into a loss only where intra-coflow
#: prioritisation makes the coflow at least this many times as slow.
IP_STRONG = 2.0


def coda_thresholds() -> np.ndarray:
    """CODA's coflow-queue thresholds (bytes) at the registry's defaults, which
    the scheduler's runs use: T0 · E^q for q = 0..K-2 (docs/policies/coda.md)."""
    (spec,) = [p for p in api.policies() if p["name"] == "coda"]
    d = {p["name"]: p["default"] for p in spec["params"]}
    k, t0, e = int(d["queues"]), float(d["first_threshold_bytes"]), float(d["multiplier"])
    return t0 * e ** np.arange(k - 1)


def queue_of(nbytes, thresholds: np.ndarray) -> np.ndarray:
    """D-CLAS's queue for ``nbytes`` sent: the number of thresholds reached."""
    return np.searchsorted(thresholds, np.asarray(nbytes, dtype=float), side="right")


def slowed(ctx) -> list:
    """The ablated scenarios in which late binding makes CODA slower overall."""
    res = ctx.results
    return [
        s
        for s in chosen_of(ctx.opts)
        if s.ablate
        and (s.key, NO_LB) in res
        and norm({k: r.coflows for k, r in res.items()}, s.key, NO_LB) < 1 - 1e-9
    ]


def pieces(flows: pd.DataFrame, labels: np.ndarray) -> pd.DataFrame:
    """Per coflow: its bytes, the share of them in its largest label, and the bytes
    of the fullest of its labels (every flow a label holds, any coflow's)."""
    f = pd.DataFrame({"coflow_id": flows["coflow_id"], "bytes": flows["bytes"], "label": labels})
    label_bytes = f.groupby("label")["bytes"].sum()
    f["label_bytes"] = label_bytes.reindex(f["label"].to_numpy()).to_numpy()
    per = f.groupby(["coflow_id", "label"], sort=True)["bytes"].sum()
    total = f.groupby("coflow_id")["bytes"].sum()
    return pd.DataFrame(
        {
            "bytes": total,
            "largest_share": per.groupby(level=0).max() / total,
            "fullest_label": f.groupby("coflow_id")["label_bytes"].max(),
        }
    )


def losses_table(ctx) -> pd.DataFrame | None:
    """Per scenario where late binding slows CODA: the :data:`TOP` coflows it slows
    most, their queue on their true bytes and on the labels without late binding,
    and their CCT under CODA, without late binding and under Aalo on the truth."""
    rows, th = [], coda_thresholds()
    for s in slowed(ctx):
        coda, nolb = (ctx.results[(s.key, n)] for n in (CODA, NO_LB))
        aalo = ctx.results[(s.key, AALO)].coflows.set_index("coflow_id")["cct_s"]
        a, b = (r.coflows.set_index("coflow_id") for r in (coda, nolb))
        top = (a["cct_s"] - b["cct_s"]).sort_values(ascending=False, kind="stable").head(TOP)
        w = ctx.prep["specs"][s.key].load()
        fc = w.flow_columns()
        flows = pd.DataFrame({k: np.asarray(fc[k]) for k in ("coflow_id", "bytes")})
        p = pieces(flows, np.asarray(nolb.extra["flow_labels"]))
        own = own_label(flows, _bindings(s, coda), np.asarray(w.coflow_columns()["coflow_id"]))
        for cid in top.index:
            rows.append(
                {
                    "scenario": s.title,
                    "coflow": int(cid),
                    "bin": a.at[cid, "bin"],
                    "GB": p.at[cid, "bytes"] / 1e9,
                    "queue (true bytes)": int(queue_of(p.at[cid, "bytes"], th)),
                    "largest label share w/o L.B.": p.at[cid, "largest_share"],
                    "queue of its fullest label w/o L.B.": int(
                        queue_of(p.at[cid, "fullest_label"], th)
                    ),
                    "share bound to its own label (CODA)": own.at[cid, "share"],
                    "queue of its own label (CODA)": int(queue_of(own.at[cid, "label_bytes"], th)),
                    "CCT CODA (s)": a.at[cid, "cct_s"],
                    "CCT w/o L.B. (s)": b.at[cid, "cct_s"],
                    "CCT Aalo, truth (s)": aalo.at[cid],
                }
            )
    return pd.DataFrame(rows) if rows else None


def _bindings(s, run) -> np.ndarray:
    if "flow_bindings" not in run.extra:
        raise ValueError(
            f"{s.title}: the CODA run has no flow bindings (a result cached by "
            "an older coflowkit); run again with a fresh --cache-dir"
        )
    return np.asarray(run.extra["flow_bindings"])


def own_label(flows: pd.DataFrame, bound: np.ndarray, ids: np.ndarray) -> pd.DataFrame:
    """Per coflow, in a run that binds flows: the share of its bytes bound to its
    own label (the label numbered as the coflow's index), and all the bytes bound to
    that label by the end (every flow, any coflow's)."""
    index = pd.Series(np.arange(len(ids)), index=ids)
    own = index.reindex(flows["coflow_id"].to_numpy()).to_numpy()
    f = flows.assign(bound=bound, mine=bound == own)
    label_bytes = f.groupby("bound")["bytes"].sum()
    total = f.groupby("coflow_id")["bytes"].sum()
    out = pd.DataFrame(
        {"share": f[f["mine"]].groupby("coflow_id")["bytes"].sum().reindex(total.index) / total}
    ).fillna(0.0)
    out["label_bytes"] = (
        label_bytes.reindex(index.reindex(out.index).to_numpy()).fillna(0.0).to_numpy()
    )
    return out


def losses_values(ctx) -> dict | None:
    """What the text says of the table: how many of the coflows late binding slows
    most sit in a lower queue on their true bytes than on any of their labels
    without it (the errors split them), their CCT summed under the three schemes,
    and the LW bin's total CCT without late binding and under CODA over Aalo's on the
    truth."""
    t = losses_table(ctx)
    if t is None:
        return None
    true_q, label_q = t["queue (true bytes)"], t["queue of its fullest label w/o L.B."]
    split = true_q > label_q
    keys = [s.key for s in slowed(ctx)]
    res = {k: r.coflows for k, r in ctx.results.items()}
    lw = {n: [norm(res, k, n, base=AALO, bin="LW") for k in keys] for n in (NO_LB, CODA)}
    return {
        "scenarios": [BY_KEY[k].title for k in keys],
        "count": len(t),
        "split": int(split.sum()),
        "split_queue": sorted({int(q) for q in true_q[split]}),
        "split_label_queue": sorted({int(q) for q in label_q[split]}),
        "split_share": (
            float(t.loc[split, "largest label share w/o L.B."].min()),
            float(t.loc[split, "largest label share w/o L.B."].max()),
        )
        if split.any()
        else None,
        "own_share": (
            float(t.loc[split, "share bound to its own label (CODA)"].min()),
            float(t.loc[split, "share bound to its own label (CODA)"].max()),
        )
        if split.any()
        else None,
        "own_queue": sorted({int(q) for q in t.loc[split, "queue of its own label (CODA)"]}),
        "sums": {
            "coda": float(t.loc[split, "CCT CODA (s)"].sum()),
            "nolb": float(t.loc[split, "CCT w/o L.B. (s)"].sum()),
            "aalo": float(t.loc[split, "CCT Aalo, truth (s)"].sum()),
        },
        "others": [int(c) for c in t.loc[~split, "coflow"]],
        "lw_nolb": (min(lw[NO_LB]), max(lw[NO_LB])),
        "lw_coda": (min(lw[CODA]), max(lw[CODA])),
    }


def ip_slowed(ctx) -> list:
    """The ablated scenarios in which intra-coflow prioritisation slows SN coflows."""
    res = {k: r.coflows for k, r in ctx.results.items()}
    return [
        s
        for s in chosen_of(ctx.opts)
        if s.ablate and (s.key, NO_IP) in res and norm(res, s.key, NO_IP, bin="SN") < IP_SLOWS
    ]


def bound_with(flows: pd.DataFrame, bound: np.ndarray, ids: np.ndarray, cid) -> dict:
    """What late binding bound together with coflow ``cid``'s flows: among the labels
    its flows are bound to, the one holding most bytes of other coflows; the flows
    and bytes of other coflows bound to it, the other coflow with most bytes there,
    and all the bytes bound to it (every flow, finished ones included)."""
    f = flows.assign(bound=bound)
    mine = f["coflow_id"].to_numpy() == cid
    best = None
    for lab in np.unique(bound[mine & (bound >= 0)]):
        on = f[f["bound"] == lab]
        other = on[on["coflow_id"] != cid]
        row = {
            "label": int(lab),
            "label of": int(ids[lab]) if 0 <= lab < len(ids) else None,
            "other flows": len(other),
            "other GB": float(other["bytes"].sum()) / 1e9,
            "top other": int(other.groupby("coflow_id")["bytes"].sum().idxmax())
            if len(other)
            else None,
            "bytes": float(on["bytes"].sum()),
        }
        if best is None or row["other GB"] > best["other GB"]:
            best = row
    return best or {}


def ip_table(ctx) -> pd.DataFrame | None:
    """Per scenario where intra-coflow prioritisation slows SN coflows: the
    :data:`TOP_IP` SN coflows it slows most, their CCT under CODA, without it and
    under Aalo on the truth, and what CODA's late binding bound to their label."""
    rows, th = [], coda_thresholds()
    for s in ip_slowed(ctx):
        coda = ctx.results[(s.key, CODA)]
        bound = _bindings(s, coda)
        a = coda.coflows.set_index("coflow_id")
        b = ctx.results[(s.key, NO_IP)].coflows.set_index("coflow_id")
        aalo = ctx.results[(s.key, AALO)].coflows.set_index("coflow_id")["cct_s"]
        sn = a.index[a["bin"] == "SN"]
        loss = (a.loc[sn, "cct_s"] - b.loc[sn, "cct_s"]).sort_values(ascending=False, kind="stable")
        w = ctx.prep["specs"][s.key].load()
        fc = w.flow_columns()
        flows = pd.DataFrame({k: np.asarray(fc[k]) for k in ("coflow_id", "bytes")})
        ids = np.asarray(w.coflow_columns()["coflow_id"])
        for cid in loss.index[:TOP_IP]:
            if loss[cid] <= 0:
                break
            bw = bound_with(flows, bound, ids, cid)
            rows.append(
                {
                    "scenario": s.title,
                    "coflow": int(cid),
                    "CCT CODA (s)": a.at[cid, "cct_s"],
                    "CCT w/o I.P. (s)": b.at[cid, "cct_s"],
                    "CCT Aalo, truth (s)": aalo.at[cid],
                    "its label (coflow)": bw.get("label of"),
                    "other flows bound there": bw.get("other flows", 0),
                    "their GB": bw.get("other GB", 0.0),
                    "most of them from": bw.get("top other"),
                    "label's queue by the end": int(queue_of(bw.get("bytes", 0.0), th)),
                }
            )
    return pd.DataFrame(rows) if rows else None


def ip_values(ctx) -> dict | None:
    """The text's reading of :func:`ip_table`: per scenario, the share of the SN
    bin's total loss (CCT with intra-coflow prioritisation minus without, summed over
    the SN coflows it slows) carried by the coflow it slows most, and that row."""
    t = ip_table(ctx)
    if t is None:
        return None
    out = []
    res = {k: r.coflows for k, r in ctx.results.items()}
    for s in ip_slowed(ctx):
        a, b = (res[(s.key, n)].set_index("coflow_id") for n in (CODA, NO_IP))
        sn = a["bin"] == "SN"
        d = (a["cct_s"] - b["cct_s"])[sn]
        rows = t[t["scenario"] == s.title]
        if rows.empty:
            continue
        top = rows.iloc[0].to_dict()
        factor = top["CCT CODA (s)"] / top["CCT w/o I.P. (s)"]
        out.append(
            {
                "title": s.title,
                "share": float(d.max() / d[d > 0].sum()),
                "top": top,
                "factor": float(factor),
                "strong": bool(factor >= IP_STRONG),
            }
        )
    return {"rows": out}
