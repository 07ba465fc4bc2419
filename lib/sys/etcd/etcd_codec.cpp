#include "sys/etcd/etcd_codec.hpp"

#include <charconv>

#include "sys/etcd/base64.hpp"
#include "sys/base/error.hpp"

namespace loopkit::etcd::codec {

namespace json = boost::json;

[[noreturn]] void malformed(const std::string& what) { fail(Exit::system, "malformed answer from etcd: " + what); }

int64_t int_field(const json::object& o, std::string_view name) {
  const json::value* v = o.if_contains(name);
  if (!v) return 0;  // the gateway omits zero values
  if (v->is_int64()) return v->get_int64();
  if (v->is_uint64()) return static_cast<int64_t>(v->get_uint64());
  if (!v->is_string()) malformed(std::string(name) + " is not a number");
  const json::string& s = v->get_string();
  int64_t n = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
  if (ec != std::errc() || end != s.data() + s.size()) malformed(std::string(name) + " is not a number");
  return n;
}

bool bool_field(const json::object& o, std::string_view name) {
  const json::value* v = o.if_contains(name);
  return v && v->is_bool() && v->get_bool();
}

std::string bytes_field(const json::object& o, std::string_view name) {
  const json::value* v = o.if_contains(name);
  if (!v) return {};
  if (!v->is_string()) malformed(std::string(name) + " is not base64");
  auto bytes = base64_decode(std::string_view(v->get_string().data(), v->get_string().size()));
  if (!bytes) malformed(std::string(name) + " is not base64");
  return *bytes;
}

const json::object& object_field(const json::object& o, std::string_view name) {
  static const json::object empty;
  const json::value* v = o.if_contains(name);
  if (!v) return empty;
  if (!v->is_object()) malformed(std::string(name) + " is not an object");
  return v->get_object();
}

const json::array& array_field(const json::object& o, std::string_view name) {
  static const json::array empty;
  const json::value* v = o.if_contains(name);
  if (!v) return empty;
  if (!v->is_array()) malformed(std::string(name) + " is not an array");
  return v->get_array();
}

KeyValue decode_kv(const json::value& v) {
  if (!v.is_object()) malformed("a key is not an object");
  const json::object& o = v.get_object();
  KeyValue kv;
  kv.key = bytes_field(o, "key");
  kv.value = bytes_field(o, "value");
  kv.create_revision = int_field(o, "create_revision");
  kv.mod_revision = int_field(o, "mod_revision");
  kv.version = int_field(o, "version");
  kv.lease = int_field(o, "lease");
  return kv;
}

std::vector<KeyValue> decode_kvs(const json::object& o) {
  std::vector<KeyValue> out;
  for (const json::value& v : array_field(o, "kvs")) out.push_back(decode_kv(v));
  return out;
}

int64_t header_revision(const json::object& o) { return int_field(object_field(o, "header"), "revision"); }

std::string number(int64_t n) { return std::to_string(n); }

std::string printable_line(std::string_view body, std::size_t max) {
  std::string out;
  std::string_view line = body.substr(0, body.find('\n'));
  if (line.ends_with('\r')) line.remove_suffix(1);
  for (char c : line) {
    if (out.size() == max) return out + "...";
    out += c >= ' ' && c <= '~' ? c : '?';
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

void set_range(json::object& body, const std::string& key, bool prefix) {
  body["key"] = base64_encode(key);
  if (prefix) body["range_end"] = base64_encode(prefix_range_end(key));
}

json::object encode_op(const Op& op) {
  json::object body;
  switch (op.kind) {
    case Op::put:
      body["key"] = base64_encode(op.key);
      body["value"] = base64_encode(op.value);
      if (op.lease) body["lease"] = number(op.lease);
      return {{"request_put", std::move(body)}};
    case Op::remove: set_range(body, op.key, op.prefix); return {{"request_delete_range", std::move(body)}};
    case Op::range: set_range(body, op.key, op.prefix); return {{"request_range", std::move(body)}};
  }
  return {};
}

json::object encode_compare(const Compare& c) {
  static const char* const targets[] = {"VERSION", "CREATE", "MOD", "VALUE", "LEASE"};
  static const char* const fields[] = {"version", "create_revision", "mod_revision", "value", "lease"};
  static const char* const results[] = {"EQUAL", "NOT_EQUAL", "GREATER", "LESS"};
  json::object o;
  o["key"] = base64_encode(c.key);
  if (!c.range_end.empty()) o["range_end"] = base64_encode(c.range_end);
  o["target"] = targets[static_cast<int>(c.field)];
  o["result"] = results[static_cast<int>(c.relation)];
  if (c.field == Field::value) {
    o["value"] = base64_encode(c.value);
  } else {
    o[fields[static_cast<int>(c.field)]] = number(c.number);
  }
  return o;
}
}  // namespace loopkit::etcd::codec

namespace loopkit::etcd {

std::string prefix_range_end(const std::string& prefix) {
  std::string end = prefix;
  while (!end.empty()) {
    if (static_cast<unsigned char>(end.back()) < 0xff) {
      end.back() = static_cast<char>(static_cast<unsigned char>(end.back()) + 1);
      return end;
    }
    end.pop_back();
  }
  return std::string(1, '\0');  // etcd: every key from the start key on
}

Compare Compare::of(std::string key, Field field, Relation relation, int64_t number) {
  return Compare{std::move(key), field, relation, number, {}, {}};
}
Compare Compare::every_key_of(std::string prefix, Field field, Relation relation, int64_t number) {
  Compare c = of(std::move(prefix), field, relation, number);
  c.range_end = prefix_range_end(c.key);
  return c;
}
Compare Compare::value_is(std::string key, Relation relation, std::string value) {
  return Compare{std::move(key), Field::value, relation, 0, std::move(value), {}};
}
Compare Compare::absent(std::string key) { return of(std::move(key), Field::create_revision, Relation::equal, 0); }

Op Op::put_key(std::string key, std::string value, int64_t lease) {
  return Op{put, std::move(key), std::move(value), lease, false};
}
Op Op::remove_key(std::string key, bool prefix) { return Op{remove, std::move(key), {}, 0, prefix}; }
Op Op::range_key(std::string key, bool prefix) { return Op{range, std::move(key), {}, 0, prefix}; }

}  // namespace loopkit::etcd
