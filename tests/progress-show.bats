#!/usr/bin/env bats
# progress-show: the header and patterns plus chosen entries; --max-bytes
# reads little more than it prints.
load helpers

P=progress-myfeature.md

# the seed's own example file (003_26e95c9e0dcadcb1.txt)
seed() { cat "$BATS_TEST_DIRNAME/fixtures/progress-myfeature.md"; }

head8() { seed | head -n 8; }

# the seed plus entries b1..bN dated 2025-01-11.. with one bullet each
log_of() {
  seed >$P
  for i in $(seq "$1"); do
    progress-append --no-sync --id "b$i" --date "2025-01-$(printf %02d $((10 + i % 20)))" $P "entry number $i"
  done
}

awk_learnings() { awk '/^---$/{found=1; next} found' "$@"; }

@test "with no option the whole file, byte for byte" {
  seed >$P
  progress-show $P >out
  cmp $P out
}

@test "--learnings is exactly the seed's awk" {
  seed >$P
  progress-show --learnings $P >mine
  awk_learnings $P >theirs
  cmp mine theirs
  # also on the seed's own files, wherever they are
  for f in "$BATS_TEST_DIRNAME"/fixtures/ap_progress*.md "$LOOPKIT_SOURCE"/../shared/fixtures/ap_progress*.md; do
    [[ -f $f ]] || continue
    cmp <(progress-show --learnings "$f") <(awk_learnings "$f")
  done
}

@test "--learnings matches the awk on odd files too" {
  printf 'no rule\n' >a.md
  printf 'x\n---\n---\n\n--- \n-- \ntail without newline' >b.md
  printf '# P\n---\n\n## 2025-01-01\n\n---\n\n' >c.md
  for f in a.md b.md c.md; do cmp <(progress-show --learnings $f) <(awk_learnings $f); done
}

@test "--last N: the header and patterns plus the newest N entries" {
  seed >$P
  run -0 progress-show --last 1 $P
  assert_output "$(head8; seed | tail -n 7)"
  run -0 progress-show --last 0 $P
  assert_output "$(head8)"
  run -0 progress-show --last 9 $P
  assert_output "$(seed)"
}

@test "--id: every entry with that id" {
  log_of 3
  progress-append --id b2 --date 2025-01-20 $P 'second attempt'
  run -0 progress-show --id b2 $P
  assert_output "$(head8)

## 2025-01-12 - b2
- entry number 2

---

## 2025-01-20 - b2
- second attempt

---"
}

@test "--id or --since that matches nothing: exit 1, nothing printed" {
  seed >$P
  run -1 --separate-stderr progress-show --id nope $P
  assert_equal "$output" ''
  assert_equal "$stderr" "progress-show: no entry 'nope' in '$P'"
  run -1 --separate-stderr progress-show -q --since 2026-01-01 $P
  assert_equal "$stderr" ''
}

@test "--since DATE: the entries of that day and later" {
  log_of 5
  run -0 progress-show --since 2025-01-14 $P
  [[ $output == *'- b4'* && $output == *'- b5'* && $output != *'- b3'* && $output != *beads-12* ]]
  [[ $output == '# Progress: myfeature'* ]]
}

@test "filters combine: --since with --last, --learnings with --id" {
  log_of 5
  run -0 progress-show --since 2025-01-12 --last 2 $P
  [[ $output == *'- b4'* && $output == *'- b5'* && $output != *'- b3'* ]]
  run -0 progress-show --learnings --id b3 $P
  assert_output $'\n## 2025-01-13 - b3\n- entry number 3'
}

@test "--max-bytes: at most N bytes, patterns kept, the newest whole entries" {
  seed >$P
  progress-append --pattern 'Always run the linter' $P
  log_of_more() { for i in $(seq 60); do progress-append --no-sync --id "b$i" --date 2025-01-12 $P "entry number $i"; done; }
  log_of_more
  for n in 300 500 1000 2000 4000; do
    progress-show --max-bytes $n $P >out
    [ "$(wc -c <out)" -le $n ]
    grep -q 'Always run the linter' out
    grep -q '^## 2025-01-12 - b60$' out
    # whole entries: as many headings as rules after the header
    [ "$(grep -c '^## 2025' out)" -eq $(($(grep -c '^---$' out) - 1)) ]
    # and they are the newest: what follows the header is the end of the file
    tail -n +11 out >entries
    cmp entries <(tail -c "$(wc -c <entries)" $P)
  done
  # one byte more than an output would have let in one more entry
  progress-show --max-bytes 1000 $P >a
  progress-show --max-bytes 1001 $P >b
  [ "$(wc -c <b)" -le 1001 ]
}

