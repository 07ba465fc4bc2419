#!/usr/bin/env bats
# scripts/drain-engine: Atari's drain controller over .atari/state.json
# (000_c3c89309b7636738.txt, 002_0b4f740e0b317d12.txt). Fixtures atari_*:
# state files from Atari's docs and tests.
load helpers

: "${LOOPKIT_SCRIPTS:=$LOOPKIT_SOURCE/scripts}"
FIX=$BATS_TEST_DIRNAME/fixtures
A=.atari/state.json

engine() { "$LOOPKIT_SCRIPTS/drain-engine" "$@"; }

# The work queue is ready.txt; the agent logs the item, and follows a plan
# of lines ITEM=done (removes it from the queue; the default), ITEM=fail
# (exit 1 with an error), ITEM=block (write block.ITEM, wait for go.ITEM, then
# done).
make_agent() {
  cat >work.sh <<'EOF'
#!/usr/bin/env bash
echo "$LOOPKIT_ITEM" >>worked.log
echo "$LOOPKIT_ITEM $LOOPKIT_ITERATION ${LOOPKIT_STATE#$PWD/}" >>env.log
action=done
while IFS= read -r step; do
  [[ -n $step && ${step%%=*} == "$LOOPKIT_ITEM" ]] && action=${step#*=}
done <<<"${AGENT_PLAN:-}"
case $action in
  fail) printf '{"error":"tests failed","cost":0.5,"turns":2}' >"$LOOPKIT_RESULT"; exit 1 ;;
  block)
    echo "$$" >block.tmp && mv block.tmp "block.$LOOPKIT_ITEM"
    for ((i = 0; i < 600; i++)); do [[ -e go.$LOOPKIT_ITEM ]] && break; sleep 0.1; done ;;
esac
grep -vxF -- "$LOOPKIT_ITEM" ready.txt >ready.new || true
mv ready.new ready.txt
printf '{"cost":0.25,"turns":3,"session_id":"sess-%s"}' "$LOOPKIT_ITEM" >"$LOOPKIT_RESULT"
EOF
  chmod +x work.sh
}

worked() { tr '\n' ' ' <worked.log; }

@test "works through the ready items and keeps Atari's state" {
  make_agent
  printf 'bd-001\nbd-002\n' >ready.txt
  run -0 engine --next 'cat ready.txt' -- ./work.sh
  [ "$(worked)" = "bd-001 bd-002 " ]
  run -0 state-get "$A" version status iteration current_bead total_cost total_turns updated_at
  [ "$output" = $'1\nstopped\n2\n\n0.5\n6\n2025-01-10T10:05:30Z' ]
  run -0 state-get -k "$A" .history.bd-001
  [ "$output" = $'id\nstatus\nattempts\nlast_attempt\nlast_session_id\ncost\nturns\nstarted_at\nended_at\nduration_s\nexit_status\noutput' ]
  run -0 state-get "$A" .history.bd-001.id .history.bd-001.status .history.bd-001.attempts .history.bd-001.last_attempt .history.bd-002.last_session_id
  [ "$output" = $'bd-001\ncompleted\n1\n2025-01-10T10:05:30Z\nsess-bd-002' ]
  run -0 cat env.log
  [ "$output" = $'bd-001 1 .atari/state.json\nbd-002 2 .atari/state.json' ]
  [ ! -e .atari/state.json.lock ]
}

@test "--help and usage errors" {
  run -0 engine --help
  [[ $output == Usage:\ drain-engine* ]]
  run -2 engine -- true
  run -2 engine --next true
  run -2 engine --next true --max-attempts 0 -- true
  run -2 engine --next true --poll soon -- true
  [ ! -e .atari ]
}

@test "an empty queue stops at once" {
  run -0 engine --next true -- false
  run -0 state-get "$A" version status iteration total_cost history
  [ "$output" = $'1\nstopped\n0\n0\n{}' ]
}

