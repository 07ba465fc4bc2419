#!/usr/bin/env bats
# state-get and state-set on etcd keys (contract section 9), against a real
# etcd started on loopback by tests/etcd/etcd-sandbox for this file alone.

load helpers
setup_file() { etcd_start; }
teardown_file() { etcd_stop; }
setup() { etcd_setup; }

@test "state-get: a missing key reads as {}; --must-exist says no, exit 1" {
  run -1 --separate-stderr state-get "$U/s" status
  assert_equal "$stderr" "state-get: status: not found"
  run -0 state-get -d none "$U/s" status
  assert_output none
  run -1 --separate-stderr state-get --must-exist "$U/s" status
  assert_equal "$stderr" "state-get: '$U/s': no such key"
}

@test "state-set creates the key; state-get reads it; etcdctl sees the same document" {
  run -0 state-set "$U/s" status=running iteration:=1 --now started_at
  run -0 state-get "$U/s" status iteration started_at
  assert_output $'running\n1\n2025-01-10T10:05:30Z'
  run -0 etcdget "/lk-test/$BATS_TEST_NUMBER/s"
  assert_output $'{\n  "status": "running",\n  "iteration": 1,\n  "started_at": "2025-01-10T10:05:30Z"\n}'
  # etcd:///KEY takes its endpoints from LOOPKIT_ETCD_ENDPOINTS, then ETCDCTL_ENDPOINTS
  LOOPKIT_ETCD_ENDPOINTS=$ENDPOINTS run -0 state-get "etcd:///lk-test/$BATS_TEST_NUMBER/s" iteration
  assert_output 1
  ETCDCTL_ENDPOINTS=http://$ENDPOINTS run -0 state-set -p --compact "etcd:///lk-test/$BATS_TEST_NUMBER/s" iteration+=1
  assert_output '{"status":"running","iteration":2,"started_at":"2025-01-10T10:05:30Z"}'
}

@test "state-set edits the value faithfully: untouched bytes stay as they were" {
  etcdput "/lk-test/$BATS_TEST_NUMBER/s" $'{"a":   1.0,\n   "keep": [1,2,  3], "n": 5}'
  run -0 state-set "$U/s" n+=1 'm*={"x":true}'
  run -0 etcdget "/lk-test/$BATS_TEST_NUMBER/s"
  assert_output $'{"a":   1.0,\n   "keep": [1,2,  3], "n": 6, "m": {"x": true}}'
  # nothing changed: no write, the key's revision stays
  rev=$(ETCDCTL_API=3 etcdctl --endpoints "$ENDPOINTS" get -w json "/lk-test/$BATS_TEST_NUMBER/s" | jq '.kvs[0].mod_revision')
  run -0 state-set "$U/s" n:=6
  run -0 bash -c "ETCDCTL_API=3 etcdctl --endpoints $ENDPOINTS get -w json /lk-test/$BATS_TEST_NUMBER/s | jq '.kvs[0].mod_revision'"
  assert_output "$rev"
}

@test "state-set: --expect and --no-create say no (exit 1), bad JSON in the key is exit 3, nothing written" {
  run -1 --separate-stderr state-set --no-create "$U/s" x=1
  assert_equal "$stderr" "state-set: '$U/s': no such key"
  run -0 etcdget "/lk-test/$BATS_TEST_NUMBER/s"
  assert_output ""
  etcdput "/lk-test/$BATS_TEST_NUMBER/s" '{"phase":"plan"}'
  run -1 --separate-stderr state-set "$U/s" --expect phase=build phase=done
  assert_equal "$stderr" "state-set: '$U/s': phase is \"plan\", expected \"build\""
  run -0 state-get "$U/s" phase
  assert_output plan
  etcdput "/lk-test/$BATS_TEST_NUMBER/bad" '{"a":'
  run -3 state-set "$U/bad" a:=1
  run -3 state-get "$U/bad" a
  run -0 etcdget "/lk-test/$BATS_TEST_NUMBER/bad"
  assert_output '{"a":'
}

@test "state-set: 4 writers x 50 increments on one key give 200, no update lost" {
  run -0 state-set "$U/c" n:=0
  for w in 1 2 3 4; do
    (for _ in $(seq 50); do state-set "$U/c" n+=1 || echo "writer $w failed" >>failures; done) &
  done
  wait
  [ ! -e failures ]
  run -0 state-get "$U/c" n
  assert_output 200
}

