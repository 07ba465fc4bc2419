#!/usr/bin/env bats
# etcd restarting under the tools (contract section 9): every call rides
# out an outage within its budget (--timeout; a waiter's --wait), and none
# outlives it. Against a real etcd of this file's own, which the tests stop
# (by its pid) and start again on the same ports and data.

load helpers
setup_file() { etcd_start; }
teardown_file() { etcd_stop; }
setup() {
  etcd_setup
  U="${D}a"
}

sandbox() { "$LOOPKIT_SOURCE/tests/etcd/etcd-sandbox" "$@"; }
etcdctl3() { ETCDCTL_API=3 etcdctl --endpoints "$ENDPOINTS" "$@"; }
tickets() { etcdctl3 get --prefix --keys-only "/lk-test/$BATS_TEST_NUMBER/.a.wait." | sed '/^$/d'; }
# in_line: until a waiter's ticket is in the line of key a (bounded: 30 s)
in_line() {
  local i
  for ((i = 0; i < 300; i++)); do [ -n "$(tickets)" ] && return 0; sleep 0.1; done
  echo "no waiter in line" >&2
  return 1
}
# outage SIG: etcd stopped with SIG (KILL, or TERM as systemd stops it),
# left down for a moment, started again; back once it answers. The moment
# is the outage's length, not a wait for something: the calls under test
# must ride out any length within their budget.
outage() {
  sandbox kill "$ETCD_DIR" 1 "$1"
  sleep 1.5
  sandbox revive "$ETCD_DIR" 1
}
# ran PID...: until each process runs loopkit-etcd, where its calls are made
ran() {
  local p
  for p in "$@"; do wait_exec "$p" loopkit-etcd; done
}
# ms_since T: the milliseconds since T (an $EPOCHREALTIME)
ms_since() { echo $((${EPOCHREALTIME/./} / 1000 - ${1/./} / 1000)); }

@test "a waiter rides out two etcd restarts (a clean stop, a kill -9) and gets the lock when it is freed" {
  lock-acquire "$U" -- sh -c 'until [ -f go ]; do sleep 0.1; done' &
  holder=$!
  for _ in $(seq 300); do lock-status -q "$U" && break; sleep 0.1; done
  lock-acquire --wait 40 "$U" -- touch got 2>waiter.err &
  waiter=$!
  in_line
  outage TERM
  outage KILL
  # still in line, on the etcd that came back
  run -0 tickets
  [ -n "$output" ]
  touch go
  wait "$holder"
  rc=0 && wait "$waiter" || rc=$?
  cat waiter.err >&2
  [ "$rc" = 0 ]
  [ -f got ]
  run -1 lock-status "$U"
}

@test "a waiter rides out an outage longer than --timeout while its --wait lasts" {
  owner=$(live)
  lock-acquire --no-keeper --pid "$owner" "$U"
  lock-acquire --timeout 1 --wait 40 "$U" -- touch got 2>waiter.err &
  waiter=$!
  in_line
  sandbox kill "$ETCD_DIR" 1 KILL
  sleep 2.5 # the outage: longer than the waiter's --timeout
  sandbox revive "$ETCD_DIR" 1
  run -0 lock-release --pid "$owner" "$U"
  rc=0 && wait "$waiter" || rc=$?
  cat waiter.err >&2
  [ "$rc" = 0 ]
  [ -f got ]
}

@test "calls made while etcd is down (an idle worker's next ones) succeed once it is back, each write applied once" {
  owner=$(live) holder=$(live) released=$(live)
  state-set "${U}s" n:=5 log:='[]'
  lock-acquire --no-keeper --pid "$holder" "${U}h"
  lock-acquire --no-keeper --pid "$released" "${U}r"
  sandbox kill "$ETCD_DIR" 1 KILL
  lock-acquire --timeout 30 --no-keeper --pid "$owner" "$U" 2>acquire.err &
  acquire=$!
  state-set --timeout 30 "${U}s" n+=1 'log[]=one' 2>set.err &
  set=$!
  state-get --timeout 30 "${U}s" n >get.out 2>get.err &
  get=$!
  lock-heartbeat --timeout 30 --pid "$holder" "${U}h" 2>beat.err &
  beat=$!
  lock-release --timeout 30 --pid "$released" "${U}r" 2>release.err &
  release=$!
  lock-status --timeout 30 "${U}h" >status.out 2>status.err &
  status=$!
  ran "$acquire" "$set" "$get" "$beat" "$release" "$status"
  sleep 1.5 # the outage's length, as in outage()
  sandbox revive "$ETCD_DIR" 1
  for p in acquire set get beat release status; do
    rc=0 && wait "${!p}" || rc=$?
    cat "$p.err" >&2
    echo "$p: exit $rc" >&2
    [ "$rc" = 0 ]
  done
  [ "$(cat get.out)" = 5 ] || [ "$(cat get.out)" = 6 ]
  run -0 state-get -j "${U}s" .
  assert_output '{"n":6,"log":["one"]}'
  run -0 lock-status -j "$U"
  [ "$(jq .pid <<<"$output")" = "$owner" ]
  run -1 lock-status "${U}r"
  grep -q "live, session 'ah'" status.out
}

