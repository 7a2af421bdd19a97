// The real uid of a process and the cache of user names (discover/users.h).
#include "discover/users.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

#include "core/manual_clock_env.h"

namespace vigil::discover {
namespace {

TEST(RealUidTest, FirstFieldOfTheUidLine) {
  EXPECT_EQ(ParseRealUid("Name:\tpython3\nUmask:\t0022\nUid:\t1000\t0\t0\t0\nGid:\t0\t0\t0\t0\n"),
            1000);
  EXPECT_EQ(ParseRealUid("Uid:\t0\t0\t0\t0\n"), 0);
  EXPECT_EQ(ParseRealUid("Uid:\t4294967294\t0\t0\t0"), 4294967294);
  // No uid: (uid_t)-1, out of range, not a number, no line, a cut file.
  EXPECT_EQ(ParseRealUid("Uid:\t4294967295\t0\t0\t0\n"), kUnknownUid);
  EXPECT_EQ(ParseRealUid("Uid:\t99999999999\n"), kUnknownUid);
  EXPECT_EQ(ParseRealUid("Uid:\t-5\t0\n"), kUnknownUid);
  EXPECT_EQ(ParseRealUid("Uid:\tx\n"), kUnknownUid);
  EXPECT_EQ(ParseRealUid("Uid:\n"), kUnknownUid);
  EXPECT_EQ(ParseRealUid("Name:\tx\nGid:\t5\t5\t5\t5\n"), kUnknownUid);
  EXPECT_EQ(ParseRealUid(""), kUnknownUid);
  // Only a line that starts with it: a name holding "Uid:" is no uid.
  EXPECT_EQ(ParseRealUid("Name:\tUid:\t7\nUid:\t8\t8\t8\t8\n"), 8);
}

TEST(RealUidTest, ThisProcess) {
  EXPECT_EQ(ReadRealUid(Env::Default(), "/proc", static_cast<int>(::getpid())), ::getuid());
  EXPECT_EQ(ReadRealUid(Env::Default(), "/nonexistent", 1), kUnknownUid);
}

TEST(UserNamesTest, NamesAreCachedAndAskedAgainAfterTheirTtl) {
  ManualClockEnv clock(ManualClockEnv::kDefaultStartMs, /*follow_monotonic=*/true);
  std::string carol_name;  // "" until the user is added to the node
  UserNames names(UserNamesOptions{
      .env = &clock, .ttl_ms = 60'000, .max_entries = 8, .lookup = [&](uint32_t uid) {
        return uid == 1001 && !carol_name.empty() ? std::optional(carol_name) : std::nullopt;
      }});
  EXPECT_EQ(names.NameOf(kUnknownUid), "");
  EXPECT_EQ(names.NameOf(-7), "");
  EXPECT_EQ(names.NameOf(4294967295), "");
  EXPECT_EQ(names.lookups(), 0u);

  EXPECT_EQ(names.NameOf(1001), "1001");  // no name: its digits
  carol_name = "carol";
  EXPECT_EQ(names.NameOf(1001), "1001");  // cached
  EXPECT_EQ(names.lookups(), 1u);
  clock.now += 60'000;
  EXPECT_EQ(names.NameOf(1001), "carol");  // a new user shows within the ttl
  EXPECT_EQ(names.lookups(), 2u);
}

TEST(UserNamesTest, TheCacheIsBounded) {
  ManualClockEnv clock(ManualClockEnv::kDefaultStartMs, /*follow_monotonic=*/true);
  UserNames names(UserNamesOptions{
      .env = &clock, .ttl_ms = 60'000, .max_entries = 4, .lookup = [](uint32_t uid) {
        return std::optional("u" + std::to_string(uid));
      }});
  for (int64_t uid = 0; uid < 100; ++uid) EXPECT_EQ(names.NameOf(uid), "u" + std::to_string(uid));
  EXPECT_EQ(names.lookups(), 100u);
  // The last ones are still cached.
  EXPECT_EQ(names.NameOf(99), "u99");
  EXPECT_EQ(names.lookups(), 100u);
}

TEST(UserNamesTest, TheSystemDatabase) {
  EXPECT_EQ(SystemUserName(0).value_or(""), "root");
  EXPECT_EQ(UserNames::Default()->NameOf(0), "root");
  // A uid no one has (a container's): named by its digits.
  EXPECT_EQ(SystemUserName(4294967000u), std::nullopt);
  EXPECT_EQ(UserNames::Default()->NameOf(4294967000), "4294967000");
}

}  // namespace
}  // namespace vigil::discover
