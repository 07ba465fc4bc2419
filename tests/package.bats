#!/usr/bin/env bats
# The Debian package as a user gets it: `cpack -G DEB` over the build folder
# under test (LOOPKIT_BUILD), lintian, dpkg installing it into a scratch
# root, and what is installed there: stripped tools that run, man pages that
# man reads, completions where each shell looks, the lock-reap examples
# (checked by systemd-analyze). Also: every man page carries the version of
# project(VERSION), and scripts/lib-setup.bash keeps a build folder's
# generator.

load helpers

setup_file() {
  [[ -n ${LOOPKIT_BUILD:-} && -f $LOOPKIT_BUILD/CPackConfig.cmake ]] || return 0
  # one package for the whole file, built beside the tests' scratch folders
  # (cpack's staging goes there too, not into the build folder)
  export PKG=$BATS_FILE_TMPDIR/pkg
  mkdir -p "$PKG"
  cpack -G DEB --config "$LOOPKIT_BUILD/CPackConfig.cmake" -B "$PKG" >"$PKG/cpack.log" 2>&1 || true
  export DEB
  DEB=$(find "$PKG" -maxdepth 1 -name 'loopkit_*.deb' -print -quit)
  # dpkg installs into ROOT as into /, with a database of its own
  export ROOT=$PKG/root
  if [[ -n $DEB ]]; then
    mkdir -p "$ROOT/var/lib/dpkg/info" "$ROOT/var/lib/dpkg/updates"
    touch "$ROOT/var/lib/dpkg/status"
    # the scratch database knows no bash, which the package depends on
    dpkg --root="$ROOT" --force-not-root --force-script-chrootless --force-depends -i "$DEB" >"$PKG/dpkg.log" 2>&1 || true
  fi
}

need_deb() {
  [[ -n ${LOOPKIT_BUILD:-} ]] || skip "LOOPKIT_BUILD is not set (CTest sets it)"
  [[ -n ${DEB:-} ]] || { cat "$PKG/cpack.log" >&2; return 1; }
}

# project(loopkit VERSION X.Y.Z ...) of CMakeLists.txt
project_version() {
  sed -n 's/^project(loopkit VERSION \([0-9.]*\).*/\1/p' "$LOOPKIT_SOURCE/CMakeLists.txt"
}

@test "cpack -G DEB makes loopkit_VERSION_ARCH.deb, which dpkg installs cleanly" {
  need_deb
  [ "$(basename "$DEB")" = "loopkit_$(project_version)_$(dpkg --print-architecture).deb" ]
  cat "$PKG/dpkg.log"
  run -0 dpkg-query --admindir="$ROOT/var/lib/dpkg" -W -f='${Status} ${Version}' loopkit
  [ "$output" = "install ok installed $(project_version)" ]
  run -0 dpkg-deb -f "$DEB" Section Priority Maintainer
  [[ $output == *"Section: utils"* && $output == *"Priority: optional"* ]]
  # everything under /usr, owned by root, folders 0755
  run -0 dpkg-deb -c "$DEB"
  ! grep -v ' root/root ' <<<"$output" || false
  ! grep -Ev ' \./(usr/.*)?$' <<<"$output" || false
  ! grep '^d' <<<"$output" | grep -v '^drwxr-xr-x' || false
}

@test "lintian finds no errors and no warnings in the .deb" {
  need_deb
  command -v lintian >/dev/null || skip "lintian is not installed"
  run lintian --no-cfg --show-overrides --tag-display-limit 0 "$DEB"
  echo "$output"
  ! grep -E '^[EW]: ' <<<"$output" || false
  # the only overrides: static linking, which is the design
  ! grep '^O: ' <<<"$output" | grep -Ev '^O: loopkit: statically-linked-binary \[usr/(bin/[a-z-]+|libexec/loopkit/loopkit-etcd)\]$' || false
}

