// Filesystem usage (node_filesystem_*) with statvfs() under a time bound.
//
// Why a worker per stuck mount: statfs() on a dead NFS or FUSE mount can block
// in the kernel for minutes or forever. Each call runs on a BoundedWorker; when
// one overruns, that worker is parked with its mount point and a fresh worker
// serves the other mounts. While the parked call has not returned, the mount
// is reported as node_filesystem_device_error=1 and not asked again (as
// node_exporter 1.5 does after its 5 s mount timeout); once it returns, the
// mount is measured again. Threads are bounded by `max_stuck`.
//
// Thread safety: one thread at a time (the collector's Collect()).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "collect/metrics/proc_parse.h"
#include "collect/metrics/system_sources.h"
#include "core/bounded_worker.h"
#include "core/status.h"

namespace vigil::collect {

// What statvfs() says about one mount, in its own units.
struct FsStats {
  uint64_t blocks = 0, blocks_free = 0, blocks_avail = 0, files = 0, files_free = 0;
  uint64_t block_size = 0;  // f_bsize, the unit node_exporter multiplies by
};
// Must be safe to call from any thread and own what it touches: a stuck call
// outlives the collector that made it.
using StatFsFunc = std::function<Result<FsStats>(const std::string& mount_point)>;
Result<FsStats> StatFsSyscall(const std::string& mount_point);

class FilesystemStats {
 public:
  FilesystemStats(StatFsFunc statfs, std::chrono::milliseconds timeout, size_t max_stuck);
  ~FilesystemStats();

  // Emits node_filesystem_* for each mount, one series set per
  // (device, mountpoint, fstype).
  void Collect(const std::vector<proc::MountEntry>& mounts, Sink* out);
  // Mounts whose statfs() has not returned yet.
  size_t stuck_count() const { return stuck_.size(); }

 private:
  Result<FsStats> StatOne(const std::string& mount_point);

  StatFsFunc statfs_;
  std::chrono::milliseconds timeout_;
  size_t max_stuck_;
  std::unique_ptr<BoundedWorker> worker_;
  std::map<std::string, std::unique_ptr<BoundedWorker>> stuck_;  // by mount point
};

}  // namespace vigil::collect
