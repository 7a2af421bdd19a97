// The GPU software compatibility matrix (docs/env-matrix.md): which driver a
// CUDA toolkit needs, which cuDNN goes with which CUDA, what each PyTorch /
// TensorFlow / JAX build bundles and needs, and each GPU's compute
// capability. The data ships in the binary (src/env/data/matrix.txt) and an
// update file in the same format replaces or adds rows, so a new release
// does not wait for a new Vigil.
//
// Every row carries the public page it was read from. A Matrix is immutable
// once built and safe to share between threads.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "env/version.h"

namespace vigil::env {

// A table as the file names it, its columns (the source column is implicit
// and last) and how many leading columns identify a row.
struct TableSpec {
  std::string_view name;
  std::string_view title;
  std::vector<std::string_view> columns;
  size_t key_columns;
};
const std::vector<TableSpec>& TableSpecs();

// A row as written: fields trimmed, "-" read as empty.
struct Row {
  std::string table;
  std::vector<std::string> fields;
  std::string source;
  std::string origin;  // "FILE:LINE", for messages
};

struct CudaDriverRow {  // minimum Linux x86_64 driver of a toolkit release
  Version cuda;
  Version min_driver;
  std::string source;
};
struct MinorCompatRow {  // the driver floor of minor version compatibility
  int cuda_major = 0;
  Version min_driver;
  std::string source;
};
enum class ForwardCompat { kSupported, kSelectSkus, kUnsupported };
struct ForwardCompatRow {
  std::string segment;  // datacenter, workstation, consumer, jetson
  ForwardCompat support = ForwardCompat::kUnsupported;
  std::string source;
};
struct GpuRow {
  std::string model;
  ComputeCapability cc;
  std::string segment;
  std::string source;
};
struct CudnnRow {  // one cuDNN release on one CUDA major
  Version cudnn;
  Version cuda_first;
  Version cuda_last;
  Version min_driver;
  std::string source;
};
struct TorchRow {  // one official wheel variant of a PyTorch release (X.Y)
  Version release;
  std::string variant;
  Version cuda;
  Version cudnn;
  std::optional<Version> nccl;
  Version python_first;
  Version python_last;
  std::string source;
};
struct TorchArchRow {
  Version release;
  std::string variant;
  std::vector<std::string> archs;  // "sm_86", "sm_90a", "compute_90"
  std::string source;
};
struct TensorflowRow {  // a tested build configuration
  Version release;
  Version python_first;
  Version python_last;
  Version cudnn;
  Version cuda;
  std::string source;
};
struct JaxRow {
  std::string plugin;
  Version built_cuda;
  Version min_cuda;
  Version min_cudnn;
  Version cudnn_below;
  Version min_nccl;
  std::string source;
};

class Matrix {
 public:
  // Reads the file format; `origin` names the text in errors ("FILE:LINE: ...").
  static Result<Matrix> Parse(std::string_view text, std::string_view origin);
  // The matrix compiled into the binary.
  static const Matrix& Builtin();
  // The built-in matrix with FILE's rows applied; fails on a malformed file
  // or when the result contradicts itself.
  static Result<Matrix> BuiltinWithUpdateFile(const std::string& path);

  // This matrix with `update`'s rows replacing the rows of the same key and
  // added otherwise.
  Result<Matrix> MergedWith(const Matrix& update) const;
  // The file format; Parse(Serialize()) gives an equal matrix.
  std::string Serialize() const;
  // Rows that contradict each other or the rules (docs/env-matrix.md,
  // "Consistency"); empty when the matrix is consistent.
  std::vector<std::string> Problems() const;

  const std::vector<Row>& rows() const { return rows_; }
  const std::vector<CudaDriverRow>& cuda_drivers() const { return cuda_drivers_; }
  const std::vector<MinorCompatRow>& minor_compat() const { return minor_compat_; }
  const std::vector<ForwardCompatRow>& forward_compat() const { return forward_compat_; }
  const std::vector<GpuRow>& gpus() const { return gpus_; }
  const std::vector<CudnnRow>& cudnn() const { return cudnn_; }
  const std::vector<TorchRow>& torch() const { return torch_; }
  const std::vector<TorchArchRow>& torch_archs() const { return torch_archs_; }
  const std::vector<TensorflowRow>& tensorflow() const { return tensorflow_; }
  const std::vector<JaxRow>& jax() const { return jax_; }

 private:
  static Result<Matrix> FromRows(std::vector<Row> rows);
  Status AddTyped(const Row& row);

  std::vector<Row> rows_;
  std::vector<CudaDriverRow> cuda_drivers_;
  std::vector<MinorCompatRow> minor_compat_;
  std::vector<ForwardCompatRow> forward_compat_;
  std::vector<GpuRow> gpus_;
  std::vector<CudnnRow> cudnn_;
  std::vector<TorchRow> torch_;
  std::vector<TorchArchRow> torch_archs_;
  std::vector<TensorflowRow> tensorflow_;
  std::vector<JaxRow> jax_;
};

// Lower case, "NVIDIA"/"GeForce"/"Tesla"/"Quadro" dropped, split on anything
// that is not a letter or digit: "NVIDIA A100-SXM4-80GB" -> {"a100", "sxm4", "80gb"}.
std::vector<std::string> GpuNameTokens(std::string_view name);

}  // namespace vigil::env
