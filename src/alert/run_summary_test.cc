// An ended run's summary, read from its own series in a real store through
// the query engine: numbers checked against what was written.
#include "alert/run_summary.h"

#include <gtest/gtest.h>

#include "alert/test_store.h"
#include "core/manual_clock_env.h"
#include "core/temp_dir.h"

namespace vigil::alert {
namespace {

constexpr int64_t kT0 = 1'764'633'600'000;  // 2025-12-02 00:00 UTC
constexpr int64_t kStepMs = 15'000;

// A run of node n1 that started at kT0 and ran `ms`, labelled by run.
diagnose::JobReport Ended(const std::string& id, const std::string& name, int64_t ms) {
  diagnose::JobReport r;
  r.node = "n1";
  r.job.id = id;
  r.job.name = name;
  r.job.start_time_ms = kT0;
  r.job.last_seen_ms = kT0 + ms;
  r.job.ended = true;
  r.by_run = true;
  return r;
}

class RunSummaryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    env_.now = kT0;
    store_.Open(tmp_.path(), &env_);
  }
  void TearDown() override { store_.Close(); }

  void Add(const std::string& name, wire::Labels labels, int64_t t, double v) {
    labels.insert(labels.begin(), {"__name__", name});
    wire::MetricBatch b;
    b.series.push_back({std::move(labels), {{t, v}}});
    ASSERT_TRUE(store_.db->Append(b).ok());
  }

  // A run of one hour on GPUs 0 and 1 of node n1: GPU 0 busy at 90 %, GPU 1
  // idle (2 %) for its first 15 minutes then at 80 %; memory up to 70 GiB;
  // the loss falls from 2.0 to 1.0 with its best (0.9) ten minutes before
  // the end; 1000 samples/s; an eval loss at the end.
  diagnose::JobReport OneHourRun() {
    for (int64_t t = kT0; t <= kT0 + 3'600'000; t += kStepMs) {
      double minute = static_cast<double>(t - kT0) / 60'000;
      Add("DCGM_FI_DEV_GPU_UTIL", {{"gpu", "0"}, {"node", "n1"}}, t, 90);
      Add("DCGM_FI_DEV_GPU_UTIL", {{"gpu", "1"}, {"node", "n1"}}, t, minute < 15 ? 2 : 80);
      Add("DCGM_FI_DEV_GPU_UTIL", {{"gpu", "2"}, {"node", "n1"}}, t, 0);  // not the run's
      Add("DCGM_FI_DEV_FB_USED", {{"gpu", "0"}, {"node", "n1"}}, t, minute < 30 ? 40960 : 71680);
      Add("DCGM_FI_DEV_FB_USED", {{"gpu", "2"}, {"node", "n1"}}, t, 80000);
      double loss = minute > 49 && minute < 51 ? 0.9 : 2.0 - minute / 60;
      Add("training_loss", {{"job", "train"}, {"node", "n1"}, {"run", "r-1"}}, t, loss);
      Add("training_loss", {{"job", "train"}, {"node", "n1"}, {"run", "r-0"}}, t, 0.1);
      Add("training_samples_per_second", {{"job", "train"}, {"node", "n1"}, {"run", "r-1"}}, t,
          1000);
    }
    Add("training_eval_loss", {{"job", "train"}, {"node", "n1"}, {"run", "r-1"}}, kT0 + 3'600'000,
        1.25);
    env_.now = kT0 + 3'601'000;
    diagnose::JobReport r = Ended("r-1", "train", 3'600'000);
    r.gpus = {{"0", "GPU-a", std::nullopt}, {"1", "GPU-b", std::nullopt}};
    return r;
  }

  TempDir tmp_;
  ManualClockEnv env_;
  TestStore store_;
};

