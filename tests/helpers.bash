# Shared set-up for loopkit's own bats files: the tools under test come from
# $LOOPKIT_BIN (set by CTest), and nothing of the caller's HOME, PATH or
# LOOPKIT_* leaks in. Each test runs in a fresh scratch folder.
bats_require_minimum_version 1.5.0
load /usr/lib/bats/bats-support/load.bash
load /usr/lib/bats/bats-assert/load.bash

: "${LOOPKIT_BIN:?set LOOPKIT_BIN to the folder of the built tools (CTest does)}"
: "${LOOPKIT_SOURCE:=$(cd "$BATS_TEST_DIRNAME/.." && pwd)}"

loopkit_setup() {
  local var
  for var in $(compgen -e LOOPKIT_); do
    case $var in LOOPKIT_BIN | LOOPKIT_SCRIPTS | LOOPKIT_SOURCE | LOOPKIT_BUILD | LOOPKIT_SANITIZED) ;; *) unset "$var" ;; esac
  done
  export PATH="$LOOPKIT_BIN:/usr/local/bin:/usr/bin:/bin"
  export LOOPKIT_NOW=1736503530 # 2025-01-10T10:05:30Z
  export TZ=UTC LC_ALL=C
  # the agents' hold files of etcd locks go under TMPDIR, the test's own
  unset XDG_RUNTIME_DIR
  # the scratch folder W holds only what a test makes; HOME and TMPDIR sit beside it
  BASE=$(mktemp -d "${BATS_TMPDIR:-/tmp}/loopkit-test.XXXXXX")
  W=$BASE/work
  export HOME=$BASE/home TMPDIR=$BASE/tmp
  mkdir -p "$W" "$HOME" "$TMPDIR"
  cd "$W" || return 1
}

teardown() {
  jobs -p | xargs -r kill 2>/dev/null || true
  if [[ -f $W.pids ]]; then xargs -r kill <"$W.pids" 2>/dev/null || true; rm -f "$W.pids"; fi
  cd / && rm -rf "$BASE"
}

# bats calls setup; a file that needs more calls loopkit_setup from its own
setup() { loopkit_setup; }

# etcd_start / etcd_stop, from setup_file and teardown_file: one throwaway
# etcd for the file (tests/etcd/etcd-sandbox), its endpoints in ENDPOINTS; the
# sandbox's watcher stops it if this bats run dies before teardown_file.
# Skips the file where etcd is not installed.
etcd_start() {
  command -v etcd >/dev/null || skip "etcd is not installed (Debian: etcd-server)"
  export ETCD_DIR="$BATS_FILE_TMPDIR/etcd"
  ENDPOINTS=$("$LOOPKIT_SOURCE/tests/etcd/etcd-sandbox" start "$ETCD_DIR" 1 $$)
  export ENDPOINTS
}
etcd_stop() {
  [[ -z ${ETCD_DIR:-} ]] || "$LOOPKIT_SOURCE/tests/etcd/etcd-sandbox" stop "$ETCD_DIR"
}
# setup for those files: D is a key folder of the test's own, U the key of
# that name (etcd://EP/lk-test/N), for keys under it
etcd_setup() {
  loopkit_setup # clears LOOPKIT_*: the endpoints are in ENDPOINTS
  # shellcheck disable=SC2034 # read by the test files
  D="etcd://$ENDPOINTS/lk-test/$BATS_TEST_NUMBER/" U="etcd://$ENDPOINTS/lk-test/$BATS_TEST_NUMBER"
}
# etcdctl on the sandbox: a key's value, a put, the keys under a prefix
etcdget() { ETCDCTL_API=3 etcdctl --endpoints "$ENDPOINTS" get --print-value-only "$1"; }
etcdput() { ETCDCTL_API=3 etcdctl --endpoints "$ENDPOINTS" put "$1" -- "$2" >/dev/null; }
etcdkeys() { ETCDCTL_API=3 etcdctl --endpoints "$ENDPOINTS" get --keys-only --prefix "$1" | sed '/^$/d'; }

# a live process that is not ours to wait for; killed at teardown
live() {
  sleep 300 >/dev/null 2>&1 &
  echo $! >>"$W.pids"
  echo $!
}

# a process id that is certainly not alive
dead_pid() {
  sh -c 'exit 0' & local p=$!; wait "$p"; echo "$p"
}

# skip unless strace can inject faults here (ptrace may be forbidden)
need_strace() {
  command -v strace >/dev/null || skip "strace is not installed"
  strace -f -o /dev/null -e trace=none true 2>/dev/null || skip "strace cannot trace here"
}