@test "a failed item is offered again until --max-attempts, then abandoned" {
  make_agent
  printf 'bd-1\nbd-2\n' >ready.txt
  AGENT_PLAN='bd-1=fail' run -5 engine --next 'cat ready.txt' --max-attempts 3 --retry-delay 0 -- ./work.sh
  [ "$(worked)" = "bd-1 bd-1 bd-1 bd-2 " ]
  run -0 state-get "$A" .history.bd-1.status .history.bd-1.attempts .history.bd-1.last_error .history.bd-2.status iteration total_cost total_turns
  [ "$output" = $'abandoned\n3\ntests failed\ncompleted\n4\n1.75\n9' ]
}

@test "an agent that fails without a result records its exit status" {
  printf 'x\n' >ready.txt
  run -5 engine --next 'cat ready.txt' --max-attempts 2 --retry-delay 0 -- sh -c 'exit 6'
  run -0 state-get "$A" .history.x.status .history.x.attempts .history.x.last_error
  [ "$output" = $'abandoned\n2\nexit 6' ]
}

@test "a paused drain holds the work until it is resumed" {
  make_agent
  printf 'bd-001\nbd-002\n' >ready.txt
  AGENT_PLAN='bd-001=block' "$LOOPKIT_SCRIPTS/drain-engine" --next 'cat ready.txt' -- ./work.sh 2>err.log &
  e=$!
  wait_for block.bd-001
  state-set "$A" status=paused
  touch go.bd-001
  wait_grep 'paused' err.log
  # bd-001's outcome is saved, and nothing else started
  run -0 state-get -j "$A" status .history.bd-001.status current_bead
  [ "$output" = $'"paused"\n"completed"\n""' ]
  run -1 state-get -e "$A" .history.bd-002
  run -1 state-get -e "$A" '.history["bd-002"]'
  [ "$(worked)" = "bd-001 " ]
  kill -0 "$e"
  state-set "$A" status=running
  wait "$e"
  [ "$(worked)" = "bd-001 bd-002 " ]
  run -0 state-get "$A" status .history.bd-002.status
  [ "$output" = $'stopped\ncompleted' ]
}

@test "a stopped drain ends after the current item" {
  make_agent
  printf 'a\nb\n' >ready.txt
  AGENT_PLAN='a=block' "$LOOPKIT_SCRIPTS/drain-engine" --next 'cat ready.txt' -- ./work.sh 2>/dev/null &
  e=$!
  wait_for block.a
  state-set "$A" status=stopped
  touch go.a
  wait "$e"
  [ "$(worked)" = "a " ]
  run -0 state-get "$A" status .history.a.status
  [ "$output" = $'stopped\ncompleted' ]
}

@test "each outcome is saved before the next item starts" {
  make_agent
  printf 'a\nb\n' >ready.txt
  AGENT_PLAN='b=block' "$LOOPKIT_SCRIPTS/drain-engine" --next 'cat ready.txt' -- ./work.sh 2>/dev/null &
  e=$!
  wait_for block.b
  run -0 state-get "$A" .history.a.status .history.b.status current_bead iteration
  [ "$output" = $'completed\nworking\nb\n2' ]
  touch go.b
  wait "$e"
}

@test "kill -9 mid-item: the rerun tries the item again and counts the attempt" {
  make_agent
  printf 'a\nb\n' >ready.txt
  AGENT_PLAN='a=block' "$LOOPKIT_SCRIPTS/drain-engine" --next 'cat ready.txt' -- ./work.sh 2>/dev/null &
  wait_for block.a
  epid=$(state-get .atari/state.json.lock pid)
  kill -9 "$epid" "$(cat block.a)"
  wait_gone "$epid"
  run -0 engine --next 'cat ready.txt' -- ./work.sh
  [ "$(worked)" = "a a b " ]
  run -0 state-get "$A" .history.a.status .history.a.attempts status iteration
  [ "$output" = $'completed\n2\nstopped\n3' ]
}

@test "SIGTERM mid-item: the item is marked failed and the drain stopped" {
  make_agent
  printf 'a\n' >ready.txt
  AGENT_PLAN='a=block' "$LOOPKIT_SCRIPTS/drain-engine" --next 'cat ready.txt' -- ./work.sh 2>/dev/null &
  e=$!
  wait_for block.a
  kill -TERM "$e"
  rc=0; wait "$e" || rc=$?
  [ "$rc" = 143 ]
  run -0 state-get "$A" status current_bead .history.a.status .history.a.last_error
  [ "$output" = $'stopped\n\nfailed\ninterrupted' ]
  [ ! -e .atari/state.json.lock ]
}

