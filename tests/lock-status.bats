#!/usr/bin/env bats
# lock-status: one line (or JSON object) per lock; the exit status answers
# for a single lock file.
load helpers

# start time of a process, field 22 of /proc/PID/stat
pid_start() {
  local s; s=$(</proc/"$1"/stat); s=${s##*) }
  # shellcheck disable=SC2086
  set -- $s; echo "${20}"
}

@test "a live lock: its line, and exit 0" {
  holder=$(live)
  lock-acquire --pid "$holder" --session auth a.lock
  LOOPKIT_NOW=$((LOOPKIT_NOW + 42)) run -0 lock-status a.lock
  assert_output "a.lock: live, session 'auth', pid $holder on $(uname -n), heartbeat 42s ago"
}

@test "a dead owner's lock is stale, and exit 1" {
  p=$(dead_pid)
  printf '{"session":"s","pid":%s,"heartbeat_epoch":%s}\n' "$p" $((LOOPKIT_NOW - 5)) >a.lock
  run -1 lock-status a.lock
  assert_output "a.lock: stale (pid $p is not running), session 's', pid $p, heartbeat 5s ago"
}

@test "a free lock is exit 1" {
  run -1 lock-status none.lock
  assert_output "none.lock: free"
}

@test "an unreadable lock file is bad data, exit 3" {
  printf 'garbage' >a.lock
  run -3 lock-status a.lock
  assert_output "a.lock: unreadable (not valid JSON: syntax error at line 1, column 1)"
}

@test "a live pid with another start time is stale (pid reuse)" {
  holder=$(live)
  printf '{"session":"s","pid":%s,"host":"%s","pid_start":%s}\n' "$holder" "$(uname -n)" $(($(pid_start "$holder") + 1)) >a.lock
  run -1 lock-status a.lock
  assert_output --partial "stale (pid $holder now belongs to another process)"
  printf '{"session":"s","pid":%s,"host":"%s","pid_start":%s}\n' "$holder" "$(uname -n)" "$(pid_start "$holder")" >a.lock
  run -0 lock-status a.lock
}

@test "a lock from before the last boot is stale" {
  holder=$(live)
  printf '{"session":"s","pid":%s,"boot_id":"00000000-0000-0000-0000-000000000000"}\n' "$holder" >a.lock
  run -1 lock-status a.lock
  assert_output --partial "stale (taken before the host rebooted)"
}

@test "another user's live process is alive (EPERM is not death)" {
  [[ $(id -u) == 0 ]] || skip "needs root to run as nobody"
  command -v setpriv >/dev/null || skip "setpriv is not installed"
  chmod 755 "$W"
  printf '{"session":"s","pid":1,"host":"%s","pid_start":%s}\n' "$(uname -n)" "$(pid_start 1)" >one.lock
  chmod 644 one.lock
  run -0 setpriv --reuid=nobody --regid=nogroup --clear-groups lock-status one.lock
  assert_output --partial "one.lock: live"
  run -0 setpriv --reuid=nobody --regid=nogroup --clear-groups lock-reap one.lock
  assert [ -e one.lock ]
}

@test "other hosts' locks go stale by heartbeat age, 120 s unless told" {
  printf '{"session":"s","pid":1,"host":"elsewhere.invalid","heartbeat_epoch":%s}\n' $((LOOPKIT_NOW - 100)) >a.lock
  run -0 lock-status a.lock
  LOOPKIT_NOW=$((LOOPKIT_NOW + 21)) run -1 lock-status a.lock
  assert_output --partial "stale (no heartbeat for 121s (over 120s))"
  run -1 lock-status --stale-after 50 a.lock
  run -0 lock-status --stale-after 500 "$PWD/a.lock"
}

@test "a folder lists its *.lock files in order, exit 0 whatever their state" {
  mkdir locks
  holder=$(live)
  lock-acquire --pid "$holder" locks/b.lock
  printf '{"pid":%s}\n' "$(dead_pid)" >locks/a.lock
  printf 'x' >locks/c.lock
  touch locks/notes.txt locks/.hidden.lock
  run -0 --separate-stderr lock-status locks
  assert_equal "${#lines[@]}" 3
  [[ ${lines[0]} == "locks/a.lock: stale "* ]]
  [[ ${lines[1]} == "locks/b.lock: live, session 'b', pid $holder "* ]]
  [[ ${lines[2]} == "locks/c.lock: unreadable "* ]]
  run -0 lock-status locks/a.lock locks/none.lock
  assert_equal "${#lines[@]}" 2
}

@test "--json: the lock's fields plus file, state, reason and age" {
  holder=$(live)
  lock-acquire --pid "$holder" a.lock
  run -0 lock-status --json a.lock
  assert_equal "$(state-get - file state age session pid <<<"$output")" $'a.lock\nlive\n0\na\n'"$holder"
  p=$(dead_pid)
  printf '{"session":"s","pid":%s}\n' "$p" >d.lock
  run -1 lock-status --json d.lock
  assert_equal "$(state-get - state reason <<<"$output")" $'stale\npid '"$p"' is not running'
  run -1 lock-status --json none.lock
  assert_output '{"file":"none.lock","state":"free"}'
}

@test "an operand that cannot be read is exit 4" {
  touch f
  run -4 --separate-stderr lock-status f/a.lock
  assert_equal "$stderr" "lock-status: cannot open 'f/a.lock': Not a directory"
}

@test "other tools' lock files are read (the agent-pipelines fixtures)" {
  # ../shared/fixtures: ap_lock.generated-main-flock.json, ap_lock_with_heartbeat.doc.json,
  # ap_lock_transient_barepid.noclobber-window.txt, each with a pid made dead
  p=$(dead_pid)
  printf '{\n  "session": "demo-session",\n  "pid": %s,\n  "started_at": "2026-11-22T03:56:11Z"\n}\n' "$p" >flock.lock
  printf '{\n  "session": "auth",\n  "pid": %s,\n  "started_at": "2025-01-10T10:00:00Z",\n  "heartbeat": "2025-01-10T10:05:30Z",\n  "heartbeat_epoch": 1736503530\n}\n' "$p" >doc.lock
  printf '%s\n' "$p" >bare.lock
  run -0 lock-status .
  assert_line "bare.lock: stale (pid $p is not running), pid $p, no heartbeat"
  assert_line "doc.lock: stale (pid $p is not running), session 'auth', pid $p, heartbeat 0s ago"
  assert_line "flock.lock: stale (pid $p is not running), session 'demo-session', pid $p, no heartbeat, taken 0s ago"
  holder=$(live)
  printf '%s\n' "$holder" >bare.lock
  run -0 lock-status bare.lock
  assert_output "bare.lock: live, pid $holder, no heartbeat"
}

@test "links and FIFOs in a sweep are warnings; named alone, they are exit 4" {
  mkdir locks
  printf 'precious\n' >target.txt
  ln -s ../target.txt locks/x.lock
  mkfifo locks/f.lock
  lock-acquire --pid $$ locks/mine.lock
  run -0 --separate-stderr timeout 10 lock-status locks
  assert_output --partial "locks/mine.lock: live"
  assert_equal "$stderr" "lock-status: warning: cannot open 'locks/f.lock': is a FIFO
lock-status: warning: cannot open 'locks/x.lock': is a symbolic link"
  run -4 --separate-stderr timeout 10 lock-status locks/f.lock
  assert_equal "$stderr" "lock-status: cannot open 'locks/f.lock': is a FIFO"
  run -4 --separate-stderr lock-status locks/x.lock
  assert_equal "$stderr" "lock-status: cannot open 'locks/x.lock': is a symbolic link"
  run -0 --separate-stderr lock-status locks/mine.lock locks/x.lock
  assert_output --partial "locks/mine.lock: live"
  assert_equal "$stderr" "lock-status: warning: cannot open 'locks/x.lock': is a symbolic link"
  assert [ "$(cat target.txt)" = precious ]
}

@test "a zombie owner is not live" {
  z=$(zombie)
  printf '{"session":"z","pid":%s,"host":"%s","pid_start":%s}\n' "$z" "$(uname -n)" "$(pid_start "$z")" >z.lock
  run -1 lock-status z.lock
  assert_output "z.lock: stale (pid $z has exited, a zombie not yet reaped), session 'z', pid $z on $(uname -n), no heartbeat"
}

@test "LOOPKIT_NOW must be epoch seconds from 0 to 253402300799" {
  lock-acquire --pid $$ a.lock
  LOOPKIT_NOW=253402300799 run -0 lock-status a.lock
  LOOPKIT_NOW=0 run -0 lock-status a.lock
  LOOPKIT_NOW='' run -0 lock-status a.lock
  for bad in 253402300800 9223372036854775807 -1 abc 1.5 ' 5'; do
    LOOPKIT_NOW=$bad run -2 --separate-stderr lock-status a.lock
    assert_equal "$stderr" "lock-status: LOOPKIT_NOW: not epoch seconds from 0 to 253402300799: '$bad'"
    assert_output ""
  done
}

@test "-q prints nothing: the exit status is the answer, as with grep -q" {
  holder=$(live)
  lock-acquire --pid "$holder" a.lock
  run -0 --separate-stderr lock-status -q a.lock
  assert_output ''
  [ -z "$stderr" ]
  run -1 --separate-stderr lock-status -q none.lock
  assert_output ''
  [ -z "$stderr" ]
  mkdir d && cp a.lock d/
  run -0 lock-status --quiet d
  assert_output ''
  # -j is --json
  run -0 lock-status -j a.lock
  [[ $output == '{"session":"a",'* ]]
}

@test "'-' is no lock: exit 2 in every lock tool, and nothing is created" {
  for tool in lock-acquire lock-heartbeat lock-release lock-status lock-reap; do
    run -2 --separate-stderr "$tool" -
    [[ $stderr == "$tool: a lock cannot be '-' (standard input): name its file ('./-' for one named '-')" ]]
  done
  [ ! -e ./- ]
  # ./- is a file named -
  run -0 lock-acquire --pid $$ ./-
  run -0 lock-status -q ./-
}

# issue 25: the man page's jq filter for live locks, as options
@test "--live and --stale list only those locks (also --json, -q), exit 0 when one is listed, as grep" {
  holder=$(live)
  p=$(dead_pid)
  mkdir locks
  lock-acquire --pid "$holder" --session auth locks/a.lock
  printf '{"session":"old","pid":%s}\n' "$p" >locks/b.lock
  printf 'garbage' >locks/c.lock
  run -0 lock-status --live locks
  assert_output "locks/a.lock: live, session 'auth', pid $holder on $(uname -n), heartbeat 0s ago"
  run -0 lock-status --stale --json locks
  assert_output "$(lock-status --json locks/b.lock)"
  run -0 bash -c 'lock-status --live --json locks | state-get - session'
  assert_output auth
  run -0 lock-status -q --live locks/a.lock
  assert_output ''
  run -1 lock-status --live locks/b.lock
  assert_output ''
  run -0 lock-status --stale locks/b.lock
  run -1 lock-status -q --stale locks/a.lock locks/none.lock
  run -2 --separate-stderr lock-status --stale --live locks
  assert_equal "$stderr" "lock-status: --live and --stale exclude each other"
  run -3 lock-status --live locks/c.lock
  rm locks/a.lock locks/b.lock
  run -1 lock-status --live locks
  assert_output ''
}

# issue 24: records are read by the lock tools' own reader (no Boost.JSON)
@test "--json gives another tool's members as written, on one line; a name twice counts once, its last value" {
  holder=$(live)
  printf '{"pid":%s,"n":1.50,"big":123456789012345678901234567890,"s":"\\u00e9\\/","x":1,\n "o": {"k" : [1, "a b"]},"x":2}\n' \
    "$holder" >a.lock
  touch -d "@$LOOPKIT_NOW" a.lock
  LOOPKIT_NOW=$((LOOPKIT_NOW + 3)) run -0 lock-status --json a.lock
  assert_output '{"pid":'"$holder"',"n":1.50,"big":123456789012345678901234567890,"s":"\u00e9\/","x":2,"o":{"k":[1,"a b"]},"file":"a.lock","state":"live","age":3}'
}

@test "what is not a lock record is unreadable, worded as before: bad UTF-8, escapes, numbers, depth" {
  check() {
    printf '%b' "$1" >a.lock
    run -3 lock-status a.lock
    assert_output "a.lock: unreadable ($2)"
  }
  check '{"pid":1,"s":"\xff"}' 'not valid JSON: syntax error at line 1, column 15'
  check '{"pid":1,"s":"\xe2\x82' 'not valid JSON: incomplete json at line 1, column 17'
  # Boost reads \u's digits one by one near the end, four at once elsewhere
  check '{"pid":1,"s":"\\u12x4"}' 'not valid JSON: expected hex digit at line 1, column 19'
  check '{"pid":1,"s":"\\u12x4 and more"}' 'not valid JSON: expected hex digit at line 1, column 18'
  check '{"pid":1,"s":"\\udc00 and more"}' 'not valid JSON: illegal leading surrogate at line 1, column 16'
  check '{"pid":1,"n":1e400}' 'not valid JSON: number out of range at line 1, column 19'
  check '{"pid":1,"n":1.}' 'not valid JSON: syntax error at line 1, column 16'
  check '{"pid":1}{}' 'not valid JSON: extra data at line 1, column 10'
  check '[1]' 'not a lock record: not a JSON object'
  check '{"pid":1e300}' 'not a lock record: no valid pid'
  printf '{"pid":1,"a":%s1%s}' "$(printf '[%.0s' {1..1000})" "$(printf ']%.0s' {1..1000})" >a.lock
  run -3 lock-status a.lock
  assert_output "a.lock: unreadable (not valid JSON: too deep at line 1, column 1013)"
}

@test "the file lock tools carry no Boost.JSON" {
  command -v nm >/dev/null || skip "no nm"
  for t in lock-acquire lock-heartbeat lock-reap lock-release lock-status; do
    nm "$LOOPKIT_BIN/$t" 2>/dev/null | grep -q ' main$' || skip "$t has no symbols"
    run -1 grep -c 'boost.*json' < <(nm -C "$LOOPKIT_BIN/$t")
    assert_output 0
  done
}
