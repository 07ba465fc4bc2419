#!/usr/bin/env bats
# scripts/loop-engine: the session lifecycle of 003_26e95c9e0dcadcb1.txt.
# Fixtures ap_state_*: state files written by agent-pipelines itself (see
# ../shared/fixtures/README.md of the project for where each comes from).
load helpers

: "${LOOPKIT_SCRIPTS:=$LOOPKIT_SOURCE/scripts}"
FIX=$BATS_TEST_DIRNAME/fixtures
ST=.claude/pipeline-runs/demo/state.json
LOCK=.claude/locks/demo.lock

engine() { "$LOOPKIT_SCRIPTS/loop-engine" "$@"; }

# heartbeats: the lock-heartbeat processes running on this test's files
heartbeats() { pgrep -f "lock-heartbeat .*$W/" || true; }

# An agent following a plan: lines ITER=JSON (the result it writes), and
# ITER=block (write block.ITER with its pid and parent's pid, then wait for
# the file go.ITER).
make_agent() {
  cat >agent.sh <<'EOF'
#!/usr/bin/env bash
echo "$LOOPKIT_ITERATION" >>ran.log
while IFS= read -r step; do
  [[ -n $step && ${step%%=*} == "$LOOPKIT_ITERATION" ]] || continue
  if [[ ${step#*=} == block ]]; then
    echo "$$ $PPID" >"block.$LOOPKIT_ITERATION.tmp" && mv "block.$LOOPKIT_ITERATION.tmp" "block.$LOOPKIT_ITERATION"
    for ((i = 0; i < 600; i++)); do [[ -e go.$LOOPKIT_ITERATION ]] && break; sleep 0.1; done
  else
    printf '%s' "${step#*=}" >"$LOOPKIT_RESULT"
  fi
done <<<"${AGENT_PLAN:-}"
exit 0
EOF
  chmod +x agent.sh
}

ran() { tr '\n' ' ' <ran.log; }

@test "runs to max_iterations and keeps state, progress and lock as the seed says" {
  make_agent
  run -0 --separate-stderr engine --session demo --max-iterations 3 --verify 'make test' -- ./agent.sh
  [ "$(ran)" = "1 2 3 " ]
  run -0 state-get "$ST" session type status iteration iteration_completed iteration_started \
    current_stage stages completion_reason '.history[].iteration' '.history[].plateau'
  [ "$output" = $'demo\nloop\ncomplete\n3\n3\nnull\n0\n[]\nmax_iterations\n1\n2\n3\nfalse\nfalse\nfalse' ]
  run -0 state-get "$ST" started_at completed_at '.history[0].timestamp'
  [ "$output" = $'2025-01-10T10:05:30Z\n2025-01-10T10:05:30Z\n2025-01-10T10:05:30Z' ]
  run -1 state-get -e "$ST" '.history[0].reasoning'
  [ ! -e "$LOCK" ]
  run -0 head -n 3 .claude/pipeline-runs/demo/progress-demo.md
  [ "$output" = $'# Progress: demo\n\nVerify: make test' ]
}

@test "the member order of a new state file is the seed's" {
  make_agent
  engine --session demo --max-iterations 1 -- ./agent.sh 2>/dev/null
  run -0 state-get -k "$ST" .
  # the seed's members first, in its order; loopkit's own after them
  [ "$output" = $'session\ntype\nstarted_at\nstatus\niteration\niteration_completed\niteration_started\ncurrent_stage\nstages\nhistory\ncompleted_at\ncompletion_reason\nmax_iterations\ntotal_cost\ntotal_tokens\ntotal_turns\nconsecutive_failures' ]
  run -0 state-get -k "$ST" '.history[0]'
  [ "$output" = $'iteration\ntimestamp\nplateau\nstarted_at\nended_at\nduration_s\nexit_status\noutput' ]
}

@test "--help, --version and usage errors" {
  run -0 engine --help
  [[ $output == Usage:\ loop-engine* ]]
  run -0 engine --version
  [ "$output" = "loop-engine (loopkit) $(state-get --version | sed 's/.* //')" ]
  run -2 engine --session demo
  run -2 engine -- true
  run -2 engine --session demo --max-iterations x -- true
  run -2 engine --session demo --max-iterations 0 -- true
  run -2 engine --session a/b -- true
  run -2 engine --bogus --session demo -- true
  [ ! -e .claude ]
}

@test "the older spellings -s, -n and -p still work, unlisted (their letters mean other options in loopkit)" {
  make_agent
  run -0 --separate-stderr engine -s demo -n 2 -p 1 -- ./agent.sh
  [ "$(ran)" = "1 2 " ]
  run -0 state-get "$ST" max_iterations
  assert_output 2
  run -0 engine --help
  refute_output --regexp '(^|\n) +-[snp], '
}

@test "every engine and engine-status say the version of the tools and of CMakeLists.txt, also for -V" {
  want=$(sed -n 's/^project(loopkit VERSION \([0-9.]*\).*/\1/p' "$LOOPKIT_SOURCE/CMakeLists.txt")
  [ -n "$want" ]
  [ "$(state-get -V)" = "state-get (loopkit) $want" ]
  for e in loop-engine pipeline-engine drain-engine engine-status; do
    run -0 "$LOOPKIT_SCRIPTS/$e" -V
    [ "$output" = "$e (loopkit) $want" ]
    run -0 "$LOOPKIT_SCRIPTS/$e" --version
    [ "$output" = "$e (loopkit) $want" ]
  done
}

@test "the agent gets its context in the environment, and the engine's stdin" {
  cat >agent.sh <<'EOF'
#!/usr/bin/env bash
{ echo "$LOOPKIT_SESSION|$LOOPKIT_ITERATION|$LOOPKIT_STATE|$LOOPKIT_PROGRESS"
  [[ -e $LOOPKIT_RESULT ]] && echo "result exists" || echo "result fresh"
  read -r line && echo "stdin: $line"; } >>env.log
EOF
  chmod +x agent.sh
  printf 'one\ntwo\n' | engine --session demo --max-iterations 2 -- ./agent.sh 2>/dev/null
  run -0 cat env.log
  [ "$output" = "demo|1|$W/$ST|$W/.claude/pipeline-runs/demo/progress-demo.md
result fresh
stdin: one
demo|2|$W/$ST|$W/.claude/pipeline-runs/demo/progress-demo.md
result fresh
stdin: two" ]
}

@test "the agent's stop reason ends the session" {
  make_agent
  AGENT_PLAN='2={"stop":"beads-empty"}' run -0 engine --session demo --max-iterations 9 -- ./agent.sh
  run -0 state-get "$ST" status completion_reason iteration_completed
  [ "$output" = $'complete\nbeads-empty\n2' ]
}

@test "a plateau vote is counted once: --plateau-after 2 needs two agents" {
  make_agent
  AGENT_PLAN=$'1={"plateau":true}\n2={"plateau":false}\n3={"plateau":true,"reasoning":"a"}\n4={"plateau":true,"reasoning":"b"}' \
    run -0 engine --session demo --max-iterations 9 -- ./agent.sh
  [ "$(ran)" = "1 2 3 4 " ]
  run -0 state-get "$ST" completion_reason '.history[].plateau' '.history[-1].reasoning'
  [ "$output" = $'plateau\ntrue\nfalse\ntrue\ntrue\nb' ]
}

@test "--plateau-after 1 stops on the first vote, 0 never" {
  make_agent
  AGENT_PLAN='2={"plateau":"true"}' run -0 engine --session demo --plateau-after 1 -- ./agent.sh
  [ "$(ran)" = "1 2 " ]
  rm ran.log
  AGENT_PLAN=$'1={"plateau":true}\n2={"plateau":true}' run -0 engine --session other --plateau-after 0 --max-iterations 3 -- ./agent.sh
  [ "$(ran)" = "1 2 3 " ]
  run -0 state-get .claude/pipeline-runs/other/state.json completion_reason
  [ "$output" = max_iterations ]
}

@test "awkward reasoning is stored exactly" {
  make_agent
  AGENT_PLAN='1={"plateau":false,"reasoning":"a=b := c += \"q\" \\ $HOME\nline 2"}' \
    run -0 engine --session demo --max-iterations 1 -- ./agent.sh
  run -0 state-get -j "$ST" '.history[0].reasoning'
  [ "$output" = '"a=b := c += \"q\" \\ $HOME\nline 2"' ]
}

@test "a result that is not JSON is ignored with a warning" {
  make_agent
  AGENT_PLAN='1={"plateau":tru' run -0 --separate-stderr engine --session demo --max-iterations 2 -- ./agent.sh
  [[ $stderr == *"warning: ignoring the agent's result"* ]]
  run -0 state-get "$ST" status '.history[0].plateau'
  [ "$output" = $'complete\nfalse' ]
}

@test "a failing agent fails the session, exit 5; a rerun resumes it" {
  cat >agent.sh <<'EOF'
#!/usr/bin/env bash
echo "$LOOPKIT_ITERATION" >>ran.log
if [[ $LOOPKIT_ITERATION == 2 && ! -e fixed ]]; then exit 7; fi
EOF
  chmod +x agent.sh
  run -5 engine --session demo --max-iterations 3 -- ./agent.sh
  run -0 state-get "$ST" status completion_reason iteration_completed iteration_started
  [ "$output" = $'failed\nagent-error\n1\nnull' ]
  run -0 state-get -e "$ST" completed_at
  [ ! -e "$LOCK" ]
  [ -z "$(heartbeats)" ]
  touch fixed
  run -0 engine --session demo --max-iterations 3 -- ./agent.sh
  [ "$(ran)" = "1 2 2 3 " ]
  run -0 state-get "$ST" status completion_reason completed_at '.history[].iteration'
  [ "$output" = $'complete\nmax_iterations\n2025-01-10T10:05:30Z\n1\n2\n3' ]
}

@test "an agent that cannot run fails the session, exit 5" {
  run -5 engine --session demo -- ./no-such-agent
  run -0 state-get "$ST" status completion_reason
  [ "$output" = $'failed\nagent-error' ]
}

@test "a complete session is left alone" {
  make_agent
  AGENT_PLAN='2={"stop":"done"}' engine --session demo --max-iterations 2 -- ./agent.sh 2>/dev/null
  cp "$ST" before.json
  run -0 engine --session demo --max-iterations 5 -- ./agent.sh
  [[ $output == *"already complete"* ]]
  [ "$(ran)" = "1 2 " ]
  cmp "$ST" before.json
  # ended at its maximum: the same maximum, or none given, does nothing either
  rm -rf .claude ran.log
  engine --session demo --max-iterations 2 -- ./agent.sh 2>/dev/null
  cp "$ST" before.json
  run -0 engine --session demo -- ./agent.sh
  [[ $output == *"already complete"* ]]
  run -0 engine --session demo --max-iterations 2 -- ./agent.sh
  [ "$(ran)" = "1 2 " ]
  cmp "$ST" before.json
  [ ! -e "$LOCK" ]
}

@test "kill -9 mid-iteration: the rerun resumes without repeating completed iterations" {
  make_agent
  AGENT_PLAN='3=block' "$LOOPKIT_SCRIPTS/loop-engine" --session demo --max-iterations 5 -- ./agent.sh 2>err.log &
  wait_for block.3
  read -r agent _ <block.3
  epid=$(state-get "$LOCK" pid) # the engine (the agent's parent is agent-run)
  run -0 state-get "$ST" status iteration iteration_completed
  [ "$output" = $'running\n3\n2' ]
  run -0 state-get -e "$ST" iteration_started
  kill -9 "$epid"
  wait_gone "$agent" # its group dies with the engine
  wait_gone "$epid"
  run -1 lock-status "$LOCK"
  run -0 engine --session demo --max-iterations 5 -- ./agent.sh
  [ "$(ran)" = "1 2 3 3 4 5 " ]
  run -0 state-get "$ST" status iteration_completed '.history[].iteration'
  [ "$output" = $'complete\n5\n1\n2\n3\n4\n5' ]
  [ ! -e "$LOCK" ]
}

@test "no lock-heartbeat outlives its engine, whatever the exit path" {
  make_agent
  # normal end
  AGENT_PLAN='1=block' "$LOOPKIT_SCRIPTS/loop-engine" --session demo --max-iterations 1 -- ./agent.sh 2>/dev/null &
  e=$!
  wait_for block.1
  touch go.1
  wait "$e"
  [ -z "$(heartbeats)" ]
  # SIGTERM mid-iteration: the agent is stopped, the state says so, the lock is gone
  rm -f ran.log block.1 go.1
  AGENT_PLAN='1=block' "$LOOPKIT_SCRIPTS/loop-engine" --session t --max-iterations 1 -- ./agent.sh 2>/dev/null &
  e=$!
  wait_for block.1
  read -r agent _ <block.1
  kill -TERM "$e"
  rc=0; wait "$e" || rc=$?
  [ "$rc" = 143 ]
  wait_gone "$agent"
  [ -z "$(heartbeats)" ]
  [ ! -e .claude/locks/t.lock ]
  run -0 state-get .claude/pipeline-runs/t/state.json status completion_reason iteration_completed
  [ "$output" = $'failed\ninterrupted\n0' ]
}

@test "issue 26: the engine beats its lock itself while the agent runs; nothing else beats it" {
  make_agent
  unset LOOPKIT_NOW # the heartbeat is the real clock here
  LK_HEARTBEAT=0.2 AGENT_PLAN='1=block' "$LOOPKIT_SCRIPTS/loop-engine" --session demo --max-iterations 1 -- ./agent.sh 2>/dev/null &
  e=$!
  wait_for block.1
  # no background beater: a stopped or killed engine's lock ages
  [ -z "$(heartbeats)" ]
  first=$(state-get "$LOCK" heartbeat_epoch)
  for _ in $(seq 300); do [ "$(state-get "$LOCK" heartbeat_epoch)" != "$first" ] && break; sleep 0.1; done
  [ "$(state-get "$LOCK" heartbeat_epoch)" != "$first" ]
  touch go.1
  wait "$e"
  [ ! -e "$LOCK" ]
}

@test "while the agent runs the lock is beaten every LK_HEARTBEAT, not every second" {
  # lock-heartbeat noted in beats, through a tools folder of shims
  mkdir shim
  for t in "$LOOPKIT_BIN"/*; do ln -s "$t" shim/; done
  rm shim/lock-heartbeat
  printf '#!/bin/sh\necho beat >>"%s/beats"\nexec "%s/lock-heartbeat" "$@"\n' "$PWD" "$LOOPKIT_BIN" >shim/lock-heartbeat
  chmod +x shim/lock-heartbeat
  # an agent of 3 s or more (load makes it longer, never shorter); under set
  # -e the beat timer used to end at its first one-second read
  LOOPKIT_BIN=$PWD/shim LK_HEARTBEAT=600 run -0 engine --session demo --max-iterations 1 -- sleep 3
  [ ! -e beats ]
}

@test "a second engine on a running session exits 1" {
  make_agent
  AGENT_PLAN='1=block' "$LOOPKIT_SCRIPTS/loop-engine" --session demo --max-iterations 1 -- ./agent.sh 2>/dev/null &
  e=$!
  wait_for block.1
  run -1 engine --session demo --max-iterations 1 -- ./agent.sh
  [ "$(ran)" = "1 " ]
  touch go.1
  wait "$e"
  run -0 state-get "$ST" status
  [ "$output" = complete ]
}

@test "an engine whose lock was forced away records nothing more, exit 4" {
  make_agent
  AGENT_PLAN='1=block' "$LOOPKIT_SCRIPTS/loop-engine" --session demo --max-iterations 3 -- ./agent.sh 2>err.log &
  e=$!
  wait_for block.1
  lock-release --force "$LOCK"
  touch go.1
  rc=0; wait "$e" || rc=$?
  [ "$rc" = 4 ]
  grep -q 'lost the lock' err.log
  [ "$(ran)" = "1 " ]
  # the fenced write of the iteration's end found no lock: nothing recorded
  run -0 state-get "$ST" iteration_completed
  [ "$output" = 0 ]
  [ -z "$(heartbeats)" ]
}

@test "log lines into a pipe are timestamped" {
  make_agent
  run -0 --separate-stderr engine --session demo --max-iterations 1 -- ./agent.sh
  [[ ${stderr_lines[0]} =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z\ loop-engine:\ session\ demo: ]]
  [[ $stderr != *$'\r'* ]]
}

# need_pty: skip unless a pseudo-terminal can be opened (a bare container or
# chroot may have no /dev/pts mounted)
need_pty() {
  command -v python3 >/dev/null || skip "python3 is not installed (needed to check for a pseudo-terminal)"
  python3 -c 'import os; os.close(os.openpty()[0])' 2>/dev/null ||
    skip "no pseudo-terminal can be opened here (is /dev/pts mounted?)"
}

@test "on a terminal one status line is rewritten in place" {
  command -v script >/dev/null || skip "script(1) is not installed"
  need_pty
  make_agent
  # a terminal of the usual kind, whatever the caller's TERM (dumb draws no status line)
  TERM=xterm script -qfec "$LOOPKIT_SCRIPTS/loop-engine --session demo --max-iterations 2 -- ./agent.sh" typescript >/dev/null
  grep -q $'\r\033\\[K' typescript
  grep -q 'iteration 2 of 2' typescript
}

@test "a loop session never runs over a pipeline session" {
  mkdir -p .claude/pipeline-runs/demo
  cp "$FIX/ap_state_pipeline.doc.json" "$ST"
  run -2 engine --session demo -- true # the wrong engine for it: a usage error
  [ ! -e "$LOCK" ]
}

# --- state files written by agent-pipelines ----------------------------------

# fixture FILE SESSION: install it as the state of SESSION
fixture() {
  mkdir -p ".claude/pipeline-runs/$2"
  cp "$FIX/$1" ".claude/pipeline-runs/$2/state.json"
}

@test "resumes a failed agent-pipelines loop (history of another shape, fields missing)" {
  fixture ap_state_failed_loop.test_resume.json test-resume-history
  make_agent
  run -0 engine --session test-resume-history --max-iterations 4 -- ./agent.sh
  [ "$(ran)" = "3 4 " ]
  S=.claude/pipeline-runs/test-resume-history/state.json
  run -0 state-get "$S" status completion_reason iteration_completed '.history[].iteration' '.history[0].decision' started_at
  [ "$output" = $'complete\nmax_iterations\n4\n1\n2\n3\n4\ncontinue\n2025-01-10T10:05:30Z' ]
}

@test "resumes a running agent-pipelines loop mid-session" {
  fixture ap_state_midrun.generated-main.json demo-session
  make_agent
  run -0 engine --session demo-session --max-iterations 3 -- ./agent.sh
  [ "$(ran)" = "3 " ]
  S=.claude/pipeline-runs/demo-session/state.json
  run -0 state-get "$S" status started_at event_offset '.history[].iteration'
  [ "$output" = $'complete\n2026-11-22T03:56:11Z\n0\n1\n2\n3' ]
}

@test "resumes the unified-loop example at iteration_completed + 1" {
  fixture ap_state_unified_loop.doc.json myfeature
  make_agent
  run -0 engine --session myfeature --max-iterations 6 -- ./agent.sh
  [ "$(ran)" = "5 6 " ]
  run -0 state-get .claude/pipeline-runs/myfeature/state.json iteration_completed '.history[].iteration'
  [ "$output" = $'6\n1\n2\n5\n6' ]
}

@test "plateau votes written as strings count, once each" {
  fixture ap_state_plateau_complete.generated-ba90fb6.json p
  S=.claude/pipeline-runs/p/state.json
  # complete: nothing to do
  run -0 engine --session p -- ./agent.sh
  [ ! -e ran.log ]
  # reopened: the last vote was "true", this agent's vote makes two
  state-set "$S" status=running completed_at:=null completion_reason:=null
  make_agent
  AGENT_PLAN='3={"plateau":true}' run -0 engine --session p --max-iterations 9 -- ./agent.sh
  [ "$(ran)" = "3 " ]
  run -0 state-get "$S" completion_reason '.history[].plateau'
  [ "$output" = $'plateau\nfalse\ntrue\ntrue' ]
}

@test "the double-counting fixture: one plateau vote does not stop the loop" {
  fixture ap_state_plateau_double_count.test.json test-session
  make_agent
  AGENT_PLAN=$'2={"plateau":true}\n3={"plateau":true}' run -0 engine --session test-session --max-iterations 9 -- ./agent.sh
  [ "$(ran)" = "2 3 " ]
  run -0 state-get .claude/pipeline-runs/test-session/state.json completion_reason iteration_completed
  [ "$output" = $'plateau\n3' ]
}

@test "a complete agent-pipelines session is left alone" {
  fixture ap_state_complete.generated-main.json demo-session
  run -0 engine --session demo-session -- false
  cmp "$FIX/ap_state_complete.generated-main.json" .claude/pipeline-runs/demo-session/state.json
}

@test "a higher --max-iterations extends a session that ended at its maximum" {
  make_agent
  engine --session demo --max-iterations 2 -- ./agent.sh 2>/dev/null
  run -0 engine --session demo --max-iterations 4 -- ./agent.sh
  [ "$(ran)" = "1 2 3 4 " ]
  run -0 state-get "$ST" status completion_reason iteration_completed max_iterations '.history[].iteration'
  [ "$output" = $'complete\nmax_iterations\n4\n4\n1\n2\n3\n4' ]
  run -0 event-show --type start --json .claude/pipeline-runs/demo/events.jsonl
  [[ ${lines[1]} == *'"extended":1'* ]]
}

# the agent steers its own session: ITER=STATUS sets the state's status
make_steering_agent() {
  cat >agent.sh <<'EOF'
#!/usr/bin/env bash
echo "$LOOPKIT_ITERATION" >>ran.log
while IFS= read -r step; do
  [[ -n $step && ${step%%=*} == "$LOOPKIT_ITERATION" ]] || continue
  state-set "$LOOPKIT_STATE" "status=${step#*=}"
done <<<"${AGENT_PLAN:-}"
EOF
  chmod +x agent.sh
}

@test "pause, resume and stop through the state file" {
  make_steering_agent
  AGENT_PLAN=$'2=paused\n4=stopped' "$LOOPKIT_SCRIPTS/loop-engine" --session demo --max-iterations 9 --poll 0.05 \
    -- ./agent.sh 2>err.log &
  e=$!
  wait_grep '"type":"paused"' .claude/pipeline-runs/demo/events.jsonl
  [ "$(ran)" = "1 2 " ]
  run -0 state-get "$ST" status iteration_completed
  [ "$output" = $'paused\n2' ]
  grep -q 'paused (resume: state-set' err.log
  state-set "$ST" status=running
  rc=0; wait "$e" || rc=$?
  [ "$rc" = 0 ]
  [ "$(ran)" = "1 2 3 4 " ]
  run -0 state-get "$ST" status completion_reason iteration_completed
  [ "$output" = $'stopped\nstopped\n4' ]
  [ ! -e "$LOCK" ]
  run -0 event-show .claude/pipeline-runs/demo/events.jsonl
  [[ $output == *" paused demo"*" resumed demo"*" stopped demo"* ]]
  # a rerun of a stopped session resumes it
  AGENT_PLAN= run -0 engine --session demo --max-iterations 5 -- ./agent.sh
  [ "$(ran)" = "1 2 3 4 5 " ]
}

@test "--retries runs a failing agent again with a back-off; success resets the count" {
  cat >agent.sh <<'EOF'
#!/usr/bin/env bash
echo "$LOOPKIT_ITERATION" >>ran.log
n=$(grep -c . ran.log)
[[ $n != 2 && $n != 3 ]] || exit 7
printf '{"cost":0.5,"tokens":100,"turns":2}' >"$LOOPKIT_RESULT"
EOF
  chmod +x agent.sh
  run -0 --separate-stderr engine --session demo --max-iterations 2 --retries 2 --retry-delay 0 -- ./agent.sh
  [ "$(ran)" = "1 2 2 2 " ]
  run -0 state-get "$ST" status iteration_completed consecutive_failures total_cost total_tokens total_turns '.history[1].cost'
  [ "$output" = $'complete\n2\n0\n1\n200\n4\n0.5' ]
  run -0 event-show --type agent-failed,retry .claude/pipeline-runs/demo/events.jsonl
  [ "${#lines[@]}" = 4 ]
}

@test "the circuit breaker: --max-failures consecutive failures stop the session" {
  printf '#!/bin/sh\necho "$LOOPKIT_ITERATION" >>ran.log\nexit 3\n' >agent.sh
  chmod +x agent.sh
  LOOPKIT_RETRY_DELAY=0 run -5 engine --session demo --max-iterations 5 --retries 9 --max-failures 3 -- ./agent.sh
  [[ $output == *"too-many-failures"* ]]
  [ "$(ran)" = "1 1 1 " ]
  run -0 state-get "$ST" status completion_reason consecutive_failures
  [ "$output" = $'failed\ntoo-many-failures\n3' ]
  [ ! -e "$LOCK" ]
}

@test "the event log: one numbered line per action" {
  make_agent
  AGENT_PLAN='2={"reasoning":"r two"}' run -0 engine --session demo --max-iterations 2 -- ./agent.sh
  run -0 event-show .claude/pipeline-runs/demo/events.jsonl
  [ "$output" = "1 2025-01-10T10:05:30Z start demo engine=loop iteration=0 max_iterations=2 extended=0
2 2025-01-10T10:05:30Z iteration-start demo iteration=1
3 2025-01-10T10:05:30Z iteration-done demo iteration=1 plateau=false
4 2025-01-10T10:05:30Z iteration-start demo iteration=2
5 2025-01-10T10:05:30Z iteration-done demo iteration=2 plateau=false reasoning=\"r two\"
6 2025-01-10T10:05:30Z complete demo reason=max_iterations iteration=2" ]
}

@test "a start says nothing about other sessions' locks" {
  make_agent
  mkdir -p .claude/locks
  printf '{"session":"old","pid":%s,"host":"elsewhere","heartbeat_epoch":1}' "$(dead_pid)" >.claude/locks/old.lock
  lock-acquire --pid "$(live)" .claude/locks/other.lock
  run -0 --separate-stderr engine --session demo --max-iterations 1 -- ./agent.sh
  [[ $stderr != *warning* ]]
}

@test "Ctrl-C on a terminal: the agent gets it, the state says interrupted, one line, exit 130" {
  command -v python3 >/dev/null || skip "python3 is not installed (needed for a pseudo-terminal)"
  python3 -c 'import pty' 2>/dev/null || skip "python3 has no pty module"
  need_pty
  make_agent
  cat >ctrlc.py <<'EOF'
import os, pty, signal, sys, time
pid, fd = pty.fork()
if pid == 0:
    # as a login shell on a terminal has it, whatever the caller ignored
    # (a shell ignores SIGINT in a background job, and bash cannot trap a
    # signal ignored at its start)
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    os.execvp(sys.argv[1], sys.argv[1:])
out = b""
deadline = time.time() + 30
while not os.path.exists("block.1") and time.time() < deadline:
    time.sleep(0.05)
time.sleep(0.3)
os.write(fd, b"\x03")
while True:
    try:
        data = os.read(fd, 4096)
    except OSError:
        break
    if not data:
        break
    out += data
_, status = os.waitpid(pid, 0)
sys.stdout.write(out.decode(errors="replace"))
sys.exit(128 + os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status))
EOF
  TERM=xterm AGENT_PLAN='1=block' run -130 python3 ctrlc.py "$LOOPKIT_SCRIPTS/loop-engine" --session demo --max-iterations 3 -- ./agent.sh
  [[ $output == *"interrupted by SIGINT"* ]]
  [ "$(grep -c 'loop-engine: ' <<<"${output//$'\r'/$'\n'}")" = 1 ]
  read -r agent _ <block.1
  wait_gone "$agent"
  [ ! -e go.1 ]
  run -0 state-get "$ST" status completion_reason
  [ "$output" = $'failed\ninterrupted' ]
  [ ! -e "$LOCK" ]
  run -0 event-show --last 1 --json .claude/pipeline-runs/demo/events.jsonl
  [[ $output == *'"type":"interrupted"'*'"signal":"SIGINT"'* ]]
}

@test "a session held by another engine is exit 1, said unless -q" {
  make_agent
  mkdir -p .claude/locks
  lock-acquire --pid "$(live)" .claude/locks/demo.lock
  run -1 --separate-stderr engine --session demo --max-iterations 1 -- ./agent.sh
  [[ $stderr == *"loop-engine: session 'demo' is held by another engine (see: lock-status "*"/.claude/locks/demo.lock)"* ]]
  run -1 --separate-stderr engine -q --session demo --max-iterations 1 -- ./agent.sh
  [ -z "$stderr" ] && [ -z "$output" ]
  [ ! -e ran.log ]
}

# --- issue 23: engines you can leave running overnight -----------------------


# hold_pgid FILE: the agent's process group from agent-run's hold record
# (written just after it took the hold), into HOLD_PGID; bounded: 30 s
hold_pgid() {
  local i rec=()
  for ((i = 0; i < 300; i++)); do
    { read -r -a rec <"$1"; } 2>/dev/null || rec=()
    if [[ ${rec[0]:-} =~ ^[0-9]+$ ]]; then HOLD_PGID=${rec[0]}; return 0; fi
    sleep 0.1
  done
  echo "timed out waiting for the record in $1" >&2
  return 1
}

@test "kill -9 of the engine ends its agent's whole group" {
  make_overlap_agent
  "$LOOPKIT_SCRIPTS/loop-engine" --session demo --max-iterations 1 -- ./overlap.sh 2>/dev/null &
  wait_for agent.pid
  agent=$(cat agent.pid)
  # the agent's group is in the hold file beside the lock, not in the state
  hold_pgid "$LOCK.agent"
  pgid=$HOLD_PGID
  [ "$(ps -o pgid= -p "$agent" | tr -d ' ')" = "$pgid" ]
  run -1 state-get -e "$ST" agent_pid
  kill -9 "$(state-get "$LOCK" pid)"
  wait_gone "$agent"
  run -1 agent-run --alive "$pgid"
  grep -qx "end $agent term" agents.log
}

@test "a restarted engine waits for the previous agent: no two agents of a session overlap" {
  make_overlap_agent
  TERM_GRACE=2 "$LOOPKIT_SCRIPTS/loop-engine" --session demo --max-iterations 1 -- ./overlap.sh 2>/dev/null &
  wait_for agent.pid
  first=$(cat agent.pid)
  rm agent.pid
  touch second
  kill -9 "$(state-get "$LOCK" pid)"
  run -0 --separate-stderr engine --session demo --max-iterations 1 -- ./overlap.sh
  [[ $stderr == *"waiting for the previous agent of session 'demo'"* ]]
  ! grep -q overlap agents.log || false
  [ "$(head -n 2 agents.log)" = "start $first"$'\n'"end $first term" ]
  run -0 state-get "$ST" status iteration_completed
  [ "$output" = $'complete\n1' ]
  run -1 state-get -e "$ST" agent_pid
}

@test "--kill-stale-agent ends the previous agent instead of waiting" {
  make_overlap_agent
  TERM_GRACE=60 "$LOOPKIT_SCRIPTS/loop-engine" --session demo --max-iterations 1 --kill-after 60 -- ./overlap.sh 2>/dev/null &
  wait_for agent.pid
  first=$(cat agent.pid)
  rm agent.pid
  touch second
  kill -9 "$(state-get "$LOCK" pid)"
  run -0 --separate-stderr engine --session demo --max-iterations 1 --kill-stale-agent --kill-after 0.2 -- ./overlap.sh
  [[ $stderr == *"ending the previous agent"* ]]
  ! grep -q overlap agents.log || false
  # ended: its hold is free (the engine waited for that); the process is
  # gone once its parent has reaped it
  wait_gone "$first"
}

# a process group of its own that is not an agent (pgid = pid), killed at teardown
group_leader() {
  setsid sleep 300 >/dev/null 2>&1 &
  echo $! >>"$W.pids"
  echo $!
}

@test "an agent recorded on another boot is not this machine's process: neither waited for nor ended" {
  make_agent
  run -0 engine -q --session demo --max-iterations 1 -- ./agent.sh
  pid=$(group_leader)
  start=$(awk '{ print $22 }' "/proc/$pid/stat")
  # what an engine on another machine (a state on etcd) left when it died
  state-set "$ST" "agent_pid:=$pid" "agent_start:=$start" agent_boot=00000000-0000-4000-8000-000000000000
  run -0 --separate-stderr engine --session demo --max-iterations 2 --kill-stale-agent -- ./agent.sh
  [[ $stderr == *"the previous agent of session 'demo' (process group $pid) ran on another machine or before a reboot: not waited for"* ]]
  [[ $stderr != *"ending the previous agent"* ]]
  kill -0 "$pid"
  [ "$(ran)" = "1 2 " ]
  run -1 state-get -e "$ST" agent_boot
}

@test "an agent recorded on this boot is this machine's: --kill-stale-agent ends it" {
  make_agent
  run -0 engine -q --session demo --max-iterations 1 -- ./agent.sh
  pid=$(group_leader)
  start=$(awk '{ print $22 }' "/proc/$pid/stat")
  state-set "$ST" "agent_pid:=$pid" "agent_start:=$start" "agent_boot=$(cat /proc/sys/kernel/random/boot_id)"
  run -0 --separate-stderr engine --session demo --max-iterations 2 --kill-stale-agent --kill-after 0.2 -- ./agent.sh
  [[ $stderr == *"ending the previous agent of session 'demo' (process group $pid)"* ]]
  wait_gone "$pid"
  [ "$(ran)" = "1 2 " ]
}

@test "exit statuses: -E N for a held session, 5 for failed work, 2 for usage" {
  make_agent
  mkdir -p .claude/locks
  lock-acquire --pid "$(live)" .claude/locks/demo.lock
  run -7 engine -E 7 --session demo --max-iterations 1 -- ./agent.sh
  run -9 engine --conflict-exit-code=9 -q --session demo --max-iterations 1 -- ./agent.sh
  run -2 engine -E x --session demo -- true
  lock-release --force .claude/locks/demo.lock
  run -5 --separate-stderr engine --session demo --max-iterations 3 -- false
  [[ $stderr == *"session failed: agent-error; done 0, left 3"* ]]
}

@test "a session paused while no engine ran stays paused until resumed" {
  make_agent
  engine --session demo --max-iterations 1 -- ./agent.sh 2>/dev/null
  state-set "$ST" status=paused max_iterations:=2
  "$LOOPKIT_SCRIPTS/loop-engine" --session demo --poll 0.1 -- ./agent.sh 2>/dev/null &
  e=$!
  for _ in $(seq 300); do grep -q '"paused"' .claude/pipeline-runs/demo/events.jsonl 2>/dev/null && break; sleep 0.1; done
  run -0 state-get "$ST" status
  [ "$output" = paused ]
  [ "$(ran)" = "1 " ]
  run -0 "$LOOPKIT_SCRIPTS/engine-ctl" resume demo
  wait "$e"
  [ "$(ran)" = "1 2 " ]
}

@test "--iteration-timeout ends the agent's group after SIGTERM, SIGKILL after --kill-after; a failed attempt" {
  printf '#!/usr/bin/env bash\necho $$ >agent.pid\ntrap "" TERM\nsleep 60 &\nwait\n' >slow.sh
  chmod +x slow.sh
  run -5 --separate-stderr engine --session demo --iteration-timeout 0.3 --kill-after 0.3 -- ./slow.sh
  ! kill -0 "$(cat agent.pid)" 2>/dev/null || false
  run -0 state-get "$ST" status completion_reason
  [ "$output" = $'failed\ntimeout' ]
  run -0 event-show --type agent-failed --json .claude/pipeline-runs/demo/events.jsonl
  [[ $output == *'"status":124'*'"timed_out":1'* ]]
}

@test "--max-cost: no iteration starts once the summed cost reaches it" {
  make_agent
  AGENT_PLAN=$'1={"cost":0.4}\n2={"cost":0.4}\n3={"cost":0.4}\n4={"cost":0.4}' \
    run -0 --separate-stderr engine --session demo --max-iterations 9 --max-cost 1 -- ./agent.sh
  [ "$(ran)" = "1 2 3 " ]
  run -0 state-get "$ST" status completion_reason iteration_completed
  [ "$output" = $'complete\nmax_cost\n3' ]
}

@test "history entries hold started_at, ended_at, duration_s, exit_status, cost and tokens" {
  make_agent
  AGENT_PLAN='1={"cost":0.25,"tokens":900}' run -0 engine --session demo --max-iterations 1 -- ./agent.sh
  run -0 state-get -k "$ST" '.history[0]'
  [[ $(tr '\n' ' ' <<<"$output") == *"started_at ended_at duration_s exit_status"* ]]
  run -0 state-get "$ST" '.history[0].started_at' '.history[0].ended_at' '.history[0].exit_status' '.history[0].cost' '.history[0].tokens'
  [ "$output" = $'2025-01-10T10:05:30Z\n2025-01-10T10:05:30Z\n0\n0.25\n900' ]
  # written with three decimals: read as the file holds it (state-get prints
  # a number as jq does, 0.040 as 0.04, which made this case fail whenever
  # the duration ended in 0)
  run -0 grep -Eo '"duration_s": *[0-9.]+' "$ST"
  [[ ${output##*: } =~ ^[0-9]+\.[0-9]{3}$ ]]
}

# --- issue 36: an iteration costs what its tools cost ------------------------

# traced_runs STARTS [FORKS]: loop-engine at 5 and at 25 iterations of the
# agent true under strace (strace_calls), each checked complete; the 20
# iterations between cost at most STARTS program starts (the agent's left
# out) and FORKS forks each
traced_runs() {
  local n c=() f=()
  for n in 5 25; do
    LK_HEARTBEAT=3600 strace_calls "trace.$n" -e trace=execve,clone,clone3,fork,vfork \
      "$LOOPKIT_SCRIPTS/loop-engine" --session "s$n" --max-iterations "$n" -- true 2>/dev/null
    run -0 state-get ".claude/pipeline-runs/s$n/state.json" status iteration_completed iteration_started
    [ "$output" = $'complete\n'"$n"$'\nnull' ]
    c+=("$(grep 'execve(' "trace.$n" | grep -vcE 'execve\("[^"]*/true"')")
    f+=("$(grep -cE '(clone|fork)' "trace.$n")")
  done
  echo "program starts: ${c[0]} for 5 iterations, ${c[1]} for 25; forks ${f[0]}, ${f[1]}"
  (((c[1] - c[0]) <= $1 * 20))
  [[ -z ${2:-} ]] || (((f[1] - f[0]) <= $2 * 20))
}

@test "the work per iteration is at most 8 program starts, at 5 iterations as at 25 (strace)" {
  need_strace_counts
  traced_runs 8
}

# --- issue 37: final words that count right --------------------------------

@test "the final words count right: a plateau leaves nothing, a stop counts the state's maximum" {
  make_agent
  AGENT_PLAN='2={"plateau":true}' run -0 --separate-stderr engine --session demo --plateau-after 1 --max-iterations 10 -- ./agent.sh
  [[ $stderr == *"complete: plateau after 2 iterations: done 2, left 0"* ]]
  # the maximum changed in the state, then a stop: counted on the new one
  cat >stop.sh <<'EOF'
#!/usr/bin/env bash
state-set "$LOOPKIT_STATE" max_iterations:=5 status=stopped
EOF
  chmod +x stop.sh
  run -0 --separate-stderr engine --session other --max-iterations 10 -- ./stop.sh
  [[ $stderr == *"stopped by request after 1 iterations: done 1, left 4"* ]]
}

@test "kill -9 of the engine leaves none of its processes behind, its beat timer neither" {
  make_agent
  # a beat due only in 10 minutes: a timer that waited for it would outlive the test
  AGENT_PLAN='1=block' LK_HEARTBEAT=600 "$LOOPKIT_SCRIPTS/loop-engine" --session beat-timer --max-iterations 1 -- ./agent.sh 2>/dev/null &
  wait_for block.1
  engine_pid=$(state-get .claude/locks/beat-timer.lock pid)
  # the engine's own forks (the timer among them) carry its command line
  [ -n "$(pgrep -f 'loop-engine --session beat-timer')" ]
  kill -9 "$engine_pid"
  for _ in $(seq 300); do [ -z "$(pgrep -f 'loop-engine --session beat-timer')" ] && break; sleep 0.1; done
  pgrep -af 'loop-engine --session beat-timer' || true
  [ -z "$(pgrep -f 'loop-engine --session beat-timer')" ]
  read -r agent _ <block.1
  wait_gone "$agent"
}

@test "an iteration's control read and its start are one guarded write: 6 programs and at most 10 forks an iteration (strace)" {
  need_strace
  traced_runs 6 10
  # a pause written meanwhile still holds the next iteration back: the guard
  # refuses the start, and the control read waits
  state-set .claude/pipeline-runs/s5/state.json status=paused
  engine --session s5 --max-iterations 7 -- true 2>err &
  local pid=$!
  wait_grep "paused" err
  run -0 state-get .claude/pipeline-runs/s5/state.json iteration_completed
  [ "$output" = 5 ]
  state-set .claude/pipeline-runs/s5/state.json status=running
  wait "$pid"
  run -0 state-get .claude/pipeline-runs/s5/state.json status iteration_completed
  [ "$output" = $'complete\n7' ]
}

@test "each agent run's output goes to its own log, named in the history entry; a failure keeps its reason and log" {
  cat >talk.sh <<'EOF'
#!/usr/bin/env bash
echo "out of $LOOPKIT_ITERATION"
echo "err of $LOOPKIT_ITERATION" >&2
[[ $LOOPKIT_ITERATION != 2 || -e pass ]] || exit 7
EOF
  chmod +x talk.sh
  run -5 --separate-stderr engine --session demo --max-iterations 2 --retries 1 --retry-delay 0 -- ./talk.sh
  [[ $output == *"out of 1"* && $stderr == *"err of 1"* ]] # the terminal still sees both
  logs=$W/.claude/pipeline-runs/demo/logs
  run -0 state-get "$ST" '.history[0].output' last_error last_output completion_reason
  [ "$output" = "$logs/iteration-1-attempt-1.log"$'\n'"exit 7"$'\n'"$logs/iteration-2-attempt-2.log"$'\nagent-error' ]
  [ "$(sort "$logs/iteration-1-attempt-1.log")" = $'err of 1\nout of 1' ]
  [ "$(sort "$logs/iteration-2-attempt-2.log")" = $'err of 2\nout of 2' ]
  run -0 event-show --json --type agent-failed .claude/pipeline-runs/demo/events.jsonl
  [[ $output == *'"reason":"exit 7","output":"'"$logs"'/iteration-2-attempt-1.log"'* ]]
  # a rerun's run of iteration 2 gets a log of its own
  touch pass
  run -0 engine --session demo --max-iterations 2 -- ./talk.sh
  run -0 state-get "$ST" '.history[1].output'
  [ "$output" = "$logs/iteration-2-attempt-3.log" ]
}

@test "a failure's reason says a timeout or a signal; LOOPKIT_OUTPUT_LIMIT bounds the logs" {
  printf '#!/bin/sh\nseq 1 500\nkill -9 $$\n' >killed.sh
  chmod +x killed.sh
  LOOPKIT_OUTPUT_LIMIT=100 run -5 engine --session k --max-iterations 1 -- ./killed.sh
  run -0 state-get .claude/pipeline-runs/k/state.json last_error
  [ "$output" = "killed by SIGKILL" ]
  grep -q "bytes left out" .claude/pipeline-runs/k/logs/iteration-1-attempt-1.log
  [ "$(tail -n 1 .claude/pipeline-runs/k/logs/iteration-1-attempt-1.log)" = 500 ]
  run -5 engine --session t --max-iterations 1 --iteration-timeout 0.2 --kill-after 1 -- sleep 30
  run -0 state-get .claude/pipeline-runs/t/state.json last_error completion_reason
  [ "$output" = $'timed out after 0.2 s\ntimeout' ]
}

@test "--max-tokens and --deadline: nothing new starts past them, the running iteration finishes; each its reason" {
  make_agent
  AGENT_PLAN=$'1={"tokens":700}\n2={"tokens":300}\n3={"tokens":1}' run -0 --separate-stderr engine --session demo --max-iterations 5 --max-tokens 1000 -- ./agent.sh
  [ "$(ran)" = "1 2 " ]
  [[ $stderr == *"complete: total_tokens reached --max-tokens 1000 after 2 iterations: done 2, left 3"* ]]
  run -0 state-get "$ST" completion_reason
  [ "$output" = max_tokens ]
  # a wall-clock time already past (LOOPKIT_NOW is 2025-01-10T10:05:30Z): nothing starts
  run -0 --separate-stderr engine --session past --deadline 2025-01-10T10:05 -- ./agent.sh
  [[ $stderr == *"complete: the --deadline 2025-01-10T10:05 has passed after 0 iterations"* ]]
  [ "$(state-get .claude/pipeline-runs/past/state.json completion_reason)" = deadline ]
  # a time of day is its next coming: 10:00 is tomorrow's
  run -0 engine --session tomorrow --max-iterations 1 --deadline 10:00 -- ./agent.sh
  [ "$(state-get .claude/pipeline-runs/tomorrow/state.json completion_reason)" = max_iterations ]
  # a duration from the start; the clock moves past it during iteration 2
  echo 1736503530 >clock
  printf '#!/bin/sh\necho "$LOOPKIT_ITERATION" >>ran.log\n[ "$LOOPKIT_ITERATION" != 2 ] || echo 1736509000 >clock\n' >moving.sh
  chmod +x moving.sh
  : >ran.log
  LOOPKIT_NOW=@$W/clock run -0 engine --session moving --max-iterations 5 --deadline 1h30m -- ./moving.sh
  [ "$(ran)" = "1 2 " ]
  [ "$(state-get .claude/pipeline-runs/moving/state.json completion_reason)" = deadline ]
  run -2 engine --session bad --deadline soon -- ./agent.sh
  [[ $output == *"--deadline: 'soon' is not a time (2026-11-30T07:00, 07:00) or a duration (8h, 90m)"* ]]
  run -2 engine --session bad --max-tokens 1.5 -- ./agent.sh
}

@test "--on-event: each event's JSON reaches the command on stdin, in the background; its failure or hang never stops the engine" {
  make_agent
  run -0 engine --session demo --max-iterations 2 --on-event 'cat >>"$PWD/hook.$LOOPKIT_EVENT"' -- ./agent.sh
  E=.claude/pipeline-runs/demo/events.jsonl
  wait_for hook.complete
  for type in start iteration-start iteration-done complete; do
    wait_for "hook.$type"
    for ((i = 0; i < 300; i++)); do
      [ "$(wc -l <"hook.$type")" = "$(grep -c "\"type\":\"$type\"" "$E")" ] && break
      sleep 0.1
    done
    [ "$(sort "hook.$type")" = "$(grep "\"type\":\"$type\"" "$E" | sort)" ]
  done
  # a failing hook: said in hooks.log, the engine goes on
  run -0 engine --session failing --max-iterations 1 --on-event 'echo oops >&2; exit 3' -- ./agent.sh
  wait_grep "exit 3 for the event complete" .claude/pipeline-runs/failing/hooks.log
  grep -q oops .claude/pipeline-runs/failing/hooks.log
  # hooks that hang: at most 4 at once, the rest not passed on; the engine ends
  run -0 --separate-stderr timeout 120 "$LOOPKIT_SCRIPTS/loop-engine" --session hung --max-iterations 3 \
    --on-event "echo \$\$ >>'$W.pids'; exec sleep 300" -- ./agent.sh
  [[ $stderr == *"warning: --on-event: 4 hooks still running; events are not passed on until one ends"* ]]
  grep -q "the event complete was not passed on" .claude/pipeline-runs/hung/hooks.log
  for ((i = 0; i < 300; i++)); do [ "$(wc -l <"$W.pids")" -ge 4 ] && break; sleep 0.1; done
  [ "$(wc -l <"$W.pids")" = 4 ]
}

@test "an iteration starts agent-run, one state write and one event call, and at most 6 forks: the beat timer outlives short runs (strace)" {
  need_strace_counts
  traced_runs 3 6
  # every iteration's two events, in order, all written by the end
  run -0 state-get - '[.type, .iteration]' <.claude/pipeline-runs/s5/events.jsonl
  [ "$(tr -d '\n' <<<"$output")" = '["start",0]["iteration-start",1]["iteration-done",1]["iteration-start",2]["iteration-done",2]["iteration-start",3]["iteration-done",3]["iteration-start",4]["iteration-done",4]["iteration-start",5]["iteration-done",5]["complete",5]' ]
}

@test "the record that starts the next iteration holds back for a stop or a new maximum written meanwhile" {
  cat >steer.sh <<'EOF'
#!/usr/bin/env bash
echo "$LOOPKIT_ITERATION $(state-get "$LOOPKIT_STATE" iteration iteration_started | tr '\n' ' ')" >>seen.log
case $LOOPKIT_ITERATION in
  2) state-set "$LOOPKIT_STATE" max_iterations:=4 ;;
  3) state-set "$LOOPKIT_STATE" status=stopped ;;
esac
EOF
  chmod +x steer.sh
  run -0 --separate-stderr engine --session demo --max-iterations 5 -- ./steer.sh
  [[ $stderr == *"iteration 3 of 4 "* && $stderr == *"stopped by request after 3 iterations: done 3, left 1"* ]]
  # each agent saw its own iteration started
  [ "$(cut -d' ' -f1,2 seen.log | tr '\n' ' ')" = "1 1 2 2 3 3 " ]
  ! grep -q ' null ' seen.log || false
  run -0 state-get "$ST" status iteration_completed iteration_started max_iterations
  [ "$output" = $'stopped\n3\nnull\n4' ]
}
