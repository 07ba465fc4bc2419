# lib-lock.bash: the engines' locks, for lib-engine.bash, which sources it
# from its own folder: taken, beaten by the engine itself, fenced writes,
# and a lost lock noticed at once (contract section 8, "Fencing").
#
# Liveness that means work: the engine takes its lock with
# `lock-acquire --no-keeper` and keeps it alive itself, one
# `lock-heartbeat` every LK_HEARTBEAT seconds (etcd: a third of the lease's
# TTL), also while its agent runs (lk_wait_agent wakes up for it). A
# stopped, hung or killed engine stops beating: its lease runs out after the
# TTL (a lock file's heartbeat ages), and nothing else keeps it alive.
# shellcheck shell=bash disable=SC2034,SC2153 # the LK_* globals are lib-engine.bash's
if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
  echo "lib-lock.bash: sourced by lib-engine.bash; it does nothing on its own" >&2
  exit 2
fi

LK_LOCK=""         # the lock we hold (a file or an etcd key)
LK_HOLD=""         # the hold file of its agents (lk_hold_file, lib-agent.bash)
LK_TTL=""          # --ttl: the etcd lease's TTL in seconds (empty: lock-acquire's 60)
LK_LOST=0          # the lock we held was lost: nothing more is written under it
LK_LOST_EXIT=""    # set: a lost lock ends the engine with this status (loop, pipeline)
LK_BEAT_OK=""      # $EPOCHREALTIME when the last beat that the lock's store confirmed was sent
LK_BEAT_FAILING=0  # the last beat failed (store out of reach): the next is tried within a second
LK_BEAT_EVERY=10   # seconds between beats (lk_beat_every, set when a lock is taken)
LK_ERR=""          # what the last lk_fenced said on stderr
LK_TTL_SAID=0      # lk_check_ttl has spoken

# lk_ttl: the lease's TTL in seconds (etcd)
lk_ttl() { printf '%s' "${LK_TTL:-60}"; }

# lk_beat_every: seconds between beats: a third of the TTL on etcd (a beat
# missed leaves two to go), LK_HEARTBEAT for a lock file.
lk_beat_every() {
  if lk_is_url "$LK_LOCK"; then
    awk -v t="$(lk_ttl)" 'BEGIN { printf "%g", t / 3 }'
  else
    printf '%s' "$LK_HEARTBEAT"
  fi
}

# lk_lock_take LOCK SESSION: acquire LOCK (a file or an etcd key) for this
# shell ($$). Held by a live engine: exit 1.
lk_lock_take() {
  local rc=0
  lk_lock_try "$1" "$2" || rc=$?
  if ((rc == 1)); then
    ((LK_QUIET)) && exit "$LK_HELD_EXIT"
    lk_die "$LK_HELD_EXIT" "session '$2' is held by another engine (see: lock-status $1)"
  fi
}

# lk_unreached RC ERR: a tool's status RC and words ERR say that etcd could
# not be reached, so nothing was sent (not an outcome unknown)
lk_unreached() {
  ((${1} == 4)) && [[ $2 == *"cannot connect to '"* && $2 != *"outcome unknown"* ]]
}

# lk_ride_out T0: after a call that could not reach etcd (lk_unreached),
# 0 after a pause while the outage is to be ridden out, 1 once it is over:
# for a lease's TTL from T0, the $EPOCHREALTIME of the first call that
# failed, and, with a lock of ours on etcd, while its lease may live (the
# beat policy: lk_beat; it may find the lock lost). An outage shorter than
# the lease ends no engine, busy or idle.
lk_ride_out() {
  awk -v t0="$1" -v now="$EPOCHREALTIME" -v ttl="$(lk_ttl)" 'BEGIN { exit !(now - t0 < ttl) }' || return 1
  if [[ -n $LK_LOCK ]] && lk_is_url "$LK_LOCK"; then
    lk_beat -q || return 1
    ((!LK_LOST)) || return 1
  fi
  sleep 0.5
}

# lk_set_words ARGS...: state-set ARGS..., its words (stdout and stderr)
# into LK_ERR, trailing newlines cut. Through a file of the scratch folder
# where there is one, not a $(...): with the engine's traps set bash forks
# twice for one, and this is every write.
lk_set_words() {
  local rc=0
  if [[ -n $LK_SCRATCH && -d $LK_SCRATCH ]]; then
    LK_ERR=""
    state-set "$@" >"$LK_SCRATCH/set.err" 2>&1 || rc=$?
    if [[ -s $LK_SCRATCH/set.err ]]; then
      IFS= read -r -d '' LK_ERR <"$LK_SCRATCH/set.err" || true
      while [[ $LK_ERR == *$'\n' ]]; do LK_ERR=${LK_ERR%$'\n'}; done
    fi
  else
    LK_ERR=$(state-set "$@" 2>&1) || rc=$?
  fi
  return "$rc"
}

