// libFuzzer target: the strict reader. The whole input is a document:
// json::parse (a full Boost.JSON parse) and validate_json (the allocation-
// free check state-get and state-set run first) must agree on accept and
// reject, failing only with exit 3. Then in the repro format (a document,
// then lines; see split_input in fuzz_common.hpp) each line is a path, and
// state-get's lazy lookup (lookup_spans on the text) must find what
// lookup() finds on the full parse: the same values, missing where it is
// missing, and the same errors.
#include "core/jsontext.hpp"
#include "core/path.hpp"
#include "fuzz_common.hpp"

using namespace loopkit;

namespace {

// whether text is accepted; both readers must say the same
std::optional<json::value> read_both(std::string_view text) {
  std::optional<json::value> full;
  bool valid = false;
  try {
    full = json::parse(text, "input");
  } catch (const Error& e) {
    fuzz::check_code(e, {Exit::data}, "json::parse");
  }
  try {
    validate_json(text, "input");
    valid = true;
  } catch (const Error& e) {
    fuzz::check_code(e, {Exit::data}, "validate_json");
  }
  fuzz::check(full.has_value() == valid, valid ? "validate_json accepts what json::parse refuses"
                                               : "json::parse accepts what validate_json refuses");

  return full;
}

void compare_lookups(std::string_view text, const json::value& doc, std::string_view path_text) {
  Path p;
  try {
    p = parse_path(path_text);
  } catch (const Error&) {
    return;
  }
  std::vector<const json::value*> full;
  std::optional<Exit> full_error, lazy_error;
  try {
    full = lookup(doc, p);
  } catch (const Error& e) {
    fuzz::check_code(e, {Exit::data}, "lookup");
    full_error = e.code();
  }
  JsonText jt(text);
  std::vector<std::optional<Span>> lazy;
  try {
    lazy = lookup_spans(jt, p);
  } catch (const Error& e) {
    fuzz::check_code(e, {Exit::data}, "lookup_spans");
    lazy_error = e.code();
  }
  fuzz::check(full_error == lazy_error, p.text + ": lookup and lookup_spans disagree on failing");
  if (full_error) return;
  fuzz::check(full.size() == lazy.size(), p.text + ": lookup found " + std::to_string(full.size()) +
                                              " values, lookup_spans " + std::to_string(lazy.size()));
  for (std::size_t i = 0; i < full.size(); ++i) {
    fuzz::check(!full[i] == !lazy[i], p.text + ": missing for one lookup and not the other");
    if (!full[i]) continue;
    std::string_view span = text.substr(lazy[i]->begin, lazy[i]->end - lazy[i]->begin);
    json::value v = json::parse(span, "span");
    fuzz::check(v == *full[i], p.text + ": lookup_spans found " + std::string(span) + ", lookup " +
                                   json::compact(*full[i]));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  read_both(text);
  auto in = fuzz::split_input(text);
  if (in.lines.empty()) return 0;
  auto doc = read_both(in.document);
  if (!doc) return 0;
  for (auto line : in.lines) compare_lookups(in.document, *doc, line);
  return 0;
}