@test "--max-bytes smaller than the header: as many whole lines of it as fit" {
  seed >$P
  run -0 progress-show --max-bytes 30 $P
  assert_output '# Progress: myfeature'
  run -0 progress-show --max-bytes 0 $P
  assert_output ''
}

@test "--max-bytes with --learnings bounds the learnings" {
  log_of 30
  progress-show --learnings --max-bytes 200 $P >out
  [ "$(wc -c <out)" -le 200 ]
  grep -q '^- entry number 30$' out
  ! grep -q '^---$' out
}

@test "--max-bytes reads little more than it prints" {
  need_strace
  seed >$P
  # 5 MB of entries, some far larger than a read block
  awk 'BEGIN {
    while (length(big) < 8999) big = big " "
    for (i = 1; i <= 4000; i++)
      printf "\n## 2025-01-11 - f%s\n- filler entry number %s %s\n\n---\n", i, i, i % 500 == 250 ? big "x" : ""
  }' >>$P
  strace -o trace -P $P -e trace=read,pread64 progress-show --max-bytes 3000 $P >out
  printed=$(wc -c <out)
  run -0 awk '/^(read|pread64)\(/ { n = $NF; if (n > 0) total += n } END { print total + 0 }' trace
  echo "read $output bytes, printed $printed" >&3
  # the header is printed too, so printed + two 4 KiB blocks bounds it
  [ "$output" -le $((printed + 8192)) ]
  grep -q '^## 2025-01-11 - f4000$' out
  strace -o trace -P $P -e trace=read,pread64 progress-show --last 3 $P >out
  run -0 awk '/^(read|pread64)\(/ { n = $NF; if (n > 0) total += n } END { print total + 0 }' trace
  [ "$output" -le 8192 ]
  grep -q '^## 2025-01-11 - f3998$' out
  # a newest entry that cannot fit is not read whole either
  printf '\n## 2025-01-12 - huge\n- %90000s\n\n---\n' x >>$P
  strace -o trace -P $P -e trace=read,pread64 progress-show --max-bytes 3000 $P >out
  run -0 awk '/^(read|pread64)\(/ { n = $NF; if (n > 0) total += n } END { print total + 0 }' trace
  [ "$output" -le 16384 ]
  diff out <(head8)
}

@test "entries larger than the read block come out whole" {
  seed >$P
  big=$(printf '%20000s' '' | tr ' ' x)
  progress-append --id big --date 2025-01-11 $P "$big"
  progress-append --id small --date 2025-01-11 $P tiny
  run -0 progress-show --last 2 $P
  [[ $output == *"- $big"* && $output == *'- tiny'* && $output != *beads-124* ]]
  run -0 progress-show --max-bytes 5000 $P
  [[ $output == *'- tiny'* && $output != *"- x"* ]]
}

@test "a missing file: exit 1, no such progress file" {
  run -1 --separate-stderr progress-show missing.md
  assert_equal "$stderr" "progress-show: no such progress file 'missing.md'"
  run -1 --separate-stderr progress-show -q missing.md
  assert_equal "$stderr" ''
}

@test "- reads stdin and FILE.gz is read transparently" {
  seed >$P
  run -0 progress-show --last 1 - <$P
  assert_output "$(head8; seed | tail -n 7)"
  gzip -k $P
  cmp <(progress-show --id beads-123 $P.gz) <(progress-show --id beads-123 $P)
}

@test "usage errors: exit 2" {
  seed >$P
  run -2 progress-show
  run -2 progress-show $P other.md
  run -2 progress-show --last x $P
  run -2 progress-show --last -1 $P
  run -2 progress-show --max-bytes '' $P
  run -2 --separate-stderr progress-show --since 2025-1-1 $P
  assert_equal "$stderr" "progress-show: --since: not a date YYYY-MM-DD or an ISO 8601 time: '2025-1-1'"
}

@test "a folder is exit 4" {
  mkdir d
  run -4 progress-show d
}

