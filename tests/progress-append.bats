#!/usr/bin/env bats
# progress-append: the layout of 003_26e95c9e0dcadcb1.txt, one locked write
# per entry, all or nothing.
load helpers

P=progress-myfeature.md

# the seed's own example file (003_26e95c9e0dcadcb1.txt)
seed() { cat "$BATS_TEST_DIRNAME/fixtures/progress-myfeature.md"; }

first_two() {
  progress-append --verify 'npm test && npm run build' --id beads-123 --date 2025-01-10 \
    --files src/auth/login.ts,src/auth/middleware.ts \
    --learning 'Token refresh needs to handle concurrent requests' $P 'Implemented user authentication'
  progress-append --id beads-124 --date 2025-01-10 --files 'src/auth/reset.ts, src/email/templates/reset.html' \
    --learning 'Email templates should be tested with real SMTP' $P 'Added password reset flow'
}

# N writers at once, each appending M entries whose only bullet is SIZE bytes
# made from its own id; then every entry must be whole and present
concurrent() {
  local n=$1 m=$2 size=$3 w
  for w in $(seq "$n"); do
    (
      for i in $(seq "$m"); do
        id="w$w-$i"
        body=$(printf "%${size}s" '' | tr ' ' "${id: -1}")
        progress-append --no-sync --id "$id" --date 2025-01-12 $P "$id:$body" || exit 1
      done
    ) &
  done
  wait
}

check_entries() {
  local n=$1 m=$2 size=$3
  [ "$(grep -c '^## 2025-01-12 - ' $P)" -eq $((n * m)) ]
  run -0 awk -v size="$size" '
    /^## 2025-01-12 - / {
      id = substr($0, 17); seen[id]++
      getline a; getline blank; getline rule
      prefix = "- " id ":"; body = substr(a, length(prefix) + 1)
      whole = substr(a, 1, length(prefix)) == prefix && gsub(substr(id, length(id)), "", body) == size && body == ""
      if (!whole || blank != "" || rule != "---") { print "torn: " id; bad++ }
    }
    END { for (id in seen) if (seen[id] != 1) { print "twice: " id; bad++ }; exit bad > 0 }' $P
}

@test "the first append writes the seed's header and entry, the next only its entry" {
  first_two
  diff <(seed) $P
}

@test "with no LINE, --id or --pattern it only creates the file" {
  run -0 progress-append --verify 'npm test && npm run build' $P
  diff <(seed | head -n 8) $P
  # ... and leaves an existing one alone
  first_two
  cp $P before
  run -0 progress-append --verify other --session other $P
  cmp before $P
}

@test "a new file without --verify says Verify: (none), as the seed's generated files do" {
  progress-append progress-x.md
  [ "$(sed -n 3p progress-x.md)" = 'Verify: (none)' ]
}

@test "the session name comes from --session, progress-NAME.md or the file name" {
  mkdir -p .claude/pipeline-runs/auth
  progress-append .claude/pipeline-runs/auth/progress-auth.md
  [ "$(head -n 1 .claude/pipeline-runs/auth/progress-auth.md)" = '# Progress: auth' ]
  progress-append notes.md
  [ "$(head -n 1 notes.md)" = '# Progress: notes' ]
  progress-append --session given progress-other.md
  [ "$(head -n 1 progress-other.md)" = '# Progress: given' ]
}

@test "bullets from arguments and stdin; '- ' lines kept, blank lines dropped" {
  progress-append $P
  printf 'from stdin\n\n- already a bullet\n' | progress-append --id b1 --date 2025-01-11 $P 'first' - 'two
lines'
  expected='
## 2025-01-11 - b1
- first
- from stdin
- already a bullet
- two
- lines

---'
  [ "$(tail -n 9 $P)" = "$expected" ]
}

