// FileWatcher: wakes the log reader when a watched file may have changed, so
// lines reach the server promptly without busy polling.
//
// inotify watches the *directories* of the watched files (a file watch would
// miss the file that replaces it on rotation): IN_MODIFY, IN_CREATE,
// IN_MOVED_FROM/TO, IN_DELETE, IN_CLOSE_WRITE, IN_ATTRIB. Any event in such a
// directory wakes Wait(); the caller then asks its tailers for data, which is
// cheap when nothing changed. Where inotify is unavailable, its watch limit is
// reached, or a directory does not exist yet, Wait() falls back to polling
// every poll_interval_ms (directories are re-tried on each Wait). inotify does
// not see writes made on another host (NFS) or some overlay setups; callers
// should still read on a slow timer.
//
// Thread safety: Watch, Unwatch, Wait, Sleep and TakeChanges are called from
// one thread (the reader loop); Wake() may be called from any thread to end a
// Wait or Sleep early.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "core/status.h"

namespace vigil::collect::logs {

struct FileWatcherOptions {
  int64_t poll_interval_ms = 250;
  bool force_polling = false;  // tests, and file systems where inotify lies
};

// Which watched files may have changed since the last TakeChanges().
struct FileChanges {
  bool all = false;             // the kernel's queue overflowed: assume every file
  std::set<std::string> files;  // watched files named by an event (or newly watched)
  std::set<std::string> dirs;   // directories polled, or with events on other names

  bool MayHaveChanged(const std::string& file_path) const;
};

class FileWatcher {
 public:
  static Result<std::unique_ptr<FileWatcher>> Create(FileWatcherOptions options = {});
  ~FileWatcher();
  FileWatcher(const FileWatcher&) = delete;
  FileWatcher& operator=(const FileWatcher&) = delete;

  // Starts watching the directory of `file_path` (reference-counted per
  // directory). Never fails for a missing directory: that one is polled.
  Status Watch(const std::string& file_path);
  void Unwatch(const std::string& file_path);

  // Blocks until something may have changed in a watched directory (true),
  // Wake() was called (true), or timeout_ms passed (false). With polled
  // directories it returns true after at most poll_interval_ms.
  bool Wait(int64_t timeout_ms);
  void Wake();
  // Blocks for timeout_ms whatever changes (they wait for TakeChanges),
  // unless Wake() is called.
  void Sleep(int64_t timeout_ms);

  // What changed since the last call (the events Wait drained and those
  // queued since), and starts collecting anew. A file just passed to Watch()
  // counts as changed.
  FileChanges TakeChanges();

  // True when at least one directory is polled rather than watched.
  bool polling() const;
  size_t watched_dirs() const { return dirs_.size(); }

 private:
  explicit FileWatcher(FileWatcherOptions options) : options_(options) {}
  void TryAddWatches();
  bool DrainEvents();

  FileWatcherOptions options_;
  int inotify_fd_ = -1;
  int wake_fd_ = -1;  // eventfd
  void NoteEvent(int wd, std::string_view name);

  struct Dir {
    int refs = 0;
    int wd = -1;                       // -1: polled
    std::map<std::string, int> files;  // basenames of the watched files, refcounted
  };
  FileChanges changes_;
  std::map<std::string, Dir> dirs_;
  std::map<int, std::string> by_wd_;
};

}  // namespace vigil::collect::logs
