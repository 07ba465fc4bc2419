# lock-status(1)'s examples: a fresh project (no lock folder yet) for the
# first; start-loop is the reader's
# shellcheck shell=bash disable=SC2016
stub start-loop 'mkdir -p .claude/locks && lock-acquire --pid 1 ".claude/locks/$1.lock"'
