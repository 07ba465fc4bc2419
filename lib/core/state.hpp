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
  };
  std::string file;  // "-" is stdin
  std::vector<Item> items;
  std::optional<std::string> default_value;
  enum Mode { values, exists, keys, shell } mode = values;
  bool as_json = false;
  bool pretty = false;
  char terminator = '\n';
};

struct QueryResult {
  std::string out;
  std::vector<std::string> missing;  // path texts not found
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
  std::optional<json::Layout> layout;  // --compact / --indent N
  unsigned mode = 0600;                // for a new file
  std::function<void(const std::string&)> on_warning;  // backups, redactions
};

struct UpdateResult {
  std::string text;  // the document as written (or as it is, when nothing changed)
  bool written = false;
};

// One atomic read-modify-write under an exclusive lock (see
// lock_for_replace): --expect and --require are checked, the edits applied
// in order, the result written faithfully, all or nothing.
UpdateResult update_state_file(const Update& u);

}  // namespace loopkit