# every entry of a progress-show output is whole: its heading, $2 bullets of
# $3 bytes each, then its "---" line (the header's patterns section aside)
whole_entries() {
  awk -v want="$2" -v width="$3" '
    /^## Codebase Patterns$/ { next }
    /^## / { if (open) bad = 1; open = 1; n = 0; seen++; next }
    /^- / { if (open) { if (length($0) != width) bad = 1; n++ }; next }
    /^---$/ { if (open && n != want) bad = 1; open = 0; next }
    END { if (open) bad = 1; if (bad) print "torn entry in " FILENAME > "/dev/stderr"; exit bad }' "$1"
}

@test "readers see whole entries only while 2 MiB entries are appended" {
  progress-append --no-sync --session torn $P
  printf '%01023d\n' $(seq 2048) >big # 2048 bullets of 1025 bytes: a 2 MiB entry
  (
    for i in $(seq 12); do progress-append --no-sync --id "t$i" --date 2025-01-10 $P - <big; done
    touch appended
  ) &
  # bounded in count; whatever the timing, every output must hold whole entries
  local reads=0
  while [[ ! -e appended ]] && ((reads < 150)); do
    progress-show --last 1 $P >last
    progress-show --max-bytes 4400000 $P >bounded
    whole_entries last 2048 1025
    whole_entries bounded 2048 1025
    if ((reads % 4 == 0)); then # the whole file grows to 24 MiB: read it less often
      progress-show $P >whole
      whole_entries whole 2048 1025
    fi
    reads=$((reads + 1))
  done
  wait
  run -0 progress-show --max-bytes 4400000 $P
  [[ $(grep -c '^## 2025' <<<"$output") == 2 ]]
}

@test "a pipe given by name is read as it comes" {
  seed >$P
  progress-show <(cat $P) >out
  cmp $P out
  run -0 progress-show --last 1 <(cat $P)
  assert_output "$(head8; seed | tail -n 7)"
}

@test "a reader waits out a write in flight and never prints its bytes" {
  seed >$P
  local size
  size=$(stat -c %s $P)
  # an appender caught mid-write: the file locked as progress-append locks
  # it, part of an entry written; it then takes the part back and unlocks
  flock -x $P sh -c 'printf "\n## 2025-02-01 - half\n- torn" >>"$1"; touch ready
    while [ ! -e go ]; do sleep 0.05; done; truncate -s "$2" "$1"' sh $P "$size" &
  local appender=$!
  wait_for ready
  progress-show $P >out &
  local reader=$!
  progress-show --max-bytes 4096 $P >bounded &
  local bounded=$! i r running
  # let the appender go on once each reader is done or waits for the lock
  for ((i = 0; i < 300; i++)); do
    running=0
    for r in $reader $bounded; do
      kill -0 $r 2>/dev/null || continue
      grep -Eq "^[0-9]+: -> FLOCK +ADVISORY +READ +$r " /proc/locks || running=1
    done
    ((running)) || break
    sleep 0.1
  done
  touch go
  wait $reader $bounded $appender
  cmp $P out
  cmp $P bounded
}

@test "--json: one object per entry, Files and Learning bullets apart, the header left out" {
  seed >$P
  progress-append --id b1 --date 2025-01-11 --files 'a.c, b/c.h' --learning 'one' --learning 'two' $P 'did it' 'say "quoted"'
  progress-append --date 2025-01-12 $P 'no id'
  run -0 progress-show -j --last 2 $P
  assert_output '{"date":"2025-01-11","id":"b1","bullets":["did it","say \"quoted\""],"files":["a.c","b/c.h"],"learning":["one","two"]}
{"date":"2025-01-12","id":null,"bullets":["no id"],"files":[],"learning":[]}'
  # every entry of the file is one line, and each reads as JSON
  run -0 progress-show --json $P
  [ "${#lines[@]}" = "$(grep -c '^## 20' $P)" ]
  run -0 bash -c "progress-show --json --id b1 $P | state-get - id 'files[1]' 'learning[-1]'"
  assert_output $'b1\nb/c.h\ntwo'
  # bytes that are not UTF-8 come out as U+FFFD, so the line is still JSON
  printf '\n## 2025-01-13 - bad\n- \xff\xfe here\n\n---\n' >>$P
  run -0 bash -c "progress-show --json --last 1 $P | state-get - 'bullets[0]'"
  assert_output $'\xef\xbf\xbd\xef\xbf\xbd here'
  run -2 progress-show --json --learnings $P
}

