// What `vigil demo` carries inside the binary: the fake NVML library
// (tests/fake_nvml, stripped of debug info) and the scenario it plays (8 ×
// H100 running a training job, one GPU running hot). Embedded with the
// assembler's .incbin, so the binary needs no files beside it.
#pragma once

#include <string>
#include <string_view>

namespace vigil::cli {

std::string_view DemoNvmlLibrary();
std::string_view DemoScenario();
// The scenario with its training processes replaced by one process, `pid`,
// on all eight GPUs (the demo's job).
std::string DemoScenarioFor(int pid);

}  // namespace vigil::cli
