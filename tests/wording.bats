#!/usr/bin/env bats
# What the messages say: the words of an error read as English (issue 39).
load helpers

@test "a type in the way is named with its article: an array, an object, null" {
  echo '{"a": [1], "o": {"k": 1}, "n": null, "s": "x"}' >s.json
  run -3 --separate-stderr state-get s.json .a.x
  assert_equal "$stderr" 'state-get: .a.x: cannot look up "x" in an array'
  run -3 --separate-stderr state-get s.json '.o[0]'
  assert_equal "$stderr" 'state-get: .o[0]: cannot index an object with [0]'
  run -3 --separate-stderr state-set s.json 'o[0]:=1'
  assert_equal "$stderr" "state-set: o[0]: cannot index an object at '.o'"
  run -3 --separate-stderr state-set s.json 'a.k:=1'
  assert_equal "$stderr" "state-set: a.k: cannot set \"k\" in an array at '.a'"
  run -3 --separate-stderr state-set s.json 'o+=1'
  assert_equal "$stderr" "state-set: o: cannot add to an object"
  run -3 --separate-stderr state-set s.json 'a[]:=1' 'o[]:=1'
  assert_equal "$stderr" "state-set: o[]: cannot append to an object"
  run -3 --separate-stderr state-set s.json --delete 'a.k'
  assert_equal "$stderr" "state-set: a.k: cannot delete a member of an array"
  run -0 grep -q '"a": \[1\]' s.json
}

@test "no message of the tools, the library or the engines says 'a array' or 'a object'" {
  run -1 grep -rnE "\ba (array|object|\{\})" "$LOOPKIT_SOURCE/lib" "$LOOPKIT_SOURCE/tools" "$LOOPKIT_SOURCE/scripts"
}
