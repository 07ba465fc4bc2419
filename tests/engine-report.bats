#!/usr/bin/env bats
# scripts/engine-report: one self-contained HTML page per session, checked
# in a real browser (Debian's chromium, headless) when it is installed.
load helpers

: "${LOOPKIT_SCRIPTS:=$LOOPKIT_SOURCE/scripts}"

report() { "$LOOPKIT_SCRIPTS/engine-report" "$@"; }

# chrome ARGS...: headless chromium with nothing kept; its network log in
# net.json (what the page loaded, see loaded_from_network)
chrome() {
  local profile
  profile=$(mktemp -d)
  timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-background-networking \
    --disable-component-update --disable-sync --no-first-run --user-data-dir="$profile" \
    --log-net-log="$PWD/net.json" "$@" 2>/dev/null
}

need_chromium() {
  command -v chromium >/dev/null || skip "chromium is not installed (apt-get install chromium)"
}

# loaded_from_network: the URLs that the page (a file:// top frame) asked
# the network for, from chromium's net log; chromium's own background
# requests (update checks, accounts) are not the page's
loaded_from_network() {
  python3 - net.json <<'PY'
import json, sys
log = json.load(open(sys.argv[1]))
start = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
for e in log["events"]:
    p = e.get("params", {})
    if e["type"] == start and "file://" in p.get("network_isolation_key", ""):
        print(p["url"])
PY
}

