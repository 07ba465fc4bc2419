#!/usr/bin/env bash
# bench/engines.sh [BINDIR]: what the engines cost per item or iteration,
# beside a floor built from the same tools and the seeds' bash-and-jq way,
# in one run (issue 36, CONTRACT section 8 "Cost"). Run from the project
# root (BINDIR default build/bin). CPU is user + system seconds of the whole
# process tree (bash's `times` for the children of a subshell), agent `true`;
# program starts are counted with strace -f (execve that succeeded, the
# agent's own and the --next command's left out). A benchmark, not a test.
#
# The agent is the program true (/usr/bin/true) everywhere: in a bash floor
# the word `true` would be the builtin, which no engine can run.
# The drain floor and the seeds' way are ../shared/bench/floor-drain.bash and
# jq-drain.bash (or $LOOPKIT_SHARED_BENCH); without them their rows are
# skipped. Sizes: ENGINES_DRAIN="100 400", ENGINES_JQ=100 (0: skip),
# ENGINES_LOOP=60; ENGINES_SCRIPTS, the engines' folder (default scripts/);
# ENGINES_STRACE=0 leaves the program starts out. The loop and pipeline
# rows run ENGINES_ROUNDS times (default 5), each round the engine then its
# floor, and give the medians: a run of 60 iterations takes half a second,
# and on a shared machine one such pair can land on either side of 2x.
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=$(cd "${1:-build/bin}" && pwd)
shared=${LOOPKIT_SHARED_BENCH:-$top/../shared/bench}
[[ -f $shared/floor-drain.bash ]] || shared=/work/shared/bench
read -r -a drain_sizes <<<"${ENGINES_DRAIN:-100 400}"
jq_n=${ENGINES_JQ:-100}
loop_n=${ENGINES_LOOP:-60}
rounds=${ENGINES_ROUNDS:-5}
agent=$(type -P true)
scripts=$(cd "${ENGINES_SCRIPTS:-$top/scripts}" && pwd)
export PATH="$bin:$PATH" LOOPKIT_BIN=$bin TZ=UTC LC_ALL=C
work=$(mktemp -d "${TMPDIR:-/tmp}/engines-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

# cpu DIR COMMAND...: CPU seconds (user + system) of COMMAND's whole tree, run in DIR
cpu() {
  local dir=$1 out
  shift
  mkdir -p "$dir"
  # the subshell's own time (a bash floor's loop) and its children's
  out=$( (cd "$dir" || exit; "$@" >/dev/null 2>&1 </dev/null || true; times) | tr '\n' ' ')
  awk -v t="$out" 'BEGIN { n = split(t, f, /[ ms]+/); s = 0
    for (i = 1; i + 1 <= n; i += 2) if (f[i] != "") s += f[i] * 60 + f[i + 1]; printf "%.3f", s }'
}

# starts DIR N COMMAND...: program starts of COMMAND (strace), the agent's and seq's left out
starts() {
  local dir=$1
  shift
  mkdir -p "$dir"
  (cd "$dir" || exit; LK_HEARTBEAT=3600 strace -f -qq -e trace=execve -e status=successful -o trace "$@" \
    >/dev/null 2>&1 </dev/null || true)
  grep 'execve(' "$dir/trace" | grep -vcE 'execve\("[^"]*/(true|seq)"'
}

# floor_loop N AGENT...: the least a loop does per iteration with the tools:
# one state write, the agent, one progress entry, one event
floor_loop() {
  local n=$1 i
  shift
  state-set --init '{"status":"running","iteration":0,"history":[]}' state.json status=running
  progress-append --session floor progress-floor.md
  for ((i = 1; i <= n; i++)); do
    "$@"
    state-set state.json "iteration:=$i" "iteration_completed:=$i" --now iteration_started
    progress-append --id "iteration $i" progress-floor.md "iteration $i done"
    event-append --no-sync events.jsonl iteration-done "iteration:=$i"
  done
}

