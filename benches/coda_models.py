"""The CODA scheduler's results under several replays side by side: how the
replayed coflows (the first 100 or the whole trace) and the decision model
(every flow event or every second) move each ratio of `reproduce coda-scheduler`.

Reads the output folders of `coflowkit reproduce coda-scheduler` runs (their
fig11/fig12, fig13_ablation and bins CSVs and provenance.json) and writes a
sensitivity table, one row per (replay, scenario), to OUT/README.md and
OUT/models.csv.

    python3 benches/coda_models.py \\
        --run "first 100, per event=/tmp/cs100_event" \\
        --run "first 100, every 1 s=/tmp/cs100_1s" \\
        --run "whole trace, every 1 s=docs/results/coda-scheduler" \\
        --out docs/results/coda-scheduler-models
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import pandas as pd

#: Columns taken from the reports' CSVs (scheme over CODA; above 1: CODA faster).
MAIN = ("Aalo / CODA", "Fair / CODA")
ABLATION = ("w/o L.B. / CODA", "w/o I.P. / CODA", "w/o both / CODA")
#: Late binding per bin: CCT without it over CCT with it.
BINS = ("SN", "LW")


def load(label: str, folder: str) -> tuple[pd.DataFrame, dict]:
    """One report's rows (scenario, ratios) and its provenance."""

    def csv(name: str) -> pd.DataFrame:
        path = os.path.join(folder, f"{name}.csv")
        if not os.path.exists(path):
            raise SystemExit(f"{folder}: no {name}.csv (not a reproduce coda-scheduler folder)")
        return pd.read_csv(path)

    main = pd.concat([csv("fig11_normal"), csv("fig12_challenging")]).set_index("scenario")
    rows = main[list(MAIN)].copy()
    abl = csv("fig13_ablation").set_index("scenario")
    for c in ABLATION:
        rows[c] = abl[c]
    bins = csv("bins").set_index(["scenario", "scheme"])
    for b in BINS:
        rows[f"w/o L.B. / CODA, {b}"] = [
            bins[b].get((s, "w/o L.B."), float("nan")) for s in rows.index
        ]
    rows.insert(0, "replay", label)
    with open(os.path.join(folder, "provenance.json"), encoding="utf-8") as fh:
        prov = json.load(fh)
    return rows.reset_index(), prov


def detail_lines(decisions: str, trace: str, cache_dir: str | None) -> list[str]:
    """Late binding coflow by coflow: per ablation scenario of the whole trace, how
    many coflows it speeds up and slows down (by more than 1%), and the five it
    slows most."""
    from coflowkit import runner
    from coflowkit.experiments import coda_scheduler as cs
    from coflowkit.experiments import common

    model = common.decision_params(decisions)
    keys = [s.key for s in cs.SCENARIOS if s.ablate]
    jobs = []
    for key in keys:
        spec = runner.WorkloadSpec(trace=trace, transforms=cs.BY_KEY[key].transforms)
        w = spec.load()
        rate = cs.find_error_rate(w, cs.BY_KEY[key].target, cs.BY_KEY[key].metric).error_rate
        for name in (cs.CODA, cs.NO_LB):
            policy, params = cs.scheme_params(name, rate)
            jobs.append(runner.Job(spec, policy, params + model))
    res = runner.run_jobs(jobs, 2, cache_dir)
    out = [
        "",
        f"## Late binding coflow by coflow (whole trace, decisions {decisions})",
        "",
        "CODA with late binding against CODA without it (`w/o L.B.`), the same labels: "
        "coflows more than 1% faster or slower with late binding, the net change of "
        "the total CCT, and the five coflows late binding slows most (id, bin, CCT "
        "without and with it).",
        "",
        "| scenario | faster | slower | net change of total CCT (s) | "
        "largest losses: id bin (s without -> with) | their sum (s) |",
        "|---|---:|---:|---:|---|---:|",
    ]
    for i, key in enumerate(keys):
        a = res[2 * i].coflows.set_index("coflow_id")
        b = res[2 * i + 1].coflows.set_index("coflow_id")
        ratio = a["cct_s"] / b["cct_s"]
        d = (a["cct_s"] - b["cct_s"]).sort_values(ascending=False)
        top = d.head(5)
        worst = ", ".join(
            f"{cid} {a.loc[cid, 'bin']} ({b.loc[cid, 'cct_s']:.0f} -> {a.loc[cid, 'cct_s']:.0f})"
            for cid in top.index
        )
        out.append(
            f"| {cs.BY_KEY[key].title} | {(ratio < 0.99).sum()} | {(ratio > 1.01).sum()} "
            f"| {d.sum():+.0f} | {worst} | {top.sum():.0f} |"
        )
    return out


