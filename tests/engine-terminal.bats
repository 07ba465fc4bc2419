#!/usr/bin/env bats
# The engines on a real terminal (tmux): the agent's bytes reach it
# unchanged and in order, the status line sits under the agent's last
# complete line at the pane's width, follows a resize, and is left out under
# TERM=dumb, --no-status; no colour under NO_COLOR.
load helpers

: "${LOOPKIT_SCRIPTS:=$LOOPKIT_SOURCE/scripts}"
ST=.claude/pipeline-runs/s/state.json

setup() {
  loopkit_setup
  command -v tmux >/dev/null || skip "tmux is not installed (apt-get install tmux)"
  SOCK=lk-$$-$BATS_TEST_NUMBER
  # a chatty agent: 30 lines an iteration, odd bytes, and a partial last line
  cat >chatty.sh <<'EOF2'
#!/usr/bin/env bash
for ((i = 1; i <= 30; i++)); do
  printf 'agent says line %d of iteration %d: <&> "q" %%d \\n done\n' "$i" "$LOOPKIT_ITERATION"
done
printf 'partial %d' "$LOOPKIT_ITERATION"
EOF2
  chmod +x chatty.sh
}

teardown() {
  tmux -L "$SOCK" kill-server 2>/dev/null || true
  cd / && rm -rf "$BASE"
}

# pane WIDTH ENV... -- ENGINE ARGS...: the engine in a tmux pane of WIDTH
# columns, started once raw.log records every byte the pane gets
pane() {
  local width=$1
  shift
  local -a envs=()
  while [[ $1 != -- ]]; do envs+=("$1"); shift; done
  shift
  printf '%q ' "$@" >cmd
  tmux -L "$SOCK" -f /dev/null new-session -d -x "$width" -y 15 \
    "cd $W && while [ ! -e go ]; do sleep 0.05; done; env PATH=$PATH LOOPKIT_NOW=$LOOPKIT_NOW ${envs[*]} bash -c \"\$(cat cmd)\"; echo ENGINE-EXIT=\$?; sleep 600"
  tmux -L "$SOCK" set-option -g history-limit 10000 >/dev/null
  tmux -L "$SOCK" pipe-pane -o "cat >>$W/raw.log"
  touch go
}

# screen: the pane's whole scrollback, wrapped lines joined
screen() { tmux -L "$SOCK" capture-pane -p -J -S - -E -; }

wait_screen() { # wait_screen TEXT
  local i
  for ((i = 0; i < 300; i++)); do screen | grep -qF -- "$1" && return 0; sleep 0.1; done
  screen >&2
  return 1
}

# every line the agent printed is a line of the scrollback, byte for byte, in order
check_agent_lines() {
  local it i expected=""
  for ((it = 1; it <= $1; it++)); do
    for ((i = 1; i <= 30; i++)); do
      expected+="agent says line $i of iteration $it: <&> \"q\" %d \\n done"$'\n'
    done
    expected+="partial $it"$'\n'
  done
  screen | grep -E '^(agent says|partial)' >seen
  [ "$(cat seen)" = "${expected%$'\n'}" ]
}

@test "a chatty agent: every line in the scrollback byte for byte, the partial line kept" {
  pane 60 TERM=xterm -- "$LOOPKIT_SCRIPTS/loop-engine" --session s --max-iterations 2 -- ./chatty.sh
  wait_screen ENGINE-EXIT=0
  check_agent_lines 2
  screen | grep -qx 'loop-engine: complete: max_iterations after 2 iterations: done 2, left 0'
}

