// `vigil silence`: its command line as CLI11 parses it, and the body `add`
// sends for the matcher strings.
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/subcommands.h"

namespace vigil::cli {
namespace {

using nlohmann::json;

struct Parsed {
  std::unique_ptr<CLI::App> app;
  std::vector<Subcommand> subcommands;
  std::string error;  // CLI11's, when it refused the line
};

Parsed Parse(std::vector<std::string> args) {
  Parsed p;
  p.app = std::make_unique<CLI::App>("vigil");
  p.app->require_subcommand(1);
  p.subcommands = AddSubcommands(p.app.get());
  std::vector<char*> argv = {const_cast<char*>("vigil")};
  for (std::string& a : args) argv.push_back(a.data());
  try {
    p.app->parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError& e) {
    p.error = e.get_name() + ": " + e.what();
  }
  return p;
}

int RunChosen(const Parsed& p) {
  for (const Subcommand& s : p.subcommands) {
    if (*s.app) return s.run();
  }
  return -1;
}

TEST(SilenceCliTest, AddTakesMatchersDurationAndComment) {
  Parsed p = Parse({"silence", "add", "node=gpu-07", "alertname=gpu_underutilized", "job!~test-.*",
                    "--duration", "4h", "--comment", "maintenance window"});
  ASSERT_EQ(p.error, "");
  CLI::App* add = p.app->get_subcommand("silence")->get_subcommand("add");
  ASSERT_TRUE(*add);
  EXPECT_EQ(
      add->get_option("matchers")->results(),
      (std::vector<std::string>{"node=gpu-07", "alertname=gpu_underutilized", "job!~test-.*"}));
  EXPECT_EQ(add->get_option("--duration")->as<std::string>(), "4h");
  EXPECT_EQ(add->get_option("--comment")->as<std::string>(), "maintenance window");

  // Matchers and options in any order; ls and rm.
  p = Parse({"silence", "add", "--duration", "30m", "gpu!=3", "node=~gpu-0[0-7]"});
  ASSERT_EQ(p.error, "");
  EXPECT_EQ(p.app->get_subcommand("silence")
                ->get_subcommand("add")
                ->get_option("matchers")
                ->results()
                .size(),
            2u);
  EXPECT_EQ(Parse({"silence", "ls", "--json"}).error, "");
  EXPECT_EQ(Parse({"silence", "rm", "0123456789abcdef"}).error, "");

  EXPECT_NE(Parse({"silence"}).error, "");         // which one?
  EXPECT_NE(Parse({"silence", "add"}).error, "");  // no matcher
  EXPECT_NE(Parse({"silence", "rm"}).error, "");   // no id
  EXPECT_NE(Parse({"silence", "mute", "x"}).error, "");
}

TEST(SilenceCliTest, ABadMatcherIsRefusedBeforeAnyServerIsAsked) {
  Parsed p = Parse({"silence", "add", "node", "--server", "http://127.0.0.1:1"});
  ASSERT_EQ(p.error, "");
  EXPECT_EQ(RunChosen(p), 2);
  // A good one reaches the (absent) server: 1, not 2.
  p = Parse({"silence", "add", "node=n1", "--server", "http://127.0.0.1:1"});
  ASSERT_EQ(p.error, "");
  EXPECT_EQ(RunChosen(p), 1);
}

TEST(SilenceCliTest, TheBodyOfAddIsAlertmanagersShape) {
  SilenceFlags f;
  f.matchers = {"node=gpu-07", "alertname=~gpu_.*", "job!~test-.*", "gpu!=3", R"(run="a b")"};
  f.duration = "4h";
  f.comment = "maintenance";
  f.author = "ops";
  auto body = SilenceAddBody(f);
  ASSERT_TRUE(body.ok()) << body.status().ToString();
  json j = json::parse(*body);
  EXPECT_EQ(j, json::parse(R"({
      "matchers": [
        {"name": "node", "value": "gpu-07", "isRegex": false, "isEqual": true},
        {"name": "alertname", "value": "gpu_.*", "isRegex": true, "isEqual": true},
        {"name": "job", "value": "test-.*", "isRegex": true, "isEqual": false},
        {"name": "gpu", "value": "3", "isRegex": false, "isEqual": false},
        {"name": "run", "value": "a b", "isRegex": false, "isEqual": true}],
      "duration": "4h", "createdBy": "ops", "comment": "maintenance"})"));

  auto refused = [](std::vector<std::string> matchers, std::string duration = "2h") {
    SilenceFlags f;
    f.matchers = std::move(matchers);
    f.duration = std::move(duration);
    auto r = SilenceAddBody(f);
    return r.ok() ? std::string("accepted") : r.status().message();
  };
  EXPECT_NE(refused({}).find("at least one matcher"), std::string::npos);
  EXPECT_NE(refused({"node"}).find("name=value"), std::string::npos);
  EXPECT_NE(refused({"gpu-id=3"}).find("label name"), std::string::npos);
  EXPECT_NE(refused({"node=~(x"}).find("does not compile"), std::string::npos);
  EXPECT_NE(refused({"job!=x"}).find("empty string"), std::string::npos);
  EXPECT_NE(refused({"node=n1"}, "4 hours").find("--duration"), std::string::npos);
  EXPECT_NE(refused({"node=n1"}, "0m").find("--duration"), std::string::npos);
}

}  // namespace
}  // namespace vigil::cli
