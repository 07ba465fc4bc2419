#!/usr/bin/env bats
# The short version of bench/kill-loop.sh (issue 36, section 1): random
# kill -9 of loop-engine, of agent-run, of the engine's whole process group,
# and SIGSTOP/SIGCONT of that group, each followed by a restart at once.
# Every round is bounded (an agent within 30 s, a killed run's agent ended
# within 30 s), and so is the whole (its rounds stop after 150 s).
load helpers

@test "12 rounds of random kills and restarts: no double run, no orphan, no stall, the state exact" {
  command -v perl >/dev/null || skip "perl is not installed (the bench starts each engine as a job of its own)"
  run -0 --separate-stderr "$LOOPKIT_SOURCE/bench/kill-loop.sh" "$LOOPKIT_BIN" 12 150
  echo "$output" >&2
  [[ $output == *$'\nstalls (no agent within 30 s) 0, engines that ended by themselves 0\n'* ]]
  [[ $output == *$'\ndouble runs 0, orphans 0, state exact: yes' ]]
}
