#include "diagnose/verdict.h"

#include <gtest/gtest.h>

namespace vigil::diagnose {
namespace {

using parse::training::Event;
using parse::training::EventKind;

constexpr int64_t kEnd = 1'000'000'000;

TimedEvent At(int64_t t, EventKind kind, const std::string& message = "") {
  TimedEvent e;
  e.time_ms = t;
  e.event.kind = kind;
  if (!message.empty()) e.event.AddString("message", message);
  return e;
}

JobEvidence Ended() {
  JobEvidence ev;
  ev.ended = true;
  ev.end_ms = kEnd;
  ev.now_ms = kEnd + 5000;
  return ev;
}

RunExit Code(int code) {
  RunExit x;
  x.exit_code = code;
  return x;
}

RunExit Signal(const std::string& name) {
  RunExit x;
  x.signal = name == "KILL" ? 9 : name == "TERM" ? 15 : 11;
  x.signal_name = name;
  return x;
}

TEST(JudgeTest, AliveIsRunningWhateverItLogged) {
  JobEvidence ev;
  ev.now_ms = kEnd;
  ev.events.push_back(At(kEnd - 1000, EventKind::kNcclError, "unhandled system error"));
  JobVerdict v = Judge(ev);
  EXPECT_EQ(v.state, JobState::kRunning);
  EXPECT_EQ(v.reason, "");
}

TEST(JudgeTest, StalledWhenTheStepStopsForSeveralIntervals) {
  JobEvidence ev;
  ev.now_ms = kEnd;
  ev.step_interval_ms = 20'000;
  ev.last_step_change_ms = kEnd - 90'000;  // 4.5 intervals: not yet
  EXPECT_EQ(Judge(ev).state, JobState::kRunning);
  ev.last_step_change_ms = kEnd - 101'000;  // over 5 intervals
  JobVerdict v = Judge(ev);
  EXPECT_EQ(v.state, JobState::kStalled);
  EXPECT_EQ(v.reason, "stalled");
  EXPECT_NE(v.reason_text.find("every 20s"), std::string::npos) << v.reason_text;
  // A fast step still needs a minute of silence.
  ev.step_interval_ms = 100;
  ev.last_step_change_ms = kEnd - 30'000;
  EXPECT_EQ(Judge(ev).state, JobState::kRunning);
}

TEST(JudgeTest, ExitStatusFromVigilRunDecides) {
  JobEvidence ev = Ended();
  ev.run_exit = Code(0);
  EXPECT_EQ(Judge(ev).state, JobState::kCompleted);

  ev.run_exit = Code(1);
  ev.events.push_back(At(kEnd - 2000, EventKind::kCudaOom, "CUDA out of memory."));
  JobVerdict v = Judge(ev);
  EXPECT_EQ(v.state, JobState::kCrashed);
  EXPECT_EQ(v.reason, "cuda_oom");
  EXPECT_EQ(v.reason_text, "CUDA out of memory.");

  ev.events.clear();
  v = Judge(ev);
  EXPECT_EQ(v.state, JobState::kCrashed);
  EXPECT_EQ(v.reason, "exit_code");
  EXPECT_EQ(v.reason_text, "exited with status 1");
}

TEST(JudgeTest, SchedulerStopOomKillerAndCrashAreToldApart) {
  JobEvidence ev = Ended();
  ev.run_exit = Signal("TERM");  // srun cancel, kubelet preemption
  JobVerdict v = Judge(ev);
  EXPECT_EQ(v.state, JobState::kKilled);
  EXPECT_EQ(v.reason, "signal");

  ev.run_exit = Code(143);  // a launcher reporting its child's SIGTERM
  EXPECT_EQ(Judge(ev).state, JobState::kKilled);

  ev.run_exit = Signal("KILL");
  EXPECT_EQ(Judge(ev).state, JobState::kKilled);
  ev.events.push_back(At(kEnd - 500, EventKind::kOomKilled));
  v = Judge(ev);
  EXPECT_EQ(v.state, JobState::kCrashed);
  EXPECT_EQ(v.reason, "oom_killed");

  ev.events.clear();
  ev.run_exit = Signal("SEGV");
  v = Judge(ev);
  EXPECT_EQ(v.state, JobState::kCrashed);
  EXPECT_EQ(v.reason, "segfault");
}

TEST(JudgeTest, WithoutAnExitStatusTheLogDecides) {
  JobEvidence ev = Ended();
  JobVerdict v = Judge(ev);
  EXPECT_EQ(v.state, JobState::kExited);
  EXPECT_NE(v.reason_text.find("vigil run"), std::string::npos);

  ev.events.push_back(At(kEnd - 1000, EventKind::kCompleted, "Training completed."));
  EXPECT_EQ(Judge(ev).state, JobState::kCompleted);

  ev.events.push_back(At(kEnd - 500, EventKind::kNcclTimeout, "Watchdog caught collective"));
  v = Judge(ev);
  EXPECT_EQ(v.state, JobState::kCrashed);
  EXPECT_EQ(v.reason, "nccl_timeout");
}

TEST(JudgeTest, AnOldCaughtTracebackDoesNotExplainTheEnd) {
  JobEvidence ev = Ended();
  ev.events.push_back(At(kEnd - 3'600'000, EventKind::kTraceback, "ValueError: caught"));
  EXPECT_EQ(Judge(ev).state, JobState::kExited);
  ev.run_exit = Code(0);
  EXPECT_EQ(Judge(ev).state, JobState::kCompleted);
}

TEST(JudgeTest, NanLossExplainsAFailureButIsNotOne) {
  JobEvidence ev = Ended();
  ev.events.push_back(At(kEnd - 1000, EventKind::kNanLoss));
  EXPECT_EQ(Judge(ev).state, JobState::kExited);
  ev.run_exit = Code(1);
  JobVerdict v = Judge(ev);
  EXPECT_EQ(v.state, JobState::kCrashed);
  EXPECT_EQ(v.reason, "nan_loss");
}

TEST(JudgeTest, XidReasonNamesTheCodeAndItsMeaning) {
  JobEvidence ev = Ended();
  TimedEvent e = At(kEnd - 100, EventKind::kXid);
  e.event.AddNumber("xid", 79);
  e.event.AddString("meaning", "GPU has fallen off the bus");
  ev.events.push_back(e);
  JobVerdict v = Judge(ev);
  EXPECT_EQ(v.state, JobState::kCrashed);
  EXPECT_EQ(v.reason, "xid");
  EXPECT_EQ(v.reason_text, "Xid 79: GPU has fallen off the bus");
}

// The kernel's OOM-killer line names the process it killed (collect/jobs
// reads it from /dev/kmsg); the verdict says so.
TEST(VerdictTest, AnOomKillNamesTheProcessItKilled) {
  JobEvidence ev;
  ev.ended = true;
  ev.end_ms = kEnd;
  ev.run_exit = Signal("KILL");
  TimedEvent oom = At(kEnd - 500, EventKind::kOomKilled);
  oom.event.AddString("process", "python");
  ev.events.push_back(oom);
  JobVerdict v = Judge(ev);
  EXPECT_EQ(v.state, JobState::kCrashed);
  EXPECT_EQ(v.reason, "oom_killed");
  EXPECT_EQ(v.reason_text,
            "killed by the kernel's OOM killer: the machine ran out of memory (python)");
}

}  // namespace
}  // namespace vigil::diagnose
