#include "store/tsdb/db.h"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <thread>

#include "store/tsdb/chunk_store.h"
#include "store/tsdb/head.h"
#include "store/tsdb/stale.h"
#include "store/tsdb/test_env.h"

namespace vigil::tsdb {
namespace {

using testing::FakeClockEnv;
using testing::kMin;
using testing::kT0;
using testing::TempDir;

wire::MetricBatch Batch(int64_t t, std::vector<std::pair<std::string, double>> gpus,
                        const std::string& name = "gpu_util") {
  wire::MetricBatchBuilder b("node1", t);
  b.Family(name, wire::MetricType::kGauge, "GPU utilisation");
  for (const auto& [gpu, v] : gpus) b.Add(name, {{"gpu", gpu}}, v);
  return b.Release();
}

class DbTest : public ::testing::Test {
 protected:
  void Open() {
    Options o;
    o.dir = dir_.path();
    o.env = &env_;
    o.chunk_window_ms = 10 * kMin;
    o.retention_ms = 2 * kDayMs;
    auto db = Db::Open(o);
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_ = std::move(*db);
  }
  void Reopen() {
    ASSERT_TRUE(db_->Close().ok());
    db_.reset();
    Open();
  }
  std::vector<wire::Series> Select(std::vector<Matcher> m, int64_t mint = 0,
                                   int64_t maxt = INT64_MAX) {
    auto r = db_->Select(m, mint, maxt);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : std::vector<wire::Series>{};
  }
  size_t WalSegments() {
    return std::distance(std::filesystem::directory_iterator(dir_.path() + "/wal"),
                         std::filesystem::directory_iterator{});
  }

