// Diagnosis of one alert: the signals around it (the alert itself, the job's
// report, the node's and GPUs' metrics at the alert's time, the job's logs
// collapsed into templates), the probable causes ranked from them
// (causes.h), and suggestions that say what to change — with a value only
// where one is known from the job or the machine, otherwise what to check.
// The alert engine fills Alert::diagnosis with DiagnosisJson when an alert
// fires (docs/diagnosis.md has the JSON shape and every signal's query).
//
// Thread safety: a Diagnoser is immutable after construction and may be
// used from several threads; its sources are thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/env.h"
#include "diagnose/causes.h"
#include "diagnose/job_report.h"
#include "diagnose/log_templates.h"
#include "parse/settings/job_settings.h"
#include "query/engine.h"
#include "store/logs/log_store.h"
#include "wire/metric_batch.h"

namespace vigil::diagnose {

// What the diagnosis needs of an alert (alert/ depends on diagnose/, not
// the other way round).
struct AlertFacts {
  std::string rule;  // preset id: "gpu_underutilized", "job_crashed", ...
  wire::Labels labels;
  double value = 0;
  int64_t at_ms = 0;  // when it fired
};

struct Suggestion {
  std::string text;                      // English
  std::string text_zh;                   // Simplified Chinese
  std::string parameter;                 // "num_workers", "learning_rate", "NCCL_DEBUG", ... or ""
  std::optional<std::string> current;    // only when known (the job's own value)
  std::optional<std::string> suggested;  // only when it follows from known numbers
};

struct Diagnosis {
  std::vector<Signal> signals;
  std::vector<RankedCause> causes;              // never empty: "unknown" when nothing holds
  std::optional<LogTemplateSummary> templates;  // the job's lines, when a job and logs exist
  std::vector<Suggestion> suggestions;          // for the top cause
};

// {"summary", "summary_zh", "causes": [{"id", "title", "title_zh",
// "confidence", "evidence": [{"signal", "text", "text_zh"}], "source"}],
// "suggestions": [{"text", "text_zh", "parameter", "current", "suggested"}],
// "log_templates": [...], "log_template_totals": {...}} (docs/diagnosis.md).
std::string DiagnosisJson(const Diagnosis& diagnosis);

struct DiagnoserSources {
  const query::Engine* query = nullptr;      // metric signals; none without it
  const logstore::LogStore* logs = nullptr;  // log templates; none without it
};

struct DiagnoserOptions {
  int64_t metric_window_ms = 2 * 60'000;  // rate() window of the host signals
  int64_t event_window_ms = 10 * 60'000;  // a job's events this long before the alert count
  LogTemplateWindow templates;
  // The first records of a job's log (from when it was first seen) read
  // for the settings trainers dump there (Hugging Face's TrainingArguments,
  // Lightning's hparams), and the bytes of them kept at most.
  size_t settings_log_records = 1000;
  size_t settings_log_bytes = 4 << 20;
  // PCIe traffic (both directions, KB/s) from which host-device copies are
  // evidence: about 80 % of what a PCIe 3.0 x16 link moves in practice
  // (~12 GB/s). The link's generation and width are not collected yet, so
  // the figure is fixed; on a 4.0 or 5.0 link it is a third or less of the
  // link, still far above what a compute-bound step copies.
  double pcie_busy_kbs = 10e6;
};

class Diagnoser {
 public:
  explicit Diagnoser(DiagnoserSources sources, DiagnoserOptions options = {});

  // `job`: the report of the job the alert is about (or of the job on its
  // GPU), null for a node or GPU with no job.
  Diagnosis Diagnose(const AlertFacts& alert, const JobReport* job) const;

 private:
  void AddMetricSignals(const AlertFacts& alert, const JobReport* job,
                        std::vector<Signal>* out) const;
  void AddJobSignals(const AlertFacts& alert, const JobReport& job, std::vector<Signal>* out) const;
  void AddLogSignals(const LogTemplateSummary& templates, std::vector<Signal>* out) const;
  std::optional<double> Scalar(const std::string& promql, int64_t at_ms) const;
  // The job's settings: its processes' command lines and the dumps in its
  // log (docs/job-settings.md).
  parse::settings::JobSettings SettingsOf(const AlertFacts& alert, const JobReport* job) const;
  std::vector<std::string> FirstLogLines(const AlertFacts& alert, const JobReport& job) const;
  std::vector<Suggestion> Suggest(const RankedCause& top, const AlertFacts& alert,
                                  const JobReport* job) const;

  DiagnoserSources sources_;
  DiagnoserOptions options_;
};

}  // namespace vigil::diagnose
