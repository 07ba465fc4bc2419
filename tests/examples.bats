#!/usr/bin/env bats
# Every man page's examples and README.md's command blocks run as written
# (issue 39, item 16): tests/examples/run-page extracts them (a page's from
# its rendering, as man shows it), sets up the page's fixture
# (tests/examples/PAGE.bash) and runs each block in a scratch folder with
# the built tools and engines on PATH. The blocks are read when the test
# runs: an example edited or added is run too; one that needs something new
# gets it in its page's fixture, or a kind ("; example: KIND" before it; see
# run-page).
load helpers

setup_file() {
  # the etcd examples run against a throwaway etcd; without one they are
  # left out (run-page says so)
  if command -v etcd >/dev/null; then etcd_start; fi
}
teardown_file() { etcd_stop; }

setup() {
  loopkit_setup
  export PATH="$LOOPKIT_BIN:$LOOPKIT_SOURCE/scripts:$PATH"
}

page() { # PAGE: its examples, all passing
  run --separate-stderr "$LOOPKIT_SOURCE/tests/examples/run-page" "$LOOPKIT_SOURCE/$1"
  if ((status != 0)); then
    printf '%s\n' "$stderr" >&2
    return 1
  fi
}

@test "every man page and README.md has its case here" {
  local f name
  for f in "$LOOPKIT_SOURCE"/man/*.scd README.md; do
    name=${f##*/}
    grep -qF "page man/$name" "$BATS_TEST_FILENAME" || grep -qF "page $name" "$BATS_TEST_FILENAME" ||
      fail "no case runs the examples of $name"
  done
}

@test "README.md" { page README.md; }
@test "agent-run(1)" { page man/agent-run.1.scd; }
@test "ctx-resume(1)" { page man/ctx-resume.1.scd; }
@test "ctx-save(1)" { page man/ctx-save.1.scd; }
@test "drain-engine(1)" { page man/drain-engine.1.scd; }
@test "engine-ctl(1)" { page man/engine-ctl.1.scd; }
@test "engine-report(1)" { page man/engine-report.1.scd; }
@test "engine-status(1)" { page man/engine-status.1.scd; }
@test "event-append(1)" { page man/event-append.1.scd; }
@test "event-show(1)" { page man/event-show.1.scd; }
@test "lock-acquire(1)" { page man/lock-acquire.1.scd; }
@test "lock-heartbeat(1)" { page man/lock-heartbeat.1.scd; }
@test "lock-reap(1)" { page man/lock-reap.1.scd; }
@test "lock-release(1)" { page man/lock-release.1.scd; }
@test "lock-status(1)" { page man/lock-status.1.scd; }
@test "loop-engine(1)" { page man/loop-engine.1.scd; }
@test "loopkit(7)" { page man/loopkit.7.scd; }
@test "pipeline-engine(1)" { page man/pipeline-engine.1.scd; }
@test "progress-append(1)" { page man/progress-append.1.scd; }
@test "progress-show(1)" { page man/progress-show.1.scd; }
@test "state-get(1)" { page man/state-get.1.scd; }
@test "state-set(1)" { page man/state-set.1.scd; }

@test "a block's lines continued with a backslash stay continued as man shows them" {
  # scdoc eats a lone "\" at a line's end: the pages write "\\"
  run -1 grep -nE '[^\\]\\$' "$LOOPKIT_SOURCE"/man/*.scd
  run -0 "$LOOPKIT_SOURCE/tests/examples/extract" "$LOOPKIT_SOURCE/man/state-set.1.scd" blocks
  run -0 grep -l -- '--fence locks/bd-123.lock --pid \$\$ state.json \\$' blocks/*.text
}

@test "the run-page harness fails a block that fails, writes to stderr or leaves a failure unchecked" {
  mkdir -p man
  printf '%s\n' 'x(1)' '' '# EXAMPLES' '' '```' 'true' '```' '' '```' 'false' '```' '' '```' 'echo oops >&2' '```' \
    '' '```' 'false; true' '```' '' '; example: run status=3' '```' 'exit 3' '```' >man/x.1.scd
  run -1 --separate-stderr "$LOOPKIT_SOURCE/tests/examples/run-page" man/x.1.scd
  assert_equal "$(grep -c '^run-page: ' <<<"$stderr")" 3
  [[ $stderr == *"x.1.scd:9 (EXAMPLES): exit 1, not 0"* ]]
  [[ $stderr == *"x.1.scd:13 (EXAMPLES): wrote to stderr"* ]]
  [[ $stderr == *"x.1.scd:17 (EXAMPLES): a command failed"* ]]
}

@test "ctx-resume(1)'s script form stops when there is nothing to resume, and goes on when there is" {
  cat >resume.sh <<'SH'
vars=$(ctx-resume --shell) || exit
eval "$vars"
echo "resuming $MDAN_PHASE"
SH
  run -1 bash resume.sh
  refute_output --partial resuming
  ctx-save --phase TEST --tokens 1/2 >/dev/null
  run -0 bash resume.sh
  assert_output --partial "resuming TEST"
}

@test "README.md names the engines as installed: no scripts/ before a command it runs" {
  run -1 grep -nE '^(scripts/)(loop|pipeline|drain)-engine|^scripts/engine-' "$LOOPKIT_SOURCE/README.md"
}
