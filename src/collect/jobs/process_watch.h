// ProcessWatcher: process starts and exits as they happen, so a job that
// dies at start-up (ImportError, a bad path, CUDA OOM on the first batch) is
// still found and reported, though it lived far less than a detection pass.
//
// On the kernel's exec event (discover/proc_events.h: the connector, else a
// 250 ms poll of /proc's pids) it snapshots the process at once
// (discover/proc_snapshot.h: stat, command line, environment, maps, cgroup,
// cwd, the files of its stdout and stderr) and refreshes that snapshot while
// the process is young; on its exit, a snapshot with evidence of a job by
// detection's own rules (discover::HasJobEvidence) is handed to the tracker
// (TakeDeparted), with the exit status the connector gave. It also keeps the
// exit statuses of the processes of running jobs (SetWatched), so any job's
// end is known at once and with its status.
//
// Bounded and cheap: commands that are never a job (shells, daemons, `tail`;
// discover::NeverAJobProgram) cost one cmdline read and no snapshot; at most
// max_pending young processes are followed (the oldest dropped first; older
// than pending_max_age_ms, a process is the detection pass's), at most
// max_departed wait for the tracker, at most max_exits statuses are kept.
//
// Thread safety: Start/Stop from the owner; TakeDeparted, SetWatched, ExitOf,
// Stats and mode from any thread (mu_ guards what they share with the
// watcher's thread). HandleEvents/Tick are the thread's steps, public for
// tests that drive a watcher without its thread (never both at once).
#pragma once

#include <atomic>
#include <cstdint>
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

#include "core/env.h"
#include "discover/proc_events.h"
#include "discover/proc_snapshot.h"

namespace vigil::collect::jobs {

struct ProcessExit {
  int64_t time_ms = 0;           // when the watcher learnt of it (wall clock)
  std::optional<int> exit_code;  // from the connector; unknown from the poll
  std::optional<int> signal;     // the signal that killed it
};

struct DepartedProcess {
  discover::ProcSnapshot snapshot;  // as it last was while alive
  ProcessExit exit;
};

struct ProcessWatcherOptions {
  Env* env = nullptr;  // nullptr: Env::Default()
  std::string proc_root = "/proc";
  // False: the /proc poll even where the connector is permitted
  // (VIGIL_PROC_EVENTS=poll; tests of the fallback).
  bool use_connector = true;
  int poll_interval_ms = 250;
  // With no young process to look at again, the connector is waited on this
  // long: an event ends the wait at once, so only the idle wake-ups go.
  int idle_wait_ms = 5000;
  size_t max_pending = 64;
  size_t max_departed = 64;
  size_t max_exits = 1024;
  int64_t pending_max_age_ms = 10'000;
  int self_pid = 0;  // 0: this process
  // Called on the watcher's thread when a job-like process or a watched one
  // exited (the tracker runs a pass soon). Must not block.
  std::function<void()> on_exit;
};

struct ProcessWatcherStats {
  uint64_t events = 0;            // exec and exit events handled
  uint64_t snapshots = 0;         // processes snapshotted on exec
  uint64_t pending_dropped = 0;   // young processes no longer followed (the bound)
  uint64_t departed = 0;          // handed to the tracker
  uint64_t departed_dropped = 0;  // lost because the tracker did not take them in time
};

class ProcessWatcher {
 public:
  explicit ProcessWatcher(ProcessWatcherOptions options);
  ~ProcessWatcher();  // Stop()s
  ProcessWatcher(const ProcessWatcher&) = delete;
  ProcessWatcher& operator=(const ProcessWatcher&) = delete;

  // Opens the connector (falling back to the poll, with one log line saying
  // why) and starts the thread.
  void Start();
  void Stop();  // idempotent

  // Replaces the event source (tests); before Start or without it.
  void SetSource(std::unique_ptr<discover::ProcEventSource> source);

  // Job-like processes that exited since the last call, oldest first.
  std::vector<DepartedProcess> TakeDeparted();
  // The pids whose exit statuses to keep (the running jobs' processes).
  void SetWatched(std::set<int> pids);
  // The exit of a watched or departed pid, if one was seen.
  std::optional<ProcessExit> ExitOf(int pid) const;

  ProcessWatcherStats Stats() const;
  std::string mode() const;  // "connector", "poll", or "" before Start

  // The thread's steps.
  void HandleEvents(const std::vector<discover::ProcEvent>& events);
  void Tick();       // refreshes young snapshots; departs those gone (poll mode)
  int NextWaitMs();  // the connector wait: short while a young process is followed

 private:
  struct Pending {
    discover::ProcSnapshot snapshot;
    int64_t captured_mono_ms = 0;  // first capture (age)
    // Looks again at this time, then twice as late each time: imports land
    // in the first seconds, and a hundred young `make` children must not
    // cost a hundred snapshots every tick.
    int64_t next_look_mono_ms = 0;
    int64_t look_gap_ms = 0;
    int gone_ticks = 0;  // ticks that found it gone, awaiting its exit event
  };
  void Loop();
  // `first_look`: from an event, not a recheck (which does not recheck again).
  void OnExec(int pid, bool first_look);
  void OnExit(int pid, ProcessExit exit);          // under mu_
  void Depart(Pending pending, ProcessExit exit);  // under mu_

  ProcessWatcherOptions options_;
  Env* env_;
  int self_pid_;
  std::unique_ptr<discover::ProcEventSource> source_;  // the thread's
  bool connector_ = false;

  mutable std::mutex mu_;
  std::map<int, Pending> pending_;        // by pid; guarded by mu_
  std::map<int, int> recheck_;            // poll mode: pid -> ticks left; guarded by mu_
  std::deque<DepartedProcess> departed_;  // guarded by mu_
  std::set<int> watched_;                 // guarded by mu_
  std::map<int, ProcessExit> exits_;      // guarded by mu_
  std::deque<int> exit_order_;            // guarded by mu_: oldest first, to bound exits_
  ProcessWatcherStats stats_;             // guarded by mu_
  std::string mode_;                      // guarded by mu_

  std::thread thread_;
  std::atomic<bool> stop_{false};
};

}  // namespace vigil::collect::jobs
