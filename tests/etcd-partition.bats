#!/usr/bin/env bats
# A worker cut off from etcd by a dropped network (issue 36, section 1):
# worker A runs in a network namespace of this file's own, joined to this
# host by a veth pair, and reaches etcd on the host's end of it; an nft
# rule in A's namespace then drops every packet to etcd. A must end its
# agent before its lease can have run out, counted from the last beat etcd
# confirmed; worker B, outside the namespace, takes the item over once the
# lease has run out, and the two agents never overlap. A is another host
# for B: its own host name and boot id (a mount namespace), its own hold
# folder. Needs root, ip and nft; skipped with the reason elsewhere. Only
# loopback and the test's own veth pair are ever contacted.

load helpers

: "${LOOPKIT_SCRIPTS:=$LOOPKIT_SOURCE/scripts}"
DRAIN=$LOOPKIT_SCRIPTS/drain-engine

# part_setup: the namespace NS and the veth pair (VETH here, its peer in
# NS), HOST_IP here and NS_IP there on a /30 that no interface of this host
# uses; a watcher removes them if this bats run dies before teardown_file
part_setup() {
  [[ $(id -u) == 0 ]] || skip "needs root (a network namespace and nft rules)"
  # by their paths: the tests' PATH has no sbin
  IP=$(command -v ip) || skip "ip (iproute2) is not installed"
  NFT=$(command -v nft) || skip "nft (nftables) is not installed"
  command -v unshare >/dev/null || skip "unshare (util-linux) is not installed"
  export IP NFT
  NS=lk-part-$$ VETH=lkp$$h
  local peer=lkp$$n net i
  for ((i = 0; i < 50; i++)); do
    net=10.231.$((RANDOM % 250)).
    "$IP" -4 addr show | grep -q "inet $net" || break
  done
  HOST_IP=${net}1 NS_IP=${net}2
  export NS VETH HOST_IP NS_IP
  "$IP" netns add "$NS" 2>/dev/null || skip "cannot make a network namespace here"
  (
    trap '' HUP
    while kill -0 "$$" 2>/dev/null; do sleep 1; done
    "$IP" netns del "$NS" 2>/dev/null
    "$IP" link del "$VETH" 2>/dev/null
  ) </dev/null >/dev/null 2>&1 3>&- &
  if ! { "$IP" link add "$VETH" type veth peer name "$peer" &&
    "$IP" link set "$peer" netns "$NS" &&
    "$IP" addr add "$HOST_IP/30" dev "$VETH" && "$IP" link set "$VETH" up &&
    "$IP" -n "$NS" addr add "$NS_IP/30" dev "$peer" && "$IP" -n "$NS" link set "$peer" up &&
    "$IP" -n "$NS" link set lo up; } 2>/dev/null; then
    part_teardown
    skip "cannot join a network namespace to this host with a veth pair"
  fi
  "$IP" netns exec "$NS" "$NFT" list ruleset >/dev/null 2>&1 || { part_teardown; skip "nft cannot set rules in a network namespace here"; }
}
part_teardown() {
  [[ -n ${NS:-} ]] || return 0
  "$IP" netns del "$NS" 2>/dev/null || true
  "$IP" link del "$VETH" 2>/dev/null || true
}