# lk_text_of VAR CMD...: VAR=$(CMD...), trailing newlines cut, through a
# file of the scratch folder where there is one (one fork, as lk_set_words:
# under the engines' traps a $(...) forks twice); CMD's status
lk_text_of() {
  local -n lk_text=$1
  local rc=0
  shift
  if [[ -n $LK_SCRATCH && -d $LK_SCRATCH ]]; then
    lk_text=""
    "$@" >"$LK_SCRATCH/text.out" || rc=$?
    IFS= read -r -d '' lk_text <"$LK_SCRATCH/text.out" || true
    while [[ $lk_text == *$'\n' ]]; do lk_text=${lk_text%$'\n'}; done
  else
    lk_text=$("$@") || rc=$?
  fi
  return "$rc"
}

# lk_get_text VAR ARGS...: VAR=$(state-get ARGS...), by lk_text_of
lk_get_text() { lk_text_of "$1" state-get "${@:2}"; }

# lk_read VAR ARGS...: VAR=$(state-get ARGS...), riding out an etcd
# outage: a read of an etcd URL that fails with status 4 (out of reach; a
# read is safe to make again) is made again, quietly, while the outage may
# be ridden out (lk_ride_out), then once more with its words said. The
# tool's status.
lk_read() {
  local -n lk_read_var=$1
  local rc=0 t0=$EPOCHREALTIME a url=0
  shift
  lk_get_text lk_read_var "$@" || rc=$?
  ((rc == 4)) || return "$rc"
  for a in "$@"; do if lk_is_url "$a"; then url=1 && break; fi; done
  ((url)) || return 4
  lk_warn "could not read the state: etcd out of reach; reading again while the outage may be ridden out"
  while lk_ride_out "$t0"; do
    rc=0
    lk_read_var=$(state-get "$@" 2>/dev/null) || rc=$?
    ((rc == 4)) || return "$rc"
  done
  rc=0
  lk_read_var=$(state-get "$@") || rc=$?
  return "$rc"
}

# lk_lines_by FN ARRAY ARGS...: FN TEXT ARGS... (lk_read, lk_text_of), the
# text's lines into ARRAY (none for no text); FN's status
lk_lines_by() {
  local -n lk_lines_array=$2
  local lk_lines_text rc=0
  "$1" lk_lines_text "${@:3}" || rc=$?
  lk_lines_array=()
  [[ -z $lk_lines_text ]] || mapfile -t lk_lines_array <<<"$lk_lines_text"
  return "$rc"
}

# lk_read_lines ARRAY ARGS...: lk_read, its lines into ARRAY
lk_read_lines() { lk_lines_by lk_read "$@"; }

# lk_lock_try LOCK SESSION [-q]: as lk_lock_take, but a lock held by another
# live owner returns 1 (-q: silently). etcd out of reach is ridden out
# (lk_ride_out); any other failure ends the engine.
lk_lock_try() {
  local rc=0 opts=(--pid $$ --session "$2") err t0=$EPOCHREALTIME
  if ((LK_QUIET)) || [[ ${3:-} == -q ]]; then opts+=(-q); fi
  # no keeper: the engine's own beats are what keeps the lease
  if lk_is_url "$1"; then opts+=(--no-keeper ${LK_TTL:+--ttl "$LK_TTL"}); fi
  while :; do
    rc=0
    err=$(lock-acquire "${opts[@]}" "$1" 2>&1) || rc=$?
    if ! { lk_unreached "$rc" "$err" && lk_ride_out "$t0"; }; then break; fi
  done
  [[ -z $err ]] || printf '%s\n' "$err" >&2
  ((rc == 1)) && return 1
  ((rc == 0)) || lk_die "$rc" "cannot acquire the lock $1"
  LK_LOCK=$1 LK_LOST=0 LK_BEAT_OK=$EPOCHREALTIME
  lk_hold_file "$1"
  LK_BEAT_EVERY=$(lk_beat_every)
  lk_is_url "$1" && lk_check_ttl
  return 0
}

