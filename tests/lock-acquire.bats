#!/usr/bin/env bats
# lock-acquire: creation, refusal, takeover, races, --wait and -- COMMAND.
load helpers

# start time of a process, field 22 of /proc/PID/stat
pid_start() {
  local s; s=$(</proc/"$1"/stat); s=${s##*) }
  # shellcheck disable=SC2086
  set -- $s; echo "${20}"
}

seed_lock() { # FILE PID [EXTRA JSON MEMBERS]
  printf '{"session":"s","pid":%s,"started_at":"2025-01-10T10:00:00Z"%s}\n' "$2" "${3:-}" >"$1"
}

# wait (up to 10 s of real time) for a file to appear
wait_for_file() {
  local _; for _ in $(seq 200); do [[ -e $1 ]] && return 0; sleep 0.05; done
  return 1
}

@test "creates the lock and its folders with the record's fields" {
  run -0 lock-acquire --pid $$ a/b/auth.lock
  run -0 cat a/b/auth.lock
  assert_output --partial "\"session\":\"auth\",\"pid\":$$,\"host\":\"$(uname -n)\",\"pid_start\":$(pid_start $$)"
  assert_output --partial '"heartbeat_epoch":1736503530'
  assert_output --partial "\"boot_id\":\"$(cat /proc/sys/kernel/random/boot_id)\""
}

@test "--session names the session, --json prints the record" {
  run -0 --separate-stderr lock-acquire --json --session other --pid $$ a.lock
  assert_output "$(cat a.lock)"
  assert_output --partial '"session":"other"'
}

@test "the owner defaults to the calling shell" {
  run -0 bash -c 'lock-acquire a.lock && [ "$(state-get a.lock pid)" = $$ ]'
}

@test "refuses a lock held by a live owner, naming pid, host, session and time" {
  holder=$(live)
  lock-acquire --pid "$holder" --session mine a.lock
  run -1 --separate-stderr lock-acquire --pid $$ a.lock
  assert_equal "$stderr" "lock-acquire: cannot acquire 'a.lock': held by pid $holder on $(uname -n) (session 'mine') since 2025-01-10T10:05:30Z, last heartbeat 0s ago"
  run -1 --separate-stderr lock-acquire -q --pid $$ a.lock
  assert_equal "$stderr" ""
}

@test "takes over the lock of a dead pid, a bare pid file and a reused pid" {
  seed_lock a.lock "$(dead_pid)"
  run -0 lock-acquire --pid $$ a.lock
  assert_equal "$(state-get a.lock pid)" "$$"
  dead_pid >b.lock
  run -0 lock-acquire --pid $$ b.lock
  assert_equal "$(state-get b.lock pid)" "$$"
  holder=$(live)
  seed_lock c.lock "$holder" ',"pid_start":1'
  run -0 lock-acquire --pid $$ c.lock
  assert_equal "$(state-get c.lock pid)" "$$"
}

@test "a bare pid file of a live process is held" {
  holder=$(live)
  echo "$holder" >a.lock
  run -1 lock-acquire --pid $$ a.lock
  assert_equal "$(cat a.lock)" "$holder"
}

@test "an unreadable lock file is held, unless unchanged for --stale-after" {
  printf 'garbage' >a.lock
  run -1 --separate-stderr lock-acquire --pid $$ a.lock
  assert_equal "$stderr" "lock-acquire: cannot acquire 'a.lock': held by an unknown owner (not valid JSON: syntax error at line 1, column 1)"
  touch -d @$((LOOPKIT_NOW - 1000)) a.lock
  run -1 lock-acquire --pid $$ a.lock
  run -0 lock-acquire --pid $$ --stale-after 60 a.lock
  assert_equal "$(state-get a.lock pid)" "$$"
}

@test "a pid that is not running cannot take a lock" {
  run -1 --separate-stderr lock-acquire --pid "$(dead_pid)" a.lock
  assert [ ! -e a.lock ]
  run -2 lock-acquire --pid x a.lock
  run -2 lock-acquire --pid $$ a.lock -- true
  run -2 lock-acquire
}

@test "of 20 contenders exactly one wins, fresh and stale, round after round" {
  for _ in 1 2 3; do
    for kind in fresh stale; do
      rm -f race.lock rc.*
      [[ $kind == stale ]] && seed_lock race.lock "$(dead_pid)"
      pids=()
      for i in $(seq 20); do pids+=("$(live)"); done
      for i in $(seq 20); do
        (rc=0; lock-acquire -q --pid "${pids[$((i - 1))]}" race.lock || rc=$?; echo "$rc" >rc.$i) &
      done
      wait
      assert_equal "$(cat rc.* | grep -c '^0$')" 1
      assert_equal "$(cat rc.* | grep -c '^1$')" 19
      winner=$(state-get race.lock pid)
      [[ " ${pids[*]} " == *" $winner "* ]]
      kill "${pids[@]}"
    done
  done
}

@test "one owner acquiring its lock many times at once always gets it" {
  for i in $(seq 10); do (rc=0; lock-acquire --pid $$ a.lock || rc=$?; echo "$rc" >rc.$i) & done
  wait
  assert_equal "$(cat rc.* | sort -u)" 0
  assert_equal "$(state-get a.lock pid)" "$$"
}

@test "a takeover slowed down inside the folder lock still has one winner" {
  need_strace
  seed_lock race.lock "$(dead_pid)"
  a=$(live) b=$(live)
  # the first contender holds the folder's flock for a second around its rename
  (rc=0; strace -f -o /dev/null -e inject=rename,renameat2:delay_enter=1000000 lock-acquire -q --pid "$a" race.lock || rc=$?
   echo "$rc" >rc.a) &
  # its temporary file exists only while it holds the flock
  wait_for_file .race.lock.tmp
  (rc=0; lock-acquire -q --pid "$b" race.lock || rc=$?; echo "$rc" >rc.b) &
  wait
  assert_equal "$(cat rc.a rc.b)" $'0\n1'
  assert_equal "$(state-get race.lock pid)" "$a"
}

@test "--wait keeps critical sections from overlapping" {
  worker() {
    for _ in $(seq 8); do
      lock-acquire -w 60 cs.lock -- sh -c 'mkdir inside || echo overlap >>bad; sleep 0.05; rmdir inside' || echo "failed $?" >>bad
    done
  }
  for w in 1 2 3 4; do worker & done
  wait
  assert [ ! -e bad ]
  assert [ ! -e cs.lock ]
}

@test "--wait gives up with exit 1 when the time is up" {
  holder=$(live)
  lock-acquire --pid "$holder" h.lock
  run -1 --separate-stderr lock-acquire --wait 0.3 --pid $$ h.lock
  [[ $stderr == *"within 0.3s: held by pid $holder"* ]]
}

@test "-- COMMAND: a termination signal ends the wait, 128+N, the lock untouched" {
  holder=$(live)
  lock-acquire --pid "$holder" h.lock
  cp h.lock before
  lock-acquire -w 60 h.lock -- touch ran & waiter=$!
  wait_exec "$waiter" lock-acquire
  kill -TERM "$waiter"
  rc=0; wait "$waiter" || rc=$?
  assert_equal "$rc" 143
  assert [ ! -e ran ]
  cmp h.lock before
}

@test "a failed write exits 4 and leaves no lock and no temporary file" {
  need_strace
  run -4 strace -f -o /dev/null -e trace=fsync -e inject=fsync:error=EIO lock-acquire --pid $$ a.lock
  run -4 strace -f -o /dev/null -e trace=write -e inject=write:error=ENOSPC:when=1 lock-acquire --pid $$ a.lock
  # the second fsync is the folder's, after the link() was made
  run -4 --separate-stderr strace -f -o /dev/null -e trace=fsync -e inject=fsync:error=EIO:when=2 lock-acquire --pid $$ a.lock
  assert_equal "$stderr" "lock-acquire: cannot sync folder '.': Input/output error"
  assert_equal "$(ls -A | grep -c 'a\.lock')" 0
}

@test "a failed takeover leaves the stale lock as it was" {
  need_strace
  seed_lock a.lock "$(dead_pid)"
  cp a.lock before
  run -4 strace -f -o /dev/null -e trace=fsync -e inject=fsync:error=EIO lock-acquire --pid $$ a.lock
  cmp a.lock before
  # the second fsync is the folder's, after the rename was made
  run -4 strace -f -o /dev/null -e trace=fsync -e inject=fsync:error=EIO:when=2 lock-acquire --pid $$ a.lock
  cmp a.lock before
  assert_equal "$(ls -A | grep -c 'a\.lock\..*tmp')" 0
}

@test "-- COMMAND: the lock is held by lock-acquire while the command runs" {
  run -0 lock-acquire r.lock -- sh -c 'test "$(state-get r.lock pid)" = "$PPID"'
  assert [ ! -e r.lock ]
}

@test "-- COMMAND: exit status is the command's, 128+N when killed" {
  run -3 lock-acquire r.lock -- sh -c 'exit 3'
  run -137 lock-acquire r.lock -- sh -c 'kill -KILL $$'
  run -143 lock-acquire r.lock -- sh -c 'kill -TERM $$'
  assert [ ! -e r.lock ]
}

@test "-- COMMAND: 127 when not found, 126 when it cannot run" {
  run -127 --separate-stderr lock-acquire r.lock -- no-such-command-here
  assert_equal "$stderr" "lock-acquire: cannot run 'no-such-command-here': No such file or directory"
  printf 'not a program' >prog && chmod 644 prog
  run -126 lock-acquire r.lock -- ./prog
  assert [ ! -e r.lock ]
}

@test "-- COMMAND: SIGTERM reaches the command and the lock is released" {
  lock-acquire r.lock -- sh -c 'trap "echo got >term; exit 3" TERM; touch ready; while :; do sleep 0.05; done' &
  acq=$!
  wait_for_file ready
  assert [ -e r.lock ]
  kill -TERM "$acq"
  rc=0; wait "$acq" || rc=$?
  assert_equal "$rc" 3
  assert_equal "$(cat term)" got
  assert [ ! -e r.lock ]
}

@test "-- COMMAND: SIGINT and SIGHUP are passed on too" {
  for sig in INT HUP; do
    rm -f ready got
    # a shell's background job ignores SIGINT; lock-acquire would keep it so
    env --default-signal="$sig" lock-acquire r.lock -- sh -c "trap 'echo $sig >got; exit 5' $sig; touch ready; while :; do sleep 0.05; done" &
    acq=$!
    wait_for_file ready
    kill -"$sig" "$acq"
    rc=0; wait "$acq" || rc=$?
    assert_equal "$rc" 5
    assert_equal "$(cat got)" "$sig"
    assert [ ! -e r.lock ]
  done
}

@test "-- COMMAND: the heartbeat is refreshed while the command runs" {
  unset LOOPKIT_NOW
  run -0 lock-acquire --heartbeat 0.1 r.lock -- sh -c '
    a=$(state-get r.lock heartbeat_epoch)
    for i in $(seq 300); do
      [ "$(state-get r.lock heartbeat_epoch)" -gt "$a" ] && exit 0
      sleep 0.1
    done
    exit 1'
}

@test "-- COMMAND: a lock lost meanwhile is reported and not released" {
  # the command ends once the heartbeat has said so (bounded: 30 s)
  rc=0
  lock-acquire --heartbeat 0.05 r.lock -- sh -c '
    lock-release --force r.lock; lock-acquire --pid '$$' r.lock
    for i in $(seq 300); do grep -q "lost the lock" err && exit 0; sleep 0.1; done
    exit 1' 2>err || rc=$?
  assert_equal "$rc" 0
  [[ $(cat err) == *"warning: lost the lock 'r.lock'"* ]]
  assert_equal "$(state-get r.lock pid)" "$$"
}

@test "on our own lock, the heartbeat is refreshed and started_at kept" {
  lock-acquire --pid $$ a.lock
  LOOPKIT_NOW=1736503600 run -0 lock-acquire --pid $$ a.lock
  assert_equal "$(state-get a.lock started_at heartbeat heartbeat_epoch)" $'2025-01-10T10:05:30Z\n2025-01-10T10:06:40Z\n1736503600'
}

@test "a lock file that is a symlink, even dangling, is refused and nothing is created through it" {
  mkdir -m 1777 locks
  ln -s ../elsewhere/t.lock locks/d.lock
  run -4 --separate-stderr lock-acquire --pid $$ locks/d.lock
  assert_equal "$stderr" "lock-acquire: cannot open 'locks/d.lock': is a symbolic link"
  assert [ ! -e elsewhere ]
  printf 'precious\n' >target.txt
  ln -s ../target.txt locks/x.lock
  run -4 lock-acquire --pid $$ locks/x.lock
  run -4 lock-acquire locks/x.lock -- touch ran
  assert [ "$(cat target.txt)" = precious ] && assert [ ! -e ran ]
  assert_equal "$(ls -A locks | tr '\n' ' ')" "d.lock x.lock "
}

@test "a FIFO or socket at the lock's name is refused at once" {
  mkfifo f.lock
  run -4 --separate-stderr timeout 10 lock-acquire --pid $$ f.lock
  assert_equal "$stderr" "lock-acquire: cannot open 'f.lock': is a FIFO"
  # perl-base (essential on Debian) can bind a socket; no other package needed
  perl -MIO::Socket::UNIX -e 'IO::Socket::UNIX->new(Type => SOCK_STREAM(), Local => $ARGV[0]) or die "$!"' s.lock
  run -4 --separate-stderr timeout 10 lock-acquire --pid $$ s.lock
  assert_equal "$stderr" "lock-acquire: cannot open 's.lock': is a socket"
}

@test "a zombie owner's lock is taken over; a zombie cannot take one" {
  z=$(zombie)
  printf '{"session":"z","pid":%s,"host":"%s","pid_start":%s}\n' "$z" "$(uname -n)" "$(pid_start "$z")" >z.lock
  run -0 lock-acquire --pid $$ z.lock
  assert_equal "$(state-get z.lock pid)" $$
  run -1 --separate-stderr lock-acquire --pid "$z" other.lock
  assert_equal "$stderr" "lock-acquire: cannot acquire 'other.lock' for pid $z: it is not running"
}

@test "SECONDS options take decimals from 0 to 1e9; --heartbeat 1e300 is exit 2" {
  for opt in --wait --stale-after; do
    run -0 lock-acquire --pid $$ "$opt" 0.5 a.lock
    run -0 lock-acquire --pid $$ "$opt" 1000000000 a.lock
  done
  run -0 lock-acquire --heartbeat 1000000000 b.lock -- true
  for bad in 1e300 1000000000.5 inf -inf nan NaN -1 abc ''; do
    for opt in --wait --stale-after --heartbeat; do
      # --wait takes inf (forever), and a word that is no number is its LOCKFILE
      [[ $opt == --wait && ($bad == inf || $bad == abc) ]] && continue
      run -2 --separate-stderr lock-acquire "$opt" "$bad" c.lock -- touch ran
      [[ $stderr == "lock-acquire: $opt: not a number from "*" to 1000000000: '$bad'" ]]
    done
  done
  assert [ ! -e ran ] && assert [ ! -e c.lock ]
}

@test "LOOPKIT_NOW out of range is exit 2, not a nonsense date" {
  LOOPKIT_NOW=9223372036854775807 run -2 --separate-stderr lock-acquire --pid $$ a.lock
  assert_equal "$stderr" "lock-acquire: LOOPKIT_NOW: not epoch seconds from 0 to 253402300799: '9223372036854775807'"
  assert [ ! -e a.lock ]
  LOOPKIT_NOW=253402300799 run -0 lock-acquire --pid $$ a.lock
  assert_equal "$(state-get a.lock heartbeat)" 9999-12-31T23:59:59Z
}

@test "--wait alone, -w inf and --wait inf wait for as long as the lock is held" {
  holder=$(live)
  lock-acquire --pid "$holder" h.lock
  # without a wait the answer is at once; with these, still waiting when timeout ends it
  run -1 timeout 10 lock-acquire --pid $$ h.lock
  for spelling in "--wait" "-w" "-w inf" "--wait inf" "--wait=infinity" "-wINF"; do
    # shellcheck disable=SC2086
    run -124 timeout 0.5 lock-acquire $spelling --pid $$ h.lock
  done
  run -124 timeout 0.5 lock-acquire h.lock --wait -- touch ran
  assert [ ! -e ran ]
  assert_equal "$(state-get h.lock pid)" "$holder"
}

@test "--wait alone gets the lock once its holder is gone" {
  holder=$(live)
  lock-acquire --pid "$holder" h.lock
  waiter=$(live)
  lock-acquire --wait --pid "$waiter" h.lock & job=$!
  wait_exec "$job" lock-acquire
  kill "$holder"
  rc=0; wait "$job" || rc=$?
  assert_equal "$rc" 0
  assert_equal "$(state-get h.lock pid)" "$waiter"
}

@test "--wait still takes the number after it, before or after LOCKFILE" {
  holder=$(live)
  lock-acquire --pid "$holder" h.lock
  run -1 --separate-stderr lock-acquire --wait 0.2 --pid $$ h.lock
  [[ $stderr == *"within 0.2s: held by pid $holder"* ]]
  run -1 --separate-stderr lock-acquire h.lock --pid $$ --wait .2
  [[ $stderr == *"within 0.2s: held by pid $holder"* ]]
  run -2 --separate-stderr lock-acquire --wait 5x h.lock
  assert_equal "$stderr" "lock-acquire: --wait: not a number from 0 to 1000000000: '5x'"
  run -1 lock-acquire -w 0.1 --pid $$ h.lock
}

@test "-E N is the exit status when the lock is held, at once or after --wait" {
  holder=$(live)
  lock-acquire --pid "$holder" h.lock
  run -75 --separate-stderr lock-acquire -E 75 --pid $$ h.lock
  [[ $stderr == "lock-acquire: cannot acquire 'h.lock': held by pid $holder"* ]]
  run -75 --separate-stderr lock-acquire -q --conflict-exit-code 75 --pid $$ h.lock
  assert_equal "$stderr" ""
  run -0 lock-acquire -E 0 --pid $$ h.lock
  run -9 lock-acquire -E 9 -w 0.1 --pid $$ h.lock
  run -75 lock-acquire -E 75 h.lock -- touch ran
  assert [ ! -e ran ]
  # a command's own 1 stays 1, and a dead owner is a plain no
  run -1 lock-acquire -E 75 free.lock -- false
  run -1 lock-acquire -E 75 --pid "$(dead_pid)" other.lock
  assert_equal "$(state-get h.lock pid)" "$holder"
}

@test "-E takes 0 to 255 only" {
  for bad in 256 -1 abc '' 1.5; do
    run -2 --separate-stderr lock-acquire -E "$bad" a.lock
    assert_equal "$stderr" "lock-acquire: --conflict-exit-code: not a whole number from 0 to 255: '$bad'"
  done
  assert [ ! -e a.lock ]
}

@test "-v says on stderr how the lock was got and after how long" {
  run -0 --separate-stderr lock-acquire -v --pid $$ a.lock
  assert_output ""
  [[ $stderr =~ ^"lock-acquire: got 'a.lock' after "[0-9]+\.[0-9]{3}"s: created"$ ]]
  run -0 --separate-stderr lock-acquire --verbose --pid $$ a.lock
  [[ $stderr =~ ^"lock-acquire: got 'a.lock' after "[0-9.]+"s: already ours, heartbeat refreshed"$ ]]
  dead=$(dead_pid)
  printf '{"session":"s","pid":%s}\n' "$dead" >b.lock
  run -0 --separate-stderr lock-acquire -v --pid $$ b.lock
  [[ $stderr =~ ^"lock-acquire: got 'b.lock' after "[0-9.]+"s: took over a stale lock: pid $dead is not running"$ ]]
  run -0 --separate-stderr lock-acquire -v c.lock -- echo ran
  assert_output "ran"
  [[ $stderr =~ ^"lock-acquire: got 'c.lock' after "[0-9.]+"s: created"$ ]]
  run -0 --separate-stderr lock-acquire --pid $$ d.lock
  assert_equal "$stderr" ""
}

@test "operands after LOCKFILE without '--' are a usage error that says to add it" {
  run -2 --separate-stderr lock-acquire c.lock sleep 5
  assert_equal "$stderr" "lock-acquire: expected one LOCKFILE: to run a command, put '--' before it: lock-acquire c.lock -- sleep 5"
  assert [ ! -e c.lock ]
  run -2 --separate-stderr lock-acquire a.lock b.lock -- true
  assert_equal "$stderr" "lock-acquire: expected one LOCKFILE"
  run -2 --separate-stderr lock-acquire
  assert_equal "$stderr" "lock-acquire: missing LOCKFILE"
}

@test "--json when held prints the holder on stdout, as lock-status --json does" {
  holder=$(live)
  lock-acquire --pid "$holder" --session mine h.lock
  run -1 --separate-stderr lock-acquire --json --pid $$ h.lock
  [[ $stderr == "lock-acquire: cannot acquire 'h.lock': held by pid $holder"* ]]
  assert_equal "$(state-get - session pid file state age <<<"$output")" $'mine\n'"$holder"$'\nh.lock\nlive\n0'
  assert_equal "$output" "$(lock-status --json h.lock)"
  run -75 --separate-stderr lock-acquire -q -E 75 --json h.lock -- touch ran
  assert_equal "$stderr" ""
  assert_equal "$(state-get - pid <<<"$output")" "$holder"
  assert [ ! -e ran ]
  printf 'garbage' >g.lock
  run -1 --separate-stderr lock-acquire --json --pid $$ g.lock
  assert_equal "$(state-get - file state reason <<<"$output")" $'g.lock\nunreadable\nnot valid JSON: syntax error at line 1, column 1'
  # a dead owner is no conflict: no holder to print
  run -1 --separate-stderr lock-acquire --json --pid "$(dead_pid)" x.lock
  assert_output ""
}

@test "--every is --heartbeat, under the name lock-heartbeat gives it; -j is --json" {
  run -0 lock-acquire --every 7 r.lock -- true
  run -2 --separate-stderr lock-acquire --every 0 r.lock -- touch ran
  assert_equal "$stderr" "lock-acquire: --heartbeat: not a number from 0.01 to 1000000000: '0'"
  [ ! -e ran ]
  run -0 lock-acquire -j --pid $$ j.lock
  [[ $output == '{"session":"j",'* ]]
}

@test "a command's own option without '--' before it: the hint to put it there" {
  run -2 --separate-stderr lock-acquire a.lock sh -c 'touch ran'
  assert_equal "$stderr" "lock-acquire: option 'c' does not exist
lock-acquire: to run a command, put '--' before it: lock-acquire LOCKFILE [-- COMMAND...]"
  [ ! -e ran ] && [ ! -e a.lock ]
  # an unknown option of its own is only that
  run -2 --separate-stderr lock-acquire --bogus a.lock
  assert_equal "$stderr" "lock-acquire: option 'bogus' does not exist
lock-acquire: try 'lock-acquire --help'"
}

# issue 22: the temporary file has no name (O_TMPFILE) until link()
@test "lock-acquire killed before its link() leaves no temporary file" {
  need_strace
  rc=0; strace -f -o /dev/null -e trace=linkat -e inject=linkat:signal=KILL lock-acquire --pid $$ a.lock 2>/dev/null || rc=$?
  [ "$rc" -ne 0 ]
  assert_equal "$(ls -A)" ""
  run -0 lock-acquire --pid $$ a.lock
}

@test "issue 22: a lock got after --wait is dated when it was got, live for --stale-after 3" {
  need_strace
  echo "$LOOPKIT_NOW" >clock
  holder=$(live) waiter=$(live) rival=$(live)
  LOOPKIT_NOW=@clock lock-acquire --pid "$holder" a.lock
  # strace shows the waiter's first nap (a sleep, or a poll of its watch on
  # the folder: issue 24): its first attempt has failed
  LOOPKIT_NOW=@clock strace -o naps -e trace=nanosleep,clock_nanosleep,poll,ppoll \
    lock-acquire --wait 30 --pid "$waiter" a.lock &
  for _ in $(seq 200); do [[ -s naps ]] && break; sleep 0.05; done
  assert [ -s naps ]
  echo $((LOOPKIT_NOW + 4)) >clock # the wait lasted 4 s
  # one more nap: the attempt that may have read the clock before it moved
  # is over, and every later one reads the new time
  n=$(wc -l <naps)
  for _ in $(seq 200); do (($(wc -l <naps) > n)) && break; sleep 0.05; done
  lock-release --pid "$holder" a.lock
  wait $!
  run -0 state-get a.lock pid heartbeat_epoch
  assert_output "$waiter"$'\n'$((LOOPKIT_NOW + 4))
  LOOPKIT_NOW=@clock run -1 lock-acquire --stale-after 3 --pid "$rival" a.lock
  LOOPKIT_NOW=@clock run -0 lock-status --stale-after 3 a.lock
}

@test "issue 22: LOOPKIT_NOW=@FILE that holds no time is exit 2" {
  echo 12.5 >clock
  LOOPKIT_NOW=@clock run -2 --separate-stderr lock-acquire --pid $$ a.lock
  assert_equal "$stderr" "lock-acquire: LOOPKIT_NOW: 'clock' holds no epoch seconds from 0 to 253402300799: '12.5'"
  LOOPKIT_NOW=@none run -2 --separate-stderr lock-acquire --pid $$ a.lock
  assert_equal "$stderr" "lock-acquire: LOOPKIT_NOW: cannot read 'none': No such file or directory"
  assert [ ! -e a.lock ]
}

@test "issue 22: a crafted heartbeat_epoch of INT64_MIN or year 9999 keeps no lock for ever" {
  for epoch in -9223372036854775808 9223372036854775807 -1 1e300 253402300799; do
    printf '{"session":"s","pid":1,"host":"elsewhere.invalid","heartbeat_epoch":%s}\n' "$epoch" >a.lock
    touch -d @$((LOOPKIT_NOW - 1000)) a.lock
    run -0 lock-acquire --pid $$ a.lock
    assert_equal "$(state-get a.lock pid)" $$
  done
}

@test "issue 24: a waiter takes the lock once it is released, watching the folder" {
  holder=$(live)
  waiter=$(live)
  lock-acquire --pid "$holder" h.lock
  lock-acquire --wait 30 --pid "$waiter" h.lock & acq=$!
  wait_exec "$acq" lock-acquire
  lock-release --pid "$holder" h.lock
  rc=0; wait "$acq" || rc=$?
  assert_equal "$rc" 0
  assert_equal "$(state-get h.lock pid)" "$waiter"
}

# released_once_watched: the holder releases h.lock once the waiter (its
# strace log in trace, its lock-acquire $acq) has armed its watch; the waiter
# then has the lock
released_once_watched() {
  wait_grep inotify_add_watch trace
  lock-release --pid "$holder" h.lock
  rc=0; wait "$acq" || rc=$?
  assert_equal "$rc" 0
  assert_equal "$(state-get h.lock pid)" "$waiter"
}

# unwatched_before_link: in trace, the last change of the watch is its
# removal, before the link that took the lock
unwatched_before_link() {
  run -0 grep -nE 'inotify_(add|rm)_watch|linkat\(.*"h.lock".* = 0' trace
  assert_line --index 0 --partial inotify_add_watch
  assert_line --index -2 --partial inotify_rm_watch
  assert_line --index -1 --partial linkat
}

@test "issue 24: a waiter stops watching the folder before it takes the lock, and a lock free at once is got unwatched" {
  need_strace
  holder=$(live)
  waiter=$(live)
  # closing an inotify instance right after its watch went waits for the
  # kernel to free the watch (up to 16 ms): the watch goes before the
  # attempt's fsyncs, so that it is freed by the time the waiter exits
  lock-acquire --pid "$holder" h.lock
  strace -o trace -e trace=inotify_init1,inotify_add_watch,inotify_rm_watch,linkat,close \
    lock-acquire --wait 30 --pid "$waiter" h.lock & acq=$!
  # the release must come after the watch is in place, however slow the
  # waiter is to get there (a bound that fails, not one that goes on)
  released_once_watched
  unwatched_before_link
  lock-release --pid "$waiter" h.lock
  strace -o trace -e trace=inotify_init1,inotify_add_watch lock-acquire --wait 30 --pid "$waiter" h.lock
  run -1 grep -c inotify trace
}

@test "issue 24: a lock released just after the waiter armed its watch is still taken unwatched" {
  need_strace
  holder=$(live)
  waiter=$(live)
  lock-acquire --pid "$holder" h.lock
  # the waiter is held for 3 s right after it armed its watch: the release
  # lands there, before its next attempt (one that comes later only makes
  # the usual path, which passes too)
  strace -o trace -e trace=inotify_add_watch,inotify_rm_watch,linkat -e inject=inotify_add_watch:delay_exit=3000000 \
    lock-acquire --wait 30 --pid "$waiter" h.lock & acq=$!
  released_once_watched
  unwatched_before_link
}

@test "issue 24: -- COMMAND waits on the folder with signals held, and runs once the lock is free" {
  holder=$(live)
  lock-acquire --pid "$holder" h.lock
  lock-acquire -w 30 h.lock -- touch ran & acq=$!
  wait_exec "$acq" lock-acquire
  lock-release --pid "$holder" h.lock
  rc=0; wait "$acq" || rc=$?
  assert_equal "$rc" 0
  assert [ -e ran ]
  assert [ ! -e h.lock ]
}

@test "issue 24: without inotify (as where a file system gives no events) the waiter polls and still gets the lock" {
  holder=$(live)
  waiter=$(live)
  lock-acquire --pid "$holder" h.lock
  strace -f -o /dev/null -e inject=inotify_init1:error=EMFILE \
    lock-acquire --wait 30 --pid "$waiter" h.lock & acq=$!
  # released before or after its first attempt: either way the waiter must end holding it
  lock-release --pid "$holder" h.lock
  rc=0; wait "$acq" || rc=$?
  assert_equal "$rc" 0
  assert_equal "$(state-get h.lock pid)" "$waiter"
}

@test "without /proc (a mount namespace hides it) the lock is linked from a named temporary file, which goes" {
  [[ $EUID -eq 0 ]] && unshare -m true 2>/dev/null || skip "needs root and unshare -m"
  run -0 unshare -m sh -c 'mount -t tmpfs none /proc && exec "$@"' sh lock-acquire --pid 1 a.lock
  run -0 state-get a.lock pid
  assert_output 1
  run -0 ls -A
  assert_output a.lock
}

# tickets COUNT: until COUNT waiters stand in line for a.lock (bounded: 30 s)
tickets() {
  local i
  for ((i = 0; i < 300; i++)); do
    [[ $(find . -maxdepth 1 -name '.a.lock.wait.*' | wc -l) -eq $1 ]] && return 0
    sleep 0.1
  done
  echo "timed out waiting for $1 tickets" >&2
  return 1
}
# held_by PID: until a.lock names PID as its owner (bounded: 30 s)
held_by() {
  local i
  for ((i = 0; i < 300; i++)); do
    [[ $(state-get a.lock pid 2>/dev/null) == "$1" ]] && return 0
    sleep 0.1
  done
  echo "timed out waiting for pid $1 to hold a.lock" >&2
  return 1
}

@test "waiters take a released lock in the order they began waiting, each from its ticket in line" {
  p0=$(live) p1=$(live) p2=$(live) p3=$(live)
  run -0 lock-acquire --pid "$p0" a.lock
  lock-acquire --wait 60 --pid "$p1" a.lock &
  tickets 1
  lock-acquire --wait 60 --pid "$p2" a.lock &
  tickets 2
  lock-acquire --wait 60 --pid "$p3" a.lock &
  tickets 3
  run -0 lock-release --pid "$p0" a.lock
  held_by "$p1"
  run -0 lock-release --pid "$p1" a.lock
  held_by "$p2"
  run -0 lock-release --pid "$p2" a.lock
  held_by "$p3"
  wait
  tickets 0
}

# held_with_first_waiter: a.lock held for $p0, a waiter ($first) in line
# behind it; $p2 a live owner for the next waiter
held_with_first_waiter() {
  p0=$(live) p2=$(live)
  run -0 lock-acquire --pid "$p0" a.lock
  lock-acquire --wait 60 --pid "$(live)" a.lock &
  first=$!
  tickets 1
}

@test "a waiter killed in line leaves its ticket, which the next waiter removes and does not wait behind" {
  held_with_first_waiter
  dead_ticket=$(find . -maxdepth 1 -name '.a.lock.wait.*')
  kill -9 "$first"
  lock-acquire --wait 60 --pid "$p2" a.lock &
  # the second waiter removes the dead one's ticket as it looks at the line
  for ((i = 0; i < 300; i++)); do [[ -e $dead_ticket ]] || break; sleep 0.1; done
  assert [ ! -e "$dead_ticket" ]
  tickets 1
  run -0 lock-release --pid "$p0" a.lock
  held_by "$p2"
  wait
  tickets 0
}

@test "a stopped waiter first in line holds a free lock up for a grace period only" {
  held_with_first_waiter
  kill -STOP "$first"
  lock-acquire --wait 60 --pid "$p2" a.lock &
  tickets 2
  run -0 lock-release --pid "$p0" a.lock
  held_by "$p2"
  kill -CONT "$first"
  kill "$first"
}

@test "a waiter whose wait ends leaves the line" {
  run -0 lock-acquire --pid "$(live)" a.lock
  run -1 lock-acquire --wait 0.5 --pid "$(live)" a.lock
  tickets 0
}

# issue 39: past the commit point, a record that cannot be printed is the
# lock tools' rule: the lock is given up again, exit 4 with it as it was
@test "--json whose record cannot be printed (full, closed, broken pipe): exit 4, the lock given up again" {
  run -4 --separate-stderr bash -c 'lock-acquire --json --pid $$ a.lock >/dev/full'
  assert_equal "$stderr" "lock-acquire: cannot write to standard output: No space left on device"
  assert [ ! -e a.lock ]
  run -4 --separate-stderr bash -c 'lock-acquire --json --pid $PPID a.lock >&-'
  assert_equal "$stderr" "lock-acquire: cannot write to standard output: Bad file descriptor"
  assert [ ! -e a.lock ]
  run -4 --separate-stderr broken_pipe lock-acquire --json --pid $$ a.lock
  assert_equal "$stderr" "lock-acquire: cannot write to standard output: Broken pipe"
  assert [ ! -e a.lock ]
  # a dead owner's lock taken over: given up too, nothing left but free
  seed_lock a.lock "$(dead_pid)"
  run -4 bash -c 'lock-acquire --json --pid $$ a.lock >/dev/full'
  assert [ ! -e a.lock ]
  # ours already: it stays ours
  lock-acquire --pid $$ a.lock
  run -4 bash -c "lock-acquire --json --pid $$ a.lock >/dev/full"
  run -0 lock-status -q a.lock
  # with a COMMAND: the command is not run
  lock-release --pid $$ a.lock
  run -4 bash -c 'lock-acquire --json b.lock -- touch ran >/dev/full'
  assert [ ! -e ran ]
  assert [ ! -e b.lock ]
}

# issue 39: ulimit -f is a full disk: exit 4, no lock, no SIGXFSZ
@test "ulimit -f: the record cannot be written: exit 4, no lock and no temporary file" {
  # (with ulimit -f 0 the message cannot be written to a file either)
  run -4 bash -c "ulimit -f 0; lock-acquire --pid $$ a.lock 2>/dev/null"
  assert_equal "$(ls -A)" ""
  seed_lock a.lock "$(dead_pid)"
  cp a.lock before
  run -4 bash -c "ulimit -f 0; lock-acquire --pid $$ a.lock"
  cmp a.lock before
  assert_equal "$(ls -A | sort | tr '\n' ' ')" "a.lock before "
}

# issue 39: a lock of a 251-255 byte name can be beaten, taken over,
# waited for and released like any other
@test "a lock named by 251 to 255 bytes: heartbeat, takeover, --wait and release work" {
  for n in 251 255; do
    f=$(printf 'l%.0s' $(seq "$n"))
    run -0 lock-acquire --pid $$ "$f"
    run -0 lock-heartbeat --pid $$ "$f"
    run -0 lock-release --pid $$ "$f"
    seed_lock "$f" "$(dead_pid)"
    run -0 lock-acquire --pid $$ "$f"
    run -0 state-get "$f" pid
    assert_output "$$"
    # a waiter takes a ticket beside the lock: its name fits too
    other=$(live)
    run -1 lock-acquire --wait 0.2 --pid "$other" "$f"
    run -0 lock-release --pid $$ "$f"
    run -0 lock-acquire --wait 5 --pid "$other" "$f"
    run -0 lock-release --pid "$other" "$f"
    assert_equal "$(ls -A | grep -v '^\.' | wc -l)" 0
    rm -f .l*
  done
}

@test "issue 39: a lock name that is not UTF-8 is no session: exit 2, nothing written; with --session it works all through" {
  name=$'caf\xe9.lock'
  run -2 --separate-stderr lock-acquire --pid $$ "$name"
  [[ $stderr == *"is not UTF-8 text: give --session NAME"* ]]
  assert_equal "$(ls -A)" ""
  run -2 lock-acquire --pid $$ --session $'s\xff' ok.lock
  [ ! -e ok.lock ]
  owner=$(live)
  run -0 lock-acquire --pid "$owner" --session cafe "$name"
  jq -e '.session == "cafe"' "$name"
  run -0 lock-heartbeat --pid "$owner" "$name"
  run -0 lock-status --json "$name"
  jq -e '.state == "live" and .file == "caf\ufffd.lock"' <<<"$output"
  run -0 lock-status --json .
  jq -e '.session == "cafe"' <<<"$output"
  run -0 lock-release --pid "$owner" "$name"
  assert_equal "$(ls -A)" ""
}
