#!/usr/bin/env bats
# event-show: choosing and printing events.
load helpers

mklog() {
  local t
  for t in start iteration-start iteration-done iteration-start iteration-done complete; do
    event-append --session demo e.jsonl "$t" 'k=v w'
  done
}

@test "text by default, --json as stored" {
  mklog
  run -0 event-show e.jsonl
  [ "${lines[0]}" = '1 2025-01-10T10:05:30Z start demo k="v w"' ]
  [ "${#lines[@]}" = 6 ]
  run -0 event-show --json e.jsonl
  [ "${lines[5]}" = "$(sed -n 6p e.jsonl)" ]
}

@test "--since SEQ, --last N, --type T and --session S choose" {
  mklog
  event-append --session other e.jsonl start
  run -0 event-show --since 4 e.jsonl
  [ "$(cut -d' ' -f1 <<<"$output" | tr '\n' ' ')" = "5 6 7 " ]
  run -0 event-show --last 2 --type iteration-done e.jsonl
  [ "$(cut -d' ' -f1 <<<"$output" | tr '\n' ' ')" = "3 5 " ]
  run -0 event-show --type start,complete --session demo e.jsonl
  [ "$(cut -d' ' -f1 <<<"$output" | tr '\n' ' ')" = "1 6 " ]
  # nothing after SEQ is a poll's normal answer: nothing printed, exit 0
  run -0 event-show --since 7 e.jsonl
  assert_output ""
  run -1 event-show -q --type nothing e.jsonl
  [ -z "$output" ]
}

@test "a missing log is 1, bad options 2" {
  run -1 event-show none.jsonl
  run -2 event-show --since x e.jsonl
  run -2 event-show --follow -
  run -2 event-show --type 'a b' e.jsonl
}

@test "a torn last line after a crash is skipped with a warning" {
  mklog
  printf '{"seq":7,"ts":"20' >>e.jsonl
  run -0 --separate-stderr event-show e.jsonl
  [ "${#lines[@]}" = 6 ]
  [[ $stderr == *"incomplete last line"* ]]
  run -0 --separate-stderr event-show --last 1 e.jsonl
  [ "${lines[0]:0:2}" = "6 " ]
}

@test "--follow prints the new events as they come" {
  mklog
  event-show --follow --poll 0.05 --since 5 e.jsonl >out &
  f=$!
  wait_grep '6 2025' out
  event-append --session demo e.jsonl later
  wait_grep ' later demo' out
  kill "$f"
  wait "$f" || true
  [ "$(cut -d' ' -f1 out | tr '\n' ' ')" = "6 7 " ]
}

@test "reads stdin and .gz" {
  mklog
  gzip -c e.jsonl >e.jsonl.gz
  run -0 event-show --last 1 e.jsonl.gz
  [[ $output == "6 "* ]]
  run -0 event-show --type complete - <e.jsonl
  [[ $output == "6 "* ]]
}

# issue 22: a gzip file of several members read as its last member only
@test "a .gz log of several members (gzip >>) reads as all of them" {
  mklog
  head -n 2 e.jsonl | gzip >e.jsonl.gz
  tail -n +3 e.jsonl | gzip >>e.jsonl.gz
  run -0 event-show --json e.jsonl.gz
  assert_output "$(cat e.jsonl)"
  run -2 event-show --follow e.jsonl.gz
}

# one reader of growing files (core/log/growing) for events and progress alike
@test "--follow: whole lines only; a log put in place goes on after the events seen, a rotation starts again" {
  mklog
  event-show --follow --poll 0.05 --json e.jsonl >out 2>err &
  f=$!
  wait_grep '"seq":6,' out
  # a line written in two parts is printed once, whole
  printf '{"seq":7,"ts":"2025-01-10T00:00:00Z","type":"half",' >>e.jsonl
  printf '"session":"demo"}\n' >>e.jsonl
  wait_grep '"seq":7,' out
  # the same events and more, put in place by rename: only the new one
  { cat e.jsonl; printf '{"seq":8,"ts":"2025-01-10T00:00:00Z","type":"moved","session":"demo"}\n'; } >tmp
  mv tmp e.jsonl
  wait_grep '"seq":8,' out
  # a rotation: the new log from its first event, with a warning
  mv e.jsonl old.jsonl
  event-append --session demo e.jsonl fresh
  wait_grep '"type":"fresh"' out
  kill "$f"
  wait "$f" || true
  run -0 cut -d, -f1 out
  assert_output "$(printf '{"seq":%s\n' 1 2 3 4 5 6 7 8 1)"
  grep -q "warning: 'e.jsonl': replaced or truncated; reading it from the start" err
  [ "$(grep -c warning err)" = 1 ]
}

# issue 25: --since meant a seq here and a date in progress-show
@test "--after-seq SEQ is --since SEQ's name now; --since still reads a SEQ" {
  mklog
  run -0 event-show --after-seq 4 e.jsonl
  [ "$(cut -d' ' -f1 <<<"$output" | tr '\n' ' ')" = "5 6 " ]
  assert_equal "$(event-show --since=4 e.jsonl)" "$output"
  run -2 --separate-stderr event-show --after-seq x e.jsonl
  assert_equal "$stderr" "event-show: --after-seq: not a whole number from 0 to 4611686018427387904: 'x'"
  run -0 event-show --help
  assert_output --partial '--after-seq SEQ'
}

