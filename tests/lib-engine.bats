#!/usr/bin/env bats
# scripts/lib-engine.bash (with lib-lock, lib-agent and lib-loop) function by
# function, sourced as the engines source it; and how the engines find it.
load helpers

: "${LOOPKIT_SCRIPTS:=$LOOPKIT_SOURCE/scripts}"

lib() {
  LK_PROG=lib-test
  # shellcheck source=../scripts/lib-engine.bash
  . "$LOOPKIT_SCRIPTS/lib-engine.bash"
}

# what lk_setup gives an engine, without its traps (bats keeps its own)
engine_setup() {
  lk_find_tools "$LOOPKIT_BIN" agent-run state-get state-set event-append
  LK_SCRATCH=$(mktemp -d)
  exec {LK_STDIN}</dev/null
}

@test "sourced only: run on its own, the library says so and exits 2" {
  run -2 --separate-stderr bash "$LOOPKIT_SCRIPTS/lib-engine.bash"
  [[ $stderr == *"source it from an engine"* ]]
  run -2 bash "$LOOPKIT_SCRIPTS/lib-loop.bash"
}

@test "lk_json_str and lk_json_str_v quote any text as JSON" {
  lib
  run -0 lk_json_str $'a"b\\c\nd\te\x01'
  [ "$output" = '"a\"b\\c\nd\te\u0001"' ]
  lk_json_str_v 'plain'
  [ "$LK_JSON" = '"plain"' ]
  printf '{"k":%s}' "$(lk_json_str $'x"\\\n\x1f')" >j.json
  run -0 state-get -j j.json k
  [ "$output" = '"x\"\\\n\u001f"' ]
}

@test "lk_json_keys: the lines of a --next output, trimmed, as ids and JSON keys" {
  lib
  lk_json_keys $'a\nb-2\n\nc.d'
  [ "${#LK_IDS[@]}" = 4 ]
  [ "${LK_IDS[*]}" = "a b-2  c.d" ]
  [ "${LK_KEYS[*]}" = '"a" "b-2" "" "c.d"' ]
  # white space around an id goes, inside it stays; quotes are escaped
  lk_json_keys $'  a b \t\n"q"\n\\x\r'
  [ "${LK_IDS[0]}" = "a b" ]
  [ "${LK_KEYS[0]}" = '"a b"' ]
  [ "${LK_KEYS[1]}" = '"\"q\""' ]
  [ "${LK_IDS[2]}" = '\x' ]
  [ "${LK_KEYS[2]}" = '"\\x"' ]
  lk_json_keys ""
  [ "${#LK_IDS[@]}" = 0 ]
}

@test "lk_us, lk_secs_since and lk_ge: numbers in bash, no program started" {
  lib
  lk_us 1.5
  [ "$LK_US" = 1500000 ]
  lk_us 3.3333333
  [ "$LK_US" = 3333333 ]
  lk_us 08
  [ "$LK_US" = 8000000 ]
  run -1 lk_us 1e3
  run -1 lk_us -1
  lk_secs_since "$EPOCHREALTIME"
  [[ $LK_SECS =~ ^0\.[0-9]{3}$ ]]
  lk_secs_since 1000.25
  [[ $LK_SECS =~ ^[0-9]+\.[0-9]{3}$ ]]
  lk_ge 0.5 0.5
  lk_ge 1 0.999
  run -1 lk_ge 0.25 0.5
  # other forms go to awk
  lk_ge 1e3 999
  run -1 lk_ge 1e-3 0.5
}

@test "lk_stamp_v and lk_proc_start_v answer as lk_stamp and lk_proc_start, in a variable" {
  lib
  lk_stamp_v
  [ "$LK_STAMP" = "$(lk_stamp)" ] && [ "$LK_STAMP" = 2025-01-10T10:05:30Z ]
  lk_proc_start_v $$
  [ "$LK_PROC_START" = "$(lk_proc_start $$)" ] && [[ $LK_PROC_START =~ ^[0-9]+$ ]]
  lk_proc_start_v "$(dead_pid)"
  [ -z "$LK_PROC_START" ]
}

