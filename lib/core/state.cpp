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
    if (q.mode == Query::values) {
      for (auto& v : values) {
        r.out += v;
        r.out += q.terminator;
      }
    } else if (q.mode == Query::shell) {
      shell_out += shell_name(item.name);
      shell_out += '=';
      if (item.path.has_all()) {
        shell_out += '(';
        for (std::size_t i = 0; i < values.size(); ++i) {
          if (i) shell_out += ' ';
          shell_out += shell_quote(values[i]);
        }
        shell_out += ')';
      } else {
        shell_out += shell_quote(values.empty() ? "" : values[0]);
      }
      shell_out += q.terminator;
    }
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
    for (const auto& doc : json::parse_many(in, "standard input", {}, json::Literals::big_integers))
      answer(json::compact(doc), "standard input", q, want, nullptr, arena, r, shell_out);
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
template <class F>
void reading(const std::optional<MappedFile>& file, F&& f) {
  try {
    f();
  } catch (...) {
    if (file) file->check_whole();
    throw;
  }
  if (file) file->check_whole();
}

// The edits as they are applied: with --redact, each value set has its
// secrets replaced first (the warning names where, never the secret).
std::vector<Edit> edits_to_apply(const Update& u) {
  if (!u.redact) return u.edits;
  std::vector<Edit> out = u.edits;
  for (Edit& e : out) {
    if (e.op == Edit::remove) continue;
    redact_member(e.operand, e.path.last_name(), e.path.text, [&](const std::string& what) {
      if (u.on_warning) u.on_warning("redacted " + what);
    });
  }
  return out;
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

  void apply(const std::vector<Edit>& edits, const std::function<void(std::size_t)>& release) {
    for (bool every : {false, true}) {
      plan_.reset();
      if (every) root_ = scan::scan(text_, textedit::wants_for(edits, {}, true), subject_, release);
      plan_.emplace(text_, root_, layout_, subject_);
      try {
        for (const Edit& e : edits) plan_->apply(e);
        return;
      } catch (const textedit::Plan::NeedsEveryItem&) {
        if (every) throw;
      }
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
};

}  // namespace

// The read-modify-write, on FILE or, given a Document, on text in memory
// (stdin, an etcd value): then nothing is locked, backed up or written, and
// r.text is the result, r.written whether it differs from what was read.
UpdateResult update_document(const Update& u, const Document* given) {
  const bool filter = given != nullptr;
  const std::string subject = filter ? given->subject : u.file;
  std::string input;
  if (filter) {
    if (u.backup_invalid && !given->can_back_up)
      fail_usage(fmt::format("--on-invalid backup needs a FILE, not {}", given->kind));
    if (given->text) input = *given->text;
    if (is_gzip(input)) input = gunzip(input, subject);
  }
  LockedForReplace lk = filter ? LockedForReplace{} : lock_for_replace(u.file, false);
  if (filter) lk.exists = input.find_first_not_of(" \t\r\n") != std::string::npos;  // empty: as a missing file
  UpdateResult r;
  if (!lk.exists && u.no_create) {
    r.no = filter ? given->missing : fmt::format("{}: no such file", quoted(u.file));
    return r;
  }
  std::vector<Path> compared;
  for (const auto& [path, want] : u.expects) compared.push_back(path);
  for (const auto& [path, want] : u.requires_) compared.push_back(path);
  const scan::Want want = textedit::wants_for(u.edits, compared);

  // 1. the text, read once: the file (mapped; gunzipped when gzip), or the
  // --init document when it is missing or reset
  std::optional<MappedFile> file;
  std::string owned;
  std::string_view text;
  bool from_file = false, gz = false;
  scan::Node root;
  std::function<void(std::size_t)> release;
  if (lk.exists) {
    if (!filter) file.emplace(lk.fd.get(), u.file);
    std::string why;
    try {
      text = filter ? std::string_view(input) : file->text();
      gz = is_gzip(text);
      if (gz) text = owned = gunzip(text, u.file);
      else if (file) release = [&](std::size_t done) { file->release_before(done); };
      root = scan::scan(text, want, subject, release);
      why = unmet_requirement(u, text, root);
      if (!why.empty() && !u.backup_invalid) fail_data(why);
    } catch (const Error& e) {
      if (file) file->check_whole();  // zeros past a new end are not a bad file to back up
      if (e.code() != Exit::data || !u.backup_invalid) throw;
      why = e.what();
    }
    from_file = why.empty();
    if (!from_file && filter) {
      r.backup = *given->text;  // as read, gzip included
      r.backup_why = why;
    } else if (!from_file) {
      back_up(u, lk, *file, why);  // Atari's rule: keep the bad file and start again
    }
  }
  json::Layout layout = u.layout ? *u.layout : json::default_layout();
  if (from_file) {
    layout = json::detect_layout(text);
  } else {
    release = nullptr;
    text = owned = json::to_text(u.init ? *u.init : json::value(json::object()), layout);
    root = scan::scan(text, want, "--init");
  }

  // 2. --expect, then the edits in order
  reading(file, [&] {
    for (const auto& [path, want] : u.expects) {
      json::value have = textedit::value_in(text, root, path);
      if (!json::equal(have, want)) {
        r.no = fmt::format("{}: {} is {}, expected {}", quoted(subject), path.text, json::compact(have),
                           json::compact(want));
        return;
      }
    }
  });
  if (!r.no.empty()) return r;
  const std::vector<Edit> edits = edits_to_apply(u);  // the plan keeps views of their text
  Planned plan(text, layout, subject, std::move(root));
  reading(file, [&] { plan.apply(edits, release); });

  // 3. the new file: the old text's untouched slices and the new values
  if (from_file && !plan.changed() && !u.layout) {
    if (u.want_text || filter) r.text = std::string(text);
    if (file) file->check_whole();
    return r;
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
    return r;
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
  if (from_file && r.text == text) return r;  // reformatted as it was: no write
  r.written = true;
  if (filter) return r;
  write_file_atomic(u.file, gz ? gzip(r.text) : r.text, how);
  r.written = true;
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
