"""The `coflowkit` command line.

Every user mistake (bad trace, unknown policy or parameter, missing file) prints one
line `coflowkit: error: ...` and exits with status 2; no traceback.
"""

from __future__ import annotations

import argparse
import math
import os
import shlex
import sys

import numpy as np

from coflowkit import __version__, api, metrics, runner
from coflowkit._core import CoflowkitError, SimulationError
from coflowkit.options import default_trace, parse_kv


class UsageError(Exception):
    pass


def parse_policy_list(text: str) -> list[tuple[str, str, dict[str, str]]]:
    """`a,b:K=V:K2=V2,c` -> [(label, name, params)]."""
    out = []
    for part in [p.strip() for p in text.split(",") if p.strip()]:
        name, *kvs = part.split(":")
        out.append((part, name.strip(), parse_kv(kvs, what=f"policy option in '{part}'")))
    if not out:
        raise UsageError("--policies is empty")
    return out


def workload_spec(args) -> runner.WorkloadSpec:
    if args.first is not None and args.first < 1:
        raise UsageError(f"--first must be >= 1, got {args.first}")
    if args.trace and args.synthetic:
        raise UsageError("give either --trace or --synthetic, not both")
    transforms = tuple(args.transform or ())
    if args.trace:
        if not os.path.exists(args.trace):
            raise UsageError(f"{args.trace}: no such file")
        return runner.WorkloadSpec(
            trace=args.trace, format=args.format, first=args.first, transforms=transforms
        )
    if args.synthetic:
        return runner.WorkloadSpec(
            synthetic=args.synthetic, seed=args.seed, first=args.first, transforms=transforms
        )
    raise UsageError("give a workload: --trace PATH or --synthetic fb")


def add_workload_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--trace", help="trace file (benchmark, sincronia, CSV or Parquet flow table)")
    p.add_argument(
        "--format",
        choices=["benchmark", "sincronia", "flows"],
        help="trace format (default: detected from the content)",
    )
    p.add_argument("--synthetic", choices=["fb"], help="generated workload instead of a trace")
    p.add_argument("--seed", type=int, default=0, help="seed of the synthetic workload (default 0)")
    p.add_argument(
        "--first",
        type=int,
        default=None,
        metavar="N",
        help="keep only the first N coflows by arrival (quick runs; after the transforms)",
    )
    add_transform_arg(p)
    p.add_argument(
        "--fabric",
        default=None,
        help="fabric spec, e.g. bigswitch or bigswitch:gbps=10 (default: bigswitch, 1 Gbps)",
    )


def add_transform_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--transform",
        action="append",
        metavar="NAME[:KEY=VALUE,...]",
        help="transform the workload, e.g. batch:interval_s=10 or poisson:load=0.8; "
        "repeatable, applied in order (see `coflowkit transforms`)",
    )


def fmt(x: float) -> str:
    return f"{x:.4g}"


def print_summary(summary: dict, title: str) -> None:
    from rich.console import Console
    from rich.table import Table

    t = Table(title=title)
    for col in [
        "bin",
        "coflows",
        "mean CCT (s)",
        "median",
        "p95",
        "p99",
        "max",
        "mean slowdown",
        "p95 slowdown",
    ]:
        t.add_column(col, justify="right")
    for b in ["all"] + metrics.BINS:
        s = summary[b]
        if s["coflows"] == 0:
            t.add_row(b, "0", *["-"] * 7)
            continue
        c, sl = s["cct_s"], s["slowdown"]
        t.add_row(
            b,
            str(s["coflows"]),
            fmt(c["mean"]),
            fmt(c["median"]),
            fmt(c["p95"]),
            fmt(c["p99"]),
            fmt(c["max"]),
            fmt(sl["mean"]),
            fmt(sl["p95"]),
        )
    Console(width=120).print(t)


write_run = api.write_result  # kept for callers of the old name


