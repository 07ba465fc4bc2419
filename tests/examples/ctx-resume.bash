# ctx-resume(1)'s examples: a save to resume in .mdan and one in the
# default folder ($TMPDIR), with a phase done; run-agent is the reader's.
# shellcheck shell=bash disable=SC2034
stub run-agent
ctx-save --dir .mdan --phase IMPLEMENT --tokens 1000/200000 --message 'user=add login' >/dev/null
ctx-save --phase IMPLEMENT --tokens 1000/200000 --message 'user=add login' >/dev/null
