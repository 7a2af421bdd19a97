#include <cstdio>

#include "cli/commands.h"
#include "core/version.h"

namespace vigil::cli {

const char* VersionString() { return kVersion; }

int RunVersion() {
  std::printf("vigil %s\n", kVersion);
  return 0;
}

}  // namespace vigil::cli