def cmd_simulate(args) -> int:
    spec = workload_spec(args)
    params = parse_kv(args.param)
    api._core.check_policy(args.policy, params)
    w = spec.load(args.fabric)  # the fabric goes before the transforms
    if args.record_coflows and args.record is None:
        raise UsageError("--record-coflows needs --record (every, or an interval in seconds)")
    r = api.simulate(
        w,
        args.policy,
        params,
        None,
        check_invariants=args.check_invariants,
        progress=None if not args.quiet else False,  # a bar on a terminal
        record=args.record,
        record_coflows=args.record_coflows,
        engine=args.engine,
    )
    if args.out:
        write_run(r, args.out)
    if not args.quiet:
        label = args.policy + "".join(f":{k}={v}" for k, v in sorted(params.items()))
        engine = r.extra.get("engine")
        if engine:
            how = (
                "on CoflowSim's hooks"
                if r.extra["scheduler"] == "hooks"
                else f"CoflowSim's {r.extra['scheduler']}"
            )
            label += f" (engine {engine}: {how}, CCT = duration / 1000)"
        print_summary(r.summary, f"{label} on {w.source} ({r.fabric})")
        if r.series_summary:
            print_series_summary(r.series_summary, f"instantaneous metrics of {label}")
    return 0


def print_series_summary(summary: dict, title: str) -> None:
    from rich.console import Console
    from rich.table import Table

    t = Table(title=f"{title} ({summary['busy_samples']} samples with active coflows)")
    cols = ["mean", "time_weighted_mean", "min", "p5", "p50", "p95", "p99", "max"]
    t.add_column("metric")
    for c in cols:
        t.add_column(c, justify="right")
    for k in metrics.SERIES_METRICS:
        t.add_row(k, *[fmt(summary[k][c]) for c in cols])
    Console(width=140).print(t)


def cmd_compare(args) -> int:
    spec = workload_spec(args)
    entries = parse_policy_list(args.policies)
    base_label, base_name, base_params = parse_policy_list(args.baseline)[0]

    def job(name, params):
        return runner.Job(
            spec, name, tuple(sorted(params.items())), args.fabric, engine=args.engine
        )

    jobs = [job(base_name, base_params)]
    for _label, name, params in entries:
        jobs.append(job(name, params))
    cache = None if args.no_cache else (args.cache_dir or runner.default_cache_dir())
    results = runner.run_jobs(jobs, workers=args.workers, cache_dir=cache)
    base = results[0]
    rows = []
    for (label, _, _), r in zip(entries, results[1:], strict=True):
        norm = metrics.normalized(r.coflows, base.coflows)
        for b in ["all"] + metrics.BINS:
            n = norm[b]
            if n["coflows"] == 0:
                continue
            rows.append(
                {"policy": label, "bin": b, **n, "mean_cct_s": r.summary[b]["cct_s"]["mean"]}
            )
    from rich.console import Console
    from rich.table import Table

    t = Table(title=f"normalized CCT vs {base_label} (policy / baseline), {results[0].fabric}")
    cols = [
        "policy",
        "bin",
        "coflows",
        "mean_cct_s",
        "mean_of_ratios",
        "ratio_of_means",
        "median_ratio",
        "p95_ratio",
        "mean_slowdown",
        "p95_slowdown",
    ]
    for c in cols:
        t.add_column(c, justify="right")
    for row in rows:
        t.add_row(*[row[c] if isinstance(row[c], str) else fmt(row[c]) for c in cols])
    Console(width=160).print(t)
    if args.out:
        import pandas as pd

        os.makedirs(args.out, exist_ok=True)
        pd.DataFrame(rows, columns=cols).to_csv(os.path.join(args.out, "compare.csv"), index=False)
        for (label, _, _), r in zip([(base_label, None, None)] + entries, results, strict=True):
            safe = label.replace(":", "_").replace("=", "-").replace("/", "_")
            r.coflows.to_csv(os.path.join(args.out, f"coflows_{safe}.csv"), index=False)
        png = os.path.join(args.out, "compare.png")
        compare_figure(
            rows,
            [(base_label, results[0])]
            + [(label, r) for (label, _, _), r in zip(entries, results[1:], strict=True)],
            base_label,
            png,
        )
        print(f"wrote {os.path.join(args.out, 'compare.csv')} and {png}")
    return 0


