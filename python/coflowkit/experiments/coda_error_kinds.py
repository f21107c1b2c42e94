"""The controlled study of error kinds in `coflowkit reproduce coda-scheduler`:
CODA and Aalo on labels with each kind of injected error (``coda``
``labels=random|move|merge|split``), at the rate whose labels have the quality the
paper states for the scenario (:data:`coda_scheduler.KIND_TARGETS`); its table,
figure and the text's values. The runs are planned with the others in
:mod:`coda_report`."""

from __future__ import annotations

import numpy as np
import pandas as pd

from coflowkit.experiments import common
from coflowkit.experiments.coda_scheduler import (
    AALO,
    ERROR_KINDS,
    FAIR,
    KIND_TARGETS,
    SEARCH_TOL,
    chosen_of,
    kind_scheme,
    norm,
    res_of,
)
from coflowkit.experiments.common import fmt


def kinds(ctx) -> list:
    """The scenarios of the error-kind study among those chosen."""
    return [s for s in chosen_of(ctx.opts) if s.key in KIND_TARGETS]


def error_kinds_table(ctx) -> pd.DataFrame | None:
    """Per scenario and kind of error: the labels' quality at the rate matched to
    the paper's, and CODA's and Aalo's CCT on them against Aalo on the true
    coflows."""
    res, rates, rows = res_of(ctx), ctx.prep["rates"], []
    for s in kinds(ctx):
        metric, target, source = KIND_TARGETS[s.key]
        for kind in ERROR_KINDS:
            r = rates[(s.key, kind)]
            coda, wob = kind_scheme(kind), kind_scheme(kind, ablated=True)
            rows.append(
                {
                    "scenario": s.title,
                    "errors": kind,
                    "matched": metric,
                    "target": target,
                    "target from": source,
                    "error_rate": r.error_rate,
                    "precision": r.quality.precision,
                    "recall": r.quality.recall,
                    "accuracy": r.quality.accuracy,
                    f"within {SEARCH_TOL:g}": "yes" if r.matched else "no (out of reach)",
                    "CODA / Aalo": norm(res, s.key, coda, base=AALO),
                    "w/o both / Aalo": norm(res, s.key, wob, base=AALO),
                    "w/o both / CODA": norm(res, s.key, wob, base=coda),
                    "Fair / CODA": norm(res, s.key, FAIR, base=coda),
                }
            )
    return pd.DataFrame(rows) if rows else None


def error_kinds_figure(ctx):
    """CODA / Aalo (true coflows) per kind of error, per scenario; hatched: CODA
    without both of its mechanisms."""
    t = error_kinds_table(ctx)
    if t is None:
        return None
    pl = common.plt()
    fig, axes = pl.subplots(1, t["scenario"].nunique(), figsize=(9, 3), squeeze=False)
    for ax, (title, part) in zip(axes[0], t.groupby("scenario", sort=False), strict=True):
        x = np.arange(len(part))
        ax.bar(x - 0.2, part["CODA / Aalo"], 0.4, label="CODA")
        ax.bar(x + 0.2, part["w/o both / Aalo"], 0.4, hatch="//", label="w/o both")
        ax.axhline(1.0, color="grey", lw=0.8)
        ax.set_xticks(x, part["errors"])
        metric = part["matched"].iloc[0]
        ax.set_title(f"{title} ({metric} {part['target'].iloc[0]:g})", fontsize=9)
    axes[0][0].set_ylabel("average CCT / Aalo's on true coflows")
    axes[0][0].legend(fontsize=8)
    fig.tight_layout()
    return fig


def kinds_values(ctx) -> dict | None:
    """Per scenario of the error-kind study: CODA / Aalo under each kind that
    reaches the paper's quality, most costly first, and the kinds that cannot
    with the quality they reach."""
    t = error_kinds_table(ctx)
    if t is None:
        return None
    within = f"within {SEARCH_TOL:g}"
    out = []
    for title, part in t.groupby("scenario", sort=False):
        metric = part["matched"].iloc[0]
        part = part.sort_values("CODA / Aalo", ascending=False, kind="stable")
        ok, off = part[part[within] == "yes"], part[part[within] != "yes"]
        reached = ", ".join(f"`{r['errors']}` {fmt(r['CODA / Aalo'])}x" for _, r in ok.iterrows())
        unreached = ", ".join(
            f"`{r['errors']}` ({metric} {fmt(r[metric])}) {fmt(r['CODA / Aalo'])}x"
            for _, r in off.iterrows()
        )
        out.append(
            {
                "scenario": title,
                "metric": metric,
                "target": part["target"].iloc[0],
                "reached": f"CODA / Aalo {reached}" if reached else "no kind reaches it",
                "unreached": unreached,
            }
        )
    return {"rows": out}
