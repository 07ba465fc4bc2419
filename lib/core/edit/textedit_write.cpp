// Writing a plan's result: the old text's slices and the new values, in
// order, to a sink (see core/edit/textedit.hpp).
#include <string>

#include "core/json/json.hpp"
#include "core/edit/textedit.hpp"
#include "core/edit/textedit_overlay.hpp"
#include "sys/base/fd.hpp"
#include "sys/fs/mapped.hpp"

namespace loopkit::textedit {

// ---- sinks ------------------------------------------------------------------

void FdSink::write(std::string_view bytes) {
  constexpr std::size_t cap = 64 * 1024;
  constexpr std::size_t kernel_copy = std::size_t(1) << 20;
  total_ += bytes.size();
  std::size_t at = source_ ? source_->offset_of(bytes) : std::string_view::npos;
  if (at != std::string_view::npos && bytes.size() >= kernel_copy) {
    flush();
    copy_range(source_->fd(), static_cast<off_t>(at), fd_, bytes.size(), subject_);
  } else if (buf_.size() + bytes.size() <= cap) {
    buf_.append(bytes);
  } else {
    flush();
    if (bytes.size() >= cap) write_all(fd_, bytes, subject_);
    else buf_.append(bytes);
  }
  // the writer moves forward through the old text: what it passed is done
  if (at != std::string_view::npos) source_->release_before(at + bytes.size());
}

void FdSink::flush() {
  if (buf_.empty()) return;
  write_all(fd_, buf_, subject_);
  buf_.clear();
}

namespace {

using Item = scan::Item;

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
  void document(const json::Layout& style) {
    restyle(t_, 0, style, "");
    if (style.final_newline) put("\n");
    flush();
  }

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
    // only the blanks: a layout whose commas start the lines ("\n  ,") has
    // its comma here too, and new items bring their own
    std::string_view line = pre.substr(nl + 1);
    return std::string(line.substr(0, line.find_first_not_of(" \t")));
  }

  // The style of a container's new items: that of its existing ones (as
  // the file's layout where there are none).
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
      separator(style, first, inner);
      first = false;
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
    while (is_json_ws(t[p])) ++p;
    char c = t[p];
    if (c != '{' && c != '[') {
      std::size_t e = p;
      if (c == '"') {
        e = scan::string_end(t, p);
      } else {
        while (e < t.size() && !is_json_ws(t[e]) && t[e] != ',' && t[e] != '}' && t[e] != ']') ++e;
      }
      put_pending();
      out_.write(t.substr(p, e - p));
      return e;
    }
    bool obj = c == '{';
    char close = obj ? '}' : ']';
    std::size_t q = p + 1;
    while (is_json_ws(t[q])) ++q;
    if (t[q] == close) {
      put(obj ? "{}" : "[]");
      return q + 1;
    }
    std::string inner = style.pretty ? indent + style.indent : indent;
    put(obj ? "{" : "[");
    bool first = true;
    for (;;) {
      while (is_json_ws(t[q])) ++q;
      if (t[q] == close) break;
      if (t[q] == ',') {
        ++q;
        while (is_json_ws(t[q])) ++q;
      }
      separator(style, first, inner);
      first = false;
      if (obj) {
        std::size_t kend = scan::string_end(t, q);
        put_pending();
        out_.write(t.substr(q, kend - q));
        put(style.space_after_colon ? ": " : ":");
        q = kend;
        while (is_json_ws(t[q])) ++q;
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

void Plan::write(Sink& out) const {
  Writer w(text_, layout_, out);
  w.copy(0, begin_);  // whatever surrounds the document stays
  w.value(*root_, layout_, "");
  w.copy(end_, text_.size());
  w.flush();
}

void restyle(std::string_view text, const json::Layout& layout, Sink& out) {
  Writer w(text, layout, out);
  w.document(layout);
}

}  // namespace loopkit::textedit
