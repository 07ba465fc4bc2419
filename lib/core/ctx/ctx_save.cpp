// Saving: save names, the save folder (new saves linked into place, pruning,
// listing), and the lock a save is held under from reading to replacing.
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <utility>

#include "core/ctx/ctx.hpp"
#include "core/edit/assign.hpp"
#include "core/ctx/ctx_doc.hpp"
#include "core/redact/redact.hpp"
#include "core/edit/textedit.hpp"
#include "sys/fs/beneath.hpp"
#include "sys/time/clock.hpp"
#include "sys/base/error.hpp"
#include "sys/fs/file.hpp"
#include "sys/fs/folder.hpp"
#include "sys/base/format.hpp"
#include "sys/gz/gz.hpp"
#include "sys/fs/link.hpp"
#include "sys/fs/own_file.hpp"

namespace loopkit::ctx {

using detail::ends_with;

namespace {
json::value start_document(const SaveRequest& r, const std::string& now, const Warn& warn) {
  if (r.from.empty()) return fresh_save(now);
  std::string from = existing_save_path(r.from);
  json::value doc = json::parse(read_file(from), from);
  check_shape(doc, from);
  check_version(doc, from);
  detail::fill_defaults_warning(doc, from, now, warn);
  return doc;
}

void apply_change(json::value& doc, const std::string& what, const std::string& value, const std::string& now,
                  const Warn& warn) {
  if (what == "phase") {
    set_phase(doc, value);
  } else if (what == "tokens") {
    set_tokens(doc, value);
  } else if (what == "message") {
    add_message(doc, value, now);
  } else if (what == "history") {
    add_history(doc, read_file(value), value, now);
  } else {
    add_artifact(doc, value);
    std::string path = value.substr(value.find('=') + 1);
    if (!is_plain_relative(path) && warn)
      warn(
          loopkit::format("artifact file {} is not a relative path inside the project: "
                          "ctx-resume --restore-artifacts will refuse it",
                          quoted(path)));
  }
}

// --set ASSIGNMENT, a run of them at once, through the span editor
// state-set uses: the same rules and messages, one engine. A number given as
// written (:=1e2) stays a literal until the save is written.
void apply_assignments(json::value& doc, const std::vector<Edit>& edits) {
  const std::string text = json::to_text(doc, json::compact_layout());
  textedit::StringSink edited;
  if (textedit::edit_text(text, edits, edited, "--set"))
    doc = json::parse(edited.text, "--set", {}, json::Literals::as_written);
}

// The changes in command-line order; consecutive --set assignments are
// edited in one pass.
void apply_changes(json::value& doc, const SaveRequest& r, const std::string& now, const Warn& warn) {
  std::vector<Edit> run;
  for (const auto& [what, value] : r.changes) {
    if (what == "set" || what == "now" || what == "epoch") {
      run.push_back(what == "set" ? parse_assignment(value) : now_edit(value, what == "epoch"));
      continue;
    }
    if (!run.empty()) apply_assignments(doc, std::exchange(run, {}));
    apply_change(doc, what, value, now, warn);
  }
  if (!run.empty()) apply_assignments(doc, run);
}

void redact_with_warning(json::value& doc, const Warn& warn) {
  std::vector<std::string> found;
  redact(doc, [&](const std::string& what) { found.push_back(what); });
  if (found.empty() || !warn) return;
  std::string list;
  for (const auto& f : found) list += (list.empty() ? "" : "; ") + f;
  warn(loopkit::format("redacted {} secret{}: {}", found.size(), found.size() == 1 ? "" : "s", list));
}
}  // namespace

std::optional<SaveName> parse_save_name(std::string_view n) {
  static constexpr std::string_view prefix = "mdan-save-";
  SaveName s;
  if (n.substr(0, prefix.size()) != prefix) return std::nullopt;
  n.remove_prefix(prefix.size());
  if (ends_with(n, ".json.gz")) {
    s.gz = true;
    n.remove_suffix(8);
  } else if (ends_with(n, ".json")) {
    n.remove_suffix(5);
  } else {
    return std::nullopt;
  }
  auto digits = [](std::string_view d, std::int64_t& out) {
    if (d.empty() || d.size() > 18) return false;
    out = 0;
    for (char c : d) {
      if (c < '0' || c > '9') return false;
      out = out * 10 + (c - '0');
    }
    return true;
  };
  auto dash = n.find('-');
  if (!digits(n.substr(0, dash), s.epoch)) return std::nullopt;
  if (dash != std::string_view::npos && (!digits(n.substr(dash + 1), s.suffix) || s.suffix < 2)) return std::nullopt;
  return s;
}

std::string save_name(const SaveName& n) {
  return loopkit::format("mdan-save-{}{}.json{}", n.epoch, n.suffix > 1 ? loopkit::format("-{}", n.suffix) : "",
                         n.gz ? ".gz" : "");
}

namespace {
std::vector<std::string> newest_first(std::vector<std::string> listed) {
  std::vector<std::pair<SaveName, std::string>> found;
  for (auto& name : listed)
    if (auto s = parse_save_name(name)) found.emplace_back(*s, std::move(name));
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
    if (a.first.epoch != b.first.epoch) return a.first.epoch > b.first.epoch;
    if (a.first.suffix != b.first.suffix) return a.first.suffix > b.first.suffix;
    return a.second > b.second;
  });
  std::vector<std::string> names;
  for (auto& f : found) names.push_back(std::move(f.second));
  return names;
}
}  // namespace

std::vector<std::string> saves_newest_first(const std::string& dir) { return newest_first(own_regular_files(dir)); }