@test "a second drain on the same state is refused" {
  make_agent
  printf 'a\n' >ready.txt
  AGENT_PLAN='a=block' "$LOOPKIT_SCRIPTS/drain-engine" --next 'cat ready.txt' -- ./work.sh 2>/dev/null &
  e=$!
  wait_for block.a
  run -1 engine --next 'cat ready.txt' -- ./work.sh
  touch go.a
  wait "$e"
  [ "$(worked)" = "a " ]
}

@test "item ids with dots, quotes and backslashes are kept exactly" {
  make_agent
  printf '%s\n' 'bd.7' 'we"ird' 'back\slash' >ready.txt
  run -0 engine --next 'cat ready.txt' -- ./work.sh
  run -0 state-get -k "$A" history
  [ "$output" = $'bd.7\nwe"ird\nback\\slash' ]
  run -0 state-get "$A" '.history["we\"ird"].id' '.history["back\\slash"].status' '.history["bd.7"].last_session_id'
  [ "$output" = $'we"ird\ncompleted\nsess-bd.7' ]
}

@test "a corrupt state file is backed up and reset" {
  mkdir .atari
  cp "$FIX/atari_state_corrupt_truncated.statesink_test.json.txt" "$A"
  run -0 --separate-stderr engine --next true -- true
  [[ $stderr == *warning* ]]
  cmp "$FIX/atari_state_corrupt_truncated.statesink_test.json.txt" "$A.backup"
  run -0 state-get "$A" version status iteration history
  [ "$output" = $'1\nstopped\n0\n{}' ]
}

@test "a state file without a version is backed up and reset" {
  mkdir .atari
  cp "$FIX/atari_state_v0_noversion.statesink_test.json" "$A"
  run -0 engine --next true -- true
  cmp "$FIX/atari_state_v0_noversion.statesink_test.json" "$A.backup"
  run -0 state-get "$A" version iteration total_cost
  [ "$output" = $'1\n0\n0' ]
}

@test "a version 1 state file is carried on" {
  mkdir .atari
  cp "$FIX/atari_state_v1.statesink_test.json" "$A"
  make_agent
  printf 'bd-old\nbd-new\n' >ready.txt
  run -0 engine --next 'cat ready.txt' -- ./work.sh
  [ "$(worked)" = "bd-new " ]
  [ ! -e "$A.backup" ]
  run -0 state-get "$A" version status iteration total_cost total_turns .history.bd-old.status .history.bd-new.status
  [ "$output" = $'1\nstopped\n6\n1.75\n103\ncompleted\ncompleted' ]
}

@test "the documented state: a failed item with its attempts used up is abandoned, not run" {
  mkdir .atari
  cp "$FIX/atari_state.docs.json" "$A"
  make_agent
  printf 'bd-001\nbd-002\nbd-123\n' >ready.txt
  run -5 engine --next 'cat ready.txt' -- ./work.sh # bd-002 abandoned
  [ "$(worked)" = "bd-123 " ]
  run -0 state-get "$A" .history.bd-002.status .history.bd-002.attempts iteration active_top_level
  [ "$output" = $'abandoned\n3\n6\nbd-epic-001' ]
}

@test "a --next command that keeps failing stops the drain with 4" {
  run -4 --separate-stderr engine --next 'echo x >>tries; exit 3' -- true
  [ "$(wc -l <tries)" = 4 ]
  [[ $stderr == *"the --next command failed 4 times (status 3); stopped"* ]]
  run -0 state-get "$A" status
  [ "$output" = stopped ]
}

