#include "core/json/jsontext.hpp"

#include <vector>

#include "core/json/json_members.hpp"

namespace loopkit {

// The lock tools' validating reader judges and words text as json::parse
// does (tests/unit/json_members_test.cpp holds it to that), without Boost's
// parser: a second instantiation of it (20 KB) left every scanning tool.
void validate_json(std::string_view text, std::string_view subject) {
  std::vector<JsonMemberSpan> members;
  read_json_members(text, subject, members);
}

}  // namespace loopkit
