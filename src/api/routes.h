// The server's core routes: /healthz, /metrics (current values in Prometheus
// text exposition), /api/v1/status (what runs and what was detected) and
// /api/v1/ingest (wire frames from agents). Documented in docs/http-api.md.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "ingest/ingester.h"
#include "net/http_server.h"
#include "store/logs/log_store.h"
#include "store/tsdb/db.h"

namespace vigil::api {

struct ServerInfo {
  std::string version;
  int64_t started_ms = 0;
  std::string home;
  std::string listen;
  std::string node;
  std::string data_dir;  // its size is reported by /api/v1/status
};

struct CoreRouteDeps {
  ServerInfo info;
  tsdb::Db* db = nullptr;
  logstore::LogStore* logs = nullptr;  // optional: log store figures in /metrics and status
  ingest::Ingester* ingester = nullptr;
  Env* env = Env::Default();
  // Series whose last sample is older than this are not current (/metrics).
  int64_t staleness_ms = 15'000;
};

void AddCoreRoutes(net::Router* router, const CoreRouteDeps& deps);

}  // namespace vigil::api
