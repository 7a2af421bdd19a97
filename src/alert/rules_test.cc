#include "alert/rules.h"

#include <gtest/gtest.h>

#include <set>

#include "alert/evaluate.h"
#include "alert/prometheus_rules.h"

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
  for (const char* id : {"gpu_underutilized",
                         "gpu_idle_allocated",
                         "gpu_memory_near_full",
                         "gpu_temperature_high",
                         "gpu_throttled",
                         "gpu_ecc_errors",
                         "gpu_xid",
                         "gpu_driver_unresponsive",
                         "training_loss_nan",
                         "job_crashed",
                         "job_finished",
                         "job_stalled",
                         "host_memory_near_full",
                         "disk_near_full",
                         "node_down",
                         "gpu_memory_growing",
                         "idle_gpu_cost",
                         "training_loss_diverging",
                         "training_loss_plateau",
                         "training_grad_norm_spike",
                         "training_throughput_drop",
                         "job_straggler_rank",
                         "notification_channel_failing"}) {
    EXPECT_EQ(ids.count(id), 1u) << id;
  }
}

// Every preset but the end of a run says what to do, in both languages.
TEST(RulesTest, EveryPresetSaysWhatToDo) {
  for (const Rule& r : Presets()) {
    if (r.id == "job_finished") continue;
    EXPECT_FALSE(r.steps_en.empty()) << r.id;
    EXPECT_FALSE(r.steps_zh.empty()) << r.id;
    EXPECT_NE(r.steps_en, r.steps_zh) << r.id;
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

const Rule& Find(const std::vector<Rule>& rules, const std::string& id) {
  for (const Rule& r : rules) {
    if (r.id == id) return r;
  }
  ADD_FAILURE() << "no rule " << id;
  return rules.front();
}

const char* const kNewPresets[] = {"gpu_memory_growing",       "idle_gpu_cost",
                                   "training_loss_diverging",  "training_loss_plateau",
                                   "training_grad_norm_spike", "training_throughput_drop",
                                   "job_straggler_rank"};

TEST(RulesTest, NewPresetsHaveHysteresisAndScaledWindows) {
  AlertsConfig c;
  c.time_scale = 0.01;
  auto rules = EffectiveRules(c);
  ASSERT_TRUE(rules.ok());
  std::vector<Rule> presets = Presets();
  for (const char* id : kNewPresets) {
    const Rule& preset = Find(presets, id);
    const Rule& r = Find(*rules, id);
    ASSERT_FALSE(r.levels.empty()) << id;
    EXPECT_EQ(r.levels[0].severity, Severity::kWarning) << id;
    for (size_t i = 0; i < r.levels.size(); ++i) {
      EXPECT_NE(r.levels[i].clear, r.levels[i].fire) << id << ": no hysteresis";
      EXPECT_EQ(r.levels[i].for_ms, preset.levels[i].for_ms / 100) << id;
    }
    if (r.source != RuleSource::kQuery) continue;
    // Windows are written ${...} and scaled: none left unscaled.
    EXPECT_NE(preset.expr.find("${"), std::string::npos) << id;
    EXPECT_EQ(r.expr.find("${"), std::string::npos) << id;
    for (const char* unscaled : {"[5m]", "[10m]", "[30m]", "[1m]", "[2m]", "offset 5m"}) {
      EXPECT_EQ(r.expr.find(unscaled), std::string::npos) << id << ": " << unscaled;
    }
    // PromQL can express it: it exports.
    for (const Level& l : r.levels) EXPECT_FALSE(PrometheusExpr(r, l).empty()) << id;
  }
  EXPECT_NE(Find(*rules, "training_loss_plateau").expr.find("[18000ms] offset 18000ms"),
            std::string::npos);
  EXPECT_NE(Find(*rules, "gpu_memory_growing").expr.find("[2000ms] offset 4000ms"),
            std::string::npos);
}

TEST(RulesTest, IdleGpuCostIsPricedFromTheConfig) {
  AlertsConfig c;
  c.price_per_gpu_hour = 2.5;
  c.currency = "EUR";
  auto rules = EffectiveRules(c);
  ASSERT_TRUE(rules.ok());
  const Rule& r = Find(*rules, "idle_gpu_cost");
  EXPECT_TRUE(r.priced);
  EXPECT_EQ(r.price_per_gpu_hour, 2.5);
  EXPECT_EQ(r.currency, "EUR");
  EXPECT_FALSE(Find(*rules, "gpu_memory_near_full").priced);
  // 8 GPUs idle for the level's `for` (1h) at 2.5 EUR per GPU-hour.
  Sample s =
      Judge(r, r.levels[0], {{"modelName", "NVIDIA H100 80GB HBM3"}, {"node", "n1"}}, 8, 0, 0);
  EXPECT_TRUE(s.fire);
  EXPECT_EQ(s.summary_en,
            "8 × NVIDIA H100 80GB HBM3 idle on n1 for 1h ≈ 20 EUR (under 5% utilisation)");
  EXPECT_EQ(s.summary_zh, "n1 上 8 块 NVIDIA H100 80GB HBM3 已空闲 1h，约 20 EUR（利用率低于 5%）");
  // One idle GPU does not fire, and holds a firing alert.
  s = Judge(r, r.levels[0], {{"node", "n1"}}, 1, 0, 0);
  EXPECT_FALSE(s.fire);
  EXPECT_TRUE(s.hold);
  // In Prometheus' template language a query multiplies.
  EXPECT_EQ(PrometheusSummary(r, r.levels[0], "{cost}"),
            "{{ printf \"%v * 2.5 * 1\" $value | query | first | value | printf \"%.2f\" }} EUR");
}

TEST(RulesTest, MemoryGrowingSaysWhenItIsFull) {
  auto rules = EffectiveRules({});
  ASSERT_TRUE(rules.ok());
  const Rule& r = Find(*rules, "gpu_memory_growing");
  Sample s = Judge(r, r.levels[0], {{"gpu", "3"}, {"node", "n1"}}, 725, 0, 0);
  EXPECT_TRUE(s.fire);  // under 30 min
  EXPECT_EQ(s.summary_en, "GPU 3 on n1 will be out of memory in ~12m: its memory keeps growing");
  EXPECT_FALSE(Judge(r, r.levels[1], {{"gpu", "3"}, {"node", "n1"}}, 725, 0, 0).hold);
  EXPECT_TRUE(Judge(r, r.levels[1], {{"gpu", "3"}, {"node", "n1"}}, 290, 0, 0).fire);
  EXPECT_EQ(PrometheusSummary(r, r.levels[0], "in ~{value_duration}"),
            "in ~{{ $value | humanizeDuration }}");
}

TEST(RulesTest, StragglerConditionIsAJobReport) {
  std::vector<Rule> presets = Presets();
  const Rule& r = Find(presets, "job_straggler_rank");
  EXPECT_EQ(r.source, RuleSource::kJob);
  EXPECT_EQ(r.job_check, JobCheck::kStraggler);
  EXPECT_EQ(PrometheusExpr(r, r.levels[0]), "");
  std::string cond = LevelCondition(r, r.levels[0]);
  EXPECT_NE(cond.find("median"), std::string::npos) << cond;
  EXPECT_NE(cond.find("< 50"), std::string::npos) << cond;
  auto rules = EffectiveRules({});
  EXPECT_NE(PrometheusRuleFile(*rules, 1000)
                .find("# job_straggler_rank: from Vigil's job and node reports"),
            std::string::npos);
}

TEST(RulesTest, ScopePatternsAreGlobs) {
  EXPECT_TRUE(ScopeMatches("", "anything"));
  EXPECT_TRUE(ScopeMatches("gpu-07", "gpu-07"));
  EXPECT_FALSE(ScopeMatches("gpu-07", "gpu-070"));
  EXPECT_TRUE(ScopeMatches("llama-*", "llama-ft-3"));
  EXPECT_FALSE(ScopeMatches("llama-*", "my-llama-ft"));
  EXPECT_TRUE(ScopeMatches("*A100*", "NVIDIA A100-SXM4-80GB"));
  EXPECT_TRUE(ScopeMatches("*a*b*c", "xxaybbzc"));
  EXPECT_FALSE(ScopeMatches("*a*b*c", "xxaybbzcd"));
  EXPECT_TRUE(ScopeMatches("**", ""));
}

// Overrides by GPU model, node and job: applied in order, a later one
// winning; a threshold set there is absolute even for a rule relative to
// the GPU's own slowdown temperature; one can disable the rule or change
// its `for` for some series only.
TEST(RulesTest, ScopedOverridesChangeTheLevelOfSomeSeries) {
  AlertsConfig c;
  c.time_scale = 0.5;
  RuleOverride& o = c.rules["gpu_temperature_high"];
  o.overrides.push_back({{"", "", "*A100*"}, {std::nullopt, std::nullopt, 70.0, 80.0}});
  o.overrides.push_back({{"gpu-07", "", ""}, {std::nullopt, 4 * 60'000, std::nullopt, 85.0}});
  o.overrides.push_back({{"", "sweep-*", ""}, {false, std::nullopt, std::nullopt, std::nullopt}});
  auto rules = EffectiveRules(c);
  ASSERT_TRUE(rules.ok());
  const Rule& r = Find(*rules, "gpu_temperature_high");
  const Level& warn = r.levels[0];
  const Level& crit = r.levels[1];
  ASSERT_EQ(r.overrides.size(), 3u);
  EXPECT_EQ(*r.overrides[1].set.for_ms, 2 * 60'000);  // scaled as every duration

  Level scratch;
  double ref = 87;  // an H100's slowdown: warning at ref - 5, clear at ref - 8
  EXPECT_EQ(LevelFor(r, warn, {"n1", "", "NVIDIA H100 80GB HBM3"}, &ref, &scratch), &warn);
  EXPECT_EQ(ref, 87);

  ref = 87;
  const Level* a100 = LevelFor(r, warn, {"n1", "", "NVIDIA A100-SXM4-80GB"}, &ref, &scratch);
  ASSERT_EQ(a100, &scratch);
  EXPECT_EQ(ref, 0);
  EXPECT_EQ(a100->fire, 70);
  EXPECT_EQ(a100->clear, 67);  // the 3-degree hysteresis stays
  EXPECT_EQ(a100->for_ms, warn.for_ms);

  // gpu-07's A100s: the model's warning, the node's critical and `for`.
  ref = 87;
  const Level* n7 = LevelFor(r, crit, {"gpu-07", "", "NVIDIA A100-SXM4-80GB"}, &ref, &scratch);
  ASSERT_NE(n7, nullptr);
  EXPECT_EQ(n7->fire, 85);
  EXPECT_EQ(n7->for_ms, 2 * 60'000);
  ref = 87;
  Sample s = *JudgeInScope(
      r, warn, {{"gpu", "1"}, {"modelName", "NVIDIA A100-SXM4-80GB"}, {"node", "gpu-07"}}, 72, ref,
      0, {});
  EXPECT_TRUE(s.fire);
  EXPECT_EQ(s.threshold, 70);
  EXPECT_EQ(s.for_ms, 2 * 60'000);

  // A job's GPU: the job comes from the context; a sweep never alerts.
  ScopeContext ctx;
  ctx.gpu_job["n1/2"] = "sweep-lr3";
  ref = 87;
  EXPECT_EQ(LevelFor(r, warn, ScopeOf({{"gpu", "2"}, {"node", "n1"}}, ctx), &ref, &scratch),
            nullptr);
  EXPECT_FALSE(JudgeInScope(r, warn, {{"gpu", "2"}, {"node", "n1"}}, 99, 87, 0, ctx).has_value());
  EXPECT_TRUE(JudgeInScope(r, warn, {{"gpu", "3"}, {"node", "n1"}}, 99, 87, 0, ctx).has_value());
  // A model pattern never matches a series without a GPU model.
  ref = 0;
  EXPECT_EQ(LevelFor(r, warn, {"n1", "", ""}, &ref, &scratch), &warn);
}

}  // namespace
}  // namespace vigil::alert