@test "--follow prints each entry once it is whole, and the file as it is first" {
  seed >$P
  progress-show --follow --poll 0.05 $P >out 2>err &
  f=$!
  wait_grep 'Token refresh' out
  progress-append --id b1 --date 2025-01-11 $P 'first new'
  wait_grep 'first new' out
  # an entry written in two parts is printed once, whole
  printf '\n## 2025-01-12 - half\n- written in' >>$P
  progress-append --pattern 'a pattern' $P # a rewrite: same entries under a new head
  printf ' two parts\n\n---\n' >>$P
  progress-append --id b3 --date 2025-01-13 $P 'after'
  wait_grep 'after' out
  kill "$f"
  wait "$f" || true
  # what was printed is the entries as the file holds them, each once
  sed -n '/^## 2025-01-11 - b1$/,$p' $P >expected
  sed -n '/^## 2025-01-11 - b1$/,$p' out >got
  cmp expected got
  [ "$(grep -c 'half' out)" = 1 ] && [ ! -s err ]
}

@test "--follow survives rotation: a new file is followed from its first entry, with a warning" {
  seed >$P
  progress-show -f -j --poll 0.05 $P >out 2>err &
  f=$!
  wait_grep '"id":"beads-124"' out
  mv $P old.md
  progress-append --id n1 --date 2025-01-20 $P 'in the new file'
  progress-append --id n2 --date 2025-01-21 $P 'and another'
  wait_grep '"id":"n2"' out
  kill "$f"
  wait "$f" || true
  run -0 grep -c '"id":"n1"' out
  assert_output 1
  grep -q "warning: '$P': replaced or truncated; following it from its first entry" err
}

@test "--follow: stdin and .gz cannot be followed; --id and --since choose the new entries too" {
  seed >$P
  run -2 progress-show --follow - <$P
  gzip -c $P >p.md.gz
  run -2 progress-show --follow p.md.gz
  progress-show -f --poll 0.05 -j --id keep $P >out &
  f=$!
  progress-append --id skip --date 2025-01-20 $P 'not this'
  progress-append --id keep --date 2025-01-21 $P 'this'
  wait_grep '"id":"keep"' out
  kill "$f"
  wait "$f" || true
  run -0 cat out
  assert_output '{"date":"2025-01-21","id":"keep","bullets":["this"],"files":[],"learning":[]}'
}

# issue 22: a gzip file of several members read as its last member only
@test "a .gz file of several members (gzip >>) reads as all of them" {
  seed >$P
  head -n 10 $P | gzip >$P.gz
  tail -n +11 $P | gzip >>$P.gz
  progress-show $P.gz >out
  cmp $P out
  cmp <(progress-show --last 1 $P.gz) <(progress-show --last 1 $P)
}

@test "issue 39: --since takes every date progress-append --date takes: a day, or an ISO 8601 time by its local day" {
  log_of 5  # b1..b5 dated 2025-01-11..2025-01-15
  run -0 progress-show --since 2025-01-14 $P
  want=$output
  TZ=UTC run -0 progress-show --since 2025-01-14T10:00:00+01:00 $P
  assert_equal "$output" "$want"
  TZ=UTC run -0 progress-show --since 2025-01-14T23:30:00Z $P
  assert_equal "$output" "$want"
  # 00:30 at +01:00 is still the 13th in UTC: b3 is in
  TZ=UTC run -0 progress-show --since 2025-01-14T00:30:00+01:00 $P
  [[ $output == *'- b3'* && $output == *'- b5'* && $output != *'- b2'* ]]
  # and the 14th in Tokyo
  TZ=Asia/Tokyo run -0 progress-show --since 2025-01-13T20:00:00Z $P
  assert_equal "$output" "$want"
  run -2 progress-show --since 2025-01-14T25:00:00Z $P
  run -2 progress-show --since 2025-01-14T10:00:00+1 $P
  run -2 progress-show --since 'next tuesday' $P
}

@test "issue 39: a device is refused at once (exit 4), never read" {
  run -4 --separate-stderr timeout 30 bash -c '[ -n "${LOOPKIT_SANITIZED:-}" ] || ulimit -v 4000000; progress-show /dev/zero'
  assert_equal "$stderr" "progress-show: cannot open '/dev/zero': is a device"
  run -4 timeout 30 bash -c '[ -n "${LOOPKIT_SANITIZED:-}" ] || ulimit -v 4000000; progress-show --last 1 - </dev/zero'
  run -4 timeout 30 bash -c '[ -n "${LOOPKIT_SANITIZED:-}" ] || ulimit -v 4000000; progress-show --follow /dev/zero'
}