# need_strace_counts: the program-start counts are the scripts', the same in
# every build (a sanitized tool leaves out its leak check, which needs ptrace,
# under a tracer: tests/fuzz/sanitizer_defaults.cpp)
need_strace_counts() { need_strace; }

# strace_calls OUT STRACE-OPTIONS... COMMAND...: strace -f of COMMAND into
# OUT, one line per successful call, for counting; ended after 10 minutes. Without status=successful, a call that
# another process's line interrupts is split into "<unfinished ...>" and
# "<... resumed>" lines: an execve counted by its path and its "= 0" is
# missed, a clone counted by its name is counted twice, as load decides.
strace_calls() {
  local out=$1
  shift
  timeout -k 10 600 strace -f -qq -e signal=none -e status=successful -o "$out" "$@"
}

# broken_pipe COMMAND...: runs COMMAND with standard output a pipe whose
# reader is gone before it starts (a FIFO opened read-write, then the write
# end opened and the read-write one closed): every write is EPIPE/SIGPIPE,
# with no race against a reader that exits
broken_pipe() {
  local fifo
  fifo=$(mktemp -u "$BASE/pipe.XXXXXX")
  mkfifo "$fifo"
  bash -c 'exec 3<>"$1"; exec 4>"$1"; exec 3<&-; shift; exec "$@" >&4 4>&-' _ "$fifo" "$@"
}

# wait_for FILE: until FILE exists (bounded: 30 s) -- synchronise on files, never on sleeps
wait_for() {
  local i
  for ((i = 0; i < 300; i++)); do [[ -e $1 ]] && return 0; sleep 0.1; done
  echo "timed out waiting for $1" >&2
  return 1
}

# wait_recorded STATE PATH [VALUE]: until the state STATE (a file or an etcd
# URL) has a value at PATH, with VALUE that one: an engine records its agent
# just after the agent started, and a value an earlier run left is another
# agent's (bounded: 30 s)
wait_recorded() {
  local i v=""
  for ((i = 0; i < 300; i++)); do
    if v=$(state-get -q "$1" "$2" 2>/dev/null) && [[ $v != null && ($# -lt 3 || $v == "$3") ]]; then return 0; fi
    sleep 0.1
  done
  echo "timed out waiting for $2${3:+ to be $3} in $1 (it is '$v')" >&2
  return 1
}

# wait_grep TEXT FILE: until FILE holds TEXT (bounded: 30 s)
wait_grep() {
  local i
  for ((i = 0; i < 300; i++)); do grep -qF -- "$1" "$2" 2>/dev/null && return 0; sleep 0.1; done
  echo "timed out waiting for '$1' in $2" >&2
  return 1
}

# a process's state letter (R, S, T for stopped, ...); empty when gone
proc_state() { awk '{ sub(/^.*\) /, ""); print $1 }' "/proc/$1/stat" 2>/dev/null || true; }
# wait_state PID STATE: until PID is in STATE (T: stopped), bounded: 30 s
wait_state() {
  local i
  for ((i = 0; i < 300; i++)); do [[ $(proc_state "$1") == "$2" ]] && return 0; sleep 0.1; done
  echo "process $1 never reached state $2 (it is '$(proc_state "$1")')" >&2
  return 1
}
# wait_not_state PID STATE: until PID is in another state than STATE
wait_not_state() {
  local i
  for ((i = 0; i < 300; i++)); do [[ $(proc_state "$1") != "$2" ]] && return 0; sleep 0.1; done
  echo "process $1 stayed in state $2" >&2
  return 1
}
# wait_gone PID: until PID has exited (bounded: 40 s)
wait_gone() {
  local i
  for ((i = 0; i < 400; i++)); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.1; done
  echo "process $1 is still alive" >&2
  return 1
}

# wait_exec PID NAME: until the background job PID runs NAME (not still the
# forked shell, whose traps could swallow a signal sent now; bounded: 30 s)
wait_exec() {
  local i
  for ((i = 0; i < 300; i++)); do [[ $(cat "/proc/$1/comm" 2>/dev/null) == "${2:0:15}" ]] && return 0; sleep 0.1; done
  echo "process $1 never ran $2" >&2
  return 1
}

# zombie: the pid of a process that has exited and that its parent (killed
# at teardown) never reaps. The child waits until its parent has become
# `sleep`, which never reaps; a bash parent would reap a child that exited
# before the exec.
zombie() {
  # shellcheck disable=SC2016
  (sh -c 'while [ "$(cat /proc/$PPID/comm 2>/dev/null)" != sleep ]; do sleep 0.02; done' &
    echo $! >"$W.zombie.tmp" && mv "$W.zombie.tmp" "$W.zombie"; exec sleep 300) >/dev/null 2>&1 &
  echo $! >>"$W.pids"
  wait_for "$W.zombie"
  local z; z=$(cat "$W.zombie")
  for _ in $(seq 600); do [[ $(cut -d' ' -f3 "/proc/$z/stat" 2>/dev/null) == Z ]] && break; sleep 0.05; done
  echo "$z"
}

# overlap_lines: the first lines of an agent (bash) of the overlap tests:
# "overlap PID" in agents.log for each agent of agents.live still alive (a
# zombie, whose parent died and that waits for a reaper, is not), then its
# own pid added to agents.live
overlap_lines() {
  cat <<'EOF2'
for p in $(cat agents.live 2>/dev/null); do
  if [[ $(awk '{ sub(/^.*\) /, ""); print $1 }' "/proc/$p/stat" 2>/dev/null) == [^ZX] ]]; then echo "overlap $p" >>agents.log; fi
done
echo "$$" >>agents.live
EOF2
}

# make_overlap_agent [LINE]: ./overlap.sh, an agent for the engines' overlap
# tests: it notes any agent of the session still alive (overlap_lines),
# takes TERM_GRACE seconds to end on SIGTERM, and, without ./second, waits a
# minute; LINE (a shell line) runs before it ends.
make_overlap_agent() {
  {
    echo '#!/usr/bin/env bash'
    overlap_lines
    cat <<'EOF2'
echo "start $$" >>agents.log
trap 'sleep "${TERM_GRACE:-0}"; echo "end $$ term" >>agents.log; exit 143' TERM
echo "$$" >agent.pid.tmp && mv agent.pid.tmp agent.pid
if [[ ! -e second ]]; then
  for ((i = 0; i < 600; i++)); do sleep 0.1; done
fi
EOF2
    if [[ -n ${1:-} ]]; then printf '%s\n' "$1"; fi
    echo 'echo "end $$" >>agents.log'
  } >overlap.sh
  chmod +x overlap.sh
}

# under_subreaper CMD...: CMD as a job of its own (pid in job.pid) under a
# parent in this session that adopts its orphans (as tini or a service
# manager does): when CMD dies, the stopped members of its job stay stopped
# (their group is not orphaned, so the kernel sends them no SIGCONT)
under_subreaper() {
  local prctl
  case $(uname -m) in
    x86_64) prctl=157 ;;
    aarch64) prctl=167 ;;
    *) skip "prctl's system call number is not known here" ;;
  esac
  perl -e 'syscall($ARGV[0], 36, 1, 0, 0, 0) == 0 or die "prctl: $!"; shift;
    my $pid = fork() // die; if ($pid == 0) { $SIG{INT} = $SIG{QUIT} = "DEFAULT"; setpgrp(0, 0);
    open(F, ">job.pid.tmp") or die; print F "$$\n"; close F; rename("job.pid.tmp", "job.pid"); exec @ARGV or die }
    1 while wait() != -1' "$prctl" "$@" 2>/dev/null &
}

