#include "env/version.h"

#include <algorithm>

#include "core/strings.h"

namespace vigil::env {

bool Version::IsPrefixOf(const Version& other) const {
  if (parts_.size() > other.parts_.size()) return false;
  return std::equal(parts_.begin(), parts_.end(), other.parts_.begin());
}

std::string Version::ToString() const {
  std::string out;
  for (size_t i = 0; i < parts_.size(); ++i) {
    if (i > 0) out += '.';
    out += std::to_string(parts_[i]);
  }
  return out;
}

std::strong_ordering Version::operator<=>(const Version& other) const {
  size_t n = std::max(parts_.size(), other.parts_.size());
  for (size_t i = 0; i < n; ++i) {
    if (auto c = part(i) <=> other.part(i); c != 0) return c;
  }
  return std::strong_ordering::equal;
}

Result<Version> ParseVersion(std::string_view text) {
  auto bad = [&] { return InvalidArgument("not a version: \"" + std::string(text) + "\""); };
  std::vector<std::string_view> fields = Split(text, '.');
  if (text.empty() || fields.size() > 5) return bad();
  std::vector<int> parts;
  for (std::string_view f : fields) {
    // Leading zeros are kept apart from the digits rule on purpose: drivers
    // write "450.80.02", whose "02" is the number 2.
    if (f.empty() || f.size() > 9 ||
        !std::all_of(f.begin(), f.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      return bad();
    }
    parts.push_back(static_cast<int>(*ParseInt64(f)));
  }
  return Version(std::move(parts));
}

Result<TorchBuild> ParseTorchVersion(std::string_view text) {
  TorchBuild out;
  std::string_view release = text;
  if (size_t plus = text.find('+'); plus != std::string_view::npos) {
    release = text.substr(0, plus);
    out.variant = std::string(text.substr(plus + 1));
    if (out.variant != "cpu" && !CudaOfVariant(out.variant).ok()) {
      return InvalidArgument("torch version \"" + std::string(text) +
                             "\": the part after '+' is neither cpu nor cuXYZ");
    }
  }
  VIGIL_ASSIGN_OR_RETURN(out.version, ParseVersion(release));
  return out;
}

Result<Version> CudaOfVariant(std::string_view variant) {
  std::string_view digits = variant.substr(std::min<size_t>(2, variant.size()));
  if (!StartsWith(variant, "cu") || digits.size() < 2 || digits.size() > 4 ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return InvalidArgument("not a CUDA wheel variant (cuXYZ): \"" + std::string(variant) + "\"");
  }
  int major = static_cast<int>(*ParseInt64(digits.substr(0, digits.size() - 1)));
  return Version({major, digits.back() - '0'});
}

std::string ComputeCapability::ToString() const {
  return std::to_string(major) + "." + std::to_string(minor);
}

Result<ComputeCapability> ParseComputeCapability(std::string_view text) {
  auto v = ParseVersion(text);
  if (!v.ok() || v->parts().size() != 2) {
    return InvalidArgument("not a compute capability (X.Y): \"" + std::string(text) + "\"");
  }
  return ComputeCapability{v->major(), v->minor()};
}

}  // namespace vigil::env
