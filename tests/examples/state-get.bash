# state-get(1)'s examples: a loop's state, a pipeline's state.json with a
# failed stage, and the session's lock held by this shell
# shellcheck shell=bash
mkdir -p .claude/pipeline-runs/auth .claude/locks
state-set .claude/pipeline-runs/auth/state.json status=running iteration:=3 iteration_completed:=2
state-set state.json status=running iteration:=3 iteration_completed:=2 max_iterations:=3 \
  'stages:=[{"name":"draft","status":"complete"},{"name":"review","status":"failed"}]' completed_at=2025-01-10T10:00:00Z
lock-acquire --pid $$ .claude/locks/auth.lock
# the etcd example's key
if [[ -n ${ENDPOINTS:-} ]]; then state-set "etcd://$ENDPOINTS/loops/auth/state" iteration:=1; fi
