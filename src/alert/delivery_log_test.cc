// The delivery log on a real alerts.db: write before send, the backoff
// schedule, max age, restart, supersession, and the per-channel summary.
#include "alert/delivery_log.h"

#include <gtest/gtest.h>

#include "alert/alert_store.h"
#include "alert/tracker.h"
#include "core/temp_dir.h"

namespace vigil::alert {
namespace {

Alert Hot(const std::string& gpu, AlertState state) {
  Alert a;
  a.rule = "gpu_temperature_high";
  a.severity = Severity::kCritical;
  a.state = state;
  a.labels = AlertLabels(a.rule, a.severity, {{"gpu", gpu}, {"node", "n1"}});
  a.id = Fingerprint(a.labels);
  a.active_at_ms = 1000;
  a.fired_at_ms = 2000;
  a.resolved_at_ms = state == AlertState::kResolved ? 9000 : 0;
  a.summary_en = "GPU " + gpu + " hot";
  return a;
}

Notification Group(std::vector<Alert> alerts, const std::string& receiver = "hook") {
  Notification n;
  n.receiver = receiver;
  n.group_key = receiver + ":{node=\"n1\"}";
  n.group_labels = {{"node", "n1"}};
  n.alerts = std::move(alerts);
  n.external_url = "http://127.0.0.1:9300";
  return n;
}

class DeliveryLogTest : public ::testing::Test {
 protected:
  void Open() {
    log_.reset();
    store_.reset();
    AlertStoreOptions so;
    so.path = tmp_.path() + "/alerts.db";
    store_ = std::move(AlertStore::Open(so)).value();
    auto log = DeliveryLog::Open(store_->db(), options_);
    ASSERT_TRUE(log.ok()) << log.status().ToString();
    log_ = std::move(log).value();
  }
  void SetUp() override { Open(); }

  std::vector<DeliveryEntry> Due(int64_t now) {
    auto r = log_->Due(now, 100);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : std::vector<DeliveryEntry>{};
  }
  DeliveryEntry Only() {
    auto r = log_->List({});
    EXPECT_TRUE(r.ok());
    EXPECT_EQ(r->size(), 1u);
    return r->empty() ? DeliveryEntry{} : r->front();
  }

