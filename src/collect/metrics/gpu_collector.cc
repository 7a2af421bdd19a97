#include "collect/metrics/gpu_collector.h"

#include <algorithm>
#include <cstdio>
#include <utility>

namespace vigil::collect {

using wire::Label;
using wire::Labels;
using wire::MetricBatchBuilder;
using wire::MetricType;

namespace {
constexpr MetricType kGauge = MetricType::kGauge;
constexpr MetricType kCounter = MetricType::kCounter;

struct FieldSpec {
  GpuField field;
  const char* name;
  MetricType type;
  const char* help;
};

// dcgm-exporter names, types and help text where a DCGM field exists.
constexpr FieldSpec kFields[] = {
    {GpuField::kGpuUtil, "DCGM_FI_DEV_GPU_UTIL", kGauge, "GPU utilization (in %)."},
    {GpuField::kMemCopyUtil, "DCGM_FI_DEV_MEM_COPY_UTIL", kGauge, "Memory utilization (in %)."},
    {GpuField::kFbUsedMib, "DCGM_FI_DEV_FB_USED", kGauge, "Framebuffer memory used (in MiB)."},
    {GpuField::kFbFreeMib, "DCGM_FI_DEV_FB_FREE", kGauge, "Framebuffer memory free (in MiB)."},
    {GpuField::kFbReservedMib, "DCGM_FI_DEV_FB_RESERVED", kGauge,
     "Framebuffer memory reserved by the driver (in MiB)."},
    {GpuField::kMemTotalBytes, "vigil_gpu_memory_total_bytes", kGauge,
     "Total GPU memory in bytes."},
    {GpuField::kMemUsedBytes, "vigil_gpu_memory_used_bytes", kGauge,
     "GPU memory allocated by processes in bytes (excludes driver-reserved memory)."},
    {GpuField::kTemp, "DCGM_FI_DEV_GPU_TEMP", kGauge, "GPU temperature (in C)."},
    {GpuField::kTempSlowdown, "vigil_gpu_temp_slowdown_celsius", kGauge,
     "Temperature at which this GPU starts to slow its clocks down (in C)."},
    {GpuField::kTempShutdown, "vigil_gpu_temp_shutdown_celsius", kGauge,
     "Temperature at which this GPU shuts down (in C)."},
    {GpuField::kTempMaxOperating, "vigil_gpu_temp_max_operating_celsius", kGauge,
     "Maximum operating temperature of this GPU (in C)."},
    {GpuField::kPowerW, "DCGM_FI_DEV_POWER_USAGE", kGauge, "Power draw (in W)."},
    {GpuField::kPowerLimitW, "vigil_gpu_power_limit_watts", kGauge,
     "Power limit the driver enforces on this GPU (in W)."},
    {GpuField::kEnergyMj, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", kCounter,
     "Total energy consumption since boot (in mJ)."},
    {GpuField::kPcieTxKbs, "DCGM_FI_DEV_PCIE_TX_THROUGHPUT", kGauge,
     "PCIe TX throughput over a 20 ms window (in KB/s)."},
    {GpuField::kPcieRxKbs, "DCGM_FI_DEV_PCIE_RX_THROUGHPUT", kGauge,
     "PCIe RX throughput over a 20 ms window (in KB/s)."},
    {GpuField::kSmClockMhz, "DCGM_FI_DEV_SM_CLOCK", kGauge, "SM clock frequency (in MHz)."},
    {GpuField::kMemClockMhz, "DCGM_FI_DEV_MEM_CLOCK", kGauge, "Memory clock frequency (in MHz)."},
    {GpuField::kSmClockMaxMhz, "vigil_gpu_sm_clock_max_mhz", kGauge,
     "Maximum SM clock frequency (in MHz)."},
    {GpuField::kMemClockMaxMhz, "vigil_gpu_mem_clock_max_mhz", kGauge,
     "Maximum memory clock frequency (in MHz)."},
    {GpuField::kClockEventReasons, "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", kGauge,
     "Current clock throttle reasons (bitmask of nvmlClocksEventReason values)."},
    {GpuField::kEccSbeVolatile, "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", kCounter,
     "Total number of single-bit volatile ECC errors."},
    {GpuField::kEccDbeVolatile, "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", kCounter,
     "Total number of double-bit volatile ECC errors."},
    {GpuField::kEccSbeAggregate, "DCGM_FI_DEV_ECC_SBE_AGG_TOTAL", kCounter,
     "Total number of single-bit persistent ECC errors."},
    {GpuField::kEccDbeAggregate, "DCGM_FI_DEV_ECC_DBE_AGG_TOTAL", kCounter,
     "Total number of double-bit persistent ECC errors."},
    {GpuField::kXidLast, "DCGM_FI_DEV_XID_ERRORS", kGauge,
     "Value of the last XID error encountered."},
    {GpuField::kProfGrEngineActive, "DCGM_FI_PROF_GR_ENGINE_ACTIVE", kGauge,
     "Ratio of time the graphics engine is active."},
    {GpuField::kProfSmActive, "DCGM_FI_PROF_SM_ACTIVE", kGauge,
     "The ratio of cycles an SM has at least 1 warp assigned."},
    {GpuField::kProfSmOccupancy, "DCGM_FI_PROF_SM_OCCUPANCY", kGauge,
     "The ratio of number of warps resident on an SM."},
    {GpuField::kProfTensorActive, "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", kGauge,
     "Ratio of cycles the tensor (HMMA) pipe is active."},
    {GpuField::kProfDramActive, "DCGM_FI_PROF_DRAM_ACTIVE", kGauge,
     "Ratio of cycles the device memory interface is active sending or receiving data."},
    {GpuField::kProfFp64Active, "DCGM_FI_PROF_PIPE_FP64_ACTIVE", kGauge,
     "Ratio of cycles the fp64 pipes are active."},
    {GpuField::kProfFp32Active, "DCGM_FI_PROF_PIPE_FP32_ACTIVE", kGauge,
     "Ratio of cycles the fp32 pipes are active."},
    {GpuField::kProfFp16Active, "DCGM_FI_PROF_PIPE_FP16_ACTIVE", kGauge,
     "Ratio of cycles the fp16 pipes are active."},
};
static_assert(std::size(kFields) == kGpuFieldCount, "every GpuField needs a metric");

constexpr std::pair<unsigned long long, const char*> kClockEventReasons[] = {
    {nvml::kClocksEventGpuIdle, "gpu_idle"},
    {nvml::kClocksEventApplicationsClocksSetting, "applications_clocks_setting"},
    {nvml::kClocksEventSwPowerCap, "sw_power_cap"},
    {nvml::kClocksEventHwSlowdown, "hw_slowdown"},
    {nvml::kClocksEventSyncBoost, "sync_boost"},
    {nvml::kClocksEventSwThermalSlowdown, "sw_thermal_slowdown"},
    {nvml::kClocksEventHwThermalSlowdown, "hw_thermal_slowdown"},
    {nvml::kClocksEventHwPowerBrakeSlowdown, "hw_power_brake_slowdown"},
    {nvml::kClocksEventDisplayClockSetting, "display_clock_setting"},
};

Labels With(Labels labels, std::string name, std::string value) {
  labels.push_back({std::move(name), std::move(value)});
  return labels;
}

void Add(MetricBatchBuilder* out, const char* name, MetricType type, const char* help,
         Labels labels, double value) {
  out->Family(name, type, help);
  out->Add(name, std::move(labels), value);
}

std::string Seconds(int64_t ms) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f s", static_cast<double>(ms) / 1000.0);
  return buf;
}
}  // namespace

