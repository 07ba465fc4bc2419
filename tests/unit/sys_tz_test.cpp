// issue 24: the local date without glibc's time zone code. sys/time/tz reads
// TZ, TZif files and POSIX TZ strings itself; glibc (setenv, tzset,
// localtime_r: this binary may link its tz code, the tools must not) is the
// oracle, over every day from 1901 to 2100 and both sides of each
// transition found on the way.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <ctime>
#include <string>
#include <sys/stat.h>
#include <vector>

#include "scratch.hpp"
#include "sys/time/clock.hpp"
#include "sys/time/tz.hpp"

using namespace loopkit;
using loopkit::testing::Scratch;

namespace {
constexpr int64_t from_1901 = -2177452800 + 3 * 3600 + 1234;  // an odd time of day
constexpr int64_t to_2100 = 4102444800;

bool exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}
bool have_tzdata() { return exists("/usr/share/zoneinfo/Europe/Paris"); }

int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  return era * 146097 + static_cast<int64_t>(yoe * 365 + yoe / 4 - yoe / 100 + doy) - 719468;
}

// TZ set (nullptr: unset) for glibc while it lives; the old value back after
class GlibcZone {
public:
  explicit GlibcZone(const char* tz) {
    if (const char* old = std::getenv("TZ")) old_ = old, had_ = true;
    if (tz) setenv("TZ", tz, 1);
    else unsetenv("TZ");
    tzset();
  }
  ~GlibcZone() {
    if (had_) setenv("TZ", old_.c_str(), 1);
    else unsetenv("TZ");
    tzset();
  }
  // the wall clock's seconds east of UTC at t, as localtime_r shows it (a
  // leap second's :60 read as :59, as the date does not change then)
  static int64_t offset(int64_t t) {
    const time_t tt = static_cast<time_t>(t);
    struct tm tm;
    localtime_r(&tt, &tm);
    const int64_t days =
        days_from_civil(tm.tm_year + 1900, static_cast<unsigned>(tm.tm_mon + 1), static_cast<unsigned>(tm.tm_mday));
    return days * 86400 + tm.tm_hour * 3600 + tm.tm_min * 60 + std::min(tm.tm_sec, 59) - t;
  }
  static std::string date(int64_t t) {
    const time_t tt = static_cast<time_t>(t);
    struct tm tm;
    localtime_r(&tt, &tm);
    char buf[32];
    strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
    return buf;
  }

private:
  std::string old_;
  bool had_ = false;
};

// Every day from 1901 to 2100 at an odd time, and each side of the changes
// found between two days (bisected): ours against glibc's. The mismatches
// (at most 5 shown).
std::vector<std::string> mismatches(const char* tz, int64_t from = from_1901, int64_t to = to_2100) {
  GlibcZone glibc(tz);
  const TimeZone zone = TimeZone::named(tz);
  std::vector<std::string> out;
  auto check = [&](int64_t t) {
    const int64_t want = GlibcZone::offset(t), got = zone.offset_at(t);
    if (want != got && out.size() < 5)
      out.push_back(std::string(tz ? tz : "(unset)") + " at " + std::to_string(t) + ": glibc " + std::to_string(want) +
                    ", ours " + std::to_string(got));
    return want;
  };
  int64_t before = check(from);
  for (int64_t t = from + 86400; t <= to; t += 86400) {
    const int64_t now = check(t);
    if (now == before) continue;
    int64_t lo = t - 86400, hi = t;  // glibc's offset: before at lo, another at hi
    while (hi - lo > 1) {
      const int64_t mid = lo + (hi - lo) / 2;
      (GlibcZone::offset(mid) == before ? lo : hi) = mid;
    }
    for (int64_t edge : {lo - 1, lo, hi, hi + 1}) check(edge);
    before = now;
  }
  for (int64_t t : {int64_t{0}, int64_t{-1}, int64_t{2147483647}, int64_t{2147483648}, max_epoch}) check(t);
  return out;
}