@test "--max-failures: consecutive failed items stop the drain; events and tokens" {
  printf 'a\nb\nc\n' >ready.txt
  make_agent
  AGENT_PLAN=$'a=fail\nb=fail\nc=fail' run -5 engine --next 'cat ready.txt' --max-failures 2 -- ./work.sh
  [ "$(worked)" = "a a " ] # a failed item is offered again first
  run -0 state-get .atari/state.json status completion_reason total_cost
  [ "$output" = $'stopped\ntoo-many-failures\n1' ]
  run -0 event-show --type item-done,failed .atari/events.jsonl
  [ "$(cut -d' ' -f3 <<<"$output" | tr '\n' ' ')" = "item-done item-done failed " ]
}

@test "--retries runs a failing agent again for the same attempt" {
  printf 'a\n' >ready.txt
  cat >work.sh <<'EOF'
#!/usr/bin/env bash
echo "$LOOPKIT_ITEM" >>worked.log
[[ $(wc -l <worked.log) -ge 3 ]] || exit 1
: >ready.txt
printf '{"tokens":5}' >"$LOOPKIT_RESULT"
EOF
  chmod +x work.sh
  run -0 engine --next 'cat ready.txt' --retries 2 --retry-delay 0 -- ./work.sh
  [ "$(worked)" = "a a a " ]
  run -0 state-get .atari/state.json '.history.a.status' '.history.a.attempts' total_tokens
  [ "$output" = $'completed\n1\n5' ]
}

# --- issue 23: engines you can leave running overnight -----------------------

make_overlap_drain_agent() { make_overlap_agent ': >ready.txt'; }

# overlap_case LOCKFILE [OPTIONS...]: kill -9 the drain mid-item, start another
# at once; it must wait for the first agent, never run beside it.
overlap_case() {
  local lockfile=$1
  shift
  make_overlap_drain_agent
  printf 'a\n' >ready.txt
  TERM_GRACE=2 "$LOOPKIT_SCRIPTS/drain-engine" --next 'cat ready.txt' "$@" -- ./overlap.sh 2>/dev/null &
  wait_for agent.pid
  first=$(cat agent.pid)
  rm agent.pid
  touch second
  kill -9 "$(state-get "$lockfile" pid)"
  run -0 --separate-stderr engine --next 'cat ready.txt' "$@" -- ./overlap.sh
  [[ $stderr == *"waiting for the previous agent of item 'a'"* ]]
  ! grep -q overlap agents.log || false
  [ "$(head -n 2 agents.log)" = "start $first"$'\n'"end $first term" ]
  run -0 state-get "$A" .history.a.status .history.a.attempts
  [ "$output" = $'completed\n2' ]
}

@test "kill -9 mid-item, restarted at once: the item's agents never overlap" {
  overlap_case .atari/state.json.lock
}

@test "kill -9 mid-item with --locks: the item's agents never overlap" {
  overlap_case locks/a.lock --locks locks
}

@test "--next runs under pipefail: a failing pipeline is no empty queue" {
  printf 'a\n' >ready.txt
  run -4 --separate-stderr engine --next 'false | cat ready.txt' --retry-delay 0 -- true
  [[ $stderr == *"the --next command failed 4 times (status 1)"* ]]
  [[ $stderr != *drained* ]]
}

@test "a drain that abandoned items exits 5 and says done, abandoned and left" {
  make_agent
  printf 'a\nb\n' >ready.txt
  AGENT_PLAN='a=fail' run -5 --separate-stderr engine --next 'cat ready.txt' --max-attempts 1 -- ./work.sh
  [[ $stderr == *"drained with failures: no item left, after 2 attempts: done 1, abandoned 1, left 0"* ]]
}

@test "a drain paused while none ran stays paused until engine-ctl resumes it" {
  make_agent
  printf 'a\n' >ready.txt
  mkdir .atari
  printf '{"version":1,"status":"paused","iteration":0,"current_bead":"","history":{},"total_cost":0,"total_turns":0}' >"$A"
  "$LOOPKIT_SCRIPTS/drain-engine" --next 'cat ready.txt' --poll 0.1 -- ./work.sh 2>/dev/null &
  e=$!
  for _ in $(seq 300); do grep -q '"paused"' .atari/events.jsonl 2>/dev/null && break; sleep 0.1; done
  [ ! -e worked.log ]
  run -0 state-get "$A" status
  [ "$output" = paused ]
  run -0 "$LOOPKIT_SCRIPTS/engine-ctl" resume atari
  wait "$e"
  [ "$(worked)" = "a " ]
}

