#include <gtest/gtest.h>

#include "cli/commands.h"

namespace vigil::cli {
namespace {

Result<RunFlags> Parse(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  return ParseRunArgs(static_cast<int>(argv.size()), argv.data());
}

TEST(RunArgsTest, OptionsThenTheCommandVerbatim) {
  auto r = Parse({"--name", "ft", "--home=/h", "--", "python", "train.py", "--name", "x", "--"});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->name, "ft");
  EXPECT_EQ(r->home, "/h");
  EXPECT_EQ(r->command, (std::vector<std::string>{"python", "train.py", "--name", "x", "--"}));
}

TEST(RunArgsTest, TheCommandMayStartWithoutDashDash) {
  auto r = Parse({"sh", "-c", "echo hi"});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->name.empty());
  EXPECT_EQ(r->command, (std::vector<std::string>{"sh", "-c", "echo hi"}));
}

TEST(RunArgsTest, ClearErrors) {
  EXPECT_NE(Parse({}).status().message().find("no command"), std::string::npos);
  EXPECT_NE(Parse({"--"}).status().message().find("no command"), std::string::npos);
  EXPECT_NE(Parse({"--name"}).status().message().find("needs a value"), std::string::npos);
  EXPECT_NE(Parse({"-x", "cmd"}).status().message().find("unknown option -x"), std::string::npos);
}

}  // namespace
}  // namespace vigil::cli
