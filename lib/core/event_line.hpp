// One line of an event log, read for event-show: validated by one scan that
// builds no document. Only a line the direct reading cannot print exactly
// as text_of prints the parsed object (escapes, a name twice, numbers other
// than short integers, nested values) is parsed into a json::object.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/json.hpp"

namespace loopkit::event {

class EventLine {
public:
  // The line as an event (a JSON object with an integer seq), or nullopt.
  static std::optional<EventLine> read(std::string_view line);
  int64_t seq() const { return seq_; }
  // A member as state-get prints it (strings bare, the rest compact JSON);
  // empty when absent.
  std::string member(std::string_view name) const;
  // What text_of prints for this event.
  std::string text() const;

private:
  struct Member {
    std::string_view key, value;  // the key's characters, the value's JSON text
  };
  const Member* find(std::string_view name) const;
  std::vector<Member> members_;          // a direct reading
  std::optional<json::object> general_;  // else the parsed object
  int64_t seq_ = 0;
};

}  // namespace loopkit::event
