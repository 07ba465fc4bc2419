#!/usr/bin/env bats
# lock-reap: remove stale locks, never live ones, not even under contention.
load helpers

seed_dead() { printf '{"session":"%s","pid":%s}\n' "${2:-s}" "$(dead_pid)" >"$1"; }

@test "removes stale locks, one line each naming file, session, pid and why" {
  mkdir locks
  holder=$(live)
  lock-acquire --pid "$holder" locks/live.lock
  p=$(dead_pid)
  printf '{"session":"gone","pid":%s}\n' "$p" >locks/dead.lock
  run -0 --separate-stderr lock-reap locks
  assert_output "removed locks/dead.lock: session 'gone', pid $p: pid $p is not running"
  assert [ ! -e locks/dead.lock ]
  assert [ -e locks/live.lock ]
}

@test "--dry-run lists what it would remove and removes nothing" {
  seed_dead a.lock
  run -0 lock-reap -n a.lock
  assert_output --partial "would remove a.lock: session 's'"
  assert [ -e a.lock ]
  run -0 lock-reap --dry-run --json a.lock
  assert_equal "$(state-get - file state session <<<"$output")" $'a.lock\nstale\ns'
  assert [ -e a.lock ]
}

@test "--json gives the lock's fields plus file and reason" {
  seed_dead a.lock auth
  run -0 lock-reap --json .
  assert_equal "$(state-get - file session reason <<<"$output")" $'a.lock\nauth\npid '"$(state-get - pid <<<"$output")"' is not running'
}

@test "unreadable lock files are warnings, kept, and exit 0" {
  printf 'garbage' >junk.lock
  : >empty.lock
  run -0 --separate-stderr lock-reap .
  assert_output ""
  assert_equal "$stderr" "lock-reap: warning: 'empty.lock': empty lock file; kept
lock-reap: warning: 'junk.lock': not valid JSON: syntax error at line 1, column 1; kept"
  assert [ -e junk.lock ]
}

@test "other hosts' locks go by heartbeat age, local ones with --stale-after" {
  printf '{"session":"r","pid":1,"host":"elsewhere.invalid","heartbeat_epoch":%s}\n' $((LOOPKIT_NOW - 1000)) >remote.lock
  holder=$(live)
  lock-acquire --pid "$holder" local.lock
  LOOPKIT_NOW=$((LOOPKIT_NOW + 100)) run -0 lock-reap .
  assert_output --partial "removed remote.lock"
  assert [ -e local.lock ]
  LOOPKIT_NOW=$((LOOPKIT_NOW + 100)) run -0 lock-reap --stale-after 60 .
  assert_output "removed local.lock: session 'local', pid $holder on $(uname -n): no heartbeat for 100s (over 60s)"
}

@test "a lock file already gone is nothing to do; a folder that is not there is exit 4" {
  run -0 lock-reap none.lock
  assert_output ""
  run -4 --separate-stderr lock-reap nodir
  assert_equal "$stderr" "lock-reap: cannot read 'nodir': No such file or directory"
}

@test "a stale lock that cannot be removed is exit 4, the others still go" {
  need_strace
  seed_dead a.lock
  seed_dead b.lock
  run -4 --separate-stderr strace -f -o /dev/null -e trace=unlinkat -e inject=unlinkat:error=EIO:when=1 lock-reap .
  assert_equal "$stderr" "lock-reap: cannot remove 'a.lock': Input/output error"
  assert [ -e a.lock ]
  assert [ ! -e b.lock ]
}

