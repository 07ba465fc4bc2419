#!/usr/bin/env bats
# Issue 26: a worker that lost its lock cannot write. The engines' state
# writes are fenced (state-set --fence LOCK --pid $$), the engine beats its
# lock itself, and a lost lock ends the agent and records nothing. Against a
# real etcd on loopback (started for this file alone) and lock folders of
# files. Every wait is on a condition (a file, a key, a state), bounded.

load helpers
setup_file() { etcd_start; }
teardown_file() { etcd_stop; }
setup() {
  etcd_setup
  K="/lk-test/$BATS_TEST_NUMBER"
  unset LOOPKIT_NOW # leases and heartbeats age in real time here
}

: "${LOOPKIT_SCRIPTS:=$LOOPKIT_SOURCE/scripts}"
LOOP=$LOOPKIT_SCRIPTS/loop-engine
DRAIN=$LOOPKIT_SCRIPTS/drain-engine

# the drain agent: "start ITEM WORKER PID" and "end ITEM WORKER PID" in
# worked.log; BLOCK=ITEM writes block.ITEM (its pid) and waits for go.ITEM
make_drain_agent() {
  cat >work.sh <<'EOF'
#!/usr/bin/env bash
echo "start $LOOPKIT_ITEM ${WORKER:-} $$" >>worked.log
if [[ ${BLOCK:-} == "$LOOPKIT_ITEM" ]]; then
  echo "$$" >"block.$LOOPKIT_ITEM.tmp" && mv "block.$LOOPKIT_ITEM.tmp" "block.$LOOPKIT_ITEM"
  for ((i = 0; i < 600; i++)); do [[ -e go.$LOOPKIT_ITEM ]] && break; sleep 0.1; done
fi
echo "end $LOOPKIT_ITEM ${WORKER:-} $$" >>worked.log
exit 0
EOF
  chmod +x work.sh
}

# pgid PID: the process group of PID
pgid() { ps -o pgid= -p "$1" | tr -d ' '; }

# stop_worker ENGINE AGENT / cont_worker ENGINE AGENT: SIGSTOP or SIGCONT a
# whole worker: the engine's process group and its agent's (agent-run puts
# the agent in a group of its own). The stopped groups are kept for
# teardown, which ends them whatever the test's fate: a stopped worker
# keeps bats's output pipe open, and bats would wait for it for ever.
stop_worker() {
  local g
  for g in "$(pgid "$1")" "$(pgid "$2")"; do
    echo "$g" >>"$W.stopped"
    kill -STOP -- "-$g"
  done
}
cont_worker() { kill -CONT -- "-$1" "-$2"; }

# the etcd key's mod revision: any write to it changes it
modrev() {
  ETCDCTL_API=3 etcdctl --endpoints "$ENDPOINTS" get -w json "$1" | jq '.kvs[0].mod_revision'
}

# the number of runs recorded in a drain's state
runs() { state-get -j -d '[]' "$1" runs | jq length; }

# an etcd paused by a test (kill -STOP) goes on, whatever the test's fate
teardown() {
  [[ -z ${ETCD_DIR:-} || ! -f $ETCD_DIR/pid.1 ]] || kill -CONT "$(cat "$ETCD_DIR/pid.1")" 2>/dev/null || true
  if [[ -f $W.stopped ]]; then
    while read -r g; do kill -CONT -- "-$g" 2>/dev/null && kill -KILL -- "-$g" 2>/dev/null; done <"$W.stopped"
    rm -f "$W.stopped"
  fi
  jobs -p | xargs -r kill 2>/dev/null || true
  if [[ -f $W.pids ]]; then xargs -r kill <"$W.pids" 2>/dev/null || true; rm -f "$W.pids"; fi
  cd / && rm -rf "$BASE"
}

# until lock-status says the lock is free (bounded: 30 s)
wait_free() {
  for _ in $(seq 300); do lock-status -q "$1" || return 0; sleep 0.1; done
  echo "the lock $1 is still held" >&2
  return 1
}

