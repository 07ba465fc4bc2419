#include "sys/time/tz.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <optional>
#include <string_view>
#include <sys/stat.h>

#include "sys/base/error.hpp"
#include "sys/base/fd.hpp"

namespace loopkit {

namespace {
using Rule = PosixRules::Rule;

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// sscanf's %hu, which glibc's parser uses: blanks skipped, a sign, decimal
// digits (strtoul's value: saturated, negated after a '-'), kept modulo
// 2^16. p moves past it only when there was a digit.
std::optional<unsigned short> scan_hu(const char*& p) {
  const char* s = p;
  while (*s == ' ' || (*s >= '\t' && *s <= '\r')) ++s;
  bool negative = false;
  if (*s == '+' || *s == '-') negative = *s++ == '-';
  if (!is_digit(*s)) return std::nullopt;
  unsigned long v = 0;
  bool saturated = false;
  for (; is_digit(*s); ++s)
    saturated |=
        __builtin_mul_overflow(v, 10ul, &v) || __builtin_add_overflow(v, static_cast<unsigned long>(*s - '0'), &v);
  if (saturated) v = ~0ul;
  else if (negative) v = -v;
  p = s;
  return static_cast<unsigned short>(v);
}

// sscanf(p, "%hu%n:%hu%n:%hu%n", ...): how many of v were read; p moves
// past the last one read
int scan_hms(const char*& p, unsigned short v[3]) {
  const char* s = p;
  int got = 0;
  for (; got < 3; ++got) {
    if (got > 0 && *s++ != ':') break;
    auto x = scan_hu(s);
    if (!x) break;
    v[got] = *x;
    p = s;
  }
  return got;
}

// A zone name: three letters or more, or <three or more of [A-Za-z0-9+-]>
bool parse_tzname(const char*& p) {
  const char* s = p;
  while ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z')) ++s;
  if (s - p < 3) {
    s = p;
    if (*s++ != '<') return false;
    const char* start = s;
    while ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || is_digit(*s) || *s == '+' || *s == '-') ++s;
    if (*s++ != '>' || s - 1 - start < 3) return false;
  }
  p = s;
  return true;
}

// [+-]hh[:mm[:ss]], west of UTC, each field clamped as glibc does (hours to
// 24, minutes and seconds to 59); a DST zone without one is an hour ahead
bool parse_offset(const char*& p, PosixRules& z, int which) {
  const char* s = p;
  if (which == 0 && *s != '+' && *s != '-' && !is_digit(*s)) return false;
  long sign = -1;
  if (*s == '-' || *s == '+') sign = *s++ == '-' ? 1 : -1;
  p = s;
  unsigned short v[3] = {0, 0, 0};
  if (scan_hms(p, v) > 0) {
    z.rules[which].offset =
        sign * (std::min<long>(v[2], 59) + std::min<long>(v[1], 59) * 60 + std::min<long>(v[0], 24) * 3600);
  } else if (which == 0) {
    return false;
  } else {
    z.rules[1].offset = z.rules[0].offset + 3600;
  }
  return true;
}

// Mm.w.d: the fields glibc stores as it reads them, whether or not it then
// refuses them
bool parse_month_rule(const char*& s, Rule& r) {
  unsigned short* field[3] = {&r.m, &r.n, &r.d};
  ++s;
  for (int i = 0; i < 3; ++i) {
    if (i > 0 && *s++ != '.') return false;
    auto x = scan_hu(s);
    if (!x) return false;
    *field[i] = *x;
  }
  return r.m >= 1 && r.m <= 12 && r.n >= 1 && r.n <= 5 && r.d <= 6;
}

bool parse_day_rule(const char*& s, Rule& r) {
  r.kind = *s == 'J' ? Rule::julian1 : Rule::day0;
  if (r.kind == Rule::julian1 && !is_digit(*++s)) return false;
  unsigned long d = 0;
  for (; is_digit(*s); ++s) d = std::min(d * 10 + static_cast<unsigned long>(*s - '0'), 366ul);
  if (d > 365 || (r.kind == Rule::julian1 && d == 0)) return false;
  r.d = static_cast<unsigned short>(d);
  return true;
}

// ,date[/time]: when a change happens (none: the US rules, as glibc has it)
bool parse_rule(const char*& p, Rule& r, bool first) {
  const char* s = p;
  s += *s == ',';
  if (*s == 'J' || is_digit(*s)) {
    if (!parse_day_rule(s, r)) return false;
  } else if (*s == 'M') {
    r.kind = Rule::month;
    if (!parse_month_rule(s, r)) return false;
  } else if (*s == '\0') {
    r.kind = Rule::month;
    r.m = first ? 3 : 11, r.n = first ? 2 : 1, r.d = 0;
  } else {
    return false;
  }
  if (*s != '\0' && *s != '/' && *s != ',') return false;
  if (*s != '/') {
    r.secs = 2 * 3600;
  } else {
    if (*++s == '\0') return false;  // secs as they were
    const bool negative = *s == '-';
    s += negative;
    unsigned short v[3] = {2, 0, 0};
    scan_hms(s, v);
    r.secs = (negative ? -1 : 1) * (v[0] * 3600 + v[1] * 60 + v[2]);
  }
  p = s;
  return true;
}

enum class Head { done, rules, default_rules };

// The names and offsets of a POSIX TZ value; what follows them
Head parse_posix_head(const char*& p, PosixRules& z) {
  z = PosixRules{};
  if (!parse_tzname(p) || !parse_offset(p, z, 0)) return Head::done;
  if (*p == '\0') {
    z.rules[1].offset = z.rules[0].offset;
    return Head::done;
  }
  if (parse_tzname(p)) {
    parse_offset(p, z, 1);
    if (*p == '\0' || (p[0] == ',' && p[1] == '\0')) return Head::default_rules;
  }
  return Head::rules;
}

void parse_posix_rules(const char* p, PosixRules& z) {
  if (parse_rule(p, z.rules[0], true)) parse_rule(p, z.rules[1], false);
}

bool is_leap(int y) { return y % 4 == 0 && (y % 100 != 0 || y % 400 == 0); }

// glibc's compute_change: the instant of r's change in year (which it takes
// from the UTC date, and before 1971 counts from 1970-01-01)
int64_t change_in(const Rule& r, int year) {
  static const unsigned short mon_yday[2][13] = {{0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334, 365},
                                                 {0, 31, 60, 91, 121, 152, 182, 213, 244, 274, 305, 335, 366}};
  int64_t t = 0;
  if (year > 1970)
    t = (int64_t{year - 1970} * 365 + ((year - 1) / 4 - 1970 / 4) - ((year - 1) / 100 - 1970 / 100) +
         ((year - 1) / 400 - 1970 / 400)) *
        86400;
  const bool leap = is_leap(year);
  if (r.kind == Rule::julian1) {
    t += (int64_t{r.d} - 1 + (r.d >= 60 && leap)) * 86400;
  } else if (r.kind == Rule::day0) {
    t += int64_t{r.d} * 86400;
  } else if (r.m >= 1 && r.m <= 12) {  // glibc reads past its table for any other month: never one it accepted
    const unsigned short* myday = &mon_yday[leap][r.m];
    const int m1 = (r.m + 9) % 12 + 1, yy0 = r.m <= 2 ? year - 1 : year, yy1 = yy0 / 100, yy2 = yy0 % 100;
    int dow = ((26 * m1 - 2) / 10 + 1 + yy2 + yy2 / 4 + yy1 / 4 - 2 * yy1) % 7;
    if (dow < 0) dow += 7;
    int d = r.d - dow;
    if (d < 0) d += 7;
    for (unsigned i = 1; i < r.n && d + 7 < myday[0] - myday[-1]; ++i) d += 7;
    t += (myday[-1] + int64_t{d}) * 86400;
  }
  return t - r.offset + r.secs;
}

// The proleptic Gregorian year of an epoch second, UTC
int utc_year(int64_t epoch) {
  int64_t z = (epoch >= 0 ? epoch : epoch - 86399) / 86400 + 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const auto doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  return static_cast<int>(static_cast<int64_t>(yoe) + era * 400 + (mp >= 10));
}

// glibc's __tz_compute: DST between the two changes of the UTC year (they
// cross on the southern hemisphere)
int64_t posix_offset(const PosixRules& z, int64_t epoch) {
  const int year = utc_year(epoch);
  const int64_t start = change_in(z.rules[0], year), end = change_in(z.rules[1], year);
  const bool dst = start > end ? (epoch < end || epoch >= start) : (epoch >= start && epoch < end);
  return z.rules[dst].offset;
}

// A name's ".." component, which could climb out of the zone folder
bool climbs(std::string_view name) {
  for (size_t at = 0; at <= name.size();) {
    size_t end = std::min(name.find('/', at), name.size());
    if (name.substr(at, end - at) == "..") return true;
    at = end + 1;
  }
  return false;
}

constexpr off_t max_zone_file = 256 * 1024;

// A regular file's bytes, or nullopt (missing, not regular, too big,
// unreadable: the zone is then not a file, as for glibc)
std::optional<std::string> read_zone_file(const std::string& path) {
  Fd fd = open_fd(path, O_RDONLY | O_NONBLOCK);  // a FIFO is never waited on
  struct stat st;
  if (!fd || fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > max_zone_file) return std::nullopt;
  try {
    return read_regular_up_to(fd.get(), max_zone_file, st.st_size, path);
  } catch (const Error&) {
    return std::nullopt;
  }
}
}  // namespace

