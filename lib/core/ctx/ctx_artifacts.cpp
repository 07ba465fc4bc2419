// Artifacts: files stored in a save as text, and written back beneath a
// folder without ever leaving it (their names come from the save).

#include "core/ctx/ctx.hpp"
#include "core/ctx/ctx_doc.hpp"
#include "sys/fs/beneath.hpp"
#include "sys/base/error.hpp"
#include "sys/fs/file.hpp"
#include "sys/base/format.hpp"

namespace loopkit::ctx {

using namespace detail;

void add_artifact(json::value& doc, std::string_view name_path) {
  auto [name, path] = split_eq(name_path, "--artifact", "NAME=PATH");
  if (path.empty()) fail_usage(loopkit::format("--artifact: expected NAME=PATH: {}", quoted(name_path)));
  std::string content = read_file(std::string(path));
  if (!is_utf8(content)) fail_data(quoted(path) + ": not UTF-8 text (a save holds text artifacts only)");
  object_at(doc, {"context", "artifacts"})[name] = json::object{{"file", path}, {"content", std::move(content)}};
}

std::size_t restore_artifacts(const json::value& doc, const std::string& dir) {
  const json::value* arts = at(doc, {"context", "artifacts"});
  if (!arts || !arts->is_object()) return 0;
  for (const auto& kv : arts->get_object()) {
    const json::value* file = member(kv.value(), "file");
    const json::value* content = member(kv.value(), "content");
    if (!file || !file->is_string() || !content || !content->is_string())
      fail_data(loopkit::format("artifact {}: needs a string 'file' and 'content'", quoted(kv.key())));
    if (!is_plain_relative(str(*file)))
      fail_data(loopkit::format("refusing to restore artifact {}: {} is absolute or leaves the folder",
                                quoted(kv.key()), quoted(str(*file))));
  }
  std::size_t n = 0;
  for (const auto& kv : arts->get_object()) {
    write_file_beneath(dir, str(*member(kv.value(), "file")), str(*member(kv.value(), "content")));
    ++n;
  }
  return n;
}

}  // namespace loopkit::ctx
