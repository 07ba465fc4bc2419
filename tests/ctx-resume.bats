#!/usr/bin/env bats
# ctx-resume: pick, check, complete and count MDAN-AUTO saves (ctx-resume(1)).
load helpers

FIX=$BATS_TEST_DIRNAME/fixtures

# save_at EPOCH [ctx-save options...]: a save in saves/ made at that instant
save_at() { local t=$1; shift; LOOPKIT_NOW=$t ctx-save --dir saves "$@" >/dev/null; }

@test "the MDAN spec fixture resumes at IMPLEMENT" {
  cp "$FIX/mdan_context_save.spec-fae63f1e.json" save.json
  run -0 --separate-stderr ctx-resume save.json
  assert_output IMPLEMENT
  [ -z "$stderr" ]
  run -0 state-get save.json metadata.resume_count metadata.save_count
  assert_output $'1\n1'
}

@test "the minimal MDAN fixture resumes with one warning per missing field" {
  cp "$FIX/mdan_save_minimal.test_cli.json" save.json
  run -0 --separate-stderr ctx-resume save.json
  assert_output IMPLEMENT
  [ "$(grep -c 'missing' <<<"$stderr")" = "$(grep -c warning <<<"$stderr")" ]
  [[ $stderr == *"missing 'version'"* && $stderr == *"missing 'phases.status'"* && $stderr == *"missing 'metadata'"* ]]
  run -0 state-get save.json version phases.status.PLAN phases.status.IMPLEMENT phases.status.TEST metadata.resume_count
  assert_output $'1.0\ncomplete\nin_progress\npending\n1'
  run -0 --separate-stderr ctx-resume save.json
  [ -z "$stderr" ]
}

@test "the newest save is chosen by the epoch in its name, then its suffix" {
  save_at 1736503530 --phase LOAD
  save_at 1736503530 --phase PLAN
  save_at 1736503000 --phase DOC
  run -0 ctx-resume --peek --dir saves
  assert_output PLAN
  touch -d '2001-01-01' saves/mdan-save-1736503530-2.json
  run -0 ctx-resume --peek --dir saves
  assert_output PLAN
}

@test "a newer corrupt, empty or truncated save is skipped with a warning and kept" {
  save_at 1736503530 --phase TEST
  printf '{"version": "1.0", "phases": {' >saves/mdan-save-1736503600.json
  : >saves/mdan-save-1736503700.json
  printf 'not gzip' >saves/mdan-save-1736503800.json.gz
  printf '[1, 2]\n' >saves/mdan-save-1736503900.json
  run -0 --separate-stderr ctx-resume --dir saves
  assert_output TEST
  [ "$(grep -c 'warning: skipping' <<<"$stderr")" = 4 ]
  [ "$(ls saves | wc -l)" = 5 ]
  [ ! -s saves/mdan-save-1736503700.json ]
}

@test "symlinks and other names in the folder are not saves" {
  save_at 1736503530 --phase TEST
  save_at 1736503600 --phase DOC my.json
  ln -s ../my.json saves/mdan-save-1736503999.json
  printf '{"version":"1.0","phases":{"current":"PLAN"}}' >saves/mdan-save-latest.json
  run -0 ctx-resume --peek --dir saves
  assert_output TEST
}

@test "nothing to resume is exit 1, silent with -q" {
  mkdir empty
  run -1 --separate-stderr ctx-resume --dir empty
  [[ $stderr == *"nothing to resume"* ]]
  run -1 --separate-stderr ctx-resume -q --dir missing
  [ -z "$stderr" ]
  run -1 ctx-resume no-such-save.json
}

@test "a newer save of another major version is exit 3, not skipped" {
  save_at 1736503530
  printf '{"version":"2.0","phases":{"current":"X"}}\n' >saves/mdan-save-1736503600.json
  run -3 --separate-stderr ctx-resume --dir saves
  [[ $stderr == *"unsupported save version"* ]]
}

@test "--peek writes nothing; a resume rewrites the save 0600 and counts it" {
  save_at 1736503530 --phase PLAN
  f=saves/mdan-save-1736503530.json
  cp "$f" before
  run -0 ctx-resume --peek "$f"
  cmp "$f" before
  chmod 640 "$f"
  run -0 ctx-resume "$f"
  run -0 ctx-resume "$f"
  run -0 state-get "$f" metadata.resume_count
  assert_output 2
  [ "$(stat -c %a "$f")" = 600 ]
}

