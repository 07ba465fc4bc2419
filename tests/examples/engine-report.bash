# engine-report(1)'s examples: a finished loop session nightly, a drain's
# state in .atari, and a drain on the throwaway etcd; xdg-open is the
# reader's browser.
# shellcheck shell=bash
stub xdg-open
R=.claude/pipeline-runs/nightly
mkdir -p "$R" srv/www
state-set "$R/state.json" session=nightly type=loop status=complete iteration:=2 \
  iteration_completed:=2 max_iterations:=2 completion_reason=max_iterations --now started_at --now completed_at
event-append "$R/events.jsonl" start --session nightly >/dev/null
event-append "$R/events.jsonl" complete --session nightly >/dev/null
mkdir -p .atari
state-set --init '{"version":1}' .atari/state.json status=stopped iteration:=1 \
  'history.bd-1:={"status":"completed","attempts":1}'
before_block() {
  if grep -q 'etcd://' "$1" && [[ -n ${ENDPOINTS:-} ]]; then
    state-set --init '{"version":1}' "etcd://$ENDPOINTS/atari" status=stopped iteration:=1 >/dev/null
  fi
}