@test "etcd: a whole worker stopped past a 3 s TTL writes nothing when it resumes; the item is completed once" {
  make_drain_agent
  printf 'i1\n' >ready.txt
  # A in a process group of its own, so that the whole worker can be stopped
  BLOCK=i1 WORKER=a setsid "$DRAIN" --next 'cat ready.txt' --state "$U/atari" --locks "$U/claims/" --ttl 3 \
    --poll 0.1 -- ./work.sh 2>a.log &
  a=$!
  wait_for block.i1
  agent=$(cat block.i1)
  apg=$(pgid "$a") agpg=$(pgid "$agent")
  stop_worker "$a" "$agent"
  # nothing renews A's lease now: it runs out after the TTL, the key with it
  wait_free "$U/claims/i1.lock"
  # B takes the item over and completes it (A's stopped agent is still
  # alive on this host: B ends it, as --kill-stale-agent says); B's own TTL
  # is longer, so that a loaded machine (the sanitizer build) cannot make
  # B lose its lease too and run the item a third time
  WORKER=b "$DRAIN" --next 'cat ready.txt' --state "$U/atari" --locks "$U/claims/" --ttl 10 --poll 0.1 \
    --kill-stale-agent --kill-after 1 -- ./work.sh 2>b.log
  run -0 state-get "$U/atari" history.i1.status history.i1.attempts status
  assert_output $'completed\n2\nstopped'
  rev=$(modrev "$K/atari")
  # A resumes: its agent may finish at once, its engine finds the lock lost
  touch go.i1
  cont_worker "$apg" "$agpg"
  rc=0 && wait "$a" || rc=$?
  assert_equal "$rc" 0
  grep -q "lost the lock $U/claims/i1.lock" a.log
  run -0 event-show --type lock-lost .atari/events.jsonl
  assert_equal "${#lines[@]}" 1
  # not one state write after the lock was lost; the item completed once
  assert_equal "$(modrev "$K/atari")" "$rev"
  assert_equal "$(runs "$U/atari")" 1
  run -0 state-get "$U/atari" 'runs[0].outcome' history.i1.status
  assert_output $'completed\ncompleted'
  run -0 event-show --type item-done .atari/events.jsonl
  assert_equal "${#lines[@]}" 1
  run -0 etcdkeys "$K/claims/"
  assert_output ""
}

@test "etcd: a lock lost while the agent runs ends the agent at once; the drain goes on with the next item" {
  make_drain_agent
  printf 'i1\ni2\n' >ready.txt
  BLOCK=i1 "$DRAIN" --next 'cat ready.txt' --state "$U/atari" --locks "$U/claims/" --ttl 3 --poll 0.1 \
    -- ./work.sh 2>a.log &
  a=$!
  wait_for block.i1
  # someone forces the item's lock away and holds it: the agent never ends by itself
  other=$(live)
  lock-release --force "$U/claims/i1.lock"
  lock-acquire --no-keeper --ttl 60 --pid "$other" "$U/claims/i1.lock"
  # within a beat (TTL/3) the engine notices, ends the agent, goes on to i2
  wait_grep "end i2" worked.log
  # the agent's last line comes before the engine records the item: wait for that
  for _ in $(seq 300); do [[ $(state-get "$U/atari" history.i2.status 2>/dev/null) == completed ]] && break; sleep 0.1; done
  run -0 state-get "$U/atari" history.i1.status history.i2.status
  assert_output $'working\ncompleted'
  run -0 event-show --type lock-lost .atari/events.jsonl
  assert_equal "${#lines[@]}" 1
  # i1 is another's: the worker waits for it, never runs it beside its holder
  wait_grep "waiting for 1 item" a.log
  run -0 grep -c "start i1" worked.log
  assert_output 1
  kill -TERM "$a"
  rc=0 && wait "$a" || rc=$?
  assert_equal "$rc" 143
  run -0 state-get "$U/atari" history.i1.status
  assert_output working
}

