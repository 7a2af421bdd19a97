// BoundedWorker: runs jobs on a dedicated thread so that the caller waits at
// most a deadline for each, even when a job never returns.
//
// Why: an NVML call can block forever after some Xid errors, and a read of
// /proc or statfs() on a dead NFS mount can block in the kernel. Such a call
// must stall only its own worker, never the collector loop or the server.
// While a job overruns, further jobs are refused at once (Unavailable), so a
// stuck driver costs one thread, not one thread per second. When the stuck job
// finally returns, the worker accepts jobs again: recovery is automatic.
//
// A job may outlive the Run() call that submitted it, so it must own (or share
// through shared_ptr) everything it touches; capturing references to the
// caller's stack is a bug.
//
// Thread safety: Run() may be called from any thread, one call at a time per
// worker (collectors own their worker). The mutex guards the job slot state.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "core/status.h"

namespace vigil {

class BoundedWorker {
 public:
  explicit BoundedWorker(std::string name);
  // Joins the thread if it is idle; detaches it if a job is stuck (the process
  // cannot get a thread back from a call that never returns).
  ~BoundedWorker();

  BoundedWorker(const BoundedWorker&) = delete;
  BoundedWorker& operator=(const BoundedWorker&) = delete;

  // Runs `job` on the worker thread and waits up to `timeout` for it.
  // DeadlineExceeded: the job is still running (it keeps running; the worker is
  // busy until it returns). Unavailable: an earlier job is still stuck.
  Status Run(std::function<void()> job, std::chrono::milliseconds timeout);

  // True while a job that overran its deadline has not yet returned.
  bool stuck() const;
  // How long the current stuck job has been running, 0 if none.
  std::chrono::milliseconds stuck_for() const;
  const std::string& name() const { return name_; }

 private:
  struct Shared;  // state shared with the thread; outlives this object if detached
  static void Loop(std::shared_ptr<Shared> s);
  std::string name_;
  std::shared_ptr<Shared> shared_;  // shared_ptr: the detached thread may outlive us
  std::thread thread_;
};

}  // namespace vigil