// A TZif file (RFC 8536): version (0 for 1, else '2'..'4'), 64-bit data
// after the 32-bit data for 2 and later, and a footer
struct TzifSpec {
  char version = '2';
  std::vector<std::pair<int64_t, uint8_t>> transitions;
  std::vector<std::pair<int32_t, bool>> types{{0, false}};
  std::vector<std::pair<int64_t, int32_t>> leaps;
  std::string footer;
};
void put(std::string& s, uint64_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) s += static_cast<char>(v >> (8 * i));
}
std::string tzif_block(const TzifSpec& z, int width, char version) {
  std::string s = "TZif";
  s += version;
  s += std::string(15, '\0');
  for (size_t n : {z.types.size(), z.types.size(), z.leaps.size(), z.transitions.size(), z.types.size(), size_t{4}})
    put(s, n, 4);
  for (auto& t : z.transitions) put(s, static_cast<uint64_t>(t.first), width);
  for (auto& t : z.transitions) s += static_cast<char>(t.second);
  for (auto& t : z.types) put(s, static_cast<uint32_t>(t.first), 4), s += static_cast<char>(t.second), s += '\0';
  s += std::string("ZZZ\0", 4);
  for (auto& l : z.leaps) put(s, static_cast<uint64_t>(l.first), width), put(s, static_cast<uint32_t>(l.second), 4);
  s += std::string(z.types.size(), '\0') + std::string(z.types.size(), '\0');
  return s;
}
std::string tzif(const TzifSpec& z) {
  if (z.version == 0) return tzif_block(z, 4, '\0');
  return tzif_block(z, 4, z.version) + tzif_block(z, 8, z.version) + "\n" + z.footer + "\n";
}
}  // namespace

TEST_CASE("issue 24: real zones: the offset glibc gives, 1901 to 2100, each transition's both sides", "[tz]") {
  if (!have_tzdata()) {
    WARN("tzdata is not installed: the zone cases are skipped");
    return;
  }
  for (const char* tz : {"Europe/Paris",
                         "America/New_York",
                         "Australia/Lord_Howe",
                         "Asia/Kathmandu",
                         "Pacific/Chatham",
                         "America/Sao_Paulo",
                         "Africa/Casablanca",
                         "Europe/Dublin",
                         "UTC",
                         "Etc/GMT+5",
                         "Etc/GMT-14",
                         "Pacific/Kiritimati",
                         "America/St_Johns",
                         "Antarctica/Troll",
                         "Asia/Tehran",
                         "Europe/Moscow",
                         "EST5EDT",
                         ":Europe/Paris",
                         "/usr/share/zoneinfo/Asia/Tokyo",
                         "posixrules"}) {
    INFO(tz);
    CHECK(mismatches(tz) == std::vector<std::string>{});
  }
}

TEST_CASE("issue 24: leap-second zones: their corrections taken off, as localtime_r does", "[tz]") {
  for (const char* tz : {"right/UTC", "right/Europe/Paris"}) {
    if (!exists(std::string("/usr/share/zoneinfo/") + tz)) continue;
    INFO(tz);
    CHECK(mismatches(tz, 0, 1893456000) == std::vector<std::string>{});
  }
}

TEST_CASE("issue 24: POSIX TZ strings, glibc's quirks included", "[tz]") {
  for (const char* tz : {"EST5EDT,M3.2.0,M11.1.0",
                         "<+0330>-3:30",
                         "JST-9",
                         "CET-1CEST,M3.5.0,M10.5.0/3",
                         "NZST-12NZDT,M9.5.0,M4.1.0/3",
                         "<-03>3<-02>,M3.5.0/-2,M10.5.0/-1",
                         "IST-2IDT,M3.4.4/26,M10.5.0",
                         "XXX-5:45",
                         "AAA5:99",
                         "AAA30",
                         "AAA-30",
                         "AAA+-5",
                         "AAA 5",
                         "GMT+3",
                         "UTC0",
                         "<A1>5",
                         "ab5",
                         "AAA3BBB,J60/2,J300/-1",
                         "AAA3BBB,59/25,300",
                         "AAA3BBB,0,365",
                         "AAA3BBB,J0,J365",
                         "AAA3BBB,366,1",
                         "AAA5BBB4,M3.2.0",
                         "EST5,M3.2.0,M11.1.0",
                         "AAA5BBB,M3.2.0x,M11.1.0",
                         "AAA5BBB,M3.2.0/167,M11.1.0/-167",
                         "AAA5BBB,M3.2.0/70000,M11.1.0",
                         "AAA5BBB,M3.2.0/ 3,M11.1.0",
                         "AAA5BBB,M3.2.0/,M11.1.0",
                         "AAA5BBB,M3.2.0/x",
                         "AAA5BBB,M3.2.0,M11.1.0/",
                         "AAA5BBB,M3.6.0,M11.1.0",
                         "AAA5BBB,M3.0.0,M11.1.0",
                         "AAA5BBB,M3.2.7,M11.1.0",
                         "AAA5BBB,M3.2,M11.1.0",
                         "AAA-3BBB-2:30:15,M3.5.0/1:2:3,M10.5.0/23:59:59",
                         "AAA5BBB,M2.5.6,M2.4.6",
                         "AAA5BBB,J59/24,J60/24",
                         "<+00>0<+01>,0/0,J365/25",
                         "Nonexistent/Zone",
                         "America",
                         ":",
                         ""}) {
    INFO(tz);
    CHECK(mismatches(tz) == std::vector<std::string>{});
  }
}

