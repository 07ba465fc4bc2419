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
