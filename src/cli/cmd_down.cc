#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "cli/commands.h"
#include "cli/home.h"
#include "core/env.h"

namespace vigil::cli {

int RunDown(const DownFlags& flags) {
  HomePaths paths{ResolveHome(flags.home)};
  auto running = FindRunningInstance(paths);
  if (!running) {
    std::printf("Vigil is not running (home %s).\n", paths.home.c_str());
    return 0;
  }
  if (::kill(running->pid, SIGTERM) < 0) {
    std::fprintf(stderr, "cannot stop Vigil (pid %d): %s\n", running->pid, std::strerror(errno));
    return 1;
  }
  Env* env = Env::Default();
  int64_t deadline = env->MonotonicMillis() + int64_t{flags.timeout_s} * 1000;
  while (env->MonotonicMillis() < deadline) {
    if (!FindRunningInstance(paths)) {
      std::printf("Vigil stopped (pid %d).\n", running->pid);
      return 0;
    }
    env->SleepMillis(100);
  }
  std::fprintf(stderr,
               "Vigil (pid %d) did not stop within %d s; see %s. To force it: kill -9 %d "
               "(data is safe: at most the last second is lost).\n",
               running->pid, flags.timeout_s, paths.log_file().c_str(), running->pid);
  return 1;
}

}  // namespace vigil::cli
