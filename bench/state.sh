#!/usr/bin/env bash
# Measures state-get and state-set against jq, the tool they replace, in one
# run on this machine, and prints a Markdown table of the ratios:
#   bench/state.sh [--quick] [--dir DIR] [BINDIR]
# - instructions (valgrind --tool=callgrind) of `state-get small.json status`
#   and `jq -r .status small.json`: target at most 300k for state-get;
# - wall time (hyperfine, else a loop of timed runs) on a generated 15 MB state
#   file with 60 000 history entries: `state-get big.json
#   .history[-1].iteration` against `jq .history[-1].iteration big.json`
#   (target: at most 1/10 of jq's time) and `state-set big.json iteration+=1`
#   against `jq '.iteration+=1' big.json >tmp && mv tmp big.json` (target: at
#   most 1/5; state-set also fsyncs, which jq's version does not).
# BINDIR defaults to build/bin; --dir puts the scratch files in DIR (default:
# a temporary folder, removed afterwards; the disk matters for state-set's
# fsync). --quick makes fewer runs. Needs jq and valgrind; hyperfine is used
# when installed. Exit status: 0 every target met, 1 a target missed, 2 usage,
# 4 a tool is missing or a result differs from jq's.
set -euo pipefail
export LC_ALL=C

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
prog=bench/state.sh
bindir=$top/build/bin
dir=
runs=20
warmup=3
while [[ $# -gt 0 ]]; do
  case $1 in
    --quick) runs=5 warmup=1; shift ;;
    --dir) [[ $# -ge 2 ]] || { echo "$prog: --dir needs a folder" >&2; exit 2; }; dir=$2; shift 2 ;;
    -h | --help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; exit 0 ;;
    -*) echo "$prog: unknown option '$1'" >&2; exit 2 ;;
    *) bindir=$1; shift ;;
  esac
done

die() { echo "$prog: $2" >&2; exit "$1"; }
for t in state-get state-set; do
  [[ -x $bindir/$t ]] || die 4 "$bindir/$t is missing: build first (cmake --build build), or name BINDIR"
done
command -v jq >/dev/null || die 4 "jq is not installed (apt-get install jq)"
command -v valgrind >/dev/null || die 4 "valgrind is not installed (apt-get install valgrind)"
bindir=$(cd "$bindir" && pwd)
get=$bindir/state-get set=$bindir/state-set

if [[ -n $dir ]]; then
  mkdir -p "$dir"
  w=$(mktemp -d "$dir/bench-state.XXXXXX")
else
  w=$(mktemp -d)
fi
trap 'rm -rf "$w"' EXIT
cd "$w"

# --- the files ----------------------------------------------------------------

cat >small.json <<'EOF'
{
  "session": "myfeature",
  "type": "loop",
  "started_at": "2025-01-10T10:00:00Z",
  "status": "running",
  "iteration": 5,
  "iteration_completed": 4,
  "iteration_started": "2025-01-10T10:05:00Z",
  "history": [
    {"iteration": 1, "timestamp": "2025-01-10T10:01:00Z", "plateau": false},
    {"iteration": 2, "timestamp": "2025-01-10T10:02:00Z", "plateau": false},
    {"iteration": 3, "timestamp": "2025-01-10T10:03:00Z", "plateau": false},
    {"iteration": 4, "timestamp": "2025-01-10T10:04:00Z", "plateau": true}
  ]
}
EOF

# a loop state in jq's 2-space layout, about 15 MB: 60 000 history entries
entries=60000
awk -v n="$entries" 'BEGIN {
  r = "iteration summary: tests pass, refactored the parser, next step is the writer;"
  r = r " no plateau yet, work left is in the plan"
  printf "{\n  \"session\": \"bench\",\n  \"type\": \"loop\",\n"
  printf "  \"started_at\": \"2025-01-01T00:00:00Z\",\n  \"status\": \"running\",\n"
  printf "  \"iteration\": %d,\n  \"iteration_completed\": %d,\n  \"history\": [\n", n, n
  for (i = 1; i <= n; i++) {
    printf "    {\n      \"iteration\": %d,\n      \"timestamp\": \"2025-01-%02dT%02d:%02d:%02dZ\",\n",
      i, 1 + int(i / 86400) % 28, int(i / 3600) % 24, int(i / 60) % 60, i % 60
    printf "      \"plateau\": %s,\n      \"reasoning\": \"%s %d\"\n    }%s\n",
      (i % 7 == 0 ? "true" : "false"), r, i, (i < n ? "," : "")
  }
  printf "  ]\n}\n"
}' >big.json
big_bytes=$(wc -c <big.json)