@test "the installed tools are stripped static programs, and work" {
  need_deb
  local tool n=0
  for tool in "$LOOPKIT_BUILD"/bin/*; do
    [[ -x $tool ]] || continue
    tool=$ROOT/usr/bin/$(basename "$tool")
    [ -x "$tool" ]
    ! readelf -S "$tool" | grep -q '\.symtab' || false
    ! readelf -d "$tool" 2>/dev/null | grep -q NEEDED || false
    n=$((n + 1))
  done
  [ "$n" -ge 13 ]
  # the etcd client is in libexec, stripped and static as well
  tool=$ROOT/usr/libexec/loopkit/loopkit-etcd
  [ -x "$tool" ]
  ! readelf -S "$tool" | grep -q '\.symtab' || false
  ! readelf -d "$tool" 2>/dev/null | grep -q NEEDED || false
  run -4 --separate-stderr "$ROOT/usr/bin/state-get" --timeout 1 etcd://127.0.0.1:1/k n
  [[ $stderr == *"127.0.0.1:1"* ]]
  run -0 "$ROOT/usr/bin/state-get" --version
  [[ $output == *"$(project_version)"* ]]
  run -0 "$ROOT/usr/bin/state-set" s.json status=running iteration:=2
  run -0 "$ROOT/usr/bin/state-get" s.json status iteration
  [ "$output" = $'running\n2' ]
  # an engine finds its library in libexec/loopkit
  [ -f "$ROOT/usr/libexec/loopkit/lib-engine.bash" ]
  PATH=$ROOT/usr/bin:/usr/bin:/bin run -0 "$ROOT/usr/bin/loop-engine" --session p --max-iterations 1 -- true
  run -0 "$ROOT/usr/bin/state-get" .claude/pipeline-runs/p/state.json status
  [ "$output" = complete ]
}

@test "man reads every installed page, gzipped, with the version in its footer" {
  need_deb
  command -v man >/dev/null || skip "man (man-db) is not installed"
  local scd page n=0
  for scd in "$LOOPKIT_SOURCE"/man/*.scd; do
    page=$(basename "$scd" .scd)
    page=$ROOT/usr/share/man/man${page##*.}/$page.gz
    [ -f "$page" ]
    run -0 env MANWIDTH=80 man -l "$page"
    [[ $output == *"loopkit $(project_version)"* ]]
    [[ $output == *COPYRIGHT* ]]
    n=$((n + 1))
  done
  [ "$n" -ge 18 ]
  # and man finds them by name under the root's MANPATH
  run -0 env MANPATH="$ROOT/usr/share/man" MANWIDTH=80 man 1 lock-reap
  [[ $output == *"lock-reap - remove stale session locks"* ]]
}

@test "completions are where bash-completion, zsh and fish look, one per command" {
  need_deb
  local cmd n=0
  for cmd in "$LOOPKIT_BUILD"/bin/* "$LOOPKIT_SOURCE"/scripts/*-engine; do
    cmd=$(basename "$cmd")
    [ -f "$ROOT/usr/share/bash-completion/completions/$cmd" ]
    [ -f "$ROOT/usr/share/fish/vendor_completions.d/$cmd.fish" ]
    n=$((n + 1))
  done
  [ "$n" -ge 16 ]
  # Debian's zsh has vendor-completions, not site-functions, in its $fpath
  [ -f "$ROOT/usr/share/zsh/vendor-completions/_loopkit" ]
  [ ! -e "$ROOT/usr/share/zsh/site-functions" ]
  # the bash file, loaded as bash-completion loads it, completes options
  run -0 bash -c 'source "$1"; COMP_WORDS=(state-get --pre); COMP_CWORD=1; COMP_LINE="state-get --pre"; COMP_POINT=${#COMP_LINE}
    f=$(complete -p state-get | sed -n "s/.*-F \([^ ]*\).*/\1/p"); "$f" state-get --pre state-get 2>/dev/null; printf "%s\n" "${COMPREPLY[@]}"' \
    _ "$ROOT/usr/share/bash-completion/completions/state-get"
  [[ $output == *--pretty* ]]
}

@test "the lock-reap examples: systemd-analyze verifies the service and timer, the cron.d file is one job" {
  need_deb
  local doc=$ROOT/usr/share/doc/loopkit
  [ -f "$doc/copyright" ] && [ -f "$doc/changelog.gz" ]
  command -v systemd-analyze >/dev/null || skip "systemd-analyze is not installed"
  mkdir units
  cp "$doc"/examples/systemd/loopkit-lock-reap.{service,timer} units/
  # the unit names /usr/bin/lock-reap; here the package lives under ROOT
  sed -i "s|^ExecStart=/usr/bin/|ExecStart=$ROOT/usr/bin/|" units/loopkit-lock-reap.service
  grep -q "^ExecStart=$ROOT/usr/bin/lock-reap " units/loopkit-lock-reap.service
  # systemd-analyze also opens the Documentation= pages with man
  run -0 env MANPATH="$ROOT/usr/share/man" systemd-analyze verify units/loopkit-lock-reap.timer units/loopkit-lock-reap.service
  [ -z "$output" ]
  # cron.d: a PATH line covering /usr/local/bin, then one job with a user field
  local cron=$doc/examples/cron.d/loopkit-lock-reap
  grep -qx 'PATH=/usr/local/bin:/usr/bin:/bin' "$cron"
  run -0 grep -Ev '^(#|$|[A-Z]+=)' "$cron"
  [ "${#lines[@]}" = 1 ]
  read -r -a job <<<"${lines[0]}"
  [ "${job[5]}" = agent ] && [ "${job[6]}" = lock-reap ]
}

