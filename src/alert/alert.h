// The alert engine's vocabulary: an alert's severity and state, and the
// alert record every later stage reads — the in-app list, the webhook, the
// notification channels (notify/) and diagnosis (diagnose/), which fills
// `diagnosis` without changing anything else (docs/alerts.md "Alert record").
//
// One alert is one rule level (a rule's warning or its critical) on one label
// set: `id` is the Alertmanager fingerprint of its labels, which hold
// `alertname` (the rule id) and `severity`, so warning and critical of one
// GPU are two alerts, as two Prometheus rules would make them.
//
// Thread safety: plain values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wire/metric_batch.h"

namespace vigil::alert {

enum class Severity { kInfo, kWarning, kCritical };
const char* SeverityName(Severity severity);  // "info", "warning", "critical"
std::optional<Severity> ParseSeverity(std::string_view name);

// Pending: the condition holds, not yet for the rule's `for`. Firing: it has
// held that long (or is held by `keep_firing_for`). Resolved: it stopped;
// kept as history.
enum class AlertState { kPending, kFiring, kResolved };
const char* AlertStateName(AlertState state);  // "pending", "firing", "resolved"

struct Alert {
  std::string id;    // Fingerprint(labels): 16 lowercase hex digits
  std::string rule;  // the rule (preset) id, also labels' `alertname`
  Severity severity = Severity::kWarning;
  AlertState state = AlertState::kPending;
  // Sorted by name: alertname, severity, and what the rule's series or job
  // give (node, gpu, job, run, mountpoint, ...).
  wire::Labels labels;
  double value = 0;          // the rule's value at the newest evaluation that held
  double threshold = 0;      // the level's firing threshold for this series
  int64_t active_at_ms = 0;  // when the condition first held (Prometheus' activeAt)
  int64_t fired_at_ms = 0;   // when it became firing, 0 while pending
  int64_t resolved_at_ms = 0;
  int64_t last_eval_ms = 0;
  // When the condition stopped holding while `keep_firing_for` keeps it firing.
  int64_t keep_firing_since_ms = 0;
  // Rendered for a person, English and Simplified Chinese.
  std::string summary_en;
  std::string summary_zh;
  // Lines beyond the summary, "" when none: an ended run's summary
  // (run_summary.h) on job_finished and job_crashed.
  std::string description_en;
  std::string description_zh;
  // What to do (the rule's Rule::steps_en/zh), "" when it says nothing.
  std::string steps_en;
  std::string steps_zh;
  // The Unix user running the job the alert is about ("" when none): whose
  // alert it is (recipients.h). Not a label: a GPU's alert keeps its
  // identity when another user's job takes the GPU.
  std::string owner;
  // The lines of the job's log that tell what happened (diagnose/
  // log_excerpt.h: a failure's deciding line and the lines before it, else
  // the job's last lines), taken when the alert fires; empty for an alert
  // about no job, or a job without logs. Printable, bounded, untrusted.
  std::vector<std::string> log_excerpt;
  // A JSON object; "{}" until diagnosis fills it (the diagnosis issue).
  std::string diagnosis = "{}";
  bool operator==(const Alert&) const = default;
};

// Alertmanager's fingerprint of a label set (model.LabelSet.Fingerprint):
// FNV-1a 64 over the labels sorted by name, each name and value followed by
// the byte 0xff, printed as 16 hex digits.
std::string Fingerprint(const wire::Labels& sorted_labels);

// `labels[name]`, "" when absent.
std::string_view LabelOf(const Alert& alert, std::string_view name);

}  // namespace vigil::alert
