#!/usr/bin/env bats
# lock-heartbeat: refresh only our own lock, once or until the owner dies.
load helpers

# owned_and_beaten: b.lock taken for a live process (its pid in owner) and
# a beater every 0.05 s on it (its pid in hb, its stderr in err), once it
# has beaten
owned_and_beaten() {
  owner=$(live)
  lock-acquire --pid "$owner" b.lock
  lock-heartbeat --every 0.05 --pid "$owner" b.lock 2>err &
  hb=$!
  wait_grep heartbeat_every b.lock
}

# ended_with STATUS [MESSAGE]: the beater's exit status and its stderr
ended_with() {
  local rc=0
  wait "$hb" || rc=$?
  assert_equal "$rc" "$1"
  assert_equal "$(cat err)" "${2:-}"
}

@test "refreshes heartbeat and heartbeat_epoch of our own lock, keeping the rest" {
  lock-acquire --pid $$ a.lock
  LOOPKIT_NOW=1736503600 run -0 lock-heartbeat --pid $$ a.lock
  assert_equal "$(state-get a.lock started_at heartbeat heartbeat_epoch pid)" \
    $'2025-01-10T10:05:30Z\n2025-01-10T10:06:40Z\n1736503600\n'"$$"
}

@test "the owner defaults to the calling shell" {
  run -0 bash -c 'lock-acquire a.lock && LOOPKIT_NOW=1736503600 lock-heartbeat a.lock && true'
  assert_equal "$(state-get a.lock heartbeat_epoch)" 1736503600
}

@test "someone else's lock is left untouched, and named" {
  holder=$(live)
  lock-acquire --pid "$holder" a.lock
  cp a.lock before
  run -1 --separate-stderr lock-heartbeat --pid $$ a.lock
  [[ $stderr == "lock-heartbeat: 'a.lock' is not ours (pid $$): held by pid $holder"* ]]
  cmp a.lock before
}

@test "a lock with our pid but another start time is not ours" {
  printf '{"session":"s","pid":%s,"pid_start":1,"heartbeat_epoch":1}\n' $$ >a.lock
  cp a.lock before
  run -1 lock-heartbeat --pid $$ a.lock
  cmp a.lock before
}

@test "a missing lock, or a dead owner, is exit 1" {
  run -1 --separate-stderr lock-heartbeat --pid $$ missing.lock
  assert_equal "$stderr" "lock-heartbeat: no lock 'missing.lock'"
  run -1 lock-heartbeat --pid "$(dead_pid)" missing.lock
  run -2 lock-heartbeat --every 0 --pid $$ missing.lock
}

@test "a seed-format lock with our pid is ours and gets a heartbeat" {
  printf '{"session":"s","pid":%s,"started_at":"2025-01-10T10:00:00Z"}\n' $$ >a.lock
  run -0 lock-heartbeat --pid $$ a.lock
  assert_equal "$(state-get a.lock heartbeat_epoch)" 1736503530
}

@test "--every leaves promptly once the owner dies" {
  sleep 3 & owner=$!
  lock-acquire --pid "$owner" b.lock
  # an interval far longer than the test: only the owner's death ends it
  SECONDS=0
  run -0 lock-heartbeat --every 600 --pid "$owner" b.lock
  [ "$SECONDS" -lt 60 ]
}

@test "--every with an owner already gone exits 0 without touching the lock" {
  printf '{"session":"s","pid":%s}\n' "$(dead_pid)" >a.lock
  cp a.lock before
  run -0 lock-heartbeat --every 1 --pid "$(dead_pid)" a.lock
  cmp a.lock before
}

@test "--every ends with exit 0 when its owner releases the lock" {
  owned_and_beaten
  lock-release --pid "$owner" b.lock
  ended_with 0
  # the mark the release left for it is gone with it
  assert [ ! -e .b.lock.released ]
}

@test "--every ends with exit 0 when its owner released the lock and another took it since" {
  owner=$(live)
  lock-acquire --pid "$owner" locks/b.lock
  lock-heartbeat --every 0.05 --pid "$owner" locks/b.lock 2>err & hb=$!
  wait_grep heartbeat_every locks/b.lock
  lock-release --pid "$owner" locks/b.lock
  lock-acquire --pid $$ locks/b.lock
  rc=0; wait "$hb" || rc=$?
  assert_equal "$rc" 0
  assert_equal "$(state-get locks/b.lock pid)" "$$"
  assert [ ! -e locks/.b.lock.released ]
}

@test "--every stops with exit 1 when the lock is deleted under it" {
  owned_and_beaten
  rm b.lock
  ended_with 1 "lock-heartbeat: no lock 'b.lock'"
}

@test "--every stops with exit 1 when someone else forces the lock away" {
  owned_and_beaten
  lock-release --force b.lock
  ended_with 1 "lock-heartbeat: no lock 'b.lock'"
  assert [ ! -e .b.lock.released ]
}

