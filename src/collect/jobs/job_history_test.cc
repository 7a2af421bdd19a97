#include "collect/jobs/job_history.h"

#include <gtest/gtest.h>

#include <fstream>

#include "core/manual_clock_env.h"
#include "core/temp_dir.h"

namespace vigil::collect::jobs {
namespace {

TrackedJob FullJob() {
  TrackedJob t;
  discover::DetectedJob& j = t.job;
  j.id = "4242-1764460800000";
  j.name = "train \"big\" \\ 模型";
  j.kind = discover::JobKind::kTraining;
  j.framework = discover::Framework::kPyTorch;
  j.launcher = "torchrun";
  j.trainer = "transformers";
  j.world_size = 2;
  j.container_id = std::string(64, 'a');
  j.user = "alice";
  j.uid = 1000;
  j.master_addr = "10.0.0.1";
  j.master_port = 29500;
  j.start_time_ms = 1'764'460'800'000;
  discover::JobProcess launcher{4242,
                                1,
                                discover::JobProcessRole::kLauncher,
                                -1,
                                -1,
                                1'764'460'800'000,
                                "torchrun --nproc_per_node 2 train.py"};
  discover::JobProcess rank{
      4243, 4242, discover::JobProcessRole::kRank, 1, 1, 1'764'460'800'500, "python train.py"};
  discover::JobProcess helper{
      4250, 4243, discover::JobProcessRole::kHelper, -1, -1, 1'764'460'801'000, "python train.py"};
  j.processes = {launcher, rank, helper};
  t.first_seen_ms = 1'764'460'805'000;
  t.last_seen_ms = 1'764'464'400'000;
  t.ended = true;
  t.run_exit = RunExit{1'764'464'401'000, std::nullopt, 9, "KILL"};
  KernelEvent k;
  k.time_ms = 1'764'464'399'000;
  k.pid = 4243;
  k.event.kind = parse::training::EventKind::kOomKilled;
  k.event.line = 1;
  k.event.AddNumber("pid", 4243);
  k.event.AddString("process", "python");
  t.kernel_events.push_back(k);
  return t;
}

TEST(JobHistoryTest, EveryFieldSurvivesARoundTrip) {
  TrackedJob t = FullJob();
  TrackedJob plain;
  plain.job.id = "run-7-1";
  plain.run_exit = RunExit{5, 3, 0, ""};
  auto back = DecodeJobs(EncodeJobs({t, plain}));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_EQ(back->size(), 2u);
  const TrackedJob& b = (*back)[0];
  EXPECT_EQ(b.job, t.job);
  EXPECT_EQ(b.first_seen_ms, t.first_seen_ms);
  EXPECT_EQ(b.last_seen_ms, t.last_seen_ms);
  EXPECT_TRUE(b.ended);
  ASSERT_TRUE(b.run_exit.has_value());
  EXPECT_FALSE(b.run_exit->exit_code.has_value());
  EXPECT_EQ(b.run_exit->signal, 9);
  EXPECT_EQ(b.run_exit->signal_name, "KILL");
  ASSERT_EQ(b.kernel_events.size(), 1u);
  EXPECT_EQ(b.kernel_events[0].event.kind, parse::training::EventKind::kOomKilled);
  EXPECT_EQ(b.kernel_events[0].pid, 4243);
  ASSERT_EQ(b.kernel_events[0].event.details.size(), 2u);
  EXPECT_TRUE(b.kernel_events[0].event.details[0].number);
  EXPECT_EQ(b.kernel_events[0].event.details[1].value, "python");
  EXPECT_EQ((*back)[1].run_exit->exit_code, 3);
  EXPECT_FALSE((*back)[1].ended);
}

// A history (or snapshot) past the wire's bound would be refused by the next
// start and by the server: the oldest ended jobs are left out instead, never a
// running one.
TEST(JobHistoryTest, AnOversizedHistoryLeavesOutTheOldestEndedJobs) {
  std::vector<TrackedJob> jobs;
  auto job = [](const std::string& id, bool ended) {
    TrackedJob t;
    t.job.id = id;
    t.ended = ended;
    for (int p = 0; p < 200; ++p) {
      discover::JobProcess proc;
      proc.pid = p;
      proc.cmdline = std::string(4000, 'x');  // a helper with a long command line
      t.job.processes.push_back(proc);
    }
    return t;
  };
  jobs.push_back(job("running", false));
  for (int i = 0; i < 40; ++i) jobs.push_back(job("ended-" + std::to_string(i), true));
  std::string doc = EncodeJobs(jobs);
  EXPECT_LE(doc.size(), wire::kMaxJobsSnapshotBytes);
  auto back = DecodeJobs(doc);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_GE(back->size(), 2u);
  EXPECT_LT(back->size(), jobs.size());
  EXPECT_EQ((*back)[0].job.id, "running");
  EXPECT_EQ((*back)[1].job.id, "ended-0");  // the newest ended ones stay
}

TEST(JobHistoryTest, DamagedEntriesCostOnlyThemselves) {
  auto jobs = DecodeJobs(R"({"version":1,"future":true,"jobs":[
      {"name":"no id"}, 7, {"id":"a","world_size":"two","processes":[1,{"pid":5,"role":"?"}],
       "kernel_events":[{"event":"not_a_kind"},{"event":"xid","time_ms":3}]}]})");
  ASSERT_TRUE(jobs.ok()) << jobs.status().ToString();
  ASSERT_EQ(jobs->size(), 1u);
  EXPECT_EQ((*jobs)[0].job.id, "a");
  EXPECT_EQ((*jobs)[0].job.world_size, 0);
  ASSERT_EQ((*jobs)[0].job.processes.size(), 1u);
  EXPECT_EQ((*jobs)[0].job.processes[0].role, discover::JobProcessRole::kRank);
  ASSERT_EQ((*jobs)[0].kernel_events.size(), 1u);
  EXPECT_EQ((*jobs)[0].kernel_events[0].event.kind, parse::training::EventKind::kXid);

