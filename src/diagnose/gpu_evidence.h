// What the metrics store knows about a node's GPUs that the jobs API needs:
// which GPUs a job's processes use (NVML's per-process list, stored as
// vigil_gpu_process_memory_bytes{gpu, pid}), the Xid errors NVML reported
// (vigil_gpu_xid_errors_total{gpu, xid} increasing), and which GPU a PCI
// address names (vigil_gpu_info{gpu, pci_bus_id}), so that a kernel Xid line
// that names no process can still be given to the job on that GPU.
//
// Reading these from the store rather than from the NVML session keeps the
// answer the same for a local GPU and a remote agent's (both arrive as
// series with a node label) and needs no second NVML client.
//
// Thread safety: functions over a thread-safe tsdb::Db.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/tsdb/db.h"

namespace vigil::diagnose {

struct JobGpu {
  std::string gpu;                     // NVML index, as the `gpu` label of DCGM_FI_DEV_* series
  std::string uuid;                    // from the same series' UUID label; may be empty
  std::optional<double> memory_bytes;  // newest sum over the job's processes
};

// The GPUs where any of `pids` held memory in the 5 minutes up to `end_ms`,
// ordered by index.
std::vector<JobGpu> JobGpus(tsdb::Db* db, const std::string& node, const std::vector<int>& pids,
                            int64_t end_ms);

struct GpuXid {
  int64_t time_ms = 0;  // the sample that first showed the increase
  std::string gpu;
  int xid = 0;
  int64_t count = 0;  // how many more than the sample before
};

// Xid errors NVML reported on `node` in [start_ms, end_ms], oldest first; only
// on `gpus` when it is not empty. A counter's reset (the agent restarted)
// counts from zero.
std::vector<GpuXid> NvmlXids(tsdb::Db* db, const std::string& node,
                             const std::vector<std::string>& gpus, int64_t start_ms,
                             int64_t end_ms);

// "0000:3b:00" (the kernel's) and "00000000:3B:00.0" (NVML's) both give
// "0:3b:00": domain, bus and device, lowercase; "" for anything else.
std::string PciKey(std::string_view pci);

// PciKey(pci_bus_id) -> GPU index, for the GPUs `node` reported in the hour
// up to `now_ms`.
std::map<std::string, std::string> GpusByPci(tsdb::Db* db, const std::string& node, int64_t now_ms);

}  // namespace vigil::diagnose
