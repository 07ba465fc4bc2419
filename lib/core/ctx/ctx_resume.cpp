// Resuming: a named save, or the newest one in a folder that reads as a
// save, loaded under the lock that ctx-resume holds until it writes back.

#include "core/ctx/ctx.hpp"
#include "core/ctx/ctx_doc.hpp"
#include "sys/base/error.hpp"
#include "sys/time/clock.hpp"
#include "sys/base/fd.hpp"
#include "sys/fs/folder.hpp"
#include "sys/base/format.hpp"
#include "sys/fs/link.hpp"
#include "sys/fs/own_file.hpp"

namespace loopkit::ctx {

using detail::decode;

std::optional<Loaded> load_save(const std::string& given) {
  Loaded l;
  l.path = existing_save_path(given);
  if (l.path == "-") {
    l.doc = decode(read_all(0, "standard input"), l.path, l.gz);
  } else {
    if (!path_exists(l.path)) return std::nullopt;
    LockedForReplace held = lock_save(l.path);
    if (!held.exists) return std::nullopt;
    l.doc = decode(held.contents.view(), l.path, l.gz);  // parsed while the lock holds the mapping
    l.lock = std::move(held.fd);
    l.at = std::move(held.at);
  }
  check_shape(l.doc, l.path);
  check_version(l.doc, l.path);
  return l;
}

std::optional<Loaded> load_newest(const std::string& dir, const std::string& folder, const Warn& warn) {
  for (const auto& name : save_names_newest_first(dir)) {
    Loaded l;
    l.path = join(dir, name);
    // Links, other users' files (a save slipped into a shared /tmp) and
    // anything else but our own regular files are passed over in silence.
    // The look refuses a link as lock_save would, so the lock is taken
    // directly (lock_save's open would look again).
    if (!is_own_regular_file(l.path)) continue;
    try {
      LockedForReplace held = lock_for_replace(l.path);
      if (!held.exists) continue;  // removed since we listed the folder
      l.lock = std::move(held.fd);
      l.at = std::move(held.at);
      l.doc = decode(held.contents.view(), l.path, l.gz);
      check_shape(l.doc, l.path);
    } catch (const Error& e) {
      // tmux-resurrect's lesson: never promote a broken newer save, never lose it
      if (warn) warn(loopkit::format("skipping {}", e.what()));
      continue;
    }
    check_version(l.doc, l.path);
    const Project p = project_of(l.doc);
    if (made_in(p, folder)) return l;
    if (!p.known() && warn)
      warn(loopkit::format("skipping {}: no project.name or project.folder says whose it is (resume it by its name)",
                           quoted(l.path)));
  }
  return std::nullopt;
}

std::optional<Loaded> resume(const ResumeRequest& r, const Warn& warn) {
  std::optional<Loaded> save = r.savefile.empty() ? load_newest(r.dir.empty() ? default_dir() : r.dir,
                                                                r.folder.empty() ? working_folder() : r.folder, warn)
                                                  : load_save(r.savefile);
  if (!save) return save;
  detail::fill_defaults_warning(save->doc, save->path, iso8601_utc(now_epoch()), warn);
  const bool writes = !r.peek && save->path != "-";
  if (writes) count_resume(save->doc);
  if (!r.restore.empty()) restore_artifacts(save->doc, r.restore);
  if (r.deliver) r.deliver(*save);
  if (writes && !r.remove) replace_save(save->at, encode(save->doc, save->gz));
  if (r.remove) {
    remove_file(save->at.folder(), save->at.name());
    save->at.folder().sync_after_commit();  // removed: a failed sync only warns
  }
  return save;
}

}  // namespace loopkit::ctx
