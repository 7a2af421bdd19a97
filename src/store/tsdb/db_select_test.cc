// Db::SelectSeries (lazy, per-series decoding) and Db::SeriesLabels (labels
// without samples), checked against Db::Select on data split between
// persisted chunks and the head.
#include <gtest/gtest.h>

#include "store/tsdb/db.h"
#include "store/tsdb/head.h"
#include "store/tsdb/stale.h"
#include "store/tsdb/test_env.h"

namespace vigil::tsdb {
namespace {

using testing::FakeClockEnv;
using testing::kMin;
using testing::kT0;
using testing::TempDir;

wire::MetricBatch One(const std::string& name, const std::string& gpu, int64_t t, double v) {
  wire::MetricBatchBuilder b("node1", t);
  b.Add(name, {{"gpu", gpu}}, v);
  return b.Release();
}

class DbSelectTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Options o;
    o.dir = dir_.path();
    o.env = &env_;
    o.chunk_window_ms = 10 * kMin;
    o.retention_ms = 2 * kDayMs;
    auto db = Db::Open(o);
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_ = std::move(*db);
  }
  void TearDown() override { (void)db_->Close(); }

  void Add(const std::string& name, const std::string& gpu, int64_t t, double v) {
    ASSERT_TRUE(db_->Append(One(name, gpu, t, v)).ok());
  }
  // "gpu" values of SeriesLabels, in order.
  std::string Gpus(std::vector<Matcher> m, int64_t mint, int64_t maxt) {
    auto r = db_->SeriesLabels(m, mint, maxt);
    if (!r.ok()) return "ERROR " + r.status().ToString();
    std::string out;
    for (const auto& labels : *r) {
      for (const auto& l : labels) {
        if (l.name == "gpu") out += l.value + ";";
      }
    }
    return out;
  }
  // The same from Select, which decodes every sample.
  std::string GpusBySelect(std::vector<Matcher> m, int64_t mint, int64_t maxt) {
    auto r = db_->Select(m, mint, maxt);
    if (!r.ok()) return "ERROR " + r.status().ToString();
    std::string out;
    for (const auto& s : *r) {
      for (const auto& l : s.labels) {
        if (l.name == "gpu") out += l.value + ";";
      }
    }
    return out;
  }

  TempDir dir_;
  FakeClockEnv env_{kT0};
  std::unique_ptr<Db> db_;
};

const Matcher kUtil{MatchType::kEqual, "__name__", "util"};

