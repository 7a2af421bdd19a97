#include "store/tsdb/chunk_store.h"

#include <gtest/gtest.h>

#include "store/tsdb/chunk_codec.h"
#include "store/tsdb/head.h"
#include "store/tsdb/test_env.h"

namespace vigil::tsdb {
namespace {

using testing::TempDir;

TEST(DayNameTest, RoundTrips) {
  EXPECT_EQ(DayName(0), "1970-01-01");
  EXPECT_EQ(DayName(20422), "2025-11-30");
  for (int64_t d : {0LL, 1LL, 59LL, 10956LL, 20422LL, 30000LL}) {
    int64_t back = -1;
    ASSERT_TRUE(ParseDayName(DayName(d), &back));
    EXPECT_EQ(back, d);
  }
  int64_t day;
  EXPECT_FALSE(ParseDayName("2025-02-30", &day));
  EXPECT_FALSE(ParseDayName("catalog", &day));
}

StoredChunk MakeChunk(uint64_t id, int64_t t0, int n) {
  std::vector<wire::Sample> s;
  for (int i = 0; i < n; ++i) s.push_back({t0 + i * 1000, i * 1.5});
  return {id, s.front().t_ms, s.back().t_ms, n, EncodeChunk(s)};
}

TEST(ChunkStoreTest, WriteReadRetention) {
  TempDir dir;
  const int64_t day = 20000;
  {
    auto store = ChunkStore::Open(Env::Default(), dir.path());
    ASSERT_TRUE(store.ok());
    ASSERT_TRUE(
        (*store)
            ->WriteDay(day, {MakeChunk(1, day * kDayMs, 10), MakeChunk(2, day * kDayMs, 10)})
            .ok());
    ASSERT_TRUE((*store)->WriteDay(day + 1, {MakeChunk(1, (day + 1) * kDayMs, 10)}).ok());
    // Rewriting the same chunk replaces it.
    ASSERT_TRUE((*store)->WriteDay(day + 1, {MakeChunk(1, (day + 1) * kDayMs, 10)}).ok());
  }
  auto store = ChunkStore::Open(Env::Default(), dir.path());
  ASSERT_TRUE(store.ok());
  EXPECT_EQ((*store)->Days(), (std::vector<int64_t>{day, day + 1}));
  std::vector<StoredChunk> got;
  ASSERT_TRUE((*store)->Read({1}, day * kDayMs, (day + 2) * kDayMs, &got).ok());
  ASSERT_EQ(got.size(), 2u);
  EXPECT_LT(got[0].min_t, got[1].min_t);
  got.clear();
  ASSERT_TRUE((*store)->Read({1, 2}, day * kDayMs + 5000, day * kDayMs + 6000, &got).ok());
  EXPECT_EQ(got.size(), 2u);

  std::unordered_map<uint64_t, StoredChunk> newest;
  ASSERT_TRUE((*store)->NewestChunks(&newest).ok());
  EXPECT_EQ(newest.at(1).min_t, (day + 1) * kDayMs);
  EXPECT_EQ(newest.at(2).max_t, day * kDayMs + 9000);
  EXPECT_EQ(*(*store)->MinTime(), day * kDayMs);

  auto dropped = (*store)->DropDaysEndingBy((day + 1) * kDayMs);
  ASSERT_TRUE(dropped.ok());
  EXPECT_EQ(*dropped, 1);
  EXPECT_EQ((*store)->Days(), (std::vector<int64_t>{day + 1}));
  EXPECT_FALSE(Env::Default()->FileExists(dir.path() + "/" + DayName(day) + ".db"));
}

}  // namespace
}  // namespace vigil::tsdb
