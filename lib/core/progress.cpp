#include "core/progress.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <fcntl.h>

#include "core/json.hpp"
#include "sys/clock.hpp"
#include "sys/error.hpp"
#include "sys/fd.hpp"
#include "sys/file.hpp"
#include "sys/flock.hpp"
#include "sys/folder.hpp"
#include "sys/interrupt.hpp"

namespace loopkit::progress {

namespace {

constexpr std::string_view kRule = "---";
// Reads grow from small blocks, so that a bounded show reads little beyond
// what it prints, and double, so that a large header or entry costs linear time.
constexpr size_t kFirstHeadRead = 512;
constexpr size_t kFirstEntryRead = 4096;
constexpr size_t kCopyBlock = 1 << 20;  // whole-file passes

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

bool is_blank(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; });
}

// Calls f(line) for each line of text, without its newline.
template <class F>
void for_each_line(std::string_view text, F f) {
  while (!text.empty()) {
    size_t nl = text.find('\n');
    f(text.substr(0, nl));
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
}

// Bytes of a progress file, whether an open regular file (read on demand)
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

std::string header_text(std::string_view session, std::string_view verify) {
  std::string h = "# Progress: " + one_line(session) + "\n\nVerify: ";
  h += verify.empty() ? std::string("(none)") : one_line(verify);
  h += "\n\n## Codebase Patterns\n(Patterns discovered during implementation)\n\n---\n";
  return h;
}

std::string session_from_path(const std::string& path) {
  std::string name = base_name(path);
  if (ends_with(name, ".md")) name.resize(name.size() - 3);
  if (starts_with(name, "progress-") && name.size() > 9) name.erase(0, 9);
  return name;
}

bool is_date(std::string_view t) {
  if (t.size() != 10 || t[4] != '-' || t[7] != '-') return false;
  for (size_t i : {0, 1, 2, 3, 5, 6, 8, 9})
    if (t[i] < '0' || t[i] > '9') return false;
  auto num = [&](size_t at, size_t len) {
    int v = 0;
    for (size_t i = at; i < at + len; ++i) v = v * 10 + (t[i] - '0');
    return v;
  };
  int y = num(0, 4), m = num(5, 2), d = num(8, 2);
  static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (m < 1 || m > 12 || d < 1) return false;
  bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return d <= days[m - 1] + (m == 2 && leap ? 1 : 0);
}

std::string one_line(std::string_view text) {
  std::string s(text);
  for (char& c : s)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  return s;
}

std::vector<std::string> bullets_from(std::string_view text) {
  std::vector<std::string> out;
  for_each_line(text, [&](std::string_view line) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (is_blank(line)) return;
    out.push_back(starts_with(line, "- ") ? std::string(line) : "- " + std::string(line));
  });
  return out;
}

std::string entry_text(const Entry& e) {
  std::string s = "\n## " + e.date;
  if (!e.id.empty()) s += " - " + one_line(e.id);
  s += '\n';
  for (const auto& b : e.bullets) s += b + '\n';
  s += "\n---\n";
  return s;
}

std::string entry_after(std::string_view tail, const Entry& entry) {
  std::string s = entry_text(entry);
  if (ends_with(tail, "\n\n")) return s.substr(1);
  if (!tail.empty() && tail.back() != '\n') return "\n" + s;
  return s;
}

