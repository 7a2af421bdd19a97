#include "collect/metrics/system_filesystem.h"

#include <sys/statvfs.h>

#include <cerrno>
#include <optional>
#include <set>
#include <tuple>

namespace vigil::collect {
namespace {

using wire::MetricType;

std::unique_ptr<BoundedWorker> NewWorker() {
  return std::make_unique<BoundedWorker>("vigil-statfs");
}

void EmitStats(const proc::MountEntry& m, const FsStats& s, Sink* out) {
  wire::Labels l = {{"device", m.device}, {"fstype", m.fs_type}, {"mountpoint", m.mount_point}};
  // Products in double, as node_exporter computes them, so large values agree exactly.
  double bsize = static_cast<double>(s.block_size);
  const std::pair<const char*, const char*> kHelp[] = {
      {"node_filesystem_size_bytes", "Filesystem size in bytes."},
      {"node_filesystem_free_bytes", "Filesystem free space in bytes."},
      {"node_filesystem_avail_bytes", "Filesystem space available to non-root users in bytes."},
      {"node_filesystem_files", "Filesystem total file nodes."},
      {"node_filesystem_files_free", "Filesystem total free file nodes."},
      {"node_filesystem_readonly", "Filesystem read-only status."},
  };
  const double values[] = {
      static_cast<double>(s.blocks) * bsize,       static_cast<double>(s.blocks_free) * bsize,
      static_cast<double>(s.blocks_avail) * bsize, static_cast<double>(s.files),
      static_cast<double>(s.files_free),           m.read_only ? 1.0 : 0.0};
  for (size_t i = 0; i < std::size(values); ++i) {
    out->Emit(kHelp[i].first, MetricType::kGauge, kHelp[i].second, l, values[i]);
  }
}

void EmitDeviceError(const proc::MountEntry& m, bool error, Sink* out) {
  out->Emit("node_filesystem_device_error", MetricType::kGauge,
            "Whether an error occurred while getting statistics for the given device.",
            {{"device", m.device}, {"fstype", m.fs_type}, {"mountpoint", m.mount_point}},
            error ? 1 : 0);
}

}  // namespace

Result<FsStats> StatFsSyscall(const std::string& mount_point) {
  struct statvfs v {};
  if (::statvfs(mount_point.c_str(), &v) < 0) return ErrnoStatus("statvfs", mount_point, errno);
  FsStats s;
  s.blocks = v.f_blocks;
  s.blocks_free = v.f_bfree;
  s.blocks_avail = v.f_bavail;
  s.files = v.f_files;
  s.files_free = v.f_ffree;
  s.block_size = v.f_bsize;
  return s;
}

FilesystemStats::FilesystemStats(StatFsFunc statfs, std::chrono::milliseconds timeout,
                                 size_t max_stuck)
    : statfs_(std::move(statfs)), timeout_(timeout), max_stuck_(max_stuck), worker_(NewWorker()) {}

FilesystemStats::~FilesystemStats() = default;

Result<FsStats> FilesystemStats::StatOne(const std::string& mount_point) {
  if (auto it = stuck_.find(mount_point); it != stuck_.end()) {
    if (it->second->stuck()) {
      return Unavailable("statfs of " + mount_point + " has not returned for " +
                         std::to_string(it->second->stuck_for().count()) + " ms");
    }
    stuck_.erase(it);  // the call returned: measure the mount again
  }
  if (stuck_.size() >= max_stuck_) {
    return ResourceExhausted(std::to_string(stuck_.size()) +
                             " statfs calls are stuck; not starting more");
  }
  // Shared with the job: it may finish after this call has given up on it.
  auto slot = std::make_shared<std::optional<Result<FsStats>>>();
  Status st =
      worker_->Run([fn = statfs_, mount_point, slot] { slot->emplace(fn(mount_point)); }, timeout_);
  if (st.code() == StatusCode::kDeadlineExceeded) {
    stuck_[mount_point] = std::move(worker_);
    worker_ = NewWorker();
    return st;
  }
  if (!st.ok()) return st;
  if (!slot->has_value()) return Internal("statfs job of " + mount_point + " left no result");
  return std::move(**slot);
}

void FilesystemStats::Collect(const std::vector<proc::MountEntry>& mounts, Sink* out) {
  // Calls that returned free their mount (measured again below) and their
  // thread, including mounts that were unmounted meanwhile.
  std::erase_if(stuck_, [](const auto& kv) { return !kv.second->stuck(); });
  std::set<std::tuple<std::string, std::string, std::string>> seen;
  for (const auto& m : mounts) {
    // A mount point bind-mounted twice shows up twice; report it once.
    if (!seen.emplace(m.device, m.mount_point, m.fs_type).second) continue;
    auto stats = StatOne(m.mount_point);
    EmitDeviceError(m, !stats.ok(), out);
    if (stats.ok()) EmitStats(m, *stats, out);
  }
}

}  // namespace vigil::collect
