// lib/sys/fs/tempfile: create, commit or roll back; nothing left behind on
// any path, unnamed (O_TMPFILE) or named (where the file system has none).
#include <catch2/catch.hpp>
#include <algorithm>
#include <dirent.h>
#include <fcntl.h>
#include <string>
#include <sys/file.h>
#include <unistd.h>
#include <vector>

#include "sys/base/error.hpp"
#include "sys/base/fd.hpp"
#include "sys/fs/folder.hpp"
#include "sys/fs/tempfile.hpp"
#include "scratch.hpp"

using namespace loopkit;

namespace {
struct Scratch : testing::Scratch {
  Scratch() : testing::Scratch("sys-tempfile-test") {}
};

// the names in dir, dot files too, sorted
std::string listing(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = opendir(dir.c_str());
  while (struct dirent* e = readdir(d))
    if (std::string(e->d_name) != "." && std::string(e->d_name) != "..") names.emplace_back(e->d_name);
  closedir(d);
  std::sort(names.begin(), names.end());
  std::string s;
  for (auto& n : names) s += n + " ";
  return s;
}

// each case runs on both paths
struct Named {
  explicit Named(bool named) { set_unnamed_temp_files(!named); }
  ~Named() { set_unnamed_temp_files(true); }
};

void write(TempFile& t, const std::string& text) { write_all(t.fd(), text, t.subject()); }
}  // namespace

TEST_CASE("TempFile: link_new creates, or changes nothing when the name exists", "[tempfile]") {
  for (bool named : {false, true}) {
    Named n(named);
    Scratch d;
    Folder f(d.dir);
    {
      TempFile t(f, "a.lock", true);
      write(t, "one");
      t.finish(0644, nullptr, true);
      CHECK(t.link_new());
    }
    {
      TempFile t(f, "a.lock", true);
      write(t, "two");
      t.finish(0644, nullptr, false);
      CHECK_FALSE(t.link_new());
    }
    CHECK(d.read("a.lock") == "one");
    CHECK(listing(d.dir) == "a.lock ");
  }
}

TEST_CASE("TempFile: rename_over replaces; a rollback leaves nothing", "[tempfile]") {
  for (bool named : {false, true}) {
    Named n(named);
    Scratch d;
    d.write("s.json", "old");
    Folder f(d.dir);
    {
      TempFile t(f, "s.json", false);
      write(t, "never");
      if (named) CHECK(listing(d.dir) == ".s.json.tmp s.json ");
      else CHECK(listing(d.dir) == "s.json ");
    }  // dropped without a commit
    CHECK(listing(d.dir) == "s.json ");
    TempFile t(f, "s.json", false);
    write(t, "new");
    t.finish(0600, nullptr, true);
    CHECK(t.rename_over(true));
    CHECK(d.read("s.json") == "new");
    CHECK(listing(d.dir) == "s.json ");
  }
}

TEST_CASE("TempFile: only_if_present never brings back a file deleted meanwhile", "[tempfile]") {
  for (bool named : {false, true}) {
    Named n(named);
    Scratch d;
    Folder f(d.dir);
    TempFile t(f, "gone", false);
    write(t, "x");
    CHECK_FALSE(t.rename_over(true));
    CHECK(listing(d.dir) == "");
  }
}

TEST_CASE("TempFile: our stray at .TARGET.tmp is replaced; another's name is left, a random one used", "[tempfile]") {
  for (bool named : {false, true}) {
    Named n(named);
    Scratch d;
    d.write(".s.json.tmp", "stray of a killed writer");
    Folder f(d.dir);
    TempFile t(f, "s.json", false);
    write(t, "1");
    CHECK(t.rename_over(false));
    CHECK(listing(d.dir) == "s.json ");
    // a link there (as another user's file would be) is not ours to remove
    REQUIRE(symlink("elsewhere", d.path(".s.json.tmp").c_str()) == 0);
    TempFile u(f, "s.json", false);
    write(u, "2");
    CHECK(u.rename_over(false));
    CHECK(d.read("s.json") == "2");
    CHECK(d.is_link(".s.json.tmp"));
    CHECK(listing(d.dir) == ".s.json.tmp s.json ");
  }
}

