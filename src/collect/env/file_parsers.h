// Pure readers of the small text files `vigil env lock` looks at. Each takes
// the file's bytes (untrusted: any file in a --root tree) and returns what it
// found or a Status saying why nothing could be taken from it; none throws or
// reads past what it was given.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "core/status.h"

namespace vigil::collect {

// /etc/os-release: KEY=VALUE lines, values optionally quoted (os-release(5)).
std::map<std::string, std::string> ParseOsRelease(std::string_view text);

struct DriverVersion {
  std::string version;  // "550.54.15"
  std::string flavor;   // "open" | "proprietary"
};
// /proc/driver/nvidia/version: "NVRM version: NVIDIA UNIX x86_64 Kernel
// Module  550.54.15  Tue Mar 5 ..." (or "... Open Kernel Module for x86_64").
Result<DriverVersion> ParseDriverVersion(std::string_view text);

struct PackageMetadata {
  std::string name;
  std::string version;
};
// A *.dist-info/METADATA or *.egg-info/PKG-INFO file: RFC 822-style headers
// up to the first blank line; Name and Version are required.
Result<PackageMetadata> ParseDistMetadata(std::string_view text);

struct TorchBuild {
  std::string version;  // __version__ = '2.3.0+cu121'
  std::string cuda;     // cuda = '12.1' (or `cuda: Optional[str] = '12.1'`); "" for None
};
// torch/version.py, read as text: Vigil never runs Python.
Result<TorchBuild> ParseTorchVersionPy(std::string_view text);

// CUDA's version.json: {"cuda": {"version": "12.4.1"}, ...}.
Result<std::string> ParseCudaVersionJson(std::string_view text);
// Older toolkits' version.txt: "CUDA Version 10.2.89".
Result<std::string> ParseCudaVersionTxt(std::string_view text);

// conda-meta/NAME-VERSION-BUILD.json: name, version, build.
struct CondaRecord {
  std::string name;
  std::string version;
  std::string build;
};
Result<CondaRecord> ParseCondaMeta(std::string_view text);

// cudnn_version.h (CUDNN_MAJOR/MINOR/PATCHLEVEL), or cudnn.h of cuDNN < 8.
Result<std::string> ParseCudnnHeader(std::string_view text);
// nccl.h: NCCL_MAJOR/NCCL_MINOR/NCCL_PATCH.
Result<std::string> ParseNcclHeader(std::string_view text);

// pyvenv.cfg: "key = value" lines (home, version, version_info, ...).
std::map<std::string, std::string> ParsePyvenvCfg(std::string_view text);

// --root DIR's environ file: one KEY=VALUE a line; "KEY=" is set and empty; a
// line without '=' or with an empty key is skipped.
std::map<std::string, std::string> ParseEnvironFile(std::string_view text);

// The version in a shared library file name after ".so.": "libcudnn.so.8.9.7"
// -> "8.9.7"; "" when the name has none.
std::string SoVersionFromName(std::string_view name);

// glibc's version from the text in libc.so.6 ("... release version 2.36.") or
// its old file name "libc-2.17.so".
std::string GlibcVersionFromBytes(std::string_view bytes);
std::string GlibcVersionFromName(std::string_view name);

}  // namespace vigil::collect
