// RFC 4648 base64 with padding, as etcd's JSON API carries keys and values.
#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace loopkit {

std::string base64_encode(std::string_view bytes);
// nullopt unless text is canonical padded base64 (what etcd sends)
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace loopkit