# runs_in_dom FILE: the runs table of a page as the browser built it, one
# line per row: "GROUP ITERATION OUTCOME"; exit 1 when the rows' starts are
# not in time order or an axis has no labels
runs_in_dom() {
  python3 - "$1" <<'PY'
import sys
from html.parser import HTMLParser
class Page(HTMLParser):
    def __init__(self):
        super().__init__(); self.rows = []; self.svg = None; self.labels = {}; self.text_class = None
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "tr" and "data-start" in a:
            self.rows.append((a["data-start"], a.get("data-group", ""), a["data-iteration"], a["class"].split()[1]))
        if tag == "svg": self.svg = a.get("id")
        if tag == "text": self.text_class = a.get("class")
    def handle_endtag(self, tag):
        if tag == "svg": self.svg = None
        if tag == "text": self.text_class = None
    def handle_data(self, data):
        if self.svg and self.text_class in ("tick-label", "axis-label"):
            self.labels.setdefault(self.svg, []).append(data)
p = Page(); p.feed(open(sys.argv[1], encoding="utf-8").read())
starts = [r[0] for r in p.rows]
assert starts == sorted(starts), starts
for svg in ("timeline", "cost"):
    if svg == "cost" and svg not in p.labels: continue  # no run reported a cost
    assert "time (UTC)" in p.labels.get(svg, []), (svg, p.labels)
    assert len(p.labels[svg]) >= 3, (svg, p.labels)
for r in p.rows: print(r[1] or "-", r[2], r[3])
PY
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

# a pipeline of stages a (2 runs) and b (2 runs) whose engine is ended by
# SIGTERM in b's first run, then run again to the end
make_pipeline() {
  cat >stage.sh <<'EOF2'
#!/bin/sh
printf '{"cost":0.5}' >"$LOOPKIT_RESULT"
if [ "$LOOPKIT_STAGE" = 1 ] && [ ! -e interrupted ]; then
  touch interrupted started
  while :; do sleep 0.05; done
fi
EOF2
  chmod +x stage.sh
  printf '{"name":"p","stages":[{"name":"a","runs":2,"command":"./stage.sh"},{"name":"b","runs":2,"command":"./stage.sh"}]}' >p.json
  "$LOOPKIT_SCRIPTS/pipeline-engine" --session pipe p.json 2>/dev/null &
  local e=$!
  wait_for started
  kill -TERM "$e"
  wait "$e" || true
  "$LOOPKIT_SCRIPTS/pipeline-engine" --session pipe p.json 2>/dev/null
}

@test "--help and usage errors; an unknown session is exit 1" {
  run -0 report --help
  [[ $output == Usage:* ]]
  run -2 report
  run -2 report --bogus demo
  run -1 report nosuch
}

@test "one self-contained page: every run, the failure and its reason, costs, nothing to fetch" {
  make_session
  run -0 report demo -o page.html
  [ "$(grep -c '<tr class="run completed" data-start' page.html)" = 4 ]
  [ "$(grep -c '<tr class="run failed" data-start' page.html)" = 1 ]
  grep -q '<svg id="timeline"' page.html
  grep -q '<svg id="cost"' page.html
  grep -q '<td class="l">exit 3</td>' page.html
  grep -q '<td>0.25</td><td>1</td><td>10</td></tr>' page.html # the cumulative cost at the end
  ! grep -Eq '(src|href)=|https?:|<script|@import|url\([^#]' page.html || false
  run -0 report .claude/pipeline-runs/demo/state.json -o -
  [[ $output == '<!DOCTYPE html>'* ]]
}

@test "a pipeline's runs in the order they ran, the one cut short by SIGTERM included" {
  make_pipeline
  run -0 report pipe -o pipe.html
  run -0 runs_in_dom pipe.html
  [ "$output" = $'a 1 completed\na 2 completed\nb 1 interrupted\nb 1 completed\nb 2 completed' ]
  grep -q '<td class="l">interrupted by SIGTERM</td>' pipe.html
  # the stages' table: runs, failures, cost
  grep -q '<tr class="stage"><td class="l">a</td><td class="l">completed</td><td>2 / 2</td><td>2</td><td>0</td><td>1</td>' pipe.html
  grep -q '<tr class="stage"><td class="l">b</td><td class="l">completed</td><td>2 / 2</td><td>3</td><td>1</td><td>1</td>' pipe.html
}

@test "a run whose engine was killed (kill -9) is drawn with no recorded end" {
  cat >agent.sh <<'EOF2'
#!/bin/sh
if [ "$LOOPKIT_ITERATION" = 2 ] && [ ! -e killed ]; then touch killed started; while :; do sleep 0.05; done; fi
EOF2
  chmod +x agent.sh
  "$LOOPKIT_SCRIPTS/loop-engine" --session k --max-iterations 3 -- ./agent.sh 2>/dev/null &
  e=$!
  wait_for started
  kill -KILL "$e"
  wait "$e" || true
  # before the rerun: the run is still open in the state, its engine gone
  run -0 report k -o before.html
  run -0 runs_in_dom before.html
  [ "$output" = $'- 1 completed\n- 2 cut-short' ]
  grep -q 'no end recorded: the engine was killed' before.html
  "$LOOPKIT_SCRIPTS/loop-engine" --session k --kill-stale-agent -- ./agent.sh 2>/dev/null
  run -0 report k -o after.html
  run -0 runs_in_dom after.html
  [ "$output" = $'- 1 completed\n- 2 cut-short\n- 2 completed\n- 3 completed' ]
}

@test "a drain's items: titled by its folder, a table per item, names that need escaping" {
  printf 'a<b>\nc&d\nbad\n' >ready.txt
  cat >work.sh <<'EOF2'
#!/bin/sh
sed -i 1d ready.txt
[ "$LOOPKIT_ITEM" != bad ] || { printf '{"error":"tests failed","cost":0.25}' >"$LOOPKIT_RESULT"; exit 0; }
printf '{"cost":0.5}' >"$LOOPKIT_RESULT"
EOF2
  chmod +x work.sh
  "$LOOPKIT_SCRIPTS/drain-engine" --next 'cat ready.txt' --max-attempts 1 -- ./work.sh 2>/dev/null || true
  run -0 report .atari/state.json
  [ -f atari-report.html ]
  grep -q '<h1>drain atari</h1>' atari-report.html
  grep -q '<td class="l">a&lt;b&gt;</td>' atari-report.html
  grep -q '<td class="l">c&amp;d</td>' atari-report.html
  [ "$(grep -c '<tr class="run completed" data-start' atari-report.html)" = 2 ]
  grep -q '<tr class="item completed"><td class="l">c&amp;d</td><td class="l">completed</td><td>1</td><td>1</td><td>0</td><td>0.5</td>' atari-report.html
  grep -q '<tr class="item abandoned"><td class="l">bad</td><td class="l">abandoned</td><td>1</td><td>1</td><td>1</td><td>0.25</td>.*tests failed' atari-report.html
}

# a pipeline recorded over an hour and a half: its stages, a failure whose
# history entry names its output, a pause, a back-off and a restart
make_fixture() {
  mkdir -p .claude/pipeline-runs/night/stage-0-plan
  printf 'line %d of the output\n' $(seq 100) >.claude/pipeline-runs/night/stage-0-plan/output-2.log
  echo 'Error: the tests failed in module X' >>.claude/pipeline-runs/night/stage-0-plan/output-2.log
  cat >.claude/pipeline-runs/night/state.json <<'EOF2'
{"session":"night","type":"pipeline","pipeline":"p","status":"complete","completion_reason":"all-stages-complete",
 "started_at":"2025-01-10T01:00:00Z","completed_at":"2025-01-10T02:30:00Z","total_cost":"2.75","total_tokens":900,
 "stages":[{"name":"plan","runs":2,"status":"completed","iterations_run":2,"reason":"max_iterations"},
           {"name":"build","runs":1,"status":"completed","iterations_run":1,"reason":"max_iterations"}],
 "history":[
  {"iteration":1,"stage":"plan","started_at":"2025-01-10T01:00:05Z","duration_s":600,"exit_status":0,"cost":1},
  {"iteration":2,"stage":"plan","started_at":"2025-01-10T01:20:00Z","duration_s":300,"exit_status":0,"cost":0.5,
   "output":"stage-0-plan/output-2.log"},
  {"iteration":1,"stage":"build","started_at":"2025-01-10T02:00:00Z","duration_s":1500,"exit_status":0,"cost":1.25}]}
EOF2
  cat >.claude/pipeline-runs/night/events.jsonl <<'EOF2'
{"seq":1,"ts":"2025-01-10T01:00:00Z","type":"start","session":"night"}
{"seq":2,"ts":"2025-01-10T01:00:00Z","type":"stage-start","session":"night","stage":0,"name":"plan"}
{"seq":3,"ts":"2025-01-10T01:00:05Z","type":"iteration-start","session":"night","stage":0,"iteration":1}
{"seq":4,"ts":"2025-01-10T01:10:05Z","type":"iteration-done","session":"night","stage":0,"iteration":1}
{"seq":5,"ts":"2025-01-10T01:10:05Z","type":"paused","session":"night"}
{"seq":6,"ts":"2025-01-10T01:15:00Z","type":"resumed","session":"night"}
{"seq":7,"ts":"2025-01-10T01:15:00Z","type":"iteration-start","session":"night","stage":0,"iteration":2}
{"seq":8,"ts":"2025-01-10T01:17:00Z","type":"agent-failed","session":"night","status":7,"attempt":1,"timed_out":0,"iteration":2,"duration_s":120,"started_at":"2025-01-10T01:15:00Z","output":"stage-0-plan/output-2.log"}
{"seq":9,"ts":"2025-01-10T01:17:00Z","type":"retry","session":"night","attempt":2,"delay":180}
{"seq":10,"ts":"2025-01-10T01:25:00Z","type":"iteration-done","session":"night","stage":0,"iteration":2}
{"seq":11,"ts":"2025-01-10T01:25:00Z","type":"stage-done","session":"night","stage":0}
{"seq":12,"ts":"2025-01-10T01:25:00Z","type":"interrupted","session":"night","signal":"SIGTERM"}
{"seq":13,"ts":"2025-01-10T01:55:00Z","type":"start","session":"night"}
{"seq":14,"ts":"2025-01-10T02:00:00Z","type":"iteration-start","session":"night","stage":1,"iteration":1}
{"seq":15,"ts":"2025-01-10T02:25:00Z","type":"iteration-done","session":"night","stage":1,"iteration":1}
{"seq":16,"ts":"2025-01-10T02:30:00Z","type":"complete","session":"night"}
EOF2
}

@test "a night's pipeline: a real time axis, gaps for pause, back-off and restart, the failure's output" {
  make_fixture
  run -0 report night -o night.html
  run -0 runs_in_dom night.html
  [ "$output" = $'plan 1 completed\nplan 2 failed\nplan 2 completed\nbuild 1 completed' ]
  # the axis: every 15 minutes, the first with its date
  grep -q '<text class="tick-label" x="[0-9.]*" y="[0-9]*" text-anchor="middle">01-10 01:00</text>' night.html
  grep -q 'text-anchor="middle">01:15</text>' night.html
  grep -q 'text-anchor="middle">02:30</text>' night.html
  for kind in paused back-off no-engine; do grep -q "<rect class=\"gap gap-$kind\"" night.html; done
  grep -q '<title>paused: 4 min 55 s, from 2025-01-10 01:10:05</title>' night.html
  grep -q '<title>no engine: 30 min 00 s, from 2025-01-10 01:25:00</title>' night.html
  # the cost axis with values, the total at the end
  grep -q '>total 2.75</text>' night.html
  grep -q '>cumulative cost</text>' night.html
  # the failure: its reason and the last lines of the output its history entry names
  grep -q '<td class="l">exit 7</td>' night.html
  grep -q 'Error: the tests failed in module X' night.html
  ! grep -q 'line 50 of the output' night.html || false
  grep -q '<tr class="stage"><td class="l">build</td><td class="l">completed</td><td>1 / 1</td><td>1</td><td>0</td><td>1.25</td><td>25 min 00 s</td>' night.html
}

@test "headless chromium: loop, pipeline and drain pages in time order, with axes, loading nothing" {
  need_chromium
  make_session
  make_pipeline
  make_fixture
  printf 'x\ny\n' >ready.txt
  printf '#!/bin/sh\nsed -i 1d ready.txt\nprintf "{\\"cost\\":0.5}" >"$LOOPKIT_RESULT"\n' >work.sh
  chmod +x work.sh
  "$LOOPKIT_SCRIPTS/drain-engine" --next 'cat ready.txt' -- ./work.sh 2>/dev/null
  report demo -o loop.html 2>/dev/null
  report pipe -o pipe.html 2>/dev/null
  report night -o night.html 2>/dev/null
  report atari -o drain.html 2>/dev/null
  for page in loop pipe night drain; do
    chrome --dump-dom "file://$PWD/$page.html" >"$page.dom"
    run -0 loaded_from_network
    [ -z "$output" ] || { echo "$page loaded: $output"; false; }
    run -0 runs_in_dom "$page.dom"
    printf '%s\n' "$output" >"$page.rows"
  done
  [ "$(cat loop.rows)" = $'- 1 completed\n- 2 failed\n- 2 completed\n- 3 completed\n- 4 completed' ]
  [ "$(cat pipe.rows)" = $'a 1 completed\na 2 completed\nb 1 interrupted\nb 1 completed\nb 2 completed' ]
  [ "$(cat drain.rows)" = $'x 1 completed\ny 2 completed' ]
  grep -q '<rect class="run interrupted"' pipe.dom
  # the check itself sees a page that loads something
  printf '<html><body><img src="http://192.0.2.1/x.png"></body></html>' >bad.html
  chrome --dump-dom "file://$PWD/bad.html" >/dev/null
  run -0 loaded_from_network
  [ "$output" = http://192.0.2.1/x.png ]
  # and the page is drawn: the screenshot is not blank
  chrome --window-size=1000,800 --screenshot="$PWD/shot.png" "file://$PWD/night.html"
  [ -s shot.png ]
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

@test "-o: a device or /dev/stdout is written as a stream, never replaced; a link's target is replaced" {
  make_session
  # a device of the test's own (never /dev/null: an engine-report that
  # replaces it would break the machine), where root can make one
  if mknod null c 1 3 2>/dev/null; then
    run -0 report demo -o null
    [ -c null ]
  fi
  # /dev/fd/1 as /dev/stdout (which an engine-report that renames over its
  # -o would replace: not tried here)
  run -0 --separate-stderr report demo -o /dev/fd/1
  [[ $output == '<!DOCTYPE html>'* ]]
  mkfifo fifo
  cat fifo >from-fifo &
  c=$!
  run -0 report demo -o fifo
  wait "$c"
  [ -p fifo ]
  grep -q '</html>' from-fifo
  # a link to a regular file: the target is replaced, the link stays
  echo old >target.html
  chmod 640 target.html
  ln -s target.html link.html
  run -0 report demo -o link.html
  [ -L link.html ]
  grep -q '</html>' target.html
  [ "$(stat -c %a target.html)" = 640 ]
  # a dangling link: its target is created
  ln -s made.html dangling.html
  run -0 report demo -o dangling.html
  [ -L dangling.html ] && [ -f made.html ]
  # a folder is refused, nothing left behind; a name of 250 bytes works
  mkdir folder.html
  run -4 --separate-stderr report demo -o folder.html
  [[ $stderr == "engine-report: cannot write 'folder.html': is a folder" ]]
  long=$(printf 'n%.0s' $(seq 245)).html
  run -0 report demo -o "$long"
  [ -f "$long" ]
  [ -z "$(find . -name '.engine-report.*')" ]
}

@test "-o: another user's link in a sticky world-writable folder is not followed" {
  [ "$(id -u)" = 0 ] || skip "needs root to plant another user's link"
  make_session
  mkdir -m 1777 shared
  echo keep >victim
  ln -s "$PWD/victim" shared/page.html
  chown -h nobody shared/page.html
  run -4 --separate-stderr report demo -o shared/page.html
  [[ $stderr == *"cannot follow 'shared/page.html': a symbolic link of another user in a sticky world-writable folder"* ]]
  [ "$(cat victim)" = keep ]
  [ -L shared/page.html ]
}

@test "a run in progress is drawn as running while its engine holds the lock" {
  printf '#!/bin/sh\n[ "$LOOPKIT_ITERATION" = 2 ] || exit 0\ntouch started\nwhile [ ! -e go ]; do sleep 0.05; done\n' >agent.sh
  chmod +x agent.sh
  "$LOOPKIT_SCRIPTS/loop-engine" --session r --max-iterations 2 -- ./agent.sh 2>/dev/null &
  e=$!
  wait_for started
  run -0 report r -o live.html
  run -0 runs_in_dom live.html
  [ "$output" = $'- 1 completed\n- 2 running' ]
  touch go
  wait "$e"
  run -0 report r -o done.html
  run -0 runs_in_dom done.html
  [ "$output" = $'- 1 completed\n- 2 completed' ]
}

@test "a failed run of a real engine: its reason and the last lines of its own output log in the failures" {
  printf '#!/bin/sh\necho "Error: the build broke in module Y" >&2\nkill -9 $$\n' >agent.sh
  chmod +x agent.sh
  run -5 "$LOOPKIT_SCRIPTS/loop-engine" --session night --max-iterations 1 -- ./agent.sh
  run -0 report night -o page.html
  grep -q '<td class="l">killed by SIGKILL</td>' page.html
  grep -q 'logs/iteration-1-attempt-1.log' page.html
  grep -q 'Error: the build broke in module Y</pre>' page.html
}
