#!/usr/bin/env bats
# lock-release: remove our own lock; --force removes any.
load helpers

@test "removes our own lock" {
  lock-acquire --pid $$ a.lock
  run -0 lock-release --pid $$ a.lock
  assert [ ! -e a.lock ]
}

@test "the owner defaults to the calling shell" {
  run -0 bash -c 'lock-acquire a.lock && lock-release a.lock && [ ! -e a.lock ]'
}

@test "someone else's lock is kept and its holder named" {
  holder=$(live)
  lock-acquire --pid "$holder" a.lock
  run -1 --separate-stderr lock-release --pid $$ a.lock
  [[ $stderr == "lock-release: 'a.lock' is not ours (pid $$): held by pid $holder"* ]]
  assert [ -e a.lock ]
  run -1 --separate-stderr lock-release -q --pid $$ a.lock
  assert_equal "$stderr" ""
}

@test "no lock is exit 1" {
  run -1 --separate-stderr lock-release --pid $$ none.lock
  assert_equal "$stderr" "lock-release: no lock 'none.lock'"
  run -1 lock-release --force none.lock
}

@test "--force removes anyone's lock, even an unreadable one" {
  holder=$(live)
  lock-acquire --pid "$holder" a.lock
  run -0 lock-release --force a.lock
  assert [ ! -e a.lock ]
  printf 'garbage' >b.lock
  run -1 lock-release --pid $$ b.lock
  run -0 lock-release -f b.lock
  assert [ ! -e b.lock ]
}

@test "a dead owner's lock can be released by naming its pid" {
  p=$(dead_pid)
  printf '{"session":"s","pid":%s}\n' "$p" >a.lock
  run -0 lock-release --pid "$p" a.lock
  assert [ ! -e a.lock ]
}

@test "a lock of the same pid on another host is not ours" {
  printf '{"session":"s","pid":%s,"host":"elsewhere.invalid"}\n' $$ >a.lock
  run -1 lock-release --pid $$ a.lock
  assert [ -e a.lock ]
}

@test "a failed removal is exit 4 and keeps the lock" {
  mkdir d
  lock-acquire --pid $$ d/a.lock
  [[ $(id -u) == 0 ]] && skip "root may remove files from read-only folders"
  chmod 555 d
  run -4 lock-release --pid $$ d/a.lock
  chmod 755 d
  assert [ -e d/a.lock ]
}

@test "a failed removal is exit 4 (injected)" {
  need_strace
  lock-acquire --pid $$ a.lock
  run -4 strace -f -o /dev/null -e trace=unlinkat -e inject=unlinkat:error=EIO lock-release --pid $$ a.lock
  assert [ -e a.lock ]
}

@test "a lock file that is a symlink is refused, and its target kept (--force and owner)" {
  mkdir locks
  printf 'precious\n' >target.txt
  ln -s ../target.txt locks/x.lock
  run -4 --separate-stderr lock-release --force locks/x.lock
  assert_equal "$stderr" "lock-release: cannot open 'locks/x.lock': is a symbolic link"
  # the owner's plain release, with the link pointing at a lock of its own
  lock-acquire --pid $$ mine.lock
  ln -sf ../mine.lock locks/x.lock
  run -4 lock-release --pid $$ locks/x.lock
  assert [ "$(cat target.txt)" = precious ]
  assert [ -L locks/x.lock ] && assert [ -e mine.lock ]
}

@test "a FIFO named as the lock is refused at once, never waited on" {
  mkfifo f.lock
  run -4 --separate-stderr timeout 10 lock-release --force f.lock
  assert_equal "$stderr" "lock-release: cannot open 'f.lock': is a FIFO"
  assert [ -p f.lock ]
}

@test "-f, the older spelling of --force, still works but is not listed" {
  holder=$(live)
  lock-acquire --pid "$holder" a.lock
  run -0 lock-release -f a.lock
  [ ! -e a.lock ]
  run -0 lock-release --help
  refute_output --partial -- '-f,'
  run -0 lock-release --completion-helper
  refute_output --partial -- $'-f\t'
}
