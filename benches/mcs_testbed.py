"""The MCS paper's testbed experiment on the number of parallel coflows (Fig. 10):
MCS, Aalo and Varys on coflowkit's testbed (8 hosts in network namespaces), each
run also simulated on the testbed's fabric, normalized to Aalo per bin.

    python3 benches/mcs_testbed.py gen --count 15 --seed 1 --out trace.txt
    python3 benches/mcs_testbed.py run --counts 5,10,15 --seeds 1,2 --out DIR   # as root
    python3 benches/mcs_testbed.py sim --counts 5,10,15 --seeds 1-50 --out sens.csv
    python3 benches/mcs_testbed.py table DIR --sensitivity sens.csv --out docs/results/mcs-testbed

The paper (../shared/papers/002_59b639202db2f4f2.txt, §VII): 8 daemon hosts on
one 1 Gbps switch; N coflows arrive at once; each is a bin of Table IV drawn with
the bin's share of the FB trace's coflows (SN 52%, LN 16%, SW 15%, LW 17%), with
the narrow bound scaled down to 5 flows ("randomly chose its width in [1, 5),
and randomly chose its length in [1, 5) MB" for SN); MCS with Δ_i = 2^i,
p_i = i, θ^n_i = 10·2^(i-1) MB, θ^w_i = 2^(i-1) MB; Aalo with its defaults
(K = E = 10, 10 MB); each point the mean of five repetitions.

What the paper leaves open, and coflowkit's choice (the long lengths an option):

* wide widths: from 5 up to what 8 hosts allow (hosts² less the host-to-self
  pairs); a coflow is drawn as m senders and r receivers (m, r uniform in 1..8,
  hosts drawn without replacement) until its width (pairs of distinct hosts, the
  testbed's flows) is in the bin's range;
* long lengths: uniform in [5, 25) MB (`--long-mb`); the paper samples them
  "from the Facebook workload (scaled-down)" with no scale given. 25 MB keeps a
  15-coflow run on the 25 Mbit/s testbed to two or three minutes;
* every flow of a coflow has the coflow's length; all arrive at time 0.

`run` calls `coflowkit testbed run --trace T --coflows N --bytes-scale 1
--time-scale 1` (sizes as drawn; the links run at the testbed's default 25
Mbit/s, not 1 Gbps, so a CCT is about 40 times the paper's and the 20 ms
coordination interval is relatively 40 times shorter). A run whose directory
has comparison.json is not run again. `table` bins each coflow by its testbed
width and length (narrow: at most 4 flows; short: length below 5 MiB), pools the
coflows of every seed per (N, bin, policy) and writes README.md (with the
paper's claims as rows), normalized.csv, claims.csv, fidelity.csv (real against
simulated per policy and bin), coflows.csv (every run's coflows, real and
simulated), sensitivity.csv (with `--sensitivity`: the CSV `sim` wrote, more
draws and other settings simulated only) and provenance.json. Given a report
directory instead of the runs' (no n*-s* runs, its coflows.csv), `table`
re-renders the report from it, keeping the runs' provenance and naming the
rendering beside it.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import random
import subprocess
import sys
import time

import pandas as pd

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))

from coflowkit.experiments.common import markdown  # noqa: E402
from coflowkit.policy_timing import machine, provenance  # noqa: E402

HOSTS = 8
MIB = 1048576.0
#: Table IV of the MCS paper: the bins' shares of the FB trace's coflows.
BIN_SHARE = (("SN", 0.52), ("LN", 0.16), ("SW", 0.15), ("LW", 0.17))
#: The testbed's scaled bounds: narrow below 5 flows, short below 5 MB.
NARROW_BELOW = 5
SHORT_BELOW_MB = 5.0
SHORT_MB = (1.0, 5.0)
LONG_MB = (5.0, 25.0)
#: The MCS testbed parameters (§VII-A), in coflowkit's names.
MCS_PARAMS = {
    "deltas": "2,4,8,16",
    "priorities": "1,2,3,4,5",
    "narrow_width": "4",
    "narrow_first_mb": "10",
    "narrow_multiplier": "2",
    "wide_first_mb": "1",
    "wide_multiplier": "2",
}
POLICIES = {"mcs": MCS_PARAMS, "aalo": {}, "varys": {}}
#: The simulation-only rows of the runs' own setting (`sim` with the defaults).
RUNS_LABEL = f"sim, long {LONG_MB[0]:g}-{LONG_MB[1]:g} MiB"
#: Fig. 10's claims, at the best N ("up to"): (bin, compared policy, paper value
#: of compared / Aalo or MCS / Varys, what the paper says).
CLAIMS = (
    ("SN", "mcs/aalo", 0.10, "MCS reduces SN CCT by up to 90% vs Aalo (15 coflows)"),
    ("SN", "mcs/varys", 1.20, "the gap between MCS and Varys is within 20% (SN)"),
    ("LN", "mcs/aalo", 0.19, "LN: up to 81% lower than Aalo, very similar to Varys"),
    ("SW", "mcs/aalo", 0.30, "SW: up to 70% lower than Aalo"),
    ("LW", "mcs/aalo", 0.90, "LW: up to 10% lower than Aalo"),
)


def width_of(senders: list[int], receivers: list[int]) -> int:
    """Flows between distinct hosts (the testbed drops host-to-self pairs)."""
    return len(senders) * len(receivers) - len(set(senders) & set(receivers))


def draw_coflow(rng: random.Random, bin_: str, hosts: int, long_mb: tuple[float, float]):
    """(senders, receivers, length in MiB) of one coflow of bin ``bin_``."""
    narrow = bin_[1] == "N"
    while True:
        m, r = rng.randint(1, hosts), rng.randint(1, hosts)
        senders = sorted(rng.sample(range(hosts), m))
        receivers = sorted(rng.sample(range(hosts), r))
        w = width_of(senders, receivers)
        if w >= 1 and (w < NARROW_BELOW) == narrow:
            break
    lo, hi = SHORT_MB if bin_[0] == "S" else long_mb
    return senders, receivers, rng.uniform(lo, hi)


def generate(count: int, seed: int, hosts: int = HOSTS, long_mb=LONG_MB) -> str:
    """A Coflow-Benchmark trace of ``count`` coflows arriving at 0 on ``hosts``
    racks: each reducer line carries length × senders MiB (split evenly)."""
    if count < 1:
        raise ValueError(f"count must be at least 1, got {count}")
    if not (SHORT_BELOW_MB <= long_mb[0] < long_mb[1]):
        raise ValueError(
            f"long lengths must be an interval from {SHORT_BELOW_MB} MiB up, got {long_mb}"
        )
    rng = random.Random(seed)
    lines = [f"{hosts} {count}"]
    for cid in range(1, count + 1):
        u, acc, bin_ = rng.random(), 0.0, BIN_SHARE[-1][0]
        for name, share in BIN_SHARE:
            acc += share
            if u < acc:
                bin_ = name
                break
        senders, receivers, length = draw_coflow(rng, bin_, hosts, long_mb)
        per_reducer = length * len(senders)
        lines.append(
            " ".join(
                [str(cid), "0", str(len(senders)), *map(str, senders), str(len(receivers))]
                + [f"{r}:{per_reducer:.6f}" for r in receivers]
            )
        )
    return "\n".join(lines) + "\n"


def run_dir(out: str, count: int, seed: int, policy: str) -> str:
    return os.path.join(out, f"n{count}-s{seed}", policy)


def testbed_command(
    trace: str, count: int, policy: str, params: dict, out: str, extra: tuple = ()
) -> list[str]:
    """The `coflowkit testbed run` of one run: sizes and arrivals as in ``trace``
    (scale factors 1), unless ``extra`` says otherwise."""
    cmd = [sys.executable, "-m", "coflowkit", "testbed", "run", "--hosts", str(HOSTS)]
    cmd += ["--trace", trace, "--coflows", str(count), "--bytes-scale", "1"]
    cmd += ["--time-scale", "1", "--policy", policy, "--out", out, *extra]
    for k, v in params.items():
        cmd += ["--param", f"{k}={v}"]
    return cmd


def run_testbed(cmd: list[str], what: str) -> None:
    """Runs one testbed command (coflowkit from this tree) and prints its wall time."""
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    t0 = time.time()
    subprocess.run(cmd, check=True, env=env)
    print(f"{what}: {time.time() - t0:.0f} s", flush=True)


def run(out: str, counts: list[int], seeds: list[int], policies: list[str], long_mb) -> None:
    for count in counts:
        for seed in seeds:
            trace = os.path.join(out, f"n{count}-s{seed}", "trace.txt")
            os.makedirs(os.path.dirname(trace), exist_ok=True)
            with open(trace, "w") as fh:
                fh.write(generate(count, seed, long_mb=long_mb))
            for policy in policies:
                d = run_dir(out, count, seed, policy)
                if os.path.exists(os.path.join(d, "comparison.json")):
                    continue
                cmd = testbed_command(trace, count, policy, POLICIES[policy], d)
                run_testbed(cmd, f"n={count} seed={seed} {policy}")


COLUMNS = ["count", "seed", "policy", "which", "coflow", "bin", "cct_s", "isolated_s"]


def simulated(
    counts: list[int],
    seeds: list[int],
    long_mbs: list[tuple[float, float]],
    gbps: float = 25e6 / 2**30,
    decision_s: float | None = None,
):
    """The same draws simulated only (no traffic), on 8 hosts at the testbed's
    nominal 25 Mbit/s (a uniform link rate leaves every ratio unchanged), with
    the testbed's own workload transform: rows as :func:`load`'s, with ``which``
    naming the long-length range. ``gbps`` (CoflowSim's 2^30 bit/s) and
    ``decision_s`` (every policy decides only every ``decision_s`` seconds,
    ``realloc=interval``, as a master with coordination interval Δ; None: at
    every event) model other testbeds, such as the paper's 1 Gbps one."""
    import coflowkit as ck
    from coflowkit.runtime import testbed as TB

    rows = []
    fabric = f"bigswitch:ports={HOSTS},gbps={gbps!r}"
    when = {} if decision_s is None else {"realloc": "interval", "decision_s": str(decision_s)}
    label = "" if decision_s is None else f", decisions every {decision_s:g} s"
    if gbps != 25e6 / 2**30:
        label += f", {gbps:g} gbps"
    tmp = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"mcs-testbed-{os.getpid()}.txt")
    try:
        for lo, hi in long_mbs:
            for count in counts:
                for seed in seeds:
                    with open(tmp, "w") as fh:
                        fh.write(generate(count, seed, long_mb=(lo, hi)))
                    w = TB.workload(tmp, HOSTS, count, 1.0, 1.0, 0.0)
                    for policy, params in POLICIES.items():
                        c = ck.simulate(
                            w, policy, params={**params, **when}, fabric=fabric, progress=False
                        ).coflows
                        for r in c.itertuples():
                            rows.append(
                                (
                                    count,
                                    seed,
                                    policy,
                                    f"sim, long {lo:g}-{hi:g} MiB{label}",
                                    int(r.coflow_id),
                                    bin_of(int(r.width), float(r.length_bytes)),
                                    float(r.cct_s),
                                    float(r.isolated_s),
                                )
                            )
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return pd.DataFrame(rows, columns=COLUMNS)


