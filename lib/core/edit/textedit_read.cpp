// What a run must scan for, and the lookups on scanned text: the reading
// half of core/edit/textedit.hpp.
#include <algorithm>
#include <functional>
#include <map>

#include "core/edit/textedit.hpp"
#include "sys/base/error.hpp"
#include "sys/base/format.hpp"

namespace loopkit::textedit {

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
  for (const Edit& e : edits) {
    add(e.path, e.op == Edit::append);
    if (e.op != Edit::merge) continue;
    // a merge reaches into the members its object names, and theirs
    Path p = e.path;
    std::function<void(const json::value&)> members = [&](const json::value& v) {
      if (!v.is_object()) return;
      for (const auto& [name, value] : v.get_object()) {
        p.segments.push_back({Segment::key, std::string(name), 0});
        add(p, false);
        members(value);
        p.segments.pop_back();
      }
    };
    members(e.operand);
  }
  for (const Path& p : compared) add(p, false);
  want.settle();
  return want;
}

// ---- reading the scanned text ----------------------------------------------------

json::value value_in(std::string_view text, const scan::Node& root, const Path& path) {
  try {
    auto spans = lookup(text, root, path);
    // big integers keep their digits, as --expect and --require read them
    if (spans.size() == 1 && spans[0])
      return json::parse(text.substr(spans[0]->first, spans[0]->second - spans[0]->first), "value", {},
                         json::Literals::big_integers);
  } catch (const Error& e) {
    if (e.code() != Exit::data) throw;  // through a scalar: nothing there
  }
  return nullptr;
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
            fail_data(loopkit::format("{}: cannot look up {} in {}", path.text, json::quote(seg.name),
                                      with_article(text_type_name(c))));
          const scan::Child* m = scan::member(text, *n, seg.name);
          next.push_back(m ? &m->node : nullptr);
          break;
        }
        case Segment::elem: {
          if (c != '[')
            fail_data(loopkit::format("{}: cannot index {} with [{}]", path.text, with_article(text_type_name(c)),
                                      seg.index));
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
            fail_data(
                loopkit::format("{}: cannot list the elements of {}", path.text, with_article(text_type_name(c))));
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

}  // namespace loopkit::textedit
