#include "alert/dispatch.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <optional>

namespace vigil::alert {
namespace {

bool IsGpuMetricRule(const std::string& rule) {
  return rule.rfind("gpu_", 0) == 0 && rule != "gpu_lost" && rule != "gpu_driver_unresponsive" &&
         rule != "gpu_xid";
}

// `alert`'s labels without alertname and severity: the series it is on.
wire::Labels SeriesOf(const Alert& alert) {
  wire::Labels out;
  for (const wire::Label& l : alert.labels) {
    if (l.name != "alertname" && l.name != "severity") out.push_back(l);
  }
  return out;
}

}  // namespace

Inhibition::Inhibition(const std::map<std::string, Alert>& active) {
  // The muting facts, from firing alerts only (a pending one proves nothing yet).
  for (const auto& [id, a] : active) {
    if (a.state != AlertState::kFiring) continue;
    std::string node(LabelOf(a, "node"));
    if (a.rule == "node_down") down_nodes_.insert(node);
    if (a.rule == "gpu_lost") lost_gpus_.insert(node + "/" + std::string(LabelOf(a, "gpu")));
    if (a.rule == "gpu_driver_unresponsive") dead_drivers_.insert(node);
    if (a.rule == "job_crashed" || a.rule == "job_finished") {
      ended_runs_.insert(node + "/" + std::string(LabelOf(a, "run")));
    }
    if (a.severity == Severity::kCritical) critical_series_.insert({a.rule, SeriesOf(a)});
  }
}

bool Inhibition::Mutes(const Alert& a) const {
  std::string node(LabelOf(a, "node"));
  std::string gpu = node + "/" + std::string(LabelOf(a, "gpu"));
  return (down_nodes_.count(node) != 0 && a.rule != "node_down") ||
         (IsGpuMetricRule(a.rule) &&
          (lost_gpus_.count(gpu) != 0 || dead_drivers_.count(node) != 0)) ||
         (a.rule == "gpu_underutilized" &&
          ended_runs_.count(node + "/" + std::string(LabelOf(a, "run"))) != 0) ||
         (a.severity == Severity::kWarning && critical_series_.count({a.rule, SeriesOf(a)}) != 0);
}

std::set<std::string> Inhibited(const std::map<std::string, Alert>& active) {
  Inhibition inhibition(active);
  std::set<std::string> muted;
  for (const auto& [id, a] : active) {
    if (inhibition.Mutes(a)) muted.insert(id);
  }
  return muted;
}

Dispatcher::Dispatcher(DispatchOptions options) : options_(std::move(options)) {
  for (const Recipient& r : options_.recipients) {
    owned_channels_.insert(r.channels.begin(), r.channels.end());
  }
}

void Dispatcher::Restore(const std::vector<GroupRecord>& groups) {
  for (const GroupRecord& g : groups) restored_[g.key] = g;
}

std::vector<std::string> Dispatcher::ChannelsFor(const Alert& alert) const {
  std::vector<std::string> out;
  auto add = [&out](const std::string& c) {
    if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
  };
  auto takes = [&](const std::string& c) {
    auto cls = options_.channel_classes.find(c);
    return ChannelTakes(
        cls == options_.channel_classes.end() ? ChannelClass::kEverything : cls->second, alert);
  };
  if (options_.routes.empty()) {
    for (const std::string& c : options_.channels) {
      if (owned_channels_.count(c) == 0 && takes(c)) add(c);
    }
  }
  for (const Route& route : options_.routes) {
    bool match = std::all_of(route.match.begin(), route.match.end(),
                             [&](const auto& kv) { return LabelOf(alert, kv.first) == kv.second; });
    if (!match) continue;
    for (const std::string& c : route.channels) add(c);
    for (const Recipient& r : options_.recipients) {
      if (std::find(route.recipients.begin(), route.recipients.end(), r.name) ==
          route.recipients.end()) {
        continue;
      }
      for (const std::string& c : r.channels) {
        if (takes(c)) add(c);
      }
    }
  }
  for (const std::string& c :
       RecipientChannelsFor(alert, options_.recipients, options_.channel_classes)) {
    add(c);
  }
  if (options_.inbox) add(kInboxReceiver);
  // A failing channel's own alert goes through the others only: it could
  // not deliver it, and it would queue behind what the channel refuses.
  if (alert.rule == "notification_channel_failing") {
    std::erase(out, std::string(LabelOf(alert, "channel")));
  }
  return out;
}

wire::Labels Dispatcher::GroupLabels(const Alert& alert) const {
  wire::Labels labels;
  for (const std::string& name : options_.group_by) {
    std::string_view v = LabelOf(alert, name);
    if (!v.empty()) labels.push_back({name, std::string(v)});
  }
  std::sort(labels.begin(), labels.end(),
            [](const wire::Label& a, const wire::Label& b) { return a.name < b.name; });
  return labels;
}

std::string Dispatcher::GroupKey(const std::string& receiver,
                                 const wire::Labels& group_labels) const {
  // Alertmanager's form: the route's matchers, then the group labels.
  std::string key = receiver + ":{";
  for (size_t i = 0; i < group_labels.size(); ++i) {
    if (i > 0) key += ", ";
    key += group_labels[i].name + "=\"" + group_labels[i].value + "\"";
  }
  return key + "}";
}

void Dispatcher::Update(const std::map<std::string, Alert>& active,
                        const std::vector<Alert>& resolved, int64_t now_ms,
                        const std::set<std::string>& silenced) {
  Inhibition inhibition(active);
  std::set<std::string> muted;
  for (const auto& [id, a] : active) {
    if (inhibition.Mutes(a)) muted.insert(id);
  }
  muted.insert(silenced.begin(), silenced.end());
  // A muted alert's announcement is forgotten without a word: when it is
  // unmuted and still fires, its group announces it again. Saved at once, so
  // a restart does not bring the forgotten announcement back.
  auto forget = [&](const std::string& key, int64_t last_sent_ms, std::set<std::string>* sent) {
    if (std::erase_if(*sent, [&](const std::string& id) { return muted.count(id) != 0; }) > 0) {
      changed_[key] = GroupRecord{key, last_sent_ms, *sent};
    }
  };
  for (auto& [key, g] : groups_) {
    g.firing.clear();
    forget(key, g.last_sent_ms, &g.sent_firing);
    // A resolution not sent yet whose alert is muted by now goes unsaid.
    std::erase_if(g.resolved, [&](const auto& kv) { return inhibition.Mutes(kv.second); });
  }
  for (auto& [key, r] : restored_) forget(key, r.last_sent_ms, &r.sent_firing);
  auto group_of = [&](const std::string& receiver, const Alert& a) -> Group& {
    wire::Labels labels = GroupLabels(a);
    std::string key = GroupKey(receiver, labels);
    auto [it, created] = groups_.try_emplace(key);
    if (created) {
      it->second.receiver = receiver;
      it->second.labels = std::move(labels);
      it->second.created_ms = now_ms;
      if (auto r = restored_.find(key); r != restored_.end()) {
        it->second.last_sent_ms = r->second.last_sent_ms;
        it->second.sent_firing = r->second.sent_firing;
        restored_.erase(r);
      }
    }
    return it->second;
  };
  for (const auto& [id, a] : active) {
    if (a.state != AlertState::kFiring || muted.count(id) != 0) continue;
    for (const std::string& c : ChannelsFor(a)) group_of(c, a).firing[id] = a;
  }
  for (const Alert& a : resolved) {
    const bool mute = inhibition.Mutes(a);
    for (const std::string& c : ChannelsFor(a)) {
      Group& g = group_of(c, a);
      if (mute) {
        // Resolved while muted: its announcement is forgotten, unsaid.
        if (g.sent_firing.erase(a.id) > 0) {
          changed_[GroupKey(c, g.labels)] =
              GroupRecord{GroupKey(c, g.labels), g.last_sent_ms, g.sent_firing};
        }
        continue;
      }
      // Only what was announced as firing is announced as resolved.
      if (g.sent_firing.count(a.id) != 0) g.resolved[a.id] = a;
    }
  }
}

std::vector<Notification> Dispatcher::Due(int64_t now_ms) {
  std::vector<Notification> out;
  for (auto it = groups_.begin(); it != groups_.end();) {
    Group& g = it->second;
    if (g.firing.empty() && g.resolved.empty() && !g.in_flight) {
      // Nothing left to say: what it had sent resolved muted, or never fired.
      dropped_.push_back(it->first);
      it = groups_.erase(it);
      continue;
    }
    // What the group would tell its channel now. Within quiet hours only
    // critical news goes: a non-critical alert the channel does not know of
    // yet, and a non-critical resolution, are held (they stay in the group).
    auto q = options_.quiet_hours.find(g.receiver);
    const bool quiet = q != options_.quiet_hours.end() && InQuietHours(q->second, now_ms);
    std::vector<const Alert*> firing_now, resolved_now;
    std::set<std::string> firing, known = g.sent_firing;
    bool critical = false;
    for (const auto& [id, a] : g.firing) {
      if (quiet && a.severity != Severity::kCritical && g.sent_firing.count(id) == 0) continue;
      firing_now.push_back(&a);
      firing.insert(id);
      critical |= a.severity == Severity::kCritical;
    }
    for (const auto& [id, a] : g.resolved) {
      if (quiet && a.severity != Severity::kCritical) {
        known.erase(id);  // its resolution waits; not a change yet
        continue;
      }
      resolved_now.push_back(&a);
      critical |= a.severity == Severity::kCritical;
    }
    bool changed = firing != known || !resolved_now.empty();
    bool due;
    if (g.in_flight || now_ms < g.retry_at_ms || (quiet && !critical)) {
      due = false;
    } else if (g.last_sent_ms == 0) {
      due = now_ms - g.created_ms >= options_.group_wait_ms;
    } else if (changed) {
      due = now_ms - g.last_sent_ms >= options_.group_interval_ms;
    } else {
      due = now_ms - g.last_sent_ms >= options_.repeat_interval_ms;
    }
    if (due) {
      Notification n;
      n.receiver = g.receiver;
      n.group_key = it->first;
      n.group_labels = g.labels;
      n.external_url = options_.external_url;
      for (const Alert* a : firing_now) n.alerts.push_back(*a);
      for (const Alert* a : resolved_now) n.alerts.push_back(*a);
      out.push_back(std::move(n));
      g.in_flight = true;
    }
    ++it;
  }
  return out;
}

std::optional<GroupRecord> Dispatcher::Sent(const Notification& n, bool delivered, int64_t now_ms) {
  auto it = groups_.find(n.group_key);
  if (it == groups_.end()) return std::nullopt;
  Group& g = it->second;
  g.in_flight = false;
  if (!delivered) {
    g.retry_at_ms = now_ms + options_.retry_ms;
    return std::nullopt;
  }
  g.last_sent_ms = now_ms;
  g.retry_at_ms = 0;
  g.sent_firing.clear();
  for (const Alert& a : n.alerts) {
    if (a.state == AlertState::kFiring) g.sent_firing.insert(a.id);
    if (a.state == AlertState::kResolved) g.resolved.erase(a.id);
  }
  return GroupRecord{n.group_key, g.last_sent_ms, g.sent_firing};
}

int64_t Dispatcher::NextDueMs() const {
  int64_t next = INT64_MAX;
  for (const auto& [key, g] : groups_) {
    if (g.in_flight || (g.firing.empty() && g.resolved.empty())) continue;
    std::set<std::string> firing;
    for (const auto& [id, a] : g.firing) firing.insert(id);
    const bool changed = firing != g.sent_firing || !g.resolved.empty();
    int64_t at = g.last_sent_ms == 0 ? g.created_ms + options_.group_wait_ms
                 : changed           ? g.last_sent_ms + options_.group_interval_ms
                                     : g.last_sent_ms + options_.repeat_interval_ms;
    next = std::min(next, std::max(at, g.retry_at_ms));
  }
  return next;
}

std::vector<std::string> Dispatcher::TakeDroppedGroups() {
  std::vector<std::string> out;
  out.swap(dropped_);
  return out;
}

std::vector<GroupRecord> Dispatcher::TakeChangedGroups() {
  std::vector<GroupRecord> out;
  for (auto& [key, r] : changed_) out.push_back(std::move(r));
  changed_.clear();
  return out;
}

}  // namespace vigil::alert