def bin_of(width: int, length_bytes: float, scale: float = 1.0) -> str:
    """Table IV's bin of a coflow whose sizes were multiplied by ``scale``."""
    return ("S" if length_bytes < SHORT_BELOW_MB * MIB * scale else "L") + (
        "N" if width < NARROW_BELOW else "W"
    )


def load(out: str, prefix: str = "n", scale: float = 1.0) -> pd.DataFrame:
    """Every run's coflows, real and simulated: count, seed, policy, which,
    coflow_id, bin, cct_s, isolated_s (the coflow alone on the fabric, simulated;
    NaN where a run's table lacks it). One error naming a missing file. ``out``
    may also be a report directory (no runs, the coflows.csv `table` wrote).
    Runs are ``out/{prefix}X-sS/POLICY`` (``count`` is X); ``scale``: the runs'
    factor on sizes, for the bins."""
    rows = []
    runs = sorted(glob.glob(os.path.join(out, f"{prefix}*-s*", "*", "comparison.json")))
    saved = os.path.join(out, "coflows.csv")
    if not runs and os.path.exists(saved):
        # A report directory: its coflows.csv is this table, written by `table`.
        df = pd.read_csv(saved)
        if list(df.columns) != COLUMNS:
            raise SystemExit(f"{saved}: columns {list(df.columns)}, expected {COLUMNS}")
        return df
    for d in runs:
        run = os.path.dirname(d)
        policy = os.path.basename(run)
        n, s = os.path.basename(os.path.dirname(run))[len(prefix) :].split("-s")
        for which, path in (("real", "coflows.csv"), ("sim", os.path.join("sim", "coflows.csv"))):
            p = os.path.join(run, path)
            if not os.path.exists(p):
                raise SystemExit(f"{p}: missing (the run did not finish)")
            c = pd.read_csv(p)
            for r in c.itertuples():
                rows.append(
                    (
                        int(n),
                        int(s),
                        policy,
                        which,
                        int(r.coflow_id),
                        bin_of(int(r.width), float(r.length_bytes), scale),
                        float(r.cct_s),
                        float(getattr(r, "isolated_s", float("nan"))),
                    )
                )
    if not rows:
        raise SystemExit(f"{out}: no finished run (n*-s*/POLICY/comparison.json)")
    return pd.DataFrame(rows, columns=COLUMNS)


