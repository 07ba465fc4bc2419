// libFuzzer target: the strict reader. The whole input is a document:
// json::parse (json_members' reader building Boost.JSON values), Boost's
// own parser (tests/unit/boost_parse.hpp: the same values and kinds, the
// same error words), scan::scan (the one validating pass of state-get and
// state-set) and validate_json (which words scan's errors) must agree on
// accept and reject, failing only with exit 3. Then in the
// repro format (a document, then lines; see split_input in fuzz_common.hpp)
// each line is a path, and state-get's lookup (one scan for all the paths,
// then textedit::lookup on it) must find what the reference lookup
// (tests/unit/reference.hpp) finds on the full parse: the same values,
// missing where it is missing, and the same errors.
#include "../unit/boost_parse.hpp"
#include "../unit/reference.hpp"
#include "core/json/jsontext.hpp"
#include "core/scan/path.hpp"
#include "core/scan/scan.hpp"
#include "core/edit/textedit.hpp"
#include "fuzz_common.hpp"

using namespace loopkit;

namespace {

// whether text is accepted; both readers must say the same
std::optional<json::value> read_both(std::string_view text) {
  std::optional<json::value> full, boost;
  std::string full_error, boost_error;
  bool valid = false;
  try {
    full = json::parse(text, "input");
  } catch (const Error& e) {
    fuzz::check_code(e, {Exit::data}, "json::parse");
    full_error = e.what();
  }
  try {
    boost = reference::boost_parse(text, "input");
  } catch (const Error& e) {
    fuzz::check_code(e, {Exit::data}, "Boost's parser");
    boost_error = e.what();
  }
  fuzz::check(full_error == boost_error, "json::parse and Boost's parser word the text otherwise");
  fuzz::check(!full || reference::same_value(*full, *boost), "json::parse and Boost's parser read other values");
  try {
    validate_json(text, "input");
    valid = true;
  } catch (const Error& e) {
    fuzz::check_code(e, {Exit::data}, "validate_json");
  }
  fuzz::check(full.has_value() == valid, valid ? "validate_json accepts what json::parse refuses"
                                               : "json::parse accepts what validate_json refuses");
  bool scanned = false;
  try {
    scan::scan(text, scan::Want{}, "input");
    scanned = true;
  } catch (const Error& e) {
    fuzz::check_code(e, {Exit::data}, "scan");
  }
  fuzz::check(full.has_value() == scanned,
              scanned ? "scan accepts what json::parse refuses" : "json::parse accepts what scan refuses");
  return full;
}

void compare_lookup(std::string_view text, const scan::Node& root, const json::value& doc, const Path& p) {
  std::vector<const json::value*> full;
  std::optional<Exit> full_error, lazy_error;
  try {
    full = reference::lookup(doc, p);
  } catch (const Error& e) {
    fuzz::check_code(e, {Exit::data}, "reference lookup");
    full_error = e.code();
  }
  std::vector<std::optional<std::pair<std::size_t, std::size_t>>> lazy;
  try {
    lazy = textedit::lookup(text, root, p);
  } catch (const Error& e) {
    fuzz::check_code(e, {Exit::data}, "textedit::lookup");
    lazy_error = e.code();
  }
  fuzz::check(full_error == lazy_error, p.text + ": the reference and textedit::lookup disagree on failing");
  if (full_error) return;
  fuzz::check(full.size() == lazy.size(), p.text + ": the reference found " + std::to_string(full.size()) +
                                              " values, textedit::lookup " + std::to_string(lazy.size()));
  for (std::size_t i = 0; i < full.size(); ++i) {
    fuzz::check(!full[i] == !lazy[i], p.text + ": missing for one lookup and not the other");
    if (!full[i]) continue;
    std::string_view span = text.substr(lazy[i]->first, lazy[i]->second - lazy[i]->first);
    json::value v = json::parse(span, "span");
    fuzz::check(v == *full[i], p.text + ": textedit::lookup found " + std::string(span) + ", the reference " +
                                   json::compact(*full[i]));
  }
}

// As state-get does: one scan wanting every path, then each path looked up.
void compare_lookups(std::string_view text, const json::value& doc, const std::vector<std::string_view>& lines) {
  std::vector<Path> paths;
  scan::Want want;
  for (auto line : lines) {
    try {
      paths.push_back(parse_path(line));
      want.add(paths.back());
    } catch (const Error&) {
    }
  }
  want.settle();
  scan::Node root = scan::scan(text, want, "input");
  for (const Path& p : paths) compare_lookup(text, root, doc, p);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  read_both(text);
  auto in = fuzz::split_input(text);
  if (in.lines.empty()) return 0;
  auto doc = read_both(in.document);
  if (!doc) return 0;
  compare_lookups(in.document, *doc, in.lines);
  return 0;
}
