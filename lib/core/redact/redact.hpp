// Secrets out of documents: API keys and tokens of the common providers by
// their prefix or shape, webhook URLs, bearer tokens, JSON web tokens,
// private-key blocks, passwords in URLs and on command lines, NAME=VALUE
// assignments inside strings, and every string and number under a member
// whose name says secret (password, api_key, token, ...). man/ctx-save.1.scd
// (REDACTION) lists them all.
#pragma once
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "core/json/json.hpp"

namespace loopkit {

inline constexpr const char* redacted_marker = "[REDACTED]";

using OnRedact = std::function<void(const std::string&)>;

// Replaces what looks secret inside v (recursively) with "[REDACTED]"; under
// a secret name every string and number goes, however deep, and the shape
// (members, array lengths, true/false/null) stays;
// calls on_redact with a short description of each replaced value (e.g.
// "GitHub token at .configuration.api_token"); returns the count.
std::size_t redact(json::value& v, const OnRedact& on_redact = {});
// The same for v as the value of member `name` at `path` (state-set --redact
// on the value an assignment sets: `api_key=xyz` is redacted by its name).
std::size_t redact_member(json::value& v, std::string_view name, std::string_view path, const OnRedact& on_redact = {});
// The same for one string; returns how many secrets were replaced.
std::size_t redact_string(std::string& s);

// A member name that says its value is secret: password, passwd, secret,
// api_key, access_key, private_key, token, authorization, credentials, ...
// and names ending in one of them after "_", "-", "." or a camelCase step
// (client_secret, dbPassword, access_token, AccountKey); PGPASSWORD,
// DB_PASS, MYSQL_PWD (never PWD alone). token_usage, token_limit and
// max_tokens are not.
bool is_secret_name(std::string_view name);

}  // namespace loopkit
