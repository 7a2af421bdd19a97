// Crash tests: the store after kill -9 or a torn WAL tail is a prefix of what
// was appended, never corrupt, never duplicated; a clean close loses nothing.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <random>

#include "store/tsdb/db.h"
#include "store/tsdb/head.h"
#include "store/tsdb/test_env.h"
#include "store/tsdb/wal.h"

namespace vigil::tsdb {
namespace {

namespace fs = std::filesystem;
using testing::FakeClockEnv;
using testing::kT0;
using testing::TempDir;

constexpr int64_t kStep = 10000;
constexpr int kSeries = 3;

// Batch i holds one sample per series at kT0 + i * kStep; values encode (i, series).
wire::MetricBatch NthBatch(int i) {
  wire::MetricBatchBuilder b("node", kT0 + i * kStep);
  b.Family("m", wire::MetricType::kGauge, "test");
  for (int s = 0; s < kSeries; ++s) b.Add("m", {{"s", std::to_string(s)}}, i * 10.0 + s);
  return b.Release();
}

Options MakeOptions(const std::string& dir, Env* env, int64_t sync_ms) {
  Options o;
  o.dir = dir;
  o.env = env;
  o.chunk_window_ms = 60 * 1000;  // six batches a window: many cuts
  o.wal_sync_interval_ms = sync_ms;
  return o;
}

// Asserts the store holds batches [0, n) exactly, for one n shared by every
// series (a batch is one WAL record), and returns n.
int CheckPrefix(const std::string& dir, Env* env) {
  auto db = Db::Open(MakeOptions(dir, env, 1000));
  EXPECT_TRUE(db.ok()) << db.status().ToString();
  if (!db.ok()) return -1;
  auto r = (*db)->Select({{MatchType::kEqual, "__name__", "m"}}, 0, INT64_MAX);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  if (!r.ok()) return -1;
  int n = r->empty() ? 0 : static_cast<int>((*r)[0].samples.size());
  if (n > 0) {
    EXPECT_EQ(r->size(), static_cast<size_t>(kSeries));
  }
  for (int s = 0; s < static_cast<int>(r->size()); ++s) {
    const auto& samples = (*r)[s].samples;
    EXPECT_EQ(static_cast<int>(samples.size()), n) << "series " << s;
    for (int i = 0; i < static_cast<int>(samples.size()); ++i) {
      EXPECT_EQ(samples[i], (wire::Sample{kT0 + i * kStep, i * 10.0 + s})) << "series " << s;
    }
  }
  EXPECT_TRUE((*db)->Close().ok());
  return n;
}

// Writes `batches` batches, running Maintain as the clock passes windows so
// that part of the data is in chunks and part only in the WAL.
void Populate(const std::string& dir, FakeClockEnv* env, int batches) {
  auto db = Db::Open(MakeOptions(dir, env, 1000));
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  for (int i = 0; i < batches; ++i) {
    ASSERT_TRUE((*db)->Append(NthBatch(i)).ok());
    env->SetNow(kT0 + i * kStep);
    if (i % 13 == 0) {
      ASSERT_TRUE((*db)->Maintain().ok());
    }
  }
  ASSERT_TRUE((*db)->Close().ok());
}

TEST(DbCrashTest, CleanCloseLosesNothing) {
  TempDir dir;
  FakeClockEnv env(kT0);
  Populate(dir.path(), &env, 100);
  EXPECT_EQ(CheckPrefix(dir.path(), &env), 100);
  EXPECT_EQ(CheckPrefix(dir.path(), &env), 100);  // the check itself changed nothing
}

TEST(DbCrashTest, TornWalTailAtRandomOffsetsIsAPrefix) {
  TempDir dir;
  FakeClockEnv env(kT0);
  Populate(dir.path(), &env, 100);
  std::string wal_dir = dir.path() + "/wal";
  auto segments = ListWalSegments(Env::Default(), wal_dir);
  ASSERT_TRUE(segments.ok());
  ASSERT_FALSE(segments->empty());
  std::string last = WalSegmentPath(wal_dir, segments->back());
  uint64_t size = fs::file_size(last);
  ASSERT_GT(size, 0u);

  std::mt19937_64 rng(42);
  int min_seen = 100;
  for (int round = 0; round < 20; ++round) {
    TempDir copy;
    fs::copy(dir.path(), copy.path(),
             fs::copy_options::recursive | fs::copy_options::overwrite_existing);
    uint64_t cut = rng() % size;
    std::string path = WalSegmentPath(copy.path() + "/wal", segments->back());
    fs::resize_file(path, cut);
    if (round % 2 == 1 && cut > 16) {
      // Garble instead of cutting short: same outcome expected.
      fs::resize_file(path, size);
    }
    int n = CheckPrefix(copy.path(), &env);
    ASSERT_GE(n, 0);
    min_seen = std::min(min_seen, n);
  }
  EXPECT_LT(min_seen, 100);  // some rounds really lost the tail
}

// A child process appends with a sync per append and reports each
// acknowledged batch; it is SIGKILLed mid-stream. Every acknowledged batch
// must survive, and the rest must be a clean prefix.
TEST(DbCrashTest, KillNineMidStream) {
  TempDir dir;
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::close(fds[0]);
    FakeClockEnv env(kT0);
    auto db = Db::Open(MakeOptions(dir.path(), &env, 0));
    if (!db.ok()) ::_exit(2);
    for (int i = 0;; ++i) {
      if (!(*db)->Append(NthBatch(i)).ok()) ::_exit(3);
      env.SetNow(kT0 + i * kStep);
      if (i % 7 == 0 && !(*db)->Maintain().ok()) ::_exit(4);
      int32_t acked = i + 1;
      if (::write(fds[1], &acked, sizeof(acked)) != sizeof(acked)) ::_exit(5);
    }
  }
  ::close(fds[1]);
  int32_t acked = 0;
  while (acked < 300) {
    // The child writes whole int32s; a short read means it died.
    if (::read(fds[0], &acked, sizeof(acked)) != static_cast<ssize_t>(sizeof(acked))) break;
  }
  ::kill(pid, SIGKILL);  // always, so a failed test never leaves a writer running
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status)) << "child exited early with " << WEXITSTATUS(status);
  ASSERT_GE(acked, 300);
  ::close(fds[0]);
  FakeClockEnv env(kT0 + acked * kStep);
  int n = CheckPrefix(dir.path(), &env);
  EXPECT_GE(n, acked);
}

}  // namespace
}  // namespace vigil::tsdb
