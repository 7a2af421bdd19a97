// A fake libnvidia-ml: every NVML function Vigil resolves, answering from a
// scenario file ($VIGIL_FAKE_NVML_SCENARIO, format in docs/fake-nvml.md).
// Vigil loads it through its normal dlopen path with
// VIGIL_NVML_LIBRARY=<path of this library>.
//
// Scenario time is seconds since the first nvmlInit (times
// $VIGIL_FAKE_NVML_SPEED, default 1), unless a test pins it with
// vigil_fake_nvml_set_time(). The scenario is (re)read whenever the init count
// goes from 0 to 1.
//
// Thread safety: see fake_state.h.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "fake_state.h"

using namespace vigil::nvml;  // NOLINT: this file is the NVML ABI
using namespace fake_nvml;    // NOLINT: the fake's own state

namespace {
const char* kBuiltinScenario =
    "# built in: one idle H100, used when VIGIL_FAKE_NVML_SCENARIO is unset\n"
    "gpus 1\n";
}  // namespace

// --- test controls (not NVML) ---
FAKE_EXPORT void vigil_fake_nvml_set_time(double seconds) {
  g_manual_t.store(seconds);
  g_manual.store(true);
}
FAKE_EXPORT void vigil_fake_nvml_use_real_time() { g_manual.store(false); }
// How many threads are blocked in a scripted hang right now.
FAKE_EXPORT int vigil_fake_nvml_hanging() { return g_hanging.load(); }
// How many nvmlInit_v2 calls (including one still blocked in a hang) have not
// been matched by nvmlShutdown: 0 means the next init reloads the scenario.
FAKE_EXPORT int vigil_fake_nvml_open_sessions() {
  std::lock_guard<std::mutex> lock(g_mu);
  return g_init_count;
}

// --- init ---
FAKE_EXPORT nvmlReturn_t nvmlInit_v2(void) {
  {
    std::lock_guard<std::mutex> lock(g_mu);
    if (g_init_count > 0) {
      ++g_init_count;
      return NVML_SUCCESS;
    }
    const char* path = std::getenv("VIGIL_FAKE_NVML_SCENARIO");
    std::string text = kBuiltinScenario;
    if (path != nullptr && path[0] != '\0') {
      std::ifstream f(path);
      if (!f) {
        std::fprintf(stderr, "fake NVML: cannot read scenario %s\n", path);
        return NVML_ERROR_DRIVER_NOT_LOADED;
      }
      std::stringstream ss;
      ss << f.rdbuf();
      text = ss.str();
    }
    std::string error;
    fake_nvml::Scenario s;
    if (!fake_nvml::ParseScenario(text, &s, &error)) {
      std::fprintf(stderr, "fake NVML: %s: %s\n", path ? path : "built-in", error.c_str());
      return NVML_ERROR_UNKNOWN;
    }
    g_scenario = std::move(s);
    const char* speed = std::getenv("VIGIL_FAKE_NVML_SPEED");
    g_speed = speed != nullptr && std::atof(speed) > 0 ? std::atof(speed) : 1.0;
    g_t0 = std::chrono::steady_clock::now();
    g_energy_t.assign(g_scenario.gpus.size(), 0);
    g_energy_mj.assign(g_scenario.gpus.size(), 0);
    for (int i = 0; i < kMaxGpus; ++i) g_slots[i].index = i;
    // Counted before a scripted hang: an init blocked in the driver is an
    // open session (so a concurrent init does not reload the scenario).
    ++g_init_count;
  }
  MaybeHang("nvmlInit_v2");
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlShutdown(void) {
  MaybeHang("nvmlShutdown");
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_init_count == 0) return NVML_ERROR_UNINITIALIZED;
  --g_init_count;
  return NVML_SUCCESS;
}

FAKE_EXPORT const char* nvmlErrorString(nvmlReturn_t result) {
  switch (result) {
    case NVML_SUCCESS:
      return "Success";
    case NVML_ERROR_UNINITIALIZED:
      return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT:
      return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED:
      return "Not Supported";
    case NVML_ERROR_NO_PERMISSION:
      return "Insufficient Permissions";
    case NVML_ERROR_INSUFFICIENT_SIZE:
      return "Insufficient Size";
    case NVML_ERROR_DRIVER_NOT_LOADED:
      return "Driver Not Loaded";
    case NVML_ERROR_TIMEOUT:
      return "Timeout";
    case NVML_ERROR_GPU_IS_LOST:
      return "GPU is lost";
    case NVML_ERROR_ARGUMENT_VERSION_MISMATCH:
      return "Argument version mismatch";
    default:
      return "Unknown Error";
  }
}

