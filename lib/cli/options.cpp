#include "cli/options.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

#include "sys/base/decimal.hpp"
#include "sys/base/format.hpp"

namespace loopkit::cli {

namespace {
using Items = std::vector<std::pair<std::string, std::string>>;

// Each of the names of "w,wait" or "heartbeat,every" (one letter at most,
// long names as aliases), in order, until f returns true; whether it did.
template <class F>
bool any_name(std::string_view names, F f) {
  for (std::size_t start = 0; start <= names.size();) {
    std::size_t comma = std::min(names.find(',', start), names.size());
    if (f(names.substr(start, comma - start))) return true;
    start = comma + 1;
  }
  return false;
}

[[noreturn, gnu::cold]] void usage(const std::string& message, bool no_such_option = false) {
  throw UsageError(message, no_such_option);
}

}  // namespace

// a flag given a value (--json=false): the values cxxopts took
bool flag_value(const std::string& text, std::string_view option) {
  if (text == "true" || text == "yes" || text == "1") return true;
  if (text == "false" || text == "no" || text == "0") return false;
  usage(loopkit::format("option '{}' takes no value but true or false: {}", option, quoted(text)));
}

long long integer(const std::string& text, std::string_view option, long long min, long long max) {
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || errno || *end || v < min || v > max)
    fail_usage(loopkit::format("{}: not a whole number from {} to {}: {}", option, min, max, quoted(text)));
  return v;
}

// A decimal number (sys/base/decimal: no strtod, whose "inf", "nan" and hex
// floats no option wants), within a few units in the last place: seconds
// and counts need no more.
double number(const std::string& text, std::string_view option, double min, double max) {
  std::optional<Decimal> d = read_decimal(text);
  double v = d ? d->approximate() : 0;
  if (!d || !std::isfinite(v) || !(v >= min && v <= max))
    fail_usage(loopkit::format("{}: not a number from {} to {}: {}", option, min, max, quoted(text)));
  return v;
}

bool looks_like_number(std::string_view w) {
  if (w.empty()) return true;
  if (w[0] == '+' || w[0] == '-') w.remove_prefix(1);
  if (!w.empty() && ((w[0] >= '0' && w[0] <= '9') || w[0] == '.')) return true;
  // "-inf" and "-nan" are no options either: a value, refused as one
  auto starts = [&](std::string_view p) {
    if (w.size() < 3) return false;
    for (std::size_t i = 0; i < 3; ++i)
      if ((w[i] | 0x20) != p[i]) return false;
    return true;
  };
  return starts("inf") || starts("nan");
}

// ---- the table: which options the line names (their declarations: options_table.cpp)
// --------------------------------------------------------

Options::Options(const Named* named) : named_(named) {
  if (named_)
    for (std::string_view l : named_->longs()) long_hints_ |= std::uint64_t(1) << Names::hint_of(l);
}

namespace {
// a == b, without a call: the names are a few bytes long
bool same(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i] != b[i]) return false;
  return true;
}

// Whether "old" or "old,older" holds the long name l
bool holds_long(std::string_view names, std::string_view l) {
  for (std::size_t start = 0; start < names.size();) {
    std::size_t end = start;
    while (end < names.size() && names[end] != ',') ++end;
    if (end - start == l.size() && names.compare(start, l.size(), l) == 0) return true;
    start = end + 1;
  }
  return false;
}
}  // namespace

// Called for the options that named's bits leave in doubt: the names
// were split when the tool was compiled, so it allocates nothing and a
// line naming one option pays for little more than that one.
bool Options::named_exactly(const Names& names) const {
  if (names.letter && !named_->shorts.empty() && named_->shorts.find(names.letter) != std::string::npos) return true;
  for (std::string_view l : named_->longs())
    if (same(l, names.first_long) || (!names.older.empty() && holds_long(names.older, l))) return true;
  return false;
}

bool Options::Spec::has_long(std::string_view name) const {
  return any_name(names, [name](std::string_view n) { return n.size() > 1 && n == name; });
}

// ---- the parse --------------------------------------------------------

const Options::Spec* Options::find_long(std::string_view name) const {
  for (const Spec& s : specs_)
    if (s.has_long(name)) return &s;
  return nullptr;
}

const Options::Spec* Options::find_letter(char c) const {
  for (const Spec& s : specs_)
    if (s.letter == c) return &s;
  return nullptr;
}

// value to the option: a flag's ("true" or "false" by now) to its field,
// any other to its setter
void Options::give(const Spec& s, const std::string& value) {
  if (s.flag) *s.flag = value == "true";
  else if (s.set) s.set(value);
}

