"""The testbed switch's queues during a run (issue 26, item 5): how full each
port's packet queue is while a replay runs, to tell standing queues (which
every new flow's handshake and first packets wait behind) from bursts.

    python3 benches/switch_backlog.py sample OUT.csv SECS [--every-ms 100]   # as root
    python3 benches/switch_backlog.py summary OUT.csv [--run RUN_DIR]

`sample` reads every qdisc of the switch namespace (`cfk-sw`) once per
``--every-ms`` with one `tc -s -j qdisc show` and writes, per sample and port
queue (the `pfifo` leaves: `pN` carries host N's downlink, `ifbN` its uplink),
the wall time, the device, the packets and bytes queued, and the queue's limit.
Start it beside `coflowkit testbed run`; `summary --run` keeps only the samples
of the replay (from the run's `traffic-go.json` t0 to its last flow's end in
`flows.csv`), so the goodput probe before it is left out. `summary` prints per
direction the median, 90th percentile and share of samples at 90% of the limit
or more, over every port, and the same per port.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import pandas as pd

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))

from coflowkit.experiments.common import markdown  # noqa: E402

COLUMNS = ["time", "dev", "packets", "bytes", "limit"]


def parse(text: str, at: float) -> list[tuple]:
    """The port queues (``pfifo`` leaves on ``pN`` and ``ifbN``) of one
    `tc -s -j qdisc show`, as rows of :data:`COLUMNS` at time ``at``."""
    rows = []
    for q in json.loads(text):
        dev = q.get("dev", "")
        if q.get("kind") != "pfifo" or not (dev.startswith("p") or dev.startswith("ifb")):
            continue
        limit = (q.get("options") or {}).get("limit")
        rows.append((at, dev, int(q.get("qlen", 0)), int(q.get("backlog", 0)), limit))
    return rows


def sample(out: str, secs: float, every_s: float, ns: str = "cfk-sw") -> int:
    """Samples for ``secs`` seconds into ``out``; returns the samples taken."""
    cmd = ["tc", "-n", ns, "-s", "-j", "qdisc", "show"]
    rows, n, end = [], 0, time.time() + secs
    while time.time() < end:
        at = time.time()
        got = subprocess.run(cmd, capture_output=True, text=True)
        if got.returncode != 0:
            raise SystemExit(f"{' '.join(cmd)}: {got.stderr.strip() or 'failed'}")
        rows += parse(got.stdout, at)
        n += 1
        time.sleep(max(0.0, at + every_s - time.time()))
    pd.DataFrame(rows, columns=COLUMNS).to_csv(out, index=False)
    return n


def window(run: str) -> tuple[float, float]:
    """The replay of ``run``: its t0 and its last flow's end, in wall time."""
    with open(os.path.join(run, "traffic-go.json"), encoding="utf-8") as fh:
        t0 = float(json.load(fh)["t0"])
    flows = pd.read_csv(os.path.join(run, "flows.csv"))
    return t0, t0 + float(flows["end_s"].max())


def summary(df: pd.DataFrame, span: tuple[float, float] | None = None) -> pd.DataFrame:
    """Per direction (all ports) and per port: samples, median and 90th
    percentile of packets queued, and the share of samples at 90% of the
    limit or more."""
    if span is not None:
        df = df[(df["time"] >= span[0]) & (df["time"] <= span[1])]
    if df.empty:
        raise SystemExit("no samples in the replay's window")
    df = df.assign(
        direction=["uplink" if d.startswith("ifb") else "downlink" for d in df["dev"]],
        full=df["packets"] >= 0.9 * df["limit"],
    )
    rows = []
    groups = [(d, "all", g) for d, g in df.groupby("direction")]
    groups += [(d, dev, g) for (d, dev), g in df.groupby(["direction", "dev"])]
    for direction, dev, g in groups:
        rows.append({
            "direction": direction,
            "port": dev,
            "samples": len(g),
            "median packets": float(g["packets"].median()),
            "p90 packets": float(g["packets"].quantile(0.9)),
            "at 90% of the limit": f"{100 * g['full'].mean():.0f}%",
        })  # fmt: skip
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("sample")
    s.add_argument("out")
    s.add_argument("secs", type=float)
    s.add_argument("--every-ms", type=float, default=100.0)
    m = sub.add_parser("summary")
    m.add_argument("csv")
    m.add_argument("--run", default=None, help="a testbed run: keep only its replay")
    a = ap.parse_args(argv)
    if a.cmd == "sample":
        if a.secs <= 0 or a.every_ms <= 0:
            ap.error("SECS and --every-ms must be positive")
        print(f"{sample(a.out, a.secs, a.every_ms / 1000)} samples -> {a.out}")
    else:
        df = pd.read_csv(a.csv)
        print(markdown(summary(df, window(a.run) if a.run else None)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
