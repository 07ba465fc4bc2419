// The JSON of etcd's v3 gateway: fields of its answers decoded (base64 keys
// and values, int64 as strings, zero values omitted) and requests encoded.
// internal to sys/etcd/etcd.cpp (which defines the types' constructors here too).
#pragma once
#include <boost/json.hpp>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sys/etcd/etcd_types.hpp"

namespace loopkit::etcd::codec {

// "malformed answer from etcd: what", exit 4
[[noreturn]] void malformed(const std::string& what);
int64_t int_field(const boost::json::object& o, std::string_view name);
bool bool_field(const boost::json::object& o, std::string_view name);
std::string bytes_field(const boost::json::object& o, std::string_view name);
const boost::json::object& object_field(const boost::json::object& o, std::string_view name);
const boost::json::array& array_field(const boost::json::object& o, std::string_view name);
KeyValue decode_kv(const boost::json::value& v);
std::vector<KeyValue> decode_kvs(const boost::json::object& o);
int64_t header_revision(const boost::json::object& o);
std::string number(int64_t n);
// Up to max bytes of the first line of a server's plain-text answer, other
// than printable ASCII shown as '?' (whatever answered may not be etcd, and
// a terminal is no place for its control bytes).
std::string printable_line(std::string_view body, std::size_t max);
void set_range(boost::json::object& body, const std::string& key, bool prefix);
boost::json::object encode_op(const Op& op);
boost::json::object encode_compare(const Compare& c);

}  // namespace loopkit::etcd::codec
