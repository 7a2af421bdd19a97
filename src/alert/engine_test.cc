// The engine over a real store: a GPU heating up, its warning and critical
// alerts with `for`, one message per change, muting, resolution, a restart
// that does not notify again, and a rule whose query fails.
#include "alert/engine.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "alert/test_store.h"
#include "core/manual_clock_env.h"
#include "core/temp_dir.h"

namespace vigil::alert {
namespace {

class Recorder final : public Notifier {
 public:
  Status Send(const Notification& n) override {
    sent.push_back(n);
    if (capped) return ResourceExhausted("capped: 10 messages today");
    return fail ? Unavailable("receiver down") : Status::Ok();
  }
  std::vector<Notification> sent;
  bool fail = false;
  bool capped = false;
};

// A person's channel: several groups may go as one message.
class MergingRecorder final : public Notifier {
 public:
  Status Send(const Notification& n) override {
    if (fail) return Unavailable("held back by the vendor's rate limit");
    sent.push_back(n);
    return Status::Ok();
  }
  bool MergesGroups() const override { return true; }
  std::vector<Notification> sent;
  bool fail = false;
};

class AlertEngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_.Open(tmp_.path(), &env_);
    db_ = store_.db.get();
    query_ = store_.query.get();
  }
  void TearDown() override { store_.Close(); }

  // One sample of GPU `gpu`'s temperature and slowdown threshold at `now`.
  void Temperature(double celsius, int gpu = 0) {
    wire::MetricBatch b;
    wire::Labels labels = {{"UUID", "GPU-" + std::to_string(gpu + 1)},
                           {"gpu", std::to_string(gpu)},
                           {"modelName", "NVIDIA H100"},
                           {"node", "n1"}};
    auto series = [&](const char* name, double v) {
      wire::Series s{labels, {{env_.now, v}}};
      s.labels.insert(s.labels.begin(), {"__name__", name});
      b.series.push_back(s);
    };
    series("DCGM_FI_DEV_GPU_TEMP", celsius);
    series("vigil_gpu_temp_slowdown_celsius", 90);
    ASSERT_TRUE(db_->Append(b).ok());
  }

  // The tests' defaults: the store in the test's folder, one channel "hook"
  // (hook_), a short group_interval and backoff.
  AlertEngineOptions Options() {
    AlertEngineOptions o;
    o.store.path = tmp_.path() + "/alerts.db";
    o.dispatch.channels = {"hook"};
    o.dispatch.group_interval_ms = 5000;
    o.delivery.max_backoff_ms = 2000;
    o.channels = {{"hook", &hook_}};
    return o;
  }

  // An engine on the test's store and clock; a refusal fails the test.
  std::unique_ptr<AlertEngine> Open(AlertEngineOptions o) {
    AlertEngineSources s;
    s.query = query_;
    s.env = &env_;
    auto e = AlertEngine::Create(s, std::move(o));
    EXPECT_TRUE(e.ok()) << e.status().ToString();
    return e.ok() ? std::move(e).value() : nullptr;
  }

  std::unique_ptr<AlertEngine> NewEngine(AlertsConfig config = {}, std::vector<Route> routes = {}) {
    AlertEngineOptions o = Options();
    o.config = std::move(config);
    o.dispatch.routes = std::move(routes);
    return Open(std::move(o));
  }

  // Seconds of `celsius`, one evaluation per second.
  void Play(AlertEngine* e, double celsius, int seconds) {
    for (int i = 0; i < seconds; ++i) {
      env_.now += 1000;
      Temperature(celsius);
      e->EvaluateOnce();
    }
  }

  std::vector<std::string> Firing(AlertEngine* e) {
    std::vector<std::string> out;
    for (const Alert& a : e->Active()) {
      if (a.state == AlertState::kFiring) out.push_back(a.rule + "/" + SeverityName(a.severity));
    }
    return out;
  }

  TempDir tmp_;
  ManualClockEnv env_{1'764'000'000'000};
  TestStore store_;
  tsdb::Db* db_ = nullptr;
  query::Engine* query_ = nullptr;
  Recorder hook_;
};

