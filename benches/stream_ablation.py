"""Stream's mechanisms coflow by coflow: the ablation of `reproduce stream`
(Stream without Information-Relay, Child-to-Parent, Weighted-Priority, or all
three) on more DAG coflows, with what each removal changes per Table 3 category.

    python3 benches/stream_ablation.py --trace ../shared/traces/FB2010-1Hr-150-0.txt \\
        --coflows 8,50 --out docs/results/stream-ablation

For each sample size N (the first N coflows of the trace, made DAGs by the `dag`
transform, Tao-like by default, as Fig. 13), runs Stream with every mechanism and
without each, on the fabric of the report's ablation (8 pods, 1G, 4 queues), and
writes OUT/README.md (per category: mean CCT of each variant over Stream's with all
mechanisms; how many coflows each removal makes more than 1% faster or slower;
the coflows it moves most) with OUT/coflows.csv (every coflow's CCT per variant)
and the provenance. Runs go through the result cache (`--cache-dir`).

Two more sections say why. A sensitivity table runs the same variants with
`settle=true` (each class boundary crossed in its own class's threshold, as
agents evaluating eq. (5) round after round do) instead of one evaluation of
eq. (5) in the threshold of the unit's current class (the default). And for the
coflows Child-to-Parent moves most, a table per sub-coflow (stage) gives what
the run reports of Stream's state (`Result.extra`'s `stream_*` columns): its
internal id, its Child-to-Parent bytes, and the class eq. (5) gave its receivers
when they appeared and at the end, with and without Child-to-Parent and settled.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import pandas as pd

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))

from coflowkit import runner  # noqa: E402
from coflowkit.experiments import stream as S  # noqa: E402
from coflowkit.experiments.common import markdown  # noqa: E402
from coflowkit.policy_timing import machine, provenance  # noqa: E402

ALL = "all mechanisms"
#: A coflow counts as moved by a removal when its CCT changes by more than this share.
CHANGE = 0.01
#: Coflows listed per removal and sample: those it moves most, each way.
TOP = 3


#: The sensitivity's variants: `settle=true` with every mechanism and without
#: each (the same ablations).
SETTLED = "settled"
SETTLED_VARIANTS = {SETTLED: (), **{f"settled, {k}": v for k, v in S.ABLATIONS.items()}}
C2P = "no Child-to-Parent"
#: The per-flow columns of Stream's state the "why" table reads.
COLUMNS = ("stream_first_class", "stream_last_class", "stream_child_mib", "stream_internal_id")


def variants() -> dict[str, tuple]:
    """Stream's parameters per variant: all mechanisms, each ablation, then the
    settled variants of the sensitivity."""
    base = (("queues", str(S.QUEUES)),)
    settle = base + (("settle", "true"),)
    return {
        ALL: base,
        **{k: base + v for k, v in S.ABLATIONS.items()},
        **{k: settle + v for k, v in SETTLED_VARIANTS.items()},
    }


def spec(trace: str, n: int, shape: str) -> runner.WorkloadSpec:
    return runner.WorkloadSpec(trace=trace, transforms=(f"head:count={n}", f"dag:shape={shape}"))


def jobs(trace: str, n: int, shape: str, k: int, gbps: int) -> dict[str, runner.Job]:
    ws = spec(trace, n, shape)
    return {v: runner.Job(ws, "stream", p, S.fabric(k, gbps)) for v, p in variants().items()}


def table(results: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Every coflow: its size category (Table 3, Size B) and CCT per variant."""
    base = results[ALL].set_index("coflow_id")
    out = pd.DataFrame(
        {
            "category": [S.CATEGORIES[i] for i in S.category(base["size_bytes"], S.SIZE_B)],
            "size_mib": base["size_bytes"] / S.MIB,
        },
        index=base.index,
    )
    for v, df in results.items():
        out[v] = df.set_index("coflow_id")["cct_s"].reindex(out.index)
    return out


def sensitivity(t: pd.DataFrame) -> pd.DataFrame:
    """Per category: Stream's mean CCT settled over one-shot, one-shot Stream's
    without Child-to-Parent over with it, and, settled, the mean CCT without each
    mechanism over settled Stream's."""
    rows = []
    groups = [("all", t)] + [(c, t[t["category"] == c]) for c in S.CATEGORIES]
    for name, g in groups:
        if g.empty:
            continue
        row = {
            "category": name,
            "coflows": len(g),
            "settled / one-shot": g[SETTLED].mean() / g[ALL].mean(),
            "one-shot: no Child-to-Parent / all": g[C2P].mean() / g[ALL].mean(),
        }
        for v in SETTLED_VARIANTS:
            if v != SETTLED:
                row[f"{v} / settled"] = g[v].mean() / g[SETTLED].mean()
        rows.append(row)
    return pd.DataFrame(rows)


