// A file's bytes for one forward pass: a regular file is mapped read-only
// (nothing copied), and the pages the pass has left behind can be given
// back, so that the resident set stays bounded whatever the file's size.
// A file of a few MiB, where transparent huge pages are on, is read
// instead into memory in 2 MiB pages: one copy by the kernel costs less
// than a fault and a TLB miss for each of its 4 KiB pages (measured in
// docs/performance.md).
//
// A mapped file that shrinks while it is read (another program rewrites it
// in place: cp, an editor) would kill the process with SIGBUS at the first
// byte past its new end. A handler catches that fault for the mappings of
// live MappedFiles only: the pages from the fault on are replaced by zeros,
// so the pass goes on reading bytes no parser accepts, and the owner asks
// check_whole() before it trusts what it read (exit 4, never a signal).
#pragma once
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <sys/types.h>

namespace loopkit {

class MappedFile {
public:
  // The bytes of the open file fd: a file under 64 KiB is read into memory
  // by one pread; a bigger regular file is mapped (populated at once up to
  // 32 MiB, faulted in as read above) or read into huge pages (see above);
  // anything else (a pipe) is read whole into memory. exit 4 naming subject.
  MappedFile(int fd, std::string_view subject);
  MappedFile(MappedFile&& o) noexcept;
  MappedFile& operator=(MappedFile&&) = delete;
  MappedFile(const MappedFile&) = delete;
  ~MappedFile();

  std::string_view text() const {
    if (map_) return {static_cast<const char*>(map_), len_};
    return small_ ? std::string_view(small_.get(), len_) : std::string_view(owned_);
  }
  // text() is the regular file's bytes at their own offsets (mapped, or
  // read whole from offset 0), so that copy_range from fd can stand in for
  // any span of it.
  bool at_file_offsets() const { return map_ != nullptr; }
  int fd() const { return fd_; }
  // Drops the resident pages wholly before offset off (the data stays: a
  // later read faults them back in from the page cache), a few MiB at a
  // time. Only for a pass that moves forward; a no-op for a file small
  // enough to be kept whole, and for bytes read into memory.
  void release_before(std::size_t off);
  // Where bytes lie inside the mapping, or npos when they are not the map's.
  std::size_t offset_of(std::string_view bytes) const;
  // Whether the file shrank under the mapping so far (text() then holds
  // zeros past its new end), and the same as exit 4 naming the subject:
  // called after the last read of text() that a result depends on, and
  // first thing when the pass failed (a parse error on those zeros is not
  // the file's fault).
  bool cut_short() const;
  // Only the first used bytes count when given: a log whose append in
  // flight was taken back shrinks, but never below what a settled look saw.
  void check_whole(std::size_t used = std::string_view::npos) const;

private:
  int fd_;
  void* map_ = nullptr;  // the text: the mapping, or inside buffer_
  std::size_t len_ = 0;
  void* buffer_ = nullptr;  // an anonymous mapping the file was read into, or null
  std::size_t buffer_len_ = 0;
  std::size_t released_ = 0;
  int guard_ = -1;                 // the SIGBUS guard's slot for the mapping, or -1
  std::unique_ptr<char[]> small_;  // a small file's bytes, read at once
  std::string subject_;
  std::string owned_;
};

// Copies n bytes at offset at of in_fd to out_fd's current position: by
// copy_file_range, so the kernel moves them without a page entering this
// process, or, where it cannot (another file system, an old kernel),
// through a buffer. exit 4 naming subject.
void copy_range(int in_fd, off_t at, int out_fd, std::size_t n, std::string_view subject);

}  // namespace loopkit
