// libFuzzer target: state-set's read-modify-write (lib/core/state/state.hpp
// update_state_file) against a reference. The input is in the repro format
// of tests/fuzz/corpus/repro/ (see split_input in fuzz_common.hpp): a JSON
// document, then one state-set argument per line (`b.d:=1`, `--delete
// a[0]`, `--now t`, `--epoch t`, `--expect P=V`, `--require P:=V`,
// `--compact`, `--indent N`).
//
// The reference applies the same edits with apply() to a full parse of the
// document. Properties: only loopkit's errors leave the writer, with the
// reference's exit code; a failed run leaves the file's bytes and nothing
// beside it; a successful run writes text that the strict reader accepts
// and that parses to the reference's document (numbers by value); members
// no edit names keep their bytes, and a number set with := keeps its text.
#include <cmath>
#include <dirent.h>
#include <fcntl.h>
#include <optional>
#include <map>
#include <set>
#include <string>
#include <unistd.h>

#include "../unit/reference.hpp"
#include "core/edit/assign.hpp"
#include "core/json/jsontext.hpp"
#include "core/scan/scan.hpp"
#include "core/state/state.hpp"
#include "fuzz_common.hpp"

using namespace loopkit;

namespace {

std::string folder, file;

void remove_folder() {
  if (folder.empty()) return;
  if (DIR* d = opendir(folder.c_str())) {
    while (dirent* e = readdir(d))
      if (std::string_view(e->d_name) != "." && std::string_view(e->d_name) != "..")
        unlink((folder + "/" + e->d_name).c_str());
    closedir(d);
  }
  rmdir(folder.c_str());
}

void write_plain(std::string_view bytes) {
  int fd = open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) fuzz::finding("cannot create " + file);
  for (std::size_t done = 0; done < bytes.size();) {
    ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n <= 0) fuzz::finding("cannot write " + file);
    done += static_cast<std::size_t>(n);
  }
  close(fd);
}

std::string read_plain() {
  std::string s;
  int fd = open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fuzz::finding("the state file is gone");
  char buf[65536];
  for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) s.append(buf, static_cast<std::size_t>(n));
  close(fd);
  return s;
}

void check_nothing_beside() {
  DIR* d = opendir(folder.c_str());
  if (!d) fuzz::finding("the temp folder is gone");
  while (dirent* e = readdir(d)) {
    std::string_view n(e->d_name);
    if (n != "." && n != ".." && n != "state.json")
      fuzz::finding("left behind beside the state file: " + std::string(n));
  }
  closedir(d);
}

// Whether a file holding v could read back: UTF-8, finite, within the depth limit.
bool writable(const json::value& v) {
  if (!fuzz::finite_everywhere(v)) return false;
  try {
    json::parse(json::compact(v), "reference");
    return true;
  } catch (const Error&) {
    return false;
  }
}

// The arguments as state-set reads them; false on a usage error (exit 2
// before any file is touched, so there is nothing to compare).
bool parse_arguments(const std::vector<std::string_view>& lines, Update& u) {
  auto option = [](std::string_view line, std::string_view name, std::string_view& value) {
    if (line.substr(0, name.size()) != name) return false;
    std::string_view rest = line.substr(name.size());
    if (rest.empty() || (rest[0] != ' ' && rest[0] != '=')) return false;
    value = rest.substr(1);
    return true;
  };
  try {
    for (std::string_view line : lines) {
      std::string_view v;
      if (option(line, "--delete", v)) u.edits.push_back(delete_edit(v));
      else if (option(line, "--now", v)) u.edits.push_back(now_edit(v, false));
      else if (option(line, "--epoch", v)) u.edits.push_back(now_edit(v, true));
      else if (option(line, "--expect", v)) u.expects.push_back(parse_expectation(v));
      else if (option(line, "--require", v)) u.requires_.push_back(parse_expectation(v));
      else if (line == "--compact") u.layout = json::compact_layout();
      else if (option(line, "--indent", v)) {
        if (v.empty() || v.size() > 2 || v.find_first_not_of("0123456789") != std::string_view::npos) return false;
        int n = std::stoi(std::string(v));
        if (n > 16) return false;
        json::Layout l = json::default_layout();
        if (n == 0) l = json::compact_layout();
        else l.indent = std::string(static_cast<std::size_t>(n), ' ');
        u.layout = l;
      } else {
        u.edits.push_back(parse_assignment(line));
      }
    }
  } catch (const Error& e) {
    fuzz::check_code(e, {Exit::usage}, "parsing the arguments");
    return false;
  }
  return true;
}