  TempDir dir_;
  FakeClockEnv env_{kT0};
  std::unique_ptr<Db> db_;
};

const Matcher kUtil{MatchType::kEqual, "__name__", "gpu_util"};

TEST_F(DbTest, AppendSelectLatestFamilies) {
  Open();
  ASSERT_TRUE(db_->Append(Batch(kT0 + 1000, {{"0", 10}, {"1", 20}})).ok());
  ASSERT_TRUE(db_->Append(Batch(kT0 + 2000, {{"0", 11}, {"1", 21}})).ok());
  ASSERT_TRUE(db_->Append(Batch(kT0 + 1500, {{"2", 5}}, "gpu_temp")).ok());

  auto s = Select({kUtil});
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(wire::LabelsToString(s[0].labels), "{__name__=\"gpu_util\",gpu=\"0\"}");
  EXPECT_EQ(s[0].samples, (std::vector<wire::Sample>{{kT0 + 1000, 10}, {kT0 + 2000, 11}}));
  EXPECT_EQ(Select({kUtil}, kT0 + 1500, kT0 + 2500)[1].samples,
            (std::vector<wire::Sample>{{kT0 + 2000, 21}}));

  auto latest = db_->Latest(kT0 + 1800);
  ASSERT_EQ(latest.size(), 2u);
  EXPECT_EQ(latest[1].sample, (wire::Sample{kT0 + 2000, 21}));
  EXPECT_EQ(db_->Latest(0).size(), 3u);

  auto fams = db_->Families();
  ASSERT_EQ(fams.size(), 2u);
  EXPECT_EQ(fams[1], (wire::MetricFamily{"gpu_util", wire::MetricType::kGauge, "GPU utilisation"}));
  DbStats st = db_->Stats();
  EXPECT_EQ(st.series, 3u);
  EXPECT_EQ(st.samples_appended, 5u);
  EXPECT_EQ(st.head_samples, 5u);
  EXPECT_EQ(st.min_time_ms, kT0 + 1000);
  EXPECT_EQ(st.max_time_ms, kT0 + 2000);
  EXPECT_GT(st.disk_bytes, 0u);
}

TEST_F(DbTest, Matchers) {
  Open();
  wire::MetricBatchBuilder b("n", kT0 + 1);
  b.Add("gpu_util", {{"gpu", "0"}, {"job", "train"}}, 1);
  b.Add("gpu_util", {{"gpu", "1"}, {"job", "eval"}}, 2);
  b.Add("gpu_util", {{"gpu", "2"}}, 3);
  b.Add("cpu_util", 4);
  ASSERT_TRUE(db_->Append(b.Release()).ok());
  EXPECT_EQ(Select({{MatchType::kRegex, "__name__", ".*_util"}}).size(), 4u);
  EXPECT_EQ(Select({{MatchType::kRegex, "__name__", "util"}}).size(), 0u);
  EXPECT_EQ(Select({kUtil, {MatchType::kNotEqual, "job", "train"}}).size(), 2u);
  EXPECT_EQ(Select({kUtil, {MatchType::kEqual, "job", ""}}).size(), 1u);
  EXPECT_EQ(Select({kUtil, {MatchType::kNotRegex, "gpu", "[01]"}}).size(), 1u);
  EXPECT_EQ(Select({kUtil, {MatchType::kRegex, "job", "tr.*|"}}).size(), 2u);
  EXPECT_FALSE(db_->Select({{MatchType::kRegex, "job", "("}}, 0, 10).ok());
}

TEST_F(DbTest, OutOfOrderAndDuplicatesAreCountedAndDropped) {
  Open();
  ASSERT_TRUE(db_->Append(Batch(kT0 + 2000, {{"0", 1}})).ok());
  ASSERT_TRUE(db_->Append(Batch(kT0 + 2000, {{"0", 2}})).ok());
  ASSERT_TRUE(db_->Append(Batch(kT0 + 1000, {{"0", 3}})).ok());
  ASSERT_TRUE(db_->Append(Batch(kT0 + 3000, {{"0", 4}})).ok());
  EXPECT_EQ(db_->Stats().samples_out_of_order, 2u);
  EXPECT_EQ(Select({kUtil})[0].samples,
            (std::vector<wire::Sample>{{kT0 + 2000, 1}, {kT0 + 3000, 4}}));
  Reopen();
  EXPECT_EQ(Select({kUtil})[0].samples.size(), 2u);
}

TEST_F(DbTest, InvalidBatchChangesNothing) {
  Open();
  wire::MetricBatch bad;
  bad.series.push_back({{{"a", "1"}, {"a", "2"}}, {{kT0, 1}}});
  EXPECT_EQ(db_->Append(bad).code(), StatusCode::kInvalidArgument);
  wire::MetricBatch empty_labels;
  empty_labels.series.push_back({{}, {{kT0, 1}}});
  EXPECT_EQ(db_->Append(empty_labels).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(db_->Append(Batch(-1, {{"0", 1}})).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(db_->Append(Batch(INT64_MAX, {{"0", 1}})).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(db_->Stats().series, 0u);
  // Unsorted labels are normalized rather than rejected.
  wire::MetricBatch unsorted;
  unsorted.series.push_back({{{"z", "1"}, {"__name__", "m"}, {"e", ""}}, {{kT0, 1}}});
  ASSERT_TRUE(db_->Append(unsorted).ok());
  EXPECT_EQ(Select({{MatchType::kEqual, "__name__", "m"}})[0].labels.size(), 2u);
}

TEST_F(DbTest, WalReplayRestoresHeadAfterClose) {
  Open();
  for (int i = 0; i < 50; ++i) {
    ASSERT_TRUE(db_->Append(Batch(kT0 + i * 1000, {{"0", i * 1.0}, {"1", i * 2.0}})).ok());
  }
  Reopen();
  auto s = Select({kUtil});
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[1].samples.size(), 50u);
  EXPECT_EQ(s[1].samples[49], (wire::Sample{kT0 + 49000, 98}));
  EXPECT_EQ(db_->Stats().head_samples, 100u);
  EXPECT_EQ(db_->Families().size(), 1u);
  EXPECT_EQ(db_->Latest(0).size(), 2u);
}

TEST_F(DbTest, WindowsAreCutPersistedAndNotDuplicatedOnReplay) {
  Open();
  // 35 minutes of 10 s samples: windows [0,10), [10,20), [20,30) close, [30,40) stays open.
  for (int64_t t = 0; t < 35 * kMin; t += 10000) {
    ASSERT_TRUE(db_->Append(Batch(kT0 + t, {{"0", t / 1000.0}})).ok());
  }
  env_.SetNow(kT0 + 35 * kMin);
  ASSERT_TRUE(db_->Maintain().ok());
  DbStats st = db_->Stats();
  EXPECT_EQ(st.persisted_chunks, 3u);
  EXPECT_EQ(st.head_samples, 30u);
  EXPECT_EQ(Select({kUtil})[0].samples.size(), 210u);

  // More data, a second cut: the first segment now holds only persisted data.
  for (int64_t t = 35 * kMin; t < 45 * kMin; t += 10000) {
    ASSERT_TRUE(db_->Append(Batch(kT0 + t, {{"0", t / 1000.0}})).ok());
  }
  env_.SetNow(kT0 + 45 * kMin);
  ASSERT_TRUE(db_->Maintain().ok());
  EXPECT_EQ(db_->Stats().persisted_chunks, 4u);
  EXPECT_LE(WalSegments(), 2u);

  Reopen();
  auto s = Select({kUtil});
  ASSERT_EQ(s.size(), 1u);
  ASSERT_EQ(s[0].samples.size(), 270u);
  for (size_t i = 0; i < s[0].samples.size(); ++i) {
    ASSERT_EQ(s[0].samples[i].t_ms, kT0 + static_cast<int64_t>(i) * 10000);
  }
  EXPECT_EQ(db_->Latest(0)[0].sample.t_ms, kT0 + 45 * kMin - 10000);
  // A range inside persisted chunks only reads those.
  EXPECT_EQ(Select({kUtil}, kT0 + 5 * kMin, kT0 + 6 * kMin)[0].samples.size(), 7u);
  ASSERT_TRUE(db_->Append(Batch(kT0 + 1000, {{"0", 0}})).ok());
  EXPECT_EQ(db_->Stats().samples_out_of_order, 1u);
}

TEST_F(DbTest, LatestSurvivesPersistenceAndReopen) {
  Open();
  ASSERT_TRUE(db_->Append(Batch(kT0 + 1000, {{"0", 42}})).ok());
  env_.SetNow(kT0 + kDayMs / 2);
  ASSERT_TRUE(db_->Maintain().ok());
  EXPECT_EQ(db_->Stats().head_samples, 0u);
  Reopen();
  auto latest = db_->Latest(kT0);
  ASSERT_EQ(latest.size(), 1u);
  EXPECT_EQ(latest[0].sample, (wire::Sample{kT0 + 1000, 42}));
  EXPECT_EQ(db_->Stats().min_time_ms, kT0 + 1000);
  // A sample at the persisted time is a duplicate even after restart.
  ASSERT_TRUE(db_->Append(Batch(kT0 + 1000, {{"0", 1}})).ok());
  EXPECT_EQ(db_->Stats().samples_out_of_order, 1u);
}

std::vector<std::string> PartitionFiles(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir + "/chunks")) {
    if (e.path().extension() == ".db") names.push_back(e.path().filename());
  }
  std::sort(names.begin(), names.end());
  return names;
}

TEST_F(DbTest, RetentionDropsWholeOldPartitions) {
  Open();
  for (int day = 0; day < 4; ++day) {
    ASSERT_TRUE(db_->Append(Batch(kT0 + day * kDayMs + 1000, {{"0", day * 1.0}})).ok());
    env_.SetNow(kT0 + day * kDayMs + 20 * kMin);
    ASSERT_TRUE(db_->Maintain().ok());
    if (day == 1) {
      EXPECT_EQ(PartitionFiles(dir_.path()),
                (std::vector<std::string>{DayName(20000) + ".db", DayName(20001) + ".db"}));
    }
  }
  env_.SetNow(kT0 + 4 * kDayMs);
  ASSERT_TRUE(db_->Maintain().ok());
  // Retention is 2 days: days 0 and 1 ended at or before now - 2 d.
  EXPECT_EQ(PartitionFiles(dir_.path()),
            (std::vector<std::string>{DayName(20002) + ".db", DayName(20003) + ".db"}));
  auto s = Select({kUtil});
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].samples.size(), 2u);
  EXPECT_EQ(db_->Stats().min_time_ms, kT0 + 2 * kDayMs + 1000);
}

