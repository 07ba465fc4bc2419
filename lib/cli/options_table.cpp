// The declarations of the options a line names (see options.hpp): run
// once per option named, not per option declared, so built for size (-Os,
// CMakeLists.txt); which are named is options.cpp's, on every call's path.
#include <stdexcept>
#include <string>

#include "cli/options.hpp"

namespace loopkit::cli {

namespace {
// "w,wait" -> "--wait": the name an option's messages give, its first long one
std::string long_name(const Names& names) {
  return names.first_long.empty() ? "-" + std::string(1, names.letter) : "--" + std::string(names.first_long);
}
}  // namespace

Options::Spec& Options::add(const Names& names, std::string_view help, std::string_view arg, Set set) {
  Spec& s = specs_.emplace_back();
  s.names = names.all;
  s.letter = names.letter;
  s.first_long = names.first_long;
  s.help = help;
  s.arg = arg;
  s.set = std::move(set);
  return s;
}

Options& Options::flag_named(const Names& names, std::string_view help, bool& field) {
  if (named(names)) add(names, help, "", nullptr).flag = &field;
  return *this;
}

Options& Options::flag_named(const Names& names, std::string_view help, std::function<void()> on) {
  if (named(names))
    add(names, help, "", [on = std::move(on), name = long_name(names)](const std::string& t) {
      if (flag_value(t, name)) on();
    });
  return *this;
}

Options& Options::value_named(const Names& names, std::string_view help, std::string_view arg, Set set) {
  if (named(names)) add(names, help, arg.empty() ? std::string_view("ARG") : arg, std::move(set));
  return *this;
}

Options& Options::text_named(const Names& names, std::string_view help, std::string_view arg, std::string& field) {
  return value(names, help, arg, [&field](const std::string& t) { field = t; });
}

Options& Options::text_named(const Names& names, std::string_view help, std::string_view arg,
                             std::optional<std::string>& field) {
  return value(names, help, arg, [&field](const std::string& t) { field = t; });
}

Options& Options::number_named(const Names& names, std::string_view help, std::string_view arg, double& field,
                               double min, double max) {
  if (!named(names)) return *this;  // long_name allocates
  return value(names, help, arg, [&field, name = long_name(names), min, max](const std::string& t) {
    field = cli::number(t, name, min, max);
  });
}

Options& Options::number_named(const Names& names, std::string_view help, std::string_view arg,
                               std::optional<double>& field, double min, double max) {
  if (!named(names)) return *this;  // long_name allocates
  return value(names, help, arg, [&field, name = long_name(names), min, max](const std::string& t) {
    field = cli::number(t, name, min, max);
  });
}

Options& Options::integer_named(const Names& names, std::string_view help, std::string_view arg, long long& field,
                                long long min, long long max) {
  if (!named(names)) return *this;  // long_name allocates
  return value(names, help, arg, [&field, name = long_name(names), min, max](const std::string& t) {
    field = cli::integer(t, name, min, max);
  });
}

Options& Options::integer_named(const Names& names, std::string_view help, std::string_view arg,
                                std::optional<long long>& field, long long min, long long max) {
  if (!named(names)) return *this;  // long_name allocates
  return value(names, help, arg, [&field, name = long_name(names), min, max](const std::string& t) {
    field = cli::integer(t, name, min, max);
  });
}

Options& Options::optional_named(const Names& names, std::string_view help, std::string_view arg,
                                 std::string_view implied, bool (*is_value)(std::string_view), Set set) {
  if (!named(names)) return *this;
  Spec& s = add(names, help, arg, std::move(set));
  s.implied = implied;
  s.is_value = is_value;
  return *this;
}

Options& Options::pair_named(const Names& name, std::string_view help, std::string_view arg, Set2 set) {
  if (!named(name)) return *this;
  Spec& s = add(name, help, arg, nullptr);
  s.is_pair = true;
  s.set2 = std::move(set);
  return *this;
}

namespace {
// A name of one letter as a view that outlives the table, as every name
// must (a view of the parameter would dangle once alias returns).
std::string_view letter_name(char letter) {
  static constexpr char letters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  const char* at = std::char_traits<char>::find(letters, sizeof letters - 1, letter);
  if (!at) throw std::logic_error("alias: not a letter or digit");
  return {at, 1};
}
}  // namespace

Options& Options::alias(char letter, std::string_view help, bool& field) {
  const Names name = Names::one_letter(letter_name(letter));
  if (named(name)) flag(name, help, field).specs_.back().hidden = true;
  return *this;
}

Options& Options::hidden_named(const Names& name, std::string_view help, std::optional<std::string>& field) {
  if (named(name)) text(name, help, "WORD", field).specs_.back().hidden = true;
  return *this;
}

Options& Options::hidden_flag_named(const Names& name, std::string_view help, bool& field) {
  if (named(name)) flag(name, help, field).specs_.back().hidden = true;
  return *this;
}

Options& Options::unbound_named(const Names& names, std::string_view help, std::string_view arg) {
  // the value is read back from the parse's items, in their order
  if (named(names)) add(names, help, arg, [](const std::string&) {});
  return *this;
}

}  // namespace loopkit::cli
