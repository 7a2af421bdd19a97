// NvmlLibrary: libnvidia-ml loaded at run time with dlopen, and ProbeNvml(),
// the time-bounded detection summary used by preflight and status.
//
// Vigil never links against NVML: a machine without an NVIDIA driver is a
// normal machine ("no NVIDIA driver found"), which is a different state from
// a driver that is present but failing. The library path is, in order, the
// explicit path a caller passes, $VIGIL_NVML_LIBRARY (tests and `vigil demo`
// point it at tests/fake_nvml), then "libnvidia-ml.so.1".
//
// Thread safety: an NvmlLibrary is immutable after Load() and may be read from
// any thread; NVML itself is thread-safe. ProbeNvml() may be called from any
// thread.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "collect/metrics/nvml_api.h"
#include "core/status.h"

namespace vigil::collect {

inline constexpr char kNvmlLibraryEnv[] = "VIGIL_NVML_LIBRARY";
inline constexpr char kNvmlDefaultLibrary[] = "libnvidia-ml.so.1";

// What the agent found. Exported as the `state` label of vigil_gpu_driver_info.
enum class NvmlState {
  kOk,        // library loaded, nvmlInit succeeded
  kNoDriver,  // no libnvidia-ml on this machine: a normal state, not an error
  kError,     // library present but unusable (init failed, symbols missing, ...)
  kStarting,  // nvmlInit is still running (it can take seconds without persistence mode)
};
const char* NvmlStateName(NvmlState state);  // "ok", "no_driver", "error", "starting"

// `explicit_path` if non-empty, else $VIGIL_NVML_LIBRARY, else the soname.
std::string ResolveNvmlLibraryPath(const std::string& explicit_path);

class NvmlLibrary {
 public:
  // NotFound: the library does not exist (no driver). FailedPrecondition: it
  // exists but cannot be loaded or lacks a required function.
  static Result<std::unique_ptr<NvmlLibrary>> Load(const std::string& path);
  ~NvmlLibrary();  // dlclose; the caller must have shut NVML down

  NvmlLibrary(const NvmlLibrary&) = delete;
  NvmlLibrary& operator=(const NvmlLibrary&) = delete;

  const nvml::NvmlApi& api() const { return api_; }
  const std::string& path() const { return path_; }
  // "nvmlDeviceGetPowerUsage: GPU is lost" style text for messages.
  std::string ErrorText(const char* function, nvml::nvmlReturn_t code) const;

 private:
  NvmlLibrary(void* handle, std::string path) : handle_(handle), path_(std::move(path)) {}
  void* handle_;
  std::string path_;
  nvml::NvmlApi api_;
};

struct GpuDeviceInfo {
  unsigned int index = 0;
  std::string uuid;        // "GPU-8c1c...": stable across reboots, unlike the index
  std::string name;        // "NVIDIA H100 80GB HBM3"
  int minor = -1;          // N of /dev/nvidiaN; -1 if unknown
  std::string pci_bus_id;  // "00000000:3B:00.0"
  // "9.0" (nvmlDeviceGetCudaComputeCapability): which GPU code runs on it
  // (docs/env-matrix.md); empty when the driver does not say.
  std::string compute_capability;
  unsigned long long memory_total_bytes = 0;
  bool gpm_supported = false;  // NVML GPM (profiling metrics) available
};

struct GpuInventory {
  NvmlState state = NvmlState::kNoDriver;
  std::string message;              // what to tell a person; empty when all is well
  std::string library_path;         // what was (tried to be) loaded
  std::string driver_version;       // "550.54.15"
  std::string cuda_driver_version;  // "12.4": the newest CUDA the driver supports
  std::string nvml_version;         // "12.550.54.15"
  std::vector<GpuDeviceInfo> gpus;

  // "8× NVIDIA H100 80GB HBM3, driver 550.54.15, CUDA 12.4" / the message.
  std::string Summary() const;
};

// Reads the system strings and every device's static facts. NVML must be
// initialised. A device that fails to answer is skipped and noted in message.
GpuInventory ReadInventory(const NvmlLibrary& lib);

// Formats nvmlSystemGetCudaDriverVersion's 12040 as "12.4".
std::string FormatCudaVersion(int version);

struct ProbeOptions {
  std::string library_path;  // empty: ResolveNvmlLibraryPath("")
  // nvmlInit without persistence mode can take seconds on an 8-GPU machine.
  std::chrono::milliseconds timeout{10000};
};

// Loads, initialises, reads the inventory and shuts NVML down, all on a
// helper thread bounded by `timeout`. No driver and a failing driver come
// back as an inventory whose state says so; only a driver that does not
// answer in time is an error (DeadlineExceeded).
Result<GpuInventory> ProbeNvml(const ProbeOptions& options = {});

}  // namespace vigil::collect
