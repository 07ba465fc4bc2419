#include "core/edit/textedit.hpp"

#include <algorithm>
#include <functional>
#include <map>

#include "core/edit/edit_rules.hpp"
#include "core/edit/textedit_overlay.hpp"
#include "sys/base/error.hpp"
#include "sys/base/format.hpp"

namespace loopkit::textedit {

namespace rules = edit_rules;

namespace {

using Item = scan::Item;

const char* type_of(const Overlay& n) {
  if (n.kind == Overlay::object) return "object";
  if (n.kind == Overlay::array) return "array";
  return text_type_name(n.text[0]);
}
bool is_null(const Overlay& n) { return (n.kind == Overlay::orig || n.kind == Overlay::fresh) && n.text[0] == 'n'; }
bool is_object(const Overlay& n) { return n.kind == Overlay::object || (n.kind <= Overlay::fresh && n.text[0] == '{'); }
bool is_array(const Overlay& n) { return n.kind == Overlay::array || (n.kind <= Overlay::fresh && n.text[0] == '['); }

std::unique_ptr<Overlay> make_fresh(std::string_view text) {
  auto n = std::make_unique<Overlay>();
  n->kind = Overlay::fresh;
  n->text = text;
  return n;
}

std::unique_ptr<Overlay> make_orig(std::string_view text, const scan::Node& node) {
  auto n = std::make_unique<Overlay>();
  n->kind = Overlay::orig;
  n->text = text.substr(node.begin, node.end - node.begin);
  n->scanned = &node;
  return n;
}

}  // namespace

// ---- applying edits ----------------------------------------------------------------

namespace {

class Editor {
public:
  Editor(std::string_view text, std::deque<std::string>& texts, bool& changed)
      : t_(text), texts_(texts), changed_(changed) {}

  void edit_spans(Overlay& root, const Edit& e) {
    if (e.op == Edit::remove) return remove(root, e.path);
    Overlay& v = slot(root, e.path);
    switch (e.op) {
      case Edit::set: set(v, e); break;
      case Edit::set_if_missing:
        if (is_null(v)) set(v, e);
        break;
      case Edit::add:
      case Edit::subtract:
      case Edit::multiply:
      case Edit::divide:
      case Edit::remainder: compute(v, e); break;
      case Edit::alternative:  // jq's //=: null and false are replaced
        if (is_null(v) || ((v.kind == Overlay::orig || v.kind == Overlay::fresh) && v.text[0] == 'f')) set(v, e);
        break;
      case Edit::append: {
        if (is_null(v)) {
          replace_with_container(v, Overlay::array);
        } else if (!is_array(v)) {
          rules::cannot_change(e.path, "append to", type_of(v));
        }
        expand(v);
        push(v, make_fresh(operand_text(e)));
        changed_ = true;
        break;
      }
      case Edit::merge:
        if (!is_null(v) && !is_object(v)) rules::cannot_change(e.path, "merge into", type_of(v));
        merge(v, e.operand, e.path);
        break;
      case Edit::remove: break;
    }
  }

  // jq's * on the overlay: a member both sides hold as objects is merged
  // again, any other is set (so the members not named keep their bytes)
  void merge(Overlay& v, const json::value& with, const Path& at) {
    if (!is_object(v) || !with.is_object()) {
      Edit whole;
      whole.path = at;
      whole.operand = with;
      whole.source = "--merge";  // serialised: the operand's own text is not at hand
      set(v, whole);
      return;
    }
    for (const auto& [name, value] : with.get_object()) {
      Path member_path = at;
      member_path.segments.push_back({Segment::key, std::string(name), 0});
      Path here;
      here.segments.push_back(member_path.segments.back());
      here.text = member_path.text;
      merge(slot(v, here), value, member_path);
    }
  }

private:
  std::string_view t_;
  std::deque<std::string>& texts_;  // new values' texts, at stable addresses
  bool& changed_;

