// state-set's read-modify-write, written once over the document store
// (store.hpp): files, standard input and etcd keys alike.

#include "core/redact/redact.hpp"
#include "core/scan/scan.hpp"
#include "core/state/state.hpp"
#include "core/state/store.hpp"
#include "core/edit/textedit.hpp"
#include "sys/base/error.hpp"
#include "sys/base/etcd_url.hpp"
#include "sys/fs/folder.hpp"
#include "sys/base/format.hpp"
#include "sys/gz/gz.hpp"
#include "sys/fs/mapped.hpp"

namespace loopkit {

namespace {

// Runs f, which reads text mapped from file: when the file shrank under the
// map meanwhile (see MappedFile), that is the error, not what its zeros caused.
// checked_later: f's answer is checked before it is given (the write checks
// before its rename), so only its failure needs the check now.
template <class F>
void reading(MappedFile* file, F&& f, bool checked_later = false) {
  try {
    f();
  } catch (...) {
    if (file) file->check_whole();
    throw;
  }
  if (file && !checked_later) file->check_whole();
}

// The member name a value set at path is judged by: the first on the path
// that says secret (everything under it is secret, whatever indexes or
// members follow: password[0], db.api_key[1], creds.password.old), else the
// last one (api_key=x, .x.token=y).
std::string judged_name(const Path& path) {
  for (const Segment& s : path.segments)
    if (s.kind == Segment::key && is_secret_name(s.name)) return s.name;
  return path.last_name();
}

using Comparisons = std::vector<std::pair<Path, json::value>>;

// An Update compiled once, before the retry loop, into what each try needs:
// what to scan for, the edits as applied (redacted), the document a missing
// file starts from, the checks. Redaction's warnings are kept and said
// where a try reaches the edits or the start (as often as before: a try
// that stops at --no-create or --expect says none).
struct Compiled {
  explicit Compiled(const Update& u);
  scan::Want want;                      // the edits' paths, --expect's and --require's
  std::vector<Edit> edits;              // in order; with --redact, secrets replaced
  std::vector<std::string> redactions;  // the edits' redaction warnings
  json::value init;                     // --init, or {}; with --redact, secrets replaced
  std::vector<std::string> init_redactions;
  const Comparisons& expects;
  const Comparisons& requires_;
  const std::vector<std::size_t>& line_ends;
  const std::optional<json::Layout>& layout;
  bool no_create, backup_invalid, want_text;
  const std::function<void(const std::string&)>& on_warning;

