// `vigil demo`: the whole product without a GPU. Writes the embedded fake
// NVML library and its scenario into the demo's own home, starts the demo's
// training job (a real process, demo_log.h) and gives its pid to the
// simulated GPUs, points the NVML loader at them (the same dlopen path a
// real driver takes), and runs `vigil up --foreground` there.
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>

#include "cli/commands.h"
#include "cli/demo_assets.h"
#include "cli/demo_log.h"
#include "cli/home.h"
#include "core/env.h"

namespace vigil::cli {

int RunDemo(const DemoFlags& flags) {
  // A home of its own, so demo data never mixes with a real instance's.
  std::string home = flags.home.empty() ? ResolveHome("") + "-demo" : flags.home;
  std::string dir = home + "/demo";
  Env* env = Env::Default();
  std::string lib = dir + "/libnvidia-ml-demo.so";
  std::string scenario = dir + "/h100x8.scenario";
  Status st = env->CreateDirs(dir);
  if (st.ok()) st = env->WriteFileAtomic(lib, DemoNvmlLibrary());
  if (st.ok() && ::chmod(lib.c_str(), 0755) != 0) st = ErrnoStatus("chmod", lib, errno);
  if (!st.ok()) {
    std::fprintf(stderr, "vigil demo: cannot prepare %s: %s\n", dir.c_str(), st.ToString().c_str());
    return 1;
  }
  // A real job process, so everything that finds jobs finds it; the
  // simulated GPUs run its pid, so the Jobs page shows them as its GPUs.
  Result<int> job = StartDemoJob(home);
  if (!job.ok()) {
    std::fprintf(stderr, "vigil demo: %s\n", job.status().ToString().c_str());
    return 1;
  }
  st = env->WriteFileAtomic(scenario, DemoScenarioFor(*job));
  if (!st.ok()) {
    std::fprintf(stderr, "vigil demo: cannot prepare %s: %s\n", dir.c_str(), st.ToString().c_str());
    return 1;
  }
  ::setenv("VIGIL_NVML_LIBRARY", lib.c_str(), 1);
  ::setenv("VIGIL_FAKE_NVML_SCENARIO", scenario.c_str(), 1);
  std::printf(
      "Vigil demo: 8 simulated NVIDIA H100 GPUs running a training job (GPU 3 runs hot).\n"
      "Open the URL below in a browser; Ctrl-C stops the demo. Data: %s\n\n",
      home.c_str());
  UpFlags up;
  up.foreground = true;
  up.listen = flags.listen;
  up.home = home;
  up.node = flags.node;
  return RunUp(up);
}

}  // namespace vigil::cli
