// The jobs API (docs/jobs.md):
//   GET /api/v1/jobs     every job on this node and on the nodes whose agents
//                        report here: what it is (framework, launcher, ranks,
//                        container, GPUs), its state and why (running,
//                        stalled, completed, crashed, killed, exited), its
//                        progress and its events (logs, kernel, NVML).
//   GET /api/v1/events   the nodes' kernel and NVML events (OOM kills, Xids).
// A job's verdict is made here, where its logs and metrics are at hand:
// events from its newest log lines (the log store), progress from its
// training_step series (the metrics store), the exit status `vigil run`
// recorded (the tracker). Either store may be absent (an agent without a
// local server): the verdict then rests on what is left.
#pragma once

#include <string>

#include "net/http_server.h"
#include "collect/jobs/job_tracker.h"
#include "core/env.h"
#include "ingest/remote_jobs.h"
#include "store/logs/log_store.h"
#include "store/tsdb/db.h"

namespace vigil::api {

struct JobRouteDeps {
  // This node's jobs (`vigil up`, `vigil agent`); nullptr on `vigil server`.
  collect::jobs::JobTracker* tracker = nullptr;
  // Other nodes' jobs, from their agents (`vigil up`, `vigil server`).
  ingest::RemoteJobs* remote = nullptr;
  logstore::LogStore* logs = nullptr;
  tsdb::Db* db = nullptr;
  Env* env = Env::Default();
  std::string node;
  // Log lines read per job for its events (the newest), and how many jobs
  // get events at all (running ones and the newest ended ones).
  size_t event_lines = 2000;
  size_t jobs_with_events = 50;
  // A node whose agent has not reported for this long is "silent": its
  // running jobs are shown in state "unknown" (agents report every 10 s).
  int64_t node_silent_ms = 60'000;
};

void AddJobRoutes(net::Router* router, JobRouteDeps deps);

}  // namespace vigil::api
