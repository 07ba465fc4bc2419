#include "core/scan/scan.hpp"

#include <algorithm>

#include "core/scan/scan_lexer.hpp"

namespace loopkit::scan {

Want& Want::add(const Path& path, std::size_t from) {
  Want* w = this;
  for (std::size_t i = from; i < path.segments.size(); ++i) {
    const Segment& s = path.segments[i];
    if (s.kind == Segment::key) {
      w = &w->members[s.name];
    } else if (s.kind == Segment::elem) {
      w->indices.insert(s.index);
      w = &w->element_want();
    } else {
      w->all = true;
      w = &w->element_want();
    }
  }
  return *w;
}

Want& Want::element_want() {
  if (!element) element = std::make_unique<Want>();
  return *element;
}

void Want::merge_into(Want& o) const {
  for (const auto& [name, w] : members) w.merge_into(o.members[name]);
  o.indices.insert(indices.begin(), indices.end());
  o.all |= all;
  if (element) element->merge_into(o.element_want());
}

void Want::settle() {
  if (all && element)
    for (auto& [name, w] : members) element->merge_into(w);
  for (auto& [name, w] : members) w.settle();
  if (element) element->settle();
}

namespace {

using detail::Lexer;

const Want nothing;

class Scanner : Lexer {
public:
  Scanner(std::string_view t, std::string_view subject, const std::function<void(std::size_t)>& passed)
      : Lexer(t, subject, passed) {}

  Node run(const Want& want) {
    std::size_t p = ws(0);
    if (p == n_) bad(p, "empty document");
    Node root;
    std::size_t e = value(p, want, root, 0);
    if (ws(e) != n_) bad(ws(e), "extra data");
    return root;
  }

private:
  std::size_t value(std::size_t p, const Want& w, Node& node, std::size_t depth) {
    node.begin = p;
    if (d_[p] == '{' && (!w.members.empty() || w.all)) {
      node.end = container(p, w, node, depth, true);
    } else if (d_[p] == '[' && (!w.indices.empty() || w.all)) {
      node.end = container(p, w, node, depth, false);
    } else {
      node.end = skip(p, depth);
    }
    return node.end;
  }

  // The walk of one wanted container: which items are wanted, and for arrays
  // the window of the last items kept for indices counted from the end
  struct Walk {
    // the last `window` items, where they are: a ring of plain offsets
    struct Spot {
      std::size_t index;
      Item item;
      std::size_t next;
    };
    const Want& w;
    const Want& each;
    std::set<long long>::const_iterator next_index;
    std::size_t window = 0;
    std::vector<Spot> ring;         // grown as items come: [-999999999999] costs what the array holds
    std::size_t ring_used = 0;      // items put in the ring so far
    Spot* pending = nullptr;        // the last item kept, waiting for where its successor starts
    std::size_t pending_at = none;  // ... or its index in node.children

    Walk(const Want& want, bool obj)
        : w(want), each(want.element ? *want.element : nothing), next_index(want.indices.lower_bound(0)) {
      if (!obj && !w.all && !w.indices.empty() && *w.indices.begin() < 0)
        window = static_cast<std::size_t>(-*w.indices.begin());
    }
  };

  // An item's separator and (in an object) key, from q after the previous
  // item: it.prefix, it.key and it.value set, kend the key's end; none when
  // the container closes at q.
  std::size_t item_start(std::size_t q, std::size_t count, bool obj, Item& it, std::size_t& kend) const {
    const char close = obj ? '}' : ']';
    it.prefix = q;
    q = token(q);
    if (d_[q] == close) return none;
    if (count > 0) {
      if (d_[q] != ',') bad(q);
      q = gap(q + 1);
    }
    it.key = q;
    if (obj) {
      if (d_[q] != '"') bad(q);
      kend = string(q);
      q = ws(kend);
      if (q >= n_ || d_[q] != ':') bad(q);
      q = ws(q + 1);
      if (q >= n_) bad(q, "incomplete JSON");
    } else if (d_[q] == close) {
      bad(q);  // [1,]
    }
    it.value = q;
    return q;
  }

  // What is wanted of the item: nullptr for nothing; to_tail when it is only
  // a candidate for the window of the last items
  const Want* wanted(Walk& k, const Item& it, std::size_t kend, std::size_t count, bool obj, bool& to_tail) const {
    to_tail = false;
    if (obj) {
      if (!k.w.members.empty()) {
        std::string_view lit = t_.substr(it.key + 1, kend - it.key - 2);
        auto f =
            lit.find('\\') == std::string_view::npos ? k.w.members.find(lit) : k.w.members.find(key_name(t_, it.key));
        if (f != k.w.members.end()) return &f->second;
      }
      return k.w.all ? &k.each : nullptr;
    }
    long long i = static_cast<long long>(count);
    while (k.next_index != k.w.indices.end() && *k.next_index < i) ++k.next_index;
    if (k.w.all || (k.next_index != k.w.indices.end() && *k.next_index == i)) return &k.each;
    if (!k.window) return nullptr;
    to_tail = true;
    return &k.each;
  }

