// Recipients and the severity policy (recipients.h), and the dispatcher
// routing alerts to them (dispatch.h).
#include "alert/recipients.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "alert/dispatch.h"
#include "alert/tracker.h"

namespace vigil::alert {
namespace {

Alert Make(const std::string& rule, Severity sev, wire::Labels series, std::string owner = "") {
  Alert a;
  a.rule = rule;
  a.severity = sev;
  a.state = AlertState::kFiring;
  a.labels = AlertLabels(rule, sev, std::move(series));
  a.id = Fingerprint(a.labels);
  a.active_at_ms = a.fired_at_ms = 1000;
  a.owner = std::move(owner);
  return a;
}

// A lab: alice and bob (bob leads "vision"), carol in no team, each with
// their own channels; the team has its group bot.
std::vector<Recipient> Lab() {
  Recipient alice{.name = "alice",
                  .users = {"alice", "ali"},
                  .team_name = "vision",
                  .channels = {"alice-feishu", "alice-sms", "alice-mail"}};
  Recipient bob{.name = "bob", .team_name = "vision", .channels = {"bob-ding", "bob-sms"}};
  Recipient carol{.name = "carol", .channels = {"carol-mail"}};
  Recipient team{.name = "vision", .team = true, .lead = "bob", .channels = {"vision-bot"}};
  return {alice, bob, carol, team};
}

std::map<std::string, ChannelClass> Classes() {
  return {{"alice-feishu", ChannelClass::kChat}, {"alice-sms", ChannelClass::kSms},
          {"alice-mail", ChannelClass::kEmail},  {"bob-ding", ChannelClass::kChat},
          {"bob-sms", ChannelClass::kSms},       {"carol-mail", ChannelClass::kEmail},
          {"vision-bot", ChannelClass::kChat},   {"hook", ChannelClass::kEverything},
          {"ops-sms", ChannelClass::kSms}};
}

using Names = std::vector<std::string>;

Names Sorted(Names v) {
  std::sort(v.begin(), v.end());
  return v;
}

TEST(RecipientsTest, AJobsAlertGoesToItsOwnerTheirTeamAndOnCriticalTheLead) {
  auto lab = Lab();
  // A Unix user listed under a person is theirs.
  Alert warn = Make("job_stalled", Severity::kWarning, {{"job", "t"}}, "ali");
  EXPECT_EQ(RecipientsOf(warn, lab), (Names{"alice", "vision"}));
  Alert crash = Make("job_crashed", Severity::kCritical, {{"job", "t"}}, "alice");
  EXPECT_EQ(RecipientsOf(crash, lab), (Names{"alice", "vision", "bob"}));
  // A person is also found by their own name; carol has no team.
  Alert carols = Make("job_crashed", Severity::kCritical, {{"job", "c"}}, "carol");
  EXPECT_EQ(RecipientsOf(carols, lab), (Names{"carol"}));
  // The run summary is the owner's alone.
  Alert done = Make("job_finished", Severity::kInfo, {{"job", "t"}}, "alice");
  EXPECT_EQ(RecipientsOf(done, lab), (Names{"alice"}));
}

TEST(RecipientsTest, WhatNobodyOwnsGoesToTheTeams) {
  auto lab = Lab();
  Alert disk = Make("node_disk_full", Severity::kWarning, {{"node", "n1"}});
  EXPECT_EQ(RecipientsOf(disk, lab), (Names{"vision"}));
  Alert hot = Make("gpu_temperature_high", Severity::kCritical, {{"gpu", "0"}}, "mallory");
  EXPECT_EQ(RecipientsOf(hot, lab), (Names{"vision", "bob"}));  // an unknown owner: nobody's
}

TEST(RecipientsTest, SmsTakesCriticalOnlyChatAndEmailTakeTheRunSummaryButNoOtherInfo) {
  Alert crit = Make("job_crashed", Severity::kCritical, {});
  Alert warn = Make("job_stalled", Severity::kWarning, {});
  Alert done = Make("job_finished", Severity::kInfo, {});
  Alert info = Make("gpu_ecc_errors", Severity::kInfo, {});
  EXPECT_TRUE(ChannelTakes(ChannelClass::kSms, crit));
  EXPECT_FALSE(ChannelTakes(ChannelClass::kSms, warn));
  EXPECT_FALSE(ChannelTakes(ChannelClass::kSms, done));
  EXPECT_TRUE(ChannelTakes(ChannelClass::kChat, warn));
  EXPECT_TRUE(ChannelTakes(ChannelClass::kEmail, done));
  EXPECT_FALSE(ChannelTakes(ChannelClass::kChat, info));
  EXPECT_TRUE(ChannelTakes(ChannelClass::kEverything, info));
  EXPECT_TRUE(ChannelTakes(ChannelClass::kInbox, info));
}

TEST(RecipientsTest, ChannelsForAnAlertFollowThePolicyPerRecipient) {
  auto lab = Lab();
  Alert crash = Make("job_crashed", Severity::kCritical, {{"job", "t"}}, "alice");
  EXPECT_EQ(
      Sorted(RecipientChannelsFor(crash, lab, Classes())),
      Sorted({"alice-feishu", "alice-sms", "alice-mail", "vision-bot", "bob-ding", "bob-sms"}));
  Alert warn = Make("job_stalled", Severity::kWarning, {{"job", "t"}}, "alice");
  EXPECT_EQ(Sorted(RecipientChannelsFor(warn, lab, Classes())),
            Sorted({"alice-feishu", "alice-mail", "vision-bot"}));
  Alert done = Make("job_finished", Severity::kInfo, {{"job", "t"}}, "alice");
  EXPECT_EQ(Sorted(RecipientChannelsFor(done, lab, Classes())),
            Sorted({"alice-feishu", "alice-mail"}));
}

TEST(RecipientsTest, ValidationNamesWhatIsWrong) {
  Names channels = {"alice-feishu", "alice-sms",  "alice-mail", "bob-ding",
                    "bob-sms",      "carol-mail", "vision-bot"};
  EXPECT_TRUE(ValidateRecipients(Lab(), channels).ok());
  auto with = [&](auto change) {
    auto lab = Lab();
    change(&lab);
    return ValidateRecipients(lab, channels).message();
  };
  EXPECT_NE(with([](auto* l) { (*l)[0].channels.push_back("nope"); }).find("nope"),
            std::string::npos);
  EXPECT_NE(with([](auto* l) { (*l)[0].team_name = "ghosts"; }).find("ghosts"), std::string::npos);
  EXPECT_NE(with([](auto* l) { (*l)[3].lead = "vision"; }).find("no person"), std::string::npos);
  EXPECT_NE(with([](auto* l) { (*l)[1].name = "alice"; }).find("two recipients"),
            std::string::npos);
  EXPECT_NE(with([](auto* l) { (*l)[3].users = {"x"}; }).find("a team has no"), std::string::npos);
}

// The dispatcher: recipients' channels take only their recipients' alerts;
// a channel no recipient names takes every alert (no routes) by its class;
// a route naming a channel sends it whatever the severity; the inbox takes all.
TEST(RecipientsTest, TheDispatcherRoutesToRecipientsChannelsAndTheInbox) {
  DispatchOptions o;
  o.channels = {"alice-feishu", "alice-sms",  "alice-mail", "bob-ding", "bob-sms",
                "carol-mail",   "vision-bot", "hook",       "ops-sms"};
  o.recipients = Lab();
  o.channel_classes = Classes();
  o.inbox = true;
  o.group_wait_ms = 0;
  Dispatcher d(o);
  Alert carols = Make("job_stalled", Severity::kWarning, {{"job", "c"}, {"node", "n1"}}, "carol");
  Alert disk = Make("node_disk_full", Severity::kWarning, {{"node", "n1"}});
  d.Update({{carols.id, carols}, {disk.id, disk}}, {}, 1000);
  std::map<std::string, Names> got;  // receiver -> alert rules
  for (const Notification& n : d.Due(1000)) {
    for (const Alert& a : n.alerts) got[n.receiver].push_back(a.rule);
  }
  EXPECT_EQ(got["carol-mail"], (Names{"job_stalled"}));
  EXPECT_EQ(got["vision-bot"], (Names{"node_disk_full"}));  // carol is in no team
  EXPECT_EQ(Sorted(got["hook"]), Sorted({"job_stalled", "node_disk_full"}));
  EXPECT_EQ(Sorted(got[kInboxReceiver]), Sorted({"job_stalled", "node_disk_full"}));
  EXPECT_EQ(got.count("ops-sms"), 0u);  // a warning: not for SMS
  EXPECT_EQ(got.count("alice-feishu"), 0u);
  EXPECT_EQ(got.size(), 4u);

  // A route naming ops-sms sends it a warning; one naming a recipient
  // applies the policy to that recipient's channels.
  o.routes = {{.match = {{"alertname", "node_disk_full"}}, .channels = {"ops-sms"}},
              {.match = {{"alertname", "node_disk_full"}}, .recipients = {"alice"}}};
  Dispatcher routed(o);
  routed.Update({{disk.id, disk}}, {}, 1000);
  Names receivers;
  for (const Notification& n : routed.Due(1000)) receivers.push_back(n.receiver);
  EXPECT_EQ(Sorted(receivers),
            Sorted({"ops-sms", "alice-feishu", "alice-mail", "vision-bot", kInboxReceiver}));
}

}  // namespace
}  // namespace vigil::alert