// config.json's override for a GPU model: its own absolute threshold and
// `for`, shown as the GPU's effective threshold in the rule list.
TEST_F(AlertEngineTest, AnOverrideByGpuModelSetsThatGpusThreshold) {
  AlertsConfig c;
  c.rules["gpu_temperature_high"].overrides.push_back(
      {{"", "", "*H100*"}, {std::nullopt, 10'000, 80.0, std::nullopt}});
  auto e = NewEngine(c);
  Play(e.get(), 82, 5);  // under the default 85, past the H100's 80: pending
  ASSERT_EQ(e->Active().size(), 1u);
  EXPECT_EQ(e->Active()[0].state, AlertState::kPending);
  EXPECT_EQ(e->Active()[0].threshold, 80);
  Play(e.get(), 82, 6);  // its own `for`, 10 s, not the preset's minute
  EXPECT_EQ(Firing(e.get()), (std::vector<std::string>{"gpu_temperature_high/warning"}));
  bool shown = false;
  for (const RuleStatus& rs : e->Rules()) {
    if (rs.rule.id != "gpu_temperature_high") continue;
    for (const SeriesThreshold& t : rs.thresholds) {
      if (t.severity == Severity::kWarning) {
        EXPECT_EQ(t.threshold, 80);
        EXPECT_EQ(t.where, "node n1 gpu 0 (NVIDIA H100)");
        shown = true;
      }
    }
  }
  EXPECT_TRUE(shown);
  Play(e.get(), 78, 3);  // 77 is its clear threshold: holds
  EXPECT_EQ(Firing(e.get()).size(), 1u);
  Play(e.get(), 76, 2);
  EXPECT_TRUE(e->Active().empty());
}

TEST_F(AlertEngineTest, OverheatingGpuWarnsThenGoesCriticalThenResolves) {
  auto e = NewEngine();
  Play(e.get(), 70, 5);
  EXPECT_TRUE(e->Active().empty());
  Play(e.get(), 86, 59);  // >= 90 - 5, for 1m: pending
  ASSERT_EQ(e->Active().size(), 1u);
  EXPECT_EQ(e->Active()[0].state, AlertState::kPending);
  Play(e.get(), 86, 2);
  EXPECT_EQ(Firing(e.get()), (std::vector<std::string>{"gpu_temperature_high/warning"}));
  Play(e.get(), 86, 2);  // group_wait
  ASSERT_EQ(hook_.sent.size(), 1u);
  const Alert& w = hook_.sent[0].alerts.at(0);
  EXPECT_EQ(w.summary_en, "GPU 0 on n1 at 86 °C (alert at 85 °C; it slows down at 90 °C)");
  EXPECT_EQ(LabelOf(w, "UUID"), "GPU-1");

  Play(e.get(), 91, 40);  // critical after 30 s; the warning is muted by it
  EXPECT_EQ(Firing(e.get()), (std::vector<std::string>{"gpu_temperature_high/critical",
                                                       "gpu_temperature_high/warning"}));
  ASSERT_EQ(hook_.sent.size(), 2u);
  ASSERT_EQ(hook_.sent[1].alerts.size(), 1u);
  EXPECT_EQ(hook_.sent[1].alerts[0].severity, Severity::kCritical);

  // 88 °C: past the critical's clear threshold (87) it holds; at 86 it resolves.
  Play(e.get(), 88, 10);
  EXPECT_EQ(Firing(e.get()).size(), 2u);
  Play(e.get(), 70, 10);
  EXPECT_TRUE(e->Active().empty());
  ASSERT_EQ(hook_.sent.size(), 3u);
  for (const Alert& a : hook_.sent[2].alerts) EXPECT_EQ(a.state, AlertState::kResolved);
  auto history = e->History(10);
  ASSERT_TRUE(history.ok());
  EXPECT_EQ(history->size(), 2u);
}

// Diagnosis attaches to a firing alert without a change to anything else:
// a hot GPU whose NVML reports a thermal clock slowdown is throttled by heat.
TEST_F(AlertEngineTest, AFiringAlertCarriesItsDiagnosis) {
  diagnose::Diagnoser diagnoser({query_, nullptr});
  AlertEngineSources s;
  s.query = query_;
  s.env = &env_;
  s.diagnoser = &diagnoser;
  auto created = AlertEngine::Create(s, Options());
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  auto e = std::move(created).value();
  for (int i = 0; i < 64; ++i) {
    env_.now += 1000;
    Temperature(91);
    wire::MetricBatch b;
    b.series.push_back({{{"__name__", "vigil_gpu_clock_event_reason_active"},
                         {"gpu", "0"},
                         {"node", "n1"},
                         {"reason", "hw_thermal_slowdown"}},
                        {{env_.now, 1}}});
    ASSERT_TRUE(db_->Append(b).ok());
    e->EvaluateOnce();
  }
  ASSERT_FALSE(hook_.sent.empty());
  const Alert& a = hook_.sent[0].alerts.at(0);
  auto j = nlohmann::json::parse(a.diagnosis);
  EXPECT_EQ(j["causes"][0]["id"], "thermal_throttle") << a.diagnosis;
  EXPECT_NE(j["summary"].get<std::string>().find("heat"), std::string::npos) << a.diagnosis;
  // The record the API and `vigil alerts --json` show holds the same.
  bool found = false;
  for (const Alert& active : e->Active()) {
    if (active.id == a.id) found = active.diagnosis == a.diagnosis;
  }
  EXPECT_TRUE(found);
}

TEST_F(AlertEngineTest, RestartWhileFiringDoesNotNotifyAgain) {
  {
    auto e = NewEngine();
    Play(e.get(), 95, 40);
    ASSERT_EQ(hook_.sent.size(), 1u);
  }
  auto e = NewEngine();
  EXPECT_EQ(Firing(e.get()).size(), 1u);  // restored
  Play(e.get(), 95, 30);
  EXPECT_EQ(hook_.sent.size(), 1u);
  Play(e.get(), 95, 40);  // the warning fires now, muted by the critical: still quiet
  EXPECT_EQ(hook_.sent.size(), 1u);
}

TEST_F(AlertEngineTest, AFailedDeliveryIsRetried) {
  auto e = NewEngine();
  hook_.fail = true;
  Play(e.get(), 95, 33);
  size_t tries = hook_.sent.size();
  EXPECT_GE(tries, 1u);
  hook_.fail = false;
  Play(e.get(), 95, 3);
  EXPECT_EQ(hook_.sent.size(), tries + 1);
  Play(e.get(), 95, 10);
  EXPECT_EQ(hook_.sent.size(), tries + 1);  // delivered: quiet until something changes
}

// The inbox: one item when the alert fires, one when it resolves, none for
// repeats; what the channel's cap held back lands there as held_back.
TEST_F(AlertEngineTest, EveryAlertLandsInTheInboxAndWhatACapHeldBackToo) {
  auto e = NewEngine();
  hook_.capped = true;
  Play(e.get(), 95, 36);  // critical after 30 s, then group_wait
  auto items = e->InboxItems({});
  ASSERT_TRUE(items.ok()) << items.status().ToString();
  std::vector<std::string> kinds;
  for (const InboxItem& i : *items) {
    kinds.push_back(i.kind + "/" + SeverityName(i.alert.severity));
  }
  EXPECT_EQ(kinds, (std::vector<std::string>{"held_back/critical", "firing/critical"}));
  EXPECT_EQ((*items)[0].note, "hook: capped: 10 messages today");
  EXPECT_EQ(hook_.sent.size(), 1u);  // capped: never retried
  EXPECT_EQ(e->InboxCountsFor("")->unread, 2);
  Play(e.get(), 60, 5);
  items = e->InboxItems({});
  kinds.clear();
  for (const InboxItem& i : *items) kinds.push_back(i.kind);
  // The resolution, and its message to the capped channel held back too.
  EXPECT_EQ(kinds, (std::vector<std::string>{"held_back", "resolved", "held_back", "firing"}));
  // A restart hands nothing out again.
  e.reset();
  e = NewEngine();
  Play(e.get(), 60, 5);
  EXPECT_EQ(e->InboxItems({})->size(), 4u);
}

// A channel that keeps refusing raises notification_channel_failing after
// its minute, through the other channel only (and the inbox); it resolves
// once the channel takes its messages again.
TEST_F(AlertEngineTest, AFailingChannelIsAnAlertOfItsOwnThroughTheOthers) {
  Recorder other;
  AlertEngineOptions o = Options();
  o.dispatch.channels = {"hook", "other"};
  o.dispatch.group_interval_ms = DispatchOptions{}.group_interval_ms;  // the default, 30 s
  o.channels = {{"hook", &hook_}, {"other", &other}};
  o.dispatch.routes = {
      {.match = {{"alertname", "gpu_temperature_high"}}, .channels = {"hook"}},
      {.match = {{"alertname", "notification_channel_failing"}}, .channels = {"hook", "other"}}};
  auto e = Open(std::move(o));
  hook_.fail = true;
  Play(e.get(), 95, 100);  // the GPU's alert fires at ~31 s; the hook refuses it from then on
  auto failing = [&](const std::vector<Notification>& sent) {
    std::vector<std::string> states;
    for (const Notification& n : sent) {
      for (const Alert& a : n.alerts) {
        if (a.rule == "notification_channel_failing") {
          EXPECT_EQ(LabelOf(a, "channel"), "hook");
          EXPECT_NE(a.summary_en.find("Notification channel hook is failing: 1 notifications"),
                    std::string::npos)
              << a.summary_en;
          EXPECT_NE(a.summary_en.find("receiver down"), std::string::npos) << a.summary_en;
          states.push_back(AlertStateName(a.state));
        }
      }
    }
    return states;
  };
  EXPECT_EQ(failing(other.sent), (std::vector<std::string>{"firing"}));
  EXPECT_TRUE(failing(hook_.sent).empty()) << "never through the failing channel itself";
  hook_.fail = false;
  Play(e.get(), 95, 45);  // its retry is taken; the resolution waits for group_interval
  EXPECT_EQ(failing(other.sent), (std::vector<std::string>{"firing", "resolved"}));
}

// Groups waiting for a person's channel at once go as one message: two
// GPUs' groups that fire together, and what a rate limit held back; each
// entry is delivered in the log.
TEST_F(AlertEngineTest, GroupsWaitingForAPersonsChannelGoAsOneMessage) {
  MergingRecorder im;
  AlertEngineOptions o = Options();
  o.dispatch.channels = {"im"};
  o.dispatch.group_by = {"node", "gpu"};  // one group per GPU
  o.channels = {{"im", &im}};
  auto e = Open(std::move(o));
  auto play = [&](double celsius, int seconds) {
    for (int i = 0; i < seconds; ++i) {
      env_.now += 1000;
      Temperature(celsius, 0);
      Temperature(celsius, 1);
      e->EvaluateOnce();
    }
  };
  play(95, 34);  // both GPUs' criticals fire in one evaluation: two groups, one message
  ASSERT_EQ(im.sent.size(), 1u);
  std::set<std::string> gpus;
  for (const Alert& a : im.sent[0].alerts) gpus.insert(std::string(LabelOf(a, "gpu")));
  EXPECT_EQ(gpus, (std::set<std::string>{"0", "1"}));
  EXPECT_EQ(im.sent[0].group_labels, (wire::Labels{{"node", "n1"}}));  // what the groups share
  auto counts = e->DeliveryCounts();
  ASSERT_TRUE(counts.ok());
  EXPECT_EQ(counts->counts[DeliveryState::kDelivered], 2);

  // Held back by a rate limit while both cool: the two resolutions wait,
  // then go as one message when it lets them through.
  im.fail = true;
  play(60, 10);
  EXPECT_EQ(im.sent.size(), 1u);
  im.fail = false;
  play(60, 3);
  ASSERT_EQ(im.sent.size(), 2u);
  size_t resolved = 0;
  for (const Alert& a : im.sent[1].alerts) resolved += a.state == AlertState::kResolved;
  EXPECT_EQ(resolved, 2u);
  EXPECT_EQ(e->DeliveryCounts()->counts[DeliveryState::kDelivered], 4);
}

// Durable delivery: what a refusing channel did not take is in the delivery
// log, and a restarted engine sends it once when the channel takes it.
TEST_F(AlertEngineTest, APendingDeliveryIsResumedAfterARestartAndSentOnce) {
  hook_.fail = true;
  {
    auto e = NewEngine();
    Play(e.get(), 95, 35);
    ASSERT_GE(hook_.sent.size(), 1u);
    auto pending = e->Deliveries({DeliveryState::kPending, "", 10});
    ASSERT_TRUE(pending.ok());
    ASSERT_EQ(pending->size(), 1u);
    EXPECT_GE((*pending)[0].attempts, 1);
    EXPECT_NE((*pending)[0].last_answer.find("receiver down"), std::string::npos);
    auto counts = e->DeliveryCounts();
    ASSERT_TRUE(counts.ok());
    EXPECT_TRUE(counts->channels["hook"].failing);
  }
  hook_.fail = false;
  hook_.sent.clear();
  auto e = NewEngine();
  Play(e.get(), 95, 3);
  ASSERT_EQ(hook_.sent.size(), 1u);
  EXPECT_EQ(hook_.sent[0].alerts.at(0).severity, Severity::kCritical);
  Play(e.get(), 95, 30);
  EXPECT_EQ(hook_.sent.size(), 1u);  // delivered: never again
  auto counts = e->DeliveryCounts();
  ASSERT_TRUE(counts.ok());
  EXPECT_EQ(counts->counts[DeliveryState::kDelivered], 1);
  EXPECT_EQ(counts->counts[DeliveryState::kPending], 0);
  EXPECT_FALSE(counts->channels["hook"].failing);
}

// While the channel refuses, the group's news piles up as one entry, not one
// per group_interval: when it takes messages again it gets the group as it
// is now, once.
TEST_F(AlertEngineTest, AGroupsNewerNewsSupersedesWhatTheChannelHasNotTaken) {
  auto e = NewEngine();
  hook_.fail = true;
  Play(e.get(), 86, 64);  // the warning fires, and is refused
  ASSERT_GE(hook_.sent.size(), 1u);
  Play(e.get(), 91, 40);  // critical; the warning is muted by it
  auto all = e->Deliveries({});
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].state, DeliveryState::kPending);
  EXPECT_EQ((*all)[1].state, DeliveryState::kSuperseded);
  hook_.fail = false;
  hook_.sent.clear();
  Play(e.get(), 91, 10);
  ASSERT_EQ(hook_.sent.size(), 1u);
  ASSERT_EQ(hook_.sent[0].alerts.size(), 1u);
  EXPECT_EQ(hook_.sent[0].alerts[0].severity, Severity::kCritical);
}

TEST_F(AlertEngineTest, RulesReportTheirHealth) {
  auto e = NewEngine();
  Play(e.get(), 70, 1);
  bool seen = false;
  for (const RuleStatus& r : e->Rules()) {
    if (r.rule.source != RuleSource::kQuery || !r.rule.enabled) continue;
    EXPECT_EQ(r.health, "ok") << r.rule.id << ": " << r.last_error;
    EXPECT_EQ(r.last_eval_ms, env_.now);
    seen = true;
  }
  EXPECT_TRUE(seen);
}

TEST_F(AlertEngineTest, BadConfigurationIsRefusedByName) {
  AlertEngineOptions o;
  o.dispatch.channels = {"nope"};
  AlertEngineSources s;
  s.query = query_;
  auto e = AlertEngine::Create(s, o);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("nope"), std::string::npos);
}