@test "etcd: kill -9 of an engine mid-item: the key stays until its agent is gone or the lease ran out; no two runs overlap" {
  make_overlap_agent
  printf 'i1\n' >ready.txt
  # the agent takes 2 s to end on SIGTERM: its engine's death does not free it
  TERM_GRACE=2 "$DRAIN" --next 'cat ready.txt' --state "$U/atari" --locks "$U/claims/" --ttl 3 --poll 0.1 \
    -- ./overlap.sh 2>a.log &
  a=$!
  wait_for agent.pid
  rec=$(etcdget "$K/claims/i1.lock")
  kill -9 "$a"
  # nothing deletes the dead engine's key: it is there, unchanged, after its death
  assert_equal "$(etcdget "$K/claims/i1.lock")" "$rec"
  # a worker on another host (its own hostname) waits for the lease; one
  # here takes the dead owner's lock at once but waits for its agent
  touch second
  unshare -u sh -c 'hostname other-host && exec "$@"' sh "$DRAIN" --next 'cat ready.txt' --state "$U/atari" \
    --locks "$U/claims/" --ttl 10 --poll 0.1 -- ./overlap.sh 2>b.log
  run -1 grep overlap agents.log
  run -0 grep -c "^start" agents.log
  assert_output 2
  run -0 state-get "$U/atari" history.i1.status history.i1.attempts
  assert_output $'completed\n2'
  assert_equal "$(runs "$U/atari")" 1
}

@test "etcd: kill -9 of an engine mid-item, a worker of the same host: it takes over at once and waits for the agent" {
  make_overlap_agent
  printf 'i1\n' >ready.txt
  TERM_GRACE=2 "$DRAIN" --next 'cat ready.txt' --state "$U/atari" --locks "$U/claims/" --ttl 3 --poll 0.1 \
    -- ./overlap.sh 2>a.log &
  a=$!
  wait_for agent.pid
  kill -9 "$a"
  touch second
  "$DRAIN" --next 'cat ready.txt' --state "$U/atari" --locks "$U/claims/" --ttl 10 --poll 0.1 -- ./overlap.sh 2>b.log
  grep -q "waiting for the previous agent of item 'i1'" b.log
  run -1 grep overlap agents.log
  run -0 state-get "$U/atari" history.i1.status history.i1.attempts
  assert_output $'completed\n2'
  assert_equal "$(runs "$U/atari")" 1
}

@test "etcd: loop-engine stopped past its TTL: on SIGCONT the agent is ended, nothing recorded, exit 4" {
  cat >agent.sh <<'EOF'
#!/usr/bin/env bash
echo "$$" >"block.$LOOPKIT_ITERATION"
trap 'echo "term $LOOPKIT_ITERATION" >>ran.log; exit 143' TERM
for ((i = 0; i < 600; i++)); do sleep 0.1; done
EOF
  chmod +x agent.sh
  setsid "$LOOP" --session demo --state "$U/state" --locks "$U/locks/" --ttl 3 --max-iterations 2 -- ./agent.sh 2>err.log &
  e=$!
  wait_for block.1
  agent=$(cat block.1)
  epg=$(pgid "$e") agpg=$(pgid "$agent")
  stop_worker "$e" "$agent"
  wait_free "$U/locks/demo.lock"
  rev=$(modrev "$K/state")
  cont_worker "$epg" "$agpg"
  rc=0 && wait "$e" || rc=$?
  assert_equal "$rc" 4
  grep -q "lost the lock $U/locks/demo.lock" err.log
  run -0 cat ran.log
  assert_output "term 1"
  assert_equal "$(modrev "$K/state")" "$rev"
  run -0 state-get "$U/state" iteration_completed status
  assert_output $'0\nrunning'
}