@test "issue 25: events filtered on their fields without jq, by state-get's expressions over --json" {
  event-append --session demo e.jsonl iteration-done 'iteration:=1' 'plateau:=false'
  event-append --session demo e.jsonl iteration-done 'iteration:=2' 'plateau:=true'
  event-append --session demo e.jsonl complete
  run -0 bash -c "event-show --type iteration-done --json e.jsonl | state-get - 'select(.plateau == true) | .iteration'"
  assert_output 2
  run -0 bash -c "event-show --json e.jsonl | state-get -j - '{seq, type}'"
  assert_output $'{"seq":1,"type":"iteration-done"}\n{"seq":2,"type":"iteration-done"}\n{"seq":3,"type":"complete"}'
}

# issue 24: lines are read by one validating scan and printed from their
# text; what that reading cannot print as the parsed object prints (escapes,
# a name twice, numbers compact would rewrite, nested values, DEL) must come
# out as before
@test "issue 24: the text of events with escapes, duplicates, odd numbers and nested values" {
  printf '%s\n' '{"seq":1,"ts":"t","type":"x","a":"h\u00e9llo","b":1.50,"c":[1, 2],"d":"sp ace","e":"","f":-0,"g":12345678901234567890}' \
    '{"seq":2,"type":"y","a":1,"a":2}' '{"seq":"3"}' \
    '{"seq":4,"x":"del'$'\x7f''","y":"é","z":null,"w":true}' '{"seq":5.0}' \
    '{"se\u0071":6,"k\u0020x":1}' '{"seq":-8, "s" : "a\"b"}' >e.jsonl
  run -0 --separate-stderr event-show e.jsonl
  assert_output "$(printf '%s\n' '1 t x - a=héllo b=1.5 c=[1,2] d="sp ace" e="" f=0 g=12345678901234567890' \
    '2 - y - a=2' '4 - - - x="del\u007f" y=é z=null w=true' '6 - - - k x=1' '-8 - - - s="a\"b"')"
  [ "$(grep -c 'skipped a line that is not an event' <<<"$stderr")" = 2 ]
  run -0 --separate-stderr event-show --last 2 e.jsonl
  assert_output "$(printf '%s\n' '6 - - - k x=1' '-8 - - - s="a\"b"')"
}

# issue 24: event-show reads lines without Boost.JSON (core/json/json_compact
# prints the general path from the text); its output on such lines is the
# document-based reader's, byte for byte
@test "issue 24: numbers in every form, names twice in nested objects, escapes: printed as the parsed object printed" {
  printf '%s\n' '{"seq":1,"ts":"2025-01-10T10:05:30Z","type":"t","session":"s","n":[1E2,-0.0,1e21,100e-2,18446744073709551615,18446744073709551616,-9223372036854775809,0.1,5e-324]}' \
    '{"seq":2,"type":"t","o":{"a":1,"b":{"c":"x","c":"\u0079\/"},"a":[ true , null ]}}' \
    '{"type":"t\u0032","session":"s\u0032","seq":3,"q":"tab\there","n":"line\nbreak","u":"\ud83d\ude00 \u00e9"}' \
    '{"seq":4,"x":1e400}' '{"seq":5,"x":01}' '{"seq":6,"type":"t","deep":[[[{"k":"v","k":"w"}]]]}' \
    '{"seq":18446744073709551615,"type":"huge"}' >e.jsonl
  run -0 --separate-stderr event-show e.jsonl
  assert_output "$(printf '%s\n' \
    '1 2025-01-10T10:05:30Z t s n=[100,-0,1e+21,1,18446744073709551615,1.8446744073709552e+19,-9.223372036854776e+18,0.1,5e-324]' \
    '2 - t - o={"a":[true,null],"b":{"c":"y/"}}' '3 - t2 s2 q="tab\there" n="line\nbreak" u="😀 é"' \
    '6 - t - deep=[[[{"k":"w"}]]]' '18446744073709551615 - huge -')"
  [ "$(grep -c 'skipped a line that is not an event' <<<"$stderr")" = 2 ]
  run -0 --separate-stderr event-show --json e.jsonl
  assert_output "$(sed '4,5d' e.jsonl)"
  # the escaped type and session are what --type and --session compare
  run -0 --separate-stderr event-show --type t2 --session s2 e.jsonl
  assert_output '3 - t2 s2 q="tab\there" n="line\nbreak" u="😀 é"'
  run -0 --separate-stderr event-show --last 2 e.jsonl
  assert_output "$(printf '%s\n' '6 - t - deep=[[[{"k":"w"}]]]' '18446744073709551615 - huge -')"
}

@test "issue 24: --follow prints an appended line of the general path as the parsed object printed" {
  printf '{"seq":1,"type":"a"}\n' >e.jsonl
  event-show --follow --poll 0.05 e.jsonl >out &
  f=$!
  wait_grep '1 - a -' out
  printf '%s\n' '{"seq":2,"type":"b","x":{"y":1.0,"y":2E0},"s":"\u0041 b"}' >>e.jsonl
  wait_grep '2 - b -' out
  kill "$f"
  wait "$f" || true
  assert_equal "$(sed -n 2p out)" '2 - b - x={"y":2} s="A b"'
}

@test "issue 39: a device is refused at once (exit 4), never read" {
  run -4 --separate-stderr timeout 30 bash -c '[ -n "${LOOPKIT_SANITIZED:-}" ] || ulimit -v 4000000; event-show /dev/zero'
  assert_equal "$stderr" "event-show: cannot open '/dev/zero': is a device"
  run -4 timeout 30 bash -c '[ -n "${LOOPKIT_SANITIZED:-}" ] || ulimit -v 4000000; event-show --last 1 /dev/zero'
  run -4 timeout 30 bash -c '[ -n "${LOOPKIT_SANITIZED:-}" ] || ulimit -v 4000000; event-show - </dev/zero'
  run -4 timeout 30 bash -c '[ -n "${LOOPKIT_SANITIZED:-}" ] || ulimit -v 4000000; event-show --follow /dev/zero'
}
