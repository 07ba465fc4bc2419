#include "core/state.hpp"

#include <boost/json/monotonic_resource.hpp>
#include <fmt/format.h>

#include "core/redact.hpp"
#include "core/scan.hpp"
#include "core/shellwords.hpp"
#include "core/textedit.hpp"
#include "sys/error.hpp"
#include "sys/etcd_url.hpp"
#include "sys/fd.hpp"
#include "sys/file.hpp"
#include "sys/gz.hpp"
#include "sys/mapped.hpp"

namespace loopkit {

// ---- state-get ----------------------------------------------------------------

namespace {

std::string render(const json::value& v, const Query& q) {
  if (q.pretty && (v.is_object() || v.is_array())) {
    std::string s;
    json::write_value(s, v, json::default_layout(), "");
    return s;
  }
  return q.as_json ? json::compact(v) : json::raw_text(v);
}

void keys_of(const json::value& v, const Path& p, std::string& out, char term) {
  if (v.is_object()) {
    for (const auto& kv : v.get_object()) {
      out.append(kv.key());
      out += term;
    }
  } else if (v.is_array()) {
    for (std::size_t i = 0; i < v.get_array().size(); ++i) {
      out += std::to_string(i);
      out += term;
    }
  } else {
    fail_data(fmt::format("{}: a {} has no keys", p.text, type_name(v)));
  }
}

// One item's values as printed: lines, or with --shell NAME=VALUE (a bash
// array when the item may yield several).
void print_values(const Query::Item& item, const std::vector<std::string>& values, bool several, const Query& q,
                  QueryResult& r, std::string& shell_out) {
  if (q.mode == Query::values) {
    for (const auto& v : values) r.out += v + q.terminator;
  } else if (q.mode == Query::shell) {
    shell_out += shell_name(item.name);
    shell_out += '=';
    if (several) {
      shell_out += '(';
      for (std::size_t i = 0; i < values.size(); ++i) shell_out += (i ? " " : "") + shell_quote(values[i]);
      shell_out += ')';
    } else {
      shell_out += shell_quote(values.empty() ? "" : values[0]);
    }
    shell_out += q.terminator;
  }
}

// An expression's answers: jq's values of it on the whole document. No
// value is missing (jq reads a missing member as null); with --exists, one
// that yields nothing is.
void answer_expression(std::string_view text, std::string_view subject, const boost::json::storage_ptr& arena,
                       const Query::Item& item, const Query& q, QueryResult& r, std::string& shell_out) {
  json::value doc = json::parse(text, subject, arena, json::Literals::big_integers);
  std::vector<std::string> values;
  const auto& fallback = item.default_value ? item.default_value : q.default_value;
  bool any = false;
  query::evaluate(*item.expr, doc, [&](const json::value& v) {
    any = true;
    if (q.mode == Query::exists) return;
    if (v.is_null() && fallback) values.push_back(*fallback);
    else if (q.mode == Query::keys) keys_of(v, item.path, r.out, q.terminator);
    else values.push_back(render(v, q));
  });
  if (q.mode == Query::exists && !any) r.missing.push_back(item.path.text);
  print_values(item, values, true, q, r, shell_out);
}

// The query's answers from one document: one scan of its text for every
// path, then Boost.JSON only for the values printed.
void answer(std::string_view text, std::string_view subject, const Query& q, const scan::Want& want, MappedFile* file,
            const boost::json::storage_ptr& arena, QueryResult& r, std::string& shell_out) {
  auto release = [&](std::size_t done) { file->release_before(done); };
  scan::Node root = scan::scan(text, want, subject, file ? std::function<void(std::size_t)>(release) : nullptr);
  for (const auto& item : q.items) {
    std::vector<std::string> values;
    bool missing_here = false;
    const auto& fallback = item.default_value ? item.default_value : q.default_value;
    if (item.expr) {
      answer_expression(text, subject, arena, item, q, r, shell_out);
      continue;
    }
    auto spans = textedit::lookup(text, root, item.path);
    for (const auto& s : spans) {
      json::value v;
      if (s) v = json::parse(text.substr(s->first, s->second - s->first), subject, arena, json::Literals::big_integers);
      if (!s || (v.is_null() && fallback && q.mode != Query::exists)) {
        if (fallback && q.mode != Query::exists) {
          values.push_back(*fallback);
          continue;
        }
        missing_here = true;
        continue;
      }
      switch (q.mode) {
        case Query::exists: break;
        case Query::keys: keys_of(v, item.path, r.out, q.terminator); break;
        case Query::values:
        case Query::shell: values.push_back(render(v, q)); break;
      }
    }
    if (missing_here || (spans.empty() && !item.path.has_all())) {
      r.missing.push_back(item.path.text);
      continue;
    }
    print_values(item, values, item.path.has_all(), q, r, shell_out);
  }
}

}  // namespace

const StateOnEtcd* state_on_etcd = nullptr;

namespace {

const StateOnEtcd& on_etcd(const std::string& url) {
  if (!state_on_etcd) fail(Exit::system, fmt::format("{}: this program is built without the etcd client", quoted(url)));
  return *state_on_etcd;
}

}  // namespace

QueryResult query_state(const Query& q) {
  QueryResult r;
  scan::Want want;
  for (const auto& item : q.items) want.add(item.path);
  want.settle();
  // a read-only run never frees: an arena makes parsing big values cheaper
  boost::json::storage_ptr arena = boost::json::make_shared_resource<boost::json::monotonic_resource>();
  std::string shell_out;
  if (etcd::is_etcd_url(q.file)) {
    std::optional<std::string> value = on_etcd(q.file).read(q.file, q.timeout);
    if (!value && q.must_exist) {
      r.no = fmt::format("{}: no such key", quoted(q.file));
      return r;
    }
    std::string text = value ? std::move(*value) : "{}";  // a missing key reads as {}
    if (is_gzip(text)) text = gunzip(text, q.file);
    answer(text, q.file, q, want, nullptr, arena, r, shell_out);
  } else if (q.file == "-") {
    // stdin may carry several documents (JSON lines: lock-status --json | state-get - pid)
    std::string in = read_all(0, "standard input");
    if (is_gzip(in, q.file)) in = gunzip(in, "standard input");
    auto docs = json::parse_many(in, "standard input", {}, json::Literals::big_integers);
    // no document at all is what an empty file is: exit 3, "empty document"
    if (docs.empty()) answer(in, "standard input", q, want, nullptr, arena, r, shell_out);
    for (const auto& doc : docs) answer(json::compact(doc), "standard input", q, want, nullptr, arena, r, shell_out);
  } else {
    struct stat st;
    Fd fd = open_to_read(q.file, st);
    if (!fd && q.must_exist) {
      r.no = fmt::format("{}: no such file", quoted(q.file));
      return r;
    }
    if (!fd) {
      answer("{}", q.file, q, want, nullptr, arena, r, shell_out);  // a missing file reads as {}
    } else {
      MappedFile file(fd.get(), q.file);
      try {
        if (is_gzip(file.text(), q.file))
          answer(gunzip(file.text(), q.file), q.file, q, want, nullptr, arena, r, shell_out);
        else answer(file.text(), q.file, q, want, &file, arena, r, shell_out);
      } catch (...) {
        file.check_whole();  // the file shrank under the map (see MappedFile): that, not what its zeros caused
        throw;
      }
      file.check_whole();
    }
  }
  // eval must never see half an answer
  if (q.mode == Query::shell && r.missing.empty()) r.out = std::move(shell_out);
  return r;
}

// ---- state-set ------------------------------------------------------------------

namespace {

// Runs f, which reads text mapped from file: when the file shrank under the
// map meanwhile (see MappedFile), that is the error, not what its zeros caused.
// checked_later: f's answer is checked before it is given (the write checks
// before its rename), so only its failure needs the check now.
template <class F>
void reading(const std::optional<MappedFile>& file, F&& f, bool checked_later = false) {
  try {
    f();
  } catch (...) {
    if (file) file->check_whole();
    throw;
  }
  if (file && !checked_later) file->check_whole();
}

// The edits as they are applied: with --redact, each value set has its
// secrets replaced first (the warning names where, never the secret).
std::vector<Edit> edits_to_apply(const Update& u) {
  if (!u.redact) return u.edits;
  std::vector<Edit> out = u.edits;
  for (Edit& e : out) {
    // a delete sets nothing; a sum's operand is a step, never the stored value
    if (e.op == Edit::remove || e.op == Edit::add) continue;
    redact_member(e.operand, e.path.last_name(), e.path.text, [&](const std::string& what) {
      if (u.on_warning) u.on_warning("redacted " + what);
    });
  }
  return out;
}

// The document a missing or reset file starts from: --init, or {}; with
// --redact its secrets go too, as those of the values set do.
json::value init_document(const Update& u) {
  json::value start = u.init ? *u.init : json::value(json::object());
  if (u.redact)
    redact(start, [&](const std::string& what) {
      if (u.on_warning) u.on_warning("redacted " + what + " in --init");
    });
  return start;
}

// The first --require the text does not meet, as a message ("" when all are met).
std::string unmet_requirement(const Update& u, std::string_view text, const scan::Node& root) {
  for (const auto& [path, want] : u.requires_) {
    json::value have = textedit::value_in(text, root, path);
    if (!json::equal(have, want))
      return fmt::format("{}: {} is {}, not {}", quoted(u.file), path.text, json::compact(have), json::compact(want));
  }
  return "";
}

// --on-invalid backup: the bad file's bytes go to FILE.backup (never
// through a symlink planted there: refused, exit 4), copied by the kernel.
void back_up(const Update& u, const LockedForReplace& lk, const MappedFile& file, const std::string& why) {
  std::string backup = resolve_symlinks(u.file) + ".backup";
  write_file_atomic_with(backup, {.mode = lk.mode, .sync = u.sync, .follow_symlink = false},
                         [&](int fd, const std::string& tmp) {
                           if (file.at_file_offsets()) copy_range(lk.fd.get(), 0, fd, file.text().size(), tmp);
                           else write_all(fd, file.text(), tmp);
                         });
  if (u.on_warning) u.on_warning(fmt::format("{}; moved it to {} and started again", why, quoted(u.file + ".backup")));
}

// The edits applied in order to a plan over the scanned text. When an
// index reaches an element the scan did not keep (earlier edits of the run
// moved it), the text is scanned once more keeping every item on the
// edits' paths.
class Planned {
public:
  Planned(std::string_view text, const json::Layout& layout, std::string_view subject, scan::Node root)
      : text_(text), layout_(layout), subject_(subject), root_(std::move(root)) {}