# lk_check_ttl: said once: the agent of an engine killed with -9 gets
# SIGKILL --kill-after seconds after its SIGTERM, and another host may take
# the lock two thirds of the TTL after the last beat: the agent must be gone
# by then.
lk_check_ttl() {
  ((!LK_TTL_SAID)) || return 0
  LK_TTL_SAID=1
  if awk -v k="$LK_KILL_AFTER" -v t="$(lk_ttl)" 'BEGIN { exit !(k >= t * 2 / 3) }'; then
    lk_warn "--kill-after $LK_KILL_AFTER is not below two thirds of --ttl $(lk_ttl): the agent of an engine killed with -9 may outlive its lock"
  fi
}

# lk_beat [-q]: the engine's proof that it works: refresh the lock now (a lock
# file's heartbeat, an etcd lease's keep-alive). 1 when the lock is lost
# (lk_lock_lost said so). etcd out of reach is a warning while the beat
# policy allows (lock-heartbeat --confirmed-at: core/lock/lock.hpp, the one
# rule): until the lease may run out, counted from the last beat etcd
# confirmed, less the --kill-after the agent may take to end and a second
# (at most a third of the TTL);
# each beat's own timeout is cut to what is left, so that the agent is
# gone before another host can take the lock. -q: an out-of-reach beat
# is not said.
lk_beat() {
  [[ -n $LK_LOCK ]] || return 0
  local rc=0 err sent=$EPOCHREALTIME policy=()
  if lk_is_url "$LK_LOCK"; then
    # the margin: --kill-after and a second, at most a third of the TTL
    # (a --kill-after that long is warned about: lk_check_ttl)
    policy=(--ttl "$(lk_ttl)" --confirmed-at "$LK_BEAT_OK"
      --margin "$(awk -v k="$LK_KILL_AFTER" -v t="$(lk_ttl)" 'BEGIN { m = k + 1; if (m > t / 3) m = t / 3; print m }')")
  fi
  # not -q: a "no" says why (a budget spent, or someone else's lock), read below
  err=$(lock-heartbeat --pid $$ "${policy[@]}" "$LK_LOCK" 2>&1) || rc=$?
  case $rc in
    0) LK_BEAT_OK=$sent LK_BEAT_FAILING=0; return 0 ;;
    1)
      if [[ $err == *"no beat confirmed"* ]]; then
        lk_lock_lost "etcd out of reach until its lease may run out: ${err#lock-heartbeat: }"
      else
        lk_lock_lost "removed or taken over by someone else"
      fi
      return 1
      ;;
  esac
  LK_BEAT_FAILING=1
  [[ ${1:-} == -q ]] || lk_warn "could not refresh the lock $LK_LOCK: ${err#lock-heartbeat: }"
}

# lk_lock_check: between iterations and items: beat now; a lost lock ends
# the engine (LK_LOST_EXIT) or sets LK_LOST.
lk_lock_check() {
  ((LK_LOST)) || lk_beat || true
}

# lk_lock_lost WHY: the lock is not ours any more. The agent's process group
# is ended, the event lock-lost logged, and nothing more is written under the
# lock (lk_set refuses); with LK_LOST_EXIT the engine ends with that status.
lk_lock_lost() {
  ((!LK_LOST)) || return 0
  local lock=$LK_LOCK what="nothing more is recorded"
  LK_LOST=1 LK_LOCK=""
  if [[ -n $LK_AGENT_PID ]]; then
    what="the agent was ended and $what"
    lk_stop_agent TERM
  fi
  lk_event lock-lost "lock=$lock" "reason=$1"
  if [[ -n $LK_LOST_EXIT && -z $LK_SIGNAL ]]; then
    lk_die "$LK_LOST_EXIT" "lost the lock $lock ($1): $what (run again to resume)"
  fi
  lk_say "lost the lock $lock ($1): $what"
}

# lk_sleep SECONDS: sleep, beating the lock meanwhile (a long back-off
# must not look like a dead engine).
lk_sleep() {
  local left=$1 step
  lk_event_flush # not held back while waiting
  while awk -v l="$left" 'BEGIN { exit !(l > 0) }'; do
    step=$left
    if [[ -n $LK_LOCK ]]; then
      step=$(awk -v l="$left" -v e="$LK_BEAT_EVERY" 'BEGIN { printf "%g", l < e ? l : e }')
    fi
    sleep "$step"
    left=$(awk -v l="$left" -v s="$step" 'BEGIN { printf "%g", l - s }')
    lk_beat || return 0
  done
}

# lk_beat_due: a beat is due: LK_BEAT_EVERY has passed since the last beat
# that reached the lock, or the last one failed (tried again every second)
lk_beat_due() {
  ((!LK_BEAT_FAILING)) || return 0
  local last every
  lk_us "$LK_BEAT_OK" && last=$LK_US && lk_us "$LK_BEAT_EVERY" && every=$LK_US && lk_us "$EPOCHREALTIME" || return 0
  ((LK_US - last >= every))
}

