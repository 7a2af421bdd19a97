// SystemCollector: host metrics from /proc and /sys under node_exporter 1.5's
// names, label names, units, types and help texts, so existing dashboards and
// alert rules written for node_exporter work on Vigil unchanged.
//
// Families (node_exporter collector in brackets):
//   [cpu]        node_cpu_seconds_total{cpu,mode}, node_cpu_guest_seconds_total{cpu,mode}
//   [stat]       node_context_switches_total, node_intr_total, node_forks_total,
//                node_boot_time_seconds, node_procs_running, node_procs_blocked
//   [meminfo]    node_memory_<Field>[_bytes] for every /proc/meminfo field
//   [loadavg]    node_load1, node_load5, node_load15
//   [diskstats]  node_disk_*{device}, node_disk_info{device,major,minor,...}
//   [netdev]     node_network_{receive,transmit}_*_total{device}
//   [netclass]   node_network_up, node_network_mtu_bytes, node_network_speed_bytes
//   [vmstat]     node_vmstat_{pgpg*,pswp*,pg*fault*,oom_kill*}
//   [pressure]   node_pressure_*_seconds_total (when /proc/pressure exists)
//   [filefd]     node_filefd_allocated, node_filefd_maximum
//   [uname]      node_uname_info
//   [time]       node_time_seconds, node_time_zone_offset_seconds,
//                node_time_clocksource_{available,current}_info
//   [filesystem] node_filesystem_*{device,fstype,mountpoint}
//   and node_scrape_collector_{success,duration_seconds}{collector} for each.
//
// Time bounds: the /proc and /sys reads of a pass run as one job on a
// BoundedWorker owned by the collector; statvfs() runs per mount on its own
// workers (system_filesystem.h). A source that overruns is reported as
// node_scrape_collector_success{collector="..."}=0 and Collect() returns;
// while the stuck read has not returned, later passes report every /proc
// source as failed at once instead of queueing behind it.
//
// Thread safety: Collect() is called by one thread at a time (the collection
// loop). The pass job owns shared copies of everything it touches, so it may
// outlive the collector. `env` must outlive every pass (Env::Default() does).
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

#include "collect/metrics/collector.h"
#include "collect/metrics/system_filesystem.h"
#include "core/bounded_worker.h"
#include "core/env.h"

namespace vigil::collect {

// node_exporter 1.5's defaults for the same flags.
inline constexpr const char* kDefaultDiskExclude =
    R"(^(ram|loop|fd|(h|s|v|xv)d[a-z]|nvme\d+n\d+p)\d+$)";
// Debian's node_exporter 1.5 build (the reference here) excludes loopback.
inline constexpr const char* kDefaultNetdevExclude = "^lo$";
inline constexpr const char* kDefaultMountPointsExclude =
    "^/(dev|proc|run|sys|mnt|media|var/lib/docker/.+|var/lib/containers/storage/.+)($|/)";
inline constexpr const char* kDefaultFsTypesExclude =
    "^(autofs|binfmt_misc|bpf|cgroup2?|configfs|debugfs|devpts|devtmpfs|fusectl|hugetlbfs|"
    "iso9660|mqueue|nsfs|overlay|proc|procfs|pstore|rpc_pipefs|securityfs|selinuxfs|squashfs|"
    "sysfs|tracefs)$";
inline constexpr const char* kDefaultVmstatFields = "^(oom_kill|pgpg|pswp|pg.*fault).*";

struct SystemCollectorOptions {
  std::string proc_root = "/proc";
  std::string sys_root = "/sys";
  // Empty: <proc_root>/self/mounts. node_exporter reads /proc/1/mounts, but
  // statvfs() resolves paths in our own mount namespace, so we list the mounts
  // of that namespace: under systemd sandboxing or in a container PID 1's
  // table names paths we cannot stat (or stats the wrong filesystem), and
  // hidepid hides /proc/1 entirely. On a plain host both tables are equal.
  std::string mounts_file;
  // udev's device database, for node_disk_info's path/wwn/model/serial/revision.
  std::string udev_data_root = "/run/udev/data";
  Env* env = nullptr;  // nullptr: Env::Default()

  // Regexes in RE2 (= Go) syntax, matched unanchored as node_exporter does.
  // An empty string disables the filter.
  std::string disk_device_exclude = kDefaultDiskExclude;
  std::string netdev_device_exclude = kDefaultNetdevExclude;
  std::string mount_points_exclude = kDefaultMountPointsExclude;
  std::string fs_types_exclude = kDefaultFsTypesExclude;
  std::string vmstat_fields = kDefaultVmstatFields;

  // The bound on one pass of /proc and /sys reads (they take ~1 ms normally).
  std::chrono::milliseconds pass_timeout{1000};
  // The bound on one statvfs(). node_exporter waits 5 s; we pass once per
  // second, and a mount that overruns is only skipped until its call returns.
  std::chrono::milliseconds statfs_timeout{1000};
  // At most this many statvfs() calls (threads) may be stuck at once.
  size_t max_stuck_mounts = 16;
  StatFsFunc statfs;  // empty: statvfs(2)
};

class SystemCollector final : public MetricCollector {
 public:
  // Fails (InvalidArgument) on a regex that does not compile.
  static Result<std::unique_ptr<SystemCollector>> Create(SystemCollectorOptions options);
  ~SystemCollector() override;

  std::string_view name() const override { return "system"; }
  Status Collect(wire::MetricBatchBuilder* out) override;

 private:
  struct PassState;
  SystemCollector(std::shared_ptr<const SourceConfig> config, SystemCollectorOptions options);
  Status CollectFilesystems(PassState& pass, wire::MetricBatchBuilder* out);

  std::shared_ptr<const SourceConfig> config_;  // shared: a stuck pass job may outlive us
  std::shared_ptr<CpuHistory> cpu_history_;     // touched only by the pass job
  std::shared_ptr<PassState> last_pass_;        // the pass most recently started
  std::chrono::milliseconds pass_timeout_;
  BoundedWorker pass_worker_;
  FilesystemStats filesystems_;
};

}  // namespace vigil::collect
