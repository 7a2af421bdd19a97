// Metrics pushed by a job, in the Prometheus Pushgateway's protocol, so the
// Prometheus client libraries' push functions work against Vigil unchanged
// (docs/push.md):
//   PUT|POST /metrics/job/<job>{/<label>/<value>}   body: text exposition 0.0.4
//   DELETE   /metrics/job/<job>{/<label>/<value>}   the group's series end; history stays
// A value may be written `<label>@base64/<base64url>` (for values holding '/').
// Samples are stored as series with the grouping labels (which win over a
// metric's own labels of the same name, as in the Pushgateway) and
// node="<this server's node>", timed now unless the line carries a timestamp.
// A PUT replaces the group's series, a POST those of the metric names it
// pushes, a DELETE all of them: a series replaced and not pushed again gets a
// staleness marker, so PromQL stops answering it at once (docs/push.md).
#pragma once

#include <string>

#include "core/env.h"
#include "ingest/ingester.h"
#include "net/http_server.h"

namespace vigil::api {

struct PushRouteDeps {
  ingest::Ingester* ingester = nullptr;  // required: stores what is pushed
  std::string node;                      // the `node` label of every stored series
  Env* env = Env::Default();
  size_t max_body_bytes = 16u << 20;
  size_t max_samples = 100'000;  // per push
};

void AddPushRoutes(net::Router* router, PushRouteDeps deps);

}  // namespace vigil::api