@test "a gzip save stays gzip when counted, and is found by its plain name" {
  save_at 1736503530 --phase DEPLOY --gzip-over 10
  run -0 ctx-resume saves/mdan-save-1736503530.json
  assert_output DEPLOY
  gzip -t saves/mdan-save-1736503530.json.gz
  run -0 state-get saves/mdan-save-1736503530.json.gz metadata.resume_count
  assert_output 1
}

@test "--json prints the completed document; --history the messages" {
  cp "$FIX/mdan_context_save.spec-fae63f1e.json" save.json
  run -0 bash -c 'ctx-resume --peek --json save.json | state-get - version metadata.resume_count configuration.log_level'
  assert_output $'1.0\n0\nINFO'
  run -0 bash -c 'ctx-resume --peek --history save.json | state-get - role'
  assert_output $'system\nuser\nassistant'
  run -2 ctx-resume --json --shell save.json
}

@test "--shell quotes values for eval" {
  save_at 1736503530 --set "phases.current=it's \$(touch pwned)"
  run -0 ctx-resume --shell --peek saves/mdan-save-1736503530.json
  eval "$output"
  [ "$MDAN_PHASE" = "it's \$(touch pwned)" ]
  [ "$MDAN_RESUME_COUNT" = 0 ]
  [ ! -e pwned ]
}

@test "standard input can be read and is never written" {
  save_at 1736503530 --phase TEST
  run -0 bash -c 'ctx-resume - <saves/mdan-save-1736503530.json'
  assert_output TEST
  run -2 ctx-resume --delete -
}

@test "--restore-artifacts writes the artifacts inside DIR" {
  cp "$FIX/mdan_context_save.spec-fae63f1e.json" save.json
  run -0 ctx-resume --peek --restore-artifacts out save.json
  [ "$(cat out/docs/plan.md)" = $'# Plan\n\n#PHASE1\n...' ]
  [ -f out/docs/discover.md ] && [ -f out/docs/architecture.md ]
}

@test "--restore-artifacts refuses absolute and .. paths and writes nothing" {
  cp "$FIX/mdan_context_save.spec-fae63f1e.json" save.json
  for bad in /tmp/evil.md ../evil.md docs/../../evil.md; do
    state-set save.json "context.artifacts.evil:={\"file\":\"$bad\",\"content\":\"x\"}"
    run -3 --separate-stderr ctx-resume --peek --restore-artifacts out save.json
    [[ $stderr == *"refusing to restore artifact 'evil'"* ]]
    [ ! -e out ] && [ ! -e evil.md ]
  done
}

@test "--restore-artifacts never follows a symlink inside DIR out of it" {
  cp "$FIX/mdan_context_save.spec-fae63f1e.json" save.json
  mkdir out outside
  ln -s ../outside out/docs
  run -4 --separate-stderr ctx-resume --restore-artifacts out save.json
  [[ $stderr == *"symlink 'out/docs'"* ]]
  [ -z "$(ls -A outside)" ]
  run -0 state-get save.json metadata.resume_count
  assert_output 0
}

@test "--restore-artifacts replaces a symlink at the file's own name" {
  printf 'keep\n' >victim
  mkdir -p out
  ln -s ../victim out/a.md
  printf 'new\n' >a.md
  save_at 1736503530 --artifact a=a.md
  run -0 ctx-resume --restore-artifacts out saves/mdan-save-1736503530.json
  [ "$(cat victim)" = keep ]
  [ ! -L out/a.md ] && [ "$(cat out/a.md)" = new ]
}

@test "--delete removes the save; not with --peek" {
  save_at 1736503530 --phase DOC
  run -2 ctx-resume --peek --delete --dir saves
  run -0 ctx-resume --delete --dir saves
  assert_output DOC
  [ -z "$(ls -A saves)" ]
}

@test "a write-back that fails with ENOSPC exits 4 and leaves the save whole" {
  need_strace
  save_at 1736503530 --phase PLAN
  cp saves/mdan-save-1736503530.json before
  rc=0; strace -f -o /dev/null -e inject=write:error=ENOSPC ctx-resume --dir saves 2>/dev/null || rc=$?
  [ "$rc" = 4 ]
  cmp saves/mdan-save-1736503530.json before
  [ "$(ls -A saves)" = mdan-save-1736503530.json ]
}

@test "concurrent resumes and saves of one file lose no count" {
  ctx-save --phase PLAN s.json >/dev/null
  for i in $(seq 10); do
    ctx-resume s.json >/dev/null &
    ctx-save --from s.json s.json >/dev/null &
  done
  wait
  run -0 state-get s.json metadata.resume_count metadata.save_count
  assert_output $'10\n11'
}