@test "the mark of an earlier release does not make a later deletion clean" {
  owned_and_beaten
  kill "$hb"; wait "$hb" || true
  # as a release whose beater died before reading its mark leaves it
  cp b.lock .b.lock.released
  lock-release --pid "$owner" b.lock
  LOOPKIT_NOW=$((LOOPKIT_NOW + 60)) lock-acquire --pid "$owner" b.lock
  LOOPKIT_NOW=$((LOOPKIT_NOW + 60)) lock-heartbeat --every 0.05 --pid "$owner" b.lock 2>err & hb=$!
  wait_grep heartbeat_every b.lock
  rm b.lock
  ended_with 1 "lock-heartbeat: no lock 'b.lock'"
}

@test "a link at the mark's name is never written through, and the release goes on" {
  owned_and_beaten
  echo keep >target
  ln -s target .b.lock.released
  run -0 lock-release --pid "$owner" b.lock
  assert [ ! -e b.lock ]
  assert_equal "$(cat target)" keep
  rc=0; wait "$hb" || rc=$?
  assert_equal "$rc" 1
}

@test "--every stops with exit 1 when the lock is taken over" {
  owner=$(live)
  lock-acquire --pid "$owner" b.lock
  lock-heartbeat --every 0.05 --pid "$owner" b.lock 2>/dev/null & hb=$!
  lock-release --force b.lock
  lock-acquire --pid $$ b.lock
  rc=0; wait "$hb" || rc=$?
  assert_equal "$rc" 1
  assert_equal "$(state-get b.lock pid)" "$$"
}

@test "a failed refresh exits 4 and leaves the lock as it was" {
  need_strace
  lock-acquire --pid $$ a.lock
  cp a.lock before
  for when in 1 2; do
    LOOPKIT_NOW=1736503600 run -4 strace -f -o /dev/null -e trace=fsync -e inject=fsync:error=EIO:when=$when lock-heartbeat --pid $$ a.lock
    cmp a.lock before
  done
}

@test "a lock deleted while its beat is being written is not brought back" {
  need_strace
  lock-acquire --pid $$ a.lock
  # the beat's rename is held 3 s, time enough to rm the lock under it (rm
  # takes no flock); a plain rename would recreate the lock it replaces
  strace -f -o /dev/null -e trace=rename,renameat,renameat2 \
    -e inject=rename,renameat,renameat2:delay_enter=3000000 lock-heartbeat --pid $$ a.lock 2>err &
  hb=$!
  wait_for .a.lock.tmp
  rm a.lock
  ended_with 1 "lock-heartbeat: no lock 'a.lock'"
  assert [ ! -e a.lock ]
  assert [ ! -e .a.lock.tmp ]
}

@test "a lock file that is a symlink or FIFO is refused, nothing written through it" {
  lock-acquire --pid $$ real.lock
  cp real.lock before
  ln -s real.lock x.lock
  run -4 --separate-stderr lock-heartbeat --pid $$ x.lock
  assert_equal "$stderr" "lock-heartbeat: cannot open 'x.lock': is a symbolic link"
  cmp real.lock before
  mkfifo f.lock
  run -4 timeout 10 lock-heartbeat --pid $$ --every 1 f.lock
}

@test "--every takes decimals up to 1e9, nothing else" {
  for bad in 1e300 1000000001 inf nan 0 -1 abc; do
    run -2 --separate-stderr lock-heartbeat --every "$bad" a.lock
    assert_equal "$stderr" "lock-heartbeat: --every: not a number from 0.01 to 1000000000: '$bad'"
  done
}

@test "a zombie owner gets no heartbeat" {
  z=$(zombie)
  printf '{"session":"z","pid":%s}\n' "$z" >z.lock
  cp z.lock before
  run -1 --separate-stderr lock-heartbeat --pid "$z" z.lock
  assert_equal "$stderr" "lock-heartbeat: cannot refresh 'z.lock': pid $z is not running"
  run -0 lock-heartbeat --pid "$z" --every 1 z.lock
  cmp z.lock before
}

@test "a release after its beater was stopped leaves no mark behind" {
  owned_and_beaten
  kill "$hb"; wait "$hb" || true
  rm err  # the beater's stderr, kept by owned_and_beaten
  run -0 lock-release --pid "$owner" b.lock
  assert [ ! -e .b.lock.released ]
  # nor does lock-acquire -- COMMAND, which beats for itself
  run -0 lock-acquire --heartbeat 0.05 c.lock -- sh -c 'while ! grep -q heartbeat_pid c.lock; do sleep 0.05; done'
  assert_equal "$(ls -A)" ""
}

@test "--heartbeat is --every, under the name lock-acquire gives it" {
  printf '{"session":"s","pid":%s}\n' "$(dead_pid)" >a.lock
  cp a.lock before
  run -0 lock-heartbeat --heartbeat 1 --pid "$(dead_pid)" a.lock
  cmp a.lock before
  run -2 --separate-stderr lock-heartbeat --heartbeat 0 a.lock
  assert_equal "$stderr" "lock-heartbeat: --every: not a number from 0.01 to 1000000000: '0'"
}