TEST_F(AlertEngineTest, ASilenceMutesUntilItIsExpiredAndSurvivesARestart) {
  std::string id;
  {
    auto e = NewEngine();
    Silence s;
    s.matchers = {{"node", MatchOp::kEqual, "n1"},
                  {"alertname", MatchOp::kEqual, "gpu_temperature_high"}};
    s.ends_at_ms = env_.now + 3'600'000;
    s.created_by = "test";
    s.comment = "maintenance";
    auto added = e->AddSilence(s);
    ASSERT_TRUE(added.ok()) << added.status().ToString();
    id = *added;
    Play(e.get(), 95, 40);  // the critical fires after 30 s
    EXPECT_EQ(Firing(e.get()), (std::vector<std::string>{"gpu_temperature_high/critical"}));
    EXPECT_TRUE(hook_.sent.empty());
    std::set<std::string> inhibited, silenced;
    std::vector<Alert> active = e->Active(&inhibited, &silenced);
    ASSERT_FALSE(active.empty());
    for (const Alert& a : active) EXPECT_EQ(silenced.count(a.id), 1u) << a.rule;
  }
  auto e = NewEngine();  // restarted: the silence still holds
  std::vector<Silence> kept = e->Silences();
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(kept[0].id, id);
  EXPECT_EQ(kept[0].comment, "maintenance");
  Play(e.get(), 95, 5);
  EXPECT_TRUE(hook_.sent.empty());

  auto expired = e->ExpireSilence(id);
  ASSERT_TRUE(expired.ok()) << expired.status().ToString();
  EXPECT_EQ(StateAt(*expired, env_.now), SilenceState::kExpired);
  Play(e.get(), 95, 3);  // still firing: announced now, after group_wait
  ASSERT_EQ(hook_.sent.size(), 1u);
  EXPECT_EQ(hook_.sent[0].alerts.at(0).severity, Severity::kCritical);
  std::set<std::string> inhibited, silenced;
  e->Active(&inhibited, &silenced);
  EXPECT_TRUE(silenced.empty());

  EXPECT_EQ(e->ExpireSilence("0000000000000000").status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(e->ExpireSilence(id).ok());  // again: it stays expired
  EXPECT_EQ(e->Silences()[0].ends_at_ms, expired->ends_at_ms);
  Silence past;
  past.matchers = {{"node", MatchOp::kEqual, "n1"}};
  past.ends_at_ms = env_.now - 1;
  EXPECT_FALSE(e->AddSilence(past).ok());
}

TEST_F(AlertEngineTest, ExpiredSilencesAreKeptAWeek) {
  auto e = NewEngine();
  Silence s;
  s.matchers = {{"node", MatchOp::kEqual, "n9"}};
  s.ends_at_ms = env_.now + 1000;
  ASSERT_TRUE(e->AddSilence(s).ok());
  env_.now += 7 * 86'400'000LL;
  e->EvaluateOnce();
  EXPECT_EQ(e->Silences().size(), 1u);
  env_.now += 2 * 60'000;
  e->EvaluateOnce();
  EXPECT_TRUE(e->Silences().empty());
  EXPECT_TRUE(NewEngine()->Silences().empty());  // pruned from the store too
}

TEST_F(AlertEngineTest, QuietHoursForAnUnknownChannelAreRefused) {
  AlertEngineOptions o;
  o.dispatch.quiet_hours["nope"] = QuietHours{};
  AlertEngineSources s;
  s.query = query_;
  auto e = AlertEngine::Create(s, o);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("nope"), std::string::npos);
}

