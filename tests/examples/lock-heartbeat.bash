# lock-heartbeat(1)'s example starts from a project with no lock yet
# shellcheck shell=bash
:
