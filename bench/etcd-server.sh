# shellcheck shell=bash
# Sourced by bench/etcd.sh and bench/handoff-etcd.sh: one throwaway etcd on
# loopback, syncing its log to disk as etcd does by default, or not
# (--unsafe-no-fsync, as tests/etcd/etcd-sandbox always starts it).
#   etcd_server_start DIR fsync|no-fsync   sets ETCD_ENDPOINT (HOST:PORT)
#   etcd_server_stop                       ends it (also on the caller's EXIT)
# The data goes under DIR, on the disk of DIR: where TMPDIR is tmpfs, fsync
# costs nothing, so the fsync mode wants DIR on a real disk.
ETCD_SERVER_PID=
etcd_server_stop() {
  [[ -z $ETCD_SERVER_PID ]] || { kill "$ETCD_SERVER_PID" 2>/dev/null || true; wait "$ETCD_SERVER_PID" 2>/dev/null || true; }
  ETCD_SERVER_PID=
}
etcd_server_start() {
  local dir=$1 mode=$2 client peer sync=()
  [[ $mode == no-fsync ]] && sync=(--unsafe-no-fsync)
  for _ in $(seq 100); do
    client=$((20000 + RANDOM % 12000)) peer=$((client + 1))
    ss -Htanl "sport = :$client or sport = :$peer" | grep -q . || break
  done
  mkdir -p "$dir"
  etcd --name b --data-dir "$dir/data" \
    --listen-client-urls "http://127.0.0.1:$client" --advertise-client-urls "http://127.0.0.1:$client" \
    --listen-peer-urls "http://127.0.0.1:$peer" --initial-advertise-peer-urls "http://127.0.0.1:$peer" \
    --initial-cluster "b=http://127.0.0.1:$peer" "${sync[@]}" >"$dir/log" 2>&1 </dev/null &
  ETCD_SERVER_PID=$!
  ETCD_ENDPOINT=127.0.0.1:$client
  for _ in $(seq 100); do
    if ETCDCTL_API=3 etcdctl --endpoints "$ETCD_ENDPOINT" --command-timeout=1s endpoint health >/dev/null 2>&1; then
      return 0
    fi
    sleep 0.1
  done
  echo "etcd did not start:" >&2
  tail -n 20 "$dir/log" >&2
  return 4
}