def _state(run, flows: pd.DataFrame) -> pd.DataFrame:
    """Stream's per-flow state of one run, beside the flows' coflow and stage."""
    missing = [c for c in COLUMNS if c not in run.extra]
    if missing:
        raise SystemExit(
            f"a cached Stream run lacks {missing[0]!r} (cached before Stream reported "
            "its state): run again with a fresh --cache-dir"
        )
    return flows.assign(**{c: run.extra[c] for c in COLUMNS})


def _span(x: pd.Series) -> str:
    """A class over a stage's receivers: one value, or its range."""
    lo, hi = x.min(), x.max()
    if pd.isna(lo):
        return "-"
    return f"{lo:.0f}" if lo == hi else f"{lo:.0f}-{hi:.0f}"


def why_c2p(t: pd.DataFrame, runs: dict, flows: pd.DataFrame) -> pd.DataFrame:
    """For each coflow the Child-to-Parent removal moves most (:func:`movers`), per
    stage: its internal id, bytes, Child-to-Parent bytes (the largest over its
    receivers), and the class (5) gave its receivers when they appeared and at
    the end, with every mechanism, without Child-to-Parent, and settled."""
    m = movers(t)
    ids = m.loc[m["removed"] == C2P, "coflow"].tolist() if len(m) else []
    shown = {"with all": ALL, "without": C2P, "settled": SETTLED}
    states = {k: _state(runs[v], flows) for k, v in shown.items()}
    rows = []
    for cid in ids:
        per = {k: s[s["coflow_id"] == cid].groupby("stage") for k, s in states.items()}
        base = per["with all"]
        sizes = base["bytes"].sum() / S.MIB
        for stage, g in base:
            row = {
                "coflow": int(cid),
                "stage": int(stage),
                "internal id": int(g["stream_internal_id"].max()),
                "MiB": sizes[stage],
                "child MiB": g["stream_child_mib"].max(),
            }
            for k, grp in per.items():
                sg = grp.get_group(stage)
                row[f"class {k}: first"] = _span(sg["stream_first_class"])
                row[f"class {k}: last"] = _span(sg["stream_last_class"])
            rows.append(row)
    return pd.DataFrame(rows)


def per_category(t: pd.DataFrame) -> pd.DataFrame:
    """Per category (and all): coflows, Stream's mean CCT, each removal's mean CCT
    over it, and how many coflows the removal makes faster / slower."""
    rows = []
    groups = [("all", t)] + [(c, t[t["category"] == c]) for c in S.CATEGORIES]
    for name, g in groups:
        if g.empty:
            continue
        row = {"category": name, "coflows": len(g), "Stream mean CCT (s)": g[ALL].mean()}
        for v in S.ABLATIONS:
            r = g[v] / g[ALL]
            row[f"{v} / all"] = g[v].mean() / g[ALL].mean()
            row[f"{v}: faster, slower"] = (
                f"{int((r < 1 - CHANGE).sum())}, {int((r > 1 + CHANGE).sum())}"
            )
        rows.append(row)
    return pd.DataFrame(rows)


def movers(t: pd.DataFrame) -> pd.DataFrame:
    """Per removal: the coflows it speeds up most and slows most (CCT without the
    mechanism minus with it), among those it moves by more than :data:`CHANGE`."""
    rows = []
    for v in S.ABLATIONS:
        d = (t[v] - t[ALL]).sort_values(kind="stable")
        moved = (t[v] / t[ALL] - 1).abs() > CHANGE
        for way, ids in (("faster", d.index[:TOP]), ("slower", d.index[::-1][:TOP])):
            for cid in ids:
                if not moved[cid] or (way == "faster") != (d[cid] < 0):
                    continue
                rows.append(
                    {
                        "removed": v,
                        "way": way,
                        "coflow": int(cid),
                        "category": t.at[cid, "category"],
                        "size (MiB)": t.at[cid, "size_mib"],
                        "CCT with all (s)": t.at[cid, ALL],
                        "CCT without (s)": t.at[cid, v],
                    }
                )
    return pd.DataFrame(rows)


