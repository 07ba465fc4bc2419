#!/usr/bin/env bats
# scripts/engine-ctl: pause, resume, stop and extend a session by name.
load helpers

: "${LOOPKIT_SCRIPTS:=$LOOPKIT_SOURCE/scripts}"
ST=.claude/pipeline-runs/demo/state.json

ctl() { "$LOOPKIT_SCRIPTS/engine-ctl" "$@"; }

@test "--help and usage errors; an unknown session is exit 1" {
  run -0 ctl --help
  [[ $output == Usage:* ]]
  run -2 ctl
  run -2 ctl frobnicate demo
  run -2 ctl pause
  run -1 --separate-stderr ctl pause nosuch
  [[ $stderr == "engine-ctl: no session 'nosuch' under .claude" ]]
}

@test "pause, resume and stop a loop session by name, with events" {
  mkdir -p .claude/pipeline-runs/demo
  printf '{"session":"demo","type":"loop","status":"running"}' >"$ST"
  run -0 ctl pause demo
  run -0 state-get "$ST" status
  [ "$output" = paused ]
  run -0 ctl resume demo
  run -0 state-get "$ST" status
  [ "$output" = running ]
  run -1 ctl resume demo # not paused
  run -0 ctl stop demo
  run -0 state-get "$ST" status
  [ "$output" = stopped ]
  run -0 event-show --type ctl-pause,ctl-resume,ctl-stop .claude/pipeline-runs/demo/events.jsonl
  [ "${#lines[@]}" = 3 ]
}

@test "a complete session cannot be paused; a drain is found as atari or by its state file" {
  mkdir -p .claude/pipeline-runs/demo .atari
  printf '{"session":"demo","type":"loop","status":"complete"}' >"$ST"
  run -1 ctl pause demo
  printf '{"version":1,"status":"running","history":{}}' >.atari/state.json
  run -0 ctl pause atari
  run -0 ctl resume .atari/state.json
  run -0 state-get .atari/state.json status
  [ "$output" = running ]
  run -2 ctl extend atari 3
}

@test "extend: a loop that ended at its maximum runs on" {
  printf '#!/bin/sh\necho "$LOOPKIT_ITERATION" >>ran.log\n' >agent.sh
  chmod +x agent.sh
  "$LOOPKIT_SCRIPTS/loop-engine" --session demo --max-iterations 2 -- ./agent.sh 2>/dev/null
  run -0 ctl extend demo 2
  run -0 state-get "$ST" max_iterations
  [ "$output" = 4 ]
  "$LOOPKIT_SCRIPTS/loop-engine" --session demo -- ./agent.sh 2>/dev/null
  [ "$(tr '\n' ' ' <ran.log)" = "1 2 3 4 " ]
  run -0 state-get "$ST" status completion_reason iteration_completed
  [ "$output" = $'complete\nmax_iterations\n4' ]
}

@test "pause before the first start: a drain that never ran stays paused, quietly, until resumed" {
  run -0 --separate-stderr ctl pause atari
  [[ $stderr == "engine-ctl: session 'atari' paused (was unset)" ]]
  run -0 state-get .atari/state.json status
  [ "$output" = paused ]
  printf 'a\n' >ready
  printf '#!/bin/sh\nsed -i 1d ready\necho "$LOOPKIT_ITEM" >>done.log\n' >work.sh
  chmod +x work.sh
  "$LOOPKIT_SCRIPTS/drain-engine" --next 'cat ready' --poll 0.05 -- ./work.sh 2>err.log &
  e=$!
  for _ in $(seq 600); do event-show --type paused .atari/events.jsonl >/dev/null 2>&1 && break; sleep 0.05; done
  run -0 event-show --type paused .atari/events.jsonl
  [ ! -e done.log ]
  run -0 ctl resume atari
  wait "$e"
  [ "$(cat done.log)" = a ]
  # honoured quietly: no backup, no reset, no warning
  [ ! -e .atari/state.json.backup ]
  ! grep -qi 'backup\|warning' err.log || { cat err.log; false; }
}

@test "a pause written by hand (state-set FILE status=paused) before the first start is honoured without a backup" {
  mkdir -p .atari
  state-set .atari/state.json status=paused
  : >ready
  "$LOOPKIT_SCRIPTS/drain-engine" --next 'cat ready' --poll 0.05 -- true 2>err.log &
  e=$!
  for _ in $(seq 600); do event-show --type paused .atari/events.jsonl >/dev/null 2>&1 && break; sleep 0.05; done
  run -0 state-get .atari/state.json status version
  [ "$output" = $'paused\n1' ]
  run -0 ctl stop atari
  wait "$e"
  [ ! -e .atari/state.json.backup ]
  ! grep -qi 'backup\|warning' err.log || { cat err.log; false; }
  # a state file named by its path, not there yet, is created paused too
  run -0 ctl pause elsewhere/state.json
  run -0 state-get elsewhere/state.json status
  [ "$output" = paused ]
  # a loop that never ran is not guessed from a name
  run -1 ctl pause nosuch
  run -1 ctl stop nosuch/state.json
}

