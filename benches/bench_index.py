"""docs/results/bench/README.md: one table per scenario merged from the exactness
reports (`exactness*.md`, written by benches/exactness.py, possibly in several runs),
with a link to each report and its provenance lines.

    python3 benches/bench_index.py
"""

from __future__ import annotations

import csv
import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DIR = os.path.join(ROOT, "docs", "results", "bench")


def rows_of(path: str) -> tuple[list[str], list[list[str]]]:
    """(provenance lines, rows of its exactness table as cells) of one report.
    Only the table under the ``| scenario`` header is read: a report may add
    tables of its own after it (side-by-side times, say)."""
    head, rows, table = [], [], None
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.startswith(("Command:", "Version:", "Wall time")):
                head.append(line.strip())
            elif line.startswith("| scenario"):
                table = table is None
            elif line.startswith("| ") and table:
                rows.append([c.strip() for c in line.strip().strip("|").split("|")])
            elif not line.startswith("|") and table:
                table = False
    return head, rows


def written_at(path: str) -> tuple[str, str]:
    """Sort key: the date and time in a report's Version line (then its name), so
    that a later report replaces an earlier one's rows whatever their names."""
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            m = re.search(r"(\d{4}-\d{2}-\d{2} \d{2}:\d{2}) UTC", line)
            if line.startswith("Version:") and m:
                return m.group(1), os.path.basename(path)
    return "", os.path.basename(path)


def fixture_times() -> dict[tuple[str, str], str]:
    """Old-engine simulate times from the fixtures' runs.csv, by (scenario, policy)."""
    path = os.path.join(ROOT, "crates", "coflowkit-sim", "tests", "fixtures", "engine", "runs.csv")
    with open(path, newline="") as fh:
        return {(r["scenario"], r["policy"]): r["simulate_s"] for r in csv.DictReader(fh)}


