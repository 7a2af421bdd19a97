// The jobs API (docs/jobs.md):
//   GET /api/v1/jobs     every job of every node that reports here (this one
//                        included): what it is (framework, launcher, ranks,
//                        container, GPUs), its state and why (running,
//                        stalled, completed, crashed, killed, exited), its
//                        progress and its events (logs, kernel, NVML).
//                        With efficiency=1, each job's efficiency report too.
//   GET /api/v1/jobs/efficiency?id=[&node=]  one job's efficiency report: its
//                        GPU time split into busy, input-bound, communication
//                        and idle, SM/tensor activity, the idle share's cost
//                        (diagnose/efficiency.h).
//   GET /api/v1/events   the nodes' kernel and NVML events (OOM kills, Xids).
// The routes only render: each job's evidence and verdict are assembled by
// diagnose::JobReporter (diagnose/job_report.h), which the alert engine uses
// too.
#pragma once

#include "diagnose/efficiency.h"
#include "diagnose/job_report.h"
#include "net/http_server.h"

namespace vigil::api {

struct JobRouteDeps {
  diagnose::JobReporter* reporter = nullptr;  // required
  // Efficiency reports; without it they are null (a server without stores).
  diagnose::EfficiencyReporter* efficiency = nullptr;
};

void AddJobRoutes(net::Router* router, JobRouteDeps deps);

}  // namespace vigil::api
