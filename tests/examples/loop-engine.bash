# loop-engine(1)'s examples: npm test passes; claude says there is nothing
# left, which ends the loop on a plateau
# shellcheck shell=bash
stub npm
stub claude 'echo "Done. NOTHING-LEFT"'
