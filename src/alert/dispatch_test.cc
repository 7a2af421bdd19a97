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

}  // namespace
}  // namespace vigil::alert
