#include "alert/rules.h"

#include <gtest/gtest.h>

#include <set>

namespace vigil::alert {
namespace {

TEST(RulesTest, PresetIdsAreTheDocumentedOnes) {
  std::set<std::string> ids;
  for (const Rule& r : Presets()) {
    EXPECT_TRUE(ids.insert(r.id).second) << "duplicate " << r.id;
    EXPECT_FALSE(r.levels.empty()) << r.id;
    EXPECT_FALSE(r.summary_en.empty()) << r.id;
    EXPECT_FALSE(r.summary_zh.empty()) << r.id;
    if (r.source == RuleSource::kQuery) {
      EXPECT_FALSE(r.expr.empty()) << r.id;
    }
  }
  for (const char* id :
       {"gpu_underutilized", "gpu_idle_allocated", "gpu_memory_near_full", "gpu_temperature_high",
        "gpu_throttled", "gpu_ecc_errors", "gpu_xid", "gpu_driver_unresponsive",
        "training_loss_nan", "job_crashed", "job_finished", "job_stalled", "host_memory_near_full",
        "disk_near_full", "node_down"}) {
    EXPECT_EQ(ids.count(id), 1u) << id;
  }
}

TEST(RulesTest, LevelsClearOnTheSafeSideOfFiring) {
  for (const Rule& r : Presets()) {
    for (const Level& l : r.levels) {
      if (r.comparison == Comparison::kBelow) {
        EXPECT_GE(l.clear, l.fire) << r.id;
      } else {
        EXPECT_LE(l.clear, l.fire) << r.id;
      }
    }
  }
}

TEST(RulesTest, Durations) {
  EXPECT_EQ(ParseDuration("5m"), 300'000);
  EXPECT_EQ(ParseDuration("1h30m"), 5'400'000);
  EXPECT_EQ(ParseDuration("250ms"), 250);
  EXPECT_FALSE(ParseDuration("5"));
  EXPECT_FALSE(ParseDuration("m"));
  EXPECT_FALSE(ParseDuration("5x"));
  EXPECT_EQ(FormatDuration(300'000), "5m");
  EXPECT_EQ(FormatDuration(1500), "1s500ms");
  EXPECT_EQ(*ScaleDurations("increase(x[${5m}])", 0.01), "increase(x[3000ms])");
  EXPECT_FALSE(ScaleDurations("x[${5q}]", 1).ok());
}

TEST(RulesTest, OverridesAndTimeScale) {
  AlertsConfig c;
  c.time_scale = 0.01;
  c.rules["gpu_memory_near_full"].warning = 80;
  c.rules["gpu_memory_near_full"].for_ms = 10'000;
  c.rules["gpu_temperature_high"].critical = 95;
  c.rules["job_finished"].enabled = false;
  auto rules = EffectiveRules(c);
  ASSERT_TRUE(rules.ok()) << rules.status().ToString();
  for (const Rule& r : *rules) {
    if (r.id == "gpu_memory_near_full") {
      EXPECT_EQ(r.levels[0].fire, 80);
      EXPECT_EQ(r.levels[0].clear, 75);  // keeps its 5-point gap
      EXPECT_EQ(r.levels[0].for_ms, 100);
      EXPECT_EQ(r.levels[1].fire, 97);  // not overridden
    }
    if (r.id == "gpu_temperature_high") {
      EXPECT_TRUE(r.reference.empty());  // absolute now
      EXPECT_EQ(r.levels[0].fire, 85);   // the default reference less 5
      EXPECT_EQ(r.levels[1].fire, 95);
    }
    if (r.id == "job_finished") {
      EXPECT_FALSE(r.enabled);
    }
    if (r.id == "gpu_xid") {
      EXPECT_NE(r.expr.find("[3000ms]"), std::string::npos) << r.expr;
    }
  }
  c.rules["no_such_rule"].enabled = false;
  EXPECT_FALSE(EffectiveRules(c).ok());
}

}  // namespace
}  // namespace vigil::alert
