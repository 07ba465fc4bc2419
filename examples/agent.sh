#!/usr/bin/env bash
# examples/agent.sh: a tiny agent for loop-engine (scripts/demo runs it).
#
# Its task: write fizzbuzz.txt, FizzBuzz from 1 to 15, five lines per
# iteration, as a fresh agent would: it learns where it is from the files
# alone (the output so far and the progress file), never from memory. Each
# iteration adds an entry to the progress file with progress-append. Once the
# task is done it checks the result and votes "plateau"; two such votes in a
# row and loop-engine ends the session (completion_reason "plateau"). If the
# file is found broken, it reports "stop" instead.
#
# Environment (set by loop-engine): LOOPKIT_SESSION, LOOPKIT_ITERATION,
# LOOPKIT_STATE, LOOPKIT_PROGRESS, LOOPKIT_RESULT. DEMO_DELAY (seconds,
# default 1) slows it down so that the demo can be watched.
set -euo pipefail

out=fizzbuzz.txt
total=15
step=5

fizzbuzz() {
  local n=$1
  if ((n % 15 == 0)); then echo FizzBuzz
  elif ((n % 3 == 0)); then echo Fizz
  elif ((n % 5 == 0)); then echo Buzz
  else echo "$n"; fi
}

sleep "${DEMO_DELAY:-1}"

# What a fresh agent knows: the last learning in the progress file.
if [[ -f $LOOPKIT_PROGRESS ]]; then
  last=$(progress-show --last 1 "$LOOPKIT_PROGRESS" | grep -m 1 '^- Learning:' || true)
  [[ -z $last ]] || echo "agent: iteration $LOOPKIT_ITERATION starts from: ${last#- Learning: }" >&2
fi

done_lines=0
[[ -f $out ]] && done_lines=$(wc -l <"$out")

if ((done_lines >= total)); then
  # Nothing left to write: check the work, then vote.
  for ((n = 1; n <= total; n++)); do
    if [[ $(sed -n "${n}p" "$out") != "$(fizzbuzz "$n")" ]]; then
      printf '{"stop":"broken-output","reasoning":"line %d of %s is wrong"}\n' "$n" "$out" >"$LOOPKIT_RESULT"
      exit 0
    fi
  done
  progress-append --id "iteration-$LOOPKIT_ITERATION" "$LOOPKIT_PROGRESS" \
    "Checked all $total lines of $out: nothing left to do"
  printf '{"plateau":true,"reasoning":"all %d lines written and checked"}\n' "$total" >"$LOOPKIT_RESULT"
  exit 0
fi

from=$((done_lines + 1))
to=$((done_lines + step))
((to <= total)) || to=$total
for ((n = from; n <= to; n++)); do fizzbuzz "$n"; done >>"$out"

progress-append --id "iteration-$LOOPKIT_ITERATION" --files "$out" \
  --learning "lines 1-$to are written; continue at $((to + 1))" \
  "$LOOPKIT_PROGRESS" "Wrote FizzBuzz lines $from-$to"
printf '{"plateau":false,"reasoning":"wrote lines %d-%d"}\n' "$from" "$to" >"$LOOPKIT_RESULT"