@test "etcd: a finished item's write waits out an etcd pause shorter than the lease, and is recorded once" {
  make_drain_agent
  printf 'i1\n' >ready.txt
  BLOCK=i1 "$DRAIN" --next 'cat ready.txt' --state "$U/atari" --locks "$U/claims/" --ttl 30 --poll 0.1 \
    -- ./work.sh 2>a.log &
  a=$!
  wait_for block.i1
  etcd=$(cat "$ETCD_DIR/pid.1")
  kill -STOP "$etcd"
  touch go.i1
  wait_grep "could not record the finished work" a.log
  kill -CONT "$etcd"
  rc=0 && wait "$a" || rc=$?
  assert_equal "$rc" 0
  run -0 state-get "$U/atari" history.i1.status history.i1.attempts
  assert_output $'completed\n1'
  assert_equal "$(runs "$U/atari")" 1
}

@test "etcd: a finished item's write gives up when etcd stays out of reach past the lease; never unfenced" {
  make_drain_agent
  printf 'i1\n' >ready.txt
  BLOCK=i1 "$DRAIN" --next 'cat ready.txt' --state "$U/atari" --locks "$U/claims/" --ttl 3 --poll 0.1 \
    -- ./work.sh 2>a.log &
  a=$!
  wait_for block.i1
  etcd=$(cat "$ETCD_DIR/pid.1")
  kill -STOP "$etcd"
  touch go.i1
  rc=0 && wait "$a" || rc=$?
  kill -CONT "$etcd"
  assert_equal "$rc" 4
  # the write gives up when the lease may have run out; under the
  # sanitizers, several times slower, another write or the release may meet
  # the outage first and end the engine with exit 4 just the same: the
  # outcome below is checked either way
  [[ -n ${LOOPKIT_SANITIZED:-} ]] || grep -q "gave up recording the finished work in $U/atari" a.log
  # not recorded: the item is still "working", to be run again
  run -0 state-get "$U/atari" history.i1.status
  assert_output working
  assert_equal "$(runs "$U/atari")" 0
}

@test "files: a lock taken over from a stopped worker: its fenced writes are refused, it logs lock-lost" {
  make_drain_agent
  printf 'i1\n' >ready.txt
  BLOCK=i1 WORKER=a setsid "$DRAIN" --next 'cat ready.txt' --locks claims --poll 0.1 -- ./work.sh 2>a.log &
  a=$!
  wait_for block.i1
  agent=$(cat block.i1)
  apg=$(pgid "$a") agpg=$(pgid "$agent")
  stop_worker "$a" "$agent"
  # another owner takes the stopped worker's lock (forced, as a sweep of a
  # lock whose heartbeat aged would)
  other=$(live)
  lock-release --force claims/i1.lock
  lock-acquire --pid "$other" claims/i1.lock
  cp .atari/state.json before.json
  touch go.i1
  cont_worker "$apg" "$agpg"
  wait_grep lock-lost .atari/events.jsonl
  grep -q "lost the lock $W/claims/i1.lock" a.log
  # the worker waits for the item it lost, held by the other owner
  wait_grep "waiting for 1 item" a.log
  cmp .atari/state.json before.json
  kill -TERM "$a"
  rc=0 && wait "$a" || rc=$?
  assert_equal "$rc" 143
  cmp .atari/state.json before.json
  run -0 state-get .atari/state.json history.i1.status
  assert_output working
  assert_equal "$(runs .atari/state.json)" 0
  run -0 lock-status -j claims/i1.lock
  [ "$(jq .pid <<<"$output")" = "$other" ]
}

@test "files: loop-engine whose lock was taken over records nothing more and exits 4" {
  cat >agent.sh <<'EOF'
#!/usr/bin/env bash
echo "$LOOPKIT_ITERATION" >>ran.log
touch "block.$LOOPKIT_ITERATION"
for ((i = 0; i < 600; i++)); do [[ -e go.$LOOPKIT_ITERATION ]] && break; sleep 0.1; done
EOF
  chmod +x agent.sh
  "$LOOP" --session demo --max-iterations 3 -- ./agent.sh 2>err.log &
  e=$!
  wait_for block.1
  other=$(live)
  lock-release --force .claude/locks/demo.lock
  lock-acquire --pid "$other" .claude/locks/demo.lock
  st=.claude/pipeline-runs/demo/state.json
  cp "$st" before.json
  touch go.1
  rc=0 && wait "$e" || rc=$?
  assert_equal "$rc" 4
  grep -q 'lost the lock' err.log
  cmp "$st" before.json
  run -0 event-show --type lock-lost .claude/pipeline-runs/demo/events.jsonl
  assert_equal "${#lines[@]}" 1
  # the other owner's lock stays
  run -0 lock-status -j .claude/locks/demo.lock
  [ "$(jq .pid <<<"$output")" = "$other" ]
}

