"""The testbed switch's port queues during a run (issue 26, item 5).

``sample OUT SECONDS``: every 100 ms, the backlog and drop counter of every
pfifo queue of the switch namespace (``tc -s qdisc show`` in ``cfk-sw``), as
``t,dev,bytes,pkts,drops`` rows; ``p<i>`` is host i's downlink, ``ifb<i>``
its uplink. Run it beside ``coflowkit testbed run`` (as root).

``summary CSV``: per port over the busy window (first to last sample with a
packet queued), and over its first ``--first-s`` seconds: mean and 99th
percentile backlog in packets, the share of samples above 50 packets, and the
drops. ``--run RUN`` keeps only the samples of that run's replay (from its
``traffic-go.json`` t0 to its last flow's end in ``flows.csv``), so a
sampler started with the run leaves out the goodput probe before it.
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

QDISC = re.compile(
    r"qdisc pfifo \S+ dev (\S+) .*?\n\s+Sent \d+ bytes \d+ pkt \(dropped (\d+).*?\n"
    r"\s+backlog (\d+)b (\d+)p",
    re.S,
)


def parse(text: str) -> list[tuple[str, int, int, int]]:
    """(dev, backlog bytes, backlog packets, drops) of every pfifo in ``text``."""
    return [(m[1], int(m[3]), int(m[4]), int(m[2])) for m in QDISC.finditer(text)]


def sample(out: str, seconds: float, ns: str = "cfk-sw", every_s: float = 0.1) -> None:
    end = time.time() + seconds
    with open(out, "w", encoding="utf-8") as fh:
        fh.write("t,dev,bytes,pkts,drops\n")
        while time.time() < end:
            t = time.time()
            try:
                text = subprocess.run(["tc", "-n", ns, "-s", "qdisc", "show"],
                                      capture_output=True, text=True, timeout=2).stdout  # fmt: skip
            except (OSError, subprocess.TimeoutExpired):
                text = ""
            for dev, b, p, d in parse(text):
                fh.write(f"{t:.3f},{dev},{b},{p},{d}\n")
            fh.flush()
            time.sleep(max(0.0, every_s - (time.time() - t)))


def window(run: str) -> tuple[float, float]:
    """The replay of ``run``: its t0 and its last flow's end, in wall time."""
    with open(os.path.join(run, "traffic-go.json"), encoding="utf-8") as fh:
        t0 = float(json.load(fh)["t0"])
    return t0, t0 + float(pd.read_csv(os.path.join(run, "flows.csv"))["end_s"].max())


def summary(
    q: pd.DataFrame, first_s: float = 30.0, span: tuple[float, float] | None = None
) -> pd.DataFrame:
    if span is not None:
        q = q[(q.t >= span[0]) & (q.t <= span[1])]
    busy = q.loc[q.pkts > 0, "t"]
    if busy.empty:
        raise SystemExit("no sample with a packet queued in the window")
    q = q[(q.t >= busy.min()) & (q.t <= busy.max())]
    early = q[q.t <= busy.min() + first_s]
    g, e = q.groupby("dev"), early.groupby("dev")
    out = pd.DataFrame({
        "mean pkts": g.pkts.mean(),
        "p99 pkts": g.pkts.quantile(0.99),
        "samples over 50 pkts": g.pkts.apply(lambda x: (x > 50).mean()),
        "drops": g.drops.max() - g.drops.min(),
        f"mean pkts, first {first_s:g} s": e.pkts.mean(),
        f"p99 pkts, first {first_s:g} s": e.pkts.quantile(0.99),
    })  # fmt: skip
    order = sorted(out.index, key=lambda d: (not d.startswith("p"), int(re.sub(r"\D", "", d))))
    return out.loc[order].reset_index()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("sample")
    s.add_argument("out")
    s.add_argument("seconds", type=float)
    m = sub.add_parser("summary")
    m.add_argument("csv")
    m.add_argument("--first-s", type=float, default=30.0)
    m.add_argument("--run", default=None, help="a testbed run: keep only its replay")
    a = ap.parse_args(argv)
    if a.cmd == "sample":
        sample(a.out, a.seconds)
    else:
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
        from coflowkit.experiments.common import markdown

        span = window(a.run) if a.run else None
        print(markdown(summary(pd.read_csv(a.csv), a.first_s, span)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