@test "state-set: a retry after a conflict reads the key its failed transaction saw, no new range" {
  need_strace
  run -0 state-set "$U/r" n:=0
  for w in 1 2 3 4; do
    (for i in $(seq 15); do
      strace -f -e trace=sendmsg,sendto,write,writev -s 40 -o "trace.$w.$i" state-set "$U/r" n+=1 ||
        echo "writer $w failed" >>failures
    done) &
  done
  wait
  [ ! -e failures ]
  run -0 state-get "$U/r" n
  assert_output 60
  # one range per process, whatever the conflicts; a transaction per attempt
  [ "$(cat trace.* | grep -c '/v3/kv/range')" = 60 ]
  [ "$(cat trace.* | grep -c '/v3/kv/txn')" -ge 60 ]
}

@test "state-set --stream on a key: every line applied, -p prints the result" {
  run -0 bash -c "printf 'a:=1\nb=x\n--delete a\nc[]:=2\n' | state-set --stream -p --compact '$U/s'"
  assert_output '{"b":"x","c":[2]}'
  run -0 state-get -j "$U/s" c
  assert_output '[2]'
}

@test "state-set --on-invalid backup: the bad value goes to KEY.backup in the same write, --init starts again" {
  etcdput "/lk-test/$BATS_TEST_NUMBER/s" '{"version":2,"keep":"me"}'
  run -3 state-set --require version:=1 "$U/s" status=running
  run -0 --separate-stderr state-set --require version:=1 --on-invalid backup --init '{"version":1}' "$U/s" status=running
  [[ $stderr == "state-set: warning: "*"moved it to the key '/lk-test/$BATS_TEST_NUMBER/s.backup' and started again" ]]
  run -0 etcdget "/lk-test/$BATS_TEST_NUMBER/s.backup"
  assert_output '{"version":2,"keep":"me"}'
  run -0 state-get -j "$U/s" .
  assert_output '{"version":1,"status":"running"}'
  # valid now: nothing is backed up again
  run -0 --separate-stderr state-set --require version:=1 --on-invalid backup "$U/s" n:=1
  assert_equal "$stderr" ""
  etcdput "/lk-test/$BATS_TEST_NUMBER/s" 'not json'
  run -0 state-set --on-invalid backup "$U/s" n:=2
  run -0 etcdget "/lk-test/$BATS_TEST_NUMBER/s.backup"
  assert_output 'not json'
  run -0 state-get "$U/s" n
  assert_output 2
}

@test "etcd URLs: a folder is exit 2, a refused connection and a garbage answer exit 4" {
  run -2 --separate-stderr state-get "$U/" x
  assert_equal "$stderr" "state-get: '$U/': a state document is one key, not a folder (the URL ends in '/')"
  run -2 state-set "$U/" x=1
  run -2 --separate-stderr state-set --on-invalid backup - x=1 </dev/null
  run -2 state-get "etcd://no-port/k" x
  # a port nobody listens on: refused, exit 4, saying where
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  run -4 --separate-stderr state-set --timeout 2 "etcd://127.0.0.1:$port/k" x=1
  [[ $stderr == *"127.0.0.1:$port"* ]]
  # something that is not etcd answers garbage
  python3 -c '
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(("127.0.0.1", 0)); s.listen(8)
print(s.getsockname()[1], flush=True)
sys.stdout.close()
while True:
    c, _ = s.accept(); c.recv(65536); c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nnot json!"); c.close()
' >port &
  echo $! >>"$W.pids"
  wait_grep '' port && until [[ -s port ]]; do sleep 0.05; done
  run -4 --separate-stderr state-get --timeout 2 "etcd://127.0.0.1:$(cat port)/k" x
  [[ -n $stderr ]]
  run -4 state-set --timeout 2 "etcd://127.0.0.1:$(cat port)/k" x=1
}

