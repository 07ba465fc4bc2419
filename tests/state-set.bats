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

@test "state-set: the no of --no-create and --expect is exit 1 in --stream too, and -q silences it" {
  run -1 --separate-stderr bash -c 'echo a=1 | state-set --stream --no-create absent.json'
  [[ $stderr == *"'absent.json': no such file"* ]]
  [ ! -e absent.json ]
  echo '{"s":"x"}' >s.json
  run -1 --separate-stderr bash -c 'echo a=1 | state-set -q --stream --expect s=y s.json'
  [ -z "$stderr" ]
  [ "$(cat s.json)" = '{"s":"x"}' ]
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
  for fault in write:error=ENOSPC:when=1 fsync:error=EIO rename,renameat,renameat2:error=EXDEV; do
    rc=0; strace -f -o /dev/null -e inject="$fault" "$LOOPKIT_BIN/state-set" state.json status=x 2>err || rc=$?
    [ "$rc" -eq 4 ] || { echo "$fault: exit $rc"; cat err; false; }
    grep -q '^state-set: cannot ' err
    cmp state.json before
    [ "$(ls -A | sort | tr '\n' ' ')" = "before err state.json " ]
  done
}

@test "kill -9 in the middle of a write leaves the old document and no stray" {
  need_strace
  doc
  cp state.json before
  strace -f -o /dev/null -e inject=fsync:delay_enter=30000000 "$LOOPKIT_BIN/state-set" state.json status=x & pid=$!
  # the new document is written to an unnamed file (O_TMPFILE): wait until
  # the writer holds it, then kill it there
  child=
  for _ in $(seq 200); do
    child=$(pgrep -P "$pid" || true)
    [ -n "$child" ] && ls -l "/proc/$child/fd" 2>/dev/null | grep -q '(deleted)' && break
    sleep 0.05
  done
  ls -l "/proc/$child/fd" | grep -q '(deleted)'
  kill -9 "$child" "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  cmp state.json before
  [ "$(ls -A | sort | tr '\n' ' ')" = "before state.json " ]
  run -0 state-set state.json status=y
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

# the path is resolved once (lib/sys/fs/at_file.hpp): the folder opened when
# the call starts is where it locks, looks again and renames
@test "a folder replaced by a symlink while state-set waits for the lock: the write lands beside the file read" {
  mkdir a planted
  printf '{"n":1}\n' >a/s.json
  exec 9<a/s.json
  flock -x 9
  state-set a/s.json n+=1 9<&- &
  local setter=$! i
  # until state-set waits for the flock held here (bounded: 30 s)
  for ((i = 0; i < 300; i++)); do
    grep -Eq "^[0-9]+: -> FLOCK +ADVISORY +WRITE +$setter " /proc/locks && break
    sleep 0.1
  done
  mv a moved
  ln -s planted a
  exec 9<&-
  wait $setter
  run -0 state-get moved/s.json n
  assert_output 2
  [ ! -e planted/s.json ]
}

# --- issue 9: exit 0 means the file reads back --------------------------------

# set FILE to the JSON in $1, run state-set on it with the rest, and print it
edit() {
  printf '%s' "$1" >s.json
  shift
  state-set s.json "$@"
}

@test "state-set: duplicate key b, edit b.d on {\"b\":[1],\"b\":{}} changes the last b only" {
  edit '{"b":[1],"b":{}}' 'b.d:=1'
  [ "$(cat s.json)" = '{"b":[1],"b":{"d":1}}' ]
  [ "$(state-get s.json b.d)" = 1 ]
}

@test "state-set: duplicate key b, append to b[] on {\"b\":{},\"b\":[1]} changes the last b, no crash" {
  edit '{"b":{},"b":[1]}' 'b[]:=2'
  [ "$(cat s.json)" = '{"b":{},"b":[1,2]}' ]
}

@test "state-set: duplicate key b, b.z on {\"b\":{\"x\":1},\"b\":{\"y\":2}} keeps the first b's x" {
  edit '{"b":{"x":1},"b":{"y":2}}' 'b.z:=3'
  [ "$(cat s.json)" = '{"b":{"x":1},"b":{"y":2,"z":3}}' ]
  run -0 state-get -k s.json b
  assert_output $'y\nz'
}

@test "state-set: duplicate key b, --compact and --indent keep the earlier copy, change the last" {
  edit '{"b":{"x":1},"c":2.0,"b":{"y":2}}' --compact 'b.z:=3'
  [ "$(cat s.json)" = '{"b":{"x":1},"c":2.0,"b":{"y":2,"z":3}}' ]
  edit '{"b": {"x": 1}, "b": [1]}' --indent 1 'b[]:=2'
  [ "$(tr -d ' \n' <s.json)" = '{"b":{"x":1},"b":[1,2]}' ]
}

@test "state-set: duplicate key b, --delete b removes every copy so that b reads as missing" {
  edit '{"b":1,"a":2,"b":3}' --delete b
  [ "$(cat s.json)" = '{"a":2}' ]
}

@test "state-set: duplicate key b, --expect and += read the last copy" {
  edit '{"b":1,"b":5}' --expect b:=5 'b+=1'
  [ "$(cat s.json)" = '{"b":1,"b":6}' ]
}

@test "state-set: number literal out of range is exit 2 in every form (:=, ?:=, []:=, +=, --init, --expect, --require, --stream)" {
  echo '{"a":1}' >s.json
  cp s.json before
  for args in 'a:=1e400' 'a?:=-1e400' 'l[]:=1e400' 'a+=1e400' 'a:={"x":[1e999]}' \
    '--expect a:=1e400 b=1' '--require a:=1e400 b=1'; do
    # shellcheck disable=SC2086
    run -2 state-set s.json $args
    cmp s.json before
  done
  run -2 state-set --init '{"a":1e400}' new.json b=1
  [ ! -e new.json ]
  run -2 bash -c 'echo "a:=1e400" | state-set --stream s.json'
  cmp s.json before
}

@test "state-set: a sum that overflows (1e308 + 1e308) is exit 3, nothing written" {
  edit '{"a":1e308}' 'a+=1e308' || rc=$?
  [ "${rc:-0}" -eq 3 ]
  [ "$(cat s.json)" = '{"a":1e308}' ]
}

@test "state-set: 0e400 and 1e-400 in a file read as 0, never NaN" {
  edit '{"a":0e400,"b":-0e400,"c":1e-400}' 'a+=1' 'c+=2'
  [ "$(cat s.json)" = '{"a":1,"b":-0e400,"c":2}' ]
  run -0 state-get s.json b
  assert_output '-0'
}

@test "state-set: a file holding a number out of range (1e400) is bad data, exit 3, untouched" {
  edit '{"a":1}' b=1
  printf '{"a":1e400}' >s.json
  run -3 --separate-stderr state-set s.json b=1
  [[ $stderr == *"number out of range"* ]]
  [ "$(cat s.json)" = '{"a":1e400}' ]
}

@test "state-set: a 30-digit integer and 1e2 keep their text exactly as given" {
  edit '{"z":0}' 'a:=123456789012345678901234567890' 'b:=1e2' 'c:=[1.0,-0,2.50]' 'd?:=1E+2' 'e[]:=0.10'
  [ "$(cat s.json)" = '{"z":0,"a":123456789012345678901234567890,"b":1e2,"c":[1.0,-0,2.50],"d":1E+2,"e":[0.10]}' ]
  run -0 state-get s.json a
  assert_output 123456789012345678901234567890
  rm s.json
  run -0 state-set --init '{"v":1.0,"w":123456789012345678901234567890}' s.json x=1
  grep -q '"v": 1.0,' s.json
  grep -q '"w": 123456789012345678901234567890,' s.json
}

@test "state-set: += on big integers is exact; past 64 bits the digits are kept" {
  edit '{"a":123456789012345678901234567890,"b":9223372036854775807,"c":18446744073709551615}' \
    'a+=1' 'b+=1' 'c+=1'
  [ "$(cat s.json)" = '{"a":123456789012345678901234567891,"b":9223372036854775808,"c":18446744073709551616}' ]
}

@test "state-set: a long decimal is read as its nearest double, so its sum is strtod's (jq's, Python's)" {
  edit '{"a":129223372036854775807345678901234.5678901234567890,"b":1123.5678109234567}' 'a+=1' 'b+=0'
  [ "$(cat s.json)" = '{"a":1.2922337203685477e+32,"b":1123.5678109234567}' ]
}

@test "state-set: --expect compares big integers by their digits" {
  edit '{"a":123456789012345678901234567890}' --expect 'a:=123456789012345678901234567890' b=1
  run -1 state-set s.json --expect 'a:=123456789012345678901234567891' b=2
  [ "$(state-get s.json b)" = 1 ]
}

@test "state-set: --expect and --require compare numbers by value, whatever their spelling" {
  edit '{"a":1e2,"b":2.0,"c":-0,"d":[0.5,{"e":100}]}' --expect 'a:=100' --expect 'b:=2' --expect 'c:=0' \
    --expect 'd:=[5e-1,{"e":1e2}]' --require 'a:=100.0' x=1
  [ "$(state-get s.json x)" = 1 ]
  run -1 state-set s.json --expect 'a:=100.5' x=2
  assert_output --partial "a is 100, expected 100.5"
  run -1 state-set s.json --expect 'b=2' x=2
  [ "$(state-get s.json x)" = 1 ]
}

@test "state-set: a member name that is not UTF-8 is exit 2 in every form, nothing written" {
  echo '{"a":1}' >s.json
  cp s.json before
  for bad in "$(printf 'k\xff')" "$(printf '["k\xff"]')" "$(printf 'k\xc0\x80')" \
    "$(printf 'k\xed\xa0\x80')" '["\ud800"]' '["\udc00x"]'; do
    run -2 state-set s.json "$bad:=1"
    run -2 state-set s.json --now "$bad"
    run -2 state-set s.json --epoch "$bad"
    run -2 state-set s.json --delete "$bad"
    run -2 state-set s.json --expect "$bad=1" a:=2
    run -2 bash -c 'printf "%s=1\n" "$1" | state-set --stream s.json' _ "$bad"
    cmp s.json before
  done
}

@test "state-set: a path deeper than the depth limit is exit 2 before anything is written" {
  echo '{}' >s.json
  cp s.json before
  deep=$(printf 'a.%.0s' $(seq 1000))
  run -2 state-set s.json "${deep}b:=1"
  run -2 state-set s.json "${deep%.}[]:=1"
  run -2 state-set s.json --now "${deep}b"
  cmp s.json before
  # 1000 levels is the limit itself, and reads back
  run -0 state-set s.json "${deep%.}:=1"
  run -0 state-get s.json "${deep%.}"
  assert_output 1
}

@test "state-set: a JSON value that would make the document too deep where it lands is exit 2" {
  echo '{}' >s.json
  nest=$(python3 -c 'print("[" * 999 + "]" * 999)')
  run -0 state-set s.json "a:=$nest"
  run -2 state-set s.json "a.b:=$nest"
  run -2 state-set s.json "l[]:=$nest"
  run -0 state-get s.json a
}

@test "state-set: a path of 60 000 segments and of 1 000 000 segments is a clean exit 2, no crash" {
  echo '{}' >s.json
  run -2 --separate-stderr state-set s.json "$(printf 'a.%.0s' $(seq 60000))b:=1"
  [[ $stderr == *"deeper than 1000 levels"* ]]
  run -2 state-set s.json --delete "$(printf '[0]%.0s' $(seq 40000))"
  python3 -c 'print("a." * 1000000 + "b:=1")' >long
  run -2 bash -c 'state-set --stream s.json <long'
  python3 -c 'print("[0]" * 1000000 + ":=1")' >long
  run -2 bash -c 'state-set --stream s.json <long'
  [ "$(cat s.json)" = '{}' ]
}

@test "state-set: edits apply in order, --delete a[0] then a[0]+=10 on [1,2,3] gives [12,3]" {
  edit '{"a":[1,2,3]}' --delete 'a[0]' 'a[0]+=10'
  [ "$(cat s.json)" = '{"a":[12,3]}' ]
}

@test "state-set: edits apply in order, a[]:=4 then a[-2]+=10 on [1,2,3] gives [1,2,13,4]" {
  edit '{"a":[1,2,3]}' 'a[]:=4' 'a[-2]+=10'
  [ "$(cat s.json)" = '{"a":[1,2,13,4]}' ]
  edit '{"a":{"b":1}}' --delete a 'a.c+=1' 'a.c+=1'
  [ "$(cat s.json)" = '{"a":{"c":2}}' ]
}

@test "state-set: --stream, each --now and --epoch line takes the time of its own line" {
  unset LOOPKIT_NOW
  mkfifo in
  state-set --stream s.json <in & pid=$!
  exec {fd}>in
  echo '--epoch t1' >&"$fd"
  wait_grep t1 s.json
  t1=$(state-get s.json t1)
  # wait (bounded) until the clock has passed the first line's second
  for _ in $(seq 100); do [ "$(date +%s)" -gt "$t1" ] && break; sleep 0.05; done
  echo '--epoch t2' >&"$fd"
  echo '--now iso' >&"$fd"
  exec {fd}>&-
  wait "$pid"
  t2=$(state-get s.json t2)
  [ "$t2" -gt "$t1" ]
  [ "$(state-get s.json iso)" = "$(date -u -d "@$t2" +%Y-%m-%dT%H:%M:%SZ)" ] ||
    [ "$(state-get s.json iso)" \> "$(date -u -d "@$t2" +%Y-%m-%dT%H:%M:%SZ)" ]
}

@test "state-set: --stream checks --expect once, on the file as found before its first write" {
  echo '{"status":"running"}' >s.json
  printf 'status=paused\nn:=1\nn:=2\n' | state-set --stream --expect status=running s.json
  [ "$(state-get s.json status n)" = $'paused\n2' ]
  # the file as found fails: nothing is written, exit 1
  run -1 bash -c 'printf "n:=3\n" | state-set --stream --expect status=running s.json'
  [ "$(state-get s.json n)" = 2 ]
}

@test "state-set: whatever is written reads back with the strict reader" {
  edit '{"a":[1,2,3],"b":{"c":1.0}}' 'a[1]:=1e2' 'b.d:=123456789012345678901234567890' \
    'e:="\u00e9\ud83d\ude00"' --delete 'a[0]' 'f[]:={"g":[0.5]}'
  run -0 state-get s.json .
  # a second strict reader: no NaN or Infinity, valid UTF-8
  run -0 python3 -c 'import json, sys; json.loads(open(sys.argv[1], "rb").read().decode("utf-8"), parse_constant=lambda c: sys.exit(1))' s.json
}

# needs lib/sys/fs/file.cpp's write_file_atomic to refuse a symlink when
# follow_symlink is false (exit 4), as agreed with its owner
@test "state-set: --on-invalid backup never writes through a symlink planted at FILE.backup (exit 4)" {
  printf '{bad' >state.json
  echo precious >target
  ln -s target state.json.backup
  run -4 state-set --on-invalid backup state.json a=1
  [ "$(cat target)" = precious ]
  [ -L state.json.backup ]
  [ "$(readlink state.json.backup)" = target ]
  [ "$(cat state.json)" = '{bad' ]
}

@test "--redact: a number or an object under a secret name is redacted, its shape kept" {
  run -0 --separate-stderr state-set --redact s.json 'password:=1234' 'db:={"password":{"a":"x1","n":[7]},"port":5432}'
  [[ $stderr != *1234* ]]
  run -0 state-get -j s.json password db.password.a db.password.n db.port
  assert_output $'"[REDACTED]"\n"[REDACTED]"\n["[REDACTED]"]\n5432'
}

# A file above the sizes where state-set maps without populating (32 MiB)
# and copies untouched slices in the kernel (1 MiB): every byte around the
# edits comes through, and nothing else changes.
@test "state-set: a 40 MB file keeps every untouched byte (mapped, slices copied by the kernel)" {
  python3 - <<'PY'
import json
items = ",\n".join('    {"i": %d, "note": "%s", "x": 1.50}' % (i, "n" * (i % 97)) for i in range(500000))
open("big.json", "w").write('{\n  "head": 1,\n  "items": [\n' + items + '\n  ],\n  "tail": 2.0\n}\n')
PY
  [ "$(stat -c %s big.json)" -gt 40000000 ]  # above 32 MiB
  cp big.json before.json
  run -0 state-set --no-sync big.json head+=1 'items[200000].x:=2' 'tail:=3.0' 'items[]:={"i":-1}'
  python3 - <<'PY'
old = open("before.json").read()
new = open("big.json").read()
want = old.replace('"head": 1,', '"head": 2,', 1)
k = want.index('{"i": 200000,')
e = want.index("}", k)
want = want[:k] + want[k:e].replace('"x": 1.50', '"x": 2') + want[e:]
want = want.replace('"tail": 2.0', '"tail": 3.0', 1)
want = want.replace('\n  ],\n  "tail"', ',\n    {\n      "i": -1\n    }\n  ],\n  "tail"', 1)
assert new == want, "differs at %d" % next(i for i, (a, b) in enumerate(zip(new, want)) if a != b)
PY
  run -0 state-get big.json '.items[-1].i' '.items[200000].x' '.items[499999].x'
  assert_output $'-1\n2\n1.5'
}

# A file of 4 to 32 MiB is read into huge pages, not mapped, where the
# kernel offers them: its bytes still stand at their file offsets, so the
# untouched slices are copied from the file and a bad one backed up whole.
@test "state-set: a 6 MB file keeps every untouched byte, and a bad one is backed up whole" {
  python3 -c 'print("{\"a\": 1, \"pad\": \"" + "x" * 6000000 + "\", \"z\": 2.50}")' >big.json
  cp big.json before
  run -0 state-set --no-sync big.json a:=5 'z+=1'
  sed -e 's/"a": 1,/"a": 5,/' -e 's/"z": 2.50}/"z": 3.5}/' before >want
  cmp big.json want
  run -0 state-get big.json a z
  assert_output $'5\n3.5'
  # invalid at the very end: the backup is the whole file, byte for byte
  { head -c -1 before; printf ',\n'; } >big.json
  cp big.json bad
  run -0 --separate-stderr state-set --on-invalid backup --init '{"v":1}' big.json a=2
  cmp big.json.backup bad
  run -0 state-get big.json .
  assert_output '{"v":1,"a":"2"}'
}

@test "state-set and state-get: a read error on a 6 MB file is exit 4, nothing written" {
  need_strace
  grep -qE '\[(always|madvise)\]' /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null ||
    skip "no transparent huge pages here: the file is mapped, not read"
  python3 -c 'print("{\"a\": 1, \"pad\": \"" + "x" * 6000000 + "\"}")' >big.json
  cp big.json before
  for tool in state-get state-set; do
    args=(a) && [ "$tool" = state-set ] && args=(a:=2)
    rc=0
    # -P: only the reads of big.json fail, not the dynamic loader's (sanitizer builds)
    strace -f -o /dev/null -P "$PWD/big.json" -e inject=pread64:error=EIO "$LOOPKIT_BIN/$tool" big.json "${args[@]}" 2>err ||
      rc=$?
    [ "$rc" -eq 4 ] || { echo "$tool: exit $rc"; cat err; false; }
    grep -q "^$tool: cannot read 'big.json': Input/output error" err
    cmp big.json before
  done
  [ "$(ls -A | sort | tr '\n' ' ')" = "before big.json err " ]
}

@test "state-set: 10 000 edits in one run apply in order, each seeing the last" {
  python3 -c 'import json; json.dump({"h": [{"i": i, "p": False} for i in range(20000)]}, open("s.json", "w"))'
  args=()
  for ((i = 0; i < 10000; i++)); do args+=("h[$((i * 2))].p:=true"); done
  # deletes move the elements that later edits name
  run -0 state-set s.json "${args[@]}" --delete 'h[0]' 'h[0].p:=7' 'h[-1].i+=1'
  python3 - <<'PY'
import json
d = json.load(open("s.json"))["h"]
assert len(d) == 19999
assert d[0] == {"i": 1, "p": 7}
assert d[1] == {"i": 2, "p": True} and d[2] == {"i": 3, "p": False}
assert d[-1] == {"i": 20000, "p": False}
PY
}

@test "state-set: --print and a plain run write the same bytes" {
  printf '{"a": 1.0,\n "b": [1, 2]}\n' >s.json
  cp s.json t.json
  run -0 state-set --print s.json 'b[]:=3' 'c=x'
  printed=$output
  run -0 state-set t.json 'b[]:=3' 'c=x'
  cmp s.json t.json
  [ "$printed" = "$(cat s.json)" ]
}

@test "state-set: a kernel copy that fails is exit 4, one that cannot copy falls back to write" {
  need_strace
  python3 -c 'print("{\"a\": 1, \"pad\": \"" + "x" * 3000000 + "\", \"z\": 2}")' >big.json
  cp big.json before
  # ENOSPC mid-copy: nothing replaced, no stray
  rc=0; strace -f -o /dev/null -e inject=copy_file_range:error=ENOSPC "$LOOPKIT_BIN/state-set" big.json a:=5 2>err || rc=$?
  [ "$rc" -eq 4 ] || { echo "exit $rc"; cat err; false; }
  grep -q "^state-set: cannot write 'big\.json': No space left on device" err
  cmp big.json before
  [ "$(ls -A | sort | tr '\n' ' ')" = "before big.json err " ]
  # EXDEV (another file system): the same bytes through write
  strace -f -o /dev/null -e inject=copy_file_range:error=EXDEV "$LOOPKIT_BIN/state-set" big.json a:=5
  sed 's/"a": 1,/"a": 5,/' before >want
  cmp big.json want
}

@test "state-set: appending to a layout whose commas start the lines writes one comma (fuzz finding edit-comma-first-append)" {
  printf '{\n  "a": 1\n  ,"b": {"c":1}\n}\n' >s.json
  run -0 state-set s.json 'x[]:=1' y:=2
  run -0 state-get s.json a b.c 'x[0]' y
  assert_output $'1\n1\n1\n2'
  printf '[\n  1\n  ,2\n]\n' >a.json
  run -0 state-set a.json '[]:=3'
  run -0 state-get a.json '[2]'
  assert_output 3
}

@test "--now PATH? and --epoch PATH?: the time only where it is missing or null, as ?=" {
  echo '{"started_at":"2025-01-01T00:00:00Z","done":null}' >s.json
  run -0 state-set s.json --now 'started_at?' --now 'done?' --epoch 'first?' --now stamped
  run -0 state-get --json s.json started_at done first stamped
  assert_output $'"2025-01-01T00:00:00Z"\n"2025-01-10T10:05:30Z"\n1736503530\n"2025-01-10T10:05:30Z"'
  # again: nothing that is set moves
  LOOPKIT_NOW=1736600000 run -0 state-set s.json --now 'started_at?' --epoch 'first?'
  run -0 state-get s.json started_at first
  assert_output $'2025-01-01T00:00:00Z\n1736503530'
  # in --stream lines too
  printf -- '--now late?\n--now done?\n' | state-set --stream s.json
  run -0 state-get s.json late done
  assert_output $'2025-01-10T10:05:30Z\n2025-01-10T10:05:30Z'
  run -2 state-set s.json --now '?'
}

@test "FILE '-' is a filter: the document from stdin, the result on stdout, no file" {
  run -0 --separate-stderr bash -c "printf '{\"a\": 1, \"b\": [1]}' | state-set - a+=1 'b[]:=2' --now t"
  assert_output '{"a": 2, "b": [1, 2], "t": "2025-01-10T10:05:30Z"}'
  [ -z "$stderr" ] && [ ! -e ./- ]
  # empty stdin reads as a missing file: {} or --init, or exit 1 with --no-create
  run -0 bash -c ': | state-set --compact - x=1'
  assert_output '{"x":"1"}'
  run -0 bash -c ": | state-set --init '{\"v\":1}' --compact - w:=2"
  assert_output '{"v":1,"w":2}'
  run -1 --separate-stderr bash -c ': | state-set --no-create - x=1'
  assert_equal "$stderr" "state-set: standard input is empty"
  # invalid JSON: exit 3, nothing on stdout
  run -3 --separate-stderr bash -c "echo '{' | state-set - x=1"
  assert_output ''
  # --expect says no as for a file
  run -1 --separate-stderr bash -c "echo '{\"a\":1}' | state-set - --expect a=2 x=1"
  assert_output ''
  assert_equal "$stderr" "state-set: 'standard input': a is 1, expected \"2\""
  # stdin is the document: no --stream; nothing to back up
  run -2 bash -c 'echo x=1 | state-set --stream -'
  run -2 bash -c "echo '{}' | state-set --on-invalid backup - x=1"
  # ./- is a file
  run -0 state-set ./- x=1
  [ -f ./- ]
}

@test "--arg NAME VALUE: keys from variables, never hand-escaped" {
  echo '{"history":{}}' >s.json
  run -0 state-set --arg id 'bd.1 "quoted" [x]' s.json '.history[$id].status=done' '.history[$id].n:=1'
  run -0 state-get --arg id 'bd.1 "quoted" [x]' s.json '.history[$id].status' '.history[$id].n'
  assert_output $'done\n1'
  run -0 state-set --arg id 'bd.1 "quoted" [x]' s.json --delete '.history[$id].n' --now '.history[$id].at'
  run -0 state-get -k s.json '.history["bd.1 \"quoted\" [x]"]'
  assert_output 'status
at'
  cp s.json before
  run -2 state-set s.json '.history[$undefined]=x'
  cmp s.json before
}

@test "PATH*=OBJECT merges as jq's *, keeping the bytes of every member it does not name" {
  printf '{\n  "cfg": {"x": 1,   "y": {"p": 1, "q": 2},  "z": [1]},\n  "other":   true\n}\n' >s.json
  run -0 state-set s.json 'cfg*={"y":{"q":3,"r":4},"z":{"w":1}}'
  run -0 cat s.json
  assert_output $'{\n  "cfg": {"x": 1,   "y": {"p": 1, "q": 3, "r": 4},  "z": {"w": 1}},\n  "other":   true\n}'
  # the result is jq's
  printf '{"x":1,"y":{"p":1,"q":2},"z":[1]}' | jq -c '. * {"y":{"q":3,"r":4},"z":{"w":1}}' >want
  run -0 state-get -j s.json cfg
  assert_output "$(cat want)"
  # a missing or null PATH is set; {} changes nothing and writes nothing
  echo '{"n":null}' >t.json
  run -0 state-set --compact t.json 'n*={"a":1}' 'm.k*={"b":[]}'
  run -0 cat t.json
  assert_output '{"n":{"a":1},"m":{"k":{"b":[]}}}'
  ino=$(stat -c %i t.json)
  run -0 state-set t.json 'n*={}'
  [ "$(stat -c %i t.json)" = "$ino" ]
  # the root: '.'
  run -0 state-set --compact t.json '.*={"top":1}'
  run -0 state-get t.json top
  assert_output 1
}

@test "PATH*=OBJECT: into a non-object is exit 3, an operand that is not an object exit 2, nothing written" {
  echo '{"s":"text","a":[1]}' >s.json
  cp s.json before
  run -3 --separate-stderr state-set s.json 's*={"k":1}'
  assert_equal "$stderr" "state-set: s: cannot merge into a string"
  run -3 state-set s.json 'a*={"k":1}'
  run -2 --separate-stderr state-set s.json 'o*=[1]'
  assert_equal "$stderr" "state-set: malformed assignment 'o*=[1]': *= takes a number or a JSON object"
  # issue 39: *= with a number multiplies, as jq's; o is missing, and null * 1 is jq's error too
  run -3 state-set s.json 'o*=1'
  run -2 state-set s.json 'a[]*={}'
  cmp s.json before
}

@test "issue 22: --delete '[\"\"]' removes only the member named \"\", never the rest (an empty --arg too)" {
  echo '{"a":1,"":2}' >s.json
  run -0 state-set s.json --delete '[""]'
  [ "$(cat s.json)" = '{"a":1}' ]
  # an empty $ID in --arg must not wipe the whole history
  echo '{"history":{"bd-1":{"n":1},"":{"n":0},"bd-2":{"n":2}},"keep":true}' >s.json
  run -0 state-set --arg id "" s.json --delete 'history[$id]'
  [ "$(cat s.json)" = '{"history":{"bd-1":{"n":1},"bd-2":{"n":2}},"keep":true}' ]
  # nothing named "": nothing deleted, nothing written
  ino=$(stat -c %i s.json)
  run -0 state-set --arg id "" s.json --delete 'history[$id]' --delete '.""'
  [ "$(stat -c %i s.json)" = "$ino" ]
  # every path form with an empty name: set, add, append, ?=, delete and back
  echo '{"a":1,"h":{"x":1}}' >s.json
  run -0 state-set s.json '[""]:=5' '.h[""]+=1' '."l"[""][]=v' '.h.""?=no' --arg e "" '[$e]+=1'
  [ "$(cat s.json)" = '{"a":1,"h":{"x":1,"":1},"":6,"l":{"":["v"]}}' ]
  run -0 state-set s.json --delete '.h.""' --delete 'l[""][0]'
  [ "$(cat s.json)" = '{"a":1,"h":{"x":1},"":6,"l":{"":[]}}' ]
  run -0 state-set s.json --delete 'h' '[""]:=7'
  [ "$(cat s.json)" = '{"a":1,"":7,"l":{"":[]}}' ]
}

@test "issue 22: --stream --debounce keeps the good lines batched before a bad one (n=3), as without --debounce" {
  for debounce in 0 5 1000; do
    echo '{"s":"text"}' >f
    run -3 --separate-stderr bash -c "printf 'n+=1\nn+=1\nn+=1\ns.x=1\nn+=1\n' | state-set --stream --debounce $debounce f"
    assert_equal "$stderr" "state-set: s.x: cannot set \"x\" in a string at '.s'"
    [ "$(cat f)" = '{"s":"text","n":3}' ]
  done
  # a line is all or nothing: the failing line's good words are left out with it
  echo '{"s":"text"}' >f
  run -3 bash -c "printf 'n+=1\nn+=10 s.x=1\nn+=100\n' | state-set --stream --debounce 5 f"
  [ "$(cat f)" = '{"s":"text","n":1}' ]
  # the first line failing writes nothing at all
  echo '{"s":"text"}' >f
  cp f before
  run -3 bash -c "printf 's.x=1\nn+=1\n' | state-set --stream --debounce 5 f"
  cmp f before
}

@test "issue 22: a new file (or one reset) meets its own --require; a contradicting --init is exit 2" {
  run -0 state-set --require version:=1 --on-invalid backup --compact q.json iteration+=1
  [ "$(cat q.json)" = '{"version":1,"iteration":1}' ]
  # so the next run is no reset: no backup, the count goes on
  run -0 --separate-stderr state-set --require version:=1 --on-invalid backup --compact q.json iteration+=1
  [ -z "$stderr" ]
  [ ! -e q.json.backup ]
  [ "$(cat q.json)" = '{"version":1,"iteration":2}' ]
  # a reset document gets them too
  echo '{"version":0,"iteration":7}' >q.json
  run -0 state-set --require version:=1 --on-invalid backup --init '{"a":{}}' --compact q.json iteration+=1 \
    --require 'a.schema:="v1"'
  [ "$(cat q.json)" = '{"a":{"schema":"v1"},"version":1,"iteration":1}' ]
  [ "$(cat q.json.backup)" = '{"version":0,"iteration":7}' ]
  # --init holding another value: the caller contradicts itself, nothing written
  rm q.json
  run -2 --separate-stderr state-set --require version:=1 --init '{"version":2}' q.json a=1
  assert_equal "$stderr" "state-set: --init holds 2 at version, but --require asks for 1"
  [ ! -e q.json ]
  # in a filter too
  run -0 bash -c "printf '' | state-set --require v:=1 --compact - x=1"
  assert_output '{"v":1,"x":"1"}'
}

@test "issue 23: += adds decimals as a person does: 0.1 + 0.2 is 0.3, totals stay exact" {
  run -0 state-set q.json f:=0.1
  run -0 state-set q.json f+=0.2
  run -0 state-get q.json f
  assert_output 0.3
  echo '{"total_cost":2.08}' >c.json
  run -0 state-set c.json total_cost+=0.1
  [ "$(cat c.json)" = '{"total_cost":2.18}' ]
  for _ in 1 2 3 4 5 6 7 8 9 10; do state-set c.json total_cost+=0.01; done
  [ "$(cat c.json)" = '{"total_cost":2.28}' ]
  run -0 state-set c.json total_cost+=-2.28 n+=1.5 n+=1.5 m+=1e-7
  [ "$(cat c.json)" = '{"total_cost":0,"n":3,"m":1e-07}' ]
  # integers stay exact integers; past 34 significant digits, doubles as before
  echo '{"i":123456789012345678901234567890,"d":0.1}' >c.json
  run -0 state-set c.json i+=1 d+=0.00000000000000000000000000000000001
  [ "$(cat c.json)" = '{"i":123456789012345678901234567891,"d":0.1}' ]
  # --stream sums the same way
  echo '{"g":1}' >c.json
  printf 'f+=0.1\nf+=0.2\n' | state-set --stream --debounce 5 c.json
  [ "$(cat c.json)" = '{"g":1,"f":0.3}' ]
}

@test "issue 22: --stream reads what printf %q writes as bash does, \$'...' escapes included" {
  run -0 bash -c "printf '%q\n' \$'note=a\nb' | state-set --stream s.json"
  run -0 state-get -j s.json note
  assert_output '"a\nb"'
  run -1 state-get s.json '["$note"]'
  # every value read back exactly as bash gave it to printf %q
  values=($'a\nb' "it's" 'x y' '$HOME' '~/x' 'a=~' '{a,b}' 'a;b' '#x' 'é' $'\t' '*' '[x]' '\' '"q"' $'\x01' '`id`' '' \
    'a&b|c<d>e(f)' '$(id)' "\$'x'")
  for v in "${values[@]}"; do
    rm -f s.json
    printf '%q %q\n' "v=$v" "k[]=$v" | state-set --stream s.json
    run -0 state-get -j s.json v 'k[0]'
    assert_output "$(jq -n --arg v "$v" '$v, $v')"
  done
  # bash's other quotes: $"..." as "...", escapes of $'...' (octal, hex, \u, \c)
  printf '%s\n' '$"x"y=1' "o=\$'\\101\\x42\\u00e9\\U0001F600\\cA\\e\\z'" >lines
  state-set --stream s.json <lines
  run -0 state-get -j s.json xy o
  assert_output $'"1"\n"ABé😀\\u0001\\u001b\\\\z"'
  # '#' starting a word is a comment; quoted, it is a name
  printf '%s\n' 'c=1 # c=2' '# d=1' "'#e'=1" '\#f=1' >lines
  state-set --stream --compact s.json <lines
  run -0 state-get -j s.json c '["#e"]' '["#f"]'
  assert_output $'"1"\n"1"\n"1"'
  run -1 state-get s.json d
}

@test "issue 22: --stream refuses (exit 2) what bash would expand or split, after writing the lines before" {
  for line in 'x=$HOME' 'x=${HOME}' 'x=$(id)' 'x=`id`' 'x="$HOME"' 'x="`id`"' 'x=$1' 'x=a;b' 'x=a&b' 'x=a|b' \
    'x=a>b' 'x=a<b' 'x=(a)' '~x=1' 'x=~' 'x=a:~/b' 'x={a,b}' 'x:={"a":1,"b":2}' 'x={1..3}' 'x=a\' \
    "x=\$'a\\0b'" "x=\$'a\\x00'" "x=\$'\\ud800'" "x='a" 'x="a' "x=\$'a"; do
    echo '{}' >s.json
    run -2 --separate-stderr bash -c 'printf "ok=1\n%s\nlate=1\n" "$1" | state-set --stream --compact s.json' _ "$line"
    [[ $stderr == "state-set: "* ]]
    [ "$(cat s.json)" = '{"ok":"1"}' ]
  done
  # what bash keeps as written is taken as written
  echo '{}' >s.json
  printf '%s\n' 'a=$' 'b=5$' 'c=x~' 'n.x=~' 'd={}' 'e:=[1,2]' 'f=a,b' 'g=a{b}c' >lines
  state-set --stream --compact s.json <lines
  [ "$(cat s.json)" = '{"a":"$","b":"5$","c":"x~","n":{"x":"~"},"d":"{}","e":[1,2],"f":"a,b","g":"a{b}c"}' ]
}

@test "issue 22: --redact hides the secrets of the --init document too" {
  key=$(printf 'ghp_%s' abcdefghijklmnopqrstuvwxyz0123456789)
  run -0 --separate-stderr state-set --redact --init "{\"api_key\":\"xyz\",\"note\":\"use $key\",\"n\":1}" s.json n+=1
  [[ $stderr == *"redacted value of 'api_key' at .api_key in --init"* ]]
  [[ $stderr != *xyz* && $stderr != *"$key"* ]]
  ! grep -q -e xyz -e "$key" s.json
  run -0 state-get --json s.json api_key note n
  assert_output $'"[REDACTED]"\n"use [REDACTED]"\n2'
}

@test "issue 22: --redact with a sum under a secret name adds, exit 0, no message of the library's inside" {
  echo '{"password_attempts":1,"password":3}' >s.json
  run -0 --separate-stderr state-set --redact s.json password+=1 password_attempts+=1
  assert_equal "$stderr" ""
  run -0 state-get s.json password password_attempts
  assert_output $'4\n2'
  run -0 state-set --redact new.json password+=1
  run -0 state-get new.json password
  assert_output 1
}

# issue 22, one commit: after the rename nothing may say "unchanged"
@test "a failed folder sync after the rename is a warning, exit 0, the change made once" {
  need_strace
  echo '{"n":1}' >s.json
  run -0 --separate-stderr strace -f -o /dev/null -e trace=fsync -e inject=fsync:error=EIO:when=2 state-set s.json n+=1
  assert_equal "$stderr" "state-set: warning: cannot sync folder '.': Input/output error"
  run -0 state-get s.json n
  assert_output 2
  assert_equal "$(ls -A)" "s.json"
}

@test "-p with stdout closed after the write is a warning, exit 0; with nothing written it is exit 4" {
  echo '{"n":1}' >s.json
  run -0 --separate-stderr bash -c 'state-set -p s.json n+=1 >&-'
  assert_equal "$stderr" "state-set: warning: cannot write to standard output: Bad file descriptor"
  run -0 state-get s.json n
  assert_output 2
  run -4 --separate-stderr bash -c 'state-set -p s.json n+=0 >&-'
  assert_equal "$stderr" "state-set: cannot write to standard output: Bad file descriptor"
}

# issue 22, one way to open: the kernel's protected_symlinks rule
@test "a link of another user in a sticky world-writable folder is not followed, dangling or not" {
  [ "$(id -u)" = 0 ] || skip "needs root to give a link to another user"
  mkdir -m 1777 shared
  echo '{"mine":1}' >victim.json
  cp victim.json before
  ln -s ../victim.json shared/s.json
  ln -s ../planted.json shared/d.json
  chown -h 65534 shared/s.json shared/d.json
  for f in s d; do
    run -4 --separate-stderr state-set "shared/$f.json" a=1
    assert_equal "$stderr" \
      "state-set: cannot follow 'shared/$f.json': a symbolic link of another user in a sticky world-writable folder"
  done
  # readers apply the rule too (the kernel's only when fs.protected_symlinks is set)
  run -4 --separate-stderr state-get shared/s.json mine
  assert_equal "$stderr" \
    "state-get: cannot follow 'shared/s.json': a symbolic link of another user in a sticky world-writable folder"
  run -0 state-get <(echo '{"a":5}') a
  cmp victim.json before
  [ ! -e planted.json ]
  # our own link there is followed, as is another user's in a folder that is not sticky
  ln -s ../victim.json shared/own.json
  run -0 state-set shared/own.json a=1
  mkdir open && ln -s ../victim.json open/s.json && chown -h 65534 open/s.json
  run -0 state-set open/s.json b=1
  run -0 state-get victim.json a b
  assert_output $'1\n1'
}

# ---- --fence: written only while a lock is still held by its owner ----

@test "--fence: written while the lock is held by --pid; lock lost (exit 1, nothing written) once it is not" {
  echo '{"n":1}' >s.json
  lock-acquire --pid $$ locks/a.lock
  run -0 state-set --fence locks/a.lock --pid $$ s.json n+=1
  run -0 state-get s.json n
  assert_output 2
  lock-release --pid $$ locks/a.lock
  run -1 --separate-stderr state-set --fence locks/a.lock --pid $$ -p s.json n+=1
  assert_equal "$stderr" "state-set: 'locks/a.lock': lock lost"
  assert_output ""
  run -0 cat s.json
  assert_output '{"n":2}'
  # -q silences the answer, as for any "no"
  run -1 --separate-stderr state-set -q --fence locks/a.lock --pid $$ s.json n+=1
  assert_equal "$stderr" ""
}

@test "--fence: a lock taken over by another owner, or held for a dead one, is lost; a missing file is not created" {
  other=$(live)
  lock-acquire --pid "$other" locks/a.lock
  run -1 --separate-stderr state-set --fence locks/a.lock --pid $$ s.json n:=1
  assert_equal "$stderr" "state-set: 'locks/a.lock': lock lost"
  [[ ! -e s.json ]]
  # the owner named is dead: the lock it held is stale, it holds nothing
  gone=$(dead_pid)
  printf '{"session":"a","pid":%s,"host":"%s"}\n' "$gone" "$(hostname)" >locks/b.lock
  run -1 state-set --fence locks/b.lock --pid "$gone" s.json n:=1
  [[ ! -e s.json ]]
}

@test "--fence: checked on every call, also when the edit changes nothing (no-op write)" {
  echo '{"n":1}' >s.json
  mkdir -p locks
  # no lock file at all
  run -1 --separate-stderr state-set --fence locks/a.lock --pid $$ s.json n:=1
  assert_equal "$stderr" "state-set: 'locks/a.lock': lock lost"
  # another owner's lock: -p prints nothing either
  other=$(live)
  lock-acquire --pid "$other" locks/a.lock
  run -1 --separate-stderr state-set --fence locks/a.lock --pid $$ -p s.json n:=1
  assert_equal "$stderr" "state-set: 'locks/a.lock': lock lost"
  assert_output ""
  run -1 state-set --fence locks/a.lock --pid $$ --delete missing s.json
  lock-release --pid "$other" locks/a.lock
  # held by its owner: the no-op is exit 0, the file untouched
  lock-acquire --pid $$ locks/a.lock
  run -0 state-set --fence locks/a.lock --pid $$ s.json n:=1
  run -0 cat s.json
  assert_output '{"n":1}'
}

@test "--fence: the default owner is the calling shell, as for the lock tools" {
  echo '{}' >s.json
  # (not as the last command of bash -c, which bash would exec in its place)
  run -0 bash -c 'lock-acquire locks/a.lock && state-set --fence locks/a.lock s.json by=shell; rc=$?; lock-release locks/a.lock; exit $rc'
  run -0 state-get s.json by
  assert_output shell
  run -1 bash -c 'lock-acquire locks/a.lock && bash -c "state-set --fence locks/a.lock s.json by=child; exit \$?"; rc=$?; lock-release locks/a.lock; exit $rc'
  run -0 state-get s.json by
  assert_output shell
}

@test "--fence: --expect, --no-create and the edits are checked as usual; a stream stops at the first write after the loss" {
  echo '{"n":0}' >s.json
  lock-acquire --pid $$ locks/a.lock
  run -1 --separate-stderr state-set --fence locks/a.lock --pid $$ --expect n:=5 s.json n+=1
  assert_equal "$stderr" "state-set: 's.json': n is 0, expected 5"
  run -0 state-set --fence locks/a.lock --pid $$ s.json n+=1
  {
    echo n+=1
    wait_grep '"n":2' s.json
    lock-release --pid $$ locks/a.lock
    echo n+=10
  } | {
    run -1 --separate-stderr state-set --stream --fence locks/a.lock --pid $$ s.json
    assert_equal "$stderr" "state-set: 'locks/a.lock': lock lost"
  }
  run -0 state-get s.json n
  assert_output 2
}

@test "--fence: usage errors: standard input, a lock in another store, --pid alone (exit 2)" {
  run -2 --separate-stderr state-set --fence locks/a.lock - n:=1 <<<'{}'
  assert_equal "$stderr" "state-set: --fence needs a FILE to write, not standard input"
  run -2 --separate-stderr state-set --pid $$ s.json n:=1
  assert_equal "$stderr" "state-set: --pid names the owner of the --fence lock: give --fence LOCK too"
  run -2 --separate-stderr state-set --fence etcd://127.0.0.1:1/l s.json n:=1
  assert_equal "$stderr" "state-set: --fence 'etcd://127.0.0.1:1/l': a lock fences writes in its own store only (a lock file a file's, an etcd key those of keys on the same etcd)"
  [[ ! -e s.json ]]
}

@test "--fence: the lock folder's flock is held from the check to the rename, so no takeover or reap falls between" {
  need_strace
  echo '{"n":1}' >s.json
  lock-acquire --pid $$ locks/a.lock
  strace -y -o trace -e trace=flock,rename,renameat,renameat2,linkat,close \
    state-set --fence locks/a.lock --pid $$ s.json n+=1
  run -0 state-get s.json n
  assert_output 2
  # flock(FD</…/locks>, LOCK_EX) comes first, then s.json takes its new
  # text (rename or linkat), and only then is FD closed
  run -0 awk '
    /^flock\([0-9]+<[^>]*\/locks>, LOCK_EX/ { match($0, /^flock\([0-9]+/); fd = substr($0, 7, RLENGTH - 6) }
    fd != "" && /^(rename|linkat)/ && /s\.json/ { written = 1 }
    fd != "" && $0 ~ "^close\\(" fd "<" { print (written ? "held across the write" : "released before"); exit }
  ' trace
  assert_output "held across the write"
}

@test "--fence: a missing FILE in the lock's own folder is created, fenced (the folder's flock is taken once)" {
  lock-acquire --pid $$ state.json.lock
  run -0 timeout 20 state-set --fence state.json.lock --pid $$ state.json n:=1
  run -0 state-get state.json n
  assert_output 1
  lock-release --pid $$ state.json.lock
  rm state.json
  run -1 timeout 20 state-set --fence state.json.lock --pid $$ state.json n:=1
  [[ ! -e state.json ]]
}

@test "--fence under lock-acquire -- COMMAND: the owner is lock-acquire, the command's \$PPID" {
  echo '{"n":0}' >s.json
  run -0 lock-acquire locks/a.lock -- bash -c 'state-set --fence locks/a.lock --pid $PPID s.json n+=1; exit $?'
  run -0 state-get s.json n
  assert_output 1
  # the command's own shell holds nothing
  run -1 lock-acquire locks/a.lock -- bash -c 'state-set --fence locks/a.lock --pid $$ s.json n+=1; exit $?'
  run -0 state-get s.json n
  assert_output 1
}

@test "without /proc (a mount namespace hides it) the unnamed temporary file is copied to a named one: mode kept, nothing left" {
  [[ $EUID -eq 0 ]] && unshare -m true 2>/dev/null || skip "needs root and unshare -m"
  printf '{"a": 1}\n' >state.json
  chmod 640 state.json
  run -0 unshare -m sh -c 'mount -t tmpfs none /proc && exec "$@"' sh state-set state.json a+=1 b=x
  run -0 cat state.json
  assert_output '{"a": 2, "b": "x"}'
  assert_equal "$(stat -c %a state.json)" 640
  run -0 ls -A
  assert_output state.json
}

@test "issue 24: a .gz state file is written back by our own deflate: gzip -d reads it, as small as gzip -6 makes it" {
  # 2.5 MB: ids and hex that compress 2 to 1, and repeated text; more than
  # one block of each kind and more than the 32 KiB window
  python3 - >state.json <<'PY'
import json, random
random.seed(24)
history = [{"iteration": i, "id": "%016x" % random.getrandbits(64), "note": "step %d of the plan" % (i % 50),
            "blob": "%040x" % random.getrandbits(160)} for i in range(20000)]
print(json.dumps({"version": 1, "history": history}, indent=2))
PY
  gzip -6 -k state.json
  run -0 state-set state.json.gz status=done
  gzip -t state.json.gz
  gzip -dc state.json.gz >back.json
  python3 -c 'import json, sys; a = json.load(open("state.json")); a["status"] = "done"; sys.exit(a != json.load(open("back.json")))'
  gzip -6 -c back.json >ref.gz
  (($(stat -c %s state.json.gz) * 100 <= $(stat -c %s ref.gz) * 105))
}

# issue 39: the backup and the reset are one commit, both or neither
@test "--on-invalid backup: a write that fails (disk full, a rename) keeps the older backup and FILE; else both change" {
  need_strace
  echo 'older bad' >s.json.backup
  echo '{bad' >s.json
  cp s.json.backup b0
  cp s.json s0
  run -4 strace -f -o /dev/null -e trace=write -e inject=write:error=ENOSPC state-set --on-invalid backup s.json n:=1
  cmp s.json.backup b0
  cmp s.json s0
  # the second rename of the commit fails: on old code the backup was replaced by then
  for when in 1 2; do
    rc=0
    strace -f -o /dev/null -e trace=renameat,renameat2 -e inject=renameat:error=EIO:when=$when \
      state-set --on-invalid backup s.json n:=1 2>/dev/null || rc=$?
    if [ "$rc" = 4 ]; then
      cmp s.json.backup b0
      cmp s.json s0
    else
      assert_equal "$rc" 0
      cmp s.json.backup s0
      assert_equal "$(state-get s.json n)" 1
      echo '{bad' >s.json
      cp b0 s.json.backup
    fi
  done
  assert_equal "$(ls -A | sort | tr '\n' ' ')" "b0 s.json s.json.backup s0 "
  run -0 state-set --on-invalid backup s.json n:=1
  cmp s.json.backup s0
}

# issue 39: ulimit -f is a full disk, never SIGXFSZ
@test "ulimit -f: a write past the limit is exit 4 with the file unchanged, as a full disk" {
  echo '{"n":1}' >s.json
  cp s.json before
  big=$(head -c 3000 /dev/zero | tr '\0' x)
  run -4 --separate-stderr bash -c "ulimit -f 1; state-set s.json big=$big"
  [[ $stderr == "state-set: cannot write "*": File too large" ]]
  cmp s.json before
  # (with ulimit -f 0 the message cannot be written to a file either)
  run -4 bash -c "ulimit -f 0; state-set new.json n:=1 2>/dev/null"
  assert_equal "$(ls -A | sort | tr '\n' ' ')" "before s.json "
}

# issue 39: names of 251-255 bytes (legal everywhere) are written, their
# temporary names cut to fit; FILE.backup that cannot be named is exit 2
@test "names of 251 to 255 bytes are written and rewritten; --on-invalid backup that cannot be named is exit 2" {
  for n in 251 253 255; do
    f=$(printf 'n%.0s' $(seq "$n"))
    run -0 state-set "$f" n:=1
    run -0 state-set "$f" n+=1
    run -0 state-get "$f" n
    assert_output 2
    rm "$f"
  done
  assert_equal "$(ls -A)" ""
  f=$(printf 'b%.0s' $(seq 249))
  echo '{bad' >"$f"
  run -2 --separate-stderr state-set --on-invalid backup "$f" n:=1
  assert_equal "$stderr" "state-set: --on-invalid backup: the name '$f.backup' would be longer than 255 bytes"
  f=$(printf 'b%.0s' $(seq 248))
  echo '{bad' >"$f"
  run -0 state-set --on-invalid backup "$f" n:=1
  assert_equal "$(cat "$f.backup")" '{bad'
}

@test "issue 39: --redact hides a value set at an index or deeper under a secret name" {
  echo '{"db":{"api_key":["[REDACTED]","old"]}}' >s.json
  run -0 --separate-stderr state-set --redact s.json 'password[0]=hunter2' 'db.api_key[1]=k-xyz' \
    'creds.password[0]:="p-abc"' 'vault.token.old=t-old' 'plain[0]=hello'
  [[ $stderr == *"redacted value of 'password' at password[0]"* ]]
  [[ $stderr == *"redacted value of 'api_key' at db.api_key[1]"* ]]
  [[ $stderr != *hunter2* && $stderr != *k-xyz* && $stderr != *p-abc* && $stderr != *t-old* ]]
  ! grep -q -e hunter2 -e k-xyz -e p-abc -e t-old s.json
  run -0 state-get -j s.json 'password' 'db.api_key' 'creds.password' 'vault.token.old' 'plain'
  assert_output $'["[REDACTED]"]\n["[REDACTED]","[REDACTED]"]\n["[REDACTED]"]\n"[REDACTED]"\n["hello"]'
}

@test "issue 39: a FILE named .gz is written gzip, new or reset, and read as state-get reads it" {
  run -0 state-set s.json.gz status=running n:=1
  gzip -t s.json.gz
  run -0 state-get s.json.gz status n
  assert_output $'running\n1'
  run -0 state-set s.json.gz n+=1
  gzip -t s.json.gz
  assert_equal "$(gzip -dc s.json.gz | state-get - n)" 2
  # plain bytes under a .gz name are corrupt to state-get: to state-set too, nothing written
  printf '{"n":1}\n' >p.json.gz
  cp p.json.gz before
  run -3 state-get p.json.gz n
  run -3 state-set p.json.gz n+=1
  cmp p.json.gz before
  # --on-invalid backup keeps them and starts again, gzip
  run -0 state-set --on-invalid backup p.json.gz n:=5
  cmp p.json.gz.backup before
  gzip -t p.json.gz
  run -0 state-get p.json.gz n
  assert_output 5
}

@test "issue 39: jq's update operators -= *= /= %= //= mean what they mean in jq, with exact decimals" {
  printf '{"iteration":5,"total":9,"n":7,"m":-7,"p":0.1,"o":{"a":{"b":1}},"f":false,"z":null,"keep":"x"}' >s.json
  run -0 state-set s.json iteration-=1 total/=2 n%=3 m%=3 'p*=3' 'n*=2' 'o*={"a":{"c":2}}' 'f//=1' 'z//="t"' \
    'new//=[1]' 'keep//="no"'
  run -0 state-get -j s.json iteration total n m p o f z new keep
  assert_output $'4\n4.5\n2\n-1\n0.3\n{"a":{"b":1,"c":2}}\n1\n"t"\n[1]\n"x"'
  # never a member named after the operator
  run -0 state-get -k s.json
  refute_output --partial 'iteration-'
  refute_output --partial 'total/'
  # division: exact where it terminates, 34 significant digits where it does not
  printf '{"t":1,"u":10,"v":2.5,"w":1e-3}' >d.json
  run -0 state-set -p --compact d.json t/=3 u/=4 'v*=0.4' 'w/=8'
  assert_output '{"t":0.3333333333333333333333333333333333,"u":2.5,"v":1,"w":0.000125}'
  run -0 state-set -p --compact d.json 't*=3' 'u-=0.1'
  assert_output '{"t":0.9999999999999999999999999999999999,"u":2.4,"v":1,"w":0.000125}'
}

@test "issue 39: the update operators agree with jq on integers; by zero, on null and on other types is exit 3, nothing written" {
  command -v jq >/dev/null || skip "jq is not installed (scripts/lib-setup.bash installs it)"
  for op in - '*' / %; do
    for pair in '7 2' '-7 2' '7 -2' '-7 -2' '12 4' '5.5 2' '100 7' '3 0.5'; do
      set -- $pair
      # a division that does not terminate keeps 34 digits where jq keeps a double's 17
      [ "$op $pair" != "/ 100 7" ] || continue
      printf '{"n":%s}' "$1" >j.json
      rc=0
      want=$(jq -c ".n $op= $2 | .n" j.json 2>/dev/null) || rc=$?
      grc=0
      state-set j.json "n$op=$2" 2>/dev/null || grc=$?
      if [ "$rc" -ne 0 ]; then
        [ "$grc" -eq 3 ] || { echo "n=$1 $op= $2: jq failed, state-set exit $grc"; false; }
        [ "$(cat j.json)" = "{\"n\":$1}" ]
      else
        got=$(state-get -j j.json n)
        [ "$grc" -eq 0 ] && [ "$got" = "$want" ] || { echo "n=$1 $op= $2: jq $want, state-set ($grc) $got"; false; }
      fi
    done
  done
  printf '{"n":4,"s":"a","z":null}\n' >e.json
  cp e.json before.json
  for a in n/=0 n%=0 n%=0.5 s-=1 'z*=2' gone-=1 gone/=2 's%=2'; do
    run -3 state-set e.json "$a" n:=9
    cmp e.json before.json
  done
}

@test "issue 39: other operators before = are exit 2 with the spellings that work; a name ending so is [\"x-\"]" {
  printf '{"x":1}\n' >s.json
  cp s.json before.json
  run -2 --separate-stderr state-set s.json 'x|=.+1'
  [[ $stderr == *"state-set has no operator |="*":="* ]]
  run -2 --separate-stderr state-set s.json 'created_at//=now'
  [[ $stderr == *"//= takes JSON"*"--now 'PATH?'"* ]]
  for a in 'x^=1' 'x&=1' 'x<=1' 'x--=1' 'x-=a' 'x/=[1]' 'x*="a"' 'x%=' 'l[]-=1' '-=1'; do
    run -2 state-set s.json "$a"
    cmp s.json before.json
  done
  run -0 state-set s.json '["x-"]=1' '."y/"=2' 'bd-1.status=done'
  run -0 state-get s.json '.["x-"]' '.["y/"]' 'bd-1.status'
  assert_output $'1\n2\ndone'
  # --stream reads the same operators
  printf 'x-=1\nn//=5\n' | state-set --stream s.json
  run -0 state-get s.json x n
  assert_output $'0\n5'
}
