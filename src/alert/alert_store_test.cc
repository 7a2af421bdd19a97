#include "alert/alert_store.h"

#include <gtest/gtest.h>

#include "alert/alert_json.h"
#include "alert/tracker.h"
#include "core/temp_dir.h"

namespace vigil::alert {
namespace {

Alert Make(const std::string& gpu, AlertState state, int64_t at) {
  Alert a;
  a.rule = "gpu_temperature_high";
  a.severity = Severity::kCritical;
  a.state = state;
  a.labels = AlertLabels(a.rule, a.severity, {{"gpu", gpu}, {"node", "n1"}});
  a.id = Fingerprint(a.labels);
  a.value = 91.5;
  a.threshold = 90;
  a.active_at_ms = at;
  a.fired_at_ms = state == AlertState::kPending ? 0 : at + 1000;
  a.resolved_at_ms = state == AlertState::kResolved ? at + 5000 : 0;
  a.summary_en = "GPU " + gpu + " hot";
  a.summary_zh = "GPU " + gpu + " 过热";
  return a;
}

TEST(AlertJsonTest, RoundTripAndTheDocumentedShape) {
  Alert a = Make("3", AlertState::kFiring, 1764641139000);
  a.log_excerpt = {"RuntimeError: \"bad\"", "损失 nan"};
  std::string j = AlertJson(a);
  EXPECT_NE(j.find(R"("log_excerpt":["RuntimeError: \"bad\"","损失 nan"])"), std::string::npos)
      << j;
  EXPECT_NE(j.find(R"("state":"firing")"), std::string::npos) << j;
  EXPECT_NE(j.find(R"("started_at":"2025-12-02T02:05:40Z")"), std::string::npos) << j;
  EXPECT_NE(j.find(R"("resolved_at":null)"), std::string::npos) << j;
  EXPECT_NE(j.find(R"("diagnosis":{})"), std::string::npos) << j;
  auto back = ParseAlert(j);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, a);
  EXPECT_FALSE(ParseAlert("{\"id\": 3}").ok());
  EXPECT_FALSE(ParseAlert("not json").ok());
}

TEST(AlertStoreTest, ActiveAndHistorySurviveReopen) {
  TempDir dir;
  AlertStoreOptions o;
  o.path = dir.path() + "/alerts.db";
  o.max_history = 2;
  {
    auto s = AlertStore::Open(o);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    ASSERT_TRUE(
        (*s)->Save({Make("0", AlertState::kFiring, 1000), Make("1", AlertState::kPending, 1000)},
                   2000)
            .ok());
    // Three occurrences resolved: the oldest leaves the history.
    for (int i = 0; i < 3; ++i) {
      ASSERT_TRUE(
          (*s)->Save({Make("2", AlertState::kResolved, 10'000 * (i + 1))}, 10'000 * (i + 1)).ok());
    }
    ASSERT_TRUE((*s)->SaveGroup({"hook:{node=\"n1\"}", 2000, {"abc"}}).ok());
  }
  auto s = AlertStore::Open(o);
  ASSERT_TRUE(s.ok());
  auto active = (*s)->Active();
  ASSERT_TRUE(active.ok());
  EXPECT_EQ(active->size(), 2u);
  auto history = (*s)->History(10);
  ASSERT_TRUE(history.ok());
  ASSERT_EQ(history->size(), 2u);
  EXPECT_EQ((*history)[0].active_at_ms, 30'000);  // newest first
  // A firing alert that resolves updates its row, not a new one.
  ASSERT_TRUE((*s)->Save({Make("0", AlertState::kResolved, 1000)}, 40'000).ok());
  EXPECT_EQ((*s)->Active()->size(), 1u);
  auto groups = (*s)->Groups();
  ASSERT_TRUE(groups.ok());
  ASSERT_EQ(groups->size(), 1u);
  EXPECT_EQ((*groups)[0].sent_firing, std::set<std::string>{"abc"});
  ASSERT_TRUE((*s)->DeleteGroup("hook:{node=\"n1\"}").ok());
  EXPECT_TRUE((*s)->Groups()->empty());
}

TEST(AlertStoreTest, SilencesSurviveReopenAndExpiredOnesArePrunedAfterAWeek) {
  TempDir dir;
  AlertStoreOptions o;
  o.path = dir.path() + "/alerts.db";
  constexpr int64_t kDay = 86'400'000;
  Silence a;
  a.id = "00000000000000aa";
  a.matchers = {{"node", MatchOp::kEqual, "gpu-07"}, {"alertname", MatchOp::kRegex, "gpu_.*"}};
  a.starts_at_ms = a.created_at_ms = a.updated_at_ms = 10 * kDay;
  a.ends_at_ms = 11 * kDay;
  a.created_by = "ops";
  a.comment = "maintenance";
  Silence b = a;
  b.id = "00000000000000bb";
  b.ends_at_ms = 30 * kDay;
  {
    auto s = AlertStore::Open(o);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    ASSERT_TRUE((*s)->SaveSilence(a).ok());
    ASSERT_TRUE((*s)->SaveSilence(b).ok());
    b.ends_at_ms = 12 * kDay;  // expired early: replaced, not added
    b.updated_at_ms = 12 * kDay;
    ASSERT_TRUE((*s)->SaveSilence(b).ok());
  }
  auto s = AlertStore::Open(o);
  ASSERT_TRUE(s.ok());
  auto all = (*s)->Silences();
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 2u);
  std::map<std::string, Silence> by_id;
  for (const Silence& x : *all) by_id[x.id] = x;
  EXPECT_EQ(by_id.at(a.id), a);
  EXPECT_EQ(by_id.at(b.id), b);
  // Kept 7 days after they ended.
  ASSERT_TRUE((*s)->PruneSilences(18 * kDay).ok());
  EXPECT_EQ((*s)->Silences()->size(), 2u);
  ASSERT_TRUE((*s)->PruneSilences(18 * kDay + 1).ok());
  EXPECT_EQ((*s)->Silences()->size(), 1u);
  ASSERT_TRUE((*s)->PruneSilences(19 * kDay + 1).ok());
  EXPECT_TRUE((*s)->Silences()->empty());
}

}  // namespace
}  // namespace vigil::alert
