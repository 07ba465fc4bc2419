#!/usr/bin/env bats
# ctx-save: MDAN-AUTO v1.0 saves (ctx-save(1), FILES; docs/cookbook.md).
load helpers

FIX=$BATS_TEST_DIRNAME/fixtures
SAVE=saves/mdan-save-1736503530.json

save1() { ctx-save --dir saves "$@"; }

@test "a fresh save holds every field of the seed with its defaults" {
  run -0 save1
  assert_output "CONTEXT SAVE $SAVE"
  run -0 state-get --json "$SAVE" phases.current phases.completed phases.status.LOAD phases.status.DOC \
    quality_gates.IMPLEMENT context.token_usage.total context.token_usage.limit configuration.token_limit \
    configuration.save_threshold configuration.output_dir configuration.log_level configuration.fail_fast \
    configuration.debate_enabled project.name debates errors context.decisions context.artifacts
  assert_output $'"LOAD"\n[]\n"pending"\n"pending"\nfalse\n0\n128000\n128000\n0.8\n"./mdan-auto-output"\n"INFO"\ntrue\ntrue\n""\n[]\n[]\n[]\n{}'
}

@test "the default folder is \$TMPDIR, created 0700 when missing" {
  export TMPDIR=$W/tmp/new/
  run -0 ctx-save
  assert_output "CONTEXT SAVE $W/tmp/new/mdan-save-1736503530.json"
  [ "$(stat -c %a "$W/tmp/new")" = 700 ]
  [ "$(stat -c %a "$W/tmp/new/mdan-save-1736503530.json")" = 600 ]
}

@test "a taken name gets -2, -3 before .json, in either form" {
  save1 >/dev/null
  run -0 save1
  assert_output "CONTEXT SAVE saves/mdan-save-1736503530-2.json"
  : >saves/mdan-save-1736503530-3.json.gz
  run -0 save1
  assert_output "CONTEXT SAVE saves/mdan-save-1736503530-4.json"
}

@test "a symlink planted at the save's name in a shared folder is never followed" {
  mkdir -m 1777 shared
  printf 'precious\n' >victim
  ln -s ../victim shared/mdan-save-1736503530.json
  ln -s ../nowhere shared/mdan-save-1736503530-2.json
  run -0 ctx-save --dir shared
  assert_output "CONTEXT SAVE shared/mdan-save-1736503530-3.json"
  [ "$(cat victim)" = precious ]
  [ -L shared/mdan-save-1736503530.json ] && [ -L shared/mdan-save-1736503530-2.json ] && [ ! -e nowhere ]
}

@test "an explicit SAVEFILE that is a symlink is refused (exit 4), its target untouched" {
  printf 'precious\n' >victim
  ln -s victim my.json
  run -4 --separate-stderr ctx-save my.json
  assert_output ""
  [[ $stderr == *"'my.json': is a symbolic link"* ]]
  [ "$(cat victim)" = precious ]
  [ -L my.json ]
  ln -s nowhere dangling.json
  run -4 ctx-save dangling.json
  [ -L dangling.json ] && [ ! -e nowhere ]
}

@test "an explicit SAVEFILE that is a FIFO is refused at once" {
  mkfifo my.json
  run -4 timeout 10 ctx-save my.json
  [ -p my.json ]
}

@test "an explicit SAVEFILE, also the --from file, is replaced with mode 0600" {
  mkdir d && cd d
  ctx-save --phase PLAN my.json >/dev/null
  chmod 644 my.json
  LOOPKIT_NOW=1736503600 run -0 ctx-save --from my.json --phase TEST my.json
  run -0 state-get my.json metadata.save_count phases.current metadata.created_at timestamp
  assert_output $'2\nTEST\n2025-01-10T10:05:30Z\n2025-01-10T10:06:40Z'
  [ "$(stat -c %a my.json)" = 600 ]
  [ "$(ls -A | tr '\n' ' ')" = "my.json " ]
}