@test "a heartbeat that lands while the sweep waits for the folder keeps the lock" {
  need_strace
  holder=$(live)
  lock-acquire --pid "$holder" a.lock
  LOOPKIT_NOW=$((LOOPKIT_NOW - 1000)) lock-heartbeat --pid "$holder" a.lock
  here=$(pwd -P)
  # the sweep finds the lock stale, opens the folder, and is held at its flock
  strace -f -o /dev/null -e trace=flock -e inject=flock:delay_enter=3000000 \
    lock-reap --stale-after 60 a.lock >out & st=$!
  reaper=""
  for _ in $(seq 400); do
    reaper=$(pgrep -P "$st" || true)
    if [[ -n $reaper ]]; then
      for fd in /proc/"$reaper"/fd/*; do [[ $(readlink "$fd" 2>/dev/null) == "$here" ]] && break 2; done
    fi
    sleep 0.025
  done
  LOOPKIT_NOW=$((LOOPKIT_NOW + 5)) run -0 lock-heartbeat --pid "$holder" a.lock
  wait "$st"
  assert_equal "$(cat out)" ""
  assert [ -e a.lock ]
}

@test "without that heartbeat the same sweep removes the lock" {
  holder=$(live)
  lock-acquire --pid "$holder" a.lock
  LOOPKIT_NOW=$((LOOPKIT_NOW - 1000)) lock-heartbeat --pid "$holder" a.lock
  run -0 lock-reap --stale-after 60 a.lock
  assert [ ! -e a.lock ]
}

@test "a sweeping loop never removes a lock that live owners hold" {
  worker() {
    local me=$BASHPID
    for _ in $(seq 15); do
      lock-acquire -w 60 --pid "$me" "shared.lock" || { echo "acquire $?" >>bad; continue; }
      lock-acquire --pid "$me" "own$1.lock" || echo "own $?" >>bad
      lock-heartbeat --pid "$me" shared.lock || echo "heartbeat shared $?" >>bad
      lock-heartbeat --pid "$me" "own$1.lock" || echo "heartbeat own $?" >>bad
      lock-release --pid "$me" "own$1.lock" || echo "release own $?" >>bad
      lock-release --pid "$me" shared.lock || echo "release shared $?" >>bad
    done
  }
  sweeper() {
    while [[ ! -e done ]]; do
      printf '{"session":"dead","pid":%s}\n' "$(dead_pid)" >"dead$RANDOM.lock"
      lock-reap . >>reaped 2>>warnings || echo "reap $?" >>bad
    done
  }
  sweeper & sw=$!
  pids=()
  for w in 1 2 3; do worker "$w" & pids+=($!); done
  wait "${pids[@]}"
  touch done
  wait "$sw"
  assert [ ! -e bad ]
  assert [ -s reaped ]
  run grep -v "session 'dead'" reaped
  assert_output ""
}

@test "a symlink in a swept folder is a warning, kept, its target kept, exit 0" {
  mkdir locks
  printf 'precious\n' >target.txt
  ln -s ../target.txt locks/x.lock
  seed_dead locks/dead.lock
  run -0 --separate-stderr lock-reap --stale-after 0 locks
  assert_output --partial "removed locks/dead.lock"
  assert_equal "$stderr" "lock-reap: warning: cannot open 'locks/x.lock': is a symbolic link; kept"
  assert [ "$(cat target.txt)" = precious ]
  assert [ -L locks/x.lock ]
  # named alone, it is refused: exit 4; among several operands, a warning
  run -4 --separate-stderr lock-reap --stale-after 0 locks/x.lock
  assert_equal "$stderr" "lock-reap: cannot open 'locks/x.lock': is a symbolic link; kept"
  run -0 --separate-stderr lock-reap --stale-after 0 locks/x.lock none.lock
  assert_equal "$stderr" "lock-reap: warning: cannot open 'locks/x.lock': is a symbolic link; kept"
  assert [ "$(cat target.txt)" = precious ] && assert [ -L locks/x.lock ]
}

@test "a FIFO named *.lock does not hang the sweep" {
  mkdir locks
  mkfifo locks/f.lock
  seed_dead locks/dead.lock
  run -0 --separate-stderr timeout 10 lock-reap locks
  assert_output --partial "removed locks/dead.lock"
  assert_equal "$stderr" "lock-reap: warning: cannot open 'locks/f.lock': is a FIFO; kept"
  assert [ -p locks/f.lock ]
}

@test "a link to /dev/zero is refused, never read" {
  mkdir locks
  ln -s /dev/zero locks/z.lock
  run -0 --separate-stderr timeout 10 lock-reap locks
  assert_equal "$stderr" "lock-reap: warning: cannot open 'locks/z.lock': is a symbolic link; kept"
}

@test "a lock file larger than 64 KiB is unreadable and kept" {
  head -c 100000 /dev/zero | tr '\0' ' ' >big.lock
  run -0 --separate-stderr lock-reap --stale-after 0 big.lock
  assert_equal "$stderr" "lock-reap: warning: 'big.lock': larger than 65536 bytes: not a lock file; kept"
  assert [ -e big.lock ]
}

@test "a zombie owner's lock is stale and reaped" {
  z=$(zombie)
  printf '{"session":"z","pid":%s,"host":"%s"}\n' "$z" "$(uname -n)" >z.lock
  run -0 lock-reap .
  assert_output "removed z.lock: session 'z', pid $z on $(uname -n): pid $z has exited, a zombie not yet reaped"
  assert [ ! -e z.lock ]
}

@test "--stale-after takes decimals up to 1e9, nothing else" {
  run -0 lock-reap --stale-after 0.5 .
  run -0 lock-reap --stale-after 1000000000 .
  for bad in 1000000001 1e300 inf nan -1 abc ''; do
    run -2 --separate-stderr lock-reap --stale-after "$bad" .
    assert_equal "$stderr" "lock-reap: --stale-after: not a number from 0 to 1000000000: '$bad'"
  done
}

@test "a live owner that declared its beat (heartbeat_every) is reaped only after missing three beats" {
  mkdir locks
  holder=$(live)
  lock-acquire --pid "$holder" locks/engine.lock
  state-set --no-sync locks/engine.lock 'heartbeat_every:=10'
  LOOPKIT_NOW=$((LOOPKIT_NOW + 25)) run -0 lock-reap --stale-after 5 locks
  assert_output ""
  [ -f locks/engine.lock ]
  # without the declaration the same sweep reaps it, as before
  lock-acquire --pid "$holder" locks/plain.lock
  LOOPKIT_NOW=$((LOOPKIT_NOW + 25)) run -0 lock-reap --stale-after 5 locks/plain.lock
  assert_output --partial "no heartbeat for 25s (over 5s)"
  LOOPKIT_NOW=$((LOOPKIT_NOW + 31)) run -0 lock-reap --stale-after 5 locks
  assert_output --partial "no heartbeat for 31s (over 30s)"
  [ ! -e locks/engine.lock ]
}

@test "lock-heartbeat --every records heartbeat_every in the lock" {
  holder=$(live)
  lock-acquire --pid "$holder" x.lock
  lock-heartbeat --every 1000 --pid "$holder" x.lock &
  for _ in $(seq 100); do grep -q heartbeat_every x.lock && break; sleep 0.1; done
  run -0 state-get x.lock heartbeat_every
  assert_output 1000
}

@test "unreadable files unchanged for --stale-after are reaped and named once" {
  : >empty.lock
  printf '{"session":"s","pi' >cut.lock
  head -c 70000 /dev/zero | tr '\0' x >big.lock
  printf 'garbage' >young.lock
  touch -d @$((LOOPKIT_NOW - 1000)) empty.lock cut.lock big.lock
  touch -d @$((LOOPKIT_NOW - 10)) young.lock
  run -0 --separate-stderr lock-reap --stale-after 60 .
  assert_equal "$output" "removed big.lock: larger than 65536 bytes: not a lock file: unreadable and unchanged for 1000s (over 60s)
removed cut.lock: not valid JSON: incomplete json at line 1, column 19: unreadable and unchanged for 1000s (over 60s)
removed empty.lock: empty lock file: unreadable and unchanged for 1000s (over 60s)"
  assert_equal "$stderr" "lock-reap: warning: 'young.lock': not valid JSON: syntax error at line 1, column 1; kept"
  assert [ ! -e empty.lock ] && assert [ ! -e cut.lock ] && assert [ ! -e big.lock ]
  assert [ -e young.lock ]
  # said once: the next sweep has nothing more to say about them
  run -0 --separate-stderr lock-reap -q --stale-after 60 .
  assert_output ""
  assert_equal "$stderr" ""
}

@test "unreadable files are kept without --stale-after, and -n only lists them" {
  : >empty.lock
  touch -d @$((LOOPKIT_NOW - 100000)) empty.lock
  run -0 --separate-stderr lock-reap .
  assert_output ""
  assert_equal "$stderr" "lock-reap: warning: 'empty.lock': empty lock file; kept"
  run -0 --separate-stderr lock-reap -n --stale-after 60 .
  assert_output "would remove empty.lock: empty lock file: unreadable and unchanged for 100000s (over 60s)"
  assert [ -e empty.lock ]
  run -0 --separate-stderr lock-reap --json --stale-after 60 empty.lock
  assert_equal "$(state-get - file state problem age <<<"$output")" $'empty.lock\nstale\nempty lock file\n100000'
  assert [ ! -e empty.lock ]
}

@test "-q silences the warnings for unreadable files, not those for links" {
  printf 'garbage' >junk.lock
  ln -s junk.lock x.lock
  run -0 --separate-stderr lock-reap -q .
  assert_equal "$stderr" "lock-reap: warning: cannot open 'x.lock': is a symbolic link; kept"
  assert [ -e junk.lock ] && assert [ -L x.lock ]
}

@test "an unreadable file rewritten since it was old is kept" {
  printf 'garbage' >junk.lock
  touch -d @$((LOOPKIT_NOW - 1000)) junk.lock
  printf 'more garbage' >junk.lock
  touch -d @$((LOOPKIT_NOW - 5)) junk.lock
  run -0 --separate-stderr lock-reap -q --stale-after 60 .
  assert_output ""
  assert [ -e junk.lock ]
}

@test "issue 25: a folder that does not exist is exit 4 with a message, never a quiet success" {
  run -4 --separate-stderr lock-reap "$W/nonexistent/locks"
  assert_equal "$stderr" "lock-reap: cannot read '$W/nonexistent/locks': No such file or directory"
  mkdir locks
  # a lock file already gone from a folder that is there: nothing to reap
  run -0 lock-reap locks/gone.lock
  run -4 lock-reap locks/missing-dir
}

# issue 39: a removal cannot be undone: a failure to say it is a warning
@test "a lock removed whose line cannot be printed (full, broken pipe): a warning, exit 0; --dry-run exit 4" {
  seed_dead a.lock
  run -4 --separate-stderr bash -c 'lock-reap --dry-run a.lock >/dev/full'
  assert_equal "$stderr" "lock-reap: cannot write to standard output: No space left on device"
  assert [ -e a.lock ]
  run -0 --separate-stderr bash -c 'lock-reap a.lock >/dev/full'
  assert_equal "$stderr" "lock-reap: warning: cannot write to standard output: No space left on device"
  assert [ ! -e a.lock ]
  seed_dead b.lock
  run -0 --separate-stderr broken_pipe lock-reap --json b.lock
  assert_equal "$stderr" "lock-reap: warning: cannot write to standard output: Broken pipe"
  assert [ ! -e b.lock ]
}
