// Prometheus text exposition format 0.0.4, rendering: what a /metrics
// endpoint answers, on the server and on an agent. The bounded parser is
// ingest's (ingest/exposition.h), with the decoders of the other protocols.
// Format: https://prometheus.io/docs/instrumenting/exposition_formats/
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "wire/metric_batch.h"

namespace vigil::net {

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

// One series' text before its value, escaped: `name{label="value",...}`
// (empty values left out, as Prometheus does); "" when its metric name or a
// label name cannot be rendered, or a label name repeats (a scrape with it
// would fail).
std::string RenderSeriesName(const wire::Labels& labels);

// A point whose series text is already rendered (RenderSeriesName): a
// caller that keeps each series' text across scrapes renders only values.
struct RenderedPoint {
  std::string_view name;    // the metric name: the text's prefix
  std::string_view series;  // RenderSeriesName's text
  double value = 0;
};

// RenderExposition's output for such points (none may have an empty text).
std::string RenderExpositionOf(std::span<const wire::MetricFamily> families,
                               std::span<const RenderedPoint> points);

// Formats a value as Prometheus (Go's strconv 'g', shortest) does: "1",
// "0.25", "1.6663435264e+10", "+Inf", "-Inf", "NaN".
std::string FormatValue(double v);

// Escapes a label value (\\, \", \n) or, with `help`, a HELP text (\\, \n).
std::string EscapeExposition(std::string_view s, bool help);

bool IsValidMetricName(std::string_view s);
bool IsValidLabelName(std::string_view s);

// Name characters of the data model: [a-zA-Z_:][a-zA-Z0-9_:]* for metric
// names (`colon`), the same without ':' for label names.
bool IsNameStart(char c, bool colon);
bool IsNameChar(char c, bool colon);

}  // namespace vigil::net