@test "Files and Learning bullets follow the lines; both options repeat" {
  progress-append --id b1 --date 2025-01-11 --files a.c --files 'b.c, c.c' --learning 'one, two' --learning three $P 'did it'
  run -0 tail -n 6 $P
  assert_output '- did it
- Files: a.c, b.c, c.c
- Learning: one, two
- Learning: three

---'
}

@test "an entry without --id has the heading '## DATE'" {
  progress-append --date 2025-01-11 $P 'no id'
  grep -qx '## 2025-01-11' $P
}

@test "the date defaults to today in local time, LOOPKIT_NOW honoured" {
  LOOPKIT_NOW=1736550000 progress-append --id utc $P x                 # 2025-01-10T23:00:00Z
  LOOPKIT_NOW=1736550000 TZ=Asia/Tokyo progress-append --id tokyo $P x # already the 11th there
  grep -qx '## 2025-01-10 - utc' $P
  grep -qx '## 2025-01-11 - tokyo' $P
}

@test "issue 39: --date takes what progress-show --since takes: a day, or an ISO 8601 time by its local day" {
  TZ=UTC progress-append --id a --date 2026-01-10T10:00:00+01:00 $P x
  TZ=UTC progress-append --id b --date 2026-01-10T00:30:00+01:00 $P x  # 23:30 UTC the day before
  TZ=Asia/Tokyo progress-append --id c --date 2026-01-10T20:00:00Z $P x
  grep -qx '## 2026-01-10 - a' $P
  grep -qx '## 2026-01-09 - b' $P
  grep -qx '## 2026-01-11 - c' $P
  run -2 progress-append --id d --date 2026-01-10T10:00 $P x
  run -2 progress-append --id d --date 2026-01-10T10:00:00+24:00 $P x
  ! grep -q ' - d$' $P
}

@test "usage errors change nothing" {
  first_two
  cp $P before
  run -2 --separate-stderr progress-append --date 2025-02-30 --id x $P
  assert_equal "$stderr" "progress-append: --date: not a date YYYY-MM-DD or an ISO 8601 time: '2025-02-30'"
  run -2 progress-append
  run -2 progress-append --id x - - </dev/null
  run -2 progress-append --bogus $P
  run -2 progress-append --date 2025-01-10 --id x missing.md --date
  cmp before $P
  [ ! -e missing.md ]
}

@test "appending after a blank last line or a missing final newline keeps the layout" {
  printf '# Progress: s\n\nVerify: (none)\n\n## Codebase Patterns\n(Add patterns discovered during implementation here)\n\n---\n\n' >a.md
  progress-append --id x --date 2025-01-11 a.md one
  [ "$(tail -n 5 a.md)" = $'\n## 2025-01-11 - x\n- one\n\n---' ]
  [ "$(grep -c '^$' a.md)" -eq 5 ]
  # no "---" line at the end: closed first, or the entry would be read as part of it
  printf 'hand written' >b.md
  progress-append --id y --date 2025-01-11 b.md two
  [ "$(cat b.md)" = $'hand written\n\n---\n\n## 2025-01-11 - y\n- two\n\n---' ]
  run -0 progress-show --json --id y b.md
}

@test "an append reads at most the last 64 bytes of the file" {
  need_strace
  first_two
  for i in $(seq 2000); do printf '\n## 2025-01-11 - f%s\n- filler entry number %s\n\n---\n' $i $i; done >>$P
  strace -o trace -P $P -e trace=read,pread64 progress-append --id z --date 2025-01-12 $P last
  run -0 awk '/^(read|pread64)\(/ { n = $NF; if (n > 0) total += n } END { print total + 0 }' trace
  [ "$output" -le 64 ]
  [ "$(tail -n 1 $P)" = '---' ]
}

@test "16 concurrent appenders: every entry whole, none lost" {
  progress-append $P
  concurrent 16 12 60
  check_entries 16 12 60
  [ "$(grep -c '^# Progress:' $P)" -eq 1 ]
}

@test "16 concurrent appenders of entries over 8 KiB: every entry whole" {
  progress-append $P
  concurrent 16 4 9000
  check_entries 16 4 9000
}

