#include "core/scan.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "core/json.hpp"
#include "core/jsontext.hpp"
#include "sys/error.hpp"

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

bool is_digit(unsigned char c) { return c >= '0' && c <= '9'; }
int hex(unsigned char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c |= 0x20;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

const Want nothing;

class Scanner {
public:
  Scanner(std::string_view t, std::string_view subject, const std::function<void(std::size_t)>& passed)
      : t_(t),
        d_(reinterpret_cast<const unsigned char*>(t.data())),
        n_(t.size()),
        subject_(subject),
        passed_(passed),
        report_at_(passed ? chunk : none) {}

  Node run(const Want& want) {
    std::size_t p = ws(0);
    if (p == n_) bad(p, "empty document");
    Node root;
    std::size_t e = value(p, want, root, 0);
    if (ws(e) != n_) bad(ws(e), "extra data");
    return root;
  }

private:
  std::string_view t_;
  const unsigned char* d_;
  std::size_t n_;
  std::string_view subject_;
  mutable std::array<std::uint64_t, (json::max_depth + 64) / 64> open_{};
  static constexpr std::size_t chunk = std::size_t(16) << 20;
  const std::function<void(std::size_t)>& passed_;
  mutable std::size_t report_at_;  // the next offset to report, or none

  // one compare per value on the hot path; the call only every 16 MiB
  void progress(std::size_t p) const {
    if (p < report_at_) return;
    std::size_t done = p / chunk * chunk;
    report_at_ = done + chunk;
    passed_(done);
  }

  // The message is json::parse's wherever it agrees that the text is bad
  // (validate_json throws it); only what it lets through is ours.
  [[noreturn]] void bad(std::size_t at, std::string_view reason) const {
    validate_json(t_, subject_);
    std::size_t line = 1, col = 1;
    for (std::size_t i = 0; i < at && i < n_; ++i) {
      if (d_[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    fail_data(fmt::format("{}: not valid JSON: {} at line {}, column {}", quoted(subject_), reason, line, col));
  }
  [[noreturn]] void bad(std::size_t at) const { bad(at, "syntax error"); }

  std::size_t ws(std::size_t p) const {
    while (p < n_) {
      unsigned char c = d_[p];
      if (c > ' ') return p;  // most calls find no whitespace at all
      if (c == ' ') {
        // one space (after a colon) is the common gap; indentation comes in runs
        if (p + 1 < n_ && d_[p + 1] != ' ') {
          ++p;
          continue;
        }
#if defined(__SSE2__)
        const __m128i space = _mm_set1_epi8(' ');
        while (p + 16 <= n_) {
          __m128i chunk = _mm_loadu_si128(reinterpret_cast<const __m128i*>(d_ + p));
          unsigned other = ~static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(chunk, space))) & 0xffffu;
          if (other) {
            p += static_cast<std::size_t>(__builtin_ctz(other));
            break;
          }
          p += 16;
        }
#endif
        while (p < n_ && d_[p] == ' ') ++p;
      } else if (c == '\n' || c == '\r' || c == '\t') {
        ++p;
      } else {
        return p;
      }
    }
    return p;
  }

  std::size_t string(std::size_t p) const {  // p at '"'
    ++p;
    for (;;) {
#if defined(__SSE2__)
      // a quote, a backslash, a control character or a non-ASCII byte stops
      // the 16-byte steps (a signed compare below 0x20 catches 0x80..0xff too)
      const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\'), space = _mm_set1_epi8(0x20);
      // 32 bytes a step while the string is long (a summary, a message)
      while (p + 32 <= n_) {
        __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(d_ + p));
        __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(d_ + p + 16));
        __m128i ha = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(a, quote), _mm_cmpeq_epi8(a, backslash)),
                                  _mm_cmplt_epi8(a, space));
        __m128i hb = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(b, quote), _mm_cmpeq_epi8(b, backslash)),
                                  _mm_cmplt_epi8(b, space));
        unsigned m = static_cast<unsigned>(_mm_movemask_epi8(ha)) | static_cast<unsigned>(_mm_movemask_epi8(hb)) << 16;
        if (m) {
          p += static_cast<std::size_t>(__builtin_ctz(m));
          goto found;
        }
        p += 32;
      }
      while (p + 16 <= n_) {
        __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(d_ + p));
        __m128i hit = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(c, quote), _mm_cmpeq_epi8(c, backslash)),
                                   _mm_cmplt_epi8(c, space));
        unsigned m = static_cast<unsigned>(_mm_movemask_epi8(hit));
        if (m) {
          p += static_cast<std::size_t>(__builtin_ctz(m));
          break;
        }
        p += 16;
      }
    found:
