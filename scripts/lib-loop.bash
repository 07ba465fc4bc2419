# lib-loop.bash: the iteration core of loop-engine and pipeline-engine (a
# pipeline's stage is a loop), and the helpers every engine's iteration or
# item uses in place of a program (numbers, time, the --next lines), for
# lib-engine.bash, which sources it from its own folder. One iteration: the control read, the start, the agent, the
# result, the record; the ways out (stopped, failed, max-cost) said and
# recorded the same way by both engines.
#
# The engine sets, before lk_loop:
#   LK_IT_CMD=(...)     the agent command
#   LK_IT_WHERE         "" or "stage 0 (plan), ": where an iteration is, in messages
#   LK_IT_LINE          "" or "stage 1 of 2 (plan) · ": the status line's head
#   LK_IT_NOUN          "session" or "pipeline": what fails or stops
#   LK_IT_AGENT         "agent" or "command": what exits with a status
#   LK_IT_EVENT=(...)   fields of its own in every event ("stage:=0")
#   LK_IT_ENTRY         members of its own in each history entry (',"stage":"plan"')
#   LK_IT_MAX_PATH      a state path read before each iteration as the maximum
#                       (engine-ctl extend raises it while the engine runs), or ""
#   LK_IT_RESULT        the result file's name, with the iteration appended
# and may define the hooks (each appends state-set arguments to LK_ARGS):
#   lk_it_done_args IT REASON   the record of a finished iteration (REASON
#                               empty unless it ends the loop)
#   lk_it_fail_args WHY         the record of a failure
#   lk_it_guard IT              the --expect guard of the record's retries,
#                               into LK_GUARD (default iteration_completed:=IT-1)
# shellcheck shell=bash disable=SC2034,SC2153,SC2154 # the LK_* and R_* globals are lib-engine.bash's
if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
  echo "lib-loop.bash: sourced by lib-engine.bash; it does nothing on its own" >&2
  exit 2
fi

LK_IT_CMD=() LK_IT_EVENT=() LK_IT_WHERE="" LK_IT_LINE="" LK_IT_NOUN=session LK_IT_AGENT=agent
LK_IT_ENTRY="" LK_IT_MAX_PATH="" LK_IT_RESULT=result-
LK_IT_LATER=0 # a pipeline's runs of the stages after this one
LK_REASON="" # why lk_loop ended: stop (or the agent's reason), plateau, max_iterations
LK_STARTED=0 # the session is the engine's: an interruption is recorded

# --- what each iteration or item uses, without starting a program ---------

