// JSON state files: reading values at paths (state-get) and atomic,
// serialised, faithful read-modify-write (state-set).
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/assign.hpp"
#include "core/json.hpp"
#include "core/path.hpp"

namespace loopkit {

struct Query {
  struct Item {
    std::string name;  // for --shell
    Path path;
    std::optional<std::string> default_value;  // PATH//VALUE: beats --default
  };
  std::string file;  // "-" is stdin
  std::vector<Item> items;
  std::optional<std::string> default_value;
  enum Mode { values, exists, keys, shell } mode = values;
  bool must_exist = false;  // a missing file is the answer "no", not {}
  bool as_json = false;
  bool pretty = false;
  char terminator = '\n';
};

struct QueryResult {
  std::string out;
  std::vector<std::string> missing;  // path texts not found
  std::string no;                    // with must_exist: why the file is not there (nothing else is answered)
};

QueryResult query_state(const Query& q);

struct Update {
  std::string file;
  std::vector<Edit> edits;  // in command-line order
  std::vector<std::pair<Path, json::value>> expects;
  std::vector<std::pair<Path, json::value>> requires_;
  std::optional<json::value> init;  // when FILE is missing or reset; default {}
  bool no_create = false;
  bool backup_invalid = false;  // --on-invalid backup
  bool redact = false;
  bool sync = true;
  std::optional<json::Layout> layout;                  // --compact / --indent N
  bool want_text = false;                              // fill UpdateResult::text (--print)
  unsigned mode = 0600;                                // for a new file
  std::function<void(const std::string&)> on_warning;  // backups, redactions
};

struct UpdateResult {
  std::string text;  // with want_text: the document as written (or as it is, when nothing changed)
  bool written = false;
  // The answer "no" (exit 1), nothing written: why FILE is missing under
  // --no-create, or which --expect failed. Returned, not thrown: a
  // compare-and-set loop meets it often, and a static binary's first throw
  // is costly (cli::no).
  std::string no;
};

// One atomic read-modify-write under an exclusive lock (see
// lock_for_replace): the file is read once (mapped), --expect and
// --require are checked, the edits applied in order, and the new file is
// written as the old text's untouched slices plus the new values, straight
// to the temporary file; all or nothing.
UpdateResult update_state_file(const Update& u);

}  // namespace loopkit
