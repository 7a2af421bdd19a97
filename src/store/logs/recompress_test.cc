// Archive recompression: day files built through the LogStore API shrink,
// every line reads back identically after reopening, a second pass does
// nothing, late blocks are picked up, an interrupted pass leaves a readable
// store and resumes, a corrupt blob or a file that is not a partition is
// skipped with an error and left as it is, and the pass may run beside an
// open store.
#include "store/logs/recompress.h"

#include <gtest/gtest.h>

#include <atomic>
#include <random>
#include <thread>

#include "store/common/sqlite.h"
#include "store/logs/format.h"
#include "store/logs/log_store_test_util.h"

namespace vigil::logstore {
namespace {

using testing::FakeClockEnv;
using testing::kSec;
using testing::kT0;
using testing::MakeBatch;
using testing::MakeStream;
using testing::Rec;

constexpr int64_t kDay = int64_t{86400} * kSec;
constexpr int kDays = 3;
constexpr int kLinesPerDay = 1500;
constexpr int kBlockLines = 500;
constexpr uint64_t kBlocksPerDay = kLinesPerDay / kBlockLines;

// What a query returns of a line, to compare before and after.
struct Seen {
  uint64_t stream = 0, line_no = 0, seq = 0;
  int64_t time = 0;
  int level = 0;
  std::string text;
  bool operator==(const Seen&) const = default;
};

class ArchiveTest : public ::testing::Test {
 protected:
  void SetUp() override {
    options_.block_max_lines = kBlockLines;
    options_.retention_days = 0;
    // Days D-3, D-2, D-1 (D = the fake clock's today): the first two ended
    // more than a day ago, D-1 ended just now.
    std::mt19937 rng(7);
    for (int d = 0; d < kDays; ++d) {
      std::vector<Rec> recs;
      for (int i = 0; i < kLinesPerDay; ++i) {
        const int64_t t = kT0 - (kDays - d) * kDay + i * 50 * kSec;
        recs.push_back({t, i % 17 == 0 ? wire::LogLevel::kWarn : wire::LogLevel::kInfo,
                        TrainingLine(d * kLinesPerDay + i, &rng)});
      }
      Append(recs);
    }
  }

  // The test files are small: compact them whatever they free.
  static ArchiveOptions Opts() {
    ArchiveOptions o;
    o.vacuum_min_bytes = 0;
    return o;
  }

  static std::string TrainingLine(int step, std::mt19937* rng) {
    std::uniform_real_distribution<double> u(0, 1);
    static const char* const kPhases[] = {"forward", "backward", "optimizer", "allreduce"};
    char buf[512];
    std::snprintf(buf, sizeof(buf),
                  "2025-11-27 %02d:%02d:%02d [rank%d] step %d/100000 | loss %.4f | lr %.3e | "
                  "grad_norm %.3f | tokens/s %d | mem %.1f GiB | epoch %d | %s %.1f ms | "
                  "dataloader queue %d | ckpt /mnt/shared/exp-%d/run-%d",
                  step / 3600 % 24, step / 60 % 60, step % 60, step % 8, step, 2 + u(*rng),
                  3e-4 * u(*rng), u(*rng) * 4, static_cast<int>(100000 + u(*rng) * 5000),
                  60 + u(*rng), step / 1000, kPhases[step % 4], 100 * u(*rng),
                  static_cast<int>(u(*rng) * 64), step / 500, step / 100);
    return buf;
  }

  // Appends through a fresh store, cut into blocks and closed.
  void Append(const std::vector<Rec>& recs) {
    auto store = LogStore::Open(options_);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    auto s = MakeStream("s1", {{"job", "train"}}, offset_, recs);
    offset_ = s.end_offset;
    ASSERT_TRUE((*store)->Append("n1", MakeBatch({s})).ok());
    ASSERT_TRUE((*store)->Close().ok());
  }

  std::vector<Seen> ReadAll() {
    auto store = LogStore::Open(options_);
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    if (!store.ok()) return {};
    std::vector<Seen> out = Read(store->get(), {});
    EXPECT_TRUE((*store)->Close().ok());
    return out;
  }

