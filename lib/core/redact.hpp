// Secrets out of documents: API keys of the common providers, GitHub and
// Slack tokens, AWS keys, bearer tokens, private-key blocks and password
// assignments inside strings, and the whole value of members whose name says
// secret (password, api_key, token, ...).
#pragma once
#include <cstddef>
#include <functional>
#include <string>

#include "core/json.hpp"

namespace loopkit {

inline constexpr const char* redacted_marker = "[REDACTED]";

// Replaces what looks secret inside v (recursively) with "[REDACTED]";
// calls on_redact with a short description of each replaced value (e.g.
// "GitHub token at .configuration.api_token"); returns the count.
std::size_t redact(json::value& v, const std::function<void(const std::string&)>& on_redact = {});
// The same for one string; returns how many secrets were replaced.
std::size_t redact_string(std::string& s);

}  // namespace loopkit
