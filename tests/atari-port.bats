#!/usr/bin/env bats
# examples/atari/atari: Atari's drain controller ported to drain-engine with
# configuration only (issue 23). A fake bd queue (ready.txt) and a fake
# claude (agent.sh); Atari's state format from 000_c3c89309b7636738.txt.
load helpers

: "${LOOPKIT_SCRIPTS:=$LOOPKIT_SOURCE/scripts}"
A=.atari/state.json

atari_env() {
  export PATH="$LOOPKIT_SCRIPTS:$PATH"
  export ATARI_READY='cat ready.txt' ATARI_TIMEOUT=0.5 ATARI_KILL_AFTER=0.2
  export ATARI_BACKOFF=0.1 ATARI_IDLE_WAIT=30 ATARI_POLL=0.1 ATARI_AGENT=./agent.sh
  # The fake claude: "slow" hangs on its first attempt; "block" waits for
  # go.block; every bead done is closed (taken off the queue).
  cat >agent.sh <<'AGENT'
#!/usr/bin/env bash
echo "$LOOPKIT_ITEM" >>worked.log
if [[ $LOOPKIT_ITEM == slow && ! -e slow.tried ]]; then touch slow.tried; sleep 60; fi
if [[ $LOOPKIT_ITEM == block ]]; then
  touch running.block
  for ((i = 0; i < 300; i++)); do [[ -e go.block ]] && break; sleep 0.1; done
fi
grep -vxF -- "$LOOPKIT_ITEM" ready.txt >ready.new || true
mv ready.new ready.txt
printf '{"cost":0.25,"turns":3,"session_id":"sess-%s"}' "$LOOPKIT_ITEM" >"$LOOPKIT_RESULT"
AGENT
  chmod +x agent.sh
}

atari() { "$LOOPKIT_SOURCE/examples/atari/atari" "$@"; }

@test "atari: a timed-out bead is retried, a pause is honoured, an empty queue waits, the state is Atari's" {
  atari_env
  printf 'slow\nblock\n' >ready.txt
  atari start 2>err.log &
  e=$!
  # slow times out once (--iteration-timeout), then completes; block runs
  wait_for running.block
  run -0 atari pause
  touch go.block
  wait_grep '"paused"' .atari/events.jsonl
  run -0 state-get "$A" status current_bead .history.block.status
  [ "$output" = $'paused\n\ncompleted' ]
  # while paused, a new bead waits
  echo late >ready.txt
  sleep 0.3
  [ "$(tr '\n' ' ' <worked.log)" = "slow slow block " ]
  run -0 atari resume
  wait_grep 'late' worked.log
  # then the queue is empty: atari waits for work instead of ending
  wait_grep '"idle"' .atari/events.jsonl
  echo later >ready.txt
  for _ in $(seq 300); do [ "$(state-get "$A" .history.later.status)" = completed ] && break; sleep 0.1; done
  kill -0 "$e"
  run -0 atari stop
  wait "$e"
  [ "$(tr '\n' ' ' <worked.log)" = "slow slow block late later " ]
  # Atari's state.json, version 1
  run -0 state-get "$A" version status iteration current_bead total_cost total_turns updated_at
  [ "$output" = $'1\nstopped\n5\n\n1\n12\n2025-01-10T10:05:30Z' ]
  run -0 state-get "$A" .history.slow.id .history.slow.status .history.slow.attempts \
    .history.slow.last_attempt .history.slow.last_session_id .history.slow.last_error
  [ "$output" = $'slow\ncompleted\n2\n2025-01-10T10:05:30Z\nsess-slow\ntimed out after 0.5 s' ]
  run -0 state-get "$A" .history.block.attempts .history.late.status .history.later.attempts
  [ "$output" = $'1\ncompleted\n1' ]
  # pause and resume went through engine-ctl, and the engine said so
  run -0 event-show --type ctl-pause,ctl-resume,paused,resumed .atari/events.jsonl
  # (engine-ctl logs its event after the state change, which the engine may
  # see first: ctl-resume and resumed come in either order)
  [[ $output == *ctl-pause*paused*ctl-resume* && $output == *ctl-pause*paused*resumed* ]]
}

@test "atari: --help lists its settings; an unknown action is a usage error" {
  run -0 atari --help
  [[ $output == *ATARI_TIMEOUT*ATARI_IDLE_WAIT* ]]
  run -2 atari frobnicate
  run -2 atari
}
