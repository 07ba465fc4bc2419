# engine-status(1)'s examples: a finished session run1 with its events, and
# a running one under ./srv/agents; xdg-open is the reader's browser.
# shellcheck shell=bash
stub xdg-open
R=.claude/pipeline-runs/run1
mkdir -p "$R"
state-set "$R/state.json" session=run1 type=loop status=complete iteration:=2 \
  iteration_completed:=2 max_iterations:=2 completion_reason=max_iterations --now started_at --now completed_at
event-append "$R/events.jsonl" start --session run1 >/dev/null
event-append "$R/events.jsonl" complete --session run1 >/dev/null
mkdir -p srv/agents/.claude/pipeline-runs/other
state-set srv/agents/.claude/pipeline-runs/other/state.json session=other type=loop status=running \
  iteration:=1 iteration_completed:=0
# the etcd example's drain, on the throwaway etcd
before_block() {
  if grep -q 'etcd://' "$1" && [[ -n ${ENDPOINTS:-} ]]; then
    state-set --init '{"version":1}' "etcd://$ENDPOINTS/atari" status=running iteration:=1 >/dev/null
  fi
}
