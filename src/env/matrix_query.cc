#include "env/matrix_query.h"

#include <algorithm>

#include "core/strings.h"

namespace vigil::env {
namespace {

bool SameMinor(const Version& a, const Version& b) {
  return a.major() == b.major() && a.minor() == b.minor();
}

// Where `needle` occurs in `hay` as a run of whole tokens.
bool ContainsTokens(const std::vector<std::string>& hay, const std::vector<std::string>& needle) {
  if (needle.empty() || needle.size() > hay.size()) return false;
  return std::search(hay.begin(), hay.end(), needle.begin(), needle.end()) != hay.end();
}

// "sm_86" -> (8, 6, sass, not arch-specific); "compute_90" -> PTX.
struct Arch {
  ComputeCapability cc;
  bool ptx = false;
  bool specific = false;  // sm_90a: that exact capability only
};
std::optional<Arch> ParseArch(std::string_view a) {
  Arch out;
  std::string_view digits;
  if (StartsWith(a, "sm_")) {
    digits = a.substr(3);
  } else if (StartsWith(a, "compute_")) {
    digits = a.substr(8);
    out.ptx = true;
  } else {
    return std::nullopt;
  }
  if (!digits.empty() && digits.back() == 'a') {
    out.specific = true;
    digits.remove_suffix(1);
  }
  auto n = ParseInt64(digits);
  if (!n || *n < 10) return std::nullopt;
  out.cc = {static_cast<int>(*n / 10), static_cast<int>(*n % 10)};
  return out;
}

}  // namespace

Result<DriverRequirement> MinDriverFor(const Matrix& m, const Version& cuda) {
  // The X.Y GA row (the lowest update) unless an exact update is named.
  const CudaDriverRow* best = nullptr;
  for (const CudaDriverRow& r : m.cuda_drivers()) {
    bool match = cuda.parts().size() > 2 ? r.cuda == cuda : SameMinor(r.cuda, cuda);
    if (match && (best == nullptr || r.cuda < best->cuda)) best = &r;
  }
  if (best == nullptr) {
    return NotFound("CUDA " + cuda.ToString() + " is not in the matrix's cuda_driver table");
  }
  DriverRequirement need{cuda, best->min_driver, best->min_driver, best->source};
  for (const MinorCompatRow& r : m.minor_compat()) {
    if (r.cuda_major == cuda.major()) need.minor_compat = r.min_driver;
  }
  return need;
}

Result<DriverVerdict> CheckDriverForCuda(const Matrix& m, const Version& driver,
                                         const Version& cuda) {
  DriverVerdict v;
  VIGIL_ASSIGN_OR_RETURN(v.need, MinDriverFor(m, cuda));
  v.fit = driver >= v.need.full           ? DriverFit::kFull
          : driver >= v.need.minor_compat ? DriverFit::kMinorCompat
                                          : DriverFit::kTooOld;
  return v;
}

DriverSupport CudaSupportedByDriver(const Matrix& m, const Version& driver) {
  DriverSupport out;
  for (const CudaDriverRow& r : m.cuda_drivers()) {
    if (r.min_driver <= driver && (!out.newest_full || *out.newest_full < r.cuda)) {
      out.newest_full = r.cuda;
    }
  }
  for (const MinorCompatRow& r : m.minor_compat()) {
    if (r.min_driver <= driver) out.minor_compat_majors.push_back(r.cuda_major);
  }
  std::sort(out.minor_compat_majors.begin(), out.minor_compat_majors.end());
  return out;
}

Result<GpuRow> FindGpu(const Matrix& m, std::string_view name) {
  std::vector<std::string> tokens = GpuNameTokens(name);
  const GpuRow* best = nullptr;
  size_t best_len = 0;
  for (const GpuRow& g : m.gpus()) {
    std::vector<std::string> model = GpuNameTokens(g.model);
    if (model.size() > best_len && ContainsTokens(tokens, model)) {
      best = &g;
      best_len = model.size();
    }
  }
  if (best == nullptr) return NotFound("GPU \"" + std::string(name) + "\" is not in the matrix");
  return *best;
}

Result<ComputeCapability> ComputeCapabilityOf(const Matrix& m, std::string_view name) {
  VIGIL_ASSIGN_OR_RETURN(GpuRow g, FindGpu(m, name));
  return g.cc;
}

Result<ForwardCompat> ForwardCompatOf(const Matrix& m, std::string_view gpu_name) {
  VIGIL_ASSIGN_OR_RETURN(GpuRow g, FindGpu(m, gpu_name));
  for (const ForwardCompatRow& r : m.forward_compat()) {
    if (r.segment == g.segment) return r.support;
  }
  return NotFound("no forward_compat row for segment " + g.segment);
}

Result<TorchRow> FindTorch(const Matrix& m, const TorchBuild& torch) {
  for (const TorchRow& t : m.torch()) {
    // Rows are per X.Y release: 2.5.1 is a patch of 2.5 with the same builds.
    if (t.release.IsPrefixOf(torch.version) && t.variant == torch.variant) return t;
  }
  return NotFound("torch " + torch.version.ToString() + "+" + torch.variant +
                  " is not an official wheel the matrix lists");
}

Result<std::vector<std::string>> ArchsOfTorchWheel(const Matrix& m, const TorchBuild& torch) {
  for (const TorchArchRow& a : m.torch_archs()) {
    if (a.release.IsPrefixOf(torch.version) && a.variant == torch.variant) return a.archs;
  }
  return NotFound("the GPU architectures of torch " + torch.version.ToString() + "+" +
                  torch.variant + " are not in the matrix");
}

KernelFit KernelFitOf(const std::vector<std::string>& archs, ComputeCapability cc) {
  KernelFit fit = KernelFit::kNoKernelImage;
  for (const std::string& s : archs) {
    std::optional<Arch> a = ParseArch(s);
    if (!a) continue;
    if (a->ptx) {
      if (a->cc <= cc) fit = KernelFit::kPtxJit;
      continue;
    }
    bool runs = a->specific ? a->cc == cc : a->cc.major == cc.major && a->cc.minor <= cc.minor;
    if (runs) return KernelFit::kNative;
  }
  return fit;
}

Result<bool> CudnnCompatible(const Matrix& m, const Version& cudnn, const Version& cuda) {
  bool known = false;
  for (const CudnnRow& r : m.cudnn()) {
    // "9.1.0" rows cover "9.1.0.70"; compare CUDA at X.Y.
    if (!r.cudnn.IsPrefixOf(cudnn) && !cudnn.IsPrefixOf(r.cudnn)) continue;
    known = true;
    Version xy({cuda.major(), cuda.minor()});
    if (r.cuda_first <= xy && xy <= r.cuda_last) return true;
  }
  if (!known) return NotFound("cuDNN " + cudnn.ToString() + " is not in the matrix");
  return false;
}

bool TensorflowCudnnFits(const Version& tested, const Version& installed) {
  return installed.major() == tested.major() && installed.minor() >= tested.minor();
}

Result<TensorflowRow> FindTensorflow(const Matrix& m, const Version& release) {
  for (const TensorflowRow& t : m.tensorflow()) {
    if (SameMinor(t.release, release)) return t;
  }
  return NotFound("TensorFlow " + release.ToString() +
                  " has no tested configuration in the matrix");
}

Result<bool> PythonSupported(const Matrix& m, std::string_view framework, const Version& release,
                             const Version& python) {
  Version xy({python.major(), python.minor()});
  auto in = [&](const Version& first, const Version& last) { return first <= xy && xy <= last; };
  if (framework == "tensorflow") {
    VIGIL_ASSIGN_OR_RETURN(TensorflowRow t, FindTensorflow(m, release));
    return in(t.python_first, t.python_last);
  }
  if (framework == "torch") {
    for (const TorchRow& t : m.torch()) {
      if (t.release.IsPrefixOf(release)) return in(t.python_first, t.python_last);
    }
    return NotFound("torch " + release.ToString() + " is not in the matrix");
  }
  return InvalidArgument("no Python table for framework \"" + std::string(framework) + "\"");
}

Result<JaxRow> FindJaxPlugin(const Matrix& m, std::string_view plugin) {
  for (const JaxRow& j : m.jax()) {
    if (j.plugin == plugin) return j;
  }
  return NotFound("JAX plugin " + std::string(plugin) + " is not in the matrix");
}

bool JaxFits(const JaxRow& plugin, const Version& cuda, const Version& cudnn) {
  return cuda.major() == plugin.min_cuda.major() && cuda >= plugin.min_cuda &&
         cudnn >= plugin.min_cudnn && cudnn < plugin.cudnn_below;
}

const std::vector<MatrixRule>& MatrixRules() {
  static const std::vector<MatrixRule> kRules = {
      {"driver_backward_compat",
       "A driver runs every toolkit release whose minimum (cuda_driver) it meets or exceeds.",
       "https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/index.html"},
      {"minor_version_compat",
       "From CUDA 11, a driver at or above its major's floor (minor_compat) runs any X.* "
       "toolkit of that major, with limits: PTX the newer toolkit produced cannot be "
       "JIT-compiled by the older driver (cudaErrorUnsupportedPtxVersion), and APIs that need a "
       "newer driver fail with cudaErrorCallRequiresNewerDriver.",
       "https://docs.nvidia.com/deploy/cuda-compatibility/"},
      {"forward_compat",
       "The cuda-compat package (forward compatibility) lets an older driver branch run a newer "
       "CUDA major, on data-centre GPUs, select NGC Server Ready RTX SKUs and Jetson only; "
       "elsewhere CUDA fails with error 804 (CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE).",
       "https://docs.nvidia.com/deploy/cuda-compatibility/forward-compatibility.html"},
      {"kernel_image",
       "SASS built for sm_XY runs on compute capability X.Z with Z >= Y (sm_XYa on X.Y only); PTX "
       "(compute_XY) runs on later capabilities through JIT. Otherwise: \"no kernel image is "
       "available for execution on the device\".",
       "https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#binary-compatibility"},
      {"tensorflow_cudnn",
       "A tested TensorFlow configuration works with a cuDNN of the same major and an equal or "
       "higher minor.",
       "https://www.tensorflow.org/install/source#gpu"},
      {"jax_local_cuda",
       "A JAX CUDA plugin works with a local CUDA, cuDNN and NCCL of its major at or above the "
       "listed minimums (cuDNN below the next major).",
       "https://docs.jax.dev/en/latest/installation.html"},
  };
  return kRules;
}

const char* DriverFitName(DriverFit f) {
  switch (f) {
    case DriverFit::kFull:
      return "full";
    case DriverFit::kMinorCompat:
      return "minor_compat";
    case DriverFit::kTooOld:
      return "too_old";
  }
  return "?";
}

const char* KernelFitName(KernelFit f) {
  switch (f) {
    case KernelFit::kNative:
      return "native";
    case KernelFit::kPtxJit:
      return "ptx_jit";
    case KernelFit::kNoKernelImage:
      return "no_kernel_image";
  }
  return "?";
}

const char* ForwardCompatName(ForwardCompat f) {
  switch (f) {
    case ForwardCompat::kSupported:
      return "yes";
    case ForwardCompat::kSelectSkus:
      return "select";
    case ForwardCompat::kUnsupported:
      return "no";
  }
  return "?";
}

}  // namespace vigil::env
