#!/usr/bin/env bats
# The lock tools on etcd keys (contract section 9), against a real etcd
# started on loopback by tests/etcd/etcd-sandbox for this file alone.

load helpers
setup_file() { etcd_start; }
teardown_file() { etcd_stop; }
setup() {
  etcd_setup
  U="${D}a"
}

etcdctl3() { ETCDCTL_API=3 etcdctl --endpoints "$ENDPOINTS" "$@"; }

# within_seconds S SINCE: less than S seconds have passed since SINCE (an
# $EPOCHREALTIME), in bash's integer arithmetic: no bc(1) on a bare Debian
within_seconds() {
  local now=$EPOCHREALTIME since=$2
  ((${now/./} - ${since/./} < $1 * 1000000))
}

# keepers of this test's keys still running
keepers() { pgrep -f "lock-acquire .*lk-test/$BATS_TEST_NUMBER/" || true; }

@test "lock-acquire without COMMAND: a keeper keeps the lease alive past its TTL until lock-release" {
  owner=$(live)
  run -0 --separate-stderr lock-acquire -v --pid "$owner" --ttl 2 "$U"
  [[ $stderr == "lock-acquire: got '$U' after "*"s: created" ]]
  run -0 lock-status "$U"
  assert_output --regexp "^$U: live, session 'a', pid $owner on .*, taken [0-9]+s ago, revision [0-9]+, lease expires in [0-9]+s$"
  # the lease outlives its TTL of 2 s: the keeper renews it
  sleep 3
  run -0 lock-status "$U"
  [ -n "$(keepers)" ]
  run -0 lock-release --pid "$owner" "$U"
  run -1 lock-status "$U"
  assert_output "$U: free"
  # the keeper sees the lease gone and ends
  for _ in $(seq 50); do [ -z "$(keepers)" ] && break; sleep 0.1; done
  [ -z "$(keepers)" ]
}

@test "lock-acquire on a held key: exit 1 naming the holder, -E N, --json prints the holder; --no-keeper starts none" {
  owner=$(live)
  run -0 lock-acquire --no-keeper --pid "$owner" "$U"
  [ -z "$(keepers)" ]
  other=$(live)
  run -1 --separate-stderr lock-acquire --pid "$other" "$U"
  [[ $stderr == "lock-acquire: cannot acquire '$U': held by pid $owner on "*"(session 'a') since "* ]]
  run -7 lock-acquire -E 7 --pid "$other" "$U"
  run -1 --separate-stderr lock-acquire -j --pid "$other" "$U"
  [ "$(jq -r '.pid, .state, .file' <<<"$output")" = "$owner"$'\n'live$'\n'"$U" ]
  # acquiring our own lock again is exit 0
  run -0 lock-acquire --no-keeper --pid "$owner" "$U"
  # lock-release of another's lock: exit 1, it stays; --force removes it
  run -1 lock-release --pid "$other" "$U"
  run -0 lock-status -q "$U"
  run -0 lock-release --force --pid "$other" "$U"
  run -1 lock-status -q "$U"
  run -1 --separate-stderr lock-release --pid "$owner" "$U"
  assert_equal "$stderr" "lock-release: no lock '$U'"
}

@test "lock-acquire -- COMMAND: LOOPKIT_LOCK_REVISION is the lock's revision, the key goes when COMMAND ends" {
  run -0 lock-acquire --ttl 2 "$U" -- sh -c 'echo "$LOOPKIT_LOCK_REVISION" >rev; lock-status -j "$1" >status; exit 0' sh "$U"
  [ "$(cat rev)" = "$(jq .revision status)" ]
  run -1 lock-status "$U"
  # the command's status is lock-acquire's
  run -3 lock-acquire "$U" -- sh -c 'exit 3'
  # each new holder's token is larger
  lock-acquire "$U" -- sh -c 'echo "$LOOPKIT_LOCK_REVISION" >rev2'
  [ "$(cat rev2)" -gt "$(cat rev)" ]
}

@test "20 contenders at once: exactly one wins" {
  for i in $(seq 20); do
    (rc=0 && lock-acquire --no-keeper --pid "$(live)" "$U" >/dev/null 2>&1 || rc=$?; echo "$rc" >"rc.$i") &
  done
  wait
  [ "$(cat rc.* | grep -c '^0$')" = 1 ]
  [ "$(cat rc.* | grep -c '^1$')" = 19 ]
}

