# lib-engine.bash: what loop-engine, pipeline-engine and drain-engine share.
# Sourced, never run: each engine finds it beside its own real path, symlinks
# resolved (one rule: a source checkout's scripts/, or an install's
# libexec/loopkit, where bin/ has symlinks to the engines). Everything here is built on the loopkit
# tools, coreutils and bash; no jq. Names start with lk_ (functions) or LK_
# (globals); the engine sets LK_PROG before sourcing it.
# shellcheck shell=bash disable=SC2034 # the LK_* and R_* globals are read by the engines
if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
  echo "lib-engine.bash: source it from an engine; it does nothing on its own" >&2
  exit 2
fi

LK_PROG=${LK_PROG:-${0##*/}}
LK_VERSION=0.2.0     # project(VERSION) in CMakeLists.txt; a test checks they agree
LK_TTY=0             # a live status line on stderr's terminal (lk_terminal decides)
LK_COLOR=0           # the status line dimmed (not under NO_COLOR)
LK_NO_STATUS=0       # --no-status: plain lines even on a terminal
LK_QUIET=0           # -q: nothing said when the session is held (exit 1)
LK_HELD_EXIT=1       # -E N: the exit status when another engine holds the session
LK_TIMEOUT=0         # --iteration-timeout: seconds an agent run may take (0: no limit)
LK_KILL_AFTER=10     # --kill-after: SIGKILL this long after the SIGTERM
LK_MAX_COST=""       # --max-cost: no iteration starts once total_cost reaches it
LK_MAX_TOKENS=""     # --max-tokens: no iteration starts once total_tokens reaches it
LK_DEADLINE=""       # --deadline, in epoch seconds: no iteration starts at or after it
LK_DEADLINE_TEXT=""  # --deadline as given
LK_ON_EVENT=""       # --on-event: a command run with each event's JSON on stdin
LK_KILL_STALE=0      # --kill-stale-agent: end a previous engine's live agent instead of waiting
LK_AGENT_RUNNING=0   # the terminal is the agent's now: nothing is drawn
LK_DURATION=0        # seconds the last agent run took
LK_TIMED_OUT=0       # the last agent run was ended by --iteration-timeout
LK_RUN_STARTED=""    # when the last agent run started (ISO 8601, LOOPKIT_NOW honoured)
LK_LABEL=""          # "session demo", shown in every message
LK_STATUS=""         # the body of the live status line
LK_LINE_SHOWN=0      # a status line is on the terminal now
LK_DRAWN=0 LK_COLS=80 # its width, and the terminal's then (lk_wipe)
LK_WINCH=0 LK_IN_DRAW=0 # resizes seen, and whether a draw is under way
LK_AGENT_PID=""      # the agent while it runs
LK_SCRATCH=""        # private temporary folder (mktemp -d)
LK_EVENTS=""         # the session's events.jsonl (empty: none yet)
LK_SESSION=""        # the session named in every event
LK_POLL=${LK_POLL:-1}            # seconds between looks at a paused state
LK_HEARTBEAT=${LK_HEARTBEAT:-10} # seconds between lock heartbeats
LK_RETRIES=0         # --retries: more runs of a failing agent, same iteration
LK_RETRY_DELAY=${LOOPKIT_RETRY_DELAY:-1} # --retry-delay: first back-off, doubled each time
LK_MAX_FAILURES=0    # --max-failures: consecutive failures that stop the session (0: off)
LK_FAILS=0           # consecutive failed agent runs so far
LK_BROKEN=0          # the circuit breaker tripped
LK_SIGNAL=""         # the signal that is ending the engine

# --- messages ---------------------------------------------------------------

lk_now() { TZ=UTC printf '%(%Y-%m-%dT%H:%M:%SZ)T' -1; }
# as lk_now, into LK_NOW (no subshell: the messages of every iteration)
lk_now_v() {
  lk_utc_v "$EPOCHSECONDS"
  LK_NOW=$LK_UTC
}

# lk_stamp: "now" as the tools write it (LOOPKIT_NOW when set).
lk_stamp() {
  local LK_STAMP
  lk_stamp_v
  printf '%s' "$LK_STAMP"
}

lk_clear_line() {
  if ((LK_LINE_SHOWN)); then
    lk_wipe
    LK_LINE_SHOWN=0
  fi
}

# lk_wipe: the cursor back to where the status line starts, and the line
# gone: all its rows, when a narrower terminal (a resize) wrapped it into
# more than one (LK_DRAWN: its width in columns; LK_COLS: the terminal's).
lk_wipe() {
  local up=0
  ((LK_DRAWN <= LK_COLS)) || up=$(((LK_DRAWN - 1) / LK_COLS))
  if ((up > 0)); then printf '\r\033[%dA\033[J' "$up" >&2; else printf '\r\033[K' >&2; fi
}

# lk_log MESSAGE: an event. On a terminal it becomes the live status line;
# into a pipe or file, a timestamped line.
lk_log() {
  if ((LK_TTY)); then
    LK_STATUS=$1
    lk_draw
  else
    # lk_now_v's time, its calls left out: twice an iteration
    [[ $EPOCHSECONDS == "$LK_UTC_AT" ]] || lk_utc_v "$EPOCHSECONDS"
    printf '%s %s: %s%s\n' "$LK_UTC" "$LK_PROG" "${LK_LABEL:+$LK_LABEL: }" "$1" >&2
  fi
}

# lk_say MESSAGE: a line that stays (warnings, final words), in both modes.
lk_say() {
  lk_clear_line
  if ((LK_TTY)); then
    printf '%s: %s\n' "$LK_PROG" "$1" >&2
  else
    lk_now_v
    printf '%s %s: %s%s\n' "$LK_NOW" "$LK_PROG" "${LK_LABEL:+$LK_LABEL: }" "$1" >&2
  fi
}

lk_warn() { lk_say "warning: $1"; }

lk_die() { # lk_die STATUS MESSAGE
  lk_clear_line
  printf '%s: %s\n' "$LK_PROG" "$2" >&2
  exit "$1"
}

# lk_fmt_secs SECONDS: 1:02:03 or 4:05 (whole seconds).
lk_fmt_secs() {
  local s=${1%.*}
  [[ $s =~ ^[0-9]+$ ]] || s=0
  if ((s >= 3600)); then
    printf '%d:%02d:%02d' $((s / 3600)) $((s % 3600 / 60)) $((s % 60))
  else
    printf '%d:%02d' $((s / 60)) $((s % 60))
  fi
}

lk_elapsed() {
  local s=$SECONDS
  printf '%d:%02d:%02d' $((s / 3600)) $((s % 3600 / 60)) $((s % 60))
}

# lk_draw: rewrite the live status line in place (terminal only).
# Never while the agent runs: the terminal is its own then. The width is the
# terminal's (stderr's, asked with stty: stdin may be anything), read again
# at each draw, so a resize is followed. Measured in screen columns (a wide
# character takes two), never to the last column: a line that wrapped would
# leave a row behind at each rewrite. Too long, the label gives way first
# (its tail kept: a path's end says most), so that the status is seen.
# A resize during a draw (its WINCH trap runs between two of our commands)
# makes the draw start over rather than nest: a nested draw at the new width
# followed by the rest of ours at the old one left a wrapped line behind.
lk_draw() {
  ((LK_TTY && !LK_AGENT_RUNNING)) || return 0
  local seq
  LK_IN_DRAW=1
  while :; do
    seq=$LK_WINCH
    lk_draw_at_width "$seq" && ((seq == LK_WINCH)) && break
  done
  LK_IN_DRAW=0
  # a resize after the last look, whose trap found us still drawing
  ((seq == LK_WINCH)) || lk_draw
}

# lk_draw_at_width SEQ: one draw at the width read now; returns 1 without
# drawing when a resize came (LK_WINCH moved past SEQ) while it was read.
lk_draw_at_width() {
  local cols=80 size head rest room
  if size=$(stty size <&2 2>/dev/null); then cols=${size#* }; fi
  [[ $cols =~ ^[0-9]+$ ]] && ((cols > 10)) || cols=80
  ((LK_WINCH == $1)) || return 1
  rest="$(lk_elapsed) · $LK_STATUS"
  rest=${rest//$'\n'/ }
  head=$LK_PROG
  if [[ -n $LK_LABEL ]]; then
    lk_fit "$rest" "$cols"
    room=$((cols - 1 - ${#LK_PROG} - 4 - LK_WIDTH)) # "PROG LABEL · REST"
    lk_fit_tail "${LK_LABEL//$'\n'/ }" $((room > cols / 4 ? room : cols / 4))
    head+=" $LK_FIT ·"
  fi
  lk_fit "$head $rest" $((cols - 1))
  ((LK_WINCH == $1)) || return 1
  # the line drawn before, as the terminal (maybe resized) shows it now
  LK_COLS=$cols
  if ((LK_LINE_SHOWN)); then lk_wipe; else printf '\r\033[K' >&2; fi
  if ((LK_COLOR)); then
    printf '\033[2m%s\033[0m' "$LK_FIT" >&2
  else
    printf '%s' "$LK_FIT" >&2
  fi
  LK_DRAWN=$((LK_WIDTH < cols - 1 ? LK_WIDTH : cols - 1)) LK_LINE_SHOWN=1
}

# lk_fit_tail TEXT COLS: TEXT in COLS screen columns at most, its start
# given way to a "…" when longer (a path's end is what tells it apart). Into
# LK_FIT.
lk_fit_tail() {
  local LC_ALL=C.UTF-8 s=$1 cols=$2 i n w=1
  lk_fit "$s" "$cols"
  ((LK_WIDTH > cols)) || return 0
  for ((i = ${#s} - 1; i >= 0; i--)); do
    printf -v n '%d' "'${s:i:1}"
    lk_char_width "$n"
    ((w + LK_CW <= cols)) || break
    w=$((w + LK_CW))
  done
  LK_FIT="…${s:i+1}"
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

lk_need_seconds() { # lk_need_seconds OPTION VALUE
  [[ $2 =~ ^[0-9]+(\.[0-9]+)?$ ]] || lk_usage_error "$1: '$2' is not a number of seconds"
}

# lk_common_flag WORD: the flags every engine takes; 1 when WORD is none.
lk_common_flag() {
  case $1 in
    --kill-stale-agent) LK_KILL_STALE=1 ;;
    --no-status) LK_NO_STATUS=1 ;;
    *) return 1 ;;
  esac
}

# lk_common_option ARGS...: the options every engine takes (--retries N,
# --retry-delay SECONDS, --max-failures N, --poll SECONDS); LK_SHIFT is the
# number of words used.
lk_common_option() {
  local name=$1 value
  if [[ $1 == *=* ]]; then name=${1%%=*} value=${1#*=} LK_SHIFT=1; else
    lk_need_arg "$1" $#
    value=$2 LK_SHIFT=2
  fi
  case $name in
    --retries) lk_need_uint "$name" "$value"; LK_RETRIES=$value ;;
    --max-failures) lk_need_uint "$name" "$value"; LK_MAX_FAILURES=$value ;;
    --retry-delay) lk_need_seconds "$name" "$value"; LK_RETRY_DELAY=$value ;;
    --poll) lk_need_seconds "$name" "$value"; LK_POLL=$value ;;
    --iteration-timeout) lk_need_seconds "$name" "$value"; LK_TIMEOUT=$value ;;
    --kill-after) lk_need_seconds "$name" "$value"; LK_KILL_AFTER=$value ;;
    --ttl)
      if ! [[ $value =~ ^[0-9]+$ ]] || ((value < 2)); then
        lk_usage_error "$name: '$value' is not a TTL in whole seconds (at least 2)"
      fi
      LK_TTL=$value ;;
    --max-cost) lk_need_seconds "$name" "$value"; LK_MAX_COST=$value ;;
    --max-tokens) lk_need_uint "$name" "$value"; LK_MAX_TOKENS=$value ;;
    --deadline) lk_deadline_parse "$value" ;;
    --on-event) LK_ON_EVENT=$value ;;
    -E | --conflict-exit-code)
      lk_need_uint "$name" "$value"
      ((value <= 255)) || lk_usage_error "$name: '$value' is not an exit status (0 to 255)"
      LK_HELD_EXIT=$value ;;
    *) lk_usage_error "unknown option '$1'" ;;
  esac
}