@test "--iteration-timeout fails the attempt; back-off between attempts of one item" {
  printf 'a\n' >ready.txt
  printf '#!/usr/bin/env bash\necho x >>tries\nsleep 60\n' >slow.sh
  chmod +x slow.sh
  run -5 engine --next 'cat ready.txt' --max-attempts 2 --retry-delay 0.2 --iteration-timeout 0.3 --kill-after 0.2 -- ./slow.sh
  [ "$(wc -l <tries)" = 2 ]
  run -0 state-get "$A" .history.a.status .history.a.last_error .history.a.exit_status
  [ "$output" = $'abandoned\ntimed out after 0.3 s\n124' ]
  run -0 event-show --type backoff .atari/events.jsonl
  [[ $output == *"item=a attempt=2 delay=0.2"* ]]
  run -0 state-get "$A" '.runs[].outcome' '.runs[].exit_status'
  [ "$output" = $'failed\nabandoned\n124\n124' ]
}

@test "--idle-wait keeps an empty drain waiting for work" {
  make_agent
  : >ready.txt
  "$LOOPKIT_SCRIPTS/drain-engine" --next 'cat ready.txt' --idle-wait 2 --poll 0.1 -- ./work.sh 2>/dev/null &
  e=$!
  for _ in $(seq 300); do grep -q '"idle"' .atari/events.jsonl 2>/dev/null && break; sleep 0.1; done
  echo late >ready.txt
  wait "$e"
  [ "$(worked)" = "late " ]
  run -0 state-get "$A" status completion_reason
  [ "$output" = $'stopped\ndrained' ]
}

@test "--max-cost stops the drain before the next item" {
  make_agent
  printf 'a\nb\nc\n' >ready.txt
  run -0 engine --next 'cat ready.txt' --max-cost 0.5 -- ./work.sh
  [ "$(worked)" = "a b " ]
  run -0 state-get "$A" status completion_reason total_cost
  [ "$output" = $'stopped\nmax_cost\n0.5' ]
}

# --- issue 36: an item costs what its tools cost, however long the queue ------

# starts FILE: the programs an strace -f log shows started (execve that
# succeeded), but the agent's (true) and the --next command's (seq): the
# drain's own work
starts() { grep 'execve(' "$1" | grep -vcE 'execve\("[^"]*/(true|seq)"'; }

@test "the work per item is at most 8 program starts, at 10 items as at 40 (strace)" {
  need_strace_counts
  local n c=() rc
  for n in 10 40; do
    mkdir "q$n"
    rc=0
    (cd "q$n" && LK_HEARTBEAT=3600 timeout -k 10 300 strace -f -qq -e trace=execve -e status=successful -o ../trace.$n \
      "$LOOPKIT_SCRIPTS/drain-engine" --next "seq 1 $n" -- true 2>/dev/null 3>&-) || rc=$?
    # A traced run that never ends fails, showing what ran (it once did
    # under load: a wait -n that missed the agent's end waited for the beat,
    # 3600 s here; see lk_timer). bench/engines.sh counts the same starts.
    if ((rc == 124 || rc == 137)); then
      ps -eo pid,ppid,pgid,stat,wchan:20,args 2>/dev/null >&2 || true
      echo "the strace -f run of $n items did not end within 300 s" >&2
      return 1
    fi
    run -0 state-get "q$n/$A" status iteration "history[\"$n\"].status"
    [ "$output" = $'stopped\n'"$n"$'\ncompleted' ]
    c+=("$(starts "trace.$n")")
  done
  echo "program starts: ${c[0]} for 10 items, ${c[1]} for 40"
  # per item, whatever the queue's length (N items used to cost N^2)
  (((c[1] - c[0]) <= 8 * 30))
  # the start and the end of the run are a few more, at both lengths
  ((c[0] <= 8 * 10 + 20 && c[1] <= 8 * 40 + 20))
}

# --- issue 37: what an overnight user reads in the morning -----------------

