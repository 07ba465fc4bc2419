#!/usr/bin/env bats
# scripts/engine-report: one self-contained HTML page per session, checked
# in a real browser (Debian's chromium, headless) when it is installed.
load helpers

: "${LOOPKIT_SCRIPTS:=$LOOPKIT_SOURCE/scripts}"

report() { "$LOOPKIT_SCRIPTS/engine-report" "$@"; }

# chrome ARGS...: headless chromium with nothing fetched and nothing kept
chrome() {
  local profile
  profile=$(mktemp -d)
  timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-background-networking \
    --disable-component-update --disable-sync --no-first-run --user-data-dir="$profile" "$@" 2>/dev/null
}

need_chromium() {
  command -v chromium >/dev/null || skip "chromium is not installed (apt-get install chromium)"
}

# a loop of 4 iterations whose second fails once, each costing 0.25
make_session() {
  cat >agent.sh <<'EOF2'
#!/bin/sh
if [ "$LOOPKIT_ITERATION" = 2 ] && [ ! -e fixed ]; then touch fixed; exit 3; fi
printf '{"cost":0.25,"tokens":10}' >"$LOOPKIT_RESULT"
EOF2
  chmod +x agent.sh
  "$LOOPKIT_SCRIPTS/loop-engine" --session demo --max-iterations 4 --retries 1 --retry-delay 0 -- ./agent.sh 2>/dev/null
}

@test "--help and usage errors; an unknown session is exit 1" {
  run -0 report --help
  [[ $output == Usage:* ]]
  run -2 report
  run -2 report --bogus demo
  run -1 report nosuch
}

@test "one self-contained page: every run, the failure marked, costs, nothing fetched" {
  make_session
  run -0 report demo -o page.html
  [ "$(grep -c '<tr class="run completed"' page.html)" = 4 ]
  [ "$(grep -c '<tr class="run failed"' page.html)" = 1 ]
  grep -q '<svg id="timeline"' page.html
  grep -q '<svg id="cost"' page.html
  grep -q '<td>1</td><td>10</td></tr>' page.html # the cumulative cost at the end
  ! grep -Eq '(src|href)=|https?:|<script|@import|url\(' page.html || false
  run -0 report .claude/pipeline-runs/demo/state.json -o -
  [[ $output == '<!DOCTYPE html>'* ]]
}

@test "a drain's runs, and names that need escaping" {
  printf 'a<b>\nc&d\n' >ready.txt
  printf '#!/bin/sh\nsed -i 1d ready.txt\nprintf "{\\"cost\\":0.5}" >"$LOOPKIT_RESULT"\n' >work.sh
  chmod +x work.sh
  "$LOOPKIT_SCRIPTS/drain-engine" --next 'cat ready.txt' -- ./work.sh 2>/dev/null
  run -0 report .atari/state.json -o drain.html
  grep -q '<td class="l">a&lt;b&gt;</td>' drain.html
  grep -q '<td class="l">c&amp;d</td>' drain.html
  [ "$(grep -c '<tr class="run completed"' drain.html)" = 2 ]
}

@test "headless chromium: the DOM holds every iteration and the screenshot is not blank" {
  need_chromium
  make_session
  report demo -o page.html 2>/dev/null
  chrome --dump-dom "file://$PWD/page.html" >dom.html
  for it in 1 2 3 4; do grep -q "<tr class=\"run completed\" data-iteration=\"$it\">" dom.html; done
  grep -q '<tr class="run failed" data-iteration="2">' dom.html
  [ "$(grep -o '<rect class="run"' dom.html | wc -l)" = 5 ]
  chrome --window-size=1000,800 --screenshot="$PWD/shot.png" "file://$PWD/page.html"
  [ -s shot.png ]
  # not blank: the decoded rows hold many distinct byte values
  run -0 python3 - shot.png <<'PY'
import sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n"
pos, idat = 8, b""
while pos < len(data):
    n = int.from_bytes(data[pos:pos + 4], "big")
    if data[pos + 4:pos + 8] == b"IDAT":
        idat += data[pos + 8:pos + 8 + n]
    pos += 12 + n
print(len(set(zlib.decompress(idat))))
PY
  ((output > 20))
}
