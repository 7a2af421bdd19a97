// The summary an ended run's notification carries (issue: "Run finished /
// crashed summary"): how long it ran, on how many GPUs (GPU-hours), how well
// it used them (mean utilisation, memory peak, and the efficiency report's
// split of its GPU time into busy, input-bound, communication and idle, with
// what the idle share cost: diagnose/efficiency.h, the numbers the job page
// shows), how it learned (final and best loss, the last eval metrics,
// throughput), what it cost at the configured price, and how many
// alerts it raised. `job_finished` and `job_crashed` carry it in their
// description, so an ended job sends one message per channel, not two.
//
// Everything is read through the query engine from the run's own series
// (its GPUs' DCGM_FI_DEV_* over the run; its training_* series by run, or by
// job and node for older data); what a run never reported is left out, never
// shown as zero.
//
// Thread safety: pure functions over a const query engine.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "diagnose/efficiency.h"
#include "diagnose/job_report.h"
#include "query/engine.h"
#include "query/parser.h"

namespace vigil::alert {

struct RunSummary {
  int64_t duration_ms = 0;
  size_t gpus = 0;
  double gpu_hours = 0;
  std::optional<double> mean_gpu_util;  // %, over the run and its GPUs
  // Busy / input-bound / communication / idle shares of its GPU time.
  std::optional<diagnose::JobEfficiency> efficiency;
  std::optional<double> gpu_memory_peak_mib;  // the largest on any of its GPUs
  std::optional<double> final_loss;
  std::optional<double> best_loss;     // the lowest
  std::map<std::string, double> eval;  // last value of each training_eval_* (at most 4)
  std::optional<std::pair<std::string, double>> throughput;  // "samples/s", mean
  std::string exit_reason;
  size_t alerts = 0;  // raised during the run (other than its end)
  // At the configured price (0: not priced).
  double price_per_gpu_hour = 0;
  std::string currency;
};

struct RunSummaryInput {
  const diagnose::JobReport* report = nullptr;
  std::string exit_reason;
  size_t alerts_during_run = 0;
  double price_per_gpu_hour = 0;
  std::string currency;
  // Now: series samples are read up to here (at most a minute past the
  // end), since a run's last lines are often flushed at its exit and stored
  // just after its end. 0: up to the end.
  int64_t now_ms = 0;
};

RunSummary SummarizeRun(const query::Engine& engine, const RunSummaryInput& input);

// The summary as lines for a person ("\n" between them), English or
// Simplified Chinese.
std::string RenderRunSummary(const RunSummary& s, bool zh);

using query::PromQLString;  // query/parser.h

}  // namespace vigil::alert