# The report's opening: what it merges and which builds each report compares.
PREFACE = [
    "# Engine benchmarks",
    "",
    "Merged by `python3 benches/bench_index.py` from the reports below (each with its",
    "command, version and wall time). Simulate time is the engine alone; `differ` counts",
    "coflows whose finish time is more than 1e-6 relative from the old engine's fixture.",
    "Old times marked * are the fixture runs' (made earlier, under another load).",
    "The `--binary` of exactness-fb-1/2/3 was built from commit e318806, that of",
    "exactness-ft8 and exactness-fb-4 from 18f6c7b; between the two the engine and",
    "policy code changed only by refactors (Coda::decide split into its steps).",
    "Reports are merged in the order they were written (the time in their Version",
    "line), a later one replacing a policy's row.",
    "exactness-fb-6/7 and exactness-ft8b/c (2026-11-26) are the priority replays",
    "and delta decisions, built from the commit in their Version line or just",
    "before it; in exactness-fb-6/7 the old time is the build of commit 65dbeb2",
    "(the incremental engine before the replays), timed side by side (`--old`).",
    "exactness-fb-8 (2026-11-26) is pfp and sincronia's incremental forms",
    "(IncGreedy, LoadTree, FormChoice), old time again side by side with 65dbeb2.",
    "exactness-tail (2026-11-26, another machine: an Intel Xeon) is CoflowPriority's",
    "tail solves, the binary built from commit a64fcb0, old time side by side with",
    "the build of b9cb430 (just before it); its times are not comparable with the",
    "earlier reports' (EPYC), only its old / new column is.",
    "exactness-tail2 and exactness-tail3 (same machine) are TailMaxMin (kept",
    "strict-priority classes and served levels), the binary built from commit 687dadb",
    "(before the Stream fixes of 4cb4175, so its stream row checks the engine",
    "against the old stream fixtures), old time side by side with b9cb430.",
    "side-by-side-k16 (benches/side_by_side.py, same machine) is the build of a4e31b5",
    "against b9cb430 on fattree:k=16 (first 100 coflows); side-by-side-fb-baraat the",
    "same builds on the FB big switch (baraat: 1.00x with the hand-over to plain",
    "solves, against 0.85x without it in exactness-tail3).",
    "side-by-side-spark100-quiet compares 0ade084 (sparse positions sorted by a",
    "bitset) with c6d2ba4 on the first 100 FB coflows with Spark starts (CODA's",
    "scenario): pias 1.04x, coda 1.12x, the same events and CCTs;",
    "side-by-side-spark100 is the same with the test suite running beside it (noise).",
    "exactness-buckets, -2 and -3 (2026-11-27) are Buckets (backfilling",
    "visits only flows behind open first and last links) and LinkIndex (per-link sums",
    "with no path look-up; the DRF stage and LoadCache), the binary built from commit",
    "dbc38f3, old time side by side with the build of 3de1019 (just before them;",
    "-3 has no side-by-side old time). Their runs overlapped short profiling runs",
    "and a test build, so their old / new column is noisy (varys on fattree:k=8: 0.85",
    "here, 0.92 in a killed earlier run; on its own, 28.7 s against 26.8 s).",
    "exactness-local (2026-11-27, an Intel Xeon) is fair's local solves (only",
    "the paths a change reaches through the links that bound them), the binary",
    "built from commit 303da41, old time side by side with the build of",
    "6f85e7d (before them); fair-local.md has the FatTree measurements.",
    "exactness-reach and exactness-reach-fb (2026-11-27, an Intel Xeon) are local",
    "solves in TailMaxMin (Reach), the pool of kept solutions of large coflows in",
    "CoflowPriority and its put-back residual, the binary built from commit adcbfce;",
    "in exactness-reach the old time is the build of 41c558c (before them), side by",
    "side; the two ran beside each other, one per core",
    "(tail-local.md has the FatTree measurements).",
    "exactness-classes and exactness-classes-2 (2026-11-27, an Intel Xeon) are",
    "KeptClasses (the engine's class decisions and pias's queues told only the",
    "flows that started, finished or changed class), old time side by side with",
    "the build of 3206db3 (kept-classes.md has the FatTree measurements);",
    "exactness-classes-3 is 14ea136 (no tail solve when nothing moved) against",
    "09dbd39; exactness-classes-4 is 75b6cd5 (a spliced rate order, reverted:",
    "no faster) against 14ea136.",
    "exactness-classes-fb (2026-11-28) checks KeptClasses on the whole FB big",
    "switch (spq, stream, pias, baraat: 0 coflows differ), the binary built from",
    "commit 3777426; a few short builds and profiling runs shared the machine",
    "with it; old times are the fixture runs'.",
    "exactness-coda-fb and exactness-coda-ft8 (2026-11-28) are coda's cheaper",
    "passes (commits 003b306, 41c1112, 2b724f4: no newcomer scan when nothing",
    "started, runs in the rank sort, thresholds' crossing points computed once,",
    "only flows behind an open last link served), the binary built from 2b724f4,",
    "on the big switch side by side with the build of 3777426 (a 65 s profiling",
    "run of another policy overlapped the labels=identify pair).",
    "exactness-naive-tradeoff (2026-11-28) is capped buckets in naive-tradeoff's",
    "backfilling (commit b2d0a2b), with a reproduce run on the other core; old",
    "times are the fixture runs' (a side-by-side of the first 40,000 events is",
    "in the report).",
    "neck-groups.md (2026-11-28) counts, with an instrumented fair, how many",
    "writes a bottleneck-group engine would make per call (not built).",
    "exactness-chained-ft8, exactness-chained-fb and exactness-chained-fb-2",
    "(2026-11-28) are TailMaxMin's chained form (KeptClasses keeps each class's",
    "input residual and passes down where it moved) and its rate order in a",
    "BTreeSet: -ft8 the binary of e85de85 (old times the fixture runs'), -fb the",
    "binary of 0579125 (before the bulk rebuild of the order; fixture times, with",
    "a FatTree run on the other core), -fb-2 the chained form alone (a664e3a)",
    "side by side with 76cc4ea; -fb-3 the binary of e85de85 (baraat, pias);",
    "-ft8-2 the final form, fc64961, whose rate order is a lazily merged",
    "sorted vector (RateOrder) instead of the BTreeSet, which had made loaded",
    "small fabrics slower (pias on fattree:k=8 first 20,000 events: 39.5 s",
    "against 31.5 s before; 33.7 s against 32.2 s with RateOrder).",
    "-ft8-3 is afc2321 (the chained form writes every link after a plain call,",
    "a fix; stream, spq, pias).",
    "chained-classes-k48.md has the FatTree measurements.",
    "exactness-varys-madd (2026-11-28) is varys's MADD from the coflow's cached",
    "per-link loads (madd_gamma: no pass over the flows' links), side by side",
    "with ef1b174; the build is of the commit that adds this line.",
    "exactness-madd-fold (2026-11-28) is coflex's and naive-tradeoff's MADD",
    "through the same madd_gamma (caps as an option); old times the fixtures'.",
    "exactness-drain (2026-12-06) is varys's loads drained by its rates",
    "(LoadCache's drained form), ncdrf's and psp's delta answers by flow and",
    "the engine's one-pass reading of dense decisions, the binary built from",
    "commit 3bdfd22, old time side by side with the build of 7b61667 (before",
    "them); profiling runs shared the machine. Its psp row is the fixture's",
    "spare=maxmin (the full form, no delta); the default psp (spare=onepass)",
    "has no fixture and was compared with the old build coflow by coflow",
    "(README, Performance). That build computed psp's stage 1 afresh in the",
    "full form (0.87x here); the next commit keeps it per coflow in every",
    "form (first 20,000 FB events of spare=maxmin: 51.1 s old, 50.5 s that",
    "build, 39.1 s after).",
    "Whole-command times of every policy are in bench-fb.md (2026-11-26); of the",
    "13 policies under 150 s, again alone, in bench-fb-3.md (2026-11-28) and,",
    "on a freshly booted machine, bench-fb-4.md (2026-12-06); sincronia, ncdrf,",
    "varys and psp after exactness-drain, bench-fb-5.md (2026-12-06, the last",
    "run of the old build's psp on the other core for its first 4 minutes);",
    "ncdrf after its incremental backfilling round, bench-fb-6.md.",
    "fair by bottleneck groups (2026-12-06): level-solve.md compares the",
    "per-path solver kept across calls (TailMaxMin) with the level solver",
    "(LevelMaxMin, whole solves) on one loaded instance (the level_solve",
    "example); fair-groups-k8-side-by-side.md is the group form before its",
    "restarts (commit c93fc77, auto thresholds 8x/2x) against the per-path",
    "form on the whole trace on fattree:k=8, in one run; fair-groups-*.md",
    "are the final build (restarts, auto thresholds 2x/1x) on the big switch",
    "and FatTrees, whole coflowkit simulate commands; growth-4.md and",
    "growth-5.md are two runs of the growth bench for fair after them;",
    "exactness-groups is fair's default (auto: groups on both scenarios)",
    "side by side with the build of fd5c117 (before groups).",
    "Strict-priority classes by group (2026-12-06): class-groups*.md are",
    "benches/class_forms.py (the engine's class forms, per flow, by group and",
    "auto, one run after the other, with stream's dormant coflows in every",
    "form); exactness-class-groups is stream and spq side by side with the",
    "build of 815012d (before both); bench-fb-7.md the whole commands.",
    "The sparse CoflowPriority memo (2026-12-06): exactness-sparse-memo is the",
    "queue policies side by side with the build of 22aa76e, each case run 3",
    "times alternately (benches/exactness.py --repeat 3): times are the median",
    "run's, the range of the runs in brackets; bench-fb-8.md the whole commands",
    "after it and LinkCounts' deltas (ncdrf, lcof); growth-6.md aalo's growth",
    "after it; fattree-k8-stream-2.md and fattree-k16-stream-2.md",
    "stream:queues=4 after class decisions stopped re-zeroing the rates.",
    "baraat by classes (2026-12-06): exactness-baraat-classes is baraat",
    "side by side with the build of d57ded5 (before it); bench-fb-9.md and",
    "baraat-classes-fattree-*.md the whole commands on the big switch and on",
    "k = 8, 16 and 48 at 1 and 10 Gbps. bench-fb-10.md is every policy at",
    "one commit; exactness-mcs-moving is mcs reading only the flows with a",
    "rate (3 alternating runs against the build of 7f6cb0b).",
    "Proportional groups (2026-12-06): exactness-speeds is drf, coflex,",
    "naive-tradeoff and varys answering the engine by speed, with the DRF",
    "stage's drained loads and the grid walks of the backfilling (binary of",
    "5cb38bc), side by side with the build of 9939dd7 (before all three),",
    "while bench-fb-11.md (every policy, whole commands) ran on the other core;",
    "growth-7.md is varys's growth after them (short benchmark runs beside it).",
    "exactness-marks is Buckets marking the engine's finished flows at begin",
    "(commit 15f2dca) side by side with the build of 5cb38bc.",
    "Class limits (2026-12-07): exactness-limits is pias served by the",
    "engine's classes, which demote a flow at its queue's threshold (binary of",
    "8802a53; the tree that wrote the report differed only in docs), side by",
    "side with the build of 840e809 (before it); bench-fb-12.md its whole",
    "command; pias-limits-fattree.md pias on fattree:k=16 and k=48;",
    "bench-fb-13.md every policy at one commit after it.",
    "Candidate restarts (2026-12-07): exactness-level-restarts is LevelMaxMin's",
    "restarts filled over the thawed groups' links first, with the engine",
    "rescheduling each group once per decision (binary of commit 636d6cd,",
    "commits 7ab5978..636d6cd), side by side with the build of 5528d37",
    "(before them); level-restarts-fattree-k8/k16/k48.md the whole commands",
    "of stream:queues=4 and baraat; level-restarts-side-by-side.md the whole",
    "trace on fattree:k=8 and k=16, engine alone, alternating with 5528d37",
    "(after the group heaps' compaction, 5cd6916).",
    "Kept light classes (2026-12-07): exactness-sticky-classes is baraat's",
    "light coflows keeping their classes, KeptClasses passing empty classes",
    "through, and the engine scanning moving flows from one change in sixteen",
    "(binary of commit 282733e), side by side with the build of 5c14e7e",
    "(before them); a whole bursty baraat run, then the Rust test suite, ran",
    "on the other core for parts of it (psp:spare=maxmin's 1.58x among them;",
    "alternating 30,000-event runs of psp gave 1.07-1.16x, docs/architecture",
    "and engine.rs choose_flow_mode).",
    "Kept flow queues in coda (2026-12-07): exactness-coda-keyed is coda's",
    "flow queues of at least 512 flows solved by kept max-min",
    "(CoflowPriority::serve_keyed; binary of the tree committed as af8e10e),",
    "side by side with the build of 9f27c2f, a whole FatTree aalo run on the",
    "other core throughout.",
    "",
    "Classes for coflow orders (2026-12-07): exactness-class-slack is",
    "LevelClasses passing over a class whose input moved only on links that",
    "bounded none of its rates (baraat, pias, spq, stream), and",
    "exactness-rank-classes the coflow orders of fifo, scf, ncf, tcf and",
    "baraat told as sticky classes (RankClasses), both binaries of the",
    "working tree on 228ef90, side by side with the build of 228ef90; a test",
    "build shared the machine during the FB rows of exactness-rank-classes",
    "(its fifo and scf times are noisy; rerun alone in",
    "exactness-rank-classes-2).",
    "exactness-aalo-classes is aalo's order by classes with the engine's",
    "coflow sums in the group form (working tree on 1745832), side by side",
    "with the build of 228ef90, the Python suite running on the other core.",
    "exactness-renames (2026-12-07) is class path ids given back and class",
    "renames (the binary of 14d854d; no old build beside it, old times are",
    "the fixture runs'); class-renames.md has the bursty measurements.",
    "exactness-lcof-classes (2026-12-07) is lcof told as classes (working tree",
    "on e40e237), old time the build of e40e237 (lcof by rates) right after it.",
    "stream-whole-bursty-dag.md (2026-12-08) is what Stream's bursty and Tao",
    "DAG runs cost on the whole trace (issue 24's budget), and a restart for",
    "classes whose input moved, counted and not built.",
    "exactness-aalo-auto (2026-12-08) is aalo's default form=auto (classes",
    "where they apply; working tree on b7d01bb) side by side with the build",
    "of b7d01bb, whose default was rates, a FatTree bench on the other core;",
    "aalo-rates-fattree.md has form=rates on the whole trace on FatTrees,",
    "bench-fb-17.md the whole bench at 230152f (a slow hour: see the README),",
    "aalo-auto-fattree.md the new default on the big switch and FatTrees, and",
    "growth-9.md stream's growth on fattree:k=8 at 8f6d365.",
    "exactness-form-retry (2026-12-08) is FormChoice's hand-over of 1024",
    "calls instead of 4096 (pfp, sincronia; working tree on 25dce5a) side by",
    "side with the build of b7d01bb; form-choice-retry.md has the variants.",
    "",
]


