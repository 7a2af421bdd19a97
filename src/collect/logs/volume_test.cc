#include "collect/logs/volume.h"

#include <gtest/gtest.h>

namespace vigil::collect::logs {
namespace {

using wire::LogLevel;

TEST(VolumeTest, UnderTheLimitEverythingIsKept) {
  VolumeController v({.lines_per_second = 100, .burst = 100});
  // 100 lines/s for 10 s, spread evenly: never floods.
  for (int64_t ms = 0; ms < 10'000; ms += 10) {
    ASSERT_EQ(v.Admit(LogLevel::kInfo, ms), VolumeDecision::kKeep) << ms;
  }
  EXPECT_FALSE(v.flooding());
  EXPECT_EQ(v.kept_lines(), 1000u);
  EXPECT_EQ(v.counters(), wire::LogSourceCounters{});
}

TEST(VolumeTest, FloodIsSampledWithExactCounts) {
  VolumeController v({.lines_per_second = 1000,
                      .burst = 1000,
                      .sample_initial_n = 10,
                      .sample_double_every = 100});
  int kept = 0;
  for (int i = 0; i < 5000; ++i) kept += v.Admit(LogLevel::kInfo, 0) == VolumeDecision::kKeep;
  // 1000 from the bucket; of the 4000 excess: indices 0,10,..,990 (100 kept),
  // then every 20th up to 2990 (100 more), then every 40th: 3030..3990 (25).
  EXPECT_EQ(kept, 1225);
  EXPECT_EQ(v.counters().sampled_lines, 3775u);
  EXPECT_TRUE(v.flooding());

  // WARN and above are never sampled away, even mid-flood.
  for (int i = 0; i < 50; ++i) {
    EXPECT_EQ(v.Admit(LogLevel::kWarn, 0), VolumeDecision::kKeep);
    EXPECT_EQ(v.Admit(LogLevel::kError, 0), VolumeDecision::kKeep);
  }
  EXPECT_EQ(v.counters().sampled_lines, 3775u);

  // Half a second later the bucket has 500 lines again.
  kept = 0;
  for (int i = 0; i < 500; ++i) kept += v.Admit(LogLevel::kInfo, 500) == VolumeDecision::kKeep;
  EXPECT_EQ(kept, 500);
  EXPECT_FALSE(v.flooding());

  wire::LogSourceCounters c = v.TakeCounters();
  EXPECT_EQ(c.sampled_lines, 3775u);
  EXPECT_EQ(v.counters(), wire::LogSourceCounters{});
}

TEST(VolumeTest, ExcessSamplingRestartsEachSecond) {
  VolumeController v(
      {.lines_per_second = 10, .burst = 10, .sample_initial_n = 5, .sample_double_every = 1000});
  int kept = 0;
  for (int i = 0; i < 110; ++i) kept += v.Admit(LogLevel::kDebug, 900) == VolumeDecision::kKeep;
  // 10 tokens, then excess indices 0,5,...,95 of 100: 20 kept.
  EXPECT_EQ(kept, 30);
  // At 1000 ms: 1 token refilled (100 ms), and a new second's excess count.
  kept = 0;
  for (int i = 0; i < 11; ++i) kept += v.Admit(LogLevel::kDebug, 1000) == VolumeDecision::kKeep;
  // 1 token, then excess 0 (kept), 1-4 sampled, 5 kept, 6-9 sampled.
  EXPECT_EQ(kept, 3);
  EXPECT_EQ(v.counters().sampled_lines, 80u + 8u);
}

TEST(VolumeTest, ProtectedLevelsCanBeSampledWhenConfigured) {
  VolumeController v({.lines_per_second = 1,
                      .burst = 1,
                      .sample_protected = true,
                      .sample_initial_n = 2,
                      .sample_double_every = 1000});
  EXPECT_EQ(v.Admit(LogLevel::kError, 0), VolumeDecision::kKeep);     // token
  EXPECT_EQ(v.Admit(LogLevel::kError, 0), VolumeDecision::kKeep);     // excess 0
  EXPECT_EQ(v.Admit(LogLevel::kError, 0), VolumeDecision::kSampled);  // excess 1
  EXPECT_EQ(v.Admit(LogLevel::kError, 0), VolumeDecision::kKeep);     // excess 2
}

TEST(VolumeTest, LevelFloorFilters) {
  VolumeController v({.lines_per_second = 0, .min_level = LogLevel::kInfo});
  EXPECT_EQ(v.Admit(LogLevel::kDebug, 0), VolumeDecision::kFiltered);
  EXPECT_EQ(v.Admit(LogLevel::kTrace, 0), VolumeDecision::kFiltered);
  EXPECT_EQ(v.Admit(LogLevel::kInfo, 0), VolumeDecision::kKeep);
  EXPECT_EQ(v.Admit(LogLevel::kFatal, 0), VolumeDecision::kKeep);
  // Most prints carry no level; a floor must not silence them.
  EXPECT_EQ(v.Admit(LogLevel::kUnknown, 0), VolumeDecision::kKeep);
  EXPECT_EQ(v.counters().filtered_lines, 2u);
  EXPECT_EQ(v.counters().sampled_lines, 0u);
}

TEST(VolumeTest, FilteredLinesDoNotUseTokens) {
  VolumeController v({.lines_per_second = 1, .burst = 2, .min_level = LogLevel::kWarn});
  for (int i = 0; i < 100; ++i) EXPECT_EQ(v.Admit(LogLevel::kInfo, 0), VolumeDecision::kFiltered);
  EXPECT_FALSE(v.flooding());
  EXPECT_EQ(v.Admit(LogLevel::kWarn, 0), VolumeDecision::kKeep);
  EXPECT_EQ(v.Admit(LogLevel::kWarn, 0), VolumeDecision::kKeep);
  EXPECT_FALSE(v.flooding());
}

TEST(VolumeTest, ClockGoingBackwardsIsNoTime) {
  VolumeController v({.lines_per_second = 1000, .burst = 1});
  EXPECT_EQ(v.Admit(LogLevel::kInfo, 10'000), VolumeDecision::kKeep);
  EXPECT_EQ(v.Admit(LogLevel::kInfo, 5'000), VolumeDecision::kKeep);  // excess 0 kept
  EXPECT_EQ(v.Admit(LogLevel::kInfo, 5'000), VolumeDecision::kSampled);
  EXPECT_EQ(v.Admit(LogLevel::kInfo, 10'001), VolumeDecision::kKeep);  // refilled
}

}  // namespace
}  // namespace vigil::collect::logs