  EXPECT_FALSE(DecodeJobs("[1,2]").ok());
  EXPECT_FALSE(DecodeJobs("{\"version\":2,\"jobs\":[]}").ok());
  EXPECT_FALSE(DecodeJobs("{\"version\":1,\"jobs\":[").ok());
}

TEST(JobHistoryTest, AFileThatCannotBeReadIsSetAsideNotLost) {
  TempDir dir;
  Env* env = Env::Default();
  const std::string path = dir.path() + "/data/jobs.json";
  auto empty = LoadJobHistory(env, path);
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());

  ASSERT_TRUE(SaveJobHistory(env, path, {FullJob()}).ok());  // creates data/
  auto loaded = LoadJobHistory(env, path);
  ASSERT_TRUE(loaded.ok());
  ASSERT_EQ(loaded->size(), 1u);

  std::ofstream(path) << "{\"version\":1,\"jobs\":[{\"id\":";  // torn by hand
  auto bad = LoadJobHistory(env, path);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find(".bad-"), std::string::npos) << bad.status().ToString();
  EXPECT_FALSE(env->FileExists(path));
  auto listing = env->ListDir(dir.path() + "/data");
  ASSERT_TRUE(listing.ok());
  ASSERT_EQ(listing->size(), 1u);
  EXPECT_EQ((*listing)[0].rfind("jobs.json.bad-", 0), 0u);
}

discover::DetectedJob Job(const std::string& id, int pid, int64_t start_ms) {
  discover::DetectedJob j;
  j.id = id;
  j.name = "train";
  j.start_time_ms = start_ms;
  j.processes.push_back({pid, 1, discover::JobProcessRole::kRank, -1, -1, start_ms, "python"});
  return j;
}

// A tracker stopped and started again (Vigil restarted) still lists the jobs
// that ended, with their evidence, and a job that went on running while it
// was down is still running once seen; the kernel's events, read again from
// its buffer, are not doubled.
TEST(JobHistoryTest, JobsAndTheirEvidenceSurviveARestartOfTheTracker) {
  TempDir dir;
  // kmsg times are real (since this boot) and derived from both clocks.
  ManualClockEnv env(Env::Default()->NowMillis(), /*follow_monotonic=*/true);
  const int64_t t0 = env.now;
  std::ofstream(dir.path() + "/kmsg")
      << "3,100,1000000,-;Out of memory: Killed process 300 (python) total-vm:1kB\n";
  std::vector<discover::DetectedJob> running;
  JobTrackerOptions o;
  o.env = &env;
  o.history_path = dir.path() + "/jobs.json";
  o.kernel_log = dir.path() + "/kmsg";
  o.detect_override = [&] { return Result<std::vector<discover::DetectedJob>>(running); };
  {
    JobTracker tracker(o);
    running = {Job("300-1", 300, 0), Job("400-2", 400, t0)};
    running[0].user = "nobody";  // whose it was, kept once it ended
    running[0].uid = 65534;
    ASSERT_TRUE(tracker.Poll().ok());
    env.now += 5000;
    running = {Job("400-2", 400, t0)};
    ASSERT_TRUE(tracker.Poll().ok());
    auto jobs = tracker.Jobs();
    ASSERT_EQ(jobs.size(), 2u);
    EXPECT_EQ(jobs[1].kernel_events.size(), 1u);
    ASSERT_EQ(tracker.NodeEvents().size(), 1u);
    EXPECT_EQ(tracker.NodeEvents()[0].job_id, "300-1");
    tracker.Stop();
  }
  ASSERT_TRUE(Env::Default()->FileExists(o.history_path));

  env.now += 60'000;
  JobTracker again(o);
  auto restored = again.Jobs();
  ASSERT_EQ(restored.size(), 2u);
  // As saved, until the first pass confirms or ends the running one: a
  // restart is no evidence of an end (no ended -> running flap).
  for (const TrackedJob& t : restored) EXPECT_EQ(t.ended, t.job.id == "300-1") << t.job.id;
  ASSERT_TRUE(again.Poll().ok());  // 400-2 still runs; 300-1 stays ended
  auto jobs = again.Jobs();
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[0].job.id, "400-2");
  EXPECT_FALSE(jobs[0].ended);
  EXPECT_EQ(jobs[0].first_seen_ms, t0);
  EXPECT_EQ(jobs[1].job.id, "300-1");
  EXPECT_TRUE(jobs[1].ended);
  EXPECT_EQ(jobs[1].last_seen_ms, t0);
  EXPECT_EQ(jobs[1].job.user, "nobody");
  EXPECT_EQ(jobs[1].job.uid, 65534);
  EXPECT_EQ(jobs[1].kernel_events.size(), 1u);  // read again, not doubled
}

// Without a history path nothing is written anywhere.
TEST(JobHistoryTest, NoPathNoFile) {
  TempDir dir;
  JobTrackerOptions o;
  o.detect_override = [] {
    return Result<std::vector<discover::DetectedJob>>(std::vector<discover::DetectedJob>{});
  };
  JobTracker tracker(o);
  ASSERT_TRUE(tracker.Poll().ok());
  tracker.Stop();
  auto listing = Env::Default()->ListDir(dir.path());
  ASSERT_TRUE(listing.ok());
  EXPECT_TRUE(listing->empty());
}

}  // namespace
}  // namespace vigil::collect::jobs
