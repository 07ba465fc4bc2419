// Shell-style words: splitting a line as bash would (quotes, backslashes, no
// expansions) and quoting a value so that eval gives it back unchanged.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace loopkit {

// The words bash reads in the line, quotes removed: '...', "...", $'...'
// (its escapes: \n, \t, \x41, \u00e9, \101, ...), $"..." and backslashes,
// so that printf %q's output reads back as its input; '#' starting a word
// starts a comment. What bash would read another way (an expansion: $NAME,
// ${, $(, `, a leading ~, {a,b}; an operator: ; & | < > ( ); a final
// backslash; an unbalanced quote; a NUL byte) is exit 2, never misread.
// Glob characters are kept, as bash keeps them when nothing matches.
std::vector<std::string> split_shell_words(std::string_view line);
std::string shell_quote(std::string_view value);  // running, 'it'\''s', ''
// NAME made safe for sh: characters outside [A-Za-z0-9_] become '_'
std::string shell_name(std::string_view name);

}  // namespace loopkit
