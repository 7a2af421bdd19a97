#include "collect/logs/file_watcher.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "core/temp_dir.h"

namespace vigil::collect::logs {
namespace {

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void Append(const std::string& path, const std::string& s) {
  std::ofstream f(path, std::ios::app);
  f << s;
}

// Lets a writer thread act while Wait() blocks.
template <typename F>
std::thread After(int ms, F f) {
  return std::thread([ms, f] {
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    f();
  });
}

TEST(FileWatcherTest, InotifyWakesOnAppendRenameAndCreate) {
  TempDir tmp;
  std::string path = tmp.Join("a.log");
  Append(path, "x\n");
  auto w = FileWatcher::Create();
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE((*w)->Watch(path).ok());
  if ((*w)->polling()) GTEST_SKIP() << "inotify unavailable here";
  EXPECT_EQ((*w)->watched_dirs(), 1u);
  EXPECT_FALSE((*w)->Wait(50));  // nothing happened
  for (auto action : {0, 1, 2}) {
    auto th = After(50, [&] {
      if (action == 0) Append(path, "more\n");
      if (action == 1) std::filesystem::rename(path, path + ".1");
      if (action == 2) Append(path, "new file\n");
    });
    int64_t t0 = NowMs();
    EXPECT_TRUE((*w)->Wait(5000)) << "action " << action;
    EXPECT_LT(NowMs() - t0, 2000) << "action " << action;
    th.join();
    while ((*w)->Wait(20)) {
    }
  }
}

TEST(FileWatcherTest, WakeEndsAWaitFromAnotherThread) {
  auto w = FileWatcher::Create();
  ASSERT_TRUE(w.ok());
  auto th = After(50, [&] { (*w)->Wake(); });
  int64_t t0 = NowMs();
  EXPECT_TRUE((*w)->Wait(10000));
  EXPECT_LT(NowMs() - t0, 5000);
  th.join();
}

TEST(FileWatcherTest, PollingFallbackReturnsEveryInterval) {
  TempDir tmp;
  auto w = FileWatcher::Create({.poll_interval_ms = 30, .force_polling = true});
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE((*w)->Watch(tmp.Join("a.log")).ok());
  EXPECT_TRUE((*w)->polling());
  int64_t t0 = NowMs();
  EXPECT_TRUE((*w)->Wait(10000));
  int64_t took = NowMs() - t0;
  EXPECT_GE(took, 25);
  EXPECT_LT(took, 2000);
  // A timeout shorter than the interval still times out.
  EXPECT_FALSE((*w)->Wait(5));
}

TEST(FileWatcherTest, MissingDirectoryIsPolledUntilItExists) {
  TempDir tmp;
  std::string dir = tmp.Join("later");
  auto w = FileWatcher::Create({.poll_interval_ms = 20});
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE((*w)->Watch(dir + "/a.log").ok());
  EXPECT_TRUE((*w)->polling());
  EXPECT_TRUE((*w)->Wait(1000));  // polled: returns after the interval
  std::filesystem::create_directory(dir);
  (void)(*w)->Wait(1);  // picks the directory up
  if ((*w)->polling()) GTEST_SKIP() << "inotify unavailable here";
  auto th = After(50, [&] { Append(dir + "/a.log", "x\n"); });
  EXPECT_TRUE((*w)->Wait(5000));
  th.join();
  // Removing the directory kills its watch: back to polling, never stuck.
  std::filesystem::remove_all(dir);
  while ((*w)->Wait(50) && !(*w)->polling()) {
  }
  EXPECT_TRUE((*w)->polling());
}

// The reader asks only the files an event named: a write to one of two logs
// marks that one; an event on a name nobody watches (a rotated copy) marks
// the directory, so nothing a rotation touches is skipped.
TEST(FileWatcherTest, TakeChangesNamesTheFilesEventsWereAbout) {
  TempDir tmp;
  std::string a = tmp.Join("a.log"), b = tmp.Join("b.log");
  Append(a, "x\n");
  Append(b, "x\n");
  auto w = FileWatcher::Create();
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE((*w)->Watch(a).ok());
  ASSERT_TRUE((*w)->Watch(b).ok());
  if ((*w)->polling()) GTEST_SKIP() << "inotify unavailable";
  FileChanges first = (*w)->TakeChanges();  // newly watched: both
  EXPECT_TRUE(first.MayHaveChanged(a));
  EXPECT_TRUE(first.MayHaveChanged(b));
  EXPECT_FALSE((*w)->TakeChanges().MayHaveChanged(a));  // taken

  Append(b, "y\n");
  EXPECT_TRUE((*w)->Wait(2000));
  FileChanges c = (*w)->TakeChanges();
  EXPECT_FALSE(c.MayHaveChanged(a));
  EXPECT_TRUE(c.MayHaveChanged(b));

  // Sleep collects events without returning early.
  int64_t t0 = NowMs();
  auto writer = After(20, [&] { Append(a, "z\n"); });
  (*w)->Sleep(150);
  writer.join();
  EXPECT_GE(NowMs() - t0, 140);
  c = (*w)->TakeChanges();
  EXPECT_TRUE(c.MayHaveChanged(a));
  EXPECT_FALSE(c.MayHaveChanged(b));

  std::filesystem::rename(a, tmp.Join("a.log.1"));
  EXPECT_TRUE((*w)->Wait(2000));
  c = (*w)->TakeChanges();
  EXPECT_TRUE(c.MayHaveChanged(a));  // IN_MOVED_FROM names a.log
  EXPECT_TRUE(c.MayHaveChanged(b));  // IN_MOVED_TO a.log.1: the directory
}

TEST(FileWatcherTest, UnwatchIsReferenceCounted) {
  TempDir tmp;
  auto w = FileWatcher::Create();
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE((*w)->Watch(tmp.Join("a.log")).ok());
  ASSERT_TRUE((*w)->Watch(tmp.Join("b.log")).ok());
  EXPECT_EQ((*w)->watched_dirs(), 1u);
  (*w)->Unwatch(tmp.Join("a.log"));
  EXPECT_EQ((*w)->watched_dirs(), 1u);
  (*w)->Unwatch(tmp.Join("b.log"));
  EXPECT_EQ((*w)->watched_dirs(), 0u);
  EXPECT_FALSE((*w)->Watch("").ok());
}

}  // namespace
}  // namespace vigil::collect::logs
