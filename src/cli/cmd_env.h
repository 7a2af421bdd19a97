// `vigil env SUBCOMMAND [ARGS...]`: GPU software environments (docs/env-matrix.md).
// CLI11 hands everything after `env` to RunEnv (commands.h), which looks the
// first word up in the table in cmd_env.cc. A new subcommand is one entry
// there and one Run function declared here, defined in its own file
// (`matrix` in cmd_env.cc; lock, diff and doctor in cmd_env_lock.cc).
#pragma once

#include <string>
#include <vector>

namespace vigil::cli {

struct EnvCommand {
  const char* name;
  const char* usage;                                 // the line `vigil env --help` shows
  int (*run)(const std::vector<std::string>& args);  // args after the name; exit code
};
const std::vector<EnvCommand>& EnvCommands();

// `vigil env matrix [--json] [--table NAME] [--matrix FILE]`
int RunEnvMatrix(const std::vector<std::string>& args);

}  // namespace vigil::cli
