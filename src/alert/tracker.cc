#include "alert/tracker.h"

#include <algorithm>
#include <cstdio>
#include <set>

namespace vigil::alert {

const char* SeverityName(Severity severity) {
  switch (severity) {
    case Severity::kInfo:
      return "info";
    case Severity::kWarning:
      return "warning";
    case Severity::kCritical:
      return "critical";
  }
  return "warning";
}

std::optional<Severity> ParseSeverity(std::string_view name) {
  for (Severity s : {Severity::kInfo, Severity::kWarning, Severity::kCritical}) {
    if (name == SeverityName(s)) return s;
  }
  return std::nullopt;
}

const char* AlertStateName(AlertState state) {
  switch (state) {
    case AlertState::kPending:
      return "pending";
    case AlertState::kFiring:
      return "firing";
    case AlertState::kResolved:
      return "resolved";
  }
  return "pending";
}

std::string Fingerprint(const wire::Labels& sorted_labels) {
  constexpr uint64_t kOffset = 14695981039346656037ull;
  constexpr uint64_t kPrime = 1099511628211ull;
  uint64_t h = kOffset;
  auto add = [&h](std::string_view s) {
    for (unsigned char c : s) {
      h ^= c;
      h *= kPrime;
    }
    h ^= 0xff;
    h *= kPrime;
  };
  for (const wire::Label& l : sorted_labels) {
    add(l.name);
    add(l.value);
  }
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

std::string_view LabelOf(const Alert& alert, std::string_view name) {
  return wire::LabelValue(alert.labels, name);
}

wire::Labels AlertLabels(const std::string& rule, Severity severity, wire::Labels labels) {
  std::erase_if(labels, [](const wire::Label& l) {
    return l.name == "alertname" || l.name == "severity" || l.name == wire::kMetricNameLabel;
  });
  labels.push_back({"alertname", rule});
  labels.push_back({"severity", SeverityName(severity)});
  std::sort(labels.begin(), labels.end(),
            [](const wire::Label& a, const wire::Label& b) { return a.name < b.name; });
  return labels;
}

std::vector<Alert> AlertTracker::Apply(const LevelKey& level, const std::vector<Sample>& samples,
                                       int64_t now_ms) {
  std::vector<Alert> changed;
  std::set<std::string> seen;
  for (const Sample& s : samples) {
    wire::Labels labels = AlertLabels(level.rule, level.severity, s.labels);
    std::string id = Fingerprint(labels);
    auto it = active_.find(id);
    // Not yet an alert: only the firing threshold starts one.
    if (it == active_.end()) {
      if (!s.fire) continue;
      Alert a;
      a.id = id;
      a.rule = level.rule;
      a.severity = level.severity;
      a.labels = std::move(labels);
      a.active_at_ms = now_ms;
      it = active_.emplace(id, std::move(a)).first;
    } else if (!s.hold) {
      continue;  // stopped holding: handled with the unseen ones below
    }
    seen.insert(id);
    Alert& a = it->second;
    a.value = s.value;
    a.threshold = s.threshold;
    a.last_eval_ms = now_ms;
    a.keep_firing_since_ms = 0;
    a.summary_en = s.summary_en;
    a.summary_zh = s.summary_zh;
    a.description_en = s.description_en;
    a.description_zh = s.description_zh;
    a.owner = s.owner;
    a.steps_en = s.steps_en;
    a.steps_zh = s.steps_zh;
    bool was_new = a.active_at_ms == now_ms && a.state == AlertState::kPending;
    const int64_t for_ms = s.for_ms >= 0 ? s.for_ms : level.for_ms;
    if (a.state == AlertState::kPending && now_ms - a.active_at_ms >= for_ms) {
      a.state = AlertState::kFiring;
      a.fired_at_ms = now_ms;
      changed.push_back(a);
    } else if (was_new) {
      changed.push_back(a);
    }
  }
  // This level's alerts that no longer hold.
  for (auto it = active_.begin(); it != active_.end();) {
    Alert& a = it->second;
    if (a.rule != level.rule || a.severity != level.severity || seen.count(it->first) != 0) {
      ++it;
      continue;
    }
    a.last_eval_ms = now_ms;
    if (a.state == AlertState::kFiring && level.keep_firing_for_ms > 0) {
      if (a.keep_firing_since_ms == 0) a.keep_firing_since_ms = now_ms;
      if (now_ms - a.keep_firing_since_ms < level.keep_firing_for_ms) {
        ++it;
        continue;
      }
    }
    if (a.state == AlertState::kFiring) {
      a.state = AlertState::kResolved;
      a.resolved_at_ms = now_ms;
      changed.push_back(a);
    }
    it = active_.erase(it);  // a pending alert that stopped just goes
  }
  return changed;
}

void AlertTracker::Restore(std::vector<Alert> alerts) {
  for (Alert& a : alerts) {
    if (a.state == AlertState::kResolved) continue;
    std::string id = a.id;
    active_[id] = std::move(a);
  }
}

void AlertTracker::Forget(const std::string& rule) {
  std::erase_if(active_, [&](const auto& kv) { return kv.second.rule == rule; });
}

bool AlertTracker::SetLogExcerpt(const std::string& id, std::vector<std::string> lines) {
  auto it = active_.find(id);
  if (it == active_.end()) return false;
  it->second.log_excerpt = std::move(lines);
  return true;
}

bool AlertTracker::SetDiagnosis(const std::string& id, std::string diagnosis) {
  auto it = active_.find(id);
  if (it == active_.end()) return false;
  it->second.diagnosis = std::move(diagnosis);
  return true;
}

}  // namespace vigil::alert
