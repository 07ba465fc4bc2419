# lock-release(1)'s examples: the first releases this shell's lock at the
# end of the block's subshell; the second clears a lock someone else holds
# shellcheck shell=bash
before_block() {
  case $(<"$1") in
    *"--pid \$\$"*) lock-acquire --pid $$ .claude/locks/auth.lock ;;
    *--force*) lock-acquire --pid 1 .claude/locks/auth.lock ;;
  esac
}