def fmt(x) -> str:
    return "-" if pd.isna(x) else (f"{x:.3g}" if isinstance(x, float) else str(x))


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--run", action="append", required=True, metavar="LABEL=DIR")
    ap.add_argument("--out", required=True)
    ap.add_argument(
        "--detail",
        metavar="DECISIONS",
        help="also compare CODA with and without late binding coflow by coflow on the "
        "whole trace under this decision model (event or seconds), from the runs of "
        "`reproduce coda-scheduler` (read from --cache-dir when cached)",
    )
    ap.add_argument("--trace", default="../shared/traces/FB2010-1Hr-150-0.txt")
    ap.add_argument("--cache-dir", default=None, help="result cache (default: none)")
    a = ap.parse_args(argv)
    import time

    started = time.monotonic()
    frames, provs = [], []
    for spec in a.run:
        label, sep, folder = spec.partition("=")
        if not sep:
            raise SystemExit(f"--run {spec!r}: expected LABEL=DIR")
        rows, prov = load(label, folder)
        frames.append(rows)
        provs.append((label, prov))
    table = pd.concat(frames, ignore_index=True)
    os.makedirs(a.out, exist_ok=True)
    table.to_csv(os.path.join(a.out, "models.csv"), index=False)
    cols = list(table.columns)
    lines = [
        "# CODA's scheduler: the replay and the decision model, side by side",
        "",
        "Each row is a scenario of `coflowkit reproduce coda-scheduler` (CODA on labels "
        "with injected errors at the paper's identification accuracy) under one replay. "
        "Ratios are a scheme's mean CCT over CODA's (above 1: CODA faster); the last "
        "two columns are late binding's effect on the SN and LW bins (CCT without it "
        "over CCT with it; below 1: late binding slows that bin). Written by "
        "`python3 benches/coda_models.py` (command in its docstring) from the reports' "
        "CSVs.",
        "",
        "| " + " | ".join(cols) + " |",
        "|" + "---|" * len(cols),
    ]
    for _, r in table.iterrows():
        lines.append("| " + " | ".join(fmt(r[c]) for c in cols) + " |")
    lines += ["", "## The reports read", ""]
    for label, p in provs:
        cached = p.get("cached_jobs", 0)
        timing = (
            f"{p['wall_s']:.0f} s uncached"
            if cached == 0
            else f"{p['wall_s']:.0f} s, {cached} runs from the result cache"
        )
        lines.append(
            f"* {label}: `{p['command']}`, coflowkit {p['version']}, commit {p['commit']}, "
            f"{p['date']}, {timing}"
        )
    if a.detail:
        lines += detail_lines(a.detail, a.trace, a.cache_dir)
    import shlex
    import subprocess
    import time

    commit = subprocess.run(
        ["git", "describe", "--always", "--dirty"], capture_output=True, text=True
    ).stdout.strip()
    lines += [
        "",
        "## Provenance",
        "",
        f"* Command: `{shlex.join(['python3', 'benches/coda_models.py', *argv])}`",
        f"* commit {commit or 'unknown'}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
        f"* Wall time: {time.monotonic() - started:.0f} s (the --detail runs read from "
        "the result cache when there)",
    ]
    with open(os.path.join(a.out, "README.md"), "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")
    print(f"wrote {a.out}/README.md and models.csv ({len(table)} rows)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