  // All the edits; or, given line_ends (--stream), the lines before the
  // first one that cannot be applied, whose error is returned.
  std::optional<Error> apply(const std::vector<Edit>& edits, const std::vector<std::size_t>& line_ends,
                             const std::function<void(std::size_t)>& release) {
    try {
      apply_first(edits, edits.size(), release);
      return std::nullopt;
    } catch (const Error& e) {
      if (line_ends.empty() || (e.code() != Exit::data && e.code() != Exit::usage)) throw;
      std::size_t good = 0;  // the edits of the lines wholly before the failing edit
      for (std::size_t end : line_ends)
        if (end <= failed_at_) good = end;
      if (good == 0) throw;
      apply_first(edits, good, release);  // on a fresh plan: the failing line's first edits are undone
      return e;
    }
  }
  bool changed() const { return plan_->changed(); }
  void write(textedit::Sink& out) const { plan_->write(out); }

private:
  std::string_view text_;
  json::Layout layout_;
  std::string subject_;
  scan::Node root_;
  std::optional<textedit::Plan> plan_;
  std::size_t failed_at_ = 0;  // the edit that threw

  void apply_first(const std::vector<Edit>& edits, std::size_t n, const std::function<void(std::size_t)>& release) {
    for (bool every : {false, true}) {
      plan_.reset();
      if (every) root_ = scan::scan(text_, textedit::wants_for(edits, {}, true), subject_, release);
      plan_.emplace(text_, root_, layout_, subject_);
      try {
        for (failed_at_ = 0; failed_at_ < n; ++failed_at_) plan_->apply(edits[failed_at_]);
        return;
      } catch (const textedit::Plan::NeedsEveryItem&) {
        if (every) throw;
      }
    }
  }
};

// The text a run edits: the file's (mapped, gunzipped when gzip) or the
// document it starts from when the file is missing or reset.
struct Source {
  std::optional<MappedFile> file;
  std::string owned;
  std::string_view text;
  bool from_file = false, gz = false;
  scan::Node root;
  std::function<void(std::size_t)> release;  // pages of the mapped file behind the scan
};

// 1. The file's text, scanned for what the run needs and checked against
// --require; invalid (or failing --require) under --on-invalid backup, it
// is kept as FILE.backup (or in r.backup for a Document) and the run
// starts again.
void read_source(const Update& u, const Document* given, const std::string& input, const LockedForReplace& lk,
                 const scan::Want& want, Source& s, UpdateResult& r) {
  const std::string& subject = given ? given->subject : u.file;
  if (!given) s.file.emplace(lk.fd.get(), u.file);
  std::string why;
  try {
    s.text = given ? std::string_view(input) : s.file->text();
    s.gz = is_gzip(s.text);
    if (s.gz) s.text = s.owned = gunzip(s.text, u.file);
    else if (s.file) s.release = [&s](std::size_t done) { s.file->release_before(done); };
    s.root = scan::scan(s.text, want, subject, s.release);
    why = unmet_requirement(u, s.text, s.root);
    if (!why.empty() && !u.backup_invalid) fail_data(why);
  } catch (const Error& e) {
    if (s.file) s.file->check_whole();  // zeros past a new end are not a bad file to back up
    if (e.code() != Exit::data || !u.backup_invalid) throw;
    why = e.what();
  }
  s.from_file = why.empty();
  if (!s.from_file && given) {
    r.backup = *given->text;  // as read, gzip included
    r.backup_why = why;
  } else if (!s.from_file) {
    back_up(u, lk, *s.file, why);  // Atari's rule: keep the bad file and start again
  }
}

// The document a missing or reset file starts from: --init, with the values
// --require asks for set where it lacks them, so that the new file meets
// its own --require next time (not reset again on every run).
void start_fresh(const Update& u, const json::Layout& layout, const scan::Want& want, Source& s) {
  s.release = nullptr;
  s.owned = json::to_text(init_document(u), layout);
  std::vector<Edit> sets;
  std::vector<Path> paths;
  for (const auto& [path, value] : u.requires_) paths.push_back(path);
  scan::Node root = scan::scan(s.owned, textedit::wants_for({}, paths), "--init");
  for (const auto& [path, value] : u.requires_) {
    json::value have = textedit::value_in(s.owned, root, path);
    if (json::equal(have, value)) continue;
    if (!have.is_null())
      fail_usage(fmt::format("--init holds {} at {}, but --require asks for {}", json::compact(have), path.text,
                             json::compact(value)));
    sets.push_back(Edit{.op = Edit::set, .path = path, .operand = value, .source = "--require " + path.text});
  }
  if (!sets.empty()) {
    textedit::StringSink out;
    textedit::edit_text(s.owned, sets, out, "--init");
    s.owned = std::move(out.text);
  }
  s.text = s.owned;
  s.root = scan::scan(s.text, want, "--init");
}

// A Document's text, gunzipped: FILE "-" or an etcd key's value
std::string document_text(const Update& u, const Document& given) {
  if (u.backup_invalid && !given.can_back_up)
    fail_usage(fmt::format("--on-invalid backup needs a FILE, not {}", given.kind));
  std::string input = given.text.value_or("");
  return is_gzip(input) ? gunzip(input, given.subject) : input;
}

// What the run must scan for: the edits' paths, --expect's and --require's
scan::Want wants_of(const Update& u) {
  std::vector<Path> compared;
  for (const auto& [path, want] : u.expects) compared.push_back(path);
  for (const auto& [path, want] : u.requires_) compared.push_back(path);
  return textedit::wants_for(u.edits, compared);
}

// 2. --expect, on the document as found: the answer "no", or ""
std::string unmet_expectation(const Update& u, const Source& s, const std::string& subject) {
  for (const auto& [path, want] : u.expects) {
    json::value have = textedit::value_in(s.text, s.root, path);
    if (!json::equal(have, want))
      return fmt::format("{}: {} is {}, expected {}", quoted(subject), path.text, json::compact(have),
                         json::compact(want));
  }
  return "";
}

// The new file: the old text's untouched slices and the new values,
// streamed to it in the common case; r.text when asked for or filtering
void write_result(const Update& u, const LockedForReplace& lk, Source& src, Planned& plan, bool filter,
                  UpdateResult& r) {
  std::optional<MappedFile>& file = src.file;
  std::string_view text = src.text;
  const bool from_file = src.from_file, gz = src.gz;
  std::function<void(std::size_t)>& release = src.release;
  if (from_file && !plan.changed() && !u.layout) {
    if (u.want_text || filter) r.text = std::string(text);
    if (file) file->check_whole();
    return;
  }
  AtomicWrite how{.mode = lk.exists ? lk.mode : static_cast<mode_t>(u.mode), .sync = u.sync};
  if (!filter && !u.want_text && !u.layout && !gz) {
    // the common case, streamed: big untouched slices never enter memory
    write_file_atomic_with(u.file, how, [&](int fd, const std::string& tmp) {
      textedit::FdSink out(fd, tmp, release ? &*file : nullptr);
      reading(file, [&] {  // before the rename: never zeros for the file's end
        plan.write(out);
        out.flush();
      });
    });
    r.written = true;
    return;
  }
  textedit::StringSink edited;
  reading(file, [&] {
    if (plan.changed()) plan.write(edited);
    else edited.text = text;
  });
  if (u.layout) {
    textedit::StringSink restyled;
    textedit::restyle(edited.text, *u.layout, restyled);
    edited.text = std::move(restyled.text);
  }
  r.text = std::move(edited.text);
  if (from_file && r.text == text) return;  // reformatted as it was: no write
  r.written = true;
  if (filter) return;
  write_file_atomic(u.file, gz ? gzip(r.text) : r.text, how);
  r.written = true;
}

}  // namespace

// The read-modify-write, on FILE or, given a Document, on text in memory
// (stdin, an etcd value): then nothing is locked, backed up or written, and
// r.text is the result, r.written whether it differs from what was read.
UpdateResult update_document(const Update& u, const Document* given) {
  const bool filter = given != nullptr;
  const std::string subject = filter ? given->subject : u.file;
  const std::string input = filter ? document_text(u, *given) : std::string();
  LockedForReplace lk = filter ? LockedForReplace{} : lock_for_replace(u.file, false);
  if (filter) lk.exists = input.find_first_not_of(" \t\r\n") != std::string::npos;  // empty: as a missing file
  UpdateResult r;
  if (!lk.exists && u.no_create) {
    r.no = filter ? given->missing : fmt::format("{}: no such file", quoted(u.file));
    return r;
  }
  const scan::Want want = wants_of(u);
  Source src;
  if (lk.exists) read_source(u, given, input, lk, want, src, r);
  json::Layout layout = u.layout ? *u.layout : json::default_layout();
  if (src.from_file) layout = json::detect_layout(src.text);
  else start_fresh(u, layout, want, src);
  const auto expect = [&] { r.no = unmet_expectation(u, src, subject); };
  reading(src.file, expect, true);
  if (!r.no.empty()) {
    if (src.file) src.file->check_whole();  // a "no" read from zeros is the shrink
    return r;
  }
  const std::vector<Edit> edits = edits_to_apply(u);  // the plan keeps views of their text
  Planned plan(src.text, layout, subject, std::move(src.root));
  const auto apply = [&] { r.failed = plan.apply(edits, u.line_ends, src.release); };
  reading(src.file, apply, true);  // write_result checks before it answers
  write_result(u, lk, src, plan, filter, r);
  return r;  // the lock goes with lk, after the rename
}

UpdateResult update_state_file(const Update& u) {
  if (etcd::is_etcd_url(u.file)) return on_etcd(u.file).update(u);
  if (u.file != "-") return update_document(u, nullptr);
  // "-": a filter, the document from stdin and the result in r.text
  const Document in{.subject = "standard input",
                    .kind = "standard input",
                    .missing = "standard input is empty",
                    .text = read_all(0, "standard input")};
  return update_document(u, &in);
}

}  // namespace loopkit
