# lock-acquire(1)'s examples: the loop and the nightly job are the reader's
# shellcheck shell=bash disable=SC2016
stub run-the-loop
printf '#!/bin/sh\nexit 0\n' >loop.sh && printf '#!/bin/sh\nexit 0\n' >nightly.sh && chmod +x loop.sh nightly.sh
# the etcd example's command
printf '#!/bin/sh\nexit 0\n' >drain.sh && chmod +x drain.sh
# the script's loop runs until its beater has beaten once, as a loop that
# works for a while would (a release before the first beat leaves the
# beater to find no lock)
stub run-the-loop 'for i in $(seq 300); do grep -q heartbeat_every .claude/locks/auth.lock && exit 0; sleep 0.1; done; exit 1'
