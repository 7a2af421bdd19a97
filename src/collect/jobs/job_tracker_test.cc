#include "collect/jobs/job_tracker.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/manual_clock_env.h"
#include "core/temp_dir.h"
#include "discover/fake_tree_test_util.h"

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

  // The run a process is in names its log lines (`run`): running jobs, and
  // for five minutes ended ones (a short job's stderr is found late).
  EXPECT_EQ(tracker.RunIdOf(200), "200-2");
  EXPECT_EQ(tracker.RunIdOf(100), "100-1");
  EXPECT_EQ(tracker.RunIdOf(300), "");
  env.now += 6 * 60'000;
  now_running = {Job("200-2", 200, t0 + 10)};
  ASSERT_TRUE(tracker.Poll().ok());
  EXPECT_EQ(tracker.RunIdOf(100), "");
  EXPECT_EQ(tracker.RunIdOf(200), "200-2");
}

TEST(JobTrackerTest, TheVigilRunNameWinsOverTheDetectedOne) {
  TempDir dir;
  ManualClockEnv env;
  // Detection recognised the command as a training script and named it by
  // its file; the user ran it as `vigil run --name crashy`.
  std::vector<discover::DetectedJob> now_running = {Job("100-1", 100, env.now)};
  JobTrackerOptions o;
  o.env = &env;
  o.run_spool_dir = dir.path();
  o.detect_override = [&] { return Result<std::vector<discover::DetectedJob>>(now_running); };
  JobTracker tracker(o);
  std::ofstream(dir.path() + "/crashy.1-99.json")
      << R"({"name":"crashy","cmd":["python","train.py"],"pid":100,"started_ms":)" << env.now
      << "}";
  ASSERT_TRUE(tracker.Poll().ok());
  ASSERT_EQ(tracker.Jobs().size(), 1u);
  EXPECT_EQ(tracker.Jobs()[0].job.name, "crashy");
}