@test "a 3-member cluster loses its leader mid-run: every state-set that exited 0 is counted, the others exit 4" {
  local dir=$BATS_TEST_TMPDIR/cluster eps leader list i
  eps=$("$LOOPKIT_SOURCE/tests/etcd/etcd-sandbox" start "$dir" 3 $$)
  leader=$("$LOOPKIT_SOURCE/tests/etcd/etcd-sandbox" leader "$dir")
  # the leader first, so that writes in flight go to the member that dies
  IFS=, read -ra members <<<"$eps"
  list=${members[leader - 1]}
  for i in 0 1 2; do ((i == leader - 1)) || list+=,${members[i]}; done
  url=etcd://$list/c
  state-set "$url" n:=0
  for w in 1 2 3 4; do
    (for _ in $(seq 30); do
      rc=0 && state-set --timeout 10 "$url" n+=1 2>>"err.$w" || rc=$?
      echo "$rc" >>"rc.$w"
    done) &
  done
  # the leader dies once the writers are under way
  for _ in $(seq 100); do [[ $(cat rc.* 2>/dev/null | wc -l) -ge 20 ]] && break; sleep 0.05; done
  "$LOOPKIT_SOURCE/tests/etcd/etcd-sandbox" kill "$dir" "$leader"
  wait
  ok=$(cat rc.* | grep -c '^0$' || true)
  bad=$(cat rc.* | grep -vc '^0$' || true)
  [ $((ok + bad)) = 120 ]
  # every failure is exit 4 (etcd out of reach, or outcome unknown)
  [ -z "$(cat rc.* | grep -v '^[04]$')" ]
  n=$(state-get --timeout 10 "$url" n)
  "$LOOPKIT_SOURCE/tests/etcd/etcd-sandbox" stop "$dir"
  echo "ok=$ok bad=$bad n=$n"
  # acknowledged writes are all there; a failed one may have landed only if its outcome was unknown
  [ "$n" -ge "$ok" ]
  [ "$n" -le $((ok + $(cat err.* | grep -c 'outcome unknown' || true))) ]
}

@test "the tools on PATH leave the etcd client to libexec/loopkit/loopkit-etcd, which runs their etcd calls" {
  # the client's requests are in loopkit-etcd alone
  helper=$(dirname "$(command -v state-get)")/../libexec/loopkit/loopkit-etcd
  grep -q -a /v3/kv/range "$helper"
  for tool in state-get state-set lock-acquire lock-heartbeat lock-release lock-status lock-reap; do
    ! grep -q -a /v3/kv/range "$(command -v "$tool")" || false
  done
  # a tool run by a link of another name hands its call over all the same
  run -0 state-set "$U/s" n:=7
  ln -s "$(command -v state-get)" sg
  run -0 ./sg "$U/s" n
  assert_output 7
  # by itself it is no command; without it, a URL is exit 4 naming it
  run -2 "$helper" "$U/s" n
  mkdir -p lone/bin
  cp "$(command -v state-get)" lone/bin/
  run -4 --separate-stderr lone/bin/state-get "$U/s" n
  assert_equal "$stderr" "state-get: cannot run '$PWD/lone/bin/../libexec/loopkit/loopkit-etcd': No such file or directory"
  echo '{"n": 1}' >f.json
  run -0 lone/bin/state-get f.json n
}

@test "issue 22/23 on a key: exact decimal sums, \"\" deleted alone, --stream --debounce keeps the good lines, --require on a new key" {
  run -0 state-set "$U/q" f:=0.1
  run -0 state-set "$U/q" f+=0.2 'c+=2.08' 'c+=0.1'
  run -0 state-get "$U/q" f c
  assert_output $'0.3\n2.18'
  etcdput "/lk-test/$BATS_TEST_NUMBER/e" '{"a":1,"":2,"s":"x"}'
  run -0 state-set "$U/e" --delete '[""]'
  run -0 etcdget "/lk-test/$BATS_TEST_NUMBER/e"
  assert_output '{"a":1,"s":"x"}'
  run -3 bash -c "printf 'n+=1\nn+=1\nn+=1\ns.x=1\n' | state-set --stream --debounce 5 '$U/e'"
  run -0 state-get "$U/e" n
  assert_output 3
  run -0 state-set --require version:=1 --on-invalid backup --compact -p "$U/r" iteration+=1
  assert_output '{"version":1,"iteration":1}'
  run -0 state-set --require version:=1 --on-invalid backup --compact -p "$U/r" iteration+=1
  assert_output '{"version":1,"iteration":2}'
}

# ---- --fence on etcd: the lock key compared in the write's own transaction ----

@test "state-set --fence on etcd: written while the lock key is ours; lock lost (exit 1, nothing written) once released" {
  run -0 lock-acquire --no-keeper --pid $$ "$U/lock"
  run -0 state-set --fence "$U/lock" --pid $$ "$U/s" n:=1
  run -0 state-get "$U/s" n
  assert_output 1
  run -0 lock-release --pid $$ "$U/lock"
  run -1 --separate-stderr state-set --fence "$U/lock" --pid $$ "$U/s" n:=2
  assert_equal "$stderr" "state-set: '$U/lock': lock lost"
  run -0 state-get "$U/s" n
  assert_output 1
}

