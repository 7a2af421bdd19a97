#include "store/tsdb/wal.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "core/coding.h"
#include "store/tsdb/test_env.h"

namespace vigil::tsdb {
namespace {

using testing::TempDir;

std::vector<std::string> Bodies(int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) {
    if (i % 3 == 0) {
      out.push_back(EncodeSeriesRecord(i, {{"__name__", "m"}, {"i", std::to_string(i)}}));
    } else {
      std::vector<WalSample> s = {{static_cast<uint64_t>(i), i * 1000LL, i * 0.5}, {1, -5, -1.25}};
      out.push_back(EncodeSamplesRecord(s));
    }
  }
  return out;
}

std::vector<std::string> ReplayAll(const std::string& dir, WalReplayStats* stats = nullptr) {
  std::vector<std::string> got;
  auto r = ReplayWal(Env::Default(), dir, [&](uint64_t, std::string_view b) {
    got.emplace_back(b);
    return Status::Ok();
  });
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  if (r.ok() && stats != nullptr) *stats = *r;
  return got;
}

void WriteAll(const std::string& dir, const std::vector<std::string>& bodies) {
  auto w = OpenWalWriter(Env::Default(), dir, 1);
  ASSERT_TRUE(w.ok());
  for (const auto& b : bodies) ASSERT_TRUE((*w)->Add(b).ok());
  ASSERT_TRUE((*w)->Close().ok());
}

TEST(WalRecordTest, RoundTrips) {
  WalRecord r;
  ASSERT_TRUE(DecodeWalRecord(EncodeSeriesRecord(7, {{"a", "1"}, {"b", "2"}}), &r).ok());
  EXPECT_EQ(r.type, WalRecordType::kSeries);
  EXPECT_EQ(r.series_id, 7u);
  EXPECT_EQ(r.labels, (wire::Labels{{"a", "1"}, {"b", "2"}}));

  std::vector<WalSample> s = {{3, -100, 1.5}, {4, 1LL << 50, -0.0}};
  WalRecord r2;
  ASSERT_TRUE(DecodeWalRecord(EncodeSamplesRecord(s), &r2).ok());
  ASSERT_EQ(r2.samples.size(), 2u);
  EXPECT_EQ(r2.samples[1].series_id, 4u);
  EXPECT_EQ(r2.samples[1].t_ms, 1LL << 50);
  EXPECT_EQ(r2.samples[0].value, 1.5);

  WalRecord r3;
  wire::MetricFamily f{"gpu_util", wire::MetricType::kGauge, "GPU busy"};
  ASSERT_TRUE(DecodeWalRecord(EncodeFamilyRecord(f), &r3).ok());
  EXPECT_EQ(r3.family, f);
}

TEST(WalRecordTest, RejectsGarbage) {
  WalRecord r;
  EXPECT_FALSE(DecodeWalRecord("", &r).ok());
  EXPECT_FALSE(DecodeWalRecord("\x09xyz", &r).ok());
  std::string s = EncodeSamplesRecord(std::vector<WalSample>{{1, 2, 3}});
  EXPECT_FALSE(DecodeWalRecord(s.substr(0, s.size() - 1), &r).ok());
  EXPECT_FALSE(DecodeWalRecord(s + "x", &r).ok());
  // A huge count with no bytes behind it must not allocate.
  std::string huge(1, static_cast<char>(WalRecordType::kSamples));
  PutVarint64(&huge, 1ULL << 60);
  EXPECT_FALSE(DecodeWalRecord(huge, &r).ok());
}

TEST(WalTest, WriteRotateReplay) {
  TempDir dir;
  auto bodies = Bodies(10);
  auto w = OpenWalWriter(Env::Default(), dir.path(), 5);
  ASSERT_TRUE(w.ok());
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE((*w)->Add(bodies[i]).ok());
    if (i == 4) {
      ASSERT_TRUE((*w)->Rotate().ok());
    }
  }
  EXPECT_EQ((*w)->segment(), 6u);
  ASSERT_TRUE((*w)->Close().ok());
  auto segs = ListWalSegments(Env::Default(), dir.path());
  ASSERT_TRUE(segs.ok());
  EXPECT_EQ(*segs, (std::vector<uint64_t>{5, 6}));
  EXPECT_EQ(ReplayAll(dir.path()), bodies);
}

// Every possible torn tail replays to a prefix, and the file is cut back so a
// second replay sees the same prefix with nothing to truncate.
TEST(WalTest, TornTailAtEveryOffsetIsAPrefix) {
  TempDir dir;
  auto bodies = Bodies(6);
  WriteAll(dir.path(), bodies);
  std::string path = WalSegmentPath(dir.path(), 1);
  auto full = Env::Default()->ReadFile(path, 1 << 20);
  ASSERT_TRUE(full.ok());
  for (size_t cut = 0; cut < full->size(); ++cut) {
    ASSERT_TRUE(Env::Default()->WriteFileAtomic(path, full->substr(0, cut)).ok());
    WalReplayStats stats;
    auto got = ReplayAll(dir.path(), &stats);
    ASSERT_LE(got.size(), bodies.size());
    for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], bodies[i]) << "cut " << cut;
    EXPECT_EQ(ReplayAll(dir.path(), &stats), got);
    EXPECT_EQ(stats.truncated_bytes, 0u);
  }
}

TEST(WalTest, CorruptByteStopsThatSegment) {
  TempDir dir;
  auto bodies = Bodies(6);
  WriteAll(dir.path(), bodies);
  std::string path = WalSegmentPath(dir.path(), 1);
  auto data = Env::Default()->ReadFile(path, 1 << 20);
  ASSERT_TRUE(data.ok());
  size_t third = 0;
  for (int i = 0; i < 2; ++i) third += 8 + bodies[i].size();
  std::string bad = *data;
  bad[third + 10] ^= 0x40;
  ASSERT_TRUE(Env::Default()->WriteFileAtomic(path, bad).ok());
  WalReplayStats stats;
  auto got = ReplayAll(dir.path(), &stats);
  EXPECT_EQ(got, std::vector<std::string>(bodies.begin(), bodies.begin() + 2));
  EXPECT_EQ(stats.torn_segments, 1u);
  EXPECT_EQ(*Env::Default()->FileSize(path), third);
}

TEST(WalTest, EmptyValidPrefixRemovesSegment) {
  TempDir dir;
  std::string path = WalSegmentPath(dir.path(), 3);
  ASSERT_TRUE(Env::Default()->WriteFileAtomic(path, "garbage!garbage!").ok());
  EXPECT_TRUE(ReplayAll(dir.path()).empty());
  EXPECT_FALSE(Env::Default()->FileExists(path));
}

}  // namespace
}  // namespace vigil::tsdb
