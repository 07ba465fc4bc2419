# Helpers the bench scripts share: source "$top/bench/lib-bench.bash".

# a loop history in jq's 2-space layout, about 252 bytes per history entry
make_history() { # make_history ENTRIES FILE
  awk -v n="$1" 'BEGIN {
  r = "iteration summary: tests pass, refactored the parser, next step is the writer;"
  r = r " no plateau yet, work left is in the plan"
  printf "{\n  \"session\": \"bench\",\n  \"type\": \"loop\",\n"
  printf "  \"started_at\": \"2025-01-01T00:00:00Z\",\n  \"status\": \"running\",\n"
  printf "  \"iteration\": %d,\n  \"iteration_completed\": %d,\n  \"history\": [\n", n, n
  for (i = 1; i <= n; i++) {
    printf "    {\n      \"iteration\": %d,\n      \"timestamp\": \"2025-01-%02dT%02d:%02d:%02dZ\",\n",
      i, 1 + int(i / 86400) % 28, int(i / 3600) % 24, int(i / 60) % 60, i % 60
    printf "      \"plateau\": %s,\n      \"reasoning\": \"%s %d\"\n    }%s\n",
      (i % 7 == 0 ? "true" : "false"), r, i, (i < n ? "," : "")
  }
  printf "  ]\n}\n"
}' >"$2"
}
# owner: a process for --pid that lives until the script ends (holding no
# pipe open), its pid appended to the caller's owners array
owner() {
  sleep 100000 >/dev/null 2>&1 &
  owners+=("$!")
}
now_us() { echo "${EPOCHREALTIME/./}"; }

# median and p99 (in ms, 2 decimals) of the microsecond numbers on stdin
stats() {
  sort -n | awk '{ v[NR] = $1 } END {
    m = v[int((NR + 1) / 2)]; p = v[int(NR * 0.99 + 0.999)]
    printf "%.2f %.2f\n", m / 1000, p / 1000 }'
}