@test "state-set --fence on etcd: another owner's lock, or a lease run out, is lost" {
  other=$(live)
  run -0 lock-acquire --no-keeper --pid "$other" "$U/theirs"
  run -1 state-set --fence "$U/theirs" --pid $$ "$U/s" n:=1
  run -0 lock-acquire --no-keeper --ttl 2 --pid $$ "$U/short"
  run -0 state-set --fence "$U/short" --pid $$ "$U/s" n:=2
  # nobody keeps the lease alive: etcd deletes the key when it runs out
  for _ in $(seq 100); do [[ -z $(etcdkeys "/lk-test/$BATS_TEST_NUMBER/short") ]] && break; sleep 0.1; done
  run -1 --separate-stderr state-set --fence "$U/short" --pid $$ "$U/s" n:=3
  assert_equal "$stderr" "state-set: '$U/short': lock lost"
  run -0 state-get "$U/s" n
  assert_output 2
}

@test "state-set --fence on etcd: checked also when the edit changes nothing (no-op write)" {
  run -0 state-set "$U/s" n:=1
  # no lock key at all
  run -1 --separate-stderr state-set --fence "$U/lock" --pid $$ "$U/s" n:=1
  assert_equal "$stderr" "state-set: '$U/lock': lock lost"
  other=$(live)
  run -0 lock-acquire --no-keeper --pid "$other" "$U/lock"
  run -1 --separate-stderr state-set --fence "$U/lock" --pid $$ -p "$U/s" n:=1
  assert_equal "$stderr" "state-set: '$U/lock': lock lost"
  assert_output ""
  run -0 lock-release --pid "$other" "$U/lock"
  run -0 lock-acquire --no-keeper --pid $$ "$U/lock"
  run -0 state-set --fence "$U/lock" --pid $$ "$U/s" n:=1
  run -0 lock-release --pid $$ "$U/lock"
}

@test "state-set --fence on etcd: the lock key's revision is a compare of the put's own transaction" {
  need_strace
  run -0 lock-acquire --no-keeper --pid $$ "$U/lock"
  lockkey=$(printf '%s' "/lk-test/$BATS_TEST_NUMBER/lock" | base64 -w0)
  strace -f -s 65536 -o trace -e trace=write,sendto,sendmsg state-set --fence "$U/lock" --pid $$ "$U/s" n:=1
  # one request carries both the compare on the lock key and the put
  run -0 grep -c "$lockkey.*request_put\|request_put.*$lockkey" trace
  assert_output 1
}

@test "state-set --fence: a lock on another etcd, or a lock file for a key, is a usage error (exit 2)" {
  run -2 state-set --fence "etcd://127.0.0.1:1/lk-test/lock" "$U/s" n:=1
  run -2 --separate-stderr state-set --fence locks/a.lock "$U/s" n:=1
  assert_equal "$stderr" "state-set: --fence 'locks/a.lock': a lock fences writes in its own store only (a lock file a file's, an etcd key those of keys on the same etcd)"
  run -0 etcdget "/lk-test/$BATS_TEST_NUMBER/s"
  assert_output ""
}

@test "issue 39: --redact hides a value set at an index under a secret name on etcd too" {
  run -0 state-set "$U/s" 'db.api_key:=["a"]'
  run -0 --separate-stderr state-set --redact "$U/s" 'password[0]=hunter2' 'db.api_key[1]=k-xyz'
  [[ $stderr != *hunter2* && $stderr != *k-xyz* ]]
  run -0 etcdget "/lk-test/$BATS_TEST_NUMBER/s"
  [[ $output != *hunter2* && $output != *k-xyz* ]]
  run -0 state-get -j "$U/s" password db.api_key
  assert_output $'["[REDACTED]"]\n["a","[REDACTED]"]'
}

@test "issue 39: jq's update operators on an etcd key, as on a file; a refused one writes nothing" {
  etcdput "/lk-test/$BATS_TEST_NUMBER/s" '{"n": 7, "t": 1, "p": 0.1, "f": false}'
  run -0 state-set "$U/s" n-=1 't/=8' 'p*=3' 'f//=2' 'n%=4'
  run -0 etcdget "/lk-test/$BATS_TEST_NUMBER/s"
  assert_output '{"n": 2, "t": 0.125, "p": 0.3, "f": 2}'
  run -3 state-set "$U/s" 'n/=0'
  run -2 state-set "$U/s" 'n|=1'
  run -0 etcdget "/lk-test/$BATS_TEST_NUMBER/s"
  assert_output '{"n": 2, "t": 0.125, "p": 0.3, "f": 2}'
}
