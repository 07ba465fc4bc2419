#!/usr/bin/env bash
# Measures state-get and state-set against jq, the tool they replace, in one
# run on this machine, and prints a Markdown table of the ratios:
#   bench/state.sh [--quick] [--cpu] [--dir DIR] [--scan BIN] [--scaling] [BINDIR]
# - instructions (valgrind --tool=callgrind) of `state-get small.json status`
#   and `jq -r .status small.json`: target at most 300k for state-get;
# - wall time (hyperfine, else a loop of timed runs) on a generated 15 MB state
#   file with 60 000 history entries: `state-get big.json
#   .history[-1].iteration` against `jq .history[-1].iteration big.json`
#   (target: at most 1/10 of jq's time) and `state-set big.json iteration+=1`
#   against `jq '.iteration+=1' big.json >tmp && mv tmp big.json` (target: at
#   most 1/5; state-set also fsyncs, which jq's version does not).
# With the bench-only driver of core/scan and core/textedit (state-scan, built
# by bench/CMakeLists.txt; found in BINDIR or build-bench/bin, or named by
# --scan BIN), the targets of the one-pass design are measured too, on the same
# files in the same run: a read of one field at least 20 times faster than jq,
# a --no-sync change at least 10 times faster than jq's pipeline and in at
# most twice the instructions of the read of the same path, 10 000 edits in
# one run in under 0.5 s, and at most 200k/280k instructions for a read/change
# of small.json. --scaling adds a table from 1 MB to 700 MB (times, and peak
# RSS from /usr/bin/time -v: target at most 64 MB for a read or a change of
# one field); it needs about 2 GB of scratch disk.
# BINDIR defaults to build/bin; --dir puts the scratch files in DIR (default:
# a temporary folder, removed afterwards; the disk matters for state-set's
# fsync). --quick makes fewer runs. --cpu compares user+system CPU time
# instead of wall time (on a machine shared with other work). Needs jq and valgrind; hyperfine is used
# when installed. Exit status: 0 every target met, 1 a target missed, 2 usage,
# 4 a tool is missing or a result differs from jq's.
set -euo pipefail
export LC_ALL=C

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
prog=bench/state.sh
bindir=$top/build/bin
dir=
scan=
scaling=
cpu=
runs=20
warmup=3
while [[ $# -gt 0 ]]; do
  case $1 in
    --quick) runs=5 warmup=1; shift ;;
    --dir) [[ $# -ge 2 ]] || { echo "$prog: --dir needs a folder" >&2; exit 2; }; dir=$2; shift 2 ;;
    --scan) [[ $# -ge 2 ]] || { echo "$prog: --scan needs a program" >&2; exit 2; }; scan=$2; shift 2 ;;
    --scaling) scaling=1; shift ;;
    --cpu) cpu=1; shift ;;
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
if [[ -z $scan ]]; then
  for c in "$bindir/state-scan" "$top/build-bench/bin/state-scan"; do
    [[ -x $c ]] && { scan=$c; break; }
  done
elif [[ ! -x $scan ]]; then
  die 4 "$scan is missing: build it (cmake -S bench -B build-bench && cmake --build build-bench --target state-scan)"
fi
[[ -n $scan ]] && scan=$(cd "$(dirname "$scan")" && pwd)/$(basename "$scan")

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

# a loop state in jq's 2-space layout, about 252 bytes per history entry
make_state() { # make_state ENTRIES FILE
  awk -v n="$1" 'BEGIN {
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
}' >"$2"
}
entries=60000  # about 15 MB
make_state "$entries" big.json
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
  timer="hyperfine $(hyperfine --version | cut -d' ' -f2), $runs runs after $warmup warm-up${cpu:+, user+system CPU time}"
  seconds() {
    hyperfine -N --style none --warmup "$warmup" --runs "$runs" --export-csv t.csv "$1" >/dev/null 2>&1 ||
      die 4 "hyperfine failed on: $1"
    # mean wall time, or mean user + system time
    awk -F, -v cpu="$cpu" 'NR == 2 { print cpu ? $5 + $6 : $2 }' t.csv
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
      else if (kind == "within") { ok = a <= b * target; t = "≤ " target "× the reference" }
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

# --- one pass: core/scan and core/textedit through bench/state_scan.cpp -------

if [[ -n $scan ]]; then
  cp big.json big-s.json
  cp small.json small-s.json
  check "state-scan get" "$(jq '.history[-1].iteration' big.json)" "$("$scan" get big.json '.history[-1].iteration')"
  check "state-scan get small" "$(jq -r .status small.json)" "$("$scan" get small.json status)"
  "$scan" set big-s.json iteration+=1
  check "state-scan set result" "$(jq -c '.iteration+=1' big.json | md5sum)" "$(jq -c . big-s.json | md5sum)"
  cmp -s <(jq -c 'del(.iteration)' big.json) <(jq -c 'del(.iteration)' big-s.json) ||
    die 4 "state-scan set changed more than .iteration"
  # 10 000 edits spread over the history, in one run
  edits=()
  for ((i = 0; i < 10000; i++)); do edits+=("history[$((i * 6))].plateau:=true"); done
  printf '%q ' "$scan" set --no-sync big-e.json "${edits[@]}" >edits.sh
  cp big.json big-e.json
  bash edits.sh
  check "10 000 edits" \
    "$(jq -c 'reduce range(0; 10000) as $i (.; .history[$i * 6].plateau = true)' big.json | md5sum)" \
    "$(jq -c . big-e.json | md5sum)"
  echo "$prog: measuring state-scan..." >&2
  t_sget=$(seconds "$scan get big.json .history[-1].iteration")
  t_sset=$(seconds "$scan set --no-sync big-s.json iteration+=1")
  t_edits=$(seconds "bash edits.sh")
  ins_sget=$(instructions "$scan" get big.json iteration)
  ins_sset=$(instructions "$scan" set --no-sync big-s.json iteration+=1)
  # the same comparisons in instructions, which the machine's load does not change
  ins_sget_big=$(instructions "$scan" get big.json '.history[-1].iteration')
  ins_jq_get_big=$(instructions jq '.history[-1].iteration' big.json)
  ins_jq_set_big=$(instructions jq '.iteration+=1' big.json)
  ins_small_get=$(instructions "$scan" get small-s.json status)
  ins_small_set=$(instructions "$scan" set --no-sync small-s.json iteration+=1)
  echo
  printf '| measure (state-scan: core/scan + core/textedit) | state-scan | reference | reference / state-scan | target | |\n'
  printf '|---|---|---|---|---|---|\n'
  row "time: \`get big.json .history[-1].iteration\` vs jq" "$t_sget" "$t_get_jq" s ratio 20
  row "time: \`set --no-sync big.json iteration+=1\` vs jq … >tmp && mv" "$t_sset" "$t_set_jq" s ratio 10
  row "instructions: \`get big.json .history[-1].iteration\` vs jq" "$ins_sget_big" "$ins_jq_get_big" instr ratio 20
  row "instructions: \`set --no-sync big.json iteration+=1\` vs \`jq .iteration+=1 big.json\`" "$ins_sset" "$ins_jq_set_big" instr ratio 10
  row "instructions: \`set --no-sync big.json iteration+=1\` vs \`get big.json iteration\`" "$ins_sset" "$ins_sget" instr within 2
  row "time: 10 000 edits in one \`set --no-sync big.json\` (reference: \`get\`)" "$t_edits" "$t_sget" s max 0.5
  row "instructions: \`get small.json status\` (reference: jq)" "$ins_small_get" "$ins_jq" instr max 200000
  row "instructions: \`set --no-sync small.json iteration+=1\` (reference: jq)" "$ins_small_set" "$ins_jq" instr max 280000
fi

# --- scaling: 1 MB to 700 MB -------------------------------------------------------

peak_rss() { # peak_rss CMD...: the peak resident set of one run, in MB
  /usr/bin/time -v "$@" 2>&1 >/dev/null | awk '/Maximum resident set size/ { printf "%.1f", $NF / 1024 }'
}
if [[ -n $scaling && -n $scan ]]; then
  echo "$prog: scaling (this takes minutes)..." >&2
  echo
  printf '| file | get: state-scan | get: state-get | get: jq | set: state-scan | set: state-set | set: jq | peak RSS get / set: state-scan | peak RSS get / set: state-get, state-set |\n'
  printf '|---|---|---|---|---|---|---|---|---|\n'
  saved_runs=$runs saved_warmup=$warmup
  runs=3 warmup=1
  for n in 4000 60000 400000 2800000; do
    make_state "$n" s.json
    mb=$(awk -v b="$(wc -c <s.json)" 'BEGIN { printf "%.0f MB", b / 1e6 }')
    cp s.json s-new.json
    cp s.json s-old.json
    a=$(seconds "$scan get s.json .history[-1].iteration")
    b=$(seconds "$get s.json .history[-1].iteration")
    c=$(seconds "$scan set --no-sync s-new.json iteration+=1")
    d=$(seconds "$set --no-sync s-old.json iteration+=1")
    if ((n <= 400000)); then
      j1=$(seconds "jq .history[-1].iteration s.json")
      j2=$(seconds "sh -c 'jq .iteration+=1 s.json >s-jq.tmp && mv s-jq.tmp s-jq.json'")
    else
      j1='' j2=''
    fi
    r1=$(peak_rss "$scan" get s.json .history[-1].iteration)
    r2=$(peak_rss "$scan" set --no-sync s-new.json iteration+=1)
    r3=$(peak_rss "$get" s.json .history[-1].iteration)
    r4=$(peak_rss "$set" --no-sync s-old.json iteration+=1)
    awk -v mb="$mb" -v a="$a" -v b="$b" -v c="$c" -v d="$d" -v j1="$j1" -v j2="$j2" \
      -v r="$r1 / $r2 MB" -v q="$r3 / $r4 MB" 'function ms(v) { return v == "" ? "(not run)" : sprintf("%.1f ms", v * 1000) }
      BEGIN { printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", mb, ms(a), ms(b), ms(j1), ms(c), ms(d), ms(j2), r, q }'
    rm -f s.json s-new.json s-old.json s-jq.json
  done
  runs=$saved_runs warmup=$saved_warmup
fi
exit "$missed"
