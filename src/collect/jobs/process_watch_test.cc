// The process watcher and the tracker's short-lived jobs, driven by hand
// (events given to HandleEvents, ticks by Tick) over a fake /proc: no
// thread, no timing.
#include "collect/jobs/process_watch.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "collect/jobs/job_tracker.h"
#include "core/manual_clock_env.h"
#include "core/temp_dir.h"
#include "discover/fake_tree_test_util.h"

namespace vigil::collect::jobs {
namespace {

using discover::ProcEvent;
using discover::testing::WriteFile;

ProcEvent Exec(int pid) { return {ProcEvent::Kind::kExec, pid, 0, {}, {}}; }
ProcEvent Exit(int pid, std::optional<int> code, std::optional<int> sig = {}) {
  return {ProcEvent::Kind::kExit, pid, 0, code, sig};
}

class WatcherTest : public ::testing::Test {
 protected:
  WatcherTest() : proc_(dir_.Join("proc")) {
    WriteFile(proc_.root() + "/stat", "cpu 1 2 3\nbtime 1700000000\n");
    WriteFile(proc_.root() + "/sys/kernel/random/boot_id", "90b22de2-6ed8-4f8b\n");
    proc_.AddProcess(1, {"/sbin/init"}, "systemd", 1);
    o_.env = &env_;
    o_.proc_root = proc_.root();
    o_.self_pid = 99999;
    o_.on_exit = [this] { ++wakes_; };
  }
  // A nanoGPT-style run that crashes at start-up, stdout and stderr to `log`.
  void AddCrasher(int pid, uint64_t ticks, const std::string& log) {
    proc_.AddProcess(pid, {"/usr/bin/python3", "train.py", "config/train_gpt2.py"}, "python3",
                     ticks);
    WriteFile(log, "");
    proc_.AddFd(pid, 1, log);
    proc_.AddFd(pid, 2, log);
  }
  void Gone(int pid) { std::filesystem::remove_all(proc_.PidDir(pid)); }
  // A tick a second later: every young process is due for a look.
  void TickLater(ProcessWatcher& w) {
    env_.now += 1000;
    w.Tick();
  }

  TempDir dir_;
  discover::testing::FakeProc proc_;
  // Monotonic time moves with `now`: ticks look again after a growing gap.
  ManualClockEnv env_{ManualClockEnv::kDefaultStartMs, /*follow_monotonic=*/true};
  ProcessWatcherOptions o_;
  int wakes_ = 0;
};

// A source that never has events: the mode is what matters.
class Quiet : public discover::ProcEventSource {
 public:
  explicit Quiet(const char* mode) : mode_(mode) {}
  Status Wait(int, std::vector<ProcEvent>*) override { return Status::Ok(); }
  const char* mode() const override { return mode_; }

 private:
  const char* mode_;
};

TEST_F(WatcherTest, AJobThatDiesAtStartUpIsHandedOverWithItsStatus) {
  ProcessWatcher w(o_);
  w.SetSource(std::make_unique<Quiet>("connector"));
  const std::string log = dir_.Join("out.log");
  AddCrasher(900, 5000, log);
  w.HandleEvents({Exec(900)});
  EXPECT_EQ(w.Stats().snapshots, 1u);
  Gone(900);
  TickLater(w);  // gone: the connector's exit event is due, with the status
  EXPECT_TRUE(w.TakeDeparted().empty());
  w.HandleEvents({Exit(900, 1)});
  auto d = w.TakeDeparted();
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].snapshot.pid, 900);
  EXPECT_EQ(d[0].snapshot.start_ticks, 5000u);
  EXPECT_EQ(d[0].snapshot.stdout_path, log);
  EXPECT_EQ(d[0].exit.exit_code, 1);
  EXPECT_EQ(d[0].exit.time_ms, env_.now);
  EXPECT_EQ(w.ExitOf(900)->exit_code, 1);
  EXPECT_EQ(wakes_, 1);
  EXPECT_TRUE(w.TakeDeparted().empty());  // taken once
}

TEST_F(WatcherTest, NonJobsCostNoSnapshotOrNoHandOver) {
  ProcessWatcher w(o_);
  w.SetSource(std::make_unique<Quiet>("connector"));
  proc_.AddProcess(910, {"/bin/bash", "-c", "ls"}, "bash");
  proc_.AddProcess(911, {"/usr/bin/python3", "manage.py", "runserver"}, "python3");
  WriteFile(proc_.PidDir(911) + "/maps", "55d0-55d1 r-xp 0 08:01 1 /usr/bin/python3.11\n");
  w.HandleEvents({Exec(910), Exec(911), Exec(99999), Exec(912)});  // 912: gone already
  EXPECT_EQ(w.Stats().snapshots, 1u);                              // only the python one
  w.HandleEvents({Exit(910, 0), Exit(911, 1), Exit(77, 0)});
  EXPECT_TRUE(w.TakeDeparted().empty());  // a web app is no job
  EXPECT_EQ(wakes_, 0);
  EXPECT_FALSE(w.ExitOf(77).has_value());  // not watched: not kept
  w.SetWatched({77});
  w.HandleEvents({Exit(77, std::nullopt, 9)});
  EXPECT_EQ(w.ExitOf(77)->signal, 9);
  EXPECT_EQ(wakes_, 1);  // a running job's process: the tracker looks now
}

