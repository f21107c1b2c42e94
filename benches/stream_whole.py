"""Stream's Fig. 6 claims on the whole FB trace, from a finished sweep of
examples/sweeps/stream-fig6-whole.toml.

    coflowkit sweep examples/sweeps/stream-fig6-whole.toml --out DIR
    python3 benches/stream_whole.py DIR --out docs/results/stream-whole

Reads DIR/coflows.csv and DIR/report.md (the sweep's provenance), and writes
README.md (tables, claims, provenance), fig6.csv, improvement.csv,
categories.csv and fig6.png. The categories, the improvement (compared mean CCT /
Stream's) and the paper's numbers are those of `reproduce stream`
(coflowkit.experiments.stream), so the two reports compare like with like.
"""

from __future__ import annotations

import argparse
import os
import re
import sys

import numpy as np
import pandas as pd

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))

from coflowkit.experiments import stream as S  # noqa: E402
from coflowkit.experiments.common import markdown  # noqa: E402
from coflowkit.policy_timing import machine, provenance  # noqa: E402

#: Sweep labels of the paper's four schemes.
LABELS = {
    "stream:queues=4": "Stream",
    "baraat": "Baraat",
    "fair": "Fair Sharing",
    "aalo:queues=4": "Aalo",
}
#: Issue 24's targets at 1G: at the best k, Stream's improvement over these.
BEST_K_TARGET = {"Baraat": 1.3, "Fair Sharing": 1.6}
#: Averaged over k, Aalo / Stream within this range.
AALO_RANGE = (0.8, 1.0)


def fabric_k_g(fabric: str) -> tuple[int, int, str]:
    """k, Gbps and placement (`rack`, the default, when not given) of a sweep's fabric."""
    m = re.fullmatch(r"fattree:k=(\d+),gbps=(\d+)(?:,placement=(\w+))?", fabric)
    if not m:
        raise SystemExit(f"coflows.csv: fabric {fabric!r} is not fattree:k=K,gbps=G[,placement=P]")
    return int(m.group(1)), int(m.group(2)), m.group(3) or "rack"


def load(d: str) -> pd.DataFrame:
    path = os.path.join(d, "coflows.csv")
    if not os.path.exists(path):
        raise SystemExit(f"{path}: not found (run the sweep first)")
    df = pd.read_csv(path)
    unknown = sorted(set(df["policy"]) - set(LABELS))
    if unknown:
        raise SystemExit(f"{path}: policies {unknown} are not the sweep's four")
    kg = df["fabric"].map(fabric_k_g)
    df["k"] = [x[0] for x in kg]
    df["gbps"] = [x[1] for x in kg]
    df["placement"] = [x[2] for x in kg]
    if df["placement"].nunique() != 1:
        raise SystemExit(f"{path}: one placement per sweep, not {sorted(df.placement.unique())}")
    df["scheme"] = df["policy"].map(LABELS)
    df["cat"] = S.category(df["size_bytes"].to_numpy(), S.SIZE_A)
    return df


def means(df: pd.DataFrame) -> pd.DataFrame:
    """Per (gbps, k, scheme): mean CCT overall, of category I (mice) and per category."""
    rows = []
    for (g, k, name), d in df.groupby(["gbps", "k", "scheme"], sort=True):
        row = {"gbps": g, "k": k, "scheme": name, "coflows": len(d)}
        row["avg"] = d["cct_s"].mean()
        row["bound"] = d["isolated_s"].mean()
        row["mice bound"] = d.loc[d["cat"] == 0, "isolated_s"].mean()
        for i, c in enumerate(S.CATEGORIES):
            part = d[d["cat"] == i]
            row[c] = part["cct_s"].mean() if len(part) else np.nan
            row[f"n_{c}"] = len(part)
        row["mice"] = row["I"]
        rows.append(row)
    return pd.DataFrame(rows)


def improvement(m: pd.DataFrame) -> pd.DataFrame:
    """Compared scheme's mean CCT / Stream's, per (gbps, k), overall, mice and per category."""
    rows = []
    cols = ("avg", "mice", *S.CATEGORIES)
    for (g, k), d in m.groupby(["gbps", "k"], sort=True):
        s = d[d.scheme == "Stream"].iloc[0]
        for name in S.COMPARED:
            c = d[d.scheme == name].iloc[0]
            rows.append({"gbps": g, "k": k, "compared": name, **{x: c[x] / s[x] for x in cols}})
    return pd.DataFrame(rows)