@test "the keeper of a lock taken without COMMAND rides out a restart: the lease lives on past its TTL" {
  owner=$(live)
  lock-acquire --ttl 3 --timeout 30 --pid "$owner" "$U"
  outage KILL
  # the TTL over again after the restart (etcd gives leases their full TTL
  # when it starts): only a keeper still at work keeps the lock
  sleep 4
  run -0 lock-status -j "$U"
  [ "$(jq .pid <<<"$output")" = "$owner" ]
  [ -n "$(pgrep -f "lock-acquire .*lk-test/$BATS_TEST_NUMBER/a")" ]
  run -0 lock-release --pid "$owner" "$U"
}

@test "a signal ends a waiter with COMMAND at once while etcd is out of reach (128+N), not at the end of its wait" {
  sandbox kill "$ETCD_DIR" 1 KILL
  start=$EPOCHREALTIME
  lock-acquire --wait 60 "$U" -- touch got 2>waiter.err &
  waiter=$!
  ran "$waiter"
  kill -TERM "$waiter"
  rc=0 && wait "$waiter" || rc=$?
  took=$(ms_since "$start")
  sandbox revive "$ETCD_DIR" 1
  cat waiter.err >&2
  [ "$rc" = 143 ]
  ((took < 30000))
  [ ! -f got ]
  run -1 lock-status "$U"
}

@test "no endpoint answering for longer than --timeout: exit 4 at the timeout, not before, nothing written" {
  state-set "${U}s" n:=1
  sandbox kill "$ETCD_DIR" 1 KILL
  start=$EPOCHREALTIME
  run -4 --separate-stderr lock-acquire --timeout 2 --pid "$(live)" "$U"
  took=$(ms_since "$start")
  [[ $stderr == "lock-acquire: cannot connect to '$ENDPOINTS': Connection refused" ]]
  ((took >= 2000 && took < 20000))
  start=$EPOCHREALTIME
  run -4 --separate-stderr state-set --timeout 2 "${U}s" n+=1
  took=$(ms_since "$start")
  [[ $stderr == "state-set: cannot connect to '$ENDPOINTS': Connection refused" ]]
  ((took >= 2000 && took < 20000))
  # a waiter: its --wait, then --timeout more at the moment it must answer
  start=$EPOCHREALTIME
  run -4 --separate-stderr lock-acquire --wait 1 --timeout 2 --pid "$(live)" "$U"
  took=$(ms_since "$start")
  [[ $stderr == "lock-acquire: cannot connect to '$ENDPOINTS': Connection refused" ]]
  ((took >= 3000 && took < 20000))
  sandbox revive "$ETCD_DIR" 1
  run -0 state-get "${U}s" n
  assert_output 1
  run -1 lock-status "$U"
}

# blocking_agent: ./work.sh, an agent that logs its item and worker, marks
# block.ITEM and works until go.ITEM appears (at most 60 s)
blocking_agent() {
  drain=${LOOPKIT_SCRIPTS:-$LOOPKIT_SOURCE/scripts}/drain-engine
  cat >work.sh <<'AGENT'
#!/usr/bin/env bash
echo "$LOOPKIT_ITEM ${WORKER:-}" >>worked.log
touch "block.$LOOPKIT_ITEM"
for ((i = 0; i < 600; i++)); do [[ -e go.$LOOPKIT_ITEM ]] && break; sleep 0.1; done
AGENT
  chmod +x work.sh
}

# worker NAME: a drain worker NAME on the etcd state and locks, in the
# background (its pid in the variable NAME, its words in NAME.log)
worker() {
  WORKER=$1 "$drain" --next 'cat ready.txt' --state "${U}/atari" --locks "$D" --poll 0.1 -- ./work.sh 2>"$1.log" &
  printf -v "$1" %s "$!"
}

