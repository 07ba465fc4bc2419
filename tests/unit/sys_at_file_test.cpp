// lib/sys/fs/at_file: a path resolved once into its folder, open, and a
// name. What the handle promises: every later look, lock, temporary file and
// rename acts in the folder it resolved, whatever the path names by then.
#include <catch2/catch.hpp>
#include <cerrno>
#include <fcntl.h>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

#include "scratch.hpp"
#include "system_error.hpp"
#include "sys/base/error.hpp"
#include "sys/fs/at_file.hpp"
#include "sys/fs/file.hpp"

using namespace loopkit;

namespace {
struct Scratch : testing::Scratch {
  Scratch() : testing::Scratch("sys-at-file-test") {}
};

using testing::system_error;

// text written to a temporary file of at and committed there
bool commit_text(const AtFile& at, const std::string& text) {
  TempFile tmp = at.temp_file();
  write_all(tmp.fd(), text, tmp.subject());
  tmp.finish(0644, nullptr, true);
  return at.commit_sync(tmp, {});
}

// the folder at d/name moved to d/moved_to and, in its place, a symlink to
// d/planted (an empty folder): what a hostile or careless rename does
void replace_folder_by_link(const Scratch& d, const std::string& name, const std::string& moved_to) {
  REQUIRE(rename(d.path(name).c_str(), d.path(moved_to).c_str()) == 0);
  REQUIRE(mkdir(d.path("planted").c_str(), 0755) == 0);
  REQUIRE(symlink("planted", d.path(name).c_str()) == 0);
}
}  // namespace

TEST_CASE("AtFile names a file by its folder, open, and its last name", "[at_file]") {
  Scratch d;
  REQUIRE(mkdir(d.path("a").c_str(), 0755) == 0);
  d.write("a/s.json", "{}");
  const AtFile at(d.path("a/s.json"));
  CHECK(at.name() == "s.json");
  CHECK(at.path() == d.path("a/s.json"));
  CHECK(at.shown() == d.path("a/s.json"));
  CHECK(at.folder_path() == d.path("a"));
  struct stat st;
  REQUIRE(at.look(st));
  CHECK(S_ISREG(st.st_mode));
  CHECK(at.exists());
  Fd fd = at.open(O_RDONLY);
  REQUIRE(fd);
  CHECK(read_all(fd.get(), "s.json") == "{}");
  // a name beside it goes through the same descriptor
  const AtFile backup = at.sibling("s.json.backup");
  CHECK(backup.path() == d.path("a/s.json.backup"));
  CHECK(backup.folder().fd() == at.folder().fd());
  CHECK_FALSE(backup.exists());
  CHECK(commit_text(backup, "old"));
  CHECK(d.read("a/s.json.backup") == "old");
}

TEST_CASE("AtFile keeps the folder it resolved when a symlink is planted in its place", "[at_file]") {
  Scratch d;
  REQUIRE(mkdir(d.path("a").c_str(), 0755) == 0);
  d.write("a/s.json", "{}");
  const AtFile at(d.path("a/s.json"));
  replace_folder_by_link(d, "a", "moved");
  // the look, the open and the commit all act in the folder resolved
  struct stat st;
  CHECK(at.look(st));
  CHECK(commit_text(at, "new"));
  CHECK(d.read("moved/s.json") == "new");
  CHECK_FALSE(AtFile(d.path("planted/s.json")).exists());
  // a path resolved now goes where the link points
  CHECK(commit_text(AtFile(d.path("a/s.json")), "other"));
  CHECK(d.read("planted/s.json") == "other");
  CHECK(d.read("moved/s.json") == "new");
}

TEST_CASE("a rename across a replaced folder lands in the folder resolved", "[at_file]") {
  Scratch d;
  REQUIRE(mkdir(d.path("a").c_str(), 0755) == 0);
  d.write("a/s.json", "{}");
  const AtFile at(d.path("a/s.json"));
  TempFile tmp = at.temp_file();
  write_all(tmp.fd(), "new", tmp.subject());
  tmp.finish(0644, nullptr, true);
  // between the temporary file's creation and its rename the folder goes
  // (renamed away) and another takes its name
  REQUIRE(rename(d.path("a").c_str(), d.path("old").c_str()) == 0);
  REQUIRE(mkdir(d.path("a").c_str(), 0755) == 0);
  CHECK(at.commit_sync(tmp, {}));
  CHECK(d.read("old/s.json") == "new");
  CHECK_FALSE(AtFile(d.path("a/s.json")).exists());
}

TEST_CASE("a folder removed under an AtFile: the write fails and leaves nothing", "[at_file]") {
  Scratch d;
  REQUIRE(mkdir(d.path("a").c_str(), 0755) == 0);
  const AtFile at(d.path("a/s.json"));
  REQUIRE(rmdir(d.path("a").c_str()) == 0);
  REQUIRE(mkdir(d.path("a").c_str(), 0755) == 0);  // a new folder of the same name is not the one resolved
  const std::string why = system_error([&] { commit_text(at, "new"); });
  CHECK(why.find("cannot create '" + d.path("a/s.json") + "'") == 0);
  CHECK_FALSE(AtFile(d.path("a/s.json")).exists());
}