TEST_F(DbTest, SecondOpenOfSameDirFails) {
  Open();
  Options o;
  o.dir = dir_.path();
  o.env = &env_;
  auto second = Db::Open(o);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kFailedPrecondition);
}

TEST_F(DbTest, CloseIsIdempotentAndStopsWrites) {
  Open();
  ASSERT_TRUE(db_->Close().ok());
  ASSERT_TRUE(db_->Close().ok());
  EXPECT_EQ(db_->Append(Batch(kT0, {{"0", 1}})).code(), StatusCode::kFailedPrecondition);
  EXPECT_FALSE(db_->Select({kUtil}, 0, 1).ok());
}

// A writer, a reader and a maintainer at once: the reader never sees a
// duplicate or out-of-order sample, and in the end nothing is lost.
TEST_F(DbTest, ConcurrentWriterReaderMaintainer) {
  Open();
  constexpr int kBatches = 600;
  std::atomic<bool> done{false};
  std::thread writer([&] {
    for (int i = 0; i < kBatches; ++i) {
      ASSERT_TRUE(db_->Append(Batch(kT0 + i * 5000, {{"0", i * 1.0}, {"1", i * 1.0}})).ok());
    }
    done = true;
  });
  std::thread maintainer([&] {
    while (!done) {
      env_.SetNow(env_.NowMillis() + 2 * kMin);
      ASSERT_TRUE(db_->Maintain().ok());
    }
  });
  int reads = 0;
  while (!done || reads < 5) {
    auto r = db_->Select({kUtil}, 0, INT64_MAX);
    ASSERT_TRUE(r.ok());
    for (const auto& s : *r) {
      for (size_t i = 1; i < s.samples.size(); ++i) {
        ASSERT_LT(s.samples[i - 1].t_ms, s.samples[i].t_ms);
      }
    }
    (void)db_->Latest(0);
    (void)db_->Stats();
    ++reads;
  }
  writer.join();
  maintainer.join();
  auto s = Select({kUtil});
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].samples.size(), static_cast<size_t>(kBatches));
  EXPECT_EQ(s[1].samples.size(), static_cast<size_t>(kBatches));
}