TimeZone TimeZone::of_process() { return named(std::getenv("TZ")); }

TimeZone TimeZone::named(const char* tz) {
  TimeZone zone;
  if (tz && *tz == '\0') tz = "Universal";
  if (tz && *tz == ':') ++tz;
  const std::string name = tz ? tz : "/etc/localtime";
  if (zone.load_file(name)) return zone;
  zone = TimeZone{};
  if (tz && *tz && name != "/etc/localtime") zone.parse_posix(tz);
  return zone;
}

bool TimeZone::load_file(const std::string& name) {
  if (name.empty() || climbs(name)) return false;
  std::string path = name;
  if (name[0] != '/') {
    const char* dir = std::getenv("TZDIR");
    path = std::string(dir && *dir ? dir : "/usr/share/zoneinfo") + "/" + name;
  }
  auto bytes = read_zone_file(path);
  return bytes && parse_tzif(*bytes);
}

void TimeZone::parse_posix(const char* tz) {
  const Head head = parse_posix_head(tz, posix_);
  if (head == Head::default_rules && use_default_rules()) return;
  if (head != Head::done) parse_posix_rules(tz, posix_);
}

namespace {
uint32_t be32(const unsigned char* p) {
  return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | uint32_t{p[3]};
}
int64_t be64(const unsigned char* p) { return static_cast<int64_t>(uint64_t{be32(p)} << 32 | be32(p + 4)); }
int64_t be_time(const unsigned char* p, unsigned width) {
  return width == 8 ? be64(p) : int64_t{static_cast<int32_t>(be32(p))};
}

struct Counts {
  uint64_t isut, isstd, leaps, times, types, chars;
};
// The TZif header at b[at] (RFC 8536 3.1), or nullopt when there is none
// or it counts more flags than types
std::optional<Counts> header_at(std::string_view b, uint64_t at) {
  if (at > b.size() || b.size() - at < 44 || b.substr(at, 4) != "TZif") return std::nullopt;
  const auto* p = reinterpret_cast<const unsigned char*>(b.data() + at + 20);
  Counts c{be32(p), be32(p + 4), be32(p + 8), be32(p + 12), be32(p + 16), be32(p + 20)};
  if (c.isstd > c.types || c.isut > c.types) return std::nullopt;
  return c;
}
// the bytes of the data block after a header (no overflow: each count is
// under 2^32)
uint64_t data_size(const Counts& c, unsigned width) {
  return c.times * (width + 1) + c.types * 6 + c.chars + c.leaps * (width + 4) + c.isstd + c.isut;
}
}  // namespace

