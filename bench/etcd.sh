#!/usr/bin/env bash
# loopkit's etcd client against etcdctl, on a throwaway local etcd:
#   bench/etcd.sh [BUILDDIR] [N] [MODES]   (default: build, 200, "fsync no-fsync";
#                                           from the project root)
# Builds bench/etcd-driver.cpp against BUILDDIR/libloopkit.a and, for each
# mode, starts etcd (bench/etcd-server.sh) syncing its log to disk as etcd
# does by default (fsync) or not (--unsafe-no-fsync), then times, per
# operation:
#   put+get   `etcdctl put` then `etcdctl get` (two processes) against the
#             driver doing both in one process per pair, and in one process
#             for all N pairs (the reused connection);
#   lock      `etcdctl lock KEY true` against the driver's grant, create-if-
#             absent and revoke, likewise;
# and the tools themselves (BUILDDIR/bin), a process per round as scripts
# run them, each beside issue 24's goal:
#   update    `state-set URL n+=1` against `etcdctl get | jq '.n+=1' |
#             etcdctl put` (goal: 8x), and the updates each keeps of 4
#             writers x 50;
#   lock      `lock-acquire URL -- true` against `etcdctl lock KEY true`
#             (goal: 3x);
# where the update's milliseconds go, each part measured on its own: a
# static tool's process on a local file, the same for loopkit-etcd (the
# etcd client's image), loopkit-etcd reading the key (a connection and one
# range request, no hop), loopkit-etcd updating it (the range and the
# conditioned txn, no hop), and the hop from state-set to loopkit-etcd;
# and the lock hand-off (bench/handoff-etcd.sh: 2 ms median, 10 ms p99).
# Prints markdown tables with the ratios; needs etcd, etcdctl, jq and g++.
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(cd "${1:-build}" && pwd)
n=${2:-200}
modes=${3:-fsync no-fsync}
for c in etcd etcdctl jq g++; do
  command -v "$c" >/dev/null || { echo "etcd.sh: $c is not installed" >&2; exit 2; }