# wait_held HOLD: until agent-run's hold file (a glob) holds its record,
# which agent-run writes just after the agent started: a restart tells a
# stopped or frozen run by it (bounded: 30 s)
wait_held() {
  local i f
  for ((i = 0; i < 300; i++)); do
    while IFS= read -r f; do [[ -s $f ]] && return 0; done < <(compgen -G "$1")
    sleep 0.1
  done
  echo "no record in the hold file $1" >&2
  return 1
}

# stopped_run HOLD CMD...: CMD, an engine running ./overlap.sh
# (make_overlap_agent), as a job under a subreaper (under_subreaper); once
# its agent runs and HOLD holds its record (wait_held), ./second made (the
# next agent ends at once) and the run stopped (SIGSTOP to the agent's group
# and to the job: the engine and agent-run). Sets job (the job's pid) and
# first (the agent's).
stopped_run() {
  local hold=$1
  shift
  under_subreaper "$@"
  wait_for job.pid
  job=$(cat job.pid)
  wait_for agent.pid
  first=$(cat agent.pid)
  rm agent.pid
  touch second
  wait_held "$hold"
  kill -STOP -- "-$(ps -o pgid= -p "$first" | tr -d ' ')" "-$job"
  wait_state "$first" T
}

# wait_ended PID: until PID is gone, or a zombie that its new parent is yet
# to reap (bounded: 30 s)
wait_ended() {
  local i
  for ((i = 0; i < 300; i++)); do [[ $(proc_state "$1") == @(|Z|X) ]] && return 0; sleep 0.1; done
  echo "process $1 still runs (state '$(proc_state "$1")')" >&2
  return 1
}
