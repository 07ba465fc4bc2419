#!/usr/bin/env bash
# gunzip's speed (sys/gz/inflate) against zlib's inflate: bench/gunzip.sh
# [BUILD [MB]] (default build, 75; run from the project root). Makes a JSON
# log of about MB megabytes (ids and numbers that compress about 5 to 1,
# like real loop state), gzips it, and times both decoders on it, the best
# of 5 runs each, in MB/s of output. BUILD must hold libloopkit.a.
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
mb=${2:-75}
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/loopkit-gunzip.XXXXXX")
trap 'rm -rf "$work"' EXIT
c++ -std=c++20 -O2 -I"$top/lib" "$top/bench/gz-bench.cpp" "$build/libloopkit.a" -lz -o "$work/gz-bench"
awk -v n=$((mb * 1000000 / 110)) 'BEGIN {
  srand(24)
  printf "[\n"
  for (i = 1; i <= n; i++)
    printf "  {\"seq\": %d, \"id\": \"%08x%08x\", \"cost\": %.4f, \"status\": \"%s\", \"note\": \"step %d of the plan\"}%s\n",
      i, int(rand() * 2^31), int(rand() * 2^31), rand() * 100, (rand() < 0.9 ? "ok" : "retry"), int(rand() * 50),
      (i < n ? "," : "")
  printf "]\n"
}' >"$work/log.json"
gzip -6 -c "$work/log.json" >"$work/log.json.gz"
echo "input: $(stat -c %s "$work/log.json") bytes of JSON, $(stat -c %s "$work/log.json.gz") gzipped (gzip -6)"
for which in zlib loopkit; do "$work/gz-bench" gunzip "$which" "$work/log.json.gz" 5; done
