#include "cli/collectors.h"

#include "collect/metrics/gpu_collector.h"
#include "collect/metrics/nvml_loader.h"
#include "collect/metrics/system_collector.h"
#include "core/log.h"

namespace vigil::cli {

std::vector<std::unique_ptr<collect::MetricCollector>> BuildCollectors(
    const std::string& node_name) {
  std::vector<std::unique_ptr<collect::MetricCollector>> out;
  auto system = collect::SystemCollector::Create({});
  if (system.ok()) {
    out.push_back(std::move(system).value());
  } else {
    Logf(LogLevel::kError, "system metrics are off: %s", system.status().ToString().c_str());
  }
  collect::GpuCollectorOptions gpu;
  gpu.hostname = node_name;
  out.push_back(std::make_unique<collect::GpuCollector>(gpu));
  return out;
}

CheckResult NvmlPreflightCheck() {
  using Level = CheckResult::Level;
  auto inv = collect::ProbeNvml();
  if (!inv.ok()) {
    return {Level::kWarn, "the NVIDIA driver did not answer: " + inv.status().message(),
            "GPU metrics start when it answers; check `nvidia-smi` and `dmesg` for Xid errors"};
  }
  switch (inv->state) {
    case collect::NvmlState::kOk:
      return {Level::kOk, "NVIDIA driver found: " + inv->Summary(), ""};
    case collect::NvmlState::kNoDriver:
      return {Level::kInfo,
              "no NVIDIA driver found (" + inv->library_path +
                  " is not installed): GPU metrics are off",
              "install the NVIDIA driver to get GPU metrics; Vigil picks it up on its own"};
    default:
      return {Level::kWarn, "NVIDIA driver found but not usable: " + inv->Summary(),
              "check `nvidia-smi`; Vigil retries every minute"};
  }
}

}  // namespace vigil::cli
