#include "collect/env/nvml_gpus.h"

#include "collect/metrics/nvml_loader.h"

namespace vigil::collect {

Result<std::vector<env::LockGpu>> ReadNvmlGpus() {
  VIGIL_ASSIGN_OR_RETURN(GpuInventory inv, ProbeNvml());
  if (inv.state != NvmlState::kOk) {
    return Unavailable(inv.message.empty() ? NvmlStateName(inv.state) : inv.message);
  }
  std::vector<env::LockGpu> out;
  for (const GpuDeviceInfo& g : inv.gpus) {
    out.push_back({g.name, "", g.memory_total_bytes >> 20});
  }
  return out;
}

}  // namespace vigil::collect
