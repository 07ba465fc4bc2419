#!/usr/bin/env bash
# loopkit's common calls against the floor: bench/floor.sh [BINDIR [PATTERN]]
# (default build/bin; run from the project root); with PATTERN (an ERE),
# only the rows whose call matches it. The floor programs
# (bench/floor/*.c) make only the system calls each job needs and validate
# what loopkit validates; they are built static here with cc. Each call runs
# in an environment of PATH and HOME only, on the agent-pipelines state of
# tests/fixtures (568 bytes), and is measured twice:
# - instructions, by callgrind (deterministic on a noisy machine);
# - system calls, by strace -f -c.
# The rows of reading and sweeping calls start from realistic inputs: a lock
# folder of three live and two stale locks, an event log of 100 events, a
# progress file of 20 entries, a folder of three context saves.
# Prints a markdown table: loopkit, the floor, their ratio and the goal of
# issue 24 (instructions within 1.5x for state-get, state-set and the lock
# cycle, 2x for the others; system calls within the floor + 8), each goal
# marked met or not. Installs nothing: without valgrind or strace it stops.
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=$(cd "${1:-build/bin}" && pwd)
only=${2:-}
for t in valgrind strace cc; do
  command -v "$t" >/dev/null || { echo "floor.sh: $t is not installed" >&2; exit 2; }
