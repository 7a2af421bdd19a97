// JobTracker: the lifecycle of the jobs on this node. Every few seconds it
// runs job detection (discover/jobs.h) and keeps, per job id, what was last
// seen, when it started and when it was last alive. One process is one job
// (a detected job holding a tracked job's process keeps that job's id), and
// a state changes only on evidence: a job detection no longer lists has
// ended only when its processes are gone (by pid and start ticks; an
// unreadable /proc entry proves nothing), and an end is final
// (docs/jobs.md "How a job ends"). `vigil run` records (spool/run/*.json) add
// two things: the exit status or signal of a job whose process the wrapper
// ran, and jobs of their own for commands detection does not recognise (the
// user said it is a job by wrapping it), including ones that ended before
// this instance started. The verdict (crashed or completed, and why) is made
// by the server, which also has the job's logs and metrics
// (diagnose/job_report.h); the tracker's jobs reach it as a snapshot
// (job_shipper.h, wire/jobs.h), in `vigil up` as from any agent.
//
// Bounded: ended jobs are kept, the newest max_ended of them, in memory and
// in the history file (job_history.h), so they survive a restart. The
// kernel's events (OOM kills, Xid errors) are also kept per node, the newest
// max_node_events, whether or not a job's process was named.
//
// Short-lived jobs (a crash at start-up, between two passes) come from the
// process watcher (process_watch.h): their snapshots are judged by
// detection's rules (JobDetectionOptions::departed), listed as ended with
// the exit status the kernel gave, and their stdout/stderr files handed to
// the log agent (ShortLivedLogSources). The watcher also wakes the tracker
// when a running job's process exits, and gives its exit status.
//
// Thread safety: Jobs(), NodeEvents(), ShortLivedLogSources() and Wake() may
// be called from any thread while the tracker's own thread polls; mu_ guards
// the jobs, events and kept sources.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "collect/jobs/kernel_log.h"
#include "collect/jobs/process_watch.h"
#include "core/env.h"
#include "core/status.h"
#include "discover/jobs.h"
#include "discover/log_sources.h"
#include "discover/run_records.h"
#include "wire/jobs.h"

namespace vigil::collect::jobs {

// How a `vigil run` wrapper saw its command end (its spool record): the
// wire's record as it is, nothing to add on this side.
using RunExit = wire::RunExitRecord;

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

// A kernel event on this node, and the job it was given to ("" for none: an
// Xid the driver could not tie to a process, an OOM kill of another program).
struct NodeKernelEvent {
  KernelEvent kernel;
  std::string job_id;
};

struct JobTrackerOptions {
  Env* env = nullptr;  // nullptr: Env::Default()
  // Called after a pass that started or ended a job, outside the tracker's
  // lock (the job shipper sends the news at once, not at its next tick).
  std::function<void()> on_change;
  discover::JobDetectionOptions detection;
  // The processes NVML lists running CUDA work (GpuStatus::compute_pids),
  // asked at every pass; unset: none.
  std::function<std::vector<int>()> gpu_pids;
  // Replaces detection (tests).
  std::function<Result<std::vector<discover::DetectedJob>>()> detect_override;
  std::string run_spool_dir;  // `vigil run` records; "" for none
  std::string kernel_log;     // "/dev/kmsg" in `vigil up`; "" for none (kernel_log.h)
  // The job history file (job_history.h); "" keeps jobs in memory only.
  std::string history_path;
  int64_t interval_ms = 5000;
  size_t max_ended = 200;
  size_t max_node_events = 256;
  // The history is rewritten when jobs start, end or gain evidence, and at
  // least this often while any runs (their last_seen_ms moves).
  int64_t history_refresh_ms = 60'000;
  // Learn of process starts and exits as they happen (process_watch.h):
  // short-lived jobs, and every job's exit status where the kernel's
  // connector is permitted. `watcher` (not owned) replaces the tracker's
  // own (tests).
  bool watch_processes = false;
  ProcessWatcherOptions watch;
  ProcessWatcher* watcher = nullptr;
  // A pass the watcher asks for (a job's process exited) waits at least
  // this long after the last one, and kBurstMs after the exit.
  int64_t min_woken_interval_ms = 500;
  // How long the log files of a job seen only after its end stay log
  // sources (ShortLivedLogSources), and how many are kept.
  int64_t short_lived_source_ms = 5 * 60'000;
  size_t max_short_lived_sources = 64;
};

class JobTracker {
 public:
  // How long a woken pass waits after an exit, so the exits of a job's
  // ranks (which come within milliseconds) make one pass.
  static constexpr int64_t kBurstMs = 50;
  // Reads the history file, if any (a bad one is set aside with a warning).
  explicit JobTracker(JobTrackerOptions options);
  ~JobTracker();  // Stop()s
  JobTracker(const JobTracker&) = delete;
  JobTracker& operator=(const JobTracker&) = delete;