@test "racing first appenders write one header" {
  concurrent 16 1 10
  check_entries 16 1 10
  [ "$(grep -c '^# Progress: myfeature$' $P)" -eq 1 ]
  [ "$(head -n 1 $P)" = '# Progress: myfeature' ]
}

@test "--pattern adds under Codebase Patterns, in order, entries untouched" {
  first_two
  progress-append --pattern 'Wrap handlers in withAuth()' $P
  progress-append --pattern 'Run the linter' --id b3 --date 2025-01-11 $P 'with an entry'
  run -0 sed -n 5,10p $P
  assert_output '## Codebase Patterns
(Patterns discovered during implementation)
- Wrap handlers in withAuth()
- Run the linter

---'
  diff <(seed | tail -n +9) <(sed -n '11,$p' $P | head -n 14)
  [ "$(tail -n 4 $P)" = $'## 2025-01-11 - b3\n- with an entry\n\n---' ]
}

@test "--pattern on a missing file creates it with the pattern" {
  progress-append --verify 'npm test && npm run build' --pattern 'p one' $P
  diff <(seed | head -n 6; echo '- p one'; echo; echo ---) $P
}

@test "--pattern keeps the file's mode and a symlink a symlink" {
  first_two
  chmod 640 $P
  ln -s $P link.md
  progress-append --pattern p link.md
  progress-append --id b9 --date 2025-01-11 link.md through
  [ -L link.md ]
  [ "$(stat -c %a $P)" = 640 ]
  grep -qx -- '- p' $P
  grep -qx -- '- through' $P
}

@test "a new file is created 0666 less the umask, as the shell's >> does" {
  umask 022
  progress-append $P
  [ "$(stat -c %a $P)" = 644 ]
}

@test "--pattern under concurrency loses neither entries nor patterns" {
  progress-append $P
  for w in $(seq 4); do
    (for i in $(seq 6); do progress-append --no-sync --pattern "pattern $w-$i" $P || exit 1; done) &
  done
  concurrent 8 10 100
  wait
  check_entries 8 10 100
  for w in $(seq 4); do for i in $(seq 6); do
    run -0 awk -v want="- pattern $w-$i" '/^---$/ { exit } $0 == want { n++ } END { exit n != 1 }' $P
  done; done
  [ ! -e .$P.tmp ]
}

@test "a full disk during an append: exit 4, the log byte-identical" {
  need_strace
  first_two
  cp $P before
  rc=0
  strace -f -o /dev/null -e trace=write -e inject=write:error=ENOSPC:when=1 \
    progress-append --id b3 --date 2025-01-11 $P 'never written' 2>err || rc=$?
  [ "$rc" -eq 4 ]
  grep -q "progress-append: cannot append to '$P': No space left on device" err
  cmp before $P
}

@test "a full disk while creating a file: exit 4, no file left" {
  need_strace
  rc=0
  strace -f -o /dev/null -e trace=write -e inject=write:error=ENOSPC:when=1 \
    progress-append --id b1 --date 2025-01-11 $P 'never written' 2>/dev/null || rc=$?
  [ "$rc" -eq 4 ]
  [ ! -e $P ]
}

@test "a full disk during a --pattern rewrite: exit 4, the log byte-identical" {
  need_strace
  first_two
  cp $P before
  rc=0
  strace -f -o /dev/null -e trace=write -e inject=write:error=ENOSPC:when=1 \
    progress-append --pattern 'never written' $P 2>/dev/null || rc=$?
  [ "$rc" -eq 4 ]
  cmp before $P
  run -0 find . -maxdepth 1 -name '.*tmp*'
  assert_output ''
}

@test "a failing fsync takes the entry back" {
  need_strace
  first_two
  cp $P before
  rc=0
  strace -f -o /dev/null -e trace=fsync -e inject=fsync:error=EIO:when=1 \
    progress-append --id b3 --date 2025-01-11 $P 'taken back' 2>/dev/null || rc=$?
  [ "$rc" -eq 4 ]
  cmp before $P
}