# lk_json_keys TEXT: the lines of TEXT (a --next command's output), each
# trimmed of surrounding white space, into LK_IDS, and each as a JSON
# string into LK_KEYS (an empty line stays, as ""). Plain lines, the usual
# case, are done array-wide, without a loop.
lk_json_keys() {
  local id i LK_JSON
  LK_IDS=() LK_KEYS=()
  [[ -n $1 ]] || return 0
  mapfile -t LK_IDS <<<"$1"
  if [[ $1 != *[\"\\$' \t\r\v\f'$'\x01'-$'\x08'$'\x0e'-$'\x1f']* ]]; then
    LK_KEYS=("${LK_IDS[@]/#/\"}")
    LK_KEYS=("${LK_KEYS[@]/%/\"}")
    return 0
  fi
  for i in "${!LK_IDS[@]}"; do
    id=${LK_IDS[i]}
    id=${id#"${id%%[![:space:]]*}"}
    id=${id%"${id##*[![:space:]]}"}
    LK_IDS[i]=$id
    lk_json_str_v "$id"
    LK_KEYS[i]=$LK_JSON
  done
}

# lk_get_lines NAME ARGS...: state-get ARGS, its lines into the array NAME;
# state-get's status. One fork (lk_get_text), and an etcd outage shorter
# than the lease ridden out (lk_read_lines).
lk_get_lines() { lk_read_lines "$@"; }

# lk_us SECONDS: a number of seconds (digits, a fraction) in whole
# microseconds, into LK_US; 1 (and LK_US empty) for any other form.
# Patterns, not a regex: bash compiles a regex at each use (70 us; this is
# called a few times per iteration).
lk_us() {
  LK_US=""
  local whole=${1%%.*} frac=""
  [[ $1 != *.* ]] || frac=${1#*.}
  [[ -n $whole && $whole != *[!0-9]* && $frac != *[!0-9]* ]] || return 1
  frac+=000000
  LK_US=$((10#$whole * 1000000 + 10#${frac:0:6}))
}

# lk_secs_since T0: seconds from T0 (an $EPOCHREALTIME) to now, with three
# decimals, into LK_SECS: bash arithmetic, no program started. An
# $EPOCHREALTIME always has six decimals (its point is the locale's): its
# digits are microseconds.
lk_secs_since() {
  local t0=${1//[!0-9]/} d
  [[ -n $t0 ]] || { LK_SECS=0.000; return 0; }
  d=$(((10#${EPOCHREALTIME//[!0-9]/} - 10#$t0 + 500) / 1000))
  ((d >= 0)) || d=0
  printf -v LK_SECS '%d.%03d' $((d / 1000)) $((d % 1000))
}

# lk_ge A B: A >= B for two numbers as JSON writes them: plain decimals in
# bash, other forms (an exponent, a sign) by awk.
lk_ge() {
  local a b
  if lk_us "$1" && a=$LK_US && lk_us "$2" && b=$LK_US; then
    ((a >= b))
    return
  fi
  awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 >= b + 0) }'
}

# lk_over_budget TOTAL: TOTAL (the state's total_cost) has reached
# --max-cost (never without it).
lk_over_budget() {
  [[ -n $LK_MAX_COST ]] || return 1
  [[ -n $1 && $1 != null ]] || set -- 0
  lk_ge "$1" "$LK_MAX_COST"
}

# lk_limit_reached TOTAL_COST TOTAL_TOKENS: a limit on starting anything
# new has been reached: --max-cost, --max-tokens (by the state's totals) or
# --deadline (by LOOPKIT_NOW or the clock). Its completion_reason into
# LK_LIMIT, the words that say it into LK_LIMIT_WORDS.
lk_limit_reached() {
  LK_LIMIT="" LK_LIMIT_WORDS=""
  if lk_over_budget "$1"; then
    LK_LIMIT=max_cost LK_LIMIT_WORDS="total_cost reached --max-cost $LK_MAX_COST"
  elif [[ -n $LK_MAX_TOKENS && $2 =~ ^[0-9]+$ ]] && (($2 >= LK_MAX_TOKENS)); then
    LK_LIMIT=max_tokens LK_LIMIT_WORDS="total_tokens reached --max-tokens $LK_MAX_TOKENS"
  elif [[ -n $LK_DEADLINE ]] && lk_clock && ((LK_CLOCK >= LK_DEADLINE)); then
    LK_LIMIT=deadline LK_LIMIT_WORDS="the --deadline $LK_DEADLINE_TEXT has passed"
  fi
  [[ -n $LK_LIMIT ]]
}

# lk_beat_if_due: lk_lock_check once a beat is due (LK_BEAT_EVERY since the
# last beat that reached the lock): between iterations or items, a beat per
# interval as while the agent runs, not one process per item. The time it
# is due is worked out once per beat (LK_BEAT_DUE_US, for the LK_BEAT_OK in
# LK_BEAT_DUE_OF): this runs every iteration.
LK_BEAT_DUE_US=0 LK_BEAT_DUE_OF=""
lk_beat_if_due() {
  if [[ -n $LK_LOCK ]]; then
    [[ $LK_BEAT_DUE_OF == "$LK_BEAT_OK|$LK_BEAT_EVERY" ]] || lk_beat_due_at
    ((10#${EPOCHREALTIME//[!0-9]/} >= LK_BEAT_DUE_US)) || return 0
  fi
  lk_lock_check
}

# lk_beat_due_at: LK_BEAT_DUE_US, when the next beat is due in microseconds
# since the epoch (0, at once, for a form lk_us does not read)
lk_beat_due_at() {
  LK_BEAT_DUE_US=0 LK_BEAT_DUE_OF="$LK_BEAT_OK|$LK_BEAT_EVERY"
  local last
  lk_us "$LK_BEAT_OK" && last=$LK_US && lk_us "$LK_BEAT_EVERY" && LK_BEAT_DUE_US=$((last + LK_US))
  return 0
}

# lk_stamp_v: lk_stamp into LK_STAMP
lk_stamp_v() {
  local t=${LOOPKIT_NOW:-$EPOCHSECONDS}
  if [[ $t == @* ]]; then lk_clock; t=$LK_CLOCK; fi # a clock file a test moves
  [[ $t == "$LK_UTC_AT" ]] || lk_utc_v "$t"
  LK_STAMP=$LK_UTC
}

# lk_utc_v EPOCH: that second in ISO 8601 UTC, into LK_UTC; the last one
# made is kept, since TZ=UTC in front of printf makes the C library read the
# zone again at each call (40 us, a few times per iteration)
LK_UTC="" LK_UTC_AT=""
lk_utc_v() {
  [[ $1 != "$LK_UTC_AT" ]] || return 0
  TZ=UTC printf -v LK_UTC '%(%Y-%m-%dT%H:%M:%SZ)T' "$1"
  LK_UTC_AT=$1
}

# lk_proc_start_v PID: lk_proc_start into LK_PROC_START
lk_proc_start_v() {
  local stat rest
  LK_PROC_START=""
  { IFS= read -r stat </proc/"$1"/stat; } 2>/dev/null || return 0
  rest=${stat##*) }
  read -r -a stat <<<"$rest"
  LK_PROC_START=${stat[19]:-}
}

# lk_timer SECONDS: a background job ($!) that ends after SECONDS, started
# without a program: reads that time out on the engine's FIFO (LK_TICK,
# lk_setup's), which nobody writes; sleep(1) without one. An agent run that
# ends first never depends on whether a sleep got as far as its exec.
LK_TICK=""
lk_timer() {
  if [[ -n $LK_TICK ]]; then
    lk_tick_wait "$1" &
  else
    sleep "$1" >/dev/null 2>&1 &
  fi
}

# lk_tick_wait SECONDS: the timer's wait, in reads of at most a second, each
# followed by a look at the engine ($$): a kill -9 of the engine runs no trap
# to end its timer, which then ends within a second, not a whole beat later.
# A read that times out is no error (the engines run with set -e: the timer
# ended at its first read). Builtins only.
lk_tick_wait() {
  local ms slice t
  if [[ $1 =~ ^([0-9]*)(\.([0-9]*))?$ ]]; then
    local frac=${BASH_REMATCH[3]}000
    ms=$((10#0${BASH_REMATCH[1]} * 1000 + 10#${frac:0:3}))
  else
    read -r -t "$1" -u "$LK_TICK" _ || true # a form not parsed here (1e+06): at once
    return 0
  fi
  while ((ms > 0)); do
    slice=$((ms < 1000 ? ms : 1000))
    printf -v t '%d.%03d' $((slice / 1000)) $((slice % 1000))
    read -r -t "$t" -u "$LK_TICK" _ || true
    kill -0 "$$" 2>/dev/null || return 0
    ms=$((ms - slice))
  done
}

# --- the iteration ---------------------------------------------------------

# lk_loop_reason IT MAX PLATEAU_AFTER STREAK: the reason a loop that has
# completed IT iterations ends now (plateau, max_iterations), into LK_REASON.
lk_loop_reason() {
  LK_REASON=""
  if (($3 > 0 && $4 >= $3)); then LK_REASON=plateau; elif (($1 >= $2)); then LK_REASON=max_iterations; fi
}

# lk_it_done_args IT REASON: an engine's own assignments for the record of
# iteration IT (REASON: the loop ends), appended to LK_ARGS; none by default
lk_it_done_args() { :; }

# lk_loop STATE FROM MAX PLATEAU_AFTER STREAK: iterations FROM, FROM+1, ...
# until a reason (LK_REASON); LK_IT is the last one completed. Stopped on
# request: exit 0; failed: exit 5; --max-cost reached: exit 0; each recorded
# in STATE and said.
lk_loop() {
  local state=$1 max=$3 pafter=$4 streak=$5 last="-" plateau
  LK_IT=$(($2 - 1)) LK_NEXT_STARTED=0
  lk_loop_reason "$LK_IT" "$max" "$pafter" "$streak"
  while [[ -z $LK_REASON ]]; do
    local it=$((LK_IT + 1))
    LK_STATUS="${LK_IT_LINE}iteration $it of $max · last: $last"
    lk_beat_if_due
    # started already: by the record of the one before (lk_loop_record)
    if ((!LK_NEXT_STARTED)) && ! lk_loop_start "$state" "$it" "$max"; then
      lk_loop_control "$state" "$it" || return 0
      if [[ -n $LK_IT_MAX_PATH ]]; then
        max=$LK_CTL_MAX
        LK_STATUS="${LK_IT_LINE}iteration $it of $max · last: $last"
      fi
      lk_set "$state" "iteration:=$it" --now iteration_started
    fi
    lk_log "$LK_STATUS"
    lk_event iteration-start "${LK_IT_EVENT[@]}" "iteration:=$it"
    export LOOPKIT_ITERATION=$it LOOPKIT_RESULT=$LK_SCRATCH/$LK_IT_RESULT$it.json
    if [[ -e $LOOPKIT_RESULT || -L $LOOPKIT_RESULT ]]; then rm -f -- "$LOOPKIT_RESULT"; fi
    LK_OUT_BASE=iteration-$it
    lk_run_retrying "${LK_IT_CMD[@]}"
    ((LK_RC == 0)) || lk_loop_failed "$state" "$it" "$max"
    lk_read_result "$LOOPKIT_RESULT"
    plateau=false
    if [[ $R_plateau == true || $R_plateau == '"true"' ]]; then plateau=true streak=$((streak + 1)); else streak=0; fi
    case $R_stop in "" | false | null) LK_REASON="" ;; true) LK_REASON=stop ;; *) LK_REASON=$R_stop ;; esac
    [[ -n $LK_REASON ]] || lk_loop_reason "$it" "$max" "$pafter" "$streak"
    lk_loop_record "$state" "$it" "$plateau" "$max"
    LK_IT=$it
    last="plateau=$plateau${R_reasoning:+ ($R_reasoning)}"
    lk_log "${LK_IT_WHERE}iteration $it of $max done: $last"
  done
  lk_event_flush # the last iteration-done: the loop's events are all written when it returns
}

# lk_loop_start STATE IT MAX: the start of iteration IT written only if the
# control read would let it start as it is (lk_loop_start_args), checked
# with the write (--expect), one program for the read and the write. 1 when
# that does not hold, when --max-cost or --max-tokens needs the totals read,
# or the --deadline has passed: lk_loop_control decides, and the start is
# written after it.
lk_loop_start() {
  lk_loop_start_args "$2" "$3" || return 1
  lk_set -q "$1" "${LK_START[@]}"
}

# lk_loop_start_args IT MAX: the checks and assignments of iteration IT's
# start, into LK_START: status running and (LK_IT_MAX_PATH) the maximum
# still MAX, as --expect. 1 when the start needs the control read first:
# --max-cost or --max-tokens (the totals), or a --deadline that has passed.
lk_loop_start_args() {
  [[ -z $LK_MAX_COST && -z $LK_MAX_TOKENS ]] || return 1
  if [[ -n $LK_DEADLINE ]] && lk_clock && ((LK_CLOCK >= LK_DEADLINE)); then return 1; fi
  LK_START=(--expect status=running ${LK_IT_MAX_PATH:+--expect "$LK_IT_MAX_PATH:=$2"} "iteration:=$1" --now iteration_started)
}

# lk_loop_control STATE IT: before iteration IT, one read of the status, the
# total cost and the maximum (LK_CTL_MAX). "paused" waits (lk_control),
# "stopped" ends the engine (exit 0), a total cost at --max-cost ends it
# too; 1 never (the ways out exit).
lk_loop_control() {
  local state=$1 it=$2
  local -a v=()
  lk_get_lines v -j -d null "$state" status total_cost total_tokens ${LK_IT_MAX_PATH:+"$LK_IT_MAX_PATH"} || exit
  LK_CTL_MAX=$max
  if [[ ${v[3]:-} =~ ^[1-9][0-9]*$ ]]; then LK_CTL_MAX=${v[3]}; fi
  if [[ ${v[0]} == '"paused"' || ${v[0]} == '"stopped"' ]] && ! lk_control "$state"; then
    lk_set "$state" status=stopped completion_reason=stopped 'iteration_started:=null' --now completed_at
    LK_STARTED=0
    lk_say "stopped by request ${LK_IT_WHERE:+in ${LK_IT_WHERE%, } }after $((it - 1)) iterations: $(lk_loop_counts "$it" "$LK_CTL_MAX") (run again to resume)"
    exit 0
  fi
  # a pause may have lasted: the total as it is now
  [[ ${v[0]} != '"paused"' ]] || v[1]=$(lk_str "$state" total_cost) v[2]=$(lk_str "$state" total_tokens)
  if lk_limit_reached "${v[1]}" "${v[2]}"; then
    lk_set "$state" status=complete "completion_reason=$LK_LIMIT" 'iteration_started:=null' --now completed_at
    LK_STARTED=0
    lk_event complete "reason=$LK_LIMIT" "${LK_IT_EVENT[@]}" "iteration:=$((it - 1))"
    lk_say "complete: $LK_LIMIT_WORDS ${LK_IT_WHERE:+in ${LK_IT_WHERE%, } }after $((it - 1)) iterations: $(lk_loop_counts "$it" "$LK_CTL_MAX")"
    exit 0
  fi
}

# lk_loop_counts IT MAX: the final words' counts when iteration IT did not
# complete: done, left (of MAX), and a pipeline's later stages (LK_IT_LATER:
# their runs, "up to": a plateau may end them sooner).
lk_loop_counts() {
  local left=$(($2 - $1 + 1))
  ((left > 0)) || left=0
  printf 'done %d, left %d' $(($1 - 1)) "$left"
  ((LK_IT_LATER == 0)) || printf ' in this stage and up to %d in later stages' "$LK_IT_LATER"
}

# lk_loop_failed STATE IT MAX: the agent failed past its retries (or the
# circuit breaker tripped): recorded, said, exit 5.
lk_loop_failed() {
  local state=$1 it=$2 max=$3 why=agent-error
  ((!LK_TIMED_OUT)) || why=timeout
  ((!LK_BROKEN)) || why=too-many-failures
  LK_ARGS=()
  ! declare -F lk_it_fail_args >/dev/null || lk_it_fail_args "$why"
  lk_set "$state" status=failed "completion_reason=$why" "consecutive_failures:=$LK_FAILS" \
    "last_error=$LK_WHY" ${LK_RUN_OUTPUT:+"last_output=$LK_RUN_OUTPUT"} \
    --delete agent_pid --delete agent_start --delete agent_boot "${LK_ARGS[@]}" \
    'iteration_started:=null' --now completed_at
  LK_STARTED=0
  lk_event failed "reason=$why" "${LK_IT_EVENT[@]}" "iteration:=$it" "status:=$LK_RC" "error=$LK_WHY"
  if ((LK_BROKEN)); then
    lk_say "${LK_IT_WHERE}iteration $it: $LK_FAILS consecutive failures (last status $LK_RC); $LK_IT_NOUN stopped: too-many-failures"
  else
    lk_say "${LK_IT_WHERE}iteration $it: the $LK_IT_AGENT exited with status $LK_RC; $LK_IT_NOUN failed: $why; $(lk_loop_counts "$it" "$max") (run again to resume)"
  fi
  exit 5
}

# lk_loop_record STATE IT PLATEAU MAX: the finished iteration's history
# entry, counters and (LK_REASON) the end, in one fenced write, then its
# event. When the loop goes on, a state file and the next start needs no
# control read (lk_loop_start_args), the same write starts the next
# iteration (LK_NEXT_STARTED=1) if its checks hold: one program for both, no
# state between them that a reader could act on differently.
lk_loop_record() {
  local state=$1 it=$2 plateau=$3 guard="iteration_completed:=$(($2 - 1))" rc=0 h='history[-1]'
  local -a args
  lk_usage_args "$h"
  # one array assignment (bash parses each one again): lk_run_args's
  # assignments written out, the agent's usage (LK_ARGS) among them
  args=("history[]:={\"iteration\":$it$LK_IT_ENTRY,\"timestamp\":null,\"plateau\":$plateau}" --now "$h.timestamp"
    ${R_reasoning:+"$h.reasoning=$R_reasoning"} "${LK_ARGS[@]}"
    "$h.started_at=${LK_RUN_STARTED:-$(lk_stamp)}" --now "$h.ended_at" "$h.duration_s:=$LK_DURATION" "$h.exit_status:=$LK_RC"
    ${LK_RUN_OUTPUT:+"$h.output=$LK_RUN_OUTPUT"} ${LK_WHY:+"$h.reason=$LK_WHY"}
    "iteration_completed:=$it" 'consecutive_failures:=0' --delete agent_pid --delete agent_start --delete agent_boot)
  LK_ARGS=() LK_NEXT_STARTED=0
  lk_it_done_args "$it" "$LK_REASON"
  args+=("${LK_ARGS[@]}")
  if [[ -z $LK_REASON && $state != etcd://* && $state != etcds://* ]] && lk_loop_start_args $((it + 1)) "$4"; then
    # a file's write is all or nothing (exit 1: nothing written, the checks
    # failed; the record goes alone below); an etcd write whose outcome is
    # unknown is not: it keeps lk_set_done's guarded retries
    lk_set -q "$state" "${args[@]}" "${LK_START[@]}" || rc=$?
    ((rc != 0 || LK_LOST)) || LK_NEXT_STARTED=1
  else
    rc=1
  fi
  if ((rc != 0)); then
    if declare -F lk_it_guard >/dev/null; then lk_it_guard "$it"; guard=$LK_GUARD; fi
    # fenced; refused by an etcd out of reach, tried again while the lease may live
    lk_set_done "$guard" "$state" "${args[@]}" 'iteration_started:=null'
  fi
  # appended with the next event (the next iteration's start): one program for both
  lk_event_later iteration-done "${LK_IT_EVENT[@]}" "iteration:=$it" "plateau:=$plateau" "${LK_USAGE[@]}" \
    ${R_reasoning:+"reasoning=$R_reasoning"}
}
