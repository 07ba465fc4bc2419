// Progress files (man/progress-append.1.scd shows one): a header with the
// codebase patterns, then dated entries, each closed by a "---" line.
#pragma once
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace loopkit::progress {

// "# Progress: S\n\nVerify: V\n\n## Codebase Patterns\n(...)\n\n---\n";
// an empty verify writes "(none)", as the loop scripts loopkit replaces did.
std::string header_text(std::string_view session, std::string_view verify);
// A header from a template (progress-append --template): {session},
// {verify} and {date} replaced, any other {x} kept; ends with a newline.
std::string header_from_template(std::string_view tmpl, std::string_view session, std::string_view verify,
                                 std::string_view date);
// progress-NAME.md -> NAME; else the base name without ".md"
std::string session_from_path(const std::string& path);
bool is_date(std::string_view text);  // YYYY-MM-DD, a real day

// One bullet per non-blank line of text; a line already starting "- " is kept.
std::vector<std::string> bullets_from(std::string_view text);
// newlines and tabs become spaces: a heading or a bullet is one line
std::string one_line(std::string_view text);

struct Entry {
  std::string date;                  // YYYY-MM-DD
  std::string id;                    // "" : "## DATE" alone
  std::vector<std::string> bullets;  // whole lines, each starting "- "
};
// "\n## DATE - ID\n- ...\n\n---\n"
std::string entry_text(const Entry& entry);
// What closes a torn last entry (a writer killed mid-entry: its "---" line
// never came, and the entry would swallow every later one) in a file whose
// last bytes are tail (whole: all of the file): "" when its last line that
// is not blank is "---", else a "---" line after a blank one.
std::string closing_after(std::string_view tail, bool whole);
// What goes after a file whose last bytes are tail: a torn entry's closing,
// then the entry, with its leading blank line dropped or a newline added so
// that the layout holds.
std::string entry_after(std::string_view tail, const Entry& entry, bool whole = false);
// The document with "- TEXT" lines added at the end of "## Codebase Patterns"
// (the section is made before the first "---" line when missing).
std::string add_patterns(std::string_view doc, const std::vector<std::string>& patterns);

struct AppendRequest {
  std::string session;  // for a new file; "" : from the path
  std::string verify;
  std::optional<std::string> header_template;  // a new file's header, as header_from_template reads it
  std::optional<Entry> entry;
  std::vector<std::string> patterns;
  bool sync = true;
};
// An entry alone is one locked O_APPEND write that never reads more than the
// file's last two bytes; patterns rewrite the file atomically under the same
// lock (the entry, if any, in the same rewrite).
void append(const std::string& path, const AppendRequest& request);
// The same change to a document in memory (progress-append -, a filter):
// an empty document gets the header first.
std::string appended(std::string_view doc, const std::string& path, const AppendRequest& request);

struct ShowOptions {
  std::optional<size_t> last;
  std::string id;
  std::string since;  // YYYY-MM-DD, inclusive
  bool learnings = false;
  std::optional<size_t> max_bytes;
  bool json = false;    // one JSON object per entry (entry_json), no header
  bool follow = false;  // then the entries appended, as they are completed
  double poll = 0.2;    // seconds between looks when following
};
using Sink = std::function<void(std::string_view)>;
// Print the selection to sink. no_match: --id or --since matched no entry
// (and nothing was printed). A regular file is read only as far as the
// selection needs (its head, then entries from the end). With follow, it
// then prints each entry appended, once its closing "---" line is there,
// until SIGINT, SIGTERM or SIGHUP; a file replaced or truncated is said
// through warn and followed from its first entry not yet seen.
enum class Shown { selected, no_match, no_file };
Shown show(const std::string& path, const ShowOptions& options, const Sink& sink, const Sink& warn = {});
// An entry as one line of JSON: {"date","id","bullets","files","learning"}
// (id null without one; files split at ", "; learning one per bullet).
std::string entry_json(std::string_view entry);
bool show_text(std::string_view doc, const ShowOptions& options, const Sink& sink);

// "## 2025-01-10 - beads-123" in an entry's text: its date and id
struct Heading {
  std::string date;
  std::string id;
};
std::optional<Heading> heading_of(std::string_view entry);
// text without its "---" lines (every line ends with a newline)
std::string without_rules(std::string_view text);

}  // namespace loopkit::progress
