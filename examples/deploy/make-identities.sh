#!/usr/bin/env bash
# Makes every identity of a coflowkit cluster in one folder, ready to copy:
#   OUT/master/   ca.crt, master.crt, master.key, tokens (read,register) for the master host
#   OUT/host-N/   ca.crt, host-N.crt, host-N.key for the agent of host N
#   OUT/ca/       ca.key and ca.crt: keep this folder offline (it signs new hosts)
#   OUT/reader.token   a read-only API token (dashboard, monitoring)
#
# usage: make-identities.sh HOSTS_FILE MASTER_ADDRESS OUT
#   HOSTS_FILE: one line per host, "INDEX ADDRESS" (host 0 first); '#' starts a comment.
# COFLOWKIT overrides the command (default: coflowkit).
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: $0 HOSTS_FILE MASTER_ADDRESS OUT" >&2; exit 2; }
hosts=$1 master=$2 out=$3
ck=${COFLOWKIT:-coflowkit}
umask 077
[ -e "$out" ] && { echo "$out exists: refusing to overwrite identities" >&2; exit 1; }
mkdir -p "$out/ca" "$out/master"
$ck ca init --dir "$out/ca" >/dev/null
$ck ca issue --dir "$out/ca" --master --ip "$master" --out "$out/master" >/dev/null
cp "$out/ca/ca.crt" "$out/master/"
$ck ca token --dir "$out/ca" --scope read,register > "$out/master/tokens"
$ck ca token --dir "$out/ca" --scope read > "$out/reader.token"
cat "$out/reader.token" >> "$out/master/tokens"
n=0
while read -r index addr _; do
  case "$index" in ''|'#'*) continue ;; esac
  [[ "$index" =~ ^[0-9]+$ ]] || { echo "$hosts: bad host index '$index'" >&2; exit 1; }
  mkdir -p "$out/host-$index"
  $ck ca issue --dir "$out/ca" --host "$index" --ip "$addr" --out "$out/host-$index" >/dev/null
  cp "$out/ca/ca.crt" "$out/host-$index/"
  n=$((n + 1))
done < "$hosts"
echo "identities of the master and $n hosts in $out (keep $out/ca offline)"