setup_file() {
  part_setup
  ETCD_SANDBOX_ALSO_LISTEN=$HOST_IP etcd_start
}
teardown_file() {
  etcd_stop
  part_teardown
}
setup() {
  etcd_setup
  unset LOOPKIT_NOW # leases age in real time here
  PORT=${ENDPOINTS##*:}
}

# in_ns CMD...: CMD in NS as another host would run it: its own host name,
# its own boot id (bound over the kernel's in a mount namespace of its own)
in_ns() {
  printf '%s\n' 5f0c1e52-0000-4000-8000-00000000000a >boot_id.a
  "$IP" netns exec "$NS" unshare -u -m sh -c 'hostname worker-a && mount --bind "$1" /proc/sys/kernel/random/boot_id &&
    shift && exec "$@"' _ "$PWD/boot_id.a" "$@"
}
# drop / heal: every packet from NS to etcd dropped, or let through again
drop() {
  "$IP" netns exec "$NS" "$NFT" -f - <<EOF
table inet lk_part {
  chain out { type filter hook output priority 0; policy accept; ip daddr $HOST_IP drop; }
}
EOF
}
heal() { "$IP" netns exec "$NS" "$NFT" delete table inet lk_part; }
# now: the monotonic clock (seconds since boot), which every namespace shares
now() { cut -d' ' -f1 /proc/uptime; }

# the agent: "start PID UPTIME WORKER" and "end PID UPTIME" in agents.log;
# "overlap PID" when an agent it follows still runs (overlap_lines: a
# process of this host's, whichever namespace). A's waits for ./go; B's ends
# at once.
make_agent() {
  {
    echo '#!/usr/bin/env bash'
    overlap_lines
    cat <<'EOF'
up() { cut -d' ' -f1 /proc/uptime; }
echo "start $$ $(up) $WORKER" >>agents.log
trap 'echo "end $$ $(up)" >>agents.log; exit 143' TERM
echo "$$" >"agent.$WORKER.tmp" && mv "agent.$WORKER.tmp" "agent.$WORKER"
if [[ $WORKER == a ]]; then
  for ((i = 0; i < 1200; i++)); do [[ -e go ]] && break; sleep 0.1; done
fi
echo "end $$ $(up)" >>agents.log
EOF
  } >work.sh
  chmod +x work.sh
}

@test "a worker cut off from etcd (packets dropped) ends its agent before its lease can run out; another takes the item over, never beside it" {
  make_agent
  printf 'i1\n' >ready.txt
  mkdir a-tmp
  # A: a 6 s lease, beaten every 2 s; --kill-after 1: its margin is 2 s
  in_ns env WORKER=a TMPDIR="$PWD/a-tmp" "$DRAIN" --next 'cat ready.txt' --state "etcd://$HOST_IP:$PORT/lk-test/$BATS_TEST_NUMBER/atari" \
    --locks "etcd://$HOST_IP:$PORT/lk-test/$BATS_TEST_NUMBER/claims/" --ttl 6 --kill-after 1 --poll 0.1 -- ./work.sh 2>a.log &
  a=$!
  wait_for agent.a || { cat a.log >&2; false; }
  agent_a=$(cat agent.a)
  cut=$(now)
  drop
  # B on this host, on loopback: it takes the item once A's lease has run
  # out (its key goes with it) and completes it
  WORKER=b "$DRAIN" --next 'cat ready.txt' --state "$U/atari" --locks "$U/claims/" --ttl 30 --kill-after 1 --poll 0.1 \
    -- ./work.sh 2>b.log || { cat b.log a.log >&2; false; }
  # A's agent had ended by then: its end is logged before B's agent started
  run -0 cat agents.log
  echo "$output" >&2
  refute_line --partial overlap
  a_end=$(awk -v p="$agent_a" '$1 == "end" && $2 == p { print $3 }' agents.log)
  b_start=$(awk '$1 == "start" && $4 == "b" { print $3 }' agents.log)
  [[ -n $a_end && -n $b_start ]]
  awk -v e="$a_end" -v s="$b_start" 'BEGIN { exit !(e < s) }'
  echo "A's agent ended $(awk -v e="$a_end" -v c="$cut" 'BEGIN { print e - c }') s after the cut (lease: 6 s from the last confirmed beat)" >&2
  grep -q "lost the lock .*claims/i1.lock (etcd out of reach until its lease may run out: lost '.*': no beat confirmed for the lease's 6s (less --margin 2s))" a.log ||
    { cat a.log >&2; false; }
  run -0 state-get "$U/atari" history.i1.status history.i1.attempts
  assert_output $'completed\n2'
  # healed, A finds the item done (or gives up on etcd): it ends, bounded
  heal
  for ((i = 0; i < 600; i++)); do kill -0 "$a" 2>/dev/null || break; sleep 0.1; done
  rc=0 && wait "$a" || rc=$?
  cat a.log >&2
  [[ $rc == 0 || $rc == 4 ]]
  run -0 state-get "$U/atari" history.i1.status history.i1.attempts
  assert_output $'completed\n2'
}
