#!/usr/bin/env bats
# The tools on etcds:// URLs (TLS, certificates made here by openssl) and
# with ETCDCTL_USER, as a user runs them: contract section 9. One etcd that
# speaks only TLS and asks for a client certificate, started for this file.

load helpers

setup_file() {
  command -v etcd >/dev/null || skip "etcd is not installed (Debian: etcd-server)"
  export CERTS="$BATS_FILE_TMPDIR/certs"
  mkdir -p "$CERTS"
  (
    cd "$CERTS"
    ec=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
    openssl req -x509 "${ec[@]}" -keyout ca-key.pem -out ca.pem -days 2 -subj /CN=loopkit-test-ca
    openssl req "${ec[@]}" -keyout server-key.pem -out server.csr -subj /CN=localhost
    printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' >san
    openssl x509 -req -in server.csr -CA ca.pem -CAkey ca-key.pem -CAcreateserial -days 2 -extfile san -out server.pem
    openssl req "${ec[@]}" -keyout client-key.pem -out client.csr -subj /CN=root
    openssl x509 -req -in client.csr -CA ca.pem -CAkey ca-key.pem -CAcreateserial -days 2 -out client.pem
    # etcd's gateway refuses a certificate with a CommonName once auth is on
    openssl req "${ec[@]}" -keyout nocn-key.pem -out nocn.csr -subj /O=loopkit-test
    openssl x509 -req -in nocn.csr -CA ca.pem -CAkey ca-key.pem -CAcreateserial -days 2 -out nocn.pem
    cp ca.pem client-ca.pem
  ) >"$BATS_FILE_TMPDIR/openssl.log" 2>&1
  export ETCD_DIR="$BATS_FILE_TMPDIR/etcd"
  ENDPOINTS=$(ETCD_SANDBOX_TLS=$CERTS "$LOOPKIT_SOURCE/tests/etcd/etcd-sandbox" start "$ETCD_DIR" 1 $$)
  export ENDPOINTS
}
teardown_file() { etcd_stop; }
setup() {
  loopkit_setup
  export ETCDCTL_CACERT=$CERTS/ca.pem ETCDCTL_CERT=$CERTS/client.pem ETCDCTL_KEY=$CERTS/client-key.pem
  S="etcds://$ENDPOINTS/lk-tls/$BATS_TEST_NUMBER"
}

ctl() { ETCDCTL_API=3 etcdctl --endpoints "https://$ENDPOINTS" "$@"; }

@test "state-set and state-get over etcds://, etcdctl reads the same key" {
  run -0 state-set "$S/state" status=running n:=1
  run -0 state-set "$S/state" n+=1
  run -0 state-get "$S/state" status n
  assert_output $'running\n2'
  run -0 ctl get --print-value-only "/lk-tls/$BATS_TEST_NUMBER/state"
  assert_output $'{\n  "status": "running",\n  "n": 2\n}'
}

@test "lock-acquire, lock-status and lock-release over etcds://" {
  run -0 lock-acquire --no-keeper --pid $$ "$S/locks/a"
  run -0 lock-status "$S/locks/"
  assert_output --partial "$S/locks/a: live"
  run -0 lock-release --pid $$ "$S/locks/a"
  run -0 lock-acquire "$S/locks/b" -- sh -c 'echo "revision $LOOPKIT_LOCK_REVISION"'
  assert_output --regexp '^revision [0-9]+$'
}

@test "no CA: the server is not trusted, exit 4; no client certificate: refused, exit 4; plain HTTP to TLS: exit 4" {
  run -4 --separate-stderr env -u ETCDCTL_CACERT state-get --timeout 2 "$S/state" n
  [[ $stderr == *"TLS handshake with '$ENDPOINTS' failed"*"certificate verify failed"* ]]
  run -4 --separate-stderr env -u ETCDCTL_CERT -u ETCDCTL_KEY state-set --timeout 2 "$S/state" n:=1
  [[ -n $stderr ]]
  run -4 state-get --timeout 2 "etcd://$ENDPOINTS/lk-tls/x" n
  run -0 ctl get --print-value-only "/lk-tls/$BATS_TEST_NUMBER/state"
  assert_output ""
}

# last in the file: it turns authentication on for the server
@test "ETCDCTL_USER: the tools authenticate; a wrong password, or a certificate etcd's gateway refuses, is exit 4" {
  ctl user add root:secret >/dev/null
  ctl user grant-role root root >/dev/null
  ctl auth enable >/dev/null
  export ETCDCTL_CERT=$CERTS/nocn.pem ETCDCTL_KEY=$CERTS/nocn-key.pem
  ETCDCTL_USER=root:secret run -0 state-set "$S/state" n:=1
  ETCDCTL_USER=root:secret run -0 lock-acquire "$S/lock" -- true
  ETCDCTL_USER=root:wrong run -4 --separate-stderr state-set --timeout 2 "$S/state" n:=2
  [[ $stderr == *"authentication failed"* ]]
  ETCDCTL_USER=root:secret run -0 state-get "$S/state" n
  assert_output 1
  # a certificate with a CommonName: etcd's JSON gateway answers 400 in plain
  # text, and the tools pass its words on
  ETCDCTL_USER=root:secret ETCDCTL_CERT=$CERTS/client.pem ETCDCTL_KEY=$CERTS/client-key.pem \
    run -4 --separate-stderr state-get --timeout 2 "$S/state" n
  assert_equal "$stderr" "state-get: '$ENDPOINTS' does not answer as etcd (HTTP 400): CommonName of client sending a request against gateway will be ignored and not used as expected"
}
