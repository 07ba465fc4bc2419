// MDAN-AUTO v1.0 context saves, as man/ctx-save.1.scd and
// man/ctx-resume.1.scd describe them. One header, five files by what they do:
// the save format (ctx_format.cpp), whose a save is (ctx_project.cpp), saving
// and the save folder (ctx_save.cpp), resuming (ctx_resume.cpp) and
// artifacts (ctx_artifacts.cpp).
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/json/json.hpp"
#include "sys/base/fd.hpp"
#include "sys/fs/file.hpp"

namespace loopkit::ctx {

inline constexpr std::array<std::string_view, 8> phase_names{"LOAD",      "DISCOVER", "PLAN",   "ARCHITECT",
                                                             "IMPLEMENT", "TEST",     "DEPLOY", "DOC"};
inline constexpr std::int64_t default_token_limit = 128000;
inline constexpr std::int64_t default_gzip_over = 1 << 20;

using Warn = std::function<void(const std::string&)>;

// ---- the save format (ctx_format.cpp)

// A complete v1.0 document: every field of the format, phases all pending,
// current LOAD, save_count 0 (stamp() makes it 1).
json::value fresh_save(const std::string& now_iso);

// An object with at least one MDAN field, else exit 3 (a save that is `{}`,
// `[]` or some other JSON is not resumed). Version "1" or "1.x" (or a number
// from 1 up to 2), missing allowed; anything else is exit 3.
void check_shape(const json::value& doc, std::string_view subject);
void check_version(const json::value& doc, std::string_view subject);

struct Filled {
  std::string path;  // "debates", "context.token_usage"
  bool missing;      // false: present with the wrong type
};
// Missing or mistyped fields get their defaults, derived from the rest of the
// document where it says more (phases.status from current and completed,
// token_usage.limit from configuration.token_limit, created_at from
// timestamp). A missing object is one entry, not one per member.
std::vector<Filled> fill_defaults(json::value& doc, const std::string& now_iso);
// Whether fill_defaults would find nothing to fill (checked without building
// the defaults).
bool has_every_field(const json::value& doc);

// phases.current = NAME (matched without regard to case against the keys of
// phases.status, else the default list; unknown: exit 2); earlier phases
// complete and listed in phases.completed, later ones pending.
void set_phase(json::value& doc, std::string_view name);
// "USED/LIMIT" or "USED" (limit kept): total, limit and percentage (4
// decimals); malformed: exit 2.
void set_tokens(json::value& doc, std::string_view used_limit);
// total/limit (percentage when they are not numbers); 0 when unknown
double token_ratio(const json::value& doc);
// configuration.save_threshold, the seed's trigger (0.8 when it is missing
// or not a number from 0 to 1)
double save_threshold(const json::value& doc);
// "ROLE=TEXT" appended to context.conversation_history; exit 2 if malformed.
void add_message(json::value& doc, std::string_view role_text, const std::string& now_iso);
// JSON lines of message objects (exit 3 otherwise); those without a
// timestamp get now.
void add_history(json::value& doc, std::string_view jsonl, std::string_view subject, const std::string& now_iso);
// timestamp and metadata.updated_at now, created_at if missing, save_count+1
void stamp_save(json::value& doc, const std::string& now_iso);
void count_resume(json::value& doc);
// The document as a save file holds it: indented JSON, gzipped when gz.
std::string encode(const json::value& doc, bool gz);
// The document in json::default_layout() (jq's 2 spaces), final newline
// included: what json::to_text writes, written directly (core/ctx/ctx_text.cpp).
std::string save_text(const json::value& doc);
// Every string and member name is UTF-8, else exit 3 naming where: a save
// that JSON readers (ctx-resume among them) cannot read back is never written.
void check_utf8(const json::value& doc);
using json::is_utf8;

// ---- projects (ctx_project.cpp)

// Whose a save is: its project.name when it has one, else project.folder,
// the folder ctx-save ran in (stamped on every save). A save that says
// neither (loopkit 0.2's, or made by hand) is no known project's: never
// pruned, never resumed without its name.
struct Project {
  std::string name;    // "": none
  std::string folder;  // "": none
  bool known() const { return !name.empty() || !folder.empty(); }
};
Project project_of(const json::value& doc);
// The project of the save at path; nullopt when it cannot be read as JSON.
std::optional<Project> project_of_file(const std::string& path);
// The working folder, absolute and without symlinks ("" when unknown).
std::string working_folder();
// project.folder = folder (nothing when project is there but no object)
void stamp_project(json::value& doc, const std::string& folder);
// --keep: other is saved's project when both have the same name, or neither
// has a name and both were made in the same folder.
bool same_project(const Project& saved, const Project& other);
// ctx-resume without SAVEFILE: a save made in folder, named or not.
bool made_in(const Project& p, const std::string& folder);

// ---- saving and the save folder (ctx_save.cpp)

// mdan-save-EPOCH[-N].json[.gz]; suffix 1 means none
struct SaveName {
  std::int64_t epoch = 0;
  std::int64_t suffix = 1;
  bool gz = false;
};
std::optional<SaveName> parse_save_name(std::string_view name);
std::string save_name(const SaveName& n);
// Our own regular files named like saves, newest first (by EPOCH, then N).
std::vector<std::string> saves_newest_first(const std::string& dir);
// The same order of every name like a save, the files not looked at (each
// one tried is asked is_own_regular_file): a missing dir has none.
std::vector<std::string> save_names_newest_first(const std::string& dir);
std::string join(const std::string& dir, const std::string& name);
std::string default_dir();  // $TMPDIR or /tmp

// A new save DIR/mdan-save-EPOCH.json[.gz] (-2, -3, ... when the name is
// taken in either form), linked into place whole and never through a
// symlink; returns its path.
std::string write_new_save(const std::string& dir, std::int64_t epoch, std::string_view bytes, bool gz);
// Atomic replacement of the save at (its name in the folder its lock
// resolved), mode 0600; a symlink at its name is refused (exit 4).
void replace_save(const AtFile& at, std::string_view bytes);
// A named save, flocked from reading to replacing; a symlink, FIFO, device
// or socket at its name is refused (exit 4): a save is never reached
// through a link.
LockedForReplace lock_save(const std::string& path);
// Deletes all but the newest keep saves of project in dir, never `spare`
// (the save just written) nor a save of another or no known project;
// returns the names removed. Failures are warnings.
std::vector<std::string> prune_saves(const std::string& dir, std::size_t keep, const std::string& spare,
                                     const Project& project, const Warn& warn);

// path, or path.gz when only that exists (a save that outgrew --gzip-over)
std::string existing_save_path(const std::string& path);

// A whole save, as ctx-save makes it: the document (fresh, or --from a
// save), the changes in command-line order, stamped, checked for UTF-8,
// redacted, then written: replacing savefile under its lock (as SAVEFILE.gz
// when it outgrows gzip_over), or as a new default-named save in dir; then
// the folder pruned to keep saves. Warnings (defaults filled, secrets
// redacted, artifacts that cannot be restored, pruning) go to warn.
struct SaveRequest {
  std::string savefile;  // "": a new mdan-save-EPOCH.json in dir; "-": standard output
  std::string dir;       // "": default_dir()
  std::string from;      // "": a fresh document
  // (what, value): phase, tokens, message, history, artifact, set, now or epoch
  std::vector<std::pair<std::string, std::string>> changes;
  std::optional<double> if_over;   // save only when token_ratio is at least this
  bool if_over_threshold = false;  // ... at least the save's own save_threshold
  // prune the project's saves in the folder to the newest keep, this one
  // included; 0: every one of them, this one too (the work is complete)
  std::optional<std::size_t> keep;
  long long gzip_over = default_gzip_over;
};
struct Saved {
  std::string path;      // "": not saved, token_ratio is below if_over
  bool removed = false;  // --keep 0: saved, then removed with the others
  double threshold = 0;  // the ratio it was compared with
  std::string text;      // saved to "-": the document, for standard output
  double token_ratio = 0;
};
Saved save(const SaveRequest& request, const Warn& warn);

// ---- resuming (ctx_resume.cpp)
struct Loaded {
  std::string path;
  json::value doc;
  bool gz = false;
  Fd lock;    // flock on the save while it is read, changed and written back
  AtFile at;  // its name in the folder the lock resolved: written back or removed there
};
// The save at path, locked, shape and version checked; nullopt when it does
// not exist. "-" reads stdin (nothing to lock).
std::optional<Loaded> load_save(const std::string& path);
// The newest save in dir made in folder (see made_in) that reads as one;
// newer corrupt, empty or unreadable ones are reported through warn and left
// in place, those of other projects passed over. A newer save of another
// major version is exit 3, not skipped: whose it is cannot be told. None:
// nullopt.
std::optional<Loaded> load_newest(const std::string& dir, const std::string& folder, const Warn& warn);

// A whole resume, as ctx-resume makes it: the save loaded (named, or the
// newest in dir), its missing fields filled (each a warning), the resume
// counted and written back under the save's lock unless peek or stdin, its
// artifacts restored beneath restore, the save removed when remove. nullopt:
// no such save, or none in dir.
struct ResumeRequest {
  std::string savefile;  // "": the newest save in dir made in folder; "-": standard input
  std::string dir;       // "": default_dir()
  std::string folder;    // "": working_folder()
  std::string restore;   // "": no artifacts restored
  bool peek = false;
  bool remove = false;
  // Given the save as resumed (counted), before it is written back or
  // removed: what the caller must have delivered first (ctx-resume's
  // output). When it throws, the save stays as it was.
  std::function<void(const Loaded&)> deliver;
};
std::optional<Loaded> resume(const ResumeRequest& request, const Warn& warn);

// ---- artifacts (ctx_artifacts.cpp)
// "NAME=PATH": context.artifacts.NAME = {file: PATH, content}; a file that is
// not UTF-8 text is exit 3.
void add_artifact(json::value& doc, std::string_view name_path);
// Each artifact's content to DIR/its file. Every file name is checked first
// (absolute, "..", not a string: exit 3, nothing written); symlinks inside
// DIR are never followed (exit 4). Returns how many were written.
std::size_t restore_artifacts(const json::value& doc, const std::string& dir);

}  // namespace loopkit::ctx