def sample(a: argparse.Namespace, n: int) -> tuple[str, pd.DataFrame, int]:
    """One sample size: its section of the report, its coflows' CCTs per variant,
    and how many of its runs were simulated (not read from the cache)."""
    js = jobs(a.trace, n, a.shape, a.k, a.gbps)
    stats: dict = {}
    res = runner.run_jobs(list(js.values()), a.workers, a.cache_dir, stats=stats)
    runs = dict(zip(js, res, strict=True))
    t = table({v: runs[v].coflows for v in [ALL, *S.ABLATIONS]})
    for v in SETTLED_VARIANTS:
        t[v] = runs[v].coflows.set_index("coflow_id")["cct_s"].reindex(t.index)
    w = spec(a.trace, n, a.shape).load(S.fabric(a.k, a.gbps))
    why = why_c2p(t, runs, pd.DataFrame(w.flow_columns())[["coflow_id", "stage", "bytes"]])
    # What each run cost when it was simulated (kept with it in the cache).
    cpu = [r.extra.get("sim_cpu_s", float("nan")) for r in res]
    text = (
        f"## First {n} coflows ({len(t)} DAG coflows)\n\n"
        f"Simulation CPU time of the {len(res)} runs, as measured when each was "
        f"simulated: {sum(cpu):.0f} s in all, {max(cpu):.0f} s the longest.\n\n"
        "Mean CCT of each removal over Stream's with all mechanisms (below 1: "
        "the removal makes Stream faster), and how many coflows it makes more than "
        f"{CHANGE:.0%} faster and slower:\n\n"
        + markdown(per_category(t))
        + "\n\nThe coflows each removal moves most:\n\n"
        + markdown(movers(t))
        + "\n\nSensitivity: eq. (5) evaluated once in the threshold of the unit's "
        "current class (one-shot, the default) or class by class, each boundary in "
        "its own class's threshold (`settle=true`); below 1, the row's variant is "
        "faster:\n\n"
        + markdown(sensitivity(t))
        + "\n\nWhy Child-to-Parent moves these coflows: per sub-coflow (stage), "
        "its internal id (Algorithm 1; 1 is the final stage), its bytes, the "
        "Child-to-Parent bytes its receivers start with (S), and the class (5) gave "
        "its receivers when they appeared (first) and at the end (last; 0 highest, "
        f"{S.QUEUES - 1} lowest), with every mechanism, without Child-to-Parent, and "
        "with every mechanism settled:\n\n"
        + (
            markdown(why)
            if len(why)
            else f"(Child-to-Parent moves no coflow by more than {CHANGE:.0%}.)"
        )
        + "\n"
    )
    return text, t.assign(sample=n).reset_index(), stats.get("simulated", 0)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trace", required=True)
    ap.add_argument("--coflows", default="8,50", help="sample sizes, comma-separated")
    ap.add_argument("--shape", default="tao", choices=sorted(S.DAG_SHAPES))
    ap.add_argument("--k", type=int, default=8)
    ap.add_argument("--gbps", type=int, default=1)
    ap.add_argument("--out", required=True)
    ap.add_argument("--cache-dir", default=runner.default_cache_dir())
    ap.add_argument("--workers", type=int, default=1)
    a = ap.parse_args(argv)
    try:
        sizes = [int(x) for x in a.coflows.split(",")]
    except ValueError:
        ap.error(f"--coflows {a.coflows!r}: not comma-separated counts")
    if not sizes or min(sizes) < 1:
        ap.error("--coflows: counts must be positive")
    t0 = time.time()
    parts, frames, simulated = [], [], 0
    for n in sizes:
        text, frame, sims = sample(a, n)
        parts.append(text)
        frames.append(frame)
        simulated += sims
    os.makedirs(a.out, exist_ok=True)
    pd.concat(frames).to_csv(os.path.join(a.out, "coflows.csv"), index=False)
    cmd = "python3 benches/stream_ablation.py " + " ".join(sys.argv[1:] if argv is None else argv)
    head = (
        "# Stream's mechanisms coflow by coflow\n\n"
        f"Stream ({S.QUEUES} queues) with every mechanism and without each "
        f"(`reproduce stream`'s ablations), on {a.shape} DAGs "
        f"(`dag:shape={a.shape}`) of the trace's first coflows, `{S.fabric(a.k, a.gbps)}`. "
        "Categories are Table 3's Size B (MiB bounds "
        + ", ".join(f"{b:g}" for b in S.SIZE_B)
        + "). Every coflow's CCT per variant is in coflows.csv.\n\n"
    )
    prov = (
        "## Provenance\n\n"
        f"* Command: `{cmd}`\n"
        f"* {provenance()}\n"
        f"* Machine: {machine()}\n"
        f"* Wall time: {time.time() - t0:.0f} s, {simulated} runs simulated "
        "(the rest read from the result cache)\n"
    )
    with open(os.path.join(a.out, "README.md"), "w", encoding="utf-8") as fh:
        fh.write(head + "\n".join(parts) + "\n" + prov)
    print(f"wrote {a.out}/README.md")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
