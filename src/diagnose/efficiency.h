// A job's efficiency report — `seff` for GPU jobs: of the GPU time it held
// (its GPUs x its run), the share the GPUs were busy, waiting on input (the
// host CPU or disk saturated), on communication (other ranks, the network)
// or idle with no reason seen; its mean SM and tensor-pipe activity where
// the GPU reports them (DCGM_FI_PROF_*, Hopper and later); and the cost of
// the idle share at the configured price per GPU-hour.
//
// Read through the query engine from the series the collectors export
// (DCGM_FI_DEV_GPU_UTIL and DCGM_FI_PROF_* of the job's GPUs,
// node_cpu_seconds_total and node_network_* of its node) over the job's run,
// cut into at most `max_intervals` intervals. Each GPU-interval is split: the
// GPU's utilisation is busy time, and the rest goes to one reason by what the
// node showed in that interval (docs/diagnosis.md "Efficiency" has the rules,
// thresholds and their sources). What the GPU never reported stays null,
// never zero.
//
// Thread safety: an EfficiencyReporter may be used from several threads at
// once (its cache of ended jobs has its own mutex); the engine is immutable.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "core/json_writer.h"
#include "core/status.h"
#include "diagnose/job_report.h"
#include "query/engine.h"

namespace vigil::diagnose {

// When the GPU's idle time is blamed on something (docs/diagnosis.md).
struct EfficiencyThresholds {
  double host_cpu_saturated = 0.90;  // host CPU busy share: input-bound
  double host_iowait_high = 0.20;    // share of CPU time in iowait: input-bound
  double network_busy = 0.50;        // a NIC's rx or tx over its link speed: communication
  // A kernel resident (utilisation >= spin_util) while SMs have warps less
  // than spin_sm_active of the cycles: a collective spinning (multi-rank jobs).
  double spin_util = 0.50;
  double spin_sm_active = 0.15;
};

struct EfficiencyOptions {
  // Intervals are at least min_step_ms (rate() needs two samples in each at
  // any usual collection interval) and at most max_intervals per run.
  int64_t min_step_ms = 15'000;
  int64_t max_intervals = 720;
  EfficiencyThresholds thresholds;
  double price_per_gpu_hour = 0;  // 0: not priced (idle GPU-hours only)
  std::string currency;
  // An ended job's report is final (cached) this long after its end: its
  // node's last samples may arrive late (remote agents ship every 10 s).
  int64_t settle_ms = 2 * 60'000;
};

// Shares of the job's measured GPU time; they sum to 1.
struct EfficiencyShares {
  double gpu_busy = 0;
  double input_bound = 0;
  double communication = 0;
  double idle = 0;
};

struct JobEfficiency {
  int64_t start_ms = 0;
  int64_t end_ms = 0;
  int64_t step_ms = 0;
  size_t gpus = 0;
  double gpu_hours = 0;  // gpus x run
  // Of the job's GPU-intervals, those with a utilisation sample: the shares
  // rest on these.
  double measured = 0;
  std::optional<EfficiencyShares> shares;  // none without any GPU sample
  std::optional<double> idle_gpu_hours;    // shares->idle x gpu_hours
  std::optional<double> sm_active;         // mean ratio 0..1, when the GPUs report it
  std::optional<double> tensor_active;     // the same for the tensor pipe
  double price_per_gpu_hour = 0;           // 0: not priced
  std::string currency;
  bool final = false;  // the job ended and its samples are in
};

// One GPU-interval's evidence: interval means, none where not reported.
struct IntervalEvidence {
  std::optional<double> util;           // GPU utilisation 0..1
  std::optional<double> sm_active;      // 0..1
  std::optional<double> host_cpu_busy;  // 0..1, the node's
  std::optional<double> host_iowait;    // 0..1
  std::optional<double> network;        // busiest NIC direction over its link speed
};

// The split of one GPU-interval (sums to 1; all zero without `util`).
EfficiencyShares SplitInterval(const IntervalEvidence& e, bool multi_rank,
                               const EfficiencyThresholds& t);

// The report of `job` up to its end (or `now_ms` while it runs). An error
// only when the store fails; a job without GPUs or samples has no shares.
Result<JobEfficiency> ComputeEfficiency(const query::Engine& engine, const JobReport& job,
                                        const EfficiencyOptions& options, int64_t now_ms);

// "GPU busy 62%, input-bound 30%, idle 8% (0.16 GPU-h idle, about 0.40 USD);
// SM active 41%, tensor 22%" — what `vigil run` prints; "" without shares.
std::string EfficiencyLine(const JobEfficiency& e, bool zh);

// The `efficiency` object of the jobs API (docs/jobs.md "Efficiency").
void WriteEfficiencyJson(const JobEfficiency& e, JsonWriter* w);

// ComputeEfficiency with the price configured, and a cache of final reports
// (an ended job's does not change; the jobs list asks for each on every poll).
class EfficiencyReporter {
 public:
  EfficiencyReporter(const query::Engine* engine, EfficiencyOptions options);

  Result<JobEfficiency> For(const JobReport& job, int64_t now_ms);

 private:
  const query::Engine* engine_;
  EfficiencyOptions options_;
  std::mutex mu_;
  std::map<std::string, JobEfficiency> final_;  // by node/id; guarded by mu_
};

}  // namespace vigil::diagnose