@test "an unwritable file: exit 4 with the system's reason" {
  [ "$(id -u)" -ne 0 ] || skip "root can write anything"
  first_two
  chmod 444 $P
  run -4 --separate-stderr progress-append --id b3 --date 2025-01-11 $P x
  assert_equal "$stderr" "progress-append: cannot open '$P': Permission denied"
}

@test "a missing folder is not created: exit 4" {
  run -4 --separate-stderr progress-append nowhere/$P
  assert_equal "$stderr" "progress-append: cannot open 'nowhere/$P': No such file or directory"
}

@test "--template: a new file's header from a template, {session} {verify} {date} filled in" {
  printf '# Log of {session}\nVerify: {verify} ({date}) {kept}\n\n---' >t.md
  run -0 progress-append --template t.md --verify 'make test' --id x --date 2025-01-10 progress-demo.md 'did it'
  run -0 cat progress-demo.md
  assert_output $'# Log of demo\nVerify: make test (2025-01-10) {kept}\n\n---\n\n## 2025-01-10 - x\n- did it\n\n---'
  # only for a new file: an existing one keeps its header
  run -0 progress-append --template t.md --id y --date 2025-01-11 progress-demo.md 'more'
  run -0 head -n 1 progress-demo.md
  assert_output '# Log of demo'
  [ "$(grep -c '^# ' progress-demo.md)" = 1 ]
  # --pattern adds the patterns section a template may lack, before the first ---
  progress-append --template t.md --pattern 'P1' progress-p.md
  run -0 cat progress-p.md
  assert_output $'# Log of p\nVerify: (none) (2025-01-10) {kept}\n\n## Codebase Patterns\n- P1\n\n---'
  run -4 --separate-stderr progress-append --template missing.md x.md
  assert_equal "$stderr" "progress-append: cannot open 'missing.md': No such file or directory"
  [ ! -e x.md ]
}

@test "FILE '-' is a filter: the document on stdin, the result on stdout" {
  run -0 bash -c ': | progress-append --session s --id a --date 2025-01-10 - one | progress-append --date 2025-01-11 --pattern P - two'
  assert_output $'# Progress: s\n\nVerify: (none)\n\n## Codebase Patterns\n(Patterns discovered during implementation)\n- P\n\n---\n\n## 2025-01-10 - a\n- one\n\n---\n\n## 2025-01-11\n- two\n\n---'
  [ ! -e ./- ]
  run -2 --separate-stderr progress-append - - </dev/null
  assert_equal "$stderr" "progress-append: standard input cannot be both FILE and a LINE: give FILE a name"
}

@test "piped text without '-' is not read, and a warning says so" {
  run -0 --separate-stderr bash -c 'echo "lost line" | progress-append p.md'
  assert_equal "$stderr" "progress-append: warning: standard input is not read without '-': give '-' as a LINE to append its lines"
  ! grep -q 'lost line' p.md
  # nothing said for a terminal-less empty stdin, or when there is an entry
  run -0 --separate-stderr progress-append p.md </dev/null
  [ -z "$stderr" ]
  run -0 --separate-stderr bash -c 'echo x | progress-append --id a p.md done'
  [ -z "$stderr" ]
}

# issue 22, one commit: after the append or rename nothing may say "unchanged"
@test "a failed folder sync after the change is a warning, exit 0: --pattern, and creating the file" {
  need_strace
  first_two
  run -0 --separate-stderr strace -f -o /dev/null -e trace=fsync -e inject=fsync:error=EIO:when=2 \
    progress-append --pattern 'once only' $P
  assert_equal "$stderr" "progress-append: warning: cannot sync folder '.': Input/output error"
  assert_equal "$(grep -c 'once only' $P)" 1
  run -0 --separate-stderr strace -f -o /dev/null -e trace=fsync -e inject=fsync:error=EIO:when=2 \
    progress-append --id n1 --date 2025-01-11 new.md 'first entry'
  assert_equal "$stderr" "progress-append: warning: cannot sync folder '.': Input/output error"
  assert_equal "$(grep -c 'first entry' new.md)" 1
  run -0 --separate-stderr strace -f -o /dev/null -e trace=fsync -e inject=fsync:error=EIO:when=2 \
    progress-append --pattern 'made here' --id n1 --date 2025-01-11 new2.md 'second'
  assert_equal "$(grep -c 'made here' new2.md)" 1
  assert_equal "$(ls -A | grep -c tmp)" 0
}

