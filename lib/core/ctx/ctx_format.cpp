// The MDAN-AUTO v1.0 save format: the fresh document and its defaults, the
// checks of shape, version and text, and the phase, token and counter rules
// (man/ctx-save.1.scd and man/ctx-resume.1.scd describe them for users).
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <type_traits>

#include "core/ctx/ctx.hpp"
#include "core/ctx/ctx_doc.hpp"
#include "sys/base/error.hpp"
#include "sys/base/format.hpp"
#include "sys/gz/gz.hpp"

namespace loopkit::ctx {

namespace detail {

namespace {
// The object or array at doc.KEYS..., created (replacing anything else) on
// the way.
template <class Container>
Container& container_at(json::value& doc, std::initializer_list<std::string_view> keys) {
  json::value* v = &doc;
  for (auto k : keys) {
    if (!v->is_object()) *v = json::object();
    v = &v->get_object()[k];
  }
  if constexpr (std::is_same_v<Container, json::object>) {
    if (!v->is_object()) *v = json::object();
    return v->get_object();
  } else {
    if (!v->is_array()) *v = json::array();
    return v->get_array();
  }
}
}  // namespace

json::object& object_at(json::value& doc, std::initializer_list<std::string_view> keys) {
  return container_at<json::object>(doc, keys);
}

std::optional<double> number(const json::value* v) {
  if (!v || !json::is_numeric(*v)) return std::nullopt;
  if (json::is_number_literal(*v)) return json::nearest_double(json::literal_text(*v));
  // not to_number<double>(): its error path alone brings boost::system's
  // error category and exception into the tool (20 KB)
  if (v->is_int64()) return static_cast<double>(v->get_int64());
  if (v->is_uint64()) return static_cast<double>(v->get_uint64());
  return v->get_double();
}

std::pair<std::string_view, std::string_view> split_eq(std::string_view s, std::string_view option,
                                                       std::string_view form) {
  auto eq = s.find('=');
  if (eq == std::string_view::npos || eq == 0)
    fail_usage(loopkit::format("{}: expected {}: {}", option, form, quoted(s)));
  return {s.substr(0, eq), s.substr(eq + 1)};
}

json::value decode(std::string_view raw, const std::string& subject, bool& gz) {
  gz = is_gzip(raw, subject);
  if (gz) return json::parse(gunzip(raw, subject), subject);
  return json::parse(raw, subject);
}

void fill_defaults_warning(json::value& doc, const std::string& subject, const std::string& now_iso,
                           const std::function<void(const std::string&)>& warn) {
  for (const auto& f : fill_defaults(doc, now_iso))
    if (warn)
      warn(loopkit::format("{}: {} {}, using the default", quoted(subject), f.missing ? "missing" : "invalid",
                           quoted(f.path)));
}

}  // namespace detail

using namespace detail;

namespace {

std::string upper(std::string_view s) {
  std::string u(s);
  for (char& c : u)
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  return u;
}

json::array& array_at(json::value& doc, std::initializer_list<std::string_view> keys) {
  return container_at<json::array>(doc, keys);
}

json::value count_plus_one(const json::value* v) {
  if (auto n = number(v); n && json::is_number_literal(*v) && std::floor(*n) == *n && *n >= 0 && *n < 9e15)
    return static_cast<std::int64_t>(*n) + 1;
  if (v && v->is_int64()) return v->get_int64() + 1;
  if (v && v->is_uint64()) return v->get_uint64() + 1;
  if (v && v->is_double() && std::floor(v->get_double()) == v->get_double() && v->get_double() >= 0)
    return static_cast<std::int64_t>(v->get_double()) + 1;
  return std::int64_t{1};
}

double rounded(double x) { return std::round(x * 10000) / 10000; }

std::vector<std::string> phase_list(const json::value& doc) {
  std::vector<std::string> names;
  if (const json::value* s = at(doc, {"phases", "status"}); s && s->is_object())
    for (const auto& kv : s->get_object()) names.emplace_back(kv.key());
  if (names.empty())
    for (auto p : phase_names) names.emplace_back(p);
  return names;
}

bool same_kind(const json::value& a, const json::value& b) {
  if (json::is_numeric(a) || json::is_numeric(b)) return json::is_numeric(a) && json::is_numeric(b);
  return a.kind() == b.kind();
}

// Objects whose members are filled one by one; the others (status, tech
// stack, artifacts, quality gates) are the document's own when present.
bool fill_inside(const std::string& path) {
  return path == "project" || path == "phases" || path == "context" || path == "context.token_usage" ||
         path == "configuration" || path == "metadata";
}

void fill(json::object& obj, const json::object& defaults, const std::string& prefix, std::vector<Filled>& out) {
  for (const auto& kv : defaults) {
    std::string path = prefix + std::string(kv.key());
    json::value* have = obj.if_contains(kv.key());
    if (!have || !same_kind(*have, kv.value())) {
      out.push_back({path, have == nullptr});
      obj[kv.key()] = kv.value();
    } else if (kv.value().is_object() && fill_inside(path)) {
      fill(have->get_object(), kv.value().get_object(), path + ".", out);
    }
  }
}

// Whether every name and string in v is UTF-8: the pass that names the
// place of a bad one builds paths, so it runs only when there is one.
bool all_utf8(const json::value& v) {
  if (v.is_string()) return json::is_number_literal(v) || is_utf8(str(v));
  if (v.is_object()) {
    for (const auto& kv : v.get_object())
      if (!is_utf8(kv.key()) || !all_utf8(kv.value())) return false;
  } else if (v.is_array()) {
    for (const auto& e : v.get_array())
      if (!all_utf8(e)) return false;
  }
  return true;
}

void check_utf8_at(const json::value& v, const std::string& path) {
  auto bad = [&](const std::string& where) { fail_data("text that is not UTF-8 at " + where + ": not saved"); };
  if (v.is_string()) {
    // a number kept as written (1.0, 1e2) is marked by a byte UTF-8 never has
    if (!json::is_number_literal(v) && !is_utf8(str(v))) bad(path.empty() ? "." : path);
  } else if (v.is_object()) {
    for (const auto& kv : v.get_object()) {
      std::string p = path + "[" + json::quote(kv.key()) + "]";
      if (!is_utf8(kv.key())) bad(path.empty() ? "." : path);
      check_utf8_at(kv.value(), p);
    }
  } else if (v.is_array()) {
    for (std::size_t i = 0; i < v.get_array().size(); ++i)
      check_utf8_at(v.get_array()[i], path + loopkit::format("[{}]", i));
  }
}

// The kinds of the fields of a fresh save, as fill compares them ('s'
// string, 'n' number, 'b' bool, 'a' array, 'o' an object taken whole, 'i'
// an object filled member by member, whose fields follow in the table).
struct Shape {
  std::string_view name;
  char kind;
  std::initializer_list<Shape> inside = {};
};

bool has_kind(const json::value& v, char kind) {
  if (json::is_numeric(v)) return kind == 'n';
  switch (kind) {
    case 's': return v.is_string();
    case 'b': return v.is_bool();
    case 'a': return v.is_array();
    default: return v.is_object();
  }
}

bool has_fields(const json::object& o, std::initializer_list<Shape> fields) {
  for (const Shape& f : fields) {
    const json::value* v = o.if_contains(f.name);
    if (!v || !has_kind(*v, f.kind)) return false;
    if (f.kind == 'i' && !has_fields(v->get_object(), f.inside)) return false;
  }
  return true;
}

}  // namespace

// Whether fill_defaults has nothing to fill: every field of fresh_save there,
// of its kind (the unit tests hold the two to the same fields).
bool has_every_field(const json::value& doc) {
  static const std::initializer_list<Shape> project = {{"name", 's'}, {"description", 's'}, {"tech_stack", 'o'}};
  static const std::initializer_list<Shape> phases = {{"current", 's'}, {"completed", 'a'}, {"status", 'o'}};
  static const std::initializer_list<Shape> usage = {{"total", 'n'}, {"limit", 'n'}, {"percentage", 'n'}};
  static const std::initializer_list<Shape> context = {
      {"token_usage", 'i', usage}, {"conversation_history", 'a'}, {"artifacts", 'o'}, {"decisions", 'a'}};
  static const std::initializer_list<Shape> configuration = {{"token_limit", 'n'}, {"save_threshold", 'n'},
                                                             {"output_dir", 's'},  {"log_level", 's'},
                                                             {"fail_fast", 'b'},   {"debate_enabled", 'b'}};
  static const std::initializer_list<Shape> metadata = {
      {"created_at", 's'}, {"updated_at", 's'}, {"save_count", 'n'}, {"resume_count", 'n'}};
  static const std::initializer_list<Shape> save = {{"version", 's'},           {"mode", 's'},
                                                    {"timestamp", 's'},         {"project", 'i', project},
                                                    {"phases", 'i', phases},    {"context", 'i', context},
                                                    {"debates", 'a'},           {"errors", 'a'},
                                                    {"quality_gates", 'o'},     {"configuration", 'i', configuration},
                                                    {"metadata", 'i', metadata}};
  return doc.is_object() && has_fields(doc.get_object(), save);
}

json::value fresh_save(const std::string& now_iso) {
  json::object status, gates;
  for (auto p : phase_names) {
    status[p] = "pending";
    gates[p] = false;
  }
  return json::object{
      {"version", "1.0"},
      {"mode", "auto"},
      {"timestamp", now_iso},
      {"project", json::object{{"name", ""}, {"description", ""}, {"tech_stack", json::object()}}},
      {"phases", json::object{{"current", phase_names[0]}, {"completed", json::array()}, {"status", status}}},
      {"context",
       json::object{{"token_usage", json::object{{"total", 0}, {"limit", default_token_limit}, {"percentage", 0.0}}},
                    {"conversation_history", json::array()},
                    {"artifacts", json::object()},
                    {"decisions", json::array()}}},
      {"debates", json::array()},
      {"errors", json::array()},
      {"quality_gates", gates},
      {"configuration", json::object{{"token_limit", default_token_limit},
                                     {"save_threshold", 0.8},
                                     {"output_dir", "./mdan-auto-output"},
                                     {"log_level", "INFO"},
                                     {"fail_fast", true},
                                     {"debate_enabled", true}}},
      {"metadata",
       json::object{{"created_at", now_iso}, {"updated_at", now_iso}, {"save_count", 0}, {"resume_count", 0}}},
  };
}

void check_shape(const json::value& doc, std::string_view subject) {
  static constexpr std::string_view fields[] = {"version", "mode", "phases", "context", "metadata", "project"};
  if (!doc.is_object()) fail_data(quoted(subject) + ": not an MDAN-AUTO save (not a JSON object)");
  for (auto f : fields)
    if (doc.get_object().contains(f)) return;
  fail_data(quoted(subject) + ": not an MDAN-AUTO save (no version, phases or context)");
}

void check_version(const json::value& doc, std::string_view subject) {
  const json::value* v = member(doc, "version");
  if (!v) return;  // filled with a warning
  if (v->is_string() && (str(*v) == "1" || str(*v).substr(0, 2) == "1.")) return;
  if (auto n = number(v); n && *n >= 1 && *n < 2) return;
  fail_data(
      loopkit::format("{}: unsupported save version {} (this tool reads 1.x)", quoted(subject), json::compact(*v)));
}

std::vector<Filled> fill_defaults(json::value& doc, const std::string& now_iso) {
  if (has_every_field(doc)) return {};  // nearly every save: no defaults to build
  json::value defaults = fresh_save(now_iso);
  // Where the document says more than the fresh save's defaults, derive from it.
  const json::value* updated = at(doc, {"metadata", "updated_at"});
  const json::value* stamp = member(doc, "timestamp");
  if (updated && updated->is_string()) defaults.get_object()["timestamp"] = *updated;
  if (stamp && stamp->is_string()) {
    object_at(defaults, {"metadata"})["created_at"] = *stamp;
    object_at(defaults, {"metadata"})["updated_at"] = *stamp;
  }
  auto& usage = object_at(defaults, {"context", "token_usage"});
  const json::value* have_limit = at(doc, {"context", "token_usage", "limit"});
  const json::value* config_limit = at(doc, {"configuration", "token_limit"});
  auto limit = number(have_limit);
  if (limit) usage["limit"] = *have_limit;
  else if ((limit = number(config_limit))) usage["limit"] = *config_limit;
  auto total = number(at(doc, {"context", "token_usage", "total"}));
  if (total && limit && *limit > 0) usage["percentage"] = rounded(*total / *limit);
  if (const json::value* cur = at(doc, {"phases", "current"}); cur && cur->is_string()) {
    object_at(defaults, {"phases"})["current"] = *cur;
    json::value probe = defaults;
    try {
      set_phase(probe, str(*cur).empty() ? phase_names[0] : str(*cur));
      object_at(defaults, {"phases"})["status"] = *at(probe, {"phases", "status"});
      object_at(defaults, {"phases"})["completed"] = *at(probe, {"phases", "completed"});
    } catch (const Error&) {
      // a phase of its own: the default list says nothing about it
    }
  } else if (const json::value* done = at(doc, {"phases", "completed"}); done && done->is_array()) {
    auto& status = object_at(defaults, {"phases", "status"});
    for (const auto& p : done->get_array())
      if (p.is_string() && status.contains(str(p))) status[str(p)] = "complete";
  }
  std::vector<Filled> out;
  if (!doc.is_object()) doc = json::object();
  fill(doc.get_object(), defaults.get_object(), "", out);
  return out;
}

void set_phase(json::value& doc, std::string_view name) {
  auto names = phase_list(doc);
  auto it = std::find_if(names.begin(), names.end(), [&](const std::string& n) { return upper(n) == upper(name); });
  if (it == names.end()) {
    std::string all;
    for (const auto& n : names) all += (all.empty() ? "" : ", ") + n;
    fail_usage(loopkit::format("--phase: unknown phase {} (one of {})", quoted(name), all));
  }
  auto& phases = object_at(doc, {"phases"});
  phases["current"] = *it;
  json::array completed;
  json::object status;
  for (auto n = names.begin(); n != names.end(); ++n) {
    if (n < it) completed.emplace_back(*n);
    status[*n] = n < it ? "complete" : n == it ? "in_progress" : "pending";
  }
  phases["completed"] = std::move(completed);
  phases["status"] = std::move(status);
}

void set_tokens(json::value& doc, std::string_view spec) {
  auto parse = [&](std::string_view t) -> std::int64_t {
    std::string s(t);
    char* end = nullptr;
    errno = 0;
    long long v = std::strtoll(s.c_str(), &end, 10);
    if (s.empty() || errno || *end || v < 0 || s[0] == '-' || s[0] == '+')
      fail_usage(loopkit::format("--tokens: expected USED/LIMIT in whole tokens: {}", quoted(spec)));
    return v;
  };
  auto slash = spec.find('/');
  std::int64_t used = parse(spec.substr(0, slash));
  std::int64_t limit;
  if (slash != std::string_view::npos) {
    limit = parse(spec.substr(slash + 1));
  } else {
    auto l = number(at(doc, {"context", "token_usage", "limit"}));
    if (!l || *l <= 0) l = number(at(doc, {"configuration", "token_limit"}));
    limit = l && *l > 0 ? static_cast<std::int64_t>(*l) : default_token_limit;
  }
  if (limit <= 0) fail_usage(loopkit::format("--tokens: the limit must be above 0: {}", quoted(spec)));
  auto& usage = object_at(doc, {"context", "token_usage"});
  usage["total"] = used;
  usage["limit"] = limit;
  usage["percentage"] = rounded(static_cast<double>(used) / static_cast<double>(limit));
}

double token_ratio(const json::value& doc) {
  auto total = number(at(doc, {"context", "token_usage", "total"}));
  auto limit = number(at(doc, {"context", "token_usage", "limit"}));
  if (total && limit && *limit > 0) return *total / *limit;
  return number(at(doc, {"context", "token_usage", "percentage"})).value_or(0);
}

double save_threshold(const json::value& doc) {
  auto t = number(at(doc, {"configuration", "save_threshold"}));
  return t && *t >= 0 && *t <= 1 ? *t : 0.8;
}

void add_message(json::value& doc, std::string_view role_text, const std::string& now_iso) {
  auto [role, text] = split_eq(role_text, "--message", "ROLE=TEXT");
  if (!is_utf8(role_text)) fail_usage("--message: not UTF-8 text");
  array_at(doc, {"context", "conversation_history"})
      .emplace_back(json::object{{"role", role}, {"content", text}, {"timestamp", now_iso}});
}

void add_history(json::value& doc, std::string_view jsonl, std::string_view subject, const std::string& now_iso) {
  auto docs = json::parse_many(jsonl, subject);
  auto& history = array_at(doc, {"context", "conversation_history"});
  std::size_t n = 0;
  for (auto& m : docs) {
    ++n;
    if (!m.is_object()) fail_data(loopkit::format("{}: message {} is not a JSON object", quoted(subject), n));
    const json::value* ts = m.get_object().if_contains("timestamp");
    if (!ts || ts->is_null()) m.get_object()["timestamp"] = now_iso;
    history.push_back(std::move(m));
  }
}

void stamp_save(json::value& doc, const std::string& now_iso) {
  if (!doc.is_object()) doc = json::object();
  doc.get_object()["timestamp"] = now_iso;
  auto& meta = object_at(doc, {"metadata"});
  meta["updated_at"] = now_iso;
  if (const json::value* c = meta.if_contains("created_at"); !c || c->is_null()) meta["created_at"] = now_iso;
  meta["save_count"] = count_plus_one(meta.if_contains("save_count"));
}

void count_resume(json::value& doc) {
  auto& meta = object_at(doc, {"metadata"});
  meta["resume_count"] = count_plus_one(meta.if_contains("resume_count"));
}

std::string encode(const json::value& doc, bool gz) {
  std::string text = save_text(doc);
  return gz ? gzip(text) : text;
}

void check_utf8(const json::value& doc) {
  if (!all_utf8(doc)) check_utf8_at(doc, "");
}

}  // namespace loopkit::ctx