def compare_figure(rows: list[dict], runs: list, base_label: str, path: str) -> None:
    """Each policy's CCT over the baseline's (ratio of means) per bin, and the CDF
    of every run's CCTs."""
    from coflowkit.experiments.common import normalized_figure, plt

    bars: dict[str, list[float]] = {}
    for r in rows:
        bars.setdefault(r["policy"], [float("nan")] * (1 + len(metrics.BINS)))
        bars[r["policy"]][(["all"] + metrics.BINS).index(r["bin"])] = r["ratio_of_means"]
    ccts = [(label, r.coflows["cct_s"].to_numpy()) for label, r in runs]
    fig = normalized_figure(bars, ccts, base_label)
    fig.savefig(path, dpi=110)
    plt().close(fig)


def cmd_policies(args) -> int:
    if args.write_docs:
        from coflowkit import catalogue

        root = args.write_docs
        for path in catalogue.write_docs(root) or ["(nothing changed)"]:
            print(f"wrote {path}")
        return 0
    policies = api.policies()
    width = max(len(p["name"]) for p in policies)
    for p in policies:
        params = ", ".join(f"{q['name']}={q['default']}" for q in p["params"])
        extra = f"  [{params}]" if params else ""
        print(f"{p['name']:<{width}} {p['info']:<16} {p['summary']}{extra}")
    return 0


def cmd_transforms(args) -> int:
    from coflowkit import transforms

    cat = transforms.catalogue()
    params = [p for t in cat for p in t["params"]]

    def head(p) -> str:
        return p["name"] + (" (required)" if p["required"] else f"={_show_default(p['default'])}")

    w0 = max(len(head(p)) for p in params)
    w1 = max(len(p["kind"]) for p in params)
    for t in cat:
        print(f"{t['name']}: {t['summary']}")
        for p in t["params"]:
            print(f"    {head(p):<{w0}}  {p['kind']:<{w1}}  {p['help']}")
    return 0


def _show_default(v) -> str:
    if v is None:
        return "(none)"
    if isinstance(v, bool):
        return str(v).lower()
    return f"{v:g}" if isinstance(v, float) else str(v)


def cmd_convert(args) -> int:
    spec = workload_spec(args)
    w = spec.load(args.fabric)
    api.write_trace(w, args.out, args.to)
    return 0


def cmd_reproduce(args) -> int:
    from coflowkit import experiments, transforms

    trace = args.trace or default_trace()
    if not os.path.exists(trace):
        raise UsageError(f"{trace}: no such file (give the Facebook trace with --trace)")
    coflows = None
    if args.coflows not in (None, "all"):
        try:
            coflows = int(args.coflows)
        except ValueError:
            raise UsageError(f"--coflows must be a number or 'all', got {args.coflows!r}") from None
        if coflows < 1:
            raise UsageError(f"--coflows must be >= 1, got {coflows}")
    out = args.out or os.path.join("results", args.name)
    cache = None if args.no_cache else (args.cache_dir or runner.default_cache_dir())
    kw = {} if args.coflows is None else {"coflows": coflows}
    specs = tuple(args.transform or ())
    for s in specs:  # fail fast on an unknown transform or parameter
        transforms.canonical(s)
    report = experiments.run(
        args.name,
        out=out,
        trace=trace,
        workers=args.workers,
        cache_dir=cache,
        transforms=specs,
        engine=args.engine,
        decisions=args.decisions,
        **kw,
    )
    print(f"wrote {report} (tables, figures and report in {out})")
    return 0