def normalized(df: pd.DataFrame) -> pd.DataFrame:
    """Per (which, count, bin): each policy's mean CCT over the coflows of every
    seed, MCS / Aalo, Varys / Aalo and MCS / Varys; only seeds every policy ran.
    ``bound``: the bin's mean isolated CCT (each coflow alone, simulated) over
    Aalo's mean CCT, below which no schedule can bring a policy / Aalo."""
    full = df.groupby(["count", "seed"])["policy"].nunique()
    done = {k for k, v in full.items() if v == len(POLICIES)}
    df = df[[(c, s) in done for c, s in zip(df["count"], df["seed"], strict=True)]]
    out = []
    for (which, count, bin_), g in df.groupby(["which", "count", "bin"]):
        m = g.groupby("policy")["cct_s"].mean()
        n = int((g["policy"] == "aalo").sum())
        seeds = int(g["seed"].nunique())
        out.append(
            {
                "which": which,
                "count": count,
                "bin": bin_,
                "coflows": n,
                "seeds": seeds,
                "mcs_s": m["mcs"],
                "aalo_s": m["aalo"],
                "varys_s": m["varys"],
                "mcs/aalo": m["mcs"] / m["aalo"],
                "varys/aalo": m["varys"] / m["aalo"],
                "mcs/varys": m["mcs"] / m["varys"],
                "bound": g.loc[g["policy"] == "aalo", "isolated_s"].mean() / m["aalo"],
            }
        )
    return pd.DataFrame(out)


