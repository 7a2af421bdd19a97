// From alerts to notifications, without storms (docs/alerts.md "Grouping,
// inhibition, routing"): Alertmanager's model, on the node.
//
// - Inhibition: some firing alerts mute others — a silent node mutes every
//   other alert of that node; a lost GPU or an unresponsive driver mutes that
//   GPU's (the driver's: the node's GPUs') metric alerts; a crashed or
//   finished job mutes its GPUs' under-use; a critical mutes the warning of
//   the same rule on the same series. Muted alerts stay in the list, marked.
//   An alert that resolves while a firing alert mutes it resolves without a
//   word too: a lost GPU's temperature series end with the GPU, and "the
//   temperature fault cleared" beside "GPU lost" would be false news
//   (Alertmanager mutes resolved targets the same way).
// - Silences (silence.h): a person mutes the alerts a silence matches, the
//   same way. What a muted alert had announced is forgotten at once, without
//   a message (nor, later, its resolution: Alertmanager's behaviour), so
//   when it is no longer muted and still fires, its group announces it as a
//   new alert.
// - Routing: each alert goes to the channels of every route whose `match`
//   labels it has (no routes: to every channel no recipient owns), and to
//   the channels of the recipients it is for (recipients.h), each channel
//   taking what its kind takes by severity (SMS: critical only); and, when
//   the inbox is on, to the in-app inbox (kInboxReceiver) — every alert.
// - Grouping: per channel, alerts with the same values of `group_by`
//   (default node and job) form one group, notified together: first
//   `group_wait` after the group appears, then when its firing set changes
//   (an alert joins, or resolves: "resolved" notices) at most every
//   `group_interval`, and again every `repeat_interval` while unchanged.
//
// - Quiet hours (quiet_hours.h), per channel: within them a group's
//   warning and info news (a new alert, a resolution, a repeat) is held and
//   goes when they end; critical news goes at once (with the group's other
//   alerts the channel already knows of).
//
// Defaults differ from Alertmanager's (30 s, 5 m, 4 h) where its are too slow
// for one node: group_wait 1 s and group_interval 30 s, so an alert reaches
// its channel within ~2 s of firing (the latency goal), while alerts of one
// evaluation (eight GPUs overheating together) still go as one message.
//
// Thread safety: none; the engine serialises calls (its own mutex).
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "alert/notification.h"
#include "alert/quiet_hours.h"
#include "alert/recipients.h"

namespace vigil::alert {

// The in-app inbox's receiver name (no configured channel may take it).
inline constexpr char kInboxReceiver[] = "inbox";

struct Route {
  std::map<std::string, std::string> match;  // label -> value, all must hold
  std::vector<std::string> channels;         // whatever the severity
  std::vector<std::string> recipients;       // their channels, by the severity policy
  bool operator==(const Route&) const = default;
};

struct DispatchOptions {
  std::vector<std::string> group_by = {"node", "job"};
  int64_t group_wait_ms = 1000;
  int64_t group_interval_ms = 30'000;
  int64_t repeat_interval_ms = 4 * 3600'000;
  // After Sent(delivered = false): the engine reports that only when it
  // could not write the notification to the delivery log, which owns the
  // retries of sends.
  int64_t retry_ms = 2000;
  std::vector<std::string> channels;  // every configured channel's name
  std::vector<Route> routes;
  // People and teams (recipients.h), and each channel's class for the
  // severity policy (absent: kEverything). A channel a recipient names
  // takes only its recipients' alerts and explicit routes.
  std::vector<Recipient> recipients;
  std::map<std::string, ChannelClass> channel_classes;
  // Every alert also goes to kInboxReceiver (the engine keeps the inbox).
  bool inbox = false;
  std::string external_url;
  // Per channel name: when its non-critical notifications wait.
  std::map<std::string, QuietHours> quiet_hours;
};

// What a group last told its channel, kept across restarts so that what
// already fired is not notified again.
struct GroupRecord {
  std::string key;
  int64_t last_sent_ms = 0;
  std::set<std::string> sent_firing;  // alert ids
};

// What the firing alerts of `active` mute (see above).
class Inhibition {
 public:
  explicit Inhibition(const std::map<std::string, Alert>& active);
  // Whether `alert` (active or just resolved) is muted.
  bool Mutes(const Alert& alert) const;

 private:
  std::set<std::string> down_nodes_, lost_gpus_, dead_drivers_, ended_runs_;
  std::set<std::pair<std::string, wire::Labels>> critical_series_;
};

// The ids of `active` alerts that others mute.
std::set<std::string> Inhibited(const std::map<std::string, Alert>& active);

class Dispatcher {
 public:
  explicit Dispatcher(DispatchOptions options);

  // Restores groups saved before a restart.
  void Restore(const std::vector<GroupRecord>& groups);

  // The alerts as they are after an evaluation at `now_ms`: every active
  // one, those that resolved at it, and the ids of the active ones a
  // silence mutes now.
  void Update(const std::map<std::string, Alert>& active, const std::vector<Alert>& resolved,
              int64_t now_ms, const std::set<std::string>& silenced = {});

  // The notifications due at `now_ms`. Report each one's outcome with Sent;
  // until then its group is not handed out again.
  std::vector<Notification> Due(int64_t now_ms);
  // Records the outcome of a notification Due returned; returns the group's
  // record to save when it was delivered.
  std::optional<GroupRecord> Sent(const Notification& n, bool delivered, int64_t now_ms);

  // When the next group becomes due if nothing changes (its group_wait,
  // group_interval, repeat_interval or retry ends), or INT64_MAX.
  int64_t NextDueMs() const;

  // Group keys that no longer exist (to delete from the saved records).
  std::vector<std::string> TakeDroppedGroups();
  // Records changed without a notification (a muted alert forgotten), to save.
  std::vector<GroupRecord> TakeChangedGroups();

  const DispatchOptions& options() const { return options_; }

 private:
  struct Group {
    std::string receiver;
    wire::Labels labels;
    std::map<std::string, Alert> firing;    // by id, not muted
    std::map<std::string, Alert> resolved;  // to announce once
    int64_t created_ms = 0;
    int64_t last_sent_ms = 0;  // 0: never
    int64_t retry_at_ms = 0;
    bool in_flight = false;  // handed out by Due, its outcome not yet known
    std::set<std::string> sent_firing;
  };
  std::vector<std::string> ChannelsFor(const Alert& alert) const;
  std::string GroupKey(const std::string& receiver, const wire::Labels& group_labels) const;
  wire::Labels GroupLabels(const Alert& alert) const;

  DispatchOptions options_;
  std::set<std::string> owned_channels_;  // named by a recipient
  std::map<std::string, Group> groups_;
  std::map<std::string, GroupRecord> restored_;
  std::vector<std::string> dropped_;
  std::map<std::string, GroupRecord> changed_;
};

}  // namespace vigil::alert
