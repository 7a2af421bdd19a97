// Internals of log source discovery shared by its .cc files and tests. Not a
// public header: other modules include discover/log_sources.h or job_name.h.
//
// Thread safety: pure functions over the options they are given.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "discover/job_name.h"
#include "discover/log_sources.h"

namespace vigil::discover::internal {

// Origin ranks: when several origins find one path, the highest decides its
// format, origin and labels. A container runtime's process (dockerd,
// containerd) also holds the container's log open for writing, so container
// origins must outrank "process"; `vigil run`'s child writes its spool file,
// so "vigil-run" outranks everything.
enum class Rank { kProcess = 0, kConfig = 1, kDocker = 2, kCri = 3, kVigilRun = 4 };
const char* RankOrigin(Rank rank);

struct Candidate {
  LogSource source;  // labels not yet normalized; "source" is added at the end
  Rank rank = Rank::kProcess;
};

// Name checks on a path or basename (case-insensitive suffixes).
bool LooksLikeLogName(std::string_view basename);   // *.log *.txt *.out *.err stdout ...
bool IsRotatedNumbered(std::string_view basename);  // x.log.1, x.out.3, x.log.20240101-120000
bool IsBinaryFileName(std::string_view path);       // *.journal *.db *.sqlite *.wal *.tar ...
bool IsSystemPath(std::string_view path);           // /dev /proc /sys, journald's dirs
std::string_view PathBasename(std::string_view path);

// "flags:\t0100001" in the text of /proc/<pid>/fdinfo/<fd>; -1 when absent.
long ParseFdinfoFlags(std::string_view fdinfo);

// A log file a process holds: fd number and the path readlink gave.
struct FdHit {
  int fd = 0;
  std::string path;
  bool operator==(const FdHit&) const = default;
};

// What the process scan learns about one pid.
struct ProcInfo {
  int pid = 0;
  std::vector<FdHit> hits;
  std::string stdin_pipe;              // "pipe:[123]" or ""
  std::vector<std::string> out_pipes;  // pipes on fd 1 and 2
  JobName job;
  bool named = false;    // cmdline read: not a kernel thread, zombie or Vigil
  int64_t start_ms = 0;  // Unix epoch ms the process started (0: unknown)
};

// What the process scan remembers between rounds (LogSourceDiscoverer), so a
// round re-reads the fd table only of processes that are new, whose fd count
// changed, or whose last full scan is kFullRescanRounds old. A reused entry's
// hits are re-checked with one readlink each, so a rotated file drops out at
// once. Log files are opened at start (a redirect) or soon after; one opened
// late by a long-lived process is found within kFullRescanRounds rounds.
inline constexpr uint64_t kFullRescanRounds = 10;
struct ProcCacheEntry {
  uint64_t starttime = 0;      // field 22 of /proc/<pid>/stat: tells pid reuse apart
  int64_t fd_count = 0;        // st_size of /proc/<pid>/fd (Linux >= 6.2; 0 before)
  uint64_t scanned_round = 0;  // of the last full scan
  uint64_t seen_round = 0;     // entries of pids gone from /proc are dropped
  ProcInfo info;
};
struct ProcScanCache {
  uint64_t round = 0;
  std::unordered_map<int, ProcCacheEntry> by_pid;
};

// Each appends what it finds to `out`, at most `limit` entries in all; an
// unreadable root adds nothing. `cache` may be null (a stateless scan).
void ScanProcesses(const DiscoveryOptions& options, DiscoveryStats* stats,
                   std::vector<Candidate>* out, size_t limit, ProcScanCache* cache = nullptr);
// Labels parsed from each container's config.v2.json, reused while the file's
// size, mtime and inode are unchanged: parsing every config every round would
// cost more than the whole /proc scan on a node with a hundred containers.
struct DockerConfigCacheEntry {
  int64_t mtime_ns = 0;
  int64_t size = -1;
  uint64_t ino = 0;
  wire::Labels labels;
  uint64_t seen_round = 0;
};
struct DockerConfigCache {
  uint64_t round = 0;
  std::unordered_map<std::string, DockerConfigCacheEntry> by_id;
  size_t parses = 0;  // for tests: how many configs were parsed, all rounds
};

// What LogSourceDiscoverer keeps between rounds.
struct DiscoveryCache {
  ProcScanCache proc;
  DockerConfigCache docker;
};

void ScanDocker(const std::string& docker_root, std::vector<Candidate>* out, size_t limit,
                DockerConfigCache* cache = nullptr);
void ScanPods(const std::string& pods_root, std::vector<Candidate>* out, size_t limit);
void ScanRunSpool(const std::string& spool_dir, std::vector<Candidate>* out, size_t limit);
void ScanGlobs(const std::vector<std::string>& globs, std::vector<Candidate>* out, size_t limit);

}  // namespace vigil::discover::internal