struct Outcome {
  std::optional<json::value> doc;  // when it succeeds
  Exit code = Exit::ok;
  std::string message;
};

// What state-set must do, computed on a full parse with assign.hpp's apply().
Outcome expected_outcome(std::string_view document, const Update& u) {
  Outcome o;
  try {
    // compared as the writer reads values (big integers by their digits)...
    json::value before = json::parse(document, "reference", {}, json::Literals::big_integers);
    for (const auto& [path, want] : u.requires_)
      if (!json::equal(*reference::value_at(before, path), want)) fail_data("--require does not hold");
    for (const auto& [path, want] : u.expects)
      if (!json::equal(*reference::value_at(before, path), want)) throw Error(Exit::no, "--expect does not hold");
    // ... and edited with numbers as written, as the writer edits them: += adds their digits
    json::value after = json::parse(document, "reference", {}, json::Literals::as_written);
    for (const Edit& e : u.edits) reference::edit_value(after, e);
    o.doc = std::move(after);
  } catch (const Error& e) {
    fuzz::check_code(e, {Exit::no, Exit::usage, Exit::data}, "the reference");
    o.code = e.code();
    o.message = e.what();
  }
  return o;
}

// The members of a top-level object, name to the bytes of the value that
// counts (the last copy of a duplicated name); none when it is not an object.
std::optional<std::map<std::string, std::string_view>> members(std::string_view text) {
  scan::Want every;
  every.all = true;
  scan::Node root = scan::scan(text, every, "members");
  if (text[root.begin] != '{') return std::nullopt;
  std::map<std::string, std::string_view> out;
  for (const scan::Child& c : root.children)
    out[scan::key_name(text, c.item.key)] = text.substr(c.item.value, c.item.end - c.item.value);
  return out;
}

std::string_view trim(std::string_view s) {
  std::size_t b = s.find_first_not_of(" \t\n\r"), e = s.find_last_not_of(" \t\n\r");
  return b == std::string_view::npos ? std::string_view() : s.substr(b, e - b + 1);
}

// Members no edit names keep their bytes; a number set by `K:=N` is written as N.
void check_faithful(std::string_view before, std::string_view after, const Update& u) {
  auto in = members(before), out = members(after);
  if (!in || !out) return;
  std::set<std::string> touched;
  for (const Edit& e : u.edits) {
    if (e.path.segments.empty() || e.path.segments[0].kind != Segment::key) return;
    touched.insert(e.path.segments[0].name);
  }
  for (const auto& [name, was] : *in) {
    if (touched.count(name)) continue;
    auto now = out->find(name);
    if (now == out->end()) fuzz::finding("member " + json::quote(name) + " that no edit names is gone");
    if (was != now->second)
      fuzz::finding("member " + json::quote(name) + " that no edit names changed its bytes from " + std::string(was) +
                    " to " + std::string(now->second));
  }
  for (const Edit& e : u.edits) {
    if (e.op != Edit::set || e.path.segments.size() != 1 || !json::is_numeric(e.operand)) continue;
    const std::string& name = e.path.segments[0].name;
    int edits_of_name = 0;
    for (const Edit& f : u.edits) edits_of_name += f.path.segments[0].name == name;
    std::string_view op = std::string_view(e.source).substr(e.path.text.size());
    if (edits_of_name != 1 || op.substr(0, 2) != ":=") continue;
    auto now = out->find(name);
    if (now == out->end() || now->second != trim(op.substr(2)))
      fuzz::finding("the number of " + e.source + " is not written as given");
  }
}