# lk_clock: now in epoch seconds, into LK_CLOCK: LOOPKIT_NOW as the tools
# read it (epoch seconds, or @FILE holding them, read at each call), else
# the wall clock. No program starts.
lk_clock() {
  local v=${LOOPKIT_NOW:-}
  if [[ $v == @* ]]; then { IFS= read -r v <"${v#@}"; } 2>/dev/null || v=""; fi
  [[ $v =~ ^[0-9]+$ ]] || v=$EPOCHSECONDS
  LK_CLOCK=$v
}

# lk_deadline_parse VALUE: --deadline as epoch seconds into LK_DEADLINE: a
# duration from now (90m, 8h, 1h30m, 45s, 2d), a time of day (07:00,
# 07:00:30: its next coming, local time) or a date and time date(1) reads
# (2026-11-30T07:00, "2026-11-30 07:00 UTC").
lk_deadline_parse() {
  local v=$1 day t rest n
  lk_clock
  LK_DEADLINE_TEXT=$v
  if [[ $v =~ ^([0-9]+[smhd])+$ ]]; then
    t=0 rest=$v
    while [[ $rest =~ ^([0-9]+)([smhd])(.*)$ ]]; do
      n=$((10#${BASH_REMATCH[1]}))
      case ${BASH_REMATCH[2]} in s) t=$((t + n)) ;; m) t=$((t + n * 60)) ;; h) t=$((t + n * 3600)) ;; d) t=$((t + n * 86400)) ;; esac
      rest=${BASH_REMATCH[3]}
    done
    LK_DEADLINE=$((LK_CLOCK + t))
    return 0
  fi
  if [[ $v =~ ^([01]?[0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9])?$ ]]; then
    if ! day=$(date -d "@$LK_CLOCK" +%F) || ! t=$(date -d "$day $v" +%s 2>/dev/null); then
      lk_usage_error "--deadline: cannot read '$v' as a time of day"
    fi
    ((t > LK_CLOCK)) || t=$(date -d "$day $v + 1 day" +%s)
    LK_DEADLINE=$t
    return 0
  fi
  if [[ $v != [0-9][0-9][0-9][0-9]-* ]] || ! t=$(date -d "$v" +%s 2>/dev/null) || [[ ! $t =~ ^-?[0-9]+$ ]]; then
    lk_usage_error "--deadline: '$v' is not a time (2026-11-30T07:00, 07:00) or a duration (8h, 90m)"
  fi
  LK_DEADLINE=$t
}