TEST_CASE("remove_stray_temp_files: dead writers' random names go, a live writer's stays", "[tempfile]") {
  Scratch d;
  d.write(".a.lock.0123456789ab.tmp", "dead");
  d.write(".a.lock.zzzzzzzzzzzz.tmp", "live");
  d.write(".a.lock.tmp.keep", "not ours to judge");
  d.write(".b.lock.0123456789ab.tmp", "another target's");
  Fd live = open_fd(d.path(".a.lock.zzzzzzzzzzzz.tmp"), O_RDWR);
  REQUIRE(flock(live.get(), LOCK_EX) == 0);
  Folder f(d.dir);
  remove_stray_temp_files(f, "a.lock");
  CHECK(listing(d.dir) == ".a.lock.tmp.keep .a.lock.zzzzzzzzzzzz.tmp .b.lock.0123456789ab.tmp ");
}

TEST_CASE("name_stem: a name too long for its side files is cut and hashed to fit", "[tempfile]") {
  CHECK(name_stem("s.json", 18) == "s.json");
  const std::string fits(237, 'a');
  CHECK(name_stem(fits, 18) == fits);
  const std::string long_a(255, 'a'), long_b = std::string(254, 'a') + "b";
  const std::string stem = name_stem(long_a, 18);
  CHECK(stem.size() + 18 <= longest_name);
  CHECK(stem.starts_with(std::string(200, 'a')));
  CHECK(stem == name_stem(long_a, 18));  // the same for every tool that looks for it
  CHECK(stem != name_stem(long_b, 18));  // names that differ past the cut
  // never inside a UTF-8 character: "\xc3\xa9" is cut whole or kept whole
  std::string accents;
  while (accents.size() < 254) accents += "\xc3\xa9";
  const std::string cut = name_stem(accents, 18);
  const std::string kept = cut.substr(0, cut.find('~'));
  CHECK(kept.size() % 2 == 0);
}

TEST_CASE("TempFile: a target of 251 to 255 bytes is replaced and linked, nothing left", "[tempfile]") {
  for (bool named : {false, true}) {
    Named n(named);
    for (std::size_t len : {251, 255}) {
      Scratch d;
      const std::string name(len, 'x');
      Folder f(d.dir);
      {
        TempFile t(f, name, true);
        write(t, "one");
        t.finish(0600, nullptr, true);
        CHECK(t.link_new());
      }
      TempFile t(f, name, false);
      write(t, "two");
      t.finish(0600, nullptr, true);
      CHECK(t.rename_over(true));
      CHECK(d.read(name) == "two");
      CHECK(listing(d.dir) == name + " ");
    }
  }
}

TEST_CASE("TempFile: stage, then settle or unstage: both or neither of two files", "[tempfile]") {
  for (bool named : {false, true}) {
    Named n(named);
    Scratch d;
    d.write("f.backup", "older");
    Folder f(d.dir);
    {
      TempFile t(f, "f.backup", false);
      write(t, "newer");
      t.finish(0600, nullptr, false);
      t.stage();
      CHECK(d.read("f.backup") == "newer");
      t.unstage();  // the other file's commit failed
    }
    CHECK(d.read("f.backup") == "older");
    CHECK(listing(d.dir) == "f.backup ");
    {
      TempFile t(f, "f.backup", false);
      write(t, "newer");
      t.finish(0600, nullptr, false);
      t.stage();
    }  // dropped staged: as unstaged
    CHECK(d.read("f.backup") == "older");
    {
      TempFile t(f, "new.backup", false);
      write(t, "first");
      t.finish(0600, nullptr, false);
      t.stage();
      t.unstage();  // one that did not exist is removed again
    }
    CHECK(listing(d.dir) == "f.backup ");
    TempFile t(f, "f.backup", false);
    write(t, "newer");
    t.finish(0600, nullptr, false);
    t.stage();
    t.settle();
    CHECK(d.read("f.backup") == "newer");
    CHECK(listing(d.dir) == "f.backup ");
  }
}

TEST_CASE("Folder::sync_after_commit warns instead of failing", "[tempfile]") {
  Scratch d;
  Folder f(d.dir);
  f.sync();
  f.sync_after_commit();
  CHECK(f.shown("x") == d.dir + "/x");
  CHECK(Folder(Fd(), ".").shown("x") == "x");
}
