// The state machine of alerts, with Prometheus' semantics for `for` and
// `keep_firing_for` plus hysteresis: a level fires when its value crosses
// the firing threshold and, once pending or firing, holds until the value
// comes back past the separate clear threshold, so a value hovering at the
// threshold does not flap (docs/alerts.md "States").
//
// Each evaluation of one rule level hands the tracker the level's samples:
// every series the rule saw at that time, with whether it is past the firing
// threshold (`fire`) and past the clear threshold (`hold`). Series the
// level had alerts for that are not among the samples no longer hold.
//
//   inactive --fire--> pending --held for `for`--> firing --stops holding-->
//   (keep_firing_for) --> resolved;   pending --stops holding--> gone
//
// A level with `for` = 0 fires at the first evaluation that sees it.
//
// Thread safety: none; the engine's evaluation thread owns its tracker.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "alert/alert.h"

namespace vigil::alert {

// One rule level as the tracker needs it.
struct LevelKey {
  std::string rule;
  Severity severity = Severity::kWarning;
  int64_t for_ms = 0;
  int64_t keep_firing_for_ms = 0;
};

struct Sample {
  wire::Labels labels;  // the series' labels (no alertname/severity: the tracker adds them)
  double value = 0;
  double threshold = 0;
  bool fire = false;  // past the firing threshold
  bool hold = false;  // past the clear threshold (true whenever `fire` is)
  // The series' own `for` where an override gives it one (rules.h
  // LevelFor); -1: the level's.
  int64_t for_ms = -1;
  std::string summary_en;
  std::string summary_zh;
  // More for a person than the one line (Alert::description_en).
  std::string description_en;
  std::string description_zh;
  std::string owner;     // Alert::owner: the Unix user of the series' job
  std::string steps_en;  // the rule's (Alert::steps_en)
  std::string steps_zh;
};

class AlertTracker {
 public:
  // Applies one evaluation of `level` at `now_ms`. Returns the alerts whose
  // state changed (new pending, pending -> firing, firing -> resolved), as
  // they are after the change; resolved ones leave the tracker.
  std::vector<Alert> Apply(const LevelKey& level, const std::vector<Sample>& samples,
                           int64_t now_ms);

  // Pending and firing alerts, by id.
  const std::map<std::string, Alert>& active() const { return active_; }

  // Restores alerts saved before a restart (pending and firing), so what
  // already fired does not fire again.
  void Restore(std::vector<Alert> alerts);

  // Drops a rule's alerts without resolving them (the rule was disabled).
  void Forget(const std::string& rule);

  // Sets an active alert's log excerpt (Alert::log_excerpt), which no
  // evaluation changes afterwards; false when `id` is not active.
  bool SetLogExcerpt(const std::string& id, std::vector<std::string> lines);
  // The same for its diagnosis (Alert::diagnosis, a JSON object).
  bool SetDiagnosis(const std::string& id, std::string diagnosis);

 private:
  std::map<std::string, Alert> active_;
};

// `labels` with alertname and severity added, sorted.
wire::Labels AlertLabels(const std::string& rule, Severity severity, wire::Labels labels);

}  // namespace vigil::alert
