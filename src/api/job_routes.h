// The jobs API (docs/jobs.md):
//   GET /api/v1/jobs     every job of every node that reports here (this one
//                        included): what it is (framework, launcher, ranks,
//                        container, GPUs), its state and why (running,
//                        stalled, completed, crashed, killed, exited), its
//                        progress and its events (logs, kernel, NVML).
//   GET /api/v1/events   the nodes' kernel and NVML events (OOM kills, Xids).
// The routes only render: each job's evidence and verdict are assembled by
// diagnose::JobReporter (diagnose/job_report.h), which the alert engine uses
// too.
#pragma once

#include "diagnose/job_report.h"
#include "net/http_server.h"

namespace vigil::api {

struct JobRouteDeps {
  diagnose::JobReporter* reporter = nullptr;  // required
};

void AddJobRoutes(net::Router* router, JobRouteDeps deps);

}  // namespace vigil::api