TEST_CASE("issue 24: a DST zone named without rules takes posixrules' transitions, as glibc", "[tz]") {
  if (!have_tzdata()) return;
  for (const char* tz : {"AAA5BBB", "AAA3BBB2", "AAA-10BBB-11", "AAA5BBB,", "AAA5BBB-4"}) {
    INFO(tz);
    CHECK(mismatches(tz) == std::vector<std::string>{});
  }
}

TEST_CASE("issue 24: TZ unset is /etc/localtime, TZ empty is UTC, TZDIR is where names are found", "[tz]") {
  CHECK(mismatches(nullptr) == std::vector<std::string>{});
  CHECK(TimeZone::named("").offset_at(1700000000) == 0);
  CHECK(TimeZone::named("Nonexistent/Zone").offset_at(1700000000) == 0);
  Scratch dir("loopkit-tz");
  TzifSpec z;
  z.types = {{3600 * 5 + 17, false}};
  dir.write("Mine", tzif(z));
  const char* old = std::getenv("TZDIR");
  setenv("TZDIR", dir.dir.c_str(), 1);
  CHECK(mismatches("Mine") == std::vector<std::string>{});
  CHECK(TimeZone::named("Mine").offset_at(0) == 3600 * 5 + 17);
  if (old) setenv("TZDIR", old, 1);
  else unsetenv("TZDIR");
}

TEST_CASE("issue 24: a name with a '..' component is never read as a file", "[tz]") {
  if (!have_tzdata()) return;
  CHECK(TimeZone::named("../zoneinfo/Asia/Tokyo").offset_at(1700000000) == 0);
  CHECK(TimeZone::named("Asia/../Asia/Tokyo").offset_at(1700000000) == 0);
  CHECK(TimeZone::named("/usr/share/zoneinfo/../zoneinfo/Asia/Tokyo").offset_at(1700000000) == 0);
  CHECK(TimeZone::named("Asia/Tokyo").offset_at(1700000000) == 9 * 3600);
}

TEST_CASE("issue 24: TZif files: versions 1 to 4, slim ones past their last transition, leap records", "[tz]") {
  Scratch dir("loopkit-tz");
  TzifSpec slim;  // a slim file: two transitions, then its footer's rules
  slim.types = {{3600, false}, {7200, true}};
  slim.transitions = {{1585443600, 1}, {1603587600, 0}};
  slim.footer = "CET-1CEST,M3.5.0,M10.5.0/3";
  int n = 0;
  for (char version : {'\0', '2', '3', '4'}) {
    TzifSpec z = slim;
    z.version = version;
    const std::string path = dir.path("v" + std::to_string(n++));
    dir.write(path.substr(dir.dir.size() + 1), tzif(z));
    CHECK(mismatches(path.c_str()) == std::vector<std::string>{});
  }
  TzifSpec all_dst = slim;  // before the first transition: the first standard type, else the first
  all_dst.types = {{7200, true}, {-3600, true}, {3600, false}};
  all_dst.transitions = {{0, 1}, {100000000, 0}};
  all_dst.footer = "";
  dir.write("dst", tzif(all_dst));
  CHECK(mismatches(dir.path("dst").c_str()) == std::vector<std::string>{});
  all_dst.types = {{7200, true}, {-3600, true}};
  dir.write("dst2", tzif(all_dst));
  CHECK(mismatches(dir.path("dst2").c_str()) == std::vector<std::string>{});
  TzifSpec leaps = slim;
  leaps.leaps = {{78796800, 1}, {94694401, 2}, {126230402, 3}};
  dir.write("leaps", tzif(leaps));
  CHECK(mismatches(dir.path("leaps").c_str(), 0, 200000000) == std::vector<std::string>{});
  CHECK(local_date(1585443599, TimeZone::named(dir.path("v1").c_str())) == "2020-03-29");
}

