// CUDA toolkits and runtimes: system installs (/usr/local/cuda*, $CUDA_HOME),
// conda's cudatoolkit / cuda-cudart packages, and the nvidia-cuda-runtime pip
// wheel (site-packages/nvidia/cuda_runtime).
#include <algorithm>

#include "collect/env/file_parsers.h"
#include "collect/env/scan.h"
#include "core/strings.h"

namespace vigil::collect::scan {
namespace {

env::LockCuda* FindCuda(Scan* s, const std::string& path) {
  for (env::LockCuda& c : s->lock->cuda) {
    if (c.path == path) return &c;
  }
  return nullptr;
}

void AddSystemToolkit(Scan* s, const std::string& path) {
  auto real = s->fs->Resolve(path);
  if (!real.ok() || !s->fs->IsDir(*real)) return;
  const bool looks_like_cuda = s->fs->Exists(*real + "/version.json") ||
                               s->fs->Exists(*real + "/version.txt") ||
                               s->fs->IsDir(*real + "/bin") || s->fs->IsDir(*real + "/lib64");
  if (!looks_like_cuda) return;
  if (env::LockCuda* known = FindCuda(s, *real)) {
    if (NormalizePath(path) != *real) known->aliases.push_back(NormalizePath(path));
    return;
  }
  env::LockCuda c;
  c.path = *real;
  c.kind = "toolkit";
  if (NormalizePath(path) != *real) c.aliases.push_back(NormalizePath(path));
  // version.json since CUDA 11.1; version.txt before.
  struct VersionFile {
    const char* name;
    Result<std::string> (*parse)(std::string_view);
  };
  for (const VersionFile& f : {VersionFile{"version.json", &ParseCudaVersionJson},
                               VersionFile{"version.txt", &ParseCudaVersionTxt}}) {
    const std::string file = *real + "/" + f.name;
    if (!s->fs->IsFile(file)) continue;
    auto v = f.parse(s->ReadSmall(file, 1 << 20));
    if (v.ok()) {
      c.version = *v;
      c.version_source = f.name;
    } else {
      s->Note(file, v.status());
    }
    break;
  }
  if (c.version.empty()) {
    // "cuda-12.4": the directory's name is the last resort.
    std::string base = BaseName(*real);
    if (StartsWith(base, "cuda-")) {
      c.version = base.substr(5);
      c.version_source = "dir_name";
    }
  }
  s->lock->cuda.push_back(std::move(c));
}

// Conda's CUDA: cudatoolkit (before CUDA 12) or the cuda-* split packages.
void AddCondaCuda(Scan* s, const env::LockPython& py) {
  static const char* const kOrder[] = {"cudatoolkit", "cuda-toolkit", "cuda-runtime",
                                       "cuda-cudart"};
  for (const char* name : kOrder) {
    for (const env::LockPackage& p : py.packages) {
      if (p.installer != "conda" || p.name != name) continue;
      s->lock->cuda.push_back({py.prefix, "conda", p.version, "conda-meta:" + p.name, {}});
      return;
    }
  }
}

// "nvidia-cuda-runtime-cu12" and friends, normalised as pip does.

void AddPipCuda(Scan* s, const env::LockPython& py) {
  for (const std::string& site : SiteDirs(*s, py)) {
    const std::string dir = site + "/nvidia/cuda_runtime";
    if (!s->fs->IsDir(dir)) continue;
    env::LockCuda c{dir, "pip", "", "", {}};
    for (const env::LockPackage& p : py.packages) {
      if (p.installer == "pip" &&
          StartsWith(NormalizePackageName(p.name), "nvidia-cuda-runtime-cu")) {
        c.version = p.version;
        c.version_source = "dist-info:" + p.name;
      }
    }
    s->lock->cuda.push_back(std::move(c));
  }
}

}  // namespace

void ScanCuda(Scan* s) {
  for (const char* base : {"/usr/local", "/opt"}) {
    for (const std::string& name : List(*s, base)) {
      if (name == "cuda" || StartsWith(name, "cuda-"))
        AddSystemToolkit(s, std::string(base) + "/" + name);
    }
  }
  for (const char* var : {"CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"}) {
    auto it = s->job_env.find(var);
    if (it != s->job_env.end() && !it->second.empty()) AddSystemToolkit(s, it->second);
  }
  for (const env::LockPython& py : s->lock->pythons) {
    if (py.kind == "conda") AddCondaCuda(s, py);
    AddPipCuda(s, py);
  }
}

}  // namespace vigil::collect::scan
