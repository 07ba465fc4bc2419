#!/usr/bin/env bash
# gzip's size and speed (sys/gz/deflate) against zlib's deflate at level 6 and
# gzip -6: bench/gzip.sh [BUILD [MB]] (default build, 4; run from the
# project root). Three inputs of about MB megabytes, the same bytes on every
# run (no rand: mawk and gawk would not agree): a loop state in jq's layout
# (lib-bench.bash's make_history, bench/state.sh's big.json), an event log
# of random ids and numbers (bench/gunzip.sh's, about 5 to 1) and a
# markdown progress log. For each: the compressed sizes and loopkit's against zlib's
# (issue 24: within about 5%), the instructions per input byte (callgrind,
# deterministic: each deflate alone for the library calls, the whole
# process for gzip -6) and the best of 3 runs in MB/s of input. BUILD must
# hold libloopkit.a. Prints a markdown table; exit status 2 when valgrind is
# missing.
set -euo pipefail
export LC_ALL=C
build=$(cd "${1:-build}" && pwd)
mb=${2:-4}
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib-bench.bash
source "$top/bench/lib-bench.bash"
command -v valgrind >/dev/null || { echo "gzip.sh: valgrind is not installed" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/loopkit-gzip.XXXXXX")
trap 'rm -rf "$work"' EXIT
c++ -std=c++20 -O2 -I"$top/lib" "$top/bench/gz-bench.cpp" "$build/libloopkit.a" -lz -o "$work/gz-bench"

# make_log BYTES FILE: a progress log of iterations, words picked by i alone
make_log() {
  awk -v bytes="$1" 'BEGIN {
  n = split("the test build fails passes on lock state file agent retries after a timeout with exit code 3 fixed by reading log again and moving", w, " ")
  printf "# progress\n\n"
  for (i = 1; size < bytes; i++) {
    line = sprintf("## 2025-01-%02dT%02d:%02d:%02dZ iteration %d\n\n- status: %s\n- note:",
      1 + int(i / 86400) % 28, int(i / 3600) % 24, int(i / 60) % 60, i % 60, i, (i % 4 ? "done" : "blocked"))
    for (k = 0; k < 5 + (i * 7) % 30; k++) line = line " " w[1 + (i * 31 + k * k * 17 + int(i / 3)) % n]
    line = line "\n\n"
    printf "%s", line
    size += length(line)
  }
}' >"$2"
}

# make_events BYTES FILE: bench/gunzip.sh's JSON log, its ids and numbers
# from a linear congruential generator (exact in awk's doubles) for rand
make_events() {
  awk -v bytes="$1" 'BEGIN {
  x = 24
  printf "[\n"
  for (i = 1; size < bytes; i++) {
    for (k = 0; k < 5; k++) { x = (x * 69069 + 1) % 4294967296; r[k] = x }
    line = sprintf("  {\"seq\": %d, \"id\": \"%08x%08x\", \"cost\": %d.%04d, \"status\": \"%s\", \"note\": \"step %d of the plan\"},\n",
      i, r[0], r[1], r[2] % 100, r[3] % 10000, (r[4] % 10 ? "ok" : "retry"), int(r[4] / 10) % 50)
    printf "%s", line
    size += length(line)
  }
  printf "  {}\n]\n"
}' >"$2"
}

# instructions PATTERN COMMAND...: callgrind's count inside the functions
# PATTERN names (all of the process when empty)
instructions() {
  local pattern=$1 toggle=()
  shift
  [[ -z $pattern ]] || toggle=(--toggle-collect="$pattern")
  valgrind --tool=callgrind --callgrind-out-file=/dev/null "${toggle[@]}" "$@" 2>&1 >/dev/null |
    sed -n 's/^==[0-9]*== Collected : \([0-9]*\)$/\1/p'
}

per_byte() { awk -v i="$1" -v b="$2" 'BEGIN { printf "%.1f", i / b }'; }

row() { # row NAME FILE
  local name=$1 file=$2 bytes ours zlib gz ours_speed zlib_speed
  bytes=$(wc -c <"$file")
  read -r ours ours_speed < <("$work/gz-bench" gzip loopkit "$file" 3)
  read -r zlib zlib_speed < <("$work/gz-bench" gzip zlib "$file" 3)
  gz=$(gzip -6 -c "$file" | wc -c)
  printf '| %s, %s bytes | %s (%.2f%%) | %s (%.2f%%) | %s (%.2f%%) | %+.2f%% | %s / %s / %s | %s / %s |\n' \
    "$name" "$bytes" "$ours" "$(awk -v a="$ours" -v b="$bytes" 'BEGIN { print 100 * a / b }')" \
    "$zlib" "$(awk -v a="$zlib" -v b="$bytes" 'BEGIN { print 100 * a / b }')" \
    "$gz" "$(awk -v a="$gz" -v b="$bytes" 'BEGIN { print 100 * a / b }')" \
    "$(awk -v a="$ours" -v b="$zlib" 'BEGIN { print 100 * (a - b) / b }')" \
    "$(per_byte "$(instructions '*loopkit_gzip*' "$work/gz-bench" gzip loopkit "$file" 1)" "$bytes")" \
    "$(per_byte "$(instructions '*zlib_gzip*' "$work/gz-bench" gzip zlib "$file" 1)" "$bytes")" \
    "$(per_byte "$(instructions '' gzip -6 -c "$file")" "$bytes")" "$ours_speed" "$zlib_speed"
}

make_history $((mb * 1000000 / 252)) "$work/state.json"
make_events $((mb * 1000000)) "$work/events.json"
make_log $((mb * 1000000)) "$work/progress.md"
echo "| input | loopkit | zlib -6 | gzip -6 | loopkit vs zlib | instr/byte: loopkit / zlib / gzip -6 | MB/s: loopkit / zlib |"
echo "|---|---|---|---|---|---|---|"
row "JSON state (jq layout)" "$work/state.json"
row "JSON event log (random ids)" "$work/events.json"
row "markdown progress log" "$work/progress.md"
