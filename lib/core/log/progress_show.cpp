// Progress files read: a selection of entries, and following a file as it grows.
#include "core/log/progress.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <fcntl.h>

#include "core/log/growing.hpp"
#include "core/log/progress_text.hpp"
#include "sys/base/error.hpp"
#include "sys/base/fd.hpp"
#include "sys/fs/file.hpp"

namespace loopkit::progress {

using namespace text;

namespace {

// Reads grow from small blocks, so that a bounded show reads little beyond
// what it prints, and double, so that a large header or entry costs linear time.
constexpr size_t kFirstHeadRead = 512;
constexpr size_t kFirstEntryRead = 4096;
constexpr size_t kCopyBlock = 1 << 20;  // whole-file passes

// or a document in memory (stdin, .gz).
struct Source {
  std::string name;  // for messages
  uint64_t size;
  std::function<std::string(uint64_t offset, size_t n)> read;
};

// The header and patterns: everything up to and including the first "---"
// line. end == size when the file has no such line (then there are no entries).
struct Head {
  std::string text;
  uint64_t end = 0;
};

Head find_head(const Source& src) {
  Head h;
  size_t line_start = 0, block = kFirstHeadRead;
  for (;;) {
    size_t nl = h.text.find('\n', line_start);
    if (nl == std::string::npos) {
      if (h.end >= src.size) {  // the last line has no newline
        h.end = src.size;
        return h;
      }
      std::string more = src.read(h.end, block);
      if (more.empty()) {
        h.end = h.text.size();
        return h;
      }
      h.end += more.size();
      h.text += more;
      block = std::min(block * 2, kCopyBlock);
      continue;
    }
    if (std::string_view(h.text).substr(line_start, nl - line_start) == kRule) {
      h.text.resize(nl + 1);
      h.end = nl + 1;
      return h;
    }
    line_start = nl + 1;
  }
}

// Entries from the newest back, each the text after one "---" line up to and
// including the next (the last may lack its closing rule). Reads backwards in
// blocks, keeping only the entry being collected; the block grows with it so
// that a huge entry costs linear time.
class BackwardEntries {
public:
  BackwardEntries(const Source& src, uint64_t lo, uint64_t hi) : src_(src), lo_(lo), pos_(hi) {}

  static constexpr size_t kNoLimit = SIZE_MAX;
  // nullopt at the start of the entries, or (too_big) when the entry being
  // collected has grown past limit bytes before its start was found
  std::optional<std::string> next(size_t limit, bool& too_big) {
    too_big = false;
    if (done_) return std::nullopt;
    size_t searched_from = buf_.size();  // candidates at or after this index are ruled out
    for (;;) {
      if (auto q = find_rule(searched_from)) {
        std::string entry = buf_.substr(*q + 4);
        buf_.resize(*q + 4);
        return entry;
      }
      if (pos_ == lo_) {
        done_ = true;
        if (buf_.empty()) return std::nullopt;
        return std::move(buf_);
      }
      if (buf_.size() > limit) {
        too_big = true;
        return std::nullopt;
      }
      // with a limit, read just enough to decide whether the entry fits
      // (its rule's 5 bytes "\n---\n" included); else grow geometrically
      size_t want = limit != kNoLimit
                        ? std::clamp<size_t>(limit + 5 - buf_.size(), 256, std::max(kCopyBlock, buf_.size()))
                        : std::max({kFirstEntryRead, buf_.size(), std::min(2 * last_read_, kCopyBlock)});
      size_t n = static_cast<size_t>(std::min<uint64_t>(want, pos_ - lo_));
      last_read_ = n;
      std::string more = src_.read(pos_ - n, n);
      if (more.size() != n) fail_system(EIO, "read", src_.name);  // the file shrank while we read it
      pos_ -= n;
      buf_.insert(0, more);
      searched_from = n + 1;  // index 0 was undecided before: its previous byte was unknown
    }
  }

private:
  // The last "---\n" line that ends before the end of buf_ and starts below
  // searched_from, at a line start.
  std::optional<size_t> find_rule(size_t searched_from) const {
    if (buf_.size() < 5 || searched_from == 0) return std::nullopt;
    std::string_view b(buf_);
    size_t start = std::min(b.size() - 5, searched_from - 1);
    for (;;) {
      size_t q = b.rfind("---\n", start);
      if (q == std::string_view::npos) return std::nullopt;
      if (q > 0 ? b[q - 1] == '\n' : pos_ == lo_) return q;
      if (q == 0) return std::nullopt;
      start = q - 1;
    }
  }

