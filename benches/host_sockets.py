"""TCP state of one testbed host's sockets during a run (issue 26, item 5).

``sample OUT HOST SECONDS``: every 100 ms, ``ss -tin`` (established sockets,
with TCP info) inside host HOST's namespace, one JSON line per sample
(``{"t", "ss"}``). Run it beside ``coflowkit testbed run`` (as root).

``retrans JSONL [--out CSV]``: per data socket of the host's own address (the
last sample in which it was seen): bytes sent, bytes retransmitted and
retransmitted segments, and their totals.
"""

from __future__ import annotations

import argparse
import json
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