TEST_CASE("issue 24: truncated and corrupt TZif files: never read out of bounds, glibc's answer where it has one",
          "[tz]") {
  Scratch dir("loopkit-tz");
  TzifSpec z;
  z.types = {{3600, false}, {7200, true}, {-1800, false}};
  z.transitions = {{-100000, 2}, {1585443600, 1}, {1603587600, 0}};
  z.leaps = {{78796800, 1}};
  z.footer = "CET-1CEST,M3.5.0,M10.5.0/3";
  const std::string whole = tzif(z);
  auto probe = [&](const std::string& name, const std::string& bytes) {
    dir.write(name, bytes);
    const std::string path = dir.path(name);
    INFO(name);
    GlibcZone glibc(path.c_str());
    const TimeZone zone = TimeZone::named(path.c_str());
    for (int64_t t : {int64_t{-200000}, int64_t{0}, int64_t{1590000000}, int64_t{4000000000}})
      CHECK(zone.offset_at(t) == GlibcZone::offset(t));
  };
  // cut anywhere but in the footer: a footer cut to "CET-1CES" names a DST
  // zone without rules, and glibc then replaces the whole zone by
  // posixrules, a file's data by another's (here: the US rules)
  const size_t footer = whole.size() - z.footer.size() - 2;
  for (size_t size = 0; size <= whole.size(); ++size)
    if (size <= footer + 1 || size == whole.size()) probe("cut" + std::to_string(size), whole.substr(0, size));
  // each count (bytes 20..43 of both headers) made huge or off by one
  const size_t second = whole.size() - (whole.size() - whole.find("TZif", 4));
  int n = 0;
  for (size_t header : {size_t{0}, second})
    for (size_t at = header + 20; at < header + 44; at += 4)
      for (uint32_t v : {0xffffffffu, 0x7fffffffu, 0u, 1u, 5u}) {
        std::string bytes = whole;
        for (int i = 0; i < 4; ++i) bytes[at + i] = static_cast<char>(v >> (24 - 8 * i));
        probe("count" + std::to_string(n++), bytes);
      }
  // bytes flipped anywhere (a file glibc also reads may then have unsorted
  // transitions, where the two searches part ways): no crash, an offset
  uint32_t seed = 12345;
  for (int i = 0; i < 2000; ++i) {
    std::string bytes = whole;
    for (int k = 0; k < 3; ++k) {
      seed = seed * 1103515245 + 12345;
      bytes[(seed >> 8) % bytes.size()] = static_cast<char>(seed >> 24);
    }
    const std::string name = "flip" + std::to_string(i);
    dir.write(name, bytes);
    const TimeZone zone = TimeZone::named(dir.path(name).c_str());
    for (int64_t t : {int64_t{-200000}, int64_t{0}, int64_t{1590000000}, int64_t{4000000000}})
      CHECK(std::llabs(zone.offset_at(t)) < int64_t{1} << 40);
  }
}

TEST_CASE("issue 24: local_date: the date glibc shows", "[tz]") {
  for (const char* tz : {"Pacific/Kiritimati", "Etc/GMT+12", "EST5EDT,M3.2.0,M11.1.0", "<+0330>-3:30"}) {
    if (tz[0] != '<' && tz[0] != 'E' && !have_tzdata()) continue;
    GlibcZone glibc(tz);
    const TimeZone zone = TimeZone::named(tz);
    for (int64_t t = 1700000000 - 86400; t < 1700000000 + 86400; t += 1800)
      CHECK(local_date(t, zone) == GlibcZone::date(t));
    CHECK(local_date(1700000000) == GlibcZone::date(1700000000));  // TZ read from the environment
  }
}
