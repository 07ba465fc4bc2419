#!/usr/bin/env bats
# The shell completions (completions/) as a person meets them: bash's
# function called as readline calls it under bash-completion
# (tests/complete-bash), and keys and Tab typed into an interactive bash
# (tests/complete-bash-typed) and zsh with compinit (tests/complete-zsh),
# both on a pseudo-terminal through zsh/zpty; fish's `complete -C`
# (tests/complete-fish). Each shell's cases skip, saying why, where that
# shell (or bash-completion, or zsh to drive bash) is not installed.

load helpers

setup() {
  loopkit_setup
  # the engines, as on a user's PATH (fish completes only commands it finds)
  PATH=$LOOPKIT_SOURCE/scripts:$PATH
  C=$LOOPKIT_SOURCE/completions
  printf '%s\n' '{"history":[{"a":1},{"b":2}],"status":"run","done":false,"odd key":1,"items":[7]}' >s.json
  mkdir -p "$HOME/lk"
  cp s.json "$HOME/lk/s.json"
  cp s.json 'my state.json'
}

# every command the completions know: the tools built and the engines
commands() {
  sed -n 's/^complete -F [^ ]* //p' "$C/loopkit.bash"
}

# bash_offers LINE: COMPREPLY for Tab at the end of LINE, one a line
bash_offers() {
  run "$LOOPKIT_SOURCE/tests/complete-bash" "$C/loopkit.bash" "$1"
  [ "$status" -ne 77 ] || skip "$output"
  [ "$status" -eq 0 ]
}

# zsh_types LINE [KEYS]: "buffer: LINE AFTER" and "matches: A|B" (${lines[0..1]})
zsh_types() {
  command -v zsh >/dev/null || skip "zsh is not installed (Debian: zsh)"
  run "$LOOPKIT_SOURCE/tests/complete-zsh" "${ZSH_FPATH:-$C}" "$@"
  [ "$status" -ne 77 ] || skip "$output"
  [ "$status" -eq 0 ]
}

# fish_offers LINE: fish's candidates for LINE, one a line
fish_offers() {
  command -v fish >/dev/null || skip "fish is not installed (Debian: fish)"
  run "$LOOPKIT_SOURCE/tests/complete-fish" "$C/loopkit.fish" "$1"
  [ "$status" -ne 77 ] || skip "$output"
  [ "$status" -eq 0 ]
}

# --- bash ---------------------------------------------------------------------

@test "bash: the JSON paths of FILE after it, FILE found past the options' values" {
  bash_offers 'state-get s.json .hi'
  assert_output .history
  bash_offers 'state-get --default 0 s.json .ite'
  assert_output .items
  bash_offers 'state-get -d 0 s.json .ite'
  assert_output .items
  bash_offers 'state-get --default=0 s.json .ite'
  assert_output .items
  bash_offers 'state-get --arg n v -j s.json .st'
  assert_output .status
  bash_offers 'state-set --delete x s.json st'
  assert_output status
  bash_offers 'LOOPKIT_X=1 state-get s.json .hi'
  assert_output .history
}

@test "bash: FILE as the command gets it: ~, quotes, spaces, \$HOME" {
  bash_offers 'state-get ~/lk/s.json .his'
  assert_output .history
  bash_offers "state-get 'my state.json' .his"
  assert_output .history
  bash_offers 'state-get "my state.json" .his'
  assert_output .history
  bash_offers 'state-get my\ state.json .his'
  assert_output .history
  bash_offers 'state-get $HOME/lk/s.json .his'
  assert_output .history
  bash_offers 'state-get "${HOME}/lk/s.json" .his'
  assert_output .history
}

@test "bash: '[' completes indices, quoted names, whatever the word's quoting" {
  bash_offers 'state-get s.json .history['
  assert_output $'.history[0]\n.history[1]'
  bash_offers 'state-get s.json .history\['
  assert_output $'.history[0]\n.history[1]'
  bash_offers "state-get s.json '.history["
  assert_output $'.history[0]\n.history[1]'
  bash_offers "state-get s.json '.[\"o"
  assert_output '.["odd key"]'
  bash_offers 'state-get s.json .history[1].'
  assert_output .history[1].b
  # after [], the names of every item
  bash_offers 'state-get s.json .history[].'
  assert_output $'.history[].a\n.history[].b'
}