@test "a holder killed with -9 loses the lock when its TTL runs out, nobody reaps it" {
  lock-acquire --ttl 2 "$U" -- sleep 300 &
  holder=$!
  echo "$holder" >>"$W.pids"
  for _ in $(seq 50); do lock-status -q "$U" && break; sleep 0.1; done
  run -0 lock-status -q "$U"
  child=$(pgrep -P "$holder" sleep)
  echo "$child" >>"$W.pids"
  kill -9 "$holder"
  # nobody released it: the key stays (stale here, its owner is gone; live to
  # other hosts) until the lease runs out, within TTL + 2 s
  run -1 lock-status "$U"
  assert_output --partial ": stale (pid $holder is not running)"
  for _ in $(seq 40); do [[ $(lock-status "$U") == *": free" ]] && break; sleep 0.1; done
  run -1 lock-status "$U"
  assert_output "$U: free"
  run -0 lock-acquire --no-keeper --pid "$(live)" "$U"
}

@test "a holder stopped past its TTL loses the lock: COMMAND gets SIGTERM, exit 4 'lock lost'" {
  lock-acquire --ttl 2 "$U" -- sh -c 'trap "echo term >got; kill \$!; exit 143" TERM; sleep 300 & wait' 2>stderr &
  holder=$!
  echo "$holder" >>"$W.pids"
  for _ in $(seq 50); do lock-status -q "$U" && break; sleep 0.1; done
  kill -STOP "$holder"
  for _ in $(seq 60); do lock-status -q "$U" || break; sleep 0.1; done
  run -1 lock-status -q "$U"
  kill -CONT "$holder"
  rc=0 && wait "$holder" || rc=$?
  [ "$rc" = 4 ]
  grep -q term got
  grep -q "lock lost" stderr
}

@test "a dead owner of this host: taken over at once, or reaped; a live one is kept" {
  dead=$(dead_pid)
  rec=$(jq -cn --arg h "$(uname -n)" --argjson p "$dead" '{session:"a",pid:$p,host:$h,started_at:"2025-01-10T10:00:00Z"}')
  etcdctl3 put "/lk-test/$BATS_TEST_NUMBER/a" "$rec" >/dev/null
  etcdctl3 put "/lk-test/$BATS_TEST_NUMBER/b" "$rec" >/dev/null
  run -1 lock-status "$U"
  assert_output --partial "stale (pid $dead is not running)"
  run -0 --separate-stderr lock-acquire -v --no-keeper --pid "$(live)" "$U"
  [[ $stderr == *"took over a stale lock: pid $dead is not running" ]]
  run -0 lock-reap -n "$D"
  assert_output --partial "would remove ${D}b:"
  run -0 lock-reap "$D"
  assert_output --regexp "^removed ${D}b: .*pid $dead is not running$"
  run -0 lock-status "$D"
  assert_output --regexp "^${D}a: live"
}

@test "lock-release removes only the key it judged: a key put by hand needs --force, a lock taken over meanwhile stays" {
  rec=$(jq -cn --arg h "$(uname -n)" --argjson p "$(live)" '{session:"a",pid:$p,host:$h,started_at:"2025-01-10T10:00:00Z"}')
  etcdctl3 put "/lk-test/$BATS_TEST_NUMBER/a" "$rec" >/dev/null
  run -1 lock-release --pid "$(live)" "$U"
  run -0 lock-release --force "$U"
  [ -z "$(etcdctl3 get --print-value-only "/lk-test/$BATS_TEST_NUMBER/a")" ]
  # COMMAND's lock is forced away and taken by another before COMMAND ends:
  # lock-acquire's own release at the end must leave the new holder's key
  other=$(live)
  run -0 --separate-stderr lock-acquire "$U" -- sh -c 'lock-release --force "$1" && lock-acquire --no-keeper --pid "$2" "$1"' sh "$U" "$other"
  run -0 lock-status "$U"
  assert_output --partial "pid $other"
  run -0 lock-release --pid "$other" "$U"
  run -1 lock-status -q "$U"
}

