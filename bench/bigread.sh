#!/usr/bin/env bash
# The validating read of a large state file against issue 24's goal (at most
# 3 instructions a byte): bench/bigread.sh [BINDIR] (default build/bin; run
# from the project root). Generates a ~15 MB agent state deterministically
# (pretty-printed as jq prints it: nested objects, arrays of objects, strings
# with escapes and non-ASCII UTF-8, integers, decimals, exponents, literals),
# then counts the instructions of `state-get BIG.json history[-1].summary`
# with callgrind, in an environment of PATH and HOME only as bench/floor.sh
# does: state-get validates the whole document in one pass, so the count over
# the file's size is the cost of that pass. jq's count on the same file and
# path is printed beside it for comparison. Prints one markdown row each.
set -euo pipefail
export LC_ALL=C
bin=$(cd "${1:-build/bin}" && pwd)
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
  split("lib/core/scan.cpp|tests/unit/scan_test.cpp|bench/bigread.sh|README.md|docs/naïve-plan.md", file, "|")
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

big=$work/big.json
make_state 18500 "$big"
bytes=$(wc -c <"$big")
path='history[-1].summary'
want=$(jq -r ".$path" "$big" 2>/dev/null || true)
got=$("$bin/state-get" "$big" "$path")
[[ -z $want || $got == "$want" ]] || { echo "bigread.sh: state-get printed '$got', jq '$want'" >&2; exit 4; }
per_byte() { awk -v i="$1" -v b="$bytes" 'BEGIN { printf "%.2f", i / b }'; }
mb=$(awk -v b="$bytes" 'BEGIN { printf "%.1f", b / 1e6 }')
ours=$(per_byte "$(instructions "$bin/state-get" "$big" "$path")")
met=$(awk -v r="$ours" 'BEGIN { print (r <= 3) ? "met" : "not met" }')
echo "| call | instructions a byte | goal |"
echo "|---|---|---|"
# shellcheck disable=SC2016 # the backquotes are markdown
printf '| validating read of %s MB (`state-get BIG.json %s`) | %s instr/byte | ≤ 3: %s |\n' "$mb" "$path" "$ours" "$met"
if command -v jq >/dev/null; then
  theirs=$(per_byte "$(instructions jq -e ".$path" "$big")")
  # shellcheck disable=SC2016
  printf '| jq, the same read (`jq -e .%s BIG.json`) | %s instr/byte | (comparison) |\n' "$path" "$theirs"
fi
