#include "diagnose/job_report.h"

#include <gtest/gtest.h>

#include "core/manual_clock_env.h"
#include "core/temp_dir.h"

namespace vigil::diagnose {
namespace {

constexpr int64_t kNow = 1'764'460'800'000;  // ms
constexpr int64_t kMin = 60'000;

// A job's training progress, read from its training_step series.
class JobProgressTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tsdb::Options to;
    to.dir = tmp_.path() + "/tsdb";
    to.env = &env_;
    auto db = tsdb::Db::Open(to);
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_ = std::move(*db);
  }
  void TearDown() override { ASSERT_TRUE(db_->Close().ok()); }

  // Job "train" on node n1, started an hour ago, still running.
  void Running() {
    wire::JobsSnapshot s;
    s.node = "n1";
    s.time_ms = kNow;
    wire::JobRecord j;
    j.id = "r-1";
    j.name = "train";
    j.start_time_ms = kNow - 60 * kMin;
    j.first_seen_ms = j.start_time_ms;
    j.last_seen_ms = kNow;
    s.jobs.push_back(j);
    ASSERT_TRUE(store_.Receive(wire::EncodeJobsSnapshot(s)).ok());
  }

  // training_step sampled every 5 s from the job's start to `until_ms`,
  // stepping every `every_ms` until `stall_ms`, then stuck.
  void Steps(int64_t every_ms, int64_t stall_ms, int64_t until_ms = kNow) {
    wire::MetricBatch b;
    wire::Series s;
    s.labels = {{"__name__", "training_step"}, {"job", "train"}, {"node", "n1"}};
    for (int64_t t = kNow - 60 * kMin; t <= until_ms; t += 5000) {
      s.samples.push_back(
          {t, static_cast<double>((std::min(t, stall_ms) - (kNow - 60 * kMin)) / every_ms)});
    }
    b.series.push_back(s);
    ASSERT_TRUE(db_->Append(b).ok());
  }

  StepProgress Progress() {
    JobReporter reporter({.jobs = &store_, .db = db_.get(), .env = &env_});
    auto reports = reporter.Reports();
    EXPECT_EQ(reports.size(), 1u);
    return reports.empty() ? StepProgress{} : reports[0].progress;
  }

  TempDir tmp_;
  ManualClockEnv env_{kNow};
  ingest::JobStore store_{{.env = &env_}};
  std::unique_ptr<tsdb::Db> db_;
};

TEST_F(JobProgressTest, ASteadyRunsLastChangeAndUsualInterval) {
  Running();
  Steps(10'000, kNow);
  StepProgress p = Progress();
  ASSERT_TRUE(p.last_step && p.last_change_ms && p.interval_ms);
  EXPECT_EQ(*p.last_step, 360);
  EXPECT_EQ(*p.last_step_ms, kNow);
  EXPECT_EQ(*p.last_change_ms, kNow);
  EXPECT_EQ(*p.interval_ms, 10'000);
}

// Stalled for longer than the recent past a report reads first: the last
// real change and the interval before it come from the whole window.
TEST_F(JobProgressTest, ARunStalledLongAgoIsJudgedOnTheWholeWindow) {
  Running();
  Steps(30'000, kNow - 40 * kMin);
  StepProgress p = Progress();
  ASSERT_TRUE(p.last_change_ms && p.interval_ms);
  EXPECT_EQ(*p.last_change_ms, kNow - 40 * kMin);
  EXPECT_EQ(*p.interval_ms, 30'000);
  EXPECT_EQ(*p.last_step, 40);
}

// A few changes in the recent past are not enough for the interval: the
// window's older changes count too.
TEST_F(JobProgressTest, ASlowRunsIntervalComesFromTheWholeWindow) {
  Running();
  Steps(2 * kMin, kNow);
  StepProgress p = Progress();
  ASSERT_TRUE(p.interval_ms);
  EXPECT_EQ(*p.interval_ms, 2 * kMin);
  EXPECT_EQ(*p.last_step, 30);
}

}  // namespace
}  // namespace vigil::diagnose