@test "--phase matches without regard to case and marks the phases" {
  run -0 save1 --phase architect
  run -0 state-get --json "$SAVE" phases.current phases.completed phases.status.PLAN phases.status.ARCHITECT phases.status.DOC
  assert_output $'"ARCHITECT"\n["LOAD","DISCOVER","PLAN"]\n"complete"\n"in_progress"\n"pending"'
}

@test "--phase with an unknown name is a usage error" {
  run -2 --separate-stderr save1 --phase LUNCH
  [[ $stderr == *"unknown phase 'LUNCH'"* ]]
  [ ! -e "$SAVE" ]
}

@test "--tokens USED keeps the limit; malformed counts are usage errors" {
  run -0 save1 --tokens 32000
  run -0 state-get "$SAVE" context.token_usage.total context.token_usage.limit context.token_usage.percentage
  assert_output $'32000\n128000\n0.25'
  run -2 save1 --tokens 10/0
  run -2 save1 --tokens -5/100
  run -2 save1 --tokens lots
}

@test "--message keeps commas and needs ROLE=TEXT" {
  run -0 save1 --message 'user=a, b, and c'
  run -0 state-get "$SAVE" '.context.conversation_history[0].content'
  assert_output 'a, b, and c'
  run -2 save1 --message 'no role here'
}

@test "--history and --message append in command-line order" {
  printf '%s\n' '{"role":"system","content":"first"}' >h.jsonl
  run -0 save1 --message 'user=zero' --history h.jsonl --message 'assistant=second'
  run -0 state-get "$SAVE" '.context.conversation_history[].content'
  assert_output $'zero\nfirst\nsecond'
}

@test "--history that is not objects is bad data" {
  printf '[1]\n' >h.jsonl
  run -3 save1 --history h.jsonl
  printf '{"role":' >h.jsonl
  run -3 save1 --history h.jsonl
  [ ! -e "$SAVE" ]
}

@test "--set works as state-set does and fails as it does" {
  run -0 save1 --set 'project.tech_stack.language=C++' --set 'errors[]:={"id":"e1"}' --set metadata.save_count+=10
  run -0 state-get "$SAVE" project.tech_stack.language '.errors[0].id' metadata.save_count
  assert_output $'C++\ne1\n11'
  run -2 save1 --set 'x:={bad'
  run -3 save1 --set 'version.major=1'
}

@test "without getrandom (early boot, a seccomp filter) a number kept as written is still kept" {
  need_strace
  # the tag that marks a kept literal falls back to the clock and the pid
  run -0 strace -f -o /dev/null -e inject=getrandom:error=ENOSYS "$LOOPKIT_BIN/ctx-save" --dir saves \
    --set 'x:=1e2' --set 'y:=[2.50]'
  run -0 grep -c '"x": 1e2' "$SAVE"
  run -0 grep -c '2.50' "$SAVE"
}

@test "--if-over exits 1 below the ratio, quietly with -q" {
  run -1 --separate-stderr save1 --tokens 100/1000 --if-over 0.5
  [[ $stderr == *"below"* ]]
  run -1 --separate-stderr save1 -q --tokens 100/1000 --if-over 0.5
  [ -z "$stderr" ]
  [ ! -e saves ] || [ -z "$(ls -A saves)" ]
  run -0 save1 --tokens 500/1000 --if-over 0.5
}

@test "--keep spares the save just written and files that are not saves" {
  mkdir saves
  : >saves/notes.json
  for t in 1736503600 1736503700; do LOOPKIT_NOW=$t ctx-save --dir saves >/dev/null; done
  run -0 save1 --keep 1
  [ "$(ls saves | tr '\n' ' ')" = "mdan-save-1736503530.json notes.json " ]
}

@test "--artifact stores the file; a binary or missing file fails" {
  printf 'hello\n' >a.md
  run -0 save1 --artifact notes=a.md
  run -0 state-get --json "$SAVE" context.artifacts.notes
  assert_output '{"file":"a.md","content":"hello\n"}'
  printf '\xff\xfe\x00' >bin
  run -3 save1 --artifact blob=bin
  run -4 save1 --artifact gone=missing.md
}

