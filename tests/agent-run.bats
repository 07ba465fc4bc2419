#!/usr/bin/env bats
# agent-run: an agent as one process group that dies with its caller.
load helpers

@test "the command's status; 127 and a message when it cannot run; usage errors are 2" {
  run -0 agent-run -- true
  run -3 agent-run -- sh -c 'exit 3'
  run -127 --separate-stderr agent-run -- ./no-such-agent
  [ "$stderr" = "agent-run: cannot run './no-such-agent': No such file or directory" ]
  run -2 agent-run
  run -2 agent-run stray
  run -2 agent-run --timeout x -- true
  run -2 agent-run --alive 12 --end 12
}

@test "the command runs in its own process group, whose id is agent-run's pid" {
  agent-run -- sh -c 'ps -o pgid= -p $$ >pgid' &
  sup=$!
  wait "$sup"
  [ "$(tr -d ' ' <pgid)" = "$sup" ]
  [ "$sup" != "$(ps -o pgid= -p $$ | tr -d ' ')" ]
}

@test "SIGTERM to agent-run reaches the whole group; the status is the command's" {
  agent-run -- sh -c 'sleep 60 & echo $! >child; sleep 60 & wait' &
  sup=$!
  wait_for child
  kill -TERM "$sup"
  rc=0
  wait "$sup" || rc=$?
  [ "$rc" = 143 ]
  run -1 kill -0 "$(cat child)"
}

@test "kill -9 of the caller: the group gets SIGTERM, then SIGKILL after --kill-after" {
  cat >agent.sh <<'EOF2'
#!/usr/bin/env bash
trap 'echo term >>got' TERM
echo $$ >agent.pid
while :; do sleep 0.1; done
EOF2
  chmod +x agent.sh
  # 2 s for the trap to run: a loaded machine (CI's 2 cores under ctest -j2)
  # once took longer than 0.5 s to schedule it before the SIGKILL
  bash -c 'agent-run --kill-after 2 -- ./agent.sh & echo $! >sup.pid; wait' &
  caller=$!
  wait_for agent.pid
  sup=$(cat sup.pid)
  kill -9 "$caller"
  wait_gone "$(cat agent.pid)"
  wait_gone "$sup"
  [ "$(cat got)" = term ]
  run -1 agent-run --alive "$sup"
}

@test "--timeout: SIGTERM, then SIGKILL after --kill-after; exit 124 and a message" {
  run -124 --separate-stderr agent-run --timeout 0.2 --kill-after 0.2 -- sh -c 'trap "" TERM; sleep 60'
  [ "$stderr" = "agent-run: 'sh' ran past 0.2s; its process group was ended" ]
}

@test "members left behind by the command are ended with it" {
  agent-run --kill-after 0.2 -- sh -c 'sleep 60 & echo $! >left'
  run -1 kill -0 "$(cat left)"
}

@test "--alive and --end: a group by id, and start time against pid reuse" {
  # its own group, a child of init once setsid -f returns (reaped there)
  setsid -f sh -c 'echo $$ >pg.tmp && mv pg.tmp pg && exec sleep 60'
  wait_for pg
  pgid=$(cat pg)
  start=$(awk '{ sub(/^.*\) /, ""); print $20 }' "/proc/$pgid/stat")
  run -0 agent-run --alive "$pgid:$start"
  run -1 agent-run --alive "$pgid:$((start + 1))" # another process under that number
  run -0 agent-run --end "$pgid:$start" --kill-after 0.5
  run -1 agent-run -q --alive "$pgid"
  [ -z "$output" ]
}

@test "a terminal on stdin becomes /dev/null: the background group is never stopped reading it" {
  command -v script >/dev/null || skip "script(1) is not installed"
  script -qec "agent-run -- sh -c 'cat; echo read-done'" /dev/null </dev/null >out.txt
  grep -q read-done out.txt
}
