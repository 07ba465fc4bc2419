// Event logs: the numbering under the append lock, and the readers.
#include "core/log/event.hpp"

#include <algorithm>
#include <filesystem>
#include <sys/stat.h>

#include "core/log/event_line.hpp"
#include "core/log/growing.hpp"
#include "core/json/json.hpp"
#include "core/json/json_compact.hpp"
#include "core/json/json_members.hpp"
#include "sys/time/clock.hpp"
#include "sys/base/error.hpp"
#include "sys/fs/file.hpp"
#include "sys/base/format.hpp"
#include "sys/gz/gz.hpp"
#include "sys/fs/gz_file.hpp"
#include "sys/fs/mapped.hpp"

namespace loopkit::event {

namespace {

// json::quote's literal, without core/json/json.cpp (Boost.JSON): json_members.hpp
std::string json_quote(std::string_view s) {
  std::string out;
  append_json_string(out, s);
  return out;
}

std::string session_of_path(const std::string& path) {
  std::error_code ec;
  auto abs = std::filesystem::absolute(path, ec);
  std::string name = ec ? std::string() : abs.parent_path().filename().string();
  if (name.empty()) fail_usage("no session name in the path " + loopkit::quoted(path) + ": give --session NAME");
  return name;
}

// A line's seq: the fast prefix, else the whole line read (a name twice:
// its last value, as json::parse keeps it; past int64: as the largest, which
// has no next: see following).
std::optional<int64_t> seq_of_line(std::string_view line) {
  if (auto s = seq_prefix(line)) return s;
  if (line.empty() || line.front() != '{') return std::nullopt;
  static std::vector<JsonMemberSpan> members;  // reused: one line at a time
  try {
    if (!read_json_members(line, "event", members)) return std::nullopt;
  } catch (const Error&) {
    return std::nullopt;
  }
  std::optional<JsonInteger> seq;
  for (const JsonMemberSpan& m : members)
    if (m.escaped ? json_string_value(m.name) == "seq" : m.name == "\"seq\"") seq = json_integer(m.value);
  if (!seq) return std::nullopt;
  return seq->is_unsigned ? static_cast<int64_t>(std::min<uint64_t>(seq->u, INT64_MAX)) : seq->i;
}

// The seq after s; the largest one has none: refused, never a negative seq.
int64_t following(int64_t s) {
  if (s == INT64_MAX)
    fail_data(loopkit::format("seq {} is the last an event log can number; start a new log", INT64_MAX));
  return s + 1;
}

// The log's last bytes, more of them each time, until next_seq can tell.
int64_t next_seq_reading_back(const std::string& path, off_t size) {
  struct stat st {};
  Fd fd = open_to_read(path, st);
  if (!fd) return 1;  // cannot happen under the append lock; start afresh
  for (off_t want = 1 << 16;; want *= 4) {
    off_t from = std::max<off_t>(0, size - want);
    std::string tail = read_at(fd.get(), from, static_cast<size_t>(size - from), path);
    if (auto s = next_seq(tail, from == 0)) return *s;
  }
}

}  // namespace

void check_type(std::string_view type) {
  if (type.empty()) fail_usage("empty event TYPE");
  for (char c : type)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == ':' || c == '-'))
      fail_usage("event TYPE " + loopkit::quoted(type) + ": use letters, digits and . _ : - only");
}

std::string line_text(int64_t seq, std::string_view ts, std::string_view session, const AppendRequest& r) {
  std::string out = loopkit::format("{{\"seq\":{},\"ts\":{},\"type\":{},\"session\":{}", seq, json_quote(ts),
                                    json_quote(r.type), json_quote(session));
  for (std::size_t i = 0; i < r.fields.size(); ++i) {
    const Field& f = r.fields[i];
    // a key given twice: the last one counts, as readers would take it
    bool later = std::any_of(r.fields.begin() + static_cast<long>(i) + 1, r.fields.end(),
                             [&](const Field& g) { return g.key == f.key; });
    if (later) continue;
    out += ',';
    out += json_quote(f.key);
    out += ':';
    out += f.json;
  }
  out += "}\n";
  return out;
}

std::optional<int64_t> seq_prefix(std::string_view line) {
  constexpr std::string_view head = "{\"seq\":";
  if (line.substr(0, head.size()) != head) return std::nullopt;
  std::size_t i = head.size();
  int64_t n = 0;
  std::size_t digits = 0;
  for (; i < line.size() && line[i] >= '0' && line[i] <= '9' && digits < 18; ++i, ++digits)
    n = n * 10 + (line[i] - '0');
  if (digits == 0 || i >= line.size() || (line[i] != ',' && line[i] != '}')) return std::nullopt;
  return n;
}

