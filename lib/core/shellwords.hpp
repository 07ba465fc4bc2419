// Shell-style words: splitting a line as sh would (quotes, backslashes, no
// expansions) and quoting a value so that eval gives it back unchanged.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace loopkit {

std::vector<std::string> split_shell_words(std::string_view line);  // unbalanced quote: exit 2
std::string shell_quote(std::string_view value);                    // running, 'it'\''s', ''
// NAME made safe for sh: characters outside [A-Za-z0-9_] become '_'
std::string shell_name(std::string_view name);

}  // namespace loopkit
