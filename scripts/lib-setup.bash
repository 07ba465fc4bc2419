# shellcheck shell=bash
# lib-setup.bash: what scripts/test and scripts/demo share, sourced, never run.
# The Debian packages the project needs, their installation, and the one way
# build folders are configured, so that either script can follow the other
# in the same build/ (same generator, same options).
#   loopkit_need_packages NAME PKG...  install the missing PKGs (as root), else
#                                      name them and return 4
#   loopkit_configure NAME DIR [CMAKE-ARG...]
#                                      configure DIR with the generator it
#                                      already has (Ninja for a new one)

# Everything `cmake -S . -B build` needs with the default options (the tools,
# man pages, and the test targets: Catch2, bats and shellcheck are looked up
# when configuring).
# shellcheck disable=SC2034 # read by the scripts that source this file
loopkit_build_packages=(build-essential cmake ninja-build libfmt-dev
  catch2 libboost-json1.81-dev libboost1.81-dev zlib1g-dev libssl-dev scdoc bats
  shellcheck)

# What the tests run besides the tools; Essential packages (coreutils,
# diffutils, util-linux, bsdutils' script(1), perl-base, gzip, ...) are on
# every Debian system and not named.
#   bats-assert bats-support  loaded by tests/helpers.bash
#   mandoc                    man-lint
#   strace                    failure injection
#   gdb                       tests/lib-engine.bats: bash held where its wait -n can miss a child
#   python3                   large inputs, a JSON check, the pseudo-terminal test
#   procps                    pgrep
#   tmux                      scripts/demo on a terminal, the engines' terminal test
#   chromium                  tests/engine-report.bats: the report in a real browser
#   bash-completion zsh fish  tests/completions.bats: each shell's completion as typed
#   jq                        tests that compare loopkit's answers with jq's
#   openssl iproute2 etcd-*   the etcd tests (certificates, ss, servers)
#   lintian man-db            tests/package.bats: the .deb, `man -l`
#   systemd                   systemd-analyze verify of examples/systemd
#   tzdata                    the time zones sys/tz is checked in (not Essential)
# shellcheck disable=SC2034
loopkit_test_packages=(bats-assert bats-support mandoc strace gdb python3 perl-base
  procps tmux openssl iproute2 nftables etcd-server etcd-client lintian man-db systemd clang-format chromium
  bash-completion zsh fish jq tzdata)

loopkit_need_packages() { # loopkit_need_packages NAME PKG...
  local name=$1 p status
  shift
  local missing=()
  for p in "$@"; do
    status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null) || status=
    [[ $status == "install ok installed" ]] || missing+=("$p")
  done
  [[ ${#missing[@]} -gt 0 ]] || return 0
  if ! command -v dpkg-query >/dev/null; then
    printf '%s: not a Debian system: make sure the equivalents of these are installed: %s\n' "$name" "$*" >&2
    return 0
  fi
  if [[ $(id -u) -ne 0 ]]; then
    printf '%s: missing packages: %s\n' "$name" "${missing[*]}" >&2
    printf '%s: install them with: sudo apt-get install %s\n' "$name" "${missing[*]}" >&2
    return 4
  fi
  printf '%s: installing %s\n' "$name" "${missing[*]}" >&2
  if ! { DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"; } </dev/null; then
    printf '%s: could not install %s\n' "$name" "${missing[*]}" >&2
    return 4
  fi
}

# The generator of an existing build folder wins: CMake refuses to switch a
# configured folder to another one ("generator ... does not match").
loopkit_generator() { # loopkit_generator DIR: print the generator to use
  local cached=""
  if [[ -f $1/CMakeCache.txt ]]; then
    cached=$(sed -n 's/^CMAKE_GENERATOR:INTERNAL=//p' "$1/CMakeCache.txt")
  fi
  printf '%s\n' "${cached:-Ninja}"
}

loopkit_configure() { # loopkit_configure NAME DIR [CMAKE-ARG...]: log in DIR/configure.log
  local name=$1 dir=$2
  shift 2
  mkdir -p "$dir"
  if ! cmake -S . -B "$dir" -G "$(loopkit_generator "$dir")" "$@" >"$dir/configure.log" 2>&1; then
    cat "$dir/configure.log" >&2
    printf '%s: configuring %s failed\n' "$name" "$dir" >&2
    return 3
  fi
}