# The beat timer (lk_timer) that wakes lk_wait_agent when a beat is due: it
# outlives the agent run it was started for, so that runs shorter than a
# beat share it (a fork per beat, not per run). Its pid; ended on exit. It
# lasts a second at most: bash's wait -n can miss a child that ends between
# its look at the jobs and its wait (the SIGCHLD handler reaps it in
# between), and then waits for the next one to end, the timer: an agent's
# end is seen a second late at worst, never a beat (or an hour) late.
LK_TIMER_PID=""

# lk_beat_timer: the timer running, armed for when the next beat is due (a
# second while beats fail); a beat due now is made first. 1 when that beat
# found the lock lost.
lk_beat_timer() {
  [[ -z $LK_TIMER_PID ]] || return 0
  local left=1000
  if lk_beat_due; then lk_beat || return 1; fi
  if ((!LK_BEAT_FAILING)); then
    if lk_us "$LK_BEAT_OK" && left=$LK_US && lk_us "$LK_BEAT_EVERY" && left=$((left + LK_US)) && lk_us "$EPOCHREALTIME"; then
      left=$(((left - LK_US) / 1000))
      ((left > 0)) || left=1
      ((left < 1000)) || left=1000
    else
      left=1000 # a form lk_us does not read: a look every second
    fi
  fi
  lk_timer "$((left / 1000)).$(printf '%03d' $((left % 1000)))" # no program: see lk_timer
  LK_TIMER_PID=$!
}

# lk_timer_end: the beat timer ended (the engine's exit)
lk_timer_end() {
  [[ -n $LK_TIMER_PID ]] || return 0
  kill -KILL "$LK_TIMER_PID" 2>/dev/null || true
  wait "$LK_TIMER_PID" 2>/dev/null || true
  LK_TIMER_PID=""
}

# lk_wait_agent: wait for the agent (LK_AGENT_PID), woken by the beat timer
# to beat the lock when a beat is due; its status in LK_RC. A lost lock ends
# the agent's group (lk_lock_lost) and LK_RC is 143.
lk_wait_agent() {
  local got
  if [[ -z $LK_AGENT_PID ]]; then LK_RC=143; return 0; fi # ended already: the lock was lost
  while :; do
    if [[ -n $LK_LOCK && -z $LK_TIMER_PID ]] && ! lk_beat_timer; then
      LK_RC=143
      return 0
    fi
    LK_RC=0 got=""
    wait -n -p got "$LK_AGENT_PID" ${LK_TIMER_PID:+"$LK_TIMER_PID"} || LK_RC=$?
    # the timer ended: a beat may be due (a trapped signal, WINCH, ends the wait early too)
    if [[ -n $LK_TIMER_PID && $got == "$LK_TIMER_PID" ]]; then
      LK_TIMER_PID=""
      if [[ -n $LK_LOCK ]] && lk_beat_due && ! lk_beat; then
        LK_RC=143
        return 0
      fi
      continue
    fi
    if [[ $got != "$LK_AGENT_PID" ]]; then
      if kill -0 "$LK_AGENT_PID" 2>/dev/null; then continue; fi
      LK_RC=0
      wait "$LK_AGENT_PID" 2>/dev/null || LK_RC=$?
    fi
    return 0
  done
}

lk_lock_drop() {
  if [[ -n $LK_LOCK ]]; then
    # the agents' hold file goes with the lock (nothing left behind), unless
    # a holder still lives (a process that left the agent's group): the next
    # engine of the lock waits for that one
    if [[ -n $LK_HOLD && -e $LK_HOLD ]] && ! agent-run -q --alive "$LK_HOLD"; then rm -f -- "$LK_HOLD"; fi
    lock-release --pid $$ -q "$LK_LOCK" || true
    LK_LOCK=""
  fi
}

# --- fenced writes --------------------------------------------------------------

# lk_fence_store STATE LOCK: the engines fence their state writes with a
# lock (state-set --fence), which only a lock in the state's own store can
# do (a file's lock file, an etcd key's lock key): else a usage error.
lk_fence_store() {
  local a=0 b=0
  if lk_is_url "$1"; then a=1; fi
  if lk_is_url "$2"; then b=1; fi
  ((a == b)) || lk_usage_error "--state and --locks must both be files or both etcd URLs (state writes are fenced by the lock: state-set --fence)"
}

