// The optional configuration file, $VIGIL_HOME/config.json. Everything works
// without it (zero-config); it is for what discovery cannot see and for
// volume limits:
//
//   {"logs": {"paths":   ["/data/runs/*/metrics.jsonl"],   // extra files (glob)
//             "exclude": ["/var/log/*"],                   // never tailed
//             "level_floor": "info",                       // drop below (counted)
//             "lines_per_second": 10000, "burst": 20000,   // per-source rate limit
//             "collect": true}}                            // false: no log collection
//
// Unknown keys are refused with their name, so a typo is not silently ignored.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "wire/log_batch.h"

namespace vigil::cli {

struct LogsConfig {
  bool collect = true;
  std::vector<std::string> paths;
  std::vector<std::string> exclude;
  wire::LogLevel level_floor = wire::LogLevel::kUnknown;  // keep everything
  uint32_t lines_per_second = 10000;
  uint32_t burst = 20000;
};

struct Config {
  LogsConfig logs;
};

// Parses the file's text. InvalidArgument names the offending key or value.
Result<Config> ParseConfig(const std::string& text);
// Reads <home>/config.json; a missing file is the default configuration.
Result<Config> LoadConfig(const std::string& home);

}  // namespace vigil::cli
