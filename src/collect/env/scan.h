// Internal to collect/env: the state the scanners of ReadEnvLock share, and
// the scanners themselves, one file each (system, python, cuda, libraries,
// loader). Not a public header.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "collect/env/rooted_fs.h"
#include "env/lock/lock.h"

namespace vigil::collect::scan {

// A directory libraries may be found in, and who put it there.
struct LibDir {
  std::string path;
  std::string python_prefix;  // the env whose site-packages holds it, if any
};

struct Scan {
  const RootedFs* fs = nullptr;
  std::map<std::string, std::string> job_env;  // the job's whole environment
  env::EnvLock* lock = nullptr;
  // ld.so.conf's directories, in order, then glibc's default ones.
  std::vector<std::string> ld_conf_dirs;
  std::vector<std::string> default_dirs;

  void Note(const std::string& path, const Status& why);
  void Note(std::string text) { lock->notes.push_back(std::move(text)); }
  // A small file, at most `max` bytes; a failure is noted and returns "".
  std::string ReadSmall(const std::string& path, size_t max = 1 << 20, bool note = true);
};

// A reason without host paths (Env's messages name the host path, which a
// lock of a --root tree must not contain).
std::string Reason(const Status& s);

// Entries of a directory, or none (an absent directory is the usual case).
std::vector<std::string> List(const Scan& s, const std::string& dir);

void ScanSystem(Scan* s);     // os, kernel, glibc, driver
void ScanPythons(Scan* s);    // interpreters, venvs, conda envs, packages, torch
void ScanCuda(Scan* s);       // toolkits and runtimes (system, conda, pip)
void ScanLibraries(Scan* s);  // cuDNN/NCCL/cudart/cuBLAS copies and headers
void ScanLoads(Scan* s);      // which copy a process would load

// The site-packages (and Debian dist-packages) directories of a Python prefix.
std::vector<std::string> SiteDirs(const Scan& s, const env::LockPython& py);
// A package name as pip compares them: lower case, '_' and '.' as '-'.
std::string NormalizePackageName(std::string name);
// "cudnn" for "libcudnn.so.9", "" for a library Vigil does not track.
std::string LibraryFamily(const std::string& file_name);

}  // namespace vigil::collect::scan
