# state-set(1)'s examples: $state, a state with no current bead, and a
# stream of events (events)
# shellcheck shell=bash disable=SC2034
state=.claude/pipeline-runs/auth/state.json
mkdir -p .claude/pipeline-runs/auth locks
state-set "$state" iteration:=2
state-set state.json current_bead:=null
stub events 'echo status=running; echo iteration:=1'
mkdir -p .atari
