"""TCP state of one testbed host's sockets during a run (issue 26, item 5).

``sample OUT HOST SECONDS``: every 100 ms, ``ss -tin`` (established sockets,
with TCP info) inside host HOST's namespace, one JSON line per sample
(``{"t", "ss"}``). Run it beside ``coflowkit testbed run`` (as root).

``retrans JSONL HOST [--out CSV] [--run RUN_DIR]``: per data socket of the
host's own address (the last sample in which it was seen): bytes sent, bytes
retransmitted and retransmitted segments, and their totals. With ``--run``,
the run's directory (its ``traffic-plan.json`` and ``coflows.csv``): each
socket is matched to the planned flow from HOST to its peer's address and
port, and the totals are also given per bin of the flow's coflow (SN, SW, LN,
LW).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import subprocess
import sys
import time

FIELD = re.compile(r"(\w+):([\d./]+)")


def sample(out: str, host: int, seconds: float, every_s: float = 0.1) -> None:
    ns = f"cfk-h{host}"
    end = time.time() + seconds
    with open(out, "w", encoding="utf-8") as fh:
        while time.time() < end:
            t = time.time()
            try:
                ss = subprocess.run(["ip", "netns", "exec", ns, "ss", "-tinH", "state", "established"],
                                    capture_output=True, text=True, timeout=2).stdout  # fmt: skip
            except (OSError, subprocess.TimeoutExpired):
                ss = ""
            fh.write(json.dumps({"t": t, "ss": ss}) + "\n")
            fh.flush()
            time.sleep(max(0.0, every_s - (time.time() - t)))


def retrans(lines, host_ip: str) -> dict:
    """{(local, peer): (bytes_sent, bytes_retrans, retransmitted segments)}, from
    the last sample that shows each sending socket of ``host_ip``."""
    last = {}
    for line in lines:
        rows = json.loads(line)["ss"].splitlines()
        for head, info in zip(rows[0::2], rows[1::2], strict=False):
            p = head.split()
            if len(p) < 4 or not p[2].startswith(host_ip + ":"):
                continue
            m = dict(FIELD.findall(info))
            if "bytes_sent" not in m:
                continue
            segs = int(m.get("retrans", "0/0").split("/")[1])
            last[(p[2], p[3])] = (int(m["bytes_sent"]), int(m.get("bytes_retrans", 0) or 0), segs)
    return last


def by_bin(got: dict, run_dir: str, host: int) -> dict:
    """``{bin: [sockets, bytes sent, bytes retransmitted, segments]}`` of the
    sockets in ``got`` matched to the run's planned flows from ``host``; those
    matching no planned flow (the goodput probe, for one) under ``"?"``."""
    with open(os.path.join(run_dir, "traffic-plan.json"), encoding="utf-8") as fh:
        plan = json.load(fh)
    with open(os.path.join(run_dir, "coflows.csv"), encoding="utf-8") as fh:
        bin_of = {int(r["coflow_id"]): r["bin"] for r in csv.DictReader(fh)}
    hosts = plan["hosts"]
    flow_bin = {
        (hosts[f["dst"]], int(f["port"])): bin_of.get(int(f["coflow"]), "?")
        for f in plan["flows"]
        if f["src"] == host
    }
    out: dict[str, list[int]] = {}
    for (_, peer), (sent, rbytes, segs) in got.items():
        ip, _, port = peer.rpartition(":")
        t = out.setdefault(flow_bin.get((ip, int(port)), "?"), [0, 0, 0, 0])
        t[0] += 1
        t[1] += sent
        t[2] += rbytes
        t[3] += segs
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("sample")
    s.add_argument("out")
    s.add_argument("host", type=int)
    s.add_argument("seconds", type=float)
    r = sub.add_parser("retrans")
    r.add_argument("jsonl")
    r.add_argument("host", type=int)
    r.add_argument("--out", help="also write the per-socket rows as CSV")
    r.add_argument("--run", help="the run's directory: totals per bin of the flows' coflows")
    a = ap.parse_args(argv)
    if a.cmd == "sample":
        sample(a.out, a.host, a.seconds)
        return 0
    with open(a.jsonl, encoding="utf-8") as fh:
        got = retrans(fh, f"10.77.0.{a.host + 1}")
    if a.out:
        with open(a.out, "w", encoding="utf-8") as fh:
            fh.write("local,peer,bytes_sent,bytes_retrans,retrans_segments\n")
            for (lo, pe), v in sorted(got.items()):
                fh.write(f"{lo},{pe},{v[0]},{v[1]},{v[2]}\n")
    sent = sum(v[0] for v in got.values())
    print(f"{len(got)} sockets: {sent} bytes sent, {sum(v[1] for v in got.values())} retransmitted "
          f"in {sum(v[2] for v in got.values())} segments")  # fmt: skip
    if a.run:
        print("| bin | sockets | bytes sent | bytes retransmitted | segments retransmitted |")
        print("|---|---:|---:|---:|---:|")
        for b, t in sorted(by_bin(got, a.run, a.host).items()):
            print(f"| {b} | {t[0]} | {t[1]:,} | {t[2]:,} | {t[3]:,} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