// RFC 8536, checked as glibc checks it: every count against the file's
// size, every index against its table (a file it refuses is no zone file
// here either). Version 1 data is skipped for the 64-bit data after it.
bool TimeZone::parse_tzif(std::string_view b) {
  auto c = header_at(b, 0);
  uint64_t at = 44;
  unsigned width = 4;
  if (c && b[4] != '\0') {
    at += data_size(*c, 4);
    c = header_at(b, at);
    at += 44, width = 8;
  }
  if (!c || c->types == 0 || at > b.size() || data_size(*c, width) > b.size() - at) return false;
  const uint64_t rest = b.size() - at - data_size(*c, width);
  if (width == 8 && rest < 2) return false;  // glibc wants at least the footer's newlines
  const auto* p = reinterpret_cast<const unsigned char*>(b.data() + at);
  for (uint64_t i = 0; i < c->times; ++i, p += width) at_.push_back(be_time(p, width));
  for (uint64_t i = 0; i < c->times; ++i) type_of_.push_back(*p++);
  for (uint64_t i = 0; i < c->types; ++i, p += 6) {
    if (p[4] > 1 || p[5] > c->chars) return false;
    types_.push_back(Type{static_cast<int32_t>(be32(p)), p[4] == 1, false, false});
  }
  if (std::any_of(type_of_.begin(), type_of_.end(), [&](uint8_t t) { return t >= types_.size(); })) return false;
  p += c->chars;
  for (uint64_t i = 0; i < c->leaps; ++i, p += width + 4)
    leaps_.push_back(Leap{be_time(p, width), static_cast<int32_t>(be32(p + width))});
  for (uint64_t i = 0; i < c->isstd; ++i) types_[i].isstd = *p++ != 0;
  for (uint64_t i = 0; i < c->isut; ++i) types_[i].isut = *p++ != 0;
  if (width == 8 && *p == '\n') {
    // up to the file's last byte (its closing newline), as a C string
    const std::string footer(reinterpret_cast<const char*>(p + 1), rest - 2);
    const char* s = footer.c_str();
    has_footer_ = *s != '\0';
    if (has_footer_ && parse_posix_head(s, footer_) != Head::done) parse_posix_rules(s, footer_);
  }
  from_file_ = true;
  return true;
}

