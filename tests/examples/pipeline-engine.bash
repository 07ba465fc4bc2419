# pipeline-engine(1)'s examples: a pipeline of two stages of one run each
# shellcheck shell=bash
cat >full-refine.json <<'JSON'
{"name": "full-refine", "stages": [
  {"name": "draft", "runs": 1, "command": "echo draft >\"$LOOPKIT_STAGE_DIR/output.md\""},
  {"name": "review", "runs": 1, "command": "test -s \"$LOOPKIT_STAGE_DIR\"/../stage-0-draft/output.md"}]}
JSON
