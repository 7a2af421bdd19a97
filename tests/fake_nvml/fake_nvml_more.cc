// The fake NVML's process, GPM and event functions (see fake_nvml.cc).
#include <cstring>
#include <set>

#include "fake_state.h"

using namespace vigil::nvml;  // NOLINT: this file is the NVML ABI
using namespace fake_nvml;    // NOLINT: the fake's own state

namespace {
struct FakeSample {
  int gpu = -1;
  double t = 0;
};

struct EventSet {
  std::set<int> gpus;
  std::set<size_t> delivered;  // indexes into scenario.xids
  double registered_at = 0;
};
}  // namespace

// --- processes ---
namespace {
nvmlReturn_t Processes(const char* fn, nvmlDevice_t device, unsigned int* count,
                       nvmlProcessInfo_t* infos, bool compute) {
  FAKE_ENTER(fn);
  if (count == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  std::vector<nvmlProcessInfo_t> active;
  if (compute) {
    std::lock_guard<std::mutex> lock(g_mu);
    double t = NowLocked();
    for (const auto& p : g_scenario.gpus[gpu].processes) {
      if (t < p.from_s || t >= p.to_s) continue;
      nvmlProcessInfo_t info = {};
      info.pid = p.pid;
      info.usedGpuMemory = static_cast<unsigned long long>(p.mem_mib * 1024 * 1024);
      info.gpuInstanceId = info.computeInstanceId = 0xFFFFFFFFu;
      active.push_back(info);
    }
  }
  unsigned int capacity = *count;
  *count = static_cast<unsigned int>(active.size());
  if (active.size() > capacity) return NVML_ERROR_INSUFFICIENT_SIZE;
  if (!active.empty() && infos == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  for (size_t i = 0; i < active.size(); ++i) infos[i] = active[i];
  return NVML_SUCCESS;
}
}  // namespace

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device,
                                                                 unsigned int* count,
                                                                 nvmlProcessInfo_t* infos) {
  return Processes("nvmlDeviceGetComputeRunningProcesses_v3", device, count, infos, true);
}
FAKE_EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t device,
                                                                 unsigned int* count,
                                                                 nvmlProcessInfo_t* infos) {
  return Processes("nvmlDeviceGetComputeRunningProcesses_v2", device, count, infos, true);
}
FAKE_EXPORT nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t device,
                                                                  unsigned int* count,
                                                                  nvmlProcessInfo_t* infos) {
  return Processes("nvmlDeviceGetGraphicsRunningProcesses_v3", device, count, infos, false);
}
FAKE_EXPORT nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v2(nvmlDevice_t device,
                                                                  unsigned int* count,
                                                                  nvmlProcessInfo_t* infos) {
  return Processes("nvmlDeviceGetGraphicsRunningProcesses_v2", device, count, infos, false);
}