def headroom(m: pd.DataFrame) -> pd.DataFrame:
    """Per (gbps, k): each scheme's mean CCT over the mean isolated CCT (each
    coflow's bottleneck link time alone, a lower bound on its CCT under any
    schedule), overall and for the mice. No scheduler can improve on a scheme's
    mean CCT by more than this ratio."""
    rows = []
    for (g, k), d in m.groupby(["gbps", "k"], sort=True):
        d = d.set_index("scheme")
        row = {"gbps": g, "k": k, "bound (s)": d["bound"].iloc[0]}
        for name in S.POLICIES:
            row[f"{name} / bound"] = d.loc[name, "avg"] / d.loc[name, "bound"]
        row["mice: Fair Sharing / bound"] = d.loc["Fair Sharing", "mice"] / d["mice bound"].iloc[0]
        row["mice: Baraat / bound"] = d.loc["Baraat", "mice"] / d["mice bound"].iloc[0]
        rows.append(row)
    return pd.DataFrame(rows)


def findings(room: pd.DataFrame, imp: pd.DataFrame) -> list[str]:
    """What the bound says about the paper's ratios, from these numbers."""
    out = []
    for g in S.SPEEDS:
        r = room[room.gbps == g]
        if r.empty:
            continue
        lo, hi = r["Fair Sharing / bound"].min(), r["Fair Sharing / bound"].max()
        blo, bhi = r["Baraat / bound"].min(), r["Baraat / bound"].max()
        paper_fair = S.PAPER[("avg", g, "Fair Sharing")]
        absent = len(S.KS) - len(r)
        need_text = ""
        if absent > 0:
            # Each measured size improves on fair by at most its bound ratio.
            need = (paper_fair * len(S.KS) - r["Fair Sharing / bound"].sum()) / absent
            sizes = "size" if absent == 1 else "sizes"
            need_text = (
                f"For the paper's mean over its {len(S.KS)} sizes to hold, the {absent} "
                f"{sizes} not measured here would need an improvement over fair sharing of at "
                f"least {need:.2f} on average. "
            )
        top = r.loc[r["Fair Sharing / bound"].idxmax()]
        room_fair = top["Fair Sharing / bound"] - 1
        taken = (
            (top["Fair Sharing / bound"] - top["Stream / bound"]) / room_fair
            if room_fair > 0
            else 0
        )
        need_text += (
            f"Where there is most room (k = {int(top['k'])}, fair sharing "
            f"{top['Fair Sharing / bound']:.3f}x the bound), Stream is "
            f"{top['Stream / bound']:.3f}x it: it takes {taken:.0%} of the room fair sharing "
            "leaves (the bound need not be reachable when coflows share links). "
        )
        out.append(
            f"* At {g}G, fair sharing's mean CCT is {lo:.3f}-{hi:.3f}x the bound and "
            f"Baraat's {blo:.3f}-{bhi:.3f}x, so on these fabrics no scheduler can improve "
            f"on them by more than that; the paper's mean-over-k improvements of Stream "
            f"({S.PAPER[('avg', g, 'Fair Sharing')]} over fair sharing, "
            f"{S.PAPER[('avg', g, 'Baraat')]} over Baraat) cannot occur here, whatever the "
            "scheduler. "
            + need_text
            + "The paper does not state how it placed the trace's racks on its fabrics "
            "(the placement sensitivity below, when run, shows what that changes)."
        )
    a = imp[(imp.compared == "Aalo") & (imp.gbps == 1)]
    if not a.empty:
        worst = a.set_index("k")[list(S.CATEGORIES)].max(axis=1)
        cat = a.set_index("k")[list(S.CATEGORIES)].idxmax(axis=1)
        out.append(
            "* Aalo is slower than Stream at 1G (the paper has it ahead, 0.87x), most in "
            + ", ".join(f"category {cat[k]} at k = {k} ({worst[k]:.2f}x)" for k in worst.index)
            + " (the per-category table below)."
        )
    return out


