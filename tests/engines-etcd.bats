#!/usr/bin/env bats
# The engines on etcd (contract sections 8 and 9): --state URL and --locks
# URL, so that engines on several hosts (here: several shells) share sessions
# and one drain queue. A real etcd on loopback, started for this file alone.

load helpers
setup_file() { etcd_start; }
teardown_file() { etcd_stop; }
setup() {
  etcd_setup
  K="/lk-test/$BATS_TEST_NUMBER"
}

: "${LOOPKIT_SCRIPTS:=$LOOPKIT_SOURCE/scripts}"

# the engines themselves, not a function around them: background runs are
# killed and waited for by their own pids
LOOP=$LOOPKIT_SCRIPTS/loop-engine
DRAIN=$LOOPKIT_SCRIPTS/drain-engine

# the loop agent: logs its iteration; ITER=block in AGENT_PLAN writes
# block.ITER and waits for go.ITER
make_loop_agent() {
  cat >agent.sh <<'EOF'
#!/usr/bin/env bash
echo "$LOOPKIT_ITERATION $LOOPKIT_STATE" >>ran.log
if [[ ${AGENT_PLAN:-} == "$LOOPKIT_ITERATION=block" ]]; then
  touch "block.$LOOPKIT_ITERATION"
  for ((i = 0; i < 600; i++)); do [[ -e go.$LOOPKIT_ITERATION ]] && break; sleep 0.1; done
fi
exit 0
EOF
  chmod +x agent.sh
}

# the drain agent: logs "ITEM WORKER" and stays a moment, so that workers
# overlap; FAIL=ITEM fails that item; block.ITEM / go.ITEM as above
make_drain_agent() {
  cat >work.sh <<'EOF'
#!/usr/bin/env bash
echo "$LOOPKIT_ITEM ${WORKER:-}" >>worked.log
if [[ ${BLOCK:-} == "$LOOPKIT_ITEM" ]]; then
  touch "block.$LOOPKIT_ITEM"
  for ((i = 0; i < 600; i++)); do [[ -e go.$LOOPKIT_ITEM ]] && break; sleep 0.1; done
fi
sleep 0.05
[[ ${FAIL:-} != "$LOOPKIT_ITEM" ]] || exit 1
exit 0
EOF
  chmod +x work.sh
}

@test "loop-engine --state URL --locks URL: the session runs on etcd keys, the lock is gone after" {
  make_loop_agent
  run -0 "$LOOP" --session demo --state "$U/demo/state" --locks "$D"locks --max-iterations 3 -- ./agent.sh
  run -0 cat ran.log
  assert_output $'1 '"$U/demo/state"$'\n2 '"$U/demo/state"$'\n3 '"$U/demo/state"
  run -0 state-get "$U/demo/state" type status completion_reason iteration_completed
  assert_output $'loop\ncomplete\nmax_iterations\n3'
  # progress and events stay in the local session folder
  [ -s .claude/pipeline-runs/demo/progress-demo.md ]
  [ -s .claude/pipeline-runs/demo/events.jsonl ]
  [ ! -e .claude/pipeline-runs/demo/state.json ]
  run -0 etcdkeys "$K/locks/"
  assert_output ""
}

@test "loop-engine: a session held in etcd by another host's engine is refused, exit 1" {
  make_loop_agent
  AGENT_PLAN=1=block "$LOOP" --session demo --state "$U/state" --locks "$U/locks/" --max-iterations 1 -- ./agent.sh 2>/dev/null &
  e=$!
  wait_for block.1
  run -1 --separate-stderr "$LOOP" --session demo --state "$U/state" --locks "$U/locks" --max-iterations 1 -- ./agent.sh
  [[ $stderr == *"session 'demo' is held by another engine (see: lock-status $U/locks/demo.lock)"* ]]
  run -0 lock-status "$U/locks/demo.lock"
  touch go.1
  wait "$e"
  run -0 state-get "$U/state" status
  assert_output complete
  run -1 lock-status -q "$U/locks/demo.lock"
}

@test "loop-engine: an etcd lock forced away: the iteration is not recorded, exit 4" {
  make_loop_agent
  AGENT_PLAN=1=block "$LOOP" --session demo --state "$U/state" --locks "$D" --max-iterations 3 -- ./agent.sh 2>err.log &
  e=$!
  wait_for block.1
  run -0 lock-release --force "$U/demo.lock"
  touch go.1
  rc=0 && wait "$e" || rc=$?
  assert_equal "$rc" 4
  grep -q 'lost the lock' err.log
  run -0 cat ran.log
  assert_output "1 $U/state"
  # the fenced write of the iteration's end was refused: nothing recorded
  run -0 state-get "$U/state" iteration_completed status
  assert_output $'0\nrunning'
  run -0 event-show --type lock-lost .claude/pipeline-runs/demo/events.jsonl
  assert_equal "${#lines[@]}" 1
}

@test "pipeline-engine --state URL --locks URL runs its stages on an etcd key" {
  cat >pipe.json <<'EOF'
{"name": "p", "stages": [{"name": "one", "loop": "one", "runs": 2, "command": "echo one"},
                         {"name": "two", "loop": "two", "runs": 1, "command": "echo two"}]}
EOF
  run -0 "$LOOPKIT_SCRIPTS/pipeline-engine" --session pl --state "$U/pl" --locks "$D" pipe.json
  run -0 state-get "$U/pl" type status stages[0].iterations_run stages[1].status
  assert_output $'pipeline\ncomplete\n2\ncompleted'
  run -0 etcdkeys "$K/"
  assert_output "$K/pl"
}

