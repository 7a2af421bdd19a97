// Shared state and helpers of the fake NVML (see fake_state.h).
#include "fake_state.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <thread>

namespace fake_nvml {

using namespace vigil::nvml;  // NOLINT: this file speaks the NVML ABI

DeviceSlot g_slots[kMaxGpus];  // device handles point here; stable across reloads

std::mutex g_mu;
fake_nvml::Scenario g_scenario;              // guarded by g_mu
int g_init_count = 0;                        // guarded by g_mu
std::chrono::steady_clock::time_point g_t0;  // guarded by g_mu
double g_speed = 1;                          // guarded by g_mu
std::vector<double> g_energy_t;              // guarded by g_mu; per GPU: integrated up to t
std::vector<double> g_energy_mj;             // guarded by g_mu
std::atomic<bool> g_manual{false};
std::atomic<double> g_manual_t{0};
std::atomic<int> g_hanging{0};  // threads inside a scripted hang

double NowLocked() {
  if (g_manual.load()) return g_manual_t.load();
  auto d = std::chrono::steady_clock::now() - g_t0;
  return std::chrono::duration<double>(d).count() * g_speed;
}

double Now() {
  std::lock_guard<std::mutex> lock(g_mu);
  return NowLocked();
}

// Blocks while a scripted hang covers `fn` at the current scenario time.
void MaybeHang(const char* fn) {
  bool counted = false;
  for (;;) {
    bool hung = false;
    {
      std::lock_guard<std::mutex> lock(g_mu);
      double t = NowLocked();
      for (const auto& h : g_scenario.hangs) {
        if ((h.function == "all" || h.function == fn) && t >= h.at_s && t < h.at_s + h.for_s) {
          hung = true;
        }
      }
    }
    if (!hung) break;
    if (!counted) g_hanging.fetch_add(1);
    counted = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (counted) g_hanging.fetch_sub(1);
}

namespace {
uint64_t Seed(int gpu, const std::string& signal) {
  return std::hash<std::string>{}(signal)*1315423911ULL + static_cast<uint64_t>(gpu) + 1;
}
}  // namespace

double SignalLocked(int gpu, const std::string& name, double t) {
  const Gpu& g = g_scenario.gpus[gpu];
  if (name == "mem_used_mib") return MemUsedMib(g, gpu, t);
  auto it = g.curves.find(name);
  double v =
      it == g.curves.end() ? fake_nvml::DefaultSignal(g, name) : it->second.At(t, Seed(gpu, name));
  if (name.find("util") != std::string::npos || name == "gpm_sm_occupancy") {
    v = std::clamp(v, 0.0, 100.0);
  }
  // Noise must not push a clock past the GPU's maximum, as no real GPU does.
  if (name == "sm_clock") v = std::min(v, g.sm_clock_max_mhz);
  if (name == "mem_clock") v = std::min(v, g.mem_clock_max_mhz);
  return std::max(v, 0.0);
}

double MemUsedMib(const Gpu& g, int gpu, double t) {
  double v = 0;
  auto it = g.curves.find("mem_used_mib");
  if (it != g.curves.end()) {
    v = it->second.At(t, Seed(gpu, "mem_used_mib"));
  } else {
    for (const auto& p : g.processes) {
      if (t >= p.from_s && t < p.to_s) v += p.mem_mib;
    }
  }
  return std::clamp(v, 0.0, g.memory_total_mib - g.memory_reserved_mib);
}

// Resolves a handle and applies scripted failures and hangs for `fn`.
nvmlReturn_t Enter(const char* fn, nvmlDevice_t device, int* gpu) {
  MaybeHang(fn);
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_init_count == 0) return NVML_ERROR_UNINITIALIZED;
  auto* slot = reinterpret_cast<DeviceSlot*>(device);
  if (slot < g_slots || slot >= g_slots + kMaxGpus ||
      slot->index >= static_cast<int>(g_scenario.gpus.size())) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  *gpu = slot->index;
  double t = NowLocked();
  for (const auto& f : g_scenario.failures) {
    if (f.function != "all" && f.function != fn) continue;
    if (t < f.at_s || t >= f.at_s + f.for_s) continue;
    if (std::find(f.gpus.begin(), f.gpus.end(), *gpu) != f.gpus.end()) {
      return static_cast<nvmlReturn_t>(f.code);
    }
  }
  return NVML_SUCCESS;
}

// Reads one signal for a device function; the common body of most getters.
Gpu GpuCopy(int gpu) {
  std::lock_guard<std::mutex> lock(g_mu);
  return g_scenario.gpus[gpu];
}

void CopyString(const std::string& s, char* buf, unsigned int len) {
  std::snprintf(buf, len, "%s", s.c_str());
}

}  // namespace fake_nvml
