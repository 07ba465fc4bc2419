#include "core/state.hpp"

#include <boost/json/monotonic_resource.hpp>
#include <fmt/format.h>

#include "core/edit.hpp"
#include "core/jsontext.hpp"
#include "core/redact.hpp"
#include "core/shellwords.hpp"
#include "sys/error.hpp"
#include "sys/file.hpp"
#include "sys/gz.hpp"

namespace loopkit {

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

}  // namespace

QueryResult query_state(const Query& q) {
  QueryResult r;
  auto file = view_file_if_exists(q.file);
  std::optional<std::string_view> text;
  if (file) text = file->view();
  // a read-only run never frees: an arena makes parsing a big file cheaper
  boost::json::storage_ptr arena = boost::json::make_shared_resource<boost::json::monotonic_resource>();
  std::vector<json::value> docs;
  // A named file is one document, read lazily: validated without building
  // it, then only the values asked for are parsed. Stdin may carry several
  // (JSON lines: lock-status --json | state-get - pid).
  std::optional<JsonText> lazy;
  if (!text) {
    docs.emplace_back(json::object());  // a missing file reads as {}
  } else if (q.file == "-") {
    docs = json::parse_many(*text, "standard input", arena, json::Literals::big_integers);
  } else {
    validate_json(*text, q.file);
    lazy.emplace(*text);
    docs.emplace_back();  // one pass over the items below
  }
  std::string shell_out;
  std::vector<json::value> parsed;
  for (const auto& doc : docs) {
    for (const auto& item : q.items) {
      std::vector<const json::value*> found;
      if (lazy) {
        auto spans = lookup_spans(*lazy, item.path);
        parsed.clear();
        parsed.reserve(spans.size());
        for (const auto& s : spans) {
          if (s)
            parsed.push_back(json::parse(lazy->text().substr(s->begin, s->end - s->begin), q.file, arena,
                                         json::Literals::big_integers));
          found.push_back(s ? &parsed.back() : nullptr);
        }
      } else {
        found = lookup(doc, item.path);
      }
      std::vector<std::string> values;
      bool missing_here = false;
      for (const json::value* v : found) {
        if (!v || (v->is_null() && q.default_value && q.mode != Query::exists)) {
          if (q.default_value && q.mode != Query::exists) {
            values.push_back(*q.default_value);
            continue;
          }
          missing_here = true;
          continue;
        }
        switch (q.mode) {
          case Query::exists: break;
          case Query::keys: keys_of(*v, item.path, r.out, q.terminator); break;
          case Query::values: values.push_back(render(*v, q)); break;
          case Query::shell: values.push_back(render(*v, q)); break;
        }
      }
      if (missing_here || (found.empty() && !item.path.has_all())) {
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
  // eval must never see half an answer
  if (q.mode == Query::shell && r.missing.empty()) r.out = std::move(shell_out);
  return r;
}

namespace {

// The value at a path of the file as a reader reads it (missing, or through
// a scalar: null), for --expect and --require; only that value is parsed.
json::value value_in_text(const JsonText& jt, const Path& p, std::string_view subject) {
  try {
    auto spans = lookup_spans(jt, p);
    if (spans.size() == 1 && spans[0])
      return json::parse(jt.text().substr(spans[0]->begin, spans[0]->end - spans[0]->begin), subject, {},
                         json::Literals::big_integers);
  } catch (const Error& e) {
    if (e.code() != Exit::data) throw;
  }
  return nullptr;
}

// The same in a document built from --init, whose numbers keep their text.
json::value value_in_document(const json::value& doc, const Path& p) {
  return json::parse(json::compact(*value_at(doc, p)), "value", {}, json::Literals::big_integers);
}

}  // namespace

UpdateResult update_state_file(const Update& u) {
  LockedForReplace lk = lock_for_replace(u.file);
  json::value init = u.init ? *u.init : json::value(json::object());
  json::value before;
  std::string_view text;
  std::string unzipped;
  bool gz = false, faithful = false;
  // The old text, its items remembered. The document starts as one stand-in
  // for it; the edits open only the values on their way (see assign.hpp),
  // and the rewrite keeps the bytes of everything else.
  std::optional<JsonText> walked;
  if (!lk.exists) {
    if (u.no_create) fail_no(fmt::format("{}: no such file", quoted(u.file)));
    before = init;
  } else {
    text = lk.contents.view();
    bool reset = false;
    std::string why;
    try {
      if (is_gzip(text)) {
        gz = true;
        unzipped = gunzip(text, u.file);
        text = unzipped;
      }
      validate_json(text, u.file);
      walked.emplace(text);
      before = stand_in(walked->root());
      faithful = true;
      for (const auto& [path, want] : u.requires_) {
        json::value have = value_in_text(*walked, path, u.file);
        if (have != want) {
          why = fmt::format("{}: {} is {}, not {}", quoted(u.file), path.text, json::compact(have),
                            json::compact(want));
          if (!u.backup_invalid) fail_data(why);
          reset = true;
          break;
        }
      }
    } catch (const Error& e) {
      if (e.code() != Exit::data || !u.backup_invalid) throw;
      why = e.what();
      reset = true;
    }
    if (reset) {
      // Atari's rule: keep the bad file as FILE.backup and start again
      std::string target = resolve_symlinks(u.file);
      std::string backup = target + ".backup";
      // never through a symlink planted at FILE.backup (refused, exit 4)
      write_file_atomic(backup, lk.contents.view(), {.mode = lk.mode, .sync = u.sync, .follow_symlink = false});
      if (u.on_warning) u.on_warning(fmt::format("{}; moved it to {} and started again", why, quoted(u.file + ".backup")));
      before = init;
      faithful = false;
      text = {};
    }
  }

  for (const auto& [path, want] : u.expects) {
    json::value have = faithful ? value_in_text(*walked, path, u.file) : value_in_document(before, path);
    if (have != want)
      fail_no(fmt::format("{}: {} is {}, expected {}", quoted(u.file), path.text, json::compact(have),
                          json::compact(want)));
  }

  json::value after = before;
  for (const Edit& e : u.edits) {
    if (u.redact && e.op != Edit::remove) {
      Edit clean = e;
      // the message names where the secret went, never the secret
      redact_member(clean.operand, e.path.last_name(), e.path.text, [&](const std::string& what) {
        if (u.on_warning) u.on_warning("redacted " + what);
      });
      if (faithful) apply(after, clean, *walked);
      else apply(after, clean);
    } else if (faithful) {
      apply(after, e, *walked);
    } else {
      apply(after, e);
    }
  }

  UpdateResult r;
  if (faithful && after == before && !u.layout) {
    r.text = std::string(text);
    return r;
  }
  if (faithful && !u.layout) {
    r.text = rewrite_faithfully(*walked, before, after, json::detect_layout(text));
  } else if (faithful) {
    r.text = reformat(*walked, before, after, *u.layout);
  } else {
    r.text = json::to_text(after, u.layout ? *u.layout : json::default_layout());
  }
  // an edit that opened values but changed none leaves the same bytes: no write
  if (faithful && r.text == text) return r;
  write_file_atomic(u.file, gz ? gzip(r.text) : r.text,
                    {.mode = lk.exists ? lk.mode : static_cast<mode_t>(u.mode), .sync = u.sync});
  r.written = true;
  return r;  // the lock goes with lk, after the rename
}

}  // namespace loopkit