// Live reload (the UI's settings): an edited channel takes over at once; a
// channel added later hears of what fires now, once, while the one that
// already announced it is not told again; a set that would leave a name
// without its channel is refused and the old set goes on.
TEST_F(AlertEngineTest, ReplacedChannelsTakeOverWithoutARestart) {
  auto e = NewEngine();
  Play(e.get(), 91, 64);  // warning, then critical
  ASSERT_FALSE(hook_.sent.empty());
  const size_t announced = hook_.sent.size();

  Recorder edited, lark;
  ASSERT_TRUE(e->ReplaceChannels({{"hook", &edited}}, {"hook"}, {}, {}).ok());
  Play(e.get(), 91, 5);
  EXPECT_EQ(hook_.sent.size(), announced);  // nothing new: nothing sent
  Play(e.get(), 70, 40);                    // cools down: the resolution
  EXPECT_EQ(hook_.sent.size(), announced);
  ASSERT_FALSE(edited.sent.empty());
  EXPECT_EQ(edited.sent.back().alerts.at(0).state, AlertState::kResolved);

  Play(e.get(), 91, 64);  // fires again
  const size_t before = edited.sent.size();
  ASSERT_GT(before, 0u);
  ASSERT_TRUE(
      e->ReplaceChannels({{"hook", &edited}, {"lark", &lark}}, {"hook", "lark"}, {}, {}).ok());
  Play(e.get(), 91, 3);  // lark's group_wait
  ASSERT_EQ(lark.sent.size(), 1u);
  EXPECT_EQ(lark.sent[0].receiver, "lark");
  EXPECT_EQ(lark.sent[0].alerts.at(0).state, AlertState::kFiring);
  EXPECT_EQ(edited.sent.size(), before);  // already told: not again

  Status bad = e->ReplaceChannels({{"hook", &edited}}, {"hook", "lark"}, {}, {});
  EXPECT_EQ(bad.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.message().find("lark"), std::string::npos);
  Play(e.get(), 70, 40);
  EXPECT_EQ(lark.sent.size(), 2u);  // the old set still delivers: lark's resolution
}