  TempDir tmp_;
  DeliveryLogOptions options_;
  std::unique_ptr<AlertStore> store_;
  std::unique_ptr<DeliveryLog> log_;
};

TEST_F(DeliveryLogTest, AnEntryIsWrittenPendingAndDueAtOnceWithItsPayload) {
  auto id = log_->Add(Group({Hot("0", AlertState::kFiring)}), 10'000);
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  std::vector<DeliveryEntry> due = Due(10'000);
  ASSERT_EQ(due.size(), 1u);
  const DeliveryEntry& e = due[0];
  EXPECT_EQ(e.id, *id);
  EXPECT_EQ(e.state, DeliveryState::kPending);
  EXPECT_EQ(e.attempts, 0);
  EXPECT_EQ(e.created_ms, 10'000);
  EXPECT_EQ(e.receiver, "hook");
  EXPECT_EQ(e.alert_ids, std::vector<std::string>{Hot("0", AlertState::kFiring).id});
  // Enough to send it again, exactly as it was handed out.
  EXPECT_EQ(e.notification.group_key, "hook:{node=\"n1\"}");
  ASSERT_EQ(e.notification.alerts.size(), 1u);
  EXPECT_EQ(e.notification.alerts[0], Hot("0", AlertState::kFiring));
  EXPECT_EQ(e.notification.external_url, "http://127.0.0.1:9300");
}

TEST_F(DeliveryLogTest, BackoffDoublesWithJitterUpToItsCap) {
  int64_t prev_base = 0;
  for (int64_t attempt = 1; attempt <= 20; ++attempt) {
    const int64_t base = std::min<int64_t>(1000LL << std::min<int64_t>(attempt - 1, 20), 300'000);
    const int64_t b = log_->Backoff(7, attempt);
    EXPECT_GE(b, base * 8 / 10) << attempt;
    EXPECT_LE(b, std::min<int64_t>(base * 12 / 10, 300'000)) << attempt;
    EXPECT_GE(base, prev_base);
    prev_base = base;
  }
  // The same entry and attempt wait the same; different entries spread.
  EXPECT_EQ(log_->Backoff(7, 3), log_->Backoff(7, 3));
  std::set<int64_t> spread;
  for (int64_t id = 1; id <= 20; ++id) spread.insert(log_->Backoff(id, 3));
  EXPECT_GT(spread.size(), 10u);
}

TEST_F(DeliveryLogTest, AFailedAttemptWaitsItsBackoffThenAnotherIsDue) {
  int64_t id = *log_->Add(Group({Hot("0", AlertState::kFiring)}), 0);
  ASSERT_TRUE(log_->Claim(id, 0).ok());
  ASSERT_TRUE(log_->Finish(id, Unavailable("HTTP 500: down"), 10).ok());
  DeliveryEntry e = Only();
  EXPECT_EQ(e.state, DeliveryState::kPending);
  EXPECT_EQ(e.attempts, 1);
  EXPECT_EQ(e.next_attempt_ms, log_->Backoff(id, 1));
  EXPECT_NE(e.last_answer.find("HTTP 500: down"), std::string::npos);
  EXPECT_TRUE(Due(e.next_attempt_ms - 1).empty());
  EXPECT_EQ(Due(e.next_attempt_ms).size(), 1u);
  EXPECT_EQ(*log_->NextAttemptMs(), e.next_attempt_ms);
}

TEST_F(DeliveryLogTest, PastItsMaxAgeARefusedEntryFailsWithTheAnswer) {
  int64_t id = *log_->Add(Group({Hot("0", AlertState::kFiring)}), 0);
  ASSERT_TRUE(log_->Claim(id, options_.max_age_ms - 1).ok());
  ASSERT_TRUE(log_->Finish(id, Unavailable("refused"), options_.max_age_ms - 1).ok());
  EXPECT_EQ(Only().state, DeliveryState::kPending);
  ASSERT_TRUE(log_->Claim(id, options_.max_age_ms).ok());
  ASSERT_TRUE(log_->Finish(id, Unavailable("still refused"), options_.max_age_ms).ok());
  DeliveryEntry e = Only();
  EXPECT_EQ(e.state, DeliveryState::kFailed);
  EXPECT_NE(e.last_answer.find("still refused"), std::string::npos);
  EXPECT_TRUE(Due(INT64_MAX / 2).empty());
}

TEST_F(DeliveryLogTest, ADeliveredEntryIsNeverDueAgainNorAcrossARestart) {
  int64_t id = *log_->Add(Group({Hot("0", AlertState::kFiring)}), 0);
  ASSERT_TRUE(log_->Claim(id, 0).ok());
  ASSERT_TRUE(log_->Finish(id, Status::Ok(), 5).ok());
  EXPECT_TRUE(Due(INT64_MAX / 2).empty());
  // A late second outcome (it cannot happen, but) does not reopen it.
  ASSERT_TRUE(log_->Finish(id, Unavailable("late"), 6).ok());
  Open();
  EXPECT_TRUE(Due(INT64_MAX / 2).empty());
  EXPECT_EQ(Only().state, DeliveryState::kDelivered);
  EXPECT_EQ(Only().attempts, 1);
}

TEST_F(DeliveryLogTest, ARestartResumesPendingEntriesAndAClaimedOneOnce) {
  int64_t waiting = *log_->Add(Group({Hot("0", AlertState::kFiring)}, "a"), 0);
  int64_t in_flight = *log_->Add(Group({Hot("1", AlertState::kFiring)}, "b"), 0);
  // Claimed, then the process died before its outcome was known.
  ASSERT_TRUE(log_->Claim(in_flight, 0).ok());
  Open();
  std::vector<DeliveryEntry> due = Due(0);
  ASSERT_EQ(due.size(), 1u);
  EXPECT_EQ(due[0].id, waiting);
  // The claimed one comes back after its backoff: one more send, not a loop.
  due = Due(log_->Backoff(in_flight, 1));
  ASSERT_EQ(due.size(), 2u);
  EXPECT_EQ(due[1].id, in_flight);
  EXPECT_EQ(due[1].attempts, 1);
}

TEST_F(DeliveryLogTest, AnAnswerKeepsNoSecretOfAUrl) {
  int64_t id = *log_->Add(Group({Hot("0", AlertState::kFiring)}), 0);
  ASSERT_TRUE(log_->Claim(id, 0).ok());
  ASSERT_TRUE(log_->Finish(id,
                           Unavailable("webhook https://hooks.example/services/T/B/SECRET?key=k1 "
                                       "answered HTTP 500; http://user:pw@relay:8080/x: refused"),
                           1)
                  .ok());
  const std::string answer = Only().last_answer;
  EXPECT_EQ(answer,
            "unavailable: webhook https://hooks.example/... answered HTTP 500; "
            "http://relay:8080/...: refused");
}

TEST_F(DeliveryLogTest, ACapHoldsAnEntryBackForGood) {
  int64_t id = *log_->Add(Group({Hot("0", AlertState::kFiring)}), 0);
  ASSERT_TRUE(log_->Claim(id, 0).ok());
  ASSERT_TRUE(log_->Finish(id, ResourceExhausted("10 messages today: the daily cap"), 1).ok());
  EXPECT_EQ(Only().state, DeliveryState::kCapped);
  EXPECT_TRUE(Due(INT64_MAX / 2).empty());
}

TEST_F(DeliveryLogTest, ANewerEntrySupersedesTheGroupsWaitingOnesButNotTheOneBeingSent) {
  Alert a0 = Hot("0", AlertState::kFiring), a1 = Hot("1", AlertState::kFiring);
  int64_t first = *log_->Add(Group({a0}), 0);
  ASSERT_TRUE(log_->Claim(first, 0).ok());  // being sent
  int64_t second = *log_->Add(Group({a0, a1, Hot("2", AlertState::kResolved)}), 1, {first});
  // Behind the one being sent: not due while it is pending.
  EXPECT_TRUE(Due(INT64_MAX / 2).empty() || Due(INT64_MAX / 2)[0].id == first);
  int64_t third = *log_->Add(Group({a1}), 2, {first});
  auto all = *log_->List({});
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].id, third);
  EXPECT_EQ(all[1].state, DeliveryState::kSuperseded);
  EXPECT_EQ(all[2].state, DeliveryState::kPending);
  // The third carries the resolution only the second had.
  ASSERT_EQ(all[0].notification.alerts.size(), 2u);
  EXPECT_EQ(all[0].notification.alerts[1].state, AlertState::kResolved);
  ASSERT_TRUE(log_->Finish(first, Status::Ok(), 3).ok());
  std::vector<DeliveryEntry> due = Due(3);
  ASSERT_EQ(due.size(), 1u);
  EXPECT_EQ(due[0].id, third);
  (void)second;
}

TEST_F(DeliveryLogTest, TheSummaryCountsStatesAndShowsAFailingChannel) {
  int64_t ok = *log_->Add(Group({Hot("0", AlertState::kFiring)}, "good"), 0);
  ASSERT_TRUE(log_->Claim(ok, 0).ok());
  ASSERT_TRUE(log_->Finish(ok, Status::Ok(), 1).ok());
  int64_t bad = *log_->Add(Group({Hot("0", AlertState::kFiring)}, "bad"), 0);
  ASSERT_TRUE(log_->Claim(bad, 0).ok());
  ASSERT_TRUE(log_->Finish(bad, Unavailable(std::string(2000, 'x')), 2).ok());
  auto s = log_->Summary();
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->counts[DeliveryState::kDelivered], 1);
  EXPECT_EQ(s->counts[DeliveryState::kPending], 1);
  EXPECT_FALSE(s->channels["good"].failing);
  EXPECT_TRUE(s->channels["bad"].failing);
  EXPECT_EQ(s->channels["bad"].last_error_ms, 2);
  EXPECT_LE(s->channels["bad"].last_error.size(), DeliveryLog::kMaxAnswerBytes);
  // Filters: by state and by channel.
  DeliveryFilter f;
  f.state = DeliveryState::kPending;
  EXPECT_EQ(log_->List(f)->size(), 1u);
  f = {};
  f.receiver = "good";
  ASSERT_EQ(log_->List(f)->size(), 1u);
  EXPECT_EQ(log_->List(f)->front().id, ok);
  // Back to delivering: no longer failing.
  ASSERT_TRUE(log_->Claim(bad, 10'000).ok());
  ASSERT_TRUE(log_->Finish(bad, Status::Ok(), 10'001).ok());
  EXPECT_FALSE(log_->Summary()->channels["bad"].failing);
}

// Entries of several groups as one message: every alert once, in order,
// under the labels the groups share; each entry stays its own in the log.
TEST_F(DeliveryLogTest, WaitingEntriesOfOneChannelMergeIntoOneMessage) {
  Notification a = Group({Hot("0", AlertState::kFiring)});
  a.group_key = "im:{gpu=\"0\",node=\"n1\"}";
  a.group_labels = {{"gpu", "0"}, {"node", "n1"}};
  Notification b = Group({Hot("1", AlertState::kFiring), Hot("0", AlertState::kFiring)});
  b.group_key = "im:{gpu=\"1\",node=\"n1\"}";
  b.group_labels = {{"gpu", "1"}, {"node", "n1"}};
  Notification other = Group({Hot("2", AlertState::kFiring)}, "hook");
  ASSERT_TRUE(log_->Add(a, 0).ok());
  ASSERT_TRUE(log_->Add(b, 0).ok());
  ASSERT_TRUE(log_->Add(other, 0).ok());
  auto waiting = log_->Waiting("hook", 10);
  ASSERT_TRUE(waiting.ok());
  ASSERT_EQ(waiting->size(), 3u);  // Group() names every receiver "hook"
  std::vector<DeliveryEntry> two(waiting->begin(), waiting->begin() + 2);
  Notification m = MergeNotifications(two);
  ASSERT_EQ(m.alerts.size(), 2u);
  EXPECT_EQ(LabelOf(m.alerts[0], "gpu"), "0");
  EXPECT_EQ(LabelOf(m.alerts[1], "gpu"), "1");
  EXPECT_EQ(m.group_labels, (wire::Labels{{"node", "n1"}}));
  EXPECT_EQ(m.receiver, "hook");
  // Not due yet (a backoff) still waits: Waiting hands it out, Due does not.
  ASSERT_TRUE(log_->Claim(two[0].id, 0).ok());
  EXPECT_EQ(Due(0).size(), 2u);
  EXPECT_EQ(log_->Waiting("hook", 10)->size(), 3u);
  EXPECT_EQ(log_->Waiting("nobody", 10)->size(), 0u);
}

}  // namespace
}  // namespace vigil::alert
