// A JSON object's members as JSON text: each member's name and its value's
// text as read (whitespace outside strings dropped) or as written. Lock
// records and event lines need no document: a tool reads a few members and
// writes or prints the rest unchanged, so the lock and event tools carry no
// JSON library (issue 24). The reader (json_members_read.cpp) validates
// exactly as json::parse does and words its errors the same.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace loopkit {

struct JsonMembers {
  struct Member {
    std::string name;  // decoded
    std::string text;  // the value's JSON text, on one line
  };
  std::vector<Member> members;  // in the record's order, each name once

  // The value's text, or null when absent.
  const std::string* find(std::string_view name) const;
  // Replaces the value in its place, or appends the member.
  void set(std::string_view name, std::string text);
  void add(std::string name, std::string text);  // the same, for a name made already
  void set_string(std::string_view name, std::string_view s);
  void set_integer(std::string_view name, int64_t n);
  void set_number(std::string_view name, double d);
  void erase(std::string_view name);
  // A string member, "" when absent or not a string.
  std::string string(std::string_view name) const;
  // The record as one line of compact JSON (no newline).
  std::string json() const;
};

// The members of the JSON object that text is (surrounding whitespace
// allowed): a name given twice keeps its first place and its last value,
// as json::parse keeps it. Invalid JSON is exit 3 with json::parse's message
// ("'SUBJECT': not valid JSON: REASON at line L, column C"); valid JSON that
// is not an object is nullopt.
std::optional<JsonMembers> parse_json_object(std::string_view text, std::string_view subject);

// A top-level member of a JSON object as spans of its text: the name's
// literal (quotes included; escaped: it holds an escape, decode it with
// json_string_value) and the value's text as written.
struct JsonMemberSpan {
  std::string_view name, value;
  bool escaped;
};
// The same reading as parse_json_object, validating alike (exit 3 worded
// as json::parse words it), that copies nothing: out gets the object's
// members in order, a name given twice each time. false: valid JSON that
// is not an object.
bool read_json_members(std::string_view text, std::string_view subject, std::vector<JsonMemberSpan>& out);

// What a validating read meets, in document order: json::parse builds its
// values from these, so that every tool reads JSON by one set of rules (and
// no tool carries a second parser). A string or key comes as its literal,
// quotes included; escaped: it holds an escape (json_string_value decodes it).
struct JsonNumber {
  std::string_view text;
  enum Kind { int64, uint64, other } kind;  // other: a fraction, an exponent, or past 64 bits
  std::int64_t i = 0;                       // int64
  std::uint64_t u = 0;                      // uint64
};
class JsonEvents {
public:
  virtual void string(std::string_view literal, bool escaped) = 0;
  virtual void key(std::string_view literal, bool escaped) = 0;
  virtual void number(const JsonNumber& n) = 0;  // a finite one: the reader refuses the others
  virtual void boolean(bool b) = 0;
  virtual void null() = 0;
  virtual void object_end(std::size_t members) = 0;  // after the members' keys and values
  virtual void array_end(std::size_t elements) = 0;
  virtual void document_end() = 0;

protected:
  ~JsonEvents() = default;
};
// Exactly one document (many: zero or more, one after another, as JSON lines
// and concatenated JSON come), validated and worded as parse_json_object
// validates and words it.
void read_json_events(std::string_view text, std::string_view subject, JsonEvents& events, bool many);

// Exit 3, "'SUBJECT': not valid JSON: REASON at line L, column C" for the
// byte at `at` of text: the one wording of every reader's errors.
[[noreturn, gnu::cold]] void fail_invalid_json(std::string_view text, std::size_t at, std::string_view reason,
                                               std::string_view subject);

// Whether \c is one of JSON's escapes of a single character (\" \\ \/ \b
// \f \n \r \t): the readers' one list of them.
inline bool is_short_escape(unsigned char c) {
  switch (c) {
    case '"':
    case '\\':
    case '/':
    case 'b':
    case 'f':
    case 'n':
    case 'r':
    case 't': return true;
    default: return false;
  }
}

// s as a JSON string literal, appended: the bytes json::quote escapes
// (controls, '"', '\\', 0x7f) escaped as it escapes them.
void append_json_string(std::string& out, std::string_view s);
// The decoded string of a valid JSON value's text, or nullopt when it is
// not a string.
std::optional<std::string> json_string_value(std::string_view text);
// Whether a valid JSON value's text is a number.
inline bool is_json_number(std::string_view text) {
  return !text.empty() && (text[0] == '-' || (text[0] >= '0' && text[0] <= '9'));
}

}  // namespace loopkit