def cmd_sweep(args) -> int:
    from coflowkit import sweep

    out = args.out or os.path.join("results", "sweep")
    cache = None if args.no_cache else (args.cache_dir or runner.default_cache_dir())
    command = shlex.join(["coflowkit", *args.argv])
    prov = sweep.run(args.spec, out, args.workers, cache, command=command)
    print(
        f"wrote {os.path.join(out, 'report.html')} ({prov['runs']} runs: runs.csv, "
        f"coflows.csv and their Parquet in {out}; {prov['wall_s']:.0f} s, "
        f"{prov['cached_jobs']} from the cache)"
    )
    return 0


def cmd_mcs_train(args) -> int:
    from coflowkit import mcs_train

    n, first, mult, step = mcs_train.check_parameters(
        args.classes,
        args.t_first_mb,
        args.t_multiplier,
        args.step,
        names=("--classes", "--t-first-mb", "--t-multiplier", "--step"),
    )
    if not os.path.exists(args.trace):
        raise UsageError(f"{args.trace}: no such file")
    w = api.load_trace(args.trace, args.format)
    training = mcs_train.train(w, n, first, mult, step, source=args.trace)
    mcs_train.print_report(mcs_train.correlations(mcs_train.coflow_attributes(w)), training)
    if args.out:
        mcs_train.write_params(training, args.trace, args.out)
        print(f"wrote {args.out} (use it with --policy mcs --param classes={args.out})")
    return 0


def _positive(text: str, name: str, zero_ok: bool = False) -> float:
    try:
        x = float(text)
    except ValueError:
        x = math.nan
    if not math.isfinite(x) or x < 0 or (x == 0 and not zero_ok):
        raise UsageError(f"{name} must be a number {'>=' if zero_ok else '>'} 0, got {text!r}")
    return x


def cmd_identify(args) -> int:
    from coflowkit import identify, metric_learning

    eps, tau = identify.DEFAULT_EPS, identify.DEFAULT_TAU
    weights, source = "spark", "CODA's As (spark)"
    if args.weights:
        if args.weights in identify.NAMED_WEIGHTS:
            weights, source = args.weights, args.weights
        else:
            d = metric_learning.load(args.weights)
            weights, source = d["weights"], args.weights
            eps, tau = d.get("eps", eps), d.get("tau", tau)
    if args.eps is not None:
        eps = _positive(args.eps, "--eps")
    if args.tau is not None:
        tau = _positive(args.tau, "--tau", zero_ok=True)
    min_bytes = _positive(args.min_bytes, "--min-bytes", zero_ok=True)
    t = identify.read_table(args.flows)
    res = identify.identify(
        t, weights, eps=eps, tau=tau, algorithm=args.algorithm, min_bytes=min_bytes
    )
    import pandas as pd

    out = pd.DataFrame({"flow_id": t.flow_id, "label": res.labels})
    tmp = args.out + ".tmp"
    out.to_csv(tmp, index=False)
    os.replace(tmp, args.out)
    n_labels = len(set(res.labels[res.labels >= 0].tolist()))
    print(
        f"{len(t)} flows, {res.identified} identified (>= {min_bytes:g} bytes) into "
        f"{n_labels} coflows; weights {source}, eps {eps:g}, tau {tau:g}, {args.algorithm}"
    )
    if res.quality is not None:
        q = res.quality
        print(
            f"precision {q.precision:.4f}  recall {q.recall:.4f}  accuracy {q.accuracy:.4f}"
            " (against coflow_id)"
        )
    print(f"wrote {args.out}")
    return 0


def cmd_learn_distance(args) -> int:
    from coflowkit import identify, metric_learning

    t = identify.read_table(args.flows)
    if t.coflow_id is None:
        raise UsageError(f"{args.flows}: coflow_id: a labelled flow table is needed to learn")
    min_bytes = _positive(args.min_bytes, "--min-bytes", zero_ok=True)
    keep = np.arange(len(t)) if t.bytes is None else np.flatnonzero(t.bytes >= min_bytes)
    if len(keep) < 2:
        raise UsageError(f"{args.flows}: fewer than 2 flows of at least {min_bytes:g} bytes")
    r = identify.records(t, keep)
    d = metric_learning.learn(r, t.coflow_id[keep], seed=args.seed)
    eps, tau, q = identify.choose_eps(r, t.coflow_id[keep], d["weights"])
    d.update(eps=eps, tau=tau, trained_on=os.path.basename(args.flows))
    metric_learning.save(d, args.out)
    print("attribute  weight      relative")
    for name, w, rel in zip(d["attributes"], d["weights"], d["normalized"], strict=True):
        print(f"{name:<10} {w:<11.4g} {rel:.3f}")
    print(
        f"eps {eps:.4g}, tau {tau:.4g}: the best radius on this table (precision "
        f"{q.precision:.4f}, recall {q.recall:.4f})"
    )
    print(f"wrote {args.out} (use it with coflowkit identify --weights {args.out})")
    return 0


