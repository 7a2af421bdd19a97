// OTLP metrics decoding (docs/otlp.md): an OpenTelemetry
// ExportMetricsServiceRequest, as binary protobuf or as the OTLP JSON mapping,
// becomes a wire::MetricBatch for the metrics store, plus the count of data
// points that were not stored and why.
//
// Pure functions, no I/O: the HTTP side is otlp_routes.h. There is no
// protobuf library: the bounded reader of core/protobuf.h decodes only the
// fields Vigil uses and skips the rest. Every input is untrusted: malformed,
// truncated or hostile bytes (huge lengths, deep nesting, wrong wire types)
// give an InvalidArgument status, never a crash; sizes and nesting are bounded.
//
// Mapping (the Prometheus conventions of OpenTelemetry's Prometheus exporter):
//  * metric name: characters outside [a-zA-Z0-9_:] become '_', a leading digit
//    gets a '_' prefix; a monotonic cumulative Sum gets "_total" unless it ends
//    so already. Units are not appended.
//  * Gauge -> gauge; Sum monotonic cumulative -> counter; Sum non-monotonic
//    cumulative -> gauge; Sum delta, Histogram, ExponentialHistogram, Summary
//    -> not stored, counted in `rejected_points`.
//  * data point attributes -> labels (names sanitised as metric names, a
//    leading digit or "__" gets a "key_"/"key" prefix; values as text, arrays
//    and maps as JSON, bytes as base64); resource `service.name` -> `job`,
//    `service.instance.id` -> `instance`, other resource attributes dropped;
//    `node` = the server's node name. An attribute that collides with one of
//    these is kept as `exported_<name>`.
//  * time_unix_nano -> ms; 0 -> now. A point flagged "no recorded value" is
//    skipped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"
#include "wire/metric_batch.h"

namespace vigil::ingest::otlp {

enum class Encoding { kProtobuf, kJson };

// Largest request body, compressed or not, and largest body after gunzip.
inline constexpr size_t kMaxBodyBytes = 16 * 1024 * 1024;
// Nesting bound of AnyValue arrays/maps in attributes, and of JSON in general.
inline constexpr int kMaxAnyValueDepth = 16;
inline constexpr int kMaxJsonDepth = 64;

struct DecodeOptions {
  std::string node;    // the `node` label on every series
  int64_t now_ms = 0;  // the time of points with time_unix_nano 0
};

struct DecodeResult {
  wire::MetricBatch batch;       // series to append; source = node
  uint64_t accepted_points = 0;  // data points in `batch`
  uint64_t rejected_points = 0;  // data points not stored (partial success)
  std::string rejected_reason;   // why, for the response's errorMessage
};

// Decodes an ExportMetricsServiceRequest. InvalidArgument when the body is not
// a well-formed request in that encoding.
Result<DecodeResult> DecodeMetrics(std::string_view body, Encoding encoding,
                                   const DecodeOptions& options);

// Inflates a gzip body (one or more members). InvalidArgument on corrupt or
// truncated input, ResourceExhausted when the output would exceed max_out.
Result<std::string> Gunzip(std::string_view in, size_t max_out);

// The ExportMetricsServiceResponse: empty on full success, else a
// partial_success with the rejected count and message.
std::string EncodeResponse(Encoding encoding, uint64_t rejected, std::string_view message);
// A google.rpc.Status body for failed requests (code: a gRPC code, e.g. 3
// INVALID_ARGUMENT), as the OTLP/HTTP spec asks.
std::string EncodeStatus(Encoding encoding, int code, std::string_view message);

// Name rules of the mapping above (exposed for tests and docs).
std::string SanitizeMetricName(std::string_view name);
std::string SanitizeLabelName(std::string_view name);

}  // namespace vigil::ingest::otlp
