// GpuSampler: the NVML session behind GpuCollector. It owns the loaded library,
// the device handles, GPM sample buffers and the Xid event set, and turns one
// call to Sample() into a GpuSnapshot of plain values.
//
// Threading: every NVML call happens inside Sample() or the destructor, and
// GpuCollector only runs those on its BoundedWorker thread, one at a time, so
// the members need no lock. The two atomics (current call, GPU index) are
// written here and read by other threads to say *where* a hung driver is stuck.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "collect/metrics/nvml_api.h"
#include "collect/metrics/nvml_loader.h"

namespace vigil::collect {

// Per-GPU values, already in the units they are exported in.
enum class GpuField : int {
  kGpuUtil,           // %
  kMemCopyUtil,       // %
  kFbUsedMib,         // MiB, integer as DCGM
  kFbFreeMib,         // MiB
  kFbReservedMib,     // MiB
  kMemTotalBytes,     // bytes
  kMemUsedBytes,      // bytes
  kTemp,              // °C
  kTempSlowdown,      // °C
  kTempShutdown,      // °C
  kTempMaxOperating,  // °C
  kPowerW,            // W
  kPowerLimitW,       // W
  kEnergyMj,          // mJ since driver load
  kPcieTxKbs,         // KB/s
  kPcieRxKbs,         // KB/s
  kSmClockMhz,
  kMemClockMhz,
  kSmClockMaxMhz,
  kMemClockMaxMhz,
  kClockEventReasons,  // bitmask
  kEccSbeVolatile,
  kEccDbeVolatile,
  kEccSbeAggregate,
  kEccDbeAggregate,
  kXidLast,             // last Xid seen, 0 if none since start
  kProfGrEngineActive,  // ratios 0..1 from GPM
  kProfSmActive,
  kProfSmOccupancy,
  kProfTensorActive,
  kProfDramActive,
  kProfFp64Active,
  kProfFp32Active,
  kProfFp16Active,
  kCount,
};
inline constexpr size_t kGpuFieldCount = static_cast<size_t>(GpuField::kCount);

struct GpuReading {
  GpuDeviceInfo info;
  bool up = true;     // false: the GPU answered GPU_IS_LOST (or similar) this pass
  std::string error;  // why `up` is false
  std::array<std::optional<double>, kGpuFieldCount> values;
  std::map<uint32_t, uint64_t> process_memory_bytes;  // pid -> bytes
  std::vector<uint32_t> compute_pids;                 // in NVML's compute list, memory known or not
  std::map<uint64_t, uint64_t> xid_counts;            // xid -> count since start

  std::optional<double>& at(GpuField f) { return values[static_cast<size_t>(f)]; }
  const std::optional<double>& at(GpuField f) const { return values[static_cast<size_t>(f)]; }
};

struct GpuSnapshot {
  GpuInventory inventory;  // state, versions, static device facts
  std::vector<GpuReading> gpus;
};

class GpuSampler {
 public:
  struct Options {
    std::string library_path;  // resolved path (ResolveNvmlLibraryPath)
    bool processes = true;
    bool xid_events = true;
  };
  explicit GpuSampler(Options options) : options_(std::move(options)) {}
  // Frees GPM samples and the event set, shuts NVML down, unloads the library.
  ~GpuSampler();

  GpuSampler(const GpuSampler&) = delete;
  GpuSampler& operator=(const GpuSampler&) = delete;

  // Opens NVML on first use (and again after a failed open); then reads every
  // GPU. inventory.state says whether it worked.
  GpuSnapshot Sample();

  bool open() const { return lib_ != nullptr && initialized_; }
  bool in_init() const { return in_init_.load(std::memory_order_relaxed); }
  // The NVML function running now ("" when idle) and its GPU index (-1: none).
  const char* current_call() const { return current_call_.load(std::memory_order_relaxed); }
  int current_gpu() const { return current_gpu_.load(std::memory_order_relaxed); }

 private:
  struct Device {
    nvml::nvmlDevice_t handle = nullptr;
    GpuDeviceInfo info;
    bool ecc_checked = false;
    bool ecc_enabled = false;
    nvml::nvmlGpmSample_t gpm_prev = nullptr;  // last pass's sample, if taken
    nvml::nvmlGpmSample_t gpm_next = nullptr;
    bool gpm_have_prev = false;
    uint64_t last_xid = 0;
    std::map<uint64_t, uint64_t> xid_counts;
  };

  GpuSnapshot Open();
  void Close();
  void ReadDevice(Device* d, GpuReading* r);
  // Parts of ReadDevice; the first is false when the GPU is down.
  bool ReadUtilizationAndMemory(Device* d, GpuReading* r);
  void ReadThermalsAndPower(Device* d, GpuReading* r);
  void ReadClocks(Device* d, GpuReading* r);
  void ReadEcc(Device* d, GpuReading* r);
  void ReadGpm(Device* d, GpuReading* r);
  void ReadProcesses(Device* d, GpuReading* r);
  void DrainXidEvents();
  Options options_;
  std::unique_ptr<NvmlLibrary> lib_;
  bool initialized_ = false;
  GpuInventory inventory_;
  std::vector<Device> devices_;
  nvml::nvmlEventSet_t events_ = nullptr;
  std::atomic<bool> in_init_{false};
  std::atomic<const char*> current_call_{""};
  std::atomic<int> current_gpu_{-1};
};

}  // namespace vigil::collect