  static std::vector<Seen> Read(LogStore* store, std::vector<LineFilter> filters) {
    LogQuery q;
    q.limit = kMaxQueryLimit;
    q.forward = true;
    q.filters = std::move(filters);
    auto r = store->Query(q);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    std::vector<Seen> out;
    if (!r.ok()) return out;
    EXPECT_FALSE(r->truncated);
    for (const auto& e : r->entries) {
      out.push_back(
          {e.ref.stream_id, e.ref.line_no, e.seq, e.time_ns, static_cast<int>(e.level), e.line});
    }
    return out;
  }

  std::string DayPath(int d) const {
    return dir_.Join(PartitionFileName(DayOf(kT0 - (kDays - d) * kDay)));
  }
  uint64_t Size(int d) { return env_.FileSize(DayPath(d)).value_or(0); }

  std::unique_ptr<store::SqliteDb> OpenDb(int d) {
    auto db = store::SqliteDb::Open(DayPath(d));
    EXPECT_TRUE(db.ok()) << db.status().ToString();
    return db.ok() ? std::move(*db) : nullptr;
  }
  std::string Blob(int d, int64_t id) {
    auto db = OpenDb(d);
    auto s = db->Prepare("SELECT data FROM blocks WHERE id = ?");
    EXPECT_TRUE(s.ok());
    s->BindInt64(1, id);
    Status st;
    return s->Step(&st) ? std::string(s->ColumnBlob(0)) : std::string();
  }

