#include "collect/jobs/job_shipper.h"

#include <chrono>

#include "collect/jobs/job_history.h"
#include "core/log.h"
#include "core/thread_name.h"
#include "wire/frame.h"

namespace vigil::collect::jobs {

JobShipper::JobShipper(const JobTracker* tracker, JobShipperOptions options, Sender send)
    : tracker_(tracker),
      options_(std::move(options)),
      env_(options_.env ? options_.env : Env::Default()),
      send_(std::move(send)) {}

JobShipper::~JobShipper() { Stop(); }

void JobShipper::Start() {
  if (thread_.joinable()) return;
  {
    std::lock_guard lock(wait_mu_);
    stop_ = false;
  }
  thread_ = std::thread([this] { Loop(); });
  NameThread(thread_, "vigil-jobship");
}

void JobShipper::Stop() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard lock(wait_mu_);
    stop_ = true;
  }
  wait_cv_.notify_all();
  thread_.join();
  (void)ShipOnce();  // the jobs as they are at shutdown, if the server is there
}

Status JobShipper::ShipOnce() {
  wire::JobsSnapshot snapshot =
      SnapshotOf(options_.node, env_->NowMillis(), tracker_->Jobs(), tracker_->NodeEvents());
  return send_(wire::EncodeFrame(wire::FrameKind::kJobs, EncodeWithinBound(std::move(snapshot)),
                                 options_.compress));
}

void JobShipper::Loop() {
  bool failing = false;
  std::unique_lock lock(wait_mu_);
  while (!stop_) {
    lock.unlock();
    Status st = ShipOnce();
    if (!st.ok() && !failing) {
      Logf(LogLevel::kWarn, "jobs not sent to the server (trying again every %lld s): %s",
           static_cast<long long>(options_.interval_ms / 1000), st.ToString().c_str());
    } else if (st.ok() && failing) {
      Log(LogLevel::kInfo, "jobs sent to the server again");
    }
    failing = !st.ok();
    lock.lock();
    wait_cv_.wait_for(lock, std::chrono::milliseconds(options_.interval_ms),
                      [this] { return stop_ || woken_; });
    woken_ = false;
  }
}

void JobShipper::Wake() {
  {
    std::lock_guard lock(wait_mu_);
    woken_ = true;
  }
  wait_cv_.notify_all();
}

}  // namespace vigil::collect::jobs
