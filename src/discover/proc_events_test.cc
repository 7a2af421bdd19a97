// The process events connector: its decoder on bytes recorded from a real
// kernel (6.18, x86-64), the fallback poll on a fake /proc, and the real
// connector where this test may open it.
#include "discover/proc_events.h"

#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "core/temp_dir.h"
#include "discover/fake_tree_test_util.h"

extern char** environ;

namespace vigil::discover {
namespace {

std::string Hex(std::string_view hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  }
  return out;
}

// `/bin/sh -c "exit 3"` as pid 26807 (0x68b7): its exec, then its exit
// (wait status 0x300, exit signal SIGCHLD, parent 26766), one recv() each.
const char* kExec =
    "4c00000003000000be030000000000000100000001000000be030000000000002800000002000000"
    "010000001f7e0bd0a5070000b7680000b768000000000000000000000000000000000000";
const char* kExit =
    "4c00000003000000bf030000000000000100000001000000bf030000000000002800000000000080"
    "01000000c8ca17d0a5070000b7680000b768000000030000110000008e6800008e680000";

// The kernel's answer to PROC_CN_MCAST_LISTEN: a PROC_EVENT_NONE whose
// ack.err is the errno (here 0: listening).
const char* kAck =
    "4c00000003000000bbaf0100000000000100000001000000bbaf01000100000028000000000000000100"
    "0000f4208901ce090000000000000000000000000000000000000000000000000000";

TEST(ProcEventsTest, DecodesTheSubscriptionsAnswer) {
  EXPECT_EQ(DecodeProcAck(Hex(kAck)), 0);
  EXPECT_TRUE(DecodeProcEvents(Hex(kAck)).empty());  // no process event
  std::string refused = Hex(kAck);
  refused[16 + 20 + 16] = 1;  // ack.err = EPERM
  EXPECT_EQ(DecodeProcAck(refused), 1);
  EXPECT_FALSE(DecodeProcAck(Hex(kExec)).has_value());
  EXPECT_FALSE(DecodeProcAck(Hex(kAck).substr(0, 50)).has_value());
}

TEST(ProcEventsTest, DecodesRecordedExecAndExit) {
  auto exec = DecodeProcEvents(Hex(kExec));
  ASSERT_EQ(exec.size(), 1u);
  EXPECT_EQ(exec[0].kind, ProcEvent::Kind::kExec);
  EXPECT_EQ(exec[0].pid, 26807);
  EXPECT_EQ(exec[0].time_ns, 0x07a5d00b7e1fLL);
  EXPECT_FALSE(exec[0].exit_code.has_value());

  auto exit = DecodeProcEvents(Hex(kExit));
  ASSERT_EQ(exit.size(), 1u);
  EXPECT_EQ(exit[0].kind, ProcEvent::Kind::kExit);
  EXPECT_EQ(exit[0].pid, 26807);
  EXPECT_EQ(exit[0].exit_code, 3);
  EXPECT_FALSE(exit[0].exit_signal.has_value());

  // Two messages in one buffer, as a busy socket hands them over.
  auto both = DecodeProcEvents(Hex(kExec) + Hex(kExit));
  ASSERT_EQ(both.size(), 2u);
  EXPECT_EQ(both[1].exit_code, 3);
}

TEST(ProcEventsTest, ASignalDeathAThreadExitAndAForkAreToldApart) {
  std::string killed = Hex(kExit);
  killed[16 + 20 + 24] = 9;  // exit_code: wait status of SIGKILL
  killed[16 + 20 + 25] = 0;
  auto k = DecodeProcEvents(killed);
  ASSERT_EQ(k.size(), 1u);
  EXPECT_EQ(k[0].exit_signal, 9);
  EXPECT_FALSE(k[0].exit_code.has_value());

  std::string thread = Hex(kExit);
  thread[16 + 20 + 16] = 0x01;  // process_pid != process_tgid: a thread of it
  EXPECT_TRUE(DecodeProcEvents(thread).empty());

  std::string fork = Hex(kExec);
  fork[16 + 20] = 0x01;  // PROC_EVENT_FORK
  EXPECT_TRUE(DecodeProcEvents(fork).empty());

  std::string other = Hex(kExec);
  other[16] = 0x02;  // cn_msg of another connector (CN_IDX_CIFS)
  EXPECT_TRUE(DecodeProcEvents(other).empty());
}

TEST(ProcEventsTest, TruncatedOrJunkBytesNeverReadPastTheEnd) {
  std::string exec = Hex(kExec);
  for (size_t n = 0; n < exec.size(); ++n) {
    EXPECT_TRUE(DecodeProcEvents(std::string_view(exec).substr(0, n)).empty()) << n;
  }
  std::string huge = exec;
  huge[0] = '\xff';  // nlmsg_len beyond the buffer
  EXPECT_TRUE(DecodeProcEvents(huge).empty());
  std::string tiny = exec;
  tiny[0] = 4;  // nlmsg_len shorter than its own header
  EXPECT_TRUE(DecodeProcEvents(tiny).empty());
  std::string short_cn = exec;
  short_cn[16 + 16] = '\x7f';  // cn_msg.len beyond the message
  EXPECT_TRUE(DecodeProcEvents(short_cn).empty());
  EXPECT_TRUE(DecodeProcEvents(std::string(4096, '\0')).empty());
}

TEST(ProcEventsTest, ThePollReportsNewAndGonePids) {
  TempDir dir;
  testing::FakeProc proc(dir.Join("proc"));
  proc.AddProcess(10, {"init"}, "init");
  auto poller = NewProcPoller(Env::Default(), proc.root(), 10);
  EXPECT_STREQ(poller->mode(), "poll");  // what ran before (pid 10) is the detection pass's
  std::vector<ProcEvent> evs;
  proc.AddProcess(20, {"python3", "train.py"}, "python3");  // after the poller's first look
  ASSERT_TRUE(poller->Wait(10, &evs).ok());
  ASSERT_EQ(evs.size(), 1u);
  EXPECT_EQ(evs[0], (ProcEvent{ProcEvent::Kind::kExec, 20, 0, {}, {}}));
  evs.clear();
  std::filesystem::remove_all(proc.PidDir(20));
  ASSERT_TRUE(poller->Wait(10, &evs).ok());
  ASSERT_EQ(evs.size(), 1u);
  EXPECT_EQ(evs[0].kind, ProcEvent::Kind::kExit);
  EXPECT_FALSE(evs[0].exit_code.has_value());  // the poll cannot know
}

// The real connector, where this test may open it (root, or CAP_NET_ADMIN).
TEST(ProcEventsTest, TheRealConnectorSeesAChildExecAndExit) {
  auto c = OpenProcConnector();
  if (!c.ok()) GTEST_SKIP() << c.status().ToString();
  EXPECT_STREQ((*c)->mode(), "connector");
  char arg0[] = "/bin/sh";
  char arg1[] = "-c";
  char arg2[] = "exit 7";
  char* argv[] = {arg0, arg1, arg2, nullptr};
  pid_t pid = 0;
  ASSERT_EQ(::posix_spawn(&pid, "/bin/sh", nullptr, nullptr, argv, environ), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  bool exec = false, exit = false;
  // The events are queued before waitpid returns; drain what is there.
  for (int i = 0; i < 50 && !exit; ++i) {
    std::vector<ProcEvent> evs;
    ASSERT_TRUE((*c)->Wait(100, &evs).ok());
    for (const ProcEvent& e : evs) {
      if (e.pid != pid) continue;
      if (e.kind == ProcEvent::Kind::kExec) exec = true;
      if (e.kind == ProcEvent::Kind::kExit) {
        exit = true;
        EXPECT_EQ(e.exit_code, 7);
      }
    }
  }
  EXPECT_TRUE(exec);
  EXPECT_TRUE(exit);
}

}  // namespace
}  // namespace vigil::discover