# the answers must agree before the times mean anything
check() { # check WHAT EXPECTED ACTUAL
  [[ $2 == "$3" ]] || die 4 "$1: loopkit printed '$3', jq '$2'"
}
check "small status" "$(jq -r .status small.json)" "$("$get" small.json status)"
check "big last iteration" "$(jq '.history[-1].iteration' big.json)" "$("$get" big.json '.history[-1].iteration')"
cp big.json big-set.json
cp big.json big-jq.json
"$set" big-set.json iteration+=1
jq '.iteration+=1' big-jq.json >big-jq.tmp && mv big-jq.tmp big-jq.json
check "state-set result" "$(jq -c . big-jq.json | md5sum)" "$(jq -c . big-set.json | md5sum)"

# --- measuring ----------------------------------------------------------------

instructions() { # instructions CMD...: the instruction count of one run
  valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null |
    sed -n 's/^==[0-9]*== Collected : \([0-9]*\)$/\1/p'
}

# seconds CMD: the mean wall time of CMD (a shell command line), in seconds
if command -v hyperfine >/dev/null; then
  timer="hyperfine $(hyperfine --version | cut -d' ' -f2), $runs runs after $warmup warm-up"
  seconds() {
    hyperfine -N --style none --warmup "$warmup" --runs "$runs" --export-csv t.csv "$1" >/dev/null 2>&1 ||
      die 4 "hyperfine failed on: $1"
    awk -F, 'NR == 2 { print $2 }' t.csv
  }
else
  timer="bash loop, mean of $runs runs after $warmup warm-up (hyperfine is not installed)"
  seconds() {
    local i start total=0
    for ((i = 0; i < warmup; i++)); do bash -c "$1" >/dev/null; done
    for ((i = 0; i < runs; i++)); do
      start=$(date +%s%N)
      bash -c "$1" >/dev/null
      total=$((total + $(date +%s%N) - start))
    done
    awk -v t="$total" -v n="$runs" 'BEGIN { printf "%.6f\n", t / n / 1e9 }'
  }
fi

echo "$prog: measuring (big.json: $big_bytes bytes, $entries history entries)..." >&2
ins_get=$(instructions "$get" small.json status)
ins_jq=$(instructions jq -r .status small.json)
t_get=$(seconds "$get big.json .history[-1].iteration")
t_get_jq=$(seconds "jq .history[-1].iteration big.json")
t_set=$(seconds "$set big-set.json iteration+=1")
t_set_jq=$(seconds "sh -c 'jq .iteration+=1 big-jq.json >big-jq.tmp && mv big-jq.tmp big-jq.json'")

# --- the table ----------------------------------------------------------------

missed=0
row() { # row MEASURE LOOPKIT JQ UNIT TARGET-KIND TARGET
  awk -v m="$1" -v a="$2" -v b="$3" -v unit="$4" -v kind="$5" -v target="$6" '
    function show(v) {
      if (unit == "instr") return v >= 1e6 ? sprintf("%.1fM", v / 1e6) : sprintf("%.0fk", v / 1e3)
      return sprintf("%.1f ms", v * 1000)
    }
    BEGIN {
      ratio = b / a
      if (kind == "max") { ok = a <= target; t = "≤ " show(target) }
      else { ok = ratio >= target; t = "≥ " target "× faster" }
      printf "| %s | %s | %s | %.1f× | %s | %s |\n", m, show(a), show(b), ratio, t, ok ? "met" : "MISSED"
      exit !ok
    }' || missed=1
}

printf '| measure | loopkit | jq | jq / loopkit | target | |\n'
printf '|---|---|---|---|---|---|\n'
row "instructions: \`state-get small.json status\` vs \`jq -r .status small.json\`" "$ins_get" "$ins_jq" instr max 300000
row "time: \`state-get big.json .history[-1].iteration\` vs \`jq .history[-1].iteration big.json\`" "$t_get" "$t_get_jq" s ratio 10
row "time: \`state-set big.json iteration+=1\` vs \`jq '.iteration+=1' big.json >tmp && mv tmp big.json\`" "$t_set" "$t_set_jq" s ratio 5
echo
echo "big.json: $big_bytes bytes, $entries history entries; times: $timer;" \
  "instructions: valgrind $(valgrind --version | sed 's/^valgrind-//') callgrind, jq $(jq --version | sed 's/^jq-//')"
echo "machine: $(nproc) cores, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1);" \
  "scratch: $(df -T . | awk 'NR == 2 { print $2 }')"
exit "$missed"
