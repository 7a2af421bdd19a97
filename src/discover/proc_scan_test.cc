// Process discovery over fake /proc trees, and over the real /proc with a
// child process whose stdout is redirected to a file.
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/temp_dir.h"
#include "discover/discover_internal.h"
#include "discover/fake_tree_test_util.h"
#include "discover/log_sources.h"

extern char** environ;

namespace vigil::discover {
namespace {

using testing::FakeProc;
using testing::kReadOnly;
using testing::kReadWrite;
using testing::kWriteAppend;
using testing::WriteFile;

std::string Label(const LogSource& s, const std::string& name) {
  for (const auto& l : s.labels) {
    if (l.name == name) return l.value;
  }
  return "";
}

bool HasLabel(const LogSource& s, const std::string& name) {
  for (const auto& l : s.labels) {
    if (l.name == name) return true;
  }
  return false;
}

const LogSource* Find(const std::vector<LogSource>& v, const std::string& path) {
  for (const auto& s : v) {
    if (s.path == path) return &s;
  }
  return nullptr;
}

// Options that look only at a fake /proc.
DiscoveryOptions ProcOnly(const std::string& proc_root) {
  DiscoveryOptions o;
  o.proc_root = proc_root;
  o.docker_root.clear();
  o.pods_root.clear();
  return o;
}

class ProcScanTest : public ::testing::Test {
 protected:
  ProcScanTest() : proc_(dir_.Join("proc")) {}
  std::string File(const std::string& name) {
    std::string p = dir_.Join("files/" + name);
    WriteFile(p, "x\n");
    return p;
  }
  std::vector<LogSource> Discover(DiscoveryStats* stats = nullptr) {
    auto r = DiscoverLogSources(ProcOnly(proc_.root()), stats);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : std::vector<LogSource>{};
  }
  TempDir dir_;
  FakeProc proc_;
};

TEST_F(ProcScanTest, StdoutAndStderrToSeparateFiles) {
  proc_.AddProcess(100, {"python", "train.py", "--lr", "1e-3"}, "pt_main_thread");
  std::string out = File("run.out"), err = File("run.err");
  proc_.AddFd(100, 0, "/dev/null", kReadOnly);
  proc_.AddFd(100, 1, out);
  proc_.AddFd(100, 2, err, kWriteAppend);
  auto got = Discover();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].path, err);  // sorted by path
  EXPECT_EQ(got[1].path, out);
  EXPECT_EQ(got[1].labels, (wire::Labels{{"job", "train"}, {"source", out}, {"stream", "stdout"}}));
  EXPECT_EQ(Label(got[0], "stream"), "stderr");
  EXPECT_EQ(got[0].origin, "process");
  EXPECT_EQ(got[0].format, LogFormat::kPlain);
}

TEST_F(ProcScanTest, StdoutAndStderrToOneFileIsOneSourceWithoutStream) {
  std::string log = File("nohup.out");
  proc_.AddProcess(100, {"python", "-m", "mymod"}, "python");
  proc_.AddFd(100, 1, log);
  proc_.AddFd(100, 2, log);
  auto got = Discover();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].path, log);
  EXPECT_EQ(Label(got[0], "job"), "mymod");
  EXPECT_FALSE(HasLabel(got[0], "stream"));
}

