#include "collect/jobs/tfevents_collector.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "core/temp_dir.h"
#include "parse/training/tfevents_test_util.h"

namespace vigil::collect::jobs {
namespace {

namespace tb = parse::training::testing;

discover::DetectedJob Job(const std::string& name, int pid) {
  discover::DetectedJob j;
  j.id = name + "-1";
  j.name = name;
  discover::JobProcess p;
  p.pid = pid;
  j.processes.push_back(p);
  return j;
}

const wire::Series* Find(const wire::MetricBatch& b, std::string_view name, size_t nth = 0) {
  for (const auto& s : b.series) {
    if (wire::MetricName(s.labels) == name && nth-- == 0) return &s;
  }
  return nullptr;
}

// A job of this very process holds an event file open, as a SummaryWriter
// does; the collector finds it through /proc/self's fds and follows it as
// it grows, then lets it go when the job ends.
TEST(TfEventsCollectorTest, FollowsTheEventFilesARunningJobHoldsOpen) {
  TempDir dir;
  std::string path = dir.path() + "/events.out.tfevents.1764460800.host.42.0";
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);
  auto write = [&](const std::string& bytes) {
    ASSERT_EQ(::write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  };
  std::string first =
      tb::FileVersionRecord() +
      tb::Record(tb::Event(1764460801.0, 10, {tb::SimpleValue("train/loss", 0.5f)}));
  write(first);

  std::vector<discover::DetectedJob> running = {Job("train", ::getpid())};
  JobTrackerOptions o;
  o.detect_override = [&] { return Result<std::vector<discover::DetectedJob>>(running); };
  JobTracker tracker(o);
  ASSERT_TRUE(tracker.Poll().ok());
  TfEventsCollector collector(&tracker);

  wire::MetricBatchBuilder b1("gpu-1", 1);
  ASSERT_TRUE(collector.Collect(&b1).ok());
  EXPECT_EQ(collector.files(), 1u);
  const wire::Series* loss = Find(b1.batch(), "training_train_loss");
  ASSERT_NE(loss, nullptr);
  EXPECT_EQ(wire::LabelsToString(loss->labels),
            "{__name__=\"training_train_loss\",job=\"train\",source=\"" + path + "\"}");
  ASSERT_EQ(loss->samples.size(), 1u);
  EXPECT_EQ(loss->samples[0].t_ms, 1764460801000);  // when the writer recorded it
  EXPECT_EQ(loss->samples[0].value, 0.5);

  // Half a record now, the rest later: nothing is lost or read twice.
  std::string next = tb::Record(tb::Event(
      1764460802.0, 20, {tb::SimpleValue("train/loss", 0.25f), tb::SimpleValue("lr", 0.001f)}));
  write(next.substr(0, 10));
  wire::MetricBatchBuilder b2("gpu-1", 2);
  ASSERT_TRUE(collector.Collect(&b2).ok());
  EXPECT_TRUE(b2.batch().series.empty());
  write(next.substr(10));
  wire::MetricBatchBuilder b3("gpu-1", 3);
  ASSERT_TRUE(collector.Collect(&b3).ok());
  ASSERT_NE(Find(b3.batch(), "training_train_loss"), nullptr);
  EXPECT_EQ(Find(b3.batch(), "training_train_loss")->samples[0].value, 0.25);
  ASSERT_NE(Find(b3.batch(), "training_lr"), nullptr);

  // The job ends: its file is read to its end, then let go.
  ::close(fd);
  running.clear();
  ASSERT_TRUE(tracker.Poll().ok());
  wire::MetricBatchBuilder b4("gpu-1", 4);
  ASSERT_TRUE(collector.Collect(&b4).ok());
  EXPECT_EQ(collector.files(), 0u);
}

TEST(TfEventsCollectorTest, ADamagedFileIsLeftAloneAndOtherFilesAreNotEventFiles) {
  TempDir dir;
  std::string bad = dir.path() + "/events.out.tfevents.bad";
  std::string log = dir.path() + "/train.log";
  std::ofstream(bad) << "this is not a TFRecord file at all";
  std::ofstream(log) << "loss=0.5\n";
  std::vector<discover::DetectedJob> running = {Job("train", 4242)};
  JobTrackerOptions o;
  o.detect_override = [&] { return Result<std::vector<discover::DetectedJob>>(running); };
  JobTracker tracker(o);
  ASSERT_TRUE(tracker.Poll().ok());
  TfEventsCollectorOptions co;
  co.open_files = [&](const std::string&, int pid) {
    return pid == 4242 ? std::vector<std::string>{bad, log} : std::vector<std::string>{};
  };
  TfEventsCollector collector(&tracker, co);
  for (int i = 0; i < 3; ++i) {
    wire::MetricBatchBuilder b("gpu-1", i);
    ASSERT_TRUE(collector.Collect(&b).ok());
    EXPECT_TRUE(b.batch().series.empty());
  }
  EXPECT_EQ(collector.files(), 1u);  // the event file, failed; the log is not one
}

// A process's open files are listed when it is first seen, then every
// rescan_every_passes passes; a file found meanwhile stays followed.
TEST(TfEventsCollectorTest, OpenFilesAreListedOnlyEveryFewPasses) {
  TempDir dir;
  std::string path = dir.path() + "/events.out.tfevents.1.host.7.0";
  std::ofstream(path) << tb::FileVersionRecord();
  std::vector<discover::DetectedJob> running = {Job("train", 4242)};
  JobTrackerOptions o;
  o.detect_override = [&] { return Result<std::vector<discover::DetectedJob>>(running); };
  JobTracker tracker(o);
  ASSERT_TRUE(tracker.Poll().ok());
  int listings = 0;
  TfEventsCollectorOptions co;
  co.rescan_every_passes = 5;
  co.open_files = [&](const std::string&, int) {
    ++listings;
    return std::vector<std::string>{path};
  };
  TfEventsCollector collector(&tracker, co);
  for (int i = 0; i < 10; ++i) {
    wire::MetricBatchBuilder b("gpu-1", i);
    ASSERT_TRUE(collector.Collect(&b).ok());
    EXPECT_EQ(collector.files(), 1u) << "pass " << i;
  }
  EXPECT_EQ(listings, 2);  // passes 1 and 6
  running.clear();         // the job ends: its file is let go at once
  ASSERT_TRUE(tracker.Poll().ok());
  wire::MetricBatchBuilder b("gpu-1", 11);
  ASSERT_TRUE(collector.Collect(&b).ok());
  EXPECT_EQ(collector.files(), 0u);
}

}  // namespace
}  // namespace vigil::collect::jobs
