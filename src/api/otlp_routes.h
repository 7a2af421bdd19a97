// The OTLP/HTTP metrics receiver (docs/otlp.md):
//   POST /v1/metrics   an OpenTelemetry ExportMetricsServiceRequest, as
//                      application/x-protobuf or application/json, optionally
//                      Content-Encoding: gzip. Gauges and cumulative sums are
//                      stored in the metrics store; what is not stored is
//                      counted in the response's partial_success.
// The default path of OTLP/HTTP, so an OpenTelemetry SDK exporter pointed at
// the server's URL works with no other setting.
#pragma once

#include <string>

#include "core/env.h"
#include "ingest/ingester.h"
#include "net/http_server.h"

namespace vigil::api {

struct OtlpRouteDeps {
  ingest::Ingester* ingester = nullptr;  // required: stores what is received
  std::string node;                      // the `node` label of every stored series
  Env* env = Env::Default();
};

void AddOtlpRoutes(net::Router* router, OtlpRouteDeps deps);

}  // namespace vigil::api