@test "--idle-wait says it is idle once per idle spell, and when work arrives" {
  make_agent
  : >ready.txt
  engine --next 'echo x >>polls; cat ready.txt' --idle-wait 600 --poll 0.02 -- ./work.sh 2>err.log &
  e=$!
  # many polls of an empty queue
  for _ in $(seq 1500); do [[ -e polls && $(wc -l <polls) -ge 15 ]] && break; sleep 0.1; done
  [[ $(wc -l <polls) -ge 15 ]]
  echo late >ready.txt
  # idle again once the item is done: a second spell, then stop it
  for _ in $(seq 1500); do [[ $(grep -c '"idle"' .atari/events.jsonl) -ge 2 ]] && break; sleep 0.1; done
  state-set "$A" status=stopped
  wait "$e"
  [ "$(worked)" = "late " ]
  [ "$(grep -c 'idle: no ready item' err.log)" -eq 2 ]
  [ "$(grep -c 'work arrived: late' err.log)" -eq 1 ]
}

@test "the end of a shared drain is quiet: every worker says drained" {
  make_agent
  printf 'a\n' >ready.txt
  AGENT_PLAN='a=block' engine --next 'cat ready.txt' --locks locks --poll 0.02 -- ./work.sh 2>a.log &
  a=$!
  for _ in $(seq 1500); do [[ -e block.a ]] && break; sleep 0.1; done
  engine --next 'cat ready.txt' --locks locks --poll 0.02 -- ./work.sh 2>b.log &
  b=$!
  for _ in $(seq 1500); do grep -q 'held by other workers' b.log && break; sleep 0.1; done
  touch go.a
  wait "$a"
  wait "$b"
  cat a.log b.log
  ! grep -E 'state-set|expected|stopped by request' a.log b.log
  grep -q 'drained' a.log
  grep -q 'drained' b.log
  run -0 state-get "$A" status completion_reason
  [ "$output" = $'stopped\ndrained' ]
}

@test "drain history entries hold cost and tokens; sums stay exact past 17 digits" {
  printf 'a\nb\n' >ready.txt
  cat >work.sh <<'EOF'
#!/usr/bin/env bash
echo "$LOOPKIT_ITEM" >>worked.log
if [[ $LOOPKIT_ITEM == a && ! -e failed.a ]]; then
  touch failed.a
  printf '{"error":"flaky","cost":0.1000000000000000000000000001,"tokens":7}' >"$LOOPKIT_RESULT"
  exit 1
fi
grep -vxF -- "$LOOPKIT_ITEM" ready.txt >ready.new || true
mv ready.new ready.txt
printf '{"cost": 0.2000000000000000000000000002 , "tokens":11,"note":{"x":1}}' >"$LOOPKIT_RESULT"
EOF
  chmod +x work.sh
  run -0 engine --next 'cat ready.txt' --retry-delay 0 -- ./work.sh
  [ "$(worked)" = "a a b " ]
  run -0 state-get -j "$A" .history.a.cost .history.a.tokens .history.b.cost .history.b.tokens '.runs[].cost'
  [ "$output" = $'0.3\n18\n0.2\n11\n0.1\n0.2\n0.2' ]
  # the text as written: the sum on all its digits
  grep -q '"total_cost": *0.5000000000000000000000000005' "$A"
  grep -q '"cost": *0.3000000000000000000000000003' "$A"
  run -0 state-get "$A" total_tokens
  [ "$output" = 29 ]
}

@test "the final words count right: an item abandoned by the last failure is not left" {
  make_agent
  printf 'a\nb\nc\n' >ready.txt
  AGENT_PLAN=$'a=fail\nb=fail\nc=fail' run -5 --separate-stderr engine --next 'cat ready.txt' --max-attempts 1 --max-failures 2 -- ./work.sh
  [[ $stderr == *"2 consecutive failed items; drain stopped: too-many-failures: done 0, abandoned 2, left 1"* ]]
}

