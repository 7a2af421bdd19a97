#include "collect/metrics/gpu_sampler.h"

#include <algorithm>
#include <utility>

namespace vigil::collect {

using nvml::NVML_ERROR_FUNCTION_NOT_FOUND;
using nvml::NVML_ERROR_GPU_IS_LOST;
using nvml::NVML_ERROR_INSUFFICIENT_SIZE;
using nvml::NVML_SUCCESS;
using nvml::nvmlReturn_t;

namespace {
constexpr size_t kMaxXidEventsPerPass = 256;  // a storm must not keep one pass busy forever

// GPM metric id -> the field it fills (value / 100: DCGM exports ratios).
constexpr std::pair<nvml::nvmlGpmMetricId_t, GpuField> kGpmMetrics[] = {
    {nvml::NVML_GPM_METRIC_GRAPHICS_UTIL, GpuField::kProfGrEngineActive},
    {nvml::NVML_GPM_METRIC_SM_UTIL, GpuField::kProfSmActive},
    {nvml::NVML_GPM_METRIC_SM_OCCUPANCY, GpuField::kProfSmOccupancy},
    {nvml::NVML_GPM_METRIC_ANY_TENSOR_UTIL, GpuField::kProfTensorActive},
    {nvml::NVML_GPM_METRIC_DRAM_BW_UTIL, GpuField::kProfDramActive},
    {nvml::NVML_GPM_METRIC_FP64_UTIL, GpuField::kProfFp64Active},
    {nvml::NVML_GPM_METRIC_FP32_UTIL, GpuField::kProfFp32Active},
    {nvml::NVML_GPM_METRIC_FP16_UTIL, GpuField::kProfFp16Active},
};
static_assert(std::size(kGpmMetrics) <= nvml::kGpmMaxMetricsPerCall);

// A lost GPU stops answering every query; reading on would only add noise.
bool IsFatal(nvmlReturn_t rc) {
  return rc == NVML_ERROR_GPU_IS_LOST || rc == nvml::NVML_ERROR_RESET_REQUIRED ||
         rc == nvml::NVML_ERROR_GPU_NOT_FOUND;
}

// Records the call in flight (for the hung-driver message) around an NVML
// call; a missing optional function reads as FUNCTION_NOT_FOUND.
struct CallTracker {
  std::atomic<const char*>* call;
  std::atomic<int>* gpu;
  template <typename F, typename... A>
  nvmlReturn_t operator()(const char* name, int index, F fn, A... args) const {
    if (fn == nullptr) return NVML_ERROR_FUNCTION_NOT_FOUND;
    gpu->store(index, std::memory_order_relaxed);
    call->store(name, std::memory_order_relaxed);
    nvmlReturn_t rc = fn(args...);
    call->store("", std::memory_order_relaxed);
    return rc;
  }
};
}  // namespace

#define NV(gpu, fn, ...) \
  CallTracker{&current_call_, &current_gpu_}(#fn, (gpu), lib_->api().fn, __VA_ARGS__)
#define NV0(gpu, fn) CallTracker{&current_call_, &current_gpu_}(#fn, (gpu), lib_->api().fn)

GpuSampler::~GpuSampler() { Close(); }

void GpuSampler::Close() {
  if (lib_ == nullptr) return;
  if (initialized_) {
    for (Device& d : devices_) {
      if (d.gpm_prev != nullptr) (void)NV(-1, nvmlGpmSampleFree, d.gpm_prev);
      if (d.gpm_next != nullptr) (void)NV(-1, nvmlGpmSampleFree, d.gpm_next);
    }
    if (events_ != nullptr) (void)NV(-1, nvmlEventSetFree, events_);
    (void)NV0(-1, nvmlShutdown);
  }
  devices_.clear();
  events_ = nullptr;
  initialized_ = false;
  lib_.reset();
}

GpuSnapshot GpuSampler::Open() {
  in_init_.store(true, std::memory_order_relaxed);
  GpuSnapshot snap;
  snap.inventory.library_path = options_.library_path;
  auto finish = [&](NvmlState state, std::string message) {
    snap.inventory.state = state;
    snap.inventory.message = std::move(message);
    in_init_.store(false, std::memory_order_relaxed);
    return snap;
  };
  if (lib_ == nullptr) {
    auto lib = NvmlLibrary::Load(options_.library_path);
    if (!lib.ok()) {
      bool absent = lib.status().code() == StatusCode::kNotFound;
      return finish(absent ? NvmlState::kNoDriver : NvmlState::kError, lib.status().message());
    }
    lib_ = std::move(lib).value();
  }
  nvmlReturn_t rc = NV0(-1, nvmlInit_v2);
  if (rc != NVML_SUCCESS) {
    std::string text = lib_->ErrorText("nvmlInit_v2", rc);
    lib_.reset();
    return finish(NvmlState::kError, "NVIDIA driver found but failing: " + text);
  }
  initialized_ = true;
  current_call_.store("reading GPU inventory", std::memory_order_relaxed);
  inventory_ = ReadInventory(*lib_);
  current_call_.store("", std::memory_order_relaxed);
  if (inventory_.state != NvmlState::kOk) {
    std::string message = inventory_.message;
    Close();
    return finish(NvmlState::kError, message);
  }
  for (const GpuDeviceInfo& info : inventory_.gpus) {
    Device d;
    d.info = info;
    if (NV(static_cast<int>(info.index), nvmlDeviceGetHandleByIndex_v2, info.index, &d.handle) !=
        NVML_SUCCESS) {
      continue;
    }
    if (d.info.gpm_supported && (NV(-1, nvmlGpmSampleAlloc, &d.gpm_prev) != NVML_SUCCESS ||
                                 NV(-1, nvmlGpmSampleAlloc, &d.gpm_next) != NVML_SUCCESS)) {
      d.info.gpm_supported = false;  // freed in Close() if one of the two was allocated
    }
    devices_.push_back(std::move(d));
  }
  if (options_.xid_events && lib_->api().nvmlEventSetWait_v2 != nullptr &&
      NV(-1, nvmlEventSetCreate, &events_) != NVML_SUCCESS) {
    events_ = nullptr;  // Xid counting off (e.g. no permission in a container)
  }
  if (events_ != nullptr) {
    int registered = 0;
    for (Device& d : devices_) {
      unsigned long long supported = nvml::kEventTypeXidCriticalError;
      (void)NV(static_cast<int>(d.info.index), nvmlDeviceGetSupportedEventTypes, d.handle,
               &supported);
      if ((supported & nvml::kEventTypeXidCriticalError) == 0) continue;
      if (NV(static_cast<int>(d.info.index), nvmlDeviceRegisterEvents, d.handle,
             nvml::kEventTypeXidCriticalError, events_) == NVML_SUCCESS) {
        ++registered;
      }
    }
    if (registered == 0) {
      (void)NV(-1, nvmlEventSetFree, events_);
      events_ = nullptr;
    }
  }
  snap.inventory = inventory_;
  return finish(NvmlState::kOk, inventory_.message);
}

GpuSnapshot GpuSampler::Sample() {
  if (!open()) {
    GpuSnapshot opened = Open();
    if (!open()) return opened;
  }
  GpuSnapshot snap;
  snap.inventory = inventory_;
  DrainXidEvents();
  for (Device& d : devices_) {
    GpuReading r;
    r.info = d.info;
    ReadDevice(&d, &r);
    snap.gpus.push_back(std::move(r));
  }
  current_gpu_.store(-1, std::memory_order_relaxed);
  return snap;
}

// Every field of one GPU, in DCGM's units. A fatal error on the first call
// (the GPU fell off the bus, the driver went away) marks the GPU down and
// reads nothing more from it; any other field NVML cannot give is left out.
void GpuSampler::ReadDevice(Device* d, GpuReading* r) {
  if (!ReadUtilizationAndMemory(d, r)) return;
  ReadThermalsAndPower(d, r);
  ReadClocks(d, r);
  ReadEcc(d, r);
  if (events_ != nullptr) {
    r->at(GpuField::kXidLast) = static_cast<double>(d->last_xid);
    r->xid_counts = d->xid_counts;
  }
  ReadGpm(d, r);
  if (options_.processes) ReadProcesses(d, r);
}

bool GpuSampler::ReadUtilizationAndMemory(Device* d, GpuReading* r) {
  const int g = static_cast<int>(d->info.index);
  nvml::nvmlDevice_t h = d->handle;
  nvml::nvmlUtilization_t util = {};
  nvmlReturn_t rc = NV(g, nvmlDeviceGetUtilizationRates, h, &util);
  if (IsFatal(rc)) {
    r->up = false;
    r->error = lib_->ErrorText("nvmlDeviceGetUtilizationRates", rc);
    return false;
  }
  if (rc == NVML_SUCCESS) {
    r->at(GpuField::kGpuUtil) = util.gpu;
    r->at(GpuField::kMemCopyUtil) = util.memory;
  }

  nvml::nvmlMemory_v2_t mem2 = {};
  mem2.version = nvml::kNvmlMemoryV2Version;
  nvml::nvmlMemory_t mem1 = {};
  if (NV(g, nvmlDeviceGetMemoryInfo_v2, h, &mem2) == NVML_SUCCESS) {
    r->at(GpuField::kFbReservedMib) = static_cast<double>(mem2.reserved / (1024ULL * 1024ULL));
  } else if (NV(g, nvmlDeviceGetMemoryInfo, h, &mem1) == NVML_SUCCESS) {
    mem2.total = mem1.total;
    mem2.free = mem1.free;
    mem2.used = mem1.used;
  }
  if (mem2.total > 0) {
    // DCGM reports whole MiB, truncated.
    r->at(GpuField::kFbUsedMib) = static_cast<double>(mem2.used / (1024ULL * 1024ULL));
    r->at(GpuField::kFbFreeMib) = static_cast<double>(mem2.free / (1024ULL * 1024ULL));
    r->at(GpuField::kMemTotalBytes) = static_cast<double>(mem2.total);
    r->at(GpuField::kMemUsedBytes) = static_cast<double>(mem2.used);
  }
  return true;
}

void GpuSampler::ReadThermalsAndPower(Device* d, GpuReading* r) {
  const int g = static_cast<int>(d->info.index);
  nvml::nvmlDevice_t h = d->handle;
  unsigned int u = 0;
  if (NV(g, nvmlDeviceGetTemperature, h, nvml::NVML_TEMPERATURE_GPU, &u) == NVML_SUCCESS) {
    r->at(GpuField::kTemp) = u;
  }
  const std::pair<nvml::nvmlTemperatureThresholds_t, GpuField> thresholds[] = {
      {nvml::NVML_TEMPERATURE_THRESHOLD_SLOWDOWN, GpuField::kTempSlowdown},
      {nvml::NVML_TEMPERATURE_THRESHOLD_SHUTDOWN, GpuField::kTempShutdown},
      {nvml::NVML_TEMPERATURE_THRESHOLD_GPU_MAX, GpuField::kTempMaxOperating},
  };
  for (const auto& [type, field] : thresholds) {
    if (NV(g, nvmlDeviceGetTemperatureThreshold, h, type, &u) == NVML_SUCCESS && u > 0) {
      r->at(field) = u;
    }
  }
  if (NV(g, nvmlDeviceGetPowerUsage, h, &u) == NVML_SUCCESS) r->at(GpuField::kPowerW) = u / 1000.0;
  if (NV(g, nvmlDeviceGetEnforcedPowerLimit, h, &u) == NVML_SUCCESS) {
    r->at(GpuField::kPowerLimitW) = u / 1000.0;
  }
  unsigned long long ull = 0;
  if (NV(g, nvmlDeviceGetTotalEnergyConsumption, h, &ull) == NVML_SUCCESS) {
    r->at(GpuField::kEnergyMj) = static_cast<double>(ull);
  }
}

void GpuSampler::ReadClocks(Device* d, GpuReading* r) {
  const int g = static_cast<int>(d->info.index);
  nvml::nvmlDevice_t h = d->handle;
  unsigned int u = 0;
  unsigned long long ull = 0;
  // Each PCIe query samples for ~20 ms inside the driver; the pass bound allows for it.
  if (NV(g, nvmlDeviceGetPcieThroughput, h, nvml::NVML_PCIE_UTIL_TX_BYTES, &u) == NVML_SUCCESS) {
    r->at(GpuField::kPcieTxKbs) = u;
  }
  if (NV(g, nvmlDeviceGetPcieThroughput, h, nvml::NVML_PCIE_UTIL_RX_BYTES, &u) == NVML_SUCCESS) {
    r->at(GpuField::kPcieRxKbs) = u;
  }
  if (NV(g, nvmlDeviceGetClockInfo, h, nvml::NVML_CLOCK_SM, &u) == NVML_SUCCESS) {
    r->at(GpuField::kSmClockMhz) = u;
  }
  if (NV(g, nvmlDeviceGetClockInfo, h, nvml::NVML_CLOCK_MEM, &u) == NVML_SUCCESS) {
    r->at(GpuField::kMemClockMhz) = u;
  }
  if (NV(g, nvmlDeviceGetMaxClockInfo, h, nvml::NVML_CLOCK_SM, &u) == NVML_SUCCESS) {
    r->at(GpuField::kSmClockMaxMhz) = u;
  }
  if (NV(g, nvmlDeviceGetMaxClockInfo, h, nvml::NVML_CLOCK_MEM, &u) == NVML_SUCCESS) {
    r->at(GpuField::kMemClockMaxMhz) = u;
  }
  // The "event reasons" name replaced "throttle reasons" in R535; same bits.
  nvmlReturn_t rc = NV(g, nvmlDeviceGetCurrentClocksEventReasons, h, &ull);
  if (rc != NVML_SUCCESS) rc = NV(g, nvmlDeviceGetCurrentClocksThrottleReasons, h, &ull);
  if (rc == NVML_SUCCESS) r->at(GpuField::kClockEventReasons) = static_cast<double>(ull);
}

// ECC counters, on GPUs where ECC is on (asked once per GPU).
void GpuSampler::ReadEcc(Device* d, GpuReading* r) {
  const int g = static_cast<int>(d->info.index);
  nvml::nvmlDevice_t h = d->handle;
  if (!d->ecc_checked) {
    nvml::nvmlEnableState_t current = nvml::NVML_FEATURE_DISABLED;
    nvml::nvmlEnableState_t pending = nvml::NVML_FEATURE_DISABLED;
    nvmlReturn_t rc = NV(g, nvmlDeviceGetEccMode, h, &current, &pending);
    d->ecc_checked = rc == NVML_SUCCESS || rc == nvml::NVML_ERROR_NOT_SUPPORTED;
    d->ecc_enabled = rc == NVML_SUCCESS && current == nvml::NVML_FEATURE_ENABLED;
  }
  if (!d->ecc_enabled) return;
  const struct {
    nvml::nvmlMemoryErrorType_t type;
    nvml::nvmlEccCounterType_t counter;
    GpuField field;
  } ecc[] = {
      {nvml::NVML_MEMORY_ERROR_TYPE_CORRECTED, nvml::NVML_VOLATILE_ECC, GpuField::kEccSbeVolatile},
      {nvml::NVML_MEMORY_ERROR_TYPE_UNCORRECTED, nvml::NVML_VOLATILE_ECC,
       GpuField::kEccDbeVolatile},
      {nvml::NVML_MEMORY_ERROR_TYPE_CORRECTED, nvml::NVML_AGGREGATE_ECC,
       GpuField::kEccSbeAggregate},
      {nvml::NVML_MEMORY_ERROR_TYPE_UNCORRECTED, nvml::NVML_AGGREGATE_ECC,
       GpuField::kEccDbeAggregate},
  };
  unsigned long long ull = 0;
  for (const auto& e : ecc) {
    if (NV(g, nvmlDeviceGetTotalEccErrors, h, e.type, e.counter, &ull) == NVML_SUCCESS) {
      r->at(e.field) = static_cast<double>(ull);
    }
  }
}

void GpuSampler::ReadGpm(Device* d, GpuReading* r) {
  if (!d->info.gpm_supported) return;
  const int g = static_cast<int>(d->info.index);
  if (NV(g, nvmlGpmSampleGet, d->handle, d->gpm_next) != NVML_SUCCESS) {
    d->gpm_have_prev = false;
    return;
  }
  if (d->gpm_have_prev) {
    // Heap: the struct is ~700 bytes and this runs on a small worker stack.
    auto get = std::make_unique<nvml::nvmlGpmMetricsGet_t>();
    *get = {};
    get->version = nvml::kGpmMetricsGetVersion;
    get->numMetrics = static_cast<unsigned int>(std::size(kGpmMetrics));
    get->sample1 = d->gpm_prev;
    get->sample2 = d->gpm_next;
    for (size_t i = 0; i < std::size(kGpmMetrics); ++i) {
      get->metrics[i].metricId = static_cast<unsigned int>(kGpmMetrics[i].first);
    }
    if (NV(g, nvmlGpmMetricsGet, get.get()) == NVML_SUCCESS) {
      for (size_t i = 0; i < std::size(kGpmMetrics); ++i) {
        if (get->metrics[i].nvmlReturn != NVML_SUCCESS) continue;
        r->at(kGpmMetrics[i].second) = std::clamp(get->metrics[i].value / 100.0, 0.0, 1.0);
      }
    }
  }
  std::swap(d->gpm_prev, d->gpm_next);
  d->gpm_have_prev = true;
}

void GpuSampler::ReadProcesses(Device* d, GpuReading* r) {
  const int g = static_cast<int>(d->info.index);
  const nvml::NvmlApi& api = lib_->api();
  // The v3 and v2 queries fill the same struct; v3 exists on R510 and later.
  const std::pair<const char*, nvml::PFN_nvmlDeviceGetComputeRunningProcesses_v3> queries[] = {
      api.nvmlDeviceGetComputeRunningProcesses_v3 != nullptr
          ? std::pair{"nvmlDeviceGetComputeRunningProcesses_v3",
                      api.nvmlDeviceGetComputeRunningProcesses_v3}
          : std::pair{"nvmlDeviceGetComputeRunningProcesses_v2",
                      api.nvmlDeviceGetComputeRunningProcesses_v2},
      api.nvmlDeviceGetGraphicsRunningProcesses_v3 != nullptr
          ? std::pair{"nvmlDeviceGetGraphicsRunningProcesses_v3",
                      api.nvmlDeviceGetGraphicsRunningProcesses_v3}
          : std::pair{"nvmlDeviceGetGraphicsRunningProcesses_v2",
                      api.nvmlDeviceGetGraphicsRunningProcesses_v2},
  };
  CallTracker call{&current_call_, &current_gpu_};
  for (size_t q = 0; q < std::size(queries); ++q) {
    const auto& [name, fn] = queries[q];
    const bool compute = q == 0;
    std::vector<nvml::nvmlProcessInfo_t> infos(64);
    unsigned int count = static_cast<unsigned int>(infos.size());
    nvmlReturn_t rc = call(name, g, fn, d->handle, &count, infos.data());
    if (rc == NVML_ERROR_INSUFFICIENT_SIZE) {
      infos.resize(count + 16);  // processes may start between the two calls
      count = static_cast<unsigned int>(infos.size());
      rc = call(name, g, fn, d->handle, &count, infos.data());
    }
    if (rc != NVML_SUCCESS) continue;
    count = std::min<unsigned int>(count, static_cast<unsigned int>(infos.size()));
    for (unsigned int i = 0; i < count; ++i) {
      const auto& p = infos[i];
      if (compute) r->compute_pids.push_back(p.pid);
      if (p.usedGpuMemory == nvml::kValueNotAvailableULL) continue;  // e.g. no permission
      uint64_t& bytes = r->process_memory_bytes[p.pid];
      bytes = std::max<uint64_t>(bytes, p.usedGpuMemory);  // a pid in both lists: same memory
    }
  }
}

void GpuSampler::DrainXidEvents() {
  if (events_ == nullptr) return;
  for (size_t i = 0; i < kMaxXidEventsPerPass; ++i) {
    nvml::nvmlEventData_t data = {};
    if (NV(-1, nvmlEventSetWait_v2, events_, &data, 0u) != NVML_SUCCESS) return;  // TIMEOUT: none
    if ((data.eventType & nvml::kEventTypeXidCriticalError) == 0) continue;
    for (Device& d : devices_) {
      if (d.handle != data.device) continue;
      d.last_xid = data.eventData;
      ++d.xid_counts[data.eventData];
    }
  }
}

#undef NV
#undef NV0

}  // namespace vigil::collect
