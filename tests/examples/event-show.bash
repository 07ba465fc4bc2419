# event-show(1)'s examples: a session's log and log.jsonl, each with events
# shellcheck shell=bash
mkdir -p .claude/pipeline-runs/demo
for f in .claude/pipeline-runs/demo/events.jsonl log.jsonl; do
  event-append "$f" start --session demo >/dev/null
  event-append "$f" iteration-done iteration:=1 plateau:=true --session demo >/dev/null
  event-append "$f" failed reason=agent-error --session demo >/dev/null
done
