// Process discovery: the files a process writes its logs to, from /proc.
//
// Cost shapes the order of work. For every pid we list the fd table and
// readlink each fd (the one unavoidable cost: a few µs per fd); everything else
// (fdinfo, stat, cmdline, comm) is read only for the few fds whose target
// looks like a log, so a node with thousands of idle processes stays cheap.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/env.h"
#include "core/strings.h"
#include "discover/discover_internal.h"

namespace vigil::discover::internal {
namespace {

constexpr std::string_view kDeletedSuffix = " (deleted)";
// How many pipe hops to follow from a pipe sink (tee) back to the job.
constexpr int kMaxPipeHops = 4;

std::optional<std::string> ReadLink(const std::string& path) {
  char buf[PATH_MAX];
  ssize_t n = ::readlink(path.c_str(), buf, sizeof(buf));
  if (n <= 0 || static_cast<size_t>(n) >= sizeof(buf)) return std::nullopt;
  return std::string(buf, static_cast<size_t>(n));
}

std::optional<int> ParseNonNegative(std::string_view s) {
  auto v = ParseInt64(s);
  if (!v || *v < 0 || *v > INT_MAX) return std::nullopt;
  return static_cast<int>(*v);
}

// True when `target`, as the host sees that path, is the file the fd refers
// to. A process in another mount namespace (a container) reports paths of its
// own filesystem, which on the host are missing or another file: those logs
// are found through docker/CRI instead.
bool SameRegularFile(const std::string& fd_link, const std::string& target) {
  struct stat by_path {};
  if (::stat(target.c_str(), &by_path) != 0 || !S_ISREG(by_path.st_mode)) return false;
  struct stat by_fd {};
  if (::stat(fd_link.c_str(), &by_fd) != 0) return false;
  return by_fd.st_dev == by_path.st_dev && by_fd.st_ino == by_path.st_ino;
}

// Whether fd was opened for writing; nullopt when fdinfo is unreadable.
std::optional<bool> OpenForWriting(const std::string& fdinfo_path) {
  auto text = Env::Default()->ReadFile(fdinfo_path, 4096);
  if (!text.ok()) return std::nullopt;
  long flags = ParseFdinfoFlags(*text);
  if (flags < 0) return std::nullopt;
  return (flags & O_ACCMODE) == O_WRONLY || (flags & O_ACCMODE) == O_RDWR;
}

// Some programs name binary files *.log (LevelDB's and so Chromium's write
// logs, SQLite-style journals): a NUL among the first bytes says so.
bool StartsBinary(const std::string& path) {
  auto head = Env::Default()->ReadFile(path, 512);
  return head.ok() && head->find('\0') != std::string::npos;
}

bool IsCandidatePath(int fd, const std::string& path) {
  std::string_view base = PathBasename(path);
  bool std_stream = fd == 1 || fd == 2;
  if (!std_stream && !LooksLikeLogName(base)) return false;
  return !IsSystemPath(path) && !IsBinaryFileName(path) && !IsRotatedCompressed(path) &&
         !IsRotatedNumbered(base) && (std_stream || !StartsBinary(path));
}

// Lists up to `max_fds` fds of one process. Returns false when the fd table
// cannot be read (gone, or another user's process).
bool ScanFds(const std::string& pid_dir, size_t max_fds, DiscoveryStats* stats, ProcInfo* info) {
  std::string fd_dir = pid_dir + "/fd";
  DIR* d = ::opendir(fd_dir.c_str());
  if (d == nullptr) {
    if (errno == EACCES || errno == EPERM) ++stats->pids_denied;
    return false;
  }
  size_t seen = 0;
  while (struct dirent* e = ::readdir(d)) {
    auto fd = ParseNonNegative(e->d_name);
    if (!fd) continue;
    if (++seen > max_fds) {
      ++stats->fd_tables_truncated;
      break;
    }
    ++stats->fds_scanned;
    auto link = ReadLink(fd_dir + "/" + e->d_name);
    if (!link) continue;
    if (StartsWith(*link, "pipe:")) {
      if (*fd == 0) info->stdin_pipe = *link;
      if (*fd == 1 || *fd == 2) info->out_pipes.push_back(*link);
      continue;
    }
    if (link->empty() || link->front() != '/') continue;  // socket:, anon_inode:, ...
    if (EndsWith(*link, kDeletedSuffix)) {
      std::string undeleted = link->substr(0, link->size() - kDeletedSuffix.size());
      if (IsCandidatePath(*fd, undeleted)) ++stats->deleted_files_skipped;
      continue;
    }
    if (!IsCandidatePath(*fd, *link)) continue;
    info->hits.push_back({*fd, std::move(*link)});
  }
  ::closedir(d);
  return true;
}

// Keeps the hits that are regular files opened for writing. For stdout and
// stderr an unreadable fdinfo is no reason to drop them: a redirect is the
// clearest sign of a log there is.
void VerifyHits(const std::string& pid_dir, ProcInfo* info) {
  std::erase_if(info->hits, [&](const FdHit& h) {
    std::string n = std::to_string(h.fd);
    std::optional<bool> writing = OpenForWriting(pid_dir + "/fdinfo/" + n);
    bool std_stream = h.fd == 1 || h.fd == 2;
    if (writing.has_value() ? !*writing : !std_stream) return true;
    return !SameRegularFile(pid_dir + "/fd/" + n, h.path);
  });
}

// Reads cmdline and comm. False for kernel threads, zombies and Vigil itself.
bool NameProcess(const std::string& pid_dir, JobName* job) {
  Env* env = Env::Default();
  auto raw = env->ReadFile(pid_dir + "/cmdline", 64 * 1024);
  if (!raw.ok()) return false;
  std::vector<std::string> argv = SplitCmdline(*raw);
  if (argv.empty() || PathBasename(argv[0]) == "vigil") return false;
  auto comm = env->ReadFile(pid_dir + "/comm", 64);
  *job = JobNameFromCmdline(argv, comm.ok() ? std::string_view(*comm) : std::string_view());
  return true;
}

// "python train.py | tee log.txt": tee writes the file, but the job is on the
// other end of its stdin pipe. Follows pipes while the name is weak.
void NameAcrossPipes(const std::string& proc_root, std::vector<ProcInfo>* procs,
                     const std::unordered_map<std::string, std::vector<int>>& pipe_writers) {
  for (ProcInfo& p : *procs) {
    std::string pipe = p.stdin_pipe;
    for (int hop = 0; hop < kMaxPipeHops && p.job.kind < JobNameKind::kModule && !pipe.empty();
         ++hop) {
      auto it = pipe_writers.find(pipe);
      if (it == pipe_writers.end()) break;
      std::optional<JobName> best;
      int best_pid = 0;
      for (int writer : it->second) {  // pids ascending: the pipeline's parent first
        if (writer == p.pid) continue;
        std::string dir = JoinPath(proc_root, std::to_string(writer));
        JobName j;
        if (!NameProcess(dir, &j)) continue;
        if (!best || j.kind > best->kind) {
          best = j;
          best_pid = writer;
        }
      }
      if (!best) break;
      if (best->kind > p.job.kind) p.job = *best;
      // The next hop starts from the writer's own stdin.
      pipe.clear();
      auto link = ReadLink(JoinPath(proc_root, std::to_string(best_pid)) + "/fd/0");
      if (link && StartsWith(*link, "pipe:")) pipe = *link;
    }
  }
}

// One candidate per path. Where several processes write one file (a launcher
// and its workers share stdout), the surest job name wins, then the lowest
// pid; the stream label stays only if every writer agrees on it.
struct Merged {
  JobName job;
  int pid = 0;
  std::string stream;
  bool stream_conflict = false;
  int64_t start_ms = 0;  // the earliest writer's start (0: unknown)
};

std::string StreamOf(const ProcInfo& p, const std::string& path) {
  bool out = false, err = false, other = false;
  for (const FdHit& h : p.hits) {
    if (h.path != path) continue;
    (h.fd == 1 ? out : h.fd == 2 ? err : other) = true;
  }
  if (out && !err && !other) return "stdout";
  if (err && !out && !other) return "stderr";
  return "";
}

// Field 22 of /proc/<pid>/stat, after the ")" that ends comm (which may hold
// spaces and parentheses itself). 0 when unreadable.
uint64_t ReadStartTime(const std::string& pid_dir) {
  auto text = Env::Default()->ReadFile(pid_dir + "/stat", 1024);
  if (!text.ok()) return 0;
  size_t paren = text->rfind(')');
  if (paren == std::string::npos) return 0;
  std::vector<std::string_view> f = SplitFields(std::string_view(*text).substr(paren + 1));
  // f[0] is field 3 (state), so field 22 is f[19].
  if (f.size() < 20) return 0;
  return ParseUint64(f[19]).value_or(0);
}

// Unix ms the system booted ("btime" of <proc_root>/stat, whole seconds, so
// a start computed from it is early by under a second, never late); 0 when
// unreadable.
int64_t BootTimeMs(const std::string& proc_root) {
  auto text = Env::Default()->ReadFile(proc_root + "/stat", 1 << 20);
  if (!text.ok()) return 0;
  for (std::string_view line : Split(*text, '\n')) {
    if (!StartsWith(line, "btime ")) continue;
    auto v = ParseUint64(TrimSpace(line.substr(6)));
    return v && *v > 0 && *v < (uint64_t{1} << 40) ? static_cast<int64_t>(*v) * 1000 : 0;
  }
  return 0;
}

// A process's start in Unix ms from its start in clock ticks after boot.
int64_t StartUnixMs(int64_t boot_ms, uint64_t ticks) {
  static const long hz = [] {
    long v = ::sysconf(_SC_CLK_TCK);
    return v > 0 ? v : 100;
  }();
  if (boot_ms == 0 || ticks == 0) return 0;
  uint64_t t = std::min<uint64_t>(ticks, uint64_t{1} << 40);
  return boot_ms + static_cast<int64_t>(t / hz * 1000 + t % hz * 1000 / hz);
}

int64_t FdCount(const std::string& pid_dir) {
  struct stat st {};
  if (::stat((pid_dir + "/fd").c_str(), &st) != 0) return -1;
  return static_cast<int64_t>(st.st_size);
}

// The full look at one process. False when it contributes nothing at all
// (fd table unreadable): such pids are not cached and are retried.
bool ScanPid(const std::string& pid_dir, const DiscoveryOptions& options, DiscoveryStats* stats,
             ProcInfo* info) {
  if (!ScanFds(pid_dir, options.max_fds_per_process, stats, info)) return false;
  if (info->hits.empty()) return true;
  VerifyHits(pid_dir, info);
  info->named = !info->hits.empty() && NameProcess(pid_dir, &info->job);
  if (!info->named) info->hits.clear();
  return true;
}

// Whether a cached process's hits still hold, at one readlink each: after a
// rotation (rename, then reopen) the fd count is unchanged but the paths are
// not, and the process needs a full look now rather than rounds later.
bool HitsStillHold(const std::string& pid_dir, const ProcInfo& info) {
  for (const FdHit& h : info.hits) {
    auto link = ReadLink(pid_dir + "/fd/" + std::to_string(h.fd));
    if (!link || *link != h.path) return false;
  }
  return true;
}

}  // namespace

void ScanProcesses(const DiscoveryOptions& options, DiscoveryStats* stats,
                   std::vector<Candidate>* out, size_t limit, ProcScanCache* cache) {
  if (options.proc_root.empty()) return;
  DIR* d = ::opendir(options.proc_root.c_str());
  if (d == nullptr) return;
  const bool real_proc = options.proc_root == "/proc";
  const int self = static_cast<int>(::getpid());
  uint64_t round = cache != nullptr ? ++cache->round : 0;
  const int64_t boot_ms = BootTimeMs(options.proc_root);

  std::vector<ProcInfo> procs;
  std::unordered_map<std::string, std::vector<int>> pipe_writers;
  while (struct dirent* e = ::readdir(d)) {
    auto pid = ParseNonNegative(e->d_name);
    if (!pid || *pid == 0 || (real_proc && *pid == self)) continue;
    ++stats->pids_scanned;
    std::string pid_dir = options.proc_root + "/" + e->d_name;
    ProcInfo info;
    info.pid = *pid;
    uint64_t start = ReadStartTime(pid_dir);
    if (cache == nullptr) {
      if (!ScanPid(pid_dir, options, stats, &info)) continue;
    } else {
      int64_t fds = FdCount(pid_dir);
      auto it = cache->by_pid.find(*pid);
      if (it != cache->by_pid.end() && it->second.starttime == start &&
          it->second.fd_count == fds && round - it->second.scanned_round < kFullRescanRounds &&
          HitsStillHold(pid_dir, it->second.info)) {
        ++stats->pids_cached;
        info = it->second.info;
      } else {
        if (!ScanPid(pid_dir, options, stats, &info)) {
          cache->by_pid.erase(*pid);
          continue;
        }
        cache->by_pid[*pid] = {start, fds, round, round, info};
      }
      cache->by_pid[*pid].seen_round = round;
    }
    info.start_ms = StartUnixMs(boot_ms, start);
    for (const std::string& p : info.out_pipes) pipe_writers[p].push_back(*pid);
    if (!info.hits.empty()) procs.push_back(std::move(info));
  }
  ::closedir(d);
  if (cache != nullptr) {
    std::erase_if(cache->by_pid, [&](const auto& kv) { return kv.second.seen_round != round; });
  }

  for (auto& [pipe, writers] : pipe_writers) std::sort(writers.begin(), writers.end());
  std::sort(procs.begin(), procs.end(),
            [](const ProcInfo& a, const ProcInfo& b) { return a.pid < b.pid; });
  NameAcrossPipes(options.proc_root, &procs, pipe_writers);

  std::map<std::string, Merged> by_path;
  for (const ProcInfo& p : procs) {
    for (const FdHit& h : p.hits) {
      std::string stream = StreamOf(p, h.path);
      auto [it, inserted] = by_path.try_emplace(h.path);
      Merged& m = it->second;
      if (inserted) {
        if (by_path.size() > limit) {
          by_path.erase(it);
          ++stats->sources_dropped;
          continue;
        }
        m = {p.job, p.pid, stream, false, p.start_ms};
        continue;
      }
      if (p.start_ms != 0 && (m.start_ms == 0 || p.start_ms < m.start_ms)) m.start_ms = p.start_ms;
      if (m.pid != p.pid && m.stream != stream) m.stream_conflict = true;
      if (p.job.kind > m.job.kind) {
        m.job = p.job;
        m.pid = p.pid;
      }
    }
  }
  for (auto& [path, m] : by_path) {
    Candidate c;
    c.rank = Rank::kProcess;
    c.source.path = path;
    c.source.format = LogFormat::kPlain;
    c.source.origin = RankOrigin(Rank::kProcess);
    c.source.started_ms = m.start_ms;
    c.source.writer_pid = m.pid;
    c.source.labels.push_back({"job", m.job.name});
    if (!m.stream_conflict && !m.stream.empty()) c.source.labels.push_back({"stream", m.stream});
    out->push_back(std::move(c));
  }
}

}  // namespace vigil::discover::internal
