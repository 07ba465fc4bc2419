# progress-append(1)'s examples: npm test passes, an agent that summarises
# shellcheck shell=bash disable=SC2034
stub npm
stub agent 'printf "%s\n" "- Implemented user authentication" "- Added the tests"'
ITEM=beads-124
mkdir -p .claude/pipeline-runs/auth
