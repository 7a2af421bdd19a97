#include "cli/config.h"

#include <gtest/gtest.h>

#include "core/temp_dir.h"

namespace vigil::cli {
namespace {

TEST(ConfigTest, EmptyAndMissingAreTheDefaults) {
  auto c = ParseConfig("{}");
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(c->logs.collect);
  EXPECT_EQ(c->logs.lines_per_second, 10000u);
  TempDir dir;
  auto missing = LoadConfig(dir.path());
  ASSERT_TRUE(missing.ok());
  EXPECT_TRUE(missing->logs.paths.empty());
}

TEST(ConfigTest, ReadsEveryLogsKey) {
  auto c = ParseConfig(R"({
    // comments are allowed
    "logs": {"paths": ["/data/runs/*/metrics.jsonl"], "exclude": ["/var/log/*"],
             "level_floor": "warning", "lines_per_second": 500, "burst": 1000,
             "collect": false}})");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->logs.paths, std::vector<std::string>{"/data/runs/*/metrics.jsonl"});
  EXPECT_EQ(c->logs.exclude, std::vector<std::string>{"/var/log/*"});
  EXPECT_EQ(c->logs.level_floor, wire::LogLevel::kWarn);
  EXPECT_EQ(c->logs.lines_per_second, 500u);
  EXPECT_EQ(c->logs.burst, 1000u);
  EXPECT_FALSE(c->logs.collect);
}

TEST(ConfigTest, MistakesAreNamed) {
  struct Case {
    const char* text;
    const char* expect;
  };
  const Case cases[] = {
      {"{", "not valid JSON"},
      {"[]", "top level"},
      {R"({"log": {}})", "unknown key log"},
      {R"({"logs": {"path": []}})", "unknown key logs.path"},
      {R"({"logs": {"paths": "/x"}})", "list of strings"},
      {R"({"logs": {"paths": ["relative/*.log"]}})", "absolute"},
      {R"({"logs": {"level_floor": "loud"}})", "level_floor"},
      {R"({"logs": {"lines_per_second": -1}})", "lines_per_second"},
  };
  for (const Case& c : cases) {
    auto r = ParseConfig(c.text);
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_NE(r.status().message().find(c.expect), std::string::npos)
        << c.text << " -> " << r.status().message();
  }
}

}  // namespace
}  // namespace vigil::cli