@test "text that is not UTF-8 is refused, never saved unreadable" {
  run -2 --separate-stderr save1 --set $'project.name=\xff\xfe'
  [[ $stderr == *"not UTF-8"* ]]
  [ ! -e "$SAVE" ]
  run -2 save1 --message $'user=\xc3'
}

@test "--artifact with an absolute path warns that it cannot be restored" {
  printf 'x\n' >a.md
  run -0 --separate-stderr save1 --artifact a="$W/a.md"
  [[ $stderr == *warning*"will refuse it"* ]]
}

@test "a SAVEFILE that outgrows --gzip-over becomes SAVEFILE.gz" {
  head -c 5000 /dev/zero | tr '\0' 'x' >big.txt
  ctx-save --phase PLAN my.json >/dev/null
  run -0 ctx-save --gzip-over 1000 --from my.json --artifact big=big.txt my.json
  assert_output "CONTEXT SAVE my.json.gz"
  [ ! -e my.json ]
  gzip -t my.json.gz
  [ "$(stat -c %a my.json.gz)" = 600 ]
  run -0 ctx-resume --peek my.json
  assert_output PLAN
}

@test "--from reads the MDAN spec fixture and fills the minimal one with warnings" {
  run -0 save1 --from "$FIX/mdan_context_save.spec-fae63f1e.json"
  run -0 state-get "$SAVE" phases.current metadata.save_count metadata.created_at '.debates[0].winner'
  assert_output $'IMPLEMENT\n2\n2024-01-15T10:00:00Z\narchitect'
  run -0 --separate-stderr save1 --from "$FIX/mdan_save_minimal.test_cli.json"
  [[ $stderr == *"missing 'version'"* && $stderr == *"missing 'debates'"* ]]
  run -0 state-get saves/mdan-save-1736503530-2.json version project.name phases.status.ARCHITECT phases.status.IMPLEMENT
  assert_output $'1.0\ntest-project\ncomplete\nin_progress'
}

@test "--from another major version or a non-save is bad data" {
  printf '{"version":"2.0"}\n' >v2.json
  run -3 save1 --from v2.json
  printf '[]\n' >list.json
  run -3 save1 --from list.json
}

@test "each kind of secret is redacted, with a count on stderr" {
  pem=$'-----BEGIN RSA PRIVATE KEY-----\nMIIEabc\n-----END RSA PRIVATE KEY-----'
  run -0 --separate-stderr save1 \
    --message 'user=sk-proj-AbCdEfGhIjKlMnOpQrStUvWx12' --message 'user=sk-ant-api03-AbCdEfGhIjKlMnOpQrStUv' \
    --message 'user=AIzaSyA1234567890abcdefghijklmnopqrstu' --message 'user=sk_live_1234567890abcdefXYZ' \
    --message 'user=ghs_abcdefghijklmnopqrstuvwxyz0123456789' --message 'user=xoxb-1234567890-abcdefghij' \
    --message 'user=AKIAIOSFODNN7EXAMPLE' --message 'user=Authorization: Bearer eyJhbGciOi.J9xyz12' \
    --message "user=$pem" --message 'user=db password=hunter2' --set 'project.client_secret=s3cr3t'
  [[ $stderr == *"redacted 11 secrets"* ]]
  run -0 state-get "$SAVE" '.context.conversation_history[].content' project.client_secret
  assert_output $'[REDACTED]\n[REDACTED]\n[REDACTED]\n[REDACTED]\n[REDACTED]\n[REDACTED]\n[REDACTED]\nAuthorization: Bearer [REDACTED]\n[REDACTED]\ndb password=[REDACTED]\n[REDACTED]'
}

@test "ordinary text and token counts are not redacted" {
  run -0 --separate-stderr save1 --tokens 900/1000 --set context.max_tokens:=4096 --set 'project.token_limit=500' \
    --message 'user=the bearer of bad news asked for a task-force and sk-learn; token_usage: 5'
  [ -z "$stderr" ]
  run -0 state-get "$SAVE" context.token_usage.total context.max_tokens project.token_limit '.context.conversation_history[0].content'
  assert_output $'900\n4096\n500\nthe bearer of bad news asked for a task-force and sk-learn; token_usage: 5'
}