def aalo_queues(d: str) -> pd.DataFrame:
    """Each Aalo setting of a sweep beside Stream (4 queues): mean CCT, and its
    mean CCT / Stream's overall and per Table 3 category."""
    path = os.path.join(d, "coflows.csv")
    if not os.path.exists(path):
        raise SystemExit(f"{path}: not found (run the sweep first)")
    df = pd.read_csv(path)
    if "stream:queues=4" not in set(df["policy"]):
        raise SystemExit(f"{path}: no stream:queues=4 run to compare with")
    df["cat"] = S.category(df["size_bytes"].to_numpy(), S.SIZE_A)
    rows = []
    for fabric, f in df.groupby("fabric", sort=True):
        s = f[f.policy == "stream:queues=4"]
        for pol, a in f[f.policy.str.startswith("aalo")].groupby("policy", sort=True):
            row = {"fabric": fabric, "Aalo": pol, "mean CCT (s)": a["cct_s"].mean()}
            row["Aalo / Stream"] = a["cct_s"].mean() / s["cct_s"].mean()
            for i, c in enumerate(S.CATEGORIES):
                row[c] = a.loc[a.cat == i, "cct_s"].mean() / s.loc[s.cat == i, "cct_s"].mean()
            rows.append(row)
    return pd.DataFrame(rows)


def sensitivity(others: list[pd.DataFrame]) -> pd.DataFrame:
    """Stream's improvements (mean and mice CCT) and fair sharing's headroom per
    placement, k and Gbps, for every sweep given."""
    rows = []
    for df in others:
        m = means(df)
        imp = improvement(m).set_index(["gbps", "k", "compared"])
        room = headroom(m).set_index(["gbps", "k"])
        for (g, k), r in room.iterrows():
            row = {"placement": df["placement"].iloc[0], "gbps": g, "k": k}
            for name in S.COMPARED:
                row[f"{name} / Stream"] = imp.loc[(g, k, name), "avg"]
            for name in S.COMPARED:
                row[f"mice: {name} / Stream"] = imp.loc[(g, k, name), "mice"]
            row["Fair Sharing / bound"] = r["Fair Sharing / bound"]
            rows.append(row)
    return pd.DataFrame(rows)


def verdict(ours: float, paper: float) -> str:
    r = ours / paper
    return "reproduced (within 15%)" if abs(r - 1) <= 0.15 else "**off >15%**"


def claims(imp: pd.DataFrame) -> pd.DataFrame:
    """One row per claim of the paper: Stream's improvement averaged over the
    sizes measured at that speed (listed in 'per k')."""
    rows = []
    for (col, g, name), paper in S.PAPER.items():
        d = imp[(imp.gbps == g) & (imp.compared == name)].set_index("k")[col]
        if d.empty:
            continue
        mean = float(d.mean())
        rows.append(
            {
                "claim": f"{name} / Stream, {'mean' if col == 'avg' else 'mice'} CCT, {g}G",
                "paper": paper,
                "ours, mean over the k measured": round(mean, 3),
                "ratio": round(mean / paper, 3),
                "verdict": verdict(mean, paper),
                "per k": ", ".join(f"{k}: {v:.3f}" for k, v in d.items()),
            }
        )
    return pd.DataFrame(rows)


def targets(imp: pd.DataFrame) -> list[str]:
    out = []
    one = imp[imp.gbps == 1]
    for name, need in BEST_K_TARGET.items():
        d = one[one.compared == name].set_index("k")["avg"]
        best_k = int(d.idxmax())
        ok = d.max() >= need
        out.append(
            f"| {name} / Stream at the best k, 1G | ≥ {need} (paper {S.PAPER[('avg', 1, name)]}) "
            f"| {d.max():.3f} (k = {best_k}) | {'met' if ok else '**not met**'} |"
        )
    for g in S.SPEEDS:
        d = imp[(imp.gbps == g) & (imp.compared == "Aalo")]["avg"]
        if d.empty:
            continue
        mean = float(d.mean())
        lo, hi = AALO_RANGE
        ok = lo <= mean <= hi
        out.append(
            f"| Aalo / Stream averaged over k, {g}G | {lo}-{hi} (paper {S.PAPER[('avg', g, 'Aalo')]}) "
            f"| {mean:.3f} | {'met' if ok else '**not met**'} |"
        )
    return out