@test "files: pipeline-engine whose lock was taken over records nothing more and exits 4" {
  cat >pipe.json <<'EOF2'
{"name": "p", "stages": [{"name": "one", "runs": 2,
  "command": "touch block; for i in $(seq 600); do [ -e go ] && break; sleep 0.1; done"}]}
EOF2
  "$LOOPKIT_SCRIPTS/pipeline-engine" --session pl pipe.json 2>err.log &
  e=$!
  wait_for block
  other=$(live)
  lock-release --force .claude/locks/pl.lock
  lock-acquire --pid "$other" .claude/locks/pl.lock
  st=.claude/pipeline-runs/pl/state.json
  cp "$st" before.json
  touch go
  rc=0 && wait "$e" || rc=$?
  assert_equal "$rc" 4
  grep -q 'lost the lock' err.log
  cmp "$st" before.json
  run -0 state-get "$st" stages[0].iterations_run
  assert_output 0
}

@test "--ttl: a whole number of at least 2 seconds, for every engine" {
  run -2 --separate-stderr "$LOOP" --session s --ttl 1 -- true
  [[ $stderr == *"--ttl: '1' is not a TTL in whole seconds (at least 2)"* ]]
  run -2 "$DRAIN" --next true --ttl x -- true
  run -2 "$LOOPKIT_SCRIPTS/pipeline-engine" --session s --ttl 0.5 p.json
  "$LOOP" --help | grep -q -- '--ttl SECONDS'
  "$DRAIN" --help | grep -q -- '--ttl SECONDS'
  "$LOOPKIT_SCRIPTS/pipeline-engine" --help | grep -q -- '--ttl SECONDS'
}

@test "a file state with etcd locks (or the reverse) is a usage error: the writes could not be fenced" {
  run -2 --separate-stderr "$LOOPKIT_SCRIPTS/drain-engine" --next true --state s.json --locks etcd://127.0.0.1:1/claims/ -- true
  [[ $stderr == *"--state and --locks must both be files or both etcd URLs"* ]]
  run -2 --separate-stderr "$LOOPKIT_SCRIPTS/loop-engine" --session s --state etcd://127.0.0.1:1/s --locks locks -- true
  [[ $stderr == *"--state and --locks must both be files or both etcd URLs"* ]]
  [[ ! -e s.json && ! -e locks ]]
}

@test "etcd: kill -9 of an engine whose agent and agent-run are stopped, past a 3 s TTL: the next engine on this host ends that run instead of waiting forever" {
  make_overlap_agent
  # its job under a subreaper: the stopped members get no SIGCONT when the
  # engine dies; an etcd lock's hold file is in this user's folder of them
  stopped_run "$TMPDIR/loopkit-agents-$EUID/*" "$LOOP" --session demo --state "$U/demo/state" --locks "$D"locks \
    --ttl 3 --max-iterations 1 --kill-after 1 -- ./overlap.sh
  kill -9 "$job"
  wait_gone "$job"
  run -0 --separate-stderr timeout 60 "$LOOP" --session demo --state "$U/demo/state" --locks "$D"locks --ttl 3 \
    --max-iterations 1 --kill-after 1 -- ./overlap.sh
  [[ $stderr == *"whose engine is gone and whose agent-run is stopped or frozen: it would never end by itself"* ]]
  wait_ended "$first"
  run grep overlap agents.log
  assert_failure
  grep -qx "end $first term" agents.log
  run -0 state-get "$U/demo/state" status iteration_completed
  assert_output $'complete\n1'
}
