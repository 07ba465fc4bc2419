#!/usr/bin/env bats
# Answers a script can rely on (issue 39, item 18): what the pages say a
# tool answers in a fresh project, after a release, and when nothing came.
load helpers

@test "lock-status: a lock in a folder not made yet is free (exit 1), quietly with -q" {
  run -1 --separate-stderr lock-status .claude/locks/auth.lock
  assert_output ".claude/locks/auth.lock: free"
  assert_equal "$stderr" ""
  run -1 --separate-stderr lock-status -q .claude/locks/auth.lock
  assert_output ""
  assert_equal "$stderr" ""
  # the page's example
  run -0 --separate-stderr sh -c 'lock-status -q .claude/locks/auth.lock || echo start'
  assert_output start
  assert_equal "$stderr" ""
  [ ! -e .claude ]
}

@test "lock-status: a folder not made yet holds no lock: nothing listed, exit 0; --stale and --live exit 1" {
  run -0 --separate-stderr lock-status .claude/locks
  assert_output ""
  assert_equal "$stderr" ""
  run -1 --separate-stderr lock-status --stale .claude/locks
  assert_equal "$stderr" ""
  run -1 --separate-stderr lock-status --live --json .claude/locks/
  assert_equal "$stderr" ""
}

@test "lock-reap still refuses a folder that is not there (a wrong LOCK_DIRS)" {
  run -4 --separate-stderr lock-reap .claude/locks
  [[ $stderr == *"'.claude/locks'"* ]]
}

@test "lock-release: no lock in a folder not made yet is 'no lock', exit 1, and makes nothing" {
  run -1 --separate-stderr lock-release --pid $$ .claude/locks/auth.lock
  [[ $stderr == "lock-release: "*"auth.lock"* ]]
  [[ $stderr != *"No such file"* ]]
  run -1 --separate-stderr lock-release --force .claude/locks/auth.lock
  [[ $stderr != *"No such file"* ]]
  [ ! -e .claude ]
}

@test "lock-heartbeat --every ends as soon as its owner releases the lock, not at its next beat" {
  owner=$(live)
  lock-acquire --pid "$owner" a.lock
  lock-heartbeat --every 3600 --pid "$owner" a.lock 2>err &
  hb=$!
  wait_grep heartbeat_every a.lock
  lock-release --pid "$owner" a.lock
  # an hour between beats: only the release can end it within the bound
  wait_gone "$hb"
  rc=0 && wait "$hb" || rc=$?
  assert_equal "$rc" 0
  assert_equal "$(cat err)" ""
  run -0 ls -A
  assert_output err
}

@test "lock-heartbeat --every ends at once when its lock is taken over, and goes on through another beater's writes" {
  owner=$(live)
  lock-acquire --pid "$owner" a.lock
  lock-heartbeat --every 3600 --pid "$owner" a.lock 2>err &
  hb=$!
  wait_grep heartbeat_every a.lock
  # the owner's second beater rewrites the lock: still ours, the first goes on
  run -0 lock-heartbeat --pid "$owner" a.lock
  run -0 lock-heartbeat --pid "$owner" a.lock
  kill -0 "$hb"
  # taken over (forced away, then another's): the beater says so, exit 1
  lock-release --force a.lock
  lock-acquire --pid "$(live)" a.lock
  wait_gone "$hb"
  rc=0 && wait "$hb" || rc=$?
  assert_equal "$rc" 1
}

@test "event-show --after-seq: nothing came since is exit 0 with nothing printed; other choices that find none stay exit 1" {
  event-append log.jsonl start >/dev/null
  event-append log.jsonl done >/dev/null
  run -0 --separate-stderr event-show --after-seq 2 --json log.jsonl
  assert_output ""
  assert_equal "$stderr" ""
  run -0 --separate-stderr event-show --after-seq 1 --type start log.jsonl
  assert_output ""
  run -0 event-show --after-seq 1 --json log.jsonl
  assert_output --partial '"seq":2'
  run -1 --separate-stderr event-show --type failed log.jsonl
  assert_equal "$stderr" "event-show: no event selected in 'log.jsonl'"
  run -1 event-show --after-seq 0 missing.jsonl
}