TEST_F(WatcherTest, BoundedAndAged) {
  o_.max_pending = 2;
  o_.max_departed = 1;
  o_.pending_max_age_ms = 10'000;
  ProcessWatcher w(o_);
  w.SetSource(std::make_unique<Quiet>("connector"));
  for (int pid : {920, 921, 922}) {
    AddCrasher(pid, 100 + pid, dir_.Join(std::to_string(pid) + ".log"));
    w.HandleEvents({Exec(pid)});
  }
  EXPECT_EQ(w.Stats().pending_dropped, 1u);
  w.HandleEvents({Exit(921, 1), Exit(922, 1), Exit(920, 1)});  // 920 was dropped
  auto d = w.TakeDeparted();
  ASSERT_EQ(d.size(), 1u);  // the newest; one lost
  EXPECT_EQ(d[0].snapshot.pid, 922);
  EXPECT_EQ(w.Stats().departed_dropped, 1u);
}

// A young process is looked at again after 250 ms, then twice as late each
// time, until it is 10 s old: then it is the detection pass's.
TEST_F(WatcherTest, YoungProcessesAreLookedAtLessAndLessOften) {
  ProcessWatcher w(o_);
  w.SetSource(std::make_unique<Quiet>("connector"));
  proc_.AddProcess(970, {"/usr/bin/python3", "nb.py"}, "python3", 720);
  w.HandleEvents({Exec(970)});
  // What each look finds is the process as it is then: its maps grow.
  auto maps_at = [&](int64_t ms, const std::string& lib) {
    env_.now += ms;
    WriteFile(proc_.PidDir(970) + "/maps", "7f00-7f01 r-xp 0 08:01 1 " + lib + "\n");
    w.Tick();
  };
  maps_at(100, "/usr/lib/libtorch_cpu.so");  // 100 ms: not due yet
  maps_at(200, "/usr/lib/libc10.so");        // 300 ms: due (250): looked at
  maps_at(300, "/usr/lib/libnccl.so.2");     // 600 ms: next is at 800
  Gone(970);
  w.HandleEvents({Exit(970, 0)});
  auto d = w.TakeDeparted();
  ASSERT_EQ(d.size(), 1u);
  EXPECT_NE(d[0].snapshot.maps.find("libc10.so"), std::string::npos);
  EXPECT_EQ(d[0].snapshot.maps.find("libnccl"), std::string::npos);

  proc_.AddProcess(971, {"/usr/bin/python3", "serve.py"}, "python3", 721);
  w.HandleEvents({Exec(971)});
  env_.now += 10'001;
  w.Tick();  // too old to follow
  Gone(971);
  w.HandleEvents({Exit(971, 1)});
  EXPECT_TRUE(w.TakeDeparted().empty());
}

// Without the connector (not permitted, or VIGIL_PROC_EVENTS=poll) the poll
// finds the process and a tick finds it gone: handed over with no status.
TEST_F(WatcherTest, ThePollFallbackDepartsWithoutAStatus) {
  ProcessWatcher w(o_);
  w.SetSource(discover::NewProcPoller(&env_, proc_.root(), 10));
  EXPECT_EQ(w.mode(), "poll");
  // The fork's child shows its parent's command line until it execs.
  proc_.AddProcess(930, {"/usr/bin/python3", "launcher_helper.py"}, "python3", 700);
  w.HandleEvents({Exec(930)});
  AddCrasher(930, 700, dir_.Join("p.log"));  // now exec'd: the tick sees it
  TickLater(w);
  std::string zombie = "930 (python3) Z 1";  // exited, not yet reaped
  for (int field = 5; field <= 22; ++field) zombie += field == 22 ? " 700" : " 0";
  WriteFile(proc_.PidDir(930) + "/stat", zombie + "\n");
  TickLater(w);
  auto d = w.TakeDeparted();
  ASSERT_EQ(d.size(), 1u);
  EXPECT_NE(d[0].snapshot.cmdline.find("config/train_gpt2.py"), std::string::npos);
  EXPECT_EQ(d[0].snapshot.stdout_path, dir_.Join("p.log"));
  EXPECT_FALSE(d[0].exit.exit_code.has_value());
  EXPECT_EQ(wakes_, 1);
}

