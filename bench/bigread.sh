#!/usr/bin/env bash
# The validating read of a large state file against issue 24's goal (at most
# 3 instructions a byte): bench/bigread.sh [BINDIR] (default build/bin; run
# from the project root). Two files of about 15 MB, generated the same way
# on every run:
# - "agent state": a loop state pretty-printed as jq prints it, whose
#   history entries hold nested objects, arrays of strings and of objects,
#   strings with escapes (\n, \", \\, \u00e9, surrogate pairs) and raw
#   non-ASCII UTF-8 (accents, CJK, emoji), integers, decimals, exponents and
#   literals: about 40 tokens in 800 bytes;
# - "loop history": bench/state.sh's big.json, the file of the issue's
#   figures (5.2 then; simdjson's DOM parse 4.5): 4 members an entry, one a
#   sentence of 130 bytes.
# For each, callgrind counts the instructions of `state-get FILE
# history[-1].FIELD` (which validates the whole document in one pass) in an
# environment of PATH and HOME only, as bench/floor.sh does, and divides by
# the file's size; jq's count for the same read is printed beside it when jq
# is installed. Prints a markdown table; exit status 0 (the goal is shown,
# not enforced), 2 when valgrind or the tool is missing, 4 when state-get's
# answer differs from jq's.
set -euo pipefail
export LC_ALL=C
bin=$(cd "${1:-build/bin}" && pwd)
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib-bench.bash
source "$top/bench/lib-bench.bash"
command -v valgrind >/dev/null || { echo "bigread.sh: valgrind is not installed" >&2; exit 2; }
[[ -x $bin/state-get ]] || { echo "bigread.sh: $bin/state-get is missing: build it first" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/loopkit-bigread.XXXXXX")
trap 'rm -rf "$work"' EXIT
clean_env=(env -i PATH=/usr/bin:/bin HOME="$work")

# make_state ENTRIES FILE: a loop state whose history holds ENTRIES records
# of about 640 bytes; the text varies with i only (no rand: mawk and gawk
# would not agree), so every run measures the same bytes
make_state() {
  awk -v n="$1" 'BEGIN {
  split("ralph|review|plan|test|refactor", stage, "|")
  split("continue|stop|retry|plateau", dec, "|")
  split("lib/core/scan/scan.cpp|tests/unit/scan_test.cpp|bench/bigread.sh|README.md|docs/naïve-plan.md", file, "|")
  w[0] = "parsed the \\\"state\\\" file, ran the tests;"
  w[1] = "café au lait — naïve résumé ✓"
  w[2] = "line one\\nline two\\twith a tab and a \\\\ backslash"
  w[3] = "日本語のテキスト and ASCII after it"
  w[4] = "next: the writer keeps the layout of untouched members"
  w[5] = "emoji 🚀 and \\u00e9 escaped, \\ud83d\\ude80 a pair"
  printf "{\n  \"session\": \"bench-bigread\",\n  \"type\": \"loop\",\n"
  printf "  \"started_at\": \"2025-01-01T00:00:00Z\",\n  \"status\": \"running\",\n"
  printf "  \"iteration\": %d,\n  \"config\": {\n    \"max_iterations\": 100000,\n", n
  printf "    \"models\": [\"opus\", \"sonnet\"],\n    \"budget\": 1.5e3,\n    \"dry_run\": false\n  },\n"
  printf "  \"history\": [\n"
  for (i = 1; i <= n; i++) {
    printf "    {\n      \"iteration\": %d,\n", i
    printf "      \"timestamp\": \"2025-01-%02dT%02d:%02d:%02dZ\",\n",
      1 + int(i / 86400) % 28, int(i / 3600) % 24, int(i / 60) % 60, i % 60
    printf "      \"stage\": \"%s\",\n      \"decision\": \"%s\",\n", stage[1 + i % 5], dec[1 + i % 4]
    printf "      \"duration_s\": %d.%03d,\n      \"score\": -%d.%de-%d,\n", i % 900, (i * 7) % 1000, i % 9, i % 97, 1 + i % 5
    printf "      \"plateau\": %s,\n      \"parent\": %s,\n", (i % 7 == 0 ? "true" : "false"), (i % 3 ? i - 1 : "null")
    printf "      \"tokens\": {\n        \"input\": %d,\n        \"output\": %d,\n        \"cached\": %d\n      },\n",
      (i * 7919) % 200000, (i * 104729) % 9000, (i * 31) % 50000
    printf "      \"files\": [\n        \"%s\",\n        \"%s\"\n      ],\n", file[1 + i % 5], file[1 + (i * 3) % 5]
    printf "      \"tool_calls\": [\n        {\n          \"name\": \"bash\",\n          \"exit\": %d,\n", i % 2
    printf "          \"output\": \"%s %d\"\n        },\n        {\n", w[i % 6], i
    printf "          \"name\": \"edit\",\n          \"exit\": 0,\n          \"output\": \"\"\n        }\n      ],\n"
    printf "      \"summary\": \"iteration %d: %s %s\"\n    }%s\n", i, w[(i + 1) % 6], w[(i + 4) % 6], (i < n ? "," : "")
  }
  printf "  ]\n}\n"
}' >"$2"
}

# instructions COMMAND...: callgrind's total for one run (as bench/floor.sh)
instructions() {
  "${clean_env[@]}" valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null |
    sed -n 's/^==[0-9]*== Collected : \([0-9]*\)$/\1/p'
}

per_byte() { awk -v i="$1" -v b="$2" 'BEGIN { printf "%.2f", i / b }'; }

# row NAME FILE PATH: one line of the table
row() {
  local name=$1 file=$2 path=$3 bytes mb got want ours met theirs=-
  bytes=$(wc -c <"$file")
  mb=$(awk -v b="$bytes" 'BEGIN { printf "%.1f", b / 1e6 }')
  got=$("$bin/state-get" "$file" "$path")
  if command -v jq >/dev/null; then
    want=$(jq -r ".$path" "$file")
    [[ $got == "$want" ]] || { echo "bigread.sh: state-get printed '$got', jq '$want'" >&2; exit 4; }
    theirs=$(per_byte "$(instructions jq -e ".$path" "$file")" "$bytes")
  fi
  ours=$(per_byte "$(instructions "$bin/state-get" "$file" "$path")" "$bytes")
  met=$(awk -v r="$ours" 'BEGIN { print (r <= 3) ? "met" : "not met" }')
  # shellcheck disable=SC2016 # the backquotes are markdown
  printf '| validating read of %s MB, %s (`state-get FILE %s`) | %s instr/byte | ≤ 3: %s | %s |\n' \
    "$mb" "$name" "$path" "$ours" "$met" "$theirs"
}

make_state 18500 "$work/agent.json"
make_history 60000 "$work/history.json"
echo "| call | loopkit | goal | jq (\`jq -e .PATH FILE\`) |"
echo "|---|---|---|---|"
row "agent state" "$work/agent.json" 'history[-1].summary'
row "loop history" "$work/history.json" 'history[-1].reasoning'
