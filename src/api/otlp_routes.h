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

#include "api/http_server.h"
#include "core/env.h"
#include "store/tsdb/db.h"

namespace vigil::api {

struct OtlpRouteDeps {
  tsdb::Db* db = nullptr;  // required
  std::string node;        // the `node` label of every stored series
  Env* env = Env::Default();
};

void AddOtlpRoutes(Router* router, OtlpRouteDeps deps);

}  // namespace vigil::api
