# lock-reap(1)'s examples: a project under ./srv with a lock folder, one
# lock live (held by this shell) and one stale
# shellcheck shell=bash
mkdir -p srv/project/.claude/locks srv/agents/.claude/locks .claude/locks
lock-acquire --pid $$ .claude/locks/live.lock
sh -c 'exit 0' & dead=$!; wait $dead
printf '{"session":"old","pid":%s,"started_at":"2025-01-10T10:00:00Z"}\n' "$dead" >.claude/locks/old.lock
cp .claude/locks/old.lock srv/project/.claude/locks/
