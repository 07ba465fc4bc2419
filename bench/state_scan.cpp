// state-scan: a bench-only driver for core/scan and core/textedit, doing
// what state-get and state-set will do once they use them (see
// docs/performance.md). Not installed; built by bench/CMakeLists.txt.
//   state-scan get FILE PATH...            values as state-get prints them
//   state-scan set [--no-sync] FILE ASSIGNMENT|--delete=PATH...
// set: lock, map, scan once, apply the edits in order, stream the new text
// to FILE's temporary file, fsync (unless --no-sync), rename.
#include <cerrno>
#include <cstdio>
#include <fcntl.h>
#include <string>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

#include "core/assign.hpp"
#include "core/json.hpp"
#include "core/scan.hpp"
#include "core/textedit.hpp"
#include "sys/error.hpp"
#include "sys/fd.hpp"
#include "sys/file.hpp"

using namespace loopkit;

namespace {

// The file mapped (without MAP_POPULATE when big); the pages the scan has passed are
// dropped (they come back from the page cache if a kept span is read), so
// the resident set stays bounded whatever the file's size.
class Mapped {
public:
  explicit Mapped(const std::string& path, bool lock) {
    fd_ = open_fd(path, O_RDONLY);
    if (!fd_) {
      if (errno == ENOENT) return;
      fail_system(errno, "open", path);
    }
    if (lock && flock(fd_.get(), LOCK_EX) != 0) fail_system(errno, "lock", path);
    struct stat st;
    if (fstat(fd_.get(), &st) != 0) fail_system(errno, "stat", path);
    mode_ = st.st_mode & 07777;
    n_ = static_cast<std::size_t>(st.st_size);
    if (n_ == 0) return;
    // a file that fits the budget is mapped whole at once (fewer faults)
    int populate = n_ <= (std::size_t(32) << 20) ? MAP_POPULATE : 0;
    p_ = mmap(nullptr, n_, PROT_READ, MAP_PRIVATE | populate, fd_.get(), 0);
    if (p_ == MAP_FAILED) fail_system(errno, "map", path);
    madvise(p_, n_, MADV_SEQUENTIAL);
  }
  ~Mapped() {
    if (p_ && p_ != MAP_FAILED) munmap(p_, n_);
  }
  bool exists() const { return static_cast<bool>(fd_); }
  std::string_view text() const { return p_ ? std::string_view(static_cast<const char*>(p_), n_) : ""; }
  mode_t mode() const { return mode_; }
  int fd() const { return fd_.get(); }
  void drop_before(std::size_t off) {
    off &= ~static_cast<std::size_t>(4095);
    if (off <= dropped_) return;
    madvise(static_cast<char*>(p_) + dropped_, off - dropped_, MADV_DONTNEED);
    dropped_ = off;
  }
  // the offset of bytes inside the map, or npos
  std::size_t offset_of(std::string_view b) const {
    const char* s = static_cast<const char*>(p_);
    if (!p_ || b.data() < s || b.data() + b.size() > s + n_) return std::string_view::npos;
    return static_cast<std::size_t>(b.data() - s);
  }

private:
  Fd fd_;
  void* p_ = nullptr;
  std::size_t n_ = 0;
  std::size_t dropped_ = 0;
  mode_t mode_ = 0600;
};

// Writes to the temporary file: big slices of the old file are copied by
// the kernel (copy_file_range: no page of them enters this process), small
// pieces go through the buffer; the map's pages behind them are dropped.
class SliceSink : public textedit::Sink {
public:
  SliceSink(textedit::FdSink& out, int out_fd, Mapped& map, std::string subject)
      : out_(out), out_fd_(out_fd), map_(map), subject_(std::move(subject)) {}
  void write(std::string_view b) override {
    std::size_t at = map_.offset_of(b);
    if (at == std::string_view::npos || b.size() < (std::size_t(1) << 20)) {
      out_.write(b);
      if (at != std::string_view::npos) map_.drop_before(at + b.size());
      return;
    }
    out_.flush();
    loff_t from = static_cast<loff_t>(at);
    std::size_t left = b.size();
    while (left > 0) {
      ssize_t n = copy_file_range(map_.fd(), &from, out_fd_, nullptr, left, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EXDEV || errno == ENOSYS || errno == EINVAL || errno == EOPNOTSUPP)) {
        out_.write(b.substr(b.size() - left));  // no kernel copy here: through memory
        out_.flush();
        break;
      }
      if (n < 0) fail_system(errno, "write", subject_);
      if (n == 0) fail_system(EIO, "write", subject_);
      left -= static_cast<std::size_t>(n);
    }
    map_.drop_before(at + b.size());
  }

private:
  textedit::FdSink& out_;
  int out_fd_;
  Mapped& map_;
  std::string subject_;
};

