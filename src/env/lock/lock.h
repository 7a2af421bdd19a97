// EnvLock: what a machine's GPU software environment is, as `vigil env lock`
// records it (docs/env-lock.md). A plain value type: collect/env fills it from
// a machine, lock_format.h writes and reads it, and diff/doctor (later
// slices) compare it. Pure: no file or process access here.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace vigil::env {

inline constexpr int kLockFormatVersion = 1;

struct LockOs {
  std::string id;          // os-release ID: "debian", "rhel", "ubuntu"
  std::string version_id;  // os-release VERSION_ID: "12", "8.9"
  std::string pretty_name;
  std::string kernel;  // /proc/sys/kernel/osrelease
  std::string glibc;   // "2.36"; empty when no libc.so.6 was found
  std::string glibc_path;
  bool operator==(const LockOs&) const = default;
};

// The kernel module that is loaded, never what a toolkit names.
struct LockDriver {
  std::string version;  // "550.54.15"; empty: no driver loaded
  std::string flavor;   // "open" | "proprietary" | ""
  bool operator==(const LockDriver&) const = default;
};

struct LockGpu {
  std::string model;               // "NVIDIA H100 80GB HBM3"
  std::string compute_capability;  // "9.0"; empty when the source does not say
  uint64_t memory_mib = 0;
  bool operator==(const LockGpu&) const = default;
};

// A CUDA toolkit or runtime found on disk.
struct LockCuda {
  std::string path;     // the install's root, symlinks resolved
  std::string kind;     // "toolkit" (system /usr/local/cuda*), "conda", "pip"
  std::string version;  // "12.4.1"
  std::string
      version_source;  // "version.json", "version.txt", "conda-meta", "dist-info", "file_name"
  std::vector<std::string> aliases;  // other paths that lead here (/usr/local/cuda)
  bool operator==(const LockCuda&) const = default;
};

// One real file of a GPU library (cudnn, nccl, cudart, cublas).
struct LockLibrary {
  std::string family;                // "cudnn" | "nccl" | "cudart" | "cublas"
  std::string path;                  // the real file, symlinks resolved
  std::string soname;                // DT_SONAME when the file has one
  std::string version;               // "9.1.0" best known; empty when nothing says
  std::string version_source;        // "file_name", "package:nvidia-cudnn-cu12", "header"
  std::vector<std::string> aliases;  // symlinks that lead to it
  bool operator==(const LockLibrary&) const = default;
};

struct LockHeader {
  std::string family;  // "cudnn" | "nccl"
  std::string path;
  std::string version;  // from CUDNN_MAJOR/MINOR/PATCHLEVEL, NCCL_MAJOR/MINOR/PATCH
  bool operator==(const LockHeader&) const = default;
};

struct LockPackage {
  std::string name;  // as its metadata spells it: "torch", "nvidia-cudnn-cu12"
  std::string version;
  std::string build;      // conda build string ("py3.11_cuda12.1_cudnn8.9.2_0"); empty for pip
  std::string installer;  // "pip" | "conda"
  bool operator==(const LockPackage&) const = default;
};

// A library a process would load, as glibc's loader searches for it.
struct LockResolution {
  std::string consumer;  // the ELF file that needs it (torch/lib/libtorch_cuda.so)
  std::string needed;    // the DT_NEEDED name: "libcudnn.so.9"
  std::string resolved;  // real path; empty: not found
  std::string via;       // "rpath" | "LD_LIBRARY_PATH" | "runpath" | "ld.so.conf" | "default" | ""
  std::vector<std::string> shadowed;  // other copies of the same name the search passed over
  bool operator==(const LockResolution&) const = default;
};

struct LockPython {
  std::string prefix;         // sys.prefix: "/usr", "/opt/venv", "/opt/conda/envs/train"
  std::string kind;           // "system" | "venv" | "conda"
  std::string interpreter;    // the python executable, symlinks resolved
  std::string version;        // "3.11" (from the interpreter's name, pyvenv.cfg or lib/pythonX.Y)
  std::string base_prefix;    // venv: pyvenv.cfg "home"'s prefix
  std::string torch_version;  // torch/version.py __version__
  std::string torch_cuda;     // torch/version.py cuda; "" when CPU-only or absent
  std::vector<LockPackage> packages;
  std::vector<LockResolution> resolutions;
  bool operator==(const LockPython&) const = default;
};

struct EnvLock {
  int format = kLockFormatVersion;
  // "live": this machine; "root": a copy of one under --root DIR (the DIR
  // itself is not recorded: it is a fact about the reader, not the machine).
  std::string source;
  LockOs os;
  LockDriver driver;
  std::string gpu_source;  // "nvml" | "file" | "none"
  std::vector<LockGpu> gpus;
  std::vector<LockCuda> cuda;
  std::vector<LockLibrary> libraries;
  std::vector<LockHeader> headers;
  std::vector<LockPython> pythons;
  // Resolutions from the job's own point of view (no consumer's rpath), one
  // per library family's usual soname.
  std::vector<LockResolution> resolutions;
  std::map<std::string, std::string> environment;  // the GPU-relevant variables only
  // What could not be read and why ("bad ELF file ...: truncated"): part of the
  // lock so a reader knows what it does not say.
  std::vector<std::string> notes;
  bool operator==(const EnvLock&) const = default;
};

// Sorts every list (and the lists inside) into the lock's canonical order, so
// the same machine gives the same bytes whatever order directories list in.
void Canonicalize(EnvLock* lock);

}  // namespace vigil::env
