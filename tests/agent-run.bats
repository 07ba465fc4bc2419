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

# wait_free FILE: until no process holds FILE's hold (agent-run --alive), bounded: 40 s
wait_free() {
  local i
  for ((i = 0; i < 400; i++)); do agent-run -q --alive "$1" || return 0; sleep 0.1; done
  echo "$1 is still held" >&2
  return 1
}

@test "--hold: the agent's processes hold FILE while any of them lives; --alive FILE says so" {
  run -1 agent-run --alive h # no file: no holder
  agent-run --hold h -- sh -c 'sleep 300 & echo $! >child; echo $$ >agent.tmp; mv agent.tmp agent; wait' &
  sup=$!
  wait_for agent
  run -0 agent-run --alive h
  read -r pgid _ engine _ <h
  [ "$pgid" = "$sup" ]
  [ "$engine" = "$$" ]
  kill -TERM "$sup"
  wait "$sup" || true
  run -1 agent-run -q --alive h
  [ -z "$output" ]
  run -2 agent-run --hold h --alive h
}

@test "--hold waits while another holds FILE: the second command starts only when the first has ended" {
  agent-run --hold h -- sh -c 'echo $$ >first.tmp; mv first.tmp first; sleep 300' &
  one=$!
  wait_for first
  agent-run --hold h -- sh -c 'echo started >second' &
  two=$!
  wait_exec "$two" agent-run
  [ ! -e second ] # the first still lives
  kill -TERM "$one"
  wait "$two"
  [ "$(cat second)" = started ]
}

@test "kill -9 of agent-run itself: its sentinel ends the group, and the hold is freed" {
  agent-run --kill-after 1 --hold h -- sh -c 'trap "" TERM; sleep 300 & echo $! >child; echo $$ >agent.tmp; mv agent.tmp agent; wait' &
  sup=$!
  wait_for agent
  kill -9 "$sup"
  wait_gone "$(cat agent)"
  wait_gone "$(cat child)"
  wait_free h
}

@test "kill -9 of the caller's whole process group (kill -9 %1): the agent dies too" {
  # the caller and agent-run in one group of their own, as a shell's job
  setsid bash -c 'echo $$ >caller.tmp; mv caller.tmp caller; agent-run --hold h -- sh -c "sleep 300 & echo \$! >child; echo \$\$ >agent.tmp; mv agent.tmp agent; wait"; :' &
  wait_for caller
  wait_for agent
  kill -9 -- "-$(cat caller)"
  wait_gone "$(cat agent)"
  wait_gone "$(cat child)"
  wait_free h
}

@test "job control: SIGTSTP stops the agent's group and agent-run, SIGCONT continues them; SIGQUIT ends them, 131" {
  agent-run -- sh -c 'echo $$ >agent.tmp; mv agent.tmp agent; while :; do sleep 0.1; done' &
  sup=$!
  wait_for agent
  agent=$(cat agent)
  kill -TSTP "$sup"
  wait_state "$agent" T
  wait_state "$sup" T
  kill -CONT "$sup"
  wait_not_state "$agent" T
  wait_not_state "$sup" T
  kill -QUIT "$sup"
  rc=0
  wait "$sup" || rc=$?
  [ "$rc" = 131 ]
  wait_gone "$agent"
}

@test "--end FILE ends a holder that left the group (setsid) and still holds the hold" {
  # the agent returns only once its child has left the group (else the end
  # of the run's group could take the child before its setsid)
  agent-run --kill-after 0.5 --hold h -- sh -c 'setsid sh -c "echo \$\$ >left.tmp && mv left.tmp left && exec sleep 300" </dev/null >/dev/null 2>&1 &
    while [ ! -s left ]; do sleep 0.01; done'
  left=$(cat left)
  echo "$left" >>"$W.pids"
  run -0 agent-run --alive h
  run -0 agent-run --kill-after 0.5 --end h
  wait_gone "$left"
  run -1 agent-run --alive h
}

