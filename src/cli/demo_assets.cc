#include "cli/demo_assets.h"

// VIGIL_DEMO_NVML and VIGIL_DEMO_SCENARIO are absolute paths set by CMake,
// which also rebuilds this file when either changes (OBJECT_DEPENDS).
#define VIGIL_INCBIN(sym, path)        \
  asm(".section .rodata\n"             \
      ".balign 16\n"                   \
      ".global " #sym "_start\n" #sym  \
      "_start:\n"                      \
      ".incbin \"" path                \
      "\"\n"                           \
      ".global " #sym "_end\n" #sym    \
      "_end:\n"                        \
      ".byte 0\n"                      \
      ".previous\n");                  \
  extern "C" const char sym##_start[]; \
  extern "C" const char sym##_end[];

VIGIL_INCBIN(vigil_demo_nvml, VIGIL_DEMO_NVML)
VIGIL_INCBIN(vigil_demo_scenario, VIGIL_DEMO_SCENARIO)

namespace vigil::cli {

std::string_view DemoNvmlLibrary() {
  return {vigil_demo_nvml_start, static_cast<size_t>(vigil_demo_nvml_end - vigil_demo_nvml_start)};
}

std::string_view DemoScenario() {
  return {vigil_demo_scenario_start,
          static_cast<size_t>(vigil_demo_scenario_end - vigil_demo_scenario_start)};
}

std::string DemoScenarioFor(int pid) {
  // The scenario's job is a torchrun worker per GPU at pids 4100..4107; the
  // demo's is one process on all eight.
  constexpr std::string_view kWorkers = "pid 4100 pid_step 1";
  std::string s(DemoScenario());
  size_t at = s.find(kWorkers);
  if (at != std::string::npos) {
    s.replace(at, kWorkers.size(), "pid " + std::to_string(pid) + " pid_step 0");
  }
  return s;
}

}  // namespace vigil::cli
