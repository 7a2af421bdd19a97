// Version numbers of the GPU software stack: drivers ("550.54.15"), CUDA
// ("12.4", "12.4.1"), cuDNN ("9.1.0.70"), Python ("3.12"), framework releases
// ("2.3.1", "2.3.1+cu121"), and compute capabilities ("8.9").
#pragma once

#include <compare>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace vigil::env {

// Dotted decimal numbers, compared part by part; missing parts count as 0,
// so "12.4" == "12.4.0" (CUDA's "12.4" names the GA release).
class Version {
 public:
  Version() = default;
  explicit Version(std::vector<int> parts) : parts_(std::move(parts)) {}

  const std::vector<int>& parts() const { return parts_; }
  int major() const { return part(0); }
  int minor() const { return part(1); }
  int part(size_t i) const { return i < parts_.size() ? parts_[i] : 0; }
  bool empty() const { return parts_.empty(); }
  // Whether `other` starts with every part of this one ("9.1" covers
  // "9.1.0.70"; "9.1.0" does not cover "9.10.2").
  bool IsPrefixOf(const Version& other) const;
  std::string ToString() const;

  std::strong_ordering operator<=>(const Version& other) const;
  bool operator==(const Version& other) const { return (*this <=> other) == 0; }

 private:
  std::vector<int> parts_;
};

// 1 to 5 dot-separated decimal parts; nothing else (no "v", no spaces).
Result<Version> ParseVersion(std::string_view text);

// A PyTorch version as torch.__version__ reports it: "2.3.1+cu121" is release
// 2.3.1 built for CUDA 12.1; "2.3.1" (no local part) leaves the variant empty;
// "+cpu" is the CPU-only build.
struct TorchBuild {
  Version version;
  std::string variant;  // "cu121", "cpu" or ""
};
Result<TorchBuild> ParseTorchVersion(std::string_view text);

// "cu121" -> 12.1, "cu118" -> 11.8, "cu130" -> 13.0: the last digit is the minor.
Result<Version> CudaOfVariant(std::string_view variant);

struct ComputeCapability {
  int major = 0;
  int minor = 0;
  std::string ToString() const;  // "8.9"
  auto operator<=>(const ComputeCapability&) const = default;
};
// "8.9" (as NVIDIA's tables write it).
Result<ComputeCapability> ParseComputeCapability(std::string_view text);

}  // namespace vigil::env
