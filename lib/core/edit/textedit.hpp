// Faithful editing of JSON text in one pass: the text is scanned once
// (core/scan/scan.hpp) for the spans the edits' paths need, the edits are applied
// in command-line order to a thin overlay of those spans, and the new text
// is written to a sink as the untouched slices of the old text plus the new
// values, without a copy of the document in memory.
//
// The semantics are those of reference::edit_value (tests/unit/reference.hpp) on a parsed
// document (the tests' reference), with the same errors: both take them
// from core/edit/edit_rules.hpp. What the overlay adds is that every byte
// no edit touches is kept: a duplicated member name's earlier copies, number
// spellings (1.0, 1e2, 30-digit integers), indentation. New values are
// written in their neighbours' style (jq's 2-space layout where none), and
// a value given as JSON keeps its scalars' text as given (:=1e2 stays 1e2).
#pragma once
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/edit/assign.hpp"
#include "core/json/json.hpp"
#include "core/scan/path.hpp"
#include "core/scan/scan.hpp"

namespace loopkit {
class MappedFile;
}

namespace loopkit::textedit {

// Where the new text goes, in order, in pieces (slices of the old text are
// passed straight through: they are never copied into a buffer of the
// document's size).
class Sink {
public:
  virtual ~Sink() = default;
  virtual void write(std::string_view bytes) = 0;
};

class StringSink : public Sink {
public:
  void write(std::string_view bytes) override { text.append(bytes); }
  std::string text;
};

// Writes to a file descriptor through a 64 KiB buffer (small pieces are
// gathered; big slices go out directly). With source, the mapped file the
// old text is: slices of it of 1 MiB or more are copied by the kernel
// (copy_range), and its pages behind what was written are released, so a
// rewrite of a big file keeps few of them resident. flush() before closing
// the fd.
class FdSink : public Sink {
public:
  FdSink(int fd, std::string subject, MappedFile* source = nullptr)
      : fd_(fd), subject_(std::move(subject)), source_(source) {}
  void write(std::string_view bytes) override;
  void flush();
  std::size_t bytes_written() const { return total_; }

private:
  int fd_;
  std::string subject_;
  MappedFile* source_;
  std::string buf_;
  std::size_t total_ = 0;
};

// text, one valid document, with all its whitespace redone in layout
// (--compact, --indent): every string and number keeps its text, and every
// member its place, duplicates too.
void restyle(std::string_view text, const json::Layout& layout, Sink& out);

// What a run must learn from the text: the paths of the edits, widened so
// that an index still finds its element after earlier deletes and appends
// in the same run, and the paths whose current values are compared
// (--expect, --require). With every_item, arrays on those paths keep all
// their items (the fallback when the widened windows do not suffice).
scan::Want wants_for(const std::vector<Edit>& edits, const std::vector<Path>& compared, bool every_item = false);

// The spans the path names in the scanned text: nullopt where a member or
// element is missing or a value on the way is null; indexing into a
// string, number or boolean is exit 3. The path must have been in the
// scan's Want. `[]` over an object lists a duplicated name once, at its
// first position, with its last value (as jq does). This is the one lookup
// of state-get and state-set.
std::vector<std::optional<std::pair<std::size_t, std::size_t>>> lookup(std::string_view text, const scan::Node& root,
                                                                       const Path& path);

// The value at path, for --expect and --require: missing, null on the way
// or through a scalar reads as null; big integers keep their digits.
json::value value_in(std::string_view text, const scan::Node& root, const Path& path);

class Overlay;

// The edits of one run, applied in order against scanned text.
class Plan {
public:
  // text must stay valid while the plan lives; root is scan::scan(text,
  // wants_for(...)); layout is json::detect_layout(text) (the style of
  // new values where no neighbour shows one).
  Plan(std::string_view text, const scan::Node& root, const json::Layout& layout, std::string_view subject);
  ~Plan();
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;

  // One edit, on the overlay of the spans the scan kept, as the tests'
  // reference edits a parsed value (reference::edit_value in
  // tests/unit/reference.hpp): the same errors (exit 3 for
  // a type in the way, an index out of range or a sum that overflows, exit
  // 2 for `[]`). Throws NeedsEveryItem when an
  // index reaches an element the scan did not keep (scan again with
  // wants_for(..., true)).
  void edit_spans(const Edit& e);
  // whether any edit changed the document
  bool changed() const { return changed_; }
  // the whole new text
  void write(Sink& out) const;

  struct NeedsEveryItem {};

private:
  std::string_view text_;
  json::Layout layout_;
  std::string subject_;
  std::unique_ptr<Overlay> root_;
  std::deque<std::string> texts_;  // new values' texts, at addresses that stay put
  bool changed_ = false;
  std::size_t begin_ = 0, end_ = 0;  // the document's value, inside its surrounding whitespace
};

// The whole run on text already in memory: scan once, apply every edit,
// write the result to out. Returns false (writing nothing) when the edits
// change nothing. For tests and callers without a file to stream to.
bool edit_text(std::string_view text, const std::vector<Edit>& edits, Sink& out, std::string_view subject);

}  // namespace loopkit::textedit
