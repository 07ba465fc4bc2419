#!/usr/bin/env bats
# state-set: edits, layout, atomicity and every failure path.
load helpers

doc() {
  cat >state.json <<'JSON'
{
  "version": 1,
  "status": "running",
  "total_cost": 1.0,
  "history": {}
}
JSON
}

@test "assignments apply in command-line order with --delete, --now and --epoch" {
  doc
  run -0 state-set state.json 'h[]:={"i":1}' --now 'h[-1].at' status=x --delete status --epoch e
  run -1 --separate-stderr state-get --json state.json '.h[0]' e status
  assert_line -n 0 '{"i":1,"at":"2025-01-10T10:05:30Z"}'
  assert_line -n 1 1736503530
}

@test "values with commas and odd history keys" {
  doc
  run -0 state-set state.json 'tags[]=a,b' '.history["bd.7"].attempts+=1' 'history.bd-001.status=done'
  run -0 state-get state.json '.tags[0]' '.history["bd.7"].attempts' '.history.bd-001.status'
  assert_output $'a,b\n1\ndone'
}

@test "--init, --mode and --no-create for new files" {
  run -0 state-set --init '{"version":1}' --mode 640 new.json a=1
  [ "$(stat -c %a new.json)" = 640 ]
  run -0 state-get new.json version
  run -2 state-set --init '{bad' other.json a=1
  run -1 --separate-stderr state-set --no-create absent.json a=1
  [[ $stderr == *"'absent.json': no such file"* ]]
}

@test "--expect compares before any edit; missing reads as null" {
  doc
  run -0 state-set --expect 'nothing:=null' --expect version:=1 state.json status=paused
  run -1 --separate-stderr state-set --expect status=running state.json status=x
  [[ $stderr == *'status is "paused", expected "running"'* ]]
  run -1 --separate-stderr state-set -q --expect status=running state.json status=x
  [ -z "$stderr" ]
}

@test "--compact and --indent rewrite the layout, keeping number spellings" {
  doc
  run -0 state-set --compact state.json status=a
  [ "$(cat state.json)" = '{"version":1,"status":"a","total_cost":1.0,"history":{}}' ]
  run -0 state-set --indent 4 state.json status=b
  grep -q '^    "total_cost": 1.0,$' state.json
}

@test "a no-op changes nothing on disk" {
  doc
  touch -d '2020-01-01' state.json
  run -0 state-set state.json status=running
  [ "$(stat -c %Y state.json)" = "$(date -d 2020-01-01 +%s)" ]
}

@test "--redact keeps secrets out of the file and warns" {
  run -0 --separate-stderr state-set --redact s.json 'token=ghp_abcdefghijklmnopqrstuvwxyz0123456789' plain=hello
  ! grep -q ghp_ s.json
  grep -q REDACTED s.json
  run -0 state-get s.json plain
  assert_output hello
  [[ $stderr == *warning* && $stderr != *ghp_* ]]
  run -0 --separate-stderr state-set --redact s.json configuration.api_key=xyz-not-a-pattern
  run -0 state-get s.json configuration.api_key
  assert_output '[REDACTED]'
  [[ $stderr != *xyz-not-a-pattern* ]]
}

@test "text that is not UTF-8 is refused: the file could not be read back" {
  run -2 state-set s.json $'a=\xff'
  [ ! -e s.json ]
}

@test "--stream with --debounce writes on end of input without waiting" {
  SECONDS=0
  printf 'a=1\nb:=2\n--delete a\n# comment\n\n--now t\n' | state-set --stream --debounce 100 s.json
  [ "$SECONDS" -lt 50 ]
  run -0 state-get s.json b t
  assert_output $'2\n2025-01-10T10:05:30Z'
  run -1 state-get s.json a
}

@test "--stream flushes what it has read on SIGTERM" {
  mkfifo in
  state-set --stream --debounce 1000 s.json <in & pid=$!
  exec {fd}>in
  echo 'a=1' >&"$fd"
  for _ in $(seq 100); do [ "$(state-get -d '' s.json a)" = 1 ] && break; sleep 0.05; done
  echo 'b=2' >&"$fd"
  kill -TERM "$pid"
  rc=0; wait "$pid" || rc=$?
  exec {fd}>&-
  [ "$rc" -eq 0 ]
  run -0 state-get s.json a b
  assert_output $'1\n2'
}

@test "--stream: a bad line is a usage error after the good lines are kept" {
  rc=0; printf 'a=1\nnot an assignment\nb=2\n' | state-set --stream s.json || rc=$?
  [ "$rc" -eq 2 ]
  run -0 state-get s.json a
  run -1 state-get s.json b
}

