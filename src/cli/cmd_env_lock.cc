#include "cli/cmd_env_lock.h"

#include <unistd.h>

#include <cstdio>
#include <map>

#include "collect/env/env_reader.h"
#include "collect/env/nvml_gpus.h"
#include "core/env.h"
#include "env/lock/lock_format.h"

extern char** environ;

namespace vigil::cli {
namespace {

constexpr char kUsage[] =
    "usage: vigil env lock [-o FILE] [--root DIR]\n"
    "  Writes this machine's GPU software environment (OS, glibc, driver, GPUs, CUDA,\n"
    "  cuDNN/NCCL copies and which one loads, Pythons and packages, the job's GPU\n"
    "  variables) as a lock file: the same machine gives the same bytes.\n"
    "  -o FILE     write to FILE instead of standard output\n"
    "  --root DIR  read a copy of a machine under DIR: its files (links kept inside\n"
    "              DIR), its job environment from DIR/environ and its GPUs from\n"
    "              DIR/.vigil-gpus.json; nothing of this host is used\n";

struct Flags {
  std::string out;
  std::string root;
};

// 0 parsed, 1 --help printed, 2 a usage error printed.
int Parse(const std::vector<std::string>& args, Flags* flags) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](std::string* into) {
      if (i + 1 >= args.size()) return false;
      *into = args[++i];
      return true;
    };
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return 1;
    }
    bool ok = true;
    if (a == "-o" || a == "--output") {
      ok = value(&flags->out);
    } else if (a == "--root") {
      ok = value(&flags->root);
    } else if (a.rfind("--root=", 0) == 0) {
      flags->root = a.substr(7);
    } else if (a.rfind("--output=", 0) == 0) {
      flags->out = a.substr(9);
    } else {
      std::fprintf(stderr, "vigil env lock: unknown argument %s\n%s", a.c_str(), kUsage);
      return 2;
    }
    if (!ok) {
      std::fprintf(stderr, "vigil env lock: %s needs a value\n%s", a.c_str(), kUsage);
      return 2;
    }
  }
  return 0;
}

std::map<std::string, std::string> ProcessEnvironment() {
  std::map<std::string, std::string> out;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string kv = *e;
    size_t eq = kv.find('=');
    if (eq != std::string::npos && eq > 0) out[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return out;
}

}  // namespace

int RunEnvLock(const std::vector<std::string>& args) {
  Flags flags;
  if (int rc = Parse(args, &flags); rc != 0) return rc == 1 ? 0 : 2;
  collect::EnvReadOptions options;
  options.root = flags.root;
  if (flags.root.empty()) {
    // Live: this process's environment is the job's, and NVML names the GPUs.
    options.live_environment = ProcessEnvironment();
    options.live_gpus = [] { return collect::ReadNvmlGpus(); };
  }
  auto lock = collect::ReadEnvLock(options);
  if (!lock.ok()) {
    std::fprintf(stderr, "vigil env lock: %s\n", lock.status().message().c_str());
    return 1;
  }
  const std::string text = env::WriteLock(*lock);
  if (flags.out.empty() || flags.out == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return std::fflush(stdout) == 0 ? 0 : 1;
  }
  Status st = Env::Default()->WriteFileAtomic(flags.out, text);
  if (!st.ok()) {
    std::fprintf(stderr, "vigil env lock: cannot write %s: %s\n", flags.out.c_str(),
                 st.message().c_str());
    return 1;
  }
  return 0;
}

}  // namespace vigil::cli