TEST_F(DbSelectTest, SelectSeriesDecodesOnDemandLikeSelect) {
  // gpu 1: persisted windows [0,10) and [10,20) plus head samples; gpu 0: head only.
  for (int64_t t = 0; t < 25 * kMin; t += 30'000) Add("util", "1", kT0 + t, t / 1000.0);
  Add("util", "0", kT0 + 24 * kMin, 7);
  Add("util", "2", kT0 + 1000, 1);  // outside the ranges asked below
  env_.SetNow(kT0 + 25 * kMin);
  ASSERT_TRUE(db_->Maintain().ok());
  ASSERT_GT(db_->Stats().persisted_chunks, 0u);

  for (auto [mint, maxt] : {std::pair<int64_t, int64_t>{kT0 + 5 * kMin, kT0 + 24 * kMin},
                            {kT0 + 9 * kMin, kT0 + 11 * kMin},
                            {0, INT64_MAX}}) {
    auto sel = db_->SelectSeries({kUtil}, mint, maxt);
    ASSERT_TRUE(sel.ok()) << sel.status().ToString();
    auto all = db_->Select({kUtil}, mint, maxt);
    ASSERT_TRUE(all.ok());
    // The selection keeps empty series; Select drops them. Sorted by labels.
    ASSERT_EQ((*sel)->size(), 3u);
    std::vector<wire::Sample> buf;
    size_t k = 0;
    for (size_t i = 0; i < (*sel)->size(); ++i) {
      if (i > 0) {
        EXPECT_LT((*sel)->labels(i - 1), (*sel)->labels(i));
      }
      ASSERT_TRUE((*sel)->Samples(i, &buf).ok());
      if (buf.empty()) continue;
      ASSERT_LT(k, all->size());
      EXPECT_EQ((*sel)->labels(i), (*all)[k].labels);
      EXPECT_EQ(buf, (*all)[k].samples);
      for (const auto& s : buf) {
        EXPECT_GE(s.t_ms, mint);
        EXPECT_LE(s.t_ms, maxt);
      }
      ++k;
    }
    EXPECT_EQ(k, all->size());
    EXPECT_FALSE((*sel)->Samples(3, &buf).ok());
  }
  // A full-range selection of gpu 1 has every sample once, in order.
  auto sel = db_->SelectSeries({kUtil, {MatchType::kEqual, "gpu", "1"}}, 0, INT64_MAX);
  ASSERT_TRUE(sel.ok());
  std::vector<wire::Sample> buf;
  ASSERT_TRUE((*sel)->Samples(0, &buf).ok());
  ASSERT_EQ(buf.size(), 50u);
  for (size_t i = 0; i < buf.size(); ++i) EXPECT_EQ(buf[i].t_ms, kT0 + int64_t(i) * 30'000);
}

// SelectLast gives what an instant selector reads of SelectSeries: the
// newest sample in range (staleness markers included), for ranges that end
// now, inside the persisted windows, before everything, and after retention.
TEST_F(DbSelectTest, SelectLastIsTheNewestSampleOfSelectSeries) {
  for (int64_t t = 0; t < 25 * kMin; t += 30'000) Add("util", "1", kT0 + t, t / 1000.0);
  Add("util", "0", kT0 + 3 * kMin, 5);
  Add("util", "0", kT0 + 24 * kMin, 7);
  Add("util", "3", kT0 + 20 * kMin, 1);
  Add("util", "3", kT0 + 21 * kMin, StaleNaN());  // ended
  env_.SetNow(kT0 + 25 * kMin);
  ASSERT_TRUE(db_->Maintain().ok());
  ASSERT_GT(db_->Stats().persisted_chunks, 0u);

  auto newest = [&](bool last_only, int64_t mint, int64_t maxt) {
    auto sel =
        last_only ? db_->SelectLast({kUtil}, mint, maxt) : db_->SelectSeries({kUtil}, mint, maxt);
    EXPECT_TRUE(sel.ok());
    std::vector<std::pair<wire::Labels, wire::Sample>> out;
    std::vector<wire::Sample> buf;
    for (size_t i = 0; sel.ok() && i < (*sel)->size(); ++i) {
      EXPECT_TRUE((*sel)->Samples(i, &buf).ok());
      if (!buf.empty()) out.push_back({(*sel)->labels(i), buf.back()});
    }
    return out;
  };
  auto same = [](const auto& a, const auto& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      bool both_stale = IsStaleNaN(a[i].second.value) && IsStaleNaN(b[i].second.value);
      if (a[i].first != b[i].first || a[i].second.t_ms != b[i].second.t_ms ||
          (!both_stale && a[i].second.value != b[i].second.value)) {
        return false;
      }
    }
    return true;
  };
  for (auto [mint, maxt] : {std::pair<int64_t, int64_t>{kT0 + 20 * kMin, kT0 + 25 * kMin},
                            {kT0 + 2 * kMin, kT0 + 7 * kMin},  // a persisted window, past
                            {kT0 + 9 * kMin, kT0 + 11 * kMin},
                            {kT0 + 21 * kMin, kT0 + 21 * kMin},
                            {0, kT0 - 1}}) {
    auto fast = newest(true, mint, maxt);
    EXPECT_TRUE(same(fast, newest(false, mint, maxt))) << (mint - kT0) / kMin;
  }
  EXPECT_EQ(newest(true, kT0 + 20 * kMin, kT0 + 25 * kMin).size(), 3u);  // 0, 1 and 3's marker
  EXPECT_TRUE(newest(true, kT0 + 25 * kMin + 1, kT0 + 30 * kMin).empty());

  // Retention drops day 0: nothing of it is read, newest or not.
  env_.SetNow(kT0 + 3 * kDayMs);
  ASSERT_TRUE(db_->Maintain().ok());
  EXPECT_TRUE(newest(true, kT0 + 20 * kMin, kT0 + 25 * kMin).empty());
  EXPECT_TRUE(newest(false, kT0 + 20 * kMin, kT0 + 25 * kMin).empty());
}

TEST_F(DbSelectTest, SeriesLabelsAgreeWithSelectWithoutSamples) {
  // gpu 0: persisted windows [0,10) and [30,40) with a gap; gpu 1: head only;
  // gpu 2: another day; other: another metric.
  for (int64_t t = 0; t < 10 * kMin; t += kMin) Add("util", "0", kT0 + t, 1);
  for (int64_t t = 30 * kMin; t < 40 * kMin; t += kMin) Add("util", "0", kT0 + t, 2);
  env_.SetNow(kT0 + 45 * kMin);
  ASSERT_TRUE(db_->Maintain().ok());
  Add("util", "1", kT0 + 44 * kMin, 3);
  Add("temp", "9", kT0 + 44 * kMin, 3);
  Add("util", "2", kT0 + kDayMs + kMin, 4);

  EXPECT_EQ(Gpus({kUtil}, INT64_MIN, INT64_MAX), "0;1;2;");
  EXPECT_EQ(Gpus({}, INT64_MIN, INT64_MAX), "9;0;1;2;");  // temp sorts before util
  struct Range {
    int64_t mint, maxt;
    const char* want;
  };
  for (const Range& r : {Range{kT0, kT0 + 50 * kMin, "0;1;"},
                         Range{kT0 + 5 * kMin, kT0 + 6 * kMin, "0;"},  // inside a chunk
                         Range{kT0 + 12 * kMin, kT0 + 14 * kMin, ""},  // the gap
                         Range{kT0 + 44 * kMin, kT0 + kDayMs, "1;"},   // head only
                         Range{kT0 + kDayMs, kT0 + 2 * kDayMs, "2;"},  // later day
                         Range{kT0 + 3 * kDayMs, INT64_MAX, ""},       // after everything
                         Range{0, kT0 - 1, ""}}) {                     // before everything
    EXPECT_EQ(Gpus({kUtil}, r.mint, r.maxt), r.want) << r.mint - kT0;
    EXPECT_EQ(GpusBySelect({kUtil}, r.mint, r.maxt), r.want) << r.mint - kT0;
  }
  EXPECT_FALSE(db_->SeriesLabels({{MatchType::kRegex, "gpu", "("}}, 0, 1).ok());

  // Retention drops day 0: gpu 0 and gpu 1 (persisted there by now) have no data left.
  env_.SetNow(kT0 + kDayMs + 20 * kMin);
  ASSERT_TRUE(db_->Maintain().ok());
  env_.SetNow(kT0 + 3 * kDayMs);
  ASSERT_TRUE(db_->Maintain().ok());
  EXPECT_EQ(GpusBySelect({kUtil}, INT64_MIN, INT64_MAX), "2;");
  EXPECT_EQ(Gpus({kUtil}, INT64_MIN, INT64_MAX), "2;");
}

}  // namespace
}  // namespace vigil::tsdb
