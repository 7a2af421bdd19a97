#include "collect/jobs/job_tracker.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "core/manual_clock_env.h"
#include "core/temp_dir.h"

namespace vigil::collect::jobs {
namespace {

discover::DetectedJob Job(const std::string& id, int pid, int64_t start_ms) {
  discover::DetectedJob j;
  j.id = id;
  j.name = "train";
  j.start_time_ms = start_ms;
  discover::JobProcess p;
  p.pid = pid;
  p.start_time_ms = start_ms;
  j.processes.push_back(p);
  return j;
}

TEST(JobTrackerTest, JobsStartRunAndEndWithTheirVigilRunExit) {
  TempDir dir;
  ManualClockEnv env;
  std::vector<discover::DetectedJob> now_running;
  JobTrackerOptions o;
  o.env = &env;
  o.run_spool_dir = dir.path();
  o.detect_override = [&] { return Result<std::vector<discover::DetectedJob>>(now_running); };
  JobTracker tracker(o);

  const int64_t t0 = env.now;
  now_running = {Job("100-1", 100, t0), Job("200-2", 200, t0 + 10)};
  ASSERT_TRUE(tracker.Poll().ok());
  auto jobs = tracker.Jobs();
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_FALSE(jobs[0].ended);
  EXPECT_EQ(jobs[0].job.id, "200-2");  // newest first
  EXPECT_EQ(jobs[0].first_seen_ms, t0);

  // Job 100 ends; `vigil run` recorded how.
  std::ofstream(dir.path() + "/train.1-99.json")
      << R"({"name":"train","cmd":["python","train.py"],"pid":100,"started_ms":)" << t0
      << R"(,"ended_ms":)" << t0 + 5000 << R"(,"signal":15,"signal_name":"TERM"})";
  std::ofstream(dir.path() + "/junk.json") << "{not json";
  env.now += 5000;
  now_running = {Job("200-2", 200, t0 + 10)};
  ASSERT_TRUE(tracker.Poll().ok());
  jobs = tracker.Jobs();
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[0].job.id, "200-2");
  EXPECT_FALSE(jobs[0].ended);
  EXPECT_EQ(jobs[0].last_seen_ms, env.now);
  EXPECT_EQ(jobs[1].job.id, "100-1");
  EXPECT_TRUE(jobs[1].ended);
  EXPECT_EQ(jobs[1].last_seen_ms, t0);
  ASSERT_TRUE(jobs[1].run_exit.has_value());
  EXPECT_EQ(jobs[1].run_exit->signal_name, "TERM");
  EXPECT_FALSE(jobs[1].run_exit->exit_code.has_value());
}

TEST(JobTrackerTest, ARecordOfAReusedPidIsItsOwnJobNotTheDetectedOnes) {
  TempDir dir;
  ManualClockEnv env;
  std::vector<discover::DetectedJob> now_running = {Job("100-1", 100, env.now)};
  JobTrackerOptions o;
  o.env = &env;
  o.run_spool_dir = dir.path();
  o.detect_override = [&] { return Result<std::vector<discover::DetectedJob>>(now_running); };
  JobTracker tracker(o);
  ASSERT_TRUE(tracker.Poll().ok());
  // Same pid, but a command that ran an hour earlier: history of its own.
  std::ofstream(dir.path() + "/old.1-99.json")
      << R"({"name":"old","pid":100,"cmd":["python","old.py"],"started_ms":)" << env.now - 3'600'000
      << R"(,"ended_ms":)" << env.now - 3'000'000 << R"(,"exit_code":0})";
  now_running.clear();
  ASSERT_TRUE(tracker.Poll().ok());
  auto jobs = tracker.Jobs();
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[0].job.id, "100-1");
  EXPECT_TRUE(jobs[0].ended);
  EXPECT_FALSE(jobs[0].run_exit.has_value());
  EXPECT_EQ(jobs[1].job.name, "old");
  EXPECT_EQ(jobs[1].job.processes[0].cmdline, "python old.py");
  EXPECT_EQ(jobs[1].last_seen_ms, env.now - 3'000'000);
  ASSERT_TRUE(jobs[1].run_exit.has_value());
  EXPECT_EQ(jobs[1].run_exit->exit_code, 0);
}

// A command detection does not recognise (a shell script) is a job when the
// user ran it under `vigil run`.
TEST(JobTrackerTest, AnUnrecognisedVigilRunCommandIsAJob) {
  TempDir dir;
  ManualClockEnv env;
  JobTrackerOptions o;
  o.env = &env;
  o.run_spool_dir = dir.path();
  o.detect_override = [] {
    return Result<std::vector<discover::DetectedJob>>(std::vector<discover::DetectedJob>{});
  };
  JobTracker tracker(o);
  const int alive = ::getpid();
  std::ofstream(dir.path() + "/etl.1-2.json")
      << R"({"name":"etl","pid":)" << alive << R"(,"cmd":["bash","etl.sh"],"started_ms":)"
      << env.now << "}";
  ASSERT_TRUE(tracker.Poll().ok());
  auto jobs = tracker.Jobs();
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].job.name, "etl");
  EXPECT_FALSE(jobs[0].ended);
  // It ends: the record says how.
  std::ofstream(dir.path() + "/etl.1-2.json")
      << R"({"name":"etl","pid":)" << alive << R"(,"started_ms":)" << env.now << R"(,"ended_ms":)"
      << env.now + 10 << R"(,"exit_code":3})";
  env.now += 5000;
  ASSERT_TRUE(tracker.Poll().ok());
  jobs = tracker.Jobs();
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_TRUE(jobs[0].ended);
  ASSERT_TRUE(jobs[0].run_exit.has_value());
  EXPECT_EQ(jobs[0].run_exit->exit_code, 3);
}

TEST(JobTrackerTest, EndedJobsAreBounded) {
  ManualClockEnv env;
  std::vector<discover::DetectedJob> now_running;
  JobTrackerOptions o;
  o.env = &env;
  o.max_ended = 3;
  o.detect_override = [&] { return Result<std::vector<discover::DetectedJob>>(now_running); };
  JobTracker tracker(o);
  for (int i = 0; i < 10; ++i) {
    now_running = {Job("job-" + std::to_string(i), 1000 + i, env.now)};
    ASSERT_TRUE(tracker.Poll().ok());
    env.now += 1000;
  }
  now_running.clear();
  ASSERT_TRUE(tracker.Poll().ok());
  auto jobs = tracker.Jobs();
  ASSERT_EQ(jobs.size(), 3u);
  EXPECT_EQ(jobs[0].job.id, "job-9");
}

TEST(JobTrackerTest, RunsOnTheRealProcAndStops) {
  JobTrackerOptions o;
  o.interval_ms = 10;
  JobTracker tracker(o);
  ASSERT_TRUE(tracker.Poll().ok());
  tracker.Start();
  tracker.Stop();
  tracker.Stop();
}

}  // namespace
}  // namespace vigil::collect::jobs
