// Every copy of the GPU libraries that decide whether a job runs (cuDNN,
// NCCL, the CUDA runtime, cuBLAS) and the cuDNN/NCCL headers, wherever a
// loader or a build could pick them up: the system's directories, each CUDA
// toolkit, LD_LIBRARY_PATH, conda envs and the nvidia-* pip wheels.
#include <algorithm>
#include <set>

#include "collect/env/elf_dynamic.h"
#include "collect/env/file_parsers.h"
#include "collect/env/scan.h"
#include "core/strings.h"

namespace vigil::collect::scan {
namespace {

struct Family {
  const char* family;
  const char* prefix;         // file names start with this
  const char* pip_component;  // site-packages/nvidia/<component>
};
const Family kFamilies[] = {
    {"cudnn", "libcudnn.so", "cudnn"},
    {"nccl", "libnccl.so", "nccl"},
    {"cudart", "libcudart.so", "cuda_runtime"},
    {"cublas", "libcublas.so", "cublas"},
};

struct Dir {
  std::string path;
  const env::LockPython* python = nullptr;  // whose site-packages it is in
  std::string pip_component;                // "cudnn" for .../nvidia/cudnn/lib
};

std::vector<Dir> LibraryDirs(Scan* s) {
  std::vector<Dir> dirs;
  auto add = [&](const std::string& d, const env::LockPython* py = nullptr,
                 const std::string& comp = "") {
    dirs.push_back({d, py, comp});
  };
  // A directory counts once, for the first way it is reached: the wheels'
  // first, so a wheel's copy keeps its package version even when
  // LD_LIBRARY_PATH names the same directory.
  for (const env::LockPython& py : s->lock->pythons) {
    if (py.kind == "conda") add(py.prefix + "/lib", &py);
    for (const std::string& site : SiteDirs(*s, py)) {
      for (const std::string& comp : List(*s, site + "/nvidia")) {
        add(site + "/nvidia/" + comp + "/lib", &py, comp);
      }
      add(site + "/torch/lib", &py);
    }
  }
  for (const env::LockCuda& c : s->lock->cuda) {
    if (c.kind == "toolkit") {
      for (const char* sub :
           {"/lib64", "/lib", "/targets/x86_64-linux/lib", "/targets/sbsa-linux/lib"}) {
        add(c.path + sub);
      }
    }
  }
  for (const std::string& d : s->ld_conf_dirs) add(d);
  for (const std::string& d : s->default_dirs) add(d);
  for (const char* d : {"/usr/local/lib", "/usr/local/lib64"}) add(d);
  if (auto it = s->job_env.find("LD_LIBRARY_PATH"); it != s->job_env.end()) {
    for (std::string_view d : Split(it->second, ':')) {
      if (!d.empty()) add(std::string(d));
    }
  }
  return dirs;
}

// The version of the pip wheel that ships site-packages/nvidia/<component>.
std::string PipVersion(const env::LockPython& py, const std::string& component,
                       std::string* package) {
  const std::string want = "nvidia-" + NormalizePackageName(component) + "-cu";
  for (const env::LockPackage& p : py.packages) {
    if (p.installer == "pip" && StartsWith(NormalizePackageName(p.name), want)) {
      *package = p.name;
      return p.version;
    }
  }
  return "";
}

void AddCopy(Scan* s, const Dir& dir, const Family& fam, const std::string& name,
             std::map<std::string, size_t>* by_path) {
  const std::string path = NormalizePath(dir.path + "/" + name);
  auto real = s->fs->Resolve(path);
  if (!real.ok() || !s->fs->IsFile(*real)) {
    s->Note(path + ": a link to nothing (" + (real.ok() ? *real : Reason(real.status())) + ")");
    return;
  }
  auto it = by_path->find(*real);
  if (it != by_path->end()) {
    if (path != *real) s->lock->libraries[it->second].aliases.push_back(path);
    return;
  }
  env::LockLibrary lib;
  lib.family = fam.family;
  lib.path = *real;
  if (path != *real) lib.aliases.push_back(path);
  auto size = s->fs->FileSize(*real);
  auto read = [&](uint64_t off, size_t len) { return s->fs->ReadRange(*real, off, len); };
  auto elf = size.ok() ? ReadElfDynamic(read, *size) : Result<ElfDynamic>(size.status());
  if (elf.ok()) {
    lib.soname = elf->soname;
  } else {
    s->Note(*real, elf.status());
  }
  // A full version in the file name (libcudnn.so.8.9.7) is the most exact;
  // then the wheel's; a bare major (libcudnn.so.9) last.
  std::string from_name = SoVersionFromName(BaseName(*real));
  std::string package;
  std::string from_pip = dir.python != nullptr && !dir.pip_component.empty()
                             ? PipVersion(*dir.python, dir.pip_component, &package)
                             : "";
  if (std::count(from_name.begin(), from_name.end(), '.') >= 1) {
    lib.version = from_name;
    lib.version_source = "file_name";
  } else if (!from_pip.empty()) {
    lib.version = from_pip;
    lib.version_source = "package:" + package;
  } else if (!from_name.empty()) {
    lib.version = from_name;
    lib.version_source = "file_name";
  }
  by_path->emplace(lib.path, s->lock->libraries.size());
  s->lock->libraries.push_back(std::move(lib));
}

void ScanHeaders(Scan* s) {
  std::vector<std::string> dirs = {"/usr/include", "/usr/local/include",
                                   "/usr/include/x86_64-linux-gnu"};
  for (const env::LockCuda& c : s->lock->cuda) {
    if (c.kind == "toolkit") {
      dirs.push_back(c.path + "/include");
      dirs.push_back(c.path + "/targets/x86_64-linux/include");
    }
  }
  for (const env::LockPython& py : s->lock->pythons) {
    if (py.kind == "conda") dirs.push_back(py.prefix + "/include");
    for (const std::string& site : SiteDirs(*s, py)) {
      dirs.push_back(site + "/nvidia/cudnn/include");
      dirs.push_back(site + "/nvidia/nccl/include");
    }
  }
  std::set<std::string> seen;
  for (const std::string& dir : dirs) {
    // cuDNN 8+ keeps its version in cudnn_version.h; older ones in cudnn.h.
    for (const char* file : {"cudnn_version.h", "cudnn.h", "nccl.h"}) {
      std::string path = dir + "/" + file;
      if (std::string(file) == "cudnn.h" && s->fs->IsFile(dir + "/cudnn_version.h")) continue;
      auto real = s->fs->Resolve(path);
      if (!real.ok() || !s->fs->IsFile(*real) || !seen.insert(*real).second) continue;
      const bool nccl = std::string(file) == "nccl.h";
      std::string text = s->ReadSmall(*real, 1 << 20);
      auto v = nccl ? ParseNcclHeader(text) : ParseCudnnHeader(text);
      if (!v.ok()) {
        s->Note(*real, v.status());
        continue;
      }
      s->lock->headers.push_back({nccl ? "nccl" : "cudnn", *real, *v});
    }
  }
}

}  // namespace

std::string LibraryFamily(const std::string& file_name) {
  for (const Family& f : kFamilies) {
    if (StartsWith(file_name, f.prefix)) return f.family;
  }
  return "";
}

void ScanLibraries(Scan* s) {
  std::map<std::string, size_t> by_path;
  std::set<std::string> dirs_seen;
  for (Dir dir : LibraryDirs(s)) {
    auto real = s->fs->Resolve(dir.path);
    if (!real.ok() || !dirs_seen.insert(*real).second) continue;
    // Named by the real directory: a merged /lib -> usr/lib is not a copy.
    dir.path = *real;
    for (const std::string& name : List(*s, dir.path)) {
      for (const Family& f : kFamilies) {
        if (StartsWith(name, f.prefix)) AddCopy(s, dir, f, name, &by_path);
      }
    }
  }
  ScanHeaders(s);
}

}  // namespace vigil::collect::scan