# median NUMBER...: the middle one (the mean of the two middle ones)
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { printf "%.2f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# paired NAME N DIR ENGINE... :: FLOOR...: ENGINE and the floor loop,
# rounds times in turn; one table row of their medians per iteration
paired() {
  local name=$1 n=$2 dir=$3 r e f
  shift 3
  local -a eng_cmd=() flo_cmd=() es=() fs=() rs=()
  while [[ $1 != :: ]]; do eng_cmd+=("$1") && shift; done
  shift
  flo_cmd=("$@")
  for ((r = 1; r <= rounds; r++)); do
    rm -rf "${work:?}/$dir" "${work:?}/$dir-floor"
    mkdir -p "$work/$dir"
    [[ -z ${PAIRED_SETUP:-} ]] || "$PAIRED_SETUP" "$work/$dir"
    e=$(cpu "$work/$dir" "${eng_cmd[@]}")
    f=$(cpu "$work/$dir-floor" floor_loop "$n" "${flo_cmd[@]}")
    es+=("$(per "$e" "$n")") fs+=("$(per "$f" "$n")") rs+=("$(ratio "$e" "$f")")
  done
  r=$(median "${rs[@]}")
  echo "| $name, $n iterations, CPU per iteration (median of $rounds; ratios ${rs[*]}) | $(median "${es[@]}") | $(median "${fs[@]}") | $r | ≤ 2: $(ok "$r" 2) | |"
}

per() { awk -v c="$1" -v n="$2" 'BEGIN { printf "%.1f", c * 1000 / n }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else printf "-" }'; }
ok() { awk -v v="$1" -v g="$2" 'BEGIN { print (v != "-" && v + 0 <= g + 0) ? "met" : "NOT met" }'; }

echo "| work (agent true) | loopkit ms | floor ms | ratio | goal | seeds' way ms |"
echo "|---|---|---|---|---|---|"
declare -A eng flo
for n in "${drain_sizes[@]}"; do
  e=$(cpu "$work/drain-$n" "$scripts/drain-engine" --next "seq 1 $n" -- "$agent")
  eng[$n]=$(per "$e" "$n")
  flo[$n]=-
  if [[ -f $shared/floor-drain.bash ]]; then
    f=$(cpu "$work/floor-$n" bash "$shared/floor-drain.bash" state.json "seq 1 $n" "$agent")
    flo[$n]=$(per "$f" "$n")
  fi
  jq=-
  if [[ $n == "$jq_n" && -f $shared/jq-drain.bash ]] && command -v jq >/dev/null; then
    j=$(cpu "$work/jq-$n" bash "$shared/jq-drain.bash" state.json "seq 1 $n" "$agent")
    jq=$(per "$j" "$n")
  fi
  r=$(ratio "${eng[$n]}" "${flo[$n]}")
  echo "| drain-engine, $n ready items, CPU per item | ${eng[$n]} | ${flo[$n]} | $r | ≤ 2: $(ok "$r" 2) | $jq |"
done
if ((${#drain_sizes[@]} >= 2)); then
  a=${drain_sizes[0]} b=${drain_sizes[-1]}
  ge=$(ratio "${eng[$b]}" "${eng[$a]}") gf=$(ratio "${flo[$b]}" "${flo[$a]}")
  g=$(ratio "$ge" "$gf")
  echo "| drain growth, per item at $b / at $a | $ge | $gf | $g | ≤ 1.25: $(ok "$g" 1.25) | |"
fi

paired loop-engine "$loop_n" loop "$scripts/loop-engine" --session b --max-iterations "$loop_n" -- "$agent" :: "$agent"
pipe_json() { printf '{"name":"b","stages":[{"name":"s","runs":%d,"command":"true"}]}' "$loop_n" >"$1/p.json"; }
PAIRED_SETUP=pipe_json paired pipeline-engine "$loop_n" pipe "$scripts/pipeline-engine" --session b p.json :: bash -c true

echo
if [[ ${ENGINES_STRACE:-1} == 0 ]]; then
  exit 0
elif ! command -v strace >/dev/null; then
  echo "(strace is not installed: program starts not counted)"
  exit 0
fi
echo "| program starts (strace -f), per | at small | at large | per item or iteration | goal |"
echo "|---|---|---|---|---|"
s1=$(starts "$work/s-d10" "$scripts/drain-engine" --next "seq 1 10" -- "$agent")
s2=$(starts "$work/s-d40" "$scripts/drain-engine" --next "seq 1 40" -- "$agent")
p=$(awk -v a="$s1" -v b="$s2" 'BEGIN { printf "%.2f", (b - a) / 30 }')
echo "| drain-engine item (10, 40 items) | $s1 | $s2 | $p | ≤ 8: $(ok "$p" 8) |"
s1=$(starts "$work/s-l5" "$scripts/loop-engine" --session s --max-iterations 5 -- "$agent")
s2=$(starts "$work/s-l25" "$scripts/loop-engine" --session s --max-iterations 25 -- "$agent")
p=$(awk -v a="$s1" -v b="$s2" 'BEGIN { printf "%.2f", (b - a) / 20 }')
echo "| loop-engine iteration (5, 25) | $s1 | $s2 | $p | ≤ 8: $(ok "$p" 8) |"
for n in 5 25; do
  mkdir -p "$work/s-p$n"
  printf '{"name":"b","stages":[{"name":"s","runs":%d,"command":"%s"}]}' "$n" "$agent" >"$work/s-p$n/p.json"
done
s1=$(starts "$work/s-p5" "$scripts/pipeline-engine" --session s p.json)
s2=$(starts "$work/s-p25" "$scripts/pipeline-engine" --session s p.json)
p=$(awk -v a="$s1" -v b="$s2" 'BEGIN { printf "%.2f", (b - a) / 20 }')
echo "| pipeline-engine iteration (5, 25; its bash -c counted) | $s1 | $s2 | $p | ≤ 8: $(ok "$p" 8) |"
