// ReadEnvLock: the agent side of `vigil env lock`. Reads this machine (or a
// copy of one under --root DIR) into an env::EnvLock; never runs Python or
// any other program, never loads a library.
//
// Under a root, everything comes from the tree: files through RootedFs (links
// clamped inside DIR), the job's environment from DIR/environ and the GPUs
// from DIR/.vigil-gpus.json. Nothing of the host leaks in: not its
// environment, not NVML, not its files, and not the DIR path itself (notes
// name paths inside the tree).
//
// What cannot be read (a bad ELF file, a garbled METADATA) becomes a note in
// the lock, not an error: a lock of a half-broken machine is what doctor
// needs most. Only a root that is not a directory fails the whole read.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/env.h"
#include "core/status.h"
#include "env/lock/lock.h"

namespace vigil::collect {

struct EnvReadOptions {
  Env* env = nullptr;  // nullptr: Env::Default()
  // "" or "/": the live machine; else a directory holding a copy of one.
  std::string root;
  // Live only: the job's environment (the CLI passes its own) and where the
  // GPUs come from (the CLI passes NVML; unset: none are recorded).
  std::map<std::string, std::string> live_environment;
  std::function<Result<std::vector<env::LockGpu>>()> live_gpus;
};

Result<env::EnvLock> ReadEnvLock(const EnvReadOptions& options);

// Whether a variable of the job's environment belongs in a lock: the ones
// that change which GPUs, libraries and settings a CUDA job uses. Names that
// look like secrets never do.
bool IsLockedVariable(const std::string& name);

// DIR/.vigil-gpus.json: [{"model", "compute_capability", "memory_mib"}].
Result<std::vector<env::LockGpu>> ParseGpusFile(std::string_view text);

}  // namespace vigil::collect
