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
    docs = json::parse_many(*text, "standard input", arena);
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
          if (s) parsed.push_back(json::parse(lazy->text().substr(s->begin, s->end - s->begin), q.file, arena));
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

// A big file need not become a document: edits and checks that all name a
// path below the top need only the values on those paths. Everything else
// is a stand-in that the rewriter turns back into the original bytes.
bool sparse_ok(const Update& u) {
  if (u.layout) return false;
  auto below_top = [](const Path& p) { return !p.segments.empty(); };
  for (const auto& e : u.edits)
    if (!below_top(e.path)) return false;
  for (const auto& x : u.expects)
    if (!below_top(x.first)) return false;
  for (const auto& x : u.requires_)
    if (!below_top(x.first)) return false;
  return true;
}

struct Need {
  const Path* path;
  bool whole;  // checks compare the real value; an edit's target may stay a shell of stand-ins
};

json::value sparse_value(const JsonText& jt, std::size_t b, const std::vector<Need>& needs, std::size_t depth,
                         std::string_view subject) {
  bool whole = false;
  for (const auto& n : needs) whole |= n.whole && n.path->segments.size() == depth;
  char c = jt.at(b);
  if (whole || (c != '{' && c != '[')) {
    std::size_t e = jt.skip_value(b);
    return json::parse(jt.text().substr(b, e - b), subject);
  }
  const auto& its = jt.items(b);
  auto deeper = [&](auto matches) {
    std::vector<Need> d;
    for (const auto& n : needs)
      if (n.path->segments.size() > depth && matches(n.path->segments[depth])) d.push_back(n);
    return d;
  };
  if (c == '{') {
    json::object o;
    for (const auto& it : its) {
      std::string name = jt.key_name(it);
      auto d = deeper([&](const Segment& s) { return s.kind == Segment::key && s.name == name; });
      o[name] = d.empty() ? stand_in(it.value) : sparse_value(jt, it.value, d, depth + 1, subject);
    }
    return o;
  }
  json::array a;
  long long n = static_cast<long long>(its.size());
  a.reserve(its.size());
  for (long long i = 0; i < n; ++i) {
    auto d = deeper([&](const Segment& s) {
      return s.kind == Segment::elem && (s.index < 0 ? n + s.index : s.index) == i;
    });
    a.push_back(d.empty() ? stand_in(its[i].value) : sparse_value(jt, its[i].value, d, depth + 1, subject));
  }
  return a;
}

json::value sparse_document(const JsonText& jt, const Update& u) {
  std::vector<Need> needs;
  for (const auto& e : u.edits) needs.push_back({&e.path, false});
  for (const auto& x : u.expects) needs.push_back({&x.first, true});
  for (const auto& x : u.requires_) needs.push_back({&x.first, true});
  return sparse_value(jt, jt.root(), needs, 0, u.file);
}

}  // namespace

UpdateResult update_state_file(const Update& u) {
  LockedForReplace lk = lock_for_replace(u.file);
  json::value init = u.init ? *u.init : json::value(json::object());
  json::value before;
  std::string_view text;
  std::string unzipped;
  bool gz = false, faithful = false, sparse = false;
  std::optional<JsonText> walked;  // the old text, its items remembered for the rewrite
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
      sparse = sparse_ok(u);
      walked.emplace(text);
      before = sparse ? sparse_document(*walked, u) : json::parse(text, u.file);
      faithful = true;
      for (const auto& [path, want] : u.requires_) {
        const json::value* have = value_at(before, path);
        if (*have != want) {
          why = fmt::format("{}: {} is {}, not {}", quoted(u.file), path.text, json::compact(*have),
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
      write_file_atomic(backup, lk.contents.view(), {.mode = lk.mode, .sync = u.sync});
      if (u.on_warning) u.on_warning(fmt::format("{}; moved it to {} and started again", why, quoted(u.file + ".backup")));
      before = init;
      faithful = sparse = false;
      text = {};
    }
  }

  for (const auto& [path, want] : u.expects) {
    const json::value* have = value_at(before, path);
    if (*have != want)
      fail_no(fmt::format("{}: {} is {}, expected {}", quoted(u.file), path.text, json::compact(*have),
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
      apply(after, clean);
    } else {
      apply(after, e);
    }
  }

  UpdateResult r;
  bool changed = !faithful || after != before || u.layout;
  if (!changed && lk.exists) {
    r.text = std::string(text);
    return r;
  }
  if (faithful && !u.layout) {
    r.text = rewrite_faithfully(*walked, before, after, json::detect_layout(text));
  } else if (faithful) {
    r.text = reformat(text, before, after, *u.layout);
  } else {
    r.text = json::to_text(after, u.layout ? *u.layout : json::default_layout());
  }
  write_file_atomic(u.file, gz ? gzip(r.text) : r.text,
                    {.mode = lk.exists ? lk.mode : static_cast<mode_t>(u.mode), .sync = u.sync});
  r.written = true;
  return r;  // the lock goes with lk, after the rename
}

}  // namespace loopkit