def verdict(ours: float, paper: float) -> str:
    """ "Within 20%" is met at or below the paper's value, "up to x% lower" when
    ours is as low: both read as ours <= paper * 1.15."""
    if ours != ours:
        return "no coflow of this bin"
    return "met" if ours <= paper * 1.15 else "not met"


def claims(norm: pd.DataFrame, draws: pd.DataFrame | None = None) -> pd.DataFrame:
    """Each claim at the best N (the lowest ratio over N): real, simulated, and,
    when ``draws`` (normalized rows of the simulation-only draws in the runs'
    setting) is given, over those draws, with their bound and verdict."""
    rows = []
    sources = [("real", norm), ("sim", norm)]
    if draws is not None:
        sources.append(("draws", draws.assign(which="draws")))
    for bin_, col, paper, text in CLAIMS:
        row = {"claim": text, "bin": bin_, "ratio": col, "paper": paper}
        for which, frame in sources:
            g = frame[(frame["which"] == which) & (frame["bin"] == bin_)]
            if g.empty:
                row[which], row[f"{which}_n"], row["bound"] = float("nan"), "", float("nan")
                continue
            best = g.loc[g[col].idxmin()]
            row[which], row[f"{which}_n"] = float(best[col]), int(best["count"])
            if which == sources[-1][0]:
                row["bound"] = float(best["bound"]) if col.endswith("/aalo") else float("nan")
        row["ratio_to_paper"] = row["real"] / paper
        row["verdict"] = verdict(row["real"], paper)
        if draws is not None:
            row["draws_verdict"] = verdict(row["draws"], paper)
        rows.append(row)
    return pd.DataFrame(rows)