TEST_F(RunSummaryTest, NumbersComeFromTheRunsOwnSeries) {
  diagnose::JobReport r = OneHourRun();
  RunSummaryInput in{&r, "exit status 0", 3, 2.5, "USD"};
  RunSummary s = SummarizeRun(*store_.query, in);
  EXPECT_EQ(s.duration_ms, 3'600'000);
  EXPECT_EQ(s.gpus, 2u);
  EXPECT_DOUBLE_EQ(s.gpu_hours, 2.0);
  ASSERT_TRUE(s.mean_gpu_util);
  // GPU 0 at 90; GPU 1 at 2 for a quarter, 80 after: about (90 + 60.5) / 2.
  EXPECT_NEAR(*s.mean_gpu_util, 75.2, 1.0);
  // The job page's split: busy is the utilisation share, the rest idle (the
  // host was never saturated), priced at 2.5 USD an hour.
  ASSERT_TRUE(s.efficiency && s.efficiency->shares);
  EXPECT_NEAR(s.efficiency->shares->gpu_busy, 0.752, 0.01);
  EXPECT_NEAR(s.efficiency->shares->idle, 0.248, 0.01);
  EXPECT_NEAR(s.efficiency->idle_gpu_hours.value_or(0), 0.496, 0.02);
  ASSERT_TRUE(s.gpu_memory_peak_mib);
  EXPECT_EQ(*s.gpu_memory_peak_mib, 71680);  // GPU 2's 80000 is another job's
  ASSERT_TRUE(s.final_loss);
  EXPECT_NEAR(*s.final_loss, 1.0, 1e-9);
  ASSERT_TRUE(s.best_loss);
  EXPECT_NEAR(*s.best_loss, 0.9, 1e-9);  // not run r-0's 0.1
  ASSERT_EQ(s.eval.count("eval_loss"), 1u);
  EXPECT_EQ(s.eval.at("eval_loss"), 1.25);
  ASSERT_TRUE(s.throughput);
  EXPECT_EQ(s.throughput->first, "samples/s");
  EXPECT_NEAR(s.throughput->second, 1000, 1e-9);

  std::string en = RenderRunSummary(s, false);
  EXPECT_NE(en.find("Ran 1h on 2 GPUs (2.00 GPU-hours)"), std::string::npos) << en;
  EXPECT_NE(en.find("GPU memory peak 70.0 GiB"), std::string::npos) << en;
  EXPECT_NE(en.find("final loss 1, best 0.9"), std::string::npos) << en;
  EXPECT_NE(en.find("eval_loss 1.25"), std::string::npos) << en;
  EXPECT_NE(en.find("GPU busy 75%, idle 25% (0.49 GPU-h idle, about 1.23 USD)"), std::string::npos)
      << en;
  EXPECT_NE(en.find("cost about 5.00 USD"), std::string::npos) << en;
  EXPECT_NE(en.find("3 alerts during the run"), std::string::npos) << en;
  EXPECT_NE(en.find("exit: exit status 0"), std::string::npos) << en;
  std::string zh = RenderRunSummary(s, true);
  EXPECT_NE(zh.find("GPU 小时"), std::string::npos) << zh;
  EXPECT_NE(zh.find("费用约 5.00 USD"), std::string::npos) << zh;
  EXPECT_NE(zh.find("GPU 忙碌 75%，空闲 25%"), std::string::npos) << zh;
}

// What a run never reported is left out, not shown as zero.
TEST_F(RunSummaryTest, ARunWithoutGpusOrTrainingSeriesSaysOnlyWhatIsKnown) {
  diagnose::JobReport r = Ended("r-9", "etl", 100'000);
  RunSummaryInput in{&r, "killed by signal 9", 0, 2.5, "USD"};
  RunSummary s = SummarizeRun(*store_.query, in);
  EXPECT_FALSE(s.mean_gpu_util);
  EXPECT_FALSE(s.final_loss);
  EXPECT_FALSE(s.throughput);
  std::string en = RenderRunSummary(s, false);
  EXPECT_EQ(en, "Ran 2m, no GPU\n0 alerts during the run\nexit: killed by signal 9");
}

TEST(PromQLStringTest, QuotesAndBackslashesAreEscaped) {
  EXPECT_EQ(PromQLString("a\"b\\c"), "\"a\\\"b\\\\c\"");
}

}  // namespace
}  // namespace vigil::alert