# lk_check_name WHAT NAME: a session or stage name usable as a file name.
lk_check_name() {
  [[ -n $2 && $2 != *[/$'\n\t\r']* && $2 != . && $2 != .. && $2 != -* ]] ||
    lk_usage_error "$1 '$2' is not a usable name (no slash, no leading dash)"
}

lk_abspath() { # lk_abspath PATH: absolute, without resolving symlinks
  if [[ $1 == /* ]]; then printf '%s' "$1"; else printf '%s/%s' "$PWD" "${1#./}"; fi
}

# lk_is_url TEXT: an etcd URL (etcd://, etcds://), not a path.
lk_is_url() { [[ $1 == etcd://* || $1 == etcds://* ]]; }

# lk_place PATH|URL: an etcd URL as given, a path made absolute.
lk_place() { if lk_is_url "$1"; then printf '%s' "$1"; else lk_abspath "$1"; fi; }

# lk_in FOLDER NAME: NAME in FOLDER, a folder of files or of etcd keys (a
# URL's folder is its prefix: etcd://h:2379/lk/locks/ holds /lk/locks/NAME).
lk_in() { printf '%s/%s' "${1%/}" "$2"; }

# lk_safe_name TEXT: TEXT usable as one file name or key segment: bytes
# other than letters, digits, "_", "-" and a "." that does not lead become
# %XX, "%" included, so distinct TEXTs never share a name.
lk_safe_name() {
  local LC_ALL=C s=$1 out="" c i
  for ((i = 0; i < ${#s}; i++)); do
    c=${s:i:1}
    if [[ $c == [A-Za-z0-9_-] || ($c == . && i -gt 0) ]]; then
      out+=$c
    else
      printf -v c '%%%02X' "'$c"
      out+=$c
    fi
  done
  printf '%s' "$out"
}

# lk_json_str TEXT: TEXT as a JSON string literal (quotes included).
lk_json_str() {
  local LK_JSON
  lk_json_str_v "$1"
  printf '%s' "$LK_JSON"
}

# lk_json_str_v TEXT: as lk_json_str, into LK_JSON (no subshell).
lk_json_str_v() {
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
  LK_JSON="\"$s\""
}

# --- the tools --------------------------------------------------------------

# lk_find_tools SCRIPT_DIR TOOL...: make sure the tools run by name. Order:
# $LOOPKIT_BIN, PATH, the script's own folder, its ../bin, ../build/bin (a
# source checkout), and for an install's PREFIX/libexec/loopkit, PREFIX/bin.
lk_find_tools() {
  local here=$1 dir t
  shift
  local -a dirs=() missing=() best=()
  local best_dir=""
  [[ -n ${LOOPKIT_BIN:-} ]] && dirs+=("$LOOPKIT_BIN")
  dirs+=("")
  dirs+=("$here" "$here/../bin" "$here/../build/bin")
  [[ $here != */libexec/* ]] || dirs+=("${here%/libexec/*}/bin")
  for dir in "${dirs[@]}"; do
    missing=()
    for t in "$@"; do
      if [[ -z $dir ]]; then
        type -P "$t" >/dev/null || missing+=("$t")
      else
        [[ -x $dir/$t && ! -d $dir/$t ]] || missing+=("$t")
      fi
    done
    if ((${#missing[@]} == 0)); then
      if [[ -n $dir ]]; then
        dir=$(cd "$dir" && pwd) || continue
        PATH="$dir:$PATH"
        export PATH
      fi
      return 0
    fi
    # the folder that has most of them: a build older than these scripts
    if ((${#missing[@]} < $# && (${#best[@]} == 0 || ${#missing[@]} < ${#best[@]}))); then
      best=("${missing[@]}") best_dir=${dir:-PATH}
    fi
  done
  if ((${#best[@]} > 0)); then
    lk_die 4 "'$best_dir' has the loopkit tools but not ${best[*]} (built before these scripts?): rebuild (cmake --build build), or put them on PATH"
  fi
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
# R_stop, R_error, R_cost, R_tokens, R_turns, R_session_id (empty when not
# given).
lk_read_result() {
  local f=$1 out
  R_plateau="" R_reasoning="" R_stop="" R_error="" R_cost="" R_tokens="" R_turns="" R_session_id=""
  [[ -s $f ]] || return 0
  if ! out=$(state-get -s -d '' "$f" R_plateau=plateau R_reasoning=reasoning R_stop=stop \
    R_error=error R_cost=cost R_tokens=tokens R_turns=turns R_session_id=session_id 2>&1); then
    lk_warn "ignoring the agent's result: ${out#state-get: }"
    return 0
  fi
  eval "$out"
  [[ -z $R_cost ]] || lk_cost_as_written "$f"
}

# lk_cost_as_written FILE: R_cost as the agent wrote it, not as state-get
# prints it (the nearest double, 17 digits): the totals, added by state-set
# on their decimal digits, then stay exact to 34. Taken from the text only
# when "cost" stands in it once (no nested or repeated member, no string
# that could be mistaken for it); else the double stays. No program starts.
lk_cost_as_written() {
  local text="" rest re='"cost"[[:space:]]*:[[:space:]]*([0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?)[[:space:]]*[,}]'
  IFS= read -r -d '' text <"$1" || true
  rest=${text#*'"cost"'}
  [[ $rest != *'"cost"'* ]] || return 0
  if [[ $text =~ $re ]]; then R_cost=${BASH_REMATCH[1]}; fi
}

# lk_usage_args PREFIX [OP]: state-set assignments recording the result's
# cost, tokens and turns: PREFIX.cost etc. (PREFIX empty: none; OP := by
# default, += to add to them) and the session's total_cost, total_tokens,
# total_turns; into LK_ARGS, with the event fields into LK_USAGE.
lk_usage_args() {
  LK_ARGS=() LK_USAGE=()
  [[ -z $R_cost$R_tokens$R_turns ]] || lk_usage_args_of "$@"
}

# lk_usage_args_of PREFIX [OP]: lk_usage_args for a result that gives any
# (bash copies a function's whole body at each call: the common case, none,
# is kept to the small one)
lk_usage_args_of() {
  local prefix=$1 op=${2:-:=} name value
  for name in cost tokens turns; do
    case $name in cost) value=$R_cost ;; tokens) value=$R_tokens ;; *) value=$R_turns ;; esac
    [[ -n $value ]] || continue
    if [[ $name == cost && ! $value =~ ^[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$ ]] ||
      [[ $name != cost && ! $value =~ ^[0-9]+$ ]]; then
      lk_warn "ignoring $name '$value' in the agent's result (not a number)"
      continue
    fi
    [[ -z $prefix ]] || LK_ARGS+=("$prefix.$name$op$value")
    LK_ARGS+=("total_$name+=$value")
    LK_USAGE+=("$name:=$value")
  done
}

# --- finding a session by name --------------------------------------------

# lk_find_session NAME ROOT...: the session's state file and event log in
# LK_FOUND_STATE and LK_FOUND_EVENTS, as engine-status lists them: NAME a
# state file's path, ROOT/pipeline-runs/NAME/state.json, or a drain's root
# by its folder's name ("atari" or ".atari"); 1 when none.
lk_find_session() {
  local name=$1 root base
  shift
  LK_FOUND_STATE="" LK_FOUND_EVENTS=""
  if [[ -f $name && $name == *.json ]]; then
    LK_FOUND_STATE=$name LK_FOUND_EVENTS=$(dirname "$name")/events.jsonl
    return 0
  fi
  for root in "$@"; do
    if [[ -f $root/pipeline-runs/$name/state.json ]]; then
      LK_FOUND_STATE=$root/pipeline-runs/$name/state.json LK_FOUND_EVENTS=$root/pipeline-runs/$name/events.jsonl
      return 0
    fi
    base=${root%/}
    base=${base##*/}
    if [[ -f $root/state.json && ($name == "$base" || .$name == "$base") ]]; then
      LK_FOUND_STATE=$root/state.json LK_FOUND_EVENTS=$root/events.jsonl
      return 0
    fi
  done
  return 1
}

# --- events -----------------------------------------------------------------

# lk_event TYPE [KEY=TEXT|KEY:=JSON...]: one line in the session's
# events.jsonl (see event-append(1)), after the event held back by
# lk_event_later, in the same call. The state file is the truth; the log is
# what happened, so a failure to write it is a warning, never the end.
LK_EVENT_LATER=() # an event held back: TYPE and fields (lk_event_later)
lk_event() {
  [[ -n $LK_EVENTS ]] || return 0
  if [[ -n $LK_ON_EVENT ]]; then
    lk_event_hooked "$@"
    return 0
  fi
  local type=$1
  if ((${#LK_EVENT_LATER[@]})); then
    set -- "${LK_EVENT_LATER[@]}" --then "$@"
    LK_EVENT_LATER=()
  fi
  event-append --no-sync --session "$LK_SESSION" "$LK_EVENTS" "$@" ||
    lk_warn "could not record the event '$type' in $LK_EVENTS"
}

# lk_event_hooked TYPE [FIELDS...]: lk_event with --on-event: each line as
# written (--print) passed on to the hook. Apart from lk_event, whose body
# bash copies at every call.
lk_event_hooked() {
  local -a ev=("$@") types=("$1") ev_lines=()
  local i
  if ((${#LK_EVENT_LATER[@]})); then
    ev=("${LK_EVENT_LATER[@]}" --then "$@") types=("${LK_EVENT_LATER[0]}" "$1")
    LK_EVENT_LATER=()
  fi
  if lk_get_text_of ev_lines event-append --no-sync --print --session "$LK_SESSION" "$LK_EVENTS" "${ev[@]}"; then
    for i in "${!types[@]}"; do lk_hook "${types[i]}" "${ev_lines[i]:-}"; done
  else
    lk_warn "could not record the event '$1' in $LK_EVENTS"
  fi
}

# lk_event_later TYPE [FIELDS...]: an event appended with the next one (one
# program for both: an iteration's end and the next one's start), or by
# lk_event_flush before a wait or at the end. Its ts is when it is written.
lk_event_later() {
  ((${#LK_EVENT_LATER[@]} == 0)) || lk_event_flush
  LK_EVENT_LATER=("$@")
}

# lk_event_flush: the event held back, if any, appended now
lk_event_flush() {
  ((${#LK_EVENT_LATER[@]})) || return 0
  local -a ev=("${LK_EVENT_LATER[@]}")
  LK_EVENT_LATER=()
  lk_event "${ev[@]}"
}

# lk_get_text_of ARRAY CMD...: CMD's output lines into ARRAY (none for no
# output), by lk_text_of; CMD's status
lk_get_text_of() { lk_lines_by lk_text_of "$@"; }

# lk_hook TYPE LINE: --on-event's command, in the background, with the
# event's JSON line on stdin and LOOPKIT_EVENT its type; its output and its
# failure ("exit N") go to hooks.log beside the event log, never to the
# engine. Each run is ended after LOOPKIT_HOOK_TIMEOUT seconds (default 60;
# timeout(1) ends its process group), and at most LK_HOOKS_MAX (4) run at
# once: an event that finds them all still running is not passed on (said
# once in a while on stderr, and in hooks.log). A hook outlives the engine
# (the last event's hook runs after it ended).
LK_HOOK_PIDS=() LK_HOOKS_MAX=4 LK_HOOKS_SKIPPED=0
lk_hook() {
  local pid running=() log=${LK_EVENTS%/*}/hooks.log
  for pid in "${LK_HOOK_PIDS[@]}"; do
    ! kill -0 "$pid" 2>/dev/null || running+=("$pid")
  done
  LK_HOOK_PIDS=("${running[@]}")
  if ((${#LK_HOOK_PIDS[@]} >= LK_HOOKS_MAX)); then
    LK_HOOKS_SKIPPED=$((LK_HOOKS_SKIPPED + 1))
    printf '%s: --on-event: %d hooks still running; the event %s was not passed on\n' "$LK_PROG" "$LK_HOOKS_MAX" "$1" >>"$log" 2>/dev/null
    if ((LK_HOOKS_SKIPPED % 100 == 1)); then
      lk_warn "--on-event: $LK_HOOKS_MAX hooks still running; events are not passed on until one ends (see $log)"
    fi
    return 0
  fi
  (
    trap - EXIT INT TERM HUP QUIT
    [[ -z ${LK_STDIN:-} ]] || exec {LK_STDIN}<&-
    rc=0
    LOOPKIT_EVENT=$1 timeout -k 5 "${LOOPKIT_HOOK_TIMEOUT:-60}" bash -c "$LK_ON_EVENT" <<<"$2" || rc=$?
    ((rc == 0)) || printf '%s: --on-event: exit %d for the event %s\n' "$LK_PROG" "$rc" "$1"
  ) </dev/null >>"$log" 2>&1 &
  LK_HOOK_PIDS+=("$!")
}

# --- control through the state file -----------------------------------------

# lk_control STATE: before an iteration. "paused" waits (saying so on the
# status line) until the status changes; "stopped" returns 1; anything else
# returns 0. The lock is kept fresh meanwhile.
lk_control() {
  local st paused=0
  while :; do
    st=$(lk_str "$1" status)
    case $st in
      paused)
        if ((!paused)); then
          paused=1
          lk_event paused
          lk_log "paused (resume: state-set $1 status=running; stop: status=stopped)"
        fi
        lk_lock_check
        sleep "$LK_POLL"
        lk_draw
        ;;
      stopped)
        lk_event stopped
        return 1
        ;;
      *)
        if ((paused)); then
          lk_event resumed
          lk_log "resumed"
        fi
        return 0
        ;;
    esac
  done
}

# --- the lock and fenced writes: lib-lock.bash, beside this file -----------
# shellcheck source-path=SCRIPTDIR source=lib-lock.bash
. "${BASH_SOURCE[0]%/*}/lib-lock.bash"

# --- running the agent: lib-agent.bash, beside this file -------------------
# shellcheck source-path=SCRIPTDIR source=lib-agent.bash
. "${BASH_SOURCE[0]%/*}/lib-agent.bash"

# --- the iteration of loop-engine and pipeline-engine: lib-loop.bash -------
# shellcheck source-path=SCRIPTDIR source=lib-loop.bash
. "${BASH_SOURCE[0]%/*}/lib-loop.bash"

# --- lifecycle --------------------------------------------------------------

# lk_on_signal SIGNAL: the engine's lk_interrupted hook records the
# interruption, then the EXIT trap cleans up.
lk_on_signal() {
  # a child of ours signalled between its fork and its exec (lk_wait_agent's
  # sleeper) is not the engine: it has nothing to clean up
  ((BASHPID == $$)) || exit 1
  trap '' INT TERM HUP QUIT
  LK_SIGNAL=$1
  lk_stop_agent "$1"
  if declare -F lk_interrupted >/dev/null; then lk_interrupted "$1" >/dev/null 2>&1 || true; fi
  lk_event interrupted "signal=SIG$1" >/dev/null 2>&1
  lk_lock_drop
  lk_clear_line
  printf '%s: interrupted by SIG%s%s; the state says interrupted and the lock is released (run again to resume)\n' \
    "$LK_PROG" "$1" "${LK_LABEL:+ ($LK_LABEL)}" >&2
  case $1 in INT) exit 130 ;; TERM) exit 143 ;; HUP) exit 129 ;; QUIT) exit 131 ;; *) exit 1 ;; esac
}

lk_on_exit() {
  local rc=$?
  ((BASHPID == $$)) || return "$rc" # as in lk_on_signal
  trap '' INT TERM HUP QUIT
  set +e
  lk_event_flush
  lk_stop_agent
  lk_timer_end
  lk_lock_drop
  [[ -n $LK_SCRATCH ]] && rm -rf "$LK_SCRATCH"
  lk_clear_line
  return "$rc"
}

# lk_setup: traps, a private scratch folder, the saved stdin.
lk_setup() {
  lk_terminal
  trap lk_on_exit EXIT
  trap 'lk_on_signal INT' INT
  trap 'lk_on_signal TERM' TERM
  trap 'lk_on_signal HUP' HUP
  trap 'lk_on_signal QUIT' QUIT # Ctrl-\ ends the run as Ctrl-C does
  LK_SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/loopkit-engine.XXXXXX") ||
    lk_die 4 "cannot create a temporary folder"
  if { true <&0; } 2>/dev/null; then exec {LK_STDIN}<&0; else exec {LK_STDIN}</dev/null; fi
  # lk_timer's FIFO, which nobody writes
  if mkfifo "$LK_SCRATCH/tick" 2>/dev/null; then exec {LK_TICK}<>"$LK_SCRATCH/tick"; fi
}

# --- for engine-status, engine-ctl and engine-report ------------------------

# lk_find_state NAME ROOT...: lk_find_session, where NAME may also be an etcd
# URL of a session's state (etcd://HOST:PORT/KEY). Sets LK_FOUND_STATE,
# LK_FOUND_EVENTS (for a URL, the log its engine keeps on this host:
# ROOT/pipeline-runs/SESSION/events.jsonl, SESSION the state's "session", or
# a drain's .atari/events.jsonl) and LK_FOUND_NAME (the state's "session";
# for a drain its folder's or key's last name, "atari" for .atari). 1 when
# there is no such session (a URL: no such key), state-get's status when the
# URL cannot be read (its words in LK_ERR).
lk_find_state() {
  local name=$1 root
  shift
  if lk_is_url "$name"; then
    LK_ERR=$(state-get -q --must-exist -e "$name" . 2>&1) || return
    LK_FOUND_STATE=$name LK_FOUND_NAME=$(lk_str "$name" session)
    if [[ -z $LK_FOUND_NAME ]]; then
      LK_FOUND_NAME=${name%/}
      LK_FOUND_NAME=${LK_FOUND_NAME##*/}
      LK_FOUND_EVENTS=.atari/events.jsonl
      for root in "$@"; do
        case ${root%/} in .atari | */.atari | atari | */atari) LK_FOUND_EVENTS=${root%/}/events.jsonl; break ;; esac
      done
      return 0
    fi
    root=${1:-.claude}
    [[ $root != .atari && $root != */.atari ]] || root=.claude
    LK_FOUND_EVENTS=$root/pipeline-runs/$LK_FOUND_NAME/events.jsonl
    return 0
  fi
  lk_find_session "$name" "$@" || return 1
  LK_FOUND_NAME=$(lk_str "$LK_FOUND_STATE" session)
  if [[ -z $LK_FOUND_NAME ]]; then
    root=$(dirname "$LK_FOUND_STATE")
    [[ $root != . ]] || root=$PWD
    LK_FOUND_NAME=${root##*/}
    LK_FOUND_NAME=${LK_FOUND_NAME#.}
  fi
}

# lk_char_width CODEPOINT: the screen columns of one character, as wcwidth(3)
# counts them (East Asian wide and fullwidth, and emoji, take two; combining
# marks, zero-width joiners and variation selectors none), into LK_CW.
lk_char_width() {
  local c=$1
  LK_CW=1
  if ((c < 0x300)); then
    ((c >= 32)) || LK_CW=0
  elif ((c <= 0x36F || (c >= 0x200B && c <= 0x200F) || (c >= 0x20D0 && c <= 0x20FF) ||
    (c >= 0xFE00 && c <= 0xFE0F) || (c >= 0xE0100 && c <= 0xE01EF))); then
    LK_CW=0
  elif ((c >= 0x1100 && c <= 0x115F || c >= 0x2E80 && c <= 0x303E || c >= 0x3041 && c <= 0x33FF ||
    c >= 0x3400 && c <= 0x4DBF || c >= 0x4E00 && c <= 0x9FFF || c >= 0xA000 && c <= 0xA4CF ||
    c >= 0xAC00 && c <= 0xD7A3 || c >= 0xF900 && c <= 0xFAFF || c >= 0xFE30 && c <= 0xFE4F ||
    c >= 0xFF00 && c <= 0xFF60 || c >= 0xFFE0 && c <= 0xFFE6 || c >= 0x1F300 && c <= 0x1F64F ||
    c >= 0x1F680 && c <= 0x1F6FF || c >= 0x1F900 && c <= 0x1F9FF || c >= 0x1FA70 && c <= 0x1FAFF ||
    c >= 0x20000 && c <= 0x3FFFD || c == 0x231A || c == 0x231B || c >= 0x23E9 && c <= 0x23EC ||
    c == 0x23F0 || c == 0x23F3 || c >= 0x25FD && c <= 0x25FE || c >= 0x2614 && c <= 0x2615 ||
    c >= 0x2648 && c <= 0x2653 || c == 0x267F || c == 0x2693 || c == 0x26A1 || c == 0x26AA ||
    c == 0x26AB || c == 0x26BD || c == 0x26BE || c == 0x26C4 || c == 0x26C5 || c == 0x26CE ||
    c == 0x26D4 || c == 0x26EA || c == 0x26F2 || c == 0x26F3 || c == 0x26F5 || c == 0x26FA ||
    c == 0x26FD || c == 0x2705 || c == 0x270A || c == 0x270B || c == 0x2728 || c == 0x274C ||
    c == 0x274E || c >= 0x2753 && c <= 0x2755 || c == 0x2757 || c >= 0x2795 && c <= 0x2797 ||
    c == 0x27B0 || c == 0x27BF || c == 0x2B1B || c == 0x2B1C || c == 0x2B50 || c == 0x2B55)); then
    LK_CW=2
  fi
}

# lk_fit TEXT COLS [PAD]: TEXT fitted to COLS screen columns, not characters
# (a wide character takes two, so CJK text or an emoji never wraps a line
# that looks as if it fits): cut with "…" in its last column when longer,
# padded with spaces to COLS when PAD is 1. Into LK_FIT; LK_WIDTH is the
# width of TEXT itself. For lines on a terminal (engine-status; the status
# line of lk_draw can use it too).
lk_fit() {
  local LC_ALL=C.UTF-8 s=$1 cols=$2 pad=${3:-0} i n w=0 cut=-1 wcut=0
  if [[ $s != *[![:ascii:]]* ]]; then
    w=${#s}
  else
    for ((i = 0; i < ${#s}; i++)); do
      printf -v n '%d' "'${s:i:1}"
      lk_char_width "$n"
      # where the text stops when it must be cut: room left for the "…"
      if ((cut < 0 && w + LK_CW > cols - 1)); then cut=$i wcut=$w; fi
      w=$((w + LK_CW))
    done
  fi
  LK_WIDTH=$w LK_FIT=$s
  if ((w > cols && cols > 0)); then
    if ((cut < 0)); then cut=$((cols - 1)) wcut=$((cols - 1)); fi
    LK_FIT="${s:0:cut}…" w=$((wcut + 1))
  fi
  if ((pad && w < cols)); then printf -v LK_FIT '%s%*s' "$LK_FIT" $((cols - w)) ''; fi
  return 0
}
