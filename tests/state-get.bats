#!/usr/bin/env bats
# state-get: reading values, every option, and bad input as clean errors.
load helpers

doc() {
  cat >state.json <<'JSON'
{
  "session": "demo",
  "iteration": 5,
  "ratio": 1.0,
  "history": [
    {"iteration": 1, "plateau": false},
    {"iteration": 2, "plateau": true, "reasoning": "flat"}
  ],
  "tags": {"bd-001": "a", "odd key": "b"},
  "note": "two\nlines",
  "gone": null
}
JSON
}

@test "values print raw, containers compact, in path order" {
  doc
  run -0 state-get state.json session iteration '.history[0]' ratio
  assert_output $'demo\n5\n{"iteration":1,"plateau":false}\n1'
}

@test "options bundle, take = and separate values, and mix with operands; unknown ones are exit 2" {
  doc
  run -0 state-get -jd '"none"' state.json missing session
  [ "$output" = $'"none"\n"demo"' ]
  run -0 state-get state.json --default=x missing
  [ "$output" = x ]
  run -0 state-get state.json session -j
  [ "$output" = '"demo"' ]
  run -2 --separate-stderr state-get --bogus state.json session
  [[ $stderr == *"option 'bogus' does not exist"* ]]
  run -2 state-get -Y state.json session # (-z is -0 now)
  run -0 bash -c 'echo "{\"a\":1}" | state-get - a'
  [ "$output" = 1 ]
}

@test "--must-exist: a missing file is exit 1 with its name, even with --default; -q silences it" {
  run -1 --separate-stderr state-get --must-exist -d x absent.json a
  [ -z "$output" ]
  [[ $stderr == *"state-get: 'absent.json': no such file"* ]]
  run -1 --separate-stderr state-get -q --must-exist absent.json a
  [ -z "$stderr" ]
  run -1 state-get --must-exist -e absent.json a
  run -0 state-get -d x absent.json a
  [ "$output" = x ]
  echo '{"a":1}' >present.json
  run -0 state-get --must-exist present.json a
  [ "$output" = 1 ]
  mkdir folder.json
  run -4 state-get --must-exist folder.json a
}

@test "--help lists every option, whatever else the line gives" {
  for line in "--help" "-h" "-qh" "-j --help state.json session"; do
    # shellcheck disable=SC2086 # the line is words
    run -0 state-get $line
    for o in --default --exists --json --pretty --shell --keys --null --quiet --version; do
      [[ $output == *"$o"* ]] || { echo "state-get $line: no $o"; false; }
    done
  done
}

@test "[] expands arrays and objects" {
  doc
  run -0 state-get state.json '.history[].iteration' '.tags[]'
  assert_output $'1\n2\na\nb'
}

@test "a missing path names itself on stderr; the found ones still print" {
  doc
  run -1 --separate-stderr state-get state.json session nope '.history[5]'
  assert_output demo
  [[ $stderr == *"state-get: nope: not found"* && $stderr == *"state-get: .history[5]: not found"* ]]
}

@test "--default replaces missing and null, also under []" {
  doc
  run -0 state-get -d '-' state.json gone '.history[].reasoning'
  assert_output $'-\n-\nflat'
}

@test "--exists counts null as present" {
  doc
  run -0 state-get --exists state.json gone session
  run -1 --separate-stderr state-get --exists state.json nothing
  [ -z "$stderr" ]
}

@test "-0 ends values with NUL, so newlines inside survive" {
  doc
  state-get -0 state.json note session >out
  [ "$(tr '\0' '|' <out)" = $'two\nlines|demo|' ]
}

@test "--pretty indents containers" {
  doc
  run -0 state-get --pretty state.json '.history[0]'
  assert_output $'{\n  "iteration": 1,\n  "plateau": false\n}'
}

@test "--keys lists indices of arrays and refuses scalars" {
  doc
  run -0 state-get -k state.json history
  assert_output $'0\n1'
  run -0 state-get -k state.json
  assert_line -n 0 session
  run -3 state-get -k state.json session
}

@test "--shell: [] gives a bash array, odd names become identifiers, missing prints nothing" {
  doc
  run -0 state-get -s state.json '.history[].iteration' 'tags.bd-001' 'n=.note'
  eval "$output"
  [ "${iteration[1]}" = 2 ]
  [ "$bd_001" = a ]
  [ "$n" = $'two\nlines' ]
  run -1 --separate-stderr state-get -s state.json session nope
  [ -z "$output" ]
  run -2 state-get -s state.json '.history[0]'
}

