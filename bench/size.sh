#!/usr/bin/env bash
# The tools' sizes against the goals of issue 24: bench/size.sh [BINDIR]
# (default build/bin; run from the project root). Each tool is stripped
# into a scratch folder (as `cmake --install` and the .deb strip them) and
# measured there: at most 1 MB each, and at most 12 MB for all of bin/.
# Prints a markdown table, each goal marked met or not, and for the
# biggest tool what its image holds (text, data, bss from size(1)).
set -euo pipefail
bin=$(cd "${1:-build/bin}" && pwd)
for t in strip size; do
  command -v "$t" >/dev/null || { echo "size.sh: $t is not installed" >&2; exit 2; }
done
work=$(mktemp -d "${TMPDIR:-/tmp}/loopkit-size.XXXXXX")
trap 'rm -rf "$work"' EXIT
tool_goal=$((1024 * 1024))
bin_goal=$((12 * 1024 * 1024))
total=0 biggest="" biggest_size=0
echo "| tool | stripped | goal |"
echo "|---|---|---|"
for f in "$bin"/*; do
  [[ -f $f && -x $f ]] || continue
  name=$(basename "$f")
  strip -o "$work/$name" "$f"
  bytes=$(stat -c %s "$work/$name")
  total=$((total + bytes))
  if ((bytes > biggest_size)); then biggest=$name biggest_size=$bytes; fi
  ok=$([[ $bytes -le $tool_goal ]] && echo met || echo "not met")
  # shellcheck disable=SC2016 # the backquotes are markdown
  printf '| `%s` | %.2f MB | ≤ 1 MB: %s |\n' "$name" "$(awk -v b="$bytes" 'BEGIN { print b / 1048576 }')" "$ok"
done
ok=$([[ $total -le $bin_goal ]] && echo met || echo "not met")
printf '| all of bin/ | %.2f MB | ≤ 12 MB: %s |\n' "$(awk -v b="$total" 'BEGIN { print b / 1048576 }')" "$ok"
echo
echo "biggest: $biggest"
size "$work/$biggest" | sed 's|'"$work"'/||'
