// JobShipper: sends this node's jobs to the server it reports to. In `vigil
// agent` the jobs are found here, where they run, but listed by the central
// server with every other node's: every interval the shipper takes the
// tracker's jobs and the node's kernel events, encodes them as a snapshot
// (job_history.h) in a wire frame of kind 4, and hands it to the sender.
//
// A snapshot is the node's whole state, so there is no queue: one that fails
// is simply followed by the next (the server keeps the newest; docs/wire.md
// "Jobs"). `vigil up` needs none: its server reads the tracker directly.
//
// Thread safety: Start/Stop from one thread; ShipOnce is what the thread runs.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "collect/jobs/job_tracker.h"
#include "core/env.h"
#include "core/status.h"

namespace vigil::collect::jobs {

struct JobShipperOptions {
  std::string node;  // the snapshot's node name (the agent's source name)
  int64_t interval_ms = 10'000;
  bool compress = true;
  Env* env = nullptr;  // nullptr: Env::Default()
};

class JobShipper {
 public:
  // Delivers one frame; OK when the server kept it.
  using Sender = std::function<Status(std::string_view frame)>;

  JobShipper(const JobTracker* tracker, JobShipperOptions options, Sender send);
  ~JobShipper();  // Stop()s
  JobShipper(const JobShipper&) = delete;
  JobShipper& operator=(const JobShipper&) = delete;

  void Start();
  void Stop();  // idempotent; sends a last snapshot

  // Sends the tracker's jobs now.
  Status ShipOnce();
  // Has the thread send at once instead of at its next tick (a job started
  // or ended: JobTrackerOptions::on_change). Thread-safe.
  void Wake();

 private:
  void Loop();

  const JobTracker* tracker_;
  JobShipperOptions options_;
  Env* env_;
  Sender send_;
  std::thread thread_;
  std::mutex wait_mu_;
  std::condition_variable wait_cv_;
  bool stop_ = false;   // guarded by wait_mu_
  bool woken_ = false;  // guarded by wait_mu_
};

}  // namespace vigil::collect::jobs