  // The item at it.value, skipped, kept in the ring, or scanned as a child
  std::size_t item(Walk& k, Item& it, const Want* cw, bool to_tail, std::size_t count, Node& node, std::size_t depth) {
    if (k.pending) k.pending->next = it.key;
    if (k.pending_at != none) node.children[k.pending_at].next = it.key;
    k.pending = nullptr;
    k.pending_at = none;
    if (!cw) return skip(it.value, depth);
    if (to_tail) {
      // only where it is: the few that end up counting are scanned again at the end
      it.end = skip(it.value, depth);
      if (k.ring_used < k.window) k.ring.emplace_back();
      Walk::Spot& s = k.ring[k.ring_used++ % k.window];
      s = Walk::Spot{count, it, none};
      k.pending = &s;
      return it.end;
    }
    node.children.push_back(Child{count, it, none, Node{}});
    std::size_t end = value(it.value, *cw, node.children.back().node, depth);
    node.children.back().item.end = end;
    k.pending_at = node.children.size() - 1;
    return end;
  }

  // The items of the window that the indices counted from the end name,
  // now that the count is known, scanned and put in order among the others
  void finish_tail(Walk& k, Node& node, std::size_t depth) {
    long long n = static_cast<long long>(node.count);
    const std::size_t walked = node.children.size();
    for (std::size_t i = k.ring_used > k.window ? k.ring_used - k.window : 0; i < k.ring_used; ++i) {
      Walk::Spot& sp = k.ring[i % k.window];
      if (k.w.indices.count(static_cast<long long>(sp.index) - n)) {
        node.children.push_back(Child{sp.index, sp.item, sp.next, Node{}});
        value(sp.item.value, k.each, node.children.back().node, depth);
      }
    }
    // Two runs in order of index, the items taken walking and those of the
    // window (an item is in one or the other), merged by hand: std::sort or
    // std::stable_sort would be 9 to 14 KB of every tool that scans
    auto& c = node.children;
    if (walked == 0 || walked == c.size() || c[walked - 1].index < c[walked].index) return;
    std::vector<Child> merged;
    merged.reserve(c.size());
    std::size_t a = 0, b = walked;
    while (a < walked || b < c.size())
      merged.push_back(std::move(b == c.size() || (a < walked && c[a].index < c[b].index) ? c[a++] : c[b++]));
    c = std::move(merged);
  }

  // A wanted object or array: its items are walked here, the wanted ones
  // scanned further, the rest skipped.
  std::size_t container(std::size_t p, const Want& w, Node& node, std::size_t depth, bool obj) {
    if (++depth > json::max_depth) bad(p, "too deep");
    node.entered = true;
    Walk k(w, obj);
    std::size_t q = p + 1;
    std::size_t count = 0;
    for (;;) {
      Item it;
      std::size_t kend = 0;
      std::size_t v = item_start(q, count, obj, it, kend);
      if (v == none) {
        q = ws(q) + 1;
        break;
      }
      bool to_tail = false;
      const Want* cw = wanted(k, it, kend, count, obj, to_tail);
      it.end = item(k, it, cw, to_tail, count, node, depth);
      q = it.end;
      progress(q);
      if (count == 0) node.first = it;
      if (count == 1) node.second = it;
      node.last = it;
      ++count;
    }
    node.count = count;
    if (k.ring_used) finish_tail(k, node, depth);
    return q;
  }
};

}  // namespace

std::size_t string_end(std::string_view t, std::size_t p) {
  ++p;
  while (p < t.size() && t[p] != '"') p += t[p] == '\\' ? 2 : 1;
  return std::min(p + 1, t.size());
}

std::string key_name(std::string_view text, std::size_t key) {
  std::size_t e = string_end(text, key);
  std::string_view lit = text.substr(key, e - key);
  if (lit.find('\\') == std::string_view::npos) return std::string(lit.substr(1, lit.size() - 2));
  return std::string(json::parse(lit, "key").get_string());
}

Node scan(std::string_view text, const Want& want, std::string_view subject,
          const std::function<void(std::size_t)>& passed) {
  return Scanner(text, subject, passed).run(want);
}

// the decoded name of child c's key literal, without a copy when it has no escape
static std::string_view literal_name(std::string_view text, const Child& c, std::string& decoded) {
  std::size_t e = string_end(text, c.item.key);
  std::string_view lit = text.substr(c.item.key + 1, e - c.item.key - 2);
  if (lit.find('\\') == std::string_view::npos) return lit;
  decoded = key_name(text, c.item.key);
  return decoded;
}

const Child* member(std::string_view text, const Node& object, std::string_view name) {
  constexpr std::size_t few = 16;  // below this a look at each costs less than an index
  std::string decoded;
  if (object.children.size() < few) {
    const Child* found = nullptr;  // the last copy counts, as in a parsed document
    for (const Child& c : object.children)
      if (literal_name(text, c, decoded) == name) found = &c;
    return found;
  }
  if (!object.names) {
    auto index = std::make_shared<MemberIndex>();
    for (std::size_t i = 0; i < object.children.size(); ++i)
      (*index)[std::string(literal_name(text, object.children[i], decoded))] = i;  // the last copy wins
    object.names = std::move(index);
  }
  auto it = object.names->find(name);
  return it == object.names->end() ? nullptr : &object.children[it->second];
}

const Child* element(const Node& array, long long index) {
  long long n = static_cast<long long>(array.count);
  long long i = index < 0 ? n + index : index;
  if (i < 0 || i >= n) return nullptr;
  auto it = std::lower_bound(array.children.begin(), array.children.end(), static_cast<std::size_t>(i),
                             [](const Child& c, std::size_t k) { return c.index < k; });
  return it != array.children.end() && it->index == static_cast<std::size_t>(i) ? &*it : nullptr;
}

}  // namespace loopkit::scan
