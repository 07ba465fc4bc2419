#!/usr/bin/env bats
# scripts/engine-status: one line per session.
load helpers

: "${LOOPKIT_SCRIPTS:=$LOOPKIT_SOURCE/scripts}"

@test "--json: one object per session, loop, pipeline and drain" {
  printf '#!/bin/sh\nprintf "{\\"cost\\":0.25}" >"$LOOPKIT_RESULT"\n' >agent.sh
  chmod +x agent.sh
  "$LOOPKIT_SCRIPTS/loop-engine" --session one --max-iterations 2 -- ./agent.sh 2>/dev/null
  printf '{"name":"p","stages":[{"name":"a","runs":1,"command":"./agent.sh"}]}' >p.json
  "$LOOPKIT_SCRIPTS/pipeline-engine" --session two p.json 2>/dev/null
  : >ready
  "$LOOPKIT_SCRIPTS/drain-engine" --next 'cat ready' -- ./agent.sh 2>/dev/null
  run -0 "$LOOPKIT_SCRIPTS/engine-status" -j
  [ "${#lines[@]}" = 3 ]
  printf '%s\n' "$output" >out.jsonl
  run -0 state-get - '.session' '.type' '.status' '.iteration' '.max_iterations' '.lock' '.last_event' '.total_cost' <<<"${lines[0]}"
  [ "$output" = $'one\nloop\ncomplete\n2\n2\nfree\ncomplete\n0.5' ]
  run -0 state-get - '.session' '.type' '.stage' '.last_event' <<<"$(sed -n 2p out.jsonl)"
  [ "$output" = $'two\npipeline\na\ncomplete' ]
  run -0 state-get - '.type' '.status' <<<"$(sed -n 3p out.jsonl)"
  [ "$output" = $'drain\nstopped' ]
}

@test "a running session shows its live lock and its last event; text in a pipe" {
  cat >agent.sh <<'EOF'
#!/bin/sh
touch started
while [ ! -e go ]; do sleep 0.1; done
EOF
  chmod +x agent.sh
  "$LOOPKIT_SCRIPTS/loop-engine" --session run --max-iterations 1 -- ./agent.sh 2>/dev/null &
  e=$!
  wait_for started
  run -0 "$LOOPKIT_SCRIPTS/engine-status" --json .claude
  run -0 state-get - .status .lock .last_event <<<"$output"
  [ "$output" = $'running\nlive\niteration-start' ]
  run -0 "$LOOPKIT_SCRIPTS/engine-status" .claude
  [[ ${lines[0]} == SESSION* ]]
  [[ ${lines[1]} == run*running*live* ]]
  [[ $output != *$'\033'* ]]
  touch go
  wait "$e"
}

@test "no session: the header alone; usage errors are 2" {
  run -0 "$LOOPKIT_SCRIPTS/engine-status"
  [ "${#lines[@]}" = 1 ]
  run -2 "$LOOPKIT_SCRIPTS/engine-status" --bogus
}

# The demo and the install, here rather than in loop-engine.bats, whose cases
# fill its CTest time already.
ran() { tr '\n' ' ' <ran.log; }

@test "scripts/demo runs the example agent to a plateau" {
  [ -x "$LOOPKIT_SCRIPTS/demo" ] || skip "no scripts/demo"
  DEMO_DELAY=0 run -0 "$LOOPKIT_SCRIPTS/demo"
  [[ $output == *"Finished with status 0"* ]]
  [[ $output == *"plateau"* ]]
  [[ $output == *"FizzBuzz"* ]]
  [[ $output == *"Inspect it yourself"* ]]
}

@test "installed: cmake --install puts lib-engine.bash where the engines find it" {
  [ -n "${LOOPKIT_BUILD:-}" ] && [ -f "$LOOPKIT_BUILD/CMakeCache.txt" ] || skip "no build folder (LOOPKIT_BUILD)"
  cmake --install "$LOOPKIT_BUILD" --prefix "$BASE/inst" >/dev/null
  [ -f "$BASE/inst/libexec/loopkit/lib-engine.bash" ]
  [ ! -e "$BASE/inst/bin/lib-engine.bash" ]
  printf '#!/bin/sh\necho "$LOOPKIT_ITERATION" >>ran.log\n' >agent.sh
  chmod +x agent.sh
  PATH=/usr/bin:/bin run -0 "$BASE/inst/bin/loop-engine" --session demo --max-iterations 2 -- ./agent.sh
  [ "$(ran)" = "1 2 " ]
  run -0 "$BASE/inst/bin/event-show" --type complete .claude/pipeline-runs/demo/events.jsonl
}