def cmd_bench(args) -> int:
    from coflowkit import policy_timing as bench

    return bench.main(args)


def add_simulate(sub) -> None:
    s = sub.add_parser("simulate", help="simulate one policy on a workload")
    add_workload_args(s)
    s.add_argument("--policy", required=True, help="policy name (see `coflowkit policies`)")
    s.add_argument("--param", action="append", metavar="KEY=VALUE", help="policy parameter")
    s.add_argument("--out", help="directory for coflows.csv, coflows.parquet, summary.json")
    s.add_argument(
        "--check-invariants",
        action="store_true",
        help="check link capacities and byte conservation while simulating",
    )
    s.add_argument("--quiet", action="store_true", help="print nothing on success")
    s.add_argument(
        "--record",
        metavar="every|SECONDS",
        help="record coflow progress, isolation guarantee, disparity and utilization after "
        "every event or every SECONDS (series.csv/.parquet in --out)",
    )
    s.add_argument(
        "--record-coflows",
        action="store_true",
        help="with --record: also each active coflow's progress (progress.csv/.parquet)",
    )
    s.add_argument(
        "--engine",
        default="exact",
        metavar="exact|coflowsim[:epoch_s=S]",
        help="exact (default) or CoflowSim's model, as the NC-DRF, Coflex and MCS papers "
        "ran it (docs/engines.md)",
    )
    s.set_defaults(func=cmd_simulate)


def add_compare(sub) -> None:
    c = sub.add_parser("compare", help="compare policies against a baseline (normalized CCT)")
    add_workload_args(c)
    c.add_argument("--policies", required=True, help="e.g. varys,aalo:queues=8,sincronia")
    c.add_argument("--baseline", default="fair", help="baseline policy (default fair)")
    c.add_argument("--out", help="directory for compare.csv and per-policy coflows_*.csv")
    c.add_argument(
        "--workers",
        type=int,
        default=min(2, os.cpu_count() or 1),
        help="worker processes (default: up to 2)",
    )
    c.add_argument(
        "--cache-dir", help="result cache (default ~/.cache/coflowkit or $COFLOWKIT_CACHE)"
    )
    c.add_argument("--no-cache", action="store_true", help="do not read or write the cache")
    c.add_argument(
        "--engine",
        default="exact",
        metavar="exact|coflowsim[:epoch_s=S]",
        help="exact (default) or CoflowSim's model, as the NC-DRF, Coflex and MCS papers "
        "ran it (docs/engines.md)",
    )
    add_backend_arg(c)
    c.set_defaults(func=cmd_compare)


def add_backend_arg(p) -> None:
    p.add_argument(
        "--backend",
        default=None,
        metavar="process|serial|ray[:ADDRESS]",
        help="where the simulations run: local processes (default), serially, or on a Ray "
        "cluster (ray:ADDRESS joins one, e.g. ray:10.0.0.1:6379; plain ray starts a local "
        "one of --workers processes); needs pip install 'coflowkit[ray]'",
    )


def add_sweep(sub) -> None:
    w = sub.add_parser(
        "sweep",
        help="run a grid of simulations declared in a TOML spec (docs/sweep.md)",
    )
    w.add_argument("spec", help="the spec: workloads, fabrics, engines, policies, seeds")
    w.add_argument("--out", help="output folder (default results/sweep)")
    w.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1))
    w.add_argument("--cache-dir", help="result cache (default ~/.cache/coflowkit)")
    w.add_argument("--no-cache", action="store_true", help="do not read or write the cache")
    add_backend_arg(w)
    w.set_defaults(func=cmd_sweep)


