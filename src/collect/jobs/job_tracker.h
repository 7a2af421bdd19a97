// JobTracker: the lifecycle of the jobs on this node. Every few seconds it
// runs job detection (discover/jobs.h) and keeps, per job id, what was last
// seen, when it started and when it was last alive; a job no longer detected
// has ended. `vigil run` records (spool/run/*.json) add two things: the exit
// status or signal of a job whose process the wrapper ran, and jobs of their
// own for commands detection does not recognise (the user said it is a job
// by wrapping it), including ones that ended before this instance started. The verdict (crashed
// or completed, and why) is made by the reader, which also has the job's
// logs and metrics (api/job_routes.cc, verdict.h).
//
// Bounded: ended jobs are kept in memory, the newest max_ended of them; they
// are forgotten at restart (durable job history comes with the event store).
//
// Thread safety: Jobs() may be called from any thread while the tracker's
// own thread polls.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "collect/jobs/kernel_log.h"
#include "collect/jobs/verdict.h"
#include "core/env.h"
#include "core/status.h"
#include "discover/jobs.h"
#include "discover/run_records.h"

namespace vigil::collect::jobs {

struct TrackedJob {
  discover::DetectedJob job;  // as last detected
  int64_t first_seen_ms = 0;
  int64_t last_seen_ms = 0;
  bool ended = false;
  std::optional<RunExit> run_exit;  // from a `vigil run` record of one of its processes
  // What the kernel said about its processes (OOM killer, Xid), oldest
  // first, at most kMaxKernelEvents.
  std::vector<KernelEvent> kernel_events;
};

inline constexpr size_t kMaxKernelEvents = 32;

struct JobTrackerOptions {
  Env* env = nullptr;  // nullptr: Env::Default()
  discover::JobDetectionOptions detection;
  // Replaces detection (tests).
  std::function<Result<std::vector<discover::DetectedJob>>()> detect_override;
  std::string run_spool_dir;  // `vigil run` records; "" for none
  std::string kernel_log;     // "/dev/kmsg" in `vigil up`; "" for none (kernel_log.h)
  int64_t interval_ms = 5000;
  size_t max_ended = 200;
};

class JobTracker {
 public:
  explicit JobTracker(JobTrackerOptions options);
  ~JobTracker();  // Stop()s
  JobTracker(const JobTracker&) = delete;
  JobTracker& operator=(const JobTracker&) = delete;

  void Start();  // polls on its own thread
  void Stop();   // idempotent

  // One detection round (tests; the thread calls it).
  Status Poll();

  // Every known job: running ones first, then ended ones, newest first.
  std::vector<TrackedJob> Jobs() const;

 private:
  void Loop();
  void AttachKernelEvents();  // under mu_

  JobTrackerOptions options_;
  Env* env_;
  mutable std::mutex mu_;
  std::map<std::string, TrackedJob> jobs_;  // by id; guarded by mu_
  std::unique_ptr<KernelLog> kernel_log_;   // Poll() only
  bool kernel_log_failed_ = false;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::mutex wait_mu_;
  std::condition_variable wait_cv_;
};

}  // namespace vigil::collect::jobs