std::optional<int64_t> next_seq(std::string_view tail, bool whole) {
  std::size_t end = tail.size();
  int64_t floor = 0;
  if (end > 0 && tail[end - 1] != '\n') {
    // a torn last line: its seq counts when its number made it whole
    std::size_t nl = tail.rfind('\n');
    std::size_t start = nl == std::string_view::npos ? 0 : nl + 1;
    if (start == 0 && !whole) return std::nullopt;
    floor = seq_prefix(tail.substr(start)).value_or(0);
    end = start;
  }
  while (end > 0) {  // tail[end - 1] is a newline
    std::size_t nl = end >= 2 ? tail.rfind('\n', end - 2) : std::string_view::npos;
    std::size_t start = nl == std::string_view::npos ? 0 : nl + 1;
    if (start == 0 && !whole) return std::nullopt;
    if (auto s = seq_of_line(tail.substr(start, end - 1 - start))) return following(std::max(*s, floor));
    end = start;
  }
  if (!whole) return std::nullopt;
  return following(floor);
}

namespace {
// The event numbered under the append lock, after the log's last seq.
void append_with_seq(const std::string& path, const AppendRequest& r, const std::string& session, const std::string& ts,
                     int64_t& written) {
  append_locked_with(
      path, 4096,
      [&](off_t size, std::string_view tail) {
        std::optional<int64_t> seq = size == 0 ? 1 : next_seq(tail, static_cast<off_t>(tail.size()) >= size);
        written = seq ? *seq : next_seq_reading_back(path, size);
        bool torn = !tail.empty() && tail.back() != '\n';
        std::string out(torn ? "\n" : "");
        out += line_text(written, ts, session, r);
        return out;
      },
      0666, r.sync);
}

// A log named .gz is read by gunzip: it is written gzip too, its text
// rewritten whole under the file's flock (logs are compressed when they are
// done growing, so this is rare and small) with the event after its last seq.
void append_gzip_with_seq(const std::string& path, const AppendRequest& r, const std::string& session,
                          const std::string& ts, int64_t& written) {
  rewrite_gzip_locked(
      path,
      [&](std::string_view text) {
        written = text.empty() ? 1 : next_seq(text, true).value_or(1);
        std::string out(text);
        if (!out.empty() && out.back() != '\n') out += '\n';  // a torn last line stays torn, alone
        return out + line_text(written, ts, session, r);
      },
      0666, r.sync);
}
}  // namespace

int64_t append(const std::string& path, const AppendRequest& r, std::string* line) {
  check_type(r.type);
  const std::string session = r.session.empty() ? session_of_path(path) : r.session;
  // a line is JSON, which holds UTF-8 text only (a Latin-1 folder's name is not)
  if (!json::is_utf8(session))
    fail_usage("the session name " + loopkit::quoted(session) + (r.session.empty() ? " (from the log's folder)" : "") +
               " is not UTF-8 text: give --session NAME");
  const std::string ts = iso8601_utc(now_epoch());
  int64_t written = 0;
  try {
    if (gzip_by_name(path)) append_gzip_with_seq(path, r, session, ts, written);
    else append_with_seq(path, r, session, ts, written);
  } catch (const Error& e) {
    if (e.code() != Exit::data) throw;
    fail_data(loopkit::quoted(path) + ": " + e.what());  // the seq refused: nothing written
  }
  if (line) *line = line_text(written, ts, session, r);
  return written;
}

// --- reading ------------------------------------------------------------------