std::string add_patterns(std::string_view doc, const std::vector<std::string>& patterns) {
  std::string lines;
  for (const auto& p : patterns) {
    std::string line = one_line(p);
    lines += (starts_with(line, "- ") ? "" : "- ") + line + "\n";
  }
  // offsets of the line starts up to the first "---" line (the head)
  size_t rule = std::string_view::npos, section = std::string_view::npos, section_end = std::string_view::npos;
  size_t at = 0;
  while (at < doc.size()) {
    size_t nl = doc.find('\n', at);
    std::string_view line = doc.substr(at, nl == std::string_view::npos ? std::string_view::npos : nl - at);
    if (line == kRule) {
      rule = at;
      break;
    }
    if (section != std::string_view::npos && section_end == std::string_view::npos && starts_with(line, "#"))
      section_end = at;
    if (section == std::string_view::npos && starts_with(line, "## Codebase Patterns")) section = at;
    if (nl == std::string_view::npos) break;
    at = nl + 1;
  }
  std::string out(doc);
  if (section == std::string_view::npos) {
    std::string block = "## Codebase Patterns\n" + lines + "\n";
    if (rule != std::string_view::npos) return out.insert(rule, block);
    if (!out.empty() && out.back() != '\n') out += '\n';
    return out + (out.empty() ? "" : "\n") + block + "---\n";
  }
  if (section_end == std::string_view::npos) section_end = rule == std::string_view::npos ? doc.size() : rule;
  // after the section's last non-blank line, before the blank lines that end it
  size_t insert = section_end;
  while (insert > section && (doc[insert - 1] == '\n' || doc[insert - 1] == ' ' || doc[insert - 1] == '\r')) --insert;
  size_t nl = doc.find('\n', insert);
  if (nl == std::string_view::npos) {
    out += '\n';
    out += lines;
    if (rule == std::string_view::npos && section_end == doc.size()) out += "\n";
    return out;
  }
  return out.insert(nl + 1, lines);
}

namespace {
std::string header_for(const std::string& path, const AppendRequest& r) {
  std::string session = r.session.empty() ? session_from_path(path) : r.session;
  if (!r.header_template) return header_text(session, r.verify);
  return header_from_template(*r.header_template, session, r.verify, r.entry ? r.entry->date : local_date(now_epoch()));
}
}  // namespace

std::string header_from_template(std::string_view tmpl, std::string_view session, std::string_view verify,
                                 std::string_view date) {
  std::string out;
  for (std::size_t i = 0; i < tmpl.size();) {
    std::string_view rest = tmpl.substr(i);
    auto put = [&](std::string_view name, std::string_view value) {
      if (rest.substr(0, name.size()) != name) return false;
      out.append(value);
      i += name.size();
      return true;
    };
    if (tmpl[i] == '{' &&
        (put("{session}", session) || put("{verify}", verify.empty() ? "(none)" : verify) || put("{date}", date)))
      continue;
    out += tmpl[i++];
  }
  if (!out.empty() && out.back() != '\n') out += '\n';
  return out;
}

std::string appended(std::string_view doc, const std::string& path, const AppendRequest& r) {
  std::string out = doc.empty() ? header_for(path, r) : std::string(doc);
  if (!r.patterns.empty()) out = add_patterns(out, r.patterns);
  if (r.entry) out += entry_after(std::string_view(out).substr(out.size() - std::min<size_t>(2, out.size())), *r.entry);
  return out;
}

void append(const std::string& path, const AppendRequest& r) {
  const std::string header = header_for(path, r);
  constexpr mode_t mode = 0666;  // less the umask, as the shell's >> creates files
  if (r.patterns.empty()) {
    append_locked_with(
        path, 2,
        [&](off_t size, std::string_view tail) {
          if (size == 0) return r.entry ? header + entry_text(*r.entry) : header;
          return r.entry ? entry_after(tail, *r.entry) : std::string();
        },
        mode, r.sync);
    return;
  }
  for (;;) {
    // make sure the file exists first: a rewrite of a file that a racing
    // appender creates meanwhile would lose that appender's entry
    append_locked_with(
        path, 0, [&](off_t size, std::string_view) { return size == 0 ? header : std::string(); }, mode, r.sync);
    LockedForReplace held = lock_for_replace(path);
    if (!held.exists) continue;  // removed in between: create it again
    std::string doc = add_patterns(held.contents.view(), r.patterns);
    if (r.entry)
      doc += entry_after(std::string_view(doc).substr(doc.size() - std::min<size_t>(2, doc.size())), *r.entry);
    AtomicWrite how;
    how.sync = r.sync;
    // written while held.fd keeps the lock: appenders waiting on the old
    // inode see the rename and append to the new file
    write_file_atomic(path, doc, how);
    return;
  }
}

