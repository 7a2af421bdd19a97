// The live machine's GPUs for the lock, from NVML through collect/metrics'
// loader (dlopen; no driver is a normal state, reported as an error here so
// the lock notes why it lists no GPU).
#pragma once

#include <vector>

#include "core/status.h"
#include "env/lock/lock.h"

namespace vigil::collect {

// Model and memory from NVML. The compute capability is left empty: the NVML
// wrapper does not read nvmlDeviceGetCudaComputeCapability yet (issue 17).
Result<std::vector<env::LockGpu>> ReadNvmlGpus();

}  // namespace vigil::collect
