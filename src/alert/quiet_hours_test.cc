// Quiet hours with explicit times, and the time zones checked against the C
// library's own reading of the same zone files and POSIX rules.
#include "alert/quiet_hours.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <optional>
#include <string>

namespace vigil::alert {
namespace {

// 2026-01-01T00:00:00Z and 2026-07-01T00:00:00Z, in ms.
constexpr int64_t kJan1 = 1'767'225'600'000;
constexpr int64_t kJul1 = 1'782'864'000'000;
constexpr int64_t kHour = 3'600'000;
constexpr int64_t kMinute = 60'000;

bool HaveZoneinfo() { return std::filesystem::exists("/usr/share/zoneinfo/Asia/Shanghai"); }

// Sets TZ for the C library while alive (tests run on one thread).
class ScopedTz {
 public:
  explicit ScopedTz(const std::string& tz) {
    if (const char* old = std::getenv("TZ")) old_ = old;
    ::setenv("TZ", tz.c_str(), 1);
    ::tzset();
  }
  ~ScopedTz() {
    if (old_)
      ::setenv("TZ", old_->c_str(), 1);
    else
      ::unsetenv("TZ");
    ::tzset();
  }

 private:
  std::optional<std::string> old_;
};

int LibcOffset(int64_t t) {
  auto tt = static_cast<std::time_t>(t);
  std::tm tm{};
  localtime_r(&tt, &tm);
  return static_cast<int>(tm.tm_gmtoff);
}

TEST(ClockTimeTest, ParsesHoursAndMinutes) {
  EXPECT_EQ(*ParseClockTime("22:00"), 22 * 60);
  EXPECT_EQ(*ParseClockTime("7:30"), 7 * 60 + 30);
  EXPECT_EQ(*ParseClockTime("00:00"), 0);
  EXPECT_EQ(*ParseClockTime("23:59"), 23 * 60 + 59);
  for (const char* bad :
       {"", "24:00", "12:60", "1200", "12:5", "-1:00", "12:00:00", "ab:cd", " 8:00"}) {
    EXPECT_FALSE(ParseClockTime(bad).ok()) << bad;
  }
}

TEST(QuietHoursTest, RefusesBadValuesByName) {
  auto q = ParseQuietHours("22:00", "22:00", "UTC");
  ASSERT_FALSE(q.ok());
  EXPECT_NE(q.status().message().find("differ"), std::string::npos);
  q = ParseQuietHours("25:00", "08:00", "UTC");
  ASSERT_FALSE(q.ok());
  EXPECT_NE(q.status().message().find("start"), std::string::npos) << q.status().message();
  q = ParseQuietHours("22:00", "8", "UTC");
  ASSERT_FALSE(q.ok());
  EXPECT_NE(q.status().message().find("end"), std::string::npos) << q.status().message();
  for (const char* tz : {"Mars/Olympus", "../../etc/passwd", "/etc/localtime", "+8", "+15:00",
                         "+08:60", "Asia//Shanghai", ""}) {
    q = ParseQuietHours("22:00", "08:00", tz);
    ASSERT_FALSE(q.ok()) << tz;
    EXPECT_NE(q.status().message().find("timezone"), std::string::npos) << q.status().message();
  }
  q = ParseQuietHours("22:00", "08:00", "Asia/Shanghai", "/nonexistent");
  ASSERT_FALSE(q.ok());
  EXPECT_NE(q.status().message().find("/nonexistent"), std::string::npos);
  EXPECT_NE(q.status().message().find("+08:00"), std::string::npos);  // the way out
}

TEST(QuietHoursTest, AcrossMidnightInUtcAndAFixedOffset) {
  QuietHours utc = *ParseQuietHours("22:00", "08:00", "UTC");
  EXPECT_FALSE(InQuietHours(utc, kJan1 + 21 * kHour + 59 * kMinute));
  EXPECT_TRUE(InQuietHours(utc, kJan1 + 22 * kHour));  // start inclusive
  EXPECT_TRUE(InQuietHours(utc, kJan1 + 23 * kHour + 59 * kMinute));
  EXPECT_TRUE(InQuietHours(utc, kJan1));
  EXPECT_TRUE(InQuietHours(utc, kJan1 + 8 * kHour - 1));
  EXPECT_FALSE(InQuietHours(utc, kJan1 + 8 * kHour));  // end exclusive
  EXPECT_FALSE(InQuietHours(utc, kJan1 + 12 * kHour));
  // Before 1970 too (negative times round down).
  EXPECT_TRUE(InQuietHours(utc, -1));

  // A window within one day, at +08:00: 12:00-14:00 local is 04:00-06:00 UTC.
  QuietHours lunch = *ParseQuietHours("12:00", "14:00", "+08:00");
  EXPECT_EQ(lunch.zone.name(), "+08:00");
  EXPECT_FALSE(InQuietHours(lunch, kJan1 + 4 * kHour - 1));
  EXPECT_TRUE(InQuietHours(lunch, kJan1 + 4 * kHour));
  EXPECT_TRUE(InQuietHours(lunch, kJan1 + 5 * kHour + 59 * kMinute));
  EXPECT_FALSE(InQuietHours(lunch, kJan1 + 6 * kHour));
  QuietHours west = *ParseQuietHours("22:00", "06:00", "-05:30");
  EXPECT_TRUE(InQuietHours(west, kJan1 + 3 * kHour + 30 * kMinute));  // 22:00 local
  EXPECT_FALSE(InQuietHours(west, kJan1 + 3 * kHour + 29 * kMinute));
}

TEST(QuietHoursTest, NamedZonesWithAndWithoutDaylightSavingTime) {
  if (!HaveZoneinfo()) GTEST_SKIP() << "no /usr/share/zoneinfo";
  QuietHours sh = *ParseQuietHours("22:00", "08:00", "Asia/Shanghai");
  EXPECT_EQ(sh.zone.name(), "Asia/Shanghai");
  // 22:00 in Shanghai is 14:00 UTC; 08:00 is 00:00 UTC.
  EXPECT_FALSE(InQuietHours(sh, kJan1 + 13 * kHour + 59 * kMinute));
  EXPECT_TRUE(InQuietHours(sh, kJan1 + 14 * kHour));
  EXPECT_TRUE(InQuietHours(sh, kJan1 + 24 * kHour - 1));
  EXPECT_FALSE(InQuietHours(sh, kJan1 + 24 * kHour));
  EXPECT_TRUE(InQuietHours(sh, kJul1 + 14 * kHour));  // no daylight saving time

  // New York: 22:00 is 03:00 UTC in winter (EST), 02:00 UTC in summer (EDT).
  QuietHours ny = *ParseQuietHours("22:00", "08:00", "America/New_York");
  EXPECT_FALSE(InQuietHours(ny, kJan1 + 2 * kHour + 30 * kMinute));
  EXPECT_TRUE(InQuietHours(ny, kJan1 + 3 * kHour));
  EXPECT_TRUE(InQuietHours(ny, kJul1 + 2 * kHour));
  EXPECT_FALSE(InQuietHours(ny, kJul1 + 12 * kHour));                // 08:00 EDT
  EXPECT_TRUE(InQuietHours(ny, kJan1 + 12 * kHour + 59 * kMinute));  // 07:59 EST
}

TEST(TimeZoneTest, ZoneFilesMatchTheCLibrary) {
  if (!HaveZoneinfo()) GTEST_SKIP() << "no /usr/share/zoneinfo";
  for (const char* name :
       {"Asia/Shanghai", "America/New_York", "Europe/Berlin", "Europe/Dublin", "Australia/Sydney",
        "America/Sao_Paulo", "Asia/Kolkata", "Pacific/Chatham", "America/Nuuk", "Africa/Casablanca",
        "Asia/Tehran", "UTC", "Etc/GMT+5"}) {
    if (!std::filesystem::exists(std::string("/usr/share/zoneinfo/") + name)) continue;
    auto zone = TimeZone::Parse(name);
    ASSERT_TRUE(zone.ok()) << name << ": " << zone.status().ToString();
    ScopedTz tz(std::string(":") + name);
    int mismatches = 0;
    // 1960 to 2060, every 9 h 7 min (every hour of the day, over time).
    for (int64_t t = -315'619'200; t < 2'840'140'800 && mismatches < 5; t += 32'820) {
      int want = LibcOffset(t);
      int got = zone->OffsetAt(t);
      if (want != got) {
        ++mismatches;
        ADD_FAILURE() << name << " at " << t << ": " << got << " != libc " << want;
      }
    }
  }
}

TEST(TimeZoneTest, PosixRulesMatchTheCLibrary) {
  for (const char* rule :
       {"CST-8", "EST5EDT,M3.2.0,M11.1.0", "CET-1CEST,M3.5.0,M10.5.0/3",
        "AEST-10AEDT,M10.1.0,M4.1.0/3", "NZST-12NZDT,M9.5.0,M4.1.0/3", "IST-1GMT0,M10.5.0,M3.5.0/1",
        "<+0330>-3:30", "<-03>3<-02>,M3.5.0/-2,M10.5.0/-1", "XXX3YYY,J60/2,J300/2",
        "XXX3YYY,59/2,299/2", "<+13>-13", "ABC-5:45"}) {
    auto zone = TimeZone::FromPosixRule(rule);
    ASSERT_TRUE(zone.ok()) << rule << ": " << zone.status().ToString();
    ScopedTz tz(rule);
    int mismatches = 0;
    for (int64_t t = 946'684'800; t < 2'524'608'000 && mismatches < 5; t += 13'337) {
      int want = LibcOffset(t), got = zone->OffsetAt(t);
      if (want != got) {
        ++mismatches;
        ADD_FAILURE() << rule << " at " << t << ": " << got << " != libc " << want;
      }
    }
  }
  // Daylight saving time all year (RFC 8536 3.3.1); the C library reads the
  // first hours of each UTC year as standard time, so it is checked alone.
  auto always = TimeZone::FromPosixRule("EST5EDT,0/0,J365/25");
  ASSERT_TRUE(always.ok());
  for (int64_t t = 946'684'800; t < 2'524'608'000; t += 3'600 * 7 + 13) {
    ASSERT_EQ(always->OffsetAt(t), -4 * 3600) << t;
  }
  // DST without a rule: the United States' rule (the C library takes
  // posixrules' history instead, so only now is checked).
  auto us = TimeZone::FromPosixRule("PST8PDT");
  ASSERT_TRUE(us.ok());
  EXPECT_EQ(us->OffsetAt(kJan1 / 1000), -8 * 3600);
  EXPECT_EQ(us->OffsetAt(kJul1 / 1000), -7 * 3600);
  for (const char* bad :
       {"", "C-8", "CST", "CST-8CDT,M3", "CST-8CDT,M13.1.0,M11.1.0", "CST-8CDT,M3.2.0", "<CST-8"}) {
    EXPECT_FALSE(TimeZone::FromPosixRule(bad).ok()) << bad;
  }
}

TEST(TimeZoneTest, BadZoneFilesAreRefused) {
  EXPECT_FALSE(TimeZone::FromTzif("", "x").ok());
  EXPECT_FALSE(TimeZone::FromTzif("TZif2", "x").ok());
  std::string header = "TZif2" + std::string(15, '\0');
  // Counts that promise more than the file holds.
  std::string counts = std::string(12, '\0') + std::string("\0\0\0\x05", 4) +
                       std::string("\0\0\0\x01", 4) + std::string("\0\0\0\x04", 4);
  EXPECT_FALSE(TimeZone::FromTzif(header + counts, "x").ok());
}

TEST(TimeZoneTest, LocalIsTheProcessTimeZone) {
  ScopedTz tz("EST5EDT,M3.2.0,M11.1.0");
  TimeZone local = *TimeZone::Parse("local");
  EXPECT_EQ(local.OffsetAt(kJan1 / 1000), -5 * 3600);
  EXPECT_EQ(local.OffsetAt(kJul1 / 1000), -4 * 3600);
  EXPECT_EQ(TimeZone::Parse("utc")->OffsetAt(kJul1 / 1000), 0);
}

}  // namespace
}  // namespace vigil::alert
