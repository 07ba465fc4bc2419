#!/usr/bin/env bats
# engine-status, engine-ctl and engine-report on sessions whose state is an
# etcd key (contract section 8: they take a state URL as well as a file),
# against a real etcd on loopback, started for this file alone.
load helpers
setup_file() { etcd_start; }
teardown_file() { etcd_stop; }
setup() { etcd_setup; }

: "${LOOPKIT_SCRIPTS:=$LOOPKIT_SOURCE/scripts}"
DRAIN=$LOOPKIT_SCRIPTS/drain-engine
ctl() { "$LOOPKIT_SCRIPTS/engine-ctl" "$@"; }
status() { "$LOOPKIT_SCRIPTS/engine-status" "$@"; }

# work.sh: takes the item off ready.txt, reports a cost; item "bad" fails
make_work() {
  cat >work.sh <<'EOF2'
#!/bin/sh
sed -i "/^$LOOPKIT_ITEM\$/d" ready.txt
[ "$LOOPKIT_ITEM" != bad ] || { echo "bad item" >&2; exit 7; }
printf '{"cost":0.5}' >"$LOOPKIT_RESULT"
EOF2
  chmod +x work.sh
}

@test "a drain on etcd: engine-status shows it, --json too, engine-report draws it" {
  make_work
  printf 'a\nbad\nb\n' >ready.txt
  "$DRAIN" --next 'cat ready.txt' --state "$U/atari" --max-attempts 1 -- ./work.sh 2>/dev/null || true
  run -0 --separate-stderr status "$U/atari"
  [ "${#lines[@]}" = 2 ]
  [[ ${lines[1]} == "atari "*" drain "*" stopped "*" 2/1/"* ]]
  run -0 status --json "$U/atari"
  [ "${#lines[@]}" = 1 ]
  run -0 state-get - .session .type .status .done .abandoned .total_cost .lock .report <<<"$output"
  [ "$output" = "atari"$'\n'drain$'\n'stopped$'\n'2$'\n'1$'\n'1$'\n'free$'\n'"engine-report $U/atari" ]
  run -0 "$LOOPKIT_SCRIPTS/engine-report" "$U/atari" -o drain.html
  [ "$(grep -c '<tr class="item ' drain.html)" = 3 ]
  grep -q '<h1>drain atari</h1>' drain.html
  grep -q '<tr class="run abandoned"' drain.html
  grep -q 'exit 7' drain.html
}

@test "engine-ctl pauses a drain on etcd that never ran; it starts paused and goes on when resumed" {
  make_work
  printf 'a\n' >ready.txt
  run -0 ctl pause "$U/atari"
  run -0 state-get "$U/atari" status
  [ "$output" = paused ]
  "$DRAIN" --next 'cat ready.txt' --state "$U/atari" --poll 0.05 -- ./work.sh 2>err.log &
  e=$!
  for _ in $(seq 600); do event-show --type paused .atari/events.jsonl >/dev/null 2>&1 && break; sleep 0.05; done
  run -0 status --json "$U/atari"
  run -0 state-get - .status .lock <<<"$output"
  [ "$output" = $'paused\nlive' ]
  [ -s ready.txt ]
  run -0 ctl resume "$U/atari"
  wait "$e"
  [ ! -s ready.txt ]
  ! grep -qi 'backup\|warning' err.log || { cat err.log; false; }
  run -0 state-get "$U/atari" status completion_reason
  [ "$output" = $'stopped\ndrained' ]
  # nothing left to resume; stop compares and writes
  run -1 ctl resume "$U/atari"
  run -0 ctl stop "$U/atari"
}

@test "a loop on etcd: status, stop and report by its state's URL, its log from this host" {
  printf '#!/bin/sh\nprintf "{\\"cost\\":0.25}" >"$LOOPKIT_RESULT"\n' >agent.sh
  chmod +x agent.sh
  "$LOOPKIT_SCRIPTS/loop-engine" --session demo --state "$U/demo" --locks "$D"locks --max-iterations 2 -- ./agent.sh 2>/dev/null
  run -0 status --json "$U/demo"
  run -0 state-get -j - .session .type .status .lock .last_event <<<"$output"
  [ "$output" = $'"demo"\n"loop"\n"complete"\nnull\n"complete"' ]
  run -0 ctl extend "$U/demo" 1
  run -0 state-get "$U/demo" max_iterations status
  [ "$output" = $'3\nstopped' ]
  run -0 event-show --type ctl-extend .claude/pipeline-runs/demo/events.jsonl
  run -0 "$LOOPKIT_SCRIPTS/engine-report" "$U/demo" -o -
  [ "$(grep -c '<tr class="run completed"' <<<"$output")" = 2 ]
  [[ $output == *"<h1>loop demo</h1>"* ]]
}

@test "a URL with no state is no session; an etcd out of reach is exit 4" {
  run -0 --separate-stderr status "$U/nothing"
  [ "${#lines[@]}" = 1 ]
  [[ $stderr == "engine-status: no session at '$U/nothing'" ]]
  run -1 ctl stop "$U/nothing"
  run -1 "$LOOPKIT_SCRIPTS/engine-report" "$U/nothing"
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  run -4 status --json "etcd://127.0.0.1:$port/x"
  run -4 ctl stop "etcd://127.0.0.1:$port/x"
}
