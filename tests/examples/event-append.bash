# event-append(1)'s examples write to logs of their own: nothing to make.
# shellcheck shell=bash
mkdir -p .claude/pipeline-runs/demo