@test "bash: nothing after = (a person types the text), JSON literals after :=" {
  bash_offers 'state-set s.json status='
  assert_output ''
  bash_offers 'state-set s.json status=r'
  assert_output ''
  bash_offers 'state-set s.json n+='
  assert_output ''
  # readline replaces what follows the ':=' (COMP_WORDBREAKS)
  bash_offers 'state-set s.json done:='
  assert_output $'true\nfalse\nnull'
  bash_offers 'state-set s.json done:=f'
  assert_output false
  bash_offers 'state-set s.json --expect done:=t'
  assert_output true
  bash_offers 'state-set s.json --delete st'
  assert_output status
}

@test "bash: options, their values and files, for every command" {
  local cmd n=0
  touch zz-file.txt
  for cmd in $(commands); do
    bash_offers "$cmd --hel"
    assert_output --help
    n=$((n + 1))
  done
  [ "$n" -ge 16 ]
  bash_offers 'lock-status zz-'
  assert_output zz-file.txt
  bash_offers 'state-set --on-invalid '
  assert_output $'fail\nbackup'
  bash_offers 'state-set --on-invalid=b'
  assert_output backup
  bash_offers 'ctx-save --from zz-'
  assert_output zz-file.txt
  bash_offers 'state-get --default '
  assert_output ''
  bash_offers 'lock-acquire x.lock -- state-g'
  assert_output state-get
}

# bash_types LINE [KEYS]: "buffer: LINE AFTER", typed into an interactive bash
bash_types() {
  command -v zsh >/dev/null || skip "zsh is not installed (Debian: zsh), which drives bash on a pseudo-terminal"
  run "$LOOPKIT_SOURCE/tests/complete-bash-typed" "$C/loopkit.bash" "$@"
  [ "$status" -ne 77 ] || skip "$output"
  [ "$status" -eq 0 ]
}

@test "bash, typed: readline inserts the paths quoted as the word is, and the line runs" {
  bash_types 'state-get s.json .history[1'
  assert_output 'buffer: state-get s.json .history\[1\]'
  run -0 bash -O failglob -c 'state-get -j s.json .history\[1\]'
  assert_output '{"b":2}'
  bash_types "state-get s.json '.history[1"
  assert_output "buffer: state-get s.json '.history[1]'"
  bash_types "state-get s.json '.[\"o"
  assert_output "buffer: state-get s.json '.[\"odd key\"]'"
  bash_types 'state-get s.json .\[\"o'
  assert_output 'buffer: state-get s.json .\[\"odd\ key\"\]'
  run -0 bash -c 'state-get s.json .\[\"odd\ key\"\]'
  assert_output 1
  bash_types "state-get ~/lk/s.json .st"
  assert_output "buffer: state-get ~/lk/s.json .status"
  bash_types 'state-set s.json done:=f'
  assert_output 'buffer: state-set s.json done:=false '
  bash_types 'state-set s.json status='
  assert_output 'buffer: state-set s.json status='
}

# --- zsh ----------------------------------------------------------------------

@test "zsh: '[' completes the array's indices, quoted so that the line runs" {
  zsh_types 'state-get s.json .history['
  # not zsh's subscript context: no history numbers, and the "[" now quoted
  [ "${lines[0]}" = 'buffer: state-get s.json .history\[' ]
  [ "${lines[1]}" = 'matches: .history[0]|.history[1]' ]
  zsh_types 'state-get s.json .history[1' $'\t'
  [ "${lines[0]}" = 'buffer: state-get s.json .history\[1\]' ]
  # the line as completed runs (zsh's NOMATCH would refuse an unquoted [)
  run -0 zsh -f -c 'state-get -j s.json .history\[1\]'
  assert_output '{"b":2}'
  # in quotes, left open: the path may go on
  zsh_types "state-get s.json '.history[1"
  [ "${lines[0]}" = "buffer: state-get s.json '.history[1]" ]
}

@test "zsh: names a bare path cannot spell are inserted quoted" {
  zsh_types 'state-get s.json .["o'
  [ "${lines[0]}" = 'buffer: state-get s.json .\[\"odd\ key\"\]' ]
  run -0 zsh -f -c 'state-get s.json .\[\"odd\ key\"\]'
  assert_output 1
}

