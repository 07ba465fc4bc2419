// Files whose name says gzip (".gz"), changed as the text they hold: what
// the writers of logs do where the readers decompress by name.
#pragma once
#include <functional>
#include <string>
#include <string_view>
#include <sys/types.h>

namespace loopkit {

// Whether path's name ends in ".gz": its readers gunzip it, so its writers
// write gzip (or refuse).
bool gzip_by_name(std::string_view path);

// The text of the gzip file at path ("" when it does not exist) handed to
// change, and change's answer written back as one gzip member, replacing
// the file by rename (write_file_atomic) under the exclusive flock of
// lock_for_replace: concurrent writers of it serialise, readers see the old
// or the new file whole, and a writer killed at any point leaves no torn
// member behind. Its bytes are read as the readers read them (gunzip,
// bounded by gunzip_limit): bytes that are not gzip are exit 3, nothing
// written. A new file gets mode less the umask, as an append creates one;
// an existing one keeps its mode. A symlink at path is followed.
void rewrite_gzip_locked(const std::string& path, const std::function<std::string(std::string_view text)>& change,
                         mode_t mode, bool sync);

}  // namespace loopkit
