// Prometheus text exposition format 0.0.4: a bounded parser of untrusted
// text (Pushgateway pushes, tests, the comparison with node_exporter). The
// renderer is net/exposition.h (both sides answer /metrics).
// Format: https://prometheus.io/docs/instrumenting/exposition_formats/
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "net/exposition.h"
#include "wire/metric_batch.h"

namespace vigil::ingest {

struct ParsedSample {
  wire::Labels labels;  // includes __name__; sorted; empty values dropped
  double value = 0;
  std::optional<int64_t> timestamp_ms;
};

struct ParsedFamily {
  std::string name;
  std::string type;  // "counter", "gauge", "histogram", "summary", "untyped"; "" if no TYPE line
  std::string help;  // unescaped
};

// Bounds on untrusted input; exceeding one is an error, never a crash.
struct ExpositionLimits {
  size_t max_bytes = 64 * 1024 * 1024;
  size_t max_samples = 2'000'000;
  size_t max_line_bytes = 1024 * 1024;
  size_t max_labels = wire::kMaxLabelsPerSeries;
  size_t max_label_bytes = wire::kMaxLabelBytes;
};

// Parses text exposition; errors name the line ("line 12: ..."). When
// `families` is given it receives the HELP/TYPE metadata in order of appearance.
Result<std::vector<ParsedSample>> ParseExposition(std::string_view text,
                                                  std::vector<ParsedFamily>* families = nullptr,
                                                  const ExpositionLimits& limits = {});

}  // namespace vigil::ingest
