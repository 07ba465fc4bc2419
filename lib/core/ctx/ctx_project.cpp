// Whose a save is: two projects may share one save folder ($TMPDIR), so
// --keep prunes and ctx-resume picks among the saves of one project only.
#include "core/ctx/ctx.hpp"
#include "core/ctx/ctx_doc.hpp"
#include "sys/base/error.hpp"
#include "sys/fs/file.hpp"
#include "sys/fs/folder.hpp"

namespace loopkit::ctx {

using detail::at;
using detail::str;

Project project_of(const json::value& doc) {
  Project p;
  if (const json::value* n = at(doc, {"project", "name"}); n && n->is_string()) p.name = str(*n);
  if (const json::value* f = at(doc, {"project", "folder"}); f && f->is_string()) p.folder = str(*f);
  return p;
}

// getcwd's answer: absolute, without symlinks, one text per folder
std::string working_folder() { return current_folder(); }

void stamp_project(json::value& doc, const std::string& folder) {
  if (folder.empty() || !doc.is_object()) return;
  json::value& project = doc.get_object()["project"];
  if (project.is_null()) project = json::object();
  // a project that is not an object is the caller's own: left as it is
  if (project.is_object()) project.get_object()["folder"] = folder;
}

bool same_project(const Project& saved, const Project& other) {
  if (!saved.name.empty()) return other.name == saved.name;
  return other.name.empty() && !saved.folder.empty() && other.folder == saved.folder;
}

bool made_in(const Project& p, const std::string& folder) { return !folder.empty() && p.folder == folder; }

std::optional<Project> project_of_file(const std::string& path) {
  try {
    auto snap = read_file_snapshot(path);
    if (!snap) return std::nullopt;
    bool gz = false;
    return project_of(detail::decode(snap->data, path, gz));
  } catch (const Error&) {
    return std::nullopt;  // unreadable or not JSON: whose it is cannot be told
  }
}

}  // namespace loopkit::ctx
