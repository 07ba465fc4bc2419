#!/usr/bin/env bats
# An iteration never runs twice at once, on every way out (contract section
# 8, "Supervision"): kill -9 of the engine, of agent-run, of the engine's
# whole process group, job control, each followed by a restart at once.
load helpers

ST=.claude/pipeline-runs/demo/state.json
LOCK=.claude/locks/demo.lock
engine() { "$LOOPKIT_SCRIPTS/loop-engine" "$@"; }

# the engine's pid, from its lock
engine_pid() { state-get "$LOCK" pid; }
# no two agents overlapped (make_overlap_agent's log)
no_overlap() { ! grep -q overlap agents.log || { cat agents.log >&2; false; }; }
# in_group CMD...: CMD in a process group of its own in this session, as
# an interactive shell starts a job (not orphaned, so that stop signals
# act; SIGINT and SIGQUIT not ignored, as a script's background job has
# them); its pid, the group's id, in job.pid
in_group() {
  perl -e '$SIG{INT} = $SIG{QUIT} = "DEFAULT"; setpgrp(0, 0); open(F, ">job.pid.tmp") or die; print F "$$\n"; close F;
    rename("job.pid.tmp", "job.pid"); exec @ARGV or die' "$@" 2>/dev/null &
}

@test "kill -9 of the engine before it recorded its agent, then a restart at once: the restart waits for it" {
  make_overlap_agent
  # a write that records the agent's pid, had the engine one, made slow (a
  # slow fsync): the engine dies before it; only the kernel (the hold)
  # knows the agent still runs
  mkdir shim
  for t in "$LOOPKIT_BIN"/*; do ln -s "$t" shim/; done
  rm shim/state-set
  printf '#!/bin/sh\ncase "$*" in *agent_pid*) sleep 5 ;; esac\nexec "%s/state-set" "$@"\n' "$LOOPKIT_BIN" >shim/state-set
  chmod +x shim/state-set
  LOOPKIT_BIN=$PWD/shim TERM_GRACE=2 engine --session demo --max-iterations 1 -- ./overlap.sh 2>/dev/null &
  wait_for agent.pid
  first=$(cat agent.pid)
  rm agent.pid
  touch second
  kill -9 "$(engine_pid)"
  run -0 --separate-stderr engine --session demo --max-iterations 1 -- ./overlap.sh
  [[ $stderr == *"waiting for the previous agent of session 'demo'"* ]]
  no_overlap
  grep -qx "end $first term" agents.log
  run -0 state-get "$ST" status iteration_completed
  [ "$output" = $'complete\n1' ]
}

@test "kill -9 of agent-run: its agent ends too, and the engine's retry never runs beside it" {
  make_overlap_agent
  TERM_GRACE=2 engine --session demo --max-iterations 1 --retries 1 --retry-delay 0 --kill-after 5 -- ./overlap.sh 2>err &
  eng=$!
  wait_for agent.pid
  first=$(cat agent.pid)
  rm agent.pid
  touch second
  kill -9 "$(ps -o ppid= -p "$first" | tr -d ' ')" # agent-run, the agent's parent
  wait "$eng"
  no_overlap
  grep -qx "end $first term" agents.log
  run -0 state-get "$ST" status iteration_completed
  [ "$output" = $'complete\n1' ]
}

@test "kill -9 of the engine's whole process group (kill -9 %1): the agent dies too; a restart completes" {
  make_overlap_agent
  in_group "$LOOPKIT_SCRIPTS/loop-engine" --session demo --max-iterations 1 --kill-after 1 -- ./overlap.sh
  wait_for job.pid
  wait_for agent.pid
  first=$(cat agent.pid)
  rm agent.pid
  touch second
  kill -9 -- "-$(cat job.pid)"
  wait_gone "$first"
  run -0 engine -q --session demo --max-iterations 1 -- ./overlap.sh
  no_overlap
  run -0 state-get "$ST" status iteration_completed
  [ "$output" = $'complete\n1' ]
}

@test "Ctrl-Z stops the agent with its engine, fg continues both; Ctrl-\\ ends the run with 131" {
  cat >agent.sh <<'EOF2'
#!/usr/bin/env bash
echo $$ >agent.pid.tmp && mv agent.pid.tmp agent.pid
while [[ ! -e go.$LOOPKIT_ITERATION ]]; do sleep 0.1; done
EOF2
  chmod +x agent.sh
  in_group "$LOOPKIT_SCRIPTS/loop-engine" --session demo --max-iterations 2 -- ./agent.sh
  wait_for job.pid
  wait_for agent.pid
  job=$(cat job.pid) agent=$(cat agent.pid)
  kill -TSTP -- "-$job" # what the terminal does on Ctrl-Z
  wait_state "$agent" T
  wait_state "$job" T
  kill -CONT -- "-$job" # fg
  wait_not_state "$agent" T
  rm agent.pid
  touch go.1
  wait_for agent.pid # the second iteration
  agent=$(cat agent.pid)
  kill -QUIT -- "-$job" # Ctrl-\
  wait "$job" 2>/dev/null || true # ours (the frozen one): reaped; else the subreaper reaps it
  wait_gone "$job"
  wait_gone "$agent"
  run -0 state-get "$ST" status completion_reason
  assert_equal "$output" $'failed\ninterrupted'
}

# stuck_restart: the job's engine killed with -9 while its run cannot act
# (stopped or frozen: test's set-up), then a restart at once; the restart
# ends the stuck run and completes the iteration, never beside it. The
# restart is bounded: one that waits behind the run fails at 60 s.
# stuck_restart stopped|frozen
stuck_restart() {
  kill -9 "$job"
  wait "$job" 2>/dev/null || true # ours (the frozen one): reaped; else the subreaper reaps it
  wait_gone "$job"
  run -0 --separate-stderr timeout 60 "$LOOPKIT_SCRIPTS/loop-engine" --session demo --max-iterations 1 --kill-after 1 -- ./overlap.sh
  [[ $stderr == *"ending the agent of session 'demo' (process group "*") whose engine is gone and whose agent-run is stopped or frozen: it would never end by itself"* ]]
  wait_ended "$first"
  no_overlap
  # a stopped agent gets its SIGTERM (with a SIGCONT); a frozen one only the SIGKILL
  [[ $1 == frozen ]] || grep -qx "end $first term" agents.log
  run -0 state-get "$ST" status iteration_completed
  [ "$output" = $'complete\n1' ]
  run -0 event-show --type stale-agent .claude/pipeline-runs/demo/events.jsonl
  [[ $output == *stuck* ]]
}

@test "kill -9 of an engine whose agent and agent-run are stopped (SIGSTOP): a restart ends that run instead of waiting forever" {
  make_overlap_agent
  stopped_run .claude/locks/demo.lock.agent "$LOOPKIT_SCRIPTS/loop-engine" --session demo --max-iterations 1 \
    --kill-after 1 -- ./overlap.sh
  stuck_restart stopped
}

@test "kill -9 of an engine whose whole run is in a frozen cgroup: a restart ends that run instead of waiting forever" {
  local mnt
  mnt=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
  [[ -n $mnt ]] || skip "no cgroup v2 hierarchy is mounted"
  CG=$mnt/loopkit-test-$$-$BATS_TEST_NUMBER
  mkdir "$CG" 2>/dev/null && [[ -e $CG/cgroup.freeze ]] || skip "cannot make a cgroup with a freezer in $mnt (not root, or delegated elsewhere)"
  make_overlap_agent
  # the engine starts in the cgroup: agent-run, its sentinel and the agent with it
  in_group sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' _ "$CG" "$LOOPKIT_SCRIPTS/loop-engine" --session demo \
    --max-iterations 1 --kill-after 1 -- ./overlap.sh
  job=$!
  wait_for agent.pid
  first=$(cat agent.pid)
  rm agent.pid
  touch second
  wait_held .claude/locks/demo.lock.agent
  echo 1 >"$CG/cgroup.freeze"
  wait_grep 'frozen 1' "$CG/cgroup.events"
  stuck_restart frozen
}

# teardown: a test's cgroup (CG) thawed, emptied and removed, then
# helpers.bash's teardown (kept as loopkit_teardown)
eval "loopkit_$(declare -f teardown)"
teardown() {
  if [[ -n ${CG:-} && -d $CG ]]; then
    echo 0 >"$CG/cgroup.freeze" 2>/dev/null || true
    # (a cgroup's files have no size: their text is read)
    for _ in $(seq 300); do
      grep -qx 'populated 0' "$CG/cgroup.events" 2>/dev/null && break
      xargs -r kill -9 <"$CG/cgroup.procs" 2>/dev/null
      sleep 0.1
    done
    rmdir "$CG" 2>/dev/null || true
  fi
  loopkit_teardown
}
