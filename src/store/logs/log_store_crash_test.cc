// Crash tests: a child process appends and reports each acknowledged batch
// through a pipe, the parent kills it with SIGKILL at a random moment (while
// the background thread cuts blocks, rotates and drops WAL segments), then
// reopens the store. Every acknowledged line must be there exactly once, what
// is there must be a prefix of what was sent, and a full resend (an agent
// restarting from an old checkpoint) must add nothing. Also: torn WAL tails.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <random>

#include "store/logs/log_store.h"
#include "store/logs/log_store_test_util.h"
#include "store/logs/wal.h"

namespace vigil::logstore {
namespace {

using testing::kSec;
using testing::kT0;
using testing::MakeBatch;
using testing::MakeStream;
using testing::Rec;

constexpr int kLinesPerBatch = 3;
constexpr int kSources = 2;

std::string LineText(int batch, int source, int j) {
  return "b" + std::to_string(batch) + " s" + std::to_string(source) + " l" + std::to_string(j);
}

// Batch i: kLinesPerBatch lines for each of kSources sources.
wire::LogBatch NthBatch(int i) {
  std::vector<wire::LogStream> streams;
  for (int s = 0; s < kSources; ++s) {
    uint64_t start = 0;
    for (int b = 0; b < i; ++b) {
      for (int j = 0; j < kLinesPerBatch; ++j) start += LineText(b, s, j).size() + 1;
    }
    std::vector<Rec> recs;
    for (int j = 0; j < kLinesPerBatch; ++j) {
      recs.push_back(
          {kT0 + (i * kLinesPerBatch + j) * kSec, wire::LogLevel::kInfo, LineText(i, s, j)});
    }
    streams.push_back(
        MakeStream("src" + std::to_string(s), {{"job", "j" + std::to_string(s)}}, start, recs));
  }
  return MakeBatch(std::move(streams));
}

Options CrashOptions(const std::string& dir, bool background) {
  Options o;
  o.dir = dir;
  o.block_max_lines = 5;
  o.block_max_age_ms = 0;
  o.background_maintenance = background;
  o.retention_days = 0;  // the lines are dated 2025; the clock is real
  return o;
}

// What recovery found, summed over CountStoredBatches calls: the crashes must
// hit stores holding both blocks and WAL-only (head) lines.
uint64_t g_blocks_seen = 0;
uint64_t g_head_lines_seen = 0;

// Number of whole batches stored, checking there are no duplicates and no
// gaps; -1 on a violation (reported through gtest).
int CountStoredBatches(const std::string& dir, bool sources_agree = true) {
  auto store = LogStore::Open(CrashOptions(dir, false));
  EXPECT_TRUE(store.ok()) << store.status().ToString();
  if (!store.ok()) return -1;
  int batches = -1;
  g_blocks_seen += (*store)->Stats().blocks;
  g_head_lines_seen += (*store)->Stats().head_lines;
  for (int s = 0; s < kSources; ++s) {
    LogQuery q;
    q.forward = true;
    q.limit = kMaxQueryLimit;
    q.matchers = {{MatchType::kEqual, "job", "j" + std::to_string(s)}};
    auto r = (*store)->Query(q);
    EXPECT_TRUE(r.ok());
    if (!r.ok()) return -1;
    const auto& es = r->entries;
    for (size_t k = 0; k < es.size(); ++k) {
      int b = static_cast<int>(k) / kLinesPerBatch, j = static_cast<int>(k) % kLinesPerBatch;
      EXPECT_EQ(es[k].line, LineText(b, s, j)) << "source " << s << " entry " << k;
      EXPECT_EQ(es[k].ref.line_no, k);
      if (es[k].line != LineText(b, s, j)) return -1;
    }
    EXPECT_EQ(es.size() % kLinesPerBatch, 0u);
    int n = static_cast<int>(es.size()) / kLinesPerBatch;
    if (batches >= 0 && sources_agree) {
      EXPECT_EQ(n, batches) << "sources disagree";
    }
    batches = batches < 0 ? n : std::min(batches, n);
  }
  EXPECT_TRUE((*store)->Close().ok());
  return batches;
}

// Forks a child that appends batches [first, ...) forever, acknowledging each
// through a pipe; kills it after `acks` acknowledgements. Returns the number
// of the last acknowledged batch + 1.
int RunAndKill(const std::string& dir, int first, int acks, bool background) {
  int fds[2];
  EXPECT_EQ(pipe(fds), 0);
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    auto store = LogStore::Open(CrashOptions(dir, background));
    if (!store.ok()) _exit(2);
    for (int i = first;; ++i) {
      if (!(*store)->Append("n1", NthBatch(i)).ok()) _exit(3);
      if (write(fds[1], &i, sizeof(i)) != sizeof(i)) _exit(4);
      if (!background && i % 7 == 0 && !(*store)->Maintain().ok()) _exit(5);
    }
  }
  close(fds[1]);
  int last = first - 1, got = 0, v;
  while (got < acks && read(fds[0], &v, sizeof(v)) == sizeof(v)) {
    last = v;
    ++got;
  }
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  while (read(fds[0], &v, sizeof(v)) == sizeof(v)) last = v;  // acks sent before the kill
  close(fds[0]);
  EXPECT_TRUE(WIFSIGNALED(status)) << "child exited early with " << WEXITSTATUS(status);
  return last + 1;
}

TEST(LogStoreCrash, KillNineLosesNothingAcknowledgedAndDuplicatesNothing) {
  std::mt19937 rng(1234);
  for (int round = 0; round < 6; ++round) {
    TempDir dir;
    bool background = round % 2 == 0;
    int acked = RunAndKill(dir.path(), 0, 20 + static_cast<int>(rng() % 150), background);
    int stored = CountStoredBatches(dir.path());
    ASSERT_GE(stored, acked) << "round " << round;
    // Crash again, continuing from what is stored, then resend everything.
    int acked2 = RunAndKill(dir.path(), stored, 10 + static_cast<int>(rng() % 100), background);
    int stored2 = CountStoredBatches(dir.path());
    ASSERT_GE(stored2, acked2) << "round " << round;
    {
      auto store = LogStore::Open(CrashOptions(dir.path(), false));
      ASSERT_TRUE(store.ok());
      for (int i = 0; i < stored2; ++i) ASSERT_TRUE((*store)->Append("n1", NthBatch(i)).ok());
      EXPECT_EQ((*store)->Stats().duplicate_lines % (kLinesPerBatch * kSources), 0u);
      ASSERT_TRUE((*store)->Close().ok());
    }
    EXPECT_EQ(CountStoredBatches(dir.path()), stored2) << "resend stored duplicates";
    EXPECT_EQ(CountStoredBatches(dir.path()), stored2) << "second reopen differs";
  }
  EXPECT_GT(g_blocks_seen, 0u);
  EXPECT_GT(g_head_lines_seen, 0u);
}

// Exits without Close (no destructors) right after acknowledged appends.
void AppendAndVanish(const std::string& dir, int batches) {
  pid_t pid = fork();
  if (pid == 0) {
    auto store = LogStore::Open(CrashOptions(dir, false));
    if (!store.ok()) _exit(2);
    for (int i = 0; i < batches; ++i) {
      if (!(*store)->Append("n1", NthBatch(i)).ok()) _exit(3);
    }
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

TEST(LogStoreCrash, TornWalTailIsIgnored) {
  TempDir dir;
  AppendAndVanish(dir.path(), 10);
  std::string wal_dir = dir.Join("wal");
  auto segs = ListWalSegments(Env::Default(), wal_dir);
  ASSERT_TRUE(segs.ok());
  ASSERT_FALSE(segs->empty());
  std::string path = WalSegmentPath(wal_dir, segs->back());
  auto data = Env::Default()->ReadFile(path, 1 << 24);
  ASSERT_TRUE(data.ok());
  // Garbage after the last frame (a torn append): everything acked survives.
  ASSERT_TRUE(
      Env::Default()->WriteFileAtomic(path, *data + std::string("\x20\0\0\0garbage", 11)).ok());
  EXPECT_EQ(CountStoredBatches(dir.path()), 10);

  // A frame cut in the middle: the store opens with a prefix, consistently.
  TempDir dir2;
  AppendAndVanish(dir2.path(), 10);
  segs = ListWalSegments(Env::Default(), dir2.Join("wal"));
  ASSERT_TRUE(segs.ok());
  path = WalSegmentPath(dir2.Join("wal"), segs->back());
  data = Env::Default()->ReadFile(path, 1 << 24);
  ASSERT_TRUE(data.ok());
  ASSERT_TRUE(Env::Default()->WriteFileAtomic(path, data->substr(0, data->size() - 10)).ok());
  // The last batch's second stream record was torn: source 0 has 10 batches,
  // source 1 has 9, each a clean prefix.
  EXPECT_EQ(CountStoredBatches(dir2.path(), false), 9);
}

}  // namespace
}  // namespace vigil::logstore
