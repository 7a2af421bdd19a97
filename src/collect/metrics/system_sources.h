// The per-source halves of the system collector: each function reads its /proc
// or /sys files through Env and stages node_exporter 1.5-named samples into a
// Sink. They are grouped and named after node_exporter's collectors (cpu, stat,
// meminfo, ...) so node_scrape_collector_success{collector} means the same
// thing in both.
//
// Thread safety: a SourceConfig is immutable once built and shared by the
// collector and its pass worker; a Sink and a CpuHistory belong to one pass
// at a time (the pass worker runs one job at a time).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "collect/metrics/proc_parse.h"
#include "core/env.h"
#include "core/status.h"
#include "wire/metric_batch.h"

namespace re2 {
class RE2;
}

namespace vigil::collect {

// Samples staged off the caller's thread, copied into the pass's builder once
// the pass returns (a stuck pass must never write into the caller's builder).
class Sink {
 public:
  struct Sample {
    std::string name;
    wire::Labels labels;
    double value = 0;
  };
  void Family(std::string_view name, wire::MetricType type, std::string_view help);
  void Add(std::string_view name, wire::Labels labels, double value);
  // Declares the family (once) and adds a sample.
  void Emit(std::string_view name, wire::MetricType type, std::string_view help,
            wire::Labels labels, double value);
  void AppendTo(wire::MetricBatchBuilder* out) const;
  const std::vector<wire::MetricFamily>& families() const { return families_; }
  const std::vector<Sample>& samples() const { return samples_; }

 private:
  std::unordered_set<std::string> family_names_;
  std::vector<wire::MetricFamily> families_;
  std::vector<Sample> samples_;
};

struct SourceConfig {
  Env* env = nullptr;
  std::string proc_root, sys_root, udev_data_root, mounts_file;
  // Unanchored (Go MatchString) semantics, as node_exporter applies them.
  std::unique_ptr<re2::RE2> disk_exclude, netdev_exclude, vmstat_include, mount_points_exclude,
      fs_types_exclude;
  ~SourceConfig();
};

// Last reported CPU times, so counters never go backwards (node_exporter 1.5
// does the same: iowait can decrease on tickless kernels).
using CpuHistory = std::map<std::string, proc::CpuTimes>;

// Applies node_exporter's rules: keep the larger of old and new per mode, and
// start over when idle jumps back 3 s or more (a CPU was hot-plugged).
void MergeCpuTimes(const std::vector<proc::CpuTimes>& fresh, CpuHistory* history);

Status CollectCpu(const SourceConfig& c, CpuHistory* history, Sink* out);
Status CollectStat(const SourceConfig& c, Sink* out);
Status CollectMeminfo(const SourceConfig& c, Sink* out);
Status CollectLoadavg(const SourceConfig& c, Sink* out);
Status CollectDiskstats(const SourceConfig& c, Sink* out);
Status CollectNetdev(const SourceConfig& c, Sink* out);
Status CollectNetclass(const SourceConfig& c, Sink* out);
Status CollectVmstat(const SourceConfig& c, Sink* out);
Status CollectPressure(const SourceConfig& c, Sink* out);
Status CollectFilefd(const SourceConfig& c, Sink* out);
Status CollectUname(const SourceConfig& c, Sink* out);
Status CollectTime(const SourceConfig& c, Sink* out);
// Reads the mounts file and drops the mount points and fs types excluded.
Result<std::vector<proc::MountEntry>> ReadMounts(const SourceConfig& c);

// Reads a /proc or /sys file with a size bound. When the bound cuts the file,
// the partial last line is dropped so no number is read half-written.
Result<std::string> ReadBounded(Env* env, const std::string& path, size_t max_bytes);

}  // namespace vigil::collect