@test "concurrent writers and readers: no lost update, no partial read" {
  printf '{"count": 0, "pad": "%s"}\n' "$(head -c 200000 /dev/zero | tr '\0' x)" >c.json
  for w in 1 2 3 4; do
    ( for i in $(seq 25); do state-set c.json count+=1 || exit 1; done ) &
  done
  ( for i in $(seq 60); do state-get c.json count >/dev/null || { echo torn >>torn; exit 1; }; done ) &
  wait
  [ ! -e torn ]
  ls -A
  run -0 state-get c.json count
  assert_output 100
  [ "$(ls -A | sort | tr '\n' ' ')" = "c.json " ]
}

@test "every fixture survives a set and a set back, byte for byte" {
  for f in "$LOOPKIT_SOURCE"/tests/fixtures/state/*.json; do
    cp "$f" t.json
    # the first member that holds a scalar
    key="" old=""
    while IFS= read -r k; do
      v=$(state-get --json t.json ".[\"$k\"]")
      case $v in "{"* | "["*) ;; *) key=$k old=$v; break ;; esac
    done < <(state-get -k t.json 2>/dev/null || true)
    [ -n "$key" ] || continue
    state-set t.json ".[\"$key\"]=loopkit-probe"
    [ "$(state-get t.json ".[\"$key\"]")" = loopkit-probe ]
    if [ "$(wc -l <"$f")" -gt 2 ]; then
      changed=$(diff "$f" t.json | grep -c '^[<>]' || true)
      [ "$changed" -eq 2 ] || { echo "$f: $changed lines changed"; diff "$f" t.json; false; }
    fi
    state-set t.json ".[\"$key\"]:=$old"
    cmp "$f" t.json || { echo "$f did not come back"; false; }
  done
}

@test "a corrupt file is exit 3 with nothing touched; backup keeps the bad bytes" {
  cp "$LOOPKIT_SOURCE/tests/fixtures/state/atari_state_corrupt_truncated.statesink_test.json.txt" state.json
  cp state.json before
  run -3 state-set state.json status=running
  cmp state.json before
  run -0 --separate-stderr state-set --on-invalid backup --init '{"version":1}' state.json status=running
  [[ $stderr == *"state-set: warning: 'state.json': not valid JSON"*"state.json.backup"* ]]
  cmp state.json.backup before
}

@test "a version-less Atari file is reset by --require" {
  cp "$LOOPKIT_SOURCE/tests/fixtures/state/atari_state_v0_noversion.statesink_test.json" state.json
  run -0 state-set --require version:=1 --on-invalid backup --init '{"version":1}' state.json status=running
  run -0 state-get state.json version
  assert_output 1
  [ -e state.json.backup ]
}

@test "a failed write, fsync or rename is exit 4 and leaves the file and folder as they were" {
  need_strace
  doc
  cp state.json before
  for fault in write:error=ENOSPC:when=1 fsync:error=EIO rename:error=EXDEV; do
    rc=0; strace -f -o /dev/null -e inject="$fault" "$LOOPKIT_BIN/state-set" state.json status=x 2>err || rc=$?
    [ "$rc" -eq 4 ] || { echo "$fault: exit $rc"; cat err; false; }
    grep -q '^state-set: cannot ' err
    cmp state.json before
    [ "$(ls -A | sort | tr '\n' ' ')" = "before err state.json " ]
  done
}

@test "kill -9 in the middle of a write leaves the old document and one stray at most" {
  need_strace
  doc
  cp state.json before
  strace -f -o /dev/null -e inject=fsync:delay_enter=30000000 "$LOOPKIT_BIN/state-set" state.json status=x & pid=$!
  for _ in $(seq 200); do [ -e .state.json.tmp ] && break; sleep 0.05; done
  [ -e .state.json.tmp ]
  pkill -9 -f 'bin/state-set state.json status=x' || true
  kill -9 "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  cmp state.json before
  run -0 state-set state.json status=y
  [ "$(ls -A | sort | tr '\n' ' ')" = "before state.json " ]
  run -0 state-get state.json status
  assert_output y
}

@test "a folder where the file should be is exit 4" {
  mkdir dir.json
  run -4 state-set dir.json a=1
}

@test "a symlink to a missing file creates the target and keeps the link" {
  ln -s real.json link.json
  run -0 state-set link.json a=1
  [ -L link.json ]
  run -0 state-get real.json a
}
