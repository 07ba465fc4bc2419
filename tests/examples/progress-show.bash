# progress-show(1)'s examples: a progress log with entries and a learning
# shellcheck shell=bash
P=.claude/pipeline-runs/auth/progress-auth.md
mkdir -p "${P%/*}"
for f in "$P" progress-auth.md; do
  progress-append --session auth "$f"
  progress-append --id beads-123 --learning 'Token refresh needs care' "$f" 'Implemented auth'
  progress-append --id beads-124 "$f" 'Added tests'
done
