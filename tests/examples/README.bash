# README.md's tour, in one folder from its first block to its last: the
# state files it reads (a loop's, and a pipeline's state.json with a failed
# stage), Atari's state, locks, the agents and item lists of the engines,
# and the programs it names (npm, make, bd).
# shellcheck shell=bash disable=SC2034,SC2016
mkdir -p .claude/pipeline-runs/myfeature .claude/locks .atari locks src/auth
state-set .claude/pipeline-runs/myfeature/state.json status=running iteration:=3 iteration_completed:=2
state-set state.json status=running iteration:=3 iteration_completed:=2 total_cost:=1.5 \
  'stages:=[{"name":"draft","status":"complete"},{"name":"review","status":"failed"}]'
state-set --init '{"version":1}' .atari/state.json status=running iteration:=1
lock-acquire --pid 1 .claude/locks/auth.lock
# "..." is the script's own work, which takes longer than a beater's start:
# it returns once a running lock-heartbeat has beaten the lock (a release
# before the first beat is "no lock", lock-heartbeat(1)); at most 30 s
stub ... 'f=.claude/locks/myfeature.lock i=0
while [ $i -lt 300 ] && [ -f "$f" ] && ! grep -q heartbeat_pid "$f" && pgrep -x lock-heartbeat >/dev/null; do
  sleep 0.1; i=$((i + 1))
done'
stub npm
stub make
stub bd 'echo bd-1'
used=180000 limit=200000
# the agent votes plateau under an engine; under lock-acquire it just runs
printf '#!/bin/sh\n[ -z "$LOOPKIT_RESULT" ] || echo "{\\"plateau\\": true}" >"$LOOPKIT_RESULT"\n' >agent.sh
printf '#!/bin/sh\necho item-1\n' >ready-items.sh
printf '#!/bin/sh\nexit 0\n' >work-on-item.sh
chmod +x agent.sh ready-items.sh work-on-item.sh
cat >pipeline.json <<'JSON'
{"name": "refine", "stages": [{"name": "draft", "runs": 1, "command": "true"}]}
JSON
before_block() {
  case $(<"$1") in
    # the fence: only while the lock is this shell's
    *"--fence locks/bd-1.lock --pid \$\$"*) lock-acquire --pid $$ locks/bd-1.lock ;;
    # engine-ctl pauses a loop that runs: the tour's finished, as if still running
    *"engine-ctl pause myfeature"*) state-set .claude/pipeline-runs/myfeature/state.json status=running ;;
  esac
}
