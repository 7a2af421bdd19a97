// The fake NVML's scenario: GPUs, their static facts and value curves over
// time, processes, Xid events, injected errors and hangs. Format in
// docs/fake-nvml.md; parsed from a small line-based text file.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace fake_nvml {

// A piecewise-linear (or step) function of scenario seconds.
struct Curve {
  std::vector<std::pair<double, double>> points;  // (t, value), t ascending
  double repeat_s = 0;                            // > 0: the curve repeats with this period
  double noise = 0;   // amplitude of deterministic noise, in value units
  bool step = false;  // hold each value until the next point
  bool set = false;
  double At(double t, uint64_t seed) const;
};

struct Process {
  uint32_t pid = 0;
  double mem_mib = 0;
  double from_s = 0;
  double to_s = 1e300;
};

struct Gpu {
  std::string model = "NVIDIA H100 80GB HBM3";
  std::string uuid;        // generated from the index if empty
  std::string pci_bus_id;  // generated if empty
  int minor = -1;          // index if < 0
  // nvmlDeviceGetCudaComputeCapability; < 0: DefaultComputeCapability(model).
  int cc_major = -1;
  int cc_minor = -1;
  double memory_total_mib = 81559;
  double memory_reserved_mib = 0;
  double power_limit_w = 700;
  double temp_slowdown_c = 90;
  double temp_shutdown_c = 95;
  double temp_max_c = 87;
  double sm_clock_max_mhz = 1980;
  double mem_clock_max_mhz = 2619;
  double energy_start_j = 0;
  bool gpm = true;
  bool ecc = true;
  std::map<std::string, Curve> curves;  // by signal name
  std::vector<Process> processes;
};

struct XidEvent {
  int gpu = 0;
  double at_s = 0;
  uint64_t code = 0;
};

struct Hang {
  std::string function;  // an NVML function name, or "all"
  double at_s = 0;
  double for_s = 0;
};

struct Failure {
  std::vector<int> gpus;
  std::string function;  // or "all" (per-device functions only)
  int code = 0;          // nvmlReturn_t
  double at_s = 0;
  double for_s = 1e300;
};

struct Scenario {
  std::string driver_version = "550.54.15";
  int cuda_version = 12040;
  std::string nvml_version = "12.550.54.15";
  std::vector<Gpu> gpus;
  std::vector<XidEvent> xids;
  std::vector<Hang> hangs;
  std::vector<Failure> failures;
};

// The compute capability of a model, by the name's words (H100 -> 9.0, RTX
// 4090 -> 8.9, ...: docs/fake-nvml.md); false for a model not listed, which
// then answers NVML_ERROR_NOT_SUPPORTED unless the scenario sets one.
bool DefaultComputeCapability(const std::string& model, int* major, int* minor);

// The known curve signal names and their value when no curve is given.
bool IsKnownSignal(const std::string& name);
double DefaultSignal(const Gpu& gpu, const std::string& name);

// Parses scenario text; on error returns false with "line N: what" in *error.
bool ParseScenario(const std::string& text, Scenario* out, std::string* error);

// Deterministic value noise in [-1, 1], smooth between whole seconds.
double Noise(uint64_t seed, double t);

}  // namespace fake_nvml