def add_policies(sub) -> None:
    pol = sub.add_parser("policies", help="list the policies")
    pol.add_argument(
        "--write-docs", metavar="ROOT",
        help="rewrite the policy tables of ROOT/README.md and ROOT/docs/policies/README.md "
        "from the registry",
    )  # fmt: skip
    pol.set_defaults(func=cmd_policies)


def add_transforms(sub) -> None:
    sub.add_parser(
        "transforms", help="list the workload transforms, their parameters and defaults"
    ).set_defaults(func=cmd_transforms)


def add_convert(sub) -> None:
    v = sub.add_parser("convert", help="write a workload in another trace format")
    add_workload_args(v)
    v.add_argument("--to", required=True, choices=["benchmark", "sincronia", "flows", "parquet"])
    v.add_argument("--out", required=True, help="output file")
    v.set_defaults(func=cmd_convert)


def add_reproduce(sub) -> None:
    from coflowkit.experiments import EXPERIMENTS

    r = sub.add_parser(
        "reproduce",
        help="run a paper's experiments: tables, figures and a report beside the paper",
        description="; ".join(f"{k}: {v}" for k, v in EXPERIMENTS.items()),
    )
    r.add_argument("name", choices=sorted(EXPERIMENTS), help="which paper")
    r.add_argument("--out", help="output folder (default results/NAME)")
    r.add_argument(
        "--trace", help="the Facebook trace (default ../shared/traces/FB2010-1Hr-150-0.txt)"
    )
    r.add_argument(
        "--coflows",
        default=None,
        metavar="N|all",
        help="replay only the first N coflows of the trace (default: the experiment's own)",
    )
    add_transform_arg(r)
    r.add_argument(
        "--engine",
        default=None,
        metavar="both|exact|coflowsim[:epoch_s=S]",
        help="ncdrf, coflex, mcs: the engines of the trace replays (default both: "
        "coflowkit's exact engine beside CoflowSim's model, docs/engines.md); the "
        "other experiments run on the exact engine",
    )
    r.add_argument(
        "--decisions",
        default=None,
        metavar="event|S",
        help="coda-scheduler, coda-identify: when policies decide, every S seconds "
        "(realloc=interval, decision_s=S) or at every flow event (default 1: CODA's "
        "simulator 'runs at 1s decision intervals', §6.1)",
    )
    r.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1))
    r.add_argument("--cache-dir", help="result cache (default ~/.cache/coflowkit)")
    r.add_argument("--no-cache", action="store_true", help="do not read or write the cache")
    add_backend_arg(r)
    r.set_defaults(func=cmd_reproduce)


def add_bench(sub) -> None:
    b = sub.add_parser("bench", help="time each policy on a trace (whole command, peak RSS)")
    b.add_argument(
        "--trace", default=None, help="trace (default ../shared/traces/FB2010-1Hr-150-0.txt)"
    )
    b.add_argument(
        "--policies",
        default=None,
        help="comma-separated, each NAME or NAME:K=V:K=V (default: all, with defaults)",
    )
    b.add_argument(
        "--transform", action="append", metavar="SPEC", help="workload transform (repeatable)"
    )
    b.add_argument("--fabric", help="fabric spec, e.g. fattree:k=16 (default: the big switch)")
    b.add_argument("--first", type=int, help="only the first N coflows of the trace")
    b.add_argument("--timeout", type=float, default=1800, help="seconds per policy (default 1800)")
    b.add_argument("--out", help="write the table as Markdown here")
    b.add_argument(
        "--record", metavar="every|SECONDS", help="also record the instantaneous metrics"
    )
    b.add_argument(
        "--engine",
        metavar="exact|coflowsim[:epoch_s=S]",
        help="engine (default exact); under coflowsim the default policies are the eight it maps",
    )
    b.set_defaults(func=cmd_bench)