done
[[ -f $build/libloopkit.a ]] || { echo "etcd.sh: $build/libloopkit.a not built" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/loopkit-bench-etcd.XXXXXX")
# shellcheck source=bench/etcd-server.sh
source "$top/bench/etcd-server.sh"
cleanup() { etcd_server_stop; rm -rf "$work"; }
trap cleanup EXIT

driver=$work/etcd-driver
# static, as the tools are (the linker's getaddrinfo warning goes to the log)
if ! g++ -std=c++20 -O2 -I"$top/lib" "$top/bench/etcd-driver.cpp" "$build/libloopkit.a" \
  -static -lssl -lcrypto -lz -pthread -o "$driver" 2>"$work/cc.log"; then
  cat "$work/cc.log" >&2
  exit 3
fi
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
minus() { echo "scale=3; $1 - $2" | bc; }
goal() { if (($(echo "$1 >= $2" | bc))); then echo "met"; else echo "not met"; fi; }

# 4 writers x 50 increments from 0: how many survive
kept() {
  etcdctl --endpoints "$endpoints" put /bench/race '{"n": 0}' >/dev/null
  for _ in 1 2 3 4; do
    (for _ in $(seq 50); do eval "$1" >/dev/null 2>&1 || true; done) &
  done
  wait
  etcdctl --endpoints "$endpoints" get --print-value-only /bench/race | jq .n
}

# Mean milliseconds of each command, run n times in turn (round by round,
# so that all see the same machine): for differences between them
in_turn() {
  local -a sum
  local i j s e
  for ((j = 1; j <= $#; j++)); do sum[j]=0; done
  for ((i = 0; i < n; i++)); do
    for ((j = 1; j <= $#; j++)); do
      s=$EPOCHREALTIME
      eval "${!j}" >/dev/null
      e=$EPOCHREALTIME
      sum[j]=$((sum[j] + ${e/./} - ${s/./}))
    done
  done
  for ((j = 1; j <= $#; j++)); do printf '%s\n' "$(echo "scale=3; ${sum[j]} / $n / 1000" | bc)"; done
}

# state-set URL n+=1, part by part: loopkit-etcd run under a tool's name
# (it takes its command from argv[0]) skips the hop
update_parts() {
  local url=$1 le=$work/le file=$work/state.json
  mkdir -p "$le"
  ln -sf "$build/libexec/loopkit/loopkit-etcd" "$le/state-get"
  ln -sf "$build/libexec/loopkit/loopkit-etcd" "$le/state-set"
  echo '{"n": 0}' >"$file"
  local tool_file le_file le_get le_set whole
  { read -r tool_file; read -r le_file; read -r le_get; read -r le_set; read -r whole; } < <(
    in_turn "$build/bin/state-get $file n" "$le/state-get $file n" "$le/state-get $url n" \
      "$le/state-set $url n+=1" "$build/bin/state-set $url n+=1"
  )
  echo "| where \`state-set URL n+=1\`'s $whole ms go ($mode; each part in turn, round by round) | ms |"
  echo "|---|---|"
  echo "| a static tool's process on a local file (\`state-get FILE n\`: the script's fork, exec, exit) | $tool_file |"
  echo "| the same for loopkit-etcd, the etcd client's image | $le_file |"
  echo "| connecting and one range request (loopkit-etcd reading the key, less the line above) | $(minus "$le_get" "$le_file") |"
  echo "| the conditioned txn that writes it (loopkit-etcd updating the key, less reading it) | $(minus "$le_set" "$le_get") |"
  echo "| the hop: state-set's own process, then its exec of loopkit-etcd (the whole, less loopkit-etcd updating) | $(minus "$whole" "$le_set") |"
}

bench_mode() {
  local mode=$1
  etcd_server_start "$work/etcd-$mode" "$mode"
  endpoints=$ETCD_ENDPOINT
  local ctl_put raw_put loop_put ctl_lock raw_lock loop_lock
  ctl_put=$(per_op "etcdctl --endpoints $endpoints put /bench/k value && etcdctl --endpoints $endpoints get /bench/k")
  raw_put=$(per_op "$driver $endpoints put-get 1")
  loop_put=$(once "$driver" "$endpoints" put-get "$n")
  ctl_lock=$(per_op "etcdctl --endpoints $endpoints lock /bench/l true")
  raw_lock=$(per_op "$driver $endpoints lock 1")
  loop_lock=$(once "$driver" "$endpoints" lock "$n")

  echo "## etcd $(etcd --version | sed -n 's/^etcd Version: //p'), $mode, $n rounds, ms per round"
  echo
  echo "| operation | etcdctl | driver, process per round | ratio | driver, one process | ratio |"
  echo "|---|---|---|---|---|---|"
  echo "| put + get | $ctl_put | $raw_put | $(ratio "$ctl_put" "$raw_put")x | $loop_put | $(ratio "$ctl_put" "$loop_put")x |"
  echo "| lock KEY true | $ctl_lock | $raw_lock | $(ratio "$ctl_lock" "$raw_lock")x | $loop_lock | $(ratio "$ctl_lock" "$loop_lock")x |"

  # ---- the tools, a process per round ----------------------------------------
  local bin=$build/bin url=etcd://$endpoints/bench/state
  etcdctl --endpoints "$endpoints" put /bench/state '{"n": 0}' >/dev/null
  local ctl_update="etcdctl --endpoints $endpoints get --print-value-only /bench/state | jq -c '.n+=1' | etcdctl --endpoints $endpoints put /bench/state"
  local ctl_upd lk_upd ctl_lk lk_lk ctl_kept lk_kept r_upd r_lk
  ctl_upd=$(per_op "$ctl_update")
  lk_upd=$(per_op "$bin/state-set $url n+=1")
  ctl_lk=$(per_op "etcdctl --endpoints $endpoints lock /bench/l2 true")
  lk_lk=$(per_op "$bin/lock-acquire etcd://$endpoints/bench/l3 -- true")
  ctl_kept=$(kept "etcdctl --endpoints $endpoints get --print-value-only /bench/race | jq -c '.n+=1' | etcdctl --endpoints $endpoints put /bench/race")
  lk_kept=$(kept "$bin/state-set etcd://$endpoints/bench/race n+=1")
  r_upd=$(ratio "$ctl_upd" "$lk_upd")
  r_lk=$(ratio "$ctl_lk" "$lk_lk")

  echo
  echo "| tool, a process per round ($mode) | shell pipeline | loopkit | ratio | goal |"
  echo "|---|---|---|---|---|"
  echo "| update one field: \`etcdctl get \| jq '.n+=1' \| etcdctl put\` vs \`state-set URL n+=1\` | $ctl_upd ms | $lk_upd ms | ${r_upd}x | 8x: $(goal "$r_upd" 8) |"
  echo "| lock, run, release: \`etcdctl lock KEY true\` vs \`lock-acquire URL -- true\` | $ctl_lk ms | $lk_lk ms | ${r_lk}x | 3x: $(goal "$r_lk" 3) |"
  echo "| updates kept of 4 writers x 50 | $ctl_kept of 200 | $lk_kept of 200 | | |"
  echo
  update_parts "$url"
  echo
  etcd_server_stop
  # the lock hand-off, on an etcd of its own in the same mode
  bash "$top/bench/handoff-etcd.sh" "$build" "$n" "$mode" | sed 1,2d
  echo
}

for mode in $modes; do bench_mode "$mode"; done
