"""Why late binding on CODA's identifier binds no flow elsewhere: the key
comparisons behind each binding, counted by an instrumented build.

Late binding serves a flow with the highest-priority extended coflow that holds
it: its own coflow, or a cluster within d (docs/policies/coda.md). An
instrumented build (`benches/patches/coda-binding-keys.patch`) counts, for every
look-up, whether it found a cluster within d and how each one's D-CLAS key
(queue, first seen, label) compares with the flow's own coflow's, and prints the
totals when the policy is dropped. This runs `coda:labels=identify` in Fig. 14b's
scenarios of `reproduce coda-identify` (same transforms, parameters and
decisions, every 1 s by default) under both readings of the binding, one simulation per child process
(the counts are process-wide), and tabulates them.

The instrumented extension is built outside the repository:

    git worktree add /tmp/wt HEAD && cd /tmp/wt && git apply benches/patches/coda-binding-keys.patch
    CARGO_TARGET_DIR=/tmp/wt_target cargo build --release -p coflowkit-py
    mkdir -p /tmp/wt_py && cp -r python/coflowkit /tmp/wt_py/
    cp /tmp/wt_target/release/lib_core.so /tmp/wt_py/coflowkit/_core.abi3.so

    python3 benches/coda_binding_keys.py --python-path /tmp/wt_py [--d 4] [--coflows N]
        [--out docs/results/coda-identify/binding-keys.md]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time

import pandas as pd

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))

from coflowkit.experiments.coda_scheduler import DEFAULT_DECISIONS  # noqa: E402
from coflowkit.experiments.common import decisions_label, markdown  # noqa: E402
from coflowkit.policy_timing import machine, provenance  # noqa: E402

TRACE = os.path.join(ROOT, "..", "shared", "traces", "FB2010-1Hr-150-0.txt")
LINE = re.compile(
    r"binding look-ups (\d+) with candidates (\d+) \(own coflow in the top queue (\d+)\); "
    r"candidates compared (\d+): lower queue (\d+), higher queue (\d+), "
    r"same queue seen later (\d+), same queue seen earlier (\d+)"
)
FIELDS = (
    "look-ups",
    "with a cluster within d",
    "of which own coflow in the top queue",
    "clusters compared",
    "in a lower-priority queue",
    "in a higher-priority queue (wins)",
    "same queue, seen later",
    "same queue, seen earlier (wins)",
)

# One simulation, in a child process run on the instrumented extension.
CHILD = """
import json, sys
import coflowkit as ck
import numpy as np
from coflowkit import runner
from coflowkit.experiments import coda_identify as ci, common
a = json.loads(sys.argv[1])
s = ci.BY_KEY[a["scenario"]]
spec = runner.WorkloadSpec(trace=a["trace"], transforms=s.transforms(1), first=a["coflows"])
w = spec.load()
params = dict(ci.coda_params(s, a["d"], a["binding"])) | dict(common.decision_params(a["decisions"]))
r = ck.simulate(w, "coda", params, progress=False)
lab = np.asarray(r.extra["flow_labels"]); bnd = np.asarray(r.extra["flow_bindings"])
served = bnd >= 0
print(json.dumps({"served": int(served.sum()), "moved": int((bnd[served] != lab[served]).sum()),
                  "mean_cct": float(r.coflows["cct_s"].mean())}), flush=True)
del r
"""


def run_one(py_path: str, a, scenario: str, binding: str) -> dict:
    arg = json.dumps(
        {
            "trace": a.trace,
            "scenario": scenario,
            "binding": binding,
            "d": a.d,
            "coflows": a.coflows,
            "decisions": a.decisions,
        }
    )
    env = dict(os.environ, PYTHONPATH=py_path)
    p = subprocess.run(
        [sys.executable, "-c", CHILD, arg], env=env, capture_output=True, text=True, check=False
    )
    m = LINE.search(p.stderr)
    if p.returncode != 0 or m is None:
        raise SystemExit(
            f"{scenario} binding={binding}: the child failed or printed no counts "
            f"(is {py_path} the instrumented build?)\n{p.stderr[-2000:]}"
        )
    out = json.loads(p.stdout.strip().splitlines()[-1])
    out.update(dict(zip(FIELDS, (int(x) for x in m.groups()), strict=True)))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--python-path", required=True, help="the instrumented build's package dir")
    ap.add_argument("--trace", default=TRACE)
    ap.add_argument("--d", type=float, default=4.0, help="late binding's diameter")
    ap.add_argument("--coflows", type=int, default=None, help="first N coflows (default all)")
    ap.add_argument("--scenarios", default="stretched-hadoop,spark")
    ap.add_argument(
        "--decisions",
        default=DEFAULT_DECISIONS,
        help="every S seconds (default: the experiment's 1 s) or 'event'",
    )
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    t0 = time.time()
    rows = []
    for scenario in a.scenarios.split(","):
        for binding in ("first", "round"):
            r = run_one(a.python_path, a, scenario, binding)
            rows.append({"scenario": scenario, "binding": binding, **r})
            print(rows[-1], file=sys.stderr, flush=True)
    names = {"served": "flows served", "moved": "flows bound elsewhere", "mean_cct": "mean CCT (s)"}
    table = markdown(pd.DataFrame(rows).rename(columns=names), digits=4)
    cmd = "python3 benches/coda_binding_keys.py " + " ".join(sys.argv[1:])
    text = f"""# Late binding on CODA's identifier: the key comparisons behind each binding

Command: `{cmd}` (the instrumented extension built as the script's docstring says,
from `benches/patches/coda-binding-keys.patch`)
Version: {provenance()}
Machine: {machine()}; wall time {time.time() - t0:.0f} s, uncached

`coda:labels=identify` in Fig. 14b's scenarios of `reproduce coda-identify` (the
{"whole trace" if a.coflows is None else f"first {a.coflows} coflows"}, the same
transforms and parameters, decisions {decisions_label(a.decisions)}), late binding at d = {a.d:g},
under both readings of the binding: `first` (the default: a flow is bound for
good when first served) and `round` (bound anew at every call). A look-up is one
flow's choice of extended coflow at one call; a comparison is one cluster within
d against the flow's own coflow, by D-CLAS's key (queue, first seen, label): a
cluster wins when its queue is higher, or the same and it was seen earlier.

{table}
"""
    if a.out:
        with open(a.out, "w", encoding="utf-8") as fh:
            fh.write(text)
    else:
        print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
