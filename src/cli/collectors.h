// The agent's metric collectors, as `vigil up` runs them, and the NVML
// detection shown by preflight.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "cli/preflight.h"
#include "collect/metrics/collector.h"

namespace vigil::cli {

// System (/proc, /sys) and GPU (NVML) collectors. A collector that cannot be
// created is logged and left out; the others still run.
std::vector<std::unique_ptr<collect::MetricCollector>> BuildCollectors(
    const std::string& node_name);

// "8× NVIDIA H100 80GB HBM3, driver 550.54.15" or why there are no GPU metrics.
CheckResult NvmlPreflightCheck();

}  // namespace vigil::cli