@test "drain-engine: two workers with --state URL --locks URL never take the same item" {
  make_drain_agent
  seq -f 'item-%g' 12 >ready.txt
  WORKER=a "$DRAIN" --next 'cat ready.txt' --state "$U/atari" --locks "$U/claims/" --poll 0.1 -- ./work.sh 2>a.log &
  a=$!
  WORKER=b "$DRAIN" --next 'cat ready.txt' --state "$U/atari" --locks "$U/claims/" --poll 0.1 -- ./work.sh 2>b.log &
  b=$!
  wait "$a"
  wait "$b"
  # each item ran exactly once, by one worker or the other
  run -0 bash -c "cut -d' ' -f1 worked.log | sort | uniq -d"
  assert_output ""
  run -0 bash -c "cut -d' ' -f1 worked.log | sort -V | tr '\n' ' '"
  assert_output "$(seq -f 'item-%g' 12 | tr '\n' ' ')"
  run -0 state-get "$U/atari" status completion_reason iteration
  assert_output $'stopped\ndrained\n12'
  for i in $(seq 12); do
    run -0 state-get "$U/atari" "history.item-$i.status" "history.item-$i.attempts"
    assert_output $'completed\n1'
  done
  run -0 etcdkeys "$K/claims/"
  assert_output ""
  # the events are local: .atari/events.jsonl in the current folder
  run -0 event-show --type item-done .atari/events.jsonl
  assert_equal "${#lines[@]}" 12
}

@test "drain-engine --locks DIR: workers on one host share a file state likewise" {
  make_drain_agent
  seq -f 'x%g' 8 >ready.txt
  for w in a b c; do
    WORKER=$w "$DRAIN" --next 'cat ready.txt' --locks claims --poll 0.1 -- ./work.sh 2>"$w.log" &
  done
  wait
  run -0 bash -c "cut -d' ' -f1 worked.log | sort -V | tr '\n' ' '"
  assert_output "$(seq -f 'x%g' 8 | tr '\n' ' ')"
  run -0 state-get .atari/state.json status completion_reason iteration
  assert_output $'stopped\ndrained\n8'
  [ ! -e .atari/state.json.lock ]
  run -0 ls -A claims
  assert_output ""
}

@test "drain-engine shared: a worker waits for an item another holds, and takes it over when that one is killed" {
  make_drain_agent
  printf 'only\n' >ready.txt
  BLOCK=only WORKER=a "$DRAIN" --next 'cat ready.txt' --state "$U/atari" --locks "$D" --poll 0.1 -- ./work.sh 2>a.log &
  a=$!
  wait_for block.only
  WORKER=b "$DRAIN" --next 'cat ready.txt' --state "$U/atari" --locks "$D" --poll 0.1 -- ./work.sh 2>b.log &
  b=$!
  # b finds the only item claimed: it waits instead of declaring the drain done
  wait_grep 'waiting for 1 item' b.log
  run -0 state-get "$U/atari" status history.only.status
  assert_output $'running\nworking'
  kill -9 "$a"
  wait "$b"
  touch go.only # a's orphaned agent may end now
  run -0 state-get "$U/atari" history.only.status history.only.attempts status completion_reason
  assert_output $'completed\n2\nstopped\ndrained'
  run -0 cat worked.log
  assert_output $'only a\nonly b'
}

@test "drain-engine shared: SIGTERM marks the worker's own item failed and leaves the drain running" {
  make_drain_agent
  printf 'i1\n' >ready.txt
  BLOCK=i1 "$DRAIN" --next 'cat ready.txt' --state "$U/atari" --locks "$D" -- ./work.sh 2>a.log &
  a=$!
  wait_for block.i1
  kill -TERM "$a"
  rc=0 && wait "$a" || rc=$?
  assert_equal "$rc" 143
  run -0 state-get "$U/atari" status history.i1.status history.i1.last_error
  assert_output $'running\nfailed\ninterrupted'
  run -0 etcdkeys "$K/"
  assert_output "$K/atari"
}

@test "drain-engine --state URL: an invalid value is kept under KEY.backup and the drain starts afresh" {
  make_drain_agent
  printf 'i1\n' >ready.txt
  etcdput "$K/atari" '{"version":7,"history":{"i1":{"status":"completed"}}}'
  run -0 "$DRAIN" --next 'cat ready.txt' --state "$U/atari" -- ./work.sh
  run -0 etcdget "$K/atari.backup"
  assert_output '{"version":7,"history":{"i1":{"status":"completed"}}}'
  run -0 state-get "$U/atari" version history.i1.status
  assert_output $'1\ncompleted'
  run -0 cat worked.log
  assert_output "i1 "
  # without --locks one drain holds the state: its lock is the key KEY.lock, gone after
  run -0 etcdkeys "$K/"
  assert_output $'/lk-test/'"$BATS_TEST_NUMBER"$'/atari\n/lk-test/'"$BATS_TEST_NUMBER"'/atari.backup'
}
