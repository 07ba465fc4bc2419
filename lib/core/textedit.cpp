#include "core/textedit.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>

#include "sys/error.hpp"
#include "sys/fd.hpp"

namespace loopkit::textedit {

// ---- sinks ------------------------------------------------------------------

void FdSink::write(std::string_view bytes) {
  constexpr std::size_t cap = 64 * 1024;
  total_ += bytes.size();
  if (buf_.size() + bytes.size() <= cap) {
    buf_.append(bytes);
    return;
  }
  flush();
  if (bytes.size() >= cap) write_all(fd_, bytes, subject_);
  else buf_.append(bytes);
}

void FdSink::flush() {
  if (buf_.empty()) return;
  write_all(fd_, buf_, subject_);
  buf_.clear();
}

// ---- the overlay ------------------------------------------------------------

struct Entry;

// A value as the edits so far left it: the file's bytes where they stand
// (orig), a new value's JSON text (fresh), or a container whose items are
// entries: over a container of the file (its untouched items stay slices
// of the text) or new (written whole).
class Overlay {
public:
  enum Kind { orig, fresh, object, array } kind = orig;
  std::string_view text;                 // orig, fresh
  const scan::Node* scanned = nullptr;   // orig (what the scan kept inside), file containers
  bool from_file = false;                // object/array: over a container of the file
  std::vector<Entry> entries;            // in order: the file's items, then new ones
  std::map<std::string, std::size_t, std::less<>> live;  // objects: the entry that counts per name
  std::size_t length = 0;                // arrays: elements now
  std::size_t removed_originals = 0;     // arrays: the file's elements deleted
  std::size_t originals = 0;             // arrays: entries that are the file's (items and runs)
};

struct Entry {
  std::string name;               // members
  scan::Item span;                // the file's item (prefix, key, value, end); for a run: its first prefix and key, its last end
  bool original = false;          // an item (or run) of the file
  bool run = false;               // file elements the scan did not keep: [first, first + count)
  std::size_t first = 0, count = 1;
  bool removed = false;
  std::unique_ptr<Overlay> node;  // null for runs
};

namespace {

using Item = scan::Item;

const char* text_type(char c) {
  switch (c) {
    case '{': return "object";
    case '[': return "array";
    case '"': return "string";
    case 't': case 'f': return "boolean";
    case 'n': return "null";
    default: return "number";
  }
}

const char* type_of(const Overlay& n) {
  if (n.kind == Overlay::object) return "object";
  if (n.kind == Overlay::array) return "array";
  return text_type(n.text[0]);
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

std::string prefix_text(const Path& p, std::size_t upto) {
  std::string s;
  for (std::size_t i = 0; i < upto; ++i) {
    const auto& seg = p.segments[i];
    if (seg.kind == Segment::key) s += "." + seg.name;
    else if (seg.kind == Segment::elem) s += fmt::format("[{}]", seg.index);
    else s += "[]";
  }
  return s.empty() ? "." : s;
}

bool is_ws(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

}  // namespace

// ---- what to scan -------------------------------------------------------------

scan::Want wants_for(const std::vector<Edit>& edits, const std::vector<Path>& compared, bool every_item) {
  // An index may name another element once earlier edits of the run have
  // deleted or added elements: it is widened by their numbers.
  long long deletes = 0, adds = 0;
  for (const Edit& e : edits) {
    bool has_elem = false;
    for (const auto& s : e.path.segments) has_elem |= s.kind == Segment::elem;
    if (e.op == Edit::remove && !e.path.segments.empty() && e.path.segments.back().kind == Segment::elem) ++deletes;
    if (e.op == Edit::append || (e.op != Edit::remove && has_elem)) ++adds;
  }
  // past this many kept items per index, keeping every item is cheaper
  constexpr long long widest = 4096;
  scan::Want want;
  auto add = [&](const Path& p, bool leaf_entered) {
    scan::Want* w = &want;
    for (const auto& s : p.segments) {
      if (s.kind == Segment::key) {
        w = &w->members[s.name];
        continue;
      }
      if (s.kind == Segment::all || every_item) {
        w->all = true;
      } else if (s.index >= 0) {
        if (deletes > widest) w->all = true;
        else
          for (long long i = s.index; i <= s.index + deletes; ++i) w->indices.insert(i);
      } else {
        long long lo = s.index - deletes, hi = std::min(-1LL, s.index + adds);
        if (hi - lo > widest) w->all = true;
        else
          for (long long i = lo; i <= hi; ++i) w->indices.insert(i);
      }
      w = &w->element_want();
    }
    // an append needs the array's items' style and count; a new member, the object's
    if (leaf_entered) w->indices.insert(-1);
  };
  for (const Edit& e : edits) add(e.path, e.op == Edit::append);
  for (const Path& p : compared) add(p, false);
  want.settle();
  return want;
}

// ---- reading the scanned text ----------------------------------------------------

json::value value_in(std::string_view text, const scan::Node& root, const Path& path) {
  const scan::Node* cur = &root;
  for (const auto& seg : path.segments) {
    char c = text[cur->begin];
    const scan::Child* next = nullptr;
    if (seg.kind == Segment::key && c == '{') next = scan::member(text, *cur, seg.name);
    else if (seg.kind == Segment::elem && c == '[') next = scan::element(*cur, seg.index);
    if (!next) return nullptr;
    cur = &next->node;
  }
  return json::parse(text.substr(cur->begin, cur->end - cur->begin), "value");
}

std::vector<std::optional<std::pair<std::size_t, std::size_t>>> lookup(std::string_view text, const scan::Node& root,
                                                                       const Path& path) {
  using Span = std::pair<std::size_t, std::size_t>;
  std::vector<const scan::Node*> cur{&root}, next;
  for (const auto& seg : path.segments) {
    next.clear();
    for (const scan::Node* n : cur) {
      if (!n || text[n->begin] == 'n') {
        next.push_back(nullptr);
        continue;
      }
      char c = text[n->begin];
      switch (seg.kind) {
        case Segment::key: {
          if (c != '{')
            fail_data(fmt::format("{}: cannot look up {} in a {}", path.text, json::quote(seg.name), text_type(c)));
          const scan::Child* m = scan::member(text, *n, seg.name);
          next.push_back(m ? &m->node : nullptr);
          break;
        }
        case Segment::elem: {
          if (c != '[') fail_data(fmt::format("{}: cannot index a {} with [{}]", path.text, text_type(c), seg.index));
          const scan::Child* m = scan::element(*n, seg.index);
          next.push_back(m ? &m->node : nullptr);
          break;
        }
        case Segment::all:
          if (c == '[') {
            for (const auto& ch : n->children) next.push_back(&ch.node);
          } else if (c == '{') {
            // a duplicated name once, where it first stands, with its last value
            std::map<std::string, std::size_t> at;
            std::vector<const scan::Node*> order;
            for (const auto& ch : n->children) {
              auto [it, fresh] = at.try_emplace(scan::key_name(text, ch.item.key), order.size());
              if (fresh) order.push_back(&ch.node);
              else order[it->second] = &ch.node;
            }
            next.insert(next.end(), order.begin(), order.end());
          } else {
            fail_data(fmt::format("{}: cannot list the elements of a {}", path.text, text_type(c)));
          }
          break;
      }
    }
    std::swap(cur, next);
  }
  std::vector<std::optional<Span>> out;
  out.reserve(cur.size());
  for (const scan::Node* n : cur) out.push_back(n ? std::optional<Span>(Span{n->begin, n->end}) : std::nullopt);
  return out;
}

// ---- applying edits ----------------------------------------------------------------

namespace {

class Editor {
public:
  Editor(std::string_view text, std::deque<std::string>& texts, bool& changed)
      : t_(text), texts_(texts), changed_(changed) {}

  void apply(Overlay& root, const Edit& e) {
    if (e.op == Edit::remove) return remove(root, e.path);
    check_depth(e);
    Overlay& v = slot(root, e.path);
    switch (e.op) {
      case Edit::set: set(v, e); break;
      case Edit::set_if_missing:
        if (is_null(v)) set(v, e);
        break;
      case Edit::add: {
        char c = v.kind <= Overlay::fresh ? v.text[0] : '{';
        if (c != 'n' && c != '-' && (c < '0' || c > '9'))
          fail_data(fmt::format("{}: cannot add to a {}", e.path.text, type_of(v)));
        // the value alone, added to by apply() itself: the same arithmetic,
        // exactness and errors as on a whole document
        json::value have = json::parse(v.text, "value");
        json::value sum = have;
        Edit here = e;
        here.path.segments.clear();
        loopkit::apply(sum, here);
        if (sum.is_double() && !std::isfinite(sum.get_double()))
          fail_data(fmt::format("{}: the sum is out of range", e.path.text));
        if (!have.is_null() && sum == have) break;  // +=0 keeps the text
        replace(v, keep(json::compact(sum)));
        break;
      }
      case Edit::append: {
        if (is_null(v)) {
          replace_with_container(v, Overlay::array);
        } else if (!is_array(v)) {
          fail_data(fmt::format("{}: cannot append to a {}", e.path.text, type_of(v)));
        }
        expand(v);
        push(v, make_fresh(operand_text(e)));
        changed_ = true;
        break;
      }
      case Edit::remove: break;
    }
  }

private:
  std::string_view t_;
  std::deque<std::string>& texts_;  // new values' texts, at stable addresses
  bool& changed_;

  // A value placed under its path's containers must still read back
  // within the readers' depth limit: refused before anything is written.
  static void check_depth(const Edit& e) {
    std::size_t depth = e.path.segments.size() + (e.op == Edit::append ? 1 : 0);
    std::size_t deepest = 0, open = 0;
    if (e.operand.is_object() || e.operand.is_array()) {
      std::string text = json::compact(e.operand);
      for (std::size_t i = 0; i < text.size(); ++i) {
        char c = text[i];
        if (c == '"') i = scan::string_end(text, i) - 1;
        else if (c == '{' || c == '[') deepest = std::max(deepest, ++open);
        else if (c == '}' || c == ']') --open;
      }
    }
    if (depth + deepest > json::max_depth)
      fail_usage(fmt::format("{}: the value would be nested deeper than {} levels", e.path.text, json::max_depth));
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
          if (json::parse(lit, "value") == v) {
            while (!lit.empty() && is_ws(lit.front())) lit.remove_prefix(1);
            while (!lit.empty() && is_ws(lit.back())) lit.remove_suffix(1);
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
    if (v.kind == Overlay::orig && v.text.size() <= 4 * text.size() + 64 && json::parse(v.text, "value") == e.operand)
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
    bool obj = v.text[0] == '{';
    if (v.kind == Overlay::orig) {
      if (!v.scanned || !v.scanned->entered) throw Plan::NeedsEveryItem{};
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
      return;
    }
    // a new value given as text: its items become new entries
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
        if (!is_object(*cur))
          fail_data(fmt::format("{}: cannot set {} in a {} at {}", p.text, json::quote(seg.name), type_of(*cur),
                                quoted(prefix_text(p, i))));
        expand(*cur);
        Overlay* m = member(*cur, seg.name);
        if (!m) m = &add_member(*cur, seg.name);
        cur = m;
      } else if (seg.kind == Segment::elem) {
        if (is_null(*cur)) replace_with_container(*cur, Overlay::array);
        if (!is_array(*cur))
          fail_data(fmt::format("{}: cannot index a {} at {}", p.text, type_of(*cur), quoted(prefix_text(p, i))));
        expand(*cur);
        long long n = static_cast<long long>(cur->length);
        long long idx = seg.index < 0 ? n + seg.index : seg.index;
        if (idx < 0 || idx > n)
          fail_data(fmt::format("{}: index {} is out of range for an array of {}", p.text, seg.index, n));
        if (idx == n) {
          push(*cur, make_fresh("null"));
          changed_ = true;
        }
        cur = element(*cur, static_cast<std::size_t>(idx)).node.get();
      } else {
        fail_usage(fmt::format("malformed path {}: '[]' names many values; it is for readers only", quoted(p.text)));
      }
    }
    return *cur;
  }

  Overlay& add_member(Overlay& o, const std::string& name) {
    changed_ = true;
    // a deleted member of the file that comes back takes its old place
    for (std::size_t i = o.entries.size(); i-- > 0;) {
      Entry& e = o.entries[i];
      if (e.original && e.removed && e.name == name) {
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
        if (!is_object(*cur)) fail_data(fmt::format("{}: cannot delete through a {}", p.text, type_of(*cur)));
        expand(*cur);
        cur = member(*cur, seg.name);
        if (!cur) return;
      } else if (seg.kind == Segment::elem) {
        if (!is_array(*cur)) fail_data(fmt::format("{}: cannot delete through a {}", p.text, type_of(*cur)));
        expand(*cur);
        long long n = static_cast<long long>(cur->length);
        long long idx = seg.index < 0 ? n + seg.index : seg.index;
        if (idx < 0 || idx >= n) return;
        cur = element(*cur, static_cast<std::size_t>(idx)).node.get();
      } else {
        fail_usage(fmt::format("malformed path {}: '[]' is for readers only", quoted(p.text)));
      }
    }
    const auto& last = p.segments.back();
    if (is_null(*cur)) return;
    if (last.kind == Segment::key) {
      if (!is_object(*cur))
        fail_data(fmt::format("{}: cannot delete a member of a {}", p.text, type_of(*cur)));
      expand(*cur);
      auto it = cur->live.find(last.name);
      if (it == cur->live.end()) return;
      // every copy of a duplicated name goes, so that none reads back
      for (auto& e : cur->entries)
        if (!e.removed && e.name == last.name) e.removed = true;
      cur->live.erase(it);
      changed_ = true;
    } else if (last.kind == Segment::elem) {
      if (!is_array(*cur))
        fail_data(fmt::format("{}: cannot delete an element of a {}", p.text, type_of(*cur)));
      expand(*cur);
      long long n = static_cast<long long>(cur->length);
      long long idx = last.index < 0 ? n + last.index : last.index;
      if (idx < 0 || idx >= n) return;
      Entry& e = element(*cur, static_cast<std::size_t>(idx));
      e.removed = true;
      if (e.original) ++cur->removed_originals;
      --cur->length;
      changed_ = true;
    } else {
      fail_usage(fmt::format("malformed path {}: '[]' is for readers only", quoted(p.text)));
    }
  }
};

// ---- writing -------------------------------------------------------------------------

class Writer {
public:
  Writer(std::string_view text, const json::Layout& layout, Sink& out) : t_(text), layout_(layout), out_(out) {}

  void value(const Overlay& n, const json::Layout& style, const std::string& indent) {
    switch (n.kind) {
      case Overlay::orig: put(n.text); return;
      case Overlay::fresh: restyle(n.text, 0, style, indent); return;
      default:
        if (n.from_file) splice(n, indent);
        else whole(n, style, indent);
    }
  }
  void copy(std::size_t b, std::size_t e) { slice(b, e); }
  void flush() { put_pending(); }

private:
  std::string_view t_;
  json::Layout layout_;
  Sink& out_;
  std::size_t pending_b_ = 0, pending_e_ = 0;  // a slice of the text not yet written

  // adjacent slices of the old text go out as one piece
  void slice(std::size_t b, std::size_t e) {
    if (b == e) return;
    if (pending_e_ == b && pending_e_ != pending_b_) {
      pending_e_ = e;
      return;
    }
    put_pending();
    pending_b_ = b;
    pending_e_ = e;
  }
  void put_pending() {
    if (pending_e_ > pending_b_) out_.write(t_.substr(pending_b_, pending_e_ - pending_b_));
    pending_b_ = pending_e_ = 0;
  }
  void put(std::string_view s) {
    // a view into the old text joins the pending slice
    if (s.data() >= t_.data() && s.data() + s.size() <= t_.data() + t_.size() && !s.empty()) {
      std::size_t b = static_cast<std::size_t>(s.data() - t_.data());
      slice(b, b + s.size());
      return;
    }
    put_pending();
    out_.write(s);
  }

  std::string indent_of(const Item& it, const std::string& fallback) const {
    std::string_view pre = t_.substr(it.prefix, it.key - it.prefix);
    auto nl = pre.rfind('\n');
    if (nl == std::string_view::npos) return fallback;
    return std::string(pre.substr(nl + 1));
  }

  // The style of a container's new items: that of its existing ones (as
  // core/edit.cpp's local_layout).
  json::Layout local_layout(const scan::Node& s, bool members) const {
    json::Layout l = layout_;
    if (s.count == 0) return l;
    std::string_view first = t_.substr(s.first.prefix, s.first.key - s.first.prefix);
    l.pretty = first.find('\n') != std::string_view::npos;
    if (!l.pretty && s.count > 1) {
      std::string_view sep = t_.substr(s.second.prefix, s.second.key - s.second.prefix);
      l.space_after_comma = sep.find(' ') != std::string_view::npos;
    }
    if (members) {
      std::size_t kend = scan::string_end(t_, s.first.key);
      std::string_view colon = t_.substr(kend, s.first.value - kend);
      l.space_after_colon = colon.find(' ') != std::string_view::npos || colon.find('\t') != std::string_view::npos;
    }
    if (!l.pretty && s.count == 1) l.space_after_comma = members ? l.space_after_colon : layout_.space_after_colon;
    return l;
  }

  void separator(const json::Layout& l, bool first, const std::string& inner) {
    if (!first) put(",");
    if (l.pretty) {
      put("\n");
      put(inner);
    } else if (!first && l.space_after_comma) {
      put(" ");
    }
  }

  void splice(const Overlay& n, const std::string& indent) {
    const scan::Node& s = *n.scanned;
    bool obj = n.kind == Overlay::object;
    json::Layout l = local_layout(s, obj);
    std::string inner_default = l.pretty ? indent + l.indent : indent;
    std::string inner = s.count ? indent_of(s.last, inner_default) : inner_default;
    slice(s.begin, s.begin + 1);  // the bracket
    std::size_t written = 0;
    for (const Entry& e : n.entries) {
      if (!e.original || e.removed) continue;
      std::size_t from = e.span.prefix;
      if (written == 0) {
        slice(s.first.prefix, s.first.key);  // the first item's leading whitespace
        from = e.span.key;
      }
      if (e.run || e.node->kind == Overlay::orig) {
        slice(from, e.span.end);
      } else {
        slice(from, e.span.value);
        value(*e.node, l, indent_of(e.span, inner));
      }
      ++written;
    }
    for (const Entry& e : n.entries) {
      if (e.original || e.removed) continue;
      separator(l, written == 0, inner);
      if (obj) {
        put(json::quote(e.name));
        put(l.space_after_colon ? ": " : ":");
      }
      value(*e.node, l, inner);
      ++written;
    }
    if (written == 0) {
      put(obj ? "}" : "]");
    } else if (s.count == 0) {
      if (l.pretty) {
        put("\n");
        put(indent);
      }
      put(obj ? "}" : "]");
    } else {
      slice(s.last.end, s.end);  // the whitespace before the bracket, and the bracket
    }
  }

  // a new container, as json::write_value writes one
  void whole(const Overlay& n, const json::Layout& style, const std::string& indent) {
    bool obj = n.kind == Overlay::object;
    bool any = false;
    for (const Entry& e : n.entries) any |= !e.removed;
    if (!any) {
      put(obj ? "{}" : "[]");
      return;
    }
    std::string inner = style.pretty ? indent + style.indent : indent;
    put(obj ? "{" : "[");
    bool first = true;
    for (const Entry& e : n.entries) {
      if (e.removed) continue;
      if (!first) put(!style.pretty && style.space_after_comma ? ", " : ",");
      first = false;
      if (style.pretty) {
        put("\n");
        put(inner);
      }
      if (obj) {
        put(json::quote(e.name));
        put(style.space_after_colon ? ": " : ":");
      }
      value(*e.node, style, inner);
    }
    if (style.pretty) {
      put("\n");
      put(indent);
    }
    put(obj ? "}" : "]");
  }

  // Valid JSON text in a layout, its scalars' text kept as written.
  std::size_t restyle(std::string_view t, std::size_t p, const json::Layout& style, const std::string& indent) {
    while (is_ws(t[p])) ++p;
    char c = t[p];
    if (c != '{' && c != '[') {
      std::size_t e = p;
      if (c == '"') {
        e = scan::string_end(t, p);
      } else {
        while (e < t.size() && !is_ws(t[e]) && t[e] != ',' && t[e] != '}' && t[e] != ']') ++e;
      }
      put_pending();
      out_.write(t.substr(p, e - p));
      return e;
    }
    bool obj = c == '{';
    char close = obj ? '}' : ']';
    std::size_t q = p + 1;
    while (is_ws(t[q])) ++q;
    if (t[q] == close) {
      put(obj ? "{}" : "[]");
      return q + 1;
    }
    std::string inner = style.pretty ? indent + style.indent : indent;
    put(obj ? "{" : "[");
    bool first = true;
    for (;;) {
      while (is_ws(t[q])) ++q;
      if (t[q] == close) break;
      if (t[q] == ',') {
        ++q;
        while (is_ws(t[q])) ++q;
      }
      if (!first) put(!style.pretty && style.space_after_comma ? ", " : ",");
      first = false;
      if (style.pretty) {
        put("\n");
        put(inner);
      }
      if (obj) {
        std::size_t kend = scan::string_end(t, q);
        put_pending();
        out_.write(t.substr(q, kend - q));
        put(style.space_after_colon ? ": " : ":");
        q = kend;
        while (is_ws(t[q])) ++q;
        ++q;  // ':'
      }
      q = restyle(t, q, style, inner);
    }
    if (style.pretty) {
      put("\n");
      put(indent);
    }
    put(obj ? "}" : "]");
    return q + 1;
  }
};

}  // namespace

// ---- the plan ---------------------------------------------------------------------------

Plan::Plan(std::string_view text, const scan::Node& root, const json::Layout& layout, std::string_view subject)
    : text_(text), layout_(layout), subject_(subject), root_(make_orig(text, root)), begin_(root.begin),
      end_(root.end) {}

Plan::~Plan() = default;

void Plan::apply(const Edit& e) { Editor(text_, texts_, changed_).apply(*root_, e); }

void Plan::write(Sink& out) const {
  Writer w(text_, layout_, out);
  w.copy(0, begin_);  // whatever surrounds the document stays
  w.value(*root_, layout_, "");
  w.copy(end_, text_.size());
  w.flush();
}

bool edit_text(std::string_view text, const std::vector<Edit>& edits, Sink& out, std::string_view subject) {
  for (bool every : {false, true}) {
    scan::Node root = scan::scan(text, wants_for(edits, {}, every), subject);
    Plan plan(text, root, json::detect_layout(text), subject);
    try {
      for (const Edit& e : edits) plan.apply(e);
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
