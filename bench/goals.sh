#!/usr/bin/env bash
# Every goal of issue 24 beside its measurement, in one run:
# bench/goals.sh [BINDIR] (default build/bin; run from the project root).
# Instructions and system calls against the floor programs (floor.sh), the
# tools' stripped sizes (size.sh) and the hand-off of a released lock
# against flock(1) (handoff.sh), the validating read of a large file
# (bigread.sh) and, where etcd, etcdctl and jq are installed, the etcd goals
# with fsync on and off (etcd.sh, which takes the build folder: BINDIR/..).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bin=${1:-build/bin}
echo "## Instructions and system calls (bench/floor.sh)"
echo
"$here/floor.sh" "$bin"
echo
echo "## Size (bench/size.sh)"
echo
"$here/size.sh" "$bin"
echo
echo "## Lock hand-off (bench/handoff.sh)"
echo
"$here/handoff.sh" "$bin"
echo
echo "## Validating read of a large file (bench/bigread.sh)"
echo
"$here/bigread.sh" "$bin"
echo
echo "## etcd, syncing to disk and not (bench/etcd.sh)"
echo
if command -v etcd >/dev/null && command -v etcdctl >/dev/null && command -v jq >/dev/null; then
  "$here/etcd.sh" "$bin/.." 50
else
  echo "(etcd, etcdctl or jq is not installed: skipped)"
fi