@test "the read before each item names two paths per listed item; a left working entry's agent is still looked for" {
  need_strace
  mkdir q
  (cd q && LK_HEARTBEAT=3600 strace -f -qq -s 256 -v -e trace=execve -e status=successful -o ../trace \
    "$LOOPKIT_SCRIPTS/drain-engine" --next "seq 1 3" -- true 2>/dev/null)
  # status and attempts of each listed item, no agent_pid: one third less to
  # look up and print, however long the queue
  run -0 grep -c 'state-get.*history\[\\"3\\"\]\.attempts' trace
  run -1 grep -c 'state-get.*history\[\\"[0-9]\\"\]\.agent_pid' trace
  # an entry a killed worker left working, its agent still alive: waited for
  setsid sleep 300 >/dev/null 2>&1 &
  local live=$! start
  echo "$live" >>"$W.pids"
  wait_exec "$live" sleep
  start=$(awk '{ sub(/^.*\) /, ""); split($0, f, " "); print f[20] }' "/proc/$live/stat")
  state-set "q/$A" 'history["4"].status=working' 'history["4"].attempts:=1' "history[\"4\"].agent_pid:=$live" \
    "history[\"4\"].agent_start:=$start" "history[\"4\"].agent_boot=$(cat /proc/sys/kernel/random/boot_id)"
  (cd q && "$LOOPKIT_SCRIPTS/drain-engine" --kill-stale-agent --next "seq 1 4" -- true 2>../err)
  grep -q "ending the previous agent of item '4'" err
  wait_gone "$live"
  run -0 state-get "q/$A" 'history["4"].status'
  [ "$output" = completed ]
}

@test "each attempt's output goes to its own log, named in the item's entry and its run, with the failure's reason" {
  cat >talk.sh <<'EOF'
#!/usr/bin/env bash
echo "working on $LOOPKIT_ITEM"
if [[ ! -e "$LOOPKIT_ITEM.failed" ]]; then touch "$LOOPKIT_ITEM.failed"; echo "broke" >&2; exit 3; fi
grep -vxF -- "$LOOPKIT_ITEM" ready.txt >ready.new || true
mv ready.new ready.txt
EOF
  chmod +x talk.sh
  printf 'a\nb c\n' >ready.txt
  run -0 engine --next 'cat ready.txt' --retry-delay 0 -- ./talk.sh
  logs=$W/.atari/logs
  run -0 state-get "$A" '.runs[].output' '.runs[0].reason' .history.a.output
  [ "$output" = "$logs/item-a-attempt-1.log"$'\n'"$logs/item-a-attempt-2.log"$'\n'"$logs/item-b%20c-attempt-1.log"$'\n'"$logs/item-b%20c-attempt-2.log"$'\nexit 3\n'"$logs/item-a-attempt-2.log" ]
  [ "$(sort "$logs/item-a-attempt-1.log")" = $'broke\nworking on a' ]
  [ "$(cat "$logs/item-b%20c-attempt-2.log")" = "working on b c" ]
}

@test "--max-tokens and --deadline stop the drain before the next item, each with its reason" {
  make_agent
  cat >tok.sh <<'EOF'
#!/usr/bin/env bash
echo "$LOOPKIT_ITEM" >>worked.log
grep -vxF -- "$LOOPKIT_ITEM" ready.txt >ready.new || true
mv ready.new ready.txt
[ "$LOOPKIT_ITEM" != b ] || echo 1736600000 >clock
printf '{"tokens":500}' >"$LOOPKIT_RESULT"
EOF
  chmod +x tok.sh
  printf 'a\nb\nc\nd\n' >ready.txt
  run -0 --separate-stderr engine --next 'cat ready.txt' --max-tokens 1000 -- ./tok.sh
  [ "$(worked)" = "a b " ]
  [[ $stderr == *"stopped: total_tokens reached --max-tokens 1000: done 2, abandoned 0, left 2"* ]]
  [ "$(state-get "$A" completion_reason)" = max_tokens ]
  rm -rf .atari worked.log
  printf 'a\nb\nc\nd\n' >ready.txt
  echo 1736503530 >clock
  LOOPKIT_NOW=@$W/clock run -0 --separate-stderr engine --next 'cat ready.txt' --deadline 8h -- ./tok.sh
  [ "$(worked)" = "a b " ]
  [[ $stderr == *"stopped: the --deadline 8h has passed: done 2, abandoned 0, left 2"* ]]
  [ "$(state-get "$A" completion_reason)" = deadline ]
}