  void Start();  // polls on its own thread
  void Stop();   // idempotent; writes the history a last time

  // One detection round (tests; the thread calls it).
  Status Poll();

  // Every known job: running ones first, then ended ones, newest first.
  std::vector<TrackedJob> Jobs() const;

  // The kernel's events on this node, oldest first.
  std::vector<NodeKernelEvent> NodeEvents() const;

  // The stdout/stderr files of jobs found only after their processes had
  // exited (a crash at start-up), for the log agent, which finds files
  // through live processes only (LogAgentOptions::extra_sources): labelled
  // as discovery labels a process's (job, stream, source).
  std::vector<discover::LogSource> ShortLivedLogSources() const;
  // The id of the job that holds process `pid` (a launcher, rank or helper
  // of it), running or ended in the last 5 minutes, "" when none does: the
  // log agent's `run` label (LogAgentOptions::run_of). Thread-safe.
  std::string RunIdOf(int pid) const;
  // The run a log source belongs to: its writer's (above), else the one job
  // in the container whose log it is (its `container_id` label, a prefix of
  // the job's container id); "" when none, or when the container holds
  // several jobs and its log cannot say whose lines are whose.
  std::string RunIdOf(const discover::LogSource& source) const;
  // Has the polling thread run a pass now (Wake) and waits for it, at most
  // `timeout_ms`: the log agent's refresh before it asks RunIdOf again about
  // a file found before its job was. Returns at once when not Start()ed.
  void Refresh(int64_t timeout_ms);

  // Asks for a pass soon (the watcher: a job's process exited).
  void Wake();

 private:
  void Loop();
  void AttachKernelEvents();  // under mu_
  // What one pass has seen so far.
  struct PassState {
    std::set<std::string> seen_ids;
    std::map<int, const discover::ProcSnapshot*> snapshots;  // of departed processes, by pid
  };
  void TakeDeparted();  // Poll() only, before detection
  // Under mu_: a job this pass lists; the `vigil run` records; the pids
  // whose exits the watcher keeps.
  TrackedJob* Seen(discover::DetectedJob job, int64_t now, PassState* pass);
  void ApplyRunRecords(const std::vector<discover::RunRecord>& records, int64_t now,
                       PassState* pass);
  void WatchRunning();
  // Under mu_: the id a detected job is tracked by; whether a job detection
  // did not list still runs; and ending the ones that are gone.
  std::string IdFor(const discover::DetectedJob& job) const;
  discover::Liveness Confirm(const TrackedJob& t) const;
  void EndUnseen(const std::set<std::string>& seen_ids, int64_t now);
  // Under mu_: what the kernel said of how a job's anchor process ended.
  void AttachExit(TrackedJob* t);
  void KeepLogSources(const discover::DetectedJob& job,
                      const std::map<int, const discover::ProcSnapshot*>& snaps, int64_t now);
  // Writes the history when it changed in substance, or when `force`.
  void SaveHistory(bool force);

  JobTrackerOptions options_;
  Env* env_;
  const std::string boot_id_;         // this boot's: history jobs of another are gone
  discover::UserNames* const users_;  // names the owners of `vigil run` records' jobs
  mutable std::mutex mu_;
  std::map<std::string, TrackedJob> jobs_;   // by id; guarded by mu_
  std::deque<NodeKernelEvent> node_events_;  // guarded by mu_
  // What the last saved history held, in substance (SaveHistory).
  std::string saved_key_;
  int64_t saved_ms_ = 0;
  std::unique_ptr<ProcessWatcher> own_watcher_;
  ProcessWatcher* watcher_ = nullptr;  // own_watcher_ or options_.watcher; may be null
  std::map<int, ProcessExit> exits_;   // Poll() only: of this pass's departed processes
  struct KeptSource {
    discover::LogSource source;
    int64_t until_ms = 0;
  };
  std::deque<KeptSource> short_lived_sources_;   // guarded by mu_
  std::unique_ptr<KernelLog> kernel_log_;        // Poll() only
  discover::JobDetectionCache detection_cache_;  // Poll() only: what passes read of maps
  bool kernel_log_failed_ = false;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::mutex wait_mu_;
  std::condition_variable wait_cv_;
  // Passes the polling thread has finished; pass_cv_ (with wait_mu_) tells
  // Refresh() waiters.
  uint64_t passes_ = 0;  // guarded by wait_mu_
  std::condition_variable pass_cv_;
  // Between Start() and Stop(): whether Refresh() has passes to wait for
  // (read from other threads, so not thread_.joinable()).
  std::atomic<bool> polling_{false};
  bool woken_ = false;  // guarded by wait_mu_
};

}  // namespace vigil::collect::jobs
