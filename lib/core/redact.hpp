// Secrets out of documents: API keys of the common providers, GitHub and
// Slack tokens, AWS keys, bearer tokens, private-key blocks and password
// assignments inside strings, and the whole value of members whose name says
// secret (password, api_key, token, ...).
#pragma once
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "core/json.hpp"

namespace loopkit {

inline constexpr const char* redacted_marker = "[REDACTED]";

using OnRedact = std::function<void(const std::string&)>;

// Replaces what looks secret inside v (recursively) with "[REDACTED]";
// calls on_redact with a short description of each replaced value (e.g.
// "GitHub token at .configuration.api_token"); returns the count.
std::size_t redact(json::value& v, const OnRedact& on_redact = {});
// The same for v as the value of member `name` at `path` (state-set --redact
// on the value an assignment sets: `api_key=xyz` is redacted by its name).
std::size_t redact_member(json::value& v, std::string_view name, std::string_view path,
                          const OnRedact& on_redact = {});
// The same for one string; returns how many secrets were replaced.
std::size_t redact_string(std::string& s);

// A member name that says its value is secret: password, passwd, passphrase,
// secret, api_key, apikey, access_key, secret_key, private_key, token and
// names ending in one of them after "_", "-", "." or a camelCase step
// (client_secret, dbPassword, access_token). token_usage, token_limit and
// max_tokens are not.
bool is_secret_name(std::string_view name);

}  // namespace loopkit