done
work=$(mktemp -d "${TMPDIR:-/tmp}/loopkit-floor.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir "$work/floor" "$work/run"
for c in "$top"/bench/floor/*.c; do
  name=$(basename "$c" .c)
  cc -D_GNU_SOURCE -O2 -static -o "$work/floor/$name" "$c"
done
cd "$work/run"
pid=$$ # a live owner for the locks
clean_env=(env -i PATH=/usr/bin:/bin HOME="$work")

# instructions COMMAND...: callgrind's total for one run
instructions() {
  "${clean_env[@]}" valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null |
    sed -n 's/^==[0-9]*== Collected : \([0-9]*\)$/\1/p'
}
# syscalls COMMAND...: the number of system calls of one run
syscalls() {
  "${clean_env[@]}" strace -f -c -o "$work/strace.out" "$@" >/dev/null 2>&1 || true
  awk '$NF == "total" { print $4 }' "$work/strace.out" | tail -n 1
}
# fresh: the files each call starts from
fresh() {
  rm -rf -- * .[!.]* 2>/dev/null || true
  cp "$top/tests/fixtures/ap_state_midrun.generated-main.json" state.json
  printf '# Progress: s\n\n---\n' >progress.md
  printf '{"seq":1,"ts":"2025-01-10T10:00:00Z","type":"start"}\n' >events.jsonl
}
# measure SETUP LOOPKIT-CMD FLOOR-CMD: prints "instructions syscalls" of each,
# after SETUP (a shell line) before every run; commands joined by ';' are summed
measure() {
  local setup=$1 i s total_i total_s part cmd
  shift
  for cmd in "$@"; do
    total_i=0 total_s=0
    fresh && eval "$setup"
    IFS=';' read -r -a parts <<<"$cmd"
    for part in "${parts[@]}"; do
      # shellcheck disable=SC2086 # each part is a command line of words
      i=$(instructions $part)
      total_i=$((total_i + i))
    done
    fresh && eval "$setup"
    for part in "${parts[@]}"; do
      # shellcheck disable=SC2086
      s=$(syscalls $part)
      total_s=$((total_s + s))
    done
    printf '%s %s ' "$total_i" "$total_s"
  done
  echo
}
row() { # row NAME GOAL SETUP LOOPKIT FLOOR
  local name=$1 goal=$2 li ls fli fls ratio ok_i ok_s
  [[ -z $only || $name =~ $only ]] || return 0
  read -r li ls fli fls < <(measure "$3" "$4" "$5")
  ratio=$(awk -v a="$li" -v b="$fli" 'BEGIN { printf "%.2f", a / b }')
  ok_i=$(awk -v r="$ratio" -v g="$goal" 'BEGIN { print (r <= g) ? "met" : "not met" }')
  ok_s=$([[ $ls -le $((fls + 8)) ]] && echo met || echo "not met")
  # shellcheck disable=SC2016 # the backquotes are markdown
  printf '| `%s` | %.1fk | %.1fk | %s× (≤ %s×: %s) | %s | %s (≤ +8: %s) |\n' "$name" \
    "$(awk -v n="$li" 'BEGIN { print n / 1000 }')" "$(awk -v n="$fli" 'BEGIN { print n / 1000 }')" \
    "$ratio" "$goal" "$ok_i" "$ls" "$fls" "$ok_s"
}

# the inputs of the reading and sweeping rows (setups, run before each run)
locks() {
  mkdir locks
  local s dead
  for s in a b c; do "$bin/lock-acquire" --pid "$pid" "locks/$s.lock"; done
  sh -c : &
  dead=$!
  wait "$dead"
  for s in old1 old2; do
    printf '{"session":"%s","pid":%d,"host":"%s","pid_start":12345,"started_at":"2025-01-10T10:00:00Z",%s"boot_id":"%s"}\n' \
      "$s" "$dead" "$(uname -n)" '"heartbeat":"2025-01-10T10:00:00Z","heartbeat_epoch":1736503200,' \
      "$(cat /proc/sys/kernel/random/boot_id)" >"locks/$s.lock"
  done
}
events() {
  awk 'BEGIN { for (i = 1; i <= 100; i++) printf "{\"seq\":%d,\"ts\":\"2025-01-10T10:%02d:%02dZ\",\"type\":\"iteration-done\",\"session\":\"demo\",\"iteration\":%d,\"plateau\":false,\"reasoning\":\"wrote lines %d-%d\"}\n", i, i / 60, i % 60, i, i * 5 - 4, i * 5 }' >events.jsonl
}
entries() {
  printf '# Progress: s\n\nVerify: make test\n\n## Codebase Patterns\n(Patterns discovered during implementation)\n\n---\n' >progress.md
  awk 'BEGIN { for (i = 1; i <= 20; i++) printf "\n## 2025-01-%02d - beads-%d\n- Implemented part %d of the feature\n- Wrote the tests for part %d\n- Files: src/a%d.ts, src/b.ts\n- Learning: token refresh %d needs care\n\n---\n", i, i, i, i, i, i }' >>progress.md
}
saves() {
  local i
  for i in 1 2 3; do
    LOOPKIT_NOW=$((1736503200 + i * 60)) "$bin/ctx-save" --dir ctx --phase PLAN --tokens $((i * 1000)) \
      --message "assistant=did step $i" >/dev/null
  done
}

f=$work/floor
echo "| common call | loopkit instructions | floor | ratio (goal) | syscalls | floor syscalls (goal) |"
echo "|---|---|---|---|---|---|"
row "state-get state.json status" 1.5 : "$bin/state-get state.json status" "$f/state-get state.json status"
row "state-set state.json iteration+=1" 1.5 : "$bin/state-set state.json iteration+=1" \
  "$f/state-set state.json iteration+=1"
row "state-set --no-sync state.json iteration+=1" 1.5 : "$bin/state-set --no-sync state.json iteration+=1" \
  "$f/state-set --no-sync state.json iteration+=1"
row "lock-acquire --pid P L + lock-release --pid P L" 1.5 : \
  "$bin/lock-acquire --pid $pid a.lock;$bin/lock-release --pid $pid a.lock" \
  "$f/lock-acquire --pid $pid a.lock;$f/lock-release --pid $pid a.lock"
row "lock-heartbeat --pid P L" 2 "$bin/lock-acquire --pid $pid a.lock" \
  "$bin/lock-heartbeat --pid $pid a.lock" "$f/lock-heartbeat --pid $pid a.lock"
row "lock-status L" 2 "$bin/lock-acquire --pid $pid a.lock" "$bin/lock-status a.lock" "$f/lock-status a.lock"
row "progress-append --id X P.md TEXT" 2 : "$bin/progress-append --id X progress.md did-a-thing" \
  "$f/progress-append --id X progress.md did-a-thing"
row "event-append E.jsonl TYPE" 2 : "$bin/event-append events.jsonl tick" "$f/event-append events.jsonl tick"
row "lock-reap DIR" 2 locks "$bin/lock-reap locks" "$f/lock-reap locks"
row "event-show --last 10 E.jsonl" 2 events "$bin/event-show --last 10 events.jsonl" \
  "$f/event-show --last 10 events.jsonl"
row "progress-show --last 3 P.md" 2 entries "$bin/progress-show --last 3 progress.md" \
  "$f/progress-show --last 3 progress.md"
row "ctx-save --dir D --phase P --tokens T" 2 saves "$bin/ctx-save --dir ctx --phase IMPLEMENT --tokens 64000" \
  "$f/ctx-save --dir ctx --phase IMPLEMENT --tokens 64000"
row "ctx-resume --dir D" 2 saves "$bin/ctx-resume --dir ctx" "$f/ctx-resume --dir ctx"