std::vector<std::string> save_names_newest_first(const std::string& dir) {
  try {
    return newest_first(list_folder(dir, ""));
  } catch (const Error&) {
    if (names_nothing(dir)) return {};  // as own_regular_files: no folder, no saves
    throw;
  }
}

std::string join(const std::string& dir, const std::string& name) {
  if (dir.empty() || dir == ".") return name;
  return dir.back() == '/' ? dir + name : dir + "/" + name;
}

std::string default_dir() {
  const char* t = std::getenv("TMPDIR");
  std::string d = t && *t ? t : "/tmp";
  while (d.size() > 1 && d.back() == '/') d.pop_back();
  return d;
}

std::string write_new_save(const std::string& dir, std::int64_t epoch, std::string_view bytes, bool gz) {
  AtomicWrite how;
  how.mode = 0600;
  how.keep_existing_mode = false;
  how.follow_symlink = false;
  how.exclusive = true;
  for (std::int64_t suffix = 1; suffix <= 1000; ++suffix) {
    std::string path = join(dir, save_name({epoch, suffix, gz}));
    // The stem is taken in either form, so .json and .json.gz never share it.
    if (path_exists(join(dir, save_name({epoch, suffix, false}))) ||
        path_exists(join(dir, save_name({epoch, suffix, true}))))
      continue;
    try {
      write_file_atomic(path, bytes, how);
      return path;
    } catch (const Error&) {
      if (path_exists(path)) continue;  // another writer took the name first
      throw;
    }
  }
  fail_system(EEXIST, "create a save in", dir);
}

void replace_save(const AtFile& at, std::string_view bytes) {
  AtomicWrite how;
  how.mode = 0600;
  how.keep_existing_mode = false;
  how.follow_symlink = false;
  write_file_atomic(at, bytes, how);  // a link swapped in since lock_save is refused here too
}

LockedForReplace lock_save(const std::string& path) {
  struct stat st;
  open_regular_nofollow(path, st);  // refuses what is not a regular file; missing is fine
  return lock_for_replace(path);
}

std::vector<std::string> prune_saves(const std::string& dir, std::size_t keep, const std::string& spare,
                                     const Project& project, const Warn& warn) {
  std::vector<std::string> removed;
  std::size_t kept = spare.empty() ? 0 : 1;
  std::optional<Folder> folder;  // opened at the first removal: each is of a name in it
  for (const auto& name : saves_newest_first(dir)) {
    if (name == spare) continue;
    // another project's save, or one whose project cannot be told, is not ours to delete
    std::optional<Project> theirs = project_of_file(join(dir, name));
    if (!theirs || !same_project(project, *theirs)) continue;
    if (kept < keep) {
      ++kept;
      continue;
    }
    try {
      if (!folder) folder.emplace(dir);
      if (remove_file(*folder, name)) removed.push_back(name);
    } catch (const Error& e) {
      if (warn) warn(e.what());
    }
  }
  return removed;
}

std::string existing_save_path(const std::string& path) {
  if (path != "-" && !path_exists(path) && !ends_with(path, ".gz") && path_exists(path + ".gz")) return path + ".gz";
  return path;
}

Saved save(const SaveRequest& r, const Warn& warn) {
  const std::string now = iso8601_utc(now_epoch());
  // Held until the save is replaced, as ctx-resume holds it: a resume counted
  // meanwhile is not lost by a save made --from the same file.
  LockedForReplace held;
  const bool to_stdout = r.savefile == "-";  // a filter: no file, nothing to lock
  if (to_stdout && r.keep) fail_usage("--keep prunes saves in a folder: it cannot be used with '-'");
  if (!r.savefile.empty() && !to_stdout) {
    make_dirs(dir_name(r.savefile), 0700);
    held = lock_save(existing_save_path(r.savefile));
  }
  json::value doc = start_document(r, now, warn);
  apply_changes(doc, r, now, warn);
  stamp_save(doc, now);
  stamp_project(doc, working_folder());
  check_utf8(doc);
  redact_with_warning(doc, warn);
  Saved saved;
  saved.token_ratio = token_ratio(doc);
  saved.threshold = r.if_over_threshold ? save_threshold(doc) : r.if_over.value_or(0);
  if ((r.if_over || r.if_over_threshold) && saved.token_ratio < saved.threshold) return saved;

  std::string text = save_text(doc);
  if (to_stdout) {
    saved.path = r.savefile;
    saved.text = std::move(text);
    return saved;
  }
  bool gz = static_cast<long long>(text.size()) > r.gzip_over;
  if (r.savefile.empty()) {
    std::string dir = r.dir.empty() ? default_dir() : r.dir;
    make_dirs(dir, 0700);
    saved.path = write_new_save(dir, now_epoch(), gz ? gzip(text) : text, gz);
  } else {
    // A save that outgrows --gzip-over becomes SAVEFILE.gz (ctx-resume and
    // --from find it by the old name); a name ending in .gz is always gzip.
    gz = gz || ends_with(r.savefile, ".gz");
    saved.path = gz && !ends_with(r.savefile, ".gz") ? r.savefile + ".gz" : r.savefile;
    // beside the save locked (its .gz or the plain name), in its folder
    replace_save(held.at.sibling(base_name(saved.path), saved.path), gz ? gzip(text) : text);
    if (saved.path != r.savefile && path_exists(r.savefile)) remove_file(held.at.folder(), base_name(r.savefile));
  }
  if (r.keep) {
    // --keep 0: this save goes with the others (it is named to be pruned)
    std::string name = base_name(saved.path);
    std::string spare = *r.keep > 0 && parse_save_name(name) ? name : "";
    for (const auto& gone : prune_saves(dir_name(saved.path), *r.keep, spare, project_of(doc), warn))
      saved.removed = saved.removed || gone == name;
  }
  return saved;
}

}  // namespace loopkit::ctx
