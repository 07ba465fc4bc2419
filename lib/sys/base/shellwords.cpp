#include "sys/base/shellwords.hpp"

#include "sys/base/error.hpp"
#include "sys/base/format.hpp"

namespace loopkit {

namespace {

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// what follows an unquoted or double-quoted '$' that bash would expand:
// a name, a positional or special parameter, ${...}, $(...), $((...))
bool starts_expansion(char c) {
  return is_name_char(c) || c == '{' || c == '(' || std::string_view("@*#?$!-").find(c) != std::string_view::npos;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void append_utf8(std::string& out, unsigned long cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// One line split as bash splits the words of a simple command, quote
// removal included: what bash would change by an expansion, a redirection
// or a second command is refused (exit 2), never read another way.
class Splitter {
public:
  explicit Splitter(std::string_view line) : s_(line) {}

  std::vector<std::string> words() {
    std::vector<std::string> out;
    for (;;) {
      while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\r')) ++i_;
      if (i_ >= s_.size() || s_[i_] == '#') return out;  // '#' starting a word: a comment
      out.push_back(word());
    }
  }

private:
  std::string_view s_;
  std::size_t i_ = 0;
  std::vector<bool> braces_;  // unquoted '{' open in this word: whether a ',' or '..' followed

  [[noreturn]] void refuse(std::string_view why) const {
    fail_usage(loopkit::format("{}: {}; quote it", quoted(s_), why));
  }

  std::string word() {
    std::string w;
    braces_.clear();
    const std::size_t start = i_;
    bool assignment = false;  // NAME= seen: bash expands '~' after its '=' and after ':'
    while (i_ < s_.size()) {
      char c = s_[i_];
      if (c == ' ' || c == '\t' || c == '\r') break;
      if (c == '\'') {
        quoted_single(w);
      } else if (c == '"') {
        quoted_double(w);
      } else if (c == '$' && i_ + 1 < s_.size() && s_[i_ + 1] == '\'') {
        ++i_;
        ansi_c(w);
      } else if (c == '$' && i_ + 1 < s_.size() && s_[i_ + 1] == '"') {
        ++i_;
        quoted_double(w);  // bash's locale translation: none without a message catalog
      } else {
        unquoted(c, w, i_ == start, assignment);
        if (c == '=' && !assignment) assignment = is_identifier_then_equals(s_.substr(start, i_ - start));
      }
    }
    return w;
  }

  static bool is_identifier_then_equals(std::string_view t) {
    if (t.size() >= 2 && t[t.size() - 2] == '+') t.remove_suffix(1);  // NAME+=
    if (t.size() < 2 || (t[0] >= '0' && t[0] <= '9')) return false;
    for (std::size_t k = 0; k + 1 < t.size(); ++k)
      if (!is_name_char(t[k])) return false;
    return true;
  }

  void unquoted(char c, std::string& w, bool at_start, bool assignment) {
    if (c == '\\') {
      if (i_ + 1 >= s_.size()) refuse("a line may not end in a backslash");
      w += s_[i_ + 1];
      i_ += 2;
      return;
    }
    if (c == '$' && i_ + 1 < s_.size() && starts_expansion(s_[i_ + 1])) refuse("'$' starts an expansion");
    if (c == '`') refuse("'`' starts a command substitution");
    if (std::string_view(";&|<>()").find(c) != std::string_view::npos)
      refuse(loopkit::format("'{}' is an operator of the shell", c));
    char before = i_ > 0 ? s_[i_ - 1] : ' ';
    if (c == '~' && (at_start || (assignment && (before == '=' || before == ':'))))
      refuse("'~' there is a tilde expansion");
    brace(c);
    w += c;
    ++i_;
  }

  // {a,b} and {1..3} are brace expansions
  void brace(char c) {
    if (c == '{') braces_.push_back(false);
    else if (!braces_.empty() && (c == ',' || (c == '.' && i_ + 1 < s_.size() && s_[i_ + 1] == '.')))
      braces_.back() = true;
    else if (c == '}' && !braces_.empty()) {
      if (braces_.back()) refuse("'{...,...}' is a brace expansion");
      braces_.pop_back();
    }
  }

  void quoted_single(std::string& w) {
    auto end = s_.find('\'', i_ + 1);
    if (end == std::string_view::npos) fail_usage("unbalanced ' in " + quoted(s_));
    w.append(s_.substr(i_ + 1, end - i_ - 1));
    i_ = end + 1;
  }

  void quoted_double(std::string& w) {
    std::size_t j = i_ + 1;
    for (; j < s_.size() && s_[j] != '"'; ++j) {
      char c = s_[j];
      if (c == '\\' && j + 1 < s_.size() && std::string_view("\"\\$`").find(s_[j + 1]) != std::string_view::npos) {
        w += s_[++j];
        continue;
      }
      if (c == '$' && j + 1 < s_.size() && starts_expansion(s_[j + 1])) refuse("'$' starts an expansion");
      if (c == '`') refuse("'`' starts a command substitution");
      w += c;
    }
    if (j >= s_.size()) fail_usage("unbalanced \" in " + quoted(s_));
    i_ = j + 1;
  }

  // $'...': the escapes of bash's ANSI-C quoting (printf %q writes these)
  void ansi_c(std::string& w) {
    std::size_t j = i_ + 1;
    for (; j < s_.size() && s_[j] != '\''; ++j) {
      if (s_[j] != '\\') {
        w += s_[j];
        continue;
      }
      if (++j >= s_.size()) break;
      j = ansi_c_escape(j, w) - 1;
    }
    if (j >= s_.size()) fail_usage("unbalanced $' in " + quoted(s_));
    i_ = j + 1;
  }

  // the escape whose letter is at j; returns where the text goes on
  std::size_t ansi_c_escape(std::size_t j, std::string& w) {
    static constexpr std::string_view from = "abeEfnrtv\\'\"?", to = "\a\b\x1b\x1b\f\n\r\t\v\\'\"?";
    char c = s_[j];
    if (auto k = from.find(c); k != std::string_view::npos) {
      w += to[k];
      return j + 1;
    }
    unsigned long v = 0;
    std::size_t n = 0;
    if (c >= '0' && c <= '7') {
      for (; n < 3 && j + n < s_.size() && s_[j + n] >= '0' && s_[j + n] <= '7'; ++n) v = v * 8 + (s_[j + n] - '0');
      return byte(v & 0xFF, j + n, w);
    }
    std::size_t most = c == 'x' ? 2 : c == 'u' ? 4 : c == 'U' ? 8 : 0;
    if (most) {
      for (; n < most && j + 1 + n < s_.size() && hex_value(s_[j + 1 + n]) >= 0; ++n)
        v = v * 16 + static_cast<unsigned long>(hex_value(s_[j + 1 + n]));
      if (n == 0) {  // no digits: bash keeps the backslash and the letter
        w += '\\';
        w += c;
        return j + 1;
      }
      if (c == 'x') return byte(v, j + 1 + n, w);
      if (v == 0 || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) refuse("$'\\u' names no character");
      append_utf8(w, v);
      return j + 1 + n;
    }
    if (c == 'c' && j + 1 < s_.size()) return byte(s_[j + 1] == '?' ? 0x7F : s_[j + 1] & 0x1F, j + 2, w);
    w += '\\';  // an unknown escape stays as written, as in bash
    w += c;
    return j + 1;
  }

  std::size_t byte(unsigned long v, std::size_t next, std::string& w) {
    // bash cuts the word at a NUL byte; no argument can hold one
    if (v == 0) refuse("$'...' holds a NUL byte");
    w += static_cast<char>(v);
    return next;
  }
};

}  // namespace

std::vector<std::string> split_shell_words(std::string_view line) { return Splitter(line).words(); }

std::string shell_quote(std::string_view v) {
  // bare when nothing in it is special to sh, as Python's shlex.quote does
  bool safe = !v.empty();
  for (char c : v)
    safe = safe && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    std::string_view("_@%+=:,./-").find(c) != std::string_view::npos);
  if (safe) return std::string(v);
  std::string out = "'";
  for (char c : v) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  out += '\'';
  return out;
}

std::string shell_name(std::string_view name) {
  std::string out;
  for (char c : name) {
    bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
    out += ok ? c : '_';
  }
  if (out.empty() || (out[0] >= '0' && out[0] <= '9')) out.insert(out.begin(), '_');
  return out;
}

}  // namespace loopkit