def add_mcs_train(sub) -> None:
    m = sub.add_parser("mcs-train", help="MCS's SNCF training: Table I and the mcs class file")
    m.add_argument(
        "--trace", required=True, metavar="PATH", help="trace file (any format `simulate` reads)"
    )
    m.add_argument("--format", choices=["benchmark", "sincronia", "flows"], help="trace format")
    m.add_argument("--classes", default="5", metavar="N", help="number of classes n (default 5)")
    m.add_argument("--t-first-mb", default="10", metavar="X", help="T_1 in MB (default 10)")
    m.add_argument(
        "--t-multiplier", default="10", metavar="X", help="T_i = T_{i-1} * this (default 10)"
    )
    m.add_argument(
        "--step", default="10", metavar="X", help="width step of Algorithm 1 (default 10)"
    )
    m.add_argument("--out", metavar="FILE", help="write the class file of the mcs policy here")
    m.set_defaults(func=cmd_mcs_train)


def add_identify(sub) -> None:
    i = sub.add_parser(
        "identify", help="label the flows of a flow table with identified coflows (CODA)"
    )
    i.add_argument("--flows", required=True, metavar="PATH", help="flow table, CSV or Parquet")
    i.add_argument(
        "--weights",
        metavar="FILE|NAME",
        help="learn-distance output, or spark / hadoop (CODA's As / Ah) / equal (default spark)",
    )
    i.add_argument("--eps", metavar="X", help="DBSCAN radius (default: the weights file's, or 0.5)")
    i.add_argument("--tau", metavar="X", help="leader range (default: the weights file's, or 0.05)")
    i.add_argument("--algorithm", choices=["rough", "dbscan"], default="rough")
    i.add_argument(
        "--min-bytes", default="100000", metavar="B", help="leave out smaller flows (label -1)"
    )
    i.add_argument("--out", required=True, metavar="FILE", help="labels CSV: flow_id,label")
    i.set_defaults(func=cmd_identify)


def add_learn_distance(sub) -> None:
    d = sub.add_parser(
        "learn-distance", help="learn CODA's attribute weights from a labelled flow table"
    )
    d.add_argument("--flows", required=True, metavar="PATH", help="flow table with coflow_id")
    d.add_argument("--min-bytes", default="100000", metavar="B", help="leave out smaller flows")
    d.add_argument("--seed", type=int, default=1, help="seed of the pair sampling")
    d.add_argument("--out", required=True, metavar="FILE", help="weights JSON")
    d.set_defaults(func=cmd_learn_distance)


#: The commands, in the order `coflowkit --help` lists them.
COMMANDS = (
    add_simulate,
    add_compare,
    add_policies,
    add_transforms,
    add_convert,
    add_reproduce,
    add_sweep,
    add_bench,
    add_mcs_train,
    add_identify,
    add_learn_distance,
)


def build_parser() -> argparse.ArgumentParser:
    """The CLI: one `add_*` function per command, in the order of COMMANDS."""
    p = argparse.ArgumentParser(prog="coflowkit", description="Coflow scheduling simulator.")
    p.add_argument("--version", action="version", version=f"coflowkit {__version__}")
    sub = p.add_subparsers(dest="command", required=True)
    for add in COMMANDS:
        add(sub)
    from coflowkit.runtime.cli import add_runtime_parsers

    add_runtime_parsers(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)  # the report's command line
    if getattr(args, "workers", 1) is not None and getattr(args, "workers", 1) < 1:
        parser.exit(2, "coflowkit: error: --workers must be >= 1\n")
    try:
        with runner.backend_scope(getattr(args, "backend", None)):
            return args.func(args)
    except (CoflowkitError, UsageError) as e:
        print(f"coflowkit: error: {e}", file=sys.stderr)
        return 2
    except SimulationError as e:
        print(f"coflowkit: simulation failed: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"coflowkit: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("coflowkit: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
