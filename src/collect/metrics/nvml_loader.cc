#include "collect/metrics/nvml_loader.h"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#include "core/bounded_worker.h"

namespace vigil::collect {

using nvml::NVML_SUCCESS;
using nvml::nvmlReturn_t;

const char* NvmlStateName(NvmlState state) {
  switch (state) {
    case NvmlState::kOk:
      return "ok";
    case NvmlState::kNoDriver:
      return "no_driver";
    case NvmlState::kError:
      return "error";
    case NvmlState::kStarting:
      return "starting";
  }
  return "error";
}

std::string ResolveNvmlLibraryPath(const std::string& explicit_path) {
  if (!explicit_path.empty()) return explicit_path;
  const char* env = std::getenv(kNvmlLibraryEnv);
  if (env != nullptr && env[0] != '\0') return env;
  return kNvmlDefaultLibrary;
}

Result<std::unique_ptr<NvmlLibrary>> NvmlLibrary::Load(const std::string& path) {
  // dlerror() text is process-global; serialise so messages are not mixed up.
  static std::mutex dl_mu;
  std::lock_guard<std::mutex> lock(dl_mu);
  dlerror();
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* err = dlerror();
    std::string text = err != nullptr ? err : "unknown dlopen error";
    if (text.find("No such file") != std::string::npos) {
      return NotFound("no NVIDIA driver found (" + path +
                      " is not installed); GPU metrics are off on this machine");
    }
    return FailedPrecondition("NVIDIA management library " + path + " cannot be loaded: " + text +
                              "; reinstall the NVIDIA driver or check its architecture");
  }
  std::unique_ptr<NvmlLibrary> lib(new NvmlLibrary(handle, path));
  std::string missing;
#define VIGIL_NVML_RESOLVE_REQUIRED(name, ret, params)                       \
  lib->api_.name = reinterpret_cast<nvml::PFN_##name>(dlsym(handle, #name)); \
  if (lib->api_.name == nullptr) missing += (missing.empty() ? "" : ", ") + std::string(#name);
  VIGIL_NVML_REQUIRED_FUNCTIONS(VIGIL_NVML_RESOLVE_REQUIRED)
#undef VIGIL_NVML_RESOLVE_REQUIRED
#define VIGIL_NVML_RESOLVE_OPTIONAL(name, ret, params) \
  lib->api_.name = reinterpret_cast<nvml::PFN_##name>(dlsym(handle, #name));
  VIGIL_NVML_OPTIONAL_FUNCTIONS(VIGIL_NVML_RESOLVE_OPTIONAL)
#undef VIGIL_NVML_RESOLVE_OPTIONAL
  if (!missing.empty()) {
    return FailedPrecondition(path + " lacks required NVML functions (" + missing +
                              "); the NVIDIA driver is too old or the file is not NVML");
  }
  return lib;
}

NvmlLibrary::~NvmlLibrary() {
  if (handle_ != nullptr) dlclose(handle_);
}

std::string NvmlLibrary::ErrorText(const char* function, nvmlReturn_t code) const {
  const char* text = api_.nvmlErrorString != nullptr ? api_.nvmlErrorString(code) : nullptr;
  std::string out = function;
  out += ": ";
  out += text != nullptr ? text : "NVML error";
  out += " (" + std::to_string(static_cast<int>(code)) + ")";
  return out;
}

std::string FormatCudaVersion(int version) {
  if (version <= 0) return "";
  return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

namespace {
std::string CString(const char* buf, size_t cap) { return std::string(buf, strnlen(buf, cap)); }
}  // namespace

GpuInventory ReadInventory(const NvmlLibrary& lib) {
  const nvml::NvmlApi& api = lib.api();
  GpuInventory inv;
  inv.state = NvmlState::kOk;
  inv.library_path = lib.path();
  char buf[nvml::kDeviceNameBufferSize] = {};
  if (api.nvmlSystemGetDriverVersion(buf, nvml::kSystemDriverVersionBufferSize) == NVML_SUCCESS) {
    inv.driver_version = CString(buf, sizeof(buf));
  }
  if (api.nvmlSystemGetNVMLVersion != nullptr &&
      api.nvmlSystemGetNVMLVersion(buf, nvml::kSystemNvmlVersionBufferSize) == NVML_SUCCESS) {
    inv.nvml_version = CString(buf, sizeof(buf));
  }
  int cuda = 0;
  if (api.nvmlSystemGetCudaDriverVersion_v2 != nullptr &&
      api.nvmlSystemGetCudaDriverVersion_v2(&cuda) == NVML_SUCCESS) {
    inv.cuda_driver_version = FormatCudaVersion(cuda);
  }
  unsigned int count = 0;
  nvmlReturn_t rc = api.nvmlDeviceGetCount_v2(&count);
  if (rc != NVML_SUCCESS) {
    inv.state = NvmlState::kError;
    inv.message =
        "NVIDIA driver found but cannot count GPUs: " + lib.ErrorText("nvmlDeviceGetCount_v2", rc);
    return inv;
  }
  for (unsigned int i = 0; i < count; ++i) {
    nvml::nvmlDevice_t dev = nullptr;
    rc = api.nvmlDeviceGetHandleByIndex_v2(i, &dev);
    if (rc != NVML_SUCCESS) {
      // Typically GPU_IS_LOST or NO_PERMISSION (a GPU hidden by cgroups).
      inv.message += (inv.message.empty() ? "" : "; ") + std::string("GPU ") + std::to_string(i) +
                     " skipped: " + lib.ErrorText("nvmlDeviceGetHandleByIndex_v2", rc);
      continue;
    }
    GpuDeviceInfo d;
    d.index = i;
    if (api.nvmlDeviceGetUUID != nullptr &&
        api.nvmlDeviceGetUUID(dev, buf, nvml::kDeviceUuidBufferSize) == NVML_SUCCESS) {
      d.uuid = CString(buf, sizeof(buf));
    }
    if (api.nvmlDeviceGetName != nullptr &&
        api.nvmlDeviceGetName(dev, buf, nvml::kDeviceNameBufferSize) == NVML_SUCCESS) {
      d.name = CString(buf, sizeof(buf));
    }
    unsigned int minor = 0;
    if (api.nvmlDeviceGetMinorNumber != nullptr &&
        api.nvmlDeviceGetMinorNumber(dev, &minor) == NVML_SUCCESS) {
      d.minor = static_cast<int>(minor);
    }
    int cc_major = 0, cc_minor = 0;
    if (api.nvmlDeviceGetCudaComputeCapability != nullptr &&
        api.nvmlDeviceGetCudaComputeCapability(dev, &cc_major, &cc_minor) == NVML_SUCCESS) {
      d.compute_capability = std::to_string(cc_major) + "." + std::to_string(cc_minor);
    }
    nvml::nvmlPciInfo_t pci = {};
    if (api.nvmlDeviceGetPciInfo_v3 != nullptr &&
        api.nvmlDeviceGetPciInfo_v3(dev, &pci) == NVML_SUCCESS) {
      d.pci_bus_id = CString(pci.busId, sizeof(pci.busId));
    }
    nvml::nvmlMemory_v2_t mem2 = {};
    mem2.version = nvml::kNvmlMemoryV2Version;
    nvml::nvmlMemory_t mem1 = {};
    if (api.nvmlDeviceGetMemoryInfo_v2 != nullptr &&
        api.nvmlDeviceGetMemoryInfo_v2(dev, &mem2) == NVML_SUCCESS) {
      d.memory_total_bytes = mem2.total;
    } else if (api.nvmlDeviceGetMemoryInfo != nullptr &&
               api.nvmlDeviceGetMemoryInfo(dev, &mem1) == NVML_SUCCESS) {
      d.memory_total_bytes = mem1.total;
    }
    nvml::nvmlGpmSupport_t gpm = {};
    gpm.version = nvml::kGpmSupportVersion;
    if (api.nvmlGpmQueryDeviceSupport != nullptr && api.nvmlGpmSampleAlloc != nullptr &&
        api.nvmlGpmSampleGet != nullptr && api.nvmlGpmMetricsGet != nullptr &&
        api.nvmlGpmSampleFree != nullptr &&
        api.nvmlGpmQueryDeviceSupport(dev, &gpm) == NVML_SUCCESS) {
      d.gpm_supported = gpm.isSupportedDevice != 0;
    }
    inv.gpus.push_back(std::move(d));
  }
  return inv;
}

std::string GpuInventory::Summary() const {
  if (state != NvmlState::kOk) return message.empty() ? NvmlStateName(state) : message;
  if (gpus.empty()) return "NVIDIA driver " + driver_version + " found, but no GPU is visible";
  // Group by model: "8× NVIDIA H100 80GB HBM3" or "1× A, 2× B".
  std::map<std::string, int> models;
  for (const auto& g : gpus) ++models[g.name.empty() ? "unknown GPU" : g.name];
  std::string out;
  for (const auto& [name, n] : models) {
    if (!out.empty()) out += ", ";
    out += std::to_string(n) + "\u00d7 " + name;
  }
  out += ", driver " + driver_version;
  if (!cuda_driver_version.empty()) out += ", CUDA " + cuda_driver_version;
  if (!message.empty()) out += " (" + message + ")";
  return out;
}

namespace {
// Everything the probe job touches; shared with the job because the job may
// outlive ProbeNvml() when the driver hangs.
struct ProbeState {
  std::string path;
  GpuInventory result;
};

void RunProbe(ProbeState* s) {
  s->result.library_path = s->path;
  auto lib = NvmlLibrary::Load(s->path);
  if (!lib.ok()) {
    s->result.state =
        lib.status().code() == StatusCode::kNotFound ? NvmlState::kNoDriver : NvmlState::kError;
    s->result.message = lib.status().message();
    return;
  }
  const nvml::NvmlApi& api = (*lib)->api();
  nvmlReturn_t rc = api.nvmlInit_v2();
  if (rc != NVML_SUCCESS) {
    s->result.state = NvmlState::kError;
    s->result.message = "NVIDIA driver found but failing: " + (*lib)->ErrorText("nvmlInit_v2", rc);
    return;
  }
  s->result = ReadInventory(**lib);
  (void)api.nvmlShutdown();
}
}  // namespace

Result<GpuInventory> ProbeNvml(const ProbeOptions& options) {
  // shared_ptr: the job may outlive this call if NVML hangs (BoundedWorker contract).
  auto state = std::make_shared<ProbeState>();
  state->path = ResolveNvmlLibraryPath(options.library_path);
  BoundedWorker worker("nvml-probe");
  Status st = worker.Run([state] { RunProbe(state.get()); }, options.timeout);
  if (!st.ok()) {
    return DeadlineExceeded("the NVIDIA driver did not answer within " +
                            std::to_string(options.timeout.count()) +
                            " ms (nvmlInit or a device query hung); check `dmesg` for Xid "
                            "errors and whether nvidia-smi also hangs");
  }
  return std::move(state->result);
}

}  // namespace vigil::collect
