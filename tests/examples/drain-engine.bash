# drain-engine(1)'s examples: bd lists one ready bead (with --json, as JSON)
# and claude answers as Claude Code's --output-format json does.
# shellcheck shell=bash disable=SC2016
stub bd 'case " $* " in *" --json "*) echo "[{\"id\":\"bd-1\"}]" ;; *) echo bd-1 ;; esac
if [ -e .bd-done ]; then exit 0; fi'
stub claude 'echo "{\"total_cost_usd\": 0.5, \"num_turns\": 3, \"session_id\": \"s-1\"}"'
# the etcd example's agent
printf '#!/bin/sh\nexit 0\n' >work.sh && chmod +x work.sh
mkdir -p .atari