// --- system ---
FAKE_EXPORT nvmlReturn_t nvmlSystemGetDriverVersion(char* version, unsigned int length) {
  MaybeHang("nvmlSystemGetDriverVersion");
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_init_count == 0) return NVML_ERROR_UNINITIALIZED;
  if (version == nullptr || length < g_scenario.driver_version.size() + 1) {
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  CopyString(g_scenario.driver_version, version, length);
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlSystemGetNVMLVersion(char* version, unsigned int length) {
  MaybeHang("nvmlSystemGetNVMLVersion");
  std::lock_guard<std::mutex> lock(g_mu);
  if (version == nullptr || length < g_scenario.nvml_version.size() + 1) {
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  CopyString(g_scenario.nvml_version, version, length);
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int* v) {
  MaybeHang("nvmlSystemGetCudaDriverVersion_v2");
  std::lock_guard<std::mutex> lock(g_mu);
  if (v == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *v = g_scenario.cuda_version;
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* count) {
  MaybeHang("nvmlDeviceGetCount_v2");
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_init_count == 0) return NVML_ERROR_UNINITIALIZED;
  if (count == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *count = static_cast<unsigned int>(g_scenario.gpus.size());
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device) {
  MaybeHang("nvmlDeviceGetHandleByIndex_v2");
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_init_count == 0) return NVML_ERROR_UNINITIALIZED;
  if (device == nullptr || index >= g_scenario.gpus.size()) return NVML_ERROR_INVALID_ARGUMENT;
  *device = reinterpret_cast<nvmlDevice_t>(&g_slots[index]);
  return NVML_SUCCESS;
}

// --- device identity ---

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name, unsigned int length) {
  FAKE_ENTER("nvmlDeviceGetName");
  std::string model = GpuCopy(gpu).model;
  if (name == nullptr || length < model.size() + 1) return NVML_ERROR_INSUFFICIENT_SIZE;
  CopyString(model, name, length);
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid, unsigned int length) {
  FAKE_ENTER("nvmlDeviceGetUUID");
  std::string u = GpuCopy(gpu).uuid;
  if (uuid == nullptr || length < u.size() + 1) return NVML_ERROR_INSUFFICIENT_SIZE;
  CopyString(u, uuid, length);
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_t device, unsigned int* minor) {
  FAKE_ENTER("nvmlDeviceGetMinorNumber");
  if (minor == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *minor = static_cast<unsigned int>(GpuCopy(gpu).minor);
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int* major,
                                                            int* minor) {
  FAKE_ENTER("nvmlDeviceGetCudaComputeCapability");
  if (major == nullptr || minor == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  Gpu g = GpuCopy(gpu);
  if (g.cc_major >= 0) {
    *major = g.cc_major;
    *minor = g.cc_minor;
    return NVML_SUCCESS;
  }
  return DefaultComputeCapability(g.model, major, minor) ? NVML_SUCCESS : NVML_ERROR_NOT_SUPPORTED;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t* pci) {
  FAKE_ENTER("nvmlDeviceGetPciInfo_v3");
  if (pci == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  std::string id = GpuCopy(gpu).pci_bus_id;
  std::memset(pci, 0, sizeof(*pci));
  CopyString(id, pci->busId, sizeof(pci->busId));
  CopyString(id.substr(id.size() > 12 ? 4 : 0), pci->busIdLegacy, sizeof(pci->busIdLegacy));
  unsigned int domain = 0, bus = 0, dev = 0;
  if (std::sscanf(id.c_str(), "%x:%x:%x", &domain, &bus, &dev) == 3) {
    pci->domain = domain;
    pci->bus = bus;
    pci->device = dev;
  }
  pci->pciDeviceId = 0x233010de;
  return NVML_SUCCESS;
}

// --- live values ---
FAKE_EXPORT nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device,
                                                       nvmlUtilization_t* utilization) {
  FAKE_ENTER("nvmlDeviceGetUtilizationRates");
  if (utilization == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  std::lock_guard<std::mutex> lock(g_mu);
  double t = NowLocked();
  utilization->gpu = static_cast<unsigned int>(std::llround(SignalLocked(gpu, "gpu_util", t)));
  utilization->memory = static_cast<unsigned int>(std::llround(SignalLocked(gpu, "mem_util", t)));
  return NVML_SUCCESS;
}

namespace {
void FillMemory(int gpu, unsigned long long* total, unsigned long long* reserved,
                unsigned long long* free_bytes, unsigned long long* used) {
  std::lock_guard<std::mutex> lock(g_mu);
  const Gpu& g = g_scenario.gpus[gpu];
  constexpr double kMiB = 1024.0 * 1024.0;
  *total = static_cast<unsigned long long>(g.memory_total_mib * kMiB);
  *reserved = static_cast<unsigned long long>(g.memory_reserved_mib * kMiB);
  *used = static_cast<unsigned long long>(MemUsedMib(g, gpu, NowLocked()) * kMiB);
  *free_bytes = *total - *reserved - *used;
}
}  // namespace

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t* memory) {
  FAKE_ENTER("nvmlDeviceGetMemoryInfo_v2");
  if (memory == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  // nvml.h: nvmlMemory_v2 == NVML_STRUCT_VERSION(Memory, 2) == 0x02000028.
  if (memory->version != 0x02000028u) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  FillMemory(gpu, &memory->total, &memory->reserved, &memory->free, &memory->used);
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t* memory) {
  FAKE_ENTER("nvmlDeviceGetMemoryInfo");
  if (memory == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  unsigned long long reserved = 0;
  FillMemory(gpu, &memory->total, &reserved, &memory->free, &memory->used);
  memory->used += reserved;  // v1 counts reserved memory as used
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device,
                                                  nvmlTemperatureSensors_t sensor,
                                                  unsigned int* temp) {
  if (sensor != NVML_TEMPERATURE_GPU) return NVML_ERROR_INVALID_ARGUMENT;
  return Get("nvmlDeviceGetTemperature", device, temp, "temp");
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetTemperatureThreshold(nvmlDevice_t device,
                                                           nvmlTemperatureThresholds_t type,
                                                           unsigned int* temp) {
  FAKE_ENTER("nvmlDeviceGetTemperatureThreshold");
  if (temp == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  Gpu g = GpuCopy(gpu);
  switch (type) {
    case NVML_TEMPERATURE_THRESHOLD_SHUTDOWN:
      *temp = static_cast<unsigned>(g.temp_shutdown_c);
      break;
    case NVML_TEMPERATURE_THRESHOLD_SLOWDOWN:
      *temp = static_cast<unsigned>(g.temp_slowdown_c);
      break;
    case NVML_TEMPERATURE_THRESHOLD_GPU_MAX:
      *temp = static_cast<unsigned>(g.temp_max_c);
      break;
    default:
      return NVML_ERROR_NOT_SUPPORTED;
  }
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int* mw) {
  return Get("nvmlDeviceGetPowerUsage", device, mw, "power_w", 1000);
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t device, unsigned int* mw) {
  FAKE_ENTER("nvmlDeviceGetEnforcedPowerLimit");
  if (mw == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *mw = static_cast<unsigned int>(std::llround(GpuCopy(gpu).power_limit_w * 1000));
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t device,
                                                             unsigned long long* mj) {
  FAKE_ENTER("nvmlDeviceGetTotalEnergyConsumption");
  if (mj == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  std::lock_guard<std::mutex> lock(g_mu);
  // Integrates the power curve forward from the last answer (trapezoids of
  // 0.25 s), so energy and power stay consistent; restarts if time went back.
  double t = NowLocked();
  double& at = g_energy_t[gpu];
  double& acc = g_energy_mj[gpu];
  if (t < at) at = acc = 0;
  constexpr double kStep = 0.25;
  while (at < t) {
    double next = std::min(t, at + kStep);
    acc += (SignalLocked(gpu, "power_w", at) + SignalLocked(gpu, "power_w", next)) / 2 *
           (next - at) * 1000;
    at = next;
  }
  *mj = static_cast<unsigned long long>(g_scenario.gpus[gpu].energy_start_j * 1000 + acc);
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetPcieThroughput(nvmlDevice_t device,
                                                     nvmlPcieUtilCounter_t counter,
                                                     unsigned int* kbs) {
  return Get("nvmlDeviceGetPcieThroughput", device, kbs,
             counter == NVML_PCIE_UTIL_TX_BYTES ? "pcie_tx_kbs" : "pcie_rx_kbs");
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, nvmlClockType_t type,
                                                unsigned int* mhz) {
  if (type == NVML_CLOCK_MEM) return Get("nvmlDeviceGetClockInfo", device, mhz, "mem_clock");
  return Get("nvmlDeviceGetClockInfo", device, mhz, "sm_clock");
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t device, nvmlClockType_t type,
                                                   unsigned int* mhz) {
  FAKE_ENTER("nvmlDeviceGetMaxClockInfo");
  if (mhz == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  Gpu g = GpuCopy(gpu);
  *mhz =
      static_cast<unsigned int>(type == NVML_CLOCK_MEM ? g.mem_clock_max_mhz : g.sm_clock_max_mhz);
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device,
                                                                unsigned long long* reasons) {
  return Get("nvmlDeviceGetCurrentClocksEventReasons", device, reasons, "clock_event_reasons");
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t device,
                                                                   unsigned long long* reasons) {
  return Get("nvmlDeviceGetCurrentClocksThrottleReasons", device, reasons, "clock_event_reasons");
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetEccMode(nvmlDevice_t device, nvmlEnableState_t* current,
                                              nvmlEnableState_t* pending) {
  FAKE_ENTER("nvmlDeviceGetEccMode");
  if (current == nullptr || pending == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *current = *pending = GpuCopy(gpu).ecc ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t device,
                                                     nvmlMemoryErrorType_t type,
                                                     nvmlEccCounterType_t counter,
                                                     unsigned long long* count) {
  const char* signal = nullptr;
  bool corrected = type == NVML_MEMORY_ERROR_TYPE_CORRECTED;
  if (counter == NVML_VOLATILE_ECC)
    signal = corrected ? "ecc_sbe_volatile" : "ecc_dbe_volatile";
  else
    signal = corrected ? "ecc_sbe_aggregate" : "ecc_dbe_aggregate";
  return Get("nvmlDeviceGetTotalEccErrors", device, count, signal);
}