bool show_text(std::string_view doc, const ShowOptions& options, const Sink& sink) {
  Source src{"-", doc.size(), [doc](uint64_t offset, size_t n) {
               return offset >= doc.size() ? std::string() : std::string(doc.substr(offset, n));
             }};
  return select(src, options, sink);
}

namespace {
// The size of a regular file at which no append is in flight. An appender
// writes each entry with one write() under an exclusive flock of the file
// (append_locked_with in lib/sys/file.cpp), but a reader without the lock
// can see part of a large write. The size taken under a shared lock is an
// end at which no write is in flight, and the bytes before it never
// change: appends only add, a failed append truncates back to where it
// began, and a --pattern rewrite renames a new file in and leaves this one
// alone. So the lock is held for the fstat only: a slow reader (a pager on
// stdout) never holds up the appenders. Dropping an unterminated last entry
// instead would hide an entry written by hand without its rule, and would
// still print an entry whose write is later taken back.
uint64_t settled_size(int fd, const std::string& path) {
  flock_wait(fd, false, path);
  const uint64_t size = static_cast<uint64_t>(file_size(fd, path));
  flock_release(fd);
  return size;
}

Source regular_source(int fd, uint64_t size, const std::string& path) {
  return Source{path, size, [fd, size, &path](uint64_t offset, size_t n) {
                  if (offset >= size) return std::string();
                  // never past the end taken under the lock: bytes beyond it may be half written
                  return read_at(fd, static_cast<off_t>(offset),
                                 static_cast<size_t>(std::min<uint64_t>(n, size - offset)), path);
                }};
}

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

// After the first look (as without --follow), each entry appended once it
// is whole; a file replaced (a --pattern rewrite, a rotation) is picked up
// where its entries go past those seen.
void follow(const std::string& path, const ShowOptions& o, const Sink& sink, const Sink& warn,
            const std::function<void()>& first_done) {
  catch_termination_signals();
  struct stat st;
  Fd fd = open_to_read(path, st);
  if (!fd) return;
  if (!S_ISREG(st.st_mode)) fail_usage("--follow needs a regular file: " + quoted(path));
  uint64_t size = settled_size(fd.get(), path);
  Source first = regular_source(fd.get(), size, path);
  select(first, o, sink);
  first_done();
  uint64_t head_end = find_head(first).end, consumed = size - head_end;
  ino_t inode = st.st_ino;
  std::string carry;  // bytes read past the last whole entry
  // the last bytes of the entries seen, by which a file put in place is
  // told apart: the same entries under a new head (a --pattern rewrite)
  // go on where they were, anything else (a rotation) starts again
  constexpr size_t kSeenTail = 256;
  std::string seen = first.read(size - std::min<uint64_t>(consumed, kSeenTail), kSeenTail);
  while (termination_signal() == 0) {
    sleep_seconds(o.poll);
    Fd f = open_to_read(path, st);
    if (!f || !S_ISREG(st.st_mode)) continue;  // rotated away, the new file not there yet
    size = settled_size(f.get(), path);
    Source src = regular_source(f.get(), size, path);
    const bool replaced = st.st_ino != inode;
    inode = st.st_ino;
    if (replaced) head_end = find_head(src).end;
    const bool same_entries =
        !replaced || (size >= head_end + consumed && src.read(head_end + consumed - seen.size(), seen.size()) == seen);
    if (!same_entries || size < head_end + consumed + carry.size()) {
      if (warn) warn(quoted(path) + ": replaced or truncated; following it from its first entry");
      head_end = find_head(src).end;
      consumed = 0;
      carry.clear();
      seen.clear();
    }
    for (uint64_t from = head_end + consumed + carry.size(); from < size;) {
      std::string more = src.read(from, kCopyBlock);
      if (more.empty()) break;
      from += more.size();
      carry += more;
    }
    for (size_t end; (end = first_entry_end(carry)) != std::string::npos; carry.erase(0, end)) {
      consumed += end;
      std::string_view entry = std::string_view(carry).substr(0, end);
      seen = std::string(entry.substr(entry.size() - std::min(entry.size(), kSeenTail)));
      if (chosen(entry, o)) sink(o.learnings ? without_rules(entry) : std::string(entry));
    }
  }
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
  return shown(select(regular_source(fd.get(), settled_size(fd.get(), path), path), options, sink));
}
}  // namespace