def fidelity(df: pd.DataFrame) -> pd.DataFrame:
    """Per policy and bin: the runs' coflows, real over simulated mean CCT, and
    the median per-coflow |real / simulated - 1| (the testbed's own check)."""
    key = ["count", "seed", "policy", "coflow"]
    real = df[df["which"] == "real"].set_index(key)
    sim = df[df["which"] == "sim"].set_index(key)[["cct_s"]].rename(columns={"cct_s": "sim_s"})
    both = real.join(sim, how="inner").reset_index()
    both["err"] = (both["cct_s"] / both["sim_s"] - 1).abs()
    rows = []
    for policy in sorted(both["policy"].unique()):
        p = both[both["policy"] == policy]
        for bin_ in [*sorted(p["bin"].unique()), "all"]:
            g = p if bin_ == "all" else p[p["bin"] == bin_]
            rows.append(
                {
                    "policy": policy,
                    "bin": bin_,
                    "coflows": len(g),
                    "real / sim mean CCT": g["cct_s"].mean() / g["sim_s"].mean(),
                    "median per-coflow |error|": g["err"].median(),
                    "coflows over 50% off": int((g["err"] > 0.5).sum()),
                }
            )
    return pd.DataFrame(rows)


def volume_gib(text: str) -> float:
    """Bytes a generated trace carries (reducer totals), in GiB."""
    total = 0.0
    for line in text.strip().split("\n")[1:]:
        x = line.split()
        m = int(x[2])
        total += sum(float(y.split(":")[1]) for y in x[4 + m :])
    return total / 1024


NOT_REPRODUCED = """## Figs. 11-12 elsewhere; Table II not reproduced

* **Figs. 11-12** (load and batch arrivals) are in
  [../mcs-testbed-load](../mcs-testbed-load/README.md) (`benches/mcs_load.py`),
  with every size and byte threshold scaled by 1/20: a 100-coflow draw of this
  generator (seed 1) carries {gib:.1f} GiB, which this testbed's 8 links of 25
  Mbit/s move in no less than {minutes:.0f} minutes per run at full size (every
  link busy all the time), {hours:.0f} hours for three policies at four loads,
  five times.
* **Table II** (Pearson correlation of width with input size and with coflow
  size for TPC-H and TPC-DS at scale factors 5, 10, 15) needs the Hadoop logs of
  the 22 TPC-H and 62 TPC-DS queries run through Hive at those scale factors
  (per job: input bytes, mappers, reducers, shuffle bytes). coflowkit has no such
  workload and this machine no Hadoop/Hive cluster to produce one; the FB trace
  has no input sizes. Table I (the FB trace) is reproduced exactly
  (docs/results/mcs).
"""


def not_reproduced() -> str:
    gib = volume_gib(generate(100, 1))
    # 8 senders at 25 Mbit/s (10^6 bit) each, all busy at once at best
    minutes = gib * 2**30 * 8 / (8 * 25e6) / 60
    return NOT_REPRODUCED.format(gib=gib, minutes=minutes, hours=60 * minutes / 60)


SENSITIVITY = """## Simulation only: more draws, and the long lengths

The runs above are five draws per N. The same generator simulated only (`sim`:
the testbed's workload transform on 8 hosts at 25 Mbit/s; for seeds 1-5 these
are the runs' own simulations up to the link rate), with many more draws per N
and with long lengths drawn from other ranges than the runs' 5-25 MiB. `bound`
is the bin's mean isolated CCT over Aalo's mean CCT: no schedule brings a
policy / Aalo below it. Rows "1 gbps" model the paper's testbed (1 Gbps links),
with every policy deciding at every event or only every 20 ms (Aalo's Δ,
`realloc=interval`). Commands:

```sh
S="python3 benches/mcs_testbed.py sim --counts 5,10,15 --seeds 1-50"
$S --long-mb 5,25 --long-mb 5,10 --long-mb 5,100 --long-mb 5,400 --out sens.csv
$S --long-mb 5,25 --gbps 1 --append --out sens.csv
$S --long-mb 5,25 --gbps 1 --decision-s 0.02 --append --out sens.csv
```
"""


