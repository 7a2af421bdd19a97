// State and helpers shared by the fake NVML's translation units
// (fake_nvml.cc: init, system and per-device values; fake_nvml_more.cc:
// processes, GPM, events). Nothing here is exported from the library: it is
// built with hidden visibility and only FAKE_EXPORT functions are visible.
//
// Thread safety: g_mu guards every g_* value that is not atomic. A scripted
// hang (MaybeHang) sleeps without the lock, so other calls keep answering.
#pragma once

#include <atomic>
#include <chrono>
#include <cmath>
#include <mutex>
#include <string>
#include <vector>

#include "collect/metrics/nvml_api.h"
#include "scenario.h"

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

// Every NVML function Vigil resolves, declared with the exact type from
// nvml_api.h: a definition with another signature fails to compile.
// The fake's files speak the NVML ABI, so they see its names unqualified.
using namespace vigil::nvml;  // NOLINT
#define FAKE_DECLARE(name, ret, params) FAKE_EXPORT ret name params;
VIGIL_NVML_REQUIRED_FUNCTIONS(FAKE_DECLARE)
VIGIL_NVML_OPTIONAL_FUNCTIONS(FAKE_DECLARE)
#undef FAKE_DECLARE

namespace fake_nvml {

using vigil::nvml::nvmlDevice_t;
using vigil::nvml::nvmlReturn_t;

inline constexpr int kMaxGpus = 64;
struct DeviceSlot {
  int index;
};
extern DeviceSlot g_slots[kMaxGpus];  // device handles point here; stable across reloads

extern std::mutex g_mu;
extern Scenario g_scenario;                         // guarded by g_mu
extern int g_init_count;                            // guarded by g_mu
extern std::chrono::steady_clock::time_point g_t0;  // guarded by g_mu
extern double g_speed;                              // guarded by g_mu
extern std::vector<double> g_energy_t;              // guarded by g_mu; per GPU: integrated up to t
extern std::vector<double> g_energy_mj;             // guarded by g_mu
extern std::atomic<bool> g_manual;                  // scenario time pinned by a test
extern std::atomic<double> g_manual_t;
extern std::atomic<int> g_hanging;  // threads inside a scripted hang

// Scenario seconds now; the Locked variant needs g_mu held.
double NowLocked();
double Now();
// Blocks while a scripted hang covers `fn` at the current scenario time.
void MaybeHang(const char* fn);
// A signal's value for a GPU at scenario time t (g_mu held).
double SignalLocked(int gpu, const std::string& name, double t);
double MemUsedMib(const Gpu& g, int gpu, double t);
// Resolves a device handle to its index and applies scripted hangs and
// failures for `fn`.
nvmlReturn_t Enter(const char* fn, nvmlDevice_t device, int* gpu);
Gpu GpuCopy(int gpu);
void CopyString(const std::string& s, char* buf, unsigned int len);

// The common body of getters that report one signal, scaled and rounded.
template <typename T>
nvmlReturn_t Get(const char* fn, nvmlDevice_t device, T* out, const char* signal,
                 double scale = 1) {
  int gpu = 0;
  nvmlReturn_t rc = Enter(fn, device, &gpu);
  if (rc != vigil::nvml::NVML_SUCCESS) return rc;
  if (out == nullptr) return vigil::nvml::NVML_ERROR_INVALID_ARGUMENT;
  std::lock_guard<std::mutex> lock(g_mu);
  *out = static_cast<T>(std::llround(SignalLocked(gpu, signal, NowLocked()) * scale));
  return vigil::nvml::NVML_SUCCESS;
}

}  // namespace fake_nvml

#define FAKE_ENTER(fn)                                                                       \
  int gpu = 0;                                                                               \
  if (nvmlReturn_t rc = fake_nvml::Enter(fn, device, &gpu); rc != vigil::nvml::NVML_SUCCESS) \
  return rc
