// `vigil env`: the command line reaches cmd_env.cc's dispatch as it was
// typed, and `vigil env matrix` prints the matrix (JSON: every table, every
// row with its source) or refuses a bad update file naming the line.
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/subcommands.h"
#include "core/temp_dir.h"
#include "env/matrix.h"

namespace vigil::cli {
namespace {

using nlohmann::json;

struct EnvRun {
  int rc = -1;
  std::string out;
  std::string err;
};

EnvRun Env(const std::vector<std::string>& args) {
  EnvRun r;
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  r.rc = RunEnv(args);
  std::fflush(stdout);
  std::fflush(stderr);
  r.out = ::testing::internal::GetCapturedStdout();
  r.err = ::testing::internal::GetCapturedStderr();
  return r;
}

TEST(EnvCliTest, EverythingAfterEnvReachesTheDispatch) {
  CLI::App app("vigil");
  app.require_subcommand(1);
  std::vector<Subcommand> subs = AddSubcommands(&app);
  std::vector<std::string> words = {"vigil", "env", "matrix", "--json", "--table", "gpu"};
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  app.parse(static_cast<int>(argv.size()), argv.data());
  CLI::App* env = app.get_subcommand("env");
  ASSERT_TRUE(*env);
  EXPECT_EQ(env->remaining(), (std::vector<std::string>{"matrix", "--json", "--table", "gpu"}));
}

TEST(EnvCliTest, MatrixJsonHasEveryTableAndEveryRowItsSource) {
  EnvRun r = Env({"matrix", "--json"});
  ASSERT_EQ(r.rc, 0) << r.err;
  json j = json::parse(r.out);
  size_t rows = 0;
  ASSERT_EQ(j["tables"].size(), env::TableSpecs().size());
  for (const json& t : j["tables"]) {
    EXPECT_FALSE(t["rows"].empty()) << t["name"];
    for (const json& row : t["rows"]) {
      ++rows;
      EXPECT_EQ(row["source"].get<std::string>().rfind("https://", 0), 0u) << row.dump();
      for (const json& c : t["columns"]) EXPECT_TRUE(row.contains(c.get<std::string>()));
    }
  }
  EXPECT_EQ(rows, env::Matrix::Builtin().rows().size());
  EXPECT_FALSE(j["rules"].empty());

  EnvRun gpu = Env({"matrix", "--json", "--table=gpu"});
  ASSERT_EQ(gpu.rc, 0);
  json g = json::parse(gpu.out);
  ASSERT_EQ(g["tables"].size(), 1u);
  bool rtx5090 = false;
  for (const json& row : g["tables"][0]["rows"]) {
    rtx5090 |= row["model"] == "RTX 5090" && row["compute_capability"] == "12.0";
  }
  EXPECT_TRUE(rtx5090);
}

TEST(EnvCliTest, MatrixTablesForPeople) {
  EnvRun r = Env({"matrix", "--table", "cuda_driver"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("cuda_driver, 45 rows"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  12.4.1  550.54.15\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("source: https://docs.nvidia.com/cuda/cuda-toolkit-release-notes"),
            std::string::npos);
  EnvRun all = Env({"matrix"});
  ASSERT_EQ(all.rc, 0);
  EXPECT_NE(all.out.find("minor_version_compat:"), std::string::npos);
}

TEST(EnvCliTest, UpdateFileAppliesOrIsRefusedNamingTheLine) {
  TempDir dir;
  std::string path = dir.path() + "/update.txt";
  std::ofstream(path) << "# newer GPU\ngpu | RTX 5060 | 12.0 | consumer | "
                         "https://developer.nvidia.com/cuda-gpus\n";
  EnvRun ok = Env({"matrix", "--table", "gpu", "--matrix", path});
  ASSERT_EQ(ok.rc, 0) << ok.err;
  EXPECT_NE(ok.out.find("RTX 5060"), std::string::npos);

  std::ofstream(path) << "\ngpu | RTX 5060 | twelve | consumer | https://developer.nvidia.com/x\n";
  EnvRun bad = Env({"matrix", "--matrix", path});
  EXPECT_EQ(bad.rc, 1);
  EXPECT_NE(bad.err.find(path + ":2: gpu: not a compute capability"), std::string::npos) << bad.err;
  EXPECT_EQ(bad.out, "");
}

TEST(EnvCliTest, UsageErrorsExit2) {
  EXPECT_EQ(Env({}).rc, 2);
  EnvRun nope = Env({"nope"});
  EXPECT_EQ(nope.rc, 2);
  EXPECT_NE(nope.err.find("vigil env matrix"), std::string::npos) << nope.err;
  EXPECT_EQ(Env({"matrix", "--bogus"}).rc, 2);
  EXPECT_EQ(Env({"matrix", "--table", "nope"}).rc, 2);
  EXPECT_EQ(Env({"matrix", "--help"}).rc, 0);
}

}  // namespace
}  // namespace vigil::cli