GpuCollector::GpuCollector(GpuCollectorOptions options)
    : options_(std::move(options)), worker_(std::make_unique<BoundedWorker>("vigil-nvml")) {
  GpuSampler::Options so;
  so.library_path = ResolveNvmlLibraryPath(options_.library_path);
  so.processes = options_.processes;
  so.xid_events = options_.xid_events;
  sampler_ = std::make_shared<GpuSampler>(std::move(so));
  last_inventory_.state = NvmlState::kStarting;
  status_.state = NvmlState::kStarting;
  status_.message = "GPU collection has not run yet";
}

GpuCollector::~GpuCollector() {
  // nvmlShutdown can hang like any NVML call, so the last reference is dropped
  // on the worker. If the worker is stuck, the stuck job's own reference keeps
  // the session alive until that call returns on the detached thread.
  (void)worker_->Run([s = std::move(sampler_)]() mutable { s.reset(); }, options_.call_timeout);
}

Status GpuCollector::Collect(MetricBatchBuilder* out) {
  const auto start = std::chrono::steady_clock::now();
  const bool absent =
      last_inventory_.state == NvmlState::kNoDriver || last_inventory_.state == NvmlState::kError;
  if (absent && start < next_open_attempt_) {
    EmitDriverInfo(last_inventory_.state, out);
    return Status::Ok();
  }
  // The job owns what it writes: it may finish long after this call returned.
  auto snap = std::make_shared<GpuSnapshot>();
  Status st = worker_->Run([sampler = sampler_, snap] { *snap = sampler->Sample(); },
                           options_.call_timeout);
  if (!st.ok()) {
    bool first = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      first = status_.responsive;
    }
    const bool starting = EmitStuck(out);
    // Tell the loop once per stall, not once per pass; a slow nvmlInit is no stall.
    return first && !starting && st.code() == StatusCode::kDeadlineExceeded ? st : Status::Ok();
  }
  const int64_t pass_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::steady_clock::now() - start)
                              .count();
  last_inventory_ = snap->inventory;
  if (last_inventory_.state != NvmlState::kOk) {
    next_open_attempt_ = start + options_.retry_interval;
  }
  Emit(*snap, out);
  if (last_inventory_.state == NvmlState::kOk) {
    Add(out, "vigil_gpu_collect_duration_seconds", kGauge,
        "Time the last GPU collection pass spent in NVML.", {{"Hostname", options_.hostname}},
        static_cast<double>(pass_ms) / 1000.0);
  }

  std::lock_guard<std::mutex> lock(mu_);
  status_.state = last_inventory_.state;
  status_.responsive = true;
  status_.driver_version = last_inventory_.driver_version;
  status_.cuda_driver_version = last_inventory_.cuda_driver_version;
  status_.gpu_count = last_inventory_.gpus.size();
  status_.stuck_ms = 0;
  status_.last_pass_ms = pass_ms;
  status_.message = last_inventory_.Summary();
  status_.compute_pids.clear();
  for (const GpuReading& g : snap->gpus) {
    status_.compute_pids.insert(status_.compute_pids.end(), g.compute_pids.begin(),
                                g.compute_pids.end());
  }
  std::sort(status_.compute_pids.begin(), status_.compute_pids.end());
  status_.compute_pids.erase(std::unique(status_.compute_pids.begin(), status_.compute_pids.end()),
                             status_.compute_pids.end());
  for (const GpuReading& g : snap->gpus) {
    if (g.up) continue;
    status_.message += "; GPU " + std::to_string(g.info.index) + " not answering: " + g.error;
  }
  return Status::Ok();
}