TEST(JobTrackerTest, AContainerLogBelongsToTheOneJobInItsContainer) {
  TempDir dir;
  ManualClockEnv env;
  const std::string c1(64, 'a'), c2 = std::string(12, 'b') + std::string(52, 'c');
  std::vector<discover::DetectedJob> now_running = {
      Job("100-1", 100, env.now), Job("200-2", 200, env.now), Job("300-3", 300, env.now)};
  now_running[0].container_id = c1;
  now_running[1].container_id = c2;
  now_running[2].container_id = c2;
  JobTrackerOptions o;
  o.env = &env;
  o.run_spool_dir = dir.path();
  o.detect_override = [&] { return Result<std::vector<discover::DetectedJob>>(now_running); };
  JobTracker tracker(o);
  ASSERT_TRUE(tracker.Poll().ok());

  auto docker_log = [](std::string short_id, int writer) {
    discover::LogSource s;
    s.labels = {{"container_id", std::move(short_id)}, {"job", "trainer"}};
    s.writer_pid = writer;
    return s;
  };
  EXPECT_EQ(tracker.RunIdOf(docker_log(c1.substr(0, 12), 0)), "100-1");
  // Two jobs in one container: its log cannot say whose lines are whose,
  // unless the source knows its writer.
  EXPECT_EQ(tracker.RunIdOf(docker_log(c2.substr(0, 12), 0)), "");
  EXPECT_EQ(tracker.RunIdOf(docker_log(c2.substr(0, 12), 300)), "300-3");
  EXPECT_EQ(tracker.RunIdOf(docker_log(std::string(12, 'd'), 0)), "");
  EXPECT_EQ(tracker.RunIdOf(docker_log("aaaa", 0)), "");  // too short to be sure
  // A container's run ends with its job: a new job in it is a new run.
  now_running = {Job("400-4", 400, env.now)};
  now_running[0].container_id = c1;
  env.now += 5000;
  ASSERT_TRUE(tracker.Poll().ok());
  EXPECT_EQ(tracker.RunIdOf(docker_log(c1.substr(0, 12), 0)), "400-4");
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
// A tracker whose jobs come from the `vigil run` records in `spool` alone.
JobTrackerOptions RecordsOnly(Env* env, const std::string& spool) {
  JobTrackerOptions o;
  o.env = env;
  o.run_spool_dir = spool;
  o.detect_override = [] {
    return Result<std::vector<discover::DetectedJob>>(std::vector<discover::DetectedJob>{});
  };
  return o;
}

TEST(JobTrackerTest, AnUnrecognisedVigilRunCommandIsAJob) {
  TempDir dir;
  ManualClockEnv env;
  JobTrackerOptions o = RecordsOnly(&env, dir.path());
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
  // Its owner is its command's (this test's) real uid.
  EXPECT_EQ(jobs[0].job.uid, ::getuid());
  EXPECT_EQ(jobs[0].job.user, discover::UserNames::Default()->NameOf(::getuid()));
  // Later passes: still running while its command runs (no running ->
  // exited -> killed flap).
  const int64_t started = env.now;
  for (int i = 0; i < 3; ++i) {
    env.now += 5000;
    ASSERT_TRUE(tracker.Poll().ok());
    jobs = tracker.Jobs();
    ASSERT_EQ(jobs.size(), 1u);
    EXPECT_FALSE(jobs[0].ended);
    EXPECT_EQ(jobs[0].last_seen_ms, env.now);
  }
  // It ends: the record says how.
  std::ofstream(dir.path() + "/etl.1-2.json")
      << R"({"name":"etl","pid":)" << alive << R"(,"started_ms":)" << started << R"(,"ended_ms":)"
      << env.now + 10 << R"(,"exit_code":3})";
  env.now += 5000;
  ASSERT_TRUE(tracker.Poll().ok());
  jobs = tracker.Jobs();
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_TRUE(jobs[0].ended);
  ASSERT_TRUE(jobs[0].run_exit.has_value());
  EXPECT_EQ(jobs[0].run_exit->exit_code, 3);
}

// A `vigil run` that ended before this instance started: its command's
// /proc entry is gone, so the owner is whoever wrote the record.
TEST(JobTrackerTest, AnEndedRecordsJobIsOwnedByTheRecordsWriter) {
  TempDir dir;
  ManualClockEnv env;
  JobTrackerOptions o = RecordsOnly(&env, dir.path());
  discover::UserNames users(discover::UserNamesOptions{
      .lookup = [](uint32_t uid) { return std::optional("user" + std::to_string(uid)); }});
  o.detection.users = &users;
  const std::string record = dir.path() + "/etl.1-2.json";
  std::ofstream(record) << R"({"name":"etl","pid":2147483646,"started_ms":5,"ended_ms":9,)"
                        << R"("exit_code":0})";
  uid_t writer = ::getuid();
  if (::geteuid() == 0) {
    writer = 65534;  // as `vigil run` of another user wrote it
    ASSERT_EQ(::chown(record.c_str(), writer, writer), 0);
  }
  JobTracker tracker(o);
  ASSERT_TRUE(tracker.Poll().ok());
  auto jobs = tracker.Jobs();
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_TRUE(jobs[0].ended);
  EXPECT_EQ(jobs[0].job.uid, writer);
  EXPECT_EQ(jobs[0].job.user, "user" + std::to_string(writer));
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

// A fake /proc with one PyTorch training process, detected for real.
class FakeProcTracker : public ::testing::Test {
 protected:
  FakeProcTracker() : proc_(dir_.Join("proc")) {
    SetBootTime(1'700'000'000);
    discover::testing::WriteFile(proc_.root() + "/sys/kernel/random/boot_id",
                                 "90b22de2-6ed8-4f8b-9a12-ae2696ea5996\n");
    AddTrainer(4242, 777);
    o_.env = &env_;
    o_.detection.proc_root = proc_.root();
    o_.detection.self_pid = 99999;
  }
  void SetBootTime(int64_t btime) {
    discover::testing::WriteFile(proc_.root() + "/stat",
                                 "cpu 1 2 3\nbtime " + std::to_string(btime) + "\n");
  }
  void AddTrainer(int pid, uint64_t ticks) {
    proc_.AddProcess(pid, {"/usr/bin/python3", "train.py"}, "python3", ticks);
    discover::testing::WriteFile(
        proc_.PidDir(pid) + "/maps",
        "7f00-7f01 r-xp 0 08:01 1 /usr/lib/python3/dist-packages/torch/lib/libtorch_cpu.so\n");
  }
  TrackedJob Only() {
    auto jobs = tracker_->Jobs();
    EXPECT_EQ(jobs.size(), 1u);
    return jobs.empty() ? TrackedJob{} : jobs[0];
  }
  TempDir dir_;
  discover::testing::FakeProc proc_;
  ManualClockEnv env_;
  JobTrackerOptions o_;
  std::unique_ptr<JobTracker> tracker_;
};

// Issue 13: btime jitters by a second; the job keeps its id and its start.
TEST_F(FakeProcTracker, OneProcessIsOneJobWhileTheClockMoves) {
  tracker_ = std::make_unique<JobTracker>(o_);
  ASSERT_TRUE(tracker_->Poll().ok());
  const TrackedJob first = Only();
  EXPECT_EQ(first.job.id, "4242-777-90b22de2");
  for (int64_t btime : {1'700'000'001, 1'699'999'999, 1'700'000'000}) {
    SetBootTime(btime);
    env_.now += 5000;
    ASSERT_TRUE(tracker_->Poll().ok());
    TrackedJob t = Only();
    EXPECT_EQ(t.job.id, first.job.id);
    EXPECT_FALSE(t.ended);
    EXPECT_EQ(t.job.start_time_ms, first.job.start_time_ms);  // computed once
    EXPECT_EQ(t.job.processes[0].start_time_ms, first.job.processes[0].start_time_ms);
  }
}

// A state changes on evidence only: a /proc entry that cannot be read, or a
// pass that misses the job, does not end it; a gone process does, for good.
TEST_F(FakeProcTracker, OnlyProofOfDeathEndsAJobAndAnEndIsFinal) {
  tracker_ = std::make_unique<JobTracker>(o_);
  ASSERT_TRUE(tracker_->Poll().ok());
  const std::string id = Only().job.id;

  // Detection misses it (its maps unreadable for a moment); it is alive.
  std::filesystem::remove(proc_.PidDir(4242) + "/maps");
  std::filesystem::create_directories(proc_.PidDir(4242) + "/maps");
  env_.now += 5000;
  ASSERT_TRUE(tracker_->Poll().ok());
  EXPECT_FALSE(Only().ended);
  EXPECT_EQ(Only().last_seen_ms, env_.now);

  // Its stat cannot be read either: no proof of anything; still running.
  std::filesystem::remove(proc_.PidDir(4242) + "/stat");
  std::filesystem::create_directories(proc_.PidDir(4242) + "/stat");
  const int64_t last_alive = env_.now;
  env_.now += 5000;
  ASSERT_TRUE(tracker_->Poll().ok());
  EXPECT_FALSE(Only().ended);
  EXPECT_EQ(Only().last_seen_ms, last_alive);

  // Readable again: the same job.
  std::filesystem::remove_all(proc_.PidDir(4242));
  AddTrainer(4242, 777);
  env_.now += 5000;
  ASSERT_TRUE(tracker_->Poll().ok());
  EXPECT_EQ(Only().job.id, id);
  EXPECT_FALSE(Only().ended);

  // Gone: ended.
  std::filesystem::remove_all(proc_.PidDir(4242));
  const int64_t seen_last = env_.now;
  env_.now += 5000;
  ASSERT_TRUE(tracker_->Poll().ok());
  EXPECT_TRUE(Only().ended);
  EXPECT_EQ(Only().last_seen_ms, seen_last);

  // Whatever /proc shows next, that job never runs again (one job_finished).
  AddTrainer(4242, 777);
  for (int i = 0; i < 3; ++i) {
    env_.now += 5000;
    ASSERT_TRUE(tracker_->Poll().ok());
    EXPECT_TRUE(Only().ended);
  }
  // A new process on the reused pid is a new job.
  std::filesystem::remove_all(proc_.PidDir(4242));
  AddTrainer(4242, 999);
  ASSERT_TRUE(tracker_->Poll().ok());
  auto jobs = tracker_->Jobs();
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[0].job.id, "4242-999-90b22de2");
  EXPECT_FALSE(jobs[0].ended);
  EXPECT_TRUE(jobs[1].ended);
}

// Vigil restarts while a job runs: it is still running (not ended, then
// running again); one that ended meanwhile is ended when it was last seen.
TEST_F(FakeProcTracker, ARestartIsNoEnd) {
  o_.history_path = dir_.Join("jobs.json");
  AddTrainer(5000, 888);
  {
    JobTracker before(o_);
    ASSERT_TRUE(before.Poll().ok());
    ASSERT_EQ(before.Jobs().size(), 2u);
    before.Stop();
  }
  const int64_t saved = env_.now;
  std::filesystem::remove_all(proc_.PidDir(5000));
  env_.now += 60'000;
  tracker_ = std::make_unique<JobTracker>(o_);
  // The history names no start ticks; the id does. Make detection miss the
  // live one too: it is confirmed by its id.
  std::filesystem::remove(proc_.PidDir(4242) + "/maps");
  ASSERT_TRUE(tracker_->Poll().ok());
  auto jobs = tracker_->Jobs();
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[0].job.id, "4242-777-90b22de2");
  EXPECT_FALSE(jobs[0].ended);
  EXPECT_EQ(jobs[1].job.id, "5000-888-90b22de2");
  EXPECT_TRUE(jobs[1].ended);
  EXPECT_EQ(jobs[1].last_seen_ms, saved);
}

TEST(JobTrackerTest, RunsOnTheRealProcAndStops) {
  JobTrackerOptions o;
  o.interval_ms = 10;
  o.watch_processes = true;  // its watcher's thread too (the connector, or the poll)
  JobTracker tracker(o);
  ASSERT_TRUE(tracker.Poll().ok());
  tracker.Start();
  tracker.Stop();
  tracker.Stop();
}

}  // namespace
}  // namespace vigil::collect::jobs