@test "--on-event: the drain's events reach the command, the last one after the drain ended" {
  make_agent
  printf 'a\nb\n' >ready.txt
  run -0 engine --next 'cat ready.txt' --on-event 'cat >>"$PWD/hook.$LOOPKIT_EVENT"' -- ./work.sh
  wait_for hook.complete
  grep -q '"type":"complete","session":"drain","reason":"drained"' hook.complete
  wait_for hook.item-done
  for ((i = 0; i < 300; i++)); do [ "$(wc -l <hook.item-done)" = 2 ] && break; sleep 0.1; done
  [ "$(sort hook.item-done)" = "$(grep '"type":"item-done"' .atari/events.jsonl | sort)" ]
}

@test "an item id too long for a file name gets a log named by its start and a checksum" {
  make_agent
  long=$(printf 'x%.0s' $(seq 300))
  printf '%s\n' "$long" >ready.txt
  run -0 --separate-stderr engine --next 'cat ready.txt' -- ./work.sh
  [[ $stderr != *"cannot open"* ]]
  run -0 state-get "$A" '.runs[0].output'
  [[ $output == "$W/.atari/logs/item-$(printf 'x%.0s' $(seq 115))-"*-attempt-1.log ]]
  [ -f "$output" ]
}

@test "an item finished earlier and set back by hand during the run is taken again before the next new one" {
  # item 5's agent sets item 2 (finished, in the run of finished items at
  # the queue's head) back to failed: the engine takes it again next
  cat >agent.sh <<'EOF'
#!/usr/bin/env bash
echo "$LOOPKIT_ITEM" >>order
if [[ $LOOPKIT_ITEM == 5 && ! -e reset ]]; then
  : >reset
  state-set "$LOOPKIT_STATE" 'history["2"].status=failed'
fi
EOF
  chmod +x agent.sh
  run -0 engine --next "seq 1 7" -- ./agent.sh
  [ "$(tr '\n' ' ' <order)" = "1 2 3 4 5 2 6 7 " ]
  run -0 state-get "$A" 'history["2"].status' 'history["2"].attempts' 'history["5"].status'
  [ "$output" = $'completed\n2\ncompleted' ]
}

@test "an item costs six program starts (strace), and a queue that did not change is still read whole: an item reset by hand is taken again" {
  need_strace_counts
  local n c=()
  for n in 10 40; do
    mkdir "q$n"
    (cd "q$n" && LK_HEARTBEAT=3600 timeout -k 10 600 strace -f -qq -e trace=execve -e status=successful \
      -o ../trace.$n "$LOOPKIT_SCRIPTS/drain-engine" --next "seq 1 $n" -- true 2>/dev/null)
    run -0 state-get "q$n/$A" status completion_reason
    [ "$output" = $'stopped\ndrained' ]
    # the programs started, but the agent's and --next's own (seq)
    c+=("$(grep 'execve(' "trace.$n" | grep -vcE 'execve\("[^"]*/(true|seq)"')")
  done
  echo "program starts: ${c[0]} for 10 items, ${c[1]} for 40"
  (((c[1] - c[0]) <= 6 * 30))
  # item 3 of 10 set back to failed by hand: the finished items before and
  # after it are skipped, it is taken again
  state-set "q10/$A" 'history["3"].status=failed'
  (cd q10 && "$LOOPKIT_SCRIPTS/drain-engine" --next "seq 1 10" -- true 2>/dev/null)
  run -0 state-get "q10/$A" 'history["3"].status' 'history["3"].attempts'
  [ "$output" = $'completed\n2' ]
  # each item's item-done comes before the next item-start, all written by the end
  run -0 state-get - '.type' <"q10/${A%/*}/events.jsonl"
  [ "$(grep -c item-start <<<"$output")" = "$(grep -c item-done <<<"$output")" ]
  [[ " $(tr '\n' ' ' <<<"$output")" != *" item-start item-start "* ]]
  [ "${lines[-1]}" = complete ]
}
