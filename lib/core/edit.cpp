#include "core/edit.hpp"

#include <charconv>
#include <fmt/format.h>
#include <random>
#include <unordered_map>
#include <string>
#include <vector>

#include "core/jsontext.hpp"

namespace loopkit {

namespace {

using Item = JsonText::Item;

// A prefix no data can hold by chance: NUL, then a per-run random tag.
const std::string& stand_in_prefix() {
  static const std::string prefix = [] {
    std::random_device rd;
    return fmt::format("{}lk{:08x}{:08x}:", '\0', rd(), rd());
  }();
  return prefix;
}

class Rewriter {
public:
  Rewriter(const JsonText& jt, const json::Layout& layout, bool reformat)
      : t_(jt.text()), jt_(jt), layout_(layout), reformat_(reformat) {}

  std::string run(const json::value& before, const json::value& after) {
    std::size_t b = ws(0);
    std::size_t e = skip_value(b);
    std::string out;
    out.reserve(t_.size() + 256);
    if (reformat_) {
      emit(out, b, e, before, after, "", layout_);
      if (layout_.final_newline) out += '\n';
    } else {
      out.append(t_.substr(0, b));  // whatever surrounds the document stays
      emit(out, b, e, before, after, "", layout_);
      out.append(t_.substr(e));
    }
    return out;
  }

private:
  std::string_view t_;
  const JsonText& jt_;
  json::Layout layout_;
  bool reformat_;

  std::size_t ws(std::size_t p) const { return jt_.ws(p); }
  std::size_t skip_string(std::size_t p) const { return jt_.skip_string(p); }
  std::size_t skip_value(std::size_t p) const { return jt_.skip_value(p); }

  // a value the edits produced; stand-ins in it are the bytes they stand for
  void write(std::string& out, const json::value& v, const json::Layout& style, const std::string& indent) const {
    json::write_value(out, v, style, indent, &Rewriter::write_stand_in, this);
  }
  static bool write_stand_in(std::string& out, const json::value& v, const void* self) {
    if (!is_stand_in(v)) return false;
    const auto* r = static_cast<const Rewriter*>(self);
    std::size_t b = stand_in_offset(v);
    // (the indent is unknown here: a reformatted stand-in starts a fresh one)
    if (r->reformat_) r->reindent(out, b, "");
    else out.append(r->t_.substr(b, r->jt_.skip_value(b) - b));
    return true;
  }

  // the indentation of the line an item starts on, from its prefix: its
  // whitespace only (in a comma-first layout the line goes on with ",")
  std::string indent_of(const Item& it, const std::string& fallback) const {
    std::string_view pre = t_.substr(it.prefix, it.key - it.prefix);
    auto nl = pre.rfind('\n');
    if (nl == std::string_view::npos) return fallback;
    std::string_view line = pre.substr(nl + 1);
    return std::string(line.substr(0, line.find_first_not_of(" \t\r")));
  }

  // A comma-first layout ("  1\n  ,2"): what starts a later item's line,
  // comma included, or "" when commas end the lines.
  std::string comma_first_lead(const std::vector<Item>& its) const {
    if (reformat_ || its.size() < 2) return "";
    std::string_view pre = t_.substr(its.back().prefix, its.back().key - its.back().prefix);
    auto nl = pre.rfind('\n');
    if (nl == std::string_view::npos || pre.substr(nl).find(',') == std::string_view::npos) return "";
    return std::string(pre.substr(nl));
  }

  // The style a container's new items take: that of its existing items.
  json::Layout local_layout(const std::vector<Item>& its, bool members) const {
    json::Layout l = layout_;
    if (reformat_) return l;
    if (its.empty()) {
      // an empty container on one line inside a pretty document stays pretty
      return l;
    }
    std::string_view first = t_.substr(its[0].prefix, its[0].key - its[0].prefix);
    l.pretty = first.find('\n') != std::string_view::npos;
    if (!l.pretty) {
      if (its.size() > 1) {
        std::string_view sep = t_.substr(its[1].prefix, its[1].key - its[1].prefix);
        l.space_after_comma = sep.find(' ') != std::string_view::npos;
      }
    }
    if (members) {
      std::size_t kend = skip_string(its[0].key);
      std::string_view colon = t_.substr(kend, its[0].value - kend);
      l.space_after_colon = colon.find(' ') != std::string_view::npos || colon.find('\t') != std::string_view::npos;
    }
    // one item on one line shows no comma: guess that it spaces like its colon
    if (!l.pretty && its.size() == 1) l.space_after_comma = members ? l.space_after_colon : layout_.space_after_colon;
    return l;
  }

