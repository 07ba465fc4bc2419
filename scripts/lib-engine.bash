#!/usr/bin/env bash
# lib-engine.bash: what loop-engine, pipeline-engine and drain-engine share.
# Each engine carries a copy of the shared part below, between its
# "# >>> lib-engine.bash" and "# <<< lib-engine.bash" lines, so that an
# installed engine is one self-contained file. Edit this file, then run
#   scripts/lib-engine.bash --sync
# to refresh the copies (tests/loop-engine.bats checks they match).
# Everything here is built on the loopkit tools, coreutils and bash; no jq.
# Names start with lk_ (functions) or LK_ (globals).
set -euo pipefail

# --- shared part ---

LK_PROG=${LK_PROG:-${0##*/}}
LK_TTY=0
if [[ -t 2 ]]; then LK_TTY=1; fi
LK_LABEL=""          # "session demo", shown in every message
LK_STATUS=""         # the body of the live status line
LK_LINE_SHOWN=0      # a status line is on the terminal now
LK_HB_PID=""         # background lock-heartbeat
LK_LOCK=""           # lock file we hold
LK_AGENT_PID=""      # the agent while it runs
LK_SCRATCH=""        # private temporary folder (mktemp -d)

# --- messages ---------------------------------------------------------------

lk_now() { TZ=UTC printf '%(%Y-%m-%dT%H:%M:%SZ)T' -1; }

lk_clear_line() {
  if ((LK_LINE_SHOWN)); then
    printf '\r\033[K' >&2
    LK_LINE_SHOWN=0
  fi
}

# lk_log MESSAGE: an event. On a terminal it becomes the live status line;
# into a pipe or file, a timestamped line.
lk_log() {
  if ((LK_TTY)); then
    LK_STATUS=$1
    lk_draw
  else
    printf '%s %s: %s%s\n' "$(lk_now)" "$LK_PROG" "${LK_LABEL:+$LK_LABEL: }" "$1" >&2
  fi
}

# lk_say MESSAGE: a line that stays (warnings, final words), in both modes.
lk_say() {
  lk_clear_line
  if ((LK_TTY)); then
    printf '%s: %s\n' "$LK_PROG" "$1" >&2
  else
    printf '%s %s: %s%s\n' "$(lk_now)" "$LK_PROG" "${LK_LABEL:+$LK_LABEL: }" "$1" >&2
  fi
}

lk_warn() { lk_say "warning: $1"; }

lk_die() { # lk_die STATUS MESSAGE
  lk_clear_line
  printf '%s: %s\n' "$LK_PROG" "$2" >&2
  exit "$1"
}

lk_elapsed() {
  local s=$SECONDS
  printf '%d:%02d:%02d' $((s / 3600)) $((s % 3600 / 60)) $((s % 60))
}

# lk_draw: rewrite the live status line in place (terminal only).
lk_draw() {
  ((LK_TTY)) || return 0
  local cols=80 size line
  if size=$(stty size 2>/dev/null <&2); then cols=${size#* }; fi
  [[ $cols =~ ^[0-9]+$ ]] && ((cols > 10)) || cols=80
  line="$LK_PROG ${LK_LABEL:+$LK_LABEL · }$(lk_elapsed) · $LK_STATUS"
  line=${line//$'\n'/ }
  if ((${#line} >= cols)); then line="${line:0:cols-2}…"; fi
  printf '\r\033[K%s' "$line" >&2
  LK_LINE_SHOWN=1
}

# --- arguments --------------------------------------------------------------

lk_usage_error() { # lk_usage_error MESSAGE
  printf '%s: %s\n' "$LK_PROG" "$1" >&2
  printf "Try '%s --help' for more information.\n" "$LK_PROG" >&2
  exit 2
}

lk_need_arg() { # lk_need_arg OPTION ARGC
  (($2 >= 2)) || lk_usage_error "option '$1' requires an argument"
}

lk_need_uint() { # lk_need_uint OPTION VALUE
  [[ $2 =~ ^[0-9]+$ ]] || lk_usage_error "$1: '$2' is not a whole number"
}

# lk_check_name WHAT NAME: a session or stage name usable as a file name.
lk_check_name() {
  [[ -n $2 && $2 != *[/$'\n\t\r']* && $2 != . && $2 != .. && $2 != -* ]] ||
    lk_usage_error "$1 '$2' is not a usable name (no slash, no leading dash)"
}

lk_abspath() { # lk_abspath PATH: absolute, without resolving symlinks
  if [[ $1 == /* ]]; then printf '%s' "$1"; else printf '%s/%s' "$PWD" "${1#./}"; fi
}

# lk_json_str TEXT: TEXT as a JSON string literal (quotes included).
lk_json_str() {
  local s=$1 out="" c i
  s=${s//\\/\\\\}
  s=${s//\"/\\\"}
  s=${s//$'\n'/\\n}
  s=${s//$'\r'/\\r}
  s=${s//$'\t'/\\t}
  if [[ $s == *[$'\x01'-$'\x1f']* ]]; then
    for ((i = 0; i < ${#s}; i++)); do
      c=${s:i:1}
      if [[ $c == [$'\x01'-$'\x1f'] ]]; then
        printf -v c '\\u%04x' "'$c"
      fi
      out+=$c
    done
    s=$out
  fi
  printf '"%s"' "$s"
}

# --- the tools --------------------------------------------------------------

# lk_find_tools SCRIPT_DIR TOOL...: make sure the tools run by name. Order:
# $LOOPKIT_BIN, PATH, the script's own folder (installed beside the tools),
# its ../bin, and ../build/bin (a source checkout).
lk_find_tools() {
  local here=$1 dir t ok
  shift
  local -a dirs=()
  [[ -n ${LOOPKIT_BIN:-} ]] && dirs+=("$LOOPKIT_BIN")
  dirs+=("")
  dirs+=("$here" "$here/../bin" "$here/../build/bin")
  for dir in "${dirs[@]}"; do
    ok=1
    for t in "$@"; do
      if [[ -z $dir ]]; then
        type -P "$t" >/dev/null || { ok=0; break; }
      else
        [[ -x $dir/$t && ! -d $dir/$t ]] || { ok=0; break; }
      fi
    done
    if ((ok)); then
      if [[ -n $dir ]]; then
        dir=$(cd "$dir" && pwd) || continue
        PATH="$dir:$PATH"
        export PATH
      fi
      return 0
    fi
  done
  lk_die 4 "cannot find the loopkit tools ($*): put them on PATH, set LOOPKIT_BIN, or build them (cmake -S . -B build && cmake --build build)"
}

# lk_int FILE PATH DEFAULT: an integer from FILE, or DEFAULT when it is
# missing, null or not a whole number.
lk_int() {
  local v
  v=$(state-get -q -d "$3" "$1" "$2" 2>/dev/null) || v=$3
  [[ $v =~ ^[0-9]+$ ]] || v=$3
  printf '%s' "$v"
}

# lk_str FILE PATH: a string (raw) from FILE, empty when missing or null.
lk_str() {
  state-get -q -d '' "$1" "$2" 2>/dev/null || true
}

# lk_is_true VALUE: true for JSON true and for the string "true" that
# agent-pipelines wrote.
lk_is_true() { [[ $1 == true || $1 == '"true"' ]]; }

# shellcheck disable=SC2034 # the R_* are read by the engines
# lk_read_result FILE: the agent's result object into R_plateau, R_reasoning,
# R_stop, R_error, R_cost, R_turns, R_session_id (empty when not given).
lk_read_result() {
  local f=$1 out
  R_plateau="" R_reasoning="" R_stop="" R_error="" R_cost="" R_turns="" R_session_id=""
  [[ -s $f ]] || return 0
  if ! out=$(state-get -s -d '' "$f" R_plateau=plateau R_reasoning=reasoning R_stop=stop \
    R_error=error R_cost=cost R_turns=turns R_session_id=session_id 2>&1); then
    lk_warn "ignoring the agent's result: ${out#state-get: }"
    return 0
  fi
  eval "$out"
}

# --- the lock ---------------------------------------------------------------

# lk_lock_take LOCKFILE SESSION: acquire for this shell ($$) and keep it alive
# with a background heartbeat. Held by a live engine: exit 1.
lk_lock_take() {
  local rc=0
  lock-acquire --pid $$ --session "$2" "$1" || rc=$?
  if ((rc == 1)); then
    lk_die 1 "session '$2' is held by another engine (see: lock-status $1)"
  elif ((rc != 0)); then
    lk_die "$rc" "cannot acquire the lock $1"
  fi
  LK_LOCK=$1
  lock-heartbeat --every 30 --pid $$ "$1" </dev/null {LK_STDIN}<&- &
  LK_HB_PID=$!
}

# lk_lock_check: refresh the lock now and make sure it is still ours (someone
# may have forced it away); lost: exit 1.
lk_lock_check() {
  [[ -n $LK_LOCK ]] || return 0
  lock-heartbeat -q --pid $$ "$LK_LOCK" ||
    lk_die 1 "lost the lock $LK_LOCK (removed or taken over by someone else); stopping"
}

lk_lock_drop() {
  if [[ -n $LK_HB_PID ]]; then
    kill "$LK_HB_PID" 2>/dev/null || true
    wait "$LK_HB_PID" 2>/dev/null || true
    LK_HB_PID=""
  fi
  if [[ -n $LK_LOCK ]]; then
    lock-release --pid $$ -q "$LK_LOCK" || true
    LK_LOCK=""
  fi
}

# --- running the agent ------------------------------------------------------

# shellcheck disable=SC2034 # LK_RC is read by the engines
# lk_run_agent CMD...: run the agent in the background (so that signals reach
# the engine at once) with the engine's own stdin (stdout appended to
# $LK_AGENT_OUT when set), and wait for it; its status in LK_RC. On a
# terminal the status line's clock ticks meanwhile.
lk_run_agent() {
  LK_RC=0
  if [[ -n ${LK_AGENT_OUT:-} ]]; then
    "$@" <&"$LK_STDIN" {LK_STDIN}<&- >>"$LK_AGENT_OUT" &
  else
    "$@" <&"$LK_STDIN" {LK_STDIN}<&- &
  fi
  LK_AGENT_PID=$!
  if ((LK_TTY)); then
    local tick done_pid rc
    while :; do
      sleep 1 &
      tick=$!
      done_pid="" rc=0
      wait -n -p done_pid "$LK_AGENT_PID" "$tick" || rc=$?
      if [[ $done_pid == "$LK_AGENT_PID" ]]; then
        LK_RC=$rc
        kill "$tick" 2>/dev/null || true
        wait "$tick" 2>/dev/null || true
        break
      fi
      [[ $done_pid == "$tick" ]] || wait "$tick" 2>/dev/null || true
      lk_draw
    done
  else
    wait "$LK_AGENT_PID" || LK_RC=$?
  fi
  LK_AGENT_PID=""
}

# lk_stop_agent: on SIGINT/SIGTERM, pass SIGTERM on and wait for the agent.
lk_stop_agent() {
  if [[ -n $LK_AGENT_PID ]]; then
    kill -TERM "$LK_AGENT_PID" 2>/dev/null || true
    wait "$LK_AGENT_PID" 2>/dev/null || true
    LK_AGENT_PID=""
  fi
}

# --- lifecycle --------------------------------------------------------------

# lk_on_signal SIGNAL: the engine's lk_interrupted hook records the
# interruption, then the EXIT trap cleans up.
lk_on_signal() {
  trap '' INT TERM HUP
  lk_stop_agent
  if declare -F lk_interrupted >/dev/null; then lk_interrupted "$1" || true; fi
  lk_say "interrupted by SIG$1"
  case $1 in INT) exit 130 ;; TERM) exit 143 ;; HUP) exit 129 ;; *) exit 1 ;; esac
}

lk_on_exit() {
  local rc=$?
  trap '' INT TERM HUP
  set +e
  lk_stop_agent
  lk_lock_drop
  [[ -n $LK_SCRATCH ]] && rm -rf "$LK_SCRATCH"
  lk_clear_line
  return "$rc"
}

# lk_setup: traps, a private scratch folder, the saved stdin.
lk_setup() {
  trap lk_on_exit EXIT
  trap 'lk_on_signal INT' INT
  trap 'lk_on_signal TERM' TERM
  trap 'lk_on_signal HUP' HUP
  LK_SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/loopkit-engine.XXXXXX") ||
    lk_die 4 "cannot create a temporary folder"
  if { true <&0; } 2>/dev/null; then exec {LK_STDIN}<&0; else exec {LK_STDIN}</dev/null; fi
}
# --- end of the shared part ---

# lk_sync: copy the shared part into every engine beside this file.
lk_sync() {
  local dir engine
  dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
  PART=$(sed -n '/^# --- shared part ---$/,/^# --- end of the shared part ---$/p' "$dir/lib-engine.bash" | sed '1d;$d')
  export PART
  for engine in "$dir"/*-engine; do
    awk '/^# >>> lib-engine.bash/ { print; print ENVIRON["PART"]; skip = 1; next }
         /^# <<< lib-engine.bash/ { skip = 0 }
         !skip' "$engine" >"$engine.sync"
    if cmp -s "$engine" "$engine.sync"; then rm -f "$engine.sync"; continue; fi
    cat "$engine.sync" >"$engine" && rm -f "$engine.sync"
    echo "updated $engine"
  done
}

if [[ ${1:-} == --sync ]]; then lk_sync; else
  echo "usage: ${0##*/} --sync   (copy the shared part into the engines)" >&2
  exit 2
fi
