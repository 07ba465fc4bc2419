#!/usr/bin/env bats
# lock-heartbeat: refresh only our own lock, once or until the owner dies.
load helpers

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

@test "--every stops with exit 1 when the lock is released under it" {
  owner=$(live)
  lock-acquire --pid "$owner" b.lock
  lock-heartbeat --every 0.05 --pid "$owner" b.lock 2>err & hb=$!
  lock-release --pid "$owner" b.lock
  rc=0; wait "$hb" || rc=$?
  assert_equal "$rc" 1
  assert_equal "$(cat err)" "lock-heartbeat: no lock 'b.lock'"
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
