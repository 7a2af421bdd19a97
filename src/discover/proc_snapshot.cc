#include "discover/proc_snapshot.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <climits>
#include <string>
#include <unordered_set>
#include <vector>

#include "core/strings.h"
#include "discover/users.h"

namespace vigil::discover {
namespace {

std::string PidPath(const std::string& root, int pid, std::string_view file) {
  return root + "/" + std::to_string(pid) + "/" + std::string(file);
}

std::string ReadLinkOrEmpty(const std::string& path) {
  char buf[PATH_MAX];
  ssize_t n = ::readlink(path.c_str(), buf, sizeof(buf));
  if (n <= 0 || static_cast<size_t>(n) >= sizeof(buf)) return "";
  return std::string(buf, static_cast<size_t>(n));
}

// The file an fd writes to, when it is a regular file the host sees under
// that path (same device and inode): a redirect, not a tty or a pipe, and
// not a path of another mount namespace.
std::string RedirectTarget(const std::string& fd_link) {
  std::string target = ReadLinkOrEmpty(fd_link);
  if (target.empty() || target.front() != '/' || EndsWith(target, " (deleted)")) return "";
  struct stat by_path {};
  struct stat by_fd {};
  if (::stat(target.c_str(), &by_path) != 0 || !S_ISREG(by_path.st_mode)) return "";
  if (::stat(fd_link.c_str(), &by_fd) != 0) return "";
  if (by_fd.st_dev != by_path.st_dev || by_fd.st_ino != by_path.st_ino) return "";
  return target;
}

std::string ReadOrEmpty(Env* env, const std::string& path, size_t max) {
  auto r = env->ReadFile(path, max);
  return r.ok() ? std::move(r).value() : std::string();
}

}  // namespace

std::optional<ProcStat> ParseProcStat(std::string_view text) {
  size_t paren = text.rfind(')');
  if (paren == std::string_view::npos) return std::nullopt;
  std::vector<std::string_view> f = SplitFields(text.substr(paren + 1));
  // f[0] is field 3 (state), f[1] field 4 (ppid), f[19] field 22 (starttime).
  if (f.size() < 20 || f[0].size() != 1) return std::nullopt;
  auto ppid = ParseInt64(f[1]);
  auto start = ParseUint64(f[19]);
  if (!ppid || *ppid < 0 || *ppid > INT_MAX || !start) return std::nullopt;
  return ProcStat{static_cast<int>(*ppid), f[0][0], *start};
}

Result<ProcSnapshot> CaptureProcess(Env* env, const std::string& proc_root, int pid) {
  auto stat = env->ReadFile(PidPath(proc_root, pid, "stat"), kMaxStatBytes);
  if (!stat.ok()) return stat.status();
  auto fields = ParseProcStat(*stat);
  if (!fields || fields->state == 'Z' || fields->state == 'X') {
    return Unavailable("process " + std::to_string(pid) + " is a zombie or unreadable");
  }
  ProcSnapshot s;
  s.pid = pid;
  s.start_ticks = fields->start_ticks;
  s.stat = std::move(stat).value();
  s.cmdline = ReadOrEmpty(env, PidPath(proc_root, pid, "cmdline"), kMaxCmdlineBytes);
  if (s.cmdline.empty()) return Unavailable("process " + std::to_string(pid) + " has no cmdline");
  s.comm = ReadOrEmpty(env, PidPath(proc_root, pid, "comm"), kMaxCommBytes);
  s.environ = ReadOrEmpty(env, PidPath(proc_root, pid, "environ"), kMaxEnvironBytes);
  s.cgroup = ReadOrEmpty(env, PidPath(proc_root, pid, "cgroup"), kMaxCgroupBytes);
  s.uid = ReadRealUid(env, proc_root, pid);
  RefreshMaps(env, proc_root, &s);
  s.cwd = ReadLinkOrEmpty(PidPath(proc_root, pid, "cwd"));
  s.stdout_path = RedirectTarget(PidPath(proc_root, pid, "fd/1"));
  s.stderr_path = RedirectTarget(PidPath(proc_root, pid, "fd/2"));
  return s;
}

std::string CompactMaps(std::string_view maps) {
  std::string out;
  std::unordered_set<std::string_view> seen;
  for (std::string_view line : Split(maps, '\n')) {
    size_t slash = line.find('/');
    if (slash == std::string_view::npos) continue;
    std::string_view path = line.substr(slash);
    size_t base = path.rfind('/');
    if (path.find(".so", base) == std::string_view::npos) continue;  // not a library
    if (!seen.insert(path).second) continue;
    if (out.size() + path.size() + 1 > kMaxSnapshotMapsBytes) break;
    out.append(path);
    out.push_back('\n');
  }
  return out;
}

bool RefreshMaps(Env* env, const std::string& proc_root, ProcSnapshot* snap) {
  auto maps = env->ReadFile(PidPath(proc_root, snap->pid, "maps"), kMaxMapsBytes);
  // An exited process reads as empty maps: keep what it had mapped.
  if (!maps.ok() || maps->empty()) return false;
  snap->maps = CompactMaps(*maps);
  snap->maps_read = true;
  return true;
}

Liveness ProcessLiveness(Env* env, const std::string& proc_root, int pid, uint64_t start_ticks) {
  auto stat = env->ReadFile(PidPath(proc_root, pid, "stat"), kMaxStatBytes);
  if (!stat.ok()) {
    if (stat.status().code() != StatusCode::kNotFound) return Liveness::kUnknown;
    // "stat" may be missing in a half-torn-down directory; the pid
    // directory itself is the proof.
    return env->FileExists(proc_root + "/" + std::to_string(pid)) ? Liveness::kUnknown
                                                                  : Liveness::kGone;
  }
  auto fields = ParseProcStat(*stat);
  if (!fields) return Liveness::kUnknown;
  if (fields->start_ticks != start_ticks) return Liveness::kGone;  // the pid was reused
  if (fields->state == 'Z' || fields->state == 'X') return Liveness::kGone;
  return Liveness::kAlive;
}

std::string ReadBootId(Env* env, const std::string& proc_root) {
  auto text = env->ReadFile(proc_root + "/sys/kernel/random/boot_id", 128);
  std::string out;
  if (text.ok()) {
    for (char c : *text) {
      if (out.size() == 8) break;
      if (std::isxdigit(static_cast<unsigned char>(c))) {
        out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
      }
    }
  }
  return out.size() == 8 ? out : "00000000";
}

std::string FormatJobId(int pid, uint64_t start_ticks, std::string_view boot) {
  return std::to_string(pid) + "-" + std::to_string(start_ticks) + "-" + std::string(boot);
}

std::optional<JobIdParts> ParseJobId(std::string_view id) {
  std::vector<std::string_view> parts = Split(id, '-');
  if (parts.size() < 3 || parts[2].size() != 8) return std::nullopt;
  auto pid = ParseInt64(parts[0]);
  auto ticks = ParseUint64(parts[1]);
  if (!pid || *pid <= 0 || *pid > INT_MAX || !ticks) return std::nullopt;
  for (char c : parts[2]) {
    if (!std::isxdigit(static_cast<unsigned char>(c))) return std::nullopt;
  }
  return JobIdParts{static_cast<int>(*pid), *ticks, std::string(parts[2])};
}

}  // namespace vigil::discover
