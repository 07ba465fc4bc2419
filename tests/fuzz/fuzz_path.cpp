// libFuzzer target: the path parser (lib/core/scan/path.hpp). The input is one
// path text. Properties: only usage errors (exit 2) leave the parser; a path
// parse_path accepts is exactly what parse_path_prefix reads, whole; written
// back with every name quoted it parses to the same segments; lookup on a
// small document fails only with exit 3 (through a scalar).
#include "core/scan/path.hpp"
#include "core/scan/scan.hpp"
#include "core/edit/textedit.hpp"
#include "fuzz_common.hpp"

using namespace loopkit;

namespace {

constexpr std::string_view sample = R"({"a":{"b":[1,{"c":null}],"":"e"},"x":[[],{}],"s":"t","n":5,"a.b":true})";

// state-get's lookup: a scan wanting the path, then textedit::lookup
void check_lookup(const Path& p) {
  try {
    scan::Want want;
    want.add(p);
    want.settle();
    scan::Node root = scan::scan(sample, want, "sample");
    auto found = textedit::lookup(sample, root, p);
    if (!p.has_all()) fuzz::check(found.size() == 1, "lookup without [] found " + std::to_string(found.size()));
  } catch (const Error& e) {
    fuzz::check_code(e, {Exit::data}, "lookup");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);

  Path prefix;
  std::size_t used = 0;
  bool prefix_ok = false;
  try {
    used = parse_path_prefix(text, prefix);
    prefix_ok = true;
    fuzz::check(used <= text.size(), "parse_path_prefix used more than the text");
    fuzz::check(prefix.text == text.substr(0, used), "parse_path_prefix: text is not the characters used");
  } catch (const Error& e) {
    fuzz::check_code(e, {Exit::usage}, "parse_path_prefix");
  }

  Path whole;
  try {
    whole = parse_path(text);
  } catch (const Error& e) {
    fuzz::check_code(e, {Exit::usage}, "parse_path");
    return 0;
  }
  fuzz::check(prefix_ok && used == text.size(), "parse_path accepted what parse_path_prefix did not read whole");
  fuzz::check(fuzz::same_segments(prefix, whole), "parse_path and parse_path_prefix disagree");
  fuzz::check(whole.text == text, "parse_path: text is not the input");
  check_lookup(whole);

  // a name that is not UTF-8 cannot be written as a JSON string literal
  if (!fuzz::names_are_utf8(whole)) return 0;
  std::string canon = fuzz::canonical_path(whole);
  try {
    Path again = parse_path(canon);
    fuzz::check(fuzz::same_segments(whole, again), "quoted form " + canon + " parses to other segments");
    fuzz::check(again.has_all() == whole.has_all() && again.last_name() == whole.last_name(),
                "quoted form " + canon + " differs in has_all or last_name");
  } catch (const Error& e) {
    fuzz::finding("quoted form " + canon + " of an accepted path is refused: " + e.what());
  }
  return 0;
}
