#!/usr/bin/env bash
# Lock tools against flock(1), lockfile-progs and liblockfile's dotlockfile:
#   bench/locks.sh [BINDIR]        (default: build/bin; run from the project root)
# 1. callgrind instruction counts of one acquire + release cycle (the target:
#    within 2x of flock(1));
# 2. wall time of `lock-reap -n` over 10 000 lock files against `cat` of them
#    all (the target: within 5x).
# Installs nothing: whatever is missing is skipped with a note. Prints a
# markdown table of the numbers and their ratios.
set -euo pipefail
bin=$(cd "${1:-build/bin}" && pwd)
for t in lock-acquire lock-release lock-reap; do
  [[ -x $bin/$t ]] || { echo "locks.sh: $bin/$t not built" >&2; exit 2; }
done
work=$(mktemp -d "${TMPDIR:-/tmp}/loopkit-bench-locks.XXXXXX")
holder=""
cleanup() { [[ -n $holder ]] && kill "$holder" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
cd "$work"
have() { command -v "$1" >/dev/null 2>&1; }
note() { echo "note: $*" >&2; }

# ---- 1. instructions per acquire + release ------------------------------
# Instructions of one command under callgrind (children not followed).
instructions() {
  valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null |
    sed -n 's/^==[0-9]*== Collected : \([0-9]*\)$/\1/p'
}
# The sum over the commands of one cycle, each given as one string.
cycle() {
  local total=0 n cmd
  for cmd in "$@"; do
    # shellcheck disable=SC2086
    n=$(instructions $cmd)
    [[ -n $n ]] || { echo ""; return; }
    total=$((total + n))
  done
  echo "$total"
}

declare -A ir
if have valgrind; then
  # each tool its own file: flock(1) leaves an empty one behind
  ir[flock]=$(cycle "flock flock.lock true")
  ir[loopkit]=$(cycle "$bin/lock-acquire --pid $$ loopkit.lock" "$bin/lock-release --pid $$ loopkit.lock")
  ir[loopkit_cmd]=$(cycle "$bin/lock-acquire command.lock -- true")
  if have lockfile-create && have lockfile-remove; then
    ir[lockfile_progs]=$(cycle "lockfile-create --retry 0 progs" "lockfile-remove progs")
  else
    note "lockfile-progs not installed: skipped"
  fi
  if have dotlockfile; then
    # valgrind cannot run a setgid program: a copy without the bit
    cp "$(command -v dotlockfile)" ./dotlockfile
    ir[dotlockfile]=$(cycle "./dotlockfile -r 0 dot.lock" "./dotlockfile -u dot.lock")
  else
    note "dotlockfile (liblockfile-bin) not installed: skipped"
  fi
else
  note "valgrind not installed: instruction counts skipped"
fi

# ---- 2. a sweep over 10 000 locks -----------------------------------------
sleep 600 &
holder=$!
start=$(awk '{ sub(/.*\) /, ""); split($0, f, " "); print f[20] }' /proc/$holder/stat)
mkdir many
host=$(uname -n)
for i in $(seq 10000); do
  printf '{"session":"s%s","pid":%s,"host":"%s","pid_start":%s,"started_at":"2025-01-10T10:00:00Z","heartbeat":"2025-01-10T10:00:00Z","heartbeat_epoch":1736503200}\n' \
    "$i" "$holder" "$host" "$start" >"many/s$i.lock"
done
export LOOPKIT_NOW=1736503230
reap_cmd="$bin/lock-reap -n many"
cat_cmd="cat many/*.lock"
# Mean seconds of a command, best of hyperfine or plain repetition.
seconds() {
  if have hyperfine; then
    hyperfine -N --warmup 2 --runs 10 --export-json t.json "$1" >/dev/null 2>&1 || hyperfine --warmup 2 --runs 10 --export-json t.json "$1" >/dev/null
    sed -n 's/^ *"mean": \([0-9.e+-]*\),*$/\1/p' t.json | head -1
  else
    local t0 t1 i
    t0=$(date +%s.%N)
    for i in 1 2 3 4 5; do bash -c "$1" >/dev/null; done
    t1=$(date +%s.%N)
    echo "($t1 - $t0) / 5" | bc -l
  fi
}
have hyperfine || note "hyperfine not installed: plain timing of 5 runs (includes a bash start)"
[[ -z $($reap_cmd) ]] || { echo "locks.sh: lock-reap -n found stale locks among live ones" >&2; exit 1; }
t_reap=$(seconds "$reap_cmd")
t_cat=$(seconds "bash -c '$cat_cmd >/dev/null'")

# ---- the table ---------------------------------------------------------------
ratio() { [[ -n ${1:-} && -n ${2:-} ]] && awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }' || echo "-"; }
echo "| measurement | value | ratio to baseline | target |"
echo "|---|---:|---:|---|"
if [[ -n ${ir[flock]:-} ]]; then
  echo "| flock(1): \`flock F true\` (baseline), instructions | ${ir[flock]} | 1.00 | |"
  echo "| lock-acquire + lock-release, instructions | ${ir[loopkit]} | $(ratio "${ir[loopkit]}" "${ir[flock]}") | <= 2 |"
  echo "| \`lock-acquire F -- true\`, instructions | ${ir[loopkit_cmd]} | $(ratio "${ir[loopkit_cmd]}" "${ir[flock]}") | <= 2 |"
  [[ -n ${ir[lockfile_progs]:-} ]] &&
    echo "| lockfile-create + lockfile-remove, instructions | ${ir[lockfile_progs]} | $(ratio "${ir[lockfile_progs]}" "${ir[flock]}") | |"
  [[ -n ${ir[dotlockfile]:-} ]] &&
    echo "| dotlockfile + dotlockfile -u, instructions | ${ir[dotlockfile]} | $(ratio "${ir[dotlockfile]}" "${ir[flock]}") | |"
fi
# shellcheck disable=SC2016  # the backticks are Markdown, not command substitution
printf '| `cat` of 10 000 lock files (baseline), ms | %.1f | 1.00 | |\n' "$(awk -v t="$t_cat" 'BEGIN { print t * 1000 }')"
# shellcheck disable=SC2016
printf '| `lock-reap -n` over 10 000 live locks, ms | %.1f | %s | <= 5 |\n' \
  "$(awk -v t="$t_reap" 'BEGIN { print t * 1000 }')" "$(ratio "$t_reap" "$t_cat")"
