// issue 22: a state file that shrinks while state-set has it mapped (cp
// rewriting it) killed state-set with SIGBUS. Here the file is cut short
// from inside the run, deterministically: --redact's warning comes after
// the scan and before the new file is written from the map.
#include <catch2/catch.hpp>
#include <string>
#include <unistd.h>

#include "core/edit/assign.hpp"
#include "core/state/state.hpp"
#include "scratch.hpp"
#include "sys/base/error.hpp"

using namespace loopkit;

namespace {
std::string big_state(int entries) {
  std::string s = "{\n  \"history\": [\n";
  for (int i = 0; i < entries; ++i)
    s += "    {\"iteration\": " + std::to_string(i) + ", \"reasoning\": \"a summary of what was done\"}" +
         (i + 1 < entries ? ",\n" : "\n");
  return s + "  ],\n  \"password\": \"old\"\n}\n";
}
}  // namespace

TEST_CASE("state-set on a file cut short under its mapping is exit 4, the file not replaced", "[state][mapped]") {
  for (std::size_t keep : {std::size_t(0), std::size_t(100), std::size_t(50000)}) {
    testing::Scratch d("shrink-test");
    const std::string text = big_state(5000);  // about 400 KB: mapped, not read into huge pages
    d.write("s.json", text);
    Update u;
    u.file = d.path("s.json");
    u.edits = {parse_assignment("password=hunter2")};
    u.redact = true;
    u.sync = false;
    bool cut = false;
    u.on_warning = [&](const std::string&) {
      REQUIRE(truncate(u.file.c_str(), static_cast<off_t>(keep)) == 0);
      cut = true;
    };
    try {
      update_state_file(u);
      FAIL("no error");
    } catch (const Error& e) {
      CHECK(e.code() == Exit::system);
      CHECK(std::string(e.what()) == "cannot read '" + u.file + "': the file shrank while it was read");
    }
    CHECK(cut);
    CHECK(d.read("s.json").size() == keep);  // never replaced by a file with zeros for its end
  }
}