def main() -> int:
    old_times = fixture_times()
    reports = sorted(glob.glob(os.path.join(DIR, "exactness*.md")), key=written_at)
    by_scenario: dict[str, dict[str, tuple[list[str], str]]] = {}
    sources = []
    for path in reports:
        head, rows = rows_of(path)
        name = os.path.basename(path)
        sources.append((name, head))
        for r in rows:
            by_scenario.setdefault(r[0], {})[r[1]] = (r, name)
    out = list(PREFACE)
    for scenario, cases in sorted(by_scenario.items()):
        out += [
            f"## {scenario}",
            "",
            "| policy | differ | max rel diff | events | new simulate (s) | old simulate (s) "
            "| old / new | report |",
            "|---|---:|---:|---:|---:|---:|---:|---|",
        ]
        for policy in sorted(cases):
            r, name = cases[policy]
            if len(r) < 10 or not r[3].isdigit():
                out.append(f"| {policy} | {r[3]} | | | | | | [{name}]({name}) |")
                continue
            old, ratio = r[8], r[9]
            if old == "-" and old_times.get((scenario, policy)):
                o = float(old_times[(scenario, policy)])
                old, ratio = f"{o:.2f}*", f"{o / float(r[7]):.2f}"
            out.append(
                f"| {policy} | {r[3]} | {r[4]} | {r[5]} | {r[7]} | {old} | {ratio} "
                f"| [{name}]({name}) |"
            )
        out.append("")
    out += ["## Reports", ""]
    for name, head in sources:
        out.append(f"* [{name}]({name}): " + "; ".join(h.rstrip() for h in head))
    others = ["growth.md", "bench.md", "coflowsim-fb.md"] + sorted(
        os.path.basename(p)
        for pat in (
            "growth-*.md",
            "bench-fb*.md",
            "fattree*.md",
            "class-groups*.md",
            "baraat-classes*.md",
        )
        for p in glob.glob(os.path.join(DIR, pat))
    )
    for extra in others:
        if os.path.exists(os.path.join(DIR, extra)):
            out.append(f"* [{extra}]({extra})")
    out.append("")
    with open(os.path.join(DIR, "README.md"), "w", encoding="utf-8") as fh:
        fh.write("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
