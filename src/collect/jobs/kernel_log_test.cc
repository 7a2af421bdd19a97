#include "collect/jobs/kernel_log.h"

#include <gtest/gtest.h>
#include <time.h>

#include <fstream>

#include "collect/jobs/job_tracker.h"
#include "core/temp_dir.h"

namespace vigil::collect::jobs {
namespace {

// "<prio>,<seq>,<usec since boot>,-;<text>" as /dev/kmsg gives it, timed now.
std::string Kmsg(int seq, const std::string& text) {
  timespec mono{};
  clock_gettime(CLOCK_MONOTONIC, &mono);
  uint64_t usec = static_cast<uint64_t>(mono.tv_sec) * 1'000'000 + mono.tv_nsec / 1000;
  return "3," + std::to_string(seq) + "," + std::to_string(usec) + ",-;" + text + "\n";
}

TEST(KernelLogTest, ParsesKmsgRecords) {
  uint64_t usec;
  std::string_view text;
  ASSERT_TRUE(ParseKmsgRecord("6,1234,5678901,-;NVRM: loading", &usec, &text));
  EXPECT_EQ(usec, 5678901u);
  EXPECT_EQ(text, "NVRM: loading");
  ASSERT_TRUE(ParseKmsgRecord("4,1,2,c,caller=T12;text; with ;", &usec, &text));
  EXPECT_EQ(text, "text; with ;");
  EXPECT_FALSE(ParseKmsgRecord("no header", &usec, &text));
  EXPECT_FALSE(ParseKmsgRecord("1,2;short", &usec, &text));
  EXPECT_FALSE(ParseKmsgRecord("1,2,x,-;bad time", &usec, &text));
}

TEST(KernelLogTest, OomKillsAndXidErrorsBecomeEventsWithTheirPid) {
  TempDir dir;
  std::string path = dir.path() + "/kmsg";
  std::ofstream(path)
      << Kmsg(1, "Linux version 6.1.0") << " SUBSYSTEM=pci\n"  // a continuation line
      << Kmsg(2,
              "Out of memory: Killed process 51234 (python) total-vm:81234567kB, "
              "anon-rss:79123456kB, file-rss:0kB, shmem-rss:0kB, UID:1000 pgtables:160000kB "
              "oom_score_adj:0")
      << Kmsg(3,
              "NVRM: Xid (PCI:0000:3b:00): 79, pid=6001, name=python3, GPU has "
              "fallen off the bus.");
  KernelLog log(path);
  std::vector<KernelEvent> events;
  ASSERT_TRUE(log.Poll(&events).ok());
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].event.kind, parse::training::EventKind::kOomKilled);
  EXPECT_EQ(events[0].pid, 51234);
  EXPECT_EQ(events[1].event.kind, parse::training::EventKind::kXid);
  EXPECT_EQ(events[1].pid, 6001);
  int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  EXPECT_NEAR(static_cast<double>(events[0].time_ms), static_cast<double>(now_ms), 5000);
  // Nothing new: nothing more.
  events.clear();
  ASSERT_TRUE(log.Poll(&events).ok());
  EXPECT_TRUE(events.empty());
  KernelLog missing(dir.path() + "/none");
  EXPECT_FALSE(missing.Poll(&events).ok());
}

// A job SIGKILLed by the OOM killer is crashed/oom_killed, not just killed.
TEST(KernelLogTest, TheTrackerGivesAnOomKillToItsJob) {
  TempDir dir;
  std::string kmsg = dir.path() + "/kmsg";
  std::ofstream(kmsg) << "";
  std::vector<discover::DetectedJob> running(1);
  running[0].id = "train-1";
  running[0].name = "train";
  running[0].start_time_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                 std::chrono::system_clock::now().time_since_epoch())
                                 .count() -
                             10'000;
  running[0].processes.push_back(discover::JobProcess{.pid = 51234});
  JobTrackerOptions o;
  o.kernel_log = kmsg;
  o.detect_override = [&] { return Result<std::vector<discover::DetectedJob>>(running); };
  JobTracker tracker(o);
  ASSERT_TRUE(tracker.Poll().ok());
  std::ofstream(kmsg, std::ios::app) << Kmsg(7, "Out of memory: Killed process 51234 (python)")
                                     << Kmsg(8, "Out of memory: Killed process 999 (other)");
  running.clear();
  ASSERT_TRUE(tracker.Poll().ok());
  auto jobs = tracker.Jobs();
  ASSERT_EQ(jobs.size(), 1u);
  ASSERT_TRUE(jobs[0].ended);
  ASSERT_EQ(jobs[0].kernel_events.size(), 1u);

  // The verdict on it (crashed, oom_killed) is the server's: diagnose/verdict_test.cc.
  const parse::training::Event& oom = jobs[0].kernel_events[0].event;
  EXPECT_EQ(oom.kind, parse::training::EventKind::kOomKilled);
  ASSERT_NE(oom.Find("process"), nullptr);
  EXPECT_EQ(oom.Find("process")->value, "python");
}

}  // namespace
}  // namespace vigil::collect::jobs
