// The process's time zone as glibc's localtime_r applies it, read without
// glibc's time zone code: its POSIX TZ parser brings sscanf, every strto*
// and float128 soft math (100 KB) into each tool that asks for today's date.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace loopkit {

// A POSIX TZ value's rules ("EST5EDT,M3.2.0,M11.1.0") as glibc's tzset
// leaves them, its quirks included (a rule it could not parse stays as far
// as it got).
struct PosixRules {
  struct Rule {
    enum Kind : uint8_t { day0, julian1, month } kind = day0;  // n, Jn, Mm.w.d
    unsigned short m = 0, n = 0, d = 0;
    int secs = 0;     // the change's local time of day
    long offset = 0;  // seconds east of UTC
  };
  // [0]: standard time, with the date DST starts; [1]: DST, with the date
  // it ends (a zone without DST: both the same)
  Rule rules[2];
};

class TimeZone {
public:
  // The zone of a TZ value (nullptr: TZ unset), found as glibc's tzset
  // finds it: "" is UTC, a leading ':' is dropped, /etc/localtime when
  // unset, a path or a name under $TZDIR (else /usr/share/zoneinfo) read as
  // a TZif file (never one with a ".." component, nor over 256 KiB), else
  // the value parsed as a POSIX TZ string; UTC when none of that works.
  static TimeZone named(const char* tz);
  static TimeZone of_process();  // $TZ
  // Seconds east of UTC of the wall clock at epoch (a leap-second zone's
  // correction taken off, as localtime_r does).
  int64_t offset_at(int64_t epoch) const;

private:
  struct Type {
    int32_t offset = 0;
    bool isdst = false, isstd = false, isut = false;
  };
  struct Leap {
    int64_t at;
    int32_t change;
  };
  bool load_file(const std::string& name);
  bool parse_tzif(std::string_view bytes);
  void parse_posix(const char* tz);
  bool use_default_rules();
  int64_t file_offset(int64_t epoch) const;

  bool from_file_ = false;
  std::vector<int64_t> at_;       // transitions, from the file
  std::vector<uint8_t> type_of_;  // the type each begins
  std::vector<Type> types_;       // never empty when from_file_
  std::vector<Leap> leaps_;
  bool has_footer_ = false;    // the file's POSIX TZ string, past its last transition
  PosixRules footer_, posix_;  // posix_: when not from_file_
};

}  // namespace loopkit