// A route that names a channel the new set lacks: refused, nothing changes.
TEST_F(AlertEngineTest, ReplacingChannelsKeepsEveryRoutedOne) {
  auto e = NewEngine({}, {Route{{{"severity", "critical"}}, {"hook"}}});
  Recorder other;
  Status st = e->ReplaceChannels({{"other", &other}}, {"other"}, {}, {});
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("\"hook\""), std::string::npos);
  Play(e.get(), 96, 34);  // critical after 30 s, then group_wait
  EXPECT_FALSE(hook_.sent.empty());
  EXPECT_TRUE(other.sent.empty());
}

// Live reload of routes and recipients: a team added with a route to it
// hears of what fires now, once, through its channel, while the routed
// channel that already announced it is not told again; the inbox files the
// next items for the team; a set naming an unknown channel, recipient or
// lead is refused and the old routing goes on.
TEST_F(AlertEngineTest, ReplacedRoutingTakesOverWithoutARestart) {
  Recorder pager;
  AlertEngineOptions o = Options();
  o.dispatch.channels = {"hook", "pager"};
  o.channels["pager"] = &pager;
  const Route critical{{{"severity", "critical"}}, {"hook"}, {}};
  o.dispatch.routes = {critical};
  auto e = Open(std::move(o));
  Play(e.get(), 96, 34);  // critical after 30 s, then group_wait
  const size_t announced = hook_.sent.size();
  ASSERT_GT(announced, 0u);
  EXPECT_TRUE(pager.sent.empty());  // no route names it

  Recipient ops{.name = "ops", .team = true, .channels = {"pager"}};
  const Route to_ops{{{"severity", "critical"}}, {}, {"ops"}};
  EXPECT_EQ(e->ReplaceRouting({critical, Route{{}, {"nope"}, {}}}, {ops}).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(e->ReplaceRouting({critical, Route{{}, {}, {"nobody"}}}, {ops}).code(),
            StatusCode::kInvalidArgument);
  Recipient led = ops;
  led.lead = "alice";
  EXPECT_EQ(e->ReplaceRouting({critical}, {led}).code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(e->Recipients().empty());

  ASSERT_TRUE(e->ReplaceRouting({critical, to_ops}, {ops}).ok());
  ASSERT_TRUE(e->ReplaceRouting({critical, to_ops}, {ops}).ok());  // the same: nothing changes
  ASSERT_EQ(e->Recipients().size(), 1u);
  Play(e.get(), 96, 3);  // the pager's group_wait
  ASSERT_EQ(pager.sent.size(), 1u);
  EXPECT_EQ(pager.sent[0].receiver, "pager");
  EXPECT_EQ(pager.sent[0].alerts.at(0).state, AlertState::kFiring);
  EXPECT_EQ(hook_.sent.size(), announced);  // already told: not again

  Play(e.get(), 70, 40);  // the resolution reaches both
  EXPECT_EQ(pager.sent.size(), 2u);
  EXPECT_GT(hook_.sent.size(), announced);
  auto items = e->InboxItems({});
  ASSERT_TRUE(items.ok());
  ASSERT_EQ(items->size(), 2u);  // newest first: the resolution for ops
  EXPECT_EQ(items->at(0).recipients, std::vector<std::string>{"ops"});
  EXPECT_TRUE(items->at(1).recipients.empty());
}

}  // namespace
}  // namespace vigil::alert