// "--name", "--name=V" or "--name V" at argv[i]; the index of its last word
std::size_t Options::parse_long(int argc, char** argv, std::size_t i, Items& out) const {
  std::string_view word = argv[i] + 2;
  std::size_t eq = word.find('=');
  std::string_view name = word.substr(0, eq);
  const Spec* s = find_long(name);
  if (!s) usage(loopkit::format("option '{}' does not exist", name), true);
  std::string value;
  if (eq != std::string_view::npos) {
    value = word.substr(eq + 1);
    if (s->arg.empty()) value = flag_value(value, word.substr(0, eq)) ? "true" : "false";
  } else if (s->arg.empty()) {
    value = "true";
  } else if (s->is_value &&
             (i + 1 >= std::size_t(argc) || std::strcmp(argv[i + 1], "--") == 0 || !s->is_value(argv[i + 1]))) {
    value = std::string(s->implied);
  } else if (i + 1 < std::size_t(argc)) {
    value = argv[++i];
  } else {
    usage(loopkit::format("option '{}' is missing an argument", name));
  }
  give(*s, value);
  out.emplace_back(s->key(), std::move(value));
  return i;
}

// "-xyz", "-xV" or "-x V" at argv[i]; the index of its last word
std::size_t Options::parse_short(int argc, char** argv, std::size_t i, Items& out) const {
  const char* word = argv[i];
  for (std::size_t k = 1; word[k]; ++k) {
    const Spec* s = find_letter(word[k]);
    if (!s) usage(loopkit::format("option '{}' does not exist", word[k]), true);
    std::string value = "true";
    if (!s->arg.empty()) {
      if (word[k + 1]) {
        value = word + k + 1;
      } else if (s->is_value && k == 1 &&
                 (i + 1 >= std::size_t(argc) || std::strcmp(argv[i + 1], "--") == 0 || !s->is_value(argv[i + 1]))) {
        value = std::string(s->implied);
      } else if (i + 1 < std::size_t(argc)) {
        value = argv[++i];
      } else {
        usage(loopkit::format("option '{}' is missing an argument", word[k]));
      }
    }
    give(*s, value);
    out.emplace_back(s->key(), std::move(value));
    if (!s->arg.empty()) break;
  }
  return i;
}

std::vector<std::pair<std::string, std::string>> Options::parse(int argc, char** argv) const {
  Items words, out;
  words.reserve(static_cast<std::size_t>(argc));  // a word gives an item ("-xyz" more)
  bool options_end = false;
  for (std::size_t i = 1; i < std::size_t(argc); ++i) {
    const char* w = argv[i];
    if (options_end || w[0] != '-' || w[1] == '\0') words.emplace_back("args", w);
    else if (std::strcmp(w, "--") == 0) options_end = true;
    else if (w[1] == '-') i = parse_long(argc, argv, i, words);
    else i = parse_short(argc, argv, i, words);
  }
  if (std::none_of(specs_.begin(), specs_.end(), [](const Spec& s) { return s.is_pair; })) return words;
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
  if (pending) fail_usage(loopkit::format("{} {}: its second word is missing", pending->spelling(), quoted(first)));
  return out;
}

// ---- what the table prints --------------------------------------------

// What the table prints is cold: built for size (gnu::cold), not speed.
[[gnu::cold]] std::string Options::help(std::string_view name, std::string_view summary,
                                        std::string_view usage_line) const {
  std::vector<std::pair<std::string, const Spec*>> rows;
  std::size_t width = 0;
  for (const Spec& s : specs_) {
    if (s.hidden) continue;
    std::string left = s.letter ? loopkit::format("  -{}{}", s.letter, s.first_long.empty() ? "" : ", ") : "      ";
    if (!s.first_long.empty()) left += loopkit::format("--{}", s.first_long);
    if (!s.arg.empty()) left += loopkit::format(" {}", s.arg);
    width = std::max(width, std::min<std::size_t>(left.size(), 30));
    rows.emplace_back(std::move(left), &s);
  }
  std::string out = loopkit::format("{}\nUsage:\n  {} [OPTIONS] {}\n\n", summary, name, usage_line);
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

[[gnu::cold]] std::string Options::completion_lines() const {
  std::string out;
  for (const Spec& s : specs_) {
    if (s.hidden) continue;
    std::string desc(s.help);
    for (auto& c : desc)
      if (c == '\t' || c == '\n') c = ' ';
    out += loopkit::format("{}\t--{}\t{}\t{}\n", s.letter ? "-" + std::string(1, s.letter) : "", s.first_long, s.arg,
                           desc);
  }
  return out;
}

}  // namespace loopkit::cli
