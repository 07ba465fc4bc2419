# ctx-save(1)'s examples: the numbers and files they name, and no save yet
# (the first "one save per project" run makes it).
# shellcheck shell=bash disable=SC2034
used=100000 summary='the login form is done'
mkdir -p docs && echo '# Plan' >docs/plan.md
printf '%s\n' '{"role":"user","content":"add login"}' '{"role":"assistant","content":"done"}' >transcript.jsonl