// glibc's __tzfile_default: a TZ value that names a DST zone but no rules
// takes the transitions of the file "posixrules", moved to its offsets
bool TimeZone::use_default_rules() {
  const long std_off = posix_.rules[0].offset, dst_off = posix_.rules[1].offset;
  if (!load_file("posixrules") || types_.size() < 2) {
    const PosixRules kept = posix_;
    *this = TimeZone{};
    posix_ = kept;
    return false;
  }
  // A transition in the file's local time moves by the user's offset less
  // the file's: glibc 2.36 (checked against it over 1901-2100) takes the
  // standard offset of the file's last standard type, and 0 for DST.
  long rule_std = types_[0].offset;
  for (size_t i = at_.size(); i-- > 0;)
    if (!types_[type_of_[i]].isdst) {
      rule_std = types_[type_of_[i]].offset;
      break;
    }
  const long rule_dst = 0;
  bool isdst = false;
  for (size_t i = 0; i < at_.size(); ++i) {
    const Type t = types_[type_of_[i]];
    type_of_[i] = t.isdst;
    const long shift = t.isut ? 0 : isdst && !t.isstd ? dst_off - rule_dst : std_off - rule_std;
    at_[i] = static_cast<int64_t>(static_cast<uint64_t>(at_[i]) + static_cast<uint64_t>(shift));  // wraps as glibc's
    isdst = t.isdst;
  }
  types_.resize(2);
  types_[0].offset = static_cast<int32_t>(std_off), types_[0].isdst = false;
  types_[1].offset = static_cast<int32_t>(dst_off), types_[1].isdst = true;
  return true;
}

// glibc's __tzfile_compute: before the first transition the first standard
// type (or the first type); from the last on, the footer's rules if any;
// else the type of the last transition at or before epoch
int64_t TimeZone::file_offset(int64_t epoch) const {
  if (at_.empty() || epoch < at_[0]) {
    auto standard = std::find_if(types_.begin(), types_.end(), [](const Type& t) { return !t.isdst; });
    return (standard == types_.end() ? types_[0] : *standard).offset;
  }
  if (epoch >= at_.back() && has_footer_) return posix_offset(footer_, epoch);
  const auto after = std::upper_bound(at_.begin(), at_.end(), epoch);
  const size_t i = std::max<size_t>(static_cast<size_t>(after - at_.begin()), 1);  // unsorted: still in bounds
  return types_[type_of_[i - 1]].offset;
}

int64_t TimeZone::offset_at(int64_t epoch) const {
  if (!from_file_) return posix_offset(posix_, epoch);
  const int64_t offset = file_offset(epoch);
  for (size_t i = leaps_.size(); i-- > 0;)
    if (epoch >= leaps_[i].at) return offset - leaps_[i].change;
  return offset;
}

}  // namespace loopkit
