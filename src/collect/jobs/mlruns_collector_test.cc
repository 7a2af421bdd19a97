#include "collect/jobs/mlruns_collector.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/temp_dir.h"

namespace vigil::collect::jobs {
namespace {

namespace fs = std::filesystem;

const wire::Series* Find(const wire::MetricBatch& b, std::string_view name, size_t nth = 0) {
  for (const auto& s : b.series) {
    if (wire::MetricName(s.labels) == name && nth-- == 0) return &s;
  }
  return nullptr;
}

TEST(MlflowMetricLine, ParsesTheFileStoreFormat) {
  int64_t t, step;
  double v;
  ASSERT_TRUE(ParseMlflowMetricLine("1764460800123 0.25 100", &t, &v, &step));
  EXPECT_EQ(t, 1764460800123);
  EXPECT_EQ(v, 0.25);
  EXPECT_EQ(step, 100);
  ASSERT_TRUE(ParseMlflowMetricLine("1764460800123 3", &t, &v, &step));  // old files: no step
  EXPECT_EQ(step, 0);
  EXPECT_FALSE(ParseMlflowMetricLine("", &t, &v, &step));
  EXPECT_FALSE(ParseMlflowMetricLine("abc 1 2", &t, &v, &step));
  EXPECT_FALSE(ParseMlflowMetricLine("1 2 3 4", &t, &v, &step));
}

// A job whose working directory holds MLflow's file store: the runs it
// writes now are followed; an older run is not news.
TEST(MlrunsCollectorTest, FollowsTheRunsOfARunningJob) {
  TempDir dir;
  const std::string run = dir.path() + "/mlruns/0/abc123";
  fs::create_directories(run + "/metrics/eval");
  std::ofstream(run + "/metrics/loss") << "1764460800000 0.5 1\n1764460801000 0.25 2\n";
  std::ofstream(run + "/metrics/eval/acc") << "1764460802000 0.9 2\n";
  const std::string old_run = dir.path() + "/mlruns/0/old999";
  fs::create_directories(old_run + "/metrics");
  std::ofstream(old_run + "/metrics/loss") << "1600000000000 9 1\n";
  auto long_ago = fs::file_time_type::clock::now() - std::chrono::hours(24 * 30);
  fs::last_write_time(old_run, long_ago);
  fs::last_write_time(old_run + "/metrics", long_ago);

  std::vector<discover::DetectedJob> running(1);
  running[0].id = "j-1";
  running[0].name = "train";
  running[0].start_time_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                 std::chrono::system_clock::now().time_since_epoch())
                                 .count() -
                             10'000;
  running[0].processes.push_back(discover::JobProcess{.pid = 4242});
  JobTrackerOptions o;
  o.detect_override = [&] { return Result<std::vector<discover::DetectedJob>>(running); };
  JobTracker tracker(o);
  ASSERT_TRUE(tracker.Poll().ok());
  MlrunsCollectorOptions co;
  co.cwd_of = [&](const std::string&, int pid) { return pid == 4242 ? dir.path() : ""; };
  MlrunsCollector collector(&tracker, co);

  wire::MetricBatchBuilder b1("gpu-1", 1);
  ASSERT_TRUE(collector.Collect(&b1).ok());
  EXPECT_EQ(collector.files(), 2u);
  ASSERT_NE(Find(b1.batch(), "training_loss"), nullptr);
  EXPECT_EQ(wire::LabelsToString(Find(b1.batch(), "training_loss")->labels),
            "{__name__=\"training_loss\",job=\"train\",mlflow_run=\"abc123\"}");
  EXPECT_EQ(Find(b1.batch(), "training_loss", 1)->samples[0].value, 0.25);
  EXPECT_EQ(Find(b1.batch(), "training_loss", 1)->samples[0].t_ms, 1764460801000);
  ASSERT_NE(Find(b1.batch(), "training_eval_acc"), nullptr);

  // More values, one half-written: complete lines only, nothing twice.
  std::ofstream(run + "/metrics/loss", std::ios::app) << "1764460803000 0.125 3\n1764460804";
  wire::MetricBatchBuilder b2("gpu-1", 2);
  ASSERT_TRUE(collector.Collect(&b2).ok());
  ASSERT_EQ(b2.batch().series.size(), 1u);
  EXPECT_EQ(b2.batch().series[0].samples[0].value, 0.125);
  std::ofstream(run + "/metrics/loss", std::ios::app) << "000 0.0625 4\n";
  wire::MetricBatchBuilder b3("gpu-1", 3);
  ASSERT_TRUE(collector.Collect(&b3).ok());
  ASSERT_EQ(b3.batch().series.size(), 1u);
  EXPECT_EQ(b3.batch().series[0].samples[0].t_ms, 1764460804000);

  // The job ends: its runs are let go.
  running.clear();
  ASSERT_TRUE(tracker.Poll().ok());
  wire::MetricBatchBuilder b4("gpu-1", 4);
  ASSERT_TRUE(collector.Collect(&b4).ok());
  EXPECT_EQ(collector.files(), 0u);
}

}  // namespace
}  // namespace vigil::collect::jobs
