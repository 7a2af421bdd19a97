#include "alert/dispatch.h"

#include <gtest/gtest.h>

#include "alert/tracker.h"

namespace vigil::alert {
namespace {

Alert Firing(const std::string& rule, Severity sev, wire::Labels series, int64_t at = 1000) {
  Alert a;
  a.rule = rule;
  a.severity = sev;
  a.state = AlertState::kFiring;
  a.labels = AlertLabels(rule, sev, std::move(series));
  a.id = Fingerprint(a.labels);
  a.active_at_ms = a.fired_at_ms = at;
  return a;
}

std::map<std::string, Alert> Active(std::initializer_list<Alert> alerts) {
  std::map<std::string, Alert> m;
  for (const Alert& a : alerts) m[a.id] = a;
  return m;
}

DispatchOptions Options() {
  DispatchOptions o;
  o.channels = {"hook"};
  o.group_wait_ms = 1000;
  o.group_interval_ms = 10'000;
  o.repeat_interval_ms = 60'000;
  return o;
}

TEST(InhibitTest, NodeDownGpuLostCriticalAndEndedJobs) {
  Alert down = Firing("node_down", Severity::kCritical, {{"node", "n1"}});
  Alert hot = Firing("gpu_temperature_high", Severity::kWarning, {{"gpu", "0"}, {"node", "n1"}});
  Alert other_node =
      Firing("gpu_temperature_high", Severity::kWarning, {{"gpu", "0"}, {"node", "n2"}});
  auto m = Inhibited(Active({down, hot, other_node}));
  EXPECT_EQ(m, (std::set<std::string>{hot.id}));

  Alert lost = Firing("gpu_lost", Severity::kCritical, {{"gpu", "1"}, {"node", "n2"}});
  Alert util = Firing("gpu_idle_allocated", Severity::kWarning, {{"gpu", "1"}, {"node", "n2"}});
  Alert xid = Firing("gpu_xid", Severity::kCritical, {{"gpu", "1"}, {"node", "n2"}, {"xid", "79"}});
  m = Inhibited(Active({lost, util, xid}));
  EXPECT_EQ(m, (std::set<std::string>{util.id}));  // the Xid says why: it stays

  Alert warn = Firing("gpu_memory_near_full", Severity::kWarning, {{"gpu", "2"}, {"node", "n1"}});
  Alert crit = Firing("gpu_memory_near_full", Severity::kCritical, {{"gpu", "2"}, {"node", "n1"}});
  m = Inhibited(Active({warn, crit}));
  EXPECT_EQ(m, (std::set<std::string>{warn.id}));

  Alert crashed =
      Firing("job_crashed", Severity::kCritical, {{"job", "t"}, {"node", "n1"}, {"run", "r1"}});
  Alert under = Firing("gpu_underutilized", Severity::kWarning,
                       {{"gpu", "0"}, {"job", "t"}, {"node", "n1"}, {"run", "r1"}});
  m = Inhibited(Active({crashed, under}));
  EXPECT_EQ(m, (std::set<std::string>{under.id}));
}

TEST(DispatchTest, GroupWaitThenOneMessagePerGroupThenRepeat) {
  Dispatcher d(Options());
  Alert a = Firing("gpu_temperature_high", Severity::kWarning, {{"gpu", "0"}, {"node", "n1"}});
  Alert b = Firing("gpu_temperature_high", Severity::kWarning, {{"gpu", "1"}, {"node", "n1"}});
  d.Update(Active({a, b}), {}, 1000);
  EXPECT_TRUE(d.Due(1500).empty());  // group_wait
  auto due = d.Due(2000);
  ASSERT_EQ(due.size(), 1u);
  EXPECT_EQ(due[0].alerts.size(), 2u);  // both GPUs of the node in one message
  EXPECT_EQ(due[0].group_key, "hook:{node=\"n1\"}");
  EXPECT_TRUE(d.Due(2100).empty());  // in flight
  ASSERT_TRUE(d.Sent(due[0], true, 2100));
  d.Update(Active({a, b}), {}, 3000);
  EXPECT_TRUE(d.Due(30'000).empty());  // unchanged: not before repeat_interval
  EXPECT_EQ(d.Due(62'100).size(), 1u);
}

TEST(DispatchTest, ChangesWaitForGroupIntervalAndResolvedIsAnnouncedOnce) {
  Dispatcher d(Options());
  Alert a = Firing("gpu_temperature_high", Severity::kWarning, {{"gpu", "0"}, {"node", "n1"}});
  d.Update(Active({a}), {}, 1000);
  auto due = d.Due(2000);
  ASSERT_EQ(due.size(), 1u);
  d.Sent(due[0], true, 2000);
  Alert resolved = a;
  resolved.state = AlertState::kResolved;
  resolved.resolved_at_ms = 5000;
  d.Update({}, {resolved}, 5000);
  EXPECT_TRUE(d.Due(5000).empty());  // group_interval since the last message
  due = d.Due(12'000);
  ASSERT_EQ(due.size(), 1u);
  ASSERT_EQ(due[0].alerts.size(), 1u);
  EXPECT_EQ(due[0].alerts[0].state, AlertState::kResolved);
  d.Sent(due[0], true, 12'000);
  EXPECT_TRUE(d.Due(100'000).empty());
  EXPECT_EQ(d.TakeDroppedGroups().size(), 1u);
}

// A lost GPU's temperature alert ends with its series: its resolution is
// not news (the GPU's loss is) and is never sent — whether it resolves at
// the evaluation the loss fires at or one before, still waiting to go.
TEST(DispatchTest, AResolutionAMutingAlertExplainsIsNotSent) {
  for (bool same_evaluation : {true, false}) {
    Dispatcher d(Options());
    wire::Labels gpu = {{"gpu", "0"}, {"node", "n1"}};
    Alert hot = Firing("gpu_temperature_high", Severity::kWarning, gpu);
    d.Update(Active({hot}), {}, 1000);
    auto due = d.Due(2000);
    ASSERT_EQ(due.size(), 1u);
    d.Sent(due[0], true, 2000);
    Alert cleared = hot;
    cleared.state = AlertState::kResolved;
    cleared.resolved_at_ms = 20'000;
    Alert lost = Firing("gpu_lost", Severity::kCritical, gpu, 20'000);
    if (same_evaluation) {
      d.Update(Active({lost}), {cleared}, 20'000);
    } else {
      d.Update({}, {cleared}, 19'000);  // waiting for group_interval...
      d.Update(Active({lost}), {}, 20'000);
    }
    due = d.Due(40'000);
    ASSERT_EQ(due.size(), 1u) << same_evaluation;
    ASSERT_EQ(due[0].alerts.size(), 1u) << same_evaluation;
    EXPECT_EQ(due[0].alerts[0].rule, "gpu_lost");
  }
}

TEST(DispatchTest, FailedSendIsRetriedAndNeverAnnouncedTwiceAfterRestart) {
  Dispatcher d(Options());
  Alert a =
      Firing("job_crashed", Severity::kCritical, {{"job", "t"}, {"node", "n1"}, {"run", "r"}});
  d.Update(Active({a}), {}, 1000);
  auto due = d.Due(2000);
  ASSERT_EQ(due.size(), 1u);
  EXPECT_FALSE(d.Sent(due[0], false, 2000));
  EXPECT_TRUE(d.Due(3000).empty());  // retry_ms
  due = d.Due(4000);
  ASSERT_EQ(due.size(), 1u);
  auto record = d.Sent(due[0], true, 4000);
  ASSERT_TRUE(record);

  Dispatcher after(Options());
  after.Restore({*record});
  after.Update(Active({a}), {}, 5000);
  EXPECT_TRUE(after.Due(10'000).empty());
}

TEST(DispatchTest, RoutesBySeverity) {
  DispatchOptions o = Options();
  o.channels = {"hook", "pager"};
  o.routes = {{{{"severity", "critical"}}, {"pager"}}, {{}, {"hook"}}};
  Dispatcher d(o);
  Alert crit =
      Firing("gpu_xid", Severity::kCritical, {{"gpu", "0"}, {"node", "n1"}, {"xid", "79"}});
  Alert warn = Firing("disk_near_full", Severity::kWarning, {{"mountpoint", "/"}, {"node", "n2"}});
  d.Update(Active({crit, warn}), {}, 0);
  auto due = d.Due(1000);
  std::map<std::string, size_t> per_channel;
  for (const auto& n : due) per_channel[n.receiver] += n.alerts.size();
  EXPECT_EQ(per_channel["pager"], 1u);
  EXPECT_EQ(per_channel["hook"], 2u);
}

TEST(DispatchTest, ASilencedAlertIsNotNotifiedUntilTheSilenceEnds) {
  Dispatcher d(Options());
  Alert a =
      Firing("job_crashed", Severity::kCritical, {{"job", "t"}, {"node", "n1"}, {"run", "r"}});
  d.Update(Active({a}), {}, 1000, {a.id});
  EXPECT_TRUE(d.Due(2000).empty());
  EXPECT_TRUE(d.Due(100'000).empty());
  d.Update(Active({a}), {}, 100'000, {a.id});
  EXPECT_TRUE(d.Due(200'000).empty());
  // The silence ends: a new alert for its group, after group_wait.
  d.Update(Active({a}), {}, 300'000);
  EXPECT_TRUE(d.Due(300'500).empty());
  auto due = d.Due(301'000);
  ASSERT_EQ(due.size(), 1u);
  ASSERT_EQ(due[0].alerts.size(), 1u);
  EXPECT_EQ(due[0].alerts[0].id, a.id);
}

TEST(DispatchTest, SilencingAnAnnouncedAlertSaysNothingAndUnsilencingAnnouncesItAgain) {
  Dispatcher d(Options());
  Alert a = Firing("gpu_temperature_high", Severity::kWarning, {{"gpu", "0"}, {"node", "n1"}});
  Alert b = Firing("gpu_temperature_high", Severity::kWarning, {{"gpu", "1"}, {"node", "n1"}});
  d.Update(Active({a, b}), {}, 1000);
  auto due = d.Due(2000);
  ASSERT_EQ(due.size(), 1u);
  d.Sent(due[0], true, 2000);
  // a is silenced: no message about it (not even a reduced one), and its
  // announcement is forgotten, saved so a restart does not bring it back.
  d.Update(Active({a, b}), {}, 3000, {a.id});
  EXPECT_TRUE(d.Due(20'000).empty());
  auto changed = d.TakeChangedGroups();
  ASSERT_EQ(changed.size(), 1u);
  EXPECT_EQ(changed[0].sent_firing, std::set<std::string>{b.id});
  EXPECT_TRUE(d.TakeChangedGroups().empty());
  // Resolving while silenced: nothing either.
  Alert gone = a;
  gone.state = AlertState::kResolved;
  d.Update(Active({b}), {gone}, 21'000, {});
  EXPECT_TRUE(d.Due(40'000).empty());
  // Firing again, unsilenced: announced as new (with b), after group_interval.
  d.Update(Active({a, b}), {}, 41'000);
  due = d.Due(41'000);
  ASSERT_EQ(due.size(), 1u);
  EXPECT_EQ(due[0].alerts.size(), 2u);
}

TEST(DispatchTest, TheOnlyAnnouncedAlertSilencedDropsItsGroupQuietly) {
  Dispatcher d(Options());
  Alert a = Firing("gpu_temperature_high", Severity::kWarning, {{"gpu", "0"}, {"node", "n1"}});
  d.Update(Active({a}), {}, 1000);
  auto due = d.Due(2000);
  ASSERT_EQ(due.size(), 1u);
  d.Sent(due[0], true, 2000);
  d.Update(Active({a}), {}, 3000, {a.id});
  EXPECT_TRUE(d.Due(3000).empty());
  EXPECT_EQ(d.TakeDroppedGroups().size(), 1u);
  d.Update(Active({a}), {}, 4000);  // the silence is expired early
  due = d.Due(5000);
  ASSERT_EQ(due.size(), 1u);
  EXPECT_EQ(due[0].alerts[0].id, a.id);
}

TEST(DispatchTest, ASilencedAlertRestoredFromBeforeARestartIsForgottenToo) {
  Alert a = Firing("gpu_temperature_high", Severity::kWarning, {{"gpu", "0"}, {"node", "n1"}});
  Dispatcher d(Options());
  d.Restore({{"hook:{node=\"n1\"}", 2000, {a.id}}});
  d.Update(Active({a}), {}, 3000, {a.id});
  auto changed = d.TakeChangedGroups();
  ASSERT_EQ(changed.size(), 1u);
  EXPECT_TRUE(changed[0].sent_firing.empty());
  d.Update(Active({a}), {}, 4000);
  EXPECT_TRUE(d.Due(5000).empty());     // group_interval since the restored message
  EXPECT_EQ(d.Due(12'000).size(), 1u);  // then it is announced again
}

// Quiet hours 22:00-08:00 UTC on "hook"; 2026-01-01.
constexpr int64_t kNight = 1'767'225'600'000 + 23 * 3'600'000LL;    // 23:00
constexpr int64_t kMorning = 1'767'225'600'000 + 32 * 3'600'000LL;  // 08:00 next day

DispatchOptions QuietOptions() {
  DispatchOptions o = Options();
  auto q = ParseQuietHours("22:00", "08:00", "UTC");
  EXPECT_TRUE(q.ok());
  o.quiet_hours["hook"] = *q;
  o.repeat_interval_ms = 4 * 3'600'000;
  return o;
}

TEST(QuietHoursDispatchTest, WarningsWaitForTheMorningCriticalsGoAtOnce) {
  Dispatcher d(QuietOptions());
  Alert warn = Firing("disk_near_full", Severity::kWarning, {{"mountpoint", "/"}, {"node", "n1"}});
  Alert info =
      Firing("job_finished", Severity::kInfo, {{"job", "a"}, {"node", "n3"}, {"run", "r"}});
  Alert crit =
      Firing("gpu_xid", Severity::kCritical, {{"gpu", "0"}, {"node", "n2"}, {"xid", "79"}});
  d.Update(Active({warn, info, crit}), {}, kNight);
  auto due = d.Due(kNight + 1000);
  ASSERT_EQ(due.size(), 1u);
  EXPECT_EQ(due[0].alerts.at(0).id, crit.id);
  d.Sent(due[0], true, kNight + 1000);
  int repeats = 0;
  for (int64_t t = kNight + 2000; t < kMorning; t += 600'000) {
    d.Update(Active({warn, info, crit}), {}, t);
    // Held, not dropped; only the critical repeats (every 4 h).
    for (const Notification& n : d.Due(t)) {
      for (const Alert& a : n.alerts) EXPECT_EQ(a.id, crit.id) << t;
      d.Sent(n, true, t);
      ++repeats;
    }
  }
  EXPECT_EQ(repeats, 2);
  d.Update(Active({warn, info, crit}), {}, kMorning);
  due = d.Due(kMorning);
  std::set<std::string> released;
  for (const Notification& n : due) {
    for (const Alert& a : n.alerts) released.insert(a.id);
  }
  EXPECT_EQ(released, (std::set<std::string>{warn.id, info.id}));
}

TEST(QuietHoursDispatchTest, InAMixedGroupOnlyTheCriticalGoesAndAResolutionWaits) {
  Dispatcher d(QuietOptions());
  Alert warn = Firing("gpu_temperature_high", Severity::kWarning, {{"gpu", "0"}, {"node", "n1"}});
  Alert crit = Firing("gpu_memory_near_full", Severity::kCritical, {{"gpu", "1"}, {"node", "n1"}});
  // The warning was announced before the night.
  d.Update(Active({warn}), {}, kNight - 2 * 3'600'000);
  auto due = d.Due(kNight - 2 * 3'600'000 + 1000);
  ASSERT_EQ(due.size(), 1u);
  d.Sent(due[0], true, kNight - 2 * 3'600'000 + 1000);
  // At night the critical joins: it goes with the warning the channel knows of.
  d.Update(Active({warn, crit}), {}, kNight);
  due = d.Due(kNight + 1000);
  ASSERT_EQ(due.size(), 1u);
  EXPECT_EQ(due[0].alerts.size(), 2u);
  d.Sent(due[0], true, kNight + 1000);
  // The warning resolves at night: held.
  Alert gone = warn;
  gone.state = AlertState::kResolved;
  d.Update(Active({crit}), {gone}, kNight + 60'000);
  EXPECT_TRUE(d.Due(kNight + 120'000).empty());
  // A new warning on another GPU: held too, while the critical repeats alone.
  Alert warn2 = Firing("gpu_temperature_high", Severity::kWarning, {{"gpu", "2"}, {"node", "n1"}});
  d.Update(Active({crit, warn2}), {}, kNight + 121'000);
  EXPECT_TRUE(d.Due(kNight + 121'000).empty());
  const int64_t repeat = kNight + 1000 + 4 * 3'600'000;
  d.Update(Active({crit, warn2}), {}, repeat);
  due = d.Due(repeat);
  ASSERT_EQ(due.size(), 1u);
  ASSERT_EQ(due[0].alerts.size(), 1u);
  EXPECT_EQ(due[0].alerts[0].id, crit.id);
  d.Sent(due[0], true, repeat);
  // 08:00: the resolution and the new warning go.
  d.Update(Active({crit, warn2}), {}, kMorning);
  due = d.Due(kMorning);
  ASSERT_EQ(due.size(), 1u);
  std::map<std::string, AlertState> got;
  for (const Alert& a : due[0].alerts) got[a.id] = a.state;
  EXPECT_EQ(got, (std::map<std::string, AlertState>{{crit.id, AlertState::kFiring},
                                                    {warn2.id, AlertState::kFiring},
                                                    {warn.id, AlertState::kResolved}}));
}

TEST(QuietHoursDispatchTest, OnlyTheChannelWithQuietHoursWaits) {
  DispatchOptions o = QuietOptions();
  o.channels = {"hook", "pager"};
  Dispatcher d(o);
  Alert warn = Firing("disk_near_full", Severity::kWarning, {{"mountpoint", "/"}, {"node", "n1"}});
  d.Update(Active({warn}), {}, kNight);
  auto due = d.Due(kNight + 1000);
  ASSERT_EQ(due.size(), 1u);
  EXPECT_EQ(due[0].receiver, "pager");
}

}  // namespace
}  // namespace vigil::alert
