// Event logs (events.jsonl): one JSON object per line, {"seq":N,"ts":"...",
// "type":"...","session":"...", fields...}, seq strictly increasing. Written
// by event-append, read by event-show and the engines' status view.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/log/event_line.hpp"

namespace loopkit::event {

// One field of an event, its value as one line of JSON text.
struct Field {
  std::string key;
  std::string json;  // the value's text as given (a number keeps its digits)
};
// KEY=TEXT (a string) or KEY:=JSON, the assignment syntax of state-set for a
// top-level member; the envelope's names, nested paths and other operators
// are exit 2.
Field parse_field(std::string_view assignment);
// letters, digits and . _ : - ; exit 2 naming what is wrong otherwise
void check_type(std::string_view type);

struct AppendRequest {
  std::string type;
  std::string session;  // "" : the name of the file's folder
  std::vector<Field> fields;
  bool sync = true;
};
// The event's line (with its newline) for a given seq and time.
std::string line_text(int64_t seq, std::string_view ts, std::string_view session, const AppendRequest& request);
// The seq after the last one in a log whose last bytes are tail (the whole
// log when whole): the last complete line's seq, or a torn last line's when
// its "seq" member made it to the disk, plus one. nullopt: the tail does not
// reach back to the start of a readable line, read more.
std::optional<int64_t> next_seq(std::string_view tail, bool whole);
// Appends one event with a single write under the file's flock, reading only
// the log's tail to number it; a torn last line (a writer killed mid-line) is
// closed first, never overwritten. Returns the seq written; the line
// written (with its newline) into *line when given.
int64_t append(const std::string& path, const AppendRequest& request, std::string* line = nullptr);

// The seq at the start of a line ({"seq":N,...}), without parsing the rest.
std::optional<int64_t> seq_prefix(std::string_view line);

struct ShowOptions {
  std::optional<int64_t> since;  // only events with a greater seq
  std::optional<size_t> last;    // only the newest N (of those selected)
  std::vector<std::string> types;
  std::string session;
  bool json = false;    // the lines as stored; else one readable line each
  bool follow = false;  // then wait for new events until a signal
  double poll = 0.2;    // seconds between looks at a followed file
};
using Sink = std::function<void(std::string_view)>;
// Prints the selected events; a line that is not an event (a torn last line
// after a crash) is skipped with a warning. With follow, returns only when
// a signal arrives.
enum class Shown { selected, none, no_file };
Shown show(const std::string& path, const ShowOptions& options, const Sink& sink, const Sink& warn);

}  // namespace loopkit::event