TEST_F(ProcScanTest, OtherFdsNeedALogNameAndWriteMode) {
  proc_.AddProcess(7, {"/opt/bin/server", "--port", "80"}, "server");
  std::string app = File("app.log"), rw = File("debug.txt"), vocab = File("vocab.txt");
  std::string model = File("model.bin"), rotated = File("app.log.1"), journal = File("x.journal");
  proc_.AddFd(7, 3, app, kWriteAppend);
  proc_.AddFd(7, 4, rw, kReadWrite);
  proc_.AddFd(7, 5, vocab, kReadOnly);  // a dataset being read, not a log
  proc_.AddFd(7, 6, model, kWriteAppend);
  proc_.AddFd(7, 7, rotated, kWriteAppend);  // the tailer follows the rename; no new source
  proc_.AddFd(7, 8, journal, kWriteAppend);
  proc_.AddFd(7, 9, "socket:[4242]", "");
  proc_.AddFd(7, 10, "pipe:[77]", "");
  proc_.AddFd(7, 11, "anon_inode:[eventfd]", "");
  proc_.AddFd(7, 12, File("nofdinfo.log"), "");  // write mode unknown: skipped
  std::string leveldb = File("000003.log");      // LevelDB's binary write-ahead log
  WriteFile(leveldb, std::string("\x1b\x00\x01\x01\x00\x00", 6) + "CrossDevice");
  proc_.AddFd(7, 13, leveldb, kWriteAppend);
  proc_.AddFd(7, 1, "/dev/pts/0", "0100002");
  auto got = Discover();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].path, app);
  EXPECT_EQ(got[1].path, rw);
  EXPECT_EQ(Label(got[0], "job"), "server");
  EXPECT_FALSE(HasLabel(got[0], "stream"));
}

TEST_F(ProcScanTest, StdoutNeedsNoLogNameButMustBeARegularWrittenFile) {
  proc_.AddProcess(8, {"./bench"}, "bench");
  std::string results = File("results.csv");
  proc_.AddFd(8, 1, results, "");  // fdinfo unreadable: a redirect is still a redirect
  proc_.AddFd(8, 2, dir_.Join("files"), "0100001");  // a directory
  proc_.AddProcess(9, {"./reader"}, "reader");
  proc_.AddFd(9, 1, File("input.log"), kReadOnly);
  proc_.AddProcess(10, {"tar", "cf", "-", "."}, "tar");
  proc_.AddFd(10, 1, File("backup.tar"));
  auto got = Discover();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].path, results);
  EXPECT_EQ(Label(got[0], "stream"), "stdout");
}

TEST_F(ProcScanTest, DeletedFilesAreSkippedAndCounted) {
  proc_.AddProcess(5, {"python", "a.py"}, "python");
  proc_.AddFd(5, 1, dir_.Join("files/gone.log") + " (deleted)");
  DiscoveryStats stats;
  EXPECT_TRUE(Discover(&stats).empty());
  EXPECT_EQ(stats.deleted_files_skipped, 1u);
  EXPECT_EQ(stats.pids_scanned, 1u);
}

TEST_F(ProcScanTest, KernelThreadsAndVigilItselfAreIgnored) {
  std::string log = File("k.log");
  proc_.AddProcess(2, {}, "kthreadd");
  proc_.AddFd(2, 1, log);
  proc_.AddProcess(3, {"/usr/local/bin/vigil", "up"}, "vigil");
  proc_.AddFd(3, 1, log);
  proc_.AddFd(3, 5, File("vigil-own.log"));
  WriteFile(proc_.root() + "/self", "not a pid");  // non-numeric entries are skipped
  EXPECT_TRUE(Discover().empty());
}

TEST_F(ProcScanTest, SharedFileTakesTheSurestJobName) {
  // "timeout 3600 python train.py > train.log": the parent holds the file
  // too, and has the lower pid; its name says nothing about the job.
  std::string log = File("train.log");
  proc_.AddProcess(10, {"timeout", "3600", "python", "-u", "x"}, "timeout");
  proc_.AddFd(10, 1, log);
  proc_.AddProcess(11, {"python", "train.py"}, "python");
  proc_.AddFd(11, 1, log);
  proc_.AddProcess(12, {"python", "train.py"}, "python");
  proc_.AddFd(12, 2, log);  // a worker writing stderr there: the stream is mixed
  auto got = Discover();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(Label(got[0], "job"), "train");
  EXPECT_FALSE(HasLabel(got[0], "stream"));
}

