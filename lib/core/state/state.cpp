// state-get's reads: values at paths (one scan of the text), jq expressions
// (query.cpp), on files, standard input and etcd keys.
#include "core/state/state.hpp"

#include <boost/json/monotonic_resource.hpp>

#include "core/scan/scan.hpp"
#include "sys/base/shellwords.hpp"
#include "core/edit/textedit.hpp"
#include "sys/base/error.hpp"
#include "sys/base/etcd_url.hpp"
#include "sys/base/fd.hpp"
#include "sys/fs/file.hpp"
#include "sys/base/format.hpp"
#include "sys/gz/gz.hpp"
#include "sys/fs/mapped.hpp"

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
    fail_data(loopkit::format("{}: {} has no keys", p.text, with_article(type_name(v))));
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
  bool any = false, last_truthy = false;
  try {
    query::evaluate(*item.expr, doc, [&](const json::value& v) {
      any = true;
      last_truthy = !v.is_null() && !(v.is_bool() && !v.get_bool());
      if (q.mode == Query::exists || q.mode == Query::truthy) return;
      if (v.is_null() && fallback) values.push_back(*fallback);
      else if (q.mode == Query::keys) keys_of(v, item.path, r.out, q.terminator);
      else values.push_back(render(v, q));
    });
  } catch (const Error& e) {
    // .history.bd-009 of an unseen bead: jq's error, a missing loopkit path
    // (the member is not there, or the evaluator had answered it): where a
    // missing path has an answer (a default, exit 1), that is the answer
    bool answers_missing = fallback || q.mode == Query::exists || q.mode == Query::truthy;
    if (e.code() != Exit::data || !query::spelled_path(*item.expr) || !answers_missing) throw;
    if (!fallback || q.mode == Query::exists || q.mode == Query::truthy) return r.missing.push_back(item.path.text);
    values.assign(1, *fallback);
    any = true;
  }
  if ((q.mode == Query::exists && !any) || (q.mode == Query::truthy && !last_truthy))
    r.missing.push_back(item.path.text);
  print_values(item, values, !(item.single && values.size() == 1), q, r, shell_out);
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
    if (q.mode == Query::truthy) {
      // jq -e: the last value decides; none, null and false are "no"
      char first = spans.empty() || !spans.back() ? 'n' : text[spans.back()->first];
      if (first == 'n' || first == 'f') r.missing.push_back(item.path.text);
      continue;
    }
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
        case Query::exists:
        case Query::truthy: break;
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
  if (!state_on_etcd)
    fail(Exit::system, loopkit::format("{}: this program is built without the etcd client", quoted(url)));
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
      r.no = loopkit::format("{}: no such key", quoted(q.file));
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
      r.no = loopkit::format("{}: no such file", quoted(q.file));
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

}  // namespace loopkit