@test "reads .gz files and stdin with several documents" {
  doc
  gzip -k state.json
  run -0 state-get state.json.gz session
  assert_output demo
  run -0 bash -c 'printf "{\"a\":1}\n{\"a\":2}\n" | state-get - a'
  assert_output $'1\n2'
  # no document at all is an empty file's answer (issue 22), not an empty yes
  run -3 bash -c 'state-get - a </dev/null'
}

@test "bad input is a clean exit 3: garbage, empty file, invalid UTF-8, deep nesting" {
  head -c 512 /dev/urandom >garbage.json
  : >empty.json
  printf '{"a":"\xff\xfe"}' >utf8.json
  python3 -c 'print("[" * 100000 + "]" * 100000)' >deep.json
  for f in garbage empty utf8 deep; do
    run -3 --separate-stderr state-get "$f.json" a
    [[ $stderr == "state-get: '$f.json': not valid JSON"* ]]
  done
}

@test "a folder where a file should be is a system error" {
  mkdir dir.json
  run -4 --separate-stderr state-get dir.json a
  [[ $stderr == *"dir.json"*"Is a directory"* ]]
}

@test "an unreadable file is a system error" {
  [ "$(id -u)" -ne 0 ] || skip "root reads everything"
  echo '{}' >locked.json
  chmod 000 locked.json
  run -4 state-get locked.json a
}

@test "absurd indices are a clean 'not found' or usage error" {
  doc
  run -1 state-get state.json '.history[999999999999]' '.history[-999999999999]'
  run -2 state-get state.json '.history[99999999999999999999999]'
  run -3 state-get state.json '.session[0]'
}

