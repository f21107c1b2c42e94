"""Shared parts of benches/coda_whole.py and benches/coda_whole_scenarios.py: the
schemes of the CODA whole-trace sweeps, their tables read back, and ratios."""

from __future__ import annotations

import os
import re
import sys

import pandas as pd

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))

CODA, AALO, FAIR, VARYS = "CODA", "Aalo", "Fair", "Varys"
NO_LB, NO_IP, NO_BOTH = "CODA w/o L.B.", "CODA w/o I.P.", "CODA w/o both"
ORDER = (CODA, AALO, FAIR, VARYS, NO_LB, NO_IP)


def scheme(label: str) -> str:
    """The sweep's policy label as one of :data:`ORDER`."""
    name, _, rest = label.partition(":")
    params = dict(kv.split("=", 1) for kv in rest.split(",")) if rest else {}
    # The decision model is the sweep's, not the scheme's (--interval).
    for k in ("realloc", "decision_s"):
        params.pop(k, None)
    if name in ("aalo", "fair", "varys") and not params:
        return {"aalo": AALO, "fair": FAIR, "varys": VARYS}[name]
    if name == "coda" and params.get("labels") == "identify":
        lb = params.get("late_binding", "true") == "true"
        ip = params.get("intra", "true") == "true"
        if lb and ip:
            return CODA
        if ip:
            return NO_LB
        if lb:
            return NO_IP
    raise SystemExit(f"runs.csv: policy {label!r} is not one of the sweep's settings")


def load(d: str, need=(CODA, AALO, FAIR)) -> tuple[pd.DataFrame, pd.DataFrame]:
    tables = []
    for name in ("coflows", "runs"):
        path = os.path.join(d, f"{name}.csv")
        if not os.path.exists(path):
            raise SystemExit(f"{path}: not found (run the sweep first)")
        df = pd.read_csv(path)
        if df["workload"].nunique() != 1 or df["fabric"].nunique() != 1:
            raise SystemExit(f"{path}: one workload and one fabric per sweep")
        df["scheme"] = df["policy"].map(scheme)
        tables.append(df)
    coflows, runs = tables
    twice = runs["scheme"][runs["scheme"].duplicated()].tolist()
    if twice:
        raise SystemExit(f"{d}/runs.csv: {twice[0]} appears in more than one run")
    for n in need:
        if n not in set(runs["scheme"]):
            raise SystemExit(f"{d}/runs.csv: no {n} run")
    return coflows, runs


def by_scheme(coflows: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Per scheme, its coflows in one order (by id), so ratios pair the same coflows."""
    out = {}
    for name, g in coflows.groupby("scheme"):
        out[name] = g.sort_values("coflow_id").reset_index(drop=True)
    ids = {tuple(g.coflow_id) for g in out.values()}
    if len(ids) != 1:
        raise SystemExit("coflows.csv: the runs did not replay the same coflows")
    return out


def ratio(a: pd.DataFrame, b: pd.DataFrame, mask=None) -> float:
    """Mean CCT of ``a`` / mean CCT of ``b`` (CODA's normalized CCT), over ``mask``."""
    if mask is None:
        return float(a.cct_s.mean() / b.cct_s.mean())
    return float(a.cct_s[mask].mean() / b.cct_s[mask].mean()) if mask.any() else float("nan")


def scheme_any(label: str) -> str:
    """:func:`scheme`, with CODA without both mechanisms too."""
    name, _, rest = label.partition(":")
    params = dict(kv.split("=", 1) for kv in rest.split(",")) if rest else {}
    if name == "coda" and params.get("late_binding") == "false" and params.get("intra") == "false":
        return NO_BOTH
    return scheme(label)


def sweep_provenance(d: str) -> list[str]:
    path = os.path.join(d, "report.md")
    if not os.path.exists(path):
        raise SystemExit(f"{path}: not found (the sweep's report holds its provenance)")
    text = open(path, encoding="utf-8").read()
    m = re.search(r"## Provenance\n\n(.*)", text, re.S)
    return m.group(1).strip().splitlines() if m else []