// --- GPM ---
FAKE_EXPORT nvmlReturn_t nvmlGpmQueryDeviceSupport(nvmlDevice_t device, nvmlGpmSupport_t* support) {
  FAKE_ENTER("nvmlGpmQueryDeviceSupport");
  if (support == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (support->version != 1) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  support->isSupportedDevice = GpuCopy(gpu).gpm ? 1 : 0;
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlGpmSampleAlloc(nvmlGpmSample_t* sample) {
  MaybeHang("nvmlGpmSampleAlloc");
  if (sample == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *sample = reinterpret_cast<nvmlGpmSample_t>(new FakeSample());
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlGpmSampleFree(nvmlGpmSample_t sample) {
  MaybeHang("nvmlGpmSampleFree");
  delete reinterpret_cast<FakeSample*>(sample);
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlGpmSampleGet(nvmlDevice_t device, nvmlGpmSample_t sample) {
  FAKE_ENTER("nvmlGpmSampleGet");
  if (sample == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (!GpuCopy(gpu).gpm) return NVML_ERROR_NOT_SUPPORTED;
  auto* s = reinterpret_cast<FakeSample*>(sample);
  s->gpu = gpu;
  s->t = Now();
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlGpmMetricsGet(nvmlGpmMetricsGet_t* get) {
  MaybeHang("nvmlGpmMetricsGet");
  if (get == nullptr || get->sample1 == nullptr || get->sample2 == nullptr) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  if (get->version != 1) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  auto* a = reinterpret_cast<FakeSample*>(get->sample1);
  auto* b = reinterpret_cast<FakeSample*>(get->sample2);
  if (a->gpu < 0 || a->gpu != b->gpu || b->t < a->t) return NVML_ERROR_INVALID_ARGUMENT;
  std::lock_guard<std::mutex> lock(g_mu);
  if (a->gpu >= static_cast<int>(g_scenario.gpus.size())) return NVML_ERROR_INVALID_ARGUMENT;
  for (unsigned int i = 0; i < get->numMetrics && i < kGpmMaxMetricsPerCall; ++i) {
    nvmlGpmMetric_t& m = get->metrics[i];
    const char* signal = nullptr;
    switch (m.metricId) {
      case NVML_GPM_METRIC_GRAPHICS_UTIL:
        signal = "gpm_gr_util";
        break;
      case NVML_GPM_METRIC_SM_UTIL:
        signal = "gpm_sm_util";
        break;
      case NVML_GPM_METRIC_SM_OCCUPANCY:
        signal = "gpm_sm_occupancy";
        break;
      case NVML_GPM_METRIC_ANY_TENSOR_UTIL:
        signal = "gpm_tensor_util";
        break;
      case NVML_GPM_METRIC_DRAM_BW_UTIL:
        signal = "gpm_dram_util";
        break;
      case NVML_GPM_METRIC_FP64_UTIL:
        signal = "gpm_fp64_util";
        break;
      case NVML_GPM_METRIC_FP32_UTIL:
        signal = "gpm_fp32_util";
        break;
      case NVML_GPM_METRIC_FP16_UTIL:
        signal = "gpm_fp16_util";
        break;
      default:
        break;
    }
    if (signal == nullptr) {
      m.nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
      continue;
    }
    m.nvmlReturn = NVML_SUCCESS;
    m.value = SignalLocked(a->gpu, signal, b->t);
    m.metricInfo.shortName = const_cast<char*>(signal);
    m.metricInfo.longName = const_cast<char*>(signal);
    m.metricInfo.unit = const_cast<char*>("%");
  }
  return NVML_SUCCESS;
}

// --- events ---
FAKE_EXPORT nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t* set) {
  MaybeHang("nvmlEventSetCreate");
  if (set == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  auto* s = new EventSet();
  s->registered_at = Now();
  *set = reinterpret_cast<nvmlEventSet_t>(s);
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set) {
  MaybeHang("nvmlEventSetFree");
  delete reinterpret_cast<EventSet*>(set);
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetSupportedEventTypes(nvmlDevice_t device,
                                                          unsigned long long* types) {
  FAKE_ENTER("nvmlDeviceGetSupportedEventTypes");
  (void)gpu;
  if (types == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *types = kEventTypeXidCriticalError;
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t device,
                                                  unsigned long long event_types,
                                                  nvmlEventSet_t set) {
  FAKE_ENTER("nvmlDeviceRegisterEvents");
  if (set == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if ((event_types & ~kEventTypeXidCriticalError) != 0) return NVML_ERROR_NOT_SUPPORTED;
  std::lock_guard<std::mutex> lock(g_mu);
  reinterpret_cast<EventSet*>(set)->gpus.insert(gpu);
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t* data,
                                             unsigned int timeout_ms) {
  (void)timeout_ms;  // events are either due or not; never wait
  MaybeHang("nvmlEventSetWait_v2");
  if (set == nullptr || data == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_init_count == 0) return NVML_ERROR_UNINITIALIZED;
  auto* s = reinterpret_cast<EventSet*>(set);
  double t = NowLocked();
  for (size_t i = 0; i < g_scenario.xids.size(); ++i) {
    const auto& x = g_scenario.xids[i];
    if (s->delivered.count(i) || !s->gpus.count(x.gpu)) continue;
    if (x.at_s < s->registered_at || x.at_s > t) continue;
    s->delivered.insert(i);
    std::memset(data, 0, sizeof(*data));
    data->device = reinterpret_cast<nvmlDevice_t>(&g_slots[x.gpu]);
    data->eventType = kEventTypeXidCriticalError;
    data->eventData = x.code;
    data->gpuInstanceId = data->computeInstanceId = 0xFFFFFFFFu;
    return NVML_SUCCESS;
  }
  return NVML_ERROR_TIMEOUT;
}
