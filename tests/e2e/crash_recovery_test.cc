// kill -9 of a running `vigil up`, then restart: at most the last second of
// metrics is missing, nothing is corrupt, and collection carries on.
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cli/home.h"
#include "core/temp_dir.h"
#include "net/http_client.h"
#include "store/tsdb/db.h"

extern char** environ;

namespace vigil {
namespace {

using std::chrono::seconds;

class CrashRecoveryTest : public ::testing::Test {
 protected:
  void TearDown() override {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }

  void StartVigil() {
    std::string bin = std::string(getenv("VIGIL_BIN"));
    std::vector<std::string> args = {bin,         "up",       "--foreground", "--home",
                                     paths_.home, "--listen", "127.0.0.1:0"};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ASSERT_EQ(posix_spawn(&pid_, bin.c_str(), nullptr, nullptr, argv.data(), environ), 0);
    for (int i = 0; i < 300; ++i) {
      auto running = cli::FindRunningInstance(paths_);
      if (running && running->pid == pid_) {
        url_ = running->url;
        return;
      }
      usleep(100'000);
    }
    FAIL() << "vigil did not start";
  }

  uint64_t Batches() {
    auto r = net::HttpGet(url_ + "/api/v1/status", seconds(5));
    if (!r.ok() || r->status != 200) return 0;
    return nlohmann::json::parse(r->body)["ingest"]["batches"].get<uint64_t>();
  }

  void WaitForBatches(uint64_t n) {
    for (int i = 0; i < 600 && Batches() < n; ++i) usleep(100'000);
    ASSERT_GE(Batches(), n);
  }

  std::vector<wire::Sample> LoadSeries() {
    tsdb::Options o;
    o.dir = paths_.tsdb_dir();
    auto db = tsdb::Db::Open(o);
    EXPECT_TRUE(db.ok()) << db.status().ToString();
    if (!db.ok()) return {};
    auto sel = (*db)->Select({{tsdb::MatchType::kEqual, "__name__", "vigil_collector_success"},
                              {tsdb::MatchType::kEqual, "collector", "system"}},
                             0, INT64_MAX);
    EXPECT_TRUE(sel.ok());
    EXPECT_TRUE((*db)->Close().ok());
    if (!sel.ok() || sel->size() != 1) return {};
    return (*sel)[0].samples;
  }

  TempDir tmp_;
  cli::HomePaths paths_{tmp_.path()};
  pid_t pid_ = 0;
  std::string url_;
};

TEST_F(CrashRecoveryTest, Kill9LosesAtMostTheLastSecond) {
  StartVigil();
  WaitForBatches(6);
  int64_t killed_at = Env::Default()->NowMillis();
  ASSERT_EQ(kill(pid_, SIGKILL), 0);
  waitpid(pid_, nullptr, 0);
  pid_ = 0;

  std::vector<wire::Sample> before = LoadSeries();
  ASSERT_GE(before.size(), 5u);
  // The WAL is synced every second, and a pass lands on each second boundary:
  // the newest surviving pass is at most two boundaries before the kill.
  EXPECT_GE(before.back().t_ms, killed_at - 2000);
  for (size_t i = 1; i < before.size(); ++i) {
    EXPECT_GT(before[i].t_ms, before[i - 1].t_ms);
    EXPECT_LE(before[i].t_ms - before[i - 1].t_ms, 2000) << "gap before sample " << i;
  }

  // Restart on the same home: it opens cleanly and keeps collecting.
  StartVigil();
  uint64_t start_batches = Batches();
  WaitForBatches(start_batches + 3);
  ASSERT_EQ(kill(pid_, SIGTERM), 0);
  int wstatus = 0;
  waitpid(pid_, &wstatus, 0);
  pid_ = 0;
  EXPECT_TRUE(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0) << wstatus;

  std::vector<wire::Sample> after = LoadSeries();
  ASSERT_GE(after.size(), before.size() + 3);
  // Everything from before the crash is still there, unchanged.
  for (size_t i = 0; i < before.size(); ++i) EXPECT_EQ(after[i], before[i]);
}

}  // namespace
}  // namespace vigil