int get(const std::string& file, const std::vector<std::string>& args) {
  Mapped map(file, false);
  std::string_view text = map.exists() ? map.text() : std::string_view("{}");
  std::vector<Path> paths;
  scan::Want want;
  for (const auto& a : args) want.add(paths.emplace_back(parse_path(a)));
  want.settle();
  scan::Node root = scan::scan(text, want, file, [&](std::size_t done) { map.drop_before(done); });
  std::string out;
  int status = 0;
  for (const Path& p : paths) {
    for (const auto& s : textedit::lookup(text, root, p)) {
      if (!s) {
        std::fprintf(stderr, "state-scan: %s: not found\n", p.text.c_str());
        status = 1;
        continue;
      }
      // Boost.JSON only for the values printed
      out += json::raw_text(json::parse(text.substr(s->first, s->second - s->first), file));
      out += '\n';
    }
  }
  write_all(1, out, "standard output");
  return status;
}

int set(const std::string& file, const std::vector<std::string>& args, bool sync) {
  std::vector<Edit> edits;
  for (const auto& a : args) edits.push_back(a.rfind("--delete=", 0) == 0 ? delete_edit(a.substr(9)) : parse_assignment(a));
  Mapped map(file, true);
  if (!map.exists()) fail_no("'" + file + "': no such file");
  std::string_view text = map.text();
  for (bool every : {false, true}) {
    scan::Node root = scan::scan(text, textedit::wants_for(edits, {}, every), file,
                                 [&](std::size_t done) { map.drop_before(done); });
    textedit::Plan plan(text, root, json::detect_layout(text), file);
    try {
      for (const Edit& e : edits) plan.apply(e);
    } catch (const textedit::Plan::NeedsEveryItem&) {
      continue;
    }
    if (!plan.changed()) return 0;
    std::string target = resolve_symlinks(file);
    std::string tmp = dir_name(target) + "/." + base_name(target) + ".tmp";
    unlink(tmp.c_str());
    Fd fd = open_fd(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
    if (!fd) fail_system(errno, "create", tmp);
    try {
      textedit::FdSink sink(fd.get(), tmp);
      SliceSink slices(sink, fd.get(), map, tmp);
      plan.write(slices);
      sink.flush();
      if (fchmod(fd.get(), map.mode()) != 0) fail_system(errno, "set mode of", tmp);
      if (sync && fsync(fd.get()) != 0) fail_system(errno, "sync", tmp);
      fd.close(tmp);
      if (rename(tmp.c_str(), target.c_str()) != 0) fail_system(errno, "rename", tmp);
    } catch (...) {
      unlink(tmp.c_str());
      throw;
    }
    if (sync) fsync_dir(dir_name(target));
    return 0;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    std::vector<std::string> a(argv + 1, argv + argc);
    bool sync = true;
    if (a.size() >= 2 && a[0] == "set" && a[1] == "--no-sync") {
      sync = false;
      a.erase(a.begin() + 1);
    }
    if (a.size() < 3 || (a[0] != "get" && a[0] != "set")) {
      std::fprintf(stderr, "usage: state-scan get FILE PATH... | set [--no-sync] FILE ASSIGNMENT...\n");
      return 2;
    }
    std::vector<std::string> rest(a.begin() + 2, a.end());
    return a[0] == "get" ? get(a[1], rest) : set(a[1], rest, sync);
  } catch (const Error& e) {
    std::fprintf(stderr, "state-scan: %s\n", e.what());
    return static_cast<int>(e.code());
  }
}
