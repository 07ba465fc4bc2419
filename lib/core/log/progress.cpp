#include "core/log/progress.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <fcntl.h>

#include "core/json/json.hpp"
#include "core/log/progress_text.hpp"
#include "sys/time/clock.hpp"
#include "sys/base/error.hpp"
#include "sys/base/fd.hpp"
#include "sys/fs/file.hpp"
#include "sys/fs/flock.hpp"
#include "sys/fs/folder.hpp"
#include "sys/fs/gz_file.hpp"
#include "sys/proc/interrupt.hpp"

namespace loopkit::progress {

using namespace text;

namespace {
// The bytes an append reads at the file's end: enough to see whether its
// last line that is not blank is a rule, so that a torn entry gets closed.
constexpr size_t kTail = 64;
}  // namespace

std::string header_text(std::string_view session, std::string_view verify) {
  std::string h = "# Progress: " + one_line(session) + "\n\nVerify: ";
  h += verify.empty() ? std::string("(none)") : one_line(verify);
  h += "\n\n## Codebase Patterns\n(Patterns discovered during implementation)\n\n---\n";
  return h;
}

std::string session_from_path(const std::string& path) {
  std::string name = base_name(path);
  if (ends_with(name, ".gz")) name.resize(name.size() - 3);  // the file's name, not its compression
  if (ends_with(name, ".md")) name.resize(name.size() - 3);
  if (starts_with(name, "progress-") && name.size() > 9) name.erase(0, 9);
  return name;
}

bool is_date(std::string_view t) { return t.size() == 10 && parse_day(t); }

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

std::string closing_after(std::string_view tail, bool whole) {
  size_t end = tail.find_last_not_of(" \t\r\n");
  if (end == std::string_view::npos) return "";  // blank: nothing written after the last rule that we can see
  size_t start = tail.rfind('\n', end);
  start = start == std::string_view::npos ? 0 : start + 1;
  if (tail.substr(start, end + 1 - start) == kRule && (start > 0 || whole)) return "";
  return (tail.back() == '\n' ? "\n" : "\n\n") + std::string(kRule) + "\n";
}

namespace {
// The entry after tail, its leading blank line dropped or a newline added
// so that the layout holds.
std::string placed_after(std::string_view tail, const Entry& entry) {
  std::string s = entry_text(entry);
  if (ends_with(tail, "\n\n")) return s.substr(1);
  if (!tail.empty() && tail.back() != '\n') return "\n" + s;
  return s;
}
}  // namespace

std::string entry_after(std::string_view tail, const Entry& entry, bool whole) {
  std::string close = closing_after(tail, whole);
  return close.empty() ? placed_after(tail, entry) : close + entry_text(entry);
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
  if (!r.entry) return out;
  std::string_view tail = std::string_view(out).substr(out.size() - std::min(kTail, out.size()));
  // a new document's header is as given (a template may have no rule), as in a new file
  out += doc.empty() && r.patterns.empty() ? placed_after(tail, *r.entry) : entry_after(tail, *r.entry, true);
  return out;
}

void append(const std::string& path, const AppendRequest& r) {
  constexpr mode_t mode = 0666;  // less the umask, as the shell's >> creates files
  // a file named .gz is read by gunzip: its text is changed and written back gzip
  if (gzip_by_name(path)) {
    rewrite_gzip_locked(
        path, [&](std::string_view doc) { return appended(doc, path, r); }, mode, r.sync);
    return;
  }
  const std::string header = header_for(path, r);
  if (r.patterns.empty()) {
    append_locked_with(
        path, kTail,
        [&](off_t size, std::string_view tail) {
          if (size == 0) return r.entry ? header + entry_text(*r.entry) : header;
          return r.entry ? entry_after(tail, *r.entry, static_cast<off_t>(tail.size()) >= size) : std::string();
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
      doc += entry_after(std::string_view(doc).substr(doc.size() - std::min(kTail, doc.size())), *r.entry, true);
    AtomicWrite how;
    how.sync = r.sync;
    // written while held.fd keeps the lock, in the folder it resolved:
    // appenders waiting on the old inode see the rename and append to the
    // new file
    write_file_atomic(held.at, doc, how);
    return;
  }
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