# issue 22, one way to open: bash's >> is refused there under fs.protected_symlinks
@test "a link another user planted in a sticky folder is refused, and a dangling one creates nothing" {
  [ "$(id -u)" = 0 ] || skip "needs root to give a link to another user"
  mkdir -m 1777 shared
  echo 'mine' >victim.md
  ln -s ../victim.md shared/p.md
  ln -s ../planted.md shared/d.md
  chown -h 65534 shared/p.md shared/d.md
  for f in p d; do
    run -4 --separate-stderr progress-append "shared/$f.md" x
    assert_equal "$stderr" \
      "progress-append: cannot follow 'shared/$f.md': a symbolic link of another user in a sticky world-writable folder"
    run -4 progress-append --pattern y "shared/$f.md"
  done
  run -4 progress-show shared/p.md
  assert_equal "$(cat victim.md)" mine
  [ ! -e planted.md ]
  ln -s ../victim.md shared/own.md
  run -0 progress-append shared/own.md z
  grep -q '^- z' victim.md
}

# issue 22: an entry torn by a kill swallowed every later one
@test "after a kill -9 mid-entry: the torn entry is closed, every later entry is found" {
  first_two
  printf '\n## 2025-01-11 - torn\n- half a bul' >>$P # what a killed appender leaves
  progress-append --id next --date 2025-01-12 $P 'after the crash'
  progress-append --id later --date 2025-01-13 $P 'and later'
  run -0 progress-show --id next $P
  assert_output --partial $'## 2025-01-12 - next\n- after the crash\n\n---'
  run -0 progress-show --json --last 3 $P
  assert_output '{"date":"2025-01-11","id":"torn","bullets":["half a bul"],"files":[],"learning":[]}
{"date":"2025-01-12","id":"next","bullets":["after the crash"],"files":[],"learning":[]}
{"date":"2025-01-13","id":"later","bullets":["and later"],"files":[],"learning":[]}'
  # torn right after its heading, and with --pattern (the rewrite) too
  printf '\n## 2025-01-14 - torn2\n' >>$P
  progress-append --pattern 'a pattern' --id p --date 2025-01-15 $P 'with a pattern'
  run -0 progress-show --json --id p $P
  [ "${#lines[@]}" = 1 ]
  # a filter closes it the same way
  run -0 bash -c "printf '# P\n\n---\n\n## 2025-01-10 - t\n- x' | progress-append --id f --date 2025-01-16 - y"
  assert_output $'# P\n\n---\n\n## 2025-01-10 - t\n- x\n\n---\n\n## 2025-01-16 - f\n- y\n\n---'
}