@test "lock-heartbeat: one keep-alive when ours, exit 1 when not; --every ends at release" {
  owner=$(live)
  run -0 lock-acquire --no-keeper --ttl 2 --pid "$owner" "$U"
  run -0 lock-heartbeat --pid "$owner" "$U"
  run -1 --separate-stderr lock-heartbeat --pid "$(live)" "$U"
  [[ $stderr == *"is not ours"* ]]
  lock-heartbeat --every 0.5 --pid "$owner" "$U" &
  beater=$!
  sleep 3
  run -0 lock-status -q "$U"
  run -0 lock-release --pid "$owner" "$U"
  rc=0 && wait "$beater" || rc=$?
  [ "$rc" = 0 ]
}

@test "etcd lock URLs: --ttl below 2 is exit 2, a folder to lock-acquire is exit 2, no etcd is exit 4" {
  run -2 lock-acquire --ttl 1 "$U"
  run -2 lock-acquire "$D"
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  run -4 --separate-stderr lock-acquire --timeout 1 "etcd://127.0.0.1:$port/k"
  [[ $stderr == *"127.0.0.1:$port"* ]]
  run -4 lock-status --timeout 1 "etcd://127.0.0.1:$port/k"
}

@test "issue 22: a lock is dated by the clock read when it is got; the held JSON names revision and ttl" {
  echo "$LOOPKIT_NOW" >clock
  holder=$(live) waiter=$(live)
  LOOPKIT_NOW=@clock lock-acquire --no-keeper --pid "$holder" "$U"
  run -1 --separate-stderr lock-acquire -j --pid "$waiter" "$U"
  [ "$(jq -r '.pid, (.revision > 0), (.ttl > 0)' <<<"$output")" = "$holder"$'\ntrue\ntrue' ]
  echo $((LOOPKIT_NOW + 4)) >clock
  lock-release --pid "$holder" "$U"
  LOOPKIT_NOW=@clock run -0 lock-acquire --no-keeper -j --wait 10 --pid "$waiter" "$U"
  [ "$(jq -r .started_at <<<"$output")" = "$(date -u -d @$((LOOPKIT_NOW + 4)) +%Y-%m-%dT%H:%M:%SZ)" ]
}

@test "issue 26: a keeper leaves a dead owner's key to its lease, and renews nothing for a stopped owner" {
  owner=$(live)
  lock-acquire --ttl 2 --pid "$owner" "$U"
  [ -n "$(keepers)" ]
  rec=$(etcdget "/lk-test/$BATS_TEST_NUMBER/a")
  kill -9 "$owner"
  # the keeper sees its owner die and ends, without deleting the key:
  # what the owner started may still run
  for _ in $(seq 100); do [ -z "$(keepers)" ] && break; sleep 0.1; done
  [ -z "$(keepers)" ]
  assert_equal "$(etcdget "/lk-test/$BATS_TEST_NUMBER/a")" "$rec"
  # the lease runs out by itself
  for _ in $(seq 100); do [[ $(lock-status "$U") == *": free" ]] && break; sleep 0.1; done
  run -1 lock-status "$U"
  assert_output "$U: free"
  # a stopped owner does no work: its keeper lets the lease run out
  owner=$(live)
  lock-acquire --ttl 2 --pid "$owner" "$U"
  kill -STOP "$owner"
  for _ in $(seq 100); do [[ $(lock-status "$U") == *": free" ]] && break; sleep 0.1; done
  run -1 lock-status "$U"
  assert_output "$U: free"
  # resumed, it finds the lease gone: the keeper ends
  kill -CONT "$owner"
  for _ in $(seq 100); do [ -z "$(keepers)" ] && break; sleep 0.1; done
  [ -z "$(keepers)" ]
}

# a waiter's trace: until it has sent REQUEST (bounded: 30 s)
sent() {
  local i
  for ((i = 0; i < 300; i++)); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
  echo "$1: never sent $2" >&2
  return 1
}
# the requests sent after the watch, one path a line
after_watch() { sed -n '/\/v3\/watch/,$p' "$1" | grep -o '/v3/kv/[a-z]*\|/v3/lease/[a-z]*' || true; }