def md(df: pd.DataFrame) -> str:
    return markdown(df)


def figure(m: pd.DataFrame, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 2, figsize=(10, 7))
    for i, g in enumerate(S.SPEEDS):
        for j, (col, label) in enumerate((("mice", "mice CCT (s)"), ("avg", "average CCT (s)"))):
            ax = axes[i][j]
            for name in S.POLICIES:
                d = m[(m.gbps == g) & (m.scheme == name)].sort_values("k")
                ax.plot(d["k"], d[col], marker="o", label=name)
            ax.set_xlabel("k (pods)")
            ax.set_ylabel(label)
            ax.set_title(f"{g}G switches, whole FB trace")
            ax.set_xticks(sorted(m["k"].unique()))
            vals = m[m.gbps == g][col]
            if len(vals) and vals.min() > 0 and vals.max() / vals.min() > 20:
                ax.set_yscale("log")  # k = 8's CCTs are tens of times the others
    axes[0][0].legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def sweep_provenance(d: str) -> list[str]:
    """The sweep's own provenance (the last section of its report.md)."""
    path = os.path.join(d, "report.md")
    if not os.path.exists(path):
        raise SystemExit(f"{path}: not found (the sweep did not finish)")
    text = open(path, encoding="utf-8").read()
    at = text.rfind("## Provenance")
    if at < 0:
        raise SystemExit(f"{path}: no provenance section")
    return ["Sweep provenance:", *text[at:].splitlines()[1:]]


def sensitivity_notes(sens: pd.DataFrame | None) -> list[str]:
    """What the other placements change, from their rows (1G)."""
    if sens is None:
        return []
    out = []
    for p, d in sens[(sens.gbps == 1) & (sens.placement != "rack")].groupby("placement"):
        r = d.iloc[0]
        same = len(d) > 1 and bool((d.drop(columns=["k"]).nunique() == 1).all())
        out.append(
            f"* `placement={p}`, 1G: fair sharing is {r['Fair Sharing / bound']:.2f}x the "
            f"bound; Stream improves on Baraat {r['Baraat / Stream']:.2f}x and on fair "
            f"sharing {r['Fair Sharing / Stream']:.2f}x (mice: {r['mice: Baraat / Stream']:.2f}x "
            f"and {r['mice: Fair Sharing / Stream']:.2f}x); Aalo is "
            f"{r['Aalo / Stream']:.2f}x Stream."
            + (
                " Every k gives the same numbers: each rack is one host, so its 1G link, "
                "not the fabric, is every coflow's bottleneck."
                if same
                else ""
            )
        )
    return [*out, ""] if out else []


def aalo_notes(aq: pd.DataFrame | None) -> list[str]:
    if aq is None:
        return []
    out = []
    for fabric, d in aq.groupby("fabric"):
        d = d.set_index("Aalo")
        parts = [f"`{a}` {d.loc[a, 'Aalo / Stream']:.3f}x" for a in d.index]
        out.append(
            f"* {fabric}: Aalo / Stream is " + ", ".join(parts) + " (the paper's 0.87x at 1G)."
        )
    return [*out, ""]


def args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sweep_dir")
    ap.add_argument(
        "--also",
        action="append",
        default=[],
        metavar="DIR",
        help="another sweep of the same grid (another placement) for the sensitivity table",
    )
    ap.add_argument("--out", default=os.path.join(ROOT, "docs/results/stream-whole"))
    ap.add_argument(
        "--aalo",
        metavar="DIR",
        help="a sweep of examples/sweeps/stream-fig6-whole-aalo.toml (Aalo's queues)",
    )
    ap.add_argument(
        "--means",
        action="append",
        default=[],
        metavar="CSV",
        help="an earlier report's fig6.csv: its (Gbps, k) the sweep lacks join the tables",
    )
    ap.add_argument(
        "--keep-coflows",
        action="store_true",
        help="write the sweep's per-coflow results (coflows.csv) beside the report",
    )
    o = ap.parse_args()
    o.argv = sys.argv[1:]
    return o


