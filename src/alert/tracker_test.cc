#include "alert/tracker.h"

#include <gtest/gtest.h>

#include "alert/evaluate.h"
#include "alert/rules.h"

namespace vigil::alert {
namespace {

Sample At(double v, double fire, double clear, std::string gpu = "0") {
  Sample s;
  s.labels = {{"gpu", std::move(gpu)}, {"node", "n1"}};
  s.value = v;
  s.threshold = fire;
  s.fire = v > fire;
  s.hold = v > clear;
  return s;
}

const LevelKey kLevel{"gpu_memory_near_full", Severity::kWarning, /*for_ms=*/3000,
                      /*keep_firing_for_ms=*/0};

TEST(FingerprintTest, MatchesAlertmanager) {
  // Vectors from prometheus/common's signature_test.go and a live
  // Alertmanager 0.25 (docs/alerts.md).
  EXPECT_EQ(Fingerprint({}), "cbf29ce484222325");
  EXPECT_EQ(Fingerprint({{"fear", "love is not enough"}, {"name", "garland, briggs"}}),
            "507a62d79ee76c9a");
  EXPECT_EQ(Fingerprint({{"alertname", "GpuTemperatureHigh"},
                         {"gpu", "0"},
                         {"instance", "node1:9400"},
                         {"severity", "critical"}}),
            "8ecf526fd71c7717");
}

TEST(TrackerTest, PendingThenFiringAfterForThenResolved) {
  AlertTracker t;
  auto c = t.Apply(kLevel, {At(95, 90, 85)}, 1000);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].state, AlertState::kPending);
  EXPECT_EQ(c[0].active_at_ms, 1000);
  EXPECT_EQ(LabelOf(c[0], "alertname"), "gpu_memory_near_full");
  EXPECT_EQ(LabelOf(c[0], "severity"), "warning");
  EXPECT_TRUE(t.Apply(kLevel, {At(95, 90, 85)}, 2000).empty());
  EXPECT_TRUE(t.Apply(kLevel, {At(95, 90, 85)}, 3999).empty());  // 2999 ms < for
  c = t.Apply(kLevel, {At(96, 90, 85)}, 4000);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].state, AlertState::kFiring);
  EXPECT_EQ(c[0].fired_at_ms, 4000);
  EXPECT_EQ(c[0].value, 96);
  c = t.Apply(kLevel, {}, 5000);  // the series is gone
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].state, AlertState::kResolved);
  EXPECT_EQ(c[0].resolved_at_ms, 5000);
  EXPECT_TRUE(t.active().empty());
}

TEST(TrackerTest, PendingThatStopsGoesWithoutAWord) {
  AlertTracker t;
  t.Apply(kLevel, {At(95, 90, 85)}, 1000);
  EXPECT_TRUE(t.Apply(kLevel, {At(80, 90, 85)}, 2000).empty());
  EXPECT_TRUE(t.active().empty());
}

TEST(TrackerTest, HysteresisHoldsAHoveringValue) {
  AlertTracker t;
  LevelKey now{"r", Severity::kCritical, 0, 0};
  ASSERT_EQ(t.Apply(now, {At(91, 90, 85)}, 1000).size(), 1u);  // fires at once (for 0)
  // Hovering around the firing threshold, above the clear one: no change.
  for (int i = 0; i < 20; ++i) {
    double v = i % 2 == 0 ? 89.5 : 90.5;
    EXPECT_TRUE(t.Apply(now, {At(v, 90, 85)}, 2000 + i * 1000).empty()) << v;
  }
  auto c = t.Apply(now, {At(84, 90, 85)}, 30'000);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].state, AlertState::kResolved);
  // Below the firing threshold, a new alert does not start.
  EXPECT_TRUE(t.Apply(now, {At(89, 90, 85)}, 31'000).empty());
}

TEST(TrackerTest, KeepFiringForHoldsAfterTheConditionStops) {
  AlertTracker t;
  LevelKey k{"gpu_xid", Severity::kCritical, 0, 5000};
  ASSERT_EQ(t.Apply(k, {At(1, 0, 0.5)}, 1000).size(), 1u);
  EXPECT_TRUE(t.Apply(k, {}, 2000).empty());
  EXPECT_EQ(t.active().begin()->second.keep_firing_since_ms, 2000);
  EXPECT_TRUE(t.Apply(k, {}, 6999).empty());
  auto c = t.Apply(k, {}, 7000);  // 7000 - 2000 >= 5000
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].state, AlertState::kResolved);
}

TEST(TrackerTest, LevelsAndSeriesAreSeparateAlerts) {
  AlertTracker t;
  LevelKey warn{"r", Severity::kWarning, 0, 0}, crit{"r", Severity::kCritical, 0, 0};
  t.Apply(warn, {At(98, 90, 85, "0"), At(98, 90, 85, "1")}, 1000);
  t.Apply(crit, {At(98, 97, 94, "0")}, 1000);
  EXPECT_EQ(t.active().size(), 3u);
  // An evaluation of the warning level does not resolve the critical.
  t.Apply(warn, {}, 2000);
  ASSERT_EQ(t.active().size(), 1u);
  EXPECT_EQ(t.active().begin()->second.severity, Severity::kCritical);
}

TEST(TrackerTest, RestoredFiringAlertDoesNotFireAgain) {
  AlertTracker first;
  first.Apply(kLevel, {At(95, 90, 85)}, 1000);
  first.Apply(kLevel, {At(95, 90, 85)}, 4000);
  std::vector<Alert> saved;
  for (const auto& [id, a] : first.active()) saved.push_back(a);
  AlertTracker second;
  second.Restore(saved);
  EXPECT_TRUE(second.Apply(kLevel, {At(95, 90, 85)}, 9000).empty());
  EXPECT_EQ(second.active().begin()->second.fired_at_ms, 4000);
}

TEST(JudgeTest, ReferenceRelativeThresholdAndSummary) {
  Rule r;
  r.id = "gpu_temperature_high";
  r.comparison = Comparison::kAtLeast;
  r.summary_en = "GPU {gpu} at {value} °C (alert at {threshold}, slows at {reference})";
  Level warn{Severity::kWarning, -5, -8, 60'000, ""};
  Sample s = Judge(r, warn, {{"gpu", "3"}}, 85, 90, 0);
  EXPECT_TRUE(s.fire);
  EXPECT_EQ(s.threshold, 85);
  EXPECT_EQ(s.summary_en, "GPU 3 at 85 °C (alert at 85, slows at 90)");
  s = Judge(r, warn, {{"gpu", "3"}}, 83, 90, 0);
  EXPECT_FALSE(s.fire);
  EXPECT_TRUE(s.hold);  // >= 82
  EXPECT_FALSE(Judge(r, warn, {{"gpu", "3"}}, 81, 90, 0).hold);
}

}  // namespace
}  // namespace vigil::alert