  void warn(const std::vector<std::string>& warnings) const {
    if (on_warning)
      for (const std::string& w : warnings) on_warning(w);
  }
};

// What the run must scan for: the edits' paths, --expect's and --require's
scan::Want wants_of(const Update& u) {
  std::vector<Path> compared;
  for (const auto& [path, want] : u.expects) compared.push_back(path);
  for (const auto& [path, want] : u.requires_) compared.push_back(path);
  return textedit::wants_for(u.edits, compared);
}

// With --redact, each value set has its secrets replaced first (the warning
// names where, never the secret); the document started from loses its
// secrets too, as those of the values set do.
Compiled::Compiled(const Update& u)
    : want(wants_of(u)),
      edits(u.edits),
      init(u.init ? *u.init : json::value(json::object())),
      expects(u.expects),
      requires_(u.requires_),
      line_ends(u.line_ends),
      layout(u.layout),
      no_create(u.no_create),
      backup_invalid(u.backup_invalid),
      want_text(u.want_text),
      on_warning(u.on_warning) {
  if (!u.redact) return;
  for (Edit& e : edits) {
    // a delete sets nothing; a sum's operand is a step, never the stored value
    if (e.op == Edit::remove || e.is_arithmetic()) continue;
    redact_member(e.operand, judged_name(e.path), e.path.text,
                  [&](const std::string& what) { redactions.push_back("redacted " + what); });
  }
  redact(init, [&](const std::string& what) { init_redactions.push_back("redacted " + what + " in --init"); });
}

// The first --require the text does not meet, as a message ("" when all are met).
std::string unmet_requirement(const Comparisons& requires_, std::string_view text, const scan::Node& root,
                              const std::string& subject) {
  for (const auto& [path, want] : requires_) {
    json::value have = textedit::value_in(text, root, path);
    if (!json::equal(have, want))
      return loopkit::format("{}: {} is {}, not {}", quoted(subject), path.text, json::compact(have),
                             json::compact(want));
  }
  return "";
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
  std::optional<Error> plan_edits(const std::vector<Edit>& edits, const std::vector<std::size_t>& line_ends,
                                  const std::function<void(std::size_t)>& release) {
    try {
      plan_first(edits, edits.size(), release);
      return std::nullopt;
    } catch (const Error& e) {
      if (line_ends.empty() || (e.code() != Exit::data && e.code() != Exit::usage)) throw;
      std::size_t good = 0;  // the edits of the lines wholly before the failing edit
      for (std::size_t end : line_ends)
        if (end <= failed_at_) good = end;
      if (good == 0) throw;
      plan_first(edits, good, release);  // on a fresh plan: the failing line's first edits are undone
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

  void plan_first(const std::vector<Edit>& edits, std::size_t n, const std::function<void(std::size_t)>& release) {
    for (bool every : {false, true}) {
      plan_.reset();
      if (every) root_ = scan::scan(text_, textedit::wants_for(edits, {}, true), subject_, release);
      plan_.emplace(text_, root_, layout_, subject_);
      try {
        for (failed_at_ = 0; failed_at_ < n; ++failed_at_) plan_->edit_spans(edits[failed_at_]);
        return;
      } catch (const textedit::Plan::NeedsEveryItem&) {
        if (every) throw;
      }
    }
  }
};

// The text a run edits: the document's (gunzipped when gzip) or the one it
// starts from when the document is missing or reset.
struct Source {
  MappedFile* file = nullptr;  // the map text views, while it does
  std::string owned;
  std::string_view text;
  bool from_document = false, gz = false;
  std::optional<std::string> backup_why;  // --on-invalid backup: why the text read is kept and replaced
  scan::Node root;
  std::function<void(std::size_t)> release;  // pages of the mapped file behind the scan
};

// 1. The document's text, scanned for what the run needs and checked
// against --require; invalid (or failing --require) under --on-invalid
// backup, the commit keeps it as the backup and the run starts again.
void read_source(const Compiled& c, const DocumentStore& store, const DocumentRead& read, Source& s) {
  s.file = read.mapped;
  std::string why;
  try {
    s.text = read.text;
    s.gz = is_gzip(s.text, store.gzip_by_name() ? store.subject : std::string_view());
    if (s.gz) s.text = s.owned = gunzip(s.text, store.subject);
    else if (s.file) s.release = [&s](std::size_t done) { s.file->release_before(done); };
    s.root = scan::scan(s.text, c.want, store.subject, s.release);
    why = unmet_requirement(c.requires_, s.text, s.root, store.subject);
    if (!why.empty() && !c.backup_invalid) fail_data(why);
  } catch (const Error& e) {
    if (s.file) s.file->check_whole();  // zeros past a new end are not a bad file to back up
    if (e.code() != Exit::data || !c.backup_invalid) throw;
    why = e.what();
  }
  s.from_document = why.empty();
  if (!s.from_document) s.backup_why = why;  // Atari's rule: keep the bad file and start again
}

// The document a missing or reset file starts from: --init, with the values
// --require asks for set where it lacks them, so that the new file meets
// its own --require next time (not reset again on every run).
void start_fresh(const Compiled& c, const json::Layout& layout, Source& s) {
  s.release = nullptr;
  s.file = nullptr;
  c.warn(c.init_redactions);
  s.owned = json::to_text(c.init, layout);
  std::vector<Edit> sets;
  std::vector<Path> paths;
  for (const auto& [path, value] : c.requires_) paths.push_back(path);
  scan::Node root = scan::scan(s.owned, textedit::wants_for({}, paths), "--init");
  for (const auto& [path, value] : c.requires_) {
    json::value have = textedit::value_in(s.owned, root, path);
    if (json::equal(have, value)) continue;
    if (!have.is_null())
      fail_usage(loopkit::format("--init holds {} at {}, but --require asks for {}", json::compact(have), path.text,
                                 json::compact(value)));
    sets.push_back(Edit{.op = Edit::set, .path = path, .operand = value, .source = "--require " + path.text});
  }
  if (!sets.empty()) {
    textedit::StringSink out;
    textedit::edit_text(s.owned, sets, out, "--init");
    s.owned = std::move(out.text);
  }
  s.text = s.owned;
  s.root = scan::scan(s.text, c.want, "--init");
}

// 2. --expect, on the document as found: the answer "no", or ""
std::string unmet_expectation(const Comparisons& expects, const Source& s, const std::string& subject) {
  for (const auto& [path, want] : expects) {
    json::value have = textedit::value_in(s.text, s.root, path);
    if (!json::equal(have, want))
      return loopkit::format("{}: {} is {}, expected {}", quoted(subject), path.text, json::compact(have),
                             json::compact(want));
  }
  return "";
}

// One try of the read-modify-write: what the document read becomes.
struct Attempt {
  DocumentRead read;
  Source src;
  std::optional<Planned> plan;  // keeps views of the compiled edits' text
  bool changed = false;         // something to commit
  bool streamed = false;        // the commit writes the plan straight out; else r.text is the new document
};

// 3. The result: streamed from the plan by the commit in the common case
// (big untouched slices never enter memory), else built in r.text (asked
// for, a filter, a new layout, gzip).
void make_result(const Compiled& c, const DocumentStore& store, Attempt& a, UpdateResult& r) {
  Source& src = a.src;
  const bool want_text = c.want_text || !store.stores();
  if (src.from_document && !a.plan->changed() && !c.layout) {
    if (want_text) r.text = std::string(src.text);
    if (src.file) src.file->check_whole();
    return;
  }
  a.changed = true;
  if (!want_text && !c.layout && !src.gz) {
    a.streamed = true;
    return;
  }
  textedit::StringSink edited;
  reading(src.file, [&] {
    if (a.plan->changed()) a.plan->write(edited);
    else edited.text = src.text;
  });
  if (c.layout) {
    textedit::StringSink restyled;
    textedit::restyle(edited.text, *c.layout, restyled);
    edited.text = std::move(restyled.text);
  }
  r.text = std::move(edited.text);
  if (src.from_document && r.text == src.text) a.changed = false;  // reformatted as it was: no write
}

// Reads, checks and plans one try; r.no or !a.changed end the run there.
void attempt(const Compiled& c, DocumentStore& store, Attempt& a, UpdateResult& r) {
  if (c.backup_invalid && !store.can_back_up())
    fail_usage(loopkit::format("--on-invalid backup needs a FILE, not {}", store.kind()));
  const DocumentRead& read = a.read = store.read();
  if (!read.exists && c.no_create) {
    r.no = store.missing();
    return;
  }
  if (read.exists) read_source(c, store, read, a.src);
  json::Layout layout = c.layout ? *c.layout : json::default_layout();
  if (a.src.from_document) layout = json::detect_layout(a.src.text);
  else start_fresh(c, layout, a.src);
  a.src.gz = a.src.gz || store.gzip_by_name();  // new, reset or plain: gzip where the name says so
  reading(
      a.src.file, [&] { r.no = unmet_expectation(c.expects, a.src, store.subject); }, true);
  if (!r.no.empty()) {
    if (a.src.file) a.src.file->check_whole();  // a "no" read from zeros is the shrink
    return;
  }
  c.warn(c.redactions);
  a.plan.emplace(a.src.text, layout, store.subject, std::move(a.src.root));
  reading(
      a.src.file, [&] { r.failed = a.plan->plan_edits(c.edits, c.line_ends, a.src.release); }, true);
  make_result(c, store, a, r);
}

DocumentStore::Commit commit(DocumentStore& store, Attempt& a, const UpdateResult& r, Fence* fence) {
  DocumentWrite w{.write = nullptr, .gzip = a.src.gz, .backup_why = a.src.backup_why};
  if (a.streamed)
    w.write = [&a](textedit::Sink& out) {
      reading(a.src.file, [&] { a.plan->write(out); });  // before the rename: never zeros for the file's end
    };
  else w.write = [&r](textedit::Sink& out) { out.write(r.text); };
  return store.commit(a.read, w, fence);
}

// The answer when the fence no longer holds: nothing written, nothing printed
UpdateResult lock_lost(const Fence& fence) {
  UpdateResult r;
  r.no = loopkit::format("{}: lock lost", quoted(fence.operand));
  return r;
}

// The read-modify-write, once for every store: tried again from a fresh
// read while another writer changed the document between read and commit.
UpdateResult update_document(const Compiled& c, DocumentStore& store, Fence* fence) {
  for (;;) {
    UpdateResult r;
    Attempt a;
    attempt(c, store, a, r);
    if (!r.no.empty()) return r;
    if (!a.changed) return fence && !store.fence_holds(*fence) ? lock_lost(*fence) : r;
    r.written = true;
    if (!store.stores()) return r;
    switch (commit(store, a, r, fence)) {
      case DocumentStore::Commit::done:
        if (a.src.backup_why && c.on_warning)
          c.on_warning(loopkit::format("{}; moved it to {} and started again", *a.src.backup_why, store.backup_name()));
        if (!c.want_text) r.text.clear();
        return r;
      case DocumentStore::Commit::lock_lost: return lock_lost(*fence);
      case DocumentStore::Commit::changed: break;
    }
  }
}

}  // namespace

UpdateResult update_state_file(const Update& u) {
  // FILE.backup beside FILE: a name that cannot be made is said before
  // anything is read (no hashed stand-in: a user looks for FILE.backup)
  if (u.backup_invalid && u.file != "-" && !etcd::is_etcd_url(u.file) && base_name(u.file).size() + 7 > longest_name)
    fail_usage(loopkit::format("--on-invalid backup: the name {} would be longer than {} bytes",
                               quoted(base_name(u.file) + ".backup"), longest_name));
  std::unique_ptr<DocumentStore> store =
      open_document_store(u.file, {.timeout = u.timeout, .mode = u.mode, .sync = u.sync});
  const Compiled compiled(u);
  if (u.fence.empty()) return update_document(compiled, *store, nullptr);
  Fence fence = open_fence(u.fence, u.file, u.fence_owner, u.timeout);
  return update_document(compiled, *store, &fence);
}

}  // namespace loopkit
