// JSON state files: reading values at paths (state-get) and atomic,
// serialised, faithful read-modify-write (state-set).
#pragma once
#include <functional>
#include <sys/types.h>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/edit/assign.hpp"
#include "core/json/json.hpp"
#include "core/scan/path.hpp"
#include "core/state/query.hpp"
#include "sys/base/error.hpp"

namespace loopkit {

struct Query {
  struct Item {
    std::string name;  // for --shell
    Path path;
    std::optional<std::string> default_value;  // PATH//VALUE: beats --default
    // a jq expression (query.hpp) rather than a plain path: evaluated on the
    // whole document (path is then "." and its text the expression's)
    std::optional<query::Expression> expr = std::nullopt;
    bool single = false;  // PATH//VALUE: --shell prints one value as NAME=VALUE
  };
  std::string file;  // "-" is stdin; etcd://HOST:PORT/KEY, etcds://... and etcd:///KEY are etcd keys
  std::vector<Item> items;
  std::optional<std::string> default_value;
  // exists: every PATH is there (null too); truthy: jq -e's test, every
  // PATH's last value is neither null nor false (nothing printed for either)
  enum Mode { values, exists, keys, shell, truthy } mode = values;
  bool must_exist = false;  // a missing file is the answer "no", not {}
  bool as_json = false;
  bool pretty = false;
  char terminator = '\n';
  double timeout = 5;  // etcd URLs: seconds for each call to etcd
};

struct QueryResult {
  std::string out;
  std::vector<std::string> missing;  // path texts not found
  std::string no;                    // with must_exist: why the file is not there (nothing else is answered)
};

QueryResult query_state(const Query& q);

struct Update {
  std::string file;         // "-": a filter on stdin; an etcd URL: an etcd key (contract section 9)
  std::vector<Edit> edits;  // in command-line order
  // --stream: where each line's edits end in edits. With it, a line whose
  // edits cannot be made (exit 2 or 3) leaves out itself and the lines
  // after it, the lines before it are applied and written, and its error is
  // returned in UpdateResult::failed; without it, all or nothing.
  std::vector<std::size_t> line_ends;
  std::vector<std::pair<Path, json::value>> expects;
  std::vector<std::pair<Path, json::value>> requires_;
  // when FILE is missing or reset; default {}. The document started from
  // holds --require's values too: those init lacks are set (one it holds
  // otherwise is exit 2), so that a new file meets its own --require.
  std::optional<json::value> init;
  bool no_create = false;
  bool backup_invalid = false;  // --on-invalid backup
  bool redact = false;
  bool sync = true;
  std::optional<json::Layout> layout;                  // --compact / --indent N
  bool want_text = false;                              // fill UpdateResult::text (--print)
  unsigned mode = 0600;                                // for a new file
  std::function<void(const std::string&)> on_warning;  // backups, redactions
  double timeout = 5;                                  // etcd URLs: seconds for each call to etcd
  // --fence LOCK: written only while LOCK is held by fence_owner (a pid),
  // checked with the write; else the answer "no", "'LOCK': lock lost"
  std::string fence;
  pid_t fence_owner = 0;
};

struct UpdateResult {
  std::string text;  // with want_text: the document as written (or as it is, when nothing changed)
  bool written = false;
  // The answer "no" (exit 1), nothing written: why FILE is missing under
  // --no-create, or which --expect failed. Returned, not thrown: a
  // compare-and-set loop meets it often, and a static binary's first throw
  // is costly (cli::no).
  std::string no;
  // with Update::line_ends: the error of the first line that could not be
  // applied (the lines before it are in text, and written)
  std::optional<Error> failed;
};

// One atomic read-modify-write of the document u.file names, written once
// over the document store (store.hpp): read (a file under its exclusive
// flock, mapped), --expect and --require checked, the edits applied in
// order, and the result committed if the document is unchanged (etcd: its
// revision; a file: its flock says so) and the fence holds; done again from
// a fresh read when another writer came first, so no update is lost. A file
// is written as the old text's untouched slices plus the new values,
// straight to the temporary file; all or nothing. "-" is a filter: the
// result is r.text.
UpdateResult update_state_file(const Update& u);

// etcd://, etcds://: the key's value (nullopt: no such key) for state-get.
// Reached through state_on_etcd, which only loopkit-etcd's main sets (with
// document_store_on_etcd, store.hpp, for state-set): the tools on PATH
// leave the client out (cli::need_etcd), so that nothing here links the
// client in unless that main names etcd_state.
struct StateOnEtcd {
  std::optional<std::string> (*read)(const std::string& url, double timeout_seconds);
};
extern const StateOnEtcd* state_on_etcd;
extern const StateOnEtcd etcd_state;  // state_etcd.cpp

}  // namespace loopkit