@test "zsh: FILE with ~, quotes and option values before it" {
  zsh_types 'state-get ~/lk/s.json .his'
  [ "${lines[0]}" = 'buffer: state-get ~/lk/s.json .history' ]
  zsh_types "state-get 'my state.json' .his"
  [ "${lines[0]}" = "buffer: state-get 'my state.json' .history" ]
  zsh_types 'state-get --default 0 s.json .ite'
  [ "${lines[0]}" = 'buffer: state-get --default 0 s.json .items' ]
  zsh_types 'state-set s.json --delete st'
  [ "${lines[0]}" = 'buffer: state-set s.json --delete status' ]
  zsh_types 'LOOPKIT_X=1 state-get s.json .hi'
  [ "${lines[0]}" = 'buffer: LOOPKIT_X=1 state-get s.json .history' ]
}

@test "zsh: nothing after =, JSON literals after :=" {
  zsh_types 'state-set s.json status='
  [ "${lines[0]}" = 'buffer: state-set s.json status=' ]
  [ "${lines[1]}" = 'matches: ' ]
  zsh_types 'state-set s.json done:=f'
  [ "${lines[0]}" = 'buffer: state-set s.json done:=false ' ]
}

@test "zsh: other subscripts are still zsh's own" {
  zsh_types 'echo $fpath['
  [[ ${lines[1]} == 'matches: '*1* ]]
  zsh_types 'echo x; state-get s.json $fpath['
  [[ ${lines[1]} == 'matches: '*1* ]]
}

@test "zsh: with the completions last in \$fpath, '[' works after a loopkit command's first completion" {
  # zsh's own _subscript then has the context at compinit; the first
  # completion of a loopkit command takes it over
  LOOPKIT_FPATH_LAST=1 zsh_types 'state-get s.json .st'$'\t''; state-get s.json .history[1'
  [ "${lines[0]}" = 'buffer: state-get s.json .status; state-get s.json .history\[1\]' ]
  LOOPKIT_FPATH_LAST=1 zsh_types 'state-get s.json .st'$'\t''; echo $fpath['
  [[ ${lines[1]} == 'matches: .status|1|'* ]]
}

@test "zsh: options and files for every command" {
  local cmd n=0
  touch zz-file.txt
  for cmd in $(commands); do
    zsh_types "$cmd --hel"
    [ "${lines[0]}" = "buffer: $cmd --help " ]
    n=$((n + 1))
  done
  [ "$n" -ge 16 ]
  zsh_types 'lock-status zz-'
  [ "${lines[0]}" = 'buffer: lock-status zz-file.txt ' ]
  zsh_types 'state-set --on-invalid b'
  [ "${lines[0]}" = 'buffer: state-set --on-invalid backup ' ]
}

# --- fish ---------------------------------------------------------------------

@test "fish: the JSON paths of FILE, with ~, quotes and option values" {
  fish_offers 'state-get s.json .hi'
  assert_output .history
  fish_offers 'state-get --default 0 s.json .ite'
  assert_output .items
  fish_offers 'state-get ~/lk/s.json .his'
  assert_output .history
  fish_offers "state-get 'my state.json' .his"
  assert_output .history
  fish_offers 'state-get s.json .history['
  assert_output $'.history[0]\n.history[1]'
  fish_offers "state-get s.json '.[\"o"
  assert_output '.["odd key"]'
  fish_offers 'state-set s.json --delete st'
  assert_output status
  fish_offers 'LOOPKIT_X=1 state-get s.json .hi'
  assert_output .history
}

@test "fish: nothing after = (no file names either), JSON literals after :=" {
  touch status-file
  fish_offers 'state-set s.json status='
  assert_output ''
  fish_offers 'state-set s.json st'
  assert_output status
  fish_offers 'state-set s.json done:='
  assert_output $'done:=false\ndone:=null\ndone:=true'
}

@test "fish: options, their values and files, for every command" {
  local cmd n=0
  touch zz-file.txt
  for cmd in $(commands); do
    fish_offers "$cmd --hel"
    assert_output --help
    n=$((n + 1))
  done
  [ "$n" -ge 16 ]
  fish_offers 'state-get zz-'
  assert_output zz-file.txt
  fish_offers 'state-set --on-invalid '
  assert_output $'backup\nfail'
}

# --- as installed -------------------------------------------------------------

