// One line of an event log, read for event-show: validated by one pass that
// builds no document (core/json/json_members.hpp's reader, which judges a line as
// json::parse does: event-show carries no JSON library, issue 24). A line
// the direct reading cannot print exactly as the parsed object printed
// (escapes, a name twice, numbers other than short integers, nested values)
// takes the general path: names decoded, values printed by
// core/json/json_compact.hpp.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace loopkit::event {

class EventLine {
public:
  // The line as an event (a JSON object with an integer seq), or nullopt.
  static std::optional<EventLine> read(std::string_view line);
  int64_t seq() const { return seq_; }
  // A member as state-get prints it (strings bare, the rest compact JSON);
  // empty when absent.
  std::string member(std::string_view name) const;
  // "SEQ TS TYPE SESSION key=value ...", strings bare unless they hold
  // spaces (or quotes, backslashes, controls)
  std::string text() const;

private:
  struct Member {
    std::string_view key, value;  // the key's characters, the value's JSON text
  };
  struct Named {
    std::string name;        // decoded, once
    std::string_view value;  // the last value's JSON text
  };
  const Member* find(std::string_view name) const;
  const Named* find_named(std::string_view name) const;
  bool read_general(std::string_view line);
  std::string general_text() const;
  std::vector<Member> members_;  // a direct reading
  std::vector<Named> general_;   // else the members as json::parse keeps them
  bool is_general_ = false;
  int64_t seq_ = 0;
};

}  // namespace loopkit::event