  TempDir dir_;
  FakeClockEnv env_;
  Options options_ = testing::TestOptions(dir_.path(), &env_);
  uint64_t offset_ = 0;
};

TEST_F(ArchiveTest, DueByAgeOfTheDayEnd) {
  ArchiveOptions o = Opts();
  o.max_age_ms = int64_t{3} * 86400 * 1000;
  Archiver a(o, &env_);
  const int64_t today = DayOf(kT0);
  EXPECT_FALSE(a.Due(today));
  EXPECT_FALSE(a.Due(today - 1));  // ended just now
  EXPECT_TRUE(a.Due(today - 2));   // ended a day ago
  EXPECT_TRUE(a.Due(today - 4));   // ended 3 days ago
  EXPECT_FALSE(a.Due(today - 5));  // retention's, soon
}

TEST_F(ArchiveTest, ShrinksDueDaysAndEveryLineReadsBack) {
  const std::vector<Seen> before = ReadAll();
  ASSERT_EQ(before.size(), static_cast<size_t>(kDays * kLinesPerDay));
  const uint64_t size0 = Size(0), size1 = Size(1), size2 = Size(2);

  Archiver archiver(Opts(), &env_);
  ArchiveStats stats;
  ASSERT_TRUE(archiver.ArchiveDir(dir_.path(), &stats).ok());
  EXPECT_TRUE(stats.errors.empty()) << stats.errors.front();
  EXPECT_TRUE(stats.finished);
  EXPECT_EQ(stats.files, 2u);  // D-1 is not due
  EXPECT_EQ(stats.blocks, 2 * kBlocksPerDay);
  EXPECT_EQ(stats.recompressed, 2 * kBlocksPerDay);
  EXPECT_TRUE(stats.vacuumed);
  EXPECT_LT(stats.data_after, stats.data_before * 9 / 10);
  EXPECT_LT(Size(0), size0);
  EXPECT_LT(Size(1), size1);
  EXPECT_EQ(Size(2), size2);
  EXPECT_FALSE(env_.FileExists(DayPath(0) + "-wal"));

  EXPECT_EQ(ReadAll(), before);
  // Filters are untouched: a keyword query still finds (and skips) right.
  auto store = LogStore::Open(options_);
  ASSERT_TRUE(store.ok());
  auto hits = Read(store->get(), {{FilterType::kContains, "step 1234/"}});
  ASSERT_EQ(hits.size(), 1u);
  EXPECT_EQ(hits[0], before[1234]);
  ASSERT_TRUE((*store)->Close().ok());

  // A second pass finds nothing to do and rewrites nothing.
  ArchiveStats again;
  ASSERT_TRUE(archiver.ArchiveDir(dir_.path(), &again).ok());
  EXPECT_EQ(again.blocks, 0u);
  EXPECT_FALSE(again.vacuumed);
  EXPECT_EQ(again.file_after, again.file_before);
}

TEST_F(ArchiveTest, LateBlocksOfAnArchivedDayArePickedUpLater) {
  Archiver archiver(Opts(), &env_);
  ArchiveStats first;
  ASSERT_TRUE(archiver.ArchivePartition(DayPath(0), &first).ok());
  EXPECT_EQ(first.blocks, kBlocksPerDay);

  std::vector<Rec> late;
  std::mt19937 rng(9);
  for (int i = 0; i < 300; ++i) {
    late.push_back({kT0 - kDays * kDay + (i * 50 + 25) * kSec, wire::LogLevel::kInfo,
                    TrainingLine(90000 + i, &rng)});
  }
  Append(late);
  const std::vector<Seen> before = ReadAll();

  ArchiveStats second;
  ASSERT_TRUE(archiver.ArchivePartition(DayPath(0), &second).ok());
  EXPECT_EQ(second.blocks, 1u);  // the late lines' block, nothing older
  EXPECT_EQ(second.recompressed, 1u);
  EXPECT_EQ(ReadAll(), before);
}

TEST_F(ArchiveTest, InterruptedPassLeavesAReadableStoreAndResumes) {
  const std::vector<Seen> before = ReadAll();
  const uint64_t size0 = Size(0);
  ArchiveOptions o = Opts();
  o.max_blocks = 2;
  o.txn_max_bytes = 1;  // commit each block, as a pass killed after 2 would
  ArchiveStats cut;
  ASSERT_TRUE(Archiver(o, &env_).ArchivePartition(DayPath(0), &cut).ok());
  EXPECT_FALSE(cut.finished);
  EXPECT_EQ(cut.blocks, 2u);
  EXPECT_FALSE(cut.vacuumed);  // only a finished file is compacted
  EXPECT_EQ(ReadAll(), before);

  ArchiveStats rest;
  ASSERT_TRUE(Archiver(Opts(), &env_).ArchivePartition(DayPath(0), &rest).ok());
  EXPECT_TRUE(rest.finished);
  EXPECT_EQ(rest.blocks, kBlocksPerDay - 2);  // resumes after the committed ones
  EXPECT_TRUE(rest.vacuumed);
  EXPECT_LT(Size(0), size0);
  EXPECT_EQ(ReadAll(), before);
}

TEST_F(ArchiveTest, BudgetStopsBetweenBlocks) {
  ArchiveOptions o = Opts();
  o.budget_ms = 1;
  ArchiveStats stats;
  ASSERT_TRUE(Archiver(o, &env_).ArchiveDir(dir_.path(), &stats).ok());
  // At least one block per call, so a slice always makes progress.
  EXPECT_GE(stats.blocks, 1u);
  EXPECT_LE(stats.blocks, 2 * kBlocksPerDay);
}

TEST_F(ArchiveTest, RunsBesideAnOpenStore) {
  auto store = LogStore::Open(options_);
  ASSERT_TRUE(store.ok());
  const std::vector<Seen> before = Read(store->get(), {});
  // Queries run all through the pass (updates and VACUUM) and see every line.
  std::atomic<bool> stop{false};
  std::atomic<int> reads{0};
  std::thread reader([&] {
    while (!stop) {
      EXPECT_EQ(Read(store->get(), {}), before);
      ++reads;
    }
  });
  ArchiveStats stats;
  EXPECT_TRUE(Archiver(Opts(), &env_).ArchiveDir(dir_.path(), &stats).ok());
  while (reads < 2) std::this_thread::yield();
  stop = true;
  reader.join();
  EXPECT_TRUE(stats.vacuumed);
  EXPECT_EQ(Read(store->get(), {}), before);  // same row ids, new blobs
  // The store's own connection still writes to the (vacuumed) file.
  std::vector<Rec> late = {{kT0 - kDays * kDay + 7 * kSec, wire::LogLevel::kError, "late"}};
  auto s = MakeStream("s1", {{"job", "train"}}, offset_, late);
  ASSERT_TRUE((*store)->Append("n1", MakeBatch({s})).ok());
  ASSERT_TRUE((*store)->Maintain().ok());
  ASSERT_TRUE((*store)->Close().ok());
  std::vector<Seen> after = ReadAll();
  ASSERT_EQ(after.size(), before.size() + 1);
  EXPECT_EQ(after[0].text, before[0].text);
  EXPECT_EQ(after[1].text, "late");
}

TEST_F(ArchiveTest, CorruptBlobIsSkippedAndLeftAsItIs) {
  const std::vector<Seen> before = ReadAll();
  const std::string good = Blob(0, 3);
  ASSERT_FALSE(good.empty());
  // A torn zstd frame, and something that is no block at all. (A frame has
  // no checksum: a flipped literal byte would decode, to other text.)
  for (const std::string& blob : {good.substr(0, good.size() - 10), std::string("not a block")}) {
    {
      auto db = OpenDb(0);
      auto up = db->Prepare("UPDATE blocks SET data = ? WHERE id = 3");
      ASSERT_TRUE(up.ok());
      up->BindBlob(1, blob);
      ASSERT_TRUE(up->Run().ok());
      ASSERT_TRUE(db->Exec("DROP TABLE IF EXISTS archive").ok());  // pass it again
    }
    ArchiveStats stats;
    ASSERT_TRUE(Archiver(Opts(), &env_).ArchivePartition(DayPath(0), &stats).ok());
    ASSERT_EQ(stats.errors.size(), 1u);
    EXPECT_NE(stats.errors[0].find("block 3 left as it is"), std::string::npos) << stats.errors[0];
    EXPECT_EQ(stats.skipped, 1u);
    EXPECT_EQ(Blob(0, 3), blob);
  }
  // Every other block was recompressed and reads back.
  auto db = OpenDb(0);
  auto up = db->Prepare("UPDATE blocks SET data = ? WHERE id = 3");
  ASSERT_TRUE(up.ok());
  up->BindBlob(1, good);
  ASSERT_TRUE(up->Run().ok());
  db.reset();
  EXPECT_EQ(ReadAll(), before);
}

TEST_F(ArchiveTest, FileThatIsNotAPartitionIsReportedAndLeftAlone) {
  // Named like a due day file: an empty SQLite database, and garbage.
  const std::string other = dir_.Join("2025-01-01.db"), junk = dir_.Join("2025-01-02.db");
  ASSERT_TRUE(store::SqliteDb::Open(other).ok());
  ASSERT_TRUE(env_.WriteFileAtomic(junk, std::string(4096, 'x')).ok());
  ArchiveStats stats;
  Archiver archiver(Opts(), &env_);
  Status st = archiver.ArchivePartition(other, &stats);
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition) << st.ToString();
  EXPECT_NE(st.ToString().find("no blocks table"), std::string::npos);