@test "another user's newer save in a shared folder is never resumed nor pruned" {
  [ "$(id -u)" = 0 ] || skip "needs root to give a file to another user"
  save_at 1736503530 --phase TEST
  save_at 1736503600 --phase DOC
  chown 65534 saves/mdan-save-1736503600.json
  run -0 ctx-resume --peek --dir saves
  assert_output TEST
  save_at 1736503700 --keep 1
  [ "$(ls saves | tr '\n' ' ')" = "mdan-save-1736503600.json mdan-save-1736503700.json " ]
}

@test "a SAVEFILE that is a symlink is refused (exit 4), never read or replaced" {
  ctx-save --phase PLAN real.json >/dev/null
  ln -s real.json link.json
  run -4 --separate-stderr ctx-resume link.json
  [[ $stderr == *"'link.json': is a symbolic link"* ]]
  [ -L link.json ]
  run -0 state-get real.json metadata.resume_count
  assert_output 0
}

@test "issue 22: without SAVEFILE, ctx-resume picks a save of the folder it runs in, never another project's" {
  mkdir -p saves a b c
  export TMPDIR=$W/saves
  (cd a && LOOPKIT_NOW=1736503500 ctx-save --phase PLAN >/dev/null)
  (cd b && LOOPKIT_NOW=1736503600 ctx-save --phase DOC >/dev/null)
  (cd a && LOOPKIT_NOW=1736503700 ctx-save --phase TEST --set project.name=shop >/dev/null)
  (cd b && LOOPKIT_NOW=1736503800 ctx-save --phase DEPLOY --set project.name=blog >/dev/null)
  cd a
  run -0 ctx-resume --peek
  assert_output TEST
  run -0 ctx-resume --peek --shell
  [[ $output == *"MDAN_SAVE=$W/saves/mdan-save-1736503700.json"* ]]
  cd ../b
  run -0 ctx-resume --peek
  assert_output DEPLOY
  run -0 ctx-resume --delete
  run -0 ctx-resume --peek
  assert_output DOC
  # a folder with no save of its own has nothing to resume, whatever the others left
  cd ../c
  run -1 --separate-stderr ctx-resume --peek
  [[ $stderr == *"nothing to resume"* ]]
  # a named SAVEFILE is resumed whoever made it
  run -0 ctx-resume --peek "$W/saves/mdan-save-1736503500.json"
  assert_output PLAN
}

@test "issue 22: a save that says no project is passed over with a warning, and kept" {
  mkdir saves
  save_at 1736503530 --phase TEST
  printf '{"version":"1.0","project":{"name":""},"phases":{"current":"PLAN"}}\n' >saves/mdan-save-1736503600.json
  run -0 --separate-stderr ctx-resume --peek --dir saves
  assert_output TEST
  [[ $stderr == *"skipping 'saves/mdan-save-1736503600.json': no project.name or project.folder says whose it is"* ]]
  [ -e saves/mdan-save-1736503600.json ]
}

# issue 24: the folder is listed without a look at each file; the saves
# tried are looked at one by one, and what is not ours is passed over as
# before, in silence
@test "issue 24: newer links, FIFOs and folders named like saves are passed over in silence" {
  save_at 1736503530 --phase TEST
  ln -s mdan-save-1736503530.json saves/mdan-save-1736503999.json
  mkfifo saves/mdan-save-1736503998.json
  mkdir saves/mdan-save-1736503997.json
  run -0 --separate-stderr ctx-resume --peek --dir saves
  assert_output TEST
  [ -z "$stderr" ]
  ln -s nowhere dangling
  run -1 --separate-stderr ctx-resume --dir dangling
  [[ $stderr == *"nothing to resume"* ]]
}

# issue 39: what is resumed is printed before the resume is counted or the
# save removed: output that cannot be written is exit 4 with the save as it was
@test "output that cannot be written (full, closed, broken pipe): exit 4, the save neither counted nor deleted" {
  ctx-save --phase PLAN s.json >/dev/null
  cp s.json before
  run -4 --separate-stderr bash -c 'ctx-resume --delete s.json >/dev/full'
  assert_equal "$stderr" "ctx-resume: cannot write to standard output: No space left on device"
  cmp s.json before
  run -4 --separate-stderr bash -c 'ctx-resume s.json >&-'
  assert_equal "$stderr" "ctx-resume: cannot write to standard output: Bad file descriptor"
  cmp s.json before
  run -4 --separate-stderr broken_pipe ctx-resume --delete --shell s.json
  assert_equal "$stderr" "ctx-resume: cannot write to standard output: Broken pipe"
  cmp s.json before
  run -0 ctx-resume --delete s.json
  assert_output PLAN
  assert [ ! -e s.json ]
}
