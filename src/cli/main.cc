// vigil: the one binary. Composition root: the only place that sees both the
// agent side and the server side (DESIGN.md "Data flow").
#include <malloc.h>
#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "cli/commands.h"
#include "cli/demo_log.h"
#include "cli/subcommands.h"

int main(int argc, char** argv) {
  using namespace vigil::cli;
  // glibc gives each thread that allocates its own arena and keeps freed
  // memory there; two arenas keep a small agent's resident memory small.
  mallopt(M_ARENA_MAX, 2);
  // Every followed log file holds a descriptor: the soft limit's usual 1024
  // is too few for a busy node; the hard limit is what the admin allows.
  if (struct rlimit rl{}; ::getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = std::min<rlim_t>(rl.rlim_max, 65536);
    ::setrlimit(RLIMIT_NOFILE, &rl);
  }
  // The demo's simulated training job (cmd_demo.cc), not for users.
  if (argc == 2 && std::string_view(argv[1]) == "__demo-train") return RunDemoTraining();
  if (argc >= 2 && std::string_view(argv[1]) == "run") {
    auto run = ParseRunArgs(argc - 2, argv + 2);
    if (!run.ok()) {
      std::fprintf(stderr, "vigil run: %s\n", run.status().message().c_str());
      return 2;
    }
    return RunRun(*run);
  }
  CLI::App app{"Vigil: zero-config observability for GPU machines"};
  app.require_subcommand(1);
  app.set_version_flag("--version", [] { return std::string("vigil ") + VersionString(); });

  std::vector<Subcommand> subcommands = AddSubcommands(&app);
  CLI11_PARSE(app, argc, argv);
  for (const Subcommand& s : subcommands) {
    if (*s.app) return s.run();
  }
  return RunVersion();
}
