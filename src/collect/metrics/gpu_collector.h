// GpuCollector: NVIDIA GPU metrics through NVML (dlopen), under dcgm-exporter's
// metric names and labels where they exist, vigil_gpu_* otherwise (list in
// gpu_collector.cc and the lead's report).
//
// It cannot hang the collection loop: every NVML call runs on one dedicated
// BoundedWorker thread and each pass waits at most `call_timeout`. A driver
// that does not answer yields vigil_gpu_driver_responsive 0, no GPU values
// (never stale ones), and a status() that says which call is stuck; when the
// call returns, the next pass collects again without intervention.
//
// Thread safety: Collect() is called by one thread at a time (the collection
// loop). status() may be called from any thread; mu_ guards status_. The NVML
// session (GpuSampler) is shared with the job closures on the worker and is
// touched only on the worker thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "collect/metrics/collector.h"
#include "collect/metrics/gpu_sampler.h"
#include "collect/metrics/nvml_loader.h"
#include "core/bounded_worker.h"

namespace vigil::collect {

struct GpuCollectorOptions {
  std::string hostname;      // the `Hostname` label (the lead passes the node name)
  std::string library_path;  // empty: $VIGIL_NVML_LIBRARY, then libnvidia-ml.so.1
  // Longest a pass waits for NVML. PCIe throughput costs ~40 ms per GPU inside
  // the driver, so 8 GPUs need a few hundred ms on a healthy machine.
  std::chrono::milliseconds call_timeout{1000};
  // nvmlInit may legitimately take this long (no persistence mode) before the
  // driver counts as unresponsive.
  std::chrono::milliseconds init_grace{30000};
  // How often to retry after "no driver" or a failed init.
  std::chrono::milliseconds retry_interval{60000};
  bool processes = true;   // vigil_gpu_process_memory_bytes
  bool xid_events = true;  // DCGM_FI_DEV_XID_ERRORS, vigil_gpu_xid_errors_total
};

// What the status endpoint shows.
struct GpuStatus {
  NvmlState state = NvmlState::kStarting;
  bool responsive = true;  // false while an NVML call overruns its bound
  std::string message;     // one line for a person
  std::string driver_version;
  std::string cuda_driver_version;
  size_t gpu_count = 0;
  int64_t stuck_ms = 0;      // how long the current NVML call has been running, if stuck
  int64_t last_pass_ms = 0;  // duration of the last completed pass
  // Processes running CUDA work on any GPU at the last pass, sorted: job
  // detection's evidence for programs it does not otherwise recognise.
  std::vector<int> compute_pids;
};

class GpuCollector : public MetricCollector {
 public:
  explicit GpuCollector(GpuCollectorOptions options);
  // Shuts NVML down on the worker, bounded; a stuck driver leaves the session
  // to the detached worker thread.
  ~GpuCollector() override;

  std::string_view name() const override { return "gpu"; }
  Status Collect(wire::MetricBatchBuilder* out) override;

  GpuStatus status() const;

 private:
  void Emit(const GpuSnapshot& snap, wire::MetricBatchBuilder* out) const;
  void EmitDriverInfo(NvmlState state, wire::MetricBatchBuilder* out) const;
  // Reports a pass that overran; true while that is still a slow nvmlInit.
  bool EmitStuck(wire::MetricBatchBuilder* out);

  const GpuCollectorOptions options_;
  // shared_ptr: owned jointly with the job closures on the worker, which may
  // outlive a Collect() call and this object when the driver hangs.
  std::shared_ptr<GpuSampler> sampler_;
  std::unique_ptr<BoundedWorker> worker_;
  // Collect()-thread state.
  std::chrono::steady_clock::time_point next_open_attempt_{};
  GpuInventory last_inventory_;  // from the last completed pass

  mutable std::mutex mu_;
  GpuStatus status_;  // guarded by mu_
};

}  // namespace vigil::collect