  std::string separator(const json::Layout& l, bool first, const std::string& inner) const {
    std::string s = first ? "" : ",";
    if (l.pretty) {
      s += '\n';
      s += inner;
    } else if (!first && l.space_after_comma) {
      s += ' ';
    }
    return s;
  }

  void emit(std::string& out, std::size_t b, std::size_t e, const json::value& before, const json::value& after,
            const std::string& indent, const json::Layout& style) {
    if (before == after) {
      if (reformat_) reindent(out, b, indent);
      else out.append(t_.substr(b, e - b));
      return;
    }
    if (is_stand_in(before) && (after.is_object() || after.is_array()) &&
        t_[b] == (after.is_object() ? '{' : '[')) {
      // the edits opened this container: compare their shell with its items
      json::value shell = open_stand_in(jt_, before);
      return emit_container(out, b, e, shell, after, indent, after.is_object());
    }
    if (before.is_object() && after.is_object()) return emit_container(out, b, e, before, after, indent, true);
    if (before.is_array() && after.is_array()) return emit_container(out, b, e, before, after, indent, false);
    write(out, after, style, indent);
  }

  void emit_container(std::string& out, std::size_t b, std::size_t e, const json::value& before,
                      const json::value& after, const std::string& indent, bool members) {
    const auto& its = jt_.items(b);
    json::Layout l = local_layout(its, members);
    std::string inner_default = l.pretty ? indent + l.indent : indent;
    std::string inner = (!reformat_ && !its.empty()) ? indent_of(its.back(), inner_default) : inner_default;
    // a member's value continues its key's line: nested lines indent from the key's
    std::size_t written = 0;
    out += members ? '{' : '[';

    auto put_old = [&](const Item& it, std::size_t index, const json::value& old_v, const json::value& new_v) {
      std::string my_indent = reformat_ ? inner : indent_of(it, inner);
      if (reformat_) {
        out += separator(l, written == 0, inner);
      } else if (written == 0) {
        // the first item's leading whitespace, wherever the item came from
        out.append(t_.substr(its[0].prefix, its[0].key - its[0].prefix));
      } else if (index == 0) {
        out += separator(l, false, inner);
      } else {
        out.append(t_.substr(it.prefix, it.key - it.prefix));
      }
      if (members) {
        if (reformat_) {
          out += t_.substr(it.key, skip_string(it.key) - it.key);
          out += l.space_after_colon ? ": " : ":";
        } else {
          out.append(t_.substr(it.key, it.value - it.key));
        }
      }
      emit(out, it.value, it.end, old_v, new_v, my_indent, l);
      ++written;
    };
    const std::string lead = comma_first_lead(its);
    auto put_new = [&](const std::string* name, const json::value& v) {
      if (!lead.empty() && written > 0) out += lead;
      else out += separator(l, written == 0, inner);
      if (name) {
        out += json::quote(*name);
        out += l.space_after_colon ? ": " : ":";
      }
      write(out, v, l, inner);
      ++written;
    };

    if (members) {
      const auto& bo = before.get_object();
      const auto& ao = after.get_object();
      // A name given twice reads as its last copy (as jq reads it): only that
      // one is compared and changed, the earlier ones keep their bytes. A
      // parsed object holds each name once, so fewer members mean duplicates.
      std::unordered_map<std::string, std::size_t> last;
      if (bo.size() != its.size())
        for (std::size_t i = 0; i < its.size(); ++i) last[jt_.key_name(its[i])] = i;
      for (std::size_t i = 0; i < its.size(); ++i) {
        std::string name = jt_.key_name(its[i]);
        const auto* nv = ao.if_contains(name);
        const auto* ov = bo.if_contains(name);
        if (!nv || !ov) continue;
        if (!last.empty() && last[name] != i) put_old(its[i], i, *ov, *ov);
        else put_old(its[i], i, *ov, *nv);
      }
      for (const auto& kv : ao) {
        if (!bo.contains(kv.key())) {
          std::string name(kv.key());
          put_new(&name, kv.value());
        }
      }
    } else {
      const auto& ba = before.get_array();
      const auto& aa = after.get_array();
      std::size_t nb = ba.size(), na = aa.size();
      std::size_t pre = 0;
      while (pre < nb && pre < na && ba[pre] == aa[pre]) ++pre;
      std::size_t suf = 0;
      while (suf < nb - pre && suf < na - pre && ba[nb - 1 - suf] == aa[na - 1 - suf]) ++suf;
      // the middle of the old array pairs with the middle of the new one by position
      std::size_t mid_b = nb - pre - suf;
      for (std::size_t j = 0; j < na; ++j) {
        if (j < pre) {
          put_old(its[j], j, ba[j], aa[j]);
        } else if (j >= na - suf) {
          std::size_t i = j - na + nb;
          put_old(its[i], i, ba[i], aa[j]);
        } else if (j - pre < mid_b) {
          put_old(its[j], j, ba[j], aa[j]);
        } else {
          put_new(nullptr, aa[j]);
        }
      }
    }

    if (written == 0) {
      out += members ? '}' : ']';
    } else if (reformat_ || its.empty()) {
      if (l.pretty) {
        out += '\n';
        out += indent;
      }
      out += members ? '}' : ']';
    } else {
      std::size_t last_end = its.back().end;
      out.append(t_.substr(last_end, e - last_end));  // whitespace before the closing bracket
    }
  }