@test "issue 24: the default date in zones a day apart near midnight UTC, read without glibc's time zone code" {
  [[ -e /usr/share/zoneinfo/Pacific/Kiritimati ]] || skip "tzdata is not installed"
  for now in 1736467200 1736553599; do # 2025-01-10T00:00:00Z, 2025-01-10T23:59:59Z
    LOOPKIT_NOW=$now TZ=Pacific/Kiritimati progress-append --id "kiritimati-$now" $P x # UTC+14
    LOOPKIT_NOW=$now TZ=:Etc/GMT+12 progress-append --id "gmt+12-$now" $P x           # UTC-12
    LOOPKIT_NOW=$now TZ='<+14>-14' progress-append --id "posix+14-$now" $P x
    LOOPKIT_NOW=$now TZ=AAA12 progress-append --id "posix-12-$now" $P x
  done
  for heading in '2025-01-10 - kiritimati-1736467200' '2025-01-11 - kiritimati-1736553599' \
    '2025-01-09 - gmt+12-1736467200' '2025-01-10 - gmt+12-1736553599' \
    '2025-01-10 - posix+14-1736467200' '2025-01-11 - posix+14-1736553599' \
    '2025-01-09 - posix-12-1736467200' '2025-01-10 - posix-12-1736553599'; do
    grep -qx "## $heading" $P
  done
  # New York's DST starts at 2025-03-09T07:00:00Z: midnight there is 05:00Z
  # before and 04:00Z after
  LOOPKIT_NOW=1741237199 TZ=America/New_York progress-append --id ny-winter $P x # 2025-03-06T04:59:59Z
  LOOPKIT_NOW=1741579200 TZ=America/New_York progress-append --id ny-summer $P x # 2025-03-10T04:00:00Z
  grep -qx '## 2025-03-05 - ny-winter' $P
  grep -qx '## 2025-03-10 - ny-summer' $P
}

@test "issue 24: TZ empty, naming no zone or a corrupt file: UTC; TZDIR is where names are found" {
  printf 'TZif2 but nothing after' >corrupt
  LOOPKIT_NOW=1736550000 TZ= progress-append --id empty $P x # 2025-01-10T23:00:00Z
  LOOPKIT_NOW=1736550000 TZ=No/Such_Zone progress-append --id missing $P x
  LOOPKIT_NOW=1736550000 TZ="$PWD/corrupt" progress-append --id corrupt $P x
  grep -qx '## 2025-01-10 - empty' $P
  grep -qx '## 2025-01-10 - missing' $P
  grep -qx '## 2025-01-10 - corrupt' $P
  [[ -e /usr/share/zoneinfo/Asia/Tokyo ]] || skip "tzdata is not installed"
  mkdir zones && cp /usr/share/zoneinfo/Asia/Tokyo zones/Here
  LOOPKIT_NOW=1736550000 TZDIR=$PWD/zones TZ=Here progress-append --id tzdir $P x
  grep -qx '## 2025-01-11 - tzdir' $P
}

# issue 39: ulimit -f is a full disk: exit 4 with the file as it was
@test "ulimit -f: an append at the limit is exit 4, the file unchanged" {
  progress-append p.md x
  size=$(stat -c %s p.md)
  rm p.md
  progress-append p.md "$(head -c $((1 + 1024 - size)) /dev/zero | tr '\0' x)"
  assert_equal "$(stat -c %s p.md)" 1024
  cp p.md before
  run -4 --separate-stderr bash -c 'ulimit -f 1; progress-append p.md more'
  assert_equal "$stderr" "progress-append: cannot append to 'p.md': File too large"
  cmp p.md before
}

@test "issue 39: a progress file named .gz is written gzip, every entry and pattern kept; progress-show reads it" {
  progress-append --id b1 --date 2025-01-10 p.md.gz 'first'
  gzip -t p.md.gz
  progress-append --id b2 --date 2025-01-11 --pattern 'use the cache' p.md.gz 'second'
  gzip -t p.md.gz
  run -0 progress-show --json p.md.gz
  assert_equal "$(jq -c '[.id, .date]' <<<"$output" | tr '\n' ' ')" '["b1","2025-01-10"] ["b2","2025-01-11"] '
  gzip -dc p.md.gz | grep -qx -- '- use the cache'
  # as the plain file would read, byte for byte
  progress-append --id b1 --date 2025-01-10 p.md 'first'
  progress-append --id b2 --date 2025-01-11 --pattern 'use the cache' p.md 'second'
  assert_equal "$(gzip -dc p.md.gz)" "$(cat p.md)"
  printf 'plain\n' >bad.md.gz
  run -3 progress-append --id x bad.md.gz y
  assert_equal "$(cat bad.md.gz)" plain
}
