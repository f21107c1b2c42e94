#!/usr/bin/env python3
"""The recorded fuzz run: every parser a hostile peer or file reaches.

    python3 benches/fuzz.py --runs 1000000 --out docs/results/runtime/fuzz.md

Rust targets (cargo-fuzz, libFuzzer, nightly; `fuzz/fuzz_targets/`):

* ``wire``: the master-agent protocol's frame reader and payload decoders
  (TLS carries the frames, so nothing stands between the input and the decoders);
* ``trace``: Coflow-Benchmark and Sincronia text traces;
* ``flow_table``: CSV flow tables;
* ``sock_diag``: netlink sock_diag replies, as the agent parses them.

Python target (atheris; `fuzz/http_api.py`): ``http_api``, raw HTTP requests
through the master's request handler and the typed registration parser.

Each target starts from a small seed corpus made here (valid frames, the head
of the FB trace from ../shared, captured netlink replies from tests/data) and
runs ``--runs`` inputs. Coverage is then measured by replaying the final corpus:
llvm-cov over the target's own source file for Rust, coverage.py over the
handler and parser modules for Python. Needs: rustup's nightly toolchain with
llvm-tools-preview, cargo-fuzz, atheris, coverage.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FUZZ = os.path.join(ROOT, "fuzz")
SHARED_TRACE = os.path.join(ROOT, "..", "shared", "traces", "FB2010-1Hr-150-0.txt")
RUST = {
    # target: the source file whose coverage is reported
    "wire": "crates/coflowkit-runtime/src/wire.rs",
    "trace": "crates/coflowkit-trace/src/benchmark.rs",
    "flow_table": "crates/coflowkit-trace/src/flowtable.rs",
    "sock_diag": "crates/coflowkit-runtime/src/sockdiag.rs",
}
PY_MAX_LEN = 8192
# What earlier runs found, and where it was fixed (the regression tests pin them).
FINDINGS = [
    (
        "trace",
        "a mapper count of 1.8e9 in a Coflow-Benchmark line went straight to "
        "`Vec::with_capacity`: the process aborted on allocation",
        "counts are capped by the line's length; ports at most 2^20",
        "`benchmark::tests::counts_and_ports_from_the_file_are_not_trusted_for_allocations`",
    ),
    (
        "flow_table",
        "a destination port of 20,001,000 made a big switch whose dense path table "
        "asked for 1.6 PB: abort",
        "at most 2^20 ports; above 4096 ports a big switch interns "
        "only the pairs used (a 40,000-port switch no longer needs 6.4 GB)",
        "`flowtable::tests::a_port_beyond_the_limit_is_an_error_not_an_allocation`, "
        "`fabric::tests::a_large_big_switch_interns_only_the_pairs_used`",
    ),
    (
        "http_api",
        "a request line the stdlib could not read (or one claiming HTTP/0.9) was "
        "answered with a bare HTML body and no status line",
        "the handler answers HTTP/1.0 with a status line, and refuses HTTP/0.9",
        "`tests/runtime/test_fuzz_inputs.py`",
    ),
]
PY_SOURCES = ["python/coflowkit/runtime/http_api.py", "python/coflowkit/runtime/registration.py"]


def sh(args, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(args, text=True, capture_output=True, **kw)


def seeds(target: str) -> list[bytes]:
    sys.path.insert(0, os.path.join(ROOT, "python"))
    from coflowkit.runtime import proto

    if target == "wire":
        a = proto.agent_channel()
        hello = a.frame(proto.HELLO, proto.encode_hello(proto.Hello(3, 20, ["10.0.0.4"], "h3")))
        rep = a.frame(proto.REPORT, proto.encode_report(proto.Report(
            1.5, [proto.NewFlow(7, 40001, "10.0.0.2", 80, 1.0, 300_000)], [(5, 9)], [(2, 99)])))  # fmt: skip
        m = proto.agent_channel()
        dec = m.frame(
            proto.DECISIONS, proto.encode_decisions([(1, proto.RATE, 2e6), (2, proto.CLASS, 3.0)])
        )
        err = m.frame(proto.ERROR, b"refused")
        return [b"\0" + hello + rep, b"\3" + hello + rep, b"\1" + dec + err]
    if target == "trace":
        with open(SHARED_TRACE, "rb") as fh:
            head = b"".join(fh.readline() for _ in range(12))
        return [b"\0" + head, b"\2" + head, b"\1" + b"2 2\n1 0 1 1 1\n0 1 8\n2 16 1 1 1\n1 0 4\n"]
    if target == "flow_table":
        return [b"coflow_id,flow_id,src,dst,bytes,start_s,arrival_s,weight,stage,depends_on\n"
                b"1,1,0,1,1000,0.5,0.5,1,0,\n1,2,1,2,2000,0.5,0.5,1,1,1\n2,3,2,0,5e6,1.25,,2,,\n"]  # fmt: skip
    if target == "sock_diag":
        d = os.path.join(ROOT, "tests", "data", "sockdiag")
        with open(os.path.join(d, "capture.json"), encoding="utf-8") as fh:
            caps = json.load(fh)["captures"]
        out = []
        for c in caps:
            with open(os.path.join(d, c["file"]), "rb") as fh:
                data = fh.read()
            off = 0
            for n in c["datagram_sizes"]:
                out.append(data[off : off + n])
                off += n
        return out
    token = b"Z" * 20 + b"abcdefghijklmnopqrstuvw"
    body = b'{"id": 1, "flows": [{"src": 0, "dst": 1, "dst_port": 80, "size": 1e6}]}'
    return [
        b"\1POST /api/coflows HTTP/1.1\r\nContent-Length: %d\r\nAuthorization: Bearer %s\r\n\r\n%s"
        % (len(body), token, body),
        b"\0GET /api/flows HTTP/1.1\r\n\r\n",
        b"\0" + body,
    ]


def libfuzzer_stats(text: str) -> dict:
    out = {}
    for key in ("number_of_executed_units", "peak_rss_mb", "new_units_added"):
        m = re.search(rf"stat::{key}:\s+(\d+)", text)
        if m:
            out[key] = int(m.group(1))
    m = re.findall(r"cov: (\d+) ft: (\d+)", text)
    if m:
        out["edges"], out["features"] = map(int, m[-1])
    out["crashed"] = bool(
        re.search(r"ERROR: libFuzzer|SUMMARY: libFuzzer|deadly signal|panicked", text)
    )
    return out


def run_rust(target: str, runs: int, max_len: int) -> dict:
    corpus = os.path.join(FUZZ, "corpus", target)
    os.makedirs(corpus, exist_ok=True)
    for i, s in enumerate(seeds(target)):
        with open(os.path.join(corpus, f"seed-{i}"), "wb") as fh:
            fh.write(s)
    t = time.monotonic()
    r = sh(["cargo", "+nightly", "fuzz", "run", "-O", target, corpus, "--",
            f"-runs={runs}", f"-max_len={max_len}", "-print_final_stats=1", "-timeout=10",
            "-rss_limit_mb=2048"], cwd=FUZZ)  # fmt: skip
    stats = libfuzzer_stats(r.stdout + r.stderr)
    stats["seconds"] = time.monotonic() - t
    stats["corpus"] = len(os.listdir(corpus))
    stats["returncode"] = r.returncode
    if r.returncode != 0:
        stats["log"] = (r.stdout + r.stderr)[-3000:]
    stats.update(rust_coverage(target, corpus))
    return stats


def rust_coverage(target: str, corpus: str) -> dict:
    r = sh(["cargo", "+nightly", "fuzz", "coverage", target, corpus], cwd=FUZZ)
    if r.returncode != 0:
        return {"coverage_error": (r.stdout + r.stderr)[-500:]}
    sysroot = sh(["rustc", "+nightly", "--print", "sysroot"]).stdout.strip()
    llvm_cov = os.path.join(
        sysroot, "lib", "rustlib", "x86_64-unknown-linux-gnu", "bin", "llvm-cov"
    )
    binary = os.path.join(FUZZ, "target", "x86_64-unknown-linux-gnu", "coverage",
                          "x86_64-unknown-linux-gnu", "release", target)  # fmt: skip
    prof = os.path.join(FUZZ, "coverage", target, "coverage.profdata")
    src = os.path.join(ROOT, RUST[target])
    rep = sh([llvm_cov, "report", binary, f"-instr-profile={prof}", src])
    m = re.search(r"^TOTAL\s+(.*)$", rep.stdout, re.M)
    if not m:
        return {"coverage_error": rep.stderr[-300:] or rep.stdout[-300:]}
    cols = m.group(1).split()
    # Regions, missed, cover, functions, missed, executed, lines, missed, cover, ...
    return {"regions": cols[2], "functions": cols[5], "lines": cols[8], "source": RUST[target]}


def run_python(runs: int, max_len: int) -> dict:
    """The atheris target; inputs up to ``max_len`` (a request's headers and a
    registration body: nesting and long numbers fit well within it)."""
    corpus = os.path.join(FUZZ, "corpus", "http_api")
    os.makedirs(corpus, exist_ok=True)
    for i, s in enumerate(seeds("http_api")):
        with open(os.path.join(corpus, f"seed-{i}"), "wb") as fh:
            fh.write(s)
    t = time.monotonic()
    r = sh([sys.executable, os.path.join(FUZZ, "http_api.py"), corpus, f"-runs={runs}",
            f"-max_len={max_len}", "-print_final_stats=1", "-timeout=10"], cwd=FUZZ)  # fmt: skip
    stats = libfuzzer_stats(r.stdout + r.stderr)
    stats["seconds"] = time.monotonic() - t
    stats["corpus"] = len(os.listdir(corpus))
    stats["returncode"] = r.returncode
    if r.returncode != 0:
        stats["log"] = (r.stdout + r.stderr)[-3000:]
    # Line coverage of the handler and the parser, replaying the corpus.
    replay = (
        "import os, sys, logging; logging.disable(logging.CRITICAL)\n"
        f"sys.argv = ['x']; sys.path.insert(0, {FUZZ!r})\n"
        "import atheris\n"
        "atheris.instrument_imports = lambda *a, **k: __import__('contextlib').nullcontext()\n"
        "import http_api\n"
        f"d = {corpus!r}\n"
        "for f in sorted(os.listdir(d)):\n"
        "    http_api.one(open(os.path.join(d, f), 'rb').read())\n"
    )
    data = os.path.join(FUZZ, "coverage", "python.coverage")
    os.makedirs(os.path.dirname(data), exist_ok=True)
    script = os.path.join(FUZZ, "coverage", "replay_http_api.py")
    with open(script, "w", encoding="utf-8") as fh:
        fh.write(replay)
    srcs = [os.path.join(ROOT, p) for p in PY_SOURCES]
    c = sh([sys.executable, "-m", "coverage", "run", f"--data-file={data}",
            f"--include={','.join(srcs)}", script], cwd=FUZZ)  # fmt: skip
    rep = sh([sys.executable, "-m", "coverage", "report", f"--data-file={data}"], cwd=FUZZ)
    per_file = re.findall(r"^\S*?(\w+\.py)\s+\d+\s+\d+\s+(\d+%)", rep.stdout, re.M)
    if c.returncode == 0 and per_file:
        stats["lines"] = ", ".join(f"{pct} of {name}" for name, pct in per_file)
    else:
        stats["coverage_error"] = (c.stderr + rep.stdout)[-500:]
    return stats


def report(rows: dict, runs: int, started: float, out: str) -> None:
    commit = sh(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT).stdout.strip()
    dirty = bool(
        sh(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT).stdout.strip()
    )
    sys.path.insert(0, os.path.join(ROOT, "python"))
    import coflowkit

    lines = [
        "# Fuzzing: the runtime's and the trace readers' parsers",
        "",
        f"Command: `python3 benches/fuzz.py --runs {runs} --out {os.path.relpath(out, ROOT)}`  ",
        f"coflowkit {coflowkit.__version__}, commit {commit}{' (with uncommitted changes)' if dirty else ''}, "
        f"{datetime.date.today().isoformat()}, wall time {time.monotonic() - started:.0f} s (2 cores).",
        "",
        "Each target started from a small seed corpus (benches/fuzz.py) and ran the number of inputs below. "
        "**No input crashed, panicked, timed out (10 s) or exceeded 2 GB** unless the verdict says so. "
        "Coverage: the final corpus replayed under llvm-cov (Rust: the target's own source file) or "
        "coverage.py (Python: the HTTP handler and the registration parser).",
        "",
        "| target | what it parses | inputs run | seconds | corpus | edges | coverage (lines / regions or functions) | verdict |",
        "|---|---|---|---|---|---|---|---|",
    ]
    what = {
        "wire": "master-agent frames and payloads (Rust)",
        "trace": "Coflow-Benchmark / Sincronia text (Rust)",
        "flow_table": "CSV flow tables (Rust)",
        "sock_diag": "netlink sock_diag replies (Rust)",
        "http_api": "HTTP requests to the master's API (Python)",
    }
    for name, s in rows.items():
        cov = s.get("lines", "?")
        if "regions" in s:
            cov = f"{s['lines']} lines, {s['regions']} regions of `{s['source']}`"
        elif name == "http_api":
            cov = f"lines: {s['lines']} (the server's accept, reaper and TLS paths are not in this target)"
        if "coverage_error" in s:
            cov = "not measured: " + s["coverage_error"].strip().splitlines()[-1][:80]
        verdict = (
            "no crash" if s["returncode"] == 0 and not s.get("crashed") else "**CRASH** (see below)"
        )
        lines.append(
            f"| {name} | {what[name]} | {s.get('number_of_executed_units', '?'):,} | {s['seconds']:.0f} | "
            f"{s['corpus']} | {s.get('edges', '?')} | {cov} | {verdict} |"
        )
    for name, s in rows.items():
        if "log" in s:
            lines += ["", f"## {name}: failure", "", "```", s["log"], "```"]
    lines += [
        "",
        "## What the fuzzers found (all fixed)",
        "",
        "| target | finding | fix | regression test |",
        "|---|---|---|---|",
    ]
    lines += [f"| {t} | {f} | {x} | {r} |" for t, f, x, r in FINDINGS]
    lines += [
        "",
        "In CI (no nightly toolchain needed) the same decoders run under mutation tests: "
        "`wire::tests::mutated_streams_never_panic_and_decoded_payloads_round_trip` (200,000 inputs), "
        "`sockdiag::tests::garbage_never_panics`, and hypothesis over the registration parser "
        "(`tests/runtime/test_fuzz_inputs.py`).",
        "",
    ]
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines))


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--runs", type=int, default=1_000_000, help="inputs per target (default 10^6)")
    ap.add_argument("--max-len", type=int, default=65536, help="longest input, bytes")
    ap.add_argument("--targets", default="wire,trace,flow_table,sock_diag,http_api")
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "results", "runtime", "fuzz.md"))
    ap.add_argument("--fresh", action="store_true", help="start from the seeds only")
    a = ap.parse_args()
    started = time.monotonic()
    if a.fresh:
        shutil.rmtree(os.path.join(FUZZ, "corpus"), ignore_errors=True)
    rows = {}
    for t in a.targets.split(","):
        print(f"fuzzing {t} ({a.runs:,} inputs) ...", flush=True)
        if t == "http_api":
            rows[t] = run_python(a.runs, min(a.max_len, PY_MAX_LEN))
        else:
            rows[t] = run_rust(t, a.runs, a.max_len)
        print(f"  {json.dumps({k: v for k, v in rows[t].items() if k != 'log'})}", flush=True)
    report(rows, a.runs, started, os.path.abspath(a.out))
    print(f"wrote {a.out}")
    return 0 if all(r["returncode"] == 0 and not r.get("crashed") for r in rows.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
