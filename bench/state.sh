#!/usr/bin/env bash
# Measures state-get and state-set against jq 1.6, the tool they replace, in
# one run on this machine, and prints Markdown tables of the ratios:
#   bench/state.sh [--quick] [--cpu] [--dir DIR] [--scaling] [BINDIR]
# On a generated 15 MB state file with 60 000 history entries (big.json):
# - time (hyperfine, else a loop of timed runs): `state-get big.json
#   .history[-1].iteration` against `jq .history[-1].iteration big.json`
#   (target: at least 20 times faster), `state-set --no-sync big.json
#   iteration+=1` against `jq '.iteration+=1' big.json >tmp && mv tmp
#   big.json` (at least 10 times faster), and the same state-set with fsync;
# - instructions (valgrind --tool=callgrind) of that state-set against those
#   of `state-get big.json iteration` (at most twice), and of both against jq;
# - 10 000 edits (`history[0].plateau:=true`, `history[6]...`, ...) in one
#   `state-set --no-sync big.json`: under 0.5 s;
# - instructions of `state-get small.json status` (at most 200k) and
#   `state-set --no-sync small.json iteration+=1` (at most 280k), a 14-line
#   loop state.
# --scaling adds a table from 1 MB to 700 MB: times, and the peak resident
# set of one run from /usr/bin/time -v (target: at most 64 MB for a read or
# a change of one field); it needs about 1.5 GB of scratch disk.
# BINDIR defaults to build/bin; --dir puts the scratch files in DIR (default:
# a temporary folder, removed afterwards; the disk matters for state-set's
# fsync). --quick makes fewer runs. --cpu compares user+system CPU time
# instead of wall time (on a machine shared with other work). Needs jq and
# valgrind; hyperfine is used when installed (apt-get install hyperfine; the
# fallback times a loop with bash's time keyword). Exit status: 0 every target
# met, 1 a target missed, 2 usage, 4 a tool is missing or a result differs
# from jq's.
set -euo pipefail
export LC_ALL=C

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib-bench.bash
source "$top/bench/lib-bench.bash"
prog=bench/state.sh
bindir=$top/build/bin
dir=
scaling=
cpu=
runs=20
warmup=3
while [[ $# -gt 0 ]]; do
  case $1 in
    --quick) runs=5 warmup=1; shift ;;
    --dir) [[ $# -ge 2 ]] || { echo "$prog: --dir needs a folder" >&2; exit 2; }; dir=$2; shift 2 ;;
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

entries=60000  # about 15 MB
make_history "$entries" big.json
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
  timer="bash loop, mean of $runs runs after $warmup warm-up${cpu:+, user+system CPU time} (hyperfine is not installed)"
  # bash's own time keyword, around an eval in this shell: no extra bash
  # start-up in the figure, and the children's CPU time when --cpu
  seconds() {
    local i t total=0 TIMEFORMAT='%3R %3U %3S'
    for ((i = 0; i < warmup; i++)); do eval "$1" >/dev/null; done
    for ((i = 0; i < runs; i++)); do
      t=$({ time eval "$1" >/dev/null 2>&1; } 2>&1)
      total=$(awk -v a="$total" -v t="$t" -v cpu="$cpu" 'BEGIN { split(t, f, " "); printf "%.6f", a + (cpu ? f[2] + f[3] : f[1]) }')
    done
    awk -v t="$total" -v n="$runs" 'BEGIN { printf "%.6f\n", t / n }'
  }
fi

# 10 000 edits spread over the history, in one run
edits=()
for ((i = 0; i < 10000; i++)); do edits+=("history[$((i * 6))].plateau:=true"); done
printf '%q ' "$set" --no-sync big-e.json "${edits[@]}" >edits.sh
cp big.json big-e.json
bash edits.sh
check "10 000 edits" \
  "$(jq -c 'reduce range(0; 10000) as $i (.; .history[$i * 6].plateau = true)' big.json | md5sum)" \
  "$(jq -c . big-e.json | md5sum)"
cp small.json small-s.json

echo "$prog: measuring (big.json: $big_bytes bytes, $entries history entries)..." >&2
t_get=$(seconds "$get big.json .history[-1].iteration")
t_get_jq=$(seconds "jq .history[-1].iteration big.json")
t_set=$(seconds "$set --no-sync big-set.json iteration+=1")
t_set_sync=$(seconds "$set big-set.json iteration+=1")
t_set_jq=$(seconds "sh -c 'jq .iteration+=1 big-jq.json >big-jq.tmp && mv big-jq.tmp big-jq.json'")
t_edits=$(seconds "bash edits.sh")
# instructions, which the machine's load does not change
ins_get_big=$(instructions "$get" big.json '.history[-1].iteration')
ins_get_it=$(instructions "$get" big.json iteration)
ins_set_big=$(instructions "$set" --no-sync big-set.json iteration+=1)
ins_jq_get_big=$(instructions jq '.history[-1].iteration' big.json)
ins_jq_set_big=$(instructions jq '.iteration+=1' big.json)
ins_get=$(instructions "$get" small.json status)
ins_set=$(instructions "$set" --no-sync small-s.json iteration+=1)
ins_jq=$(instructions jq -r .status small.json)

# --- the table ----------------------------------------------------------------

missed=0
row() { # row MEASURE LOOPKIT REFERENCE UNIT TARGET-KIND TARGET
  awk -v m="$1" -v a="$2" -v b="$3" -v unit="$4" -v kind="$5" -v target="$6" '
    function show(v) {
      if (unit == "instr") return v >= 1e6 ? sprintf("%.1fM", v / 1e6) : sprintf("%.0fk", v / 1e3)
      return sprintf("%.1f ms", v * 1000)
    }
    BEGIN {
      ratio = b / a
      if (kind == "max") { ok = a <= target; t = "≤ " show(target) }
      else if (kind == "within") { ok = a <= b * target; t = "≤ " target "× the reference" }
      else if (kind == "none") { ok = 1; t = "" }
      else { ok = ratio >= target; t = "≥ " target "× faster" }
      printf "| %s | %s | %s | %.1f× | %s | %s |\n", m, show(a), show(b), ratio, t, kind == "none" ? "" : ok ? "met" : "MISSED"
      exit !ok
    }' || missed=1
}

printf '| measure | loopkit | reference | reference / loopkit | target | |\n'
printf '|---|---|---|---|---|---|\n'
row "time: \`state-get big.json .history[-1].iteration\` vs \`jq .history[-1].iteration big.json\`" "$t_get" "$t_get_jq" s ratio 20
row "time: \`state-set --no-sync big.json iteration+=1\` vs \`jq '.iteration+=1' big.json >tmp && mv tmp big.json\`" "$t_set" "$t_set_jq" s ratio 10
row "time: \`state-set big.json iteration+=1\` (with fsync) vs the same jq pipeline" "$t_set_sync" "$t_set_jq" s none 0
row "instructions: \`state-get big.json .history[-1].iteration\` vs jq" "$ins_get_big" "$ins_jq_get_big" instr ratio 20
row "instructions: \`state-set --no-sync big.json iteration+=1\` vs \`jq .iteration+=1 big.json\`" "$ins_set_big" "$ins_jq_set_big" instr ratio 10
row "instructions: \`state-set --no-sync big.json iteration+=1\` vs \`state-get big.json iteration\`" "$ins_set_big" "$ins_get_it" instr within 2
row "time: 10 000 edits in one \`state-set --no-sync big.json\` (reference: \`state-get\` of one field)" "$t_edits" "$t_get" s max 0.5
row "instructions: \`state-get small.json status\` (reference: \`jq -r .status small.json\`)" "$ins_get" "$ins_jq" instr max 200000
row "instructions: \`state-set --no-sync small.json iteration+=1\` (reference: jq)" "$ins_set" "$ins_jq" instr max 280000
echo
echo "big.json: $big_bytes bytes, $entries history entries; times: $timer;" \
  "instructions: valgrind $(valgrind --version | sed 's/^valgrind-//') callgrind, jq $(jq --version | sed 's/^jq-//')"
echo "machine: $(nproc) cores, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1);" \
  "scratch: $(df -T . | awk 'NR == 2 { print $2 }')"

# --- scaling: 1 MB to 700 MB -------------------------------------------------------

peak_rss() { # peak_rss CMD...: the peak resident set of one run, in MB
  /usr/bin/time -v "$@" 2>&1 >/dev/null | awk '/Maximum resident set size/ { printf "%.1f", $NF / 1024 }'
}
if [[ -n $scaling ]]; then
  echo "$prog: scaling (this takes minutes)..." >&2
  echo
  printf '| file | get: state-get | get: jq | set --no-sync: state-set | set: jq … && mv | peak RSS: state-get | peak RSS: state-set | peak RSS: jq get |\n'
  printf '|---|---|---|---|---|---|---|---|\n'
  saved_runs=$runs saved_warmup=$warmup
  runs=3 warmup=1
  for n in 4000 60000 400000 2800000; do
    make_history "$n" s.json
    mb=$(awk -v b="$(wc -c <s.json)" 'BEGIN { printf "%.0f MB", b / 1e6 }')
    cp s.json s-set.json
    a=$(seconds "$get s.json .history[-1].iteration")
    c=$(seconds "$set --no-sync s-set.json iteration+=1")
    if ((n <= 400000)); then
      j1=$(seconds "jq .history[-1].iteration s.json")
      j2=$(seconds "sh -c 'jq .iteration+=1 s.json >s-jq.tmp && mv s-jq.tmp s-jq.json'")
      r5=$(peak_rss jq .history[-1].iteration s.json)
    else
      j1='' j2='' r5='(not run)'
    fi
    r1=$(peak_rss "$get" s.json .history[-1].iteration)
    r2=$(peak_rss "$set" --no-sync s-set.json iteration+=1)
    awk -v mb="$mb" -v a="$a" -v c="$c" -v j1="$j1" -v j2="$j2" -v r1="$r1" -v r2="$r2" -v r5="$r5" '
      function ms(v) { return v == "" ? "(not run)" : sprintf("%.1f ms", v * 1000) }
      BEGIN { printf "| %s | %s | %s | %s | %s | %s MB | %s MB | %s%s |\n", mb, ms(a), ms(j1), ms(c), ms(j2), r1, r2, r5, r5 ~ /^[0-9]/ ? " MB" : "" }'
    awk -v r1="$r1" -v r2="$r2" 'BEGIN { exit !(r1 <= 64 && r2 <= 64) }' || missed=1
    rm -f s.json s-set.json s-jq.json s-jq.tmp
  done
  runs=$saved_runs warmup=$saved_warmup
fi
exit "$missed"
