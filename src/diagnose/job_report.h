// JobReport: everything the server knows about one job, assembled from the
// stores — what the job is (the snapshot its node sent, ingest/job_store.h),
// the GPUs it used and the faults on them (gpu_evidence.h), the failures in
// its newest log lines, the kernel's events on its processes, its training
// progress, and the verdict on all of it (verdict.h). The jobs API renders
// reports (api/job_routes.h); the alert engine and diagnosis consume the same
// reports, so a job is judged one way everywhere.
//
// Either store may be absent (a server without logs): a report then rests on
// what is left.
//
// Thread safety: a JobReporter may be used from several threads at once (the
// events of job runs, job_log_events.h, are read under their own locks); the
// stores are thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/env.h"
#include "diagnose/gpu_evidence.h"
#include "diagnose/verdict.h"
#include "ingest/job_store.h"
#include "store/logs/log_store.h"
#include "store/tsdb/db.h"
#include "wire/jobs.h"

namespace vigil::diagnose {

// Progress, from the job's training_step series.
struct StepProgress {
  std::optional<double> last_step;
  std::optional<int64_t> last_step_ms;    // time of its newest sample
  std::optional<int64_t> last_change_ms;  // when the step last changed
  std::optional<int64_t> interval_ms;     // median of recent changes
};

struct JobReport {
  std::string node;
  wire::JobRecord job;  // as the node last reported it
  std::vector<JobGpu> gpus;
  // The job's evidence, oldest first: log events (when the job was one of
  // the `jobs_with_events` newest), the kernel's events on its processes, and
  // GPU faults on its GPUs.
  std::vector<TimedEvent> events;
  StepProgress progress;
  // The job's lines carry its `run` label (its id; agents since issue 13):
  // its logs, events and training series are read by run, so two runs of
  // one script stay apart. False for older data, read by job name and node.
  bool by_run = false;
  // JobStateName(verdict.state), or "unknown" when the node has gone silent
  // while the job was running (verdict.reason is then "node_silent").
  std::string state;
  JobVerdict verdict;
};

// A kernel or NVML event on a node, with the job it was given to.
struct NodeEvent {
  int64_t time_ms = 0;
  std::string node;
  std::string source;  // "kernel" or "nvml"
  std::string gpu;
  std::string job_id;
  parse::training::Event event;
};

struct JobReporterOptions {
  // Log lines read per job for its events (the newest), and how many jobs
  // get events at all (running ones and the newest ended ones).
  size_t event_lines = 2000;
  size_t jobs_with_events = 50;
  // A node that has not reported for this long is "silent": its running
  // jobs are in state "unknown" (agents report every few seconds).
  int64_t node_silent_ms = 60'000;
};

struct JobReportSources {
  ingest::JobStore* jobs = nullptr;  // required
  logstore::LogStore* logs = nullptr;
  tsdb::Db* db = nullptr;
  Env* env = Env::Default();
};

class JobLogEvents;

class JobReporter {
 public:
  JobReporter(JobReportSources sources, JobReporterOptions options = {});
  ~JobReporter();

  // Every job of every node (only `node`'s when it is not empty): running
  // jobs first, then the newest.
  std::vector<JobReport> Reports(const std::string& node = "");

  // The nodes' kernel events (OOM kills, Xid errors) in [start_ms, end_ms]
  // and the Xids NVML reported that the kernel did not log, oldest first.
  std::vector<NodeEvent> NodeEvents(int64_t start_ms, int64_t end_ms, const std::string& node = "");

  // The lines of the job's log a notification quotes about an alert at
  // `at_ms` (log_excerpt.h), from its newest lines up to a few seconds after
  // (a crash's last lines are stored just after it is known). Empty without
  // a log store or lines.
  std::vector<std::string> LogExcerpt(const JobReport& report, int64_t at_ms) const;

  int64_t NowMillis() const { return sources_.env->NowMillis(); }

 private:
  struct NodeView;
  std::vector<NodeView> ReadNodes(int64_t now, const std::string& only_node) const;
  JobReport Report(const wire::JobRecord& job, bool with_events, int64_t now, const NodeView& node);
  // Whether the node's logs hold lines of this job run under its `run` label.
  bool RunLabelled(const std::string& node, const wire::JobRecord& job) const;
  std::vector<TimedEvent> EventsFromLogs(const std::string& node, const wire::JobRecord& job,
                                         bool by_run, bool final) const;
  StepProgress ProgressOf(const std::string& node, const wire::JobRecord& job, bool by_run,
                          int64_t now) const;
  void AddGpuFaults(const wire::JobRecord& job, const std::vector<JobGpu>& gpus,
                    const NodeView& node, int64_t now, std::vector<TimedEvent>* events) const;

  JobReportSources sources_;
  JobReporterOptions options_;
  std::unique_ptr<JobLogEvents> log_events_;
};

// {run="<id>", node="<node>"} when the report is by run, else {job="<name>",
// node="<node>"}: a job run's lines in the log API and the UI, and (the
// same matchers) its training series in PromQL.
std::string JobLogSelector(const JobReport& report);

}  // namespace vigil::diagnose
