#include "store/tsdb/head.h"

#include <gtest/gtest.h>

namespace vigil::tsdb {
namespace {

constexpr int64_t kHour = 3600 * 1000;

TEST(WindowTest, AlignedAndNeverSpanningDays) {
  EXPECT_EQ(WindowOf(kHour * 3 + 5, 2 * kHour).start, 2 * kHour);
  EXPECT_EQ(WindowOf(kHour * 3 + 5, 2 * kHour).end, 4 * kHour);
  // 5 h windows: the last one of a day is cut at midnight.
  Window w = WindowOf(23 * kHour, 5 * kHour);
  EXPECT_EQ(w.start, 20 * kHour);
  EXPECT_EQ(w.end, 24 * kHour);
  EXPECT_EQ(WindowOf(24 * kHour, 5 * kHour).start, 24 * kHour);
  EXPECT_EQ(DayOf(-1), -1);
  EXPECT_EQ(WindowOf(-1, 2 * kHour).start, -2 * kHour);
}

TEST(HeadTest, AppendRejectsOutOfOrderAndDuplicates) {
  Head head(2 * kHour);
  HeadSeries* hs = head.GetOrCreate(1);
  EXPECT_TRUE(head.Append(hs, {100, 1}, 1));
  EXPECT_FALSE(head.Append(hs, {100, 2}, 1));
  EXPECT_FALSE(head.Append(hs, {50, 2}, 1));
  EXPECT_TRUE(head.Append(hs, {101, 3}, 1));
  EXPECT_EQ(head.sample_count(), 2u);
  EXPECT_EQ(hs->last, (wire::Sample{101, 3}));
}

TEST(HeadTest, WindowsCloseAndPersist) {
  Head head(2 * kHour);
  HeadSeries* hs = head.GetOrCreate(7);
  ASSERT_TRUE(head.Append(hs, {kHour, 1}, 3));
  ASSERT_TRUE(head.Append(hs, {3 * kHour, 2}, 4));  // next window: first one closes
  EXPECT_EQ(hs->closed.size(), 1u);
  EXPECT_EQ(head.OldestNeededSegment(9), 3u);
  head.CloseEnded(3 * kHour);  // the open window ends at 4 h: stays open
  EXPECT_TRUE(hs->has_open);
  head.CloseEnded(4 * kHour);
  EXPECT_FALSE(hs->has_open);
  auto pending = head.CollectClosed();
  ASSERT_EQ(pending.size(), 2u);
  EXPECT_EQ(pending[0].window.start, 0);
  EXPECT_EQ(pending[1].samples, (std::vector<wire::Sample>{{3 * kHour, 2}}));
  head.DropPersisted(7, 2);
  EXPECT_EQ(head.sample_count(), 0u);
  EXPECT_EQ(hs->persisted_max_t, 3 * kHour);
  EXPECT_EQ(head.OldestNeededSegment(9), 9u);
  // The last sample survives persistence (Latest needs it).
  EXPECT_EQ(hs->last, (wire::Sample{3 * kHour, 2}));
  EXPECT_FALSE(head.Append(hs, {3 * kHour, 5}, 9));
}

TEST(HeadTest, MinTimeFollowsAppendsAndDrops) {
  Head head(2 * kHour);
  EXPECT_EQ(head.MinTime(), kNoTime);
  HeadSeries* a = head.GetOrCreate(1);
  HeadSeries* b = head.GetOrCreate(2);
  ASSERT_TRUE(head.Append(a, {5 * kHour, 1}, 1));
  EXPECT_EQ(head.MinTime(), 5 * kHour);
  ASSERT_TRUE(head.Append(b, {kHour, 1}, 1));  // a new series older than the rest
  EXPECT_EQ(head.MinTime(), kHour);
  ASSERT_TRUE(head.Append(b, {3 * kHour, 2}, 1));  // b's first window closes
  ASSERT_TRUE(head.Append(a, {6 * kHour, 2}, 1));
  EXPECT_EQ(head.MinTime(), kHour);
  head.DropPersisted(2, 1);  // b's oldest window persisted: its 3 h sample is the oldest now
  EXPECT_EQ(head.MinTime(), 3 * kHour);
  head.CloseEnded(8 * kHour);
  head.DropPersisted(2, 1);
  EXPECT_EQ(head.MinTime(), 5 * kHour);
  head.DropPersisted(1, 2);
  EXPECT_EQ(head.MinTime(), kNoTime);
  ASSERT_TRUE(head.Append(a, {9 * kHour, 3}, 2));
  EXPECT_EQ(head.MinTime(), 9 * kHour);
}

TEST(HeadTest, CopyRangeReportsHeadStart) {
  Head head(2 * kHour);
  HeadSeries* hs = head.GetOrCreate(1);
  for (int64_t t = 10; t <= 50; t += 10) ASSERT_TRUE(head.Append(hs, {t, 0}, 1));
  std::vector<wire::Sample> out;
  EXPECT_EQ(head.CopyRange(1, 20, 40, &out), 10);
  EXPECT_EQ(out.size(), 3u);
  EXPECT_EQ(head.CopyRange(2, 0, 100, &out), std::numeric_limits<int64_t>::max());
}

TEST(HeadTest, NotePersistedBoundsReplay) {
  Head head(2 * kHour);
  HeadSeries* hs = head.GetOrCreate(1);
  head.NotePersisted(hs, {500, 4});
  EXPECT_FALSE(head.Append(hs, {500, 4}, 1));
  EXPECT_TRUE(head.Append(hs, {501, 4}, 1));
  EXPECT_EQ(head.sample_count(), 1u);
}

}  // namespace
}  // namespace vigil::tsdb
