#!/usr/bin/env bash
# Random kills of a running loop-engine: bench/kill-loop.sh [BINDIR [ROUNDS
# [SECONDS]]] (default build/bin, 200 rounds, at most 1800 s of rounds; run
# from the project root). Issue 36, section
# 1: an iteration never runs twice at once, on every way out.
#
# Each round waits for an agent to run, then does one of: kill -9 of the
# engine, of agent-run, of the engine's whole process group (kill -9 %1),
# or SIGSTOP then SIGCONT of that group (a frozen job); an engine that
# died is started again at once (systemd's Restart=always). Each agent
# appends "start PID ITERATION" to a log (O_APPEND, no lock) and notes
# "double" when an agent of an earlier start still lives, and "done" when
# it completes; it takes its time to end on SIGTERM, so that a restart that
# does not wait runs beside it; before a kill it is made to linger (it
# then ends only when ended). At the end: double runs (must be 0), orphans
# (a killed run's agent not ended within 30 s, or an agent alive 30 s
# after the last engine ended: must be 0), and the state checked against the log (history 1..N once
# each, every one completed by an agent). Bounded: every wait has a limit,
# the whole run stops itself after ROUNDS rounds. A round where no agent
# ran within 30 s is a stall of the engine (its bug, not the load's): it
# fails the run too, as does an engine that ended by itself. The 200 rounds
# are machine time; tests/kill-loop.bats runs a short version under ctest
# (LOOPKIT_SCRIPTS: the engines' folder, else this checkout's).
set -uo pipefail
bin=$(cd "${1:-build/bin}" && pwd)
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
rounds=${2:-200}
limit=${3:-1800} # seconds: the rounds stop there, and what ran is reported
scripts=${LOOPKIT_SCRIPTS:-$top/scripts}
work=$(mktemp -d "${TMPDIR:-/tmp}/loopkit-kill-loop.XXXXXX")
export PATH="$bin:$PATH" LOOPKIT_BIN=$bin
cd "$work" || exit 4
st=.claude/pipeline-runs/kl/state.json

cat >agent.sh <<'EOF'
#!/usr/bin/env bash
# alive_agent PID START: that process (not a later one with its pid: pids
# wrap on a busy machine), not a zombie (one whose parent died waits)
alive_agent() {
  local f
  read -r -a f < <(awk '{ sub(/^.*\) /, ""); print $1, $20 }' "/proc/$1/stat" 2>/dev/null)
  [[ ${f[0]:-Z} != [ZX] && ${f[1]:-} == "$2" ]]
}
while read -r p s; do
  if alive_agent "$p" "$s"; then echo "double $$ beside $p" >>agents.log; fi
done < <(cat agents.live 2>/dev/null)
read -r -a me < <(awk '{ sub(/^.*\) /, ""); print $20 }' /proc/$$/stat)
echo "$$ ${me[0]}" >>agents.live
echo "start $$ $LOOPKIT_ITERATION" >>agents.log
trap 'sleep 0.3; exit 143' TERM
echo "$$" >agent.pid.tmp && mv agent.pid.tmp agent.pid
sleep "0.$((RANDOM % 4))"
# while ./linger exists (a round about to kill), it only ends if ended
for ((i = 0; i < 600; i++)); do [[ -e linger ]] || break; sleep 0.1; done
echo "done $$ $LOOPKIT_ITERATION" >>agents.log
EOF
chmod +x agent.sh