@test "a write that fails with ENOSPC exits 4 and leaves no partial save" {
  need_strace
  mkdir saves
  rc=0; strace -f -o /dev/null -e inject=write:error=ENOSPC ctx-save --dir saves 2>/dev/null || rc=$?
  [ "$rc" = 4 ]
  [ -z "$(ls -A saves)" ]
}

@test "an fsync that fails with EIO exits 4 and leaves the old save whole" {
  need_strace
  mkdir d && cd d
  ctx-save --phase PLAN my.json >/dev/null
  cp my.json before.json
  rc=0; strace -f -o /dev/null -e inject=fsync:error=EIO ctx-save --from my.json --phase DOC my.json 2>/dev/null || rc=$?
  [ "$rc" = 4 ]
  cmp my.json before.json
  [ "$(ls -A | tr '\n' ' ')" = "before.json my.json " ]
}

@test "--set keeps a number's text (1.0, 1e2), and counts still add up" {
  run -0 ctx-save --set 'metadata.save_count:=1.0' --set 'context.token_usage.used:=1e2' s.json
  run -0 state-get s.json metadata.save_count context.token_usage.used
  assert_output $'2\n100'
  grep -q '"used": 1e2' s.json
}

@test "SAVEFILE '-' is a filter: the save on stdout, no file written, --from - reads stdin" {
  export TMPDIR=$PWD/tmp
  run -0 --separate-stderr ctx-save --phase TEST --set x:=1 -
  [[ $output == '{'* ]]
  [ -z "$stderr" ]
  printf '%s\n' "$output" >first.json
  run -0 bash -c 'ctx-save --from - --phase DEPLOY - <first.json | state-get - phases.current x metadata.save_count mode'
  assert_output $'DEPLOY\n1\n2\nauto'
  [ ! -e ./- ] && [ ! -e tmp ]
  # never compressed, whatever its size
  run -0 bash -c 'ctx-save --gzip-over 0 - | state-get - version'
  assert_output '1.0'
  # --keep prunes a folder: no use with -
  run -2 --separate-stderr ctx-save --keep 1 -
  assert_equal "$stderr" "ctx-save: --keep prunes saves in a folder: it cannot be used with '-'"
  # a bad --from on stdin: exit 3, nothing on stdout
  run -3 --separate-stderr bash -c 'echo "{" | ctx-save --from - -'
  assert_output ''
  # ./- is a file
  run -0 ctx-save ./-
  assert_output 'CONTEXT SAVE ./-'
  [ -f ./- ]
}