// A staleness marker is kept bit for bit through the WAL (reopen) and the
// chunk codec (Maintain), returned by SelectSeries for the query engine, and
// left out of Select and Latest, which return values.
TEST_F(DbTest, StalenessMarkersAreKeptExactlyAndReturnedOnlyBySelectSeries) {
  Open();
  ASSERT_TRUE(db_->Append(Batch(kT0 + 1000, {{"0", 98}, {"1", 40}})).ok());
  ASSERT_TRUE(db_->Append(Batch(kT0 + 2000, {{"0", StaleNaN()}, {"1", 41}})).ok());
  auto check = [&](const char* when) {
    SCOPED_TRACE(when);
    auto sel = db_->SelectSeries({kUtil}, 0, INT64_MAX);
    ASSERT_TRUE(sel.ok()) << sel.status().ToString();
    ASSERT_EQ((*sel)->size(), 2u);
    std::vector<wire::Sample> gpu0;
    ASSERT_TRUE((*sel)->Samples(0, &gpu0).ok());
    ASSERT_EQ(gpu0.size(), 2u);
    EXPECT_TRUE(IsStaleNaN(gpu0[1].value));
    EXPECT_EQ(gpu0[1].t_ms, kT0 + 2000);

    auto values = Select({kUtil});
    ASSERT_EQ(values.size(), 2u);
    EXPECT_EQ(values[0].samples, (std::vector<wire::Sample>{{kT0 + 1000, 98}}));
    EXPECT_EQ(values[1].samples.size(), 2u);
    // Only markers in range: no values, no series.
    EXPECT_EQ(Select({kUtil, {MatchType::kEqual, "gpu", "0"}}, kT0 + 1500).size(), 0u);

    auto latest = db_->Latest(0);
    ASSERT_EQ(latest.size(), 1u);
    EXPECT_EQ(wire::LabelValue(latest[0].labels, "gpu"), "1");
  };
  check("head");
  Reopen();
  check("after WAL replay");
  env_.SetNow(kT0 + 30 * kMin);
  ASSERT_TRUE(db_->Maintain().ok());
  ASSERT_EQ(db_->Stats().head_samples, 0u);
  check("from a persisted chunk");
  // A series that was marked and comes back just continues.
  ASSERT_TRUE(db_->Append(Batch(kT0 + 31 * kMin, {{"0", 97}})).ok());
  EXPECT_EQ(Select({kUtil})[0].samples.back(), (wire::Sample{kT0 + 31 * kMin, 97}));
  EXPECT_EQ(db_->Latest(0).size(), 2u);
}

// Append reports each batch series' id, in batch order, the same for the
// same labels from batch to batch (and after a reopen): the ingester follows
// series by them.
TEST_F(DbTest, AppendReturnsTheSeriesIds) {
  Open();
  std::vector<uint64_t> a, b, c;
  ASSERT_TRUE(db_->Append(Batch(kT0 + 1000, {{"0", 1}, {"1", 2}}), &a).ok());
  ASSERT_TRUE(db_->Append(Batch(kT0 + 2000, {{"1", 2}, {"2", 3}, {"0", 1}}), &b).ok());
  ASSERT_EQ(a.size(), 2u);
  ASSERT_EQ(b.size(), 3u);
  EXPECT_NE(a[0], a[1]);
  EXPECT_EQ(b[0], a[1]);
  EXPECT_EQ(b[2], a[0]);
  EXPECT_NE(b[1], a[0]);
  EXPECT_NE(b[1], a[1]);
  Reopen();
  ASSERT_TRUE(db_->Append(Batch(kT0 + 3000, {{"2", 3}}), &c).ok());
  EXPECT_EQ(c, std::vector<uint64_t>{b[1]});
}

}  // namespace
}  // namespace vigil::tsdb
