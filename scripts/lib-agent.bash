# lib-agent.bash: running the agent, for lib-engine.bash, which sources it
# from its own folder (a source checkout, or the install's libexec/loopkit):
# supervised by agent-run, timed, retried, recorded, never twice at once.
# shellcheck shell=bash disable=SC2034,SC2153 # the LK_* globals are lib-engine.bash's
if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
  echo "lib-agent.bash: sourced by lib-engine.bash; it does nothing on its own" >&2
  exit 2
fi

# --- the terminal, the agent's while it runs -------------------------------

# lk_terminal: a status line only on a terminal that can take one.
lk_terminal() {
  LK_TTY=0 LK_COLOR=0
  [[ -t 2 && ${TERM:-dumb} != dumb ]] && ((!LK_NO_STATUS)) || return 0
  LK_TTY=1
  [[ -n ${NO_COLOR:-} ]] || LK_COLOR=1
  trap 'lk_resized' WINCH
}

lk_resized() {
  LK_WINCH=$((LK_WINCH + 1))
  ((LK_IN_DRAW || !LK_LINE_SHOWN)) || lk_draw
}

# lk_line_start: after the agent ran, make sure the cursor is at the start of
# a line of its own, so that the status line never covers a partial line the
# agent left: the terminal is asked where its cursor is (DSR); no answer
# counts as "somewhere in a line".
lk_line_start() {
  local reply="" col=0
  if { exec {tty}<>/dev/tty; } 2>/dev/null; then
    local saved
    saved=$(stty -g <&"$tty" 2>/dev/null) || saved=""
    stty -icanon -echo min 0 time 3 <&"$tty" 2>/dev/null || true
    printf '\033[6n' >&"$tty"
    IFS= read -r -s -d R -t 1 -u "$tty" reply || true
    [[ -z $saved ]] || stty "$saved" <&"$tty" 2>/dev/null || true
    exec {tty}<&-
  fi
  [[ $reply =~ \[[0-9]+\;([0-9]+)$ ]] && col=${BASH_REMATCH[1]}
  ((col == 1)) || printf '\n' >&2
}

# --- running the agent ------------------------------------------------------

# lk_proc_start PID: the process's start time (field 22 of /proc/PID/stat,
# Linux), empty elsewhere; with the pid it names one process for good.
lk_proc_start() {
  local stat rest
  { IFS= read -r stat </proc/"$1"/stat; } 2>/dev/null || return 0
  rest=${stat##*) }
  read -r -a stat <<<"$rest"
  printf '%s' "${stat[19]:-}"
}

# lk_proc_lives PID START: PID is the process that started at START (field
# 22 of /proc/PID/stat) and has not exited (a zombie has).
lk_proc_lives() {
  local stat rest
  { IFS= read -r stat </proc/"$1"/stat; } 2>/dev/null || return 1
  rest=${stat##*) }
  read -r -a stat <<<"$rest"
  [[ ${stat[0]} != [ZX] && ${stat[19]:-} == "$2" ]]
}

# lk_proc_stuck PID START: that process lives but cannot act: stopped
# (SIGSTOP: state T, or t under a tracer) or in a frozen cgroup (v2's
# cgroup.events says "frozen 1"; Linux).
lk_proc_stuck() {
  local stat rest line path mnt _ fs
  { IFS= read -r stat </proc/"$1"/stat; } 2>/dev/null || return 1
  rest=${stat##*) }
  read -r -a stat <<<"$rest"
  [[ ${stat[19]:-} == "$2" ]] || return 1
  [[ ${stat[0]} != [Tt] ]] || return 0
  path=""
  while IFS= read -r line; do [[ $line != 0::* ]] || path=${line#0::}; done </proc/"$1"/cgroup 2>/dev/null
  [[ -n $path ]] || return 1
  while read -r _ mnt fs _; do
    [[ $fs == cgroup2 ]] || continue
    grep -qx 'frozen 1' "$mnt${path%/}/cgroup.events" 2>/dev/null && return 0
  done </proc/mounts
  return 1
}

# This boot of this machine (Linux; empty elsewhere), recorded with the
# agent's pid as LK_BOOT_JSON: a pid means nothing on another machine (a
# state on etcd) or after a reboot.
LK_BOOT_ID=""
{ IFS= read -r LK_BOOT_ID </proc/sys/kernel/random/boot_id; } 2>/dev/null || LK_BOOT_ID=""
[[ $LK_BOOT_ID =~ ^[0-9a-f-]+$ ]] || LK_BOOT_ID=""
LK_BOOT_JSON=null
[[ -z $LK_BOOT_ID ]] || LK_BOOT_JSON="\"$LK_BOOT_ID\""

# lk_hold_file LOCK: sets LK_HOLD, the hold file (agent-run --hold) of the
# agents run under LOCK: a lock file's LOCK.agent beside it; an etcd key's
# in a folder of this user's on this host (a hold is the host's: another
# host's agent is fenced by the lease, and ended before it can run out).
lk_hold_file() {
  if ! lk_is_url "$1"; then
    LK_HOLD=$1.agent
    return 0
  fi
  local dir=${XDG_RUNTIME_DIR:-${TMPDIR:-/tmp}}/loopkit-agents-$EUID name
  [[ -d $dir ]] || mkdir -m 700 "$dir" 2>/dev/null || true
  [[ -d $dir && -O $dir && ! -L $dir ]] || lk_die 4 "cannot use '$dir' for the agents' hold files: not a folder of this user's"
  name=$(lk_safe_name "$1")
  ((${#name} <= 200)) || name=${name:0:150}-$(cksum <<<"$1" | tr ' ' -)
  LK_HOLD=$dir/$name
}

# lk_stale_step TARGET PGID WHAT: one turn of the wait for a previous agent
# of WHAT that still lives (TARGET: a hold file, or PGID[:START], as
# agent-run --end takes it): ended with --kill-stale-agent, else said once
# (LK_STALE_SAID, the caller's) and waited for one poll. 1 when the lock was
# lost meanwhile.
lk_stale_step() {
  if ((LK_KILL_STALE)); then
    lk_event stale-agent "pgid:=${2:-0}" action=kill
    lk_warn "ending the previous agent of $3 (process group ${2:-unknown}): --kill-stale-agent"
    agent-run -q --kill-after "$LK_KILL_AFTER" --end "$1" || true
    return 0
  fi
  if ((!LK_STALE_SAID)); then
    LK_STALE_SAID=1
    lk_event stale-agent "pgid:=${2:-0}" action=wait
    lk_say "waiting for the previous agent of $3 (process group ${2:-unknown}) to end (--kill-stale-agent ends it)"
  fi
  lk_lock_check
  ((!LK_LOST)) || return 1
  lk_sleep "$LK_POLL"
}

# lk_stale_holder WHAT: the kernel's answer to "an agent of WHAT still
# runs on this host": a holder of LK_HOLD, which agent-run takes before the
# agent starts and the agent's processes hold while any of them lives (no
# window between its start and any record). Its engine still alive means
# that engine lost the lock we now hold (its lease ran out while it was
# stopped): its agent is ended at once. So is one whose engine is gone but
# whose supervisor (agent-run: the group's id is its pid) is stopped or
# frozen: agent-run ends its agent when its engine dies, but a stopped one
# never does, and its run would hold the item for as long as it stays
# stopped. Else it is waited for (agent-run is ending it), or ended with
# --kill-stale-agent.
lk_stale_holder() {
  local hold=$LK_HOLD rec=() engine LK_STALE_SAID=0
  [[ -n $hold ]] || return 0
  # no file, no holder: a first run starts no program to learn it
  while [[ -e $hold ]] && agent-run -q --alive "$hold"; do
    rec=()
    { read -r -a rec <"$hold"; } 2>/dev/null || true
    engine=${rec[2]:-}
    if [[ $engine =~ ^[0-9]+$ && $engine != "$$" && ${rec[3]:-0} != 0 ]] && lk_proc_lives "$engine" "${rec[3]}"; then
      lk_event stale-agent "pgid:=${rec[0]}" action=lost
      lk_warn "ending the agent of $1 (process group ${rec[0]}) whose engine (pid $engine) lost the lock"
      agent-run -q --kill-after "$LK_KILL_AFTER" --end "$hold" || true
      continue
    fi
    if [[ ${rec[0]:-} =~ ^[0-9]+$ && ${rec[1]:-0} != 0 ]] && lk_proc_stuck "${rec[0]}" "${rec[1]}"; then
      lk_event stale-agent "pgid:=${rec[0]}" action=stuck
      lk_warn "ending the agent of $1 (process group ${rec[0]}) whose engine is gone and whose agent-run is stopped or frozen: it would never end by itself"
      agent-run -q --kill-after "$LK_KILL_AFTER" --end "$hold" || true
      continue
    fi
    lk_stale_step "$hold" "${rec[0]:-}" "$1" || return 0
  done
}

# lk_stale_agent STATE PREFIX WHAT: a live holder of the hold first
# (lk_stale_holder), then an agent recorded by an earlier engine in
# STATE's PREFIXagent_pid, agent_start and agent_boot (read in one call; no
# pid: none). Alive, it is waited for, or ended with
# --kill-stale-agent, before WHAT runs again: never two agents at once. One
# recorded on another boot (another machine, or before a reboot) is no
# process of this one: a local process of that pid is somebody else's, never
# waited for nor ended (another machine's engine ends its agent when it
# loses the lock, and its writes are fenced).
lk_stale_agent() {
  lk_stale_holder "$3"
  ((!LK_LOST)) || return 0
  local -a rec=()
  mapfile -t rec < <(state-get -q -d '' "$1" "$2agent_pid" "$2agent_start" "$2agent_boot" 2>/dev/null || true)
  local pgid=${rec[0]:-} start=${rec[1]:-} boot=${rec[2]:-} what=$3 LK_STALE_SAID=0
  [[ $pgid =~ ^[0-9]+$ ]] || return 0
  [[ $start =~ ^[0-9]+$ ]] || start=""
  if [[ -n $boot && $boot != null && $boot != "$LK_BOOT_ID" ]]; then
    lk_event stale-agent "pgid:=$pgid" action=elsewhere
    lk_say "the previous agent of $what (process group $pgid) ran on another machine or before a reboot: not waited for"
    return 0
  fi
  while agent-run -q --alive "$pgid${start:+:$start}"; do
    lk_stale_step "$pgid${start:+:$start}" "$pgid" "$what" || return 0
  done
}

# shellcheck disable=SC2034 # LK_RC is read by the engines
# lk_run_agent CMD...: run the agent under agent-run (its own process group,
# ended with the engine on every way out, kill -9 included; the
# --iteration-timeout), with the engine's own stdin (stdout appended to
# $LK_AGENT_OUT when set), and wait for it; its status in LK_RC, its time in
# LK_DURATION, why it failed in LK_WHY. The hold records the agent (no
# hook: the engines write nothing between its start and its end).
# The terminal is the agent's meanwhile: no status line is drawn.
# Every iteration runs this: the common case is kept to few commands (bash
# copies a function's body at each call and runs a command in about 5 us).
lk_run_agent() {
  LK_RC=0 LK_TIMED_OUT=0 LK_RUN_OUTPUT=""
  local -a sup=(agent-run --kill-after "$LK_KILL_AFTER" ${LK_HOLD:+--hold "$LK_HOLD"})
  [[ $LK_TIMEOUT == 0 ]] || sup+=(--timeout "$LK_TIMEOUT")
  if [[ -n $LK_OUT_DIR ]]; then
    lk_output_next
    sup+=(--output "$LK_RUN_OUTPUT" ${LOOPKIT_OUTPUT_LIMIT:+--output-limit "$LOOPKIT_OUTPUT_LIMIT"})
  fi
  # the status line stays, as the heading of the output that follows
  if ((LK_LINE_SHOWN)); then printf '\n' >&2; LK_LINE_SHOWN=0; fi
  LK_AGENT_RUNNING=1
  lk_stamp_v # no subshell per run
  LK_RUN_STARTED=$LK_STAMP
  local t0=$EPOCHREALTIME
  if [[ -n ${LK_AGENT_OUT:-} ]]; then
    "${sup[@]}" -- "$@" <&"$LK_STDIN" {LK_STDIN}<&- >>"$LK_AGENT_OUT" &
  else
    "${sup[@]}" -- "$@" <&"$LK_STDIN" {LK_STDIN}<&- &
  fi
  LK_AGENT_PID=$!
  # beating the lock meanwhile; a lost lock ends the agent
  lk_wait_agent
  lk_secs_since "$t0" # bash arithmetic: no program per run
  LK_DURATION=$LK_SECS LK_AGENT_PID="" LK_AGENT_RUNNING=0 LK_WHY=""
  [[ $LK_TIMEOUT == 0 || $LK_RC != 124 ]] || LK_TIMED_OUT=1
  if ((LK_RC || LK_LOST || LK_TIMED_OUT)) || [[ -n $LK_SIGNAL ]]; then lk_run_why; fi
  ((!LK_TTY)) || lk_line_start
}

# The agents' output logs: LK_OUT_DIR (the session's logs/ folder; empty:
# none) and LK_OUT_BASE ("iteration-3", "plan-iteration-3", "item-bd-1"),
# set by the engine before each iteration or item.
LK_OUT_DIR="" LK_OUT_BASE="" LK_RUN_OUTPUT="" LK_WHY=""

# lk_output_next: LK_RUN_OUTPUT, the log of the run about to start:
# LK_OUT_DIR/LK_OUT_BASE-attempt-N.log, N the first attempt with no log yet
# (a retry, a rerun after a crash: each run keeps its own). Builtins only.
lk_output_next() {
  local n=1
  [[ -d $LK_OUT_DIR ]] || mkdir -p -- "$LK_OUT_DIR" 2>/dev/null || true
  while [[ -e $LK_OUT_DIR/$LK_OUT_BASE-attempt-$n.log || -L $LK_OUT_DIR/$LK_OUT_BASE-attempt-$n.log ]]; do
    n=$((n + 1))
  done
  LK_RUN_OUTPUT=$LK_OUT_DIR/$LK_OUT_BASE-attempt-$n.log
}

# lk_run_why: why the last run failed, in words, into LK_WHY (empty: it did
# not): "lock lost", "interrupted", "timed out after 300 s", "killed by
# SIGKILL", "exit 7".
lk_run_why() {
  LK_WHY=""
  if ((LK_LOST)); then
    LK_WHY="lock lost"
  elif [[ -n $LK_SIGNAL ]]; then
    LK_WHY=interrupted
  elif ((LK_TIMED_OUT)); then
    LK_WHY="timed out after $LK_TIMEOUT s"
  elif ((LK_RC > 128 && LK_RC < 128 + 65)); then
    LK_WHY="killed by SIG$(kill -l $((LK_RC - 128)) 2>/dev/null || echo $((LK_RC - 128)))"
  elif ((LK_RC != 0)); then
    LK_WHY="exit $LK_RC"
  fi
}

# lk_backoff TRY: the wait before retry TRY (1, 2, ...): --retry-delay
# doubled each time.
lk_backoff() { awk -v d="$LK_RETRY_DELAY" -v n="$1" 'BEGIN { printf "%g", d * 2 ^ (n - 1) }'; }

# lk_run_retrying CMD...: lk_run_agent, run again after a failure up to
# LK_RETRIES times with an exponential back-off (LK_RETRY_DELAY, doubled each
# time). Counts consecutive failures in LK_FAILS (a success resets it) and
# sets LK_BROKEN when they reach LK_MAX_FAILURES. Status in LK_RC.
lk_run_retrying() {
  LK_BROKEN=0
  lk_run_agent "$@"
  ((!LK_LOST)) || return 0 # ended: not a failure of the agent's
  if ((LK_RC == 0)); then
    LK_FAILS=0
    return 0
  fi
  lk_run_retried "$@"
}

# lk_run_retried CMD...: lk_run_retrying once a run failed: counted, then
# run again while the retries and the circuit breaker allow
lk_run_retried() {
  local try=0 delay
  while :; do
    LK_FAILS=$((LK_FAILS + 1))
    lk_event agent-failed "status:=$LK_RC" "attempt:=$((try + 1))" "consecutive:=$LK_FAILS" \
      "timed_out:=$((LK_TIMED_OUT ? 1 : 0))" "iteration:=${LOOPKIT_ITERATION:-0}" "duration_s:=$LK_DURATION" \
      "started_at=$LK_RUN_STARTED" "reason=$LK_WHY" ${LK_RUN_OUTPUT:+"output=$LK_RUN_OUTPUT"}
    if ((LK_MAX_FAILURES > 0 && LK_FAILS >= LK_MAX_FAILURES)); then
      LK_BROKEN=1
      return 0
    fi
    ((try < LK_RETRIES)) || return 0
    try=$((try + 1))
    delay=$(lk_backoff "$try")
    lk_event retry "attempt:=$((try + 1))" "delay:=$delay"
    lk_log "the agent exited with status $LK_RC; retry $try of $LK_RETRIES in ${delay}s"
    lk_sleep "$delay"
    ((!LK_LOST)) || return 0
    lk_run_agent "$@"
    ((!LK_LOST)) || return 0
    if ((LK_RC == 0)); then
      LK_FAILS=0
      return 0
    fi
  done
}

# lk_run_args PREFIX: state-set assignments recording the last agent run in
# the history entry PREFIX (started_at, ended_at, duration_s, exit_status;
# output, its log, and reason, why it failed, when there are),
# appended to LK_ARGS.
lk_run_args() {
  LK_ARGS+=("$1.started_at=${LK_RUN_STARTED:-$(lk_stamp)}" --now "$1.ended_at"
    "$1.duration_s:=$LK_DURATION" "$1.exit_status:=$LK_RC")
  [[ -z $LK_RUN_OUTPUT ]] || LK_ARGS+=("$1.output=$LK_RUN_OUTPUT")
  [[ -z $LK_WHY ]] || LK_ARGS+=("$1.reason=$LK_WHY")
}

# lk_cost_reached STATE: total_cost has reached --max-cost.
lk_cost_reached() {
  [[ -n $LK_MAX_COST ]] || return 1
  local total
  total=$(state-get -q -d 0 "$1" total_cost 2>/dev/null) || total=0
  awk -v t="$total" -v m="$LK_MAX_COST" 'BEGIN { exit !(t + 0 >= m + 0) }'
}

# lk_stop_agent [SIGNAL]: pass the signal (default TERM) on to the agent's
# supervisor, which passes it to the whole group and sends SIGKILL after
# --kill-after; the group is waited for.
lk_stop_agent() {
  local sig=${1:-TERM} i pgid=$LK_AGENT_PID
  [[ -n $pgid ]] || return 0
  kill -"$sig" "$pgid" 2>/dev/null || true
  local limit
  limit=$(awk -v k="$LK_KILL_AFTER" 'BEGIN { printf "%d", (k + 5) * 10 }')
  for ((i = 0; i < limit; i++)); do
    kill -0 "$pgid" 2>/dev/null || break
    sleep 0.1
  done
  kill -KILL -- "-$pgid" 2>/dev/null || true
  kill -KILL "$pgid" 2>/dev/null || true
  wait "$pgid" 2>/dev/null || true
  LK_AGENT_PID=""
  LK_AGENT_RUNNING=0
}