@test "the lock-reap service is hardened: not root, systemd-analyze security scores it under 3" {
  command -v systemd-analyze >/dev/null || skip "systemd-analyze is not installed"
  local unit=$LOOPKIT_SOURCE/examples/systemd/loopkit-lock-reap.service
  grep -qx 'User=agent' "$unit"
  grep -qx 'ProtectSystem=strict' "$unit"
  # the folders it sweeps are the only ones it may write
  local dirs rw
  dirs=$(sed -n 's/^Environment=LOCK_DIRS=//p' "$unit")
  rw=$(sed -n 's/^ReadWritePaths=//p' "$unit")
  [ -n "$dirs" ] && [ "$dirs" = "$rw" ]
  run -0 systemd-analyze security --offline=yes "$unit"
  local score
  score=$(sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p' <<<"$output")
  [ -n "$score" ]
  awk -v s="$score" 'BEGIN { exit !(s < 3) }' || fail "exposure $score, not under 3"
}

@test "cmake --install strips the tools unless told not to, under any prefix" {
  need_deb
  cmake --install "$LOOPKIT_BUILD" --prefix "$W/inst" >/dev/null
  ! readelf -S "$W/inst/bin/lock-reap" | grep -q '\.symtab' || false
  [ -f "$W/inst/share/man/man1/lock-reap.1.gz" ]
  [ -f "$W/inst/share/bash-completion/completions/lock-reap" ]
  [ -f "$W/inst/share/zsh/site-functions/_loopkit" ]
  [ -f "$W/inst/share/fish/vendor_completions.d/lock-reap.fish" ]
  [ -f "$W/inst/share/doc/loopkit/examples/systemd/loopkit-lock-reap.timer" ]
  cmake -DCMAKE_INSTALL_PREFIX="$W/full" -DCMAKE_INSTALL_DO_STRIP=0 -P "$LOOPKIT_BUILD/cmake_install.cmake" >/dev/null
  readelf -S "$W/full/bin/lock-reap" | grep -q '\.symtab'
  [ "$(du -s "$W/inst/bin" | cut -f1)" -lt "$(du -s "$W/full/bin" | cut -f1)" ]
}

@test "every man page's footer carries project(VERSION), and CHANGELOG.md has its entry" {
  local version scd
  version=$(project_version)
  [[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]
  for scd in "$LOOPKIT_SOURCE"/man/*.scd; do
    name=$(basename "$scd" .scd)
    head -1 "$scd" | grep -qxF "${name%.*}(${name##*.}) \"loopkit $version\" \"loopkit manual\""
    for section in AUTHORS BUGS COPYRIGHT; do grep -qx "# $section" "$scd"; done
  done
  grep -q "^## $version " "$LOOPKIT_SOURCE/CHANGELOG.md"
}

@test "scripts/lib-setup.bash configures a build folder with the generator it already has" {
  source "$LOOPKIT_SOURCE/scripts/lib-setup.bash"
  mkdir made fresh
  printf 'CMAKE_GENERATOR:INTERNAL=Unix Makefiles\n' >made/CMakeCache.txt
  [ "$(loopkit_generator made)" = "Unix Makefiles" ]
  [ "$(loopkit_generator fresh)" = Ninja ]
  # and both scripts use it for the folder they share
  grep -q 'loopkit_configure scripts/test "$build"' "$LOOPKIT_SOURCE/scripts/test"
  grep -q 'loopkit_configure demo "$build"' "$LOOPKIT_SOURCE/scripts/demo"
}

@test "issue 24: the .deb depends on the bash the engines need and names what the tools link statically" {
  need_deb
  run -0 dpkg-deb -f "$DEB" Depends
  assert_output "bash (>= 5.1)"
  run -0 dpkg-deb -f "$DEB" Built-Using
  for source in glibc gcc-12 boost; do
    [[ $output == *"$source"* ]] || { echo "no $source in Built-Using: $output" >&2; return 1; }
  done
  # gzip is our own deflate and inflate: no tool links zlib
  [[ $output != *zlib* ]] || { echo "zlib in Built-Using: $output" >&2; return 1; }
  [[ $output =~ glibc\ \(=\ [^\)]+\) ]]
}
