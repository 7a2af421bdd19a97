// `vigil env lock [-o FILE] [--root DIR]`: writes this machine's environment
// lock (docs/env-lock.md). Its own entry point, so `vigil env`'s dispatch
// (cmd_env.cc) can list it beside the other `env` subcommands.
#pragma once

#include <string>
#include <vector>

namespace vigil::cli {

// `args` are what follows `vigil env lock`. Returns the exit code: 0 written,
// 1 the lock could not be read or written, 2 a usage error.
int RunEnvLock(const std::vector<std::string>& args);

}  // namespace vigil::cli
