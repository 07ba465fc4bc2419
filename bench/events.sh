#!/usr/bin/env bash
# bench/events.sh [BINDIR] [SIZE_MB]: what one event-append costs on an empty
# log and on a SIZE_MB (default 200) log, beside progress-append on an empty
# and an equally big progress file, and what event-show --last 1 costs on the
# big log. Counted in instructions (callgrind, deterministic) and bytes read
# (strace), so the numbers do not depend on the machine's load; all in one
# run. Prints a Markdown table. A benchmark, not a test.
set -euo pipefail

bin=${1:-build/bin}
mb=${2:-200}
bin=$(cd "$bin" && pwd)
for tool in valgrind strace python3; do
  command -v $tool >/dev/null || { echo "events.sh: $tool is needed" >&2; exit 1; }
done
work=$(mktemp -d "${TMPDIR:-/tmp}/events-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
export LOOPKIT_NOW=1736503530 TZ=UTC LC_ALL=C

"$bin/progress-append" --session bench empty.md
cp empty.md big.md
: >empty.jsonl
python3 - "$mb" <<'PY'
import sys
target = int(sys.argv[1]) << 20
with open("big.jsonl", "w") as f:
    size, i, chunk = 0, 0, []
    while size < target:
        i += 1
        line = ('{"seq":%d,"ts":"2025-01-10T10:05:30Z","type":"iteration-done","session":"bench",'
                '"iteration":%d,"plateau":false,"reasoning":"step %d of the plan"}\n' % (i, i, i))
        chunk.append(line); size += len(line)
        if len(chunk) == 10000:
            f.write("".join(chunk)); chunk = []
    f.write("".join(chunk))
with open("big.md", "a") as f:
    size, i, chunk = f.tell(), 0, []
    while size < target:
        i += 1
        e = "\n## 2025-01-%02d - bd-%d\n- did step %d of the plan\n\n---\n" % (i % 28 + 1, i, i)
        chunk.append(e); size += len(e)
        if len(chunk) == 10000:
            f.write("".join(chunk)); chunk = []
    f.write("".join(chunk))
PY

instructions() {
  valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null |
    awk '/Collected/ { n = $NF } END { print n }'
}
bytes_read() {
  strace -o trace -e trace=read,pread64 "$@" >/dev/null
  awk '/^(read|pread64)\(/ { n = $NF; if (n > 0) t += n } END { print t + 0 }' trace
}
pct() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%+.1f%%", (a - b) * 100 / b }'; }

ev=(--no-sync --session bench iteration-done 'iteration:=7' 'plateau:=false' 'reasoning=step 7 of the plan')
pr=(--no-sync --id bd-x --date 2025-01-12 'did step 7 of the plan')

ea_empty=$(instructions "$bin/event-append" empty.jsonl "${ev[@]}")
ea_big=$(instructions "$bin/event-append" big.jsonl "${ev[@]}")
pa_empty=$(instructions "$bin/progress-append" "${pr[@]}" empty.md)
pa_big=$(instructions "$bin/progress-append" "${pr[@]}" big.md)
es_big=$(instructions "$bin/event-show" --last 1 big.jsonl)
ea_read=$(bytes_read "$bin/event-append" big.jsonl "${ev[@]}")
es_read=$(bytes_read "$bin/event-show" --last 1 big.jsonl)

printf '| run | instructions | vs progress-append (same log size) |\n|---|---:|---:|\n'
printf '| progress-append, empty file | %s | |\n' "$pa_empty"
printf '| event-append, empty log | %s | %s |\n' "$ea_empty" "$(pct "$ea_empty" "$pa_empty")"
printf '| progress-append, %s MB file | %s | |\n' "$mb" "$pa_big"
printf '| event-append, %s MB log | %s | %s |\n' "$mb" "$ea_big" "$(pct "$ea_big" "$pa_big")"
printf '| event-show --last 1, %s MB log | %s | |\n' "$mb" "$es_big"
printf '\nevent-append on %s MB vs empty: %s instructions; bytes read: event-append %s, event-show --last 1 %s (it maps the file: only the pages it touches are read)\n' \
  "$mb" "$(pct "$ea_big" "$ea_empty")" "$ea_read" "$es_read"
