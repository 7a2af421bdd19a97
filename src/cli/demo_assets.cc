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

}  // namespace vigil::cli
