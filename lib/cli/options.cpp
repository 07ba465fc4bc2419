#include "cli/options.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>
#include <strings.h>

namespace loopkit::cli {

namespace {
using Items = std::vector<std::pair<std::string, std::string>>;

// The names of "w,wait" or "heartbeat,every" (one letter at most, long
// names as aliases), in order.
std::vector<std::string_view> split_names(std::string_view names) {
  std::vector<std::string_view> out;
  for (size_t start = 0; start <= names.size();) {
    size_t comma = names.find(',', start);
    if (comma == std::string_view::npos) comma = names.size();
    out.push_back(names.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

// "w,wait" -> "--wait": the name an option's messages give, its first long one
std::string long_name(const std::string& names) {
  for (std::string_view n : split_names(names))
    if (n.size() > 1) return "--" + std::string(n);
  return "-" + names;
}

[[noreturn]] void usage(const std::string& message, bool no_such_option = false) {
  throw UsageError(message, no_such_option);
}

// a flag given a value (--json=false): the values cxxopts took
bool flag_value(const std::string& text, std::string_view option) {
  if (text == "true" || text == "yes" || text == "1") return true;
  if (text == "false" || text == "no" || text == "0") return false;
  usage(fmt::format("option '{}' takes no value but true or false: {}", option, quoted(text)));
}
}  // namespace

long long integer(const std::string& text, std::string_view option, long long min, long long max) {
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || errno || *end || v < min || v > max)
    fail_usage(fmt::format("{}: not a whole number from {} to {}: {}", option, min, max, quoted(text)));
  return v;
}

double number(const std::string& text, std::string_view option, double min, double max) {
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(text.c_str(), &end);
  // strtod also takes "nan", "inf" and hex floats; the first two are caught
  // by the range (NaN compares false), hex is a number like any other
  if (text.empty() || errno || *end || !std::isfinite(v) || !(v >= min && v <= max))
    fail_usage(fmt::format("{}: not a number from {} to {}: {}", option, min, max, quoted(text)));
  return v;
}

bool looks_like_number(std::string_view w) {
  if (w.empty()) return true;
  if (w[0] == '+' || w[0] == '-') w.remove_prefix(1);
  if (!w.empty() && ((w[0] >= '0' && w[0] <= '9') || w[0] == '.')) return true;
  auto starts = [&](std::string_view p) { return w.size() >= 3 && strncasecmp(w.data(), p.data(), 3) == 0; };
  return starts("inf") || starts("nan");
}

// ---- the table --------------------------------------------------------

bool Options::named(const std::string& names) const {
  if (!named_) return true;
  for (std::string_view n : split_names(names)) {
    if (n.size() == 1 && named_->shorts.find(n[0]) != std::string::npos) return true;
    for (std::string_view l : named_->longs)
      if (n.size() > 1 && l == n) return true;
  }
  return false;
}

Options::Spec& Options::add(const std::string& names, const std::string& help, const std::string& arg, Set set) {
  Spec& s = specs_.emplace_back();
  for (std::string_view n : split_names(names)) {
    if (n.size() == 1) s.letter = n[0];
    else s.longs.emplace_back(n);
  }
  s.help = help;
  s.arg = arg;
  s.set = std::move(set);
  return s;
}

Options& Options::flag(const std::string& names, const std::string& help, bool& field) {
  if (named(names))
    add(names, help, "", [&field, name = long_name(names)](const std::string& t) { field = flag_value(t, name); });
  return *this;
}

Options& Options::flag(const std::string& names, const std::string& help, std::function<void()> on) {
  if (named(names))
    add(names, help, "", [on = std::move(on), name = long_name(names)](const std::string& t) {
      if (flag_value(t, name)) on();
    });
  return *this;
}

Options& Options::value(const std::string& names, const std::string& help, const std::string& arg, Set set) {
  if (named(names)) add(names, help, arg.empty() ? "ARG" : arg, std::move(set));
  return *this;
}

Options& Options::text(const std::string& names, const std::string& help, const std::string& arg, std::string& field) {
  return value(names, help, arg, [&field](const std::string& t) { field = t; });
}

Options& Options::text(const std::string& names, const std::string& help, const std::string& arg,
                       std::optional<std::string>& field) {
  return value(names, help, arg, [&field](const std::string& t) { field = t; });
}

Options& Options::etcd_timeout(double& field) {
  return number("timeout", "for an etcd URL: seconds each call to etcd may take (default 5)", "SECONDS", field, 0.001,
                86400);
}

Options& Options::number(const std::string& names, const std::string& help, const std::string& arg, double& field,
                         double min, double max) {
  return value(names, help, arg, [&field, name = long_name(names), min, max](const std::string& t) {
    field = cli::number(t, name, min, max);
  });
}

Options& Options::number(const std::string& names, const std::string& help, const std::string& arg,
                         std::optional<double>& field, double min, double max) {
  return value(names, help, arg, [&field, name = long_name(names), min, max](const std::string& t) {
    field = cli::number(t, name, min, max);
  });
}

Options& Options::integer(const std::string& names, const std::string& help, const std::string& arg, long long& field,
                          long long min, long long max) {
  return value(names, help, arg, [&field, name = long_name(names), min, max](const std::string& t) {
    field = cli::integer(t, name, min, max);
  });
}

Options& Options::integer(const std::string& names, const std::string& help, const std::string& arg,
                          std::optional<long long>& field, long long min, long long max) {
  return value(names, help, arg, [&field, name = long_name(names), min, max](const std::string& t) {
    field = cli::integer(t, name, min, max);
  });
}

Options& Options::optional(const std::string& names, const std::string& help, const std::string& arg,
                           const std::string& implied, bool (*is_value)(std::string_view), Set set) {
  if (!named(names)) return *this;
  Spec& s = add(names, help, arg, std::move(set));
  s.implied = implied;
  s.is_value = is_value;
  return *this;
}

Options& Options::pair(const std::string& name, const std::string& help, const std::string& arg, Set2 set) {
  if (!named(name)) return *this;
  Spec& s = add(name, help, arg, nullptr);
  s.is_pair = true;
  s.set2 = std::move(set);
  return *this;
}

Options& Options::alias(char letter, const std::string& help, bool& field) {
  if (named(std::string(1, letter))) flag(std::string(1, letter), help, field).specs_.back().hidden = true;
  return *this;
}

Options& Options::hidden(const std::string& name, const std::string& help, std::optional<std::string>& field) {
  if (named(name)) text(name, help, "WORD", field).specs_.back().hidden = true;
  return *this;
}

Options& Options::hidden_flag(const std::string& name, const std::string& help, bool& field) {
  if (named(name)) flag(name, help, field).specs_.back().hidden = true;
  return *this;
}

Options& Options::unbound(const std::string& names, const std::string& help, const std::string& arg, bool) {
  // the value is read back from the parse's items, in their order
  if (named(names)) add(names, help, arg, [](const std::string&) {});
  return *this;
}

// ---- the parse --------------------------------------------------------

const Options::Spec* Options::find_long(std::string_view name) const {
  for (const Spec& s : specs_)
    for (const std::string& l : s.longs)
      if (l == name) return &s;
  return nullptr;
}

const Options::Spec* Options::find_letter(char c) const {
  for (const Spec& s : specs_)
    if (s.letter == c) return &s;
  return nullptr;
}

// "--name", "--name=V" or "--name V" at argv[i]; the index of its last word
std::size_t Options::parse_long(int argc, char** argv, std::size_t i, Items& out) const {
  std::string_view word = argv[i] + 2;
  std::size_t eq = word.find('=');
  std::string_view name = word.substr(0, eq);
  const Spec* s = find_long(name);
  if (!s) usage(fmt::format("option '{}' does not exist", name), true);
  std::string value;
  if (eq != std::string_view::npos) {
    value = word.substr(eq + 1);
    if (s->arg.empty()) value = flag_value(value, word.substr(0, eq)) ? "true" : "false";
  } else if (s->arg.empty()) {
    value = "true";
  } else if (s->is_value &&
             (i + 1 >= std::size_t(argc) || std::strcmp(argv[i + 1], "--") == 0 || !s->is_value(argv[i + 1]))) {
    value = s->implied;
  } else if (i + 1 < std::size_t(argc)) {
    value = argv[++i];
  } else {
    usage(fmt::format("option '{}' is missing an argument", name));
  }
  if (s->set) s->set(value);
  out.emplace_back(s->key(), std::move(value));
  return i;
}

// "-xyz", "-xV" or "-x V" at argv[i]; the index of its last word
std::size_t Options::parse_short(int argc, char** argv, std::size_t i, Items& out) const {
  const char* word = argv[i];
  for (std::size_t k = 1; word[k]; ++k) {
    const Spec* s = find_letter(word[k]);
    if (!s) usage(fmt::format("option '{}' does not exist", word[k]), true);
    std::string value = "true";
    if (!s->arg.empty()) {
      if (word[k + 1]) {
        value = word + k + 1;
      } else if (s->is_value && k == 1 &&
                 (i + 1 >= std::size_t(argc) || std::strcmp(argv[i + 1], "--") == 0 || !s->is_value(argv[i + 1]))) {
        value = s->implied;
      } else if (i + 1 < std::size_t(argc)) {
        value = argv[++i];
      } else {
        usage(fmt::format("option '{}' is missing an argument", word[k]));
      }
    }
    if (s->set) s->set(value);
    out.emplace_back(s->key(), std::move(value));
    if (!s->arg.empty()) break;
  }
  return i;
}

std::vector<std::pair<std::string, std::string>> Options::parse(int argc, char** argv) const {
  Items words, out;
  bool options_end = false;
  for (std::size_t i = 1; i < std::size_t(argc); ++i) {
    const char* w = argv[i];
    if (options_end || w[0] != '-' || w[1] == '\0') words.emplace_back("args", w);
    else if (std::strcmp(w, "--") == 0) options_end = true;
    else if (w[1] == '-') i = parse_long(argc, argv, i, words);
    else i = parse_short(argc, argv, i, words);
  }
  // a pair's first word was its value; its second is the next operand
  const Spec* pending = nullptr;
  std::string first;
  for (auto& [key, value] : words) {
    if (pending) {
      if (key != "args") break;
      pending->set2(first, value);
      pending = nullptr;
      continue;
    }
    const Spec* s = key == "args" ? nullptr : find_long(key);
    if (s && s->is_pair) {
      pending = s;
      first = value;
      continue;
    }
    out.emplace_back(std::move(key), std::move(value));
  }
  if (pending) fail_usage(fmt::format("{} {}: its second word is missing", pending->spelling(), quoted(first)));
  return out;
}

// ---- what the table prints --------------------------------------------

std::string Options::help(std::string_view name, std::string_view summary, std::string_view usage_line) const {
  std::vector<std::pair<std::string, const Spec*>> rows;
  std::size_t width = 0;
  for (const Spec& s : specs_) {
    if (s.hidden) continue;
    std::string left = s.letter ? fmt::format("  -{}{}", s.letter, s.longs.empty() ? "" : ", ") : "      ";
    if (!s.longs.empty()) left += "--" + s.longs.front();
    if (!s.arg.empty()) left += " " + s.arg;
    width = std::max(width, std::min<std::size_t>(left.size(), 30));
    rows.emplace_back(std::move(left), &s);
  }
  std::string out = fmt::format("{}\nUsage:\n  {} [OPTIONS] {}\n\n", summary, name, usage_line);
  const std::size_t column = width + 2, line_max = 78;
  for (const auto& [left, s] : rows) {
    std::string line = left;
    bool own_line = left.size() > width;
    line.append(own_line ? 0 : column - left.size(), ' ');
    if (own_line) line += "\n" + std::string(column, ' ');
    std::size_t used = column;
    // the help's words, wrapped under their column
    for (std::size_t p = 0; p < s->help.size();) {
      std::size_t e = s->help.find(' ', p);
      if (e == std::string::npos) e = s->help.size();
      std::string_view word(s->help.data() + p, e - p);
      if (used > column && used + 1 + word.size() > line_max) {
        line += "\n" + std::string(column, ' ');
        used = column;
      } else if (used > column) {
        line += ' ';
        ++used;
      }
      line += word;
      used += word.size();
      p = e + 1;
    }
    out += line + "\n";
  }
  return out;
}

std::string Options::completion_lines() const {
  std::string out;
  for (const Spec& s : specs_) {
    if (s.hidden) continue;
    std::string desc = s.help;
    for (auto& c : desc)
      if (c == '\t' || c == '\n') c = ' ';
    out += fmt::format("{}\t--{}\t{}\t{}\n", s.letter ? "-" + std::string(1, s.letter) : "",
                       s.longs.empty() ? "" : s.longs.front(), s.arg, desc);
  }
  return out;
}

}  // namespace loopkit::cli