  const Source& src_;
  uint64_t lo_;
  uint64_t pos_;  // file offset of buf_[0]
  std::string buf_;
  size_t last_read_ = 0;
  bool done_ = false;
};

// Pass the bytes from offset to the end through f in blocks cut at newlines.
template <class F>
void forward_lines(const Source& src, uint64_t offset, F f) {
  std::string carry;
  while (offset < src.size) {
    std::string block = src.read(offset, kCopyBlock);
    if (block.empty()) break;
    offset += block.size();
    carry += block;
    size_t cut = carry.rfind('\n');
    if (cut == std::string::npos) continue;
    f(std::string_view(carry).substr(0, cut + 1));
    carry.erase(0, cut + 1);
  }
  if (!carry.empty()) f(carry);
}

bool select(const Source& src, const ShowOptions& o, const Sink& sink) {
  Head head = find_head(src);
  const bool filtered = !o.id.empty() || !o.since.empty();
  if (!filtered && !o.last && !o.max_bytes) {
    if (o.learnings) {
      forward_lines(src, head.end, [&](std::string_view text) { sink(without_rules(text)); });
    } else {
      sink(head.text);
      forward_lines(src, head.end, sink);
    }
    return true;
  }

  const size_t budget = o.max_bytes.value_or(SIZE_MAX);
  std::string head_out = o.learnings ? std::string() : std::move(head.text);
  if (head_out.size() > budget) {  // whole lines of the head, as many as fit
    size_t nl = budget == 0 ? std::string::npos : head_out.rfind('\n', budget - 1);
    head_out.resize(nl == std::string::npos ? 0 : nl + 1);
  }
  size_t remaining = budget - head_out.size();
  std::vector<std::string> picked;
  bool matched = false;
  BackwardEntries entries(src, head.end, src.size);
  while (!o.last || picked.size() < *o.last) {
    // an entry that cannot fit ends the search unless filters may skip it;
    // without_rules takes at most its closing "---\n" away
    size_t limit = filtered || !o.max_bytes ? BackwardEntries::kNoLimit : remaining + (o.learnings ? 4 : 0);
    bool too_big = false;
    auto entry = entries.next(limit, too_big);
    if (!entry) {
      matched = matched || too_big;
      break;
    }
    auto heading = heading_of(*entry);
    if (!heading && is_blank(without_rules(*entry))) continue;
    if (!o.id.empty() && (!heading || heading->id != o.id)) continue;
    if (!o.since.empty() && (!heading || heading->date.empty() || heading->date < o.since)) continue;
    matched = true;
    std::string text = o.learnings ? without_rules(*entry) : std::move(*entry);
    if (text.size() > remaining) break;  // the newest entries that fit, with no gap
    remaining -= text.size();
    picked.push_back(std::move(text));
  }
  if (filtered && !matched) return false;
  sink(head_out);
  for (auto it = picked.rbegin(); it != picked.rend(); ++it) sink(*it);
  return true;
}

}  // namespace

bool show_text(std::string_view doc, const ShowOptions& options, const Sink& sink) {
  Source src{"-", doc.size(), [doc](uint64_t offset, size_t n) {
               return offset >= doc.size() ? std::string() : std::string(doc.substr(offset, n));
             }};
  return select(src, options, sink);
}

namespace {
// A Source over what a look at a regular file sees.
Source source_of(const growing::Look& l, const std::string& path) { return Source{path, l.size, l.read}; }

// Where the first whole entry of text ends (after its "---" line), or npos.
size_t first_entry_end(std::string_view text) {
  for (size_t q = text.find("---\n"); q != std::string_view::npos; q = text.find("---\n", q + 1))
    if (q == 0 || text[q - 1] == '\n') return q + 4;
  return std::string_view::npos;
}

// A sink that turns what select prints (the head, then whole entries) into
// one JSON line per entry: the head is dropped, entries are cut at their
// "---" lines.
class JsonEntries {
public:
  explicit JsonEntries(const Sink& out) : out_(out) {}
  void feed(std::string_view text) {
    buf_ += text;
    for (size_t end; (end = first_entry_end(buf_)) != std::string::npos; buf_.erase(0, end)) {
      if (in_head_) in_head_ = false;
      else emit(std::string_view(buf_).substr(0, end));
    }
  }
  void finish() {  // a last entry without its rule; what comes next is whole entries
    if (!in_head_) emit(buf_);
    buf_.clear();
    in_head_ = false;
  }

private:
  void emit(std::string_view entry) {
    if (heading_of(entry) || !is_blank(without_rules(entry))) out_(entry_json(entry) + "\n");
  }
  const Sink& out_;
  std::string buf_;
  bool in_head_ = true;
};

bool chosen(std::string_view entry, const ShowOptions& o) {
  auto heading = heading_of(entry);
  if (!heading && is_blank(without_rules(entry))) return false;
  if (!o.id.empty() && (!heading || heading->id != o.id)) return false;
  return o.since.empty() || (heading && !heading->date.empty() && heading->date >= o.since);
}

growing::Records entries_of(const std::string& path) {
  return growing::Records{[&path](const growing::Look& l) { return find_head(source_of(l, path)).end; },
                          first_entry_end};
}

// After the first look (as without --follow), each entry appended once it
// is whole, through the one reader of growing files (core/log/growing.hpp).
bool follow(const std::string& path, const ShowOptions& o, const Sink& sink, const Sink& warn,
            const std::function<void()>& first_done) {
  std::optional<growing::Look> first = growing::first_look(path);
  if (!first) return false;
  select(source_of(*first, path), o, sink);
  first_done();
  growing::follow(
      path, *first, first->size, entries_of(path), o.poll,
      [&](std::string_view entry, uint64_t) {
        if (chosen(entry, o)) sink(o.learnings ? without_rules(entry) : std::string(entry));
      },
      [&] {
        if (warn) warn(quoted(path) + ": replaced or truncated; following it from its first entry");
      });
  return true;
}

Shown show_plain(const std::string& path, const ShowOptions& options, const Sink& sink) {
  auto shown = [](bool any) { return any ? Shown::selected : Shown::no_match; };
  if (path == "-" || ends_with(path, ".gz")) {
    auto doc = read_file_if_exists(path);
    if (!doc) return Shown::no_file;
    return shown(show_text(*doc, options, sink));
  }
  struct stat st;
  Fd fd = open_to_read(path, st);
  if (!fd) return Shown::no_file;
  if (!S_ISREG(st.st_mode)) {  // a pipe given by name, <(cmd): its bytes as they come
    FileView bytes = view_fd(fd.get(), path);
    return shown(show_text(bytes.view(), options, sink));
  }
  growing::Look l = growing::look_at(std::move(fd), st.st_ino, path);
  return shown(select(source_of(l, path), options, sink));
}
}  // namespace

Shown show(const std::string& path, const ShowOptions& options, const Sink& sink, const Sink& warn) {
  std::optional<JsonEntries> json;
  Sink json_sink = [&json](std::string_view text) { json->feed(text); };
  if (options.json) json.emplace(sink);
  const Sink& out = options.json ? json_sink : sink;
  if (options.follow) {
    bool found = follow(path, options, out, warn, [&json] {
      if (json) json->finish();
    });
    return found ? Shown::selected : Shown::no_file;
  }
  Shown shown = show_plain(path, options, out);
  if (json) json->finish();
  return shown;
}

}  // namespace loopkit::progress