@test "issue 22: --set goes through state-set's engine: the same messages, literals kept" {
  mkdir saves
  echo '{"project":{"name":"p"},"a":[1]}' >s.json
  for bad in 'project.name.x=1' 'a[5]=1' 'project*=[1]' 'a+=1' 'project.name[]=x'; do
    run state-set s.json "$bad"
    want_status=$status want=${output#state-set: }
    run --separate-stderr ctx-save --dir saves --set 'a:=[1]' --set "$bad"
    assert_equal "$status" "$want_status"
    assert_equal "${stderr#ctx-save: }" "$want"
  done
  [ -z "$(ls saves)" ]
  run -0 save1 --set 'configuration.ratio:=1e2' --set 'x.y[]:=1.50' --set 'metadata.save_count+=4'
  grep -q '"ratio": 1e2' "$SAVE"
  grep -q '1.50' "$SAVE"
  run -0 state-get "$SAVE" metadata.save_count
  assert_output 5
}

@test "issue 22: --keep prunes the saves of its own project only (project.name, else the folder)" {
  mkdir -p saves a b
  export TMPDIR=$W/saves
  (cd a && LOOPKIT_NOW=1736503500 ctx-save >/dev/null && LOOPKIT_NOW=1736503510 ctx-save >/dev/null)
  (cd b && LOOPKIT_NOW=1736503520 ctx-save >/dev/null)
  (cd b && LOOPKIT_NOW=1736503530 ctx-save --set project.name=shop >/dev/null)
  (cd a && LOOPKIT_NOW=1736503540 ctx-save --set project.name=shop >/dev/null)
  run -0 state-get saves/mdan-save-1736503500.json project.folder
  assert_output "$W/a"
  # a's unnamed saves: the older one goes, b's and the named project's stay
  (cd a && LOOPKIT_NOW=1736503600 ctx-save --keep 1 >/dev/null)
  [ "$(ls saves | tr '\n' ' ')" = "mdan-save-1736503520.json mdan-save-1736503530.json mdan-save-1736503540.json mdan-save-1736503600.json " ]
  # a project by name is one project wherever it was saved
  (cd b && LOOPKIT_NOW=1736503700 ctx-save --set project.name=shop --keep 1 >/dev/null)
  [ "$(ls saves | tr '\n' ' ')" = "mdan-save-1736503520.json mdan-save-1736503600.json mdan-save-1736503700.json " ]
  # a save that says neither name nor folder (loopkit 0.2, by hand) is never pruned
  printf '{"version":"1.0","project":{"name":""},"phases":{"current":"PLAN"}}\n' >saves/mdan-save-1.json
  (cd a && LOOPKIT_NOW=1736503800 ctx-save --keep 1 >/dev/null)
  [ "$(ls saves | tr '\n' ' ')" = "mdan-save-1.json mdan-save-1736503520.json mdan-save-1736503700.json mdan-save-1736503800.json " ]
}

# issue 22, one commit: after the rename or link nothing may say "unchanged"
@test "a failed folder sync after the save is a warning, exit 0: FILE, and --dir writes one save only" {
  need_strace
  run -0 --separate-stderr strace -f -o /dev/null -e trace=fsync -e inject=fsync:error=EIO:when=2 \
    ctx-save --phase PLAN my.json
  assert_equal "$stderr" "ctx-save: warning: cannot sync folder '.': Input/output error"
  run -0 --separate-stderr strace -f -o /dev/null -e trace=fsync -e inject=fsync:error=EIO:when=2 \
    ctx-save --from my.json --phase DOC my.json
  run -0 state-get my.json metadata.save_count
  assert_output 2
  mkdir saves
  run -0 --separate-stderr strace -f -o /dev/null -e trace=fsync -e inject=fsync:error=EIO:when=2 ctx-save --dir saves
  assert_equal "$stderr" "ctx-save: warning: cannot sync folder 'saves': Input/output error"
  assert_equal "$(ls -A saves | wc -l)" 1
}

@test "a save killed before its link() leaves no temporary file" {
  need_strace
  mkdir saves
  rc=0; strace -f -o /dev/null -e trace=linkat -e inject=linkat:signal=KILL ctx-save --dir saves 2>/dev/null || rc=$?
  [ "$rc" -ne 0 ]
  assert_equal "$(ls -A saves)" ""
}

@test "issue 25: --if-over says the ratio as it is: 102399/128000 is not '0.8 below 0.8'" {
  run -1 --separate-stderr save1 --tokens 102399/128000 --if-over 0.8
  assert_equal "$stderr" "ctx-save: token usage 0.7999921875 is below 0.8: not saved"
}

@test "issue 25: --now and --epoch stamp the time at a path, as state-set's do" {
  run -0 save1 --now metadata.completed_at --epoch metadata.completed_epoch --now 'metadata.created_at?'
  local f=${output#CONTEXT SAVE }
  run -0 state-get "$f" metadata.completed_at metadata.completed_epoch
  assert_output $'2025-01-10T10:05:30Z\n1736503530'
}

@test "issue 25: --keep 0 removes every save of the project, this one too, and names none" {
  mkdir -p saves
  LOOPKIT_NOW=1736503500 save1 >/dev/null
  LOOPKIT_NOW=1736503510 save1 >/dev/null
  # another project's save stays
  (mkdir other && cd other && LOOPKIT_NOW=1736503520 ctx-save --dir ../saves >/dev/null)
  LOOPKIT_NOW=1736503600 run -0 --separate-stderr save1 --phase DOC --keep 0
  assert_output ""
  [ "$(ls saves | tr '\n' ' ')" = "mdan-save-1736503520.json " ]
}

@test "issue 25: --if-over alone reads the save's save_threshold (0.8 by default)" {
  run -1 --separate-stderr save1 --tokens 90000/128000 --if-over
  assert_equal "$stderr" "ctx-save: token usage 0.703125 is below 0.8: not saved"
  run -0 save1 --tokens 90000/128000 --set configuration.save_threshold:=0.7 --if-over
  [[ $output == "CONTEXT SAVE saves/"* ]]
  # a value after it is still the ratio
  run -1 save1 --tokens 90000/128000 --if-over 0.75
}

# issue 39: the save is made: a failure to name it is a warning, exit 0 (a
# retry would write a second save)
@test "a save whose name cannot be printed (full, closed, broken pipe): a warning, exit 0, one save" {
  run -0 --separate-stderr bash -c 'ctx-save --dir saves --phase PLAN >/dev/full'
  assert_equal "$stderr" "ctx-save: warning: cannot write to standard output: No space left on device"
  assert_equal "$(ls saves | wc -l)" 1
  run -0 --separate-stderr bash -c 'ctx-save --phase PLAN s.json >&-'
  assert_equal "$stderr" "ctx-save: warning: cannot write to standard output: Bad file descriptor"
  run -0 --separate-stderr broken_pipe ctx-save --phase PLAN t.json
  assert_equal "$stderr" "ctx-save: warning: cannot write to standard output: Broken pipe"
  assert [ -e s.json ]
  assert [ -e t.json ]
  # to "-" nothing is saved: exit 4
  run -4 bash -c 'ctx-save --phase PLAN - >/dev/full'
}

# issue 39: ulimit -f is a full disk: exit 4, no save, no SIGXFSZ
@test "ulimit -f: a save that cannot be written is exit 4 and leaves nothing" {
  mkdir saves
  # (with ulimit -f 0 the message cannot be written to a file either)
  run -4 bash -c "ulimit -f 0; ctx-save --dir saves --phase PLAN 2>/dev/null"
  assert_equal "$(ls -A saves)" ""
}

# issue 39: a SAVEFILE of 251-255 bytes is saved and resumed as any other;
# one that would be gzipped to a name too long is exit 4, nothing written
@test "a SAVEFILE named by 251 to 255 bytes is saved, saved again and resumed; SAVEFILE.gz too long is exit 4" {
  f=$(printf 's%.0s' $(seq 255))
  run -0 ctx-save --phase PLAN "$f"
  run -0 ctx-save --from "$f" --phase DOC "$f"
  run -0 ctx-resume "$f"
  assert_output DOC
  assert_equal "$(ls -A)" "$f"
  rm "$f"
  f=$(printf 's%.0s' $(seq 253))
  run -4 --separate-stderr ctx-save --gzip-over 0 --phase PLAN "$f"
  [[ $stderr == *": File name too long" ]]
  assert_equal "$(ls -A)" ""
}

@test "issue 39: a device as an artifact, --from or --history is refused at once (exit 4), nothing saved" {
  run -4 --separate-stderr timeout 30 bash -c '[ -n "${LOOPKIT_SANITIZED:-}" ] || ulimit -v 4000000; ctx-save --artifact z=/dev/zero s.md'
  assert_equal "$stderr" "ctx-save: cannot open '/dev/zero': is a device"
  run -4 timeout 30 bash -c '[ -n "${LOOPKIT_SANITIZED:-}" ] || ulimit -v 4000000; ctx-save --history /dev/zero s.md'
  run -4 timeout 30 bash -c '[ -n "${LOOPKIT_SANITIZED:-}" ] || ulimit -v 4000000; ctx-save --from /dev/zero s.md'
  run -4 timeout 30 bash -c '[ -n "${LOOPKIT_SANITIZED:-}" ] || ulimit -v 4000000; ctx-save --artifact z=- s.md </dev/zero'
  [ ! -e s.md ]
}
