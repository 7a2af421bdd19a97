#include "collect/jobs/job_shipper.h"

#include <gtest/gtest.h>

#include <mutex>
#include <vector>

#include "collect/jobs/job_history.h"
#include "wire/frame.h"

namespace vigil::collect::jobs {
namespace {

discover::DetectedJob Job(const std::string& id, int pid) {
  discover::DetectedJob j;
  j.id = id;
  j.name = "train";
  j.processes.push_back({pid, 1, discover::JobProcessRole::kRank, 0, 0, 1, "python train.py"});
  return j;
}

// What the server receives is the tracker's jobs, as a kind-4 frame; a
// server that is away is tried again at the next interval, and the shipper
// sends a last snapshot when it stops.
TEST(JobShipperTest, SendsTheTrackersJobsAsSnapshotsUntilStopped) {
  JobTrackerOptions o;
  std::vector<discover::DetectedJob> running = {Job("100-1", 100)};
  o.detect_override = [&] { return Result<std::vector<discover::DetectedJob>>(running); };
  JobTracker tracker(o);
  ASSERT_TRUE(tracker.Poll().ok());

  std::mutex mu;
  std::vector<wire::JobsSnapshot> got;
  int calls = 0;
  JobShipperOptions so;
  so.node = "gpu-7";
  so.interval_ms = 10;
  JobShipper shipper(&tracker, so, [&](std::string_view frame) -> Status {
    std::lock_guard lock(mu);
    if (++calls == 1) return Unavailable("server away");
    auto f = wire::DecodeFrame(frame);
    EXPECT_TRUE(f.ok());
    if (!f.ok()) return f.status();
    EXPECT_EQ(f->kind, wire::FrameKind::kJobs);
    auto s = wire::DecodeJobsSnapshot(f->payload);
    EXPECT_TRUE(s.ok());
    if (s.ok()) got.push_back(std::move(*s));
    return Status::Ok();
  });
  shipper.Start();
  for (int i = 0; i < 500; ++i) {
    {
      std::lock_guard lock(mu);
      if (got.size() >= 2) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  shipper.Stop();
  std::lock_guard lock(mu);
  ASSERT_GE(got.size(), 3u);  // two while running, one at Stop
  EXPECT_EQ(got[0].node, "gpu-7");
  ASSERT_EQ(got[0].jobs.size(), 1u);
  EXPECT_EQ(FromWire(got[0].jobs[0]).job, running[0]);
  EXPECT_FALSE(got[0].jobs[0].ended);
}

}  // namespace
}  // namespace vigil::collect::jobs