job=""
start_engine() {
  rm -f agent.pid job.pid
  # a job of its own, as an interactive shell starts one
  perl -e '$SIG{INT} = $SIG{QUIT} = "DEFAULT"; setpgrp(0, 0); open(F, ">job.pid.tmp") or die; print F "$$\n"; close F;
    rename("job.pid.tmp", "job.pid"); exec @ARGV or die' "$scripts/loop-engine" -q --session kl --max-iterations 100000 --kill-after 1 --retries 1000 \
    --retry-delay 0 -- ./agent.sh 2>>engine.log &
  for ((w = 0; w < 300; w++)); do [[ -e job.pid ]] && break; sleep 0.05; done
  job=$(cat job.pid)
}
# wait_agent: until an agent of a round runs (bounded: 30 s); 2 when the
# engine ended by itself meanwhile (reaped: its status in engine_rc)
wait_agent() {
  local w
  for ((w = 0; w < 600; w++)); do
    [[ -e agent.pid ]] && kill -0 "$(cat agent.pid)" 2>/dev/null && return 0
    if ! engine_alive; then
      engine_rc=0
      wait "$job" 2>/dev/null || engine_rc=$?
      return 2
    fi
    sleep 0.05
  done
  return 1
}
# engine_alive: the engine runs (kill -0 is not enough: a process killed a
# moment ago is a zombie until this shell reaps it, and a restart that
# waited for that would wait a whole round)
# agent_gone PID START: that agent has ended (a zombie has)
agent_gone() {
  local f
  f=$(awk '{ sub(/^.*\) /, ""); print $1, $20 }' "/proc/$1/stat" 2>/dev/null)
  [[ -z $f || $f == [ZX]* || ${f#* } != "$2" ]]
}
engine_alive() {
  local stat
  { IFS= read -r stat <"/proc/$job/stat"; } 2>/dev/null || return 1
  stat=${stat##*) }
  [[ ${stat:0:1} != [ZX] ]]
}

declare -A did=()
t0=$SECONDS stalls=0 selfexits=0 engine_rc=0 orphans=0
start_engine
for ((round = 1; round <= rounds && SECONDS - t0 < limit; round++)); do
  rc=0 && wait_agent || rc=$?
  if ((rc == 2)); then
    selfexits=$((selfexits + 1))
    echo "round $round: the engine ended by itself (status $engine_rc); engine.log ends:" >&2
    tail -n 3 engine.log >&2
    start_engine
    continue
  elif ((rc != 0)); then
    stalls=$((stalls + 1))
    echo "round $round: no agent ran within 30 s" >&2
    engine_alive || start_engine
    continue
  fi
  agent=$(cat agent.pid)
  agent_start=$(awk '{ sub(/^.*\) /, ""); print $20 }' "/proc/$agent/stat" 2>/dev/null)
  rm -f agent.pid
  sleep "0.$((RANDOM % 3))"
  kind=$((RANDOM % 4))
  ((kind == 3)) || touch linger
  case $kind in
    0) what=engine; kill -9 "$job" 2>/dev/null ;;
    1) what="agent-run"; kill -9 "$(ps -o ppid= -p "$agent" | tr -d ' ')" 2>/dev/null ;;
    2) what=group; kill -9 -- "-$job" 2>/dev/null ;;
    3) what=stop; kill -STOP -- "-$job" 2>/dev/null; sleep 0.2; kill -CONT -- "-$job" 2>/dev/null ;;
  esac
  did[$what]=$((${did[$what]:-0} + 1))
  # a killed engine reaped at once (SIGKILL: no wait), then restarted
  if [[ $what == engine || $what == group ]]; then wait "$job" 2>/dev/null; fi
  if ! engine_alive; then start_engine; fi
  # the killed engine's agent lingers until ended: it must be gone (bounded)
  if ((kind != 3)); then
    for ((w = 0; w < 300; w++)); do agent_gone "$agent" "$agent_start" && break; sleep 0.1; done
    if ! agent_gone "$agent" "$agent_start"; then
      orphans=$((orphans + 1))
      echo "round $round ($what): agent $agent outlived its engine or agent-run" >&2
      kill -9 "$agent" 2>/dev/null
    fi
    rm -f linger
  fi
done
# the last engine ends as by Ctrl-C; then every agent must be gone
kill -INT "$job" 2>/dev/null
for ((w = 0; w < 200; w++)); do engine_alive || break; sleep 0.05; done
# live_agents: the agents of agents.live still alive (not zombies), one pid a line
live_agents() {
  local p s f
  while read -r p s; do
    f=$(awk '{ sub(/^.*\) /, ""); print $1, $20 }' "/proc/$p/stat" 2>/dev/null)
    if [[ -n $f && $f != [ZX]* && ${f#* } == "$s" ]]; then echo "$p"; fi
  done <agents.live
}
# the grace (--kill-after 1, the agent's 0.3 s), waited for as a condition
# with a generous bound: an agent alive after it is an orphan
for ((w = 0; w < 300; w++)); do [[ -z $(live_agents) ]] && break; sleep 0.1; done
mapfile -t left < <(live_agents)
orphans=$((orphans + ${#left[@]}))
((${#left[@]} == 0)) || kill -9 "${left[@]}" 2>/dev/null
doubles=$(grep -c '^double' agents.log)
starts=$(grep -c '^start' agents.log)
# the state: history iterations 1..N once each, N = iteration_completed,
# each completed by an agent (a "done" of that iteration in the log)
n=$(state-get -d 0 "$st" iteration_completed)
mapfile -t its < <(state-get -q -j -d '' "$st" '.history[].iteration' 2>/dev/null)
exact=yes
((${#its[@]} == n)) || exact="no (history ${#its[@]}, iteration_completed $n)"
for ((i = 0; i < ${#its[@]}; i++)); do
  if [[ ${its[i]} != $((i + 1)) ]] || ! grep -q "^done [0-9]* $((i + 1))\$" agents.log; then
    exact="no (history entry $i is iteration ${its[i]})"
    break
  fi
done
printf 'rounds %d of %d in %d s: kill -9 engine %d, agent-run %d, group %d; stop/cont %d\n' $((round - 1)) "$rounds" \
  $((SECONDS - t0)) "${did[engine]:-0}" "${did[agent-run]:-0}" "${did[group]:-0}" "${did[stop]:-0}"
printf 'agents started %d, iterations completed %d\n' "$starts" "$n"
printf 'stalls (no agent within 30 s) %d, engines that ended by themselves %d\n' "$stalls" "$selfexits"
printf 'double runs %d, orphans %d, state exact: %s\n' "$doubles" "$orphans" "$exact"
if ((doubles == 0 && orphans == 0 && stalls == 0 && selfexits == 0)) && [[ $exact == yes ]]; then
  cd / && rm -rf "$work"
  exit 0
fi
echo "kept for a look: $work" >&2
exit 1