@test "installed: one copy of each script, a link per command, found where each shell looks" {
  [[ -n ${LOOPKIT_BUILD:-} && -f $LOOPKIT_BUILD/completions/cmake_install.cmake ]] ||
    skip "LOOPKIT_BUILD is not set (CTest sets it)"
  run -0 cmake -DCMAKE_INSTALL_PREFIX="$W/inst" -P "$LOOPKIT_BUILD/completions/cmake_install.cmake"
  local share=$W/inst/share cmd n=0
  [ -f "$share/bash-completion/completions/loopkit" ] && [ ! -L "$share/bash-completion/completions/loopkit" ]
  [ -f "$share/fish/vendor_completions.d/loopkit.fish" ] && [ ! -L "$share/fish/vendor_completions.d/loopkit.fish" ]
  for cmd in $(commands); do
    [ "$(readlink "$share/bash-completion/completions/$cmd")" = loopkit ]
    [ "$(readlink "$share/fish/vendor_completions.d/$cmd.fish")" = loopkit.fish ]
    n=$((n + 1))
  done
  [ "$n" -ge 16 ]
  [ -f "$share/zsh/site-functions/_loopkit" ]
  # bash-completion loads a command's file by its name, from XDG_DATA_DIRS
  if [[ -r /usr/share/bash-completion/bash_completion ]]; then
    run -0 env XDG_DATA_DIRS="$share" bash -c 'source /usr/share/bash-completion/bash_completion
      __load_completion state-set || exit 1
      COMP_LINE="state-set s.json --delete st" COMP_POINT=${#COMP_LINE}
      COMP_WORDS=(state-set s.json --delete st) COMP_CWORD=3
      compopt() { :; }
      _loopkit_state_set state-set st --delete; printf "%s\n" "${COMPREPLY[@]}"'
    assert_output status
  fi
  if command -v fish >/dev/null; then
    # (its config, not --no-config: that sets the folders from XDG_DATA_DIRS)
    run -0 env XDG_DATA_DIRS="$share" fish -c 'complete -C "state-set s.json --delete st"'
    [ "${output%%$'\t'*}" = status ]
  fi
  if command -v zsh >/dev/null; then
    ZSH_FPATH=$share/zsh/site-functions zsh_types 'state-get s.json .history[1'
    [ "${lines[0]}" = 'buffer: state-get s.json .history\[1\]' ]
  fi
}

# --- engine-ctl and engine-report (issue 25): actions, sessions, roots ----------

sessions() {
  mkdir -p .claude/pipeline-runs/auth .claude/pipeline-runs/billing .atari roots
  echo '{}' >.claude/pipeline-runs/auth/state.json
  echo '{}' >.claude/pipeline-runs/billing/state.json
  echo '{}' >.atari/state.json
  mkdir .claude/pipeline-runs/nostate # no state.json: no session
}

@test "bash: engine-ctl's actions, then the sessions engine-status finds, then root folders; engine-report's too" {
  sessions
  bash_offers 'engine-ctl '
  assert_output $'pause\nresume\nstop\nextend\nprune'
  bash_offers 'engine-ctl re'
  assert_output resume
  bash_offers 'engine-ctl pause '
  assert_output $'auth\nbilling\natari'
  bash_offers 'engine-ctl extend b'
  assert_output billing
  bash_offers 'engine-ctl stop auth r'
  assert_output roots
  bash_offers 'engine-report au'
  assert_output auth
  bash_offers 'engine-report s'
  assert_output s.json
  bash_offers 'engine-report -o out.html b'
  assert_output billing
  bash_offers 'engine-report --o'
  assert_output --output
  bash_offers 'engine-status r'
  assert_output roots
}

@test "zsh: engine-ctl's actions, sessions and roots; engine-report's sessions and files" {
  sessions
  zsh_types 'engine-ctl '
  [ "${lines[1]}" = 'matches: pause|resume|stop|extend|prune' ]
  zsh_types 'engine-ctl st'
  [ "${lines[0]}" = 'buffer: engine-ctl stop ' ]
  zsh_types 'engine-ctl pause '
  [ "${lines[1]}" = 'matches: auth|billing|atari' ]
  zsh_types 'engine-ctl pause bi'
  [ "${lines[0]}" = 'buffer: engine-ctl pause billing ' ]
  zsh_types 'engine-ctl pause auth ro'
  [ "${lines[0]}" = 'buffer: engine-ctl pause auth roots/' ]
  zsh_types 'engine-report -o x.html at'
  [ "${lines[0]}" = 'buffer: engine-report -o x.html atari ' ]
  zsh_types 'engine-report s.j'
  [ "${lines[0]}" = 'buffer: engine-report s.json ' ]
}

@test "fish: engine-ctl's actions, sessions and roots; engine-report's sessions and files" {
  sessions
  fish_offers 'engine-ctl '
  assert_output $'extend\npause\nprune\nresume\nstop'
  fish_offers 'engine-ctl pause '
  assert_output $'atari\nauth\nbilling'
  fish_offers 'engine-ctl pause auth r'
  assert_output roots/
  fish_offers 'engine-report -o x.html a'
  assert_output $'atari\nauth'
  fish_offers 'engine-report s.'
  assert_output s.json
  fish_offers 'engine-status r'
  assert_output roots/
}

# --- the README's set-up under another prefix (issue 39) ----------------------

# loads_in_bash ENV...: whether bash-completion, started as ~/.profile and
# ~/.bashrc would start it with ENV, finds state-set's completion
loads_in_bash() {
  env -i HOME="$HOME" PATH="$PATH" "$@" bash -c 'source /usr/share/bash-completion/bash_completion
    __load_completion state-set && declare -F _loopkit_state_set >/dev/null'
}

@test "installed under another prefix: bash finds the completions as the README says" {
  [[ -n ${LOOPKIT_BUILD:-} && -f $LOOPKIT_BUILD/completions/cmake_install.cmake ]] ||
    skip "LOOPKIT_BUILD is not set (CTest sets it)"
  [[ -r /usr/share/bash-completion/bash_completion ]] || skip "bash-completion is not installed"
  # ~/.local: nothing to set
  run -0 cmake -DCMAKE_INSTALL_PREFIX="$HOME/.local" -P "$LOOPKIT_BUILD/completions/cmake_install.cmake"
  loads_in_bash
  # another prefix: not found beside the command, found once the README's
  # line (with that prefix) has put it in XDG_DATA_DIRS
  rm -rf "$HOME/.local"
  run -0 cmake -DCMAKE_INSTALL_PREFIX="$W/opt" -P "$LOOPKIT_BUILD/completions/cmake_install.cmake"
  mkdir -p "$W/opt/bin" && cp "$LOOPKIT_BIN/state-set" "$W/opt/bin/"
  run -1 loads_in_bash PATH="$W/opt/bin:$PATH"
  line=$(grep '^export XDG_DATA_DIRS=' "$LOOPKIT_SOURCE/README.md")
  [[ $line == *'$HOME/.local/share:'* ]]
  line=${line//\$HOME\/.local/$W/opt}
  run -0 env -i HOME="$HOME" PATH="$PATH" bash -c "$line"'
    source /usr/share/bash-completion/bash_completion
    __load_completion state-set && declare -F _loopkit_state_set >/dev/null'
  # and not at all before it was set: the set-up is what finds it
  run -1 loads_in_bash
}

# --- names a bare path cannot spell, begun bare (issue 39) ----------------------

@test "bash: .od<TAB> offers the member 'odd key' as .[\"odd key\"], and a|b as .[\"a|b\"], which state-get reads" {
  printf '%s\n' '{"odd key":1,"a|b":2,"ab":3}' >t.json
  bash_offers 'state-get t.json .od'
  assert_output '.["odd key"]'
  bash_offers 'state-get t.json .a'
  assert_output $'.["a|b"]\n.ab'
  run -0 state-get t.json '.["a|b"]' '.["odd key"]'
  assert_output $'2\n1'
  bash_types 'state-get t.json .od'
  assert_output 'buffer: state-get t.json .\[\"odd\ key\"\]'
}

@test "zsh: .od<TAB> inserts .[\"odd key\"] quoted, and .a offers .[\"a|b\"]" {
  printf '%s\n' '{"odd key":1,"a|b":2,"ab":3}' >t.json
  zsh_types 'state-get t.json .od'
  [ "${lines[0]}" = 'buffer: state-get t.json .\[\"odd\ key\"\]' ]
  run -0 zsh -f -c 'state-get t.json .\[\"odd\ key\"\]'
  assert_output 1
  zsh_types 'state-get t.json .a'
  [[ ${lines[1]} == *'.["a|b"]'* ]]
  [[ ${lines[1]} != *'.a|b'* ]]
}

@test "fish: .od<TAB> offers .[\"odd key\"], and .a offers .[\"a|b\"]" {
  printf '%s\n' '{"odd key":1,"a|b":2,"ab":3}' >t.json
  fish_offers 'state-get t.json .od'
  assert_output '.["odd key"]'
  fish_offers 'state-get t.json .a'
  assert_line '.["a|b"]'
  refute_line '.a|b'
}
