// A scratch folder for a test: made fresh under /tmp (or $TMPDIR), removed
// with everything in it when the test's Scratch goes out of scope.
#pragma once
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <sys/stat.h>

namespace loopkit::testing {

class Scratch {
public:
  explicit Scratch(const std::string& what = "loopkit-test") {
    const char* tmp = std::getenv("TMPDIR");
    std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/" + what + ".XXXXXX";
    if (!mkdtemp(tmpl.data())) throw std::runtime_error("cannot make a scratch folder from " + tmpl);
    dir = tmpl;
  }
  ~Scratch() { (void)!std::system(("rm -rf '" + dir + "'").c_str()); }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;

  std::string path(const std::string& name) const { return dir + "/" + name; }
  void write(const std::string& name, const std::string& text) const { std::ofstream(path(name)) << text; }
  std::string read(const std::string& name) const {
    std::ifstream in(path(name));
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  bool is_link(const std::string& name) const {
    struct stat st;
    return lstat(path(name).c_str(), &st) == 0 && S_ISLNK(st.st_mode);
  }

  std::string dir;
};

}  // namespace loopkit::testing
