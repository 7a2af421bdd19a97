// The in-app inbox on a real alerts.db: one item per firing and per
// resolution whatever the repeats, per-recipient views and read marks,
// held-back items, filters, retention, and a restart.
#include "alert/inbox.h"

#include <gtest/gtest.h>

#include "alert/alert_store.h"
#include "alert/dispatch.h"
#include "alert/tracker.h"
#include "core/temp_dir.h"

namespace vigil::alert {
namespace {

Alert Make(const std::string& rule, Severity sev, const std::string& gpu, std::string owner,
           AlertState state = AlertState::kFiring) {
  Alert a;
  a.rule = rule;
  a.severity = sev;
  a.state = state;
  a.labels = AlertLabels(rule, sev, {{"gpu", gpu}, {"node", "n1"}});
  a.id = Fingerprint(a.labels);
  a.active_at_ms = 1000;
  a.fired_at_ms = 2000;
  a.resolved_at_ms = state == AlertState::kResolved ? 9000 : 0;
  a.owner = std::move(owner);
  a.summary_en = rule + " on GPU " + gpu;
  return a;
}

Notification To(const std::string& receiver, std::vector<Alert> alerts) {
  Notification n;
  n.receiver = receiver;
  n.group_key = receiver + ":{node=\"n1\"}";
  n.alerts = std::move(alerts);
  return n;
}

std::vector<Recipient> People() {
  return {{.name = "alice", .users = {"alice"}, .team_name = "lab"},
          {.name = "bob", .users = {"bob"}, .team_name = "lab"},
          {.name = "lab", .team = true, .lead = "bob"}};
}

class InboxTest : public ::testing::Test {
 protected:
  void Open(std::vector<Recipient> recipients = People()) {
    inbox_.reset();
    store_.reset();
    AlertStoreOptions so;
    so.path = tmp_.path() + "/alerts.db";
    store_ = std::move(AlertStore::Open(so)).value();
    auto inbox = Inbox::Open(store_->db(), options_, std::move(recipients));
    ASSERT_TRUE(inbox.ok()) << inbox.status().ToString();
    inbox_ = std::move(inbox).value();
  }
  void SetUp() override { Open(); }
  std::vector<InboxItem> List(InboxFilter f = {}) {
    auto r = inbox_->List(f);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : std::vector<InboxItem>{};
  }
  int Add(const Notification& n, int64_t now = 10'000) {
    auto r = inbox_->Add(n, now);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : -1;
  }