def findings(cl: pd.DataFrame, sens: pd.DataFrame) -> list[str]:
    """What the bound and the 1 Gbps rows say about the SN claim, from the data."""
    sn = cl[(cl["bin"] == "SN") & (cl["ratio"] == "mcs/aalo")].iloc[0]
    fast = f"{RUNS_LABEL}, 1 gbps"
    slow = f"{RUNS_LABEL}, decisions every 0.02 s, 1 gbps"
    pick = lambda w: sens[(sens["which"] == w) & (sens["bin"] == "SN")]  # noqa: E731
    out = [
        "**What locates the SN gap.** Over the simulated draws, at the N where MCS / Aalo",
        f"is lowest ({sn['draws']:.3g}, N={sn['draws_n']}), the SN coflows' mean isolated CCT",
        f"is {sn['bound']:.3g} of Aalo's mean CCT: Aalo keeps them at {1 / sn['bound']:.2g}",
        "times their isolated time on average, so no schedule, clairvoyant or not, brings",
        f"SN below {sn['bound']:.3g} of Aalo. The paper's {sn['paper']:g} needs its Aalo to keep",
        f"them at {1 / sn['paper']:.2g} times or more.",
    ]
    a, b = pick(fast), pick(slow)
    if not a.empty and not b.empty:
        a, b = a.set_index("count"), b.set_index("count")
        n = int(max(a.index))
        out += [
            "The coordination interval does not explain it: with the paper's 1 Gbps links,",
            f"MCS / Aalo on SN at N={n} is {a.loc[n, 'mcs/aalo']:.3g} deciding at every event and",
            f"{b.loc[n, 'mcs/aalo']:.3g} with every policy deciding only every 20 ms (Aalo's Δ), and",
            f"the SN bound {a.loc[n, 'bound']:.3g} and {b.loc[n, 'bound']:.3g}.",
        ]
    return out + [""] + bin_findings(cl, sens)


def _span(values) -> str:
    lo, hi = float(min(values)), float(max(values))
    return f"{lo:.2g}" if f"{lo:.2g}" == f"{hi:.2g}" else f"{lo:.2g}-{hi:.2g}"


def bin_findings(cl: pd.DataFrame, sens: pd.DataFrame) -> list[str]:
    """For each bin other than SN whose MCS / Aalo claim is not met: whether the paper's
    value is below the bound at every N (no schedule reaches it on this
    workload), and what clairvoyant Varys and MCS reach; from the draws of the
    runs' setting and the testbed runs' rows of ``cl``'s source."""
    out = []
    draws = sens[sens["which"] == RUNS_LABEL]
    rows = cl[(cl["ratio"] == "mcs/aalo") & (cl["bin"] != "SN") & (cl["verdict"] == "not met")]
    for _, c in rows.iterrows():
        b, paper = c["bin"], float(c["paper"])
        d = draws[draws["bin"] == b].sort_values("count")
        if d.empty:
            continue
        ns = ", ".join(str(int(n)) for n in d["count"])
        head = f"**{b}.** Over the simulated draws (N = {ns}), the {b} bound is"
        text = [
            f"{head} {_span(d['bound'])} of Aalo, clairvoyant Varys reaches",
            f"{_span(d['varys/aalo'])} and MCS {_span(d['mcs/aalo'])}; the paper has MCS at {paper:g}.",
        ]
        reach = d[d["bound"] < paper]
        if reach.empty:
            text.append(
                f"That is below the bound at every N: no schedule brings {b} to the paper's"
                " value on this workload, as for SN."
            )
        else:
            at = ", ".join(str(int(n)) for n in reach["count"])
            text.append(f"The bound is below the paper's value at N = {at}, so a schedule could")
            if (d["varys/aalo"] > paper).all():
                text.append(
                    "reach it, but clairvoyant Varys does not at any N. Why MCS gains"
                    f" {'nothing' if (d['mcs/aalo'] > 0.95).all() else 'less than Varys'}"
                    f" on {b} over Aalo is not located."
                )
            else:
                text.append(f"reach it, and Varys does; why MCS does not on {b} is not located.")
        out += text + [""]
    return out