TEST_CASE("lock_for_replace and the write after it stay in the folder the lock resolved", "[at_file]") {
  Scratch d;
  REQUIRE(mkdir(d.path("a").c_str(), 0755) == 0);
  d.write("a/s.json", "{}");
  const std::string path = d.path("a/s.json");
  LockedForReplace held = lock_for_replace(path);
  REQUIRE(held.exists);
  replace_folder_by_link(d, "a", "moved");
  AtomicWrite how;
  how.held = &held;
  CHECK(write_file_atomic(path, "new", how));
  CHECK(d.read("moved/s.json") == "new");
  CHECK_FALSE(AtFile(d.path("planted/s.json")).exists());

  // a missing file: its folder is what is locked, and where it is created
  REQUIRE(mkdir(d.path("b").c_str(), 0755) == 0);
  LockedForReplace folder_held = lock_for_replace(d.path("b/n.json"));
  REQUIRE_FALSE(folder_held.exists);
  REQUIRE(rename(d.path("b").c_str(), d.path("b-moved").c_str()) == 0);
  REQUIRE(symlink("planted", d.path("b").c_str()) == 0);
  CHECK(write_file_atomic(folder_held.at, "made", {}));
  CHECK(d.read("b-moved/n.json") == "made");
  CHECK_FALSE(AtFile(d.path("planted/n.json")).exists());
}

TEST_CASE("AtFile follows a link at its name only when asked, by the rule for links", "[at_file]") {
  Scratch d;
  REQUIRE(mkdir(d.path("t").c_str(), 0755) == 0);
  d.write("t/s.json", "{}");
  REQUIRE(symlink("t/s.json", d.path("link.json").c_str()) == 0);
  const AtFile named(d.path("link.json"));
  struct stat st;
  REQUIRE(named.look(st));
  CHECK(S_ISLNK(st.st_mode));  // not followed
  const AtFile at = AtFile::following_links(d.path("link.json"));
  CHECK(at.path() == d.path("t/s.json"));
  CHECK(at.shown() == d.path("link.json"));
  CHECK(commit_text(at, "new"));
  CHECK(d.is_link("link.json"));  // the link stays, its target is replaced
  CHECK(d.read("t/s.json") == "new");
}

TEST_CASE("AtFile on a folder that cannot be opened fails as the path would", "[at_file]") {
  Scratch d;
  const AtFile missing(d.path("none/s.json"));
  struct stat st;
  errno = 0;
  CHECK_FALSE(missing.look(st));
  CHECK(errno == ENOENT);
  CHECK_FALSE(missing.open(O_RDONLY));
  CHECK(errno == ENOENT);
  CHECK(system_error([&] { missing.folder(); }) ==
        "cannot open folder '" + d.path("none") + "': No such file or directory");
  d.write("file", "x");
  const AtFile through_file(d.path("file/s.json"));
  CHECK_FALSE(through_file.open(O_RDONLY));
  CHECK(errno == ENOTDIR);
}

TEST_CASE("AtFile in a folder that can be searched but not read looks and opens, never writes", "[at_file]") {
  if (geteuid() == 0) return;  // root reads every folder
  Scratch d;
  REQUIRE(mkdir(d.path("x").c_str(), 0755) == 0);
  d.write("x/s.json", "{}");
  REQUIRE(chmod(d.path("x").c_str(), 0100) == 0);
  const AtFile at(d.path("x/s.json"));
  struct stat st;
  CHECK(at.look(st));
  Fd fd = at.open(O_RDONLY);
  CHECK(fd);
  CHECK(system_error([&] { commit_text(at, "new"); }) == "cannot open folder '" + d.path("x") + "': Permission denied");
  REQUIRE(chmod(d.path("x").c_str(), 0755) == 0);
  CHECK(d.read("x/s.json") == "{}");
}

TEST_CASE("AtFile of a folder's own path, of '..' and of a name of 255 bytes", "[at_file]") {
  Scratch d;
  REQUIRE(mkdir(d.path("a").c_str(), 0755) == 0);
  struct stat st;
  // "a/" is the folder itself, as open(2) of the path finds it
  const AtFile slash(d.path("a/"));
  REQUIRE(slash.look(st));
  CHECK(S_ISDIR(st.st_mode));
  // "a/.." is a's parent: the name ".." in the folder a
  const AtFile up(d.path("a/.."));
  CHECK(up.name() == "..");
  REQUIRE(up.look(st));
  struct stat top;
  REQUIRE(stat(d.dir.c_str(), &top) == 0);
  CHECK(st.st_ino == top.st_ino);
  // the longest name a folder takes: the temporary names beside it are cut
  const std::string longest(255, 'n');
  const AtFile at(d.path("a/" + longest));
  CHECK(commit_text(at, "x"));
  CHECK(d.read("a/" + longest) == "x");
  CHECK(commit_text(at, "y"));
  CHECK(d.read("a/" + longest) == "y");
}