@test "scripts/demo on a real terminal shows the live status line, then the status view" {
  command -v tmux >/dev/null || skip "tmux is not installed"
  [ -x "$LOOPKIT_SCRIPTS/demo" ] || skip "no scripts/demo"
  local sock=$BASE/tmux.sock pane="" seen=0 i
  tmux -S "$sock" new-session -d -x 150 -y 50 \
    "env PATH='$PATH' LOOPKIT_BIN='$LOOPKIT_BIN' TMPDIR='$TMPDIR' DEMO_DELAY=0.3 '$LOOPKIT_SCRIPTS/demo'; echo DEMO-DONE; sleep 60"
  for ((i = 0; i < 600; i++)); do
    pane=$(tmux -S "$sock" capture-pane -p -S -3000 2>/dev/null) || break
    [[ $pane == *"loop-engine session demo · "*"iteration "*" of 8"* ]] && seen=1
    [[ $pane == *DEMO-DONE* ]] && break
    sleep 0.1
  done
  tmux -S "$sock" kill-server 2>/dev/null || true
  [ "$seen" = 1 ]
  [[ $pane == *DEMO-DONE* ]]
  [[ $pane == *"SESSION "*"LAST EVENT"*$'\n'*"demo "*"complete"* ]]
}

@test "done, abandoned and left; elapsed time, last duration and an estimated end" {
  printf '#!/bin/sh\n[ "$LOOPKIT_ITEM" != b ] || exit 1\nsed -i "/^$LOOPKIT_ITEM\\$/d" ready\n' >work.sh
  chmod +x work.sh
  printf 'a\nb\n' >ready
  "$LOOPKIT_SCRIPTS/drain-engine" --next 'cat ready' --max-attempts 1 -- ./work.sh 2>/dev/null || true
  mkdir -p .claude/pipeline-runs/l
  cat >.claude/pipeline-runs/l/state.json <<'EOF2'
{"session":"l","type":"loop","status":"running","started_at":"2025-01-10T10:00:30Z","iteration_completed":2,"max_iterations":5,
 "history":[{"iteration":1,"duration_s":10.5},{"iteration":2,"duration_s":29.5}]}
EOF2
  run -0 "$LOOPKIT_SCRIPTS/engine-status" -j .claude .atari
  rows=("${lines[@]}")
  run -0 state-get - .done .left .elapsed_s .last_duration_s .eta_s <<<"${rows[0]}"
  [ "$output" = $'2\n3\n300\n29.5\n60' ]
  run -0 state-get - .type .done .abandoned <<<"${rows[1]}"
  [ "$output" = $'drain\n1\n1' ]
  run -0 "$LOOPKIT_SCRIPTS/engine-status" .claude
  [[ ${lines[1]} == "l "*" 2/0/3 "*"5:00 30s ~1:00"* ]]
}

