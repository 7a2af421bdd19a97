#include "cli/cmd_env_lock.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "core/temp_dir.h"

namespace vigil::cli {
namespace {

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Fixtures() {
  const char* src = std::getenv("VIGIL_SOURCE_DIR");
  return std::string(src != nullptr ? src : ".") + "/tests/data/env";
}

// `vigil env lock --root FIXTURE -o FILE` writes the reviewed golden lock.
TEST(CmdEnvLockTest, WritesTheGoldenLockOfEachFixture) {
  TempDir dir("vigil-cmd-envlock");
  for (const char* fixture : {"debian12-venv-wheels", "rhel8-conda"}) {
    const std::string out = dir.Join(std::string(fixture) + ".json");
    ASSERT_EQ(RunEnvLock({"--root", Fixtures() + "/" + fixture, "-o", out}), 0) << fixture;
    EXPECT_EQ(Slurp(out), Slurp(Fixtures() + "/" + fixture + ".lock.json")) << fixture;
    // Twice: the same bytes.
    ASSERT_EQ(RunEnvLock({"--root=" + Fixtures() + "/" + fixture, "--output=" + out + "2"}), 0);
    EXPECT_EQ(Slurp(out), Slurp(out + "2"));
  }
}

TEST(CmdEnvLockTest, UsageErrorsExitTwo) {
  EXPECT_EQ(RunEnvLock({"--root"}), 2);
  EXPECT_EQ(RunEnvLock({"--bogus"}), 2);
  EXPECT_EQ(RunEnvLock({"-o"}), 2);
  EXPECT_EQ(RunEnvLock({"--help"}), 0);
}

TEST(CmdEnvLockTest, AMissingRootOrUnwritableOutputExitsOne) {
  EXPECT_EQ(RunEnvLock({"--root", "/no/such/vigil/root"}), 1);
  EXPECT_EQ(RunEnvLock({"--root", Fixtures() + "/rhel8-conda", "-o", "/no/such/dir/lock.json"}), 1);
}

}  // namespace
}  // namespace vigil::cli
