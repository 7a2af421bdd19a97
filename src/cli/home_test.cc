#include "cli/home.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/env.h"
#include "core/temp_dir.h"

namespace vigil::cli {
namespace {

class HomeTest : public ::testing::Test {
 protected:
  TempDir tmp_;
  HomePaths paths_{tmp_.path()};
};

TEST_F(HomeTest, FlagBeatsEnvironment) {
  setenv("VIGIL_HOME", "/from/env", 1);
  EXPECT_EQ(ResolveHome("/from/flag"), "/from/flag");
  EXPECT_EQ(ResolveHome(""), "/from/env");
  unsetenv("VIGIL_HOME");
  EXPECT_FALSE(ResolveHome("").empty());
}

TEST_F(HomeTest, ARelativeHomeBecomesAbsolute) {
  char cwd[4096];
  ASSERT_NE(::getcwd(cwd, sizeof(cwd)), nullptr);
  EXPECT_EQ(ResolveHome("rel/home/"), std::string(cwd) + "/rel/home");
  EXPECT_EQ(ResolveHome("/abs/"), "/abs");
}

TEST_F(HomeTest, RunStateRoundTripsAndRejectsGarbage) {
  RunState s{1234, "http://127.0.0.1:9300", "127.0.0.1:9300", 1700000000000, "0.1.0"};
  auto back = ParseRunState(FormatRunState(s));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->pid, 1234);
  EXPECT_EQ(back->url, s.url);
  EXPECT_EQ(back->started_ms, s.started_ms);
  EXPECT_FALSE(ParseRunState("nonsense").ok());
}

TEST_F(HomeTest, LockMakesOneInstancePerHomeAndStaleStateDoesNotCount) {
  RunState s{static_cast<int>(getpid()), "http://127.0.0.1:1", "127.0.0.1:1", 1, "x"};
  ASSERT_TRUE(Env::Default()->CreateDirs(paths_.run_dir()).ok());
  ASSERT_TRUE(Env::Default()->WriteFileAtomic(paths_.state_file(), FormatRunState(s)).ok());
  // A state file without a lock holder is stale: nothing runs.
  EXPECT_FALSE(FindRunningInstance(paths_).has_value());
  {
    auto lock = InstanceLock::Acquire(paths_);
    ASSERT_TRUE(lock.ok());
    auto running = FindRunningInstance(paths_);
    ASSERT_TRUE(running.has_value());
    EXPECT_EQ(running->url, s.url);
    auto second = InstanceLock::Acquire(paths_);
    ASSERT_FALSE(second.ok());
    EXPECT_NE(second.status().message().find("another Vigil instance"), std::string::npos);
  }
  EXPECT_FALSE(FindRunningInstance(paths_).has_value());
  EXPECT_TRUE(InstanceLock::Acquire(paths_).ok());
}

}  // namespace
}  // namespace vigil::cli

#include "cli/instance.h"

namespace vigil::cli {
namespace {

TEST(LocalUrlTest, WildcardsGoThroughLoopbackAndIpv6GetsBrackets) {
  EXPECT_EQ(LocalUrl("127.0.0.1:9300", 9300), "http://127.0.0.1:9300");
  EXPECT_EQ(LocalUrl(":9300", 9300), "http://127.0.0.1:9300");
  EXPECT_EQ(LocalUrl("0.0.0.0:0", 41234), "http://127.0.0.1:41234");
  EXPECT_EQ(LocalUrl("[::1]:9300", 9300), "http://[::1]:9300");
}

}  // namespace
}  // namespace vigil::cli
