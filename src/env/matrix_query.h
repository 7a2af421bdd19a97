// Questions asked of the compatibility matrix (docs/env-matrix.md,
// "Queries"). Each answers from the rows and says which row decided, so a
// finding can cite its source. "Not in the matrix" is NotFound, never a
// guess: a caller reports it as unknown, not as incompatible.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "env/matrix.h"
#include "env/version.h"

namespace vigil::env {

// What a CUDA X.Y toolkit (or a runtime built with it) asks of the driver.
struct DriverRequirement {
  Version cuda;
  Version full;          // the release's own minimum: everything works
  Version minor_compat;  // the major's floor: runs, with the limits below
  std::string source;
};
Result<DriverRequirement> MinDriverFor(const Matrix& m, const Version& cuda);

enum class DriverFit {
  kFull,         // driver >= the toolkit's own minimum
  kMinorCompat,  // runs through minor version compatibility: no JIT of the
                 // toolkit's PTX, newer-driver APIs fail
                 // (cudaErrorCallRequiresNewerDriver)
  kTooOld,       // "CUDA driver version is insufficient for CUDA runtime version"
};
struct DriverVerdict {
  DriverFit fit = DriverFit::kTooOld;
  DriverRequirement need;
};
Result<DriverVerdict> CheckDriverForCuda(const Matrix& m, const Version& driver,
                                         const Version& cuda);

// What a driver runs: the newest toolkit release fully supported, and the
// CUDA majors whose every minor runs through minor version compatibility.
struct DriverSupport {
  std::optional<Version> newest_full;
  std::vector<int> minor_compat_majors;
};
DriverSupport CudaSupportedByDriver(const Matrix& m, const Version& driver);

// The GPU row whose model name is the longest run of whole tokens within
// `name` ("NVIDIA H100 80GB HBM3" -> H100; "NVIDIA L40S" -> L40S, not L40).
Result<GpuRow> FindGpu(const Matrix& m, std::string_view name);
Result<ComputeCapability> ComputeCapabilityOf(const Matrix& m, std::string_view name);
// Whether cuda-compat (forward compatibility) can work on this GPU; where it
// cannot, CUDA fails with error 804 (CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE).
Result<ForwardCompat> ForwardCompatOf(const Matrix& m, std::string_view gpu_name);

// The official wheel `torch` ("2.5.1+cu124", or its release "2.5.1" with
// `variant`); NotFound when the matrix does not list it.
Result<TorchRow> FindTorch(const Matrix& m, const TorchBuild& torch);
Result<std::vector<std::string>> ArchsOfTorchWheel(const Matrix& m, const TorchBuild& torch);

enum class KernelFit {
  kNative,         // SASS for this architecture (or an earlier minor of its major)
  kPtxJit,         // only PTX of an older architecture: the driver compiles it at start
  kNoKernelImage,  // "no kernel image is available for execution on the device"
};
// Whether code built for `archs` (sm_XY, sm_XYa, compute_XY) runs on `cc`:
// SASS runs on the same major and a minor at least its own (sm_XYa on X.Y
// only); PTX runs on any later capability through JIT.
KernelFit KernelFitOf(const std::vector<std::string>& archs, ComputeCapability cc);

// Whether cuDNN `cudnn` supports CUDA `cuda`; NotFound when the cuDNN
// release is not in the matrix.
Result<bool> CudnnCompatible(const Matrix& m, const Version& cudnn, const Version& cuda);

// TensorFlow's rule for a tested configuration: the installed cuDNN has the
// tested major and an equal or higher minor.
bool TensorflowCudnnFits(const Version& tested, const Version& installed);
// The tested configuration of `release` ("2.16.1", or "2.16" for the X.Y row).
Result<TensorflowRow> FindTensorflow(const Matrix& m, const Version& release);

// Whether the framework's wheels have a tag for this Python ("cp312").
// framework: "torch" (with `torch.variant` empty: any variant) or "tensorflow".
Result<bool> PythonSupported(const Matrix& m, std::string_view framework, const Version& release,
                             const Version& python);

// The JAX plugin ("jax-cuda12-plugin"), and whether a CUDA/cuDNN pair fits it.
Result<JaxRow> FindJaxPlugin(const Matrix& m, std::string_view plugin);
bool JaxFits(const JaxRow& plugin, const Version& cuda, const Version& cudnn);

// The rules the tables do not spell out row by row, with their sources, for
// `vigil env matrix` and for findings that cite them.
struct MatrixRule {
  std::string_view id;
  std::string_view text;
  std::string_view source;
};
const std::vector<MatrixRule>& MatrixRules();

const char* DriverFitName(DriverFit f);          // "full", "minor_compat", "too_old"
const char* KernelFitName(KernelFit f);          // "native", "ptx_jit", "no_kernel_image"
const char* ForwardCompatName(ForwardCompat f);  // "yes", "select", "no"

}  // namespace vigil::env
