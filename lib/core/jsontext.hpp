// Walking JSON text without building a document: the byte spans of values,
// members and elements. The text must already be valid (see validate).
#pragma once
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace loopkit {

// Checks that text is exactly one JSON document, allocating nothing; the
// same errors as json::parse (exit 3).
void validate_json(std::string_view text, std::string_view subject);

class JsonText {
public:
  struct Item {          // a member or an element
    std::size_t prefix;  // what precedes it: whitespace, and a comma for all but the first
    std::size_t key;     // start of the key literal (members); == value for elements
    std::size_t value;   // start of the value
    std::size_t end;     // end of the value
  };

  explicit JsonText(std::string_view text) : t_(text) {}
  std::string_view text() const { return t_; }

  std::size_t ws(std::size_t p) const;
  std::size_t skip_string(std::size_t p) const;  // p at '"'
  std::size_t skip_value(std::size_t p) const;
  std::size_t root() const { return ws(0); }
  char at(std::size_t p) const { return t_[p]; }

  // the items of the object or array starting at b (remembered: a big
  // array is walked once however often its items are asked for)
  const std::vector<Item>& items(std::size_t b) const;
  std::string key_name(const Item& it) const;
  // the member of the object at b named name, or nullopt
  std::optional<Item> member(std::size_t b, std::string_view name) const;

private:
  struct Walk {
    std::vector<Item> items;
    std::size_t end = 0;
  };
  // Walks the container at b into w; with children, the items of the
  // containers directly inside are remembered too, found on the same pass.
  void walk(std::size_t b, Walk& w, bool children) const;

  std::string_view t_;
  mutable std::map<std::size_t, Walk> walks_;
};

}  // namespace loopkit
