// Env: the files and clocks Vigil touches, behind one injectable interface, so
// tests can fake time and fault the disk (DESIGN.md "Conventions").
//
// Thread safety: Env::Default() is safe to use from any thread. An
// AppendableFile is used by one thread at a time.
#pragma once

#include <cerrno>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace vigil {

// A file opened for appending, such as a WAL segment.
class AppendableFile {
 public:
  virtual ~AppendableFile() = default;
  virtual Status Append(std::string_view data) = 0;
  // Makes everything appended so far durable (fdatasync).
  virtual Status Sync() = 0;
  virtual Status Close() = 0;
  virtual uint64_t Size() const = 0;
};

struct FsUsage {
  uint64_t total_bytes = 0;
  uint64_t avail_bytes = 0;  // available to an unprivileged user
};

class Env {
 public:
  virtual ~Env() = default;

  // The process-wide real environment. Never deleted.
  static Env* Default();

  // Reads at most `max_bytes` of a file. Files in /proc and /sys report size 0,
  // so this reads until EOF rather than trusting stat().
  virtual Result<std::string> ReadFile(const std::string& path, size_t max_bytes) = 0;
  // Writes `data` to a temporary file, syncs it and renames it over `path`:
  // readers see the old content or the new, never a mix.
  virtual Status WriteFileAtomic(const std::string& path, std::string_view data) = 0;
  // Opens (creating if needed) a file for appending at its end.
  virtual Result<std::unique_ptr<AppendableFile>> OpenAppendable(const std::string& path) = 0;
  // Names of the entries in a directory, without "." and "..", sorted.
  virtual Result<std::vector<std::string>> ListDir(const std::string& path) = 0;
  // Creates a directory and its missing parents (mode 0755).
  virtual Status CreateDirs(const std::string& path) = 0;
  virtual Status RemoveFile(const std::string& path) = 0;
  virtual Status RenameFile(const std::string& from, const std::string& to) = 0;
  virtual bool FileExists(const std::string& path) = 0;
  virtual Result<uint64_t> FileSize(const std::string& path) = 0;
  // Total size of the regular files under a directory, recursively.
  virtual Result<uint64_t> DirSize(const std::string& path) = 0;
  virtual Result<FsUsage> GetFsUsage(const std::string& path) = 0;

  // Wall-clock time, milliseconds since the Unix epoch.
  virtual int64_t NowMillis() = 0;
  // A clock that never goes backwards, for measuring intervals.
  virtual int64_t MonotonicMillis() = 0;
  virtual void SleepMillis(int64_t ms) = 0;
};

// Retries a system call interrupted by a signal (EINTR).
template <typename F>
auto NoEintr(F f) {
  decltype(f()) r;
  do {
    r = f();
  } while (r < 0 && errno == EINTR);
  return r;
}

// Joins path components with exactly one '/' between them.
std::string JoinPath(std::string_view a, std::string_view b);

}  // namespace vigil