TEST_F(ProcScanTest, TeeTakesTheJobNameAcrossThePipe) {
  // "python train.py 2>&1 | tee log.txt"
  std::string log = File("log.txt");
  proc_.AddProcess(20, {"python", "train.py"}, "python");
  proc_.AddFd(20, 1, "pipe:[777]", "");
  proc_.AddFd(20, 2, "pipe:[777]", "");
  proc_.AddProcess(21, {"tee", "log.txt"}, "tee");
  proc_.AddFd(21, 0, "pipe:[777]", "");
  proc_.AddFd(21, 3, log, "0101001");
  // An unrelated tee whose pipe has no writer left keeps its own name.
  std::string other = File("other.log");
  proc_.AddProcess(30, {"tee", "-a", "other.log"}, "tee");
  proc_.AddFd(30, 0, "pipe:[999]", "");
  proc_.AddFd(30, 3, other);
  auto got = Discover();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(Label(*Find(got, log), "job"), "train");
  EXPECT_EQ(Label(*Find(got, other), "job"), "tee");
}

TEST_F(ProcScanTest, FdScanIsBounded) {
  proc_.AddProcess(40, {"./many"}, "many");
  for (int fd = 3; fd < 13; ++fd) proc_.AddFd(40, fd, File("f" + std::to_string(fd) + ".log"));
  DiscoveryOptions o = ProcOnly(proc_.root());
  o.max_fds_per_process = 4;
  DiscoveryStats stats;
  auto got = DiscoverLogSources(o, &stats);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->size(), 4u);
  EXPECT_EQ(stats.fd_tables_truncated, 1u);
  EXPECT_EQ(stats.fds_scanned, 4u);

  o.max_fds_per_process = 4096;
  o.max_sources = 3;
  got = DiscoverLogSources(o, &stats);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->size(), 3u);
  EXPECT_EQ(stats.sources_dropped, 7u);
}

TEST_F(ProcScanTest, UnreadableFdTablesAreCounted) {
  if (::geteuid() == 0) GTEST_SKIP() << "root reads every fd table";
  proc_.AddProcess(50, {"python", "train.py"}, "python");
  proc_.AddFd(50, 1, File("t.log"));
  ASSERT_EQ(::chmod((proc_.PidDir(50) + "/fd").c_str(), 0), 0);
  DiscoveryStats stats;
  EXPECT_TRUE(Discover(&stats).empty());
  EXPECT_EQ(stats.pids_denied, 1u);
  ::chmod((proc_.PidDir(50) + "/fd").c_str(), 0755);
}

TEST_F(ProcScanTest, DiscovererReusesUnchangedProcesses) {
  std::string log = File("train.log");
  proc_.AddProcess(60, {"python", "train.py"}, "weird) (comm");
  proc_.AddFd(60, 1, log);
  proc_.AddProcess(61, {"sleep", "100"}, "sleep");
  proc_.AddFd(61, 0, "/dev/null", kReadOnly);
  LogSourceDiscoverer d(ProcOnly(proc_.root()));
  DiscoveryStats stats;
  auto first = d.Discover(&stats);
  ASSERT_TRUE(first.ok());
  ASSERT_EQ(first->size(), 1u);
  EXPECT_EQ(stats.pids_cached, 0u);
  auto second = d.Discover(&stats);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(*second, *first);
  EXPECT_EQ(stats.pids_cached, 2u);
  EXPECT_EQ(stats.fds_scanned, 0u);

  // Rotation: the same fd now names another file. Seen at once.
  std::string rotated = File("train.log.1");
  proc_.RemoveFd(60, 1);
  testing::Symlink(rotated, proc_.PidDir(60) + "/fd/1");
  auto third = d.Discover(&stats);
  ASSERT_TRUE(third.ok());
  EXPECT_TRUE(third->empty());

  // Pid reuse: a new process under an old pid is looked at afresh.
  proc_.AddProcess(61, {"python", "eval.py"}, "python", /*starttime=*/5000);
  proc_.AddFd(61, 2, File("eval.err"));
  auto fourth = d.Discover(&stats);
  ASSERT_TRUE(fourth.ok());
  ASSERT_EQ(fourth->size(), 1u);
  EXPECT_EQ(Label((*fourth)[0], "job"), "eval");

  // A process gone from /proc is gone from the results.
  std::filesystem::remove_all(proc_.PidDir(61));
  auto fifth = d.Discover(&stats);
  ASSERT_TRUE(fifth.ok());
  EXPECT_TRUE(fifth->empty());
  EXPECT_EQ(stats.pids_scanned, 1u);
}

