# engine-ctl(1)'s examples: the sessions they name, running
# shellcheck shell=bash
mkdir -p .claude/pipeline-runs/nightly
state-set .claude/pipeline-runs/nightly/state.json session=nightly type=loop status=running iteration:=1 \
  iteration_completed:=0 max_iterations:=10
mkdir -p .atari
state-set --init '{"version":1}' .atari/state.json status=running iteration:=1