void GpuCollector::EmitDriverInfo(NvmlState state, MetricBatchBuilder* out) const {
  Labels labels = {{"Hostname", options_.hostname},
                   {"state", NvmlStateName(state)},
                   {"driver_version", last_inventory_.driver_version},
                   {"cuda_version", last_inventory_.cuda_driver_version},
                   {"nvml_version", last_inventory_.nvml_version}};
  Add(out, "vigil_gpu_driver_info", kGauge,
      "What the agent found: state is ok, no_driver, error or starting; always 1.",
      std::move(labels), 1);
}

bool GpuCollector::EmitStuck(MetricBatchBuilder* out) {
  const int64_t stuck_ms = worker_->stuck_for().count();
  const bool starting = sampler_->in_init() && worker_->stuck_for() < options_.init_grace;
  const char* call = sampler_->current_call();
  const int gpu = sampler_->current_gpu();
  std::string where = (call != nullptr && call[0] != '\0') ? call : "an NVML call";
  if (gpu >= 0) where += " (GPU " + std::to_string(gpu) + ")";

  NvmlState state = last_inventory_.state;
  if (starting) state = NvmlState::kStarting;
  if (!starting && state == NvmlState::kStarting) state = NvmlState::kError;  // init hung
  EmitDriverInfo(state, out);
  if (!starting) {
    Add(out, "vigil_gpu_driver_responsive", kGauge,
        "1 if the NVIDIA driver answered the last collection pass in time, 0 if a call hung.",
        {{"Hostname", options_.hostname}}, 0);
  }
  std::lock_guard<std::mutex> lock(mu_);
  status_.state = state;
  status_.responsive = starting;
  status_.stuck_ms = stuck_ms;
  status_.message = starting ? "starting NVML: " + where + " running for " + Seconds(stuck_ms)
                             : "NVIDIA driver not responding: " + where + " has not returned for " +
                                   Seconds(stuck_ms) +
                                   "; GPU metrics are paused and resume when it returns";
  return starting;
}

