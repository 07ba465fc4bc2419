#!/usr/bin/env bats
# event-append: numbered JSON lines, one locked write each.
load helpers

@test "numbers the events from 1, with time, type, session and fields" {
  mkdir -p runs/demo
  run -0 event-append --print-seq runs/demo/events.jsonl start engine=loop 'n:=3' 'big:=123456789012345678901234567890' 'x:= [1, 2e2 ]'
  [ "$output" = 1 ]
  run -0 event-append --session other runs/demo/events.jsonl done 'msg=two words "quoted"'
  run -0 cat runs/demo/events.jsonl
  [ "$output" = '{"seq":1,"ts":"2025-01-10T10:05:30Z","type":"start","session":"demo","engine":"loop","n":3,"big":123456789012345678901234567890,"x":[1,2e2]}
{"seq":2,"ts":"2025-01-10T10:05:30Z","type":"done","session":"other","msg":"two words \"quoted\""}' ]
}

@test "usage errors: a bad type, a reserved or nested field, bad JSON, no TYPE" {
  run -2 event-append e.jsonl
  run -2 event-append e.jsonl 'two words'
  run -2 event-append e.jsonl t seq:=5
  run -2 event-append e.jsonl t a.b=1
  run -2 event-append e.jsonl t 'a:={'
  run -2 event-append e.jsonl t 'a+=1'
  [ ! -e e.jsonl ]
}

@test "a key given twice: the last value counts, once" {
  event-append --session s e.jsonl t a=1 a=2
  run -0 cat e.jsonl
  [ "$output" = '{"seq":1,"ts":"2025-01-10T10:05:30Z","type":"t","session":"s","a":"2"}' ]
}

@test "20 concurrent appenders: no torn or interleaved line, seqs 1..N without a gap" {
  for p in $(seq 20); do
    (for i in $(seq 10); do event-append --no-sync --session s e.jsonl tick "p:=$p" "i:=$i"; done) &
  done
  wait
  [ "$(wc -l <e.jsonl)" = 200 ]
  run -0 event-show --json e.jsonl
  [ "${#lines[@]}" = 200 ]
  cut -d, -f1 e.jsonl | sed 's/{"seq"://' >seqs
  seq 200 | cmp - seqs
  for p in $(seq 20); do [ "$(grep -c "\"p\":$p,\"i\"" e.jsonl)" = 10 ]; done
}

@test "after a kill -9 mid-line: the torn line is closed, the seq goes on past it" {
  event-append --session s e.jsonl a
  printf '{"seq":2,"ts":"2025-01-10T1' >>e.jsonl
  run -0 event-append --print-seq --session s e.jsonl b
  [ "$output" = 3 ]
  run -0 sed -n 3p e.jsonl
  [[ $output == '{"seq":3,'* ]]
  run -0 --separate-stderr event-show e.jsonl
  [ "${#lines[@]}" = 2 ]
  [[ $stderr == *"not an event"* ]]
}

@test "the seq is found from the tail of a log whose last line is long" {
  event-append --session s e.jsonl a
  event-append --session s e.jsonl b "blob=$(head -c 100000 /dev/zero | tr '\0' x)"
  run -0 event-append --print-seq --session s e.jsonl c
  [ "$output" = 3 ]
}

@test "a failed write leaves the log as it was" {
  need_strace
  event-append --session s e.jsonl a
  cp e.jsonl before
  run -4 strace -f -o /dev/null -e inject=write:error=ENOSPC:when=1 event-append --session s e.jsonl b
  cmp before e.jsonl
}

# issue 22, one commit
@test "a failed folder sync after creating the log is a warning, exit 0, one event" {
  need_strace
  run -0 --separate-stderr strace -f -o /dev/null -e trace=fsync -e inject=fsync:error=EIO:when=2 \
    event-append --session s e.jsonl b
  assert_equal "$stderr" "event-append: warning: cannot sync folder '.': Input/output error"
  assert_equal "$(wc -l <e.jsonl)" 1
}

@test "a log that is another user's link in a sticky folder is refused" {
  [ "$(id -u)" = 0 ] || skip "needs root to give a link to another user"
  mkdir -m 1777 shared
  ln -s ../planted.jsonl shared/e.jsonl
  chown -h 65534 shared/e.jsonl
  run -4 --separate-stderr event-append --session s shared/e.jsonl b
  assert_equal "$stderr" \
    "event-append: cannot follow 'shared/e.jsonl': a symbolic link of another user in a sticky world-writable folder"
  [ ! -e planted.jsonl ]
}

# issue 22: the seq after INT64_MAX came out negative
@test "a last seq of INT64_MAX: refused with exit 3, the log left as it was" {
  printf '{"seq":9223372036854775806,"ts":"2025-01-10T00:00:00Z","type":"a","session":"s"}\n' >e.jsonl
  run -0 event-append --print-seq --session s e.jsonl b
  assert_output 9223372036854775807
  cp e.jsonl before
  run -3 --separate-stderr event-append --session s e.jsonl c
  assert_equal "$stderr" "event-append: 'e.jsonl': seq 9223372036854775807 is the last an event log can number; start a new log"
  cmp before e.jsonl
  # a seq past int64 counts as the largest
  printf '{"seq":18446744073709551615,"ts":"2025-01-10T00:00:00Z","type":"a","session":"s"}\n' >f.jsonl
  run -3 event-append --session s f.jsonl c
}

# issue 24: event-append checks fields and finds the last seq without
# Boost.JSON: the same messages, the same numbering
@test "issue 24: fields refused with parse_assignment's messages; a last line read whole for its seq" {
  run -2 --separate-stderr event-append --session s e.jsonl t 'a:=[1,'
  assert_equal "$stderr" "event-append: malformed assignment 'a:=[1,': not valid JSON: incomplete json at line 1, column 4"
  run -2 --separate-stderr event-append --session s e.jsonl t 'a*=[]'
  assert_equal "$stderr" "event-append: malformed assignment 'a*=[]': *= takes a number or a JSON object"
  run -2 --separate-stderr event-append --session s e.jsonl t 'a:=1e400'
  assert_equal "$stderr" "event-append: malformed assignment 'a:=1e400': not valid JSON: number out of range at line 1, column 6"
  run -2 --separate-stderr event-append --session s e.jsonl t "a:=$(printf '%*s' 1000 '' | tr ' ' '[')$(printf '%*s' 1000 '' | tr ' ' ']')"
  [[ $stderr == *"the value would lie 1001 levels deep; readers stop at 1000" ]]
  run -2 --separate-stderr event-append --session s e.jsonl t 'a+=x'
  assert_equal "$stderr" "event-append: malformed assignment 'a+=x': not valid JSON: syntax error at line 1, column 1"
  run -2 --separate-stderr event-append --session s e.jsonl t 'a+=1'
  assert_equal "$stderr" "event-append: malformed field 'a+=1': fields are KEY=TEXT or KEY:=JSON"
  [ ! -e e.jsonl ]
  # a last line whose seq is not first, or has an escaped name, or is given twice
  printf '%s\n' '{"seq":1}' '{"type":"x","s\u0065q":7,"seq":9,"seq":8}' >e.jsonl
  run -0 event-append --print-seq --session s e.jsonl t
  assert_output 9
}

# issue 39: past the commit point a failure to print is a warning, exit 0
@test "--print-seq that cannot be printed (full, closed, broken pipe): a warning, exit 0, the event appended once" {
  run -0 --separate-stderr bash -c 'event-append --print-seq ev.jsonl a >/dev/full'
  assert_equal "$stderr" "event-append: warning: cannot write to standard output: No space left on device"
  run -0 --separate-stderr bash -c 'event-append --print-seq ev.jsonl b >&-'
  assert_equal "$stderr" "event-append: warning: cannot write to standard output: Bad file descriptor"
  run -0 --separate-stderr broken_pipe event-append --print-seq ev.jsonl c
  assert_equal "$stderr" "event-append: warning: cannot write to standard output: Broken pipe"
  run -0 wc -l <ev.jsonl
  assert_output 3
}

# issue 39: ulimit -f is a full disk: exit 4 with the log as it was, whether
# it is at the limit already or the line would cross it
@test "ulimit -f: an append at or across the limit is exit 4, the log unchanged" {
  event-append ev.jsonl a pad=x
  size=$(stat -c %s ev.jsonl)
  rm ev.jsonl
  event-append ev.jsonl a "pad=$(head -c $((1 + 1024 - size)) /dev/zero | tr '\0' x)"
  assert_equal "$(stat -c %s ev.jsonl)" 1024
  cp ev.jsonl before
  run -4 --separate-stderr bash -c 'ulimit -f 1; event-append ev.jsonl b'
  [[ $stderr == "event-append: cannot append to 'ev.jsonl': File too large" ]]
  cmp ev.jsonl before
  run -4 --separate-stderr bash -c 'ulimit -f 2; event-append ev.jsonl b "pad=$(head -c 2000 /dev/zero | tr "\0" x)"'
  [[ $stderr == "event-append: cannot append to 'ev.jsonl': File too large" ]]
  cmp ev.jsonl before
  run -0 event-append --print-seq ev.jsonl b
  assert_output 2
}

@test "issue 39: a log named .gz is written gzip: seq goes on from its last event, event-show reads every one" {
  mkdir s
  run -0 event-append --print-seq s/e.jsonl.gz start n:=1
  assert_output 1
  gzip -t s/e.jsonl.gz
  # a log compressed by gzip, then appended to
  for i in 1 2 3; do event-append s/plain.jsonl t "i:=$i"; done
  gzip s/plain.jsonl
  run -0 event-append --print-seq s/plain.jsonl.gz t i:=4
  assert_output 4
  gzip -t s/plain.jsonl.gz
  run -0 event-show --json s/plain.jsonl.gz
  assert_equal "$(jq -c '[.seq, .i]' <<<"$output" | tr '\n' ' ')" '[1,1] [2,2] [3,3] [4,4] '
  # plain bytes under the name are refused as event-show refuses them: nothing written
  printf '{"seq":7,"ts":"x","type":"t","session":"s"}\n' >s/bad.jsonl.gz
  cp s/bad.jsonl.gz before
  run -3 event-append s/bad.jsonl.gz t
  cmp s/bad.jsonl.gz before
}

@test "issue 39: appenders to a .gz log in parallel lose no event and number each once" {
  mkdir s
  for w in 1 2 3 4; do
    (for i in $(seq 10); do event-append --no-sync s/e.jsonl.gz t "w:=$w" || exit 1; done) &
  done
  wait
  gzip -t s/e.jsonl.gz
  run -0 event-show --json s/e.jsonl.gz
  assert_equal "$(jq -s -c '[.[].seq] == [range(1;41)]' <<<"$output")" true
}

@test "issue 39: a failed write to a .gz log leaves it as it was (exit 4), still gzip" {
  need_strace
  mkdir s
  event-append s/e.jsonl.gz t
  cp s/e.jsonl.gz before
  run -4 strace -f -o /dev/null -e trace=write,pwrite64 -e inject=write,pwrite64:error=ENOSPC event-append s/e.jsonl.gz t
  cmp s/e.jsonl.gz before
  assert_equal "$(ls -A s)" e.jsonl.gz
}

@test "issue 39: in a folder whose name is not UTF-8 the session is asked for (exit 2), never written unreadable" {
  dir=$'caf\xe9'
  mkdir "$dir"
  run -2 --separate-stderr event-append "$dir/e.jsonl" start
  [[ $stderr == *"(from the log's folder) is not UTF-8 text: give --session NAME"* ]]
  [ ! -e "$dir/e.jsonl" ]
  run -2 event-append --session $'s\xe9' "$dir/e.jsonl" start
  [ ! -e "$dir/e.jsonl" ]
  run -0 event-append --session cafe "$dir/e.jsonl" start
  run -0 event-show --json "$dir/e.jsonl"
  jq -e '.session == "cafe" and .seq == 1' <<<"$output"
}

@test "--print prints the event's line as written" {
  run -0 event-append --print e.jsonl start 'n:=2' who=me
  [ "$output" = "$(cat e.jsonl)" ]
  [ "$output" = '{"seq":1,"ts":"2025-01-10T10:05:30Z","type":"start","session":"work","n":2,"who":"me"}' ]
}

@test "--then appends further events in the same call, each with its own fields and the next seq" {
  event-append e.jsonl first
  run -0 event-append --print-seq e.jsonl done 'iteration:=1' --then start 'iteration:=2' who=me --then note
  [ "$output" = $'2\n3\n4' ]
  run -0 cat e.jsonl
  [ "$output" = '{"seq":1,"ts":"2025-01-10T10:05:30Z","type":"first","session":"work"}
{"seq":2,"ts":"2025-01-10T10:05:30Z","type":"done","session":"work","iteration":1}
{"seq":3,"ts":"2025-01-10T10:05:30Z","type":"start","session":"work","iteration":2,"who":"me"}
{"seq":4,"ts":"2025-01-10T10:05:30Z","type":"note","session":"work"}' ]
  run -0 event-append --print e.jsonl a --then b 'n:=1'
  [ "${#lines[@]}" = 2 ]
  [[ ${lines[0]} == '{"seq":5,'*'"type":"a"'* && ${lines[1]} == '{"seq":6,'*'"type":"b","session":"work","n":1}' ]]
}

@test "--then: a malformed later event writes none of them (exit 2)" {
  run -2 --separate-stderr event-append e.jsonl a 'n:=1' --then 'two words'
  [[ $stderr == *"'two words'"* ]]
  run -2 event-append e.jsonl a --then b 'x:={'
  run -2 event-append e.jsonl a --then b seq:=3
  run -2 event-append --then b e.jsonl a
  [ ! -e e.jsonl ]
}