@test "lk_over_budget: only with --max-cost, a missing total is 0" {
  lib
  LK_MAX_COST=""
  run -1 lk_over_budget 100
  LK_MAX_COST=0.5
  run -1 lk_over_budget null
  run -1 lk_over_budget ""
  run -1 lk_over_budget 0.25
  lk_over_budget 0.5
  lk_over_budget 7
}

@test "lk_safe_name: one file name per text, distinct texts distinct names" {
  lib
  [ "$(lk_safe_name 'bd-1.x_y')" = 'bd-1.x_y' ]
  [ "$(lk_safe_name '.hidden')" = '%2Ehidden' ]
  [ "$(lk_safe_name 'a/b c%')" = 'a%2Fb%20c%25' ]
  [ "$(lk_safe_name 'a%2Fb')" != "$(lk_safe_name 'a/b')" ]
}

@test "lk_fmt_secs, lk_abspath, lk_is_url, lk_place and lk_in" {
  lib
  [ "$(lk_fmt_secs 65)" = 1:05 ]
  [ "$(lk_fmt_secs 3725.9)" = 1:02:05 ]
  [ "$(lk_fmt_secs junk)" = 0:00 ]
  [ "$(lk_abspath /x/y)" = /x/y ]
  [ "$(lk_abspath ./a/b)" = "$PWD/a/b" ]
  lk_is_url etcd://h:1/k
  lk_is_url etcds://h:1/k
  run -1 lk_is_url /etcd://x
  [ "$(lk_place etcd://h:1/k)" = etcd://h:1/k ]
  [ "$(lk_place s.json)" = "$PWD/s.json" ]
  [ "$(lk_in /a/locks/ x.lock)" = /a/locks/x.lock ]
  [ "$(lk_in etcd://h:1/lk/locks x.lock)" = etcd://h:1/lk/locks/x.lock ]
}

@test "lk_check_name, lk_need_uint and lk_common_option refuse bad words with exit 2" {
  lib
  lk_check_name session demo
  run -2 --separate-stderr lk_check_name session a/b
  [[ $stderr == *"session 'a/b' is not a usable name"* ]]
  run -2 lk_check_name session -x
  run -2 lk_check_name session ..
  run -2 --separate-stderr lk_need_uint --max 1.5
  [[ $stderr == *"--max: '1.5' is not a whole number"* ]]
  lk_common_option --retries 3
  [ "$LK_RETRIES" = 3 ] && [ "$LK_SHIFT" = 2 ]
  lk_common_option --max-cost=0.75
  [ "$LK_MAX_COST" = 0.75 ] && [ "$LK_SHIFT" = 1 ]
  run -2 lk_common_option --ttl 1
  run -2 lk_common_option -E 256
  run -2 --separate-stderr lk_common_option --retries
  [[ $stderr == *"option '--retries' requires an argument"* ]]
}

@test "lk_int and lk_str read a state file, with defaults for what is missing" {
  lib
  printf '{"n":4,"s":"x","z":null,"f":1.5}' >s.json
  [ "$(lk_int s.json n 0)" = 4 ]
  [ "$(lk_int s.json f 9)" = 9 ]
  [ "$(lk_int s.json z 7)" = 7 ]
  [ "$(lk_int nosuch.json n 3)" = 3 ]
  [ "$(lk_str s.json s)" = x ]
  [ "$(lk_str s.json z)" = "" ]
  [ "$(lk_str s.json missing)" = "" ]
}

@test "lk_read_result: the agent's result into R_*, a bad one warned about and ignored" {
  lib
  printf '{"plateau":true,"reasoning":"r s","stop":"done","cost":0.5,"tokens":9,"session_id":"x"}' >r.json
  lk_read_result r.json
  [ "$R_plateau" = true ] && [ "$R_reasoning" = "r s" ] && [ "$R_stop" = done ]
  [ "$R_cost" = 0.5 ] && [ "$R_tokens" = 9 ] && [ "$R_session_id" = x ] && [ -z "$R_turns" ]
  lk_read_result nosuch.json
  [ -z "$R_plateau$R_cost" ]
  printf '{"plateau":' >bad.json
  run -0 --separate-stderr lk_read_result bad.json
  [[ $stderr == *"warning: ignoring the agent's result"* ]]
}

@test "lk_usage_args: numbers become assignments and event fields, others a warning" {
  lib
  R_cost=0.25 R_tokens=100 R_turns=""
  lk_usage_args 'history[-1]'
  [ "${LK_ARGS[*]}" = 'history[-1].cost:=0.25 total_cost+=0.25 history[-1].tokens:=100 total_tokens+=100' ]
  [ "${LK_USAGE[*]}" = 'cost:=0.25 tokens:=100' ]
  R_cost=lots R_tokens=1.5 R_turns=2
  lk_usage_args "" 2>err.txt
  [ "${LK_ARGS[*]}" = 'total_turns+=2' ]
  grep -q "ignoring cost 'lots'" err.txt
  grep -q "ignoring tokens '1.5'" err.txt
}

@test "lk_find_session: a state file, a loop session under a root, a drain's root by name" {
  lib
  mkdir -p .claude/pipeline-runs/demo .atari
  echo '{}' >.claude/pipeline-runs/demo/state.json
  echo '{}' >.atari/state.json
  lk_find_session demo .claude
  [ "$LK_FOUND_STATE" = .claude/pipeline-runs/demo/state.json ]
  [ "$LK_FOUND_EVENTS" = .claude/pipeline-runs/demo/events.jsonl ]
  lk_find_session atari .claude .atari
  [ "$LK_FOUND_STATE" = .atari/state.json ]
  lk_find_session .claude/pipeline-runs/demo/state.json
  [ "$LK_FOUND_EVENTS" = .claude/pipeline-runs/demo/events.jsonl ]
  run -1 lk_find_session nosuch .claude .atari
}

@test "lk_find_tools: LOOPKIT_BIN, then PATH, then beside the script; a partial folder is named" {
  lib
  local bin=$LOOPKIT_BIN
  unset LOOPKIT_BIN
  mkdir -p old/bin old/scripts
  ln -s "$bin/state-get" old/bin/state-get
  PATH=/usr/bin:/bin
  run -4 --separate-stderr lk_find_tools "$PWD/old/scripts" state-get state-set
  [[ $stderr == *"has the loopkit tools but not state-set"* ]]
  run -4 --separate-stderr lk_find_tools "$PWD/none" state-get
  [[ $stderr == *"cannot find the loopkit tools (state-get)"* ]]
  LOOPKIT_BIN=$bin lk_find_tools "$PWD/none" state-get state-set
  [ "$(type -P state-set)" = "$(cd "$bin" && pwd)/state-set" ]
  # an install: PREFIX/libexec/loopkit finds PREFIX/bin
  mkdir -p inst/bin inst/libexec/loopkit
  ln -s "$bin/event-show" inst/bin/event-show
  PATH=/usr/bin:/bin
  lk_find_tools "$PWD/inst/libexec/loopkit" event-show
  [ "$(type -P event-show)" = "$PWD/inst/bin/event-show" ]
}

@test "lk_event appends one event, and a log it cannot write is a warning, never the end" {
  lib
  LK_EVENTS=$PWD/events.jsonl LK_SESSION=s
  lk_event iteration-start "iteration:=3" "stage:=0"
  run -0 state-get events.jsonl type session iteration stage
  [ "$output" = $'iteration-start\ns\n3\n0' ]
  LK_EVENTS=$PWD/nosuch/events.jsonl
  run -0 --separate-stderr lk_event x
  [[ $stderr == *"warning: could not record the event 'x'"* ]]
}

@test "lk_control: running goes on, stopped is 1, paused waits for the change" {
  lib
  LK_POLL=0.05 LK_EVENTS=$PWD/events.jsonl LK_SESSION=s
  printf '{"status":"running"}' >s.json
  lk_control s.json
  printf '{"status":"stopped"}' >s.json
  run -1 lk_control s.json
  printf '{"status":"paused"}' >s.json
  (sleep 0.3; state-set s.json status=running) &
  lk_control s.json 2>/dev/null
  wait
  run -0 state-get - type <events.jsonl
  [ "$output" = $'stopped\npaused\nresumed' ]
}

@test "lk_draw: a resize in the middle of a draw starts it over at the new width" {
  lib
  LK_TTY=1 LK_COLOR=0 LK_LABEL="session s" LK_STATUS=$(printf 'busy %.0s' {1..40})
  trap lk_resized WINCH
  # the terminal is 120 columns when the draw asks, and 50 from then on: the
  # resize lands while the draw is under way, its WINCH trap in the middle
  stty() {
    if [[ ! -e asked ]]; then
      touch asked
      kill -WINCH $$
      echo "15 120"
    else
      echo "15 50"
    fi
  }
  lk_draw 2>drawn
  trap - WINCH
  # what stays on the screen is what follows the last carriage return
  last=$(tr '\r' '\n' <drawn | tail -n 1)
  last=${last#$'\e[K'}
  local LC_ALL=C.UTF-8
  [[ $last == "lib-test session s · "* ]]
  ((${#last} <= 49))
}

@test "lk_beat_if_due: no beat while the last one is fresh, one when it is due" {
  lib
  beats=0
  lk_lock_check() { beats=$((beats + 1)); }
  LK_LOCK=/x.lock LK_BEAT_EVERY=10 LK_BEAT_OK=$EPOCHREALTIME
  lk_beat_if_due
  [ "$beats" = 0 ]
  LK_BEAT_OK=$((${EPOCHREALTIME%.*} - 11)).0
  lk_beat_if_due
  [ "$beats" = 1 ]
  # a beat interval it cannot read is always due
  LK_BEAT_EVERY=1e+06 LK_BEAT_OK=$EPOCHREALTIME
  lk_beat_if_due
  [ "$beats" = 2 ]
}


@test "lk_timer lasts its SECONDS under set -e, as the engines run it, not one read of its FIFO" {
  lib
  mkfifo tick
  exec {LK_TICK}<>tick
  local t0=$EPOCHREALTIME rc=0
  lk_timer 2.5
  wait "$!" || rc=$?
  [ "$rc" = 0 ]
  lk_secs_since "$t0"
  lk_ge "$LK_SECS" 2.4
}

# Bash 5.2's wait -n can miss a job that ends just as it starts to wait (its
# SIGCHLD handled between its look for dead jobs and its blocking waitpid):
# it then waits for the other job, the beat timer. The engine's wait, under
# strace -f and load, stood still for the whole beat (LK_HEARTBEAT=3600: a
# hang). Here wait -n misses the agent once, by a stand-in for the builtin.
@test "lk_wait_agent: an agent's end that wait -n misses is seen within a second, not a beat later" {
  lib
  engine_setup
  mkfifo tick
  exec {LK_TICK}<>tick
  LK_LOCK=$PWD/x.lock LK_BEAT_EVERY=600 LK_BEAT_FAILING=0 LK_BEAT_OK=$EPOCHREALTIME # beaten just now
  lk_beat() { echo beat >>beats; }
  (
    missed=0
    wait() {
      if [[ $1 == -n && $missed == 0 ]]; then
        missed=1
        builtin wait -n -p "$3" "${@:5}" # the timer alone: the agent is missed
        return
      fi
      builtin wait "$@"
    }
    bash -c 'exit 7' &
    LK_AGENT_PID=$!
    lk_wait_agent
    echo "$LK_RC" >rc.tmp && mv rc.tmp rc
  ) &
  wait_for rc # 30 s; the beat is 600 s away
  [ "$(cat rc)" = 7 ]
  [ ! -e beats ]
}
# The same race in the real bash, made certain by gdb: the drain is held just
# as wait -n has looked for dead jobs (in wait_for, before it blocks), its
# agent ends meanwhile, and its SIGCHLD is handled when it goes on.
@test "a drain whose agent ends just as wait -n starts to block (gdb) goes on, not a beat later" {
  command -v gdb >/dev/null || skip "gdb is not installed"
  gdb -nx -q -batch -ex 'info functions ^wait_for_any_job$' "$(type -P bash)" 2>/dev/null | grep -q wait_for_any_job ||
    skip "this bash names no wait_for_any_job for gdb"
  cat >g.gdb <<EOF
set pagination off
set confirm off
handle SIGCHLD nostop noprint pass
break wait_for_any_job
run
delete
break wait_for
continue
delete
shell touch $PWD/go
shell sleep 1
continue
EOF
  # the beat (an hour) is the wait's other job; the agent waits for ./go
  LK_HEARTBEAT=3600 run timeout -k 5 60 gdb -nx -q -batch -x g.gdb --args bash "$LOOPKIT_SCRIPTS/drain-engine" \
    --next 'seq 1 1' -- bash -c "while [ ! -e '$PWD/go' ]; do sleep 0.05; done"
  [[ $output == *"Breakpoint 2, "*"wait_for ()"* ]] || skip "gdb could not hold bash in wait_for: $output"
  [ "$status" = 0 ]
  run -0 state-get .atari/state.json status 'history["1"].status'
  [ "$output" = $'stopped\ncompleted' ]
}

@test "lk_loop_reason: a plateau streak first, then the maximum" {
  lib
  lk_loop_reason 3 10 2 2
  [ "$LK_REASON" = plateau ]
  lk_loop_reason 10 10 2 1
  [ "$LK_REASON" = max_iterations ]
  lk_loop_reason 3 10 0 5
  [ -z "$LK_REASON" ]
}

@test "lk_loop runs iterations over a state file, with an engine's hooks" {
  lib
  engine_setup
  LK_EVENTS=$PWD/events.jsonl LK_SESSION=s
  printf '{"status":"running","history":[],"total_cost":0}' >s.json
  printf '#!/bin/sh\necho "$LOOPKIT_ITERATION" >>ran.log\n[ "$LOOPKIT_ITERATION" != 2 ] || echo "{\\"plateau\\":true}" >"$LOOPKIT_RESULT"\n' >a.sh
  chmod +x a.sh
  LK_IT_CMD=(./a.sh) LK_IT_EVENT=("stage:=4") LK_IT_ENTRY=',"stage":"x"'
  lk_it_done_args() { LK_ARGS+=("done_$1:=true"); }
  lk_loop s.json 1 3 1 0 2>/dev/null
  [ "$LK_REASON" = plateau ] && [ "$LK_IT" = 2 ]
  [ "$(tr '\n' ' ' <ran.log)" = "1 2 " ]
  run -0 state-get s.json iteration_completed '.history[].stage' '.history[].plateau' done_1 done_2
  [ "$output" = $'2\nx\nx\nfalse\ntrue\ntrue\ntrue' ]
  run -0 state-get - '[.type, .stage, .iteration]' <events.jsonl
  [ "$output" = $'["iteration-start",4,1]\n["iteration-done",4,1]\n["iteration-start",4,2]\n["iteration-done",4,2]' ]
}

@test "lk_loop: a failing agent is recorded with the engine's words, exit 5" {
  lib
  engine_setup
  printf '{"status":"running","history":[]}' >s.json
  LK_IT_WHERE="stage 1 (b), " LK_IT_NOUN=pipeline LK_IT_AGENT=command
  LK_IT_CMD=(false)
  lk_it_fail_args() { LK_ARGS+=("why=$1"); }
  run -5 --separate-stderr lk_loop s.json 1 3 2 0
  [[ $stderr == *"stage 1 (b), iteration 1: the command exited with status 1; pipeline failed: agent-error; done 0, left 3"* ]]
  run -0 state-get s.json status completion_reason why
  [ "$output" = $'failed\nagent-error\nagent-error' ]
}

# --- how the engines find the library -----------------------------------------

@test "every engine runs through a symlink in another folder, and a chain of them" {
  mkdir -p mybin other
  for e in loop-engine pipeline-engine drain-engine engine-ctl engine-status engine-report; do
    ln -s "$LOOPKIT_SCRIPTS/$e" "mybin/$e"
    run -0 "mybin/$e" --version
    [[ $output == "$e (loopkit) "* ]]
  done
  ln -s ../mybin/loop-engine other/le
  run -0 other/le --session demo --max-iterations 2 -- true
  run -0 state-get .claude/pipeline-runs/demo/state.json status iteration_completed
  [ "$output" = $'complete\n2' ]
  # a relative symlink reached through a symlinked folder
  ln -s mybin linked
  run -0 linked/drain-engine --next 'echo a' -- true
  run -0 state-get .atari/state.json '.history.a.status'
  [ "$output" = completed ]
}

@test "an engine whose library is missing says which file, exit 4" {
  mkdir -p copy
  cp "$LOOPKIT_SCRIPTS/loop-engine" copy/
  run -4 --separate-stderr copy/loop-engine --version
  [[ $stderr == *"$PWD/copy/lib-engine.bash"* ]]
}

@test "installed: bin/ links to the engines in libexec/loopkit, which run from a link in ~/bin" {
  [ -n "${LOOPKIT_BUILD:-}" ] && [ -f "$LOOPKIT_BUILD/CMakeCache.txt" ] || skip "no build folder (LOOPKIT_BUILD)"
  cmake --install "$LOOPKIT_BUILD" --prefix "$BASE/inst" >/dev/null
  for e in loop-engine pipeline-engine drain-engine engine-ctl engine-status engine-report; do
    [ "$(readlink "$BASE/inst/bin/$e")" = "../libexec/loopkit/$e" ]
    [ -x "$BASE/inst/libexec/loopkit/$e" ]
  done
  [ -f "$BASE/inst/libexec/loopkit/lib-loop.bash" ]
  mkdir -p "$HOME/bin"
  ln -s "$BASE/inst/bin/loop-engine" "$HOME/bin/loop-engine"
  # the tools are found beside the install, not on PATH
  PATH=/usr/bin:/bin run -0 "$HOME/bin/loop-engine" --session demo --max-iterations 1 -- true
  run -0 "$BASE/inst/bin/state-get" .claude/pipeline-runs/demo/state.json status
  [ "$output" = complete ]
}

@test "lk_fenced and lk_get_lines start their tool from the engine's own shell, traps set: one fork a call" {
  need_strace
  lib
  state-set --init '{"a":0}' s.json a:=0
  scratch=$(mktemp -d)
  cat >w.bash <<EOF
LK_PROG=w
. "$LOOPKIT_SCRIPTS/lib-engine.bash"
# an engine's traps: with them bash forks twice for a \$(...)
trap 'exit 1' INT TERM HUP QUIT
LK_SCRATCH=$scratch
for i in 1 2 3 4 5; do lk_fenced s.json "a:=\$i"; lk_get_lines v -j -d null s.json a nope; done
printf 'got %s\n' "\${v[@]}"
rc=0; lk_fenced s.json 'a.b=1' 2>/dev/null || rc=\$?
printf 'rc=%s err=%s\n' "\$rc" "\$LK_ERR"
rc=0; lk_get_lines v s.json '.[' 2>/dev/null || rc=\$?
printf 'get rc=%s\n' "\$rc"
EOF
  run -0 strace_calls trace -e trace=clone,clone3,fork,vfork bash w.bash
  [[ $output == *$'got 5\ngot null\n'* ]]
  [[ $output == *"rc=3 err=state-set: "*"a.b"* ]]
  [[ $output == *"get rc=2"* ]]
  # 5 writes and 5 reads, the failing write and the failing read: 12 tools,
  # each started by one fork of the shell itself (a $(...) would be two)
  [ "$(grep -cE 'clone|fork' trace)" = 12 ]
}