HEADER = """# MCS on coflowkit's testbed: the number of parallel coflows (MCS paper Fig. 10)

Written by `benches/mcs_testbed.py` (its docstring states the setting and every
choice the paper leaves open). N coflows arrive at once on 8 hosts; each bin's
mean CCT over the coflows of all seeds, normalized to Aalo (below 1: faster
than Aalo). *real*: the testbed run; *sim*: the same workload simulated on the
testbed's fabric (links at the measured goodput).

Seeds (repetitions): {seeds} (the paper: five).

## The paper's claims (Fig. 10, at the best N)
"""


def at_n(values, counts) -> list[str]:
    """ "value (N=n)" per claim."""
    return [f"{x:.3g} (N={n})" for x, n in zip(values, counts, strict=True)]


def claims_table(cl: pd.DataFrame, draws: pd.DataFrame | None) -> pd.DataFrame:
    """The claims as the report shows them."""
    rows = pd.DataFrame(
        {
            "claim": cl["claim"],
            "bin": cl["bin"],
            "ratio": cl["ratio"],
            "paper": cl["paper"],
            "coflowkit real": at_n(cl["real"], cl["real_n"]),
            "coflowkit sim": at_n(cl["sim"], cl["sim_n"]),
            "real / paper": cl["ratio_to_paper"],
            "verdict (real at most 1.15x the paper's)": cl["verdict"],
        }
    )
    if draws is not None:
        n_draws = int(draws["seeds"].max())
        rows[f"sim, {n_draws} draws"] = at_n(cl["draws"], cl["draws_n"])
        rows[f"verdict, {n_draws} draws"] = cl["draws_verdict"]
    rows["bound (isolated / Aalo), same N"] = cl["bound"]
    return rows


PER_N_COLUMNS = {
    "which": "run",
    "count": "N",
    "mcs_s": "MCS (s)",
    "aalo_s": "Aalo (s)",
    "varys_s": "Varys (s)",
    "mcs/aalo": "MCS / Aalo",
    "varys/aalo": "Varys / Aalo",
    "mcs/varys": "MCS / Varys",
}


def write_tables(
    out: str, dest: str, tables: dict, command: str, wall_s: float | None, rerender: bool
) -> dict:
    """Writes each table to ``dest/NAME.csv`` and the provenance to
    ``dest/provenance.json``; returns the provenance. ``rerender``: ``out`` is
    a report directory, not the runs: its runs' provenance stays, and this
    rendering is named beside it."""
    prov = {"command": command, "version": provenance(), "machine": machine()}
    prov["wall_s_of_the_runs"] = wall_s
    old = os.path.join(out, "provenance.json")
    if rerender and os.path.exists(old):
        with open(old) as fh:
            prov = {k: v for k, v in json.load(fh).items() if k != "rendered"}
        prov["rendered"] = f"{provenance()} (this text, from the committed coflows.csv)"
    os.makedirs(dest, exist_ok=True)
    for name, t in tables.items():
        t.to_csv(os.path.join(dest, f"{name}.csv"), index=False)
    with open(os.path.join(dest, "provenance.json"), "w") as fh:
        json.dump(prov, fh, indent=2, sort_keys=True)
    return prov


