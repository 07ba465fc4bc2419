#!/usr/bin/env bash
# bench/progress.sh [BINDIR] [SIZE_MB]: what an append and a bounded show
# cost on a large progress log against an empty one, beside the shell's own
# ways (printf >>, cat >>, tail -c). Appends are counted in instructions
# (callgrind, deterministic), shows in bytes read (strace), so the numbers do
# not depend on the machine's load. Prints a Markdown table.
set -euo pipefail

bin=${1:-build/bin}
mb=${2:-200}
bin=$(cd "$bin" && pwd)
for tool in valgrind strace python3; do
  command -v $tool >/dev/null || { echo "progress.sh: $tool is needed" >&2; exit 1; }
done
work=$(mktemp -d "${TMPDIR:-/tmp}/progress-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
export LOOPKIT_NOW=1736503530 TZ=UTC LC_ALL=C
budget=16384

# the logs: one with the header alone, one of SIZE_MB of entries after it
"$bin/progress-append" --session bench --verify 'make test' empty.md
cp empty.md big.md
cp empty.md small.md
python3 - "$mb" <<'EOF'
import sys
def fill(name, target):
  with open(name, "a") as f:
    size, i, chunk = f.tell(), 0, []
    while size < target:
        i += 1
        e = (f"\n## 2025-01-{i % 28 + 1:02d} - bd-{i}\n- did step {i} of the plan\n"
             f"- Files: src/mod{i % 97}.c, tests/mod{i % 97}.bats\n"
             f"- Learning: the {i}th thing learned, kept short\n\n---\n")
        chunk.append(e); size += len(e)
        if len(chunk) == 10000:
            f.write("".join(chunk)); chunk = []
    f.write("".join(chunk))
fill("big.md", int(sys.argv[1]) << 20)
fill("small.md", 1 << 20)
EOF
header=$(awk '{ n += length($0) + 1 } /^---$/ { print n; exit }' big.md)
entry_line='did one more step'

# instructions of one run (callgrind, the process itself; children not traced)
instructions() {
  valgrind --tool=callgrind --callgrind-out-file=/dev/null --trace-children=yes "$@" 2>&1 >/dev/null |
    awk '/Collected/ { n = $NF } END { print n }'
}
# bytes the run read (read and pread64 results summed); its stdout to $work/out
bytes_read() {
  strace -o trace -e trace=read,pread64 "$@" >out
  awk '/^(read|pread64)\(/ { n = $NF; if (n > 0) t += n } END { print t + 0 }' trace
}
size_of() { stat -c %s "$1"; }
pct() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%+.2f%%", (a - b) * 100 / b }'; }

# shellcheck disable=SC2054  # a.c,b.c is one --files value
append=("$bin/progress-append" --no-sync --id bd-x --date 2025-01-12 --files a.c,b.c --learning 'short')
entry=$'\n## 2025-01-12 - bd-x\n- '"$entry_line"$'\n- Files: a.c, b.c\n- Learning: short\n\n---\n'
printf '%s' "$entry" >entry.txt

a_empty=$(instructions "${append[@]}" empty.md "$entry_line")
a_big=$(instructions "${append[@]}" big.md "$entry_line")
# shellcheck disable=SC2016  # $1 and $2 belong to the inner bash
p_empty=$(instructions bash -c 'printf "%s" "$1" >>"$2"' _ "$entry" empty.md)
# shellcheck disable=SC2016
p_big=$(instructions bash -c 'printf "%s" "$1" >>"$2"' _ "$entry" big.md)
c_empty=$(instructions sh -c 'exec cat entry.txt >>empty.md')  # cat alone: sh execs it
c_big=$(instructions sh -c 'exec cat entry.txt >>big.md')
r_append=$(bytes_read "${append[@]}" big.md "$entry_line")

# torn entries: W writers at once, E entries each of 6000 bytes, by bash's
# printf >> and by progress-append (timing-dependent: a count, not a ratio)
torn() {
  awk '/^## 2025-01-13 - / { id = substr($0, 17); getline a; if (a != "- " id ":" body) bad++ }
       END { print bad + 0 }' body="$(printf '%6000s' '' | tr ' ' x)" "$1"
}
writers=12 each=100
body=$(printf '%6000s' '' | tr ' ' x)
cp empty.md race-bash.md
cp empty.md race-tool.md
for w in $(seq $writers); do
  (for i in $(seq $each); do printf '\n## 2025-01-13 - w%s-%s\n- w%s-%s:%s\n\n---\n' "$w" "$i" "$w" "$i" "$body" >>race-bash.md; done) &
  (for i in $(seq $each); do "$bin/progress-append" --no-sync --id "w$w-$i" --date 2025-01-13 race-tool.md "w$w-$i:$body"; done) &
done
wait
torn_bash=$(torn race-bash.md)
torn_tool=$(torn race-tool.md)

s_read=$(bytes_read "$bin/progress-show" --max-bytes $budget big.md)
s_printed=$(size_of out)
l_read=$(bytes_read "$bin/progress-show" --last 5 big.md)
l_printed=$(size_of out)
t_read=$(bytes_read tail -c $budget big.md)
t_printed=$(size_of out)
s_instr=$(instructions "$bin/progress-show" --max-bytes $budget big.md)
s_instr_small=$(instructions "$bin/progress-show" --max-bytes $budget small.md)
l_instr=$(instructions "$bin/progress-show" --last 5 big.md)
l_instr_small=$(instructions "$bin/progress-show" --last 5 small.md)
t_instr=$(instructions tail -c $budget big.md)
t_instr_small=$(instructions tail -c $budget small.md)

cat <<EOF
progress log: $(size_of big.md) bytes ($mb MiB), header $header bytes; show budget $budget bytes

| operation | empty log | ${mb} MiB log | difference |
|---|---:|---:|---:|
| progress-append, instructions | $a_empty | $a_big | $(pct "$a_big" "$a_empty") |
| bash printf >> (whole bash), instructions | $p_empty | $p_big | $(pct "$p_big" "$p_empty") |
| cat >>, instructions | $c_empty | $c_big | $(pct "$c_big" "$c_empty") |

| same output, instructions | 1 MiB log | ${mb} MiB log | difference |
|---|---:|---:|---:|
| progress-show --max-bytes $budget | $s_instr_small | $s_instr | $(pct "$s_instr" "$s_instr_small") |
| progress-show --last 5 | $l_instr_small | $l_instr | $(pct "$l_instr" "$l_instr_small") |
| tail -c $budget | $t_instr_small | $t_instr | $(pct "$t_instr" "$t_instr_small") |

| read on the ${mb} MiB log | bytes read | bytes printed | read - printed |
|---|---:|---:|---:|
| progress-append (one entry) | $r_append | 0 | $r_append |
| progress-show --max-bytes $budget | $s_read | $s_printed | $((s_read - s_printed)) |
| progress-show --last 5 | $l_read | $l_printed | $((l_read - l_printed)) |
| tail -c $budget (no header, cuts an entry) | $t_read | $t_printed | $((t_read - t_printed)) |

| $writers writers x $each entries of 6000 bytes at once | torn entries |
|---|---:|
| bash printf >> | $torn_bash of $((writers * each)) |
| progress-append | $torn_tool of $((writers * each)) |
EOF