// The poll sees a shell's fork before it execs the job: looked at again.
TEST_F(WatcherTest, ThePollLooksAgainAtAForkOfAShell) {
  ProcessWatcher w(o_);
  w.SetSource(discover::NewProcPoller(&env_, proc_.root(), 10));
  proc_.AddProcess(960, {"/bin/bash", "run.sh"}, "bash", 710);
  w.HandleEvents({Exec(960)});
  EXPECT_EQ(w.Stats().snapshots, 0u);
  AddCrasher(960, 710, dir_.Join("s.log"));  // the exec
  TickLater(w);
  EXPECT_EQ(w.Stats().snapshots, 1u);
  // A shell that stays a shell is looked at a bounded number of times.
  proc_.AddProcess(961, {"/bin/bash", "loop.sh"}, "bash", 711);
  w.HandleEvents({Exec(961)});
  for (int i = 0; i < 5; ++i) TickLater(w);
  EXPECT_EQ(w.Stats().snapshots, 1u);
}

// The tracker lists a job it only saw through the watcher: ended, with the
// kernel's exit status, its log file handed to the log agent.
TEST_F(WatcherTest, TheTrackerListsAShortLivedJobAsEndedWithItsExitAndLog) {
  ProcessWatcher w(o_);
  w.SetSource(std::make_unique<Quiet>("connector"));
  JobTrackerOptions t;
  t.env = &env_;
  t.detection.proc_root = proc_.root();
  t.detection.self_pid = 99999;
  t.watcher = &w;
  JobTracker tracker(t);
  ASSERT_TRUE(tracker.Poll().ok());
  EXPECT_TRUE(tracker.Jobs().empty());

  const std::string log = dir_.Join("crash.log");
  AddCrasher(940, 8000, log);
  w.HandleEvents({Exec(940)});
  Gone(940);
  env_.now += 300;
  const int64_t died = env_.now;
  w.HandleEvents({Exit(940, 1)});
  env_.now += 700;
  ASSERT_TRUE(tracker.Poll().ok());
  auto jobs = tracker.Jobs();
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].job.id, "940-8000-90b22de2");
  EXPECT_EQ(jobs[0].job.name, "train");
  EXPECT_TRUE(jobs[0].ended);
  EXPECT_EQ(jobs[0].last_seen_ms, died);
  EXPECT_EQ(jobs[0].first_seen_ms, jobs[0].job.start_time_ms);  // at its exec, not this pass
  ASSERT_TRUE(jobs[0].run_exit.has_value());
  EXPECT_EQ(jobs[0].run_exit->exit_code, 1);
  EXPECT_TRUE(jobs[0].job.processes[0].departed);
  auto sources = tracker.ShortLivedLogSources();
  ASSERT_EQ(sources.size(), 1u);
  EXPECT_EQ(sources[0].path, log);
  EXPECT_EQ(sources[0].labels,
            (wire::Labels{{"job", "train"}, {"run", "940-8000-90b22de2"}, {"source", log}}));

  // It stays ended; the sources expire.
  ASSERT_TRUE(tracker.Poll().ok());
  EXPECT_TRUE(tracker.Jobs()[0].ended);
  env_.now += t.short_lived_source_ms;
  EXPECT_TRUE(tracker.ShortLivedLogSources().empty());
}

// A running job's process exits: the connector's status is the job's.
TEST_F(WatcherTest, ARunningJobEndsWithTheStatusTheKernelGave) {
  ProcessWatcher w(o_);
  w.SetSource(std::make_unique<Quiet>("connector"));
  JobTrackerOptions t;
  t.env = &env_;
  t.detection.proc_root = proc_.root();
  t.detection.self_pid = 99999;
  t.watcher = &w;
  JobTracker tracker(t);
  proc_.AddProcess(950, {"/usr/bin/python3", "train.py", "config/big.py"}, "python3", 9000);
  ASSERT_TRUE(tracker.Poll().ok());
  ASSERT_FALSE(tracker.Jobs()[0].ended);
  Gone(950);
  w.HandleEvents({Exit(950, std::nullopt, 11)});  // SIGSEGV
  EXPECT_EQ(wakes_, 1);
  ASSERT_TRUE(tracker.Poll().ok());
  auto j = tracker.Jobs()[0];
  EXPECT_TRUE(j.ended);
  ASSERT_TRUE(j.run_exit.has_value());
  EXPECT_EQ(j.run_exit->signal, 11);
  EXPECT_EQ(j.run_exit->signal_name, "SEGV");
  EXPECT_FALSE(j.run_exit->exit_code.has_value());
}

}  // namespace
}  // namespace vigil::collect::jobs