#endif
      if (p >= n_) bad(p, "incomplete JSON");
      unsigned char c = d_[p];
      if (c == '"') return p + 1;
      if (c == '\\') {
        p = escape(p);
      } else if (c < 0x20) {
        bad(p);
      } else if (c >= 0x80) {
        p = utf8(p);
      } else {
        ++p;
      }
    }
  }

  unsigned hex4(std::size_t p) const {  // 4 hex digits at p
    if (p + 4 > n_) bad(p, "incomplete JSON");
    unsigned v = 0;
    for (std::size_t i = 0; i < 4; ++i) {
      int h = hex(d_[p + i]);
      if (h < 0) bad(p + i);
      v = v << 4 | static_cast<unsigned>(h);
    }
    return v;
  }

  std::size_t escape(std::size_t p) const {  // p at '\\'
    if (p + 1 >= n_) bad(p, "incomplete JSON");
    switch (d_[p + 1]) {
      case '"':
      case '\\':
      case '/':
      case 'b':
      case 'f':
      case 'n':
      case 'r':
      case 't': return p + 2;
      case 'u': break;
      default: bad(p + 1);
    }
    unsigned u = hex4(p + 2);
    if (u >= 0xDC00 && u <= 0xDFFF) bad(p, "illegal trailing surrogate");
    if (u < 0xD800 || u > 0xDBFF) return p + 6;
    // a leading surrogate needs its trailing half right after it
    if (p + 8 > n_ || d_[p + 6] != '\\' || d_[p + 7] != 'u') bad(p + 6, "illegal leading surrogate");
    unsigned low = hex4(p + 8);
    if (low < 0xDC00 || low > 0xDFFF) bad(p + 6, "illegal leading surrogate");
    return p + 12;
  }

  std::size_t utf8(std::size_t p) const {  // p at a byte >= 0x80
    unsigned char c = d_[p];
    std::size_t len;
    unsigned cp;
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
      cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      cp = c & 0x07;
    } else {
      bad(p);
    }
    if (p + len > n_) bad(p, "incomplete JSON");
    for (std::size_t i = 1; i < len; ++i) {
      unsigned char k = d_[p + i];
      if ((k & 0xC0) != 0x80) bad(p + i);
      cp = cp << 6 | (k & 0x3F);
    }
    // overlong forms, surrogates and code points past U+10FFFF are not UTF-8
    if ((len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
      bad(p);
    return p + len;
  }

  std::size_t number(std::size_t p) const {
    std::size_t start = p;
    if (d_[p] == '-') ++p;
    if (p >= n_) bad(p, "incomplete JSON");
    long long int_digits = 0;  // of the integer part, leading zero not counted
    if (d_[p] == '0') {
      ++p;
    } else if (is_digit(d_[p])) {
      while (p < n_ && is_digit(d_[p])) {
        ++p;
        ++int_digits;
      }
    } else {
      bad(p);
    }
    if (p < n_ && d_[p] == '.') {
      ++p;
      if (p >= n_ || !is_digit(d_[p])) bad(p);
      while (p < n_ && is_digit(d_[p])) ++p;
    }
    long long exp = 0;
    if (p < n_ && (d_[p] | 0x20) == 'e') {
      ++p;
      bool neg = false;
      if (p < n_ && (d_[p] == '+' || d_[p] == '-')) neg = d_[p++] == '-';
      if (p >= n_ || !is_digit(d_[p])) bad(p);
      while (p < n_ && is_digit(d_[p])) {
        if (exp < 100000000) exp = exp * 10 + (d_[p] - '0');
        ++p;
      }
      if (neg) exp = -exp;
    }
    // Boost.JSON, which parses the values printed, refuses an exponent
    // past INT_MAX, or one that its count of digits pushes there, even on
    // 0e...: a text it cannot read is no number here either. Only such
    // extremes (a saturated exponent, a literal of 100 MB) are asked.
    if (exp >= 100000000 || exp <= -100000000 || p - start >= 100000000) {
      try {
        validate_json(t_.substr(start, p - start), subject_);
      } catch (const Error&) {
        bad(start, "exponent overflow");
      }
    }
    // Only a literal that may pass DBL_MAX (about 1.8e308) is converted to
    // find out: a finite number is what every reader can hold.
    if (int_digits + exp > 308) {
      std::string lit(t_.substr(start, p - start));
      if (std::isinf(std::strtod(lit.c_str(), nullptr))) bad(start, "number out of range");
    }
    return p;
  }

  std::size_t literal(std::size_t p, std::string_view word) const {
    if (n_ - p < word.size() || std::memcmp(d_ + p, word.data(), word.size()) != 0) bad(p);
    return p + word.size();
  }

  std::size_t scalar(std::size_t p) const {
    switch (d_[p]) {
      case '"': return string(p);
      case 't': return literal(p, "true");
      case 'f': return literal(p, "false");
      case 'n': return literal(p, "null");
      default:
        if (d_[p] == '-' || is_digit(d_[p])) return number(p);
        bad(p);
    }
  }

  // A value nobody wants: validated and skipped without recursion; depth
  // is the number of containers already open around it.
  std::size_t skip(std::size_t p, std::size_t depth) const {
    if (d_[p] != '{' && d_[p] != '[') return scalar(p);
    auto& open = open_;  // the kinds of the containers opened here, as bits (1 = object)
    std::size_t top = 0;
    auto is_object = [&] { return (open[(top - 1) / 64] >> ((top - 1) % 64)) & 1; };
  value:
    if (p >= n_) bad(p, "incomplete JSON");
    if (d_[p] == '{' || d_[p] == '[') {
      bool obj = d_[p] == '{';
      if (++depth > json::max_depth) bad(p, "too deep");
      p = ws(p + 1);
      if (p < n_ && d_[p] == (obj ? '}' : ']')) {
        ++p;
        --depth;
        goto after;
      }
      std::uint64_t bit = std::uint64_t(1) << (top % 64);
      if (obj) open[top / 64] |= bit;
      else open[top / 64] &= ~bit;
      ++top;
      if (obj) goto key;
      goto value;
    }
    p = scalar(p);
    goto after;
  key:
    if (p >= n_) bad(p, "incomplete JSON");
    if (d_[p] != '"') bad(p);
    p = ws(string(p));
    if (p >= n_ || d_[p] != ':') bad(p);
    p = ws(p + 1);
    goto value;
  after:
    progress(p);
    if (top == 0) return p;
    p = ws(p);
    if (p >= n_) bad(p, "incomplete JSON");
    if (d_[p] == ',') {
      p = ws(p + 1);
      if (is_object()) goto key;
      goto value;
    }
    if (d_[p] == (is_object() ? '}' : ']')) {
      ++p;
      --top;
      --depth;
      goto after;
    }
    bad(p);
  }

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

  // A wanted object or array: its items are walked here, the wanted ones
  // scanned further, the rest skipped.
  std::size_t container(std::size_t p, const Want& w, Node& node, std::size_t depth, bool obj) {
    if (++depth > json::max_depth) bad(p, "too deep");
    node.entered = true;
    const char close = obj ? '}' : ']';
    const Want& each = w.element ? *w.element : nothing;
    // arrays: the wanted indices from the start, in order, and a window of
    // the last items for those counted from the end
    auto next_index = w.indices.lower_bound(0);
    std::size_t window = 0;
    if (!obj && !w.all && !w.indices.empty() && *w.indices.begin() < 0)
      window = static_cast<std::size_t>(-*w.indices.begin());
    // the last `window` items, where they are: a ring of plain offsets
    struct Spot {
      std::size_t index;
      Item item;
      std::size_t next;
    };
    std::vector<Spot> ring;         // grown as items come: [-999999999999] costs what the array holds
    std::size_t ring_used = 0;      // items put in the ring so far
    Spot* pending = nullptr;        // the last item kept, waiting for where its successor starts
    std::size_t pending_at = none;  // ... or its index in node.children

    std::size_t q = p + 1;
    std::size_t count = 0;
    for (;;) {
      std::size_t prefix = q;
      q = ws(q);
      if (q >= n_) bad(q, "incomplete JSON");
      if (d_[q] == close) {
        ++q;
        break;
      }
      if (count > 0) {
        if (d_[q] != ',') bad(q);
        q = ws(q + 1);
        if (q >= n_) bad(q, "incomplete JSON");
      }
      Item it;
      std::size_t kend = 0;
      it.prefix = prefix;
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
      if (pending) pending->next = it.key;
      if (pending_at != none) node.children[pending_at].next = it.key;
      pending = nullptr;
      pending_at = none;

      const Want* cw = nullptr;
      bool to_tail = false;
      if (obj) {
        if (!w.members.empty()) {
          std::string_view lit = t_.substr(it.key + 1, kend - it.key - 2);
          auto f =
              lit.find('\\') == std::string_view::npos ? w.members.find(lit) : w.members.find(key_name(t_, it.key));
          if (f != w.members.end()) cw = &f->second;
        }
        if (!cw && w.all) cw = &each;
      } else {
        long long i = static_cast<long long>(count);
        while (next_index != w.indices.end() && *next_index < i) ++next_index;
        if (w.all || (next_index != w.indices.end() && *next_index == i)) cw = &each;
        else if (window) {
          cw = &each;
          to_tail = true;
        }
      }
      if (!cw) {
        it.end = skip(q, depth);
      } else if (to_tail) {
        // only where it is: the few that end up counting are scanned again at the end
        it.end = skip(q, depth);
        if (ring_used < window) ring.emplace_back();
        Spot& s = ring[ring_used++ % window];
        s = Spot{count, it, none};
        pending = &s;
      } else {
        node.children.push_back(Child{count, it, none, Node{}});
        it.end = value(q, *cw, node.children.back().node, depth);
        node.children.back().item.end = it.end;
        pending_at = node.children.size() - 1;
      }
      q = it.end;
      progress(q);
      if (count == 0) node.first = it;
      if (count == 1) node.second = it;
      node.last = it;
      ++count;
    }
    node.count = count;
    if (ring_used) {
      long long n = static_cast<long long>(count);
      bool added = false;
      for (std::size_t k = ring_used > window ? ring_used - window : 0; k < ring_used; ++k) {
        Spot& sp = ring[k % window];
        if (w.indices.count(static_cast<long long>(sp.index) - n)) {
          node.children.push_back(Child{sp.index, sp.item, sp.next, Node{}});
          value(sp.item.value, each, node.children.back().node, depth);
          added = true;
        }
      }
      if (added)
        std::stable_sort(node.children.begin(), node.children.end(),
                         [](const Child& a, const Child& b) { return a.index < b.index; });
    }
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

const Child* member(std::string_view text, const Node& object, std::string_view name) {
  const Child* found = nullptr;  // the last copy counts, as in a parsed document
  for (const Child& c : object.children) {
    std::size_t e = string_end(text, c.item.key);
    std::string_view lit = text.substr(c.item.key + 1, e - c.item.key - 2);
    bool same = lit.find('\\') == std::string_view::npos ? lit == name : key_name(text, c.item.key) == name;
    if (same) found = &c;
  }
  return found;
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