@test "every JSONTestSuite file: y_ reads, n_ is exit 3, i_ never crashes" {
  bad=()
  for f in "$LOOPKIT_SOURCE"/tests/fixtures/JSONTestSuite/test_parsing/*.json; do
    name=${f##*/}
    rc=0; state-get "$f" . >/dev/null 2>&1 || rc=$?
    case $name in
      y_*) [ "$rc" -eq 0 ] || bad+=("$name:$rc") ;;
      n_*) [ "$rc" -eq 3 ] || bad+=("$name:$rc") ;;
      i_*) [ "$rc" -eq 0 ] || [ "$rc" -eq 3 ] || bad+=("$name:$rc") ;;
    esac
  done
  [ ${#bad[@]} -eq 0 ] || { printf '%s\n' "${bad[@]}"; false; }
}

@test "a closed stdout is a system error, not silence" {
  doc
  run -4 --separate-stderr bash -c 'state-get state.json session >/dev/full'
  [[ $stderr == *"cannot write to standard output"* ]]
}

# --- issue 9: duplicate keys and numbers as every reader reads them -----------

@test "state-get: duplicate key b, .[] lists it once with its last value where it first stands (also -k and stdin)" {
  printf '{"b":1,"a":2,"b":3}' >d.json
  run -0 state-get d.json '.[]'
  assert_output $'3\n2'
  run -0 state-get -k d.json
  assert_output $'b\na'
  run -0 state-get d.json b
  assert_output 3
  run -0 bash -c 'state-get - ".[]" <d.json'
  assert_output $'3\n2'
  run -0 state-get -s d.json 'v=.[]'
  assert_output "v=(3 2)"
}

@test "state-get: duplicate key b inside a value prints once, the last copy" {
  printf '{"o":{"b":{"x":1},"b":{"y":2}}}' >d.json
  run -0 state-get d.json o
  assert_output '{"b":{"y":2}}'
  run -0 state-get -k d.json o.b
  assert_output y
}

@test "state-get: a big integer prints with its digits, alone, inside a value and from stdin" {
  printf '{"a":123456789012345678901234567890,"l":[-98765432109876543210987654321]}\n' >n.json
  run -0 state-get n.json a l '.l[0]'
  assert_output $'123456789012345678901234567890\n[-98765432109876543210987654321]\n-98765432109876543210987654321'
  run -0 bash -c 'state-get - a <n.json'
  assert_output 123456789012345678901234567890
  run -0 state-get -s n.json a
  assert_output "a=123456789012345678901234567890"
}

@test "state-get: 0e400 and 1e-400 read as 0; 1e400 is not valid JSON (exit 3)" {
  printf '{"a":0e400,"b":1e-400}' >z.json
  run -0 state-get z.json a b
  assert_output $'0\n0'
  printf '{"a":1e400}' >inf.json
  run -3 --separate-stderr state-get inf.json a
  [[ $stderr == *"number out of range"* ]]
  run -3 bash -c 'state-get - a <inf.json'
}

@test "state-get: a member name that is not UTF-8, or a path deeper than the limit, is exit 2" {
  echo '{}' >e.json
  run -2 --separate-stderr state-get e.json "$(printf 'k\xff')"
  [ "$stderr" = "state-get: malformed path 'k\\xFF': a member name is not UTF-8" ]
  run -2 state-get e.json '["\ud800"]'
  run -2 state-get e.json "$(printf 'a.%.0s' $(seq 60000))b"
}

@test "--complete-path: the member names and indices that complete a word, as typed" {
  doc
  run -0 state-get --complete-path '' state.json
  assert_output $'session\niteration\nratio\nhistory\ntags\nnote\ngone'
  run -0 state-get --complete-path 'h' state.json
  assert_output 'history'
  run -0 state-get --complete-path '.h' state.json
  assert_output '.history'
  run -0 state-get --complete-path '.history' state.json
  assert_output '.history'
  run -0 state-get --complete-path '.history[' state.json
  assert_output $'.history[0]\n.history[1]'
  run -0 state-get --complete-path '.history[1].r' state.json
  assert_output '.history[1].reasoning'
  # a name that is not a jq identifier comes quoted ("bd-001" bare would
  # read as a subtraction in jq, a space ends a path)
  run -0 state-get --complete-path 'tags.' state.json
  assert_output $'tags.["bd-001"]\ntags.["odd key"]'
  run -0 state-get --complete-path 'tags.b' state.json
  assert_output 'tags.["bd-001"]'
  run -0 state-get --complete-path 'tags["o' state.json
  assert_output 'tags["odd key"]'
}

@test "--complete-path offers nothing, and fails never, for what it cannot read" {
  doc
  run -0 state-get --complete-path '.session.' state.json # a string has no members
  assert_output ''
  run -0 state-get --complete-path '.nope.' state.json
  assert_output ''
  run -0 state-get --complete-path '.x' missing.json
  assert_output ''
  printf '{"a":' >bad.json
  run -0 state-get --complete-path '' bad.json
  assert_output ''
  run -0 state-get --complete-path '.a]]' state.json
  assert_output ''
  run -0 state-get --complete-path '' - <state.json # stdin is the command's
  assert_output ''
  run -2 state-get --complete-path '' state.json session
}

@test "bash completes the JSON paths of the FILE on the line, after options and their values" {
  doc
  source "$LOOPKIT_SOURCE/completions/loopkit.bash"
  complete_words() {
    COMP_WORDS=("$@")
    COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    COMPREPLY=()
    "$fn"
    printf '%s\n' "${COMPREPLY[@]}"
  }
  fn=_loopkit_state_get
  run -0 complete_words state-get state.json .his
  assert_output '.history'
  run -0 complete_words state-get -d none state.json .history[1].
  assert_output $'.history[1].iteration\n.history[1].plateau\n.history[1].reasoning'
  run -0 complete_words state-get --json state.json ses
  assert_output 'session'
  fn=_loopkit_state_set
  run -0 complete_words state-set --indent 2 state.json sess
  assert_output 'session'
  # the first operand is still a file name
  run -0 complete_words state-get stat
  assert_output 'state.json'
}

@test "PATH//VALUE: VALUE for a missing or null value, per path, beating -d" {
  doc
  run -0 state-get state.json 'missing//none' 'gone//was null' 'session//unused' 'iteration//0'
  assert_output $'none\nwas null\ndemo\n5'
  run -0 state-get -d D state.json '.tags.nope//' missing 'gone//G'
  assert_output $'\nD\nG'
  # as with -d, VALUE is printed as given, also with --json
  run -0 state-get -j state.json 'missing//"x"' session
  assert_output $'"x"\n"demo"'
  # "//" inside a quoted name is part of the name; the first one outside splits
  printf '{"a//b":1,"u":"x//y"}' >s.json
  run -0 state-get s.json '["a//b"]//0' '["c//d"]//none//more'
  assert_output $'1\nnone//more'
  run -2 state-get s.json '//x'
}

@test "--shell NAME=PATH//VALUE: defaults for eval" {
  doc
  run -0 state-get -s state.json 'st=status//running' 'iteration//0' "it=missing//it's"
  assert_output $'st=running\niteration=5\nit=\'it\'\\\'\'s\''
  eval "$output"
  [ "$it" = "it's" ] && [ "$st" = running ]
}

@test "--arg NAME VALUE: [\$NAME] is the member named VALUE, dots, quotes and brackets and all" {
  printf '{"history":{"bd.1 \\"x\\" [0]":{"status":"done"},"$k":"literal"}}' >s.json
  run -0 state-get --arg key 'bd.1 "x" [0]' s.json '.history[$key].status'
  assert_output done
  # defined anywhere on the line, the last definition wins; quoted "$k" stays literal
  run -0 state-get s.json '.history[$key].status' --arg key nope --arg key 'bd.1 "x" [0]' '.history["$k"]'
  assert_output $'done\nliteral'
  run -2 --separate-stderr state-get s.json '.history[$nope]'
  assert_equal "$stderr" "state-get: malformed expression '.history[\$nope]': undefined variable '\$nope' (define it with --arg nope VALUE)"
  run -2 --separate-stderr state-get s.json .history --arg key
  assert_equal "$stderr" "state-get: --arg 'key': its second word is missing"
  run -2 --separate-stderr state-get --arg 1x v s.json .history
  assert_equal "$stderr" "state-get: --arg: not a variable name: '1x'"
  run -2 state-get --arg k "$(printf 'a\xff')" s.json '.history[$k]'
  run -2 state-get s.json '.history[$]'
}

@test "bash completion skips both words of --arg" {
  printf '{"session":"s"}' >state.json
  source "$LOOPKIT_SOURCE/completions/loopkit.bash"
  COMP_WORDS=(state-get --arg k v state.json ses)
  COMP_CWORD=5
  _loopkit_state_get
  [ "${COMPREPLY[*]}" = session ]
}

@test "issue 22: a member named \"\" is read in every path form, and only it" {
  echo '{"a":1,"":2,"h":{"":{"":3},"x":4}}' >s.json
  run -0 state-get s.json '[""]' '.""' '.h[""][""]' 'h."".""' --arg e "" 'h[$e][$e]'
  assert_output $'2\n2\n3\n3\n3'
  run -0 state-get -e s.json '[""]' 'h[""]'
  run -3 state-get s.json 'h.x[""]'
  run -1 state-get -e --arg e "" s.json 'a2[$e]'
  run -0 state-get -k s.json h
  assert_output $'\nx'
  run -0 state-get -s s.json 'v=[""]'
  assert_output 'v=2'
  run -0 state-get -j s.json 'h[""]'
  assert_output '{"":3}'
}

@test "issue 22: empty standard input is no document, as an empty file: exit 3, never a yes" {
  : >empty.json
  run -3 --separate-stderr state-get -e empty.json status
  assert_equal "$stderr" "state-get: 'empty.json': not valid JSON: empty document"
  run -3 --separate-stderr bash -c "printf '' | state-get -e - status"
  assert_equal "$stderr" "state-get: 'standard input': not valid JSON: empty document"
  run -3 bash -c "printf ' \n\n' | state-get -d x - status"
  run -3 bash -c "state-get -k - </dev/null"
  # one document or several still read as before
  run -0 bash -c "printf '{\"status\":1}\n{\"status\":2}' | state-get - status"
  assert_output $'1\n2'
}

# issue 22: a 1 MB bomb took 4.9 GB and 16 s before "out of memory"; gzip >> read as its last member
@test "a .gz bomb stops at the inflate limit, exit 3; every member of a .gz is read" {
  head -c 30000000 /dev/zero | gzip >zeros.gz # 30 KB; ten members of it inflate to 300 MB
  for i in $(seq 10); do cat zeros.gz; done >bomb.json.gz
  run -3 --separate-stderr state-get bomb.json.gz a
  assert_equal "$stderr" "state-get: 'bomb.json.gz': gzip data inflates past 268435456 bytes, the limit for its size (100 times it, at least 256 MiB)"
  printf '{"a":' | gzip >m.json.gz
  printf '[1,2]}' | gzip >>m.json.gz
  run -0 state-get m.json.gz 'a[1]'
  assert_output 2
}

# issue 25: the seeds' jq reads (003: agent-pipelines' state reference and
# lock scripts), each with its state-get form and the same output
seed_lock() {
  printf '{"session":"myfeature","pid":4242,"started_at":"2025-01-10T10:00:00Z"}\n' >my.lock
}

@test "issue 25: the seeds' jq lines, as state-get prints them (-j --pretty is jq, -j is jq -c, plain is jq -rc)" {
  f=$BATS_TEST_DIRNAME/fixtures/ap_state_pipeline.doc.json
  run -0 state-get -j --pretty "$f" '{iteration, iteration_completed, status}'
  assert_output $'{\n  "iteration": null,\n  "iteration_completed": null,\n  "status": "running"\n}'
  run -0 state-get -j "$f" '.stages[] | {name, status}'
  assert_output $'{"name":"improve-plan","status":"completed"}\n{"name":"refine-beads","status":"running"}'
  run -0 state-get "$f" '.stages[] | select(.status == "running") | .name'
  assert_output refine-beads
  run -0 state-get "$f" '.stages[] | select(.status != "running") | {n: .name, "the status": .status}'
  assert_output '{"n":"improve-plan","the status":"completed"}'
  run -0 state-get -j "$f" '.status' '.current_stage'
  assert_output $'"running"\n2'
  seed_lock
  run -0 state-get my.lock '.pid // empty' '.session // empty' '.host // empty'
  assert_output $'4242\nmyfeature'
}

@test "issue 25: expressions print what jq prints, byte for byte, on every state fixture (pretty, -c, -r, -rc)" {
  command -v jq >/dev/null || skip "jq is not installed (scripts/lib-setup.bash installs it)"
  exprs=('{iteration, iteration_completed, status}' '.stages[] | {name, status}'
    '.stages[] | select(.status == "failed") | .name' '.stages[] | select(.status != "running") | {n: .name}'
    '.status' '.iteration' '.completion_reason' '.current_stage' '.pid // empty' '.session // empty'
    '{"schema_version", s: .state, v: .version}' '.history // [] | .[-1]' '[.history[].iteration]'
    '(.status, .iteration) // "none"' '.[] | select(. == null)' '{a: .x.y.z, b: 1, c: "t", d: [.iteration]}'
    '. | {history} | .history | .[0]' '.stages[0] | {name} | .name')
  n=0
  for f in "$BATS_TEST_DIRNAME"/fixtures/*.json; do
    for e in "${exprs[@]}"; do
      want=$(jq "$e" "$f" 2>/dev/null) || continue # jq's errors are state-get's exit 3, another text
      [ "$want" = null ] && [[ $e != *[\|{]* ]] && continue # a plain path: "not found" where jq says null
      for flags in "" -c -r -rc; do
        want=$(jq $flags "$e" "$f")
        case $flags in
          "") opts=(-j --pretty) ;;
          -c) opts=(-j) ;;
          -r) opts=(--pretty) ;;
          -rc) opts=() ;;
        esac
        got=$(state-get "${opts[@]}" "$f" "$e") || { echo "state-get ${opts[*]} $f '$e': exit $?"; false; }
        [ "$got" = "$want" ] || { echo "$f '$e' (jq $flags):"; diff <(echo "$want") <(echo "$got"); false; }
        n=$((n + 1))
      done
    done
  done
  [ "$n" -gt 200 ]
}

@test "issue 25: an expression reads a missing member as null, as jq; --default, --exists, --keys and --shell apply" {
  printf '{"a":{"b":[1,2]},"n":null,"s":"x"}' >e.json
  run -0 state-get e.json '{nope, n}' '.nope | {x}'
  assert_output $'{"nope":null,"n":null}\n{"x":null}'
  run -0 state-get -d none e.json '.n | .x' '{n}'
  assert_output $'none\n{"n":null}'
  run -0 state-get -e e.json '.a | select(.b != null)'
  run -1 state-get -e e.json '.a | select(.b == null)'
  run -0 state-get -k e.json '.a | {b, c: 1}'
  assert_output $'b\nc'
  run -0 state-get -s e.json 'v=.a.b[] | select(. != 1)' 'o={s}'
  assert_output $'v=(2)\no=(\'{"s":"x"}\')'
  run -2 --separate-stderr state-get -s e.json '.a | {b}'
  assert_equal "$stderr" "state-get: --shell needs NAME=EXPRESSION for '.a | {b}'"
  run -0 state-get -0 e.json '.a.b[] | select(. == 2)' '{s}'
  assert_output "$(printf '2\0{"s":"x"}\0')"
}

@test "issue 25: expressions: a wrong type is exit 3, a malformed one exit 2 naming itself; plain paths are unchanged" {
  printf '{"s":"x","a":[1],"a|b":1,"c(d)":2}' >e.json
  run -3 --separate-stderr state-get e.json '.s | {x}'
  assert_equal "$stderr" 'state-get: .x: cannot look up "x" in a string'
  run -3 --separate-stderr state-get e.json '.s[] | .x'
  assert_equal "$stderr" 'state-get: .s[]: cannot list the elements of a string'
  run -2 --separate-stderr state-get e.json '.a | length'
  assert_equal "$stderr" "state-get: malformed expression '.a | length': unknown function 'length' (paths, literals, [...], {...}, select, not, empty, | , // and or, == != < <= > >=, + - * / % are read)"
  run -2 --separate-stderr state-get e.json '{a'
  assert_equal "$stderr" "state-get: malformed expression '{a': expected '}' (a member's value is a term or terms joined by '|', as in jq: group the rest in ( ))"
  # names holding the operators are quoted, as names with spaces are
  run -0 state-get e.json '["a|b"]' '.["c(d)"]' 'a[0]' 's//none' 'missing//none'
  assert_output $'1\n2\n1\nx\nnone'
}

# issue 25: one spelling per meaning, as sort, grep and xargs spell NUL
@test "-z is -0: NUL after each value, bundled too; --help names it" {
  printf '{"a":"x\\ny","b":1}' >z.json
  run -0 state-get -z z.json a b
  assert_output "$(printf 'x\ny\0001\000')"
  assert_equal "$(state-get -z z.json a b | od -c)" "$(state-get -0 z.json a b | od -c)"
  assert_equal "$(state-get -jz z.json a | od -c)" "$(state-get --json --null z.json a | od -c)"
  run -0 state-get --help
  assert_output --partial '(-z too)'
}

@test "-q silences the answer no, never the values found (loopkit(7), COMMON OPTIONS)" {
  printf '{"a":1}' >q.json
  run -1 --separate-stderr state-get -q q.json a nope
  assert_output 1
  assert_equal "$stderr" ''
  run -1 --separate-stderr state-get -q --must-exist none.json a
  assert_equal "$output$stderr" ''
}

@test "issue 25: '.pid // empty' is jq's (nothing printed); so is 'pid//empty' (issue 39: jq's words are jq's)" {
  printf '{"session":"s"}' >l.json
  run -0 state-get l.json '.pid // empty'
  assert_output ''
  run -0 state-get l.json 'pid//empty' '.pid//empty'
  assert_output ''
}

# issue 39 item 12: every expression both ways, with and without spaces,
# against the jq installed; where jq fails, state-get fails too (2 or 3)
ops_doc() {
  printf '%s' '{"it":5,"n":3,"a":1,"b":2,"pid":null,"f":false,"s":"abc","l":[1,2,3],"o":{"a":1,"b":{"x":2}},"a-b":7,"history":{"bd-001":{"attempts":3},"bd":5},"d":0.1}' >o.json
}

@test "issue 39: operators without spaces are jq's: every answer is jq's, or state-get fails where jq fails" {
  command -v jq >/dev/null || skip "jq is not installed (scripts/lib-setup.bash installs it)"
  ops_doc
  exprs=('select(.it>3)' 'select(.it<3)' 'select(.it/5 == 1)' 'select(.it%2 == 1)' '.n-1' '.pid//empty'
    '.n+1' '.n*2' '.n/2' '.n%2' '.it>=5' '.it<=4' '.a-.b' '.n - -1' '-.n' '.n*-1' '1-2-3' '8/2/2' '2*3+4'
    '2+3*4' '10%4%3' '.pid//.f//3' '.it==5 and .n<2' '.it==5 or .n<2' '.n>2 and .it>4 or false'
    'true or false and false' '.n|not' '.f|not' '.x-1' '.s+"!"' '.s*2' '.s/"b"' '.l-[1]' '.l+[9]'
    '.o*{"b":{"c":1}}' '.o+{"z":1}' '[.l[]|.*2]' '.f//"no"' '.it-.n*2' '(.it-.n)*2' '-.n*2' '.n-1.5'
    '.n-1e2' '.n-.5' '.5+.5' '.it/3' '.d+0.2' '.it % -2' '-.it % 2' '[.l[]|select(.>1)]' '.n>=3' '.n!=3'
    '.history.bd-001' '.it/0' '.s-1' '-.s' '.n<2<3' '(1,2)+(10,20)' '(1,2)<(10,0)'
    '(true,false) and (true,false)' '(false,true) or (true,false)' '[null,false,true,0,"a",[],{}]|.[2]<.[3]'
    '"abc"<"abd"' '[1,[2]]<[1,[3]]' '{"a":2}<{"b":1}' '{"b":1,"a":2}=={"a":2,"b":1}' '1==1.0' '.l|.[0]+.[1]'
    '.o.b.x*.it' '{a:.n-1, b:.it%3}' '.["a-b"]-1' '."a-b"' '.s*0' '"a,b,,c"/","' '"abc"/""' '.it#comment'
    '.l[-1]-.l[0]' '.n as $x|1' '.l|length')
  n=0
  for e in "${exprs[@]}"; do
    rc=0
    want=$(jq -c "$e" o.json 2>/dev/null) || rc=$?
    grc=0
    got=$(state-get -j o.json -- "$e" 2>/dev/null) || grc=$?
    if [ "$rc" -ne 0 ]; then
      # 1: jq cannot parse it, and it is a loopkit path, not found (.n<2<3)
      [ "$grc" -ge 1 ] && [ "$grc" -le 3 ] || { echo "'$e': jq exit $rc, state-get exit $grc: $got"; false; }
      [ -z "$got" ] || { echo "'$e': jq failed, state-get printed $got"; false; }
    elif [ "$grc" -eq 2 ]; then
      # not read (length, as): refused, never answered otherwise
      [[ $e == *length* || $e == *" as "* ]] || { echo "'$e': refused, jq says $want"; false; }
    else
      [ "$grc" -eq 0 ] && [ "$got" = "$want" ] || { echo "'$e': jq $want, state-get ($grc) $got"; false; }
      n=$((n + 1))
    fi
  done
  [ "$n" -gt 60 ]
}

@test "issue 39: .pid//empty prints nothing, .n-1 is 2; names with operators are .[\"a-b\"], and .a-b where jq gives it no meaning" {
  ops_doc
  run -0 state-get o.json '.pid//empty'
  assert_output ''
  run -0 state-get o.json '.n-1' 'select(.it>3)|.n' '.["a-b"]' '."a-b"'
  assert_output $'2\n3\n7\n7'
  # jq gives .a-b no meaning (b is no function): the contract's bare name a-b
  run -0 state-get o.json '.a-b'
  assert_output 7
  run -2 --separate-stderr state-get o.json '.a | b'
  [[ $stderr == *"malformed expression '.a | b': unknown function 'b'"* ]]
  # jq cannot read it at all: the loopkit path it always was (contract section 2)
  run -0 state-get o.json '.history.bd-001.attempts' 'history.bd-001.attempts'
  assert_output $'3\n3'
  # jq reads .history.bd-001 as .history.bd - 1
  run -0 state-get o.json '.history.bd-001'
  assert_output 4
  # a plain path is still "not found"; without a dot, PATH//TEXT is text
  run -1 state-get o.json '.nope'
  run -0 state-get o.json 'nope//running' '.nope//n/a' 'pid//empty' 'nope//"t"' 'f//0'
  assert_output $'running\nn/a\nt\n0'
  run -0 state-get -s o.json 'm=.n-1' 'h=.it/2'
  assert_output $'m=2\nh=2.5'
}

# contract section 2: a bare name holds '-', so bead ids are member names;
# where jq's reading (.history.bd - 1) is an error, the member is the answer
beads_doc() {
  printf '%s' '{"n":3,"it":5,"history":{"bd-001":{"status":"done"},"bd-9":{"status":"open"},"x-1-2":{"status":"failed"}}}' >b.json
}

@test "issue 39: .history.bd-001 is bead bd-001 where jq's .history.bd - 1 is an error; .n-1 stays jq's" {
  beads_doc
  run -0 state-get b.json .history.bd-001 .history.bd-001.status '.history["bd-001"].status' history.bd-001.status
  assert_output $'{"status":"done"}\ndone\ndone\ndone'
  run -0 state-get b.json .history.bd-9 .history.bd-9.status .history.x-1-2 .history.x-1-2.status
  assert_output $'{"status":"open"}\nopen\n{"status":"failed"}\nfailed'
  # inside an expression, several in one call
  run -0 state-get b.json 'select(.it>3)|.history.bd-001|.status' '[.history.bd-001, .history.x-1-2]|.[1].status' \
    'select(.history.x-1-2 != null)|.n-1'
  assert_output $'done\nfailed\n2'
  # jq's value wins where there is one: n is 3, n-1 is 2
  run -0 state-get b.json .n-1 '.it/5' '.it%2'
  assert_output $'2\n1\n1'
  # neither: jq's error, exit 3
  run -3 --separate-stderr state-get b.json .m-1
  [[ $stderr == *"cannot be subtracted"* ]]
  run -3 state-get b.json .history.bd-002
  # an unseen bead is a missing path: the default, exit 1 for --exists and -e
  run -0 state-get -d null b.json .history.bd-002 .history.bd-002.status .history.x-9-9 .history.bd-001.status
  assert_output $'null\nnull\nnull\ndone'
  run -1 state-get --exists b.json .history.bd-002
  run -0 state-get --exists b.json .history.bd-001 .history.x-1-2
  run -1 state-get -e b.json .history.bd-002
  run -0 state-get -e b.json .history.bd-001
  run -0 state-get -s b.json .history.bd-001.status .history.bd-9
  assert_output $'status=done\nbd_9=\'{"status":"open"}\''
  run -0 state-get -d x -s b.json h=.history.bd-002
  assert_output h=x
}

@test "issue 39: state-set writes bead ids with '-' as member names, and state-get reads them back" {
  beads_doc
  run -0 state-set b.json history.bd-001.status=failed history.bd-002.attempts:=1 '.history.x-3.status=new'
  run -0 state-get -j b.json history.bd-001.status .history.bd-002.attempts .history.x-3 '.history["bd-002"]'
  assert_output $'"failed"\n1\n{"status":"new"}\n{"attempts":1}'
}

@test "issue 39: -e is jq's -e: a missing, null or false value is exit 1; --exists keeps the presence test" {
  command -v jq >/dev/null || skip "jq is not installed (scripts/lib-setup.bash installs it)"
  ops_doc
  for p in it pid f s nope 'l[]' 'o.b' 'l[5]' d 'l[0]' 'o.a'; do
    rc=0
    jq -e ".$p" o.json >/dev/null 2>&1 || rc=$?
    run --separate-stderr state-get -e o.json "$p"
    [ "$status" -eq "$rc" ] || { echo "-e $p: jq $rc, state-get $status"; false; }
    [ -z "$output" ] && [ -z "$stderr" ]
  done
  run -0 state-get --exit-status o.json it s '.l[]'
  run -1 state-get -e o.json it pid
  run -1 state-get -e o.json '.l[] | select(. > 5)'  # nothing: jq's 4, loopkit's 1
  run -1 state-get -e o.json '.it > 9'
  run -0 state-get -e o.json '.it > 3'
  # the README: completed_at null while running
  printf '{"status":"running","completed_at":null}' >s.json
  run -1 state-get -e s.json completed_at
  run -0 state-get --exists s.json completed_at
  run -1 state-get --exists s.json nope
  run -2 state-get -e --exists s.json status
}

# Old code read /dev/zero into memory until killed: bounded here by time
# and by address space, so that such a failure is quick and harmless.
@test "issue 39: a device is refused at once (exit 4), never read; /dev/null, a pipe and a FIFO are read" {
  run -4 --separate-stderr timeout 30 bash -c '[ -n "${LOOPKIT_SANITIZED:-}" ] || ulimit -v 4000000; state-get /dev/zero a'
  assert_equal "$stderr" "state-get: cannot open '/dev/zero': is a device"
  ln -s /dev/zero z.json
  run -4 --separate-stderr timeout 30 bash -c '[ -n "${LOOPKIT_SANITIZED:-}" ] || ulimit -v 4000000; state-get z.json a'
  assert_equal "$stderr" "state-get: cannot open 'z.json': is a device"
  run -4 --separate-stderr timeout 30 bash -c '[ -n "${LOOPKIT_SANITIZED:-}" ] || ulimit -v 4000000; state-get - a </dev/zero'
  assert_equal "$stderr" "state-get: cannot read 'standard input': is a device"
  # what a Unix user gives a reader still reads
  run -3 bash -c 'state-get - a </dev/null'
  run -3 state-get /dev/null a
  run -0 state-get <(echo '{"a":1}') a
  assert_output 1
  mkfifo f
  echo '{"a":2}' >f &
  run -0 state-get f a
  assert_output 2
  run -0 bash -c 'echo "{\"a\":3}" | state-get /dev/stdin a'
  assert_output 3
}
