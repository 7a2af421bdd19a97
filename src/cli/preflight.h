// Preflight: the checks `vigil up` runs, and prints, before it starts, so a
// failure says why and what to do instead of leaving a half-started service.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "cli/home.h"

namespace vigil::cli {

struct CheckResult {
  enum class Level { kOk, kInfo, kWarn, kFail };
  Level level = Level::kOk;
  std::string what;    // "port 127.0.0.1:9300 is free"
  std::string advice;  // what to do, when not OK
};

struct PreflightInput {
  HomePaths paths;
  std::string listen;  // host:port
  // Describes what NVML detection found; injected so preflight does not
  // depend on the GPU collector's internals.
  std::function<CheckResult()> nvml_check;
  uint64_t min_free_bytes = 256ull << 20;  // below: refuse to start
  uint64_t warn_free_bytes = 2ull << 30;   // below: warn
};

std::vector<CheckResult> RunPreflight(const PreflightInput& in);
bool AnyFailed(const std::vector<CheckResult>& results);
// One line per check: "  ok    port 127.0.0.1:9300 is free".
std::string FormatChecks(const std::vector<CheckResult>& results);

}  // namespace vigil::cli