  // PATH+=N, -=, *=, /=, %= on the overlay, with the arithmetic of the reference
  void compute(Overlay& v, const Edit& e) {
    char c = v.kind <= Overlay::fresh ? v.text[0] : '{';
    bool number = c == '-' || (c >= '0' && c <= '9');
    if (e.op == Edit::add && !number && c != 'n') rules::cannot_change(e.path, "add to", type_of(v));
    if (e.op != Edit::add && !number) rules::cannot_compute(e.path, e.symbol(), type_of(v));
    // adding zero keeps the value and so its text (1.0 stays 1.0)
    bool zero = json::nearest_double(json::number_text(e.operand)) == 0;
    if (number && zero && (e.op == Edit::add || e.op == Edit::subtract)) return;
    json::value have = c == 'n' ? json::value(0) : json::parse(v.text, "value", {}, json::Literals::as_written);
    json::value result = e.op == Edit::add ? rules::number_sum(have, e.operand, e.path)
                                           : rules::number_op(e.symbol(), have, e.operand, e.path);
    replace(v, keep(json::compact(result)));
  }

  std::string_view keep(std::string s) {
    texts_.push_back(std::move(s));
    return texts_.back();
  }

  // The value's JSON text as the caller wrote it when it says the same as
  // the parsed operand (so 1e2 stays 1e2); else the operand serialised.
  std::string_view operand_text(const Edit& e) {
    const json::value& v = e.operand;
    if (e.source.rfind("--", 0) != 0) {
      Path p;
      std::size_t n = parse_path_prefix(e.source, p);
      std::string_view rest = std::string_view(e.source).substr(n);
      auto eq = rest.find('=');
      bool as_json = eq != std::string_view::npos && eq > 0 && rest[eq - 1] == ':';
      if (as_json) {
        std::string_view lit = rest.substr(eq + 1);
        try {
          if (json::parse(lit, "value", {}, json::Literals::as_written) == v) {
            while (!lit.empty() && is_json_ws(lit.front())) lit.remove_prefix(1);
            while (!lit.empty() && is_json_ws(lit.back())) lit.remove_suffix(1);
            return lit;
          }
        } catch (const Error&) {
        }
      }
    }
    return keep(json::compact(v));
  }

  void set(Overlay& v, const Edit& e) {
    std::string_view text = operand_text(e);
    // setting a value to what it is changes nothing, not even its spelling
    if (v.kind == Overlay::orig && v.text.size() <= 4 * text.size() + 64 &&
        json::parse(v.text, "value", {}, json::Literals::as_written) == e.operand)
      return;
    replace(v, text);
  }

  void replace(Overlay& v, std::string_view text) {
    v = Overlay{};
    v.kind = Overlay::fresh;
    v.text = text;
    changed_ = true;
  }

  void replace_with_container(Overlay& v, Overlay::Kind kind) {
    v = Overlay{};
    v.kind = kind;
    changed_ = true;
  }

  // Turns an object or array value into entries (once).
  void expand(Overlay& v) {
    if (v.kind == Overlay::object || v.kind == Overlay::array) return;
    if (v.kind == Overlay::orig) expand_file(v);
    else expand_text(v);
  }

  // a container of the file: its kept items, and runs for those between
  void expand_file(Overlay& v) {
    if (!v.scanned || !v.scanned->entered) throw Plan::NeedsEveryItem{};
    bool obj = v.text[0] == '{';
    const scan::Node& s = *v.scanned;
    v.kind = obj ? Overlay::object : Overlay::array;
    v.from_file = true;
    // the items the scan did not keep stand between the kept ones as runs
    std::size_t at = 0;  // the next item index not yet in entries
    const scan::Child* before = nullptr;
    auto add_run = [&](std::size_t upto, const scan::Child* after) {
      if (upto <= at) return;
      Entry r;
      r.original = r.run = true;
      r.first = at;
      r.count = upto - at;
      r.span.prefix = before ? before->item.end : s.first.prefix;
      r.span.key = r.span.value = before ? before->next : s.first.key;
      r.span.end = after ? after->item.prefix : s.last.end;
      v.entries.push_back(std::move(r));
    };
    for (const auto& c : s.children) {
      add_run(c.index, &c);
      Entry en;
      en.span = c.item;
      en.original = true;
      en.first = c.index;
      en.node = make_orig(t_, c.node);
      if (obj) {
        en.name = scan::key_name(t_, c.item.key);
        v.live[en.name] = v.entries.size();
      }
      v.entries.push_back(std::move(en));
      at = c.index + 1;
      before = &c;
    }
    add_run(s.count, nullptr);
    v.length = obj ? 0 : s.count;
    v.originals = v.entries.size();
  }