def table(
    out: str, dest: str, command: str, wall_s: float | None, sensitivity: str | None = None
) -> None:
    """Reads the runs in ``out`` (and the `sim` CSV ``sensitivity``) and writes
    the report and its tables to ``dest``."""
    df = load(out)
    norm = normalized(df)
    sens = pd.read_csv(sensitivity) if sensitivity else None
    draws = None
    if sens is not None:
        draws = sens[sens["which"] == RUNS_LABEL]
        if draws.empty:
            raise SystemExit(f"{sensitivity}: no rows of the runs' setting ({RUNS_LABEL!r})")
    cl = claims(norm, draws)
    fid = fidelity(df)
    rerender = not glob.glob(os.path.join(out, "n*-s*"))
    tables = {"coflows": df, "normalized": norm, "claims": cl, "fidelity": fid}
    if sens is not None:
        tables["sensitivity"] = sens
    prov = write_tables(out, dest, tables, command, wall_s, rerender)

    seeds = ", ".join(map(str, sorted(df["seed"].unique())))
    lines = [HEADER.format(seeds=seeds), markdown(claims_table(cl, draws)), ""]
    if sens is not None:
        lines += findings(cl, sens)
    lines += ["## Per N and bin", "", markdown(norm.rename(columns=PER_N_COLUMNS))]
    if sens is not None:
        lines += ["", SENSITIVITY, markdown(sens)]
    lines += ["", "## The testbed against its simulation (every run, every seed and N)", ""]
    lines += [markdown(fid), "", not_reproduced()]
    lines += ["", "## Provenance", ""] + [f"* {k}: {v}" for k, v in sorted(prov.items())]
    with open(os.path.join(dest, "README.md"), "w") as fh:
        fh.write("\n".join(lines) + "\n")


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("gen")
    g.add_argument("--count", type=int, required=True)
    g.add_argument("--seed", type=int, default=1)
    g.add_argument("--long-mb", default="5,25")
    g.add_argument("--out", required=True)
    r = sub.add_parser("run")
    r.add_argument("--counts", default="5,10,15")
    r.add_argument("--seeds", default="1,2,3,4,5")
    r.add_argument("--policies", default="mcs,aalo,varys")
    r.add_argument("--long-mb", default="5,25")
    r.add_argument("--out", required=True)
    m = sub.add_parser("sim", help="the draws simulated only: the sensitivity table")
    m.add_argument("--counts", default="5,10,15")
    m.add_argument("--seeds", default="1-50", help="A-B or a list")
    m.add_argument("--long-mb", action="append", default=None, help="LO,HI (repeatable)")
    m.add_argument("--gbps", type=float, default=25e6 / 2**30, help="link rate (2^30 bit/s)")
    m.add_argument("--decision-s", type=float, default=None, help="decide every S seconds")
    m.add_argument("--append", action="store_true", help="add the rows to --out")
    m.add_argument("--out", required=True, help="a CSV of the normalized ratios")
    t = sub.add_parser("table")
    t.add_argument("dir")
    t.add_argument("--out", required=True)
    t.add_argument("--command", default="", help="the run command, for the provenance")
    t.add_argument("--wall-s", type=float, default=None, help="the runs' wall time")
    t.add_argument("--sensitivity", default=None, help="a CSV written by `sim`")
    a = ap.parse_args(argv)
    ints = lambda s: [int(x) for x in s.split(",")]  # noqa: E731
    if a.cmd in ("gen", "run"):
        lo, hi = (float(x) for x in a.long_mb.split(","))
    if a.cmd == "sim":
        seeds = (
            list(range(int(a.seeds.split("-")[0]), int(a.seeds.split("-")[1]) + 1))
            if "-" in a.seeds
            else ints(a.seeds)
        )
        ranges = [tuple(float(x) for x in r.split(",")) for r in (a.long_mb or ["5,25"])]
        norm = normalized(simulated(ints(a.counts), seeds, ranges, a.gbps, a.decision_s))
        if a.append and os.path.exists(a.out):
            norm = pd.concat([pd.read_csv(a.out), norm], ignore_index=True)
        norm.to_csv(a.out, index=False)
        print(markdown(norm))
        return 0
    if a.cmd == "gen":
        with open(a.out, "w") as fh:
            fh.write(generate(a.count, a.seed, long_mb=(lo, hi)))
    elif a.cmd == "run":
        bad = [p for p in a.policies.split(",") if p not in POLICIES]
        if bad:
            ap.error(f"--policies: {', '.join(bad)} not among {', '.join(POLICIES)}")
        run(a.out, ints(a.counts), ints(a.seeds), a.policies.split(","), (lo, hi))
    else:
        table(a.dir, a.out, a.command, a.wall_s, a.sensitivity)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