def check_complete(m: pd.DataFrame, where: str) -> None:
    """Every scheme on every (Gbps, k) that has a run, or one error naming what is
    missing."""
    present = sorted({(int(g), int(k)) for g, k in zip(m.gbps, m.k, strict=True)})
    missing = [
        (g, k, n)
        for g, k in present
        for n in S.POLICIES
        if m[(m.gbps == g) & (m.k == k) & (m.scheme == n)].empty
    ]
    if missing:
        raise SystemExit(f"{where}: runs missing for (gbps, k, scheme) {missing}")


def section(title: str, intro: str, table: pd.DataFrame | None) -> list[str]:
    """An optional section: nothing when its table was not asked for."""
    return [] if table is None else [f"## {title}", "", intro, "", md(table), ""]


def sizes_text(m: pd.DataFrame) -> str:
    """Which of the paper's sizes each speed has, and what that means for the
    'mean over k' columns."""
    parts = []
    for g in sorted(m.gbps.unique()):
        ks = sorted(int(k) for k in m[m.gbps == g].k.unique())
        absent = [k for k in S.KS if k not in ks]
        parts.append(
            f"at {g}G k = {', '.join(map(str, ks))}"
            + (f" (the paper also has k = {', '.join(map(str, absent))})" if absent else "")
        )
    every = all(set(S.KS) <= set(m[m.gbps == g].k) for g in m.gbps.unique())
    return (
        "Sizes measured: "
        + "; ".join(parts)
        + (
            ". Every network size of the paper is here."
            if every
            else ". Every 'mean over k' below is over the sizes measured at that speed, "
            "not the paper's five."
        )
    )


def merged_means(m: pd.DataFrame, paths: list[str]) -> tuple[pd.DataFrame, list[str]]:
    """`m` with the rows of earlier reports' fig6.csv for the (Gbps, k) it does
    not have (the sweep's own runs win), and one provenance line per file."""
    lines = []
    for path in paths:
        if not os.path.exists(path):
            raise SystemExit(f"{path}: not found (a fig6.csv written by this script)")
        old = pd.read_csv(path)
        lack = sorted(set(m.columns) - set(old.columns))
        if lack:
            raise SystemExit(f"{path}: columns {lack} missing (not a fig6.csv of this script)")
        have = set(zip(m.gbps, m.k, strict=True))
        keep = old[[(g, k) not in have for g, k in zip(old.gbps, old.k, strict=True)]]
        m = pd.concat([m, keep[m.columns]], ignore_index=True)
        pairs = sorted({(int(g), int(k)) for g, k in zip(keep.gbps, keep.k, strict=True)})
        where = os.path.join(os.path.dirname(path), "README.md")
        lines.append(
            f"* Means of (Gbps, k) = {', '.join(f'({g}, {k})' for g, k in pairs)} read from "
            f"`{os.path.relpath(path, ROOT)}` (the runs and provenance are in "
            f"`{os.path.relpath(where, ROOT)}`)."
        )
    m = m.sort_values(["gbps", "k", "scheme"], ignore_index=True)
    return m, lines


def intro(o, df: pd.DataFrame, m: pd.DataFrame, merged: list[str]) -> list[str]:
    workload = ", ".join(sorted(df["workload"].unique()))
    ks = sorted(int(k) for k in m.k.unique())
    return [
        "# Stream's Fig. 6 on the whole FB trace (k = " + ", ".join(map(str, ks)) + ")",
        "",
        "Sweep: its command and provenance below; tables: "
        f"`python3 benches/stream_whole.py {' '.join(o.argv)}` "
        f"({provenance()}; {machine()}).",
        "",
        *sweep_provenance(o.sweep_dir),
        "",
        *([*merged, ""] if merged else []),
        *[
            line
            for d in [*o.also, *([o.aalo] if o.aalo else [])]
            for line in [f"Sweep `{d}`:", *sweep_provenance(d)[1:], ""]
        ],
        f"Workload `{workload}` ({int(m['coflows'].max())} coflows) on "
        "`fattree:k=K,gbps=G`, the trace's racks placed by "
        f"`placement={df['placement'].iloc[0]}` (docs/fabrics.md), the paper's four schemes "
        "with 4 queues for Stream and Aalo. Improvement = the compared scheme's mean CCT / "
        "Stream's; mice = category I of Table 3 (Size A, < 100 MiB). " + sizes_text(m),
        "",
    ]


