// Instance: the composition of `vigil up` — the agent side (metric
// collectors, collection loop, log agent) and the server side (ingest, stores,
// HTTP API) in one process, joined by an in-process transport that carries the
// same wire frames a remote agent would send. This is the only place both
// sides meet. The same composition runs one side alone: `vigil server`, and
// `vigil agent --server URL`, whose frames travel over HTTP.
//
// Thread safety: Start/Stop/Wait from the owning (main) thread only.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cli/config.h"
#include "cli/home.h"
#include "collect/metrics/collector.h"
#include "core/status.h"

namespace vigil::cli {

enum class Role {
  kAll,     // agent and server in one process (`vigil up`)
  kServer,  // stores, ingest and the API only (`vigil server`)
  kAgent,   // collectors and the log agent, shipping to `server_url` (`vigil agent`)
};

struct InstanceOptions {
  Role role = Role::kAll;
  std::string server_url;      // kAgent: where to ship (http://host:port)
  bool collect_logs = true;    // run the log agent (discovery, tailing)
  LogsConfig logs;             // from config.json
  alert::AlertsConfig alerts;  // from config.json
  NotifyConfig notify;         // from config.json
  HomePaths paths;
  std::string listen = "127.0.0.1:9300";
  std::string node_name;       // defaults to the hostname
  int64_t interval_ms = 1000;  // metric collection period
};

class Instance {
 public:
  // Takes the home's lock, opens the store, starts the HTTP server and the
  // collectors, and records the run state. Fails cleanly (nothing left
  // running) with a message that says what to do.
  static Result<std::unique_ptr<Instance>> Start(
      const InstanceOptions& options,
      std::vector<std::unique_ptr<collect::MetricCollector>> collectors);
  ~Instance();

  // Stops collection, then the server, then closes the store. Idempotent.
  void Stop();
  const std::string& url() const;

 private:
  struct Impl;
  explicit Instance(std::unique_ptr<Impl> impl);
  static void StartAgentSide(const InstanceOptions& options,
                             std::vector<std::unique_ptr<collect::MetricCollector>> collectors,
                             Impl* impl);
  std::unique_ptr<Impl> impl_;
};

// "http://127.0.0.1:9300" for listen "127.0.0.1:9300", ":9300" or "0.0.0.0:9300";
// "http://[::1]:9300" for "[::1]:9300".
std::string LocalUrl(const std::string& listen, uint16_t port);

// The node name used when none is given: the hostname.
std::string DefaultNodeName();

}  // namespace vigil::cli
