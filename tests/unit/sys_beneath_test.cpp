// lib/sys/fs/beneath: writing inside a folder, never through a symlink on the
// way (openat2 where the kernel has it, else a checked O_NOFOLLOW walk).
#include <catch2/catch.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include "sys/fs/beneath.hpp"
#include "sys/base/error.hpp"
#include "scratch.hpp"

using namespace loopkit;

TEST_CASE("write_file_beneath: existing and missing folders, links on the way refused", "[beneath]") {
  testing::Scratch d("sys-beneath-test");
  REQUIRE(mkdir(d.path("out").c_str(), 0755) == 0);
  REQUIRE(mkdir(d.path("out/docs").c_str(), 0755) == 0);
  write_file_beneath(d.path("out"), "docs/plan.md", "one");  // every folder there: one openat2
  CHECK(d.read("out/docs/plan.md") == "one");
  write_file_beneath(d.path("out"), "new/deeper/x.md", "two");  // missing: the walk creates them
  CHECK(d.read("out/new/deeper/x.md") == "two");
  write_file_beneath(d.path("out"), "docs/plan.md", "three");  // replaced, no stray beside it
  CHECK(d.read("out/docs/plan.md") == "three");
  CHECK(access(d.path("out/docs/.plan.md.tmp").c_str(), F_OK) != 0);

  REQUIRE(mkdir(d.path("elsewhere").c_str(), 0755) == 0);
  REQUIRE(symlink("../elsewhere", d.path("out/link").c_str()) == 0);
  for (const char* rel : {"link/x.md", "link/sub/x.md"}) {
    try {
      write_file_beneath(d.path("out"), rel, "never");
      FAIL_CHECK("written through a link");
    } catch (const Error& e) {
      CHECK(e.code() == Exit::system);
      CHECK(std::string(e.what()) == "refusing to write through symlink '" + d.path("out/link") + "'");
    }
  }
  CHECK(access(d.path("elsewhere/x.md").c_str(), F_OK) != 0);
  CHECK(access(d.path("elsewhere/sub").c_str(), F_OK) != 0);
}
