"""Validates `--engine coflowsim` against CoflowSim itself, and times both.

CoflowSim is built from its public source (github.com/coflow/coflowsim) in a scratch
folder outside the repository: ``javac -d OUT $(find SRC -name '*.java')``; pass OUT
as ``--classes``. Nothing of it is copied here.

* ``random``: random small Coflow-Benchmark traces (whole-MB reducers, 3-8 ports,
  3-14 coflows, arrivals that often share an epoch); every coflow's duration (the
  8th field of CoflowSim's ``JOB-`` lines) must equal coflowkit's, bit for bit, for
  all eight schedulers.
* ``fb``: the FB trace; CoflowSim's outputs are read from ``--fb-dir`` (``FB-<ALGO>.txt``,
  one run of ``java coflowsim.CoflowSim ALGO COFLOW-BENCHMARK trace`` each, 2-14 minutes
  here), coflowkit's are timed here.
* ``--fixtures DIR`` writes the traces and CoflowSim's outputs of the first seeds for
  the Rust test (crates/coflowkit-sim/tests/coflowsim.rs), so tests need no Java.

    python benches/coflowsim_validate.py --classes /tmp/coflowsim/out --seeds 0:100 \\
        --fb-dir /work/coflowsim-out --out docs/results/coflowsim/README.md
"""

from __future__ import annotations

import argparse
import datetime
import os
import random
import subprocess
import sys
import time

import coflowkit as ck

ALGOS = {
    "fair": "FAIR",
    "pfp": "PFP",
    "fifo": "FIFO",
    "scf": "SCF",
    "ncf": "NCF",
    "tcf": "LCF",
    "varys": "SEBF",
    "aalo": "DARK",
    # CoflowSim's DARK as a variant of the aalo policy object, on CoflowSim's hooks
    "aalo:variant=coflowsim": "DARK",
}
#: The schedulers whose outputs become test fixtures (the Rust test maps each name).
FIXTURE_ALGOS = ("fair", "pfp", "fifo", "scf", "ncf", "tcf", "varys", "aalo")
FB = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "traces", "FB2010-1Hr-150-0.txt")