  // copy the value at b in layout_, keeping scalar tokens' text
  void reindent(std::string& out, std::size_t b, const std::string& indent) const {
    char c = t_[b];
    if (c != '{' && c != '[') {
      out.append(t_.substr(b, skip_value(b) - b));
      return;
    }
    bool members = c == '{';
    const auto& its = jt_.items(b);
    if (its.empty()) {
      out += members ? "{}" : "[]";
      return;
    }
    std::string inner = layout_.pretty ? indent + layout_.indent : indent;
    out += c;
    bool first = true;
    for (const auto& it : its) {
      out += separator(layout_, first, inner);
      first = false;
      if (members) {
        out.append(t_.substr(it.key, skip_string(it.key) - it.key));
        out += layout_.space_after_colon ? ": " : ":";
      }
      reindent(out, it.value, inner);
    }
    if (layout_.pretty) {
      out += '\n';
      out += indent;
    }
    out += members ? '}' : ']';
  }
};

}  // namespace

std::string rewrite_faithfully(std::string_view text, const json::value& before, const json::value& after,
                               const json::Layout& layout) {
  JsonText jt(text);
  return Rewriter(jt, layout, false).run(before, after);
}

std::string rewrite_faithfully(const JsonText& text, const json::value& before, const json::value& after,
                               const json::Layout& layout) {
  return Rewriter(text, layout, false).run(before, after);
}


json::value stand_in(std::size_t offset) {
  return json::value(json::string(stand_in_prefix() + std::to_string(offset)));
}

std::size_t stand_in_offset(const json::value& v) {
  std::string_view s = v.get_string();
  s.remove_prefix(stand_in_prefix().size());
  std::size_t b = 0;
  std::from_chars(s.data(), s.data() + s.size(), b);
  return b;
}

json::value open_stand_in(const JsonText& jt, const json::value& v) {
  std::size_t b = stand_in_offset(v);
  char c = jt.at(b);
  if (c == '{') {
    const auto& its = jt.items(b);
    json::object o;
    o.reserve(its.size());
    for (const auto& it : its) o[jt.key_name(it)] = stand_in(it.value);  // the last copy wins
    return o;
  }
  if (c == '[') {
    const auto& its = jt.items(b);
    json::array a;
    a.reserve(its.size());
    for (const auto& it : its) a.push_back(stand_in(it.value));
    return a;
  }
  return json::parse(jt.text().substr(b, jt.skip_value(b) - b), "value", {}, json::Literals::as_written);
}

bool is_stand_in(const json::value& v) {
  if (!v.is_string()) return false;
  std::string_view s = v.get_string();
  const std::string& p = stand_in_prefix();
  return s.size() > p.size() && s.substr(0, p.size()) == p;
}

std::string reformat(std::string_view text, const json::value& before, const json::value& after,
                     const json::Layout& layout) {
  JsonText jt(text);
  return Rewriter(jt, layout, true).run(before, after);
}

std::string reformat(const JsonText& text, const json::value& before, const json::value& after,
                     const json::Layout& layout) {
  return Rewriter(text, layout, true).run(before, after);
}

}  // namespace loopkit