void GpuCollector::Emit(const GpuSnapshot& snap, MetricBatchBuilder* out) const {
  const GpuInventory& inv = snap.inventory;
  EmitDriverInfo(inv.state, out);
  if (inv.state != NvmlState::kOk) return;
  const Labels host = {{"Hostname", options_.hostname}};
  Add(out, "vigil_gpu_driver_responsive", kGauge,
      "1 if the NVIDIA driver answered the last collection pass in time, 0 if a call hung.", host,
      1);
  Add(out, "vigil_gpu_devices", kGauge, "Number of NVIDIA GPUs NVML reports.", host,
      static_cast<double>(inv.gpus.size()));

  for (const GpuReading& g : snap.gpus) {
    Labels labels = {{"gpu", std::to_string(g.info.index)},
                     {"UUID", g.info.uuid},
                     {"device", g.info.minor >= 0 ? "nvidia" + std::to_string(g.info.minor) : ""},
                     {"modelName", g.info.name},
                     {"pci_bus_id", g.info.pci_bus_id},
                     {"Hostname", options_.hostname}};
    Add(out, "vigil_gpu_info", kGauge,
        "Static facts about a GPU in labels (model, driver, CUDA, compute capability); always 1.",
        With(With(With(labels, "driver_version", inv.driver_version), "cuda_version",
                  inv.cuda_driver_version),
             "compute_capability", g.info.compute_capability),
        1);
    Add(out, "vigil_gpu_up", kGauge, "1 if the GPU answered NVML this pass, 0 if it is lost.",
        labels, g.up ? 1 : 0);
    if (!g.up) continue;
    Add(out, "vigil_gpu_gpm_supported", kGauge,
        "1 if the GPU supports NVML GPM profiling metrics (DCGM_FI_PROF_*), else 0.", labels,
        g.info.gpm_supported ? 1 : 0);
    for (const FieldSpec& f : kFields) {
      const auto& v = g.at(f.field);
      if (v.has_value()) Add(out, f.name, f.type, f.help, labels, *v);
    }
    if (const auto& reasons = g.at(GpuField::kClockEventReasons); reasons.has_value()) {
      const auto bits = static_cast<unsigned long long>(*reasons);
      for (const auto& [bit, reason] : kClockEventReasons) {
        Add(out, "vigil_gpu_clock_event_reason_active", kGauge,
            "1 while this reason holds the GPU's clocks down (throttling), else 0.",
            With(labels, "reason", reason), (bits & bit) != 0 ? 1 : 0);
      }
    }
    for (const auto& [xid, count] : g.xid_counts) {
      Add(out, "vigil_gpu_xid_errors_total", kCounter,
          "Xid errors reported by the driver since the agent started, by Xid code.",
          With(labels, "xid", std::to_string(xid)), static_cast<double>(count));
    }
    for (const auto& [pid, bytes] : g.process_memory_bytes) {
      Add(out, "vigil_gpu_process_memory_bytes", kGauge,
          "GPU memory used by a process on this GPU, in bytes.",
          With(labels, "pid", std::to_string(pid)), static_cast<double>(bytes));
    }
  }
}

GpuStatus GpuCollector::status() const {
  std::lock_guard<std::mutex> lock(mu_);
  return status_;
}

}  // namespace vigil::collect
