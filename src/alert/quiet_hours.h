// Quiet hours of a notification channel (config.json
// `notify.channels[i].quiet_hours`): a daily window of local time, such as
// 22:00 to 08:00, during which the channel's warning and info notifications
// are held, to be sent when the window ends; critical ones go at once
// (dispatch.h).
//
// Local time is that of a time zone: "UTC", "local" (the server's own, as
// its TZ variable or /etc/localtime say), a fixed offset ("+08:00",
// "-05:30"), or an IANA name ("Asia/Shanghai", "Europe/Berlin") read from the
// system's time zone database ($TZDIR, else /usr/share/zoneinfo), with its
// daylight saving time: the TZif file's transitions, and after the last one
// the POSIX rule its footer holds (RFC 8536), as the C library reads them.
// The process' TZ variable is never changed, so nothing here affects other
// threads.
//
// Thread safety: a TimeZone and a QuietHours are immutable values (copies
// share the zone's data), safe to use from any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "core/status.h"

namespace vigil::alert {

class TimeZone {
 public:
  TimeZone() = default;  // UTC
  static TimeZone Utc() { return TimeZone(); }
  static TimeZone Local();
  static TimeZone Fixed(int offset_seconds);
  // "UTC", "local", "+08:00", "-05:30", or an IANA name found under `tzdir`
  // ("" : $TZDIR, else /usr/share/zoneinfo). InvalidArgument otherwise.
  static Result<TimeZone> Parse(std::string_view name, std::string tzdir = "");
  // A POSIX TZ rule such as "CET-1CEST,M3.5.0,M10.5.0/3" (what a TZif
  // footer holds; the sign is POSIX's: "CST-8" is 8 hours east of UTC).
  static Result<TimeZone> FromPosixRule(std::string_view rule);
  // A TZif file's contents (RFC 8536, versions 1 to 4).
  static Result<TimeZone> FromTzif(std::string_view data, std::string name);

  // Seconds east of UTC at `unix_seconds`.
  int OffsetAt(int64_t unix_seconds) const;
  const std::string& name() const { return name_; }

  struct Rule;  // a POSIX rule, parsed
  struct Zone;  // a TZif file, parsed

 private:
  enum class Kind { kFixed, kLocal, kRule, kZone };
  Kind kind_ = Kind::kFixed;
  int fixed_offset_ = 0;
  std::string name_ = "UTC";
  std::shared_ptr<const Rule> rule_;
  std::shared_ptr<const Zone> zone_;
};

struct QuietHours {
  int start_minute = 0;  // minutes after local midnight, 0..1439
  int end_minute = 0;    // differs from start; before it: the window spans midnight
  TimeZone zone;
};

// "22:00" (or "7:30") -> minutes after midnight; InvalidArgument otherwise.
Result<int> ParseClockTime(std::string_view text);

// Parses the three values (messages name the value, not the config key:
// the caller prefixes where it came from). start and end must differ.
Result<QuietHours> ParseQuietHours(std::string_view start, std::string_view end,
                                   std::string_view timezone, std::string tzdir = "");

// Whether `unix_ms` is within the window (start inclusive, end exclusive).
bool InQuietHours(const QuietHours& quiet, int64_t unix_ms);

}  // namespace vigil::alert