// The classes of findings LOOPKIT_FUZZ_KNOWN may name (fuzz::is_known):
//   utf8-name    a member name that is not UTF-8 is written into the file
//   overflow     a number past the range of a double (1e400) is accepted
//   comma-first  appending to a pretty object or array whose commas start
//                the lines ("  1\n ,2") writes a second comma
bool known(std::string_view document, const Update& u) {
  auto has = fuzz::is_known;
  if (has("utf8-name")) {
    for (const Edit& e : u.edits)
      if (!fuzz::names_are_utf8(e.path)) return true;
  }
  if (has("overflow")) {
    try {
      if (!fuzz::finite_everywhere(json::parse(document, "known"))) return true;
    } catch (const Error&) {
    }
  }
  if (has("comma-first")) {
    for (std::size_t nl = document.find('\n'); nl != std::string_view::npos; nl = document.find('\n', nl + 1)) {
      std::size_t c = document.find_first_not_of(" \t\r", nl + 1);
      if (c != std::string_view::npos && document[c] == ',') return true;
    }
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  setenv("LOOPKIT_NOW", "1736503530", 1);  // --now and --epoch: one known instant
  const char* base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : (getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
  std::string tmpl = std::string(base) + "/loopkit-fuzz-edit.XXXXXX";
  if (!mkdtemp(tmpl.data())) fuzz::finding("cannot make a temp folder in " + std::string(base));
  folder = tmpl;
  file = folder + "/state.json";
  std::atexit(remove_folder);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto in = fuzz::split_input(std::string_view(reinterpret_cast<const char*>(data), size));
  // a gzip file is read unzipped by the writer, not by the reference
  if (in.document.substr(0, 2) == "\x1f\x8b") return 0;
  Update u;
  u.file = file;
  u.sync = false;
  // half the inputs as --print runs (the new text built in memory), the
  // others streamed to the file as a plain run writes it
  u.want_text = size % 2 == 1;
  if (!parse_arguments(in.lines, u) || known(in.document, u)) return 0;
  Outcome want = expected_outcome(in.document, u);

  write_plain(in.document);
  UpdateResult got;
  std::optional<Error> failed;
  try {
    got = update_state_file(u);
    if (!got.no.empty()) failed = Error(Exit::no, got.no);
  } catch (const Error& e) {
    failed = e;
  }
  check_nothing_beside();
  std::string on_disk = read_plain();

  if (failed) {
    fuzz::check(on_disk == in.document, "a failed run changed the file: " + std::string(failed->what()));
    if (!want.doc) {
      fuzz::check(failed->code() == want.code, "exit " + std::to_string(static_cast<int>(failed->code())) + " (" +
                                                   failed->what() + ") where the reference has exit " +
                                                   std::to_string(static_cast<int>(want.code)) + " (" + want.message +
                                                   ")");
    } else {
      fuzz::check(!writable(*want.doc),
                  std::string("the writer failed where the reference succeeds: ") + failed->what());
      fuzz::check_code(*failed, {Exit::usage, Exit::data}, "refusing an unwritable document");
    }
    return 0;
  }
  if (!want.doc) fuzz::finding("the writer succeeded where the reference fails: " + want.message);
  fuzz::check(writable(*want.doc), "the writer succeeded with a document that cannot be written");
  if (u.want_text)
    fuzz::check(on_disk == (got.written ? got.text : std::string(in.document)), "the file is not the text returned");
  else fuzz::check(got.written || on_disk == in.document, "a run that wrote nothing changed the file");
  try {
    validate_json(on_disk, "written");
  } catch (const Error& e) {
    fuzz::finding(std::string("the written file does not read back: ") + e.what());
  }
  json::value written = json::parse(on_disk, "written");
  fuzz::check(fuzz::same_json(written, *want.doc),
              "written " + json::compact(written) + " but the reference has " + json::compact(*want.doc));
  if (!u.layout) check_faithful(in.document, on_disk, u);
  return 0;
}
