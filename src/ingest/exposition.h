// Prometheus text exposition format 0.0.4: rendering (for /metrics) and a
// bounded parser (for tests and for comparing with node_exporter).
// Format: https://prometheus.io/docs/instrumenting/exposition_formats/
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "wire/metric_batch.h"

namespace vigil::ingest {

inline constexpr std::string_view kExpositionContentType =
    "text/plain; version=0.0.4; charset=utf-8";

// One current value of one series. `labels` includes __name__; the sample's
// timestamp is not rendered (a scrape shows current values).
struct ExpositionPoint {
  wire::Labels labels;
  wire::Sample sample;
};

struct RenderStats {
  size_t series = 0;
  size_t skipped = 0;  // invalid metric or label name: left out, or the scrape would fail
};

// Renders points grouped by metric name, families in name order and points in
// input order within a family. A family's # HELP (when non-empty) and # TYPE
// come first; points without a family get neither. Help and label values are
// escaped, and invalid UTF-8 becomes U+FFFD because Prometheus rejects it.
std::string RenderExposition(std::span<const wire::MetricFamily> families,
                             std::span<const ExpositionPoint> points, RenderStats* stats = nullptr);

// Formats a value as Prometheus (Go's strconv 'g', shortest) does: "1",
// "0.25", "1.6663435264e+10", "+Inf", "-Inf", "NaN".
std::string FormatValue(double v);

// Escapes a label value (\\, \", \n) or, with `help`, a HELP text (\\, \n).
std::string EscapeExposition(std::string_view s, bool help);

bool IsValidMetricName(std::string_view s);
bool IsValidLabelName(std::string_view s);

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