# issue 22: a predictable temporary name let anyone stop every beat
@test "another user's .a.lock.tmp in a sticky folder does not stop the beats, and leaves no stray" {
  [ "$(id -u)" = 0 ] || skip "needs root to give a file to another user"
  mkdir -m 1777 shared && cd shared
  lock-acquire --pid $$ a.lock
  echo planted >.a.lock.tmp
  chown 65534 .a.lock.tmp
  for now in 1736503600 1736503700; do
    LOOPKIT_NOW=$now run -0 lock-heartbeat --pid $$ a.lock
    run -0 state-get a.lock heartbeat_epoch
    assert_output "$now"
  done
  assert_equal "$(ls -A | sort | tr '\n' ' ')" ".a.lock.tmp a.lock "
  assert_equal "$(cat .a.lock.tmp)" planted
}

@test "a beat's own stray at .a.lock.tmp (killed between link and rename) goes with the next beat" {
  need_strace
  lock-acquire --pid $$ a.lock
  rc=0
  LOOPKIT_NOW=1736503600 strace -f -o /dev/null -e trace=rename,renameat,renameat2 \
    -e inject=rename,renameat,renameat2:signal=KILL lock-heartbeat --pid $$ a.lock 2>/dev/null || rc=$?
  [ "$rc" -ne 0 ]
  [ -e .a.lock.tmp ]
  LOOPKIT_NOW=1736503700 run -0 lock-heartbeat --pid $$ a.lock
  assert_equal "$(ls -A)" "a.lock"
}

# issue 24: a record's members are kept as their text, not as parsed values
@test "a beat keeps another tool's members as written and in their order, and writes one line" {
  printf '{\n  "pid": %s,\n  "n": 1.50,\n  "big": 123456789012345678901234567890,\n  "s": "\\u00e9",\n  "o": {"k": [1, "a b"]},\n  "heartbeat": "old"\n}\n' \
    $$ >a.lock
  LOOPKIT_NOW=1736503600 run -0 lock-heartbeat --pid $$ a.lock
  assert_equal "$(cat a.lock)" \
    '{"pid":'$$',"n":1.50,"big":123456789012345678901234567890,"s":"\u00e9","o":{"k":[1,"a b"]},"heartbeat":"2025-01-10T10:06:40Z","heartbeat_epoch":1736503600}'
}

# issue 39: ulimit -f is a full disk: exit 4 with the lock as it was
@test "ulimit -f: a beat that cannot be written is exit 4, the record unchanged" {
  lock-acquire --pid $$ a.lock
  cp a.lock before
  run -4 bash -c "ulimit -f 0; LOOPKIT_NOW=1736503600 lock-heartbeat --pid $$ a.lock 2>/dev/null"
  cmp a.lock before
  assert_equal "$(ls -A | sort | tr '\n' ' ')" "a.lock before "
}

@test "issue 39: lock-acquire(1)'s first example leaves nothing behind in the lock folder" {
  mkdir locks
  # the example as the page has it, run-the-loop waiting for the first beat
  # (so that the release finds a beater to leave its mark for)
  bash -c '
lock=locks/auth.lock
lock-acquire --pid $$ "$lock" || exit 1
lock-heartbeat --every 30 --pid $$ "$lock" &
echo $! >hb.pid
trap '\''lock-release --pid $$ "$lock"'\'' EXIT
while ! grep -q heartbeat_pid "$lock"; do sleep 0.05; done
'
  wait_gone "$(cat hb.pid)"
  assert_equal "$(ls -A locks)" ""
}

# beaten_by PID: until b.lock names PID as its beater (bounded: 30 s)
beaten_by() {
  local i
  for ((i = 0; i < 300; i++)); do [[ $(state-get b.lock heartbeat_pid 2>/dev/null) == "$1" ]] && return 0; sleep 0.1; done
  echo "b.lock was never beaten by $1" >&2
  return 1
}

@test "issue 39: a beater takes the mark its owner's release left; one killed -9 before it could leaves it to the next release" {
  owned_and_beaten
  kill "$hb"; wait "$hb" || true
  lock-heartbeat --every 30 --pid "$owner" b.lock 2>err2 & hb2=$!
  beaten_by "$hb2"
  lock-release --pid "$owner" b.lock
  # the beater sees the release at once (not at its next beat) and takes the mark
  rc=0
  wait "$hb2" || rc=$?
  assert_equal "$rc" 0
  assert_equal "$(ls -A | grep -v '^err')" ""
  # stopped, then killed -9 before it saw the release: its mark serves
  # nobody, and the next release of the lock takes it
  lock-acquire --pid "$owner" b.lock
  lock-heartbeat --every 30 --pid "$owner" b.lock 2>err3 & hb3=$!
  beaten_by "$hb3"
  kill -STOP "$hb3"
  lock-release --pid "$owner" b.lock
  [ -e .b.lock.released ]
  kill -KILL "$hb3"; wait "$hb3" || true
  lock-acquire --pid "$owner" b.lock
  lock-release --pid "$owner" b.lock
  assert_equal "$(ls -A | grep -v '^err')" ""
}