# bin/ with every tool of LOOPKIT_BIN, and state-set run through WRAP (a
# script that gets the real state-set's path and the arguments)
wrapped_bin() {
  mkdir -p bin
  for t in "$LOOPKIT_BIN"/*; do ln -sf "$t" bin/; done
  rm bin/state-set
  printf '#!/bin/sh\nexec %s %s "$@"\n' "$PWD/$1" "$LOOPKIT_BIN/state-set" >bin/state-set
  chmod +x bin/state-set
}

@test "a stop never overwrites a status written between its read and its write (compare and set)" {
  mkdir -p .claude/pipeline-runs/demo
  printf '{"session":"demo","type":"loop","status":"running"}' >"$ST"
  # the engine completes the session just before engine-ctl writes
  cat >race.sh <<'EOF2'
#!/bin/sh
real=$1; shift
if [ ! -e raced ]; then touch raced; "$real" .claude/pipeline-runs/demo/state.json status=complete; fi
exec "$real" "$@"
EOF2
  chmod +x race.sh
  wrapped_bin race.sh
  run -1 --separate-stderr env LOOPKIT_BIN="$PWD/bin" "$LOOPKIT_SCRIPTS/engine-ctl" stop demo
  [[ $stderr == *"session 'demo' is complete; nothing to stop"* ]]
  run -0 state-get "$ST" status
  [ "$output" = complete ]
  # a pause that raced a resume by hand: read again, then written
  printf '{"session":"demo","type":"loop","status":"running"}' >"$ST"
  rm raced
  sed -i 's/status=complete/status=paused/' race.sh
  run -0 env LOOPKIT_BIN="$PWD/bin" "$LOOPKIT_SCRIPTS/engine-ctl" stop demo
  run -0 state-get "$ST" status
  [ "$output" = stopped ]
  # extend compares max_iterations as read
  printf '{"session":"demo","type":"loop","status":"running","max_iterations":4}' >"$ST"
  rm raced
  sed -i 's/status=paused/max_iterations:=6/' race.sh
  run -0 env LOOPKIT_BIN="$PWD/bin" "$LOOPKIT_SCRIPTS/engine-ctl" extend demo 2
  run -0 state-get "$ST" max_iterations
  [ "$output" = 8 ]
}

# a finished loop session NAME (max 1 iteration), made at LOOPKIT_NOW
finished() {
  printf '#!/bin/sh\n%s\n' "${2:-true}" >agent-"$1".sh
  chmod +x agent-"$1".sh
  "$LOOPKIT_SCRIPTS/loop-engine" --session "$1" --max-iterations 1 -- ./agent-"$1".sh 2>/dev/null || true
}

@test "prune removes finished sessions' folders, never a running, paused or live one" {
  finished done
  finished broken 'exit 3'
  run -0 state-get .claude/pipeline-runs/broken/state.json status
  [ "$output" = failed ]
  mkdir -p .claude/pipeline-runs/paused .claude/pipeline-runs/crashed
  printf '{"session":"paused","type":"loop","status":"paused"}' >.claude/pipeline-runs/paused/state.json
  printf '{"session":"crashed","type":"loop","status":"running","iteration_started":"2025-01-10T10:00:00Z"}' \
    >.claude/pipeline-runs/crashed/state.json
  mkdir -p .claude/pipeline-runs/notes # not a session: no state.json
  # a stopped session whose engine still runs its last iteration (its clock
  # is the one prune is run with, so that its beats are fresh then)
  later=$((LOOPKIT_NOW + 3 * 86400))
  printf '#!/bin/sh\ntouch started\nwhile [ ! -e go ]; do sleep 0.05; done\n' >block.sh
  chmod +x block.sh
  LOOPKIT_NOW=$later "$LOOPKIT_SCRIPTS/loop-engine" --session live --max-iterations 3 -- ./block.sh 2>/dev/null &
  e=$!
  wait_for started
  run -0 ctl stop live
  run -0 --separate-stderr env LOOPKIT_NOW=$later "$LOOPKIT_SCRIPTS/engine-ctl" prune --dry-run
  [[ $stderr == *"would remove .claude/pipeline-runs/done (complete, ended 72:00:00 ago)"* ]]
  [ -d .claude/pipeline-runs/done ]
  run -0 --separate-stderr env LOOPKIT_NOW=$later "$LOOPKIT_SCRIPTS/engine-ctl" prune --older-than 2d
  [[ $stderr == *"removed .claude/pipeline-runs/done (complete"* ]]
  [[ $stderr == *"removed .claude/pipeline-runs/broken (failed"* ]]
  [[ $stderr == *"2 finished session(s) removed"* ]]
  [ ! -e .claude/pipeline-runs/done ]
  [ ! -e .claude/pipeline-runs/broken ]
  for kept in paused crashed notes live; do [ -d .claude/pipeline-runs/$kept ]; done
  touch go
  wait "$e"
  # once its engine is gone, the stopped session is finished
  run -0 env LOOPKIT_NOW=$later "$LOOPKIT_SCRIPTS/engine-ctl" prune
  [ ! -e .claude/pipeline-runs/live ]
  [ -d .claude/pipeline-runs/paused ]
}

@test "prune --older-than keeps what ended more recently; bad durations are usage errors" {
  finished recent
  run -0 env LOOPKIT_NOW=$((LOOPKIT_NOW + 3600)) "$LOOPKIT_SCRIPTS/engine-ctl" prune --older-than 2h
  [ -d .claude/pipeline-runs/recent ]
  run -0 env LOOPKIT_NOW=$((LOOPKIT_NOW + 3600)) "$LOOPKIT_SCRIPTS/engine-ctl" prune --older-than 30m
  [ ! -e .claude/pipeline-runs/recent ]
  run -2 ctl prune --older-than soon
  run -2 ctl prune --bogus
  run -0 ctl prune nowhere
}