@test "the status line: under the last complete line, at the pane's width, again after a resize" {
  pane 60 TERM=xterm NO_COLOR=1 -- "$LOOPKIT_SCRIPTS/loop-engine" --session s --max-iterations 2 --poll 0.1 -- ./chatty.sh
  wait_screen ENGINE-EXIT=0
  tmux -L "$SOCK" kill-server
  rm -rf .claude raw.log
  # paused from the start: the status line waits under the earlier output
  mkdir -p .claude/pipeline-runs/s
  printf '{"session":"s","type":"loop","status":"paused"}' >"$ST"
  pane 60 TERM=xterm -- "$LOOPKIT_SCRIPTS/loop-engine" --session s --max-iterations 1 --poll 0.1 -- ./chatty.sh
  wait_screen 'paused (resume'
  local LC_ALL=C.UTF-8 # lengths in characters
  last=$(screen | sed '/^$/d' | tail -n 1)
  [[ $last == "loop-engine session s · "*"paused (resume"*"…" ]]
  [ "${#last}" -le 59 ]
  tmux -L "$SOCK" resize-window -x 120
  for _ in $(seq 100); do
    last=$(screen | sed '/^$/d' | tail -n 1)
    ((${#last} > 60)) && break
    sleep 0.1
  done
  ((${#last} > 60 && ${#last} <= 119))
  grep -q $'\033\[2m' raw.log # dimmed: NO_COLOR was not set
  state-set "$ST" status=running
  wait_screen ENGINE-EXIT=0
  check_agent_lines 1
}

@test "TERM=dumb and --no-status: plain lines only; NO_COLOR: no colour" {
  pane 80 TERM=dumb -- "$LOOPKIT_SCRIPTS/loop-engine" --session s --max-iterations 1 -- ./chatty.sh
  wait_screen ENGINE-EXIT=0
  # no escape to ask where the cursor is: the engine's next line follows a partial one
  [ "$(screen | grep -c '^agent says line [0-9]* of iteration 1: <&> "q" %d \\n done$')" = 30 ]
  screen | grep -q '^partial 1'
  ! grep -q $'\033' raw.log || false
  screen | grep -Eq '^[0-9]{4}-[0-9-]+T[0-9:]+Z loop-engine: session s: iteration 1 of 1'
  tmux -L "$SOCK" kill-server
  rm -rf .claude raw.log
  pane 80 TERM=xterm -- "$LOOPKIT_SCRIPTS/loop-engine" --no-status --session s --max-iterations 1 -- ./chatty.sh
  wait_screen ENGINE-EXIT=0
  ! grep -q $'\033\[K' raw.log || false
  tmux -L "$SOCK" kill-server
  rm -rf .claude raw.log
  pane 80 TERM=xterm NO_COLOR=1 -- "$LOOPKIT_SCRIPTS/loop-engine" --session s --max-iterations 1 -- ./chatty.sh
  wait_screen ENGINE-EXIT=0
  ! grep -q $'\033\[2m' raw.log || false
  check_agent_lines 1
}

# whole_line: the visible rows hold one status line, the last, no piece of another
whole_line() {
  local r
  r=$(rows | sed '/^$/d')
  [[ $(grep -c 'loop-engine' <<<"$r") == 1 && $(tail -n 1 <<<"$r") == "loop-engine session s · "* ]]
}

# rows: the pane's visible rows as they are (wrapped lines not joined)
rows() { tmux -L "$SOCK" capture-pane -p; }

@test "the status line counts screen columns: wide ids never wrap it, no row is left behind" {
  printf '中文标题的任务🚀很长很长很长的名字一二三四五六七八九十\nb\n' >ready.txt
  cat >quiet.sh <<'EOF2'
#!/usr/bin/env bash
grep -vxF -- "$LOOPKIT_ITEM" ready.txt >ready.new || true
mv ready.new ready.txt
touch "ran.$LOOPKIT_ITERATION"
[[ $LOOPKIT_ITERATION != 1 ]] || for ((i = 0; i < 600; i++)); do [[ -e go.1 ]] && break; sleep 0.1; done
EOF2
  chmod +x quiet.sh
  pane 60 TERM=xterm NO_COLOR=1 -- "$LOOPKIT_SCRIPTS/drain-engine" --next 'cat ready.txt' --poll 0.1 -- ./quiet.sh
  for _ in $(seq 300); do [[ -e ran.1 ]] && break; sleep 0.1; done
  # the status line above the silent agent: one row, whole
  run -0 rows
  line=$(grep -F '中文' <<<"$output")
  [ "$(grep -c . <<<"$line")" = 1 ]
  [[ $line == "drain-engine "*"/state.json · "*" · item 中文"*"…" ]]
  touch go.1
  wait_screen ENGINE-EXIT=0
  screen | grep -q 'drained: no item left'
  # the agent said nothing: every row is the engine's, none a wrapped piece
  tmux -L "$SOCK" capture-pane -p -S - -E - | sed '/^$/d' >all-rows
  # (a final line of its own may wrap: it is printed once, never rewritten)
  awk '{ if ($0 !~ /^(drain-engine|ENGINE-EXIT=0$)/ && prev !~ /^drain-engine: /) bad = 1; prev = $0 }
    END { exit bad }' all-rows
}

@test "a narrow terminal: the label gives way so the status is seen" {
  mkdir -p q/with/a/rather/long/name/for/the/queue
  st=$W/q/with/a/rather/long/name/for/the/queue/state.json
  printf '{"version":1,"status":"paused","iteration":0,"current_bead":"","history":{},"total_cost":0,"total_turns":0}' >"$st"
  echo a >ready.txt
  pane 60 TERM=xterm -- "$LOOPKIT_SCRIPTS/drain-engine" --state "$st" --next 'cat ready.txt' --poll 0.1 -- true
  wait_screen 'paused'
  local LC_ALL=C.UTF-8
  last=$(rows | sed '/^$/d' | tail -n 1)
  [[ $last == "drain-engine …"*"/state.json · "*" · paused (resume"* ]]
  [ "${#last}" -le 59 ]
  state-set "$st" status=stopped
  wait_screen ENGINE-EXIT=0
}

@test "a resize while paused leaves no fragment of the wider line" {
  mkdir -p .claude/pipeline-runs/s
  printf '{"session":"s","type":"loop","status":"paused"}' >"$ST"
  pane 120 TERM=xterm NO_COLOR=1 -- "$LOOPKIT_SCRIPTS/loop-engine" --session s --max-iterations 1 --poll 0.1 -- ./chatty.sh
  wait_screen 'paused (resume'
  local LC_ALL=C.UTF-8
  last=$(rows | sed '/^$/d' | tail -n 1)
  ((${#last} > 70))
  tmux -L "$SOCK" resize-window -x 50
  # redrawn at the new width (the WINCH, or the next poll): one line, whole,
  # at the bottom, where the old wrapped one stood
  for _ in $(seq 300); do whole_line && break; sleep 0.1; done
  rows
  whole_line
  state-set "$ST" status=running
  wait_screen ENGINE-EXIT=0
}