def main() -> None:
    o = args()
    df = load(o.sweep_dir)
    others = [load(d) for d in o.also]
    m = means(df)
    check_complete(m, o.sweep_dir)
    m, merged = merged_means(m, o.means)
    check_complete(m, "the merged means")
    imp = improvement(m)
    cl = claims(imp)
    room = headroom(m)
    sens = sensitivity([df, *others]) if others else None
    aq = aalo_queues(o.aalo) if o.aalo else None
    os.makedirs(o.out, exist_ok=True)
    for name, table in (
        ("fig6", m),
        ("improvement", imp),
        ("claims", cl),
        ("headroom", room),
        ("sensitivity", sens),
        ("aalo_queues", aq),
    ):
        if table is not None:
            table.to_csv(os.path.join(o.out, f"{name}.csv"), index=False)
    figure(m, os.path.join(o.out, "fig6.png"))
    if o.keep_coflows:
        df.drop(columns=["k", "gbps", "placement", "scheme", "cat"]).to_csv(
            os.path.join(o.out, "coflows.csv"), index=False
        )
    text = [*intro(o, df, m, merged), *body(o, m, imp, cl, room, sens, aq)]
    with open(os.path.join(o.out, "README.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(text))
    print(os.path.join(o.out, "README.md"))


def body(o, m, imp, cl, room, sens, aq) -> list[str]:
    """The report after its introduction: figures, claims, targets, the bound,
    the optional sweeps, and the per-category tables."""
    fig6 = m[["gbps", "k", "scheme", "coflows", "avg", "mice"]].rename(
        columns={"avg": "avg CCT (s)", "mice": "mice CCT (s)"}
    )
    cats = imp[["gbps", "k", "compared", *S.CATEGORIES, "avg"]]
    counts = m[m.scheme == "Stream"][["gbps", "k", *[f"n_{c}" for c in S.CATEGORIES]]]
    return [
        "## Fig. 6: mean and mice CCT",
        "",
        md(fig6),
        "",
        "![Fig. 6](fig6.png)",
        "",
        "## The paper's claims, one row each",
        "",
        md(cl),
        "",
        "## Issue 24's targets",
        "",
        "| target | need | ours | verdict |",
        "|---|---|---|---|",
        *targets(imp),
        "",
        *section(
            "How much any scheduler could gain",
            "Bound = the mean isolated CCT (each coflow alone: its bottleneck link's bytes "
            "over the link's capacity), a lower bound on the mean CCT under any schedule. "
            "A scheme's mean CCT over the bound is the most any scheduler, Stream included, "
            "could improve on it (`headroom.csv`).",
            room,
        ),
        *findings(room, imp),
        "",
        *section(
            "Sensitivity: where the trace's racks go",
            "The same grid with other placements of the trace's 150 racks "
            "(docs/fabrics.md; sweeps: " + ", ".join(f"`{d}`" for d in o.also) + "), "
            "beside this one's (`sensitivity.csv`):",
            sens,
        ),
        *sensitivity_notes(sens),
        *section(
            "Aalo's queues",
            f"Sweep `{o.aalo}` (examples/sweeps/stream-fig6-whole-aalo.toml): Aalo "
            "with the paper's 4 queues and with its own default of 10 (10 MiB x 10 "
            "each), and with 4 queues each shared max-min (`within=fair`; since "
            "2026-12-07), against Stream with 4; columns I-V are Aalo's mean CCT / "
            "Stream's per Table 3 category (`aalo_queues.csv`; every size: "
            "benches/stream_aalo_forms.py).",
            aq,
        ),
        *aalo_notes(aq),
        "## Improvement per Table 3 category (Size A)",
        "",
        md(cats),
        "",
        "Coflows per category:",
        "",
        md(counts),
        "",
    ]


if __name__ == "__main__":
    main()