  // a new value given as text: its items become new entries
  void expand_text(Overlay& v) {
    bool obj = v.text[0] == '{';
    std::string_view text = v.text;
    scan::Want every;
    every.all = true;
    scan::Node s = scan::scan(text, every, "value");
    v = Overlay{};
    v.kind = obj ? Overlay::object : Overlay::array;
    for (const auto& c : s.children) {
      Entry en;
      en.node = make_fresh(text.substr(c.node.begin, c.node.end - c.node.begin));
      if (obj) {
        en.name = scan::key_name(text, c.item.key);
        auto [it, fresh] = v.live.try_emplace(en.name, v.entries.size());
        if (!fresh) {
          v.entries[it->second].removed = true;
          it->second = v.entries.size();
        }
      }
      v.entries.push_back(std::move(en));
    }
    v.length = obj ? 0 : v.entries.size();
  }

  void push(Overlay& a, std::unique_ptr<Overlay> n) {
    Entry en;
    en.node = std::move(n);
    a.entries.push_back(std::move(en));
    ++a.length;
  }

  // The entry of element idx (0 <= idx < length) of an expanded array.
  Entry& element(Overlay& a, std::size_t idx) {
    std::size_t file_now = a.from_file ? a.scanned->count - a.removed_originals : 0;
    if (idx >= file_now) {
      // among the new ones, after the file's
      std::size_t k = idx - file_now;
      for (std::size_t i = a.originals; i < a.entries.size(); ++i) {
        if (a.entries[i].removed) continue;
        if (k-- == 0) return a.entries[i];
      }
    } else if (a.removed_originals == 0) {
      // no deletions yet: the index is the file's index
      auto first = a.entries.begin(), last = a.entries.begin() + static_cast<std::ptrdiff_t>(a.originals);
      auto it = std::upper_bound(first, last, idx, [](std::size_t k, const Entry& e) { return k < e.first; });
      Entry& e = *(it - 1);
      if (e.run) throw Plan::NeedsEveryItem{};
      return e;
    } else {
      std::size_t k = idx;
      for (std::size_t i = 0; i < a.originals; ++i) {
        Entry& e = a.entries[i];
        if (e.removed) continue;
        if (k < e.count) {
          if (e.run) throw Plan::NeedsEveryItem{};
          return e;
        }
        k -= e.count;
      }
    }
    throw Plan::NeedsEveryItem{};  // cannot happen: idx < length
  }

  Overlay* member(Overlay& o, std::string_view name) {
    auto it = o.live.find(name);
    return it == o.live.end() ? nullptr : o.entries[it->second].node.get();
  }

  Overlay& slot(Overlay& root, const Path& p) {
    Overlay* cur = &root;
    for (std::size_t i = 0; i < p.segments.size(); ++i) {
      const auto& seg = p.segments[i];
      if (seg.kind == Segment::key) {
        if (is_null(*cur)) replace_with_container(*cur, Overlay::object);
        if (!is_object(*cur)) rules::cannot_set_member(p, i, type_of(*cur));
        expand(*cur);
        Overlay* m = member(*cur, seg.name);
        if (!m) m = &add_member(*cur, seg.name);
        cur = m;
      } else if (seg.kind == Segment::elem) {
        if (is_null(*cur)) replace_with_container(*cur, Overlay::array);
        if (!is_array(*cur)) rules::cannot_index(p, i, type_of(*cur));
        expand(*cur);
        auto idx = rules::landing(seg.index, cur->length, true);
        if (!idx) rules::index_out_of_range(p, seg.index, cur->length);
        if (*idx == cur->length) {
          push(*cur, make_fresh("null"));
          changed_ = true;
        }
        cur = element(*cur, *idx).node.get();
      } else {
        rules::all_names_many(p);
      }
    }
    return *cur;
  }