def random_trace(seed: int) -> str:
    """A small Coflow-Benchmark trace: ids grow along the file, reducer MB whole."""
    r = random.Random(seed)
    ports, n = r.randint(3, 8), r.randint(3, 14)
    arrivals = sorted(
        r.choice([0, r.randint(0, 40000), r.randint(0, 10240) // 1024 * 1024]) for _ in range(n)
    )
    lines = [f"{ports} {n}"]
    for i in range(n):
        m = r.randint(1, ports)
        mappers = " ".join(str(r.randrange(ports)) for _ in range(m))
        k = r.randint(1, ports)
        reducers = " ".join(
            f"{r.randrange(ports)}:{r.choice([r.randint(1, 10), r.randint(1, 200), r.randint(1, 2000)])}.0"
            for _ in range(k)
        )
        lines.append(f"{i + 1} {arrivals[i]} {m} {mappers} {k} {reducers}")
    return "\n".join(lines) + "\n"


def java_jobs(classes: str, name: str, path: str) -> dict[str, tuple[float, float, float]]:
    """CoflowSim's (admitted, finish, duration) per job name under its scheduler ``name``."""
    out = subprocess.run(
        ["java", "-cp", classes, "coflowsim.CoflowSim", name, "COFLOW-BENCHMARK", path],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return parse_jobs(out)


def parse_jobs(text: str) -> dict[str, tuple[float, float, float]]:
    jobs = {}
    for line in text.splitlines():
        if line.startswith("JOB-"):
            f = line.split()
            jobs[f[0]] = (float(f[1]), float(f[2]), float(f[7]))
    return jobs


def ours(path: str, algo: str) -> tuple[dict[str, tuple[float, float, float]], float]:
    w = ck.load_trace(path)
    name, _, rest = algo.partition(":")
    params = dict(kv.split("=", 1) for kv in rest.split(",") if kv)
    t = time.perf_counter()
    r = ck.simulate(w, name, params, engine="coflowsim", progress=False)
    wall = time.perf_counter() - t
    c = r.coflows
    jobs = {
        f"JOB-{int(i)}": (a * 1000, f * 1000, d * 1000)
        for i, a, f, d in zip(
            c["coflow_id"], c["admitted_s"], c["finish_s"], c["cct_s"], strict=True
        )
    }
    return jobs, wall


def same(java: dict, mine: dict) -> int:
    """Jobs whose duration differs (CoflowSim prints −1.0 for an unfinished one)."""
    bad = 0
    for name, (_, _, d) in java.items():
        m = mine.get(name)
        if m is None or not (round(m[2], 6) == d or (d == -1.0 and m[2] != m[2])):
            bad += 1
    return bad


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--classes", required=True, help="CoflowSim compiled with javac")
    ap.add_argument("--seeds", default="0:100", help="random traces A:B (default 0:100)")
    ap.add_argument("--fb-dir", help="directory of CoflowSim's FB outputs FB-<ALGO>.txt")
    ap.add_argument("--fixtures", help="write the first --fixture-count traces and outputs here")
    ap.add_argument("--fixture-count", type=int, default=12)
    ap.add_argument("--scratch", default="/tmp/coflowsim-validate")
    ap.add_argument("--out", help="write the report (Markdown) here")
    a = ap.parse_args()
    lo, hi = (int(x) for x in a.seeds.split(":"))
    os.makedirs(a.scratch, exist_ok=True)
    started = time.time()
    runs = bad_runs = coflows = 0
    fixture_rows = []
    for seed in range(lo, hi):
        path = os.path.join(a.scratch, f"t{seed}.txt")
        with open(path, "w") as fh:
            fh.write(random_trace(seed))
        outputs: dict[str, dict] = {}  # one Java run per CoflowSim scheduler
        for algo, java_name in ALGOS.items():
            if java_name not in outputs:
                outputs[java_name] = java_jobs(a.classes, java_name, path)
            java = outputs[java_name]
            mine, _ = ours(path, algo)
            runs += 1
            coflows += len(java)
            if same(java, mine):
                bad_runs += 1
                print(f"seed {seed} {algo}: {same(java, mine)} coflows differ", file=sys.stderr)
            if a.fixtures and seed - lo < a.fixture_count and algo in FIXTURE_ALGOS:
                for name, (adm, fin, dur) in java.items():
                    fixture_rows.append(f"t{seed}.txt,{algo},{name[4:]},{adm},{fin},{dur}")
        if a.fixtures and seed - lo < a.fixture_count:
            os.makedirs(a.fixtures, exist_ok=True)
            with open(os.path.join(a.fixtures, f"t{seed}.txt"), "w") as fh:
                fh.write(random_trace(seed))
    if a.fixtures:
        with open(os.path.join(a.fixtures, "coflowsim.csv"), "w") as fh:
            fh.write("trace,policy,coflow_id,admitted_units,finish_units,duration_units\n")
            fh.write("\n".join(fixture_rows) + "\n")
    random_wall = time.time() - started
    lines = [
        "# `--engine coflowsim` against CoflowSim",
        "",
        f"- Command: `python benches/coflowsim_validate.py --classes CLASSES --seeds {a.seeds}"
        + (f" --fb-dir {a.fb_dir}" if a.fb_dir else "")
        + "`",
        "- CoflowSim: github.com/coflow/coflowsim at b61f209, built with `javac` (OpenJDK 17) "
        "in a scratch folder.",
        f"- coflowkit {ck.__version__}, commit {git_commit()}, "
        f"{datetime.date.today().isoformat()}; uncached; 2-core machine, another job running.",
        "",
        "## Random small traces",
        "",
        f"{hi - lo} traces × {len(ALGOS)} runs each (CoflowSim's 8 schedulers, and "
        "`aalo:variant=coflowsim` on CoflowSim's hooks against DARK) = "
        f"{runs} runs, {coflows} coflow results: "
        f"**{runs - bad_runs} runs identical** coflow by coflow (duration, the 8th field of "
        f"`JOB-` lines), {bad_runs} differ. ({random_wall:.0f} s, mostly Java start-up.)",
        "",
    ]
    if a.fb_dir:
        lines += [
            "## FB2010-1Hr-150-0 (526 coflows)",
            "",
            "| coflowkit | CoflowSim | coflows identical | mean CCT CoflowSim (s) | mean CCT coflowkit (s) "
            "| ratio | CoflowSim wall (s) | coflowkit wall (s) |",
            "|---|---|---|---|---|---|---|---|",
        ]
        times = {}
        tpath = os.path.join(a.fb_dir, "times.txt")
        if os.path.exists(tpath):
            for line in open(tpath):
                k, v, *_ = line.split()
                times[k] = v
        for algo, name in ALGOS.items():
            p = os.path.join(a.fb_dir, f"FB-{name}.txt")
            mine, wall = ours(FB, algo)
            mean_mine = sum(d for _, _, d in mine.values()) / len(mine) / 1000
            if not os.path.exists(p):
                lines.append(
                    f"| {algo} | {name} | (not run) | – | {mean_mine:.4f} | – | – | {wall:.1f} |"
                )
                continue
            java = parse_jobs(open(p).read())
            mean_java = sum(d for _, _, d in java.values()) / len(java) / 1000
            lines.append(
                f"| {algo} | {name} | {len(java) - same(java, mine)}/{len(java)} | {mean_java:.4f} "
                f"| {mean_mine:.4f} | {mean_mine / mean_java:.6f} | {times.get(name, '–')} | {wall:.1f} |"
            )
        lines.append("")
    report = "\n".join(lines)
    print(report)
    if a.out:
        os.makedirs(os.path.dirname(a.out), exist_ok=True)
        with open(a.out, "w") as fh:
            fh.write(report)
    return 1 if bad_runs else 0


def git_commit() -> str:
    try:
        return subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


if __name__ == "__main__":
    sys.exit(main())