Shown show(const std::string& path, const ShowOptions& options, const Sink& sink, const Sink& warn) {
  std::optional<JsonEntries> json;
  Sink json_sink = [&json](std::string_view text) { json->feed(text); };
  if (options.json) json.emplace(sink);
  const Sink& out = options.json ? json_sink : sink;
  if (options.follow) {
    if (path == "-" || ends_with(path, ".gz")) fail_usage("--follow needs a FILE, not standard input or a .gz file");
    struct stat st;
    if (!open_to_read(path, st)) return Shown::no_file;
    follow(path, options, out, warn, [&json] {
      if (json) json->finish();
    });
    return Shown::selected;
  }
  Shown shown = show_plain(path, options, out);
  if (json) json->finish();
  return shown;
}

std::string entry_json(std::string_view entry) {
  auto heading = heading_of(entry);
  std::vector<std::string> bullets, files, learning;
  bool past_heading = false;
  for_each_line(entry, [&](std::string_view line) {
    if (is_blank(line) || line == kRule) return;
    if (!past_heading && heading && starts_with(line, "## ")) {
      past_heading = true;
      return;
    }
    past_heading = true;
    if (starts_with(line, "- ")) line.remove_prefix(2);
    if (starts_with(line, "Files: ")) {
      for (std::string_view rest = line.substr(7); !rest.empty();) {
        size_t comma = rest.find(", ");
        if (comma != 0) files.emplace_back(rest.substr(0, comma));
        rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 2);
      }
    } else if (starts_with(line, "Learning: ")) {
      learning.emplace_back(line.substr(10));
    } else {
      bullets.emplace_back(line);
    }
  });
  auto text = [](std::string_view s) { return json::quote(json::to_utf8(s)); };
  auto list = [&](const std::vector<std::string>& items) {
    std::string out = "[";
    for (size_t i = 0; i < items.size(); ++i) {
      if (i) out += ',';
      out += text(items[i]);
    }
    return out + "]";
  };
  std::string out = "{\"date\":";
  out += heading && !heading->date.empty() ? text(heading->date) : "null";
  out += ",\"id\":";
  out += heading && !heading->id.empty() ? text(heading->id) : "null";
  out += ",\"bullets\":" + list(bullets) + ",\"files\":" + list(files) + ",\"learning\":" + list(learning) + "}";
  return out;
}

std::optional<Heading> heading_of(std::string_view entry) {
  std::optional<Heading> found;
  bool stop = false;
  for_each_line(entry, [&](std::string_view line) {
    if (stop || is_blank(line)) return;
    stop = true;
    if (!starts_with(line, "## ")) return;
    line.remove_prefix(3);
    Heading h;
    std::string_view date = line.substr(0, line.find(" - "));
    if (is_date(date)) {
      h.date = std::string(date);
      if (date.size() < line.size()) h.id = std::string(line.substr(date.size() + 3));
    } else {
      h.id = std::string(line);
    }
    found = h;
  });
  return found;
}

std::string without_rules(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for_each_line(text, [&](std::string_view line) {
    if (line == kRule) return;
    out += line;
    out += '\n';
  });
  return out;
}

}  // namespace loopkit::progress