namespace {

bool selected(const EventLine& e, const ShowOptions& opt) {
  if (opt.since && e.seq() <= *opt.since) return false;
  if (!opt.types.empty() && std::find(opt.types.begin(), opt.types.end(), e.member("type")) == opt.types.end())
    return false;
  return opt.session.empty() || e.member("session") == opt.session;
}

struct Printer {
  const std::string& path;
  const ShowOptions& opt;
  const Sink& sink;
  const Sink& warn;
  const MappedFile* file = nullptr;  // the log's mapping, when it is one
  std::size_t used = 0;              // the bytes of it read: as far as a settled look saw
  void emit(std::string_view line, const EventLine& e) const {
    sink(opt.json ? std::string(line) + "\n" : e.text() + "\n");
  }
  void bad(std::size_t offset, bool last) const {
    if (file) file->check_whole(used);  // zeros past a truncation under the map: that is the error
    warn(last ? loopkit::format("{}: skipped the incomplete last line at byte {} (a writer stopped mid-line)",
                                loopkit::quoted(path), offset)
              : loopkit::format("{}: skipped a line that is not an event at byte {}", loopkit::quoted(path), offset));
  }
};

// One line (without its newline) at offset: printed when it is an event
// the options select, a warning when it is not an event.
void print_line(std::string_view line, uint64_t offset, const Printer& p, bool& any) {
  if (line.empty()) return;
  if (auto o = EventLine::read(line)) {
    if (selected(*o, p.opt)) {
      p.emit(line, *o);
      any = true;
    }
  } else {
    p.bad(offset, false);
  }
}

// Every complete line of text from the start, in order.
void print_forward(std::string_view text, const Printer& p, bool& any) {
  for (std::size_t at = 0, nl; (nl = text.find('\n', at)) != std::string_view::npos; at = nl + 1)
    print_line(text.substr(at, nl - at), at, p, any);
}

// --since and --last: from the end back, as far as the selection reaches
// (seqs only grow, so an older seq than --since ends the walk).
bool print_backward(std::string_view text, std::size_t end, const Printer& p) {
  std::vector<std::pair<std::string_view, EventLine>> picked;
  while (end > 0) {
    std::size_t nl = end >= 2 ? text.rfind('\n', end - 2) : std::string_view::npos;
    std::size_t start = nl == std::string_view::npos ? 0 : nl + 1;
    std::string_view line = text.substr(start, end - 1 - start);
    end = start;
    if (line.empty()) continue;
    if (p.opt.since) {
      auto s = seq_prefix(line);
      if (s && *s <= *p.opt.since) break;
    }
    auto o = EventLine::read(line);
    if (!o) {
      p.bad(start, false);
      continue;
    }
    if (p.opt.since && o->seq() <= *p.opt.since) break;
    if (!selected(*o, p.opt)) continue;
    picked.emplace_back(line, std::move(*o));
    if (p.opt.last && picked.size() >= *p.opt.last) break;
  }
  for (auto it = picked.rbegin(); it != picked.rend(); ++it) p.emit(it->first, it->second);
  return !picked.empty();
}

// The first look as without --follow, then each line appended once it is
// whole, through the one reader of growing files (core/log/growing.hpp).
// false: no file.
bool follow(const std::string& path, const Printer& p) {
  std::optional<growing::Look> first = growing::first_look(path);
  if (!first) return false;
  std::string all = first->read(0, first->size);
  std::size_t end = all.rfind('\n');
  end = end == std::string::npos ? 0 : end + 1;
  bool any = false;
  if (p.opt.since || p.opt.last) print_backward(all, end, p);
  else print_forward(std::string_view(all).substr(0, end), p, any);
  auto line_end = [](std::string_view text) {
    std::size_t nl = text.find('\n');
    return nl == std::string_view::npos ? nl : nl + 1;
  };
  growing::follow(
      path, *first, end, growing::Records{[](const growing::Look&) { return uint64_t(0); }, line_end}, p.opt.poll,
      [&](std::string_view line, uint64_t offset) { print_line(line.substr(0, line.size() - 1), offset, p, any); },
      [&] { p.warn(loopkit::format("{}: replaced or truncated; reading it from the start", loopkit::quoted(path))); });
  return true;
}

// A log's bytes for one show: a regular file as a settled look sees it (no
// append in flight: core/log/growing.hpp), mapped, and guarded against a
// truncation under the map (sys/fs/mapped.hpp); else read whole (standard
// input, a pipe), gzip decompressed, every member.
struct LogText {
  std::optional<growing::Look> look;
  std::optional<MappedFile> mapped;
  std::string owned;
  std::string_view text;

  bool read(const std::string& path) {
    struct stat st {};
    Fd fd = path == "-" ? Fd() : open_to_read(path, st);
    if (path != "-" && !fd) return false;
    if (fd && S_ISREG(st.st_mode)) {
      look = growing::look_at(std::move(fd), st.st_ino, path);
      mapped.emplace(look->fd.get(), path);
      text = mapped->text().substr(0, look->size);
    } else {
      owned = read_all(fd ? fd.get() : 0, fd ? path : "standard input");
      text = owned;
    }
    if (!is_gzip(text, path)) return true;
    owned = gunzip(text, path);
    text = owned;
    mapped.reset();
    return true;
  }
};

Shown show_text(std::string_view text, const Printer& p);
}  // namespace

Shown show(const std::string& path, const ShowOptions& opt, const Sink& sink, const Sink& warn) {
  Printer p{path, opt, sink, warn};
  if (opt.follow) return follow(path, p) ? Shown::selected : Shown::no_file;
  LogText log;
  if (!log.read(path)) return Shown::no_file;
  p.file = log.mapped ? &*log.mapped : nullptr;
  p.used = log.text.size();
  const Shown result = show_text(log.text, p);
  if (log.mapped) log.mapped->check_whole(log.text.size());
  return result;
}

namespace {
Shown show_text(std::string_view text, const Printer& p) {
  auto shown = [](bool any) { return any ? Shown::selected : Shown::none; };
  const ShowOptions& opt = p.opt;
  std::size_t end = text.rfind('\n');
  end = end == std::string_view::npos ? 0 : end + 1;
  if (end < text.size()) p.bad(end, true);
  if (opt.since || opt.last) return shown(print_backward(text, end, p));
  bool any = false;
  print_forward(text.substr(0, end), p, any);
  return shown(any);
}
}  // namespace

}  // namespace loopkit::event