  TempDir tmp_;
  InboxOptions options_;
  std::unique_ptr<AlertStore> store_;
  std::unique_ptr<Inbox> inbox_;
};

TEST_F(InboxTest, AnAlertIsOneItemWhenItFiresAndOneWhenItResolvesWhateverTheRepeats) {
  Alert hot = Make("gpu_temperature_high", Severity::kWarning, "0", "alice");
  EXPECT_EQ(Add(To(kInboxReceiver, {hot})), 1);
  EXPECT_EQ(Add(To(kInboxReceiver, {hot})), 0);  // a repeat (or a restart's re-send)
  Open();
  EXPECT_EQ(Add(To(kInboxReceiver, {hot})), 0);  // across a restart too
  Alert cooled =
      Make("gpu_temperature_high", Severity::kWarning, "0", "alice", AlertState::kResolved);
  EXPECT_EQ(Add(To(kInboxReceiver, {cooled})), 1);
  auto items = List();
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[0].kind, "resolved");  // newest first
  EXPECT_EQ(items[0].at_ms, 9000);
  EXPECT_EQ(items[1].kind, "firing");
  EXPECT_EQ(items[1].at_ms, 2000);
  EXPECT_EQ(items[1].alert.summary_en, "gpu_temperature_high on GPU 0");
  EXPECT_EQ(items[1].alert.owner, "alice");
  EXPECT_EQ(items[1].recipients, (std::vector<std::string>{"alice", "lab"}));
}

TEST_F(InboxTest, EachRecipientSeesTheirItemsAndEveryonesWithTheirOwnReadMarks) {
  Alert alices = Make("job_stalled", Severity::kWarning, "0", "alice");
  Alert bobs = Make("gpu_memory_near_full", Severity::kCritical, "1", "bob");
  ASSERT_EQ(Add(To(kInboxReceiver, {alices, bobs})), 2);
  ASSERT_EQ(List({.recipient = "alice"}).size(), 1u);
  // bob leads the lab, but a lead hears of criticals only: alice's warning
  // is hers and the lab's.
  ASSERT_EQ(List({.recipient = "bob"}).size(), 1u);
  EXPECT_EQ(List({.recipient = "lab"}).size(), 2u);
  EXPECT_EQ(List().size(), 2u);  // no recipient chosen: everything

  auto alice_items = List({.recipient = "alice"});
  auto marked = inbox_->Mark("alice", {alice_items[0].id}, true);
  ASSERT_TRUE(marked.ok());
  EXPECT_EQ(*marked, 1);
  EXPECT_TRUE(List({.recipient = "alice"})[0].read);
  EXPECT_FALSE(List({.recipient = "lab"})[1].read);  // read by alice, not for the lab
  auto counts = inbox_->Counts("lab");
  ASSERT_TRUE(counts.ok());
  EXPECT_EQ(counts->total, 2);
  EXPECT_EQ(counts->unread, 2);
  EXPECT_EQ(counts->unread_by_severity[Severity::kCritical], 1);
  EXPECT_EQ(*inbox_->Mark("lab", {}, true), 2);  // all of the lab's view
  EXPECT_EQ(inbox_->Counts("lab")->unread, 0);
  EXPECT_EQ(*inbox_->Mark("lab", {}, false), 2);
  EXPECT_EQ(List({.recipient = "lab", .unread_only = true}).size(), 2u);
  // Marking another view's item does nothing.
  EXPECT_EQ(*inbox_->Mark("alice", {List({.recipient = "bob"})[0].id}, true), 0);
}

TEST_F(InboxTest, WithoutRecipientsEveryItemIsEveryones) {
  Open({});
  ASSERT_EQ(Add(To(kInboxReceiver, {Make("job_stalled", Severity::kWarning, "0", "alice")})), 1);
  EXPECT_EQ(List({.recipient = "anyone"}).size(), 1u);
  EXPECT_TRUE(List()[0].recipients.empty());
}

TEST_F(InboxTest, WhatACapHeldBackLandsAsAHeldBackItem) {
  Alert crash = Make("job_crashed", Severity::kCritical, "0", "alice");
  ASSERT_TRUE(
      inbox_->AddHeldBack(To("alice-sms", {crash}), "capped: 10 messages today", 5000).ok());
  auto items = List({.recipient = "alice"});
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].kind, "held_back");
  EXPECT_EQ(items[0].note, "alice-sms: capped: 10 messages today");
}

TEST_F(InboxTest, FiltersBySeverityAndPagesOlderItems) {
  std::vector<Alert> alerts;
  for (int i = 0; i < 5; ++i) {
    alerts.push_back(Make("gpu_temperature_high",
                          i % 2 == 0 ? Severity::kCritical : Severity::kWarning, std::to_string(i),
                          ""));
  }
  ASSERT_EQ(Add(To(kInboxReceiver, alerts)), 5);
  EXPECT_EQ(List({.severity = Severity::kCritical}).size(), 3u);
  auto first = List({.limit = 2});
  ASSERT_EQ(first.size(), 2u);
  auto next = List({.before_id = first[1].id, .limit = 10});
  ASSERT_EQ(next.size(), 3u);
  EXPECT_LT(next[0].id, first[1].id);
}

TEST_F(InboxTest, OldItemsAndItemsBeyondTheBoundGo) {
  options_.max_items = 3;
  options_.retention_ms = 100'000;
  Open();
  std::vector<Alert> alerts;
  for (int i = 0; i < 5; ++i)
    alerts.push_back(Make("gpu_temperature_high", Severity::kWarning, std::to_string(i), ""));
  ASSERT_EQ(Add(To(kInboxReceiver, alerts)), 5);
  EXPECT_EQ(List().size(), 3u);
  // Fired at 2000: past retention at 200'000 once anything new arrives.
  ASSERT_EQ(Add(To(kInboxReceiver, {Make("node_disk_full", Severity::kWarning, "9", "")}), 200'000),
            1);
  EXPECT_EQ(List().size(), 0u);  // the new one fired at 2000 too: as old
}

}  // namespace
}  // namespace vigil::alert
