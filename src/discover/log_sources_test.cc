// Combining origins: globs, excludes, Vigil's own dir, ranks, bounds.
#include "discover/log_sources.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "core/temp_dir.h"
#include "discover/discover_internal.h"
#include "discover/fake_tree_test_util.h"

namespace vigil::discover {
namespace {

using testing::FakeProc;
using testing::WriteFile;

std::string Label(const LogSource& s, const std::string& name) {
  for (const auto& l : s.labels) {
    if (l.name == name) return l.value;
  }
  return "";
}

std::vector<std::string> Paths(const std::vector<LogSource>& v) {
  std::vector<std::string> out;
  for (const auto& s : v) out.push_back(s.path);
  return out;
}

TEST(IsRotatedCompressedTest, Suffixes) {
  for (const char* p : {"/var/log/syslog.2.gz", "x.log.1.gz", "a.bz2", "a.xz", "a.zst", "a.zip",
                        "a.lz4", "/x/APP.LOG.GZ", "a.zstd", "old.log.Z", "a.tgz"}) {
    EXPECT_TRUE(IsRotatedCompressed(p)) << p;
  }
  for (const char* p :
       {"/var/log/syslog", "x.log.1", "x.gzip.log", "gz", "/a/b.log", "a.gzip", ""}) {
    EXPECT_FALSE(IsRotatedCompressed(p)) << p;
  }
}

TEST(NameRulesTest, LogNamesAndRotations) {
  using internal::IsBinaryFileName;
  using internal::IsRotatedNumbered;
  using internal::IsSystemPath;
  using internal::LooksLikeLogName;
  for (const char* n : {"train.log", "nohup.out", "run.err", "notes.txt", "stdout", "stderr",
                        "app.stdout", "SERVER.LOG"}) {
    EXPECT_TRUE(LooksLikeLogName(n)) << n;
  }
  for (const char* n : {"model.bin", "data.csv", "log.py", ".log", "logs", "x.log.1"}) {
    EXPECT_FALSE(LooksLikeLogName(n)) << n;
  }
  for (const char* n : {"x.log.1", "x.out.12", "a.log.20261130-040000", "a.log.2026-11-30",
                        "a.txt.log.3", "0.log.20261130-040000"}) {
    EXPECT_TRUE(IsRotatedNumbered(n)) << n;
  }
  for (const char* n :
       {"x.log", "x.log.1.txt", "x.log.old", "events.out.tfevents.1700.host", "1.log"}) {
    EXPECT_FALSE(IsRotatedNumbered(n)) << n;
  }
  EXPECT_TRUE(IsBinaryFileName("/var/log/journal/abc/system.journal"));
  EXPECT_TRUE(IsBinaryFileName("/data/catalog.db-wal"));
  EXPECT_TRUE(IsBinaryFileName("/x/app.sqlite"));
  EXPECT_TRUE(IsBinaryFileName("/root/.cache/ccache/tmp/stdout.tmp.3LvFVk.tmp"));
  EXPECT_FALSE(IsBinaryFileName("/x/app.log"));
  EXPECT_TRUE(IsSystemPath("/dev/null"));
  EXPECT_TRUE(IsSystemPath("/var/log/journal/x/y"));
  EXPECT_FALSE(IsSystemPath("/var/log/syslog"));
  EXPECT_FALSE(IsSystemPath("/devices/x.log"));
}

class LogSourcesTest : public ::testing::Test {
 protected:
  LogSourcesTest() : proc_(dir_.Join("proc")) {
    opts_.proc_root = proc_.root();
    opts_.docker_root = dir_.Join("docker");
    opts_.pods_root = dir_.Join("pods");
    opts_.self_home = dir_.Join("home");
    opts_.run_spool_dir = dir_.Join("home/spool/run");
  }
  std::string File(const std::string& rel, const std::string& data = "x\n") {
    WriteFile(dir_.Join(rel), data);
    return dir_.Join(rel);
  }
  std::vector<LogSource> Discover() {
    auto r = DiscoverLogSources(opts_);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : std::vector<LogSource>{};
  }
  TempDir dir_;
  FakeProc proc_;
  DiscoveryOptions opts_;
};

TEST_F(LogSourcesTest, ExtraGlobsFindRegularFiles) {
  std::string a = File("runs/a/train.log"), b = File("runs/b/train.log");
  File("runs/c/train.log.1.gz");
  File("runs/a/train.log.1");
  File("runs/d/other.log");
  std::filesystem::create_directories(dir_.Join("runs/e/train.log"));  // a directory
  opts_.extra_globs = {dir_.Join("runs/*/train.log*"), dir_.Join("runs/*/train.log*.gz"),
                       dir_.Join("nothing/*.log")};
  auto got = Discover();
  EXPECT_EQ(Paths(got), (std::vector<std::string>{a, b}));
  EXPECT_EQ(got[0].origin, "config");
  EXPECT_EQ(got[0].labels, (wire::Labels{{"job", "train"}, {"source", a}}));
}

TEST_F(LogSourcesTest, ExcludesApplyToEveryOrigin) {
  std::string keep = File("runs/a/train.log");
  File("runs/secret/train.log");
  File("docker/c1/c1-json.log");
  opts_.extra_globs = {dir_.Join("runs/*/train.log")};
  // Without FNM_PATHNAME, '*' spans directories.
  opts_.exclude_globs = {"*/secret/*", dir_.Join("docker") + "*"};
  EXPECT_EQ(Paths(Discover()), (std::vector<std::string>{keep}));
}

TEST_F(LogSourcesTest, VigilHomeIsNeverTailedExceptTheRunSpool) {
  std::string own = File("home/logs/agent.log");
  std::string run = File("home/spool/run/train.r1.log");
  std::string neighbour = File("home2/app.log");  // shares the prefix, not the dir
  proc_.AddProcess(10, {"python", "train.py"}, "python");
  proc_.AddFd(10, 1, run);
  proc_.AddFd(10, 3, own);
  proc_.AddFd(10, 4, neighbour);
  auto got = Discover();
  EXPECT_EQ(Paths(got), (std::vector<std::string>{run, neighbour}));
  // The spool file is written by the job's process too; vigil-run names it.
  EXPECT_EQ(got[0].origin, "vigil-run");
  EXPECT_EQ(got[0].labels, (wire::Labels{{"job", "train"}, {"source", run}}));
}

TEST_F(LogSourcesTest, ContainerOriginsOutrankTheRuntimeProcess) {
  // dockerd holds every json-file log open for writing; the container, not
  // dockerd, is what the log is about.
  std::string log = File("docker/c1/c1-json.log");
  File("docker/c1/config.v2.json", R"({"Name":"/web","Config":{"Image":"nginx"}})");
  proc_.AddProcess(900, {"/usr/bin/dockerd", "-H", "fd://"}, "dockerd");
  proc_.AddFd(900, 30, log);
  auto got = Discover();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].origin, "docker");
  EXPECT_EQ(got[0].format, LogFormat::kDockerJson);
  EXPECT_EQ(Label(got[0], "job"), "web");
}