# busy_and_idle ITEM: worker a busy on ITEM (the only one listed), then
# worker b idle, waiting for it
busy_and_idle() {
  printf '%s\n' "$1" >ready.txt
  worker a
  wait_for "block.$1" || { cat a.log >&2; false; }
  worker b
  wait_grep 'waiting for 1 item' b.log
}

# workers_end_well: workers a and b end with status 0
workers_end_well() {
  local w rc
  for w in a b; do
    rc=0 && wait "${!w}" || rc=$?
    cat "$w.log" >&2
    [ "$rc" = 0 ]
  done
}

@test "drain-engine: an idle worker rides out a restart at its next calls, the worker in the middle of an item too" {
  blocking_agent
  busy_and_idle only # b polls for the item a holds: a state read and a lock attempt each time
  outage KILL
  touch go.only
  workers_end_well
  run -0 state-get "${U}/atari" history.only.status status completion_reason
  assert_output $'completed\nstopped\ndrained'
  run -0 cat worked.log
  assert_output 'only a'
}

# outage_shim TOOL MATCH NAME: ./shim/TOOL, the tool that, called with
# arguments matching the glob MATCH, first stops etcd (once: NAME), starts
# it again 7 s later (longer than a call's --timeout, 5 s; shorter than the
# lease, 60 s) in the background (outage.NAME.done once it answers),
# then runs: the call is made while etcd is down. One outage at a time. The
# other tools link to LOOPKIT_BIN's.
outage_shim() {
  mkdir -p shim
  for t in "$LOOPKIT_BIN"/*; do [[ -e shim/${t##*/} ]] || ln -s "$t" shim/; done
  rm -f "shim/$1"
  cat >"shim/$1" <<SHIM
#!/usr/bin/env bash
case "\$*" in
  $2)
    # an earlier outage over first (its etcd back and answering): bounded, 60 s
    for ((i = 0; i < 600; i++)); do
      busy=0
      for d in "$PWD"/outage.*; do if [[ -d \$d && ! -e \$d.done ]]; then busy=1; fi; done
      ((busy)) || break
      sleep 0.1
    done
    if mkdir "$PWD/outage.$3" 2>/dev/null; then
      "$LOOPKIT_SOURCE/tests/etcd/etcd-sandbox" kill "$ETCD_DIR" 1 KILL
      (sleep 7; "$LOOPKIT_SOURCE/tests/etcd/etcd-sandbox" revive "$ETCD_DIR" 1; touch "$PWD/outage.$3.done") </dev/null >/dev/null 2>&1 3>&- &
    fi ;;
esac
exec "$LOOPKIT_BIN/$1" "\$@"
SHIM
  chmod +x "shim/$1"
}

@test "drain-engine: an idle worker rides out restarts longer than a call's timeout that fall on its next lock-acquire and on its next state write" {
  blocking_agent
  printf 'one\n' >ready.txt
  worker a
  wait_for block.one || { cat a.log >&2; false; }
  # b, idle: etcd goes down as it tries to take item two's lock, and again
  # as it writes its claim of the item
  outage_shim lock-acquire '*two.lock*' acquire
  outage_shim state-set '*two*working*' claim
  LOOPKIT_BIN=$PWD/shim worker b
  wait_grep 'waiting for 1 item' b.log
  touch go.two
  printf 'one\ntwo\n' >ready.txt
  wait_for outage.claim.done || { cat b.log >&2; false; }
  [ -e outage.acquire.done ] || { ls; cat b.log a.log >&2; false; }
  touch go.one
  workers_end_well
  run -0 state-get "${U}/atari" history.one.status history.two.status status
  assert_output $'completed\ncompleted\nstopped'
  run -0 sort worked.log
  assert_output $'one a\ntwo b'
}

@test "drain-engine: an idle worker polling for a held item rides out an outage longer than a call's timeout" {
  blocking_agent
  busy_and_idle only # b reads the state at each poll: the reads fall in the outage
  sandbox kill "$ETCD_DIR" 1 KILL
  sleep 7 # the outage: longer than a call's --timeout (5 s), shorter than the lease (60 s)
  sandbox revive "$ETCD_DIR" 1
  touch go.only
  workers_end_well
  grep -q 'could not read the state: etcd out of reach; reading again' b.log
  run -0 state-get "${U}/atari" history.only.status status completion_reason
  assert_output $'completed\nstopped\ndrained'
  run -0 cat worked.log
  assert_output 'only a'
}