  ArchiveStats dir_stats;
  ASSERT_TRUE(archiver.ArchiveDir(dir_.path(), &dir_stats).ok());
  EXPECT_EQ(dir_stats.errors.size(), 2u);  // the two files; the real days go on
  EXPECT_EQ(dir_stats.recompressed, 2 * kBlocksPerDay);
  EXPECT_EQ(env_.ReadFile(junk, 1 << 20).value_or(""), std::string(4096, 'x'));
}

// Wired into the store: its background thread archives the due days by
// itself (in slices), and every line still reads back.
TEST_F(ArchiveTest, TheStoresBackgroundThreadArchivesDueDays) {
  const std::vector<Seen> before = ReadAll();
  const uint64_t size0 = Size(0), size2 = Size(2);
  options_.background_maintenance = true;
  options_.archive = Opts();
  options_.archive_cpu_percent = 100;
  auto store = LogStore::Open(options_);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  for (int i = 0; i < 200 && Size(0) >= size0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_LT(Size(0), size0);
  EXPECT_EQ(Read(store->get(), {}), before);
  ASSERT_TRUE((*store)->Close().ok());
  EXPECT_EQ(Size(2), size2);  // ended just now: not due
  options_.background_maintenance = false;
  EXPECT_EQ(ReadAll(), before);
}

TEST_F(ArchiveTest, DryRunWritesNothing) {
  const uint64_t size0 = Size(0);
  const std::string blob = Blob(0, 1);
  ArchiveOptions o = Opts();
  o.dry_run = true;
  ArchiveStats stats;
  ASSERT_TRUE(Archiver(o, &env_).ArchivePartition(DayPath(0), &stats).ok());
  EXPECT_EQ(stats.recompressed, kBlocksPerDay);
  EXPECT_LT(stats.data_after, stats.data_before);
  EXPECT_EQ(Blob(0, 1), blob);
  EXPECT_EQ(Size(0), size0);
}

}  // namespace
}  // namespace vigil::logstore