@test "--output: stdout and stderr reach ours each, and FILE both, in arrival order; they are pipes" {
  run -3 --separate-stderr agent-run --output out.log -- sh -c 'echo one; sleep 0.01; echo two >&2
    i=0; while ! grep -qx two out.log && [ $i -lt 3000 ]; do sleep 0.01; i=$((i + 1)); done; echo three
    [ -p /dev/stdout ] && [ -p /dev/stderr ] && echo pipes >&2; exit 3'
  [ "$output" = "$(printf 'one\nthree')" ]
  [ "$stderr" = "$(printf 'two\npipes')" ]
  run cat out.log
  # "two" was in the file before "three" was written
  [ "$(sed -n 3p out.log)" = three ]
  [ "$(head -n 2 out.log | sort | tr '\n' ' ')" = "one two " ]
  [ "$(tail -n 1 out.log)" = pipes ]
}

@test "--output-limit: past BYTES the file keeps the head and the tail, a marker line between" {
  run -0 agent-run --output out.log --output-limit 100 -- seq 1 200
  [ "$(sed -n 20p out.log)" = 20 ]
  [ "$(sed -n 21p out.log)" = "[… 594 bytes left out …]" ]
  [ "$(sed -n 22p out.log)" = 189 ]
  [ "$(tail -n 1 out.log)" = 200 ]
  [ "$(wc -l <out.log)" = 33 ]
  [ "${#output}" = 691 ] # the terminal got it all
  # under the limit, and with 0, the whole output
  agent-run --output all.log --output-limit 0 -- seq 1 20000 >/dev/null
  cmp all.log <(seq 1 20000)
  agent-run --output some.log -- seq 1 100 >/dev/null
  cmp some.log <(seq 1 100)
  run -2 agent-run --output x --output-limit 1 -- true
  run -2 agent-run --output x --output-limit -5 -- true
  run -2 agent-run --output x --alive 12
}

@test "--output: a kill -9 of agent-run leaves the head and the tail written up to a second before" {
  agent-run --output out.log --output-limit 200 -- sh -c 'seq 1 1000; echo $$ >agent.tmp; mv agent.tmp agent; exec sleep 300' >/dev/null &
  sup=$!
  wait_for agent
  wait_grep "bytes left out" out.log
  wait_grep 1000 out.log
  kill -9 "$sup"
  wait_gone "$(cat agent)" # the sentinel ends the group
  head -n 1 out.log | grep -qx 1
  tail -n 1 out.log | grep -qx 1000
}

@test "--output: a reader of ours that went away ends only that copy; FILE gets all" {
  run -0 broken_pipe agent-run --output out.log -- sh -c 'seq 1 5000; echo done >&2'
  [ "$output" = done ]
  cmp out.log <(seq 1 5000; echo done)
}

@test "--output: a process that left the group holding the pipe does not keep agent-run" {
  run -0 timeout 60 agent-run --output out.log -- sh -c 'setsid sh -c "echo \$\$ >left.tmp; mv left.tmp left; exec sleep 300" &
    while [ ! -s left ]; do sleep 0.01; done; echo bye'
  echo "$(cat left)" >>"$W.pids"
  grep -qx bye out.log
}

@test "--output: a FILE that cannot be written is said; the agent runs, its status stays" {
  need_strace
  run -4 --separate-stderr strace -o /dev/null -e inject=pwrite64:error=ENOSPC agent-run --output out.log -- sh -c 'echo hi; exit 4'
  [ "$output" = hi ]
  [ "$stderr" = "agent-run: cannot write 'out.log': No space left on device; it holds the output up to there" ]
  # a planted symlink is not followed
  echo secret >target
  ln -s target link.log
  run -0 --separate-stderr agent-run --output link.log -- echo hi
  [ "$output" = hi ]
  [[ $stderr == "agent-run: cannot open 'link.log': "*"; the output goes to the terminal only" ]]
  [ "$(cat target)" = secret ]
}

@test "--output: after a kill -9 of agent-run, an agent that writes while it ends still runs its SIGTERM handler" {
  agent-run --kill-after 20 --output out.log -- bash -c 'trap "echo ending; echo ending >&2; echo done >handled; exit 0" TERM
    echo $$ >agent.tmp; mv agent.tmp agent; while :; do sleep 0.1; done' >/dev/null 2>&1 &
  sup=$!
  wait_for agent
  kill -9 "$sup"
  wait_for handled # no SIGPIPE: the sentinel keeps the pipes open while it ends the group
  wait_gone "$(cat agent)"
}

