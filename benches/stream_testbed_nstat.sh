#!/usr/bin/env bash
# The TCP counters of every testbed host (nstat, per network namespace) around
# one decentralized Stream run and its TCP baseline on the default shuffle
# workload: docs/results/testbed/stream-decentralized/README.md ("Where the
# time goes"). As root, from the repository; OUT defaults to /tmp/stream-nstat.
set -euo pipefail
OUT=${1:-/tmp/stream-nstat}
mkdir -p "$OUT"
snap() {
  for i in 0 1 2 3 4 5 6 7; do
    ip netns exec "cfk-h$i" nstat -a -s -z TcpExtTCPTimeouts TcpRetransSegs TcpOutSegs \
      TcpExtTCPLossProbes TcpExtTCPSpuriousRTOs | awk -v h="$i" 'NR>1{print h, $1, $2}'
  done
}
for v in "stream|" "tcp|--observe-only"; do
  name=${v%%|*}; extra=${v#*|}
  coflowkit testbed up --switch-queues 8 > /dev/null
  snap > "$OUT/nstat-$name-before.txt"
  # shellcheck disable=SC2086
  coflowkit testbed run --policy stream --decentralized $extra --out "$OUT/$name"
  snap > "$OUT/nstat-$name-after.txt"
done
