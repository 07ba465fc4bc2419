#!/usr/bin/env bats
# scripts/pipeline-engine: stages in order, each a loop, state type pipeline.
load helpers

: "${LOOPKIT_SCRIPTS:=$LOOPKIT_SOURCE/scripts}"
FIX=$BATS_TEST_DIRNAME/fixtures
S=.claude/pipeline-runs/refine/state.json
D=.claude/pipeline-runs/refine

engine() { "$LOOPKIT_SCRIPTS/pipeline-engine" "$@"; }

# An agent that logs STAGE:ITERATION, prints a line of output, and follows a
# plan of lines STAGE:ITER=JSON (its result) or STAGE:ITER=block (write
# block.STAGE.ITER with its pid, then wait for go.STAGE.ITER).
make_agent() {
  cat >agent.sh <<'EOF'
#!/usr/bin/env bash
me=$LOOPKIT_STAGE:$LOOPKIT_ITERATION
echo "$me" >>ran.log
echo "output of $me"
while IFS= read -r step; do
  [[ -n $step && ${step%%=*} == "$me" ]] || continue
  if [[ ${step#*=} == block ]]; then
    echo "$$" >"block.tmp" && mv block.tmp "block.$LOOPKIT_STAGE.$LOOPKIT_ITERATION"
    for ((i = 0; i < 600; i++)); do [[ -e go.$LOOPKIT_STAGE.$LOOPKIT_ITERATION ]] && break; sleep 0.1; done
  else
    printf '%s' "${step#*=}" >"$LOOPKIT_RESULT"
  fi
done <<<"${AGENT_PLAN:-}"
EOF
  chmod +x agent.sh
}

make_pipe() { # make_pipe RUNS0 RUNS1 [RUNS2]
  local i=0 r sep=""
  {
    printf '{"name": "full-refine", "stages": ['
    for r in "$@"; do
      printf '%s\n  {"name": "s%d", "loop": "loop-%d", "runs": %d, "command": "./agent.sh"}' "$sep" "$i" "$i" "$r"
      sep=, i=$((i + 1))
    done
    printf ']}\n'
  } >pipe.json
}

ran() { tr '\n' ' ' <ran.log; }

@test "runs the stages in order, each in its folder, and keeps the pipeline state" {
  make_agent
  make_pipe 2 1
  run -0 engine --session refine pipe.json
  [ "$(ran)" = "0:1 0:2 1:1 " ]
  run -0 state-get "$S" session type pipeline status current_stage completion_reason \
    '.stages[].name' '.stages[].loop' '.stages[].runs' '.stages[].status' '.stages[].iterations_run' '.stages[].reason'
  [ "$output" = $'refine\npipeline\nfull-refine\ncomplete\n1\nall-stages-complete\ns0\ns1\nloop-0\nloop-1\n2\n1\ncompleted\ncompleted\n2\n1\nmax_iterations\nmax_iterations' ]
  run -0 state-get "$S" '.stages[0].started_at' '.stages[0].completed_at' started_at completed_at
  [ "$output" = $'2025-01-10T10:05:30Z\n2025-01-10T10:05:30Z\n2025-01-10T10:05:30Z\n2025-01-10T10:05:30Z' ]
  run -0 state-get "$S" '.history[].stage'
  [ "$output" = $'s0\ns0\ns1' ]
  cmp pipe.json "$D/pipeline.json"
  [ "$(head -n 1 "$D/stage-0-s0/progress.md")" = '# Progress: s0' ]
  [ "$(cat "$D/stage-0-s0/output.md")" = $'output of 0:1\noutput of 0:2' ]
  [ "$(cat "$D/stage-1-s1/output.md")" = 'output of 1:1' ]
  [ -f "$D/progress-refine.md" ]
  [ ! -e .claude/locks/refine.lock ]
}

@test "the command gets the stage in its environment" {
  cat >pipe.json <<'EOF'
{"name": "p", "stages": [
  {"name": "a", "loop": "a", "runs": 1, "command": "echo \"$LOOPKIT_SESSION $LOOPKIT_STAGE $LOOPKIT_ITERATION ${LOOPKIT_STAGE_DIR##*/} ${LOOPKIT_PROGRESS#$PWD/} ${LOOPKIT_STATE#$PWD/}\" >>env.log"},
  {"name": "b", "loop": "b", "runs": 1, "command": "echo \"$LOOPKIT_STAGE ${LOOPKIT_STAGE_DIR##*/}\" >>env.log"}]}
EOF
  run -0 engine --session refine pipe.json
  run -0 cat env.log
  [ "$output" = $'refine 0 1 stage-0-a .claude/pipeline-runs/refine/stage-0-a/progress.md .claude/pipeline-runs/refine/state.json\n1 stage-1-b' ]
}

@test "a stop or a plateau ends the stage, and the next stage starts afresh" {
  make_agent
  make_pipe 5 5 2
  AGENT_PLAN=$'0:2={"stop":"beads-empty"}\n1:1={"plateau":true}\n1:2={"plateau":true,"reasoning":"done"}' \
    run -0 engine --session refine pipe.json
  [ "$(ran)" = "0:1 0:2 1:1 1:2 2:1 2:2 " ]
  run -0 state-get "$S" '.stages[].reason' '.stages[].iterations_run'
  [ "$output" = $'beads-empty\nplateau\nmax_iterations\n2\n2\n2' ]
}

@test "a failing stage fails the pipeline; the rerun resumes in that stage" {
  make_agent
  make_pipe 1 3
  cat >fail.sh <<'EOF'
#!/usr/bin/env bash
[[ -e fixed ]] || exit 9
exec ./agent.sh
EOF
  chmod +x fail.sh
  sed -i '0,/"command": ".\/agent.sh"}]/s//"command": ".\/fail.sh"}]/' pipe.json
  grep -q fail.sh pipe.json
  run -5 engine --session refine pipe.json
  run -0 state-get "$S" status completion_reason current_stage '.stages[1].status' '.stages[1].reason'
  [ "$output" = $'failed\nagent-error\n1\nfailed\nagent-error' ]
  touch fixed
  run -0 engine --session refine pipe.json
  [ "$(ran)" = "0:1 1:1 1:2 1:3 " ]
  run -0 state-get "$S" status '.stages[].status'
  [ "$output" = $'complete\ncompleted\ncompleted' ]
}

@test "kill -9 mid-stage: the rerun resumes at that stage's next iteration" {
  make_agent
  make_pipe 2 3 1
  AGENT_PLAN='1:2=block' "$LOOPKIT_SCRIPTS/pipeline-engine" --session refine pipe.json 2>err.log &
  wait_for block.1.2
  epid=$(state-get .claude/locks/refine.lock pid)
  run -0 state-get "$S" current_stage iteration iteration_completed '.stages[1].status' '.stages[1].iterations_run'
  [ "$output" = $'1\n2\n1\nrunning\n1' ]
  kill -9 "$epid" "$(cat block.1.2)"
  wait_gone "$epid"
  run -0 engine --session refine pipe.json
  [ "$(ran)" = "0:1 0:2 1:1 1:2 1:2 1:3 2:1 " ]
  run -0 state-get "$S" status '.stages[].iterations_run' '.history[].iteration'
  [ "$output" = $'complete\n2\n3\n1\n1\n2\n1\n2\n3\n1' ]
}

@test "a complete pipeline is left alone; a second engine is refused" {
  make_agent
  make_pipe 1 1
  AGENT_PLAN='0:1=block' "$LOOPKIT_SCRIPTS/pipeline-engine" --session refine pipe.json 2>/dev/null &
  e=$!
  wait_for block.0.1
  run -1 engine --session refine pipe.json
  touch go.0.1
  wait "$e"
  cp "$S" before.json
  run -0 engine --session refine pipe.json
  cmp "$S" before.json
  [ "$(ran)" = "0:1 1:1 " ]
}

@test "a bad pipeline file is refused before anything is written" {
  echo '{"name": "x", "stages": []}' >empty.json
  run -3 engine --session refine empty.json
  echo '{"stages": [{"name": "a", "runs": 0, "command": "true"}]}' >zero.json
  run -3 engine --session refine zero.json
  echo '{"stages": [{"name": "a", "runs": 1}]}' >nocmd.json
  run -3 engine --session refine nocmd.json
  echo '{"stages": [' >broken.json
  run -3 engine --session refine broken.json
  run -2 engine --session refine
  run -2 engine --session refine no-such.json
  [ ! -e .claude ]
}

@test "resumes agent-pipelines' crash between stages (history by stage name)" {
  mkdir -p .claude/pipeline-runs/test-between-crash
  cp "$FIX/ap_state_between_stage_crash.test_resume.json" .claude/pipeline-runs/test-between-crash/state.json
  make_agent
  cat >pipe.json <<'EOF'
{"name": "two", "stages": [
  {"name": "stage-0", "loop": "a", "runs": 2, "command": "./agent.sh"},
  {"name": "stage-1", "loop": "b", "runs": 2, "command": "./agent.sh"}]}
EOF
  run -0 engine --session test-between-crash pipe.json
  [ "$(ran)" = "1:1 1:2 " ]
  T=.claude/pipeline-runs/test-between-crash/state.json
  run -0 state-get "$T" status '.stages[0].status' '.stages[1].status' '.stages[1].iterations_run' '.history[].iteration'
  [ "$output" = $'complete\ncomplete\ncompleted\n2\n1\n2\n1\n2' ]
}

@test "resumes the crashed stage 3 of the bug report at its first iteration, not the stale iteration_completed" {
  mkdir -p .claude/pipeline-runs/bug
  cp "$FIX/ap_state_crashed_stage3.bug-report.json" .claude/pipeline-runs/bug/state.json
  make_agent
  cat >pipe.json <<'EOF'
{"name": "full", "stages": [
  {"name": "plan-tdd", "runs": 1, "command": "./agent.sh"},
  {"name": "elegance", "runs": 1, "command": "./agent.sh"},
  {"name": "create-beads", "runs": 1, "command": "./agent.sh"},
  {"name": "refine-beads", "runs": 2, "command": "./agent.sh"}]}
EOF
  run -0 engine --session bug pipe.json
  [ "$(ran)" = "3:1 3:2 " ]
  run -0 state-get .claude/pipeline-runs/bug/state.json status '.stages[3].iterations_run' '.stages[3].loop'
  [ "$output" = $'complete\n2\nrefine-beads' ]
}

@test "resumes the documented pipeline state in its running stage" {
  mkdir -p .claude/pipeline-runs/myrefine
  cp "$FIX/ap_state_pipeline.doc.json" .claude/pipeline-runs/myrefine/state.json
  make_agent
  cat >pipe.json <<'EOF'
{"name": "full-refine", "stages": [
  {"name": "improve-plan", "loop": "improve-plan", "runs": 5, "command": "./agent.sh"},
  {"name": "refine-beads", "loop": "refine-beads", "runs": 1, "command": "./agent.sh"},
  {"name": "final", "loop": "final", "runs": 1, "command": "./agent.sh"}]}
EOF
  run -0 engine --session myrefine pipe.json
  # current_stage 2 in the file: stages 0 and 1 are behind it
  [ "$(ran)" = "2:1 " ]
  run -0 state-get .claude/pipeline-runs/myrefine/state.json status '.stages[0].reason' '.stages[2].status'
  [ "$output" = $'complete\nplateau\ncompleted' ]
}

@test "a pipeline whose last stage finished before a crash is completed, not rerun" {
  mkdir -p .claude/pipeline-runs/x
  cat >.claude/pipeline-runs/x/state.json <<'JSON'
{"session": "x", "type": "pipeline", "status": "failed", "current_stage": 1,
 "stages": [{"name": "a", "status": "complete"}, {"name": "b", "status": "complete"}],
 "history": []}
JSON
  make_agent
  cat >pipe.json <<'JSON'
{"name": "p", "stages": [{"name": "a", "runs": 1, "command": "./agent.sh"}, {"name": "b", "runs": 1, "command": "./agent.sh"}]}
JSON
  run -0 engine --session x pipe.json
  [ ! -e ran.log ]
  run -0 state-get .claude/pipeline-runs/x/state.json status completion_reason
  [ "$output" = $'complete\nall-stages-complete' ]
}

@test "SIGTERM mid-stage: stage and pipeline marked interrupted, the rerun resumes there" {
  make_agent
  make_pipe 1 2
  AGENT_PLAN='1:1=block' "$LOOPKIT_SCRIPTS/pipeline-engine" --session refine pipe.json 2>/dev/null &
  e=$!
  wait_for block.1.1
  kill -TERM "$e"
  rc=0; wait "$e" || rc=$?
  [ "$rc" = 143 ]
  run -0 state-get "$S" status completion_reason current_stage '.stages[1].status' '.stages[1].reason'
  [ "$output" = $'failed\ninterrupted\n1\nfailed\ninterrupted' ]
  [ ! -e .claude/locks/refine.lock ]
  run -0 engine --session refine pipe.json
  [ "$(ran)" = "0:1 1:1 1:1 1:2 " ]
}

@test "a rerun with a changed pipeline replaces the session's copy, with a warning" {
  make_agent
  make_pipe 1 1
  cat >fail.sh <<'EOF2'
#!/usr/bin/env bash
exit 4
EOF2
  chmod +x fail.sh
  sed -i 's|"command": "./agent.sh"}]|"command": "./fail.sh"}]|' pipe.json
  run -5 engine --session refine pipe.json
  make_pipe 1 1
  run -0 --separate-stderr engine --session refine pipe.json
  [[ $stderr == *"warning: the pipeline differs from the session's copy"* ]]
  cmp pipe.json "$D/pipeline.json"
  [ "$(ran)" = "0:1 1:1 " ]
}

@test "pause, resume and stop through the state file; cost summed; events per stage" {
  make_agent
  make_pipe 2 3
  AGENT_PLAN=$'0:1=block\n0:2={"cost":0.5,"tokens":10}\n1:1={"cost":0.25}' \
    "$LOOPKIT_SCRIPTS/pipeline-engine" --session p --poll 0.05 pipe.json 2>/dev/null &
  e=$!
  wait_for block.0.1
  state-set .claude/pipeline-runs/p/state.json status=paused
  touch go.0.1
  wait_grep '"type":"paused"' .claude/pipeline-runs/p/events.jsonl
  [ "$(ran)" = "0:1 " ]
  state-set .claude/pipeline-runs/p/state.json status=running
  wait_grep '"type":"resumed"' .claude/pipeline-runs/p/events.jsonl
  wait "$e"
  [ "$(ran)" = "0:1 0:2 1:1 1:2 1:3 " ]
  S=.claude/pipeline-runs/p/state.json
  run -0 state-get "$S" status total_cost total_tokens
  [ "$output" = $'complete\n0.75\n10' ]
  run -0 event-show --type stage-start,stage-done,complete .claude/pipeline-runs/p/events.jsonl
  [ "$(cut -d' ' -f3 <<<"$output" | tr '\n' ' ')" = "stage-start stage-done stage-start stage-done complete " ]
  # stopped: ends with completion_reason stopped before the next iteration
  rm -rf .claude ran.log
  AGENT_PLAN='0:2=block' "$LOOPKIT_SCRIPTS/pipeline-engine" --session p --poll 0.05 pipe.json 2>/dev/null &
  e=$!
  wait_for block.0.2
  state-set "$S" status=stopped
  touch go.0.2
  rc=0; wait "$e" || rc=$?
  [ "$rc" = 0 ]
  [ "$(ran)" = "0:1 0:2 " ]
  run -0 state-get "$S" status completion_reason
  [ "$output" = $'stopped\nstopped' ]
}

@test "--max-failures stops a failing stage with too-many-failures" {
  printf '{"name":"p","stages":[{"name":"a","runs":3,"command":"echo x >>ran.log; exit 4"}]}' >pipe.json
  run -5 engine --session p --retries 5 --retry-delay 0 --max-failures 2 pipe.json
  [ "$(wc -l <ran.log)" = 2 ]
  run -0 state-get .claude/pipeline-runs/p/state.json status completion_reason '.stages[0].reason'
  [ "$output" = $'failed\ntoo-many-failures\ntoo-many-failures' ]
}

# --- issue 23: engines you can leave running overnight -----------------------

@test "kill -9 of the engine ends the stage's agent; the rerun never overlaps it" {
  make_agent
  make_pipe 1 2
  AGENT_PLAN='1:1=block' "$LOOPKIT_SCRIPTS/pipeline-engine" --session refine pipe.json 2>/dev/null &
  wait_for block.1.1
  agent=$(cat block.1.1)
  # the agent's group is in the hold file beside the lock (its first
  # field), not in the state
  local i rec=()
  for ((i = 0; i < 300; i++)); do
    { read -r -a rec <.claude/locks/refine.lock.agent; } 2>/dev/null || rec=()
    [[ ! ${rec[0]:-} =~ ^[0-9]+$ ]] || break
    sleep 0.1
  done
  [ "$(ps -o pgid= -p "$agent" | tr -d ' ')" = "${rec[0]:-}" ]
  run -1 state-get -e "$S" agent_pid
  kill -9 "$(state-get .claude/locks/refine.lock pid)"
  wait_gone "$agent" # not killed by the test: its group died with the engine
  run -0 engine --session refine pipe.json
  [ "$(ran)" = "0:1 1:1 1:1 1:2 " ]
  run -0 state-get -k "$S" '.history[1]'
  [[ $(tr '\n' ' ' <<<"$output") == *"started_at ended_at duration_s exit_status"* ]]
  run -1 state-get -e "$S" agent_pid
}

@test "a paused pipeline stays paused across a restart; a failed stage is exit 5" {
  make_agent
  make_pipe 1 1
  mkdir -p .claude/pipeline-runs/refine
  printf '{"session":"refine","type":"pipeline","status":"paused"}' >"$S"
  "$LOOPKIT_SCRIPTS/pipeline-engine" --session refine --poll 0.1 pipe.json 2>/dev/null &
  e=$!
  for _ in $(seq 300); do grep -q '"paused"' .claude/pipeline-runs/refine/events.jsonl 2>/dev/null && break; sleep 0.1; done
  [ ! -e ran.log ]
  "$LOOPKIT_SCRIPTS/engine-ctl" resume refine
  wait "$e"
  [ "$(ran)" = "0:1 1:1 " ]
  printf '{"name":"p","stages":[{"name":"a","runs":1,"command":"exit 7"}]}' >bad.json
  run -5 --separate-stderr engine --session bad bad.json
  [[ $stderr == *"the command exited with status 7"* ]]
}

# the overlap agent of helpers.bash as the one stage of a pipeline
make_overlap_stage() {
  make_overlap_agent
  printf '{"name":"p","stages":[{"name":"a","runs":1,"command":"./overlap.sh"}]}' >pipe.json
}

@test "a restarted pipeline waits for the previous stage agent: no two overlap" {
  make_overlap_stage
  TERM_GRACE=2 "$LOOPKIT_SCRIPTS/pipeline-engine" --session refine pipe.json 2>/dev/null &
  wait_for agent.pid
  first=$(cat agent.pid)
  rm agent.pid
  touch second
  kill -9 "$(state-get .claude/locks/refine.lock pid)"
  run -0 --separate-stderr engine --session refine pipe.json
  [[ $stderr == *"waiting for the previous agent of session 'refine'"* ]]
  ! grep -q overlap agents.log || false
  [ "$(head -n 2 agents.log)" = "start $first"$'\n'"end $first term" ]
  run -0 state-get "$S" status
  [ "$output" = complete ]
  run -1 state-get -e "$S" agent_pid
}

@test "--max-cost ends the pipeline before the next iteration once total_cost reaches it" {
  make_agent
  make_pipe 3 2
  AGENT_PLAN=$'0:1={"cost":0.25}\n0:2={"cost":0.25}\n0:3={"cost":0.25}' run -0 engine --session refine --max-cost 0.5 pipe.json
  [ "$(ran)" = "0:1 0:2 " ]
  run -0 state-get "$S" status completion_reason total_cost
  [ "$output" = $'complete\nmax_cost\n0.5' ]
}

@test "the final words of a pipeline count the later stages too" {
  make_agent
  make_pipe 3 2
  AGENT_PLAN=$'0:1={"cost":0.25}\n0:2={"cost":0.25}' run -0 --separate-stderr engine --session refine --max-cost 0.5 pipe.json
  [[ $stderr == *"in stage 0 (s0) after 2 iterations: done 2, left 1 in this stage and up to 2 in later stages"* ]]
}

@test "--max-tokens and --deadline end the pipeline before the next iteration, each with its reason" {
  make_agent
  make_pipe 3 2
  AGENT_PLAN=$'0:1={"tokens":400}\n0:2={"tokens":600}' run -0 --separate-stderr engine --session refine --max-tokens 1000 pipe.json
  [ "$(ran)" = "0:1 0:2 " ]
  [[ $stderr == *"complete: total_tokens reached --max-tokens 1000 in stage 0 (s0) after 2 iterations"* ]]
  run -0 state-get "$S" status completion_reason total_tokens
  [ "$output" = $'complete\nmax_tokens\n1000' ]
  # the clock moves past the deadline while s1's first run works: it finishes, nothing new starts
  rm -rf .claude ran.log
  echo 1736503530 >clock
  printf '#!/bin/sh\necho "$LOOPKIT_STAGE:$LOOPKIT_ITERATION" >>ran.log\n[ "$LOOPKIT_STAGE:$LOOPKIT_ITERATION" != 1:1 ] || echo 1736510731 >clock\n' >agent.sh
  LOOPKIT_NOW=@$W/clock run -0 --separate-stderr engine --session refine --deadline 2h pipe.json
  [ "$(ran)" = "0:1 0:2 0:3 1:1 " ]
  [[ $stderr == *"complete: the --deadline 2h has passed in stage 1 (s1) after 1 iterations"* ]]
  run -0 state-get "$S" status completion_reason
  [ "$output" = $'complete\ndeadline' ]
}

@test "--on-event: the pipeline's events reach the command" {
  make_agent
  make_pipe 1 1
  run -0 engine --session refine --on-event 'cat >>"$PWD/hook.$LOOPKIT_EVENT"' pipe.json
  wait_for hook.complete
  wait_for hook.iteration-done
  for ((i = 0; i < 300; i++)); do [ "$(wc -l <hook.iteration-done)" = 2 ] && break; sleep 0.1; done
  [ "$(sort hook.iteration-done)" = "$(grep '"type":"iteration-done"' "$D/events.jsonl" | sort)" ]
}

@test "each stage's runs keep their output in the stage's logs, named in the history; output.md still gets stdout" {
  make_agent
  make_pipe 2 1
  run -0 engine --session refine pipe.json
  run -0 state-get "$S" '.history[].output'
  [ "$output" = "$W/$D/stage-0-s0/logs/iteration-1-attempt-1.log"$'\n'"$W/$D/stage-0-s0/logs/iteration-2-attempt-1.log"$'\n'"$W/$D/stage-1-s1/logs/iteration-1-attempt-1.log" ]
  [ "$(cat "$D/stage-0-s0/logs/iteration-2-attempt-1.log")" = "output of 0:2" ]
  grep -qx "output of 0:2" "$D/stage-0-s0/output.md"
}