  Overlay& add_member(Overlay& o, const std::string& name) {
    changed_ = true;
    // a deleted member of the file that comes back takes its old place
    for (std::size_t i = o.entries.size(); i-- > 0;) {
      Entry& e = o.entries[i];
      // runs (the items the scan skipped) have no name: never taken for ""
      if (e.original && !e.run && e.removed && e.name == name) {
        // only the last copy comes back; earlier ones stay deleted
        e.removed = false;
        e.node = make_fresh("null");
        o.live[name] = i;
        return *e.node;
      }
    }
    Entry en;
    en.name = name;
    en.node = make_fresh("null");
    o.live[name] = o.entries.size();
    o.entries.push_back(std::move(en));
    return *o.entries.back().node;
  }

  void remove(Overlay& root, const Path& p) {
    if (p.segments.empty()) {
      replace(root, "{}");
      return;
    }
    Overlay* cur = &root;
    for (std::size_t i = 0; i + 1 < p.segments.size(); ++i) {
      const auto& seg = p.segments[i];
      if (is_null(*cur)) return;
      if (seg.kind == Segment::key) {
        if (!is_object(*cur)) rules::cannot_delete_through(p, type_of(*cur));
        expand(*cur);
        cur = member(*cur, seg.name);
        if (!cur) return;
      } else if (seg.kind == Segment::elem) {
        if (!is_array(*cur)) rules::cannot_delete_through(p, type_of(*cur));
        expand(*cur);
        auto idx = rules::landing(seg.index, cur->length, false);
        if (!idx) return;
        cur = element(*cur, *idx).node.get();
      } else {
        rules::all_names_many(p);
      }
    }
    const auto& last = p.segments.back();
    if (is_null(*cur)) return;
    if (last.kind == Segment::key) {
      if (!is_object(*cur)) rules::cannot_delete_in(p, type_of(*cur));
      expand(*cur);
      auto it = cur->live.find(last.name);
      if (it == cur->live.end()) return;
      // every copy of a duplicated name goes, so that none reads back
      // (a run, the members the scan skipped, has no name: never taken for "")
      for (auto& e : cur->entries)
        if (!e.run && !e.removed && e.name == last.name) e.removed = true;
      cur->live.erase(it);
      changed_ = true;
    } else if (last.kind == Segment::elem) {
      if (!is_array(*cur)) rules::cannot_delete_in(p, type_of(*cur));
      expand(*cur);
      auto idx = rules::landing(last.index, cur->length, false);
      if (!idx) return;
      Entry& e = element(*cur, *idx);
      e.removed = true;
      if (e.original) ++cur->removed_originals;
      --cur->length;
      changed_ = true;
    } else {
      rules::all_names_many(p);
    }
  }
};

}  // namespace

// ---- the plan ---------------------------------------------------------------------------

Plan::Plan(std::string_view text, const scan::Node& root, const json::Layout& layout, std::string_view subject)
    : text_(text),
      layout_(layout),
      subject_(subject),
      root_(make_orig(text, root)),
      begin_(root.begin),
      end_(root.end) {}

Plan::~Plan() = default;

void Plan::edit_spans(const Edit& e) { Editor(text_, texts_, changed_).edit_spans(*root_, e); }

bool edit_text(std::string_view text, const std::vector<Edit>& edits, Sink& out, std::string_view subject) {
  for (bool every : {false, true}) {
    scan::Node root = scan::scan(text, wants_for(edits, {}, every), subject);
    Plan plan(text, root, json::detect_layout(text), subject);
    try {
      for (const Edit& e : edits) plan.edit_spans(e);
    } catch (const Plan::NeedsEveryItem&) {
      if (every) throw;
      continue;
    }
    if (!plan.changed()) return false;
    plan.write(out);
    return true;
  }
  return false;
}

}  // namespace loopkit::textedit