TEST_F(ProcScanTest, DiscovererFindsLateLogFilesWithinTheRescanInterval) {
  proc_.AddProcess(70, {"./server"}, "server");
  proc_.AddFd(70, 0, "/dev/null", kReadOnly);
  LogSourceDiscoverer d(ProcOnly(proc_.root()));
  ASSERT_TRUE(d.Discover().ok());
  std::string late = File("late.log");
  proc_.AddFd(70, 9, late);
  bool found = false;
  for (uint64_t round = 0; round < internal::kFullRescanRounds && !found; ++round) {
    auto got = d.Discover();
    ASSERT_TRUE(got.ok());
    found = Find(*got, late) != nullptr;
  }
  EXPECT_TRUE(found);
}

// As root, checks the same over the real /proc from a child that dropped to
// "nobody": root's processes' fd tables are then unreadable.
TEST(RealProcTest, OtherUsersProcessesAreCountedAsDenied) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to drop to another user";
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(3);
    DiscoveryStats stats;
    auto got = DiscoverLogSources(ProcOnly("/proc"), &stats);
    if (!got.ok()) ::_exit(4);
    if (stats.pids_scanned <= 1) ::_exit(2);  // hidepid: nothing to see
    ::_exit(stats.pids_denied > 0 ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  if (WEXITSTATUS(status) == 2) GTEST_SKIP() << "/proc is mounted with hidepid";
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(FdinfoTest, ParsesOctalFlags) {
  EXPECT_EQ(internal::ParseFdinfoFlags("pos:\t0\nflags:\t0102001\nmnt_id:\t1\n"), 0102001);
  EXPECT_EQ(internal::ParseFdinfoFlags("flags:\t02"), 2);
  EXPECT_EQ(internal::ParseFdinfoFlags("pos:\t0\n"), -1);
  EXPECT_EQ(internal::ParseFdinfoFlags("flags:\t0109\n"), -1);
  EXPECT_EQ(internal::ParseFdinfoFlags("flags:\t\n"), -1);
  EXPECT_EQ(internal::ParseFdinfoFlags("flags:\t777777777777777\n"), -1);
}

// A real child whose stdout (and stderr) go to files, found through /proc.
class RealChild {
 public:
  explicit RealChild(const std::vector<std::string>& argv) {
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, 0);  // its own group, so its children die with it
    if (posix_spawn(&pid_, args[0], nullptr, &attr, args.data(), environ) != 0) pid_ = -1;
    posix_spawnattr_destroy(&attr);
  }
  ~RealChild() {
    if (pid_ <= 0) return;
    ::kill(-pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
  }
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
};

// Polls until `path` is discovered and `done` holds for it: the child needs a
// moment to redirect, and "exec >a 2>&1" passes through a state where only
// stdout points at the file. Returns the last sighting after the deadline.
std::optional<LogSource> WaitFor(const std::string& path,
                                 bool (*done)(const LogSource&) = nullptr) {
  DiscoveryOptions o = ProcOnly("/proc");
  std::optional<LogSource> last;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    auto got = DiscoverLogSources(o);
    if (got.ok()) {
      if (const LogSource* s = Find(*got, path)) {
        last = *s;
        if (done == nullptr || done(*s)) return last;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return last;
}

bool NoStream(const LogSource& s) { return !HasLabel(s, "stream"); }

TEST(RealProcTest, FindsARedirectedChildWithItsJobName) {
  TempDir dir;
  std::string script = dir.Join("train.sh");
  WriteFile(script, "exec >\"$1\" 2>&1\nwhile :; do echo tick; sleep 0.2; done\n");
  std::string log = dir.Join("file.log");
  RealChild child({"/bin/sh", script, log});
  ASSERT_GT(child.pid(), 0);
  auto found = WaitFor(log, NoStream);
  ASSERT_TRUE(found.has_value()) << "not discovered: " << log;
  EXPECT_EQ(Label(*found, "job"), "train");
  EXPECT_EQ(found->origin, "process");
  EXPECT_FALSE(HasLabel(*found, "stream"));
  EXPECT_EQ(Label(*found, "source"), log);
}

TEST(RealProcTest, DiscovererFindsTheChildAgainFromItsCache) {
  TempDir dir;
  std::string script = dir.Join("serve.sh");
  WriteFile(script, "exec >\"$1\" 2>&1\nwhile :; do echo tick; sleep 0.2; done\n");
  std::string log = dir.Join("serve.log");
  RealChild child({"/bin/sh", script, log});
  ASSERT_GT(child.pid(), 0);
  ASSERT_TRUE(WaitFor(log).has_value());
  LogSourceDiscoverer d(ProcOnly("/proc"));
  for (int round = 0; round < 3; ++round) {
    DiscoveryStats stats;
    auto got = d.Discover(&stats);
    ASSERT_TRUE(got.ok());
    const LogSource* s = Find(*got, log);
    ASSERT_NE(s, nullptr) << "round " << round;
    EXPECT_EQ(Label(*s, "job"), "serve");
    if (round > 0) {
      EXPECT_GT(stats.pids_cached, 0u);
    }
  }
}

TEST(RealProcTest, ShellRedirectWithSeparateStreams) {
  TempDir dir;
  std::string out = dir.Join("file.log"), err = dir.Join("file.err");
  RealChild child({"/bin/sh", "-c", "exec >" + out + " 2>" + err + "; sleep 5"});
  ASSERT_GT(child.pid(), 0);
  auto found = WaitFor(out);
  ASSERT_TRUE(found.has_value()) << "not discovered: " << out;
  EXPECT_EQ(Label(*found, "stream"), "stdout");
  EXPECT_FALSE(Label(*found, "job").empty());
  auto found_err = WaitFor(err);
  ASSERT_TRUE(found_err.has_value());
  EXPECT_EQ(Label(*found_err, "stream"), "stderr");
}

TEST(RealProcTest, WholeNodeScanSucceedsAndIsCheap) {
  DiscoveryOptions o;  // the real defaults: /proc, docker, pods
  DiscoveryStats stats;
  auto got = DiscoverLogSources(o, &stats);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_GT(stats.pids_scanned, 0u);
  EXPECT_GT(stats.fds_scanned, 0u);
  bool print = std::getenv("VIGIL_DISCOVER_PRINT") != nullptr;  // to eyeball a real node
  for (const LogSource& s : *got) {
    EXPECT_EQ(s.path.front(), '/');
    EXPECT_EQ(Label(s, "source"), s.path);
    if (print) {
      std::printf("%s %s %s\n", s.origin.c_str(), LogFormatName(s.format),
                  wire::LabelsToString(s.labels).c_str());
    }
  }
  // Printed for docs/discovery.md "Cost"; not asserted tightly (shared CI).
  std::printf("real /proc: %zu pids, %zu fds, %zu sources, %lld us\n", stats.pids_scanned,
              stats.fds_scanned, got->size(), static_cast<long long>(stats.elapsed_us));
  EXPECT_LT(stats.elapsed_us, 5'000'000);

  // The agent's loop: a warm round looks at each process in two small reads.
  LogSourceDiscoverer d(o);
  ASSERT_TRUE(d.Discover().ok());
  DiscoveryStats warm;
  ASSERT_TRUE(d.Discover(&warm).ok());
  std::printf("real /proc, warm: %zu pids (%zu cached), %zu fds, %lld us\n", warm.pids_scanned,
              warm.pids_cached, warm.fds_scanned, static_cast<long long>(warm.elapsed_us));
  EXPECT_GT(warm.pids_cached, 0u);
}

}  // namespace
}  // namespace vigil::discover