# lk_fenced [-q] STATE ARGS...: state-set, fenced by the lock held
# (written only while LK_LOCK is still ours, checked with the write); the
# tool's status, its words in LK_ERR (said on stderr unless a -q "no"). A
# write that could not reach etcd is made again while the outage may be
# ridden out (lk_ride_out).
# A lost lock: 1 and LK_LOST set by lk_lock_lost, nothing written.
lk_fenced() {
  local rc=0 quiet=0 t0=$EPOCHREALTIME
  if [[ $1 == -q ]]; then quiet=1; shift; fi
  LK_ERR=""
  if ((LK_LOST)); then return 1; fi
  lk_set_words ${LK_LOCK:+--fence "$LK_LOCK" --pid "$$"} "$@" || rc=$?
  ((rc != 0)) || [[ -n $LK_ERR ]] || return 0
  lk_fenced_after "$rc" "$quiet" "$t0" "$@"
}

# lk_fenced_after RC QUIET T0 STATE ARGS...: lk_fenced after a write that
# failed or said something (a function of its own: bash copies a
# function's whole body at each call, and lk_fenced is every write)
lk_fenced_after() {
  local rc=$1 quiet=$2 t0=$3
  shift 3
  local -a fence=()
  [[ -z $LK_LOCK ]] || fence=(--fence "$LK_LOCK" --pid "$$")
  while :; do
    if ((rc == 1)) && [[ -n $LK_LOCK && $LK_ERR == *": lock lost"* ]]; then
      lk_lock_lost "a state write found it gone"
      return 1
    fi
    # etcd out of reach, the write not sent: sent again while the outage
    # may be ridden out (lk_ride_out)
    if ! { lk_unreached "$rc" "$LK_ERR" && lk_ride_out "$t0"; }; then break; fi
    rc=0
    lk_set_words "${fence[@]}" "$@" || rc=$?
  done
  ((!LK_LOST)) || return 1
  if [[ -n $LK_ERR ]] && ((!quiet || rc != 1)); then printf '%s\n' "$LK_ERR" >&2; fi
  return "$rc"
}

# lk_set [-q] STATE ARGS...: lk_fenced for the engines' writes: 0 when
# written, 1 for a "no" (--expect, --no-create), 0 also when the lock was
# lost (LK_LOST says so: nothing was written); any other failure ends the
# engine with the tool's status.
lk_set() {
  local rc=0
  if lk_fenced "$@"; then return 0; else rc=$?; fi
  ((rc != 1 || !LK_LOST)) || return 0
  ((rc <= 1)) || [[ -n $LK_SIGNAL ]] || exit "$rc"
  return "$rc"
}

# lk_set_outlasting GUARD WHAT STATE ARGS...: lk_set for a write that an
# etcd outage shorter than the lock's lease must not end the engine for.
# Refused for an unreachable etcd (status 4: out of reach, or the outcome
# unknown), it is tried again until the lock's lease may have run out; then
# the engine gives up, exit 4, saying that WHAT is not recorded. GUARD, an
# --expect assignment that holds only before this write, guards each retry
# so that a write that did commit is not applied twice; "" for a write that
# is the same applied twice. Never written unfenced.
lk_set_outlasting() {
  local guard=$1 what=$2 rc tries=0 keep
  shift 2
  while :; do
    rc=0
    if ((tries > 0)) && [[ -n $guard ]]; then lk_fenced -q --expect "$guard" "$@" || rc=$?; else lk_fenced "$@" || rc=$?; fi
    ((rc != 0)) || return 0
    ((!LK_LOST)) || return 0
    # a retry's guard no longer holds: the write that failed had committed
    if ((rc == 1 && tries > 0)) && [[ -n $guard ]]; then return 0; fi
    ((rc == 4)) && { lk_is_url "$1" || lk_is_url "$LK_LOCK"; } || exit "$rc"
    keep=$LK_LOST_EXIT
    LK_LOST_EXIT=""
    if ! lk_beat -q; then # the beat policy: the lease may run out
      lk_die 4 "gave up recording $what in $1 after $tries tries: etcd was out of reach until the lock's lease may have run out; not recorded, it will run again"
    fi
    LK_LOST_EXIT=$keep
    ((tries > 0)) || lk_warn "could not record $what in $1; trying again while the lock's lease may live"
    tries=$((tries + 1))
    sleep 0.5
  done
}

# lk_set_done GUARD STATE ARGS...: the write that records a finished item
# or iteration, outlasting an etcd outage (lk_set_outlasting)
lk_set_done() { lk_set_outlasting "$1" "the finished work" "${@:2}"; }
