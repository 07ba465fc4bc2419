#!/usr/bin/env bash
# loopkit's etcd client against etcdctl, on a throwaway local etcd:
#   bench/etcd.sh [BUILDDIR] [N]   (default: build and 200; from the project root)
# Builds bench/etcd-driver.cpp against BUILDDIR/libloopkit.a, starts etcd with
# tests/etcd/etcd-sandbox and times, per operation:
#   put+get   `etcdctl put` then `etcdctl get` (two processes) against the
#             driver doing both in one process per pair, and in one process
#             for all N pairs (the reused connection);
#   lock      `etcdctl lock KEY true` against the driver's grant, create-if-
#             absent and revoke, likewise.
# Prints a markdown table with the ratios; needs etcd, etcdctl and g++.
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(cd "${1:-build}" && pwd)
n=${2:-200}
for c in etcd etcdctl g++; do
  command -v "$c" >/dev/null || { echo "etcd.sh: $c is not installed" >&2; exit 2; }
done
[[ -f $build/libloopkit.a ]] || { echo "etcd.sh: $build/libloopkit.a not built" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/loopkit-bench-etcd.XXXXXX")
cleanup() { "$top/tests/etcd/etcd-sandbox" stop "$work/etcd" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

driver=$work/etcd-driver
# static, as the tools are (the linker's getaddrinfo warning goes to the log)
if ! g++ -std=c++20 -O2 -I"$top/lib" "$top/bench/etcd-driver.cpp" "$build/libloopkit.a" \
  -static -lssl -lcrypto -lz -pthread -o "$driver" 2>"$work/cc.log"; then
  cat "$work/cc.log" >&2
  exit 3
fi
endpoints=$("$top/tests/etcd/etcd-sandbox" start "$work/etcd" 1 $$)
export ETCDCTL_API=3

# milliseconds per iteration of the command string, run n times
per_op() {
  local start end
  start=$(date +%s%N)
  for ((i = 0; i < n; i++)); do eval "$1" >/dev/null; done
  end=$(date +%s%N)
  echo "scale=3; ($end - $start) / 1000000 / $n" | bc
}
once() {
  local start end
  start=$(date +%s%N)
  "$@" >/dev/null
  end=$(date +%s%N)
  echo "scale=3; ($end - $start) / 1000000 / $n" | bc
}
ratio() { echo "scale=1; $1 / $2" | bc; }

ctl_put=$(per_op "etcdctl --endpoints $endpoints put /bench/k value && etcdctl --endpoints $endpoints get /bench/k")
raw_put=$(per_op "$driver $endpoints put-get 1")
loop_put=$(once "$driver" "$endpoints" put-get "$n")
ctl_lock=$(per_op "etcdctl --endpoints $endpoints lock /bench/l true")
raw_lock=$(per_op "$driver $endpoints lock 1")
loop_lock=$(once "$driver" "$endpoints" lock "$n")

echo "etcd $(etcd --version | sed -n 's/^etcd Version: //p'), $n rounds, ms per round"
echo
echo "| operation | etcdctl | driver, process per round | ratio | driver, one process | ratio |"
echo "|---|---|---|---|---|---|"
echo "| put + get | $ctl_put | $raw_put | $(ratio "$ctl_put" "$raw_put")x | $loop_put | $(ratio "$ctl_put" "$loop_put")x |"
echo "| lock KEY true | $ctl_lock | $raw_lock | $(ratio "$ctl_lock" "$raw_lock")x | $loop_lock | $(ratio "$ctl_lock" "$loop_lock")x |"