@test "issue 24: a waiter watches the held key from the revision it read and takes it at release, polling nothing meanwhile" {
  need_strace
  holder=$(live) waiter=$(live)
  run -0 lock-acquire --no-keeper --pid "$holder" "$U"
  strace -f -s 64 -e trace=sendmsg -o trace lock-acquire --no-keeper --wait 60 --pid "$waiter" "$U" &
  traced=$!
  sent trace /v3/watch
  # a poller would have tried again several times by now (backoff 10 ms .. 0.5 s)
  sleep 1.5
  run -0 after_watch trace
  assert_output ""
  run -0 lock-release --pid "$holder" "$U"
  rc=0 && wait "$traced" || rc=$?
  [ "$rc" = 0 ]
  run -0 lock-status "$U"
  assert_output --partial "pid $waiter on"
  # one watch; after it only the create that got the lock
  [ "$(grep -c /v3/watch trace)" = 1 ]
  run -0 after_watch trace
  assert_output "/v3/kv/txn"
}

@test "issue 24: a waiter whose watch breaks goes back to polling and still gets the lock" {
  need_strace
  ss -V >/dev/null 2>&1 || skip "ss is not installed"
  holder=$(live) waiter=$(live)
  run -0 lock-acquire --no-keeper --pid "$holder" "$U"
  strace -f -s 64 -e trace=sendmsg -o trace lock-acquire --no-keeper --wait 60 --pid "$waiter" "$U" &
  traced=$!
  sent trace /v3/watch
  pid=$(pgrep -P "$traced")
  # end the waiter's connections to etcd under it, the watch's among them
  port=${ENDPOINTS##*:}
  ss -K -Htnp "dport = :$port" | grep -q "pid=$pid," || skip "ss -K cannot end sockets here"
  # back to polling: attempts follow the broken watch while the lock is held
  for _ in $(seq 300); do [ "$(after_watch trace | grep -c txn)" -ge 2 ] && break; sleep 0.1; done
  [ "$(after_watch trace | grep -c txn)" -ge 2 ]
  run -0 lock-release --pid "$holder" "$U"
  rc=0 && wait "$traced" || rc=$?
  [ "$rc" = 0 ]
  run -0 lock-status "$U"
  assert_output --partial "pid $waiter on"
}

@test "issue 24: a termination signal ends a watching wait with 128+N, the key untouched; --wait's deadline ends it with exit 1" {
  holder=$(live)
  run -0 lock-acquire --no-keeper --pid "$holder" "$U"
  before=$(etcdctl3 get -w json "${U#etcd://"$ENDPOINTS"}" | jq -c '.kvs[0].mod_revision')
  lock-acquire -w 60 "$U" -- touch ran &
  waiter=$!
  wait_exec "$waiter" loopkit-etcd
  # the waiter is in its watch once it has a second connection to etcd
  port=${ENDPOINTS##*:}
  for _ in $(seq 300); do [ "$(ss -Htnp "dport = :$port" | grep -c "pid=$waiter,")" -ge 2 ] && break; sleep 0.1; done
  kill -TERM "$waiter"
  rc=0 && wait "$waiter" || rc=$?
  [ "$rc" = 143 ]
  [ ! -e ran ]
  [ "$(etcdctl3 get -w json "${U#etcd://"$ENDPOINTS"}" | jq -c '.kvs[0].mod_revision')" = "$before" ]
  run -1 --separate-stderr timeout 30 lock-acquire --wait 1 --pid "$$" "$U"
  [[ $stderr == *"within 1s: held by pid $holder"* ]]
}

# the line of waiters of this test's key a: their tickets, and a wait for N
tickets() { etcdctl3 get --prefix --keys-only "/lk-test/$BATS_TEST_NUMBER/.a.wait." | sed '/^$/d'; }
# waits_in_line N ARGS...: lock-acquire ARGS in the background, back once
# it is in the line with N tickets in all; its pid in $waiting
waits_in_line() {
  local n=$1
  shift
  lock-acquire "$@" &
  waiting=$!
  tickets_reach "$n"
}
# kill_waiting PID: kill -9 a waiter once it runs loopkit-etcd (not before
# its hop, when the kill would end a process that never joined the line)
kill_waiting() {
  wait_exec "$1" loopkit-etcd
  kill -9 "$1"
}
# plant_ticket NAME TEXT: a waiter's ticket in lock NAME's line, on a lease
# of its own (600 s), as another loopkit would put it; prints its key
plant_ticket() {
  local lease key
  lease=$(etcdctl3 lease grant 600 | awk '{ print $2 }')
  key=$(printf '/lk-test/%s/.%s.wait.%016x' "$BATS_TEST_NUMBER" "$1" "0x$lease")
  etcdctl3 put --lease="$lease" "$key" "$2" >/dev/null
  echo "$key"
}
tickets_reach() {
  local i
  for ((i = 0; i < 300; i++)); do [ "$(tickets | wc -l)" -ge "$1" ] && return 0; sleep 0.1; done
  echo "never $1 tickets in line" >&2
  return 1
}

@test "issue 24: waiters of an etcd lock take it first come, first served, each leaving the line with the lock" {
  holder=$(live)
  run -0 lock-acquire --no-keeper --pid "$holder" "$U"
  pids=()
  for n in 1 2 3 4; do
    lock-acquire --wait 60 "$U" -- sh -c "echo $n >>order" &
    pids+=("$!")
    tickets_reach "$n"
  done
  # a ticket is on its waiter's lease, and says who waits, on which host
  key=$(tickets | head -1)
  [[ $(etcdctl3 get --print-value-only "$key") =~ ^[0-9]+\ [0-9]+\ [0-9a-f-]+\ $(uname -n)$ ]]
  [ "$(etcdctl3 get -w json "$key" | jq '.kvs[0].lease')" != null ]
  run -0 lock-release --pid "$holder" "$U"
  for p in "${pids[@]}"; do wait "$p"; done
  assert_equal "$(cat order)" $'1\n2\n3\n4'
  [ -z "$(tickets)" ]
  run -1 lock-status -q "$U"
}

@test "issue 24: a stopped first waiter of an etcd lock holds the line no longer than the grace" {
  holder=$(live)
  run -0 lock-acquire --no-keeper --pid "$holder" "$U"
  waits_in_line 1 --wait 60 "$U" -- sh -c 'echo 1 >>order'
  first=$waiting
  waits_in_line 2 --wait 60 "$U" -- sh -c 'echo 2 >>order'
  second=$waiting
  wait_exec "$first" loopkit-etcd
  kill -STOP "$first"
  run -0 lock-release --pid "$holder" "$U"
  # the second takes the lock once it has been free for the grace (2 s)
  rc=0 && wait "$second" || rc=$?
  kill -CONT "$first"
  [ "$rc" = 0 ]
  rc=0 && wait "$first" || rc=$?
  [ "$rc" = 0 ]
  assert_equal "$(cat order)" $'2\n1'
  [ -z "$(tickets)" ]
}

@test "issue 24: lock-status and lock-reap on an etcd folder list no ticket, and leave a waiter's alone" {
  holder=$(live)
  run -0 lock-acquire --no-keeper --pid "$holder" "$U"
  waits_in_line 1 --no-keeper --wait 60 --pid "$(live)" "$U"
  waiter=$waiting
  ticket=$(tickets)
  run -0 lock-status "$D"
  [ "${#lines[@]}" = 1 ]
  assert_output --regexp "^${D}a: live, session 'a', pid $holder on "
  run -0 lock-status -j "$D"
  [ "$(jq -s 'length' <<<"$output")" = 1 ]
  run -0 lock-reap -n "$D"
  refute_output --partial wait
  run -0 lock-reap --stale-after 0 "$D"
  refute_output --partial wait
  assert_equal "$(tickets)" "$ticket"
  run -0 lock-release --pid "$holder" "$U"
  wait "$waiter"
  [ -z "$(tickets)" ]
}

@test "issue 24: a waiter that times out or is killed leaves the etcd lock's line" {
  holder=$(live)
  run -0 lock-acquire --no-keeper --pid "$holder" "$U"
  run -1 --separate-stderr lock-acquire --wait 1 --pid "$$" "$U"
  [ -z "$(tickets)" ]
  # killed -9: its ticket goes with its lease
  waits_in_line 1 --ttl 2 --wait 60 "$U" -- true
  waiter=$waiting
  kill_waiting "$waiter"
  for _ in $(seq 100); do [ -z "$(tickets)" ] && break; sleep 0.1; done
  [ -z "$(tickets)" ]
}

@test "issue 24: a waiter killed -9 ahead in an etcd lock's line is passed over at once, its ticket removed" {
  holder=$(live)
  run -0 lock-acquire --no-keeper --pid "$holder" "$U"
  waits_in_line 1 --ttl 600 --wait 600 "$U" -- true
  killed=$waiting
  dead=$(tickets)
  waits_in_line 2 --no-keeper --wait 600 --pid "$(live)" "$U"
  waiter=$waiting
  kill_waiting "$killed"
  run -0 lock-release --pid "$holder" "$U"
  wait "$waiter"
  # its lease (600 s) would have kept it in line: the waiter behind removed it
  run -0 etcdctl3 get --keys-only "$dead"
  assert_output ""
  [ -z "$(tickets)" ]
}

@test "issue 24: waiters behind a waiter killed -9 keep their order, whichever of them removes its ticket" {
  holder=$(live)
  run -0 lock-acquire --no-keeper --pid "$holder" "$U"
  waits_in_line 1 --ttl 600 --wait 600 "$U" -- true
  killed=$waiting
  waits_in_line 2 --wait 600 "$U" -- sh -c 'echo 2 >>order'
  second=$waiting
  waits_in_line 3 --wait 600 "$U" -- sh -c 'echo 3 >>order'
  third=$waiting
  kill_waiting "$killed"
  released=$EPOCHREALTIME
  run -0 lock-release --pid "$holder" "$U"
  wait "$second"
  wait "$third"
  # both judge the dead ticket at the release and race to remove it; the
  # second's line is clear either way, not held for the grace (2 s)
  assert_equal "$(cat order)" $'2\n3'
  within_seconds 2 "$released"
  [ -z "$(tickets)" ]
}

@test "issue 24: tickets in an etcd lock's line that this host cannot judge are waited out for the grace, and kept" {
  holder=$(live)
  run -0 lock-acquire --no-keeper --pid "$holder" "$U"
  # ahead of the waiter: another host's waiter, and an older loopkit's
  # ticket with no host, whose pids are not running here
  other=$(plant_ticket a "999999 1 - elsewhere.invalid")
  older=$(plant_ticket a "999999 1")
  waits_in_line 3 --no-keeper --wait 600 --pid "$(live)" "$U"
  waiter=$waiting
  run -0 lock-release --pid "$holder" "$U"
  wait "$waiter"
  assert_equal "$(tickets | sort)" "$(printf '%s\n' "$other" "$older" | sort)"
}

@test "issue 24: the line of lock NAME.wait.X, under the same prefix, holds no waiter of lock NAME" {
  holder=$(live)
  run -0 lock-acquire --no-keeper --pid "$holder" "$U"
  # older than the waiter's ticket: a waiter of lock "a.wait.x", whose
  # tickets start with lock a's line's prefix, still waiting
  other=$(plant_ticket a.wait.x "$(live) - - $(uname -n)")
  waits_in_line 2 --no-keeper --wait 60 --pid "$(live)" "$U"
  waiter=$waiting
  released=$EPOCHREALTIME
  run -0 lock-release --pid "$holder" "$U"
  wait "$waiter"
  # taken at the release: before, that key held this line for the grace
  # (2 s from the release's delete), as a waiter ahead in it
  within_seconds 2 "$released"
  run -0 lock-status -q "$U"
  assert_equal "$(tickets)" "$other"
}

# issue 39: a record that cannot be printed gives the key up again (exit 4)
@test "lock-acquire --json whose record cannot be printed: exit 4, the key given up, no keeper left" {
  owner=$(live)
  run -4 --separate-stderr bash -c "lock-acquire --json --pid $owner '$U' >/dev/full"
  assert_equal "$stderr" "lock-acquire: cannot write to standard output: No space left on device"
  run -1 lock-status "$U"
  assert_output "$U: free"
  run -4 --separate-stderr broken_pipe lock-acquire --json --pid "$owner" "$U"
  run -1 lock-status -q "$U"
  [ -z "$(keepers)" ]
  run -0 lock-acquire --no-keeper --pid "$owner" "$U"
  run -0 lock-release --pid "$owner" "$U"
}