# issue 36 §3: agent-run costs what a static program's start costs, and little more
@test "no fork copies agent-run's memory: the agent and the sentinel start in it, the agent's exec waited for" {
  need_strace
  strace_calls trace -e trace=clone,clone3,fork,vfork agent-run --hold h --output out.log -- "$(type -P true)"
  # two children: the sentinel (CLONE_VM), the agent (CLONE_VM|CLONE_VFORK)
  assert_equal "$(grep -cE '(clone|clone3|fork|vfork)\(' trace)" 2
  assert_equal "$(grep -cE 'clone3?\(.*CLONE_VM' trace)" 2
  assert_equal "$(grep -cE 'clone3?\(.*CLONE_VFORK' trace)" 1
}

@test "without close_range (a kernel older than 5.9) the sentinel is forked, and still ends the group after kill -9" {
  need_strace
  # agent-run under strace: it reaches its sentinel only after the agent ran
  strace -f -qq -o trace -e trace=clone,close_range -e inject=close_range:error=ENOSYS \
    agent-run --kill-after 1 --hold h -- sh -c 'trap "" TERM; echo $$ >agent.tmp; mv agent.tmp agent; sleep 300 & wait' &
  wait_for agent
  sup=$(ps -o pgid= -p "$(cat agent)" | tr -d ' ')
  kill -9 "$sup"
  wait_gone "$(cat agent)"
  wait_free h
  wait
  # agent-run's clones: the sentinel's copied the memory (no CLONE_VM), the agent's did not
  assert_equal "$(grep -E "^$sup +clone3?\(" trace | grep -vc CLONE_VM)" 1
  assert_equal "$(grep -E "^$sup +clone3?\(" trace | grep -c CLONE_VFORK)" 1
}

@test "--hold: a record shorter than the last leaves nothing of it, and the file is never cut to empty" {
  need_strace
  echo '2147483647 18446744073709551615 2147483647 18446744073709551615' >h
  agent-run --hold h -- sh -c 'ps -o pgid= -p $$ >group'
  read -r pgid start parent parent_start rest <h
  assert_equal "$pgid" "$(tr -d ' ' <group)"
  assert_equal "$parent" "$$"
  [[ $start =~ ^[0-9]+$ && $parent_start =~ ^[0-9]+$ && -z $rest ]]
  assert_equal "$(wc -l <h)" 1
  # ext4 writes a file cut to empty back at its last close (auto_da_alloc):
  # one disk write an agent run, were it cut to 0
  strace_calls trace -e trace=ftruncate agent-run --hold h -- true
  assert_equal "$(grep -c 'ftruncate(' trace)" 1
  run -1 grep -E 'ftruncate\([0-9]+, 0\)' trace
}

@test "a script without #! runs under sh, as execvp runs one; a file that cannot be run is 126" {
  mkdir bin
  printf 'echo "ran $1"\n' >bin/plain-script
  chmod +x bin/plain-script
  PATH="$PWD/bin:$PATH" run -0 agent-run -- plain-script one
  assert_equal "$output" "ran one"
  printf 'echo never\n' >bin/not-executable
  PATH="$PWD/bin:$PATH" run -126 --separate-stderr agent-run -- ./bin/not-executable
  assert_equal "$stderr" "agent-run: cannot run './bin/not-executable': Permission denied"
  assert_equal "$output" ""
}

@test "under valgrind, which follows no child that shares memory but a vfork, agent-run runs and says why a command could not" {
  command -v valgrind >/dev/null || skip "valgrind is not installed"
  [[ -z ${LOOPKIT_SANITIZED:-} ]] || skip "valgrind cannot run a sanitized build (AddressSanitizer maps its own shadow memory)"
  run -0 valgrind -q --tool=none --error-exitcode=99 agent-run --hold h -- sh -c 'echo ran'
  assert_equal "$output" ran
  run -127 --separate-stderr valgrind -q --tool=none --error-exitcode=99 agent-run -- ./no-such-agent
  assert_equal "$stderr" "agent-run: cannot run './no-such-agent': No such file or directory"
}