TEST_F(LogSourcesTest, ConfigLabelsStayStableWhileTheWriterComesAndGoes) {
  std::string log = File("runs/a/train.log");
  opts_.extra_globs = {dir_.Join("runs/*/train.log")};
  auto before = Discover();
  proc_.AddProcess(10, {"python", "train.py"}, "python");
  proc_.AddFd(10, 1, log);
  auto during = Discover();
  ASSERT_EQ(during.size(), 1u);
  EXPECT_EQ(during[0].origin, "config");
  EXPECT_EQ(Label(during[0], "job"), "train");  // from the file's name
  EXPECT_EQ(during, before);
}

TEST_F(LogSourcesTest, SourcesCarryTheirEarliestWritersStart) {
  // The tailer reads what a job rotated away since it started, before
  // discovery saw the file: its writers' start, in Unix ms.
  WriteFile(proc_.root() + "/stat", "cpu  1 2 3\nbtime 1700000000\nprocesses 9\n");
  const long hz = ::sysconf(_SC_CLK_TCK);
  std::string log = File("runs/a/train.log"), quiet = File("runs/b/train.log");
  proc_.AddProcess(10, {"torchrun", "train.py"}, "torchrun", 5 * hz);
  proc_.AddFd(10, 1, log);
  proc_.AddProcess(11, {"python", "train.py"}, "python", 7 * hz);
  proc_.AddFd(11, 1, log);
  opts_.extra_globs = {dir_.Join("runs/b/train.log")};
  auto got = Discover();
  ASSERT_EQ(Paths(got), (std::vector<std::string>{log, quiet}));
  EXPECT_EQ(got[0].started_ms, 1'700'000'005'000);
  EXPECT_EQ(got[1].started_ms, 0);  // no writer seen
}

TEST_F(LogSourcesTest, MaxSourcesKeepsTheHigherRanks) {
  File("home/spool/run/a.r1.log");
  File("home/spool/run/b.r1.log");
  std::string p = File("p/x.log");
  proc_.AddProcess(10, {"./x"}, "x");
  proc_.AddFd(10, 1, p);
  opts_.max_sources = 2;
  DiscoveryStats stats;
  auto got = DiscoverLogSources(opts_, &stats);
  ASSERT_TRUE(got.ok());
  ASSERT_EQ(got->size(), 2u);
  EXPECT_EQ((*got)[0].origin, "vigil-run");
  EXPECT_EQ((*got)[1].origin, "vigil-run");
  EXPECT_EQ(stats.sources_dropped, 1u);
}

TEST_F(LogSourcesTest, InvalidOptions) {
  DiscoveryOptions o = opts_;
  o.extra_globs = {"runs/*.log"};
  EXPECT_EQ(DiscoverLogSources(o).status().code(), StatusCode::kInvalidArgument);
  o = opts_;
  o.proc_root = "proc";
  EXPECT_EQ(ValidateDiscoveryOptions(o).code(), StatusCode::kInvalidArgument);
  o = opts_;
  o.exclude_globs = {""};
  EXPECT_EQ(ValidateDiscoveryOptions(o).code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(ValidateDiscoveryOptions(DiscoveryOptions{}).ok());
  EXPECT_STREQ(LogFormatName(LogFormat::kCri), "cri");
}

}  // namespace
}  // namespace vigil::discover