@test "on a terminal each line is cut to its width" {
  command -v tmux >/dev/null || skip "tmux is not installed"
  mkdir -p .claude/pipeline-runs/a-session-with-a-rather-long-name
  printf '{"session":"x","type":"loop","status":"running","iteration_completed":1,"max_iterations":3}' \
    >.claude/pipeline-runs/a-session-with-a-rather-long-name/state.json
  sock=lk-$$-status
  tmux -L "$sock" -f /dev/null new-session -d -x 50 -y 10 \
    "cd $W && env PATH=$PATH $LOOPKIT_SCRIPTS/engine-status >out.txt 2>&1; $LOOPKIT_SCRIPTS/engine-status; echo END; sleep 60"
  for _ in $(seq 100); do tmux -L "$sock" capture-pane -p | grep -q END && break; sleep 0.1; done
  screen=$(tmux -L "$sock" capture-pane -p)
  tmux -L "$sock" kill-server
  local LC_ALL=C.UTF-8
  while IFS= read -r line; do ((${#line} <= 50)); done <<<"$screen"
  [[ $screen == *"…"* ]] || { echo "$screen"; false; }
  # into a file: whole lines
  (($(wc -L <out.txt) > 50))
}

@test "report: the engine-report command, or a file:// link once the report is there" {
  printf '#!/bin/sh\nprintf "{\\"cost\\":0.25}" >"$LOOPKIT_RESULT"\n' >agent.sh
  chmod +x agent.sh
  "$LOOPKIT_SCRIPTS/loop-engine" --session one --max-iterations 1 -- ./agent.sh 2>/dev/null
  mkdir other
  "$LOOPKIT_SCRIPTS/loop-engine" --session two --max-iterations 1 --root other -- ./agent.sh 2>/dev/null
  run -0 "$LOOPKIT_SCRIPTS/engine-status" --json other
  run -0 state-get - .report <<<"$output"
  [ "$output" = "engine-report two other" ]
  run -0 "$LOOPKIT_SCRIPTS/engine-status" --json
  run -0 state-get - .report <<<"$output"
  [ "$output" = "engine-report one" ]
  run -0 "$LOOPKIT_SCRIPTS/engine-status"
  [[ ${lines[0]} == *" REPORT" ]]
  [[ ${lines[1]} == "one "*" engine-report one" ]]
  "$LOOPKIT_SCRIPTS/engine-report" one
  run -0 "$LOOPKIT_SCRIPTS/engine-status" --json
  run -0 state-get - .report <<<"$output"
  [ "$output" = "file://$PWD/one-report.html" ]
  "$LOOPKIT_SCRIPTS/engine-report" one -o .claude/pipeline-runs/one/report.html
  rm one-report.html
  run -0 "$LOOPKIT_SCRIPTS/engine-status" --json
  run -0 state-get - .report <<<"$output"
  [ "$output" = "file://$PWD/.claude/pipeline-runs/one/report.html" ]
}

@test "a session that ended gets no estimate of the time left" {
  mkdir -p .claude/pipeline-runs/p
  cat >.claude/pipeline-runs/p/state.json <<'EOF2'
{"session":"p","type":"loop","status":"complete","completion_reason":"plateau","started_at":"2025-01-10T10:00:30Z",
 "completed_at":"2025-01-10T10:01:30Z","iteration_completed":2,"max_iterations":5,
 "history":[{"iteration":1,"duration_s":10.5},{"iteration":2,"duration_s":29.5}]}
EOF2
  run -0 "$LOOPKIT_SCRIPTS/engine-status" -j
  run -0 state-get -j - .left .elapsed_s .eta_s <<<"$output"
  [ "$output" = $'0\n60\nnull' ]
  run -0 "$LOOPKIT_SCRIPTS/engine-status"
  [[ ${lines[1]} != *"~"* ]]
  for s in failed stopped; do
    sed -i "s/\"status\":\"[a-z]*\"/\"status\":\"$s\"/" .claude/pipeline-runs/p/state.json
    run -0 "$LOOPKIT_SCRIPTS/engine-status" -j
    run -0 state-get -j - .eta_s <<<"$output"
    [ "$output" = null ]
  done
}

# the screen column where each line's second field begins (wide characters
# count two, as a terminal shows them)
second_field_columns() {
  python3 -c '
import sys, unicodedata
def width(s):
    return sum(0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in s)
for line in sys.stdin.read().splitlines():
    i = line.index(" loop ") if " loop " in line else line.index(" TYPE ")
    print(width(line[:i + 1]))'
}

@test "columns stay aligned with wide characters (CJK, emoji): fitted by screen columns" {
  for name in plain 日本語の名前 "a😀b" "長い名前のセッションはここで切られる"; do
    mkdir -p ".claude/pipeline-runs/$name"
    printf '{"session":"x","type":"loop","status":"running","iteration_completed":1,"max_iterations":3}' \
      >".claude/pipeline-runs/$name/state.json"
  done
  run -0 "$LOOPKIT_SCRIPTS/engine-status"
  [ "${#lines[@]}" = 5 ]
  run -0 second_field_columns <<<"$output"
  [ "$output" = $'19\n19\n19\n19\n19' ]
}

@test "on a terminal a line with wide characters is cut to the width it takes, never wrapped" {
  command -v tmux >/dev/null || skip "tmux is not installed"
  mkdir -p ".claude/pipeline-runs/日本語のセッション"
  printf '{"session":"x","type":"loop","status":"running","iteration_completed":1,"max_iterations":3}' \
    >".claude/pipeline-runs/日本語のセッション/state.json"
  sock=lk-$$-wide
  tmux -L "$sock" -f /dev/null new-session -d -x 50 -y 10 \
    "cd $W && env LC_ALL=C.UTF-8 PATH=$PATH $LOOPKIT_SCRIPTS/engine-status; echo END; sleep 60"
  for _ in $(seq 100); do tmux -L "$sock" capture-pane -p | grep -q END && break; sleep 0.1; done
  screen=$(tmux -L "$sock" capture-pane -p)
  tmux -L "$sock" kill-server
  # the header, the session, END: no line wrapped onto a second row
  [ "$(grep -c . <<<"$screen")" = 3 ] || { echo "$screen"; false; }
  [[ $(sed -n 2p <<<"$screen") == "日本語のセッション"*"…" ]] || { echo "$screen"; false; }
}

@test "--tail N: the last lines of each session's latest output log, under its line and in --json" {
  printf '#!/bin/sh\nseq 1 20\necho "failing now" >&2\nexit 7\n' >fail.sh
  printf '#!/bin/sh\necho "item $LOOPKIT_ITEM went well"\n: >ready.txt\n' >work.sh
  chmod +x fail.sh work.sh
  "$LOOPKIT_SCRIPTS/loop-engine" --session broken --max-iterations 1 -- ./fail.sh >/dev/null 2>&1 || true
  echo a >ready.txt
  "$LOOPKIT_SCRIPTS/drain-engine" --next 'cat ready.txt' -- ./work.sh >/dev/null 2>&1
  run -0 "$LOOPKIT_SCRIPTS/engine-status" --tail 2 .claude .atari
  [[ $output == *$'\n  | 20\n  | failing now'* ]]
  [[ $output == *$'\n  | item a went well'* ]]
  run -0 "$LOOPKIT_SCRIPTS/engine-status" --json --tail 1 .claude
  run -0 state-get - .output .output_tail <<<"$output"
  [ "$output" = "$W/.claude/pipeline-runs/broken/logs/iteration-1-attempt-1.log"$'\nfailing now' ]
  # without --tail, the lines are not shown; the log is named in --json
  run -0 "$LOOPKIT_SCRIPTS/engine-status" .claude
  [[ $output != *"failing now"* ]]
  run -2 "$LOOPKIT_SCRIPTS/engine-status" --tail x
}
